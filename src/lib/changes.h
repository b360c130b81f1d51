/* SPDX-License-Identifier: MIT */
/*
 * What a sandbox changed in /workspace, to review and to apply to the
 * host (docs/artifacts.md): --changes FILE, `sandbox-run diff`, `apply`.
 *
 * Inside, a worker of PID 1 writes the workspace overlay's upper layer as
 * a raw stream (work.h): every file, directory and link there, each
 * deletion (a whiteout) and each directory that replaced the one below
 * (opaque). Here, host side, each is compared with the host directory the
 * workspace came from (the lower layer) and a changes file is written:
 *
 *   a tar, uncompressed, whose first entry is sandbox-run-changes.json:
 *     {"kind": "sandbox-run-changes", "version": 1, "sandbox_id": "...",
 *      "workspace": "/host/dir" | null, "base_time": "2026-...Z",
 *      "changes": [{"path": "src/a.c", "op": "modified", "type": "file",
 *                   "mode": "0644", "size": 120, "sha256": "...",
 *                   "base": {"type": "file", "mode": "0644", "size": 98,
 *                            "sha256": "..."},
 *                   "host_changed": false}, ...]}
 *   then, in the manifest's order: base/PATH (the host copy's content,
 *   for a modified or deleted file) and files/PATH (the new content of
 *   an added or modified file, directory or link).
 *
 * Deletions come first (a directory after what it held), then additions
 * and modifications (a directory before what it holds). A rename is a
 * deletion and an addition of the same content (diff shows it as one).
 * "base" is the host copy when the changes were taken; "host_changed"
 * says its ctime is after the sandbox started (the host changed it while
 * the agent ran): apply refuses either difference unless forced. Names
 * that are not UTF-8, and devices, FIFOs and sockets the agent made, are
 * left out, with a warning.
 */
#pragma once

#include "archive.h"
#include "config.h"
#include "log.h"
#include "sha256.h"

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#define SR_CHANGES_MANIFEST "sandbox-run-changes.json"
/* A manifest is read whole: at most this long (a changes file with a longer one is refused). */
#define SR_CHANGES_MANIFEST_MAX (64 << 20)

enum sr_change_op {
	SR_CHANGE_ADDED,
	SR_CHANGE_MODIFIED,
	SR_CHANGE_DELETED,
	_SR_CHANGE_OP_MAX,
};

enum sr_change_type {
	SR_CHANGE_FILE,
	SR_CHANGE_DIR,
	SR_CHANGE_LINK,
	_SR_CHANGE_TYPE_MAX,
};

struct sr_change_node {
	enum sr_change_type type;
	mode_t mode; /* & 07777 as found; set-id bits are never applied */
	int64_t size;
	char sha256[SR_SHA256_HEX_LEN + 1]; /* a file's content; "" otherwise */
	char *target;			    /* a link's */
};

struct sr_change {
	char *path; /* relative to the workspace: no "..", no empty part, UTF-8 */
	enum sr_change_op op;
	struct sr_change_node node; /* added, modified: what it is now */
	struct sr_change_node base; /* modified, deleted: what the host had */
	bool host_changed;
};

struct sr_changes {
	char sandbox_id[33];
	char *workspace; /* the host directory, or NULL (an archive's, or an empty one) */
	int64_t base_time_ns;
	struct sr_change *v;
	size_t n;
	size_t *by_path; /* indexes of v sorted by path (sr_changes_find) */
};

void sr_changes_free(struct sr_changes *c);
const char *sr_change_op_to_string(enum sr_change_op op);
const char *sr_change_type_to_string(enum sr_change_type t);

/* What a raw stream of changes is compared with and bounded by (sr_changes_build). */
struct sr_changes_origin {
	const char *workspace; /* the host directory it came from; NULL: everything is added */
	const char *sandbox_id;
	int64_t t0_ns; /* CLOCK_REALTIME_COARSE when the sandbox started */
	/*
	 * The files' sizes, holes included (the spool and the changes file
	 * hold them whole), together at most (0: no bound): the sandbox's
	 * disk limit, as for cp and exports, or `truncate -s 100T` would
	 * fill the host's disk with zeros.
	 */
	uint64_t max_bytes;
	/*
	 * Nothing on the stream for this long: -ETIMEDOUT (0: wait as long as
	 * it takes). A living sandbox's worker runs as the agent, which can
	 * stop it.
	 */
	int idle_ms;
};

/*
 * Builds a changes file on out_fd from the raw stream on raw_fd (work.h)
 * as o says. The stream is spooled in an unnamed file in the directory
 * spool_dirfd. *ret_n: how many changes. Warnings (left-out entries) to
 * sink.
 */
int sr_changes_build(int raw_fd, const struct sr_changes_origin *o, int spool_dirfd, int out_fd,
		     const struct sr_sink *sink, size_t *ret_n, struct sr_error *err);

/* changes-file.c: the manifest, to and from JSON, checked. */
json_t *sr_changes_manifest(const struct sr_changes *c); /* NULL: out of memory */
int sr_changes_manifest_json(const struct sr_changes *c, char **ret, size_t *ret_len);
/*
 * Parses and checks a manifest: every path clean (relative, no "..", no
 * empty or "." part), ops and types known, a file's digest 64 hex digits,
 * a link's target present, no path twice. -EINVAL with err saying what.
 */
int sr_changes_manifest_parse(const char *json, size_t len, struct sr_changes *ret,
			      struct sr_error *err);
/*
 * Opens a changes file: its manifest read from reader r (opened on it),
 * which is left at the first content entry.
 */
int sr_changes_read(struct sr_archive_reader *r, struct sr_changes *ret, struct sr_error *err);
/* Where a changes file is spooled or copied: $TMPDIR if absolute, else /tmp. */
const char *sr_changes_tmp_dir(void);
/*
 * A copy of the changes file open at fd (as far as its size when it is
 * called), that only this process holds: an unnamed file in
 * sr_changes_tmp_dir(), at its start, in *ret_fd. apply checks and
 * writes that copy, so that whoever may write the file cannot change
 * what is written after it was checked.
 */
int sr_changes_copy(int fd, int *ret_fd, struct sr_error *err);
/* The change for path (by_path's binary search), or NULL. */
struct sr_change *sr_changes_find(const struct sr_changes *c, const char *path);
/* Whether path is clean as a changes file has it. */
bool sr_changes_path_ok(const char *path);

/*
 * The changes of the living sandbox ref (an id, a prefix of one, or its
 * --name) so far, as a changes file: an unnamed temporary file, at its
 * start, in *ret_fd. Nothing from the sandbox's worker for idle_ms (0:
 * no bound) gives up with -ETIMEDOUT.
 */
int sr_changes_fetch(const char *ref, int idle_ms, const struct sr_sink *sink, int *ret_fd,
		     struct sr_error *err);
