/* SPDX-License-Identifier: MIT */
/*
 * A deployment's install step (deploy.h), run in a sandbox, never on the
 * host: the agent's code is the sandbox's /workspace (the code directory
 * is its read-only lower layer, as for a run), the steps run there with
 * the deployment's limits and network, and what /workspace holds at the
 * end -- the code and what the steps installed -- comes out as a tar
 * stream, extracted on the host by the rules of archive agents
 * (archive.h) into the version's app/.
 *
 * The deployment's package caches (deployments/NAME/cache: npm's, pip's,
 * anything kept under ~/.cache) go in the same way before the steps, as
 * /home/user/.cache, and come back out after a successful install, so a
 * redeploy with the same lock file finds every package there (npm runs
 * with prefer-offline) and needs no network. No host path is ever
 * writable from the install sandbox, whoever the caller is. The cache is
 * one deployment's alone: what an install script of one leaves there
 * (npm's and pip's caches trust what they find) never reaches another's
 * install, whose invocations hold other secrets.
 */
#pragma once

#include "config.h"
#include "log.h"

#include <stdbool.h>

/* pip installs here (pip install --target), and invocations get it as PYTHONPATH. */
#define SR_INSTALL_PYTHON_DIR ".python-packages"

struct sr_install_step {
	char *what;  /* as shown: "npm ci" */
	char **argv; /* NULL-terminated */
};

struct sr_install_plan {
	struct sr_install_step *steps;
	size_t n;
	bool python; /* a pip step: SR_INSTALL_PYTHON_DIR holds packages */
};

/*
 * The steps for the code in dirfd: custom (`[deploy] install`, --install)
 * alone by /bin/sh -c if set; else `npm ci` where a package-lock.json or
 * npm-shrinkwrap.json is, else `npm install` where package.json declares
 * dependencies; and `python3 -m pip install -r requirements.txt --target
 * SR_INSTALL_PYTHON_DIR` where requirements.txt is. None is fine.
 */
int sr_install_plan(int dirfd, const char *custom, struct sr_install_plan *ret,
		    struct sr_error *err);
void sr_install_plan_free(struct sr_install_plan *p);

/*
 * Whether a package.json text declares any dependency npm install would
 * fetch (dependencies, devDependencies, optionalDependencies, non-empty);
 * false for text that is not a JSON object, or that holds more values
 * than any real one (its parse would cost the host's memory: install.c).
 */
bool sr_install_package_has_deps(const char *json, size_t len);
/*
 * The number of packages npm's hidden lock file (node_modules/
 * .package-lock.json) lists, or -1 for text that is not one, or that holds
 * more values than any real one: the install writes it, and its parse
 * would cost the host's memory (install.c).
 */
int sr_install_count_npm(const char *json, size_t len);
/* Packages installed under the tree in dirfd: npm's (node_modules) and pip's (.dist-info). */
int sr_install_count_packages(int dirfd);
/* Bytes of the regular files and links beneath dirfd (apparent sizes), following no link. */
int64_t sr_install_tree_size(int dirfd);

struct sr_install_ops {
	void (*step)(void *ctx, const char *what); /* a step begins ("npm ci", "copy") */
	void (*line)(void *ctx, const char *line); /* a line the step printed */
	void (*tick)(void *ctx);		   /* at least every 100 ms while waiting */
};

struct sr_install_opts {
	const struct sr_sink *sink; /* the sandbox's messages */
	const struct sr_install_ops *ops;
	void *ctx;
	const char *code_dir; /* the agent's code: the install's /workspace */
	int dest_dirfd;	      /* where app/ is made */
	int log_fd;	      /* gets everything the steps print */
	int cancel_fd;	      /* readable: give up (a signal came); -1 for none */
	int cache_dirfd;      /* holds the deployment's "cache"; -1: none */
};

/*
 * Beside "cache" while a cache is saved (the new copy, then the old one
 * it replaced), removed once it is: left by an install killed then, for
 * the next deploy of the name to remove (sr_deploy_begin).
 */
#define SR_INSTALL_CACHE_NEW "cache.new-"
#define SR_INSTALL_CACHE_OLD "cache.old-"

/*
 * Removes <data>/cache, the package cache all of a user's deployments
 * shared before each had its own: nothing uses it since, and it may hold
 * hundreds of MB. Removed whatever modes npm left in it, following no
 * link (one named cache goes itself), by one deploy at a time (a flock on
 * the data directory; another meanwhile leaves it be); a removal cut short
 * is taken up by the next. *ret_path (malloc'd) and *ret_bytes (its
 * apparent size) say what was removed; *ret_path NULL: nothing was there.
 */
int sr_install_remove_shared_cache(char **ret_path, int64_t *ret_bytes, struct sr_error *err);

/*
 * Runs plan for the deployment's configuration c (unchanged once it
 * returns) and makes dest/app. A step that fails: err says which and how,
 * err->status its exit status (128+N for a signal); the install timeout:
 * -ETIME, status 124; cancel_fd: -ECANCELED.
 */
int sr_install_run(struct sr_config *c, const struct sr_install_plan *plan,
		   const struct sr_install_opts *o, struct sr_error *err);
