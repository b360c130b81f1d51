/* SPDX-License-Identifier: MIT */
/*
 * Where living sandboxes and their data are kept, per user, and how they
 * are found again.
 *
 * State (gone at reboot): $XDG_RUNTIME_DIR/sandbox-run/ (root:
 * /run/sandbox-run/; without XDG_RUNTIME_DIR: /tmp/sandbox-run-UID/),
 * one directory per sandbox, named by its id:
 *
 *   <id>/lock        flock()ed by the sandbox's keeper for its whole life
 *   <id>/state.json  what `ls` shows, written by the keeper (atomically)
 *   <id>/ctl         the keeper's socket (keeper.h)
 *   <id>/keeper.log  the keeper's own messages once `create` has returned
 *
 * Data (kept): $XDG_DATA_HOME/sandbox-run/ (root: /var/lib/sandbox-run/):
 * snapshots, deployments.
 *
 * SANDBOX_RUN_STATE_DIR and SANDBOX_RUN_DATA_DIR (absolute paths; a
 * relative one is an error, an empty one unset) name others: separate
 * sets of sandboxes side by side (a CI job's own, each test round's).
 * They are held to the same rules.
 *
 * Every directory is the user's own, 0700: another user can neither list
 * nor reach anything in it (and every socket checks its peer's uid too).
 * An entry whose lock nobody holds belongs to a keeper that died (killed,
 * or its host rebooted under it): whoever finds it removes it, its
 * cgroups with it, so `ls` never shows a ghost.
 */
#pragma once

#include "json.h"
#include "log.h"

#include <stdbool.h>

#define SR_STATE_DIR_ENV "SANDBOX_RUN_STATE_DIR"
#define SR_DATA_DIR_ENV	 "SANDBOX_RUN_DATA_DIR"

/* The state directory, made if missing and checked to be ours and private (malloc'd). */
int sr_state_dir(char **ret, struct sr_error *err);
/* The data directory, likewise; sub (e.g. "snapshots") made in it when not NULL. */
int sr_data_dir(const char *sub, char **ret, struct sr_error *err);
/* path made if missing (0700) and checked as those are: a directory, ours, closed to others. */
int sr_private_dir(const char *path, struct sr_error *err);

struct sr_entry {
	char id[33];
	char *dir;     /* <state>/<id> */
	json_t *state; /* state.json; NULL while the keeper has not written it */
};

void sr_entry_free(struct sr_entry *e);

/*
 * Every live sandbox of this user, oldest first; stale entries found on
 * the way are removed.
 */
int sr_state_list(const char *statedir, struct sr_entry **ret, size_t *ret_n, struct sr_error *err);
void sr_entries_free(struct sr_entry *v, size_t n);

/*
 * The live sandbox that ref names: its whole id, its --name, or a unique
 * prefix of at least 4 hex digits of its id. -ENOENT: "no sandbox 'x'
 * (sandbox-run ls lists them)"; -EINVAL: ambiguous prefix.
 */
int sr_state_find(const char *statedir, const char *ref, struct sr_entry *ret,
		  struct sr_error *err);
/*
 * As sr_state_find(), the entries that hidden(ctx, entry) says are hidden
 * counting for nothing: not found by their id, and neither making a
 * prefix ambiguous nor coming before a name. What a caller that must not
 * tell them to its clients resolves with (serve: a pool's warm ones).
 */
typedef bool (*sr_state_hidden_fn)(void *ctx, const struct sr_entry *e);
int sr_state_find_if(const char *statedir, const char *ref, sr_state_hidden_fn hidden, void *ctx,
		     struct sr_entry *ret, struct sr_error *err);

/* A --name: 1-64 of [A-Za-z0-9_.-], starting with a letter or digit. */
bool sr_state_valid_name(const char *name);

/*
 * The deployment a sandbox runs a version of, as its state says
 * ("deployment": {"name", "version"}, which its keeper writes from its
 * configuration: sr_deploy_apply() sets it, for a server's warm sandboxes
 * of a deployment): the name (in state) in *ret_name and the version.
 * false for any other sandbox, one that an older keeper wrote included.
 * Never guessed from the profile's path: a profile file that is a
 * deployment's config.ini, or lies where one would, makes no deployment.
 */
bool sr_state_deployment(json_t *state, const char **ret_name, unsigned *ret_version);
/*
 * A sandbox's state as ls --json, inspect and the API show it:
 * "deployment" (last) that of sr_state_deployment(), {"name", "version"},
 * or null (a state with no "profile", no sandbox's, is left as it is).
 * "profile" stays the path, as the records of its execs have it.
 */
void sr_state_add_deployment(json_t *state);

/*
 * The keeper's side: makes <statedir>/<id>, takes its lock (*ret_lock,
 * held until the keeper exits) and writes state, all under the state
 * directory's own lock, so that two sandboxes cannot take one name.
 * -EEXIST: a live sandbox has that name already.
 */
int sr_state_reserve(const char *statedir, const char *id, const char *name, json_t *state,
		     char **ret_dir, int *ret_lock, struct sr_error *err);
/*
 * Replaces <dir>/state.json: in place under an exclusive flock(2), or
 * beside a reader that holds it; a reader (under a shared lock) reads the
 * old text or the new, whole.
 */
int sr_state_write(const char *dir, json_t *state, struct sr_error *err);
/* Removes an entry's files and directory (its cgroups too, if it was left stale). */
void sr_state_remove(const char *dir, json_t *state);
