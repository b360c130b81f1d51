/* SPDX-License-Identifier: MIT */
#include "disk.h"
#include "state.h"
#include "util.h"

#include <dirent.h>
#include <linux/loop.h>
#include <linux/magic.h>
#include <spawn.h>
#include <sys/file.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/wait.h>

/* As mke2fs sizes ext4: an inode per 4 KiB below 512 MiB, per 16 KiB above; at least 4096. */
#define SMALL_BYTES	      (512ULL << 20)
#define BYTES_PER_INODE_SMALL 4096
#define BYTES_PER_INODE	      16384
#define MIN_INODES	      4096
/* Another run may take the free loop device first: ask again this many times. */
#define LOOP_TRIES 16
/* How deep removal descends before it moves a directory up (a tree may be deeper than fds). */
#define REMOVE_DEPTH 64

struct sr_disk {
	enum sr_disk_kind kind;
	enum sr_enforce enforced;
	char reason[SR_ERROR_MSG_MAX + 128];
	int root;  /* ext4: the detached mount; tmpfs: PID 1's O_PATH root; dir: the directory */
	char *dir; /* dir: flock()ed (root) while the sandbox lives; the next run removes an
		      unlocked one */
};

uint64_t sr_disk_inodes(uint64_t bytes)
{
	uint64_t n = bytes / (bytes < SMALL_BYTES ? BYTES_PER_INODE_SMALL : BYTES_PER_INODE);

	if (bytes == 0)
		return 0;
	return n < MIN_INODES ? MIN_INODES : n;
}

const char *sr_disk_kind_to_string(enum sr_disk_kind k)
{
	static const char *const names[_SR_DISK_KIND_MAX] = {
	    [SR_DISK_TMPFS] = "tmpfs",
	    [SR_DISK_EXT4] = "ext4 image",
	    [SR_DISK_DIR] = "host directory",
	};

	return (unsigned)k < _SR_DISK_KIND_MAX ? names[k] : "?";
}

/* Opens a directory under dir without following a link, making it readable first if need be. */
static int open_subdir(int dir, const char *name)
{
	int fd = openat(dir, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	char proc[64];

	if (fd >= 0 || errno != EACCES)
		return fd;
	/* The agent's 0000 directory: ours (or root's) to open up, through its O_PATH fd. */
	fd = openat(dir, name, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return -1;
	snprintf(proc, sizeof(proc), "/proc/self/fd/%d", fd);
	if (chmod(proc, 0700) < 0) {
		close(fd);
		return -1;
	}
	close(fd);
	return openat(dir, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
}

/*
 * Removes what is in dir. Never through a link: unlinkat() removes a link
 * itself, and a directory is opened with O_NOFOLLOW. One deeper than
 * REMOVE_DEPTH is moved to top and taken from there, so no depth the
 * agent made needs more fds or stack than that.
 */
static void remove_contents(int top, int dir, int depth, unsigned *seq)
{
	DIR *d;
	struct dirent *de;
	/* A new open file: a dup() would share (and move) the readdir position of the original. */
	int dup_fd = openat(dir, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);

	if (dup_fd < 0 || !(d = fdopendir(dup_fd))) {
		sr_closep(&dup_fd);
		return;
	}
	while ((de = readdir(d))) {
		char flat[32];
		int sub;

		if (sr_streq(de->d_name, ".") || sr_streq(de->d_name, ".."))
			continue;
		/* An empty directory (most of them: tmp, home, ...) goes in one call. */
		if (unlinkat(dir, de->d_name, de->d_type == DT_DIR ? AT_REMOVEDIR : 0) == 0)
			continue;
		if (de->d_type == DT_DIR && errno == ENOTEMPTY)
			errno = EISDIR;
		else if (unlinkat(dir, de->d_name, 0) == 0)
			continue;
		if (errno == EACCES || errno == EPERM) {
			/* A directory of the agent's without write permission: ours to change. */
			(void)fchmod(dir, 0700);
			if (unlinkat(dir, de->d_name, 0) == 0)
				continue;
		}
		if (errno != EISDIR && errno != EPERM)
			continue;
		if (depth >= REMOVE_DEPTH) {
			snprintf(flat, sizeof(flat), ".sr-flat-%u", (*seq)++);
			(void)renameat(dir, de->d_name, top, flat);
			continue;
		}
		sub = open_subdir(dir, de->d_name);
		if (sub < 0)
			continue;
		remove_contents(top, sub, depth + 1, seq);
		close(sub);
		(void)unlinkat(dir, de->d_name, AT_REMOVEDIR);
	}
	closedir(d);
}

/* Removes the tree at path (whose parent is ours), however deep and whatever its modes. */
static void remove_tree(const char *path)
{
	int fd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	unsigned seq = 0;

	if (fd < 0) {
		(void)unlink(path);
		return;
	}
	/* Each pass takes what fits in REMOVE_DEPTH; what was moved up goes in the next. */
	for (int pass = 0; pass < 4096 && rmdir(path) < 0 && errno == ENOTEMPTY; pass++)
		remove_contents(fd, fd, 0, &seq);
	close(fd);
}

/*
 * Blocks in use under dir (st_blocks), depth first with a stack of open
 * directories; -1 past max_entries of them (0: no bound).
 */
static int64_t tree_bytes(int dir, size_t max_entries)
{
	size_t entries = 0;
	DIR *stack[512];
	size_t n = 0;
	int64_t total = 0;
	int fd = openat(dir, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);

	if (fd < 0 || !(stack[n] = fdopendir(fd))) {
		sr_closep(&fd);
		return -1;
	}
	n++;
	while (n > 0) {
		struct dirent *de = readdir(stack[n - 1]);
		struct stat st;

		if (!de) {
			closedir(stack[--n]);
			continue;
		}
		if (sr_streq(de->d_name, ".") || sr_streq(de->d_name, ".."))
			continue;
		if (max_entries && ++entries > max_entries) {
			total = -1;
			while (n > 0)
				closedir(stack[--n]);
			break;
		}
		if (fstatat(dirfd(stack[n - 1]), de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0)
			continue;
		total += (int64_t)st.st_blocks * 512;
		if (!S_ISDIR(st.st_mode) || n == SR_ARRAY_SIZE(stack))
			continue;
		fd = openat(dirfd(stack[n - 1]), de->d_name,
			    O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (fd >= 0 && !(stack[n] = fdopendir(fd)))
			close(fd);
		else if (fd >= 0)
			n++;
	}
	return total;
}

/*
 * Directories of sandboxes that did not end cleanly (their run was
 * killed): a directory whose lock nobody holds, as for cgroups
 * (docs/limits.md). The lock is a flock() of the directory itself.
 */
static void remove_stale(const char *disks)
{
	DIR *d = opendir(disks);
	struct dirent *de;

	if (!d)
		return;
	while ((de = readdir(d))) {
		_cleanup_free_ char *tree = NULL;
		_cleanup_close_ int fd = -1;
		const char *id = de->d_name;
		struct stat st;

		/* ".new-ID": one being made (not yet locked), or left by a run killed then. */
		if (strncmp(id, ".new-", 5) == 0)
			id += 5;
		if (strlen(id) != 32 || strspn(id, "0123456789abcdef") != 32)
			continue;
		fd = openat(dirfd(d), de->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (fd < 0 || flock(fd, LOCK_EX | LOCK_NB) < 0 || fstat(fd, &st) < 0 ||
		    (id != de->d_name && st.st_mtime > time(NULL) - 60) ||
		    asprintf(&tree, "%s/%s", disks, de->d_name) < 0)
			continue;
		remove_tree(tree);
	}
	closedir(d);
}

static int prepare_dir(struct sr_disk *d, const char *disks, const char *id, uid_t uid, gid_t gid,
		       struct sr_error *err)
{
	_cleanup_free_ char *made = NULL;

	if (asprintf(&d->dir, "%s/%s", disks, id) < 0 ||
	    asprintf(&made, "%s/.new-%s", disks, id) < 0)
		return sr_error_errno(err, -ENOMEM, "disk");
	/*
	 * Locked while the sandbox lives: what a killed run left is the next
	 * one's to remove. Made under another name and renamed once locked,
	 * so that no run takes it for a stale one in between.
	 */
	if (mkdir(made, 0700) < 0)
		return sr_error_errno(err, sr_negerrno(), "disk %s", made);
	d->root = open(made, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	/* A root caller's sandbox user is another host uid: the directory is its. */
	if (d->root < 0 || flock(d->root, LOCK_EX | LOCK_NB) < 0 ||
	    (geteuid() == 0 && fchown(d->root, uid, gid) < 0) || rename(made, d->dir) < 0) {
		int e = sr_negerrno();

		(void)rmdir(made);
		sr_closep(&d->root);
		d->root = -1;
		free(steal_pointer(&d->dir));
		return sr_error_errno(err, e, "disk %s", made);
	}
	d->kind = SR_DISK_DIR;
	return 0;
}

static const char *const mke2fs_paths[] = {"/usr/sbin/mke2fs", "/sbin/mke2fs", NULL};

/* Runs mke2fs on the (empty, sized) file at path: the template every ext4 disk is copied from. */
static int run_mke2fs(const char *path, uint64_t inodes, struct sr_error *err)
{
	char n_inodes[32];
	const char *mke2fs = NULL;
	char *const env[] = {NULL};
	posix_spawn_file_actions_t fa;
	pid_t pid;
	int st, k;

	for (size_t i = 0; mke2fs_paths[i] && !mke2fs; i++)
		if (access(mke2fs_paths[i], X_OK) == 0)
			mke2fs = mke2fs_paths[i];
	if (!mke2fs)
		return sr_error_msg(err, -ENOENT, "no mke2fs (e2fsprogs)");
	snprintf(n_inodes, sizeof(n_inodes), "%llu", (unsigned long long)inodes);
	/*
	 * No journal (the disk is thrown away with the sandbox, and its
	 * writes are fewer), no reserved blocks, no room to grow; inode
	 * tables left for the kernel, which mounts with noinit_itable.
	 */
	char *const argv[] = {(char *)mke2fs,
			      "-q",
			      "-F",
			      "-t",
			      "ext4",
			      "-b",
			      "4096",
			      "-I",
			      "256",
			      "-m",
			      "0",
			      "-N",
			      n_inodes,
			      "-O",
			      "^has_journal,^resize_inode",
			      "-E",
			      "lazy_itable_init=1,nodiscard",
			      (char *)path,
			      NULL};

	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
	posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
	posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
	k = posix_spawn(&pid, mke2fs, &fa, NULL, argv, env);
	posix_spawn_file_actions_destroy(&fa);
	if (k != 0)
		return sr_error_errno(err, -k, "%s", mke2fs);
	if (SR_RETRY(waitpid(pid, &st, 0)) < 0)
		return sr_error_errno(err, sr_negerrno(), "%s", mke2fs);
	if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
		return sr_error_msg(err, -EIO, "%s failed (status %d)", mke2fs,
				    WIFEXITED(st) ? WEXITSTATUS(st) : -1);
	return 0;
}

/* The cached empty filesystem of this size (made once, then kept in the data directory). */
static int open_template(const char *disks, uint64_t bytes, uint64_t inodes, struct sr_error *err)
{
	_cleanup_free_ char *path = NULL, *tmp = NULL;
	_cleanup_close_ int fd = -1;
	int k;

	if (asprintf(&path, "%s/ext4-%llu-%llu.img", disks, (unsigned long long)bytes,
		     (unsigned long long)inodes) < 0 ||
	    asprintf(&tmp, "%s/.ext4-%d.tmp", disks, (int)getpid()) < 0)
		return sr_error_errno(err, -ENOMEM, "disk");
	fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (fd >= 0)
		return steal_fd(&fd);
	/* Made under another name and renamed: a concurrent run never sees half of it. */
	fd = open(tmp, O_RDWR | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0 || ftruncate(fd, (off_t)bytes) < 0)
		return sr_error_errno(err, sr_negerrno(), "disk template %s", tmp);
	k = run_mke2fs(tmp, inodes, err);
	if (k >= 0 && rename(tmp, path) < 0)
		k = sr_error_errno(err, sr_negerrno(), "disk template %s", path);
	if (k < 0) {
		(void)unlink(tmp);
		return k;
	}
	return steal_fd(&fd);
}

/* An unnamed copy of the template: only its written extents (~0.2 MB for 10G). */
static int copy_template(const char *disks, int tpl, uint64_t bytes, struct sr_error *err)
{
	_cleanup_close_ int img = open(disks, O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
	off_t pos = 0;

	if (img < 0 || ftruncate(img, (off_t)bytes) < 0)
		return sr_error_errno(err, sr_negerrno(), "disk image in %s", disks);
	for (;;) {
		off_t data = lseek(tpl, pos, SEEK_DATA), hole;
		loff_t in, out;

		if (data < 0)
			break; /* ENXIO: no data past pos */
		hole = lseek(tpl, data, SEEK_HOLE);
		if (hole < 0)
			return sr_error_errno(err, sr_negerrno(), "disk template");
		in = out = data;
		while (in < hole) {
			ssize_t n = copy_file_range(tpl, &in, img, &out, (size_t)(hole - in), 0);

			if (n <= 0)
				return sr_error_errno(err, n < 0 ? sr_negerrno() : -EIO,
						      "disk image: copy");
		}
		pos = hole;
	}
	return steal_fd(&img);
}

/* A free loop device bound to img: direct I/O (no second page cache), gone with its last user. */
static int attach_loop(int img, char *dev, size_t len, struct sr_error *err)
{
	_cleanup_close_ int ctl = open("/dev/loop-control", O_RDWR | O_CLOEXEC);
	struct loop_config cfg = {
	    .fd = (uint32_t)img,
	    .block_size = 4096,
	    .info = {.lo_flags = LO_FLAGS_AUTOCLEAR | LO_FLAGS_DIRECT_IO},
	};

	if (ctl < 0)
		return sr_error_errno(err, sr_negerrno(), "/dev/loop-control");
	for (int i = 0; i < LOOP_TRIES; i++) {
		int nr = ioctl(ctl, LOOP_CTL_GET_FREE);
		int fd;

		if (nr < 0)
			return sr_error_errno(err, sr_negerrno(), "a free loop device");
		snprintf(dev, len, "/dev/loop%d", nr);
		fd = open(dev, O_RDWR | O_CLOEXEC);
		if (fd < 0)
			return sr_error_errno(err, sr_negerrno(), "%s", dev);
		if (ioctl(fd, LOOP_CONFIGURE, &cfg) == 0)
			return fd;
		close(fd);
		if (errno != EBUSY)
			return sr_error_errno(err, sr_negerrno(), "%s: configure", dev);
	}
	return sr_error_msg(err, -EBUSY, "no free loop device after %d tries", LOOP_TRIES);
}

static int mount_ext4(const char *dev, uid_t uid, gid_t gid, struct sr_error *err)
{
	_cleanup_close_ int fs = fsopen("ext4", FSOPEN_CLOEXEC), mnt = -1;

	/*
	 * noinit_itable: the kernel would otherwise zero the inode tables in
	 * the background; nobarrier: no flush of the host's disk for a
	 * filesystem thrown away with the sandbox.
	 */
	if (fs < 0 || fsconfig(fs, FSCONFIG_SET_STRING, "source", dev, 0) < 0 ||
	    fsconfig(fs, FSCONFIG_SET_FLAG, "noinit_itable", NULL, 0) < 0 ||
	    fsconfig(fs, FSCONFIG_SET_FLAG, "nobarrier", NULL, 0) < 0 ||
	    fsconfig(fs, FSCONFIG_CMD_CREATE, NULL, NULL, 0) < 0)
		return sr_error_errno(err, sr_negerrno(), "mount ext4 on %s", dev);
	mnt = fsmount(fs, FSMOUNT_CLOEXEC, MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV);
	if (mnt < 0)
		return sr_error_errno(err, sr_negerrno(), "mount ext4 on %s", dev);
	if (fchownat(mnt, "", uid, gid, AT_EMPTY_PATH) < 0)
		return sr_error_errno(err, sr_negerrno(), "ext4 on %s: chown", dev);
	return steal_fd(&mnt);
}

/* PATH is on a filesystem in memory (tmpfs, ramfs). */
static bool in_memory(const char *path)
{
	struct statfs sf;

	return statfs(path, &sf) == 0 && (sf.f_type == TMPFS_MAGIC || sf.f_type == RAMFS_MAGIC);
}

/* The ext4 image (docs/limits.md); -errno and why when this host or caller cannot have one. */
static int prepare_ext4(struct sr_disk *d, const char *disks, uint64_t bytes, uid_t uid, gid_t gid,
			struct sr_error *err)
{
	_cleanup_close_ int tpl = -1, img = -1, loop = -1;
	/* A small ext4 keeps room beside its inode tables: they take at most a quarter of it. */
	uint64_t inodes =
	    sr_disk_inodes(bytes) < bytes / 1024 ? sr_disk_inodes(bytes) : bytes / 1024;
	char dev[64];
	int k;

	if (bytes == 0)
		return sr_error_msg(err, -EINVAL, "no disk limit to size an image by");
	if (geteuid() != 0)
		return sr_error_msg(err, -EPERM,
				    "an ext4 image needs root: a loop device and a mount of ext4 "
				    "are not to be had in a user namespace");
	if (in_memory(disks))
		return sr_error_msg(err, -EXDEV,
				    "%s is in memory (tmpfs): an image there is no disk", disks);
	if ((tpl = open_template(disks, bytes, inodes, err)) < 0 ||
	    (img = copy_template(disks, tpl, bytes, err)) < 0 ||
	    (loop = attach_loop(img, dev, sizeof(dev), err)) < 0)
		return tpl < 0 ? tpl : img < 0 ? img : loop;
	k = mount_ext4(dev, uid, gid, err);
	if (k < 0)
		return k;
	d->root = k;
	d->kind = SR_DISK_EXT4;
	return 0;
}

int sr_disk_prepare(const struct sr_config *c, const char *id, uid_t host_uid, gid_t host_gid,
		    bool memory_counted, struct sr_disk **ret, struct sr_error *err)
{
	_cleanup_free_ char *disks = NULL;
	struct sr_disk *d = calloc(1, sizeof(*d));
	struct sr_error why = {0};
	int k;

	if (!d)
		return sr_error_errno(err, -ENOMEM, "disk");
	*d = (struct sr_disk){.root = -1, .kind = SR_DISK_TMPFS};
	if (c->disk_backing == SR_DISK_BACKING_MEMORY) {
		snprintf(d->reason, sizeof(d->reason), "disk-backing = memory");
		goto done;
	}
	if (c->disk_backing == SR_DISK_BACKING_AUTO && !memory_counted) {
		snprintf(d->reason, sizeof(d->reason),
			 "no cgroup counts its pages against the memory limit here");
		goto done;
	}
	k = sr_data_dir("disks", &disks, &why);
	/*
	 * A data directory in memory has no disk to give: a directory there
	 * is memory too, and nothing bounds it. auto keeps the tmpfs, which
	 * the limit bounds.
	 */
	if (k >= 0 && c->disk_backing == SR_DISK_BACKING_AUTO && in_memory(disks)) {
		snprintf(d->reason, sizeof(d->reason),
			 "%s is in memory (tmpfs): a disk there would be memory too", disks);
		goto done;
	}
	if (k >= 0) {
		remove_stale(disks);
		if (prepare_ext4(d, disks, c->disk_bytes, host_uid, host_gid, &why) >= 0)
			goto done;
	}
	/* An unenforced directory is no better than tmpfs to --strict: auto takes tmpfs then. */
	if (k >= 0 && c->disk_backing == SR_DISK_BACKING_AUTO && c->strict && c->disk_bytes) {
		snprintf(d->reason, sizeof(d->reason),
			 "--strict, and no enforced disk on the host's disk here (%s)", why.msg);
		goto done;
	}
	if (k >= 0) {
		struct sr_error derr = {0};

		snprintf(d->reason, sizeof(d->reason), "%s", why.msg);
		k = prepare_dir(d, disks, id, host_uid, host_gid, &derr);
		if (k >= 0)
			goto done;
		why = derr;
	}
	/*
	 * No directory for it (no data directory, the sandbox user's id not
	 * ours to give it to, as in a container's user namespace): asked for
	 * by name, that fails; auto keeps the tmpfs.
	 */
	if (c->disk_backing == SR_DISK_BACKING_DISK) {
		*err = why;
		sr_disk_free(d);
		return sr_error_prefix(err, "--disk-backing disk");
	}
	snprintf(d->reason, sizeof(d->reason), "no disk on the host's for it (%s)", why.msg);
done:
	d->enforced = c->disk_bytes == 0	 ? SR_ENFORCE_NONE
		      : d->kind == SR_DISK_TMPFS ? SR_ENFORCE_TMPFS
		      : d->kind == SR_DISK_EXT4	 ? SR_ENFORCE_EXT4
						 : SR_ENFORCE_NONE;
	*ret = d;
	return 0;
}

enum sr_disk_kind sr_disk_kind(const struct sr_disk *d)
{
	return d ? d->kind : SR_DISK_TMPFS;
}

enum sr_enforce sr_disk_enforced(const struct sr_disk *d)
{
	return d ? d->enforced : SR_ENFORCE_NONE;
}

const char *sr_disk_reason(const struct sr_disk *d)
{
	return d ? d->reason : "";
}

int sr_disk_tree(const struct sr_disk *d)
{
	return d && d->kind == SR_DISK_EXT4 ? d->root : -1;
}

const char *sr_disk_dir(const struct sr_disk *d)
{
	return d && d->kind == SR_DISK_DIR ? d->dir : NULL;
}

void sr_disk_set_root(struct sr_disk *d, int fd)
{
	if (!d || d->kind != SR_DISK_TMPFS || d->root >= 0) {
		sr_closep(&fd);
		return;
	}
	d->root = fd;
}

int64_t sr_disk_used(struct sr_disk *d, size_t max_entries)
{
	struct statfs sf;

	if (!d || d->root < 0)
		return -1;
	if (d->kind == SR_DISK_DIR)
		return tree_bytes(d->root, max_entries);
	/* An unsized tmpfs (--disk 0) keeps no count. */
	if (fstatfs(d->root, &sf) < 0 || sf.f_blocks == 0)
		return -1;
	return (int64_t)(sf.f_blocks - sf.f_bfree) * (int64_t)sf.f_bsize;
}

void sr_disk_free(struct sr_disk *d)
{
	if (!d)
		return;
	/*
	 * The last reference to the ext4 mount: the loop device and the image
	 * go with it. A directory's lock goes after its removal.
	 */
	if (!d->dir)
		sr_closep(&d->root);
	if (d->dir)
		remove_tree(d->dir);
	sr_closep(&d->root);
	free(d->dir);
	free(d);
}
