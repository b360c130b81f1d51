/* SPDX-License-Identifier: MIT */
/*
 * A deployment's secrets: environment variables its invocations get
 * (config.h: c->secrets), kept apart from everything else. In the user's
 * data directory (state.h), one file per secret:
 *
 *   secrets/NAME/KEY   the value, exactly, 0600 in 0700 directories
 *   secrets/NAME/.KEY.new-XXXXXXXX   one being written (sr_secret_set)
 *   secrets/NAME/.stamp  8 random bytes, written anew by each change
 *
 * A value never appears in a message, a log, a configuration printed or
 * kept (--print-config, a version's config.ini), a result record or a
 * command line: it travels from the store to the sandbox's environment in
 * memory only, and in a process that forks others (a server: its keepers)
 * in memory that they do not inherit (sr_secret_load). Secrets are not
 * given to the install step (production injects them after `npm install`
 * too).
 */
#pragma once

#include "config.h"
#include "log.h"

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <time.h>

/* The largest value kept: an API key, a PEM key, not a file. */
#define SR_SECRET_MAX (64 * 1024)

/*
 * 0 when name can be a deployment's and key (unless NULL) an environment
 * variable's, else -EINVAL naming the bad one: the check every call below
 * makes, for `secrets set` to make it before the user types the value.
 */
int sr_secret_check_names(const char *name, const char *key, struct sr_error *err);
/*
 * Sets KEY of deployment name (which need not be deployed yet) to value
 * (len bytes, no NUL), replacing any earlier value atomically. It, and
 * the two removals below, first remove the temp files of sets of name
 * that were killed before their rename.
 */
int sr_secret_set(const char *name, const char *key, const char *value, size_t len,
		  struct sr_error *err);
/* The keys of name, sorted; none is fine (an empty list). */
int sr_secret_list(const char *name, struct sr_strv *ret, struct sr_error *err);
/* Removes KEY of name; -ENOENT says there was none. */
int sr_secret_remove(const char *name, const char *key, struct sr_error *err);
/* Removes every secret of name (deployments rm). */
int sr_secret_remove_all(const char *name, struct sr_error *err);
/*
 * A shared hold on the user's secrets (flock on the secrets directory):
 * until *ret_fd is closed, no secret of any name is set or removed (each
 * of the three calls above holds it exclusively while it changes one). A
 * deploy holds it from its check that no secrets wait for a first
 * deployment of its name to that deployment's first version
 * (deploy.h): a `secrets set` in between would otherwise go, unchecked,
 * to the agent that took the name.
 */
int sr_secret_hold(int *ret_fd, struct sr_error *err);
/*
 * What name's secrets are, to tell whether they changed since (a warm
 * pool's, invoke.c): its directory's identity and mtime, and the token
 * each set and removal writes anew, at random (64 bits), after its
 * change, which two changes within one tick of the kernel's clock (a
 * mtime's grain) do not share. A caller that loads the secrets takes the stamp first:
 * a change in between then makes a stamp it sees later differ, not
 * match values older than it.
 */
struct sr_secret_stamp {
	dev_t dev;
	ino_t ino;
	struct timespec mtime;
	uint64_t token;
	bool present;
};

/* name's stamp; all zero (not present) when name has no secrets or it cannot be read. */
void sr_secret_stamp(const char *name, struct sr_secret_stamp *ret);
bool sr_secret_stamp_eq(const struct sr_secret_stamp *a, const struct sr_secret_stamp *b);
/*
 * Loads name's secrets into *ret: "KEY=VALUE" each, NULL-terminated, in
 * one block of memory that no child process inherits (secmem.h), freed
 * with sr_secmem_free() (sr_config_free does it); *ret untouched when
 * there are none. A file another user owns, or one open to group or
 * others, is refused (naming the key, never the value), as an env file
 * is.
 */
int sr_secret_load(const char *name, char ***ret, struct sr_error *err);
/*
 * secrets (NULL-terminated) copied into one block from alloc: the vector,
 * then the strings. sr_secmem_alloc for a block no child inherits, malloc
 * for a copy that a child is to inherit (launch.c: its keeper's), wiped
 * (*ret_size bytes, NULL is fine) before it is freed. NULL, errno set,
 * when alloc fails.
 */
char **sr_secrets_pack(char *const *secrets, void *(*alloc)(size_t), size_t *ret_size);
