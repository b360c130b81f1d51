/* SPDX-License-Identifier: MIT */
/*
 * Unified diffs of two texts, as diff -u writes them, for reviewing a
 * sandbox's changes (sandbox-run diff --patch, --stat). Myers' O(ND)
 * algorithm on the lines between the common head and tail; past
 * SR_UDIFF_MAX_EDITS differences the middle is shown as replaced whole
 * (a correct diff, not a minimal one), so that no input costs more than
 * that many steps.
 */
#pragma once

#include <stddef.h>
#include <stdio.h>

#define SR_UDIFF_MAX_EDITS 1000

struct sr_udiff_stat {
	size_t added, removed;
};

/*
 * Writes the diff of a (alen bytes) and b to out (NULL: only counts), with
 * "--- label_a" / "+++ label_b" headers and context lines around each
 * hunk; nothing when they are equal. A last line without its newline is
 * marked "\ No newline at end of file". 0, or -ENOMEM.
 */
int sr_udiff(const char *a, size_t alen, const char *b, size_t blen, const char *label_a,
	     const char *label_b, int context, FILE *out, struct sr_udiff_stat *ret);

/* Whether text looks like text: no NUL in its first 8 KiB. */
int sr_udiff_is_text(const char *text, size_t len);
