/* SPDX-License-Identifier: MIT */
/*
 * Getting work out of a sandbox when it ends (docs/artifacts.md): the
 * --export paths, copied to the host as the caller's own files, and the
 * --changes file (changes.h). Host side.
 *
 * They are taken from a held sandbox (protocol.h): its processes are all
 * gone -- the agent exited, failed, timed out or was OOM-killed -- and
 * its files are still there. A worker of PID 1, with the agent's rights,
 * writes a tar of each; a process of ours (the taker) extracts it under
 * the rules of archive agents (archive.h: nothing outside the
 * destination, no link followed out of it, no device, no set-id bit),
 * with the caller's rights. The destination's existing part is resolved
 * following only root's links in root's directories (hostpath.h): a link
 * the agent planted in a --bind directory, or another user in /tmp,
 * cannot redirect an export. The whole takes at most
 * SR_ARTIFACTS_TIME_LIMIT_MS: PID 1 kills a worker past it, and we the
 * taker.
 *
 * Nothing here waits for PID 1 or for a taker: the caller's event loop
 * polls the fds and passes the sandbox's worked callback on, as the
 * keeper serves its clients while a sandbox's artifacts come out.
 */
#pragma once

#include "config.h"
#include "log.h"
#include "sandbox.h"

#include <limits.h>

#define SR_ARTIFACTS_TIME_LIMIT_MS (60 * 1000)
#define SR_ARTIFACTS_POLL_FDS	   2

/* Whether c asks for anything to be taken out at the end. */
bool sr_artifacts_wanted(const struct sr_config *c);

/*
 * Whether what c asks for can be written where it goes: the nearest
 * existing part of each destination's directory is a directory the
 * caller may write in (what is missing of it is made at the end). For
 * before the sandbox starts, as a result record's directory is: found
 * only when the sandbox ends, that is the agent's work lost.
 */
int sr_artifacts_check(const struct sr_config *c, struct sr_error *err);

/*
 * Starts taking what c asks for out of sb, which is held, one artifact
 * after the other. A PATH the sandbox does not have is a warning (to
 * sink: a test run that failed early wrote no coverage); anything else
 * that fails is said to sink as an error. t0_ns: CLOCK_REALTIME_COARSE
 * when the sandbox started (the changes' base, changes.h). c, sink and sb
 * must outlive *ret.
 */
struct sr_artifacts;
int sr_artifacts_start(struct sr_sandbox *sb, const struct sr_config *c, int64_t t0_ns,
		       const struct sr_sink *sink, struct sr_artifacts **ret, struct sr_error *err);
/* What to poll for reading (-1: nothing), then sr_artifacts_dispatch(). */
void sr_artifacts_poll_fds(const struct sr_artifacts *a, int fds[SR_ARTIFACTS_POLL_FDS]);
void sr_artifacts_dispatch(struct sr_artifacts *a);
/* The sandbox's worked callback, passed on: true when the worker was one of ours. */
bool sr_artifacts_worked(struct sr_artifacts *a, uint32_t id, const struct sr_error *err);
/* Whether every artifact is out, or failed. */
bool sr_artifacts_done(const struct sr_artifacts *a);
/* How many failed (err: the first), or -1 before they are done. */
int sr_artifacts_failed(const struct sr_artifacts *a, struct sr_error *err);
/* Stops a taker still running (its artifact is left unfinished). NULL is fine. */
void sr_artifacts_free(struct sr_artifacts *a);

/* What sr_artifacts_open_dir made of its dir: rel, beneath the directory parent (-1: nothing). */
struct sr_made_dirs {
	int parent;
	char rel[PATH_MAX];
};

/*
 * Opens (making what is missing of it, 0777 less the umask) the host
 * directory dir, absolute, for an export's or apply's files: its existing
 * part resolved by the rules of hostpath.h (agent_trees: the directories
 * the agent could write or wrote, where no link is followed). ret_made,
 * if not NULL, says what it made (its parent -1 before the call; the
 * caller closes it), so that an export that brings nothing leaves nothing.
 */
int sr_artifacts_open_dir(const char *dir, const char *const *agent_trees, int *ret_fd,
			  struct sr_made_dirs *ret_made, struct sr_error *err);

/*
 * A root caller writes an export's or a cp out's files as the owner of
 * the directory they go into (artifacts-owner.c), the directory dirfd.
 * Whether only root and the owner of the tree it is in
 * (sr_hostpath_tree_owner()) can change what is at its name, judged
 * above it (sr_hostpath_owner_held(): nothing for a tree of root's):
 * else someone else could have swapped in a directory of a third user's,
 * which root would write in. 0 (and always for another caller), or
 * -errno with err ("WHAT PATH: ...", -EPERM naming the directory above
 * and what to give instead).
 */
int sr_artifacts_held(int dirfd, const char *what, const char *path, struct sr_error *err);

/*
 * Whose a root caller's files written into dirfd are, set in o (chown,
 * owned, owner_uid, owner_gid; untouched for another caller): its
 * owner's, root's only in a tree of root's all the way up; a directory
 * of root's in another user's tree is refused (-EPERM, "WHAT PATH: ...").
 */
struct sr_extract_opts;
int sr_artifacts_owner(int dirfd, const char *what, const char *path, struct sr_extract_opts *o,
		       struct sr_error *err);
