/* SPDX-License-Identifier: MIT */
/*
 * Reviewing and applying a changes file (changes.h) on the host:
 * `sandbox-run diff` and `sandbox-run apply`. Host side, as the caller.
 */
#pragma once

#include "log.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

struct sr_apply_report {
	size_t added, modified, deleted;
	size_t unchanged; /* already as the changes have them */
	size_t conflicts; /* applied over the host's, with force */
};

/*
 * Applies the changes file open at fd (seekable) to dir (NULL: the host
 * directory its sandbox's workspace came from). The file is read once,
 * into a private copy (sr_changes_copy()) that is checked and written:
 * whoever may write it cannot change it between. Checks the whole file,
 * then every path it touches in dir, before changing anything (see
 * changes-apply.c): a crafted entry (outside the tree, through a link or
 * a file the changes make, a device, a set-id bit, content that is not
 * what the manifest lists) is refused; a conflict (the host's copy is not
 * the one the sandbox started from) is refused, naming the paths, unless
 * force; a change the caller cannot make (a directory it may not write
 * in; root in another user's tree: an entry not that user's) is refused;
 * a symbolic link on the way to a path is never followed, force or not.
 * A root caller's dir is resolved as --workspace is (hostpath.h), and
 * where it is another user's tree, the checks and changes are made by a
 * child process that is that user (it forks, and waits for it).
 */
int sr_changes_apply(int fd, const char *dir, bool force, const struct sr_sink *sink,
		     struct sr_apply_report *ret, struct sr_error *err);

enum sr_diff_mode {
	SR_DIFF_SUMMARY, /* one line per change: A, M, D, R */
	SR_DIFF_STAT,	 /* lines added and removed per file */
	SR_DIFF_PATCH,	 /* a unified diff of every text file, git-style headers */
	_SR_DIFF_MODE_MAX,
};

/* Writes the changes file open at fd (seekable) to out, as mode says. */
int sr_changes_show(int fd, enum sr_diff_mode mode, FILE *out, struct sr_error *err);
/*
 * A stream for a terminal that writes to out what it is given, control
 * characters (but newline and tab) shown visibly (^[, \x9b): an agent's
 * escape sequences cannot hide lines of the diff. fclose() it (flushes
 * out, leaves it open); NULL with errno.
 */
FILE *sr_changes_visible_open(FILE *out);
