/* SPDX-License-Identifier: MIT */
#include "profile.h"

#include "util.h"

#include <ctype.h>
#include <fcntl.h>
#include <ini.h>
#include <limits.h>
#include <sys/stat.h>

/* Defined in the generated src/profiles-builtin.c (tools/embed-profiles). */
struct sr_builtin_profile {
	const char *name;
	const char *text;
};
extern const struct sr_builtin_profile sr_builtin_profiles[];

/* The profiles being loaded, outermost first: loop detection and the error text. */
struct chain {
	const char *keys[SR_PROFILE_DEPTH_MAX + 1];  /* realpath or "builtin:NAME" */
	const char *names[SR_PROFILE_DEPTH_MAX + 1]; /* as written */
	size_t n;
};

/* One profile text to parse, wherever it came from. */
struct source {
	char *origin; /* path, "builtin:NAME", or the caller's name for a string */
	char *key;    /* identity for loop detection */
	char *dir;    /* base of a relative inherit path; NULL: the current directory */
	char *buf;    /* owned copy of a file's text */
	const char *text;
};

/*
 * Two passes over a profile: the first checks every line against a scratch
 * config (so errors come in line order, before any parent is loaded) and
 * finds `inherit`; the second applies the lines over the parent.
 */
struct parse_state {
	struct sr_config *c;
	const char *origin;
	const char *dir; /* relative paths in the file are relative to it (NULL: the current one) */
	const char *text;
	const char *pos;
	bool first_pass;
	unsigned line;	   /* lines handed to inih so far */
	unsigned err_line; /* first error found by us, 0 if none */
	struct sr_error *err;
	char *inherit; /* first pass: the value of [profile] inherit */
	unsigned inherit_line;
};

static void source_free(struct source *s)
{
	free(s->origin);
	free(s->key);
	free(s->dir);
	free(s->buf);
	*s = (struct source){};
}

const char *sr_profile_builtin(const char *name)
{
	for (const struct sr_builtin_profile *p = sr_builtin_profiles; p->name; p++)
		if (strcmp(p->name, name) == 0)
			return p->text;
	return NULL;
}

static void state_error(struct parse_state *st, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Keeps the first error only: later ones are usually its consequences. */
static void state_error(struct parse_state *st, int code, const char *fmt, ...)
{
	char msg[SR_ERROR_MSG_MAX];
	va_list ap;

	if (st->err_line)
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	st->err_line = st->line;
	sr_error_msg(st->err, code, "profile %s:%u: %s", st->origin, st->line, msg);
}

/* inih calls the handler for keys only: an unknown [section] is caught here, on its line. */
static void check_section_line(struct parse_state *st, const char *line, size_t len)
{
	const char *close = memchr(line, ']', len);
	char name[128];
	struct sr_error e = {};

	if (len == 0 || line[0] != '[' || !close || (size_t)(close - line) > sizeof(name))
		return;
	memcpy(name, line + 1, (size_t)(close - line - 1));
	name[close - line - 1] = '\0';
	if (sr_config_check_section(name, &e) < 0)
		state_error(st, e.code, "%s", e.msg);
}

/*
 * fgets-style reader over the text: it counts lines (this inih's handler
 * gets no line number), drops leading blanks so that an indented line is
 * never taken as a continuation of the previous value, and turns a line
 * inih would silently split in two into an error.
 */
static char *read_line(char *str, int num, void *stream)
{
	struct parse_state *st = stream;
	const char *line = st->pos, *eol;
	size_t len, skip;

	if (*line == '\0' || num < 2)
		return NULL;
	st->line++;
	eol = strchr(line, '\n');
	len = eol ? (size_t)(eol - line) : strlen(line);
	st->pos = line + len + (eol ? 1 : 0);
	skip = strspn(line, " \t");
	if (skip > len)
		skip = len;
	len -= skip;
	if (len + 2 > (size_t)num) {
		state_error(st, -EINVAL, "line too long (at most %d characters)", num - 2);
		len = 0;
	}
	check_section_line(st, line + skip, len);
	memcpy(str, line + skip, len);
	str[len] = '\n';
	str[len + 1] = '\0';
	return str;
}

static int handle_inherit(struct parse_state *st, const char *value)
{
	if (st->inherit) {
		state_error(st, -EINVAL, "inherit given twice (first on line %u)",
			    st->inherit_line);
		return 0;
	}
	if (value[0] == '\0') {
		state_error(st, -EINVAL, "inherit: empty value (use a profile name, e.g. default)");
		return 0;
	}
	st->inherit = strdup(value);
	if (!st->inherit) {
		state_error(st, -ENOMEM, "out of memory");
		return 0;
	}
	st->inherit_line = st->line;
	return 1;
}

static int handle(void *user, const char *section, const char *name, const char *value)
{
	struct parse_state *st = user;
	struct sr_error e = {};
	char where[PATH_MAX + 32];
	int r;

	if (st->err_line)
		return 1;
	if (name[strcspn(name, " \t")] != '\0') {
		state_error(st, -EINVAL, "'%s' is not a key (expected 'key = value')", name);
		return 0;
	}
	if (strcmp(section, "profile") == 0 && strcmp(name, "inherit") == 0)
		return st->first_pass ? handle_inherit(st, value) : 1;
	/* Paths it names are the file's: relative to its directory, errors naming its line. */
	snprintf(where, sizeof(where), "profile %s:%u", st->origin, st->line);
	st->c->set_base = st->dir;
	st->c->set_origin = where;
	r = sr_config_set(st->c, section, name, value, &e);
	st->c->set_base = NULL;
	st->c->set_origin = NULL;
	if (r < 0) {
		/* inih only takes ';' after a blank as a comment; '#' stays in the value. */
		bool hash = strstr(value, " #") || strstr(value, "\t#");

		state_error(st, e.code, "%s%s", e.msg,
			    hash ? " ('#' after a value is not a comment: use ';')" : "");
		return 0;
	}
	return 1;
}

/* inih found a line that is neither "[section]" nor "key = value". */
static int syntax_error(struct parse_state *st, unsigned line)
{
	const char *p = st->text;
	size_t len;

	for (unsigned i = 1; i < line && p; i++) {
		p = strchr(p, '\n');
		if (p)
			p++;
	}
	if (!p)
		p = "";
	p += strspn(p, " \t");
	len = strcspn(p, "\r\n");
	if (p[0] == '[')
		return sr_error_msg(st->err, -EINVAL, "profile %s:%u: missing ']' in '%.*s'",
				    st->origin, line, (int)(len > 60 ? 60 : len), p);
	return sr_error_msg(st->err, -EINVAL,
			    "profile %s:%u: cannot parse '%.*s' (expected '[section]' or "
			    "'key = value')",
			    st->origin, line, (int)(len > 60 ? 60 : len), p);
}

static int parse_pass(struct parse_state *st, bool first_pass)
{
	int r;

	st->first_pass = first_pass;
	st->pos = st->text;
	st->line = 0;
	st->err_line = 0;
	r = ini_parse_stream(read_line, st, handle, st);
	if (r < 0)
		return sr_error_errno(st->err, -ENOMEM, "profile %s", st->origin);
	if (r > 0 && (st->err_line == 0 || (unsigned)r < st->err_line))
		return syntax_error(st, (unsigned)r);
	if (st->err_line)
		return st->err->code;
	return 0;
}

/*
 * A bare name ending in .ini is a file's with its ./ left out (-p foo.ini
 * meant ./foo.ini), never a profile's, which would be foo.ini.ini.
 */
static bool named_like_file(const char *name)
{
	size_t n = strlen(name);

	return n > 4 && strcmp(name + n - 4, ".ini") == 0;
}

bool sr_profile_name_valid(const char *name)
{
	size_t n = strlen(name);

	/* Inner dots only: "a." would look for a..ini. */
	if (n == 0 || n > 64 || name[0] == '.' || name[n - 1] == '.' || strstr(name, "..") ||
	    named_like_file(name))
		return false;
	for (const char *p = name; *p; p++)
		if (!(isalnum((unsigned char)*p) || *p == '_' || *p == '-' || *p == '.'))
			return false;
	return true;
}

static int read_file(const char *path, char **ret, struct sr_error *err)
{
	_cleanup_close_ int fd = -1;
	_cleanup_free_ char *buf = NULL;
	struct stat st;
	size_t n = 0;
	ssize_t r;

	/* O_NONBLOCK: a FIFO given as a profile must not hang the run. */
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (fd < 0)
		return sr_error_errno(err, sr_negerrno(), "profile %s", path);
	if (fstat(fd, &st) < 0)
		return sr_error_errno(err, sr_negerrno(), "profile %s", path);
	if (!S_ISREG(st.st_mode))
		return sr_error_msg(err, -EINVAL, "profile %s: not a regular file", path);
	if (st.st_size > SR_PROFILE_SIZE_MAX)
		return sr_error_msg(err, -EFBIG, "profile %s: larger than %d bytes", path,
				    SR_PROFILE_SIZE_MAX);
	buf = malloc((size_t)st.st_size + 1);
	if (!buf)
		return sr_error_errno(err, -ENOMEM, "profile %s", path);
	/* The size can change under us; read at most what fits. */
	while (n < (size_t)st.st_size) {
		r = SR_RETRY(read(fd, buf + n, (size_t)st.st_size - n));
		if (r < 0)
			return sr_error_errno(err, sr_negerrno(), "profile %s", path);
		if (r == 0)
			break;
		n += (size_t)r;
	}
	buf[n] = '\0';
	if (strlen(buf) != n)
		return sr_error_msg(err, -EINVAL, "profile %s: contains a NUL byte", path);
	*ret = steal_pointer(&buf);
	return 0;
}

static int source_from_file(const char *path, struct source *ret, struct sr_error *err)
{
	struct source s = {};
	char *slash;
	int r;

	r = read_file(path, &s.buf, err);
	if (r < 0)
		return r;
	s.text = s.buf;
	s.origin = strdup(path);
	s.key = realpath(path, NULL);
	if (!s.key)
		s.key = strdup(path);
	s.dir = strdup(path);
	if (!s.origin || !s.key || !s.dir) {
		source_free(&s);
		return sr_error_errno(err, -ENOMEM, "profile %s", path);
	}
	slash = strrchr(s.dir, '/');
	if (slash)
		slash[slash == s.dir ? 1 : 0] = '\0';
	else
		s.dir[0] = '\0';
	if (s.dir[0] == '\0') {
		free(s.dir);
		s.dir = NULL;
	}
	*ret = s;
	return 0;
}

/* Whether the directory holding path can be searched by us (EACCES: it cannot). */
static bool searchable_parent(const char *path)
{
	_cleanup_free_ char *dir = strdup(path);
	char *slash = dir ? strrchr(dir, '/') : NULL;

	if (!slash)
		return true;
	*slash = '\0';
	return access(dir, X_OK) == 0 || errno != EACCES;
}

static bool chain_has(const struct chain *chain, const char *key)
{
	for (size_t i = 0; i < chain->n; i++)
		if (strcmp(chain->keys[i], key) == 0)
			return true;
	return false;
}

/* How a built-in profile is named: its origin, its key, and what -p and inherit take. */
#define BUILTIN	    "builtin:"
#define BUILTIN_LEN (sizeof(BUILTIN) - 1)

static int builtin_source(const char *name, struct source *ret, struct sr_error *err)
{
	struct source s = {.text = sr_profile_builtin(name)};

	if (!s.text)
		return -ENOENT;
	if (asprintf(&s.origin, BUILTIN "%s", name) < 0)
		return sr_error_errno(err, -ENOMEM, "profile %s", name);
	s.key = strdup(s.origin);
	if (!s.key) {
		source_free(&s);
		return sr_error_errno(err, -ENOMEM, "profile %s", name);
	}
	*ret = s;
	return 0;
}

/*
 * A name is looked up in the places below in turn (user, installed,
 * built-in). A file that inherits its own name (self: its key; NULL for
 * -p) builds on the next place's: a user's default.ini with `inherit =
 * default` gets the installed one, which may do the same to get the
 * built-in one. Any other name that comes back to a file being read is a
 * loop (load_parent). *ret_self: the name was the inheriting file's own
 * and no place after it has one, an error without a message.
 */
static int find_named(const char *name, const char *self, struct source *ret, bool *ret_self,
		      struct sr_error *err)
{
	_cleanup_free_ char *user_path = NULL, *data_path = NULL;
	const char *xdg = getenv("XDG_CONFIG_HOME");
	const char *home = getenv("HOME");
	struct source s = {};
	size_t first = 0;
	int r;

	/* The XDG spec says to ignore a relative XDG_CONFIG_HOME. */
	if (xdg && xdg[0] == '/')
		r = asprintf(&user_path, "%s/sandbox-run/profiles/%s.ini", xdg, name);
	else if (home && home[0] == '/')
		r = asprintf(&user_path, "%s/.config/sandbox-run/profiles/%s.ini", home, name);
	else
		r = 0;
	if (r < 0 || asprintf(&data_path, "%s/profiles/%s.ini", SR_DATADIR, name) < 0)
		return sr_error_errno(err, -ENOMEM, "profile %s", name);
	/*
	 * A file that exists but cannot be read is an error, not a reason to
	 * fall back. A directory on the way we may not search (another user's
	 * HOME under sudo or setpriv, a prefix under a private directory)
	 * hides nothing of ours: that candidate is simply not there.
	 */
	const char *const candidates[] = {user_path, data_path};

	/* The places in order: the files, then the built-in copy; first is where to start. */
	for (size_t i = 0; self && i < SR_ARRAY_SIZE(candidates); i++) {
		_cleanup_free_ char *key = candidates[i] ? realpath(candidates[i], NULL) : NULL;

		if (key && strcmp(key, self) == 0)
			first = i + 1;
	}
	if (self && strncmp(self, BUILTIN, BUILTIN_LEN) == 0 &&
	    strcmp(self + BUILTIN_LEN, name) == 0)
		first = SR_ARRAY_SIZE(candidates) + 1;
	for (size_t i = first; i < SR_ARRAY_SIZE(candidates); i++) {
		if (!candidates[i] || !searchable_parent(candidates[i]))
			continue;
		r = source_from_file(candidates[i], ret, err);
		if (r != -ENOENT && r != -ENOTDIR)
			return r;
	}
	r = first <= SR_ARRAY_SIZE(candidates) ? builtin_source(name, &s, err) : -ENOENT;
	if (r == -ENOENT && first > 0) {
		*ret_self = true;
		return r;
	}
	if (r == -ENOENT)
		return sr_error_msg(err, -ENOENT,
				    "profile '%s' not found (looked for %s%s%s and the built-in "
				    "profiles default, offline, tx, e2b, ci)",
				    name, user_path ? user_path : "", user_path ? ", " : "",
				    data_path);
	if (r < 0)
		return r;
	*ret = s;
	return 0;
}

/* A name as -p and inherit take it: a path, builtin:NAME, or a profile's name. */
static int check_name(const char *name, struct sr_error *err)
{
	if (strncmp(name, BUILTIN, BUILTIN_LEN) == 0 || strchr(name, '/'))
		return 0;
	if (named_like_file(name))
		return sr_error_msg(err, -EINVAL, "profile '%s' looks like a file: write ./%s",
				    name, name);
	if (!sr_profile_name_valid(name))
		return sr_error_msg(err, -EINVAL,
				    "bad profile name '%s' (use letters, digits, '-', '_' and "
				    "'.', or a path with a '/')",
				    name);
	return 0;
}

/* self, ret_self: as for find_named (a file inheriting its own name builds on the next place's). */
static int find_profile(const char *name, const char *base_dir, const char *self,
			struct source *ret, bool *ret_self, struct sr_error *err)
{
	_cleanup_free_ char *joined = NULL;
	int r;

	/* As --print-config names them: the copy built into the binary, wherever a file is. */
	if (strncmp(name, BUILTIN, BUILTIN_LEN) == 0) {
		r = builtin_source(name + BUILTIN_LEN, ret, err);
		if (r == -ENOENT)
			return sr_error_msg(err, -ENOENT,
					    "profile '%s' not found (the built-in profiles are "
					    "default, offline, tx, e2b, ci)",
					    name);
		return r;
	}
	if (strchr(name, '/')) {
		if (name[0] != '/' && base_dir) {
			while (strncmp(name, "./", 2) == 0)
				name += 2;
			if (asprintf(&joined, "%s/%s", base_dir, name) < 0)
				return sr_error_errno(err, -ENOMEM, "profile %s", name);
			name = joined;
		}
		return source_from_file(name, ret, err);
	}
	r = check_name(name, err);
	if (r < 0)
		return r;
	return find_named(name, self, ret, ret_self, err);
}

static int chain_error(const struct chain *chain, const char *last, struct parse_state *st)
{
	char text[SR_ERROR_MSG_MAX] = "";
	size_t n = 0;

	for (size_t i = 0; i < chain->n && n < sizeof(text); i++)
		n += (size_t)snprintf(text + n, sizeof(text) - n, "%s -> ", chain->names[i]);
	if (n < sizeof(text))
		snprintf(text + n, sizeof(text) - n, "%s", last);
	st->line = st->inherit_line;
	state_error(st, -ELOOP, "inherit loop: %s", text);
	return st->err->code;
}

static int load_source(struct sr_config *c, const struct source *src, const char *name,
		       struct chain *chain, struct sr_error *err);

static int load_parent(struct parse_state *st, const struct source *src, struct chain *chain)
{
	struct source parent = {};
	bool only_self = false;
	int r;

	st->line = st->inherit_line;
	if (chain->n >= SR_PROFILE_DEPTH_MAX) {
		state_error(st, -ELOOP, "inherit chain deeper than %d profiles",
			    SR_PROFILE_DEPTH_MAX);
		return st->err->code;
	}
	r = find_profile(st->inherit, src->dir, src->key, &parent, &only_self, st->err);
	if (only_self)
		return chain_error(chain, st->inherit, st);
	if (r < 0) {
		sr_error_prefix(st->err, "profile %s:%u: inherit", src->origin, st->inherit_line);
		return r;
	}
	if (chain_has(chain, parent.key)) {
		source_free(&parent);
		return chain_error(chain, st->inherit, st);
	}
	r = load_source(st->c, &parent, st->inherit, chain, st->err);
	source_free(&parent);
	return r;
}

static int load_source(struct sr_config *c, const struct source *src, const char *name,
		       struct chain *chain, struct sr_error *err)
{
	struct parse_state st = {
	    .origin = src->origin,
	    .dir = src->dir,
	    .text = src->text,
	    .err = err,
	};
	struct sr_config scratch;
	int r;

	sr_config_init(&scratch);
	st.c = &scratch;
	r = parse_pass(&st, true);
	sr_config_free(&scratch);
	st.c = c;
	chain->keys[chain->n] = src->key;
	chain->names[chain->n] = name;
	chain->n++;
	if (r >= 0 && st.inherit)
		r = load_parent(&st, src, chain);
	if (r >= 0)
		r = parse_pass(&st, false);
	chain->n--;
	free(st.inherit);
	return r;
}

int sr_profile_load_string(struct sr_config *c, const char *text, const char *origin,
			   struct sr_error *err)
{
	struct source src = {
	    .origin = (char *)origin,
	    .key = (char *)origin,
	    .text = text,
	};
	struct chain chain = {};

	return load_source(c, &src, origin, &chain, err);
}

/* err, of a profile that did not load, marked as what it is (profile.h): returns its code. */
static int failed(struct sr_error *err, enum sr_error_kind kind)
{
	err->kind = kind;
	return err->code;
}

int sr_profile_load(struct sr_config *c, const char *name_or_path, struct sr_error *err)
{
	_cleanup_free_ char *name = NULL, *path = NULL;
	struct source src = {};
	struct chain chain = {};
	bool only_self = false;
	int r;

	/* The name itself refused: nothing looked for, nothing of the host's in the message. */
	r = check_name(name_or_path, err);
	if (r < 0)
		return r;
	r = find_profile(name_or_path, NULL, NULL, &src, &only_self, err);
	if (r < 0)
		return failed(err, r == -ENOENT || r == -ENOTDIR ? SR_ERROR_PROFILE_MISSING
								 : SR_ERROR_PROFILE_BROKEN);
	r = load_source(c, &src, name_or_path, &chain, err);
	if (r < 0)
		failed(err, SR_ERROR_PROFILE_BROKEN);
	if (r >= 0) {
		name = strdup(name_or_path);
		path = strdup(src.origin);
		if (!name || !path)
			r = sr_error_errno(err, -ENOMEM, "profile %s", name_or_path);
	}
	source_free(&src);
	if (r < 0)
		return r;
	free(c->profile);
	free(c->profile_path);
	c->profile = steal_pointer(&name);
	c->profile_path = steal_pointer(&path);
	return 0;
}
