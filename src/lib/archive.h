/* SPDX-License-Identifier: MIT */
/*
 * Safe extraction of agent archives with libarchive (dlopen()ed on first
 * use). Every path is resolved beneath dest with openat2(RESOLVE_BENEATH |
 * RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS): no absolute paths, no "..",
 * no symlink or hard link leaving the tree, no device nodes, FIFOs or
 * sockets, no setuid/setgid/sticky bits. Extraction stops with -ENOSPC once
 * max_bytes (0 = no bound of its own) have been written, so a compression
 * bomb ends at the disk limit.
 */
#pragma once

#include "log.h"

#include <stdint.h>

int sr_archive_extract(int archive_fd, int dest_dirfd, uint64_t max_bytes, struct sr_error *err);

/*
 * Loads libarchive now (sr_archive_extract does it too): for a caller
 * that will extract where no library can be opened any more (chrooted).
 */
int sr_archive_load(struct sr_error *err);
