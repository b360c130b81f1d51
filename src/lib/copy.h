/* SPDX-License-Identifier: MIT */
/*
 * Files in or out of a living sandbox (`sandbox-run cp`), the host's
 * side: a tar stream on a pipe, handed to the sandbox's keeper on its
 * control socket ctl (control.h), read or written there by a worker
 * with the agent's rights (work.h) and here with the caller's. Either
 * side's extraction follows the rules of archive agents (archive.h).
 *
 * As cp(1) and docker cp: DST an existing directory gets SRC inside it
 * under SRC's name; otherwise DST is the copy's name (its parent must
 * exist). A relative PATH in the sandbox is relative to /workspace.
 */
#pragma once

#include "log.h"

struct sr_copy_opts {
	/*
	 * The sandbox's own files on the host (its workspace directory;
	 * absolute, NULL-terminated, or NULL): no link is followed there,
	 * root's included, as for --bind sources (hostpath.h).
	 */
	const char *const *agent_trees;
};

/*
 * The sandbox's path to the host's dst. Neither the copy's name nor a
 * link on the way to it is followed, but root's links in root's
 * directories (hostpath.h); a link at the copy's name is refused, a file
 * there replaced.
 */
int sr_copy_out(int ctl, const char *path, const char *dst, const struct sr_copy_opts *o,
		struct sr_error *err);
/* The host's src (resolved the same way; a link at its end is copied as one) to the sandbox's path.
 */
int sr_copy_in(int ctl, const char *src, const char *path, const struct sr_copy_opts *o,
	       struct sr_error *err);
