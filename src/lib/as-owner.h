/* SPDX-License-Identifier: MIT */
/*
 * What a root caller does in another user's tree, done as that user
 * (as-owner.c): apply's changes, cp's reading of what it copies in.
 */
#pragma once

#include "log.h"

#include <stddef.h>
#include <sys/types.h>

/*
 * fn(arg, out, err) run by a forked child that becomes uid wholly (the
 * user's groups; for a uid with no user, the group dir_gid, or the
 * overflow group rather than root's), not dumpable, and waited for; what
 * it puts in out (out_len bytes, NULL if 0) comes back in out, its error
 * in err. what ("apply", "cp") and where (the tree) name it in messages.
 * 0, or -errno with err.
 */
int sr_as_owner(uid_t uid, gid_t dir_gid, const char *what, const char *where,
		int (*fn)(void *arg, void *out, struct sr_error *err), void *arg, void *out,
		size_t out_len, struct sr_error *err);
