/* SPDX-License-Identifier: MIT */
/*
 * What to run: AGENT (directory, executable file, archive) or -- COMMAND,
 * turned into a workspace source and the argv to exec inside the sandbox.
 */
#pragma once

#include "config.h"

#define SR_WORKSPACE "/workspace"

enum sr_agent_kind {
	SR_AGENT_DIR,	  /* host directory: overlay lower layer */
	SR_AGENT_FILE,	  /* executable file: copied into an empty workspace, or --workspace DIR */
	SR_AGENT_ARCHIVE, /* extracted inside the sandbox into a fresh workspace */
	SR_AGENT_COMMAND, /* -- COMMAND: --workspace DIR or an empty workspace */
	_SR_AGENT_KIND_MAX,
};

struct sr_agent {
	enum sr_agent_kind kind;
	char *host_dir;	    /* absolute; NULL for an archive or an empty workspace */
	char *archive_path; /* absolute; SR_AGENT_ARCHIVE only */
	bool snapshot;	    /* the archive is a snapshot's (create --from: state.h) */
	/*
	 * SR_AGENT_FILE outside the workspace: the file (absolute, no symbolic
	 * link), copied into it as SR_WORKSPACE/NAME; else NULL.
	 */
	char *file_path;
	/*
	 * config->binds[i].src, one each, resolved on the host with no
	 * symbolic link left (hostpath.h): what the sandbox opens.
	 */
	struct sr_strv bind_sources;
	/*
	 * The command inside the sandbox. Empty for an archive until it is
	 * extracted and its entry detected (sr_agent_detect_entry in the child).
	 */
	struct sr_strv argv;
};

/*
 * Host side: classifies c->argv[0] and, for a directory or file, finds the
 * entry (not with c->no_entry: a sandbox made to live, run nothing yet).
 * --workspace DIR goes with -- COMMAND, an executable file, or nothing
 * (create). Resolves the --bind sources too (bind_sources). Warnings (an --entry that does not
 * apply) go to sink.
 */
int sr_agent_resolve(const struct sr_config *c, const struct sr_sink *sink, struct sr_agent *ret,
		     struct sr_error *err);
void sr_agent_free(struct sr_agent *a);

/*
 * Entry detection in the workspace dirfd: `entry` (from --entry / the
 * profile) if set, split on blanks (no shell, no quoting), else an
 * executable file `agent`, else package.json (node + "main", default
 * index.js), else main.py (python3). Appends the command, then
 * extra_args, to ret_argv (untouched on failure). `what` names the
 * workspace in messages: the directory or archive as the user gave it.
 * Not found: err->status 127 and a message listing what was looked for;
 * found but unusable (not executable, a symlink out of the workspace, a
 * broken package.json): 126.
 */
int sr_agent_detect_entry_in(int dirfd, const char *what, const char *entry,
			     char *const *extra_args, int n_extra, struct sr_strv *ret_argv,
			     struct sr_error *err);
/* The same, with messages naming the workspace as SR_WORKSPACE. */
int sr_agent_detect_entry(int dirfd, const char *entry, char *const *extra_args, int n_extra,
			  struct sr_strv *ret_argv, struct sr_error *err);

/* By name: .tar .tar.gz .tgz .tar.xz .txz .tar.zst .tzst .tar.bz2 .zip */
bool sr_agent_is_archive_name(const char *path);

/*
 * The top-level "main" string of a package.json text (decoded; the last
 * one if repeated, as in JSON.parse), -ENOENT when absent, -EINVAL when
 * the text is not valid JSON, is not an object, nests deeper than 512
 * levels, or "main" is not a string or contains NUL; -ENOMEM. Read with
 * jansson (src/base/json.h), which also refuses two things RFC 8259
 * allows and no real package.json has: a number beyond a double's range
 * (1e400) and a "\u0000" in a key.
 */
int sr_agent_package_main(const char *json, size_t len, char **ret_main);
