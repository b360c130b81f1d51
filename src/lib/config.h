/* SPDX-License-Identifier: MIT */
/*
 * The effective configuration of one run: built-in defaults, then the
 * profile chain, then command-line options, all through sr_config_set() so
 * that a key means the same thing wherever it is written. No globals: unit
 * tests build one directly.
 */
#pragma once

#include "log.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#define SR_DEFAULT_PROFILE "default"
/* The sandbox's disk while the root is built (mounts.c): "/" SR_DATA_DIR, gone before the agent
 * runs. */
#define SR_DATA_DIR ".sr-data"
/* [deploy]: how long an install step may take, and how many versions a deployment keeps. */
#define SR_DEFAULT_INSTALL_TIMEOUT_MS (10 * 60 * 1000)
#define SR_DEFAULT_KEEP_VERSIONS      3
/*
 * A living sandbox's deadline, at most: a year and a day. The keeper holds
 * every deadline to it (create's, a new one, a warm one's release), and the
 * API says a request's past it as the field's before any keeper is asked.
 */
#define SR_DEADLINE_MAX_DAYS 366
#define SR_DEADLINE_MAX_MS   ((uint64_t)SR_DEADLINE_MAX_DAYS * 24 * 3600 * 1000)

enum sr_net_mode {
	SR_NET_NONE,
	SR_NET_EGRESS,
	_SR_NET_MODE_MAX,
};

/*
 * The user-mode network stack behind --net egress (docs/network.md): the
 * first one installed in this order, or the one named.
 */
enum sr_net_helper {
	SR_NET_HELPER_AUTO,
	SR_NET_HELPER_SLIRP4NETNS,
	SR_NET_HELPER_PASTA,
	_SR_NET_HELPER_MAX,
};

/*
 * Where the sandbox's writable layers live (docs/limits.md): auto picks,
 * disk keeps them on the host's disk, memory on a tmpfs (the fastest
 * start; its pages count as memory where a cgroup holds the sandbox).
 */
enum sr_disk_backing {
	SR_DISK_BACKING_AUTO,
	SR_DISK_BACKING_DISK,
	SR_DISK_BACKING_MEMORY,
	_SR_DISK_BACKING_MAX,
};

/* A growable string list; items is NULL-terminated (execve-ready) once non-empty. */
struct sr_strv {
	char **items;
	size_t n;
};

int sr_strv_push(struct sr_strv *v, const char *s);
/* Frees every item and leaves v empty (and reusable). */
void sr_strv_free(struct sr_strv *v);
/*
 * The same, each item wiped first: a list that may hold secrets (an
 * environment), of which a later core dump or heap reuse shows nothing.
 */
void sr_strv_wipe(struct sr_strv *v);

struct sr_bind {
	char *src; /* absolute host path */
	char *dst; /* absolute path inside the sandbox */
	bool writable;
	char *origin; /* "profile FILE:LINE" that set it, for messages; NULL: an option */
};

/*
 * --export PATH[:HOSTDIR] ([artifacts] export): PATH in the sandbox copied
 * to the host when the sandbox ends (docs/artifacts.md).
 */
struct sr_export {
	char *path;   /* relative (to /workspace) or absolute; no "..", no ':' */
	char *host;   /* absolute: the copy itself, or with into, the directory it goes in */
	bool into;    /* HOSTDIR was written with a trailing '/' */
	char *origin; /* as for sr_bind */
};

struct sr_config {
	/* [profile] */
	char *profile;	    /* name or path as asked for */
	char *profile_path; /* file it was read from ("builtin:NAME" if embedded) */

	/* [limits] -- 0 means unlimited / none; a non-zero size is at least 1M */
	uint64_t memory_bytes;
	uint32_t cpus_milli; /* 1000 = one CPU */
	uint64_t pids;
	uint64_t timeout_ms;
	uint64_t disk_bytes;
	enum sr_disk_backing disk_backing;
	bool strict;

	/* [network] */
	enum sr_net_mode net;
	enum sr_net_helper net_helper;
	struct sr_strv allow; /* "CIDR|IP|HOST|*.HOST[:PORT]" as written */
	struct sr_strv deny;
	struct sr_strv allow_host; /* ports of the host's loopback, decimal, each once */

	/* [env] */
	struct sr_strv env; /* "KEY=VALUE"; a later KEY replaces an earlier one */
	char *env_file;
	char *env_file_origin; /* as for sr_bind */
	struct sr_strv pass_env;

	/* [filesystem] */
	struct sr_bind *binds;
	size_t n_binds;

	/* [agent] */
	char *entry; /* shell-free command line, split on blanks */

	/* [deploy] (deploy.h) */
	char *install;		     /* the install step, run by /bin/sh -c; NULL: detected */
	uint64_t install_timeout_ms; /* 0: none */
	uint64_t keep_versions;	     /* versions a deployment keeps; 0: all */

	/*
	 * A deployment's secrets, "KEY=VALUE" each, NULL-terminated (NULL:
	 * none; deploy.h): set only from its 0600 store (sr_secret_load), in
	 * memory no child process inherits (a keeper gets a copy of its own:
	 * launch.c), given to the agent after [env] file and before [env]
	 * values, and never printed (--print-config, a snapshot's
	 * configuration) or logged. Wiped when freed.
	 */
	char **secrets;
	/*
	 * A warm pool's sandbox (pool.h): the word its pool holds it with,
	 * NULL otherwise (not the config's: the pool's, for the launch).
	 * Until held, its keeper takes no request but rm and a hold that
	 * carries it, and its state says "warm" from the start, so that
	 * nobody reaches it before its pool does. Never printed or saved.
	 */
	const char *pool_token;
	/*
	 * The deployment whose version this runs (sr_deploy_apply, deploy.h):
	 * its name, NULL for any other sandbox, and the version. The keeper
	 * writes them into the sandbox's state (state.h, sr_state_deployment),
	 * which ls and inspect say. Never printed or saved: a profile names no
	 * deployment, wherever its file lies.
	 */
	char *deployment;
	unsigned deployment_version;

	/* [artifacts] */
	struct sr_export *exports;
	size_t n_exports;
	char *changes_path; /* --changes FILE: absolute */
	char *changes_origin;

	/* command line only */
	char *workspace;   /* -- COMMAND, create: host directory, or NULL for empty */
	char *result_path; /* --result */
	bool print_config;
	bool command_mode; /* `-- COMMAND ARG...` rather than `AGENT ARG...` */
	bool entry_given;  /* --entry: warned about where it does not apply (agent.c) */
	bool no_entry;	   /* create: a sandbox with nothing to run yet (no entry detected) */
	char *name;	   /* create --name */
	char *from;	   /* create --from SNAPSHOT */
	enum sr_log_level log_level; /* -q / -v: sandbox-run's own messages */
	char **argv;		     /* AGENT ARG... / COMMAND ARG... (borrowed) */
	int argc;

	/*
	 * While a profile file is applied (profile.c): the directory its
	 * relative paths are taken against and "profile FILE:LINE" for the
	 * key being set. NULL: the current directory, an option. Borrowed.
	 */
	const char *set_base;
	const char *set_origin;
};

/* Zeroes c and applies the built-in defaults (those of profiles/default.ini). */
void sr_config_init(struct sr_config *c);
void sr_config_free(struct sr_config *c);

/*
 * Sets one key. Profiles and options both come through here: `--memory 2G`
 * is sr_config_set(c, "limits", "memory", "2G", err). List keys (allow,
 * deny, pass, ro-bind, bind) append, and an empty value empties the list
 * (so a profile can drop what it inherited); an empty entry or env file
 * unsets it. [env] keys other than file/pass set a variable. [profile] keys
 * are accepted and ignored (the profile loader handles inherit). Errors
 * name the key and say what a valid value looks like ("memory: bad size
 * 'lots' (use e.g. 512M, 2G, or 0 for unlimited)"), or say that the key or
 * section is unknown with a did-you-mean; the caller adds the file:line.
 */
int sr_config_set(struct sr_config *c, const char *section, const char *key, const char *value,
		  struct sr_error *err);
/* The same, for callers that name the key themselves ("option --memory: bad size ..."). */
int sr_config_apply(struct sr_config *c, const char *section, const char *key, const char *value,
		    struct sr_error *err);

/*
 * Sets environment variable NAME (a later one replaces an earlier one).
 * NAME must match [A-Za-z_][A-Za-z0-9_]* and must not be "file" or "pass",
 * which [env] reserves for its own keys.
 */
int sr_config_set_env(struct sr_config *c, const char *name, const char *value,
		      struct sr_error *err);

/*
 * Adds a bind of host path src at dst (dst NULL: the same path as src).
 * "~" and "~/..." in src expand to $HOME, a relative src is made absolute
 * against c->set_base (a profile's directory) or the current directory.
 * dst must be absolute, without ".." or ':', and not /, /proc, /dev,
 * /workspace, /.sr-data or anything under /proc, /dev or /.sr-data.
 * A bind to the same dst as an earlier one replaces it.
 */
int sr_config_add_bind(struct sr_config *c, const char *src, const char *dst, bool writable,
		       struct sr_error *err);

/* 0, or an "unknown section [x] (did you mean [y]?)" error. */
int sr_config_check_section(const char *section, struct sr_error *err);

/* Did-you-mean for an unknown key/section: the closest known one, or NULL. */
const char *sr_config_suggest_section(const char *section);
const char *sr_config_suggest_key(const char *section, const char *key);
bool sr_config_known_section(const char *section);
bool sr_config_known_key(const char *section, const char *key);
/*
 * The candidate (NULL-terminated list) closest to word by edit distance
 * (adjacent transpositions count 1, case is ignored), if close enough to
 * be a typo: at most 1 edit for names under 5 characters, else 2.
 */
const char *sr_suggest(const char *word, const char *const *candidates);

/* Cross-field checks after everything is applied (e.g. bind paths absolute). */
int sr_config_validate(const struct sr_config *c, struct sr_error *err);

/*
 * The effective configuration as a profile that loads back to the same
 * configuration. Env variables are printed with their values; the env file
 * is printed as its path (never read here) and pass-env as names only.
 * Command-line-only settings are printed as comments. A value inih cannot
 * read back (leading or trailing blanks, " ;", a newline) is printed as a
 * comment saying so. Returns 0 or -errno of the write.
 */
int sr_config_print(const struct sr_config *c, FILE *f);

/*
 * Adds an export: spec is "PATH[:HOSTDIR]" (split at the first ':'). PATH
 * is a path in the sandbox (relative: to /workspace), without ".."; HOSTDIR
 * is made absolute like a bind's source, and defaults to PATH (relative)
 * or its last part (absolute) under the current directory. An empty spec
 * empties the list.
 */
int sr_config_add_export(struct sr_config *c, const char *spec, struct sr_error *err);

const char *sr_net_mode_to_string(enum sr_net_mode m);
const char *sr_disk_backing_to_string(enum sr_disk_backing b);
const char *sr_net_helper_to_string(enum sr_net_helper h);
