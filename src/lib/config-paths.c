/* SPDX-License-Identifier: MIT */
/*
 * The configuration's paths (config-internal.h): host paths made absolute
 * ("~", a profile's directory, the current directory), binds' sources and
 * destinations, exports, and the env and changes files.
 */
#include "config-internal.h"

#include "util.h"

/* Collapses "//" and "/./" and drops a trailing '/', in place; keeps "..". */
static void path_tidy(char *p)
{
	char *out = p;

	for (const char *in = p; *in;) {
		if (in[0] == '/' && (in[1] == '/' || (in[1] == '.' && (in[2] == '/' || !in[2])))) {
			in += in[1] == '/' ? 1 : 2;
			continue;
		}
		*out++ = *in++;
	}
	if (out > p + 1 && out[-1] == '/')
		out--;
	if (out == p)
		*out++ = '/';
	*out = '\0';
}

/*
 * "~", "~/x", "rel/x" or "/abs" as an absolute host path: a relative one
 * against base (a profile's directory, itself absolute or relative to
 * the current directory) or the current directory.
 */
static int host_path(const char *what, const char *path, const char *base, char **ret,
		     struct sr_error *err)
{
	_cleanup_free_ char *cwd = NULL;
	char *abs = NULL;
	int r;

	if (path[0] == '\0')
		return sr_error_msg(err, -EINVAL, "%s: empty path", what);
	if (path[0] == '~' && (path[1] == '\0' || path[1] == '/')) {
		const char *home = getenv("HOME");

		if (!home || home[0] != '/')
			return sr_error_msg(err, -EINVAL,
					    "%s: cannot expand '%s': $HOME is not set", what, path);
		r = asprintf(&abs, "%s/%s", home, path + 1);
	} else if (path[0] != '/' && base && base[0] == '/') {
		r = asprintf(&abs, "%s/%s", base, path);
	} else if (path[0] != '/') {
		cwd = getcwd(NULL, 0);
		if (!cwd)
			return sr_error_errno(
			    err, sr_negerrno(),
			    "%s: '%s' is relative and the current directory is unknown", what,
			    path);
		if (base)
			r = asprintf(&abs, "%s/%s/%s", cwd, base, path);
		else
			r = asprintf(&abs, "%s/%s", cwd, path);
	} else {
		abs = strdup(path);
		r = abs ? 0 : -1;
	}
	if (r < 0)
		return sr_error_errno(err, -ENOMEM, "%s", what);
	path_tidy(abs);
	*ret = abs;
	return 0;
}

static bool path_is_or_under(const char *path, const char *dir)
{
	size_t n = strlen(dir);

	return strncmp(path, dir, n) == 0 && (path[n] == '\0' || path[n] == '/');
}

static int sandbox_path(const char *path, char **ret, struct sr_error *err)
{
	_cleanup_free_ char *p = NULL;
	size_t n;

	if (path[0] != '/')
		return sr_error_msg(err, -EINVAL, "destination '%s' is not absolute (e.g. /data)",
				    path);
	if (strchr(path, ':'))
		return sr_error_msg(err, -EINVAL, "destination '%s' contains ':'", path);
	p = strdup(path);
	if (!p)
		return sr_error_errno(err, -ENOMEM, "destination");
	path_tidy(p);
	n = strlen(p);
	/* The checks below are lexical: only sound on a path without "..". */
	if (strstr(p, "/../") || (n >= 3 && strcmp(p + n - 3, "/..") == 0))
		return sr_error_msg(err, -EINVAL, "destination '%s' contains '..'", path);
	/*
	 * The sandbox's own /proc and /dev are built fresh; a host path over
	 * them would hand the agent the host's view (or a writable /dev). "/"
	 * and /workspace are the new root and the overlay, not bind targets.
	 */
	if (strcmp(p, "/") == 0 || strcmp(p, "/workspace") == 0 || path_is_or_under(p, "/proc") ||
	    path_is_or_under(p, "/dev") || path_is_or_under(p, "/" SR_DATA_DIR))
		return sr_error_msg(err, -EINVAL,
				    "destination '%s' is reserved (not /, /proc, /dev, /workspace "
				    "or /" SR_DATA_DIR ")",
				    path);
	*ret = steal_pointer(&p);
	return 0;
}

int sr_config_add_bind(struct sr_config *c, const char *src, const char *dst, bool writable,
		       struct sr_error *err)
{
	_cleanup_free_ char *s = NULL, *d = NULL, *o = NULL;
	struct sr_bind *binds;
	int r;

	r = host_path("source", src, c->set_base, &s, err);
	if (r < 0)
		return r;
	r = sandbox_path(dst ? dst : s, &d, err);
	if (r < 0)
		return r;
	if (c->set_origin && !(o = strdup(c->set_origin)))
		return sr_error_errno(err, -ENOMEM, "bind");
	for (size_t i = 0; i < c->n_binds; i++) {
		if (strcmp(c->binds[i].dst, d) == 0) {
			free(c->binds[i].src);
			free(c->binds[i].origin);
			c->binds[i].src = steal_pointer(&s);
			c->binds[i].origin = steal_pointer(&o);
			c->binds[i].writable = writable;
			return 0;
		}
	}
	binds = reallocarray(c->binds, c->n_binds + 1, sizeof(*binds));
	if (!binds)
		return sr_error_errno(err, -ENOMEM, "bind");
	c->binds = binds;
	c->binds[c->n_binds++] = (struct sr_bind){
	    .src = steal_pointer(&s),
	    .dst = steal_pointer(&d),
	    .writable = writable,
	    .origin = steal_pointer(&o),
	};
	return 0;
}

int config_set_bind(struct sr_config *c, const char *value, bool writable, struct sr_error *err)
{
	_cleanup_free_ char *src = NULL;
	const char *colon;

	if (value[0] == '\0') {
		/* Empty: drop the inherited binds of this kind. */
		size_t kept = 0;

		for (size_t i = 0; i < c->n_binds; i++) {
			if (c->binds[i].writable == writable) {
				free(c->binds[i].src);
				free(c->binds[i].dst);
				free(c->binds[i].origin);
			} else {
				c->binds[kept++] = c->binds[i];
			}
		}
		c->n_binds = kept;
		return 0;
	}
	/* The last ':' splits, so a host path may contain ':' (a DST may not). */
	colon = strrchr(value, ':');
	if (!colon)
		return sr_config_add_bind(c, value, NULL, writable, err);
	src = strndup(value, (size_t)(colon - value));
	if (!src)
		return sr_error_errno(err, -ENOMEM, "bind");
	return sr_config_add_bind(c, src, colon + 1, writable, err);
}

int config_set_host_path(struct sr_config *c, const char *what, const char *value, char **field,
			 char **origin, struct sr_error *err)
{
	_cleanup_free_ char *path = NULL, *o = NULL;

	if (value[0] != '\0' && host_path(what, value, c->set_base, &path, err) < 0)
		return err->code;
	if (path && c->set_origin && !(o = strdup(c->set_origin)))
		return sr_error_errno(err, -ENOMEM, "%s", what);
	free(*field);
	free(*origin);
	*field = steal_pointer(&path);
	*origin = steal_pointer(&o);
	return 0;
}

/* A path of the sandbox to export: absolute or relative to /workspace, no "..", no ':'. */
static int export_path_check(const char *p, struct sr_error *err)
{
	const char *c = p;

	if (!*p || strcmp(p, "/") == 0)
		return sr_error_msg(err, -EINVAL, "'%s' names no file or directory (e.g. coverage)",
				    p);
	while (*c) {
		size_t l = strcspn(c, "/");

		if (l == 2 && c[0] == '.' && c[1] == '.')
			return sr_error_msg(err, -EINVAL, "'%s' contains '..'", p);
		c += l;
		c += strspn(c, "/");
	}
	return 0;
}

int sr_config_add_export(struct sr_config *c, const char *spec, struct sr_error *err)
{
	_cleanup_free_ char *path = NULL, *host = NULL, *o = NULL;
	const char *colon = strchr(spec, ':'), *last;
	struct sr_export *v;
	int r;

	if (spec[0] == '\0') {
		config_exports_free(c);
		return 0;
	}
	path = colon ? strndup(spec, (size_t)(colon - spec)) : strdup(spec);
	if (!path)
		return sr_error_errno(err, -ENOMEM, "export");
	if ((r = export_path_check(path, err)) < 0)
		return r;
	path_tidy(path);
	if (colon && colon[1]) {
		r = host_path("export", colon + 1, c->set_base, &host, err);
	} else {
		/*
		 * The same relative path under the current directory; for an
		 * absolute one, its last name there.
		 */
		last = path[0] == '/' ? strrchr(path, '/') + 1 : path;
		r = host_path("export", last, NULL, &host, err);
	}
	if (r < 0)
		return r;
	if (c->set_origin && !(o = strdup(c->set_origin)))
		return sr_error_errno(err, -ENOMEM, "export");
	v = reallocarray(c->exports, c->n_exports + 1, sizeof(*v));
	if (!v)
		return sr_error_errno(err, -ENOMEM, "export");
	c->exports = v;
	c->exports[c->n_exports++] = (struct sr_export){
	    .path = steal_pointer(&path),
	    .host = steal_pointer(&host),
	    .origin = steal_pointer(&o),
	    /* "reports/junit.xml:out/": into out/, as out/junit.xml. */
	    .into = colon && colon[1] && colon[strlen(colon) - 1] == '/',
	};
	return 0;
}
