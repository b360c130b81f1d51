/* SPDX-License-Identifier: MIT */
/*
 * The sandbox's disk: where everything the agent writes lives (the
 * workspace's upper layer, /tmp, $HOME, /dev/shm), bounded by --disk.
 * Host side; the child attaches what is prepared here (mounts.c).
 *
 * Strategies, the host deciding (docs/limits.md, "Disk"):
 *
 *   tmpfs  made by the child: the fastest start, enforced by its size=;
 *          its pages are memory, and count against --memory where a
 *          cgroup holds the sandbox.
 *   ext4   a sparse image file on the host's disk, formatted from a cached
 *          empty template, on a loop device, mounted here (a detached
 *          mount the child attaches): enforced by the filesystem's size,
 *          independent of --memory. Needs root: a loop device and a
 *          mount of ext4 are not to be had in a user namespace. Nothing
 *          outlives the sandbox: the image is an unnamed file, the loop
 *          device clears itself when the last mount of it goes.
 *   dir    a directory of the host's disk (the data directory's disks/):
 *          independent of --memory, but no rootless mechanism bounds its
 *          size (no user-namespace mount of a disk filesystem, no
 *          project quota without root), so the limit is not enforced.
 *
 * disk-backing = memory takes tmpfs; disk takes ext4, else dir; auto takes
 * tmpfs where nothing counts its pages against --memory (rlimits, no
 * memory limit), else as disk, except with --strict, where an enforced
 * tmpfs beats an unenforced directory.
 */
#pragma once

#include "config.h"
#include "log.h"
#include "result.h"

#include <stdint.h>
#include <sys/types.h>

enum sr_disk_kind {
	SR_DISK_TMPFS,
	SR_DISK_EXT4,
	SR_DISK_DIR,
	_SR_DISK_KIND_MAX,
};

struct sr_disk;

/*
 * Chooses the disk for c and prepares it for sandbox id, owned by the
 * sandbox user's host ids. memory_counted: a cgroup counts the sandbox's
 * memory (tmpfs pages would count against it). Never fails for a reason
 * a fallback covers; -errno for what nothing can (no data directory).
 */
int sr_disk_prepare(const struct sr_config *c, const char *id, uid_t host_uid, gid_t host_gid,
		    bool memory_counted, struct sr_disk **ret, struct sr_error *err);
enum sr_disk_kind sr_disk_kind(const struct sr_disk *d);
const char *sr_disk_kind_to_string(enum sr_disk_kind k);
/* How the limit is held: tmpfs, ext4, or none (a directory, or no limit asked). */
enum sr_enforce sr_disk_enforced(const struct sr_disk *d);
/* Why this strategy and not a better one (for -v, and the warning), or "". */
const char *sr_disk_reason(const struct sr_disk *d);
/* SR_DISK_EXT4: the detached mount for the child to attach; else -1. Still the disk's. */
int sr_disk_tree(const struct sr_disk *d);
/* SR_DISK_DIR: the directory; else NULL. */
const char *sr_disk_dir(const struct sr_disk *d);
/* SR_DISK_TMPFS: the root PID 1 handed over with READY (taken: closed with the disk). */
void sr_disk_set_root(struct sr_disk *d, int fd);
/*
 * Bytes in use on the disk now, -1 unknown; counted here, whether PID 1
 * lives or not. A directory is walked, file by file: -1 past max_entries
 * of them (0: no bound).
 */
int64_t sr_disk_used(struct sr_disk *d, size_t max_entries);
/* Closes the mount, removes the directory. NULL is fine. */
void sr_disk_free(struct sr_disk *d);

/* Inodes for a disk of bytes (as mke2fs sizes ext4; 0: unbounded): tmpfs's nr_inodes too. */
uint64_t sr_disk_inodes(uint64_t bytes);
