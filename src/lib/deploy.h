/* SPDX-License-Identifier: MIT */
/*
 * Deployments: an agent installed once and invoked many times, each
 * invocation a fresh sandbox over the installed tree (Castari's deploy ->
 * invoke -> redeploy, docs/deploy.md). In the user's data directory
 * (state.h), every directory 0700:
 *
 *   deployments/NAME/deploy.lock  flock: held by a deploy from its check
 *                              of the name to its version's end, so deploys
 *                              of one name take turns (sr_deploy_begin)
 *   deployments/NAME/lock      flock: held exclusively to check the name
 *                              and number a version, change which one is
 *                              current, prune or remove; shared while an
 *                              invocation picks its version
 *   deployments/NAME/current   symlink -> versions/N, replaced by rename(2):
 *                              a redeploy or rollback is atomic
 *   deployments/NAME/versions/N/
 *       app/                   the code and its installed dependencies:
 *                              every invocation's read-only lower layer
 *       config.ini             the deployment's configuration (profile and
 *                              deploy's options, as --print-config writes
 *                              it): the profile its invocations start from
 *       meta.json              name, version, source, created, status
 *                              ("installing" from the start, then "ready"
 *                              or "failed"), size, dependencies, install
 *                              steps, times
 *       install.log            the install step's whole output
 *       lock                   flock: shared by each invocation for its
 *                              life; exclusive while the deploy makes it,
 *                              and to remove it (never waited for: a
 *                              version in use is not removed)
 *   deployments/NAME/cache/    the deployment's package caches (npm, pip;
 *                              install.h)
 *   secrets/NAME/KEY           secrets.h
 *
 * A version is ready once its meta.json says so; one whose meta.json says
 * "installing", or that has none, is being made (its lock held) or was
 * abandoned (a deploy killed), and the next deploy of that name removes it.
 *
 * Lock order: deploy.lock, lock, versions/N/lock, the secrets' (secrets.h),
 * deployments/ (held shared by `deployments rm` while it removes the
 * directory, exclusively without waiting to remove what one killed left).
 * Whoever holds a deployment's lock checks, once it holds it, that the
 * directory is still the one its path names: `deployments rm` renames it
 * away while holding it, and a lock held in the old one orders nothing.
 */
#pragma once

#include "config.h"
#include "json.h"
#include "log.h"

#include <stdbool.h>
#include <stdint.h>

enum sr_version_status {
	SR_VERSION_READY,
	SR_VERSION_FAILED,
	SR_VERSION_INCOMPLETE, /* "installing", or no meta.json: being made, or abandoned */
	_SR_VERSION_STATUS_MAX,
};

/* A deployment name: 1-64 of [A-Za-z0-9_.-], starting with a letter or digit (no '/', no ".."). */
bool sr_deploy_valid_name(const char *name);

/*
 * A version being made: its number, its directory (versions/N, made
 * here), its lock and the deployment's deploy.lock, held until it is
 * published or failed and v freed.
 */
struct sr_deploy_new {
	char *name;
	char *dir;  /* deployments/NAME */
	char *vdir; /* deployments/NAME/versions/N */
	char *source;
	unsigned version;
	bool name_chosen;
	int dirfd; /* deployments/NAME, O_PATH */
	int vdirfd;
	int lock;
	int deploying; /* deploy.lock */
};

/*
 * What a deploy says of itself. A name the agent chose (package.json's,
 * the file's: its author's choice, not the user's) may not claim a
 * deployment made from another source — the current version's or the
 * newest one's, by their meta.json — whose invocations have their own
 * secrets, nor a name whose secrets wait for its first deploy: they were
 * set for the agent the user means, which --name says. Checked under the
 * name's lock, with the secrets' held, and the version's source written
 * before either is let go; checked again when the version is made current.
 */
struct sr_deploy_begin_opts {
	const char *source; /* where the code comes from (an absolute path); NULL: unknown */
	bool name_chosen;
	json_t *meta; /* more of meta.json ("created", ...), borrowed; NULL: none */
	/* Readable: stop waiting for another deploy of the name (-ECANCELED). -1: none. */
	int cancel_fd;
	/* Called once when another deploy of the name is under way: this one waits for it. */
	void (*waiting)(void *ctx);
	void *ctx;
};

/*
 * The next version of name (the deployment made if new), once every
 * other deploy of it has ended (deploys of one name take turns, so their
 * versions are numbered and made current in the order they begin);
 * abandoned versions are removed first. o may be NULL: a name the user
 * gave, no waiting interrupted. Its meta.json says "installing".
 */
int sr_deploy_begin(const char *name, const struct sr_deploy_begin_opts *o,
		    struct sr_deploy_new *ret, struct sr_error *err);
/*
 * Writes c as the version's config.ini and meta (with "status":"ready"
 * added) as its meta.json, then makes it current, all under the name's
 * lock; a chosen name checked again there (a rollback meanwhile to
 * another source's version keeps it: -EEXIST). meta is borrowed.
 */
int sr_deploy_publish(struct sr_deploy_new *v, const struct sr_config *c, json_t *meta,
		      struct sr_error *err);
/* Marks the version failed (meta.json with "status":"failed"); its app/ is removed, its log kept.
 */
int sr_deploy_fail(struct sr_deploy_new *v, json_t *meta, struct sr_error *err);
/*
 * Releases the version's lock and deploy.lock and frees v; a version
 * neither published nor failed is abandoned.
 */
void sr_deploy_new_free(struct sr_deploy_new *v);

/*
 * One version's state, for choosing what to prune: the newest keep ready
 * versions and the newest keep failed ones stay (keep 0: all), and so do
 * the current one and every busy one (in use or being made); abandoned
 * ones go. Sets remove[i] for each of v[] (any order) to go.
 */
struct sr_version_state {
	unsigned version;
	enum sr_version_status status;
	bool busy;
};
void sr_deploy_prune_pick(const struct sr_version_state *v, size_t n, unsigned current,
			  uint64_t keep, bool *remove);
/* Prunes name's versions as sr_deploy_prune_pick says; *ret_removed counts them. */
int sr_deploy_prune(const char *name, uint64_t keep, unsigned *ret_removed, struct sr_error *err);

/*
 * Makes version `to` (0: the newest ready one older than the current)
 * current; *ret_version says which.
 */
int sr_deploy_rollback(const char *name, unsigned to, unsigned *ret_version, struct sr_error *err);
/*
 * Removes the deployment, its secrets first, every version and its cache;
 * -EBUSY while an invocation or a deploy holds a version.
 */
int sr_deploy_remove(const char *name, struct sr_error *err);

/*
 * The current version of name, 0 when it has none (or no such deployment):
 * a server's warm sandboxes of an older version are stale.
 */
unsigned sr_deploy_current(const char *name);

/*
 * Every version of every deployment, oldest first within a name: each its
 * meta.json plus "status" ("active" for the current one, "ready",
 * "failed", "installing", "incomplete") and "log" (its install log's path).
 */
int sr_deploy_list(json_t **ret, struct sr_error *err);

/*
 * An invocation's hold on the current version of a deployment: the
 * version cannot be pruned or removed while it is open, and a redeploy or
 * rollback meanwhile changes only what the next open gets.
 *
 * What an invoker (the invoke verb, the API server) does:
 *
 *   struct sr_deployment *d;
 *   sr_config_init(&c);
 *   sr_deploy_open(name, &d, &err);
 *   sr_deploy_config(d, &c, &err);  // the version's config.ini, its app/, the secrets
 *   ... override c (limits of the request) and sr_config_validate() ...
 *   sr_sandbox_create(&c, ...); spawn SR_SPAWN_AGENT | SR_SPAWN_ENDS_SANDBOX; wait; free
 *   sr_deployment_close(d);          // after the sandbox is freed
 *   sr_config_free(&c);              // wipes the secrets
 */
struct sr_deployment;
int sr_deploy_open(const char *name, struct sr_deployment **ret, struct sr_error *err);
const char *sr_deployment_name(const struct sr_deployment *d);
unsigned sr_deployment_version(const struct sr_deployment *d);
/* versions/N/config.ini: the profile to load (sr_profile_load) before options go over it. */
const char *sr_deployment_profile(const struct sr_deployment *d);
/* versions/N/app */
const char *sr_deployment_app(const struct sr_deployment *d);
/*
 * Points c at the version (c->argv: its app directory, as a directory
 * AGENT) and loads the secrets into c->secrets. For callers that loaded
 * the profile themselves (the invoke verb: options over it).
 */
int sr_deploy_apply(const struct sr_deployment *d, struct sr_config *c, struct sr_error *err);
/* sr_profile_load(sr_deployment_profile(d)), then sr_deploy_apply(): c ready for sr_sandbox_create.
 */
int sr_deploy_config(const struct sr_deployment *d, struct sr_config *c, struct sr_error *err);
/* Releases the hold; NULL is fine. */
void sr_deployment_close(struct sr_deployment *d);

/*
 * Removes (dirfd, name) and everything beneath it, following no link
 * (directories a package shipped read-only included), with a few open
 * files however deep it goes; absent is fine. A directory of another
 * mount below it (another file system, or a bind of this one) is left
 * whole, with -EXDEV.
 */
int sr_deploy_remove_tree(int dirfd, const char *name);

/* The last n lines of a file (an install log), as one malloc'd text. */
int sr_deploy_tail(const char *path, size_t n, char **ret, struct sr_error *err);
