/* SPDX-License-Identifier: MIT */
#include "files.h"
#include "json.h"
#include "protocol.h"
#include "util.h"

#include <dirent.h>
#include <limits.h>
#include <sys/stat.h>

/* Nesting removed at most: each level holds a directory fd open. */
#define REMOVE_DEPTH_MAX 128
/*
 * A remove writes a byte on its stream every so many entries: serve tells
 * a long remove that goes on from a worker the agent stopped by it
 * (--idle-timeout), as it does a read's by its data.
 */
#define REMOVE_ALIVE_EVERY 256

struct removal {
	int alive; /* the stream */
	unsigned n;
};

static void removed_one(struct removal *rm)
{
	/*
	 * A reader gone (serve gave up, its client left) means the keeper is
	 * ending this worker: SIGPIPE only comes first.
	 */
	if (++rm->n % REMOVE_ALIVE_EVERY == 0)
		(void)!write(rm->alive, ".", 1);
}
/* What a file written from the API is made with (the agent's umask does not apply: it has none
 * here). */
#define FILE_MODE 0644
#define DIR_MODE  0755

/*
 * The path as the worker sees it, for entries' "path": absolute (from
 * /workspace if relative), without empty or "." parts; ".." is kept (the
 * kernel resolves it, in the sandbox's root).
 */
int sr_files_path(const char *path, char *buf, size_t len)
{
	const char *p = path;
	size_t n = 0;
	int w;

	if (path[0] != '/') {
		w = snprintf(buf, len, "/workspace");
		n = (size_t)w;
	}
	while (*p) {
		size_t part;

		while (*p == '/')
			p++;
		part = strcspn(p, "/");
		if (part == 0 || (part == 1 && p[0] == '.')) {
			p += part;
			continue;
		}
		if (n + 1 + part >= len)
			return -ENAMETOOLONG;
		buf[n++] = '/';
		memcpy(buf + n, p, part);
		n += part;
		p += part;
	}
	if (n == 0)
		buf[n++] = '/';
	buf[n] = '\0';
	return 0;
}

/* path's parent directories, each made where missing (mkdir -p of its dirname). */
static int make_parents(const char *path, bool and_self, struct sr_error *err)
{
	char buf[PATH_MAX];
	size_t n;

	if (sr_files_path(path, buf, sizeof(buf)) < 0)
		return sr_error_errno(err, -ENAMETOOLONG, "%s", path);
	n = strlen(buf);
	for (size_t i = 1; i <= n; i++) {
		if (buf[i] != '/' && buf[i] != '\0')
			continue;
		if (buf[i] == '\0' && !and_self)
			break;
		buf[i] = '\0';
		if (mkdir(buf, DIR_MODE) < 0 && errno != EEXIST)
			return sr_error_errno(err, sr_negerrno(), "%s", buf);
		if (i < n)
			buf[i] = '/';
	}
	return 0;
}

static int file_read(const char *path, int fd, struct sr_error *err)
{
	/* O_NONBLOCK: a FIFO the agent left at the name must not hold the worker. */
	_cleanup_close_ int f = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	char buf[65536];
	struct stat st;

	if (f < 0 || fstat(f, &st) < 0)
		return sr_error_errno(err, sr_negerrno(), "%s", path);
	if (S_ISDIR(st.st_mode))
		return sr_error_errno(err, -EISDIR, "%s", path);
	if (!S_ISREG(st.st_mode))
		return sr_error_msg(err, -EINVAL, "%s: not a regular file", path);
	fcntl(f, F_SETFL, 0);
	for (;;) {
		ssize_t n = SR_RETRY(read(f, buf, sizeof(buf)));

		if (n < 0)
			return sr_error_errno(err, sr_negerrno(), "%s", path);
		if (n == 0)
			return 0;
		if (sr_write_all(fd, buf, (size_t)n) < 0)
			return sr_error_errno(err, sr_negerrno(), "%s: write", path);
	}
}

static int file_write(const char *path, int fd, struct sr_error *err)
{
	_cleanup_close_ int f = -1;
	char buf[65536];
	struct stat st;
	int r = make_parents(path, false, err);

	if (r < 0)
		return r;
	f = open(path, O_WRONLY | O_CREAT | O_NONBLOCK | O_NOCTTY | O_CLOEXEC, FILE_MODE);
	if (f < 0 || fstat(f, &st) < 0)
		return sr_error_errno(err, sr_negerrno(), "%s", path);
	if (!S_ISREG(st.st_mode))
		return sr_error_msg(err, -EINVAL, "%s: not a regular file", path);
	if (fcntl(f, F_SETFL, 0) < 0 || ftruncate(f, 0) < 0)
		return sr_error_errno(err, sr_negerrno(), "%s", path);
	for (;;) {
		ssize_t n = SR_RETRY(read(fd, buf, sizeof(buf)));

		if (n < 0)
			return sr_error_errno(err, sr_negerrno(), "%s: read", path);
		if (n == 0)
			return 0;
		if (sr_write_all(f, buf, (size_t)n) < 0)
			return sr_error_errno(err, sr_negerrno(), "%s", path);
	}
}

static const char *type_name(mode_t m)
{
	if (S_ISREG(m))
		return "file";
	if (S_ISDIR(m))
		return "dir";
	if (S_ISLNK(m))
		return "symlink";
	return "other";
}

/*
 * One entry, as a line of JSON: dirfd/name is it (follow: what it leads
 * to, if it is a symbolic link), shown as path.
 */
static int write_entry(int fd, int dirfd, const char *name, const char *path, bool follow,
		       struct sr_error *err)
{
	_cleanup_free_ char *line = NULL;
	char target[PATH_MAX];
	struct stat st;
	json_t *j;
	int r;

	if (fstatat(dirfd, name, &st, follow ? 0 : AT_SYMLINK_NOFOLLOW) < 0) {
		/* Gone since readdir: not an entry any more. */
		if (errno == ENOENT)
			return 0;
		return sr_error_errno(err, sr_negerrno(), "%s", path);
	}
	j = json_pack("{sososssIsisIsIsI}", "name", sr_json_string(name), "path",
		      sr_json_string(path), "type", type_name(st.st_mode), "size",
		      (json_int_t)st.st_size, "mode", (int)(st.st_mode & 07777), "uid",
		      (json_int_t)st.st_uid, "gid", (json_int_t)st.st_gid, "mtime_ns",
		      (json_int_t)st.st_mtim.tv_sec * 1000000000 + st.st_mtim.tv_nsec);
	if (!j)
		return sr_error_errno(err, -ENOMEM, "%s", path);
	if (S_ISLNK(st.st_mode)) {
		ssize_t n = readlinkat(dirfd, name, target, sizeof(target) - 1);

		if (n >= 0) {
			target[n] = '\0';
			json_object_set_new(j, "target", sr_json_string(target));
		}
	}
	r = sr_json_dump_line(j, &line);
	json_decref(j);
	if (r < 0)
		return sr_error_errno(err, r, "%s", path);
	if (sr_write_all(fd, line, strlen(line)) < 0)
		return sr_error_errno(err, sr_negerrno(), "write");
	return 0;
}

/*
 * path itself (abs as shown), or with follow what it leads to, as stat(2)
 * follows symbolic links.
 */
static int stat_entry(const char *path, const char *abs, int fd, bool follow, struct sr_error *err)
{
	_cleanup_close_ int parent = -1;
	const char *slash = strrchr(abs, '/');
	char dir[PATH_MAX];

	if (strcmp(abs, "/") == 0)
		return write_entry(fd, AT_FDCWD, "/", "/", follow, err);
	snprintf(dir, sizeof(dir), "%.*s", slash == abs ? 1 : (int)(slash - abs), abs);
	parent = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (parent < 0 || faccessat(parent, slash + 1, F_OK, follow ? 0 : AT_SYMLINK_NOFOLLOW) < 0)
		return sr_error_errno(err, sr_negerrno(), "%s", path);
	return write_entry(fd, parent, slash + 1, abs, follow, err);
}

/*
 * What path leads to, as envd's os.Stat() for its MakeDir: its entry, or
 * the error of stat(2). Where the error is the link's own (path a
 * symbolic link to nothing, through a file, or one of too many), the
 * link's entry comes first, then the error, so that the caller can tell
 * a link that leads nowhere from nothing there.
 */
static int stat_follow(const char *path, const char *abs, int fd, struct sr_error *err)
{
	struct sr_error own = {0};
	struct stat st;
	int r = stat_entry(path, abs, fd, true, err);

	if ((r == -ENOENT || r == -ENOTDIR || r == -ELOOP) &&
	    fstatat(AT_FDCWD, abs, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISLNK(st.st_mode) &&
	    stat_entry(path, abs, fd, false, &own) < 0)
		return sr_error_errno(err, own.code, "%s", path);
	return r;
}

/* The directory's entries (not . and ..), or the path itself when it is not a directory. */
static int list(const char *path, int fd, struct sr_error *err)
{
	char abs[PATH_MAX], child[PATH_MAX];
	struct dirent *de;
	int dfd, r = sr_files_path(path, abs, sizeof(abs));
	DIR *d;

	if (r < 0)
		return sr_error_errno(err, r, "%s", path);
	dfd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0 && errno == ENOTDIR)
		return stat_entry(path, abs, fd, false, err);
	d = dfd >= 0 ? fdopendir(dfd) : NULL;
	if (!d) {
		r = sr_error_errno(err, sr_negerrno(), "%s", path);
		sr_closep(&dfd);
		return r;
	}
	while ((errno = 0, de = readdir(d))) {
		if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
			continue;
		if (snprintf(child, sizeof(child), "%s%s%s", abs, strcmp(abs, "/") ? "/" : "",
			     de->d_name) >= (int)sizeof(child))
			continue; /* a name no path can reach: not listed */
		r = write_entry(fd, dirfd(d), de->d_name, child, false, err);
		if (r < 0) {
			closedir(d);
			return r;
		}
	}
	r = errno ? sr_error_errno(err, sr_negerrno(), "%s", path) : 0;
	closedir(d);
	return r;
}

/* Everything beneath dirfd, not following a symbolic link anywhere. */
static int empty_dir(int dirfd, int depth, struct removal *rm)
{
	struct dirent *de;
	int r = 0, dup;
	DIR *d;

	if (depth > REMOVE_DEPTH_MAX)
		return -ELOOP;
	dup = fcntl(dirfd, F_DUPFD_CLOEXEC, 3);
	d = dup >= 0 ? fdopendir(dup) : NULL;
	if (!d) {
		r = sr_negerrno();
		sr_closep(&dup);
		return r;
	}
	while (r == 0 && (de = readdir(d))) {
		if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
			continue;
		if (unlinkat(dirfd, de->d_name, 0) == 0) {
			removed_one(rm);
			continue;
		}
		if (errno != EISDIR && errno != EPERM) {
			r = sr_negerrno();
			break;
		}
		int sub =
		    openat(dirfd, de->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);

		if (sub < 0) {
			r = sr_negerrno();
			break;
		}
		r = empty_dir(sub, depth + 1, rm);
		close(sub);
		if (r == 0 && unlinkat(dirfd, de->d_name, AT_REMOVEDIR) < 0)
			r = sr_negerrno();
		if (r == 0)
			removed_one(rm);
	}
	closedir(d);
	return r;
}

static int remove_path(const char *path, int fd, struct sr_error *err)
{
	struct removal rm = {.alive = fd};
	_cleanup_close_ int dirfd = -1;
	int r;

	if (unlink(path) == 0)
		return 0;
	if (errno != EISDIR && errno != EPERM)
		return sr_error_errno(err, sr_negerrno(), "%s", path);
	dirfd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (dirfd < 0)
		return sr_error_errno(err, sr_negerrno(), "%s", path);
	r = empty_dir(dirfd, 0, &rm);
	if (r < 0)
		return sr_error_errno(err, r, "%s", path);
	if (rmdir(path) < 0)
		return sr_error_errno(err, sr_negerrno(), "%s", path);
	return 0;
}

int sr_files_work(int kind, const char *path, int fd, struct sr_error *err)
{
	if (!path || !*path)
		return sr_error_msg(err, -EINVAL, "no path");
	switch (kind) {
	case SR_WORK_FILE_READ:
		return file_read(path, fd, err);
	case SR_WORK_FILE_WRITE:
		return file_write(path, fd, err);
	case SR_WORK_LIST:
		return list(path, fd, err);
	case SR_WORK_STAT:
	case SR_WORK_STAT_FOLLOW: {
		char abs[PATH_MAX];

		if (sr_files_path(path, abs, sizeof(abs)) < 0)
			return sr_error_errno(err, -ENAMETOOLONG, "%s", path);
		return kind == SR_WORK_STAT ? stat_entry(path, abs, fd, false, err)
					    : stat_follow(path, abs, fd, err);
	}
	case SR_WORK_REMOVE:
		return remove_path(path, fd, err);
	case SR_WORK_MKDIR:
		return make_parents(path, true, err);
	default:
		return sr_error_msg(err, -EINVAL, "a malformed request");
	}
}
