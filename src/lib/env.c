/* SPDX-License-Identifier: MIT */
#include "env.h"
#include "util.h"

#include <fcntl.h>
#include <sys/stat.h>

#define SR_SANDBOX_PATH "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
#define SR_ENV_FILE_MAX (1 << 20)

bool sr_env_valid_name(const char *s, size_t len)
{
	if (len == 0 ||
	    !(s[0] == '_' || (s[0] >= 'A' && s[0] <= 'Z') || (s[0] >= 'a' && s[0] <= 'z')))
		return false;
	for (size_t i = 1; i < len; i++)
		if (!(s[i] == '_' || (s[i] >= 'A' && s[i] <= 'Z') || (s[i] >= 'a' && s[i] <= 'z') ||
		      (s[i] >= '0' && s[i] <= '9')))
			return false;
	return true;
}

/* Sets KEY=VALUE (kv), replacing an earlier KEY. */
static int env_set(struct sr_strv *v, const char *kv)
{
	size_t kl = strcspn(kv, "=");

	for (size_t i = 0; i < v->n; i++) {
		if (strncmp(v->items[i], kv, kl) == 0 && v->items[i][kl] == '=') {
			char *dup = strdup(kv);

			if (!dup)
				return -ENOMEM;
			explicit_bzero(v->items[i], strlen(v->items[i]));
			free(v->items[i]);
			v->items[i] = dup;
			return 0;
		}
	}
	return sr_strv_push(v, kv);
}

static const char *env_lookup(char *const *env, const char *key)
{
	size_t kl = strlen(key);

	for (; env && *env; env++)
		if (strncmp(*env, key, kl) == 0 && (*env)[kl] == '=')
			return *env + kl + 1;
	return NULL;
}

static int set_pair(struct sr_strv *v, const char *key, const char *value)
{
	_cleanup_free_ char *kv = NULL;

	if (asprintf(&kv, "%s=%s", key, value) < 0)
		return -ENOMEM;
	return env_set(v, kv);
}

static size_t count_newlines(const char *s, size_t n)
{
	size_t lines = 0;

	for (size_t i = 0; i < n; i++)
		lines += s[i] == '\n';
	return lines;
}

/* buf: an env file's len bytes (and room for a NUL), its lines set in out. */
static int parse_file(const char *path, char *buf, size_t len, struct sr_strv *out,
		      struct sr_error *err)
{
	const char *nul = memchr(buf, '\0', len);
	size_t lineno = 0;
	char *line, *save = NULL;

	/* A NUL would end a line early and silently drop the rest of it. */
	if (nul)
		return sr_error_msg(err, -EINVAL, "env file %s:%zu: holds a NUL byte", path,
				    1 + count_newlines(buf, (size_t)(nul - buf)));
	buf[len] = '\0';
	for (line = buf; line; line = save) {
		char *nl = strchr(line, '\n');
		size_t kl;

		save = nl ? nl + 1 : NULL;
		if (nl)
			*nl = '\0';
		lineno++;
		if (*line && line[strlen(line) - 1] == '\r')
			line[strlen(line) - 1] = '\0';
		if (*line == '\0' || *line == '#')
			continue;
		kl = strcspn(line, "=");
		/* Never quote the line: it may be a secret. */
		if (line[kl] != '=' || !sr_env_valid_name(line, kl))
			return sr_error_msg(err, -EINVAL,
					    "env file %s:%zu: expected KEY=VALUE with KEY of "
					    "letters, digits and '_'",
					    path, lineno);
		if (env_set(out, line) < 0)
			return sr_error_errno(err, -ENOMEM, "env file %s", path);
	}
	return 0;
}

int sr_env_read_file(const char *path, struct sr_strv *out, struct sr_error *err)
{
	/* O_NONBLOCK: a FIFO would otherwise hold the open until a writer came. */
	_cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	struct stat st;
	size_t len = 0;
	ssize_t n = 0;
	char *buf;
	int r;

	if (fd < 0 || fstat(fd, &st) < 0)
		return sr_error_errno(err, sr_negerrno(), "env file %s", path);
	if (!S_ISREG(st.st_mode))
		return sr_error_msg(err, -EINVAL, "env file %s: not a regular file", path);
	/* Checked on the opened file, so it cannot be swapped after the check. */
	if (st.st_mode & (S_IRWXG | S_IRWXO))
		return sr_error_msg(err, -EPERM,
				    "env file %s: holds secrets but is accessible to group or "
				    "others (mode %04o): chmod 600 %s",
				    path, (unsigned)(st.st_mode & 07777), path);
	if (st.st_size > SR_ENV_FILE_MAX)
		return sr_error_msg(err, -EFBIG, "env file %s: larger than 1 MiB", path);
	buf = malloc((size_t)st.st_size + 1);
	if (!buf)
		return sr_error_errno(err, -ENOMEM, "env file %s", path);
	while (len < (size_t)st.st_size &&
	       (n = SR_RETRY(read(fd, buf + len, (size_t)st.st_size - len))) > 0)
		len += (size_t)n;
	if (len < (size_t)st.st_size && n < 0)
		r = sr_error_errno(err, sr_negerrno(), "env file %s", path);
	else
		r = parse_file(path, buf, len, out, err);
	/* The file's secrets stay in out alone. */
	explicit_bzero(buf, (size_t)st.st_size + 1);
	free(buf);
	return r;
}

int sr_env_build(const struct sr_config *c, char *const *caller_env, struct sr_strv *ret,
		 struct sr_error *err)
{
	struct sr_strv v = {0};
	const char *lang = env_lookup(caller_env, "LANG");
	const char *term = env_lookup(caller_env, "TERM");
	int r;

	if (set_pair(&v, "PATH", SR_SANDBOX_PATH) < 0 || set_pair(&v, "HOME", "/home/user") < 0 ||
	    set_pair(&v, "LANG", lang ? lang : "C.UTF-8") < 0 ||
	    (term && set_pair(&v, "TERM", term) < 0))
		goto oom;
	for (size_t i = 0; i < c->pass_env.n; i++) {
		const char *val = env_lookup(caller_env, c->pass_env.items[i]);

		if (val && set_pair(&v, c->pass_env.items[i], val) < 0)
			goto oom;
	}
	if (c->env_file) {
		r = sr_env_read_file(c->env_file, &v, err);
		if (r < 0 && c->env_file_origin)
			sr_error_prefix(err, "%s", c->env_file_origin);
		if (r < 0) {
			sr_strv_wipe(&v);
			return r;
		}
	}
	for (char *const *kv = c->secrets; kv && *kv; kv++)
		if (env_set(&v, *kv) < 0)
			goto oom;
	for (size_t i = 0; i < c->env.n; i++)
		if (env_set(&v, c->env.items[i]) < 0)
			goto oom;
	/* NULL-terminated for execve. */
	if (sr_strv_push(&v, "") < 0)
		goto oom;
	free(v.items[v.n - 1]);
	v.items[--v.n] = NULL;
	*ret = v;
	return 0;
oom:
	sr_strv_wipe(&v);
	return sr_error_errno(err, -ENOMEM, "environment");
}
