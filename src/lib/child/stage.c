/* SPDX-License-Identifier: MIT */
#include "stage.h"
#include "setup.h"
#include "util.h"

#include <dirent.h>
#include <limits.h>
#include <stdio.h>
#include <sys/prctl.h>
#include <sys/stat.h>

/*
 * How deep a copy is joined into directories that are there already:
 * each level holds two fds open. A new subtree moves whole (one rename),
 * however deep.
 */
#define JOIN_MAX_DEPTH 256

/* A directory's names ("." and ".." aside), read before any is moved out of it. */
struct names {
	char **v;
	size_t n;
};

static void names_free(struct names *l)
{
	for (size_t i = 0; i < l->n; i++)
		free(l->v[i]);
	free(l->v);
	*l = (struct names){0};
}

static int read_names(int dirfd, struct names *ret)
{
	/* A new open file: a dup() would share (and move) the readdir position of the original. */
	int fd = openat(dirfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
	struct names l = {0};
	size_t cap = 0;
	struct dirent *de;
	int r = 0;

	if (!d) {
		r = sr_negerrno();
		sr_closep(&fd);
		return r;
	}
	while (r == 0 && (errno = 0, de = readdir(d))) {
		if (sr_streq(de->d_name, ".") || sr_streq(de->d_name, ".."))
			continue;
		if (SR_GROW(l.v, cap, l.n + 1, 16) < 0) {
			r = -ENOMEM;
			break;
		}
		if (!(l.v[l.n] = strdup(de->d_name)))
			r = -ENOMEM;
		else
			l.n++;
	}
	if (r == 0 && errno)
		r = sr_negerrno();
	closedir(d);
	if (r < 0) {
		names_free(&l);
		return r;
	}
	*ret = l;
	return 0;
}

/* rel/name, for messages: the entry as the copy names it. */
static void shown(char *buf, size_t len, const char *rel, const char *name)
{
	char raw[PATH_MAX + NAME_MAX + 2];

	snprintf(raw, sizeof(raw), "%s%s%s", rel, *rel ? "/" : "", name);
	sr_printable(raw, buf, len);
}

/* Whether what was extracted as `from` may take the place of `to`, which is there. */
static int fits_in(const struct stat *from, const struct stat *to, const char *rel,
		   const char *name, struct sr_error *err)
{
	char s[256];

	if (S_ISDIR(from->st_mode) == S_ISDIR(to->st_mode))
		return 0;
	shown(s, sizeof(s), rel, name);
	if (S_ISDIR(from->st_mode))
		return sr_error_msg(err, -ENOTDIR, "extract %s: exists and is not a directory", s);
	return sr_error_msg(err, -EISDIR, "extract %s: would replace a directory", s);
}

static int open_sub(int dirfd, const char *name)
{
	int fd = openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);

	return fd < 0 ? sr_negerrno() : fd;
}

/*
 * Whether name in from and in to lie on one mount, as a rename needs
 * (sr_same_mount), by device where statx cannot say.
 */
static bool same_mount(int from, int to, const char *name, const struct stat *fs,
		       const struct stat *ts)
{
	struct statx a, b;

	if (statx(from, name, AT_SYMLINK_NOFOLLOW, STATX_MNT_ID, &a) == 0 &&
	    statx(to, name, AT_SYMLINK_NOFOLLOW, STATX_MNT_ID, &b) == 0)
		return sr_same_mount(&a, &b);
	return fs->st_dev == ts->st_dev;
}

/*
 * name from `from` to `to`, where nothing has it: RENAME_NOREPLACE, or
 * where the file system has no such flag (EINVAL: a --bind of some), a
 * look first.
 */
static int move_new(int from, int to, const char *name)
{
	struct stat st;

	if (renameat2(from, name, to, name, RENAME_NOREPLACE) == 0)
		return 0;
	if (errno != EINVAL)
		return -1;
	if (fstatat(to, name, &st, AT_SYMLINK_NOFOLLOW) == 0) {
		errno = EEXIST;
		return -1;
	}
	return errno == ENOENT ? renameat(from, name, to, name) : -1;
}

/* A name of one level, in the copy (from) and in place (to). */
struct entry {
	const char *name;
	char shown[256]; /* rel/name, for messages */
	struct stat from, to;
};

static int join(int from, int to, char *rel, size_t depth, bool move, struct sr_error *err);

/* A file (or link) of the copy over one in place (fits_in()). */
static int join_file(int from, int to, const struct entry *e, bool move, struct sr_error *err)
{
	/*
	 * A file (or link) over a mount point (a --bind of one file): a
	 * rename cannot replace it (EBUSY), and writing it in place could
	 * not be undone: refused before anything moves.
	 */
	if (!same_mount(from, to, e->name, &e->from, &e->to))
		return sr_error_msg(err, -EBUSY,
				    "extract %s: a mount point (a --bind of a file): it cannot "
				    "be replaced; write the file it binds, or copy beside it",
				    e->shown);
	/* A file (or link) over one: the name is never without either. */
	if (move && renameat(from, e->name, to, e->name) < 0)
		return sr_error_errno(err, sr_negerrno(), "extract %s", e->shown);
	return 0;
}

/* A directory of the copy over one in place, joined as the next level (join()). */
static int join_dirs(int from, int to, char *rel, const struct entry *e, size_t depth, bool move,
		     struct sr_error *err)
{
	_cleanup_close_ int sub_from = -1, sub_to = -1;
	size_t len = strlen(rel);
	int r;

	/*
	 * Both directories: this one's entries joined into that one (cp
	 * -r). Not across a mount point (a --bind inside): a rename cannot
	 * cross it, and nothing may be half moved.
	 */
	if (!same_mount(from, to, e->name, &e->from, &e->to))
		return sr_error_msg(err, -EXDEV,
				    "extract %s: a mount point: copy into it (ID:PATH naming "
				    "it), not over it",
				    e->shown);
	if (depth >= JOIN_MAX_DEPTH)
		return sr_error_msg(err, -ELOOP,
				    "extract %s: deeper than %d directories there already",
				    e->shown, JOIN_MAX_DEPTH);
	if ((sub_from = open_sub(from, e->name)) < 0 || (sub_to = open_sub(to, e->name)) < 0)
		return sr_error_errno(err, sub_from < 0 ? sub_from : sub_to, "extract %s",
				      e->shown);
	/*
	 * The archive's mode, as extracting into it gave it (archive.c:
	 * make_dir()). Looking first, its own mode: on the workspace's
	 * overlay that copies the directory up, which takes an inode and
	 * a block of the sandbox's disk -- an ENOSPC that would otherwise
	 * come in the middle of the moves, after some had been made --
	 * and it finds a directory whose mode cannot be set (not the
	 * agent's) before anything moves.
	 */
	if (fchmod(sub_to, (move ? e->from.st_mode : e->to.st_mode) & 07777) < 0)
		return sr_error_errno(err, sr_negerrno(), move ? "extract %s: chmod" : "extract %s",
				      e->shown);
	if (len + 1 + strlen(e->name) >= PATH_MAX)
		return sr_error_msg(err, -ENAMETOOLONG, "extract %s: path too long", e->shown);
	snprintf(rel + len, PATH_MAX - len, "%s%s", len ? "/" : "", e->name);
	r = join(sub_from, sub_to, rel, depth + 1, move, err);
	rel[len] = '\0';
	return r;
}

/* One name of the level at rel: whether it fits, or moved in (join()). */
static int join_entry(int from, int to, char *rel, const char *name, size_t depth, bool move,
		      struct sr_error *err)
{
	struct entry e = {.name = name};
	int r;

	shown(e.shown, sizeof(e.shown), rel, name);
	if (fstatat(from, name, &e.from, AT_SYMLINK_NOFOLLOW) < 0)
		return sr_error_errno(err, sr_negerrno(), "extract %s", e.shown);
	/* A new name: moved whole, unless something took the name meanwhile. */
	if (move && move_new(from, to, name) == 0)
		return 0;
	if (move && errno != EEXIST)
		return sr_error_errno(err, sr_negerrno(), "extract %s", e.shown);
	if (fstatat(to, name, &e.to, AT_SYMLINK_NOFOLLOW) < 0) {
		if (errno == ENOENT && !move)
			return 0;
		return sr_error_errno(err, sr_negerrno(), "extract %s", e.shown);
	}
	if ((r = fits_in(&e.from, &e.to, rel, name, err)) < 0)
		return r;
	if (!S_ISDIR(e.from.st_mode))
		return join_file(from, to, &e, move, err);
	return join_dirs(from, to, rel, &e, depth, move, err);
}

/*
 * One level of the copy (from) over what is in place (to): with move
 * false, only whether it fits; with move true, moved in. rel: the level's
 * path, for messages (PATH_MAX).
 */
static int join(int from, int to, char *rel, size_t depth, bool move, struct sr_error *err)
{
	struct names l = {0};
	int r = read_names(from, &l);

	if (r < 0)
		return sr_error_errno(err, r, "extract %s", *rel ? rel : ".");
	for (size_t i = 0; r >= 0 && i < l.n; i++)
		r = join_entry(from, to, rel, l.v[i], depth, move, err);
	names_free(&l);
	return r;
}

/*
 * Removes name beneath dir once the worker is gone (the write end of
 * `gone`, which only the worker holds, closes with it), whatever ended
 * it: a worker that finished has removed it already. Its own process
 * group: PID 1 kills a cancelled worker's (init.c: on_cancel()).
 */
static pid_t start_sweeper(int dir, const char *name, int *ret_gone)
{
	int p[2];
	pid_t pid;

	if (pipe2(p, O_CLOEXEC) < 0)
		return sr_negerrno();
	pid = fork();
	if (pid < 0) {
		close(p[0]);
		close(p[1]);
		return sr_negerrno();
	}
	if (pid == 0) {
		int keep[] = {dir, p[0]};
		char c;

		(void)setpgid(0, 0);
		/* Not "sandbox-run": it is no worker, and the agent (and ps) may tell them apart.
		 */
		(void)prctl(PR_SET_NAME, "sr-cp-sweeper");
		close(p[1]);
		(void)sr_close_fds_except(keep, SR_ARRAY_SIZE(keep));
		while (read(p[0], &c, 1) < 0 && errno == EINTR)
			;
		sr_archive_remove_tree(dir, name);
		_exit(0);
	}
	/* Both sides set it: whichever runs first, it is set before anything is staged. */
	(void)setpgid(pid, pid);
	close(p[0]);
	*ret_gone = p[1];
	return pid;
}

int sr_stage_extract(int archive_fd, int dir, const char *dest, const struct sr_extract_opts *o,
		     struct sr_error *err)
{
	_cleanup_close_ int stage = -1, gone = -1;
	char name[SR_ARCHIVE_TEMP_NAME_MAX], rel[PATH_MAX] = "";
	pid_t sweeper;
	int r = sr_archive_temp_name(name, sizeof(name));

	if (r < 0)
		return sr_error_errno(err, r, "extract: a temporary name");
	/* The sweeper first: the worker killed at any point after, it removes what was made. */
	sweeper = start_sweeper(dir, name, &gone);
	if (sweeper < 0)
		return sr_error_errno(err, sweeper, "extract: fork");
	if (mkdirat(dir, name, 0700) < 0)
		r = sr_error_errno(err, sr_negerrno(), "%s", dest);
	else if ((stage = open_sub(dir, name)) < 0)
		r = sr_error_errno(err, stage, "%s", dest);
	if (r >= 0)
		r = sr_archive_extract_opts(archive_fd, stage, o, err);
	/* Whole: it fits what is in place, then it goes there. */
	if (r >= 0)
		r = join(stage, dir, rel, 0, false, err);
	if (r >= 0)
		r = join(stage, dir, rel, 0, true, err);
	sr_archive_remove_tree(dir, name);
	/* The sweeper finds nothing then, and ends (PID 1 reaps it, ours gone). */
	return r;
}
