/* SPDX-License-Identifier: MIT */
#include "wscopy.h"
#include "util.h"

#include <dirent.h>
#include <sys/stat.h>

/* Deeper trees are refused: every level holds an fd and a frame. */
#define COPY_MAX_DEPTH 256

bool sr_wscopy_needed(int ws)
{
	struct stat st;

	/* Mapped ids are ours (the sandbox user's); any other shows as the overflow id. */
	return fstat(ws, &st) == 0 && (st.st_uid != geteuid() || st.st_gid != getegid());
}

struct copy {
	const char *what;
	char shown[256]; /* the entry being copied, for messages */
	struct sr_error *err;
};

static int copy_error(struct copy *c, int e)
{
	if (e == -ENOSPC || e == -EDQUOT)
		return sr_error_msg(
		    c->err, -ENOSPC,
		    "workspace %s: copying it onto the sandbox's disk (its owner or "
		    "group cannot be mapped) exceeds --disk at %s",
		    c->what, c->shown);
	return sr_error_errno(c->err, e, "workspace %s: copy %s", c->what, c->shown);
}

static int copy_file(struct copy *c, int src_dir, const char *name, int dst_dir,
		     const struct stat *st)
{
	_cleanup_close_ int in =
	    openat(src_dir, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	_cleanup_close_ int out = -1;
	struct timespec ts[2] = {st->st_atim, st->st_mtim};

	if (in < 0)
		return copy_error(c, sr_negerrno());
	out = openat(dst_dir, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (out < 0)
		return copy_error(c, sr_negerrno());
	for (;;) {
		ssize_t n = copy_file_range(in, NULL, out, NULL, 1 << 30, 0);

		if (n == 0)
			break;
		if (n < 0 && (errno == EXDEV || errno == EINVAL || errno == EOPNOTSUPP)) {
			char buf[65536];

			n = SR_RETRY(read(in, buf, sizeof(buf)));
			if (n > 0 && sr_write_all(out, buf, (size_t)n) < 0)
				return copy_error(c, sr_negerrno());
		}
		if (n < 0)
			return copy_error(c, sr_negerrno());
		if (n == 0)
			break;
	}
	/* No set-id bit: the copy is the sandbox user's, on a nosuid mount anyway. */
	if (fchmod(out, st->st_mode & 0777) < 0 || futimens(out, ts) < 0)
		return copy_error(c, sr_negerrno());
	return 0;
}

static int copy_dir(struct copy *c, int src, int dst, int depth);

static int copy_entry(struct copy *c, int src, const char *name, int dst, int depth)
{
	struct stat st;
	char target[4096];
	ssize_t n;
	int k;

	snprintf(c->shown, sizeof(c->shown), "%s", name);
	sr_printable(name, c->shown, sizeof(c->shown));
	if (fstatat(src, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return errno == ENOENT ? 0 : copy_error(c, sr_negerrno());
	if (S_ISREG(st.st_mode))
		return copy_file(c, src, name, dst, &st);
	if (S_ISLNK(st.st_mode)) {
		n = readlinkat(src, name, target, sizeof(target) - 1);
		if (n < 0)
			return copy_error(c, sr_negerrno());
		target[n] = '\0';
		return symlinkat(target, dst, name) < 0 ? copy_error(c, sr_negerrno()) : 0;
	}
	if (!S_ISDIR(st.st_mode))
		return 0; /* devices, FIFOs, sockets: not a workspace's */
	if (depth >= COPY_MAX_DEPTH)
		return sr_error_msg(c->err, -ELOOP, "workspace %s: deeper than %d levels", c->what,
				    COPY_MAX_DEPTH);
	if (mkdirat(dst, name, 0700) < 0)
		return copy_error(c, sr_negerrno());
	{
		_cleanup_close_ int s =
		    openat(src, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		_cleanup_close_ int d =
		    openat(dst, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		struct timespec ts[2] = {st.st_atim, st.st_mtim};

		if (s < 0 || d < 0)
			return copy_error(c, sr_negerrno());
		k = copy_dir(c, s, d, depth + 1);
		/* Its own mode and time last: a 0555 directory still took its files. */
		if (k >= 0 && (fchmod(d, (st.st_mode & 0777) | 0200) < 0 || futimens(d, ts) < 0))
			k = copy_error(c, sr_negerrno());
		return k;
	}
}

static int copy_dir(struct copy *c, int src, int dst, int depth)
{
	/* A new open file: a dup() would share (and move) the readdir position of the original. */
	int dup_fd = openat(src, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	DIR *d = dup_fd >= 0 ? fdopendir(dup_fd) : NULL;
	struct dirent *de;
	int k = 0;

	if (!d) {
		sr_closep(&dup_fd);
		return copy_error(c, sr_negerrno());
	}
	while (k >= 0 && (errno = 0, de = readdir(d))) {
		if (sr_streq(de->d_name, ".") || sr_streq(de->d_name, ".."))
			continue;
		k = copy_entry(c, src, de->d_name, dst, depth);
	}
	if (k >= 0 && !de && errno)
		k = copy_error(c, sr_negerrno());
	closedir(d);
	return k;
}

int sr_wscopy(int ws, int data, const char *name, const char *what, struct sr_error *err)
{
	struct copy c = {.what = what, .err = err};
	_cleanup_close_ int src = openat(ws, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	_cleanup_close_ int dst = -1;

	if (src < 0)
		return sr_error_errno(err, sr_negerrno(), "workspace %s", what);
	if (mkdirat(data, name, 0755) < 0)
		return sr_error_errno(err, sr_negerrno(), "workspace copy");
	dst = openat(data, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (dst < 0)
		return sr_error_errno(err, sr_negerrno(), "workspace copy");
	return copy_dir(&c, src, dst, 0);
}
