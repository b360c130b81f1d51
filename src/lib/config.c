/* SPDX-License-Identifier: MIT */
#include "config.h"

#include "secmem.h"
#include "units.h"
#include "util.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <inttypes.h>
#include <ini.h>
#include <stddef.h>
#include <strings.h>

/* PID_MAX_LIMIT on 64-bit kernels: a larger pids.max cannot mean anything. */
#define PIDS_MAX 4194304u
/* Smallest non-zero memory or disk limit: no sandbox starts in less. */
#define SIZE_MIN (UINT64_C(1) << 20)

enum key_kind {
	KEY_IGNORED, /* [profile]: read by the profile loader, not a setting */
	KEY_SIZE,
	KEY_DURATION,
	KEY_CPUS,
	KEY_COUNT,
	KEY_BOOL,
	KEY_NET_MODE,
	KEY_NET_HELPER,
	KEY_DEST_LIST,
	KEY_PORT_LIST,
	KEY_ENV_FILE,
	KEY_ENV_NAME_LIST,
	KEY_BIND,
	KEY_STRING,
	KEY_DISK_BACKING,
	KEY_EXPORT_LIST,
	KEY_PATH,
	_KEY_KIND_MAX,
};

struct key_def {
	const char *section;
	const char *key;
	enum key_kind kind;
	size_t offset;
	bool writable; /* KEY_BIND */
};

#define FIELD(f) offsetof(struct sr_config, f)

/* The one list of what a profile may say; options map onto these too. */
static const struct key_def keys[] = {
    {"profile", "inherit", KEY_IGNORED, 0, false},
    {"profile", "description", KEY_IGNORED, 0, false},
    {"limits", "memory", KEY_SIZE, FIELD(memory_bytes), false},
    {"limits", "cpus", KEY_CPUS, FIELD(cpus_milli), false},
    {"limits", "pids", KEY_COUNT, FIELD(pids), false},
    {"limits", "timeout", KEY_DURATION, FIELD(timeout_ms), false},
    {"limits", "disk", KEY_SIZE, FIELD(disk_bytes), false},
    {"limits", "disk-backing", KEY_DISK_BACKING, FIELD(disk_backing), false},
    {"limits", "strict", KEY_BOOL, FIELD(strict), false},
    {"network", "mode", KEY_NET_MODE, FIELD(net), false},
    {"network", "helper", KEY_NET_HELPER, FIELD(net_helper), false},
    {"network", "allow", KEY_DEST_LIST, FIELD(allow), false},
    {"network", "deny", KEY_DEST_LIST, FIELD(deny), false},
    {"network", "allow-host", KEY_PORT_LIST, FIELD(allow_host), false},
    {"env", "file", KEY_ENV_FILE, FIELD(env_file), false},
    {"env", "pass", KEY_ENV_NAME_LIST, FIELD(pass_env), false},
    {"filesystem", "ro-bind", KEY_BIND, 0, false},
    {"filesystem", "bind", KEY_BIND, 0, true},
    {"agent", "entry", KEY_STRING, FIELD(entry), false},
    {"deploy", "install", KEY_STRING, FIELD(install), false},
    {"deploy", "install-timeout", KEY_DURATION, FIELD(install_timeout_ms), false},
    {"deploy", "keep", KEY_COUNT, FIELD(keep_versions), false},
    {"artifacts", "export", KEY_EXPORT_LIST, 0, false},
    {"artifacts", "changes", KEY_PATH, FIELD(changes_path), false},
};

static const char *const sections[] = {
    "profile", "limits", "network", "env", "filesystem", "agent", "deploy", "artifacts", NULL,
};

static const char *const hints[_KEY_KIND_MAX] = {
    [KEY_SIZE] = "use e.g. 512M, 2G, or 0 for unlimited",
    [KEY_DURATION] = "use e.g. 120, 90s, 5m, 1h, or 0 for none",
    [KEY_CPUS] = "use e.g. 0.5, 2, or 0 for unlimited; at most 1024 and 3 decimals",
    [KEY_COUNT] = "use e.g. 1024, or 0 for unlimited; at most 4194304",
    [KEY_BOOL] = "use true or false",
    [KEY_NET_MODE] = "use none or egress",
    [KEY_NET_HELPER] = "use auto, slirp4netns or pasta",
    [KEY_DEST_LIST] = "use e.g. 10.0.0.0/8, 192.0.2.1, example.com:443, *.example.com or "
		      "[2001:db8::1]:443",
    [KEY_PORT_LIST] = "use a port number from 1 to 65535",
    [KEY_ENV_NAME_LIST] = "use letters, digits and '_', not starting with a digit",
    [KEY_BIND] = "use SRC:DST or SRC, e.g. /srv/data:/data",
    [KEY_DISK_BACKING] = "use auto, disk or memory",
    [KEY_EXPORT_LIST] = "use PATH or PATH:HOSTDIR, e.g. coverage or reports:out/reports",
};

static const char *const kind_nouns[_KEY_KIND_MAX] = {
    [KEY_SIZE] = "size",
    [KEY_DURATION] = "duration",
    [KEY_CPUS] = "CPU count",
    [KEY_COUNT] = "count",
    [KEY_BOOL] = "boolean",
    [KEY_NET_MODE] = "network mode",
    [KEY_NET_HELPER] = "network helper",
    [KEY_DEST_LIST] = "destination",
    [KEY_PORT_LIST] = "port",
    [KEY_ENV_NAME_LIST] = "variable name",
    [KEY_DISK_BACKING] = "disk backing",
};

static const char *const net_modes[_SR_NET_MODE_MAX] = {
    [SR_NET_NONE] = "none",
    [SR_NET_EGRESS] = "egress",
};

const char *sr_net_mode_to_string(enum sr_net_mode m)
{
	if ((unsigned)m >= _SR_NET_MODE_MAX)
		return NULL;
	return net_modes[m];
}

static const char *const net_helpers[_SR_NET_HELPER_MAX] = {
    [SR_NET_HELPER_AUTO] = "auto",
    [SR_NET_HELPER_SLIRP4NETNS] = "slirp4netns",
    [SR_NET_HELPER_PASTA] = "pasta",
};

const char *sr_net_helper_to_string(enum sr_net_helper h)
{
	if ((unsigned)h >= _SR_NET_HELPER_MAX)
		return NULL;
	return net_helpers[h];
}

static const char *const disk_backings[_SR_DISK_BACKING_MAX] = {
    [SR_DISK_BACKING_AUTO] = "auto",
    [SR_DISK_BACKING_DISK] = "disk",
    [SR_DISK_BACKING_MEMORY] = "memory",
};

const char *sr_disk_backing_to_string(enum sr_disk_backing b)
{
	if ((unsigned)b >= _SR_DISK_BACKING_MAX)
		return NULL;
	return disk_backings[b];
}

int sr_strv_push(struct sr_strv *v, const char *s)
{
	_cleanup_free_ char *copy = strdup(s);
	char **items;

	if (!copy)
		return -ENOMEM;
	items = reallocarray(v->items, v->n + 2, sizeof(*items));
	if (!items)
		return -ENOMEM;
	items[v->n++] = steal_pointer(&copy);
	items[v->n] = NULL;
	v->items = items;
	return 0;
}

void sr_strv_free(struct sr_strv *v)
{
	for (size_t i = 0; i < v->n; i++)
		free(v->items[i]);
	free(v->items);
	v->items = NULL;
	v->n = 0;
}

void sr_strv_wipe(struct sr_strv *v)
{
	for (size_t i = 0; i < v->n; i++)
		explicit_bzero(v->items[i], strlen(v->items[i]));
	sr_strv_free(v);
}

void sr_config_init(struct sr_config *c)
{
	*c = (struct sr_config){
	    .memory_bytes = UINT64_C(2) << 30,
	    .cpus_milli = 2000,
	    .pids = 1024,
	    .timeout_ms = 120 * 1000,
	    .disk_bytes = UINT64_C(10) << 30,
	    .net = SR_NET_EGRESS,
	    .install_timeout_ms = SR_DEFAULT_INSTALL_TIMEOUT_MS,
	    .keep_versions = SR_DEFAULT_KEEP_VERSIONS,
	    .log_level = SR_LOG_WARNING,
	};
}

static void binds_free(struct sr_config *c)
{
	for (size_t i = 0; i < c->n_binds; i++) {
		free(c->binds[i].src);
		free(c->binds[i].dst);
		free(c->binds[i].origin);
	}
	free(c->binds);
	c->binds = NULL;
	c->n_binds = 0;
}

static void exports_free(struct sr_config *c)
{
	for (size_t i = 0; i < c->n_exports; i++) {
		free(c->exports[i].path);
		free(c->exports[i].host);
		free(c->exports[i].origin);
	}
	free(c->exports);
	c->exports = NULL;
	c->n_exports = 0;
}

/*
 * The environment is wiped: its values may be secrets, and a server that
 * made a sandbox through the API frees its configuration as it goes on;
 * freed as they were, they would be in every keeper it forked later
 * (docs/security.md, "What a keeper holds").
 */
void sr_config_free(struct sr_config *c)
{
	free(c->profile);
	free(c->profile_path);
	sr_strv_free(&c->allow);
	sr_strv_free(&c->deny);
	sr_strv_free(&c->allow_host);
	sr_strv_wipe(&c->env);
	free(c->env_file);
	free(c->env_file_origin);
	sr_strv_free(&c->pass_env);
	binds_free(c);
	exports_free(c);
	free(c->changes_path);
	free(c->changes_origin);
	free(c->entry);
	free(c->install);
	sr_secmem_free(c->secrets);
	free(c->workspace);
	free(c->result_path);
	free(c->name);
	free(c->from);
	*c = (struct sr_config){};
}

/* Optimal string alignment distance, case-insensitive; words here are short. */
static size_t edit_distance(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b);
	size_t d[3][64];
	size_t *prev2 = d[0], *prev = d[1], *cur = d[2];

	if (la >= 63 || lb >= 63)
		return SIZE_MAX;
	for (size_t j = 0; j <= lb; j++)
		prev[j] = j;
	for (size_t i = 1; i <= la; i++) {
		cur[0] = i;
		for (size_t j = 1; j <= lb; j++) {
			size_t cost =
			    tolower((unsigned char)a[i - 1]) != tolower((unsigned char)b[j - 1]);
			size_t best = prev[j - 1] + cost;

			if (prev[j] + 1 < best)
				best = prev[j] + 1;
			if (cur[j - 1] + 1 < best)
				best = cur[j - 1] + 1;
			if (i > 1 && j > 1 &&
			    tolower((unsigned char)a[i - 1]) == tolower((unsigned char)b[j - 2]) &&
			    tolower((unsigned char)a[i - 2]) == tolower((unsigned char)b[j - 1]) &&
			    prev2[j - 2] + 1 < best)
				best = prev2[j - 2] + 1;
			cur[j] = best;
		}
		size_t *t = prev2;
		prev2 = prev;
		prev = cur;
		cur = t;
	}
	return prev[lb];
}

const char *sr_suggest(const char *word, const char *const *candidates)
{
	const char *best = NULL;
	size_t best_d = SIZE_MAX;

	for (; *candidates; candidates++) {
		size_t d = edit_distance(word, *candidates);
		size_t limit = strlen(*candidates) < 5 ? 1 : 2;

		if (d <= limit && d < best_d) {
			best = *candidates;
			best_d = d;
		}
	}
	return best;
}

bool sr_config_known_section(const char *section)
{
	for (size_t i = 0; sections[i]; i++)
		if (strcmp(sections[i], section) == 0)
			return true;
	return false;
}

const char *sr_config_suggest_section(const char *section)
{
	return sr_suggest(section, sections);
}

static const struct key_def *find_key(const char *section, const char *key)
{
	for (size_t i = 0; i < SR_ARRAY_SIZE(keys); i++)
		if (strcmp(keys[i].section, section) == 0 && strcmp(keys[i].key, key) == 0)
			return &keys[i];
	return NULL;
}

bool sr_config_known_key(const char *section, const char *key)
{
	if (strcmp(section, "env") == 0)
		return true;
	return find_key(section, key) != NULL;
}

const char *sr_config_suggest_key(const char *section, const char *key)
{
	const char *names[SR_ARRAY_SIZE(keys) + 1];
	size_t n = 0;

	for (size_t i = 0; i < SR_ARRAY_SIZE(keys); i++)
		if (strcmp(keys[i].section, section) == 0)
			names[n++] = keys[i].key;
	names[n] = NULL;
	return sr_suggest(key, (const char *const *)names);
}

/* The section a key belongs to, for "put it under [limits]". */
static const char *section_of(const char *key)
{
	for (size_t i = 0; i < SR_ARRAY_SIZE(keys); i++)
		if (strcmp(keys[i].key, key) == 0)
			return keys[i].section;
	return NULL;
}

static bool env_name_valid(const char *name)
{
	if (!isalpha((unsigned char)name[0]) && name[0] != '_')
		return false;
	for (const char *p = name; *p; p++)
		if (!isalnum((unsigned char)*p) && *p != '_')
			return false;
	return true;
}

int sr_config_set_env(struct sr_config *c, const char *name, const char *value,
		      struct sr_error *err)
{
	/* A value may be a secret: every copy wiped when freed (sr_config_free() says why). */
	_cleanup_free_wiped_ char *entry = NULL;
	size_t len = strlen(name);

	if (!env_name_valid(name))
		return sr_error_msg(err, -EINVAL, "bad variable name '%s' (%s)", name,
				    hints[KEY_ENV_NAME_LIST]);
	if (strcmp(name, "file") == 0 || strcmp(name, "pass") == 0)
		return sr_error_msg(err, -EINVAL,
				    "variable name '%s' is reserved: [env] %s is a setting", name,
				    name);
	if (asprintf(&entry, "%s=%s", name, value) < 0)
		return sr_error_errno(err, -ENOMEM, "env %s", name);
	for (size_t i = 0; i < c->env.n; i++) {
		if (strncmp(c->env.items[i], name, len) == 0 && c->env.items[i][len] == '=') {
			sr_free_wiped(c->env.items[i]);
			c->env.items[i] = steal_pointer(&entry);
			return 0;
		}
	}
	if (sr_strv_push(&c->env, entry) < 0)
		return sr_error_errno(err, -ENOMEM, "env %s", name);
	return 0;
}

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

static int set_bind(struct sr_config *c, const char *value, bool writable, struct sr_error *err)
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

/* Syntax only, kept as written; names are resolved later by the network setup. */
static int dest_check(const char *value, struct sr_error *err)
{
	char fixed[INET6_ADDRSTRLEN];
	struct sr_dest d;
	int r;

	r = sr_parse_dest(value, &d);
	if (r == -ERANGE)
		return sr_error_msg(err, r, "bad port in '%s' (use 1-65535, e.g. example.com:443)",
				    value);
	if (r < 0)
		return sr_error_msg(err, r, "bad destination '%s' (%s)", value,
				    hints[KEY_DEST_LIST]);
	if (d.host_bits_set) {
		inet_ntop(d.kind == SR_DEST_IPV4 ? AF_INET : AF_INET6, d.addr, fixed,
			  sizeof(fixed));
		return sr_error_msg(err, -EINVAL, "'%s' has host bits set (did you mean %s/%u?)",
				    value, fixed, d.prefix);
	}
	return 0;
}

static int set_number(const struct key_def *k, void *field, const char *value, struct sr_error *err)
{
	uint64_t v = 0;
	uint32_t milli = 0;
	int r;

	switch (k->kind) {
	case KEY_SIZE:
		r = sr_parse_size(value, &v);
		break;
	case KEY_DURATION:
		r = sr_parse_duration(value, &v);
		break;
	case KEY_CPUS:
		r = sr_parse_cpus(value, &milli);
		break;
	case KEY_COUNT:
		r = sr_parse_count(value, &v);
		if (r == 0 && v > PIDS_MAX)
			r = -ERANGE;
		break;
	default:
		return sr_error_msg(err, -EINVAL, "not a number key");
	}
	if (r == -ERANGE)
		return sr_error_msg(err, r, "%s '%s' is out of range (%s)", kind_nouns[k->kind],
				    value, hints[k->kind]);
	/* "--memory 512" is a forgotten unit far more often than a 512-byte sandbox. */
	if (r == 0 && k->kind == KEY_SIZE && v != 0 && v < SIZE_MIN) {
		if (value[strspn(value, "0123456789")] == '\0')
			return sr_error_msg(err, -ERANGE,
					    "size '%s' is below 1M (did you mean %sM?)", value,
					    value);
		return sr_error_msg(err, -ERANGE, "size '%s' is below 1M (%s)", value,
				    hints[k->kind]);
	}
	if (r < 0)
		return sr_error_msg(err, r, "bad %s '%s' (%s)", kind_nouns[k->kind], value,
				    hints[k->kind]);
	if (k->kind == KEY_CPUS)
		*(uint32_t *)field = milli;
	else
		*(uint64_t *)field = v;
	return 0;
}

static int set_string(char **field, const char *value, struct sr_error *err)
{
	char *copy = NULL;

	if (value[0] != '\0') {
		copy = strdup(value);
		if (!copy)
			return sr_error_errno(err, -ENOMEM, "value");
	}
	free(*field);
	*field = copy;
	return 0;
}

static int set_entry(char **field, const char *value, struct sr_error *err)
{
	_cleanup_free_ char *copy = strdup(value + strspn(value, " \t"));
	size_t n;

	if (!copy)
		return sr_error_errno(err, -ENOMEM, "entry");
	for (n = strlen(copy); n > 0 && (copy[n - 1] == ' ' || copy[n - 1] == '\t'); n--)
		copy[n - 1] = '\0';
	return set_string(field, copy, err);
}

static int set_list(const struct key_def *k, struct sr_strv *list, const char *value,
		    struct sr_error *err)
{
	if (value[0] == '\0') {
		sr_strv_free(list);
		return 0;
	}
	if (k->kind == KEY_ENV_NAME_LIST && !env_name_valid(value))
		return sr_error_msg(err, -EINVAL, "bad variable name '%s' (%s)", value,
				    hints[k->kind]);
	if (k->kind == KEY_DEST_LIST) {
		int r = dest_check(value, err);
		if (r < 0)
			return r;
	}
	if (k->kind == KEY_PORT_LIST) {
		uint64_t port;
		char canon[8];

		if (sr_parse_count(value, &port) < 0 || port == 0 || port > 65535)
			return sr_error_msg(err, -ERANGE, "bad port '%s' (%s)", value,
					    hints[k->kind]);
		snprintf(canon, sizeof(canon), "%u", (unsigned)port);
		for (size_t i = 0; i < list->n; i++)
			if (strcmp(list->items[i], canon) == 0)
				return 0;
		return sr_strv_push(list, canon) < 0 ? sr_error_errno(err, -ENOMEM, "%s", k->key)
						     : 0;
	}
	if (sr_strv_push(list, value) < 0)
		return sr_error_errno(err, -ENOMEM, "%s", k->key);
	return 0;
}

/* A host path setting (empty: unset), with the profile line that set it. */
static int set_host_path(struct sr_config *c, const char *what, const char *value, char **field,
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
		exports_free(c);
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

static int set_value(struct sr_config *c, const struct key_def *k, const char *value,
		     struct sr_error *err)
{
	void *field = (char *)c + k->offset;
	bool b;

	switch (k->kind) {
	case KEY_IGNORED:
		return 0;
	case KEY_SIZE:
	case KEY_DURATION:
	case KEY_CPUS:
	case KEY_COUNT:
		return set_number(k, field, value, err);
	case KEY_BOOL:
		if (sr_parse_bool(value, &b) < 0)
			return sr_error_msg(err, -EINVAL, "bad boolean '%s' (%s)", value,
					    hints[k->kind]);
		*(bool *)field = b;
		return 0;
	case KEY_NET_MODE:
		for (int m = 0; m < _SR_NET_MODE_MAX; m++) {
			if (strcmp(value, net_modes[m]) == 0) {
				*(enum sr_net_mode *)field = (enum sr_net_mode)m;
				return 0;
			}
		}
		return sr_error_msg(err, -EINVAL, "bad network mode '%s' (%s)", value,
				    hints[k->kind]);
	case KEY_NET_HELPER:
		for (int h = 0; h < _SR_NET_HELPER_MAX; h++) {
			if (strcmp(value, net_helpers[h]) == 0) {
				*(enum sr_net_helper *)field = (enum sr_net_helper)h;
				return 0;
			}
		}
		return sr_error_msg(err, -EINVAL, "bad network helper '%s' (%s)", value,
				    hints[k->kind]);
	case KEY_DEST_LIST:
	case KEY_PORT_LIST:
	case KEY_ENV_NAME_LIST:
		return set_list(k, field, value, err);
	case KEY_ENV_FILE:
		return set_host_path(c, "env file", value, &c->env_file, &c->env_file_origin, err);
	case KEY_PATH:
		return set_host_path(c, k->key, value, (char **)field, &c->changes_origin, err);
	case KEY_DISK_BACKING:
		for (int d = 0; d < _SR_DISK_BACKING_MAX; d++) {
			if (strcmp(value, disk_backings[d]) == 0) {
				*(enum sr_disk_backing *)field = (enum sr_disk_backing)d;
				return 0;
			}
		}
		return sr_error_msg(err, -EINVAL, "bad disk backing '%s' (%s)", value,
				    hints[k->kind]);
	case KEY_EXPORT_LIST:
		return sr_config_add_export(c, value, err);
	case KEY_BIND:
		return set_bind(c, value, k->writable, err);
	case KEY_STRING:
		return set_entry(field, value, err);
	case _KEY_KIND_MAX:
		break;
	}
	return sr_error_msg(err, -EINVAL, "bad key kind");
}

static int unknown_key(const char *section, const char *key, struct sr_error *err)
{
	const char *s = sr_config_suggest_key(section, key);
	const char *home;

	if (s)
		return sr_error_msg(err, -EINVAL, "unknown key '%s' in [%s] (did you mean '%s'?)",
				    key, section, s);
	home = section_of(key);
	if (home)
		return sr_error_msg(err, -EINVAL, "unknown key '%s' in [%s] (it belongs in [%s])",
				    key, section, home);
	return sr_error_msg(err, -EINVAL, "unknown key '%s' in [%s]", key, section);
}

int sr_config_check_section(const char *section, struct sr_error *err)
{
	const char *s;

	if (sr_config_known_section(section))
		return 0;
	s = sr_config_suggest_section(section);
	if (s)
		return sr_error_msg(err, -EINVAL, "unknown section [%s] (did you mean [%s]?)",
				    section, s);
	return sr_error_msg(err, -EINVAL,
			    "unknown section [%s] (known: profile, limits, network, env, "
			    "filesystem, agent, artifacts)",
			    section);
}

static int set_common(struct sr_config *c, const char *section, const char *key, const char *value,
		      bool name_key, struct sr_error *err)
{
	const struct key_def *k;
	const char *s;
	int r;

	if (section[0] == '\0') {
		s = section_of(key);
		if (s)
			return sr_error_msg(
			    err, -EINVAL, "key '%s' outside a section (put it under [%s])", key, s);
		return sr_error_msg(err, -EINVAL, "key '%s' outside a section", key);
	}
	r = sr_config_check_section(section, err);
	if (r < 0)
		return r;
	k = find_key(section, key);
	if (!k && strcmp(section, "env") != 0)
		return unknown_key(section, key, err);
	if (!k)
		r = sr_config_set_env(c, key, value, err);
	else
		r = set_value(c, k, value, err);
	if (r < 0 && name_key && k)
		sr_error_prefix(err, "%s", key);
	return r;
}

int sr_config_set(struct sr_config *c, const char *section, const char *key, const char *value,
		  struct sr_error *err)
{
	return set_common(c, section, key, value, true, err);
}

int sr_config_apply(struct sr_config *c, const char *section, const char *key, const char *value,
		    struct sr_error *err)
{
	return set_common(c, section, key, value, false, err);
}

int sr_config_validate(const struct sr_config *c, struct sr_error *err)
{
	if (c->allow.n > 0 && c->net == SR_NET_NONE)
		return sr_error_msg(err, -EINVAL,
				    "network: allow '%s' given but the network mode is none "
				    "(use --net egress, or drop the allow entries)",
				    c->allow.items[0]);
	if (c->allow_host.n > 0 && c->net == SR_NET_NONE)
		return sr_error_msg(err, -EINVAL,
				    "network: allow-host %s given but the network mode is none "
				    "(use --net egress, or drop the allow-host entries)",
				    c->allow_host.items[0]);
	if (c->cpus_milli > SR_CPUS_MAX_MILLI)
		return sr_error_msg(err, -ERANGE, "cpus: out of range");
	if (c->pids > PIDS_MAX)
		return sr_error_msg(err, -ERANGE, "pids: out of range");
	if ((unsigned)c->net >= _SR_NET_MODE_MAX)
		return sr_error_msg(err, -EINVAL, "network: bad mode");
	if ((unsigned)c->net_helper >= _SR_NET_HELPER_MAX)
		return sr_error_msg(err, -EINVAL, "network: bad helper");
	if ((unsigned)c->disk_backing >= _SR_DISK_BACKING_MAX)
		return sr_error_msg(err, -EINVAL, "limits: bad disk backing");
	return 0;
}
