/* SPDX-License-Identifier: MIT */
/*
 * A workspace whose owner or group the sandbox cannot map, copied onto
 * the sandbox's disk to be the overlay's lower layer instead.
 *
 * overlayfs copies a file up to change it keeping its owner and group,
 * and refuses (EOVERFLOW, "Value too large for defined data type") where
 * either is not mapped in the user namespace of whoever mounted it: a
 * shared checkout of group "devs" in a setgid directory, run by a member
 * whose own group is another. An unprivileged caller can map only its own
 * uid and gid (an idmapped lower layer needs CAP_SYS_ADMIN over the
 * host's filesystem), so its files become the sandbox user's in a copy,
 * bounded by --disk. A root caller's workspace is idmapped instead
 * (userns.h). The host directory is read, never written.
 */
#pragma once

#include "log.h"

#include <stdbool.h>

/* Whether the directory ws (an fd) has an owner or group we cannot map (not ours here). */
bool sr_wscopy_needed(int ws);

/*
 * Copies the tree at ws into the new directory name under data (made
 * here): directories, regular files (mode, no set-id bit; mtime) and
 * symbolic links, all the caller's own; nothing else. -ENOSPC past the
 * disk. what names the workspace in messages.
 */
int sr_wscopy(int ws, int data, const char *name, const char *what, struct sr_error *err);
