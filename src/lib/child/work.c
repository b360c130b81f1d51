/* SPDX-License-Identifier: MIT */
#include "work.h"
#include "archive.h"
#include "files.h"
#include "protocol.h"
#include "stage.h"
#include "util.h"

#include <dirent.h>
#include <limits.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/xattr.h>

/* cp and snapshots move whole trees: node_modules has tens of thousands of files. */
#define WORK_MAX_ENTRIES (10 * 1000 * 1000)

/* path, without trailing slashes, as parent directory + last part; "/" and "" name nothing. */
static int split(const char *path, char *parent, size_t plen, char *base, size_t blen)
{
	char buf[PATH_MAX];
	size_t n;
	char *slash;

	if (snprintf(buf, sizeof(buf), "%s", path) >= (int)sizeof(buf))
		return -ENAMETOOLONG;
	n = strlen(buf);
	while (n > 1 && buf[n - 1] == '/')
		buf[--n] = '\0';
	slash = strrchr(buf, '/');
	snprintf(base, blen, "%s", slash ? slash + 1 : buf);
	if (!*base || sr_streq(base, ".") || sr_streq(base, ".."))
		return -EINVAL;
	if (!slash)
		snprintf(parent, plen, ".");
	else if (slash == buf)
		snprintf(parent, plen, "/");
	else
		snprintf(parent, plen, "%.*s", (int)(slash - buf), buf);
	return 0;
}

static int tar_out(const char *path, int fd, bool read_own, struct sr_error *err)
{
	char parent[PATH_MAX], base[NAME_MAX + 1];
	struct sr_archive_writer *w = NULL;
	_cleanup_close_ int dir = -1;
	struct stat st;
	int r = split(path, parent, sizeof(parent), base, sizeof(base));

	if (r < 0)
		return sr_error_msg(err, r, "%s: name a file or directory", path);
	dir = open(parent, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dir < 0 || fstatat(dir, base, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return sr_error_errno(err, sr_negerrno(), "%s", path);
	if ((r = sr_archive_writer_new(
		 fd, &(struct sr_write_opts){.hardlinks = true, .read_own = read_own}, &w, err)) <
		0 ||
	    (r = sr_archive_write_tree(w, dir, base, NULL, err)) < 0 ||
	    (r = sr_archive_writer_end(w, NULL, NULL, err)) < 0) {
		sr_archive_writer_free(w);
		return r;
	}
	sr_archive_writer_free(w);
	return 0;
}

static int tar_in(const struct sr_plan *p, const char *path, int fd, struct sr_error *err)
{
	char parent[PATH_MAX], base[NAME_MAX + 1];
	struct sr_extract_opts o = {.max_bytes = p->config->disk_bytes,
				    .max_entries = WORK_MAX_ENTRIES,
				    .links_within_top = true,
				    .keep_modes = true};
	_cleanup_close_ int dir = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	int r;

	/* Into an existing directory; else as path, in its parent. */
	if (dir < 0) {
		if (errno != ENOENT && errno != ENOTDIR)
			return sr_error_errno(err, sr_negerrno(), "%s", path);
		r = split(path, parent, sizeof(parent), base, sizeof(base));
		if (r < 0)
			return sr_error_msg(err, r, "%s: name a file or directory", path);
		dir = open(parent, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (dir < 0)
			return sr_error_errno(err, sr_negerrno(), "%s", parent);
		o.rename_top = base;
	}
	/* Whole or not at all: a copy cut short leaves nothing of it (stage.h). */
	return sr_stage_extract(fd, dir, path, &o, err);
}

/*
 * The sandbox's writable parts, each under its own name: what create
 * --from restores. Written straight into the host's file (snapshot.h), so
 * bounded here: no more file data than the sandbox's disk holds, however
 * often the agent makes the walk meet the same data (a directory renamed
 * ahead of it; hard links are stored once, as links); a restore with the
 * same limit could not take more anyway. The entries, which cost no data,
 * are bounded by as much again (archive.h).
 */
static int snapshot(const struct sr_plan *p, int fd, struct sr_error *err)
{
	static const struct {
		const char *path, *as;
	} parts[] = {{"/workspace", "workspace"}, {"/home/user", "home"}, {"/tmp", "tmp"}};
	struct sr_archive_writer *w = NULL;
	_cleanup_close_ int root = open("/", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	int r = root < 0 ? sr_error_errno(err, sr_negerrno(), "/") : 0;

	if (r >= 0)
		r = sr_archive_writer_new(fd,
					  &(struct sr_write_opts){
					      .compress = true,
					      .max_bytes = p->config->disk_bytes,
					      .limit_what = "the sandbox's disk limit",
					      .hardlinks = true,
					  },
					  &w, err);
	for (size_t i = 0; r >= 0 && i < SR_ARRAY_SIZE(parts); i++)
		r = sr_archive_write_tree(w, root, parts[i].path + 1, parts[i].as, err);
	if (r >= 0)
		r = sr_archive_writer_end(w, NULL, NULL, err);
	sr_archive_writer_free(w);
	return r;
}

/* How deep the upper layer is walked: a deeper tree is refused, not a stack overflow. */
#define CHANGES_MAX_DEPTH 256

/* A marker entry of the raw stream: "w/PATH" (whiteout) or "o/PATH" (opaque), empty. */
static int write_marker(struct sr_archive_writer *w, char kind, const char *rel,
			struct sr_error *err)
{
	char name[PATH_MAX + 3];
	struct sr_archive_entry e = {.path = name, .type = S_IFREG, .perm = 0600};

	if (snprintf(name, sizeof(name), "%c/%s", kind, rel) >= (int)sizeof(name))
		return sr_error_msg(err, -ENAMETOOLONG, "changes: %s: path too long", rel);
	return sr_archive_write_entry(w, &e, err);
}

/*
 * overlayfs marks a deletion with a whiteout, a character device 0/0 (or,
 * from another tool, an empty file with user.overlay.whiteout), and a
 * directory that replaced the one below with user.overlay.opaque "y"
 * (userxattr: the overlay is a user namespace's).
 */
static bool is_whiteout(int dir, const char *name, const struct stat *st)
{
	char path[64], v[8];
	_cleanup_close_ int fd = -1;

	if (S_ISCHR(st->st_mode) && st->st_rdev == makedev(0, 0))
		return true;
	if (!S_ISREG(st->st_mode) || st->st_size != 0)
		return false;
	fd = openat(dir, name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	return fd >= 0 && getxattr(path, "user.overlay.whiteout", v, sizeof(v)) >= 0;
}

static int changes_dir(struct sr_archive_writer *w, int dir, char *rel, size_t depth,
		       struct sr_error *err);

static int changes_node(struct sr_archive_writer *w, int dir, const char *name, char *rel,
			size_t depth, struct sr_error *err)
{
	char as[PATH_MAX + 3], v[8];
	struct stat st;
	int k;

	if (fstatat(dir, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return errno == ENOENT ? 0 : sr_error_errno(err, sr_negerrno(), "changes: %s", rel);
	if (is_whiteout(dir, name, &st))
		return write_marker(w, 'w', rel, err);
	snprintf(as, sizeof(as), "f/%s", rel);
	k = sr_archive_write_one(w, dir, name, as, err);
	if (k <= 0)
		return k;
	/* A directory: its opaque marker, then what it holds. */
	{
		_cleanup_close_ int fd =
		    openat(dir, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);

		if (fd < 0)
			return sr_error_errno(err, sr_negerrno(), "changes: %s", rel);
		if (fgetxattr(fd, "user.overlay.opaque", v, sizeof(v)) >= 0 && v[0] == 'y' &&
		    (k = write_marker(w, 'o', rel, err)) < 0)
			return k;
		if (depth >= CHANGES_MAX_DEPTH)
			return sr_error_msg(err, -ELOOP, "changes: %s: deeper than %d levels", rel,
					    CHANGES_MAX_DEPTH);
		return changes_dir(w, fd, rel, depth + 1, err);
	}
}

static int changes_dir(struct sr_archive_writer *w, int dir, char *rel, size_t depth,
		       struct sr_error *err)
{
	/* A new open file: a dup() would share (and move) the readdir position of the original. */
	int dup_fd = openat(dir, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	DIR *d = dup_fd >= 0 ? fdopendir(dup_fd) : NULL;
	size_t len = strlen(rel);
	struct dirent *de;
	int k = 0;

	if (!d) {
		sr_closep(&dup_fd);
		return sr_error_errno(err, sr_negerrno(), "changes: %s", len ? rel : ".");
	}
	while (k >= 0 && (errno = 0, de = readdir(d))) {
		if (sr_streq(de->d_name, ".") || sr_streq(de->d_name, ".."))
			continue;
		if (len + 2 + strlen(de->d_name) >= PATH_MAX) {
			k = sr_error_msg(err, -ENAMETOOLONG, "changes: %s/...: path too long", rel);
			break;
		}
		snprintf(rel + len, PATH_MAX - len, "%s%s", len ? "/" : "", de->d_name);
		k = changes_node(w, dir, de->d_name, rel, depth, err);
		rel[len] = '\0';
	}
	if (k >= 0 && !de && errno)
		k = sr_error_errno(err, sr_negerrno(), "changes");
	closedir(d);
	return k;
}

/*
 * The workspace's changes, raw (changes.h reads them): its overlay's upper
 * layer, which PID 1 kept; without an overlay (an archive's workspace, an
 * empty one) everything in /workspace is new.
 */
static int changes(const struct sr_plan *p, int fd, struct sr_error *err)
{
	struct sr_archive_writer *w = NULL;
	_cleanup_close_ int top =
	    p->sources.upper >= 0
		? openat(p->sources.upper, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC)
		: open("/workspace", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	char rel[PATH_MAX] = "";
	int r = top < 0 ? sr_error_errno(err, sr_negerrno(), "changes: the workspace") : 0;

	if (r >= 0)
		r = sr_archive_writer_new(fd, &(struct sr_write_opts){0}, &w, err);
	if (r >= 0)
		r = changes_dir(w, top, rel, 0, err);
	if (r >= 0)
		r = sr_archive_writer_end(w, NULL, NULL, err);
	sr_archive_writer_free(w);
	return r;
}

/*
 * A worker runs with the agent's rights: the fd limit of every process of
 * the sandbox's, half the caller's hard one (init-spawn.c: limit_files()
 * says why), not PID 1's whole.
 */
static int limit_files(void)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl) < 0)
		return sr_negerrno();
	rl.rlim_max /= 2;
	if (rl.rlim_cur > rl.rlim_max)
		rl.rlim_cur = rl.rlim_max;
	return setrlimit(RLIMIT_NOFILE, &rl) < 0 ? sr_negerrno() : 0;
}

static __attribute__((noreturn)) void worker(const struct sr_plan *p, int kind, const char *path,
					     int fd, int report)
{
	struct sr_error e = {0};
	int keep[] = {fd, report, kind == SR_WORK_CHANGES ? p->sources.upper : -1};
	int r;

	/*
	 * A session of its own: a kill(0, sig) of libarchive's reaches nobody
	 * of PID 1's group. Of PID 1's fds only these two stay: not its
	 * protocol socket, nor the FUSE connections of the /proc views it
	 * serves (viewfs.h), which a worker holding would keep alive.
	 */
	if (setsid() < 0)
		r = sr_error_errno(&e, sr_negerrno(), "worker: setsid");
	else if (sr_close_fds_except(keep, SR_ARRAY_SIZE(keep)) < 0)
		r = sr_error_errno(&e, sr_negerrno(), "worker: close fds");
	else if ((r = limit_files()) < 0)
		r = sr_error_errno(&e, r, "worker: RLIMIT_NOFILE");
	else if (kind == SR_WORK_TAR_OUT || kind == SR_WORK_TAR_OUT_OWN)
		r = tar_out(path, fd, kind == SR_WORK_TAR_OUT_OWN, &e);
	else if (kind == SR_WORK_TAR_IN)
		r = tar_in(p, path, fd, &e);
	else if (kind == SR_WORK_CHANGES)
		r = changes(p, fd, &e);
	else if (kind == SR_WORK_SNAPSHOT)
		r = snapshot(p, fd, &e);
	else
		r = sr_files_work(kind, path, fd, &e);
	if (r < 0)
		(void)!sr_write_all(report, &e, sizeof(e));
	_exit(r < 0 ? 1 : 0);
}

pid_t sr_work_start(const struct sr_plan *p, int kind, const char *path, int fd, int *ret_report,
		    struct sr_error *err)
{
	int pipefd[2];
	pid_t pid;

	if (kind != SR_WORK_SNAPSHOT && kind != SR_WORK_CHANGES && (!path || !*path))
		return sr_error_msg(err, -EINVAL, "no path");
	if (kind < SR_WORK_TAR_OUT || kind >= _SR_WORK_MAX || fd < 0)
		return sr_error_msg(err, -EINVAL, "a malformed request");
	if (pipe2(pipefd, O_CLOEXEC) < 0)
		return sr_error_errno(err, sr_negerrno(), "worker: pipe");
	/* A fork, not PID 1's vfork: the worker runs libarchive, which allocates. */
	pid = fork();
	if (pid < 0) {
		close(pipefd[0]);
		close(pipefd[1]);
		return sr_error_errno(err, sr_negerrno(), "worker: fork");
	}
	if (pid == 0) {
		close(pipefd[0]);
		worker(p, kind, path, fd, pipefd[1]);
	}
	close(pipefd[1]);
	/*
	 * PID 1 reads it once the worker is reaped: what the worker wrote is
	 * there whole, and nothing more will come. Not blocking, all the same:
	 * a process the worker forked (cp in's sweeper) holds the write end
	 * until it has closed its inherited fds, and the agent, whose uid it
	 * runs as, could stop it in that moment; PID 1 would wait for ever.
	 */
	(void)fcntl(pipefd[0], F_SETFL, O_NONBLOCK);
	*ret_report = pipefd[0];
	return pid;
}
