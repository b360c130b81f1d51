/* SPDX-License-Identifier: MIT */
/* The sandbox's filesystem: built on tmpfs, entered with pivot_root. */
#pragma once

#include "setup.h"

/* Opens the sources of the filesystem (p->sources), as the caller. */
int sr_mounts_open_sources(struct sr_plan *p, struct sr_error *err);

/*
 * In the new mount namespace, after sr_mounts_open_sources: builds the root (read-only host
 * runtime, synthesized /etc, /proc with sensitive entries masked, minimal /dev, workspace overlay,
 * disk-limited tmpfs for /workspace's upper layer, /tmp and $HOME, extra binds), pivots into it and
 * detaches the host's tree. Leaves the cwd at /workspace.
 */
int sr_mounts_setup(struct sr_plan *p, struct sr_error *err);
