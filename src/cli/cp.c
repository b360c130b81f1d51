/* SPDX-License-Identifier: MIT */
/*
 * `sandbox-run cp SRC DST`, one of them ID:PATH: files in or out of a
 * living sandbox (lib/copy.h).
 */
#include "control.h"
#include "copy.h"
#include "options.h"
#include "state.h"
#include "util.h"
#include "verbs.h"

/* "ID:PATH" (ID with no slash): the sandbox's part in *ret_ref and *ret_path. */
static bool sandbox_side(const char *arg, char **ret_ref, const char **ret_path)
{
	const char *colon = strchr(arg, ':');

	if (!colon || colon == arg || memchr(arg, '/', (size_t)(colon - arg)))
		return false;
	*ret_ref = strndup(arg, (size_t)(colon - arg));
	*ret_path = colon + 1;
	return *ret_ref != NULL;
}

int sr_verb_cp(const struct sr_verb_args *a)
{
	_cleanup_free_ char *statedir = NULL, *src_ref = NULL, *dst_ref = NULL;
	_cleanup_close_ int ctl = -1;
	const char *src_path = NULL, *dst_path = NULL;
	struct sr_entry e = {0};
	struct sr_error err = {0};
	struct sr_copy_opts o = {0};
	struct sr_sink sink;
	bool out, in;
	int r;

	sr_sink_stderr(&sink, sr_options_log_level(a->verbosity));
	if (a->argc == 2 && (strcmp(a->argv[1], "-h") == 0 || strcmp(a->argv[1], "--help") == 0)) {
		fputs(
		    "Usage: sandbox-run cp ID:PATH HOSTPATH\n"
		    "       sandbox-run cp HOSTPATH ID:PATH\n"
		    "Copy a file or a tree out of or into a living sandbox (a relative PATH is\n"
		    "relative to /workspace). An existing directory as the destination gets the\n"
		    "copy inside it; anything else is the copy's name (a file there is replaced,\n"
		    "a symbolic link refused). A symbolic link on the way to HOSTPATH is\n"
		    "followed only where root owns it and its directory, as for --bind sources.\n"
		    "Modes, mtimes and symbolic links within the copy are kept; owners, devices,\n"
		    "FIFOs, sockets and set-id bits are not, and nothing is written outside the\n"
		    "destination.\n",
		    stdout);
		return sr_cli_stdout_status("--help");
	}
	if (a->argc != 3) {
		sr_sink_log(&sink, SR_LOG_ERROR,
			    "cp: usage: sandbox-run cp SRC DST (one is ID:PATH)");
		return SR_EXIT_FAILURE;
	}
	out = sandbox_side(a->argv[1], &src_ref, &src_path);
	in = sandbox_side(a->argv[2], &dst_ref, &dst_path);
	if (out == in) {
		sr_sink_log(&sink, SR_LOG_ERROR,
			    "cp: one of SRC and DST must be ID:PATH, the other a host path (write "
			    "./a:b for a host path with a colon)");
		return SR_EXIT_FAILURE;
	}
	r = sr_state_dir(&statedir, &err);
	if (r >= 0)
		r = sr_state_find(statedir, out ? src_ref : dst_ref, &e, &err);
	if (r >= 0)
		r = sr_ctl_connect(e.dir, &ctl, &err);
	if (r >= 0) {
		/* Its workspace's directory on the host: its author's links are not followed. */
		const char *ws = json_string_value(json_object_get(e.state, "workspace"));
		const char *trees[] = {ws && ws[0] == '/' ? ws : NULL, NULL};

		o.agent_trees = trees;
		r = out ? sr_copy_out(ctl, src_path, a->argv[2], &o, &err)
			: sr_copy_in(ctl, a->argv[1], dst_path, &o, &err);
	}
	sr_entry_free(&e);
	if (r < 0) {
		sr_sink_log(&sink, SR_LOG_ERROR, "%s", err.msg);
		return SR_EXIT_FAILURE;
	}
	return 0;
}
