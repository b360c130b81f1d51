/* SPDX-License-Identifier: MIT */
/*
 * Writing an exported bundle (oci.h): rootfs/ as a run's root would be
 * before its mounts -- the skeleton, the host's top-level links, the
 * mirrored /etc files copied, passwd and the rest synthesized, the
 * agent's files in workspace/ -- then config.json.
 *
 * The agent's files are read as the caller, without following a link:
 * a link in them is copied as a link, resolved inside the container (as
 * in a run's overlay), and never makes the export read outside the tree.
 * They may be another user's (root exports a user's agent), who can make
 * them cost the copy more than they cost their owner (a sparse file of
 * 1 TB, a file of 65,000 names, a directory renamed ahead of the walk):
 * the copy holds at most the disk limit, each name of a file at its size
 * and each entry at 512 bytes and its name besides -- what the runtime's
 * copy into the workspace's tmpfs of that size takes (crun writes holes
 * as zeros, and each name of a file whole): a larger one could never
 * start -- and costs no more than it holds: holes are left holes, and a
 * file of several names is copied once and linked.
 */
#include "oci.h"
#include "agent.h"
#include "archive-internal.h"
#include "deploy.h"
#include "env.h"
#include "hostpath.h"
#include "json.h"
#include "layout.h"
#include "oci-init.h"
#include "proc.h"
#include "setup.h"
#include "units.h"
#include "userns.h"
#include "util.h"

#include <dirent.h>
#include <limits.h>
#include <signal.h>
#include <sys/random.h>
#include <sys/resource.h>
#include <sys/sendfile.h>
#include <sys/stat.h>

extern char **environ;

/* Deeper than any real agent's tree; a bound on what a hostile one makes us do. */
#define COPY_DEPTH_MAX 256
/* A mirrored /etc file larger than this is not one of the small files a run copies. */
#define ETC_FILE_MAX (1 << 20)

/* Where things are being written, and as whom the sandbox user's files must be. */
struct writer {
	const struct sr_sink *sink;
	uid_t uid; /* the sandbox user on the host */
	gid_t gid;
	bool chown; /* the caller is root: its copies become the sandbox user's */
	struct sr_strv mirrored;
	size_t skipped; /* workspace entries neither file, directory nor link */
	bool began;	/* rootfs/ is ours: what fails from here on is undone */
	/* The workspace's copy: its bound (0: none), what it holds, its files of several names. */
	uint64_t max_bytes, data, entries;
	struct sr_inode_map linked; /* (dev, ino) -> the copy's path beneath ws */
	bool *bind_files;	    /* config's binds[i] is of a file (sr_oci_spec) */
	int ws;
	size_t top_len; /* of the agent's directory's path, which the copy's paths leave out */
};

static int write_text(int dirfd, const char *name, const char *text, mode_t mode,
		      struct sr_error *err)
{
	_cleanup_close_ int fd =
	    openat(dirfd, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode);
	int r;

	if (fd < 0)
		return sr_error_errno(err, sr_negerrno(), "write %s", name);
	r = sr_write_all(fd, text, strlen(text));
	if (r >= 0 && fchmod(fd, mode) < 0)
		r = sr_negerrno();
	return r < 0 ? sr_error_errno(err, r, "write %s", name) : 0;
}

/*
 * A ^C, SIGTERM or SIGHUP came while the bundle is written: they are
 * blocked meanwhile (sr_oci_bundle(), those the caller does not ignore),
 * so that what was written is taken out before they end us.
 */
static const int stop_sigs[] = {SIGINT, SIGTERM, SIGHUP};

static bool interrupted(void)
{
	sigset_t p;

	if (sigpending(&p) < 0)
		return false;
	for (size_t i = 0; i < SR_ARRAY_SIZE(stop_sigs); i++)
		if (sigismember(&p, stop_sigs[i]) == 1)
			return true;
	return false;
}

/*
 * bytes more of the workspace's copy (entry: of its entries, a bound of
 * their own): within the disk limit, or -EFBIG naming what.
 */
static int charge(struct writer *w, bool entry, uint64_t bytes, const char *what,
		  struct sr_error *err)
{
	char limit[SR_UNITS_BUF_MAX];
	uint64_t *count;

	if (!w || !w->max_bytes)
		return 0;
	count = entry ? &w->entries : &w->data;
	if (bytes > w->max_bytes || *count > w->max_bytes - bytes) {
		sr_format_size(w->max_bytes, limit, sizeof(limit));
		return sr_error_msg(err, -EFBIG,
				    "%s: the agent's files are more than %s%s, the sandbox's disk "
				    "limit: the runtime copies them into a workspace of that size "
				    "(--disk raises it)",
				    what, limit,
				    entry ? " in entries (512 bytes and their names each)" : "");
	}
	*count += bytes;
	return 0;
}

/*
 * src's data, up to size, into out: its extents only (SEEK_DATA, where
 * the file system says), the holes seeked over, so a sparse file stays
 * sparse and costs the copy what it costs its owner, not its size.
 */
static int copy_extents(int src, int out, off_t size, const char *what, struct sr_error *err)
{
	off_t pos = 0, len = size;

	while (pos < size) {
		off_t data = lseek(src, pos, SEEK_DATA), end = size;
		ssize_t n = 1;

		if (data < 0 && errno == ENXIO)
			break;
		if (data < 0)
			data = pos;
		else if ((end = lseek(src, data, SEEK_HOLE)) < 0 || end > size)
			end = size;
		if (data >= end)
			break;
		if (lseek(out, data, SEEK_SET) < 0)
			return sr_error_errno(err, sr_negerrno(), "copy %s", what);
		for (pos = data; pos < end && n > 0;) {
			if (interrupted())
				return sr_error_msg(err, -ECANCELED, "interrupted");
			n = sendfile(out, src, &pos,
				     (size_t)(end - pos < (1 << 26) ? end - pos : 1 << 26));
			if (n < 0 && errno != EINTR)
				return sr_error_errno(err, sr_negerrno(), "copy %s", what);
		}
		/* Shorter than it was: what is left of it is copied. */
		if (n == 0) {
			len = pos;
			break;
		}
	}
	return ftruncate(out, len) < 0 ? sr_error_errno(err, sr_negerrno(), "copy %s", what) : 0;
}

/*
 * Copies the regular file src (opened) into a new dst of dirfd with mode:
 * at most size bytes, the size it had when it was counted (-1: whatever
 * it has).
 */
static int copy_data(int src, off_t size, int dirfd, const char *dst, mode_t mode,
		     const struct writer *w, const char *what, struct sr_error *err)
{
	_cleanup_close_ int out =
	    openat(dirfd, dst, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	struct stat st;
	int r;

	if (out < 0 || fstat(src, &st) < 0)
		return sr_error_errno(err, sr_negerrno(), "copy %s", what);
	r = copy_extents(src, out, size >= 0 && size < st.st_size ? size : st.st_size, what, err);
	if (r < 0)
		return r;
	if ((w && w->chown && fchown(out, w->uid, w->gid) < 0) || fchmod(out, mode) < 0)
		return sr_error_errno(err, sr_negerrno(), "copy %s", what);
	return 0;
}

/*
 * A regular file of the agent's (in, opened; st its) met before under
 * another name: linked to its copy (1), else copied and remembered (0).
 * Its copy's path beneath ws is path without the agent's directory: made
 * by us, of directories alone (nothing is ever replaced), relative (a
 * truncated path is not remembered).
 */
static int copy_file(int in, const struct stat *st, int dst, const char *name, mode_t mode,
		     struct writer *w, const char *path, struct sr_error *err)
{
	const char *first =
	    st->st_nlink > 1 ? sr_inode_map_get(&w->linked, st->st_dev, st->st_ino) : NULL;
	const char *rel = path + w->top_len;
	struct stat made;
	int r = charge(w, false, (uint64_t)st->st_size, path, err);

	if (r < 0)
		return r;
	if (first)
		return linkat(w->ws, first, dst, name, 0) < 0
			   ? sr_error_errno(err, sr_negerrno(), "link %s", path)
			   : 1;
	/* A --bind target's mount point, a file: the bind hides the agent's, as in a run. */
	if (fstatat(dst, name, &made, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(made.st_mode))
		return 0;
	r = copy_data(in, st->st_size, dst, name, mode, w, path, err);
	if (r < 0 || st->st_nlink < 2 || strlen(path) >= PATH_MAX - 1)
		return r;
	rel += strspn(rel, "/");
	r = *rel ? sr_inode_map_add(&w->linked, st->st_dev, st->st_ino, rel) : 0;
	return r < 0 ? sr_error_errno(err, r, "%s", path) : 0;
}

static int copy_link(int src_dir, const char *name, int dst_dir, const struct writer *w,
		     const char *what, struct sr_error *err)
{
	_cleanup_close_ int made = -1;
	char target[PATH_MAX];
	ssize_t n = readlinkat(src_dir, name, target, sizeof(target) - 1);

	if (n < 0)
		return sr_error_errno(err, sr_negerrno(), "readlink %s", what);
	target[n] = '\0';
	if (symlinkat(target, dst_dir, name) < 0)
		return sr_error_errno(err, sr_negerrno(), "copy the link %s", what);
	if (!w || !w->chown)
		return 0;
	/* Given through what was made, never by its name, as archive.c's give() does. */
	made = sr_open_made(dst_dir, name, S_IFLNK);
	if (made < 0 || fchownat(made, "", w->uid, w->gid, AT_EMPTY_PATH) < 0)
		return sr_error_errno(err, made < 0 ? made : sr_negerrno(), "copy the link %s",
				      what);
	return 0;
}

static int copy_tree(int src, int dst, const char *what, unsigned depth, struct writer *w,
		     struct sr_error *err);

/* One entry of the agent's tree. Set-id bits are dropped, as a run's nosuid mount ignores them. */
static int copy_entry(int src, int dst, const char *name, const char *what, unsigned depth,
		      struct writer *w, struct sr_error *err)
{
	_cleanup_close_ int in = -1, sub = -1;
	char path[PATH_MAX];
	struct stat st;
	mode_t mode;
	int r;

	snprintf(path, sizeof(path), "%s/%s", what, name);
	if (interrupted())
		return sr_error_msg(err, -ECANCELED, "interrupted");
	if (fstatat(src, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return sr_error_errno(err, sr_negerrno(), "%s", path);
	r = charge(w, true, 512 + strlen(name), path, err);
	if (r < 0)
		return r;
	mode = st.st_mode & 01777;
	if (S_ISLNK(st.st_mode))
		return copy_link(src, name, dst, w, path, err);
	if (S_ISREG(st.st_mode)) {
		/* O_NONBLOCK: a FIFO swapped in since the stat must not hang us. */
		in = openat(src, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
		if (in < 0 || fstat(in, &st) < 0 || !S_ISREG(st.st_mode))
			return sr_error_errno(err, in < 0 ? sr_negerrno() : -EINVAL, "%s", path);
		r = copy_file(in, &st, dst, name, mode, w, path, err);
		return r < 0 ? r : 0;
	}
	if (!S_ISDIR(st.st_mode)) {
		w->skipped++;
		return 0;
	}
	if (depth >= COPY_DEPTH_MAX)
		return sr_error_msg(err, -ELOOP, "%s: deeper than %d directories", path,
				    COPY_DEPTH_MAX);
	/*
	 * There already: a --bind target's mount point (bind_targets()), a
	 * directory, as a run mounts the bind over the agent's: merged. Not
	 * a link: opened without following one.
	 */
	if (mkdirat(dst, name, 0700) < 0 && errno != EEXIST)
		return sr_error_errno(err, sr_negerrno(), "mkdir %s", path);
	in = openat(src, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	sub = openat(dst, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (in < 0 || sub < 0)
		return sr_error_errno(err, sr_negerrno(), "%s", path);
	r = copy_tree(in, sub, path, depth + 1, w, err);
	if (r < 0)
		return r;
	if ((w->chown && fchown(sub, w->uid, w->gid) < 0) || fchmod(sub, mode) < 0)
		return sr_error_errno(err, sr_negerrno(), "%s", path);
	return 0;
}

static int copy_tree(int src, int dst, const char *what, unsigned depth, struct writer *w,
		     struct sr_error *err)
{
	int fd = fcntl(src, F_DUPFD_CLOEXEC, 3);
	DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
	struct dirent *e;
	int r = 0;

	if (!d) {
		r = sr_error_errno(err, sr_negerrno(), "%s", what);
		if (fd >= 0)
			close(fd);
		return r;
	}
	while (r >= 0 && (errno = 0, e = readdir(d)))
		if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0)
			r = copy_entry(src, dst, e->d_name, what, depth, w, err);
	if (r >= 0 && errno)
		r = sr_error_errno(err, sr_negerrno(), "read %s", what);
	closedir(d);
	return r;
}

/*
 * The agent's files: its directory's tree, or an executable file alone,
 * as a run has them. The copy is the sandbox user's alone (0700): the
 * bundle's directory must be passable by that user's host id, and its
 * path is no secret, but the files may be (a run's overlay exposes
 * nothing on the host); inside, the workspace's own mode is the tmpfs's.
 */
static int write_workspace(int rootfs, const struct sr_agent *a, struct writer *w,
			   struct sr_error *err)
{
	_cleanup_close_ int ws = openat(rootfs, "workspace", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	_cleanup_close_ int src = -1;
	struct stat st;
	int r;

	if (ws < 0)
		return sr_error_errno(err, sr_negerrno(), "open rootfs/workspace");
	if ((w->chown && fchown(ws, w->uid, w->gid) < 0) || fchmod(ws, 0700) < 0)
		return sr_error_errno(err, sr_negerrno(), "rootfs/workspace");
	w->ws = ws;
	if (a->host_dir) {
		/* Resolved with no link left (hostpath.h): one there now was put since. */
		src = sr_openat2(AT_FDCWD, a->host_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC,
				 RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS);
		if (src < 0)
			return sr_error_errno(err, src, "%s", a->host_dir);
		w->top_len = strlen(a->host_dir);
		r = copy_tree(src, ws, a->host_dir, 0, w, err);
		if (r < 0)
			return r;
		if (w->skipped)
			sr_warn(w->sink,
				"%zu entries of %s are neither files, directories nor links: "
				"not in the bundle's workspace",
				w->skipped, a->host_dir);
	}
	if (a->file_path) {
		const char *name = strrchr(a->file_path, '/') + 1;

		src = sr_openat2(AT_FDCWD, a->file_path, O_RDONLY | O_NONBLOCK | O_CLOEXEC,
				 RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS);
		if (src < 0)
			return sr_error_errno(err, src, "agent %s", a->file_path);
		if (fstat(src, &st) < 0)
			return sr_error_errno(err, sr_negerrno(), "agent %s", a->file_path);
		r = charge(w, false, (uint64_t)st.st_size, a->file_path, err);
		return r < 0 ? r : copy_data(src, st.st_size, ws, name, 0755, w, a->file_path, err);
	}
	return 0;
}

/* The directories above name in dirfd ("ssl" for "ssl/certs"). */
static int make_parents(int dirfd, const char *name, struct sr_error *err)
{
	char dir[PATH_MAX];

	snprintf(dir, sizeof(dir), "%s", name);
	for (char *slash = strchr(dir, '/'); slash; slash = strchr(slash + 1, '/')) {
		*slash = '\0';
		if (mkdirat(dirfd, dir, 0755) < 0 && errno != EEXIST)
			return sr_error_errno(err, sr_negerrno(), "mkdir %s", dir);
		*slash = '/';
	}
	return 0;
}

/*
 * One host entry mirrored as a run mirrors it (mounts.c): a link
 * recreated, a small file copied, a directory made a mount point and
 * bound read-only by the runtime (in w->mirrored). Missing ones skipped.
 */
static int mirror(int host, const char *host_path, int dst, const char *name, struct writer *w,
		  struct sr_error *err)
{
	_cleanup_close_ int in = -1;
	char path[PATH_MAX];
	struct stat st;
	int r;

	snprintf(path, sizeof(path), "%s/%s", host_path, name);
	if (fstatat(host, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return errno == ENOENT || errno == ENOTDIR
			   ? 0
			   : sr_error_errno(err, sr_negerrno(), "stat %s", path);
	r = make_parents(dst, name, err);
	if (r < 0)
		return r;
	if (S_ISLNK(st.st_mode))
		return copy_link(host, name, dst, NULL, path, err);
	if (S_ISREG(st.st_mode) && st.st_size <= ETC_FILE_MAX) {
		in = openat(host, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
		if (in < 0)
			return sr_error_errno(err, sr_negerrno(), "read %s", path);
		return copy_data(in, -1, dst, name, 0644, NULL, path, err);
	}
	if (!S_ISDIR(st.st_mode))
		return 0;
	if (mkdirat(dst, name, 0755) < 0)
		return sr_error_errno(err, sr_negerrno(), "mkdir rootfs%s", path);
	return sr_strv_push(&w->mirrored, path) < 0 ? sr_error_errno(err, -ENOMEM, "%s", path) : 0;
}

static int write_etc(int rootfs, struct writer *w, struct sr_error *err)
{
	_cleanup_close_ int host = open("/etc", O_PATH | O_DIRECTORY | O_CLOEXEC);
	_cleanup_close_ int etc = -1;
	int r = 0;

	if (host < 0)
		return sr_error_errno(err, sr_negerrno(), "open /etc");
	if (mkdirat(rootfs, "etc", 0755) < 0 ||
	    (etc = openat(rootfs, "etc", O_PATH | O_DIRECTORY | O_CLOEXEC)) < 0)
		return sr_error_errno(err, sr_negerrno(), "mkdir rootfs/etc");
	for (size_t i = 0; r >= 0 && i < sr_layout_n_host_etc; i++)
		r = mirror(host, "/etc", etc, sr_layout_host_etc[i], w, err);
	/* No resolv.conf: the bundle's network is lo alone, as a run's with --net none. */
	if (r >= 0)
		r = write_text(etc, "passwd", sr_layout_passwd, 0644, err);
	if (r >= 0)
		r = write_text(etc, "group", sr_layout_group, 0644, err);
	if (r >= 0)
		r = write_text(etc, "hosts", sr_layout_hosts, 0644, err);
	if (r >= 0)
		r = write_text(etc, "hostname", sr_layout_hostname, 0644, err);
	return r;
}

/*
 * What a --bind target made in the workspace (dst and the directories
 * above it, beneath workspace/) is the sandbox user's, as the copy is: the
 * runtime copies rootfs/workspace into its tmpfs with each owner, and
 * root's is no id of the container's (crun: "chown `workspace/dir`:
 * Invalid argument"). Made just now, before any file of the agent's.
 */
static int give_target(int rootfs, const char *dst, const struct writer *w, struct sr_error *err)
{
	char path[PATH_MAX];
	size_t top = strlen("workspace/");

	if (!w->chown || strncmp(dst, "workspace/", top) != 0)
		return 0;
	snprintf(path, sizeof(path), "%s", dst);
	for (char *slash = strchr(path + top, '/');; slash = strchr(slash + 1, '/')) {
		if (slash)
			*slash = '\0';
		if (fchownat(rootfs, path, w->uid, w->gid, AT_SYMLINK_NOFOLLOW) < 0)
			return sr_error_errno(err, sr_negerrno(), "rootfs/%s", path);
		if (!slash)
			return 0;
		*slash = '/';
	}
}

/* A mount point in the rootfs for each --bind target: a directory, or a file for a file. */
static int bind_targets(int rootfs, const struct sr_config *c, const struct sr_agent *a,
			struct writer *w, struct sr_error *err)
{
	if (c->n_binds && !(w->bind_files = calloc(c->n_binds, sizeof(bool))))
		return sr_error_errno(err, -ENOMEM, "binds");
	for (size_t i = 0; i < c->n_binds; i++) {
		const char *dst = c->binds[i].dst + 1;
		struct stat st;
		int fd;

		if (stat(a->bind_sources.items[i], &st) < 0)
			return sr_error_errno(err, sr_negerrno(), "bind %s", c->binds[i].src);
		if (make_parents(rootfs, dst, err) < 0)
			return err->code;
		if (S_ISDIR(st.st_mode)) {
			if (mkdirat(rootfs, dst, 0755) < 0 && errno != EEXIST)
				return sr_error_errno(err, sr_negerrno(), "mkdir rootfs/%s", dst);
		} else {
			w->bind_files[i] = true;
			fd = openat(rootfs, dst, O_WRONLY | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0644);
			if (fd < 0)
				return sr_error_errno(err, sr_negerrno(), "rootfs/%s", dst);
			close(fd);
		}
		if (give_target(rootfs, dst, w, err) < 0)
			return err->code;
	}
	return 0;
}

static int write_rootfs(int bundle, const struct sr_config *c, const struct sr_agent *a,
			struct writer *w, struct sr_error *err)
{
	_cleanup_close_ int host = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
	_cleanup_close_ int rootfs = -1;
	int r = 0;

	if (host < 0)
		return sr_error_errno(err, sr_negerrno(), "open /");
	if (mkdirat(bundle, "rootfs", 0755) < 0)
		return sr_error_errno(err, sr_negerrno(), "mkdir rootfs");
	/* Not before: a rootfs/ that was there is another export's, racing us into DIR. */
	w->began = true;
	rootfs = openat(bundle, "rootfs", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (rootfs < 0)
		return sr_error_errno(err, sr_negerrno(), "open rootfs");
	for (size_t i = 0; r >= 0 && i < sr_layout_n_skeleton; i++)
		if (mkdirat(rootfs, sr_layout_skeleton[i].path, 0700) < 0 ||
		    fchmodat(rootfs, sr_layout_skeleton[i].path, sr_layout_skeleton[i].mode, 0) < 0)
			r = sr_error_errno(err, sr_negerrno(), "mkdir rootfs/%s",
					   sr_layout_skeleton[i].path);
	if (r >= 0 && symlinkat("../tmp", rootfs, "var/tmp") < 0)
		r = sr_error_errno(err, sr_negerrno(), "symlink rootfs/var/tmp");
	for (size_t i = 0; r >= 0 && i < sr_layout_n_host_top; i++)
		r = mirror(host, "", rootfs, sr_layout_host_top[i], w, err);
	if (r >= 0)
		r = write_etc(rootfs, w, err);
	if (r >= 0)
		r = bind_targets(rootfs, c, a, w, err);
	if (r >= 0)
		r = write_workspace(rootfs, a, w, err);
	return r;
}

/*
 * sandbox-run itself, to be the container's PID 1 (oci-init.h): a copy,
 * so that the bundle does not change when sandbox-run is upgraded, and a
 * mount point for it in the rootfs.
 */
static int write_init(int bundle, struct sr_error *err)
{
	_cleanup_close_ int self = open("/proc/self/exe", O_RDONLY | O_CLOEXEC);
	_cleanup_close_ int point = -1;
	int r;

	if (self < 0)
		return sr_error_errno(err, sr_negerrno(), "open /proc/self/exe");
	r = copy_data(self, -1, bundle, SR_OCI_INIT_NAME, 0755, NULL, "sandbox-run's binary", err);
	if (r < 0)
		return r;
	point = openat(bundle, "rootfs" SR_OCI_INIT, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
	if (point < 0)
		return sr_error_errno(err, sr_negerrno(), "rootfs" SR_OCI_INIT);
	return 0;
}

/* A random UUID (version 4), as a run gives its sandbox for the boot id. */
static int write_boot_id(int bundle, struct sr_error *err)
{
	unsigned char u[16];
	char text[40];

	if (getrandom(u, sizeof(u), 0) != (ssize_t)sizeof(u))
		return sr_error_errno(err, sr_negerrno(), "boot id: getrandom");
	u[6] = (unsigned char)((u[6] & 0x0f) | 0x40);
	u[8] = (unsigned char)((u[8] & 0x3f) | 0x80);
	snprintf(text, sizeof(text),
		 "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x\n", u[0],
		 u[1], u[2], u[3], u[4], u[5], u[6], u[7], u[8], u[9], u[10], u[11], u[12], u[13],
		 u[14], u[15]);
	return write_text(bundle, "boot_id", text, 0444, err);
}

/*
 * The bundle's directory: made, or taken empty and ours. 0711: whoever the runtime
 * runs the container as must reach rootfs/, and nobody else list it;
 * config.json itself is 0600.
 */
static int open_bundle(const char *dir, bool *ret_made, struct sr_error *err)
{
	_cleanup_close_ int fd = -1;
	struct stat st;
	int list;
	DIR *d;
	struct dirent *e;
	bool empty = true;

	*ret_made = mkdir(dir, 0711) == 0;
	if (!*ret_made && errno != EEXIST)
		return sr_error_errno(err, sr_negerrno(), "%s", dir);
	fd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &st) < 0)
		return sr_error_errno(err, sr_negerrno(), "%s", dir);
	/*
	 * Another user's directory (an empty one made first in /tmp) is
	 * refused, empty or not: its owner could replace config.json or
	 * rootfs/ (a rename in their own directory) before the runtime, often
	 * root, reads them, and have it run what they like.
	 */
	if (st.st_uid != geteuid())
		return sr_error_msg(err, -EPERM,
				    "%s belongs to uid %u, not to you: give a new directory "
				    "(its owner could change the bundle before it runs)",
				    dir, (unsigned)st.st_uid);
	/* Nor one whose name another user could give to a directory of theirs, since. */
	if (sr_hostpath_held(fd, st.st_uid, "export", dir, err) < 0)
		return -EPERM;
	list = fcntl(fd, F_DUPFD_CLOEXEC, 3);
	d = list >= 0 ? fdopendir(list) : NULL;
	if (!d) {
		int r = sr_error_errno(err, sr_negerrno(), "%s", dir);

		if (list >= 0)
			close(list);
		return r;
	}
	while (empty && (e = readdir(d)))
		empty = strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0;
	closedir(d);
	if (!empty)
		return sr_error_msg(err, -EEXIST, "%s is not empty (give a new directory)", dir);
	if (fchmod(fd, 0711) < 0)
		return sr_error_errno(err, sr_negerrno(), "%s", dir);
	return steal_fd(&fd);
}

/*
 * A bundle that failed halfway (a full disk, a file that could not be
 * read) is taken out again: the directory as open_bundle() found it,
 * empty, or gone where it made it. Everything in it is ours: it was
 * empty, and ours, when we began, and we made its rootfs/ (w->began).
 */
static void undo_bundle(int bundle, const char *dir, bool made)
{
	int list = fcntl(bundle, F_DUPFD_CLOEXEC, 3);
	DIR *d = list >= 0 ? fdopendir(list) : NULL;
	struct dirent *e;

	if (!d) {
		if (list >= 0)
			close(list);
		return;
	}
	/* The dup shares open_bundle()'s offset, at the end of its listing. */
	rewinddir(d);
	while ((e = readdir(d)))
		if (!sr_streq(e->d_name, ".") && !sr_streq(e->d_name, ".."))
			(void)sr_deploy_remove_tree(bundle, e->d_name);
	closedir(d);
	if (made)
		(void)rmdir(dir);
}

static int write_config(int bundle, const struct sr_oci_spec *spec, struct sr_error *err)
{
	_cleanup_(sr_json_decrefp) json_t *config = NULL;
	_cleanup_free_ char *text = NULL;
	int r;

	r = sr_oci_config(spec, &config, err);
	if (r < 0)
		return r;
	r = sr_json_dump_document(config, &text);
	if (r < 0)
		return sr_error_errno(err, r, "config.json");
	return write_text(bundle, "config.json", text, 0600, err);
}

/* What a run has that the bundle cannot: one warning line (with --strict, a refusal). */
static int unmapped(const struct sr_config *c, const struct sr_sink *sink, struct sr_error *err)
{
	if (c->net != SR_NET_EGRESS)
		return 0;
	if (c->strict)
		return sr_error_msg(
		    err, -EOPNOTSUPP,
		    "--strict: an OCI bundle holds no egress policy (its network is "
		    "lo alone: use --net none, or a cluster's NetworkPolicy: "
		    "export --k8s)");
	sr_warn(sink, "the bundle's network is lo alone (as --net none): an OCI runtime sets up no "
		      "egress and no nftables policy; see docs/scale-out.md");
	return 0;
}

static int check_agent(const struct sr_agent *a, struct sr_error *err)
{
	if (a->kind == SR_AGENT_ARCHIVE)
		return sr_error_msg(err, -EOPNOTSUPP,
				    "an archive is extracted inside a sandbox only "
				    "(docs/security.md): extract it, then export the directory");
	if (a->argv.n == 0)
		return sr_error_msg(err, -EINVAL, "nothing to run (give an AGENT or -- COMMAND)");
	return 0;
}

int sr_oci_bundle(const char *dir, const struct sr_config *c, const struct sr_sink *sink,
		  struct sr_error *err)
{
	_cleanup_(sr_agent_free) struct sr_agent agent = {0};
	struct sr_strv envp = {0};
	struct writer w = {.sink = sink, .max_bytes = c->disk_bytes, .ws = -1};
	struct sr_oci_spec spec = {.config = c};
	_cleanup_close_ int bundle = -1;
	struct rlimit rl;
	int lock = -1, r;
	bool made = false;
	sigset_t stop, old;
	struct sigaction sa;

	if ((r = sr_agent_resolve(c, sink, &agent, err)) < 0 ||
	    (r = check_agent(&agent, err)) < 0 || (r = unmapped(c, sink, err)) < 0 ||
	    (r = sr_env_build(c, environ, &envp, err)) < 0)
		return r;
	/* The ids a run of the caller's would map; the lock a living sandbox would hold is not
	 * ours. */
	sr_userns_host_ids(getuid(), getgid(), &w.uid, &w.gid, &lock);
	sr_closep(&lock);
	w.chown = geteuid() == 0;
	sigemptyset(&stop);
	for (size_t i = 0; i < SR_ARRAY_SIZE(stop_sigs); i++)
		if (sigaction(stop_sigs[i], NULL, &sa) == 0 && sa.sa_handler != SIG_IGN)
			sigaddset(&stop, stop_sigs[i]);
	sigprocmask(SIG_BLOCK, &stop, &old);
	bundle = open_bundle(dir, &made, err);
	r = bundle;
	if (r >= 0)
		r = write_rootfs(bundle, c, &agent, &w, err);
	if (r >= 0)
		r = write_boot_id(bundle, err);
	if (r >= 0)
		r = write_init(bundle, err);
	if (r >= 0) {
		spec.argv = agent.argv.items;
		spec.envp = envp.items;
		spec.host_uid = w.uid;
		spec.host_gid = w.gid;
		spec.mirrored = &w.mirrored;
		spec.bind_sources = &agent.bind_sources;
		spec.bind_files = w.bind_files;
		/* Relative: a bind source is the bundle's (runtime-spec, config.md), wherever it
		 * moves. */
		spec.boot_id = "boot_id";
		spec.init = SR_OCI_INIT_NAME;
		if (getrlimit(RLIMIT_MSGQUEUE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY)
			spec.msgqueue = rl.rlim_cur / 2;
		if (getrlimit(RLIMIT_SIGPENDING, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY)
			spec.sigpending = rl.rlim_cur / 2;
		if (getrlimit(RLIMIT_MEMLOCK, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY)
			spec.memlock = rl.rlim_cur / 2;
		/*
		 * The uid's fds in flight, held to the sender's RLIMIT_NOFILE: the
		 * runtime's processes on the host (a console's pty passed) keep the
		 * half the container cannot reach.
		 */
		if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_max != RLIM_INFINITY) {
			spec.files = rl.rlim_max / 2;
			spec.files_soft = rl.rlim_cur < spec.files ? rl.rlim_cur : spec.files;
		}
		/*
		 * As a run's rlimit strategy lowers them (cgroup-rlimit.c): to
		 * the caller's hard limits at most, which the runtime, run by
		 * the caller, could not raise (the container would not start).
		 */
		spec.data = sr_proc_within_hard(RLIMIT_DATA, c->memory_bytes);
		spec.nproc = sr_proc_within_hard(RLIMIT_NPROC, c->pids);
		r = write_config(bundle, &spec, err);
	}
	/* Whole, but asked to stop meanwhile: taken out all the same. */
	if (r >= 0 && interrupted())
		r = sr_error_msg(err, -ECANCELED, "interrupted");
	if (r < 0 && bundle >= 0 && w.began)
		undo_bundle(bundle, dir, made);
	else if (r < 0 && bundle >= 0 && made)
		(void)rmdir(dir);
	/* A signal that came is taken now, its work undone. */
	sigprocmask(SIG_SETMASK, &old, NULL);
	sr_strv_free(&envp);
	sr_strv_free(&w.mirrored);
	sr_inode_map_free(&w.linked);
	free(w.bind_files);
	return r;
}
