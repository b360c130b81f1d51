/* SPDX-License-Identifier: MIT */
#include "userns.h"
#include "hostpath.h"
#include "setup.h"
#include "state.h"
#include "util.h"

#include <fcntl.h>
#include <grp.h>
#include <linux/sched.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <sys/file.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>

/* Debian's overflow ("nobody") id: owns no files a sandbox could reach. */
#define SR_FALLBACK_HOST_ID 65534
/* Root's living sandboxes with a host uid of their own, at most. */
#define SR_ROOT_SLOTS_MAX 1024

/* user's first subordinate id in path and how many follow it; false: none. */
static bool subid_range(const char *path, const char *user, unsigned *ret_start,
			unsigned *ret_count)
{
	_cleanup_fclose_ FILE *f = fopen(path, "re");
	char line[256];
	size_t ul = strlen(user);

	if (!f)
		return false;
	while (fgets(line, sizeof(line), f)) {
		unsigned long start, count;

		if (strncmp(line, user, ul) != 0 || line[ul] != ':')
			continue;
		if (sscanf(line + ul + 1, "%lu:%lu", &start, &count) == 2 && count > 0 &&
		    start > 0 && start + count <= 0xfffffffful) {
			*ret_start = (unsigned)start;
			*ret_count =
			    count > SR_ROOT_SLOTS_MAX ? SR_ROOT_SLOTS_MAX : (unsigned)count;
			return true;
		}
	}
	return false;
}

/*
 * A slot of root's subordinate ranges no other living sandbox holds: the
 * lowest whose lock file in <state>/uids we can lock, held (*ret_lock)
 * for as long as the sandbox lives. -1 where there is none to take.
 */
static int take_slot(unsigned count, int *ret_lock)
{
	_cleanup_free_ char *state = NULL, *dir = NULL;
	struct sr_error err = {0};

	if (sr_state_dir(&state, &err) < 0 || asprintf(&dir, "%s/uids", state) < 0)
		return -1;
	if (mkdir(dir, 0700) < 0 && errno != EEXIST)
		return -1;
	for (unsigned k = 0; k < count; k++) {
		char name[16];
		_cleanup_close_ int dfd = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
		int fd;

		snprintf(name, sizeof(name), "%u", k);
		fd = dfd < 0 ? -1
			     : openat(dfd, name, O_RDONLY | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
		if (fd < 0)
			return -1;
		if (flock(fd, LOCK_EX | LOCK_NB) == 0) {
			*ret_lock = fd;
			return (int)k;
		}
		close(fd);
	}
	return -1;
}

void sr_userns_host_ids(uid_t caller_uid, gid_t caller_gid, uid_t *ret_uid, gid_t *ret_gid,
			int *ret_lock)
{
	*ret_lock = -1;
	if (caller_uid != 0) {
		*ret_uid = caller_uid;
		*ret_gid = caller_gid;
		return;
	}
	sr_userns_root_ids("/etc/subuid", "/etc/subgid", ret_uid, ret_gid, ret_lock);
}

void sr_userns_root_ids(const char *subuid, const char *subgid, uid_t *ret_uid, gid_t *ret_gid,
			int *ret_lock)
{
	unsigned ustart, ucount, gstart, gcount;
	int slot;

	*ret_lock = -1;
	/*
	 * Never map host root: the agent would own every root-owned file it can
	 * reach. A subordinate id of root's is an id nothing else uses; each
	 * living sandbox of root's gets one of its own, so that the per-user
	 * counts of the kernel (processes, inotify, message queues, pipe
	 * buffers) of one sandbox are not another's. Without a range, every
	 * sandbox shares the overflow id.
	 */
	if (!subid_range(subuid, "root", &ustart, &ucount) ||
	    !subid_range(subgid, "root", &gstart, &gcount)) {
		*ret_uid = SR_FALLBACK_HOST_ID;
		*ret_gid = SR_FALLBACK_HOST_ID;
		return;
	}
	slot = take_slot(ucount < gcount ? ucount : gcount, ret_lock);
	if (slot < 0)
		slot = 0; /* every slot taken: share the first, as before */
	*ret_uid = ustart + (unsigned)slot;
	*ret_gid = gstart + (unsigned)slot;
}

int sr_userns_map_text(unsigned inside, unsigned outside, char *buf, size_t len)
{
	int n = snprintf(buf, len, "%u %u 1\n", inside, outside);

	return n < 0 || (size_t)n >= len ? -ENOBUFS : n;
}

/* pid: a number, or "self". */
static int write_proc_file(const char *pid, const char *name, const char *text,
			   struct sr_error *err)
{
	char path[64];
	_cleanup_close_ int fd = -1;
	size_t len = strlen(text);

	snprintf(path, sizeof(path), "/proc/%s/%s", pid, name);
	fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return sr_error_errno(err, sr_negerrno(), "open %s", path);
	/* The kernel takes a map in one write(2) or not at all. */
	if (SR_RETRY(write(fd, text, len)) != (ssize_t)len)
		return sr_error_errno(err, sr_negerrno(), "write %s", path);
	return 0;
}

/* setgroups (if deny), uid_map and gid_map of pid: one uid and one gid mapped. */
static int write_maps2(const char *pid, bool deny_setgroups, unsigned inside_uid,
		       unsigned inside_gid, uid_t outside_uid, gid_t outside_gid,
		       struct sr_error *err)
{
	char map[64];
	int r;

	if (deny_setgroups) {
		r = write_proc_file(pid, "setgroups", "deny", err);
		if (r < 0)
			return r;
	}
	r = sr_userns_map_text(inside_uid, outside_uid, map, sizeof(map));
	if (r < 0)
		return sr_error_errno(err, r, "uid map");
	r = write_proc_file(pid, "uid_map", map, err);
	if (r < 0)
		return r;
	r = sr_userns_map_text(inside_gid, outside_gid, map, sizeof(map));
	if (r < 0)
		return sr_error_errno(err, r, "gid map");
	return write_proc_file(pid, "gid_map", map, err);
}

/* The same id inside for the uid and the gid. */
static int write_maps(const char *pid, bool deny_setgroups, unsigned inside, uid_t outside_uid,
		      gid_t outside_gid, struct sr_error *err)
{
	return write_maps2(pid, deny_setgroups, inside, inside, outside_uid, outside_gid, err);
}

int sr_userns_parent(pid_t child, bool nested, uid_t host_uid, gid_t host_gid, struct sr_error *err)
{
	char pid[16];

	snprintf(pid, sizeof(pid), "%d", (int)child);
	/*
	 * Without CAP_SETGID over the parent namespace, setgroups must be
	 * denied before gid_map can be written (CVE-2014-8989: dropping groups
	 * could grant access that a negative group ACL denied). Root keeps it
	 * allowed so the child can drop root's supplementary groups, which the
	 * kernel would otherwise still honour on host files.
	 */
	return write_maps(pid, geteuid() != 0, nested ? 0 : SR_SANDBOX_UID, host_uid, host_gid,
			  err);
}

int sr_userns_child(bool drop_groups, bool nested, struct sr_error *err)
{
	const unsigned id = nested ? 0 : SR_SANDBOX_UID;

	/*
	 * The namespace's capabilities survive these calls: they are cleared
	 * only when every uid changes away from the namespace's uid 0, and
	 * here uid 0 is either not mapped at all or the id we change to.
	 */
	/*
	 * A root caller's supplementary groups (0 among them) would still be
	 * honoured on host files: they must go. An unprivileged caller cannot
	 * drop its own (setgroups is denied) and they grant nothing new.
	 */
	if (drop_groups && setgroups(0, NULL) < 0)
		return sr_error_errno(err, sr_negerrno(), "setgroups");
	if (setresgid(id, id, id) < 0)
		return sr_error_errno(err, sr_negerrno(), "setresgid %u", id);
	if (setresuid(id, id, id) < 0)
		return sr_error_errno(err, sr_negerrno(), "setresuid %u", id);
	return 0;
}

int sr_userns_enter_inner(struct sr_error *err)
{
	int r;

	/*
	 * A non-dumpable process's /proc/self files belong to host root, and
	 * our maps could not be written: dumpable for the three writes only.
	 * PID 1 is still alone in the sandbox. Attaching from another user
	 * namespace takes CAP_SYS_PTRACE over ours, so only the caller's own
	 * host processes, host root, and this sandbox's helper (which has seen
	 * no packet of the agent's yet) could, and all of them could anyway.
	 */
	if (prctl(PR_SET_DUMPABLE, 1) < 0)
		return sr_error_errno(err, sr_negerrno(), "inner user namespace: dumpable");
	/*
	 * A new IPC namespace with it: the kernel gives the IPC sysctls
	 * (kernel.msg*, sem, shm*, fs.mqueue.*) to the uid 0 of the user
	 * namespace owning the IPC namespace, by uid rather than capability,
	 * and the outer one's uid 0 is the agent's own host id. Owned by the
	 * inner namespace, they belong to its unmapped uid 0. Nothing of IPC
	 * was made during the set-up.
	 */
	if (unshare(CLONE_NEWUSER | CLONE_NEWIPC) < 0) {
		r = sr_error_errno(err, sr_negerrno(), "inner user namespace");
		goto out;
	}
	/*
	 * The one mapping a namespace's owner may write for itself: our own
	 * ids (0 outside), setgroups denied. Nothing maps uid 0 in here.
	 */
	r = write_maps("self", true, SR_SANDBOX_UID, 0, 0, err);
out:
	if (prctl(PR_SET_DUMPABLE, 0) < 0 && r >= 0)
		r = sr_error_errno(err, sr_negerrno(), "inner user namespace: not dumpable");
	if (r < 0)
		return r;
	if (setresgid(SR_SANDBOX_GID, SR_SANDBOX_GID, SR_SANDBOX_GID) < 0 ||
	    setresuid(SR_SANDBOX_UID, SR_SANDBOX_UID, SR_SANDBOX_UID) < 0)
		return sr_error_errno(err, sr_negerrno(), "inner user namespace: become %d",
				      SR_SANDBOX_UID);
	return 0;
}

/*
 * A user namespace that maps from_uid and from_gid to the host ids, held
 * by a child that only waits: an idmapped mount takes the mapping of a
 * namespace, which must exist while the mount is made. Returns an fd of
 * the namespace.
 */
static int open_mapping_ns(uid_t from_uid, gid_t from_gid, uid_t host_uid, gid_t host_gid,
			   struct sr_error *err)
{
	struct clone_args args = {.flags = CLONE_NEWUSER, .exit_signal = SIGCHLD};
	char path[64];
	int pipefd[2], fd = -1, r = 0;
	long pid;

	if (pipe2(pipefd, O_CLOEXEC) < 0)
		return sr_error_errno(err, sr_negerrno(), "idmap: pipe");
	pid = syscall(SYS_clone3, &args, sizeof(args));
	if (pid == 0) {
		char c;

		close(pipefd[1]);
		(void)!read(pipefd[0], &c, 1);
		_exit(0);
	}
	close(pipefd[0]);
	if (pid < 0) {
		close(pipefd[1]);
		return sr_error_errno(err, sr_negerrno(), "idmap: user namespace");
	}
	snprintf(path, sizeof(path), "%ld", pid);
	r = write_maps2(path, false, from_uid, from_gid, host_uid, host_gid, err);
	if (r < 0)
		goto out;
	snprintf(path, sizeof(path), "/proc/%ld/ns/user", pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		r = sr_error_errno(err, sr_negerrno(), "idmap: open %s", path);
out:
	close(pipefd[1]);
	waitpid((pid_t)pid, NULL, 0);
	if (r < 0 && err->msg[0] == '\0')
		sr_error_errno(err, r, "idmap: map");
	return r < 0 ? r : fd;
}

int sr_userns_idmapped_tree(int fd, const char *what, uid_t from_uid, gid_t from_gid,
			    uid_t host_uid, gid_t host_gid, bool writable, int *ret_fd,
			    struct sr_error *err)
{
	_cleanup_close_ int ns = -1, tree = -1;
	struct mount_attr ma = {
	    .attr_set = MOUNT_ATTR_IDMAP | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV |
			(writable ? 0 : MOUNT_ATTR_RDONLY),
	};

	ns = open_mapping_ns(from_uid, from_gid, host_uid, host_gid, err);
	if (ns < 0)
		return ns;
	/*
	 * The top mount only, as the workspace has always been: an idmap
	 * needs every mount of a recursive clone to support one.
	 */
	tree = open_tree(fd, "", AT_EMPTY_PATH | OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC);
	if (tree < 0)
		return sr_error_errno(err, sr_negerrno(), "idmap %s: open_tree", what);
	ma.userns_fd = (uint64_t)ns;
	if (mount_setattr(tree, "", AT_EMPTY_PATH, &ma, sizeof(ma)) < 0)
		return sr_error_errno(err, sr_negerrno(),
				      "idmap %s (the filesystem must support idmapped mounts)",
				      what);
	*ret_fd = steal_fd(&tree);
	return 0;
}

int sr_userns_bind_trees(const struct sr_config *c, const struct sr_strv *sources, uid_t host_uid,
			 gid_t host_gid, int **ret_trees, struct sr_error *err)
{
	_cleanup_free_ int *trees = calloc(c->n_binds + 1, sizeof(*trees));
	int k = 0;

	if (!trees)
		return sr_error_errno(err, -ENOMEM, "bind");
	for (size_t i = 0; i < c->n_binds; i++)
		trees[i] = -1;
	for (size_t i = 0; k >= 0 && i < c->n_binds; i++) {
		const char *src = sources->items[i];
		_cleanup_close_ int fd = -1;
		struct stat st;

		if (!c->binds[i].writable)
			continue;
		/*
		 * Resolved with no link left (hostpath.h): one there now was put
		 * since, and is not followed, as the child opens a bind's source
		 * (mounts-sources.c), which refused such a link already: root no
		 * longer clones what it leads to either.
		 */
		fd = sr_openat2(AT_FDCWD, src, O_PATH | O_CLOEXEC,
				RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS);
		if (fd < 0 || fstat(fd, &st) < 0) {
			int e = fd < 0 ? fd : sr_negerrno();

			k = sr_error_errno(err, e, "bind %s%s", c->binds[i].src,
					   e == -ELOOP ? " (a symbolic link was put on its way "
							 "while the sandbox started)"
						       : "");
			break;
		}
		/*
		 * Open to every user (/tmp-like, o+w): anyone may write there,
		 * and the sandbox does as its own unprivileged uid.
		 */
		if (st.st_uid == 0 && S_ISDIR(st.st_mode) && (st.st_mode & S_IWOTH))
			continue;
		if (st.st_uid == 0) {
			k = sr_error_msg(
			    err, -EPERM,
			    "bind %s: writable, but owned by root: the sandbox never "
			    "writes as host root (its user is host uid %u); give it to "
			    "the user who should own what the sandbox writes there "
			    "(chown USER %s), or bind it read-only (--ro-bind)",
			    c->binds[i].src, (unsigned)host_uid, c->binds[i].src);
			break;
		}
		k = sr_hostpath_owner_held(fd, st.st_uid, "bind", src, err);
		if (k < 0)
			break;
		k = sr_userns_idmapped_tree(fd, src, st.st_uid, st.st_gid, host_uid, host_gid, true,
					    &trees[i], err);
		if (k < 0)
			sr_error_prefix(err, "bind %s", c->binds[i].src);
	}
	if (k < 0) {
		for (size_t i = 0; i < c->n_binds; i++)
			sr_closep(&trees[i]);
		return k;
	}
	*ret_trees = steal_pointer(&trees);
	return 0;
}
