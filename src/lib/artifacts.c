/* SPDX-License-Identifier: MIT */
#include "artifacts.h"
#include "archive.h"
#include "changes.h"
#include "hostpath.h"
#include "protocol.h"
#include "setup.h"
#include "units.h"
#include "util.h"

#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/timerfd.h>
#include <sys/wait.h>

/* An export moves whole trees (node_modules, dist/): bounded by the disk, not by a count. */
#define EXPORT_MAX_ENTRIES (10 * 1000 * 1000)
/* Past the time limit: PID 1's answer for a worker it killed, a taker's last words. */
#define SLACK_MS 1000

/* What a taker tells us: its log lines, then (level -1) how it went. */
struct report {
	int level;    /* enum sr_log_level; -1: the end */
	size_t count; /* changes: how many were written */
	struct sr_error err;
};

/* One artifact under way: a worker inside writes the stream, a taker of ours reads it. */
struct step {
	size_t index;  /* of c->exports; n_exports: the changes */
	uint32_t work; /* the WORK's id */
	bool worked;   /* its WORKED came (werr), or will not */
	pid_t taker;   /* 0 once reaped */
	int report;    /* the taker's socket, -1 once it said its end or hung up */
	bool told;     /* the taker said its end (terr, count); else terr says what befell it */
	int dirfd;     /* the destination directory */
	struct sr_made_dirs made; /* export: what of its directory was made for it */
	int out;		  /* changes: the file being written, renamed once all went well */
	char tmp[NAME_MAX + 16];
	struct sr_extract_opts opts; /* export */
	char limit_what[96];	     /* export: opts.limit_what */
	const char *name;	     /* export: the top's new name; changes: the file's */
	size_t count;
	struct sr_error werr, terr;
};

struct sr_artifacts {
	struct sr_sandbox *sb;
	const struct sr_config *c;
	const struct sr_sink *sink;
	int64_t t0_ns, deadline_ns;
	const char *trees[64]; /* where the agent could write or wrote: no link followed there */
	size_t next;	       /* the next to start: exports, then the changes */
	bool running;
	struct step cur;
	int timerfd; /* the time limit, and its slack */
	int failed;
	struct sr_error first;
};

bool sr_artifacts_wanted(const struct sr_config *c)
{
	return c->n_exports > 0 || c->changes_path;
}

/* rel made beneath m->parent, after what is there already. */
static int note_made(struct sr_made_dirs *m, int at, const char *name, bool made)
{
	size_t n;

	if (!m || (m->parent < 0 && !made))
		return 0;
	if (m->parent < 0) {
		m->parent = fcntl(at, F_DUPFD_CLOEXEC, 3);
		if (m->parent < 0)
			return -errno;
		m->rel[0] = '\0';
	}
	n = strlen(m->rel);
	if (snprintf(m->rel + n, sizeof(m->rel) - n, "%s%s", n ? "/" : "", name) >=
	    (int)(sizeof(m->rel) - n))
		return -ENAMETOOLONG;
	return 0;
}

/* Removes the directories m says were made, deepest first, each only while empty; closes m. */
static void unmake_dirs(struct sr_made_dirs *m)
{
	char *last;

	/*
	 * Deepest first, each through the directories made above it with no
	 * link followed (a --bind's tree is the agent's to change meanwhile),
	 * and only while empty: what another export put there stays.
	 */
	while (m->parent >= 0 && m->rel[0]) {
		_cleanup_close_ int at = -1;

		last = strrchr(m->rel, '/');
		if (last) {
			*last = '\0';
			at = sr_openat2(m->parent, m->rel, O_RDONLY | O_DIRECTORY,
					RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS |
					    RESOLVE_NO_MAGICLINKS);
			if (at < 0 || unlinkat(at, last + 1, AT_REMOVEDIR) < 0)
				break;
		} else {
			(void)unlinkat(m->parent, m->rel, AT_REMOVEDIR);
			break;
		}
	}
	sr_closep(&m->parent);
}

/*
 * A root caller's directory at, opened in a directory of another user's
 * (parent: its stat): given to that user if made, as sr_open_made()
 * would (ours and empty, as one just made is), else that user's already.
 * -ESTALE, -EPERM (another owner's) or -errno.
 */
static int made_in_users(int at, bool made, const struct stat *parent)
{
	struct stat st;
	int k;

	if (fstat(at, &st) < 0)
		return sr_negerrno();
	if (!made)
		return st.st_uid == parent->st_uid ? 0 : -EPERM;
	if (st.st_uid != geteuid() || (k = sr_dir_empty(at)) == 0)
		return -ESTALE;
	if (k < 0 || lseek(at, 0, SEEK_SET) < 0 || fchown(at, parent->st_uid, parent->st_gid) < 0)
		return k < 0 ? k : sr_negerrno();
	return 0;
}

int sr_artifacts_open_dir(const char *dir, const char *const *agent_trees, int *ret_fd,
			  struct sr_made_dirs *ret_made, struct sr_error *err)
{
	_cleanup_free_ char *prefix = strdup(dir), *resolved = NULL;
	_cleanup_close_ int fd = -1;
	const char *missing = NULL;
	struct stat st;
	bool made;
	char *cut;
	int k;

	if (!prefix)
		return sr_error_errno(err, -ENOMEM, "%s", dir);
	/* The longest part that exists; what follows is made, one component at a time. */
	for (;;) {
		k = sr_hostpath_resolve("export to", prefix, agent_trees, &resolved, err);
		if (k != -ENOENT)
			break;
		cut = strrchr(prefix, '/');
		if (!cut || sr_streq(prefix, "/"))
			return k;
		/* "/new": the existing part is "/" itself, and "new" is made. */
		cut[cut == prefix ? 1 : 0] = '\0';
		missing = dir + (cut - prefix) + 1;
		sr_error_clear(err);
	}
	if (k < 0)
		return k;
	fd = sr_openat2(AT_FDCWD, resolved, O_RDONLY | O_DIRECTORY,
			RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS);
	if (fd < 0)
		return sr_error_errno(err, fd, "export to %s", resolved);
	/* Before anything is made: a root caller writes there as its tree's owner. */
	k = sr_artifacts_held(fd, "export to", resolved, err);
	if (k < 0)
		return k;
	while (missing && *missing) {
		size_t l = strcspn(missing, "/");
		char name[NAME_MAX + 1];
		int next;

		if (l > NAME_MAX)
			return sr_error_errno(err, -ENAMETOOLONG, "export to %s", dir);
		memcpy(name, missing, l);
		name[l] = '\0';
		missing += l + strspn(missing + l, "/");
		if (!*name || sr_streq(name, "."))
			continue;
		made = mkdirat(fd, name, 0777) == 0;
		if (!made && errno != EEXIST)
			return sr_error_errno(err, sr_negerrno(), "export to %s: mkdir %s", dir,
					      name);
		k = note_made(ret_made, fd, name, made);
		if (k < 0)
			return sr_error_errno(err, k, "export to %s", dir);
		next = sr_openat2(fd, name, O_RDONLY | O_DIRECTORY,
				  RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS);
		if (next < 0)
			return sr_error_errno(err, next, "export to %s: %s", dir, name);
		/*
		 * A root caller's directory made in a user's is that user's, as
		 * what is exported into it will be (export_begin): not root's,
		 * which the user could neither write nor clean up. Not a
		 * directory of root's the user renamed to that name meanwhile,
		 * though: the one made, or one of that user's already.
		 */
		if (geteuid() == 0 && fstat(fd, &st) == 0 && st.st_uid != 0 &&
		    (k = made_in_users(next, made, &st)) < 0) {
			close(next);
			return sr_error_msg(err, k, "export to %s: %s: %s", dir, name,
					    k == -ESTALE
						? "replaced by something else as it was "
						  "made: not given to the directory's owner"
					    : k == -EPERM ? "a directory of another owner than its "
							    "directory's: not written into"
							  : strerror(-k));
		}
		close(fd);
		fd = next;
	}
	*ret_fd = steal_fd(&fd);
	return 0;
}

/*
 * dir (absolute) as sr_artifacts_open_dir will make it: its nearest
 * existing part a directory the caller may write in. what names the
 * artifact in the message.
 */
static int check_dir(const char *what, const char *dir, struct sr_error *err)
{
	_cleanup_free_ char *p = strdup(dir);
	struct stat st;
	char *cut;

	if (!p)
		return sr_error_errno(err, -ENOMEM, "%s", what);
	while (stat(p, &st) < 0) {
		if (errno != ENOENT || !(cut = strrchr(p, '/')) || sr_streq(p, "/"))
			return sr_error_errno(err, sr_negerrno(), "%s: %s", what, p);
		cut[cut == p ? 1 : 0] = '\0';
	}
	if (!S_ISDIR(st.st_mode))
		return sr_error_errno(err, -ENOTDIR, "%s: %s", what, p);
	if (faccessat(AT_FDCWD, p, W_OK | X_OK, AT_EACCESS) < 0)
		return sr_error_errno(err, sr_negerrno(), "%s: directory %s", what, p);
	return 0;
}

int sr_artifacts_check(const struct sr_config *c, struct sr_error *err)
{
	char what[PATH_MAX + 64];
	int k = 0;

	for (size_t i = 0; k >= 0 && i < c->n_exports; i++) {
		const struct sr_export *e = &c->exports[i];
		_cleanup_free_ char *dir = strdup(e->host);

		if (!dir)
			return sr_error_errno(err, -ENOMEM, "export");
		/* Without a trailing '/', HOSTDIR is the copy: it goes in HOSTDIR's parent. */
		if (!e->into) {
			char *slash = strrchr(dir, '/');

			slash[slash == dir ? 1 : 0] = '\0';
		}
		snprintf(what, sizeof(what), "export %s to %s", e->path, e->host);
		k = check_dir(what, dir, err);
	}
	if (k >= 0 && c->changes_path) {
		_cleanup_free_ char *dir = strdup(c->changes_path);
		char *slash = dir ? strrchr(dir, '/') : NULL;

		if (!dir)
			return sr_error_errno(err, -ENOMEM, "changes");
		slash[slash == dir ? 1 : 0] = '\0';
		snprintf(what, sizeof(what), "changes %s", c->changes_path);
		k = check_dir(what, dir, err);
	}
	return k;
}

/* Directories the agent could write (writable binds) or whose links its author made. */
static void agent_trees(struct sr_artifacts *a)
{
	size_t n = 0, cap = SR_ARRAY_SIZE(a->trees);

	if (sr_sandbox_workspace(a->sb) && n + 1 < cap)
		a->trees[n++] = sr_sandbox_workspace(a->sb);
	for (size_t i = 0; i < a->c->n_binds && n + 1 < cap; i++)
		if (a->c->binds[i].writable)
			a->trees[n++] = a->c->binds[i].src;
	a->trees[n] = NULL;
}

static size_t total(const struct sr_artifacts *a)
{
	return a->c->n_exports + (a->c->changes_path ? 1 : 0);
}

static bool is_changes(const struct sr_artifacts *a, const struct step *s)
{
	return s->index == a->c->n_exports;
}

/* The time left for the rest, in ms; 0 when there is none. */
static int64_t left_ms(const struct sr_artifacts *a)
{
	int64_t left = (a->deadline_ns - sr_monotonic_ns()) / 1000000;

	return left > 0 ? left : 0;
}

/* A taker's log lines reach the caller's sink through our socket. */
static void report_line(void *ctx, enum sr_log_level level, const char *text)
{
	struct report r = {.level = (int)level};

	snprintf(r.err.msg, sizeof(r.err.msg), "%s", text);
	(void)!send(*(int *)ctx, &r, sizeof(r), MSG_NOSIGNAL);
}

/*
 * The taker: reads the worker's stream on raw as the caller, into the
 * destination, then says how it went. A process of its own, so that the
 * caller's loop never waits for a worker's stream; it keeps nothing of
 * the caller's but what it writes to (a keeper's clients, the sandbox's
 * socket are not its to hold).
 */
static _Noreturn void take(struct sr_artifacts *a, struct step *s, int raw, int report)
{
	struct sr_sink sink = {
	    .level = a->sink ? a->sink->level : SR_LOG_ERROR, .write = report_line, .ctx = &report};
	struct report end = {.level = -1};
	int keep[] = {raw, s->dirfd, s->out, report};

	if (sr_close_fds_except(keep, SR_ARRAY_SIZE(keep)) < 0)
		sr_error_errno(&end.err, sr_negerrno(), "close fds");
	else if (is_changes(a, s))
		sr_changes_build(
		    raw,
		    &(struct sr_changes_origin){.workspace = sr_sandbox_workspace_dir(a->sb),
						.sandbox_id = sr_sandbox_id(a->sb),
						.t0_ns = a->t0_ns,
						.max_bytes = a->c->disk_bytes},
		    s->dirfd, s->out, &sink, &end.count, &end.err);
	else
		sr_archive_extract_opts(raw, s->dirfd, &s->opts, &end.err);
	(void)!send(report, &end, sizeof(end), MSG_NOSIGNAL);
	_exit(0);
}

/* Where an export goes: its directory open, its options; 0 or -errno (err). */
static int export_begin(struct sr_artifacts *a, struct step *s, struct sr_error *err)
{
	const struct sr_export *e = &a->c->exports[s->index];
	_cleanup_free_ char *dir = strdup(e->host);
	int k;

	if (!dir)
		return sr_error_errno(err, -ENOMEM, "export");
	/*
	 * The copy is HOSTDIR itself, or with a trailing '/', goes into it
	 * under its own name. A file onto an existing directory goes into
	 * it too (file_into_dir), as cp and docker cp put it: which it is,
	 * file or directory, is known only from the stream, and a report
	 * refused then would be lost with the sandbox.
	 */
	if (!e->into) {
		char *slash = strrchr(dir, '/');

		s->name = e->host + (slash - dir) + 1;
		slash[slash == dir ? 1 : 0] = '\0';
	}
	k = sr_artifacts_open_dir(dir, a->trees, &s->dirfd, &s->made, err);
	if (k < 0)
		return k;
	/*
	 * Links within the copy only, as cp's: HOSTDIR's parent is the
	 * caller's (a CI checkout, its .env, .git/config with a token), and
	 * "reports/leak -> ../.env" or a top "reports -> .env" would hand
	 * it to whatever reads the copy next (an artifact upload).
	 */
	s->opts = (struct sr_extract_opts){.max_entries = EXPORT_MAX_ENTRIES,
					   .rename_top = s->name,
					   .file_into_dir = true,
					   .links_within_top = true};
	/*
	 * At most the disk limit on the host, holes included, as cp's: a file
	 * that is all hole costs the agent nothing of its disk, and whatever
	 * reads the copy next (an artifact upload) would read it whole.
	 */
	if (a->c->disk_bytes) {
		char size[SR_UNITS_BUF_MAX];

		sr_format_size(a->c->disk_bytes, size, sizeof(size));
		snprintf(s->limit_what, sizeof(s->limit_what), "%s, the sandbox's disk limit",
			 size);
		s->opts.max_bytes = a->c->disk_bytes;
		s->opts.limit_what = s->limit_what;
	}
	/* A root caller's export into a user's directory is that user's, as a bind's is. */
	return sr_artifacts_owner(s->dirfd, "export to", dir, &s->opts, err);
}

/* Where the changes go: a temporary file beside FILE, renamed once all went well. */
static int changes_begin(struct sr_artifacts *a, struct step *s, struct sr_error *err)
{
	const char *path = a->c->changes_path;
	_cleanup_free_ char *dir = strdup(path);
	struct stat st;
	uint32_t rnd = 0;
	int k;

	if (!dir)
		return sr_error_errno(err, -ENOMEM, "changes");
	s->name = strrchr(path, '/') + 1;
	dir[s->name - 1 - path > 0 ? s->name - 1 - path : 1] = '\0';
	k = sr_artifacts_open_dir(dir, NULL, &s->dirfd, NULL, err);
	if (k < 0)
		return sr_error_prefix(err, "changes");
	(void)!getrandom(&rnd, sizeof(rnd), 0);
	snprintf(s->tmp, sizeof(s->tmp), ".%.200s.%08x", s->name, rnd);
	/*
	 * 0600, whatever the umask: the file holds the host's copy of every
	 * file changed or deleted (base/), whatever that file's own mode (a
	 * 0600 .env), and is often written to /tmp.
	 */
	s->out =
	    openat(s->dirfd, s->tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (s->out < 0) {
		s->tmp[0] = '\0';
		return sr_error_errno(err, sr_negerrno(), "changes %s", path);
	}
	/* A root caller's changes file in a user's directory is that user's, as an export is. */
	if (geteuid() == 0 && fstat(s->dirfd, &st) == 0 && st.st_uid != 0 &&
	    fchown(s->out, st.st_uid, st.st_gid) < 0)
		return sr_error_errno(err, sr_negerrno(), "changes %s: chown", path);
	return 0;
}

/*
 * Starts artifact s: its destination, a taker on one end of a pipe, a
 * worker on the other. 0 when under way, or -errno (err) when it failed
 * at once; nothing is left running then.
 */
static int step_start(struct sr_artifacts *a, struct step *s, struct sr_error *err)
{
	bool changes = is_changes(a, s);
	const char *path = changes ? NULL : a->c->exports[s->index].path;
	int64_t left = left_ms(a);
	int p[2], rep[2], k;

	if (left <= 0) {
		if (changes)
			return sr_error_msg(err, -ETIMEDOUT, "changes: no time left");
		return sr_error_msg(err, -ETIMEDOUT, "export %s: no time left (%d s for all)", path,
				    SR_ARTIFACTS_TIME_LIMIT_MS / 1000);
	}
	k = changes ? changes_begin(a, s, err) : export_begin(a, s, err);
	if (k < 0)
		return k;
	if (pipe2(p, O_CLOEXEC) < 0)
		return sr_error_errno(err, sr_negerrno(), "%s: pipe",
				      changes ? "changes" : "export");
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, rep) < 0) {
		k = sr_error_errno(err, sr_negerrno(), "%s: socketpair",
				   changes ? "changes" : "export");
		close(p[0]);
		close(p[1]);
		return k;
	}
	s->taker = fork();
	if (s->taker == 0) {
		close(p[1]);
		close(rep[0]);
		take(a, s, p[0], rep[1]);
	}
	close(p[0]);
	close(rep[1]);
	s->report = rep[0];
	if (s->taker < 0) {
		s->taker = 0;
		close(p[1]);
		return sr_error_errno(err, sr_negerrno(), "%s: fork",
				      changes ? "changes" : "export");
	}
	/* The worker's end: ours closed at once, so that it sees EPIPE when the taker stops. */
	k = sr_sandbox_work(a->sb, changes ? SR_WORK_CHANGES : SR_WORK_TAR_OUT, path, p[1], left,
			    &s->work);
	close(p[1]);
	if (k < 0) {
		kill(s->taker, SIGKILL);
		(void)SR_RETRY(waitpid(s->taker, NULL, 0));
		s->taker = 0;
		if (changes)
			return sr_error_errno(err, k, "changes");
		return sr_error_errno(err, k, "export %s", path);
	}
	return 0;
}

static void fail(struct sr_artifacts *a, struct sr_error *e, const char *origin)
{
	if (origin)
		sr_error_prefix(e, "%s", origin);
	sr_sink_log(a->sink, SR_LOG_ERROR, "%s", e->msg);
	if (a->failed++ == 0)
		a->first = *e;
}

/* Both sides of s are done: what it came to, said once (a failure to sink and in a->first). */
static void step_finish(struct sr_artifacts *a, struct step *s)
{
	struct sr_error e = {0};

	if (is_changes(a, s)) {
		const char *path = a->c->changes_path;

		if (s->werr.code) {
			e = s->werr;
			sr_error_prefix(&e, "changes");
		} else if (s->terr.code) {
			e = s->terr;
			if (!s->told)
				sr_error_prefix(&e, "changes");
		} else if (renameat(s->dirfd, s->tmp, s->dirfd, s->name) < 0) {
			sr_error_errno(&e, sr_negerrno(), "changes %s", path);
		} else {
			s->tmp[0] = '\0';
			sr_info(a->sink, "changes: %zu written to %s", s->count, path);
			return;
		}
		fail(a, &e, a->c->changes_origin);
		return;
	}
	const struct sr_export *x = &a->c->exports[s->index];

	if (s->werr.code == -ENOENT) {
		/* Nothing copied, nor made for it: no empty reports/ for a CI upload. */
		unmake_dirs(&s->made);
		sr_warn(a->sink,
			"export %s: no such file or directory in the sandbox: nothing copied",
			x->path);
		return;
	}
	if (s->werr.code) {
		e = s->werr;
		sr_error_prefix(&e, "export %s", x->path);
	} else if (s->terr.code) {
		e = s->terr;
		sr_error_prefix(&e, "export %s to %s", x->path, x->host);
	} else {
		sr_info(a->sink, "exported %s to %s%s", x->path, x->host, x->into ? "/" : "");
		return;
	}
	fail(a, &e, x->origin);
}

/* Whatever of s is still open or running: closed, killed and reaped. */
static void step_clear(struct step *s)
{
	if (s->taker > 0) {
		kill(s->taker, SIGKILL);
		(void)SR_RETRY(waitpid(s->taker, NULL, 0));
	}
	if (s->tmp[0] && s->dirfd >= 0)
		(void)unlinkat(s->dirfd, s->tmp, 0);
	sr_closep(&s->report);
	sr_closep(&s->out);
	sr_closep(&s->dirfd);
	sr_closep(&s->made.parent);
	*s = (struct step){.report = -1, .out = -1, .dirfd = -1, .made.parent = -1};
}

/* The next artifacts, until one is under way or none is left. */
static void advance(struct sr_artifacts *a)
{
	while (!a->running && a->next < total(a)) {
		struct step *s = &a->cur;
		struct sr_error e = {0};

		*s = (struct step){
		    .index = a->next++, .report = -1, .out = -1, .dirfd = -1, .made.parent = -1};
		if (step_start(a, s, &e) < 0) {
			fail(a, &e,
			     is_changes(a, s) ? a->c->changes_origin
					      : a->c->exports[s->index].origin);
			step_clear(s);
			continue;
		}
		a->running = true;
	}
}

/* The taker's lines and its end, as far as they have come; its exit reaped after its end. */
static void read_reports(struct sr_artifacts *a, struct step *s)
{
	struct report r;
	ssize_t n;
	int status;

	while (s->report >= 0) {
		n = recv(s->report, &r, sizeof(r), MSG_DONTWAIT);
		if (n < 0 && (errno == EAGAIN || errno == EINTR))
			return;
		if (n != (ssize_t)sizeof(r)) {
			sr_closep(&s->report); /* it hung up: exited, or killed */
			break;
		}
		r.err.msg[sizeof(r.err.msg) - 1] = '\0';
		if (r.level >= 0) {
			sr_sink_log(a->sink, r.level < _SR_LOG_LEVEL_MAX ? r.level : SR_LOG_DEBUG,
				    "%s", r.err.msg);
			continue;
		}
		s->terr = r.err;
		s->count = r.count;
		s->told = true;
		sr_closep(&s->report);
	}
	/* It said its end, or hung up: it has exited, or is exiting (a moment's wait). */
	if (s->taker <= 0)
		return;
	if (SR_RETRY(waitpid(s->taker, &status, 0)) != s->taker)
		status = 0;
	if (!s->told && WIFSIGNALED(status))
		sr_error_msg(&s->terr, -EIO, "killed by signal %d", WTERMSIG(status));
	else if (!s->told)
		sr_error_msg(&s->terr, -EIO, "ended without a word");
	s->taker = 0;
}

/* The time limit and its slack are over: a taker still at it is stopped, a worker given up. */
static void on_time_limit(struct sr_artifacts *a, struct step *s)
{
	uint64_t x;

	(void)!read(a->timerfd, &x, sizeof(x));
	if (!a->running)
		return;
	if (s->taker > 0 && !s->told) {
		kill(s->taker, SIGKILL);
		sr_error_msg(&s->terr, -ETIMEDOUT, "stopped at the time limit (%d s for all)",
			     SR_ARTIFACTS_TIME_LIMIT_MS / 1000);
		sr_closep(&s->report);
		(void)SR_RETRY(waitpid(s->taker, NULL, 0));
		s->taker = 0;
	}
	if (!s->worked) {
		sr_error_msg(&s->werr, -ETIMEDOUT, "no answer in time");
		s->worked = true;
	}
}

/* s done when both sides are: then said, cleared, and the next started. */
static void maybe_finish(struct sr_artifacts *a)
{
	struct step *s = &a->cur;

	if (!a->running)
		return;
	/* A sandbox gone answers no more (PID 1 killed: rm -f, the OOM killer). */
	if (!s->worked && sr_sandbox_ended(a->sb)) {
		sr_error_msg(&s->werr, -ESRCH, "the sandbox ended");
		s->worked = true;
	}
	if (!s->worked || s->taker > 0 || s->report >= 0)
		return;
	step_finish(a, s);
	step_clear(s);
	a->running = false;
	advance(a);
}

int sr_artifacts_start(struct sr_sandbox *sb, const struct sr_config *c, int64_t t0_ns,
		       const struct sr_sink *sink, struct sr_artifacts **ret, struct sr_error *err)
{
	struct sr_artifacts *a = calloc(1, sizeof(*a));
	int64_t limit = (int64_t)(SR_ARTIFACTS_TIME_LIMIT_MS + SLACK_MS) * 1000000;
	struct itimerspec its = {.it_value = {.tv_sec = (time_t)(limit / 1000000000),
					      .tv_nsec = (long)(limit % 1000000000)}};

	if (!a)
		return sr_error_errno(err, -ENOMEM, "artifacts");
	*a = (struct sr_artifacts){.sb = sb, .c = c, .sink = sink, .t0_ns = t0_ns};
	a->cur = (struct step){.report = -1, .out = -1, .dirfd = -1, .made.parent = -1};
	a->deadline_ns = sr_monotonic_ns() + (int64_t)SR_ARTIFACTS_TIME_LIMIT_MS * 1000000;
	a->timerfd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
	if (a->timerfd < 0 || timerfd_settime(a->timerfd, 0, &its, NULL) < 0) {
		int k = sr_error_errno(err, sr_negerrno(), "artifacts: timer");

		sr_artifacts_free(a);
		return k;
	}
	agent_trees(a);
	advance(a);
	*ret = a;
	return 0;
}

void sr_artifacts_poll_fds(const struct sr_artifacts *a, int fds[SR_ARTIFACTS_POLL_FDS])
{
	fds[0] = a->running ? a->cur.report : -1;
	fds[1] = a->running ? a->timerfd : -1;
}

void sr_artifacts_dispatch(struct sr_artifacts *a)
{
	struct pollfd p = {.fd = a->timerfd, .events = POLLIN};

	if (!a->running)
		return;
	read_reports(a, &a->cur);
	if (poll(&p, 1, 0) == 1)
		on_time_limit(a, &a->cur);
	maybe_finish(a);
}

bool sr_artifacts_worked(struct sr_artifacts *a, uint32_t id, const struct sr_error *err)
{
	if (!a || !a->running || a->cur.worked || a->cur.work != id)
		return false;
	a->cur.worked = true;
	a->cur.werr = *err;
	maybe_finish(a);
	return true;
}

bool sr_artifacts_done(const struct sr_artifacts *a)
{
	return !a->running && a->next >= total(a);
}

int sr_artifacts_failed(const struct sr_artifacts *a, struct sr_error *err)
{
	if (!sr_artifacts_done(a))
		return -1;
	if (a->failed)
		*err = a->first;
	return a->failed;
}

void sr_artifacts_free(struct sr_artifacts *a)
{
	if (!a)
		return;
	if (a->running)
		step_clear(&a->cur);
	sr_closep(&a->timerfd);
	free(a);
}
