/* SPDX-License-Identifier: MIT */
/*
 * Snapshots: a living sandbox's files, kept to make new sandboxes from
 * (create --from NAME; several from one is a fork). In the user's data
 * directory (state.h), one directory per name:
 *
 *   snapshots/NAME/files.tar.zst  /workspace, /home/user and /tmp as they
 *                                 were (written inside the sandbox: work.c)
 *   snapshots/NAME/config.ini     the sandbox's configuration, as
 *                                 --print-config writes it: the profile
 *                                 create --from starts from
 *   snapshots/NAME/meta.json      name, when, from which sandbox, size
 *
 * Not in a snapshot: running processes and memory (that would need CRIU),
 * published ports, the deadline's progress. A snapshot is written to a
 * directory of its own (NAME.new-XXXXXXXX) and renamed into place once
 * whole: a half-made one is never seen. Its maker holds a flock() on that
 * directory; one nobody holds is a maker's that died (a keeper killed
 * mid-snapshot), up to the disk limit of files, and the next `snapshot`
 * or `snapshots` removes it.
 */
#pragma once

#include "config.h"
#include "json.h"
#include "log.h"

/* <data>/snapshots/NAME/files.tar.zst of an existing snapshot (malloc'd); -ENOENT says so. */
int sr_snapshot_files(const char *name, char **ret, struct sr_error *err);
/* <data>/snapshots/NAME/config.ini, whether or not it exists (malloc'd). */
int sr_snapshot_config_path(const char *name, char **ret, struct sr_error *err);

/*
 * A snapshot being made: its directory (not yet under its name) and the
 * file the sandbox's worker writes into (*ret_fd). -EEXIST: the name is
 * taken.
 */
struct sr_snapshot_new {
	char *name;
	char *final_dir;
	char *tmp_dir;
	int lock; /* tmp_dir, flock()ed while it is made: a sweep leaves it alone (-1: none) */
};
int sr_snapshot_begin(const char *name, struct sr_snapshot_new *ret, int *ret_fd,
		      struct sr_error *err);
/* The worker wrote the files: config and metadata, then the name. */
int sr_snapshot_commit(struct sr_snapshot_new *s, const struct sr_config *c, const char *sandbox_id,
		       json_t **ret_meta, struct sr_error *err);
/* Gives up a snapshot being made (or frees a committed one's bookkeeping). */
void sr_snapshot_abort(struct sr_snapshot_new *s);

/* Every snapshot's meta.json, by name. */
int sr_snapshot_list(json_t **ret, struct sr_error *err);
/* Removes snapshot name. */
int sr_snapshot_remove(const char *name, struct sr_error *err);
