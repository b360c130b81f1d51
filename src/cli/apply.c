/* SPDX-License-Identifier: MIT */
/*
 * `sandbox-run apply ID|FILE [--to DIR] [--force]`: a sandbox's changes
 * made to the host directory its workspace came from (or DIR), as the
 * caller: refused, naming the paths, where the host copy changed since
 * the sandbox started (unless --force), and whatever a crafted changes
 * file carries that leaves DIR, is a device or has a set-id bit.
 */
#include "apply.h"
#include "options.h"
#include "util.h"
#include "verbs.h"

int sr_verb_apply(const struct sr_verb_args *a)
{
	struct sr_apply_report rep = {0};
	struct sr_error err = {0};
	_cleanup_close_ int fd = -1;
	const char *what = NULL, *to = NULL;
	bool force = false, file = false;
	struct sr_sink sink;

	sr_sink_stderr(&sink, sr_options_log_level(a->verbosity));
	for (int i = 1; i < a->argc; i++) {
		if (strcmp(a->argv[i], "-h") == 0 || strcmp(a->argv[i], "--help") == 0) {
			fputs(
			    "Usage: sandbox-run apply ID|FILE [--to DIR] [--force]\n"
			    "Make a sandbox's changes to /workspace (a living sandbox's so far, "
			    "or\n"
			    "a changes file's) in the host directory its workspace came from, or\n"
			    "DIR, as your own files. Nothing is changed when the host copy of a\n"
			    "path changed since the sandbox started (the paths are named): review\n"
			    "with sandbox-run diff, then --force applies over the host's. A link\n"
			    "on the way is never followed; devices and set-id bits never made.\n"
			    "\n"
			    "  --to DIR   apply to DIR (e.g. a copy of the checkout)\n"
			    "  --force    apply where the host copy changed too\n",
			    stdout);
			return sr_cli_stdout_status("--help");
		}
		if (strcmp(a->argv[i], "--force") == 0 || strcmp(a->argv[i], "-f") == 0) {
			force = true;
		} else if (strcmp(a->argv[i], "--to") == 0 && i + 1 < a->argc) {
			to = a->argv[++i];
		} else if (strncmp(a->argv[i], "--to=", 5) == 0) {
			to = a->argv[i] + 5;
		} else if (strcmp(a->argv[i], "--to") == 0) {
			sr_sink_log(&sink, SR_LOG_ERROR,
				    "apply: option --to needs a value (see --help)");
			return SR_EXIT_FAILURE;
		} else if (a->argv[i][0] == '-' && a->argv[i][1]) {
			sr_sink_log(&sink, SR_LOG_ERROR, "apply: unknown option '%s' (see --help)",
				    a->argv[i]);
			return SR_EXIT_FAILURE;
		} else if (!what) {
			what = a->argv[i];
		} else {
			what = NULL;
			break;
		}
	}
	if (!what) {
		sr_sink_log(&sink, SR_LOG_ERROR,
			    "apply: usage: sandbox-run apply ID|FILE [--to DIR] [--force]");
		return SR_EXIT_FAILURE;
	}
	if (sr_cli_open_changes(what, &sink, &fd, &file, &err) < 0 ||
	    sr_changes_apply(fd, to, force, &sink, &rep, &err) < 0) {
		sr_cli_changes_error(what, file, &err);
		sr_sink_log(&sink, SR_LOG_ERROR, "%s%s",
			    strncmp(err.msg, "apply", 5) ? "apply: " : "", err.msg);
		return SR_EXIT_FAILURE;
	}
	sr_sink_log(&sink, SR_LOG_INFO,
		    "applied: %zu added, %zu modified, %zu deleted, %zu already so%s", rep.added,
		    rep.modified, rep.deleted, rep.unchanged,
		    rep.conflicts ? " (conflicts forced over the host's)" : "");
	return 0;
}
