/* SPDX-License-Identifier: MIT */
/* The sandbox's filesystem: built on tmpfs, entered with pivot_root. */
#pragma once

#include "setup.h"

#include <stdint.h>

/* Where the new root is built: shadowing the host's /tmp is harmless in our own namespace. */
#define SR_NEWROOT "/tmp"

/* Opens the sources of the filesystem (p->sources), as the caller. */
int sr_mounts_open_sources(struct sr_plan *p, struct sr_error *err);

/*
 * In the new mount namespace, after sr_mounts_open_sources: builds the root (read-only host
 * runtime, synthesized /etc, /proc with sensitive entries masked, minimal /dev, workspace overlay,
 * disk-limited tmpfs for /workspace's upper layer, /tmp and $HOME, extra binds), pivots into it and
 * detaches the host's tree. Leaves the cwd at /workspace.
 */
int sr_mounts_setup(struct sr_plan *p, struct sr_error *err);

/*
 * Clones the mount tree at (src_dirfd, src_path) and attaches it at
 * (dst_dirfd, dst_path) with attr applied to every mount in it ("": the
 * fd itself); what names it in errors.
 */
int sr_mounts_bind_tree(int src_dirfd, const char *src_path, int dst_dirfd, const char *dst_path,
			uint64_t attr, const char *what, struct sr_error *err);
