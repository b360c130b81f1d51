/* SPDX-License-Identifier: MIT */
#include "agent.h"
#include "json.h"
#include "hostpath.h"
#include "snapshot.h"
#include "log.h"
#include "util.h"

#include <fcntl.h>
#include <stdarg.h>
#include <limits.h>
#include <linux/openat2.h>
#include <strings.h>
#include <sys/stat.h>
#include <sys/syscall.h>

/*
 * package.json is read whole; a real one is a few KiB. jansson builds the
 * whole tree: a hostile file of this size (all "{}") peaks at ~80 MiB.
 */
#define PACKAGE_JSON_MAX (1024 * 1024)

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

/*
 * --workspace DIR: an existing directory, absolute, with no symbolic link
 * but root's own in root's directories (hostpath.h): one another user put
 * on its way would give the agent what it points to, for a root caller
 * root's own files. The sandbox opens it with RESOLVE_NO_SYMLINKS.
 */
static int resolve_workspace(const struct sr_config *c, struct sr_agent *a, struct sr_error *err)
{
	_cleanup_free_ char *path = NULL;
	struct stat st;
	int r;

	if (!c->workspace)
		return 0;
	if (stat(c->workspace, &st) < 0)
		return sr_error_errno(err, sr_negerrno(), "workspace '%s'", c->workspace);
	if (!S_ISDIR(st.st_mode))
		return sr_error_errno(err, -ENOTDIR, "workspace '%s'", c->workspace);
	r = sr_hostpath_resolve_arg("workspace", c->workspace, &path, err);
	if (r < 0)
		return r;
	a->host_dir = steal_pointer(&path);
	return 0;
}

static int resolve_command(const struct sr_config *c, const struct sr_sink *sink,
			   struct sr_agent *a, struct sr_error *err)
{
	int r;

	a->kind = SR_AGENT_COMMAND;
	if (c->argc < 1 && !c->no_entry)
		return sr_error_msg(err, -EINVAL, "no COMMAND after '--'");
	/* A profile's entry is for the agents it is used with; one given here was meant. */
	if (c->entry_given)
		sr_warn(sink,
			"--entry is for a directory or archive agent: ignored with -- COMMAND");
	r = resolve_workspace(c, a, err);
	if (r < 0)
		return r;
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

/* The part of path below dir ("a/b" for "/w/a/b" in "/w"), or NULL; both absolute, tidy. */
static const char *below(const char *path, const char *dir)
{
	size_t n = strcmp(dir, "/") == 0 ? 0 : strlen(dir);

	if (strncmp(path, dir, n) != 0 || path[n] != '/')
		return NULL;
	return path + n + 1;
}

/*
 * An executable file is all the agent gets: not its directory. That
 * directory is wherever the file happens to be -- a home directory with
 * ~/.ssh beside the script, or, for a root caller, a root-only directory
 * whose 0600 files the idmapped workspace would make the agent's. So the
 * file is copied into an empty workspace (sandbox-side, by PID 1: workspace.c)
 * and run as /workspace/NAME. Whoever wants a directory says which, with
 * --workspace DIR: a file inside it runs from there, one outside it is
 * copied in beside its files.
 */
static int resolve_file(const struct sr_config *c, const struct sr_sink *sink, struct sr_agent *a,
			const char *real, struct sr_error *err)
{
	_cleanup_free_ char *inside = NULL;
	const char *rel;
	int r;

	a->kind = SR_AGENT_FILE;
	if (c->entry_given)
		sr_warn(sink,
			"--entry is for a directory or archive agent: ignored for the executable "
			"file %s",
			c->argv[0]);
	r = resolve_workspace(c, a, err);
	if (r < 0)
		return r;
	rel = a->host_dir ? below(real, a->host_dir) : NULL;
	if (!rel) {
		/* A resolved file: never "/" alone, always a slash. */
		rel = strrchr(real, '/') + 1;
		a->file_path = strdup(real);
		if (!a->file_path)
			return sr_error_errno(err, -ENOMEM, "agent");
	}
	if (asprintf(&inside, SR_WORKSPACE "/%s", rel) < 0) {
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
	int r;

	if (stat(path, &st) < 0) {
		if (errno == ENOENT || errno == ENOTDIR)
			return entry_error(err, 127, -ENOENT, "agent '%s' not found", path);
		return sr_error_errno(err, sr_negerrno(), "agent '%s'", path);
	}
	/* As --workspace DIR: the agent's files are its workspace. */
	r = sr_hostpath_resolve_arg("agent", path, &real, err);
	if (r < 0)
		return r;
	if (stat(real, &st) < 0)
		return sr_error_errno(err, sr_negerrno(), "agent '%s'", path);
	if (c->workspace &&
	    (S_ISDIR(st.st_mode) || (S_ISREG(st.st_mode) && sr_agent_is_archive_name(path))))
		return sr_error_msg(
		    err, -EINVAL,
		    "--workspace is for '-- COMMAND' or an executable-file agent (the "
		    "AGENT directory or archive '%s' is its own workspace)",
		    path);

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

/*
 * Here, host side, where a link's owner is known: inside the sandbox's
 * user namespace, host root and every other user are one "nobody", and
 * only root's links may be followed, outside the agent's own tree: the
 * workspace directory and an executable file's directory (hostpath.c).
 */
static int resolve_binds(const struct sr_config *c, struct sr_agent *a, struct sr_error *err)
{
	_cleanup_free_ char *file_dir = a->file_path ? strdup(a->file_path) : NULL;
	const char *trees[3] = {NULL};
	size_t n = 0;

	if (a->host_dir)
		trees[n++] = a->host_dir;
	if (file_dir) {
		/* A resolved file: always a slash; "/" for one at the top. */
		char *slash = strrchr(file_dir, '/');

		if (slash == file_dir)
			slash[1] = '\0';
		else
			*slash = '\0';
		trees[n++] = file_dir;
	} else if (a->file_path) {
		return sr_error_errno(err, -ENOMEM, "agent");
	}
	for (size_t i = 0; i < c->n_binds; i++) {
		_cleanup_free_ char *path = NULL;
		int r = sr_hostpath_resolve("bind", c->binds[i].src, trees, &path, err);

		/* A profile's bind: its file and line, where the path was written. */
		if (r < 0 && c->binds[i].origin)
			sr_error_prefix(err, "%s", c->binds[i].origin);
		if (r < 0)
			return r;
		if (sr_strv_push(&a->bind_sources, path) < 0)
			return sr_error_errno(err, -ENOMEM, "bind %s", c->binds[i].src);
	}
	return 0;
}

/* create --from NAME: the snapshot's files are the archive, restored part by part (workspace.c). */
static int resolve_snapshot(const struct sr_config *c, struct sr_agent *a, struct sr_error *err)
{
	_cleanup_free_ char *dir = NULL;
	int k = sr_snapshot_files(c->from, &dir, err);

	if (k < 0)
		return k;
	a->kind = SR_AGENT_ARCHIVE;
	a->snapshot = true;
	a->archive_path = steal_pointer(&dir);
	return 0;
}

int sr_agent_resolve(const struct sr_config *c, const struct sr_sink *sink, struct sr_agent *ret,
		     struct sr_error *err)
{
	_cleanup_(sr_agent_free) struct sr_agent a = {};
	int k;

	if (c->from)
		k = resolve_snapshot(c, &a, err);
	else if (c->command_mode || (c->no_entry && c->argc < 1))
		k = resolve_command(c, sink, &a, err);
	else if (c->argc < 1 || !c->argv[0])
		k = sr_error_msg(err, -EINVAL, "no AGENT given (see --help)");
	else
		k = resolve_path(c, sink, &a, err);
	if (k >= 0)
		k = resolve_binds(c, &a, err);
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
	free(a->file_path);
	sr_strv_free(&a->bind_sources);
	sr_strv_free(&a->argv);
	*a = (struct sr_agent){};
}

/*
 * Nesting package.json may have. jansson's parser recurses (up to the
 * 2048 levels it is built with) and sr_json_parse() walks the tree
 * again; npm itself never writes more than a handful of levels.
 */
#define PACKAGE_JSON_MAX_DEPTH 512

int sr_agent_package_main(const char *json, size_t len, char **ret_main)
{
	_cleanup_(sr_json_decrefp) json_t *root = NULL;
	json_t *m;
	char *s;
	int k;

	/*
	 * The whole text is validated, since a broken package.json would make
	 * node fail anyway and a clear message here is better. A "\u0000"
	 * elsewhere is valid JSON (JSON_ALLOW_NUL), and so is an integer
	 * beyond 64 bits (JSON_DECODE_INT_AS_REAL). Of repeated keys, jansson
	 * keeps the last, as JSON.parse does.
	 */
	k = sr_json_parse(json, len, JSON_ALLOW_NUL | JSON_DECODE_INT_AS_REAL,
			  PACKAGE_JSON_MAX_DEPTH, &root);
	if (k < 0)
		return k;
	if (!json_is_object(root))
		return -EINVAL;
	m = json_object_get(root, "main");
	if (!m)
		return -ENOENT;
	/* A NUL would cut the path short of what node is asked to load. */
	if (!json_is_string(m) || memchr(json_string_value(m), '\0', json_string_length(m)))
		return -EINVAL;
	s = strdup(json_string_value(m));
	if (!s)
		return -ENOMEM;
	*ret_main = s;
	return 0;
}
