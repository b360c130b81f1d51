/* SPDX-License-Identifier: MIT */
/*
 * The host side of `sandbox-run cp` (copy.h): the host path resolved, the
 * stream's pipe handed to the keeper, libarchive on this end, the
 * keeper's answer.
 *
 * cp's host paths often lie where someone else writes: a --bind the
 * agent fills (`ln -s ~/.ssh /mnt/shared/results`, then `cp
 * u1:authorized_keys ~/shared/results` replaced ~/.ssh/authorized_keys:
 * the outside review of cp, finding A), the workspace's directory, or
 * for a root caller another user's directory. So they are resolved as a
 * --bind source is (hostpath.h): a link on the way is followed only where
 * root owns it and its directory, outside the sandbox's own files; the
 * directory reached is opened with no link allowed; its last part, the
 * copy's name, is never followed at all. A root caller's copy out is
 * then written as its export would be (artifacts.h): as the owner of the
 * directory it goes into, and only where the directories above could
 * not have had another user's swapped in under the name given (the
 * outside review: root's files landed in a directory of daemon's that
 * a user renamed into their 0777 one).
 */
#include "copy.h"
#include "archive.h"
#include "artifacts.h"
#include "as-owner.h"
#include "control.h"
#include "hostpath.h"
#include "units.h"
#include "util.h"

#include <limits.h>
#include <linux/openat2.h>
#include <poll.h>
#include <stdio.h>
#include <sys/stat.h>

/* cp moves whole trees (node_modules): bounded by the disks on either side, not by a count. */
#define CP_MAX_ENTRIES (10 * 1000 * 1000)

#define NO_LINKS (RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS)

/* The last part of path, trailing slashes ignored: what its copy is named ("" for "/"). */
static char *last_part(const char *path)
{
	size_t n = strlen(path);
	const char *p;

	while (n > 1 && path[n - 1] == '/')
		n--;
	p = path + n;
	while (p > path && p[-1] != '/')
		p--;
	return strndup(p, (size_t)(path + n - p));
}

static bool names_a_dir(const char *name)
{
	return !*name || sr_streq(name, "/") || sr_streq(name, ".") || sr_streq(name, "..");
}

/*
 * The directory holding path's last part, resolved (hostpath.h) and
 * opened with no link allowed, and that last part, not looked at; or,
 * where path names a directory itself ("/", "dir/.", ".."), that
 * directory and NULL.
 */
static int host_parent(const char *path, const char *const *trees, int *ret_dirfd, char **ret_name,
		       struct sr_error *err)
{
	_cleanup_free_ char *abs = NULL, *name = NULL, *resolved = NULL;
	int fd, r;

	if (!*path)
		return sr_error_msg(err, -EINVAL,
				    "cp: an empty host path: name a file or directory");
	abs = sr_hostpath_absolute(path);
	if (!abs)
		return sr_error_errno(err, errno ? sr_negerrno() : -ENOMEM, "cp: %s", path);
	name = last_part(abs);
	if (!name)
		return sr_error_errno(err, -ENOMEM, "cp");
	if (names_a_dir(name)) {
		free(steal_pointer(&name));
	} else {
		/* abs without its last part: "/a//b/" is "/a", "/b" is "/". */
		char *end = abs + strlen(abs);

		while (end > abs && end[-1] == '/')
			end--;
		end -= strlen(name);
		while (end > abs + 1 && end[-1] == '/')
			end--;
		*end = '\0';
	}
	r = sr_hostpath_resolve("cp:", abs, trees, &resolved, err);
	if (r < 0)
		return r;
	fd = sr_openat2(AT_FDCWD, resolved, O_RDONLY | O_DIRECTORY, NO_LINKS);
	if (fd < 0)
		return sr_error_errno(err, fd, "cp: %s", resolved);
	*ret_dirfd = fd;
	*ret_name = steal_pointer(&name);
	return 0;
}

/*
 * A symbolic link where the copy would be named: whoever made it (an
 * agent in its --bind), cp neither writes through it nor removes it.
 */
static int refuse_link(const char *shown_path, int dirfd, const char *name, struct sr_error *err)
{
	char target[PATH_MAX], shown[256];
	ssize_t n = readlinkat(dirfd, name, target, sizeof(target) - 1);

	target[n > 0 ? n : 0] = '\0';
	sr_printable(target, shown, sizeof(shown));
	return sr_error_msg(err, -ELOOP,
			    "cp: %s is a symbolic link (to %s), which cp neither follows nor "
			    "replaces: name the path you mean, or remove the link",
			    shown_path, shown);
}

/* Where the copy of the sandbox's path goes. */
struct dest {
	int dirfd;   /* the directory it goes into */
	char *name;  /* its name there */
	char *shown; /* its path, for messages */
	bool is_dir; /* a directory is there already: the copy goes into it (cp -r) */
	bool exists; /* something else is: the copy replaces it */
};

static void dest_free(struct dest *d)
{
	sr_closep(&d->dirfd);
	free(d->name);
	free(d->shown);
}

/*
 * DST an existing directory: the copy goes inside it, under its own name
 * (top); otherwise it is DST, replacing a file there. A link at the
 * copy's name is refused.
 */
static int host_dest(const char *dst, const char *top, const char *const *trees, struct dest *d,
		     struct sr_error *err)
{
	struct stat st;
	int r = host_parent(dst, trees, &d->dirfd, &d->name, err);

	if (r < 0)
		return r;
	if (d->name && fstatat(d->dirfd, d->name, &st, AT_SYMLINK_NOFOLLOW) == 0) {
		if (S_ISLNK(st.st_mode))
			return refuse_link(dst, d->dirfd, d->name, err);
		if (S_ISDIR(st.st_mode)) {
			int fd = sr_openat2(d->dirfd, d->name, O_RDONLY | O_DIRECTORY,
					    NO_LINKS | RESOLVE_BENEATH);

			if (fd < 0)
				return sr_error_errno(err, fd, "cp: %s", dst);
			sr_closep(&d->dirfd);
			d->dirfd = fd;
			free(steal_pointer(&d->name));
		}
	} else if (d->name && errno != ENOENT) {
		return sr_error_errno(err, sr_negerrno(), "cp: %s", dst);
	}
	if (d->name) {
		d->shown = strdup(dst);
	} else {
		d->name = strdup(top);
		if (asprintf(&d->shown, "%s%s%s", dst, dst[strlen(dst) - 1] == '/' ? "" : "/",
			     top) < 0)
			d->shown = NULL;
	}
	if (!d->name || !d->shown)
		return sr_error_errno(err, -ENOMEM, "cp");
	if (fstatat(d->dirfd, d->name, &st, AT_SYMLINK_NOFOLLOW) == 0) {
		if (S_ISLNK(st.st_mode))
			return refuse_link(d->shown, d->dirfd, d->name, err);
		d->is_dir = S_ISDIR(st.st_mode);
		d->exists = !d->is_dir;
	}
	/*
	 * Asked before the sandbox sends anything: a directory we cannot
	 * write in failed at the stream's first entry, named as the sandbox
	 * named it ("extract f.txt: Permission denied"), not as the user did.
	 */
	if (faccessat(d->dirfd, d->is_dir ? d->name : ".", W_OK | X_OK, AT_EACCESS) < 0)
		return sr_error_errno(err, sr_negerrno(), "cp: %s", d->shown);
	return 0;
}

/*
 * The whole copy, made under tmp, takes its name: a file there is
 * replaced, nothing else. (outcome() puts "cp: " before the error.)
 */
static int put_in_place(const struct dest *d, const char *tmp, struct sr_error *err)
{
	if (renameat2(d->dirfd, tmp, d->dirfd, d->name, d->exists ? 0 : RENAME_NOREPLACE) == 0)
		return 0;
	if (errno == ENOTDIR || errno == EISDIR)
		return sr_error_msg(err, -errno, "%s: exists and is not a %s", d->shown,
				    errno == ENOTDIR ? "directory" : "file");
	if (errno == EEXIST)
		return sr_error_msg(err, -EEXIST, "%s: made meanwhile; the copy is not put there",
				    d->shown);
	return sr_error_errno(err, sr_negerrno(), "%s", d->shown);
}

/*
 * The keeper's answer: how the worker in the sandbox did. Waited for at
 * most idle_ms (0: as long as it takes) once the stream is over: a
 * worker the agent stopped before its end never answers.
 */
static int keeper_answer(int ctl, int idle_ms, int cancel_fd, struct sr_error *err)
{
	struct pollfd p[2] = {{.fd = ctl, .events = POLLIN}, {.fd = cancel_fd, .events = POLLIN}};
	json_t *reply = NULL;
	int r;

	do
		r = poll(p, cancel_fd > 0 ? 2 : 1, idle_ms > 0 ? idle_ms : -1);
	while (r < 0 && errno == EINTR);
	if (r == 0)
		return sr_error_msg(err, -ETIMEDOUT, "cp: the sandbox's worker did not finish");
	if (cancel_fd > 0 && p[1].revents)
		return sr_error_msg(err, -ECANCELED, "cp: interrupted");
	r = sr_ctl_recv_nofds(ctl, &reply);
	if (r <= 0)
		return sr_error_msg(err, -ECONNRESET, "cp: the sandbox's keeper hung up");
	r = sr_ctl_reply_error(reply, err);
	json_decref(reply);
	return r < 0 ? sr_error_prefix(err, "cp") : 0;
}

/* A WORK request with our end of the stream's pipe kept in *ret_fd: out, we read it; in, we write.
 */
static int request(int ctl, const char *op, const char *path, bool we_read, int *ret_fd,
		   struct sr_error *err)
{
	json_t *req;
	int p[2], r;

	if (pipe2(p, O_CLOEXEC) < 0)
		return sr_error_errno(err, sr_negerrno(), "cp: pipe");
	req = json_pack("{ssso}", "op", op, "path", sr_json_string(path));
	r = req ? sr_ctl_send(ctl, req, &p[we_read ? 1 : 0], 1) : -ENOMEM;
	json_decref(req);
	close(p[we_read ? 1 : 0]);
	if (r < 0) {
		close(p[we_read ? 0 : 1]);
		return sr_error_errno(err, r, "cp: talk to the sandbox's keeper");
	}
	*ret_fd = p[we_read ? 0 : 1];
	return 0;
}

/*
 * How a copy went, from our side's result (k, xerr) and the worker's
 * answer (r, kerr). Where ours is the stream failing (cut short, or no
 * longer read: -EIO, -EINVAL), the worker's answer says why; any other
 * failure of ours (a refusal, the bound, the host's disk, a timeout) is
 * the reason, and the worker's answer only the broken pipe after it.
 */
static int outcome(const struct sr_copy_opts *opts, bool out, int k, struct sr_error *xerr, int r,
		   const struct sr_error *kerr, struct sr_error *err)
{
	bool theirs = r < 0 && (k >= 0 || k == -EIO || k == -EINVAL);
	char d[SR_UNITS_BUF_MAX];

	sr_format_duration((uint64_t)opts->idle_ms, d, sizeof(d));
	if (k == -ETIMEDOUT)
		return sr_error_msg(
		    err, k,
		    "cp: %s for %s: its worker is stopped or gone; gave up "
		    "(--idle-timeout sets how long cp waits)",
		    out ? "nothing came from the sandbox" : "the sandbox took nothing", d);
	if (theirs && r == -ETIMEDOUT)
		return sr_error_msg(
		    err, r,
		    "cp: the sandbox's worker did not finish within %s of the stream's "
		    "end: it is stopped or gone; gave up (--idle-timeout sets how long "
		    "cp waits)",
		    d);
	if (theirs) {
		*err = *kerr;
		return r;
	}
	if (k < 0) {
		*err = *xerr;
		return sr_error_prefix(err, "cp");
	}
	return 0;
}

/*
 * Whether the copy can be made in d's directory, tried with its own
 * temporary name: access(2) says yes where creating anything fails
 * (/proc, /sys, for root), and the extraction's first entry would then
 * be named as the archive names it ("extract f.txt: No such file or
 * directory"), not as the user named the destination.
 */
static int try_dest(const struct dest *d, const char *tmp, struct sr_error *err)
{
	if (mkdirat(d->dirfd, tmp, 0700) < 0)
		return sr_error_errno(err, sr_negerrno(), "cp: %s", d->shown);
	(void)unlinkat(d->dirfd, tmp, AT_REMOVEDIR);
	return 0;
}

int sr_copy_out(int ctl, const char *path, const char *dst, const struct sr_copy_opts *opts,
		struct sr_error *err)
{
	_cleanup_(dest_free) struct dest d = {.dirfd = -1};
	_cleanup_close_ int fd = -1;
	_cleanup_free_ char *top = last_part(path);
	struct sr_extract_opts o = {.max_entries = CP_MAX_ENTRIES,
				    .links_within_top = true,
				    .bound_entries = true,
				    .max_bytes = opts->max_bytes,
				    .limit_what = opts->limit_what,
				    .idle_ms = opts->idle_ms,
				    .cancel_fd = opts->cancel_fd};
	struct sr_error xerr = {0}, kerr = {0};
	char tmp[SR_ARCHIVE_TEMP_NAME_MAX];
	int r, k;

	if (!top)
		return sr_error_errno(err, -ENOMEM, "cp");
	/* The worker refuses these too; refused before anything is asked of it. */
	if (names_a_dir(top))
		return sr_error_msg(err, -EINVAL, "cp: %s: name a file or directory", path);
	r = host_dest(dst, top, opts->agent_trees, &d, err);
	/*
	 * A root caller's copy is written as an export is, as its directory's
	 * owner, and only where nobody else could have swapped in another
	 * user's directory under the name given (artifacts.h).
	 */
	if (r >= 0)
		r = sr_artifacts_held(d.dirfd, "cp to", dst, err);
	if (r >= 0)
		r = sr_artifacts_owner(d.dirfd, "cp to", dst, &o, err);
	if (r >= 0 && !d.is_dir && (r = sr_archive_temp_name(tmp, sizeof(tmp))) < 0)
		sr_error_errno(err, r, "cp: a temporary name");
	if (r >= 0 && !d.is_dir)
		r = try_dest(&d, tmp, err);
	if (r >= 0)
		r = request(ctl, "cp_out", path, true, &fd, err);
	if (r < 0)
		return r;
	/* Into an existing directory of that name, as cp -r: file by file. */
	o.rename_top = d.is_dir ? d.name : tmp;
	k = sr_archive_extract_opts(fd, d.dirfd, &o, &xerr);
	/* Closed before the answer: a worker still writing (we stopped) gets EPIPE and ends. */
	sr_closep(&fd);
	/*
	 * Timed out or interrupted, the worker will not answer either: our
	 * hang-up has the keeper kill it.
	 */
	r = k == -ETIMEDOUT || k == -ECANCELED
		? k
		: keeper_answer(ctl, opts->idle_ms, opts->cancel_fd, &kerr);
	if (k >= 0 && r >= 0 && !d.is_dir)
		k = put_in_place(&d, tmp, &xerr);
	if ((k < 0 || r < 0) && !d.is_dir)
		sr_archive_remove_tree(d.dirfd, tmp);
	return outcome(opts, true, k, &xerr, r, &kerr, err);
}

/*
 * A root caller reads what it copies in as root: only where nobody but
 * root and the owner of the tree it is in (and the entry's own owner,
 * when another user's) could have put something else at its name
 * (hostpath.h), as for a copy out (artifacts.h). Else a user who may
 * rename in a directory above could move another user's private
 * directory or file to the name given, and root would hand it to the
 * sandbox. Judged through dir, the directory it is then read through,
 * and the entry found there the same after. Its owner: whose it is to
 * read as (0: root's own).
 */
static int source_held(int dir, const char *name, const char *src, uid_t *ret_uid, gid_t *ret_gid,
		       struct sr_error *err)
{
	struct stat st, again;
	uid_t uid;
	gid_t gid;
	int r;

	*ret_uid = 0;
	*ret_gid = 0;
	if (geteuid() != 0)
		return 0;
	if (fstatat(dir, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return sr_error_errno(err, sr_negerrno(), "cp: %s", src);
	r = sr_hostpath_tree_owner(dir, &uid, &gid);
	if (r < 0)
		return sr_error_errno(err, r, "cp from %s: the directories above it", src);
	if (uid != 0)
		r = sr_hostpath_entry_held(dir, name, uid, "cp from", src, err);
	if (r >= 0 && st.st_uid != 0 && st.st_uid != uid)
		r = sr_hostpath_entry_held(dir, name, st.st_uid, "cp from", src, err);
	if (r < 0)
		return r;
	if (fstatat(dir, name, &again, AT_SYMLINK_NOFOLLOW) < 0 || again.st_dev != st.st_dev ||
	    again.st_ino != st.st_ino)
		return sr_error_msg(err, -ESTALE, "cp from %s: replaced as it was checked", src);
	/* Whose to read as: a directory's own owner (a home in /home), else its tree's. */
	*ret_uid = S_ISDIR(st.st_mode) && st.st_uid != 0 ? st.st_uid : uid;
	*ret_gid = S_ISDIR(st.st_mode) && st.st_uid != 0 ? st.st_gid : gid;
	return 0;
}

/* What cp in reads and streams to the sandbox's worker (write_in()). */
struct write_in {
	int fd;	 /* the stream */
	int dir; /* the directory holding name */
	const char *name;
	const struct sr_write_opts *opts;
};

static int write_in(void *arg, void *out, struct sr_error *err)
{
	const struct write_in *a = arg;
	struct sr_archive_writer *w = NULL;
	int k;

	(void)out;
	k = sr_archive_writer_new(a->fd, a->opts, &w, err);
	if (k >= 0)
		k = sr_archive_write_tree(w, a->dir, a->name, NULL, err);
	if (k >= 0)
		k = sr_archive_writer_end(w, NULL, NULL, err);
	sr_archive_writer_free(w);
	return k;
}

int sr_copy_in(int ctl, const char *src, const char *path, const struct sr_copy_opts *opts,
	       struct sr_error *err)
{
	_cleanup_free_ char *name = NULL;
	_cleanup_close_ int dir = -1, fd = -1;
	struct sr_write_opts wo = {.idle_ms = opts->idle_ms, .hardlinks = true};
	struct sr_error werr = {0}, kerr = {0};
	struct write_in in;
	struct stat st;
	uid_t owner;
	gid_t owner_gid;
	int r, k;

	r = host_parent(src, opts->agent_trees, &dir, &name, err);
	if (r < 0)
		return r;
	if (!name)
		return sr_error_msg(err, -EINVAL, "cp: %s: name a file or directory", src);
	r = source_held(dir, name, src, &owner, &owner_gid, err);
	if (r < 0)
		return r;
	/* Not followed: a link is copied as one (and refused inside if it leaves the copy). */
	if (fstatat(dir, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return sr_error_errno(err, sr_negerrno(), "cp: %s", src);
	/* What we cannot read said as the user named it ("archive shadow" named its last part). */
	if ((S_ISREG(st.st_mode) || S_ISDIR(st.st_mode)) &&
	    faccessat(dir, name, S_ISDIR(st.st_mode) ? R_OK | X_OK : R_OK, AT_EACCESS) < 0)
		return sr_error_errno(err, sr_negerrno(), "cp: %s", src);
	r = request(ctl, "cp_in", path, false, &fd, err);
	if (r < 0)
		return r;
	in = (struct write_in){.fd = fd, .dir = dir, .name = name, .opts = &wo};
	/*
	 * A root caller reads a user's tree as that user: what the kernel lets
	 * them read, whatever they moved into it (a third user's file, from a
	 * directory where anyone may rename), not what root may.
	 */
	k = owner ? sr_as_owner(owner, owner_gid, "cp", src, write_in, &in, NULL, 0, &werr)
		  : write_in(&in, NULL, &werr);
	sr_closep(&fd);
	r = k == -ETIMEDOUT ? -ETIMEDOUT : keeper_answer(ctl, opts->idle_ms, 0, &kerr);
	return outcome(opts, false, k, &werr, r, &kerr, err);
}
