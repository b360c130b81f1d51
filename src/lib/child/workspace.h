/* SPDX-License-Identifier: MIT */
/* /workspace in the child (mounts.c builds the rest of the root). */
#pragma once

#include "setup.h"

/*
 * Mounts /workspace in the new root (root: its fd; data: the disk's):
 * an overlay over ws (the agent's directory, or -1), an archive extracted
 * onto the disk, or the disk's empty workspace directory; then copies an
 * executable-file agent in. Keeps the upper layer open in
 * p->sources.upper for the changes worker.
 */
int sr_workspace_mount(struct sr_plan *p, int ws, int root, int data, struct sr_error *err);
