/* SPDX-License-Identifier: MIT */
/*
 * `sandbox-run timeout ID DURATION`: a new deadline for a living sandbox,
 * DURATION from now (0: none), as E2B's setTimeout. It prints when the
 * sandbox now expires.
 */
#include "config.h"
#include "control.h"
#include "options.h"
#include "state.h"
#include "units.h"
#include "util.h"
#include "verbs.h"

int sr_verb_timeout(const struct sr_verb_args *a)
{
	struct sr_error err = {0};
	struct sr_sink sink;
	json_t *req, *reply = NULL, *expires;
	uint64_t ms;
	int r;

	sr_sink_stderr(&sink, sr_options_log_level(a->verbosity));
	if (sr_cli_is_help(a)) {
		fputs(
		    "Usage: sandbox-run timeout ID DURATION\n"
		    "Give the living sandbox ID a new deadline, DURATION from now (120, 90s, 5m,\n"
		    "1h; 0: none), and print when it expires.\n",
		    stdout);
		return sr_cli_stdout_status("--help");
	}
	if (a->argc != 3) {
		sr_sink_log(&sink, SR_LOG_ERROR, "timeout: usage: sandbox-run timeout ID DURATION");
		return SR_EXIT_FAILURE;
	}
	/* The keeper's bound too (keeper-state.c), said here in the CLI's words. */
	if (sr_parse_duration(a->argv[2], &ms) == 0 && ms > SR_DEADLINE_MAX_MS) {
		sr_sink_log(&sink, SR_LOG_ERROR,
			    "timeout: '%s': a deadline is at most %d days from now (0: none)",
			    a->argv[2], SR_DEADLINE_MAX_DAYS);
		return SR_EXIT_FAILURE;
	}
	if (sr_parse_duration(a->argv[2], &ms) < 0) {
		sr_sink_log(&sink, SR_LOG_ERROR,
			    "timeout: bad duration '%s' (use e.g. 120, 90s, 5m, 1h, or 0 for none)",
			    a->argv[2]);
		return SR_EXIT_FAILURE;
	}
	req = json_pack("{sssI}", "op", "timeout", "ms", (json_int_t)ms);
	r = sr_ctl_call_ref(a->argv[1], req, &reply, &err);
	json_decref(req);
	if (r < 0) {
		sr_cli_verb_error(&sink, "timeout", err.msg);
		return SR_EXIT_FAILURE;
	}
	expires = json_object_get(reply, "expires");
	printf("%s\n", json_is_string(expires) ? json_string_value(expires) : "never");
	json_decref(reply);
	return sr_cli_stdout_status("timeout");
}
