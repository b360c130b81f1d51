/* SPDX-License-Identifier: MIT */
#include "agent.h"
#include "log.h"
#include "util.h"

#include <fcntl.h>
#include <stdarg.h>
#include <limits.h>
#include <linux/openat2.h>
#include <stdint.h>
#include <strings.h>
#include <sys/stat.h>
#include <sys/syscall.h>

/* package.json is read whole; a real one is a few KiB. */
#define PACKAGE_JSON_MAX (1024 * 1024)
/*
 * Nesting the JSON reader follows: its stack is a fixed array, so hostile
 * input ("[[[[...") costs neither recursion nor allocation. npm itself
 * never writes more than a handful of levels.
 */
#define JSON_MAX_DEPTH 512

static void strv_freep(struct sr_strv *v)
{
	sr_strv_free(v);
}

static bool is_executable(const struct stat *st)
{
	/*
	 * Mode bits only: the agent runs as another uid inside the user
	 * namespace, so access(2) here would answer for the wrong user.
	 * execve() in the sandbox has the final word (126 from there).
	 */
	return S_ISREG(st->st_mode) && (st->st_mode & 0111);
}

/* An error with its own exit status: 126 (found, unusable) or 127 (not found). */
static int entry_error(struct sr_error *err, int status, int code, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static int entry_error(struct sr_error *err, int status, int code, const char *fmt, ...)
{
	char msg[SR_ERROR_MSG_MAX];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	sr_error_msg(err, code, "%s", msg);
	err->status = status;
	return code;
}

/*
 * --entry / [agent] entry: split on blanks, no shell and no quoting, so
 * a profile cannot smuggle shell syntax in. Anything fancier belongs in a
 * script in the workspace.
 */
static int split_entry(const char *entry, struct sr_strv *v, struct sr_error *err)
{
	const char *p = entry;

	for (;;) {
		size_t n;
		char word[PATH_MAX];

		p += strspn(p, " \t");
		if (!*p)
			break;
		n = strcspn(p, " \t");
		if (n >= sizeof(word))
			return sr_error_msg(err, -E2BIG, "entry '%s': word too long", entry);
		memcpy(word, p, n);
		word[n] = '\0';
		if (sr_strv_push(v, word) < 0)
			return sr_error_errno(err, -ENOMEM, "entry");
		p += n;
	}
	if (v->n == 0)
		return sr_error_msg(err, -EINVAL,
				    "entry is empty (give a command, e.g. --entry './run.sh')");
	return 0;
}

/* An executable `agent`: 1 when found, 0 when absent or a directory. */
static int detect_agent_file(int dirfd, const char *what, struct sr_strv *v, struct sr_error *err)
{
	_cleanup_close_ int fd = -1;
	struct stat st;

	/*
	 * Resolved beneath the workspace: a symlink `agent` -> /usr/bin/foo
	 * would be checked against the host's file here but run against the
	 * sandbox's one, and a link out of the tree is no part of the agent.
	 */
	fd = sr_openat2(dirfd, "agent", O_PATH, RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS);
	if (fd == -ENOENT && fstatat(dirfd, "agent", &st, AT_SYMLINK_NOFOLLOW) < 0)
		return 0;
	if (fd == -ENOENT)
		return entry_error(err, 127, -ENOENT, "%s/agent is a dangling symbolic link", what);
	if (fd == -EXDEV || fd == -ELOOP)
		return entry_error(err, 126, -EXDEV,
				   "%s/agent is a symbolic link leading out of the "
				   "workspace",
				   what);
	if (fd < 0)
		return sr_error_errno(err, fd, "%s/agent", what);
	if (fstat(fd, &st) < 0)
		return sr_error_errno(err, sr_negerrno(), "%s/agent", what);
	if (S_ISDIR(st.st_mode))
		return 0;
	if (!S_ISREG(st.st_mode))
		return entry_error(err, 126, -EACCES, "%s/agent is not a regular file", what);
	if (!is_executable(&st))
		return entry_error(err, 126, -EACCES, "%s/agent is not executable (chmod +x agent)",
				   what);
	if (sr_strv_push(v, SR_WORKSPACE "/agent") < 0)
		return sr_error_errno(err, -ENOMEM, "entry");
	return 1;
}

static int read_capped(int fd, char *buf, size_t cap, size_t *ret_len)
{
	size_t n = 0;

	while (n < cap) {
		ssize_t r = SR_RETRY(read(fd, buf + n, cap - n));

		if (r < 0)
			return sr_negerrno();
		if (r == 0)
			break;
		n += (size_t)r;
	}
	*ret_len = n;
	return 0;
}

/* "main" must name a file inside the workspace: relative, no "..". */
static bool package_main_ok(const char *m)
{
	const char *p = m;

	if (m[0] == '/')
		return false;
	while (*p) {
		size_t n = strcspn(p, "/");

		if (n == 2 && p[0] == '.' && p[1] == '.')
			return false;
		p += n;
		p += strspn(p, "/");
	}
	return true;
}

/* Opens package.json into *ret_fd: 1, or 0 when absent (or a directory). */
static int open_package_json(int dirfd, const char *what, int *ret_fd, struct sr_error *err)
{
	_cleanup_close_ int fd = -1;
	struct stat st;

	/*
	 * Symlinks are followed only while they stay beneath the workspace;
	 * O_NONBLOCK: a FIFO named package.json must not hang us in open().
	 */
	fd = sr_openat2(dirfd, "package.json", O_RDONLY | O_NONBLOCK,
			RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS);
	if (fd == -ENOENT || fd == -EISDIR)
		return 0;
	if (fd == -EXDEV || fd == -ELOOP)
		return entry_error(err, 126, -EXDEV,
				   "%s/package.json is a symbolic link leading out "
				   "of the workspace",
				   what);
	if (fd < 0)
		return sr_error_errno(err, fd, "%s/package.json", what);
	if (fstat(fd, &st) < 0)
		return sr_error_errno(err, sr_negerrno(), "%s/package.json", what);
	if (S_ISDIR(st.st_mode))
		return 0;
	if (!S_ISREG(st.st_mode))
		return entry_error(err, 126, -EINVAL, "%s/package.json is not a regular file",
				   what);
	*ret_fd = steal_fd(&fd);
	return 1;
}

/* package.json: 1 with ["node", "/workspace/MAIN"], 0 when absent. */
static int detect_package_json(int dirfd, const char *what, struct sr_strv *v, struct sr_error *err)
{
	_cleanup_free_ char *json = NULL, *main_js = NULL, *path = NULL;
	_cleanup_close_ int fd = -1;
	const char *m;
	size_t len;
	int k;

	k = open_package_json(dirfd, what, &fd, err);
	if (k <= 0)
		return k;
	json = malloc(PACKAGE_JSON_MAX + 1);
	if (!json)
		return sr_error_errno(err, -ENOMEM, "%s/package.json", what);
	k = read_capped(fd, json, PACKAGE_JSON_MAX + 1, &len);
	if (k < 0)
		return sr_error_errno(err, k, "read %s/package.json", what);
	if (len > PACKAGE_JSON_MAX)
		return entry_error(err, 126, -EFBIG, "%s/package.json is larger than %d bytes",
				   what, PACKAGE_JSON_MAX);

	k = sr_agent_package_main(json, len, &main_js);
	if (k == -EINVAL)
		return entry_error(err, 126, k,
				   "%s/package.json: not valid JSON, or \"main\" is "
				   "not a string",
				   what);
	if (k < 0 && k != -ENOENT)
		return sr_error_errno(err, k, "%s/package.json", what);
	/* Node's own default when "main" is missing or empty. */
	m = main_js && *main_js ? main_js : "index.js";
	if (!package_main_ok(m))
		return entry_error(err, 126, -EINVAL,
				   "%s/package.json: \"main\" must be a relative path "
				   "inside the workspace, not '%s'",
				   what, m);
	while (m[0] == '.' && m[1] == '/')
		m += 2 + strspn(m + 2, "/");
	if (asprintf(&path, SR_WORKSPACE "/%s", m) < 0) {
		path = NULL;
		return sr_error_errno(err, -ENOMEM, "entry");
	}
	if (sr_strv_push(v, "node") < 0 || sr_strv_push(v, path) < 0)
		return sr_error_errno(err, -ENOMEM, "entry");
	return 1;
}

static int detect_main_py(int dirfd, struct sr_strv *v, struct sr_error *err)
{
	struct stat st;

	/* No symlink is followed: python3 opens it inside the sandbox, not here. */
	if (fstatat(dirfd, "main.py", &st, AT_SYMLINK_NOFOLLOW) < 0) {
		if (errno == ENOENT)
			return 0;
		return sr_error_errno(err, sr_negerrno(), "main.py");
	}
	if (S_ISDIR(st.st_mode))
		return 0;
	if (sr_strv_push(v, "python3") < 0 || sr_strv_push(v, SR_WORKSPACE "/main.py") < 0)
		return sr_error_errno(err, -ENOMEM, "entry");
	return 1;
}

static int find_entry(int dirfd, const char *what, struct sr_strv *v, struct sr_error *err)
{
	int k;

	k = detect_agent_file(dirfd, what, v, err);
	if (k == 0)
		k = detect_package_json(dirfd, what, v, err);
	if (k == 0)
		k = detect_main_py(dirfd, v, err);
	if (k < 0)
		return k;
	if (k == 0)
		return entry_error(err, 127, -ENOENT,
				   "no entry point in %s: looked for --entry, an "
				   "executable 'agent', package.json, main.py",
				   what);
	return 0;
}

int sr_agent_detect_entry_in(int dirfd, const char *what, const char *entry,
			     char *const *extra_args, int n_extra, struct sr_strv *ret_argv,
			     struct sr_error *err)
{
	_cleanup_(strv_freep) struct sr_strv v = {};
	char name[PATH_MAX];
	size_t l;
	int k;

	/* The name as the user gave it, without trailing slashes, for messages. */
	snprintf(name, sizeof(name), "%s", what);
	for (l = strlen(name); l > 1 && name[l - 1] == '/'; l--)
		name[l - 1] = '\0';
	/* Built aside and swapped in, so ret_argv is untouched on failure. */
	for (size_t i = 0; i < ret_argv->n; i++)
		if (sr_strv_push(&v, ret_argv->items[i]) < 0)
			return sr_error_errno(err, -ENOMEM, "entry");
	k = entry ? split_entry(entry, &v, err) : find_entry(dirfd, name, &v, err);
	if (k < 0)
		return k;
	for (int i = 0; i < n_extra; i++)
		if (sr_strv_push(&v, extra_args[i]) < 0)
			return sr_error_errno(err, -ENOMEM, "entry");
	sr_strv_free(ret_argv);
	*ret_argv = v;
	v = (struct sr_strv){};
	return 0;
}

int sr_agent_detect_entry(int dirfd, const char *entry, char *const *extra_args, int n_extra,
			  struct sr_strv *ret_argv, struct sr_error *err)
{
	return sr_agent_detect_entry_in(dirfd, SR_WORKSPACE, entry, extra_args, n_extra, ret_argv,
					err);
}

bool sr_agent_is_archive_name(const char *path)
{
	static const char *const suffixes[] = {
	    ".tar", ".tar.gz", ".tgz", ".tar.xz", ".txz", ".tar.zst", ".tzst", ".tar.bz2", ".zip",
	};
	size_t l = strlen(path);

	for (size_t i = 0; i < SR_ARRAY_SIZE(suffixes); i++) {
		size_t s = strlen(suffixes[i]);

		if (l > s && path[l - s - 1] != '/' && strcasecmp(path + l - s, suffixes[i]) == 0)
			return true;
	}
	return false;
}

static int push_args(struct sr_strv *v, char *const *args, int n, struct sr_error *err)
{
	for (int i = 0; i < n; i++)
		if (sr_strv_push(v, args[i]) < 0)
			return sr_error_errno(err, -ENOMEM, "argv");
	return 0;
}

static int resolve_command(const struct sr_config *c, const struct sr_sink *sink,
			   struct sr_agent *a, struct sr_error *err)
{
	struct stat st;

	a->kind = SR_AGENT_COMMAND;
	if (c->argc < 1 && !c->no_entry)
		return sr_error_msg(err, -EINVAL, "no COMMAND after '--'");
	/* A profile's entry is for the agents it is used with; one given here was meant. */
	if (c->entry_given)
		sr_warn(sink,
			"--entry is for a directory or archive agent: ignored with -- COMMAND");
	if (c->workspace) {
		if (stat(c->workspace, &st) < 0)
			return sr_error_errno(err, sr_negerrno(), "workspace '%s'", c->workspace);
		if (!S_ISDIR(st.st_mode))
			return sr_error_errno(err, -ENOTDIR, "workspace '%s'", c->workspace);
		a->host_dir = realpath(c->workspace, NULL);
		if (!a->host_dir)
			return sr_error_errno(err, sr_negerrno(), "workspace '%s'", c->workspace);
	}
	return push_args(&a->argv, c->argv, c->argc, err);
}

static int resolve_dir(const struct sr_config *c, struct sr_agent *a, struct sr_error *err)
{
	_cleanup_close_ int fd = -1;

	a->kind = SR_AGENT_DIR;
	if (c->no_entry)
		return 0;
	fd = open(a->host_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return sr_error_errno(err, sr_negerrno(), "agent '%s'", c->argv[0]);
	return sr_agent_detect_entry_in(fd, c->argv[0], c->entry, c->argv + 1, c->argc - 1,
					&a->argv, err);
}

static int resolve_file(const struct sr_config *c, const struct sr_sink *sink, struct sr_agent *a,
			const char *real, struct sr_error *err)
{
	_cleanup_free_ char *inside = NULL;
	const char *slash = strrchr(real, '/');

	a->kind = SR_AGENT_FILE;
	if (c->entry_given)
		sr_warn(sink,
			"--entry is for a directory or archive agent: ignored for the executable "
			"file %s",
			c->argv[0]);
	/* realpath() of a file: never "/" alone, always a slash. */
	a->host_dir = slash == real ? strdup("/") : strndup(real, (size_t)(slash - real));
	if (!a->host_dir || asprintf(&inside, SR_WORKSPACE "/%s", slash + 1) < 0) {
		inside = NULL;
		return sr_error_errno(err, -ENOMEM, "agent");
	}
	if (sr_strv_push(&a->argv, inside) < 0)
		return sr_error_errno(err, -ENOMEM, "agent");
	return push_args(&a->argv, c->argv + 1, c->argc - 1, err);
}

static int resolve_path(const struct sr_config *c, const struct sr_sink *sink, struct sr_agent *a,
			struct sr_error *err)
{
	_cleanup_free_ char *real = NULL;
	_cleanup_close_ int fd = -1;
	const char *path = c->argv[0];
	struct stat st;

	if (stat(path, &st) < 0) {
		if (errno == ENOENT || errno == ENOTDIR)
			return entry_error(err, 127, -ENOENT, "agent '%s' not found", path);
		return sr_error_errno(err, sr_negerrno(), "agent '%s'", path);
	}
	real = realpath(path, NULL);
	if (!real)
		return sr_error_errno(err, sr_negerrno(), "agent '%s'", path);

	if (S_ISDIR(st.st_mode)) {
		a->host_dir = steal_pointer(&real);
		return resolve_dir(c, a, err);
	}
	if (S_ISREG(st.st_mode) && sr_agent_is_archive_name(path)) {
		/* Opened here only to fail early and clearly on an unreadable file. */
		fd = open(real, O_RDONLY | O_CLOEXEC | O_NOCTTY);
		if (fd < 0)
			return sr_error_errno(err, sr_negerrno(), "agent '%s'", path);
		a->kind = SR_AGENT_ARCHIVE;
		a->archive_path = steal_pointer(&real);
		return 0;
	}
	if (is_executable(&st))
		return resolve_file(c, sink, a, real, err);
	if (S_ISREG(st.st_mode))
		return entry_error(err, 126, -EACCES, "agent '%s' is not executable (chmod +x %s)",
				   path, path);
	return entry_error(err, 126, -EACCES,
			   "agent '%s' is not a directory, an executable file or an "
			   "archive",
			   path);
}

int sr_agent_resolve(const struct sr_config *c, const struct sr_sink *sink, struct sr_agent *ret,
		     struct sr_error *err)
{
	_cleanup_(sr_agent_free) struct sr_agent a = {};
	int k;

	if (c->command_mode || (c->no_entry && c->argc < 1))
		k = resolve_command(c, sink, &a, err);
	else if (c->argc < 1 || !c->argv[0])
		k = sr_error_msg(err, -EINVAL, "no AGENT given (see --help)");
	else
		k = resolve_path(c, sink, &a, err);
	if (k < 0)
		return k;
	*ret = a;
	a = (struct sr_agent){};
	return 0;
}

void sr_agent_free(struct sr_agent *a)
{
	free(a->host_dir);
	free(a->archive_path);
	sr_strv_free(&a->argv);
	*a = (struct sr_agent){};
}

/*
 * A strict JSON reader (RFC 8259) that keeps only the top-level "main".
 * It validates the whole text, since a broken package.json would make
 * node fail anyway and a clear message here is better. Iterative, with
 * an explicit bounded stack, and every read checked against the end: it
 * is fed untrusted files and fuzzed.
 */
struct json {
	const unsigned char *p, *end;
};

static void json_ws(struct json *j)
{
	while (j->p < j->end && (*j->p == ' ' || *j->p == '\t' || *j->p == '\n' || *j->p == '\r'))
		j->p++;
}

/* Length of the valid UTF-8 sequence at s within avail bytes, or 0. */
static size_t utf8_len(const unsigned char *s, size_t avail)
{
	size_t need;
	unsigned char lo = 0x80, hi = 0xbf;

	if (s[0] < 0x80)
		return 1;
	if (s[0] >= 0xc2 && s[0] <= 0xdf)
		need = 2;
	else if (s[0] >= 0xe0 && s[0] <= 0xef)
		need = 3;
	else if (s[0] >= 0xf0 && s[0] <= 0xf4)
		need = 4;
	else
		return 0;
	if (avail < need)
		return 0;
	/* Overlongs, UTF-16 surrogates and code points above U+10FFFF. */
	if (s[0] == 0xe0)
		lo = 0xa0;
	else if (s[0] == 0xed)
		hi = 0x9f;
	else if (s[0] == 0xf0)
		lo = 0x90;
	else if (s[0] == 0xf4)
		hi = 0x8f;
	if (s[1] < lo || s[1] > hi)
		return 0;
	for (size_t i = 2; i < need; i++)
		if ((s[i] & 0xc0) != 0x80)
			return 0;
	return need;
}

static int json_hex4(struct json *j, uint32_t *ret)
{
	uint32_t v = 0;

	if (j->end - j->p < 4)
		return -EINVAL;
	for (int i = 0; i < 4; i++) {
		unsigned char c = *j->p++;

		v <<= 4;
		if (c >= '0' && c <= '9')
			v |= c - '0';
		else if (c >= 'a' && c <= 'f')
			v |= c - 'a' + 10;
		else if (c >= 'A' && c <= 'F')
			v |= c - 'A' + 10;
		else
			return -EINVAL;
	}
	*ret = v;
	return 0;
}

static size_t utf8_put(uint32_t cp, unsigned char *out)
{
	static const unsigned char lead[] = {0, 0x00, 0xc0, 0xe0, 0xf0};
	size_t n = cp < 0x80 ? 1 : cp < 0x800 ? 2 : cp < 0x10000 ? 3 : 4;

	for (size_t i = n - 1; i > 0; i--, cp >>= 6)
		out[i] = (unsigned char)(0x80 | (cp & 0x3f));
	out[0] = (unsigned char)(lead[n] | cp);
	return n;
}

/* After the backslash of "\uXXXX": a code point, joining a surrogate pair. */
static int json_unicode(struct json *j, uint32_t *ret)
{
	uint32_t hi, lo;

	if (json_hex4(j, &hi) < 0)
		return -EINVAL;
	if (hi >= 0xdc00 && hi <= 0xdfff)
		return -EINVAL;
	if (hi < 0xd800 || hi > 0xdbff) {
		*ret = hi;
		return 0;
	}
	if (j->end - j->p < 2 || j->p[0] != '\\' || j->p[1] != 'u')
		return -EINVAL;
	j->p += 2;
	if (json_hex4(j, &lo) < 0 || lo < 0xdc00 || lo > 0xdfff)
		return -EINVAL;
	*ret = 0x10000 + ((hi - 0xd800) << 10) + (lo - 0xdc00);
	return 0;
}

/*
 * The string at j->p (its opening quote). The first cap bytes of the
 * decoded text go to out; *ret_len is the whole decoded length.
 */
static int json_string(struct json *j, char *out, size_t cap, size_t *ret_len)
{
	size_t n = 0;

	j->p++;
	for (;;) {
		unsigned char tmp[4];
		const unsigned char *src = tmp;
		size_t l;

		if (j->p >= j->end || *j->p < 0x20)
			return -EINVAL;
		if (*j->p == '"') {
			j->p++;
			break;
		}
		if (*j->p == '\\') {
			static const char esc_in[] = "\"\\/bfnrt", esc_out[] = "\"\\/\b\f\n\r\t";
			const char *e;
			uint32_t cp;

			if (j->end - j->p < 2)
				return -EINVAL;
			j->p += 2;
			e = j->p[-1] ? strchr(esc_in, j->p[-1]) : NULL;
			if (e) {
				tmp[0] = (unsigned char)esc_out[e - esc_in];
				l = 1;
			} else if (j->p[-1] == 'u' && json_unicode(j, &cp) == 0) {
				l = utf8_put(cp, tmp);
			} else {
				return -EINVAL;
			}
		} else {
			l = utf8_len(j->p, (size_t)(j->end - j->p));
			if (l == 0)
				return -EINVAL;
			src = j->p;
			j->p += l;
		}
		for (size_t i = 0; i < l; i++, n++)
			if (n < cap)
				out[n] = (char)src[i];
	}
	*ret_len = n;
	return 0;
}

static bool json_digits(struct json *j)
{
	const unsigned char *start = j->p;

	while (j->p < j->end && *j->p >= '0' && *j->p <= '9')
		j->p++;
	return j->p > start;
}

static int json_number(struct json *j)
{
	if (j->p < j->end && *j->p == '-')
		j->p++;
	if (j->p < j->end && *j->p == '0')
		j->p++;
	else if (j->p >= j->end || *j->p < '1' || *j->p > '9' || !json_digits(j))
		return -EINVAL;
	if (j->p < j->end && *j->p == '.') {
		j->p++;
		if (!json_digits(j))
			return -EINVAL;
	}
	if (j->p < j->end && (*j->p == 'e' || *j->p == 'E')) {
		j->p++;
		if (j->p < j->end && (*j->p == '+' || *j->p == '-'))
			j->p++;
		if (!json_digits(j))
			return -EINVAL;
	}
	return 0;
}

static int json_literal(struct json *j)
{
	static const char *const lits[] = {"true", "false", "null"};

	for (size_t i = 0; i < SR_ARRAY_SIZE(lits); i++) {
		size_t l = strlen(lits[i]);

		if ((size_t)(j->end - j->p) >= l && memcmp(j->p, lits[i], l) == 0) {
			j->p += l;
			return 0;
		}
	}
	return -EINVAL;
}

/* The string value at j->p, decoded into a new C string (no NUL inside). */
static int json_string_dup(struct json *j, char **ret)
{
	const unsigned char *start = j->p;
	char *s;
	size_t len;

	if (json_string(j, NULL, 0, &len) < 0)
		return -EINVAL;
	s = malloc(len + 1);
	if (!s)
		return -ENOMEM;
	j->p = start;
	(void)json_string(j, s, len, &len);
	s[len] = '\0';
	if (memchr(s, '\0', len)) {
		free(s);
		return -EINVAL;
	}
	*ret = s;
	return 0;
}

enum json_want {
	WANT_VALUE,
	WANT_VALUE_OR_CLOSE, /* just after '[' */
	WANT_KEY,
	WANT_KEY_OR_CLOSE, /* just after '{' */
	WANT_COMMA_OR_CLOSE,
	_WANT_MAX,
};

/* A scalar value or the opening of a container; is_main: this is top-level "main". */
static int json_value(struct json *j, char *stack, size_t *depth, bool is_main, char **main_val,
		      enum json_want *want)
{
	unsigned char c = *j->p;
	size_t len;

	*want = WANT_COMMA_OR_CLOSE;
	if (c == '{' || c == '[') {
		if (is_main || *depth >= JSON_MAX_DEPTH)
			return -EINVAL;
		stack[(*depth)++] = (char)c;
		j->p++;
		*want = c == '{' ? WANT_KEY_OR_CLOSE : WANT_VALUE_OR_CLOSE;
		return 0;
	}
	if (c == '"') {
		if (!is_main)
			return json_string(j, NULL, 0, &len);
		free(*main_val);
		*main_val = NULL;
		return json_string_dup(j, main_val);
	}
	if (is_main)
		return -EINVAL;
	if (c == '-' || (c >= '0' && c <= '9'))
		return json_number(j);
	return json_literal(j);
}

/* A key and its colon; *ret_is_main when it is "main" in the top-level object. */
static int json_key(struct json *j, size_t depth, bool *ret_is_main)
{
	char key[4];
	size_t len;

	if (*j->p != '"' || json_string(j, key, sizeof(key), &len) < 0)
		return -EINVAL;
	json_ws(j);
	if (j->p >= j->end || *j->p != ':')
		return -EINVAL;
	j->p++;
	*ret_is_main = depth == 1 && len == 4 && memcmp(key, "main", 4) == 0;
	return 0;
}

static int json_close(struct json *j, char *stack, size_t *depth)
{
	unsigned char c = *j->p;

	if (*depth == 0 || (c == '}' && stack[*depth - 1] != '{') ||
	    (c == ']' && stack[*depth - 1] != '['))
		return -EINVAL;
	(*depth)--;
	j->p++;
	return 0;
}

int sr_agent_package_main(const char *json, size_t len, char **ret_main)
{
	struct json j = {(const unsigned char *)json, (const unsigned char *)json + len};
	_cleanup_free_ char *main_val = NULL;
	enum json_want want = WANT_KEY_OR_CLOSE;
	char stack[JSON_MAX_DEPTH];
	size_t depth = 1;
	bool is_main = false;
	int k = 0;

	/* package.json is an object; the reader starts inside it. */
	json_ws(&j);
	if (j.p >= j.end || *j.p != '{')
		return -EINVAL;
	stack[0] = '{';
	j.p++;
	while (depth > 0 && k >= 0) {
		json_ws(&j);
		if (j.p >= j.end)
			return -EINVAL;
		switch (want) {
		case WANT_VALUE_OR_CLOSE:
		case WANT_KEY_OR_CLOSE:
			if (*j.p == ']' || *j.p == '}') {
				k = json_close(&j, stack, &depth);
				want = WANT_COMMA_OR_CLOSE;
			} else if (want == WANT_KEY_OR_CLOSE) {
				k = json_key(&j, depth, &is_main);
				want = WANT_VALUE;
			} else {
				k = json_value(&j, stack, &depth, false, &main_val, &want);
			}
			break;
		case WANT_KEY:
			k = json_key(&j, depth, &is_main);
			want = WANT_VALUE;
			break;
		case WANT_VALUE:
			k = json_value(&j, stack, &depth, is_main, &main_val, &want);
			is_main = false;
			break;
		case WANT_COMMA_OR_CLOSE:
			if (*j.p == ',') {
				j.p++;
				want = stack[depth - 1] == '{' ? WANT_KEY : WANT_VALUE;
			} else {
				k = json_close(&j, stack, &depth);
			}
			break;
		default:
			return -EINVAL;
		}
	}
	if (k < 0)
		return k;
	json_ws(&j);
	if (j.p != j.end)
		return -EINVAL;
	if (!main_val)
		return -ENOENT;
	*ret_main = steal_pointer(&main_val);
	return 0;
}
