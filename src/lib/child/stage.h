/* SPDX-License-Identifier: MIT */
/*
 * A tar stream extracted into a living sandbox (cp in) whole or not at
 * all. It is extracted under a hidden name beside where it goes
 * (".sandbox-run-cp.<random>" in dir), then moved into place by renames:
 * a new name at once, a file over the one it replaces, a directory that
 * is there already entry by entry (as cp -r joins it). Nothing is moved
 * before every entry is there and the whole tree fits what is in place
 * (no directory replaced by a file, no file or link where a directory
 * goes, no mount point to replace or to join across), so an extraction
 * that fails midway (a refused entry, the disk full, a stream cut
 * because cp was interrupted) leaves dir as it was.
 *
 * The renames take no room, but for the overlay's copy-up of a directory
 * they join (done, with the check, before anything moves) and, on a disk
 * full to its last block or inode, a new directory block of ext4 or the
 * overlay's opaque marker on a new directory (an xattr, which tmpfs
 * counts against its inodes): an ENOSPC there leaves the entries moved
 * before it (docs/living.md).
 *
 * What was extracted is removed by the worker on any failure, and by a
 * process of its own (in a process group of its own, so that the
 * SIGKILL PID 1 sends a cancelled worker's group does not reach it) when
 * the worker is killed: a worker the agent stopped, cancelled because
 * its client went, cannot clean up after itself.
 *
 * The agent may change dir while the copy is moved in: a name it makes
 * meanwhile is not replaced (RENAME_NOREPLACE), and nothing is followed
 * (every step is relative to an fd, no link is opened), but what was
 * moved in before such a conflict stays.
 */
#pragma once

#include "archive.h"

/*
 * Extracts archive_fd into dir (o as sr_archive_extract_opts()), staged as
 * above; dest is the copy's destination as its caller named it, for the
 * error of a dir that takes nothing (read-only, full).
 */
int sr_stage_extract(int archive_fd, int dir, const char *dest, const struct sr_extract_opts *o,
		     struct sr_error *err);
