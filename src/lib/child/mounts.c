/* SPDX-License-Identifier: MIT */
/*
 * The sandbox's filesystem.
 *
 * Runs in the child, in its own user and mount namespaces, before
 * anything of the agent's exists. Every host path the sandbox needs was
 * opened (or is opened here) before the first mount, and every mount is
 * made from and onto file descriptors (open_tree/move_mount), so no path
 * is looked up twice and a symlink swapped in between cannot redirect a
 * mount (the CVE-2021-30465 class). Targets that lie in agent-controlled
 * trees (the workspace) are resolved with RESOLVE_IN_ROOT |
 * RESOLVE_NO_SYMLINKS.
 *
 * Layout: the new root is a small tmpfs, read-only once built. A second
 * tmpfs, sized by the disk limit, holds everything the agent may write:
 * the workspace's upper layer, /tmp, $HOME and /dev/shm are binds of its
 * subdirectories, so one `size=` bounds them all and statfs on /tmp reads
 * the sandbox's disk use.
 *
 * The sources, opened as the caller before any of this, are
 * mounts-sources.c's.
 */
#include "mounts.h"
#include "workspace.h"
#include "archive.h"
#include "caps.h"
#include "layout.h"
#include "disk.h"
#include "net.h"
#include "seccomp.h"
#include "util.h"
#include "viewfs.h"

#include <fcntl.h>
#include <limits.h>
#include <linux/openat2.h>
#include <linux/sched.h>
#include <sched.h>
#include <sys/mount.h>
#include <sys/random.h>
#include <sys/sendfile.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>

#define NEWROOT SR_NEWROOT
#define DATA	SR_DATA_DIR /* the disk, relative to NEWROOT, detached before pivot */
/* The disk's files, as mke2fs sizes ext4: an inode per 4 KiB below 512 MiB, per 16 KiB above. */

static int sys_pivot_root(const char *new_root, const char *put_old)
{
	return (int)syscall(SYS_pivot_root, new_root, put_old);
}

/*
 * Clones the mount tree at (src_dirfd, src_path) and attaches it at
 * (dst_dirfd, dst_path) with attr applied to every mount in it. An empty
 * path means the fd itself. open_tree + mount_setattr(AT_RECURSIVE) makes
 * submounts read-only too, which bind + remount does not.
 */
int sr_mounts_bind_tree(int src_dirfd, const char *src_path, int dst_dirfd, const char *dst_path,
			uint64_t attr, const char *what, struct sr_error *err)
{
	struct mount_attr ma = {.attr_set = attr};
	_cleanup_close_ int tree = -1;
	unsigned int tflags = OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_RECURSIVE;
	unsigned int mflags = MOVE_MOUNT_F_EMPTY_PATH;

	if (!*src_path)
		tflags |= AT_EMPTY_PATH;
	if (!*dst_path)
		mflags |= MOVE_MOUNT_T_EMPTY_PATH;
	tree = open_tree(src_dirfd, src_path, tflags);
	if (tree < 0)
		return sr_error_errno(err, sr_negerrno(), "bind %s: open_tree", what);
	if (attr && mount_setattr(tree, "", AT_EMPTY_PATH | AT_RECURSIVE, &ma, sizeof(ma)) < 0)
		return sr_error_errno(err, sr_negerrno(), "bind %s: set mount attributes", what);
	if (move_mount(tree, "", dst_dirfd, dst_path, mflags) < 0)
		return sr_error_errno(err, sr_negerrno(), "bind %s", what);
	return 0;
}

static int set_attr(int dirfd, const char *path, uint64_t attr, const char *what,
		    struct sr_error *err)
{
	struct mount_attr ma = {.attr_set = attr};

	if (mount_setattr(dirfd, path, *path ? 0 : AT_EMPTY_PATH, &ma, sizeof(ma)) < 0)
		return sr_error_errno(err, sr_negerrno(), "make %s read-only", what);
	return 0;
}

static int mount_tmpfs(const char *path, const char *opts, const char *what, struct sr_error *err)
{
	if (mount("tmpfs", path, "tmpfs", MS_NOSUID | MS_NODEV, opts) < 0)
		return sr_error_errno(err, sr_negerrno(), "mount tmpfs on %s", what);
	return 0;
}

static int write_file_at(int dirfd, const char *name, const char *text, mode_t mode,
			 struct sr_error *err)
{
	_cleanup_close_ int fd = openat(dirfd, name, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode);
	int r;

	if (fd < 0)
		return sr_error_errno(err, sr_negerrno(), "write %s", name);
	r = sr_write_all(fd, text, strlen(text));
	return r < 0 ? sr_error_errno(err, r, "write %s", name) : 0;
}

/* Copies a small host file (ld.so.cache, services, ...): cheaper than a mount, and a snapshot. */
static int copy_file_at(int src_dirfd, const char *src, int dst_dirfd, const char *dst,
			struct sr_error *err)
{
	_cleanup_close_ int in = openat(src_dirfd, src, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	_cleanup_close_ int out = -1;
	char buf[16384];
	ssize_t n;

	if (in < 0)
		return sr_error_errno(err, sr_negerrno(), "read /etc/%s", src);
	out = openat(dst_dirfd, dst, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
	if (out < 0)
		return sr_error_errno(err, sr_negerrno(), "create /etc/%s", dst);
	while ((n = SR_RETRY(read(in, buf, sizeof(buf)))) > 0) {
		int r = sr_write_all(out, buf, (size_t)n);

		if (r < 0)
			return sr_error_errno(err, r, "copy /etc/%s", src);
	}
	if (n < 0)
		return sr_error_errno(err, sr_negerrno(), "read /etc/%s", src);
	return 0;
}

/* Recreates a host symlink as is (e.g. /bin -> usr/bin on merged-/usr systems). */
static int copy_symlink_at(int src_dirfd, const char *src, int dst_dirfd, const char *dst,
			   struct sr_error *err)
{
	char target[4096];
	ssize_t n = readlinkat(src_dirfd, src, target, sizeof(target) - 1);

	if (n < 0)
		return sr_error_errno(err, sr_negerrno(), "readlink %s", src);
	target[n] = '\0';
	if (symlinkat(target, dst_dirfd, dst) < 0)
		return sr_error_errno(err, sr_negerrno(), "symlink %s", dst);
	return 0;
}

/* The directories above name ("ssl" for "ssl/certs"), made in the new root as needed. */
static int make_parents(int root_dirfd, const char *name, const char *what, struct sr_error *err)
{
	char dir[PATH_MAX];

	snprintf(dir, sizeof(dir), "%s", name);
	for (char *slash = strchr(dir, '/'); slash; slash = strchr(slash + 1, '/')) {
		*slash = '\0';
		if (mkdirat(root_dirfd, dir, 0755) < 0 && errno != EEXIST)
			return sr_error_errno(err, sr_negerrno(), "mkdir for %s", what);
		*slash = '/';
	}
	return 0;
}

/*
 * Mirrors one host entry into the new root, read-only: a symlink is
 * recreated, a directory bound, a small regular file copied. Missing
 * entries are skipped: hosts differ (/lib32, /etc/gai.conf, ...). A name
 * may be a path ("ssl/certs"): what is above it is made, not mirrored.
 */
static int mirror_entry(int host_dirfd, int root_dirfd, const char *name, const char *what,
			struct sr_error *err)
{
	struct stat st;
	int r;

	if (fstatat(host_dirfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return errno == ENOENT || errno == ENOTDIR
			   ? 0
			   : sr_error_errno(err, sr_negerrno(), "stat %s", what);
	r = make_parents(root_dirfd, name, what, err);
	if (r < 0)
		return r;
	if (S_ISLNK(st.st_mode))
		return copy_symlink_at(host_dirfd, name, root_dirfd, name, err);
	if (S_ISREG(st.st_mode) && st.st_size <= 1 << 20)
		return copy_file_at(host_dirfd, name, root_dirfd, name, err);
	if (!S_ISDIR(st.st_mode))
		return 0;
	if (mkdirat(root_dirfd, name, 0755) < 0)
		return sr_error_errno(err, sr_negerrno(), "mkdir %s", what);
	return sr_mounts_bind_tree(host_dirfd, name, root_dirfd, name,
				   MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV, what,
				   err);
}

static int build_etc(const struct sr_plan *p, int root, struct sr_error *err)
{
	_cleanup_close_ int host = open("/etc", O_PATH | O_DIRECTORY | O_CLOEXEC);
	_cleanup_close_ int etc = -1;
	const char *resolv = sr_net_resolv_conf(p->net);
	int r;

	if (host < 0)
		return sr_error_errno(err, sr_negerrno(), "open /etc");
	if (mkdirat(root, "etc", 0755) < 0)
		return sr_error_errno(err, sr_negerrno(), "mkdir /etc");
	etc = openat(root, "etc", O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (etc < 0)
		return sr_error_errno(err, sr_negerrno(), "open /etc");
	for (size_t i = 0; i < sr_layout_n_host_etc; i++) {
		char what[64];

		snprintf(what, sizeof(what), "/etc/%s", sr_layout_host_etc[i]);
		r = mirror_entry(host, etc, sr_layout_host_etc[i], what, err);
		if (r < 0)
			return r;
	}
	if ((r = write_file_at(etc, "passwd", sr_layout_passwd, 0644, err)) < 0 ||
	    (r = write_file_at(etc, "group", sr_layout_group, 0644, err)) < 0 ||
	    (r = write_file_at(etc, "hostname", sr_layout_hostname, 0644, err)) < 0 ||
	    (r = write_file_at(etc, "hosts", sr_layout_hosts, 0644, err)) < 0)
		return r;
	if (resolv && (r = write_file_at(etc, "resolv.conf", resolv, 0644, err)) < 0)
		return r;
	return 0;
}

/*
 * Opens (creating what is missing) the bind target `path` inside the new
 * root without following any symlink, even one the agent's files put in
 * the workspace: RESOLVE_IN_ROOT keeps ".." inside, NO_SYMLINKS refuses
 * links outright. Returns an O_PATH fd to mount onto.
 */
static int open_target(int root, const char *path, bool dir, struct sr_error *err)
{
	char buf[4096];
	_cleanup_close_ int cur = -1;
	char *save = NULL, *comp, *next;
	const uint64_t res = RESOLVE_IN_ROOT | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS;

	if (snprintf(buf, sizeof(buf), "%s", path) >= (int)sizeof(buf))
		return sr_error_msg(err, -ENAMETOOLONG, "bind target %s: path too long", path);
	cur = fcntl(root, F_DUPFD_CLOEXEC, 3);
	if (cur < 0)
		return sr_error_errno(err, sr_negerrno(), "bind target %s", path);
	for (comp = strtok_r(buf, "/", &save); comp; comp = next) {
		bool last;
		int fd;

		next = strtok_r(NULL, "/", &save);
		last = next == NULL;
		if (!last || dir) {
			if (mkdirat(cur, comp, 0755) < 0 && errno != EEXIST)
				return sr_error_errno(err, sr_negerrno(),
						      "bind target %s: mkdir %s", path, comp);
		} else {
			/*
			 * Created if missing, never opened if there: the agent's
			 * workspace may hold a FIFO by that name, whose open
			 * for writing would wait for a reader for ever.
			 */
			fd = openat(cur, comp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
				    0644);
			if (fd < 0 && errno != EEXIST && errno != EISDIR && errno != EACCES &&
			    errno != EROFS)
				return sr_error_errno(err, sr_negerrno(), "bind target %s", path);
			if (fd >= 0)
				close(fd);
		}
		fd = sr_openat2(cur, comp, O_PATH | (last && !dir ? 0 : O_DIRECTORY), res);
		if (fd < 0)
			return sr_error_errno(err, sr_negerrno(),
					      "bind target %s (symlinks are refused)", path);
		close(cur);
		cur = fd;
	}
	return steal_fd(&cur);
}

static int bind_user_paths(const struct sr_plan *p, const struct sr_sources *srcs, int root,
			   struct sr_error *err)
{
	const struct sr_config *c = p->config;

	for (size_t i = 0; i < c->n_binds; i++) {
		const struct sr_bind *b = &c->binds[i];
		int src = srcs->binds[i];
		_cleanup_close_ int dst = -1;
		struct stat st;
		uint64_t attr = MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV;
		int r;

		if (fstat(src, &st) < 0)
			return sr_error_errno(err, sr_negerrno(), "bind %s", b->src);
		dst = open_target(root, b->dst + 1, S_ISDIR(st.st_mode), err);
		if (dst < 0)
			return dst;
		if (!b->writable)
			attr |= MOUNT_ATTR_RDONLY;
		/*
		 * A root caller's writable bind: the host side's idmapped
		 * clone (the directory's owner is the sandbox user there,
		 * userns.h), its attributes set already.
		 */
		if (p->bind_trees && p->bind_trees[i] >= 0) {
			if (move_mount(p->bind_trees[i], "", dst, "",
				       MOVE_MOUNT_F_EMPTY_PATH | MOVE_MOUNT_T_EMPTY_PATH) < 0)
				return sr_error_errno(err, sr_negerrno(), "bind %s", b->dst);
			continue;
		}
		r = sr_mounts_bind_tree(src, "", dst, "", attr, b->dst, err);
		if (r < 0)
			return r;
	}
	return 0;
}

/*
 * Covers /proc/NAME with a read-only file holding text. The file is made
 * on the new root's tmpfs, bound, and unlinked again: the mount keeps it,
 * and nothing of it shows in the sandbox's tree, nor on its disk.
 */
static int cover_with_text(int root, int proc, const char *name, const char *text,
			   struct sr_error *err)
{
	static const char tmp[] = ".sr-cover";
	char what[64];
	int r;

	snprintf(what, sizeof(what), "/proc/%s", name);
	if (faccessat(proc, name, F_OK, AT_SYMLINK_NOFOLLOW) < 0)
		return 0;
	r = write_file_at(root, tmp, text, 0444, err);
	if (r >= 0)
		r = sr_mounts_bind_tree(root, tmp, proc, name,
					MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV |
					    MOUNT_ATTR_NOEXEC,
					what, err);
	if (unlinkat(root, tmp, 0) < 0 && r >= 0)
		r = sr_error_errno(err, sr_negerrno(), "cover %s", what);
	return r;
}

/*
 * Facts of the host that no namespace hides. /proc/cmdline is the host
 * kernel's command line, which can carry secrets (a disk's key, a
 * provisioning token, cloud-init data) and names the host's setup: the
 * sandbox sees an empty one. The boot id identifies the host's current
 * boot across every sandbox it runs, a tracking handle shared by all of
 * them: each sandbox gets a random one of its own, in the same format
 * (programs that read it, journald's clients, telemetry, expect a UUID),
 * as each production microVM boots afresh. Text rather than /dev/null:
 * an empty boot id is a parse error to its readers.
 */
static int mask_host_facts(int root, int proc, struct sr_error *err)
{
	unsigned char u[16];
	char boot_id[40];
	int r;

	if (getrandom(u, sizeof(u), 0) != (ssize_t)sizeof(u))
		return sr_error_errno(err, sr_negerrno(), "boot id: getrandom");
	u[6] = (unsigned char)((u[6] & 0x0f) | 0x40); /* version 4: random */
	u[8] = (unsigned char)((u[8] & 0x3f) | 0x80); /* RFC 4122 variant */
	snprintf(boot_id, sizeof(boot_id),
		 "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x\n", u[0],
		 u[1], u[2], u[3], u[4], u[5], u[6], u[7], u[8], u[9], u[10], u[11], u[12], u[13],
		 u[14], u[15]);
	r = cover_with_text(root, proc, "cmdline", "\n", err);
	if (r >= 0)
		r = cover_with_text(root, proc, "sys/kernel/random/boot_id", boot_id, err);
	return r;
}

/*
 * inotify instances and watches are counted per user, and charged at
 * every level of user namespaces up to the host's: an unprivileged
 * caller's agent is the caller's uid there, and could use up the caller's
 * own (fs.inotify.max_user_instances, 128 here: its editor's and its
 * build tools' file watchers then fail with EMFILE). The sandbox's user
 * namespace gets half of the host's limits; the caller keeps the rest.
 */
static int limit_ucounts(const struct sr_plan *p, int proc, struct sr_error *err)
{
	const struct {
		const char *name;
		uint64_t value;
	} limits[] = {
	    {"sys/user/max_inotify_instances", p->max_inotify_instances},
	    {"sys/user/max_inotify_watches", p->max_inotify_watches},
	};

	for (size_t i = 0; i < SR_ARRAY_SIZE(limits); i++) {
		_cleanup_close_ int fd = -1;
		char text[32];
		int n;

		if (!limits[i].value)
			continue;
		fd = openat(proc, limits[i].name, O_WRONLY | O_CLOEXEC);
		n = snprintf(text, sizeof(text), "%llu\n", (unsigned long long)limits[i].value);
		if (fd < 0 || write(fd, text, (size_t)n) != n)
			return sr_error_errno(err, sr_negerrno(), "limit /proc/%s", limits[i].name);
	}
	return 0;
}

/*
 * What the agent sees of its machine (procview.h): /proc/meminfo, and
 * where the sandbox has fewer CPUs than the host stat and cpuinfo, as
 * the sandbox's, served live by PID 1 (viewfs.h) or covered by a
 * snapshot of now. Last in /proc, and nothing of the set-up reads them
 * after: PID 1 is their server, and serves only once the set-up is done.
 */
static int mount_views(struct sr_plan *p, int root, int proc, struct sr_error *err)
{
	for (size_t v = 0; v < _SR_VIEW_MAX; v++) {
		_cleanup_free_ char *text = NULL;
		int r = sr_viewfs_mount(p, v, proc, NEWROOT "/proc", &text, err);

		if (r > 0)
			r = cover_with_text(root, proc, sr_viewfs_name(v), text, err);
		if (r < 0)
			return r;
	}
	return 0;
}

static int mount_proc(struct sr_plan *p, int root, struct sr_error *err)
{
	_cleanup_close_ int proc = -1, devnull = -1;
	const uint64_t ro =
	    MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV | MOUNT_ATTR_NOEXEC;
	int r;

	if (mount("proc", NEWROOT "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL) < 0)
		return sr_error_errno(err, sr_negerrno(), "mount /proc");
	proc = openat(root, "proc", O_PATH | O_DIRECTORY | O_CLOEXEC);
	devnull = openat(root, "dev/null", O_PATH | O_CLOEXEC);
	if (proc < 0 || devnull < 0)
		return sr_error_errno(err, sr_negerrno(), "open /proc");

	/*
	 * Defence in depth behind seccomp: no user namespaces can be created
	 * beneath ours at all -- nested, beneath the agent's (the limit counts
	 * the whole subtree, the agent's namespace being the one). A
	 * per-namespace sysctl, writable by its owner.
	 */
	{
		_cleanup_close_ int fd =
		    openat(proc, "sys/user/max_user_namespaces", O_WRONLY | O_CLOEXEC);
		const char *max = p->nested_userns ? "1\n" : "0\n";

		if (fd < 0 || write(fd, max, 2) != 2)
			return sr_error_errno(err, sr_negerrno(),
					      "limit nested user namespaces to %c", max[0]);
	}
	r = limit_ucounts(p, proc, err);
	if (r < 0)
		return r;

	for (size_t i = 0; i < sr_layout_n_proc_hidden_files; i++) {
		if (faccessat(proc, sr_layout_proc_hidden_files[i], F_OK, AT_SYMLINK_NOFOLLOW) < 0)
			continue;
		r = sr_mounts_bind_tree(devnull, "", proc, sr_layout_proc_hidden_files[i], 0,
					sr_layout_proc_hidden_files[i], err);
		if (r < 0)
			return r;
	}
	for (size_t i = 0; i < sr_layout_n_proc_hidden_dirs; i++) {
		char path[64];

		if (faccessat(proc, sr_layout_proc_hidden_dirs[i], F_OK, AT_SYMLINK_NOFOLLOW) < 0)
			continue;
		snprintf(path, sizeof(path), NEWROOT "/proc/%s", sr_layout_proc_hidden_dirs[i]);
		if (mount("tmpfs", path, "tmpfs", MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC,
			  "size=0,nr_inodes=1,mode=0555") < 0)
			return sr_error_errno(err, sr_negerrno(), "hide /proc/%s",
					      sr_layout_proc_hidden_dirs[i]);
	}
	for (size_t i = 0; i < sr_layout_n_proc_readonly; i++) {
		if (faccessat(proc, sr_layout_proc_readonly[i], F_OK, AT_SYMLINK_NOFOLLOW) < 0)
			continue;
		r = sr_mounts_bind_tree(proc, sr_layout_proc_readonly[i], proc,
					sr_layout_proc_readonly[i], ro, sr_layout_proc_readonly[i],
					err);
		if (r < 0)
			return r;
	}
	r = mask_host_facts(root, proc, err);
	return r < 0 ? r : mount_views(p, root, proc, err);
}

/*
 * A minimal /dev: the host's harmless character devices bound in (a user
 * namespace cannot mknod), a private devpts instance (never the host's
 * ptys), /dev/shm on the disk tmpfs.
 */
static int mount_dev(int root, int data, struct sr_error *err)
{
	_cleanup_close_ int host = open("/dev", O_PATH | O_DIRECTORY | O_CLOEXEC);
	_cleanup_close_ int dev = -1;
	static const char *const links[][2] = {
	    {"fd", "/proc/self/fd"},	   {"stdin", "/proc/self/fd/0"},
	    {"stdout", "/proc/self/fd/1"}, {"stderr", "/proc/self/fd/2"},
	    {"ptmx", "pts/ptmx"},
	};
	int r;

	if (host < 0)
		return sr_error_errno(err, sr_negerrno(), "open host /dev");
	r = mount_tmpfs(NEWROOT "/dev", "mode=0755,size=64k,nr_inodes=64", "/dev", err);
	if (r < 0)
		return r;
	dev = openat(root, "dev", O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (dev < 0)
		return sr_error_errno(err, sr_negerrno(), "open /dev");
	for (size_t i = 0; i < sr_layout_n_dev_nodes; i++) {
		_cleanup_close_ int fd = -1;
		char what[32];

		fd = openat(dev, sr_layout_dev_nodes[i], O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC,
			    0666);
		if (fd < 0)
			return sr_error_errno(err, sr_negerrno(), "create /dev/%s",
					      sr_layout_dev_nodes[i]);
		snprintf(what, sizeof(what), "/dev/%s", sr_layout_dev_nodes[i]);
		r = sr_mounts_bind_tree(host, sr_layout_dev_nodes[i], dev, sr_layout_dev_nodes[i],
					MOUNT_ATTR_NOSUID | MOUNT_ATTR_NOEXEC, what, err);
		if (r < 0)
			return r;
	}
	for (size_t i = 0; i < SR_ARRAY_SIZE(links); i++)
		if (symlinkat(links[i][1], dev, links[i][0]) < 0)
			return sr_error_errno(err, sr_negerrno(), "symlink /dev/%s", links[i][0]);
	if (mkdirat(dev, "pts", 0755) < 0 || mkdirat(dev, "shm", 01777) < 0)
		return sr_error_errno(err, sr_negerrno(), "mkdir /dev/pts");
	if (mount("devpts", NEWROOT "/dev/pts", "devpts", MS_NOSUID | MS_NOEXEC,
		  "newinstance,ptmxmode=0666,mode=0620,max=" SR_LAYOUT_PTYS_MAX) < 0)
		return sr_error_errno(err, sr_negerrno(), "mount /dev/pts");
	r = sr_mounts_bind_tree(data, "shm", dev, "shm", MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV,
				"/dev/shm", err);
	if (r < 0)
		return r;
	return set_attr(dev, "", MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID, "/dev", err);
}

static int make_skeleton(int root, struct sr_error *err)
{
	for (size_t i = 0; i < sr_layout_n_skeleton; i++)
		if (mkdirat(root, sr_layout_skeleton[i].path, sr_layout_skeleton[i].mode) < 0)
			return sr_error_errno(err, sr_negerrno(), "mkdir /%s",
					      sr_layout_skeleton[i].path);
	if (mkdirat(root, DATA, 0700) < 0)
		return sr_error_errno(err, sr_negerrno(), "mkdir /" DATA);
	if (symlinkat("../tmp", root, "var/tmp") < 0)
		return sr_error_errno(err, sr_negerrno(), "symlink /var/tmp");
	return 0;
}

static int mount_data(const struct sr_plan *p, int *ret_fd, struct sr_error *err)
{
	static const struct {
		const char *name;
		mode_t mode;
	} dirs[] = {
	    {"upper", 0755}, {"work", 0700}, {"tmp", 01777},
	    {"home", 0755},  {"shm", 01777}, {"workspace", 0755},
	};
	uint64_t size = p->config->disk_bytes;
	char opts[128];
	int fd, r = 0;

	/*
	 * The host side prepared an ext4 image's mount or a directory of its
	 * disk (disk.h): attached here. Else a tmpfs: size=0 is tmpfs for "no
	 * limit", as disk = 0 means unlimited. Files are bounded too, as on a
	 * real disk of that size: an empty file takes no block but an inode,
	 * kernel memory no rlimit counts. As many as mke2fs gives ext4
	 * (655,360 for 10G), and at least 4096.
	 */
	if (p->disk_kind == SR_DISK_EXT4) {
		if (move_mount(p->disk_tree, "", AT_FDCWD, NEWROOT "/" DATA,
			       MOVE_MOUNT_F_EMPTY_PATH) < 0)
			r = sr_error_errno(err, sr_negerrno(), "attach the sandbox's disk (ext4)");
	} else if (p->disk_kind == SR_DISK_DIR) {
		r = sr_mounts_bind_tree(p->sources.disk_dir, "", AT_FDCWD, NEWROOT "/" DATA,
					MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV, "the sandbox's disk",
					err);
	} else {
		snprintf(opts, sizeof(opts), "mode=0755,size=%llu,nr_inodes=%llu",
			 (unsigned long long)size, (unsigned long long)sr_disk_inodes(size));
		r = mount_tmpfs(NEWROOT "/" DATA, opts, "the sandbox's disk", err);
	}
	if (r < 0)
		return r;
	fd = open(NEWROOT "/" DATA, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return sr_error_errno(err, sr_negerrno(), "open the sandbox's disk");
	for (size_t i = 0; i < SR_ARRAY_SIZE(dirs); i++) {
		bool overlay = p->sources.workspace >= 0;

		/* What this workspace does not use is not made: each costs on a real disk. */
		if (overlay
			? strcmp(dirs[i].name, "workspace") == 0
			: strcmp(dirs[i].name, "upper") == 0 || strcmp(dirs[i].name, "work") == 0)
			continue;
		if (mkdirat(fd, dirs[i].name, dirs[i].mode) < 0 ||
		    fchmodat(fd, dirs[i].name, dirs[i].mode, 0) < 0) {
			r = sr_error_errno(err, sr_negerrno(), "mkdir %s", dirs[i].name);
			close(fd);
			return r;
		}
	}
	*ret_fd = fd;
	return 0;
}

static int build_root(struct sr_plan *p, const struct sr_sources *srcs, int root, int data,
		      struct sr_error *err)
{
	_cleanup_close_ int hostroot = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
	int r;

	if (hostroot < 0)
		return sr_error_errno(err, sr_negerrno(), "open /");
	for (size_t i = 0; i < sr_layout_n_host_top; i++) {
		char what[16];

		snprintf(what, sizeof(what), "/%s", sr_layout_host_top[i]);
		r = mirror_entry(hostroot, root, sr_layout_host_top[i], what, err);
		if (r < 0)
			return r;
	}
	if ((r = build_etc(p, root, err)) < 0 || (r = mount_dev(root, data, err)) < 0 ||
	    (r = mount_proc(p, root, err)) < 0 ||
	    (r = sr_workspace_mount(p, srcs->workspace, root, data, err)) < 0)
		return r;
	if ((r = sr_mounts_bind_tree(data, "tmp", root, "tmp", MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV,
				     "/tmp", err)) < 0 ||
	    (r = sr_mounts_bind_tree(data, "home", root, "home/user",
				     MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV, SR_SANDBOX_HOME, err)) <
		0)
		return r;
	return bind_user_paths(p, srcs, root, err);
}

int sr_mounts_setup(struct sr_plan *p, struct sr_error *err)
{
	_cleanup_close_ int root = -1, data = -1;
	int r;

	r = mount_tmpfs(NEWROOT, "mode=0755,size=4m,nr_inodes=4096", "the new root", err);
	if (r < 0)
		return r;
	root = open(NEWROOT, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (root < 0)
		return sr_error_errno(err, sr_negerrno(), "open the new root");
	if ((r = make_skeleton(root, err)) < 0 || (r = mount_data(p, &data, err)) < 0 ||
	    (r = build_root(p, &p->sources, root, data, err)) < 0)
		return r;

	/* The disk's root, for the host (with READY); the disk stays reachable only through its
	 * binds. */
	p->sources.disk = fcntl(data, F_DUPFD_CLOEXEC, 3);
	if (p->sources.disk < 0 || umount2(NEWROOT "/" DATA, MNT_DETACH) < 0 ||
	    unlinkat(root, DATA, AT_REMOVEDIR) < 0)
		return sr_error_errno(err, sr_negerrno(), "detach the sandbox's disk");
	r = set_attr(root, "", MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV, "/", err);
	if (r < 0)
		return r;

	/*
	 * pivot_root(".", "."): the old root ends up stacked on the new one and
	 * is detached at once, taking every host mount with it. No directory
	 * for the old root is needed, and nothing of it stays reachable.
	 */
	if (fchdir(root) < 0 || sys_pivot_root(".", ".") < 0)
		return sr_error_errno(err, sr_negerrno(), "pivot_root");
	if (umount2(".", MNT_DETACH) < 0)
		return sr_error_errno(err, sr_negerrno(), "detach the host's root");
	if (chdir(SR_WORKSPACE) < 0)
		return sr_error_errno(err, sr_negerrno(), "chdir " SR_WORKSPACE);
	return 0;
}
