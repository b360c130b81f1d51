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

#include <stdint.h>

struct sr_copy_opts {
	/*
	 * The sandbox's own files on the host (its workspace directory;
	 * absolute, NULL-terminated, or NULL): no link is followed there,
	 * root's included, as for --bind sources (hostpath.h).
	 */
	const char *const *agent_trees;
	/*
	 * Out: the most cp writes on the host, holes included (0: no bound),
	 * and what that bound is, for the error past it.
	 */
	uint64_t max_bytes;
	const char *limit_what;
	/*
	 * Nothing through the stream for this long, or no answer this long
	 * after its end: cp gives up, and its hang-up has the keeper kill the
	 * worker (0: wait as long as it takes). The agent can stop the
	 * worker, which runs as its uid.
	 */
	int idle_ms;
	/*
	 * Out: > 0, an fd (a signalfd of cp's ^C) whose becoming readable
	 * ends the copy: -ECANCELED, "interrupted", and nothing of it left
	 * on the host (0: none).
	 */
	int cancel_fd;
};

/*
 * The sandbox's path to the host's dst. Neither the copy's name nor a
 * link on the way to it is followed, but root's links in root's
 * directories (hostpath.h); a link at the copy's name is refused, a file
 * there replaced. The copy is made under a temporary name beside it and
 * renamed once whole (nothing cut short appears under its name), but
 * into a directory of that name, which it joins file by file, as cp -r.
 * A root caller's copy is written as its export would be
 * (sr_artifacts_held(), sr_artifacts_owner()): as the destination
 * directory's owner, refused where anyone but root and that owner could
 * have swapped another user's directory in under the name given.
 */
int sr_copy_out(int ctl, const char *path, const char *dst, const struct sr_copy_opts *o,
		struct sr_error *err);
/* The host's src (resolved the same way; a link at its end is copied as one) to the sandbox's path.
 */
int sr_copy_in(int ctl, const char *src, const char *path, const struct sr_copy_opts *o,
	       struct sr_error *err);
