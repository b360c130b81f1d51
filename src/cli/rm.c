/* SPDX-License-Identifier: MIT */
/*
 * `sandbox-run rm [-f] ID...`: ends living sandboxes. The keeper asks PID
 * 1 to kill every process (-f: kills them at once), removes the sandbox's
 * cgroup, helper and state, answers and exits; nothing is left.
 */
#include "control.h"
#include "options.h"
#include "state.h"
#include "util.h"
#include "verbs.h"

int sr_verb_rm(const struct sr_verb_args *a)
{
	_cleanup_free_ char *statedir = NULL;
	struct sr_error err = {0};
	struct sr_sink sink;
	bool force = false;
	int status = 0, first = 1;

	sr_sink_stderr(&sink, sr_options_log_level(a->verbosity));
	for (; first < a->argc && a->argv[first][0] == '-'; first++) {
		if (strcmp(a->argv[first], "-f") == 0 || strcmp(a->argv[first], "--force") == 0) {
			force = true;
		} else if (strcmp(a->argv[first], "-h") == 0 ||
			   strcmp(a->argv[first], "--help") == 0) {
			fputs(
			    "Usage: sandbox-run rm [-f] ID...\n"
			    "End the living sandboxes named: every process is killed, and nothing\n"
			    "of them is left. -f (--force) kills at once, without the second of\n"
			    "grace PID 1 otherwise has to end them.\n",
			    stdout);
			return sr_cli_stdout_status("--help");
		} else if (strcmp(a->argv[first], "--") == 0) {
			first++;
			break;
		} else {
			sr_sink_log(&sink, SR_LOG_ERROR, "rm: unknown option '%s' (see --help)",
				    a->argv[first]);
			return SR_EXIT_FAILURE;
		}
	}
	if (first >= a->argc) {
		sr_sink_log(&sink, SR_LOG_ERROR, "rm: usage: sandbox-run rm [-f] ID...");
		return SR_EXIT_FAILURE;
	}
	if (sr_state_dir(&statedir, &err) < 0) {
		sr_sink_log(&sink, SR_LOG_ERROR, "rm: %s", err.msg);
		return SR_EXIT_FAILURE;
	}
	/* Each named one, whatever became of the others: the status says if any failed. */
	for (int i = first; i < a->argc; i++) {
		struct sr_entry e = {0};
		json_t *req = json_pack("{sssb}", "op", "rm", "force", force);
		int r = sr_state_find(statedir, a->argv[i], &e, &err);

		if (r >= 0)
			r = sr_ctl_call(e.dir, req, NULL, &err);
		json_decref(req);
		/* Its keeper hung up on us: ending by itself meanwhile (its deadline) is gone all
		 * the same. */
		if (r < 0 && e.dir && access(e.dir, F_OK) < 0)
			r = 0;
		sr_entry_free(&e);
		if (r < 0) {
			sr_sink_log(&sink, SR_LOG_ERROR, "rm: %s", err.msg);
			status = SR_EXIT_FAILURE;
		}
	}
	return status;
}
