/* SPDX-License-Identifier: MIT */
/*
 * What deploy.c (a deployment's locks, prune, rollback, remove, list),
 * deploy-versions.c (its versions: current, listed, pruned),
 * deploy-tree.c (trees removed), deploy-invoke.c (invocations' hold) and
 * deploy-new.c (a deploy's new version: the name's check, begin, publish,
 * fail) share. deploy.h says what the files and locks are.
 */
#pragma once

#include "deploy.h"

/*
 * A deployment's directory under its lock: what prune, rollback, remove,
 * an invocation's pick and a deploy's begin hold, and, for a deploy, its
 * deploy.lock too.
 */
struct deploy_held {
	char *dir; /* deployments/NAME */
	int dirfd; /* O_PATH */
	int deploying;
	int lock;
};

/*
 * Deployment NAME's directory (made when create, else -ENOENT when
 * missing) with its lock taken with op, after its deploy.lock when o is
 * given (a deploy's begin, waiting as o says); taken again in the
 * directory made anew when a removal took the old one meanwhile.
 */
int deploy_hold(const char *name, bool create, int op, const struct sr_deploy_begin_opts *o,
		struct deploy_held *ret, struct sr_error *err);
void deploy_release(struct deploy_held *h);
/* dirfd's lock file `file`, flock()ed with op; the fd, or -errno. */
int deploy_take_lock(int dirfd, const char *file, int op);

/*
 * Removes the entries of dir (an fd of the directory, O_PATH too) whose
 * names start with one of prefixes (NULL-terminated), whatever their
 * modes, following no link: what a process killed midway left behind.
 * The caller holds the lock that keeps out whoever makes them.
 */
void deploy_sweep(int dir, const char *const *prefixes);
/*
 * Renames (dirfd, name) out of sight, then removes it: nobody sees it half
 * gone. One left by a removal cut short (killed) is swept by the next of
 * its kind: a version's by the next prune under the same lock
 * (deploy_prune_locked), a deployment's by the next removal
 * (remove_deployment).
 */
#define GONE_PREFIX ".gone-"
int deploy_remove_hidden(int dirfd, const char *name);

/* The current version (readlink of current: "versions/N"); 0 when none. */
unsigned deploy_read_current(int dirfd);
/* current -> versions/N, atomically: a new link renamed over the old one. */
int deploy_set_current(int dirfd, unsigned version, struct sr_error *err);

struct deploy_version {
	struct sr_version_state s;
	json_t *meta;
};
/* Every version under versionsfd, oldest first, with its meta and whether it is busy. */
int deploy_list_versions(int versionsfd, struct deploy_version **ret, size_t *ret_n);
void deploy_versions_free(struct deploy_version *v, size_t n);
/* The held deployment's versions/, made if missing. */
int deploy_open_versions(const struct deploy_held *h, struct sr_error *err);
/* Prunes under the deployment's lock (held by the caller). */
int deploy_prune_locked(int dirfd, int versionsfd, uint64_t keep, bool only_incomplete,
			unsigned *ret_removed);
