/* SPDX-License-Identifier: MIT */
/*
 * `sandbox-run snapshot ID NAME`: the living sandbox's files and
 * configuration kept as NAME (snapshot.h); `sandbox-run create --from
 * NAME` makes new sandboxes of it. `sandbox-run snapshots [--json]` lists
 * them, `sandbox-run snapshots rm NAME...` removes them.
 */
#include "control.h"
#include "options.h"
#include "snapshot.h"
#include "state.h"
#include "util.h"
#include "verbs.h"
#include "units.h"

#include <getopt.h>
#include <limits.h>

int sr_verb_snapshot(const struct sr_verb_args *a)
{
	enum { OPT_IDLE_TIMEOUT = 0x100 };
	static const struct option opts[] = {
	    {"idle-timeout", required_argument, NULL, OPT_IDLE_TIMEOUT},
	    {"quiet", no_argument, NULL, 'q'},
	    {"verbose", no_argument, NULL, 'v'},
	    {"help", no_argument, NULL, 'h'},
	    {},
	};
	struct sr_error err = {0};
	struct sr_sink sink;
	json_t *req, *reply = NULL;
	int idle_ms = SR_CLI_IDLE_MS;
	int o, r;

	sr_sink_stderr(&sink, sr_options_log_level(a->verbosity));
	if (sr_cli_is_help(a)) {
		fputs(
		    "Usage: sandbox-run snapshot [--idle-timeout DURATION] ID NAME\n"
		    "Keep the files of the living sandbox ID (/workspace, /home/user, /tmp) and "
		    "its\n"
		    "configuration as the snapshot NAME; `sandbox-run create --from NAME` makes "
		    "new\n"
		    "sandboxes of it, each independent of the others. Running processes and\n"
		    "memory are not kept.\n"
		    "\n"
		    "      --idle-timeout DURATION  give up when nothing is written for DURATION\n"
		    "                       (a worker stopped inside: default 60s; 0: wait)\n"
		    "  -q, --quiet          only errors on stderr (-v: taken, adds nothing)\n"
		    "  -h, --help           print this help and exit\n",
		    stdout);
		return sr_cli_stdout_status("--help");
	}
	optind = 0;
	opterr = 0;
	while ((o = getopt_long(a->argc, a->argv, ":qvh", opts, NULL)) != -1) {
		switch (o) {
		case 'q':
			sink.level = SR_LOG_ERROR;
			break;
		case 'v':
		case 'h':
			break;
		case OPT_IDLE_TIMEOUT:
			if (sr_cli_idle_timeout(optarg, &idle_ms, &err) < 0) {
				sr_sink_log(&sink, SR_LOG_ERROR, "snapshot: %s", err.msg);
				return SR_EXIT_FAILURE;
			}
			break;
		default:
			(void)sr_options_getopt_error(o, opts, a->argc, a->argv, &err);
			sr_sink_log(&sink, SR_LOG_ERROR, "snapshot: %s", err.msg);
			return SR_EXIT_FAILURE;
		}
	}
	if (a->argc - optind != 2) {
		sr_sink_log(
		    &sink, SR_LOG_ERROR,
		    "snapshot: usage: sandbox-run snapshot [--idle-timeout DURATION] ID NAME");
		return SR_EXIT_FAILURE;
	}
	req = json_pack("{sssssI}", "op", "snapshot", "name", a->argv[optind + 1], "idle_ms",
			(json_int_t)idle_ms);
	r = req ? sr_ctl_call_ref(a->argv[optind], req, &reply, &err)
		: sr_error_errno(&err, -ENOMEM, "snapshot");
	if (req)
		json_decref(req);
	if (r < 0) {
		sr_cli_verb_error(&sink, "snapshot", err.msg);
		return SR_EXIT_FAILURE;
	}
	json_decref(reply);
	return 0;
}

static void print_table(json_t *all)
{
	size_t i;
	json_t *m;

	printf("%-24s  %-20s  %-12s  %s\n", "NAME", "CREATED", "SIZE", "FROM");
	json_array_foreach (all, i, m) {
		json_t *size = json_object_get(m, "size_bytes");

		printf("%-24s  %-20s  %-12lld  %.12s\n",
		       json_string_value(json_object_get(m, "name")) ?: "?",
		       json_string_value(json_object_get(m, "created")) ?: "?",
		       json_is_integer(size) ? (long long)json_integer_value(size) : -1LL,
		       json_string_value(json_object_get(m, "sandbox_id")) ?: "-");
	}
}

int sr_verb_snapshots(const struct sr_verb_args *a)
{
	struct sr_error err = {0};
	struct sr_sink sink;
	json_t *all = NULL;
	bool as_json;
	int status = 0, list_at;

	sr_sink_stderr(&sink, sr_options_log_level(a->verbosity));
	if (sr_cli_asks_help(a)) {
		fputs("Usage: sandbox-run snapshots [ls] [--json]\n"
		      "       sandbox-run snapshots rm NAME...\n"
		      "List your snapshots (name, when, size, the sandbox it came from), or\n"
		      "remove some.\n",
		      stdout);
		return sr_cli_stdout_status("--help");
	}
	if (a->argc >= 2 && strcmp(a->argv[1], "rm") == 0) {
		if (a->argc < 3) {
			sr_sink_log(&sink, SR_LOG_ERROR, "snapshots rm: which? (NAME...)");
			return SR_EXIT_FAILURE;
		}
		/* Said before any is removed: no NAME starts with '-'. */
		if (sr_cli_refuse_options(a, 2, "snapshots rm", &sink))
			return SR_EXIT_FAILURE;
		for (int i = 2; i < a->argc; i++)
			if (!sr_cli_named_before(a->argv, 2, i) &&
			    sr_snapshot_remove(a->argv[i], &err) < 0) {
				sr_sink_log(&sink, SR_LOG_ERROR, "snapshots rm: %s", err.msg);
				status = SR_EXIT_FAILURE;
			}
		return status;
	}
	/* `snapshots ls [--json]` too, as `secrets ls` and `docker image ls` have it. */
	list_at = a->argc >= 2 && strcmp(a->argv[1], "ls") == 0 ? 2 : 1;
	as_json = a->argc == list_at + 1 && strcmp(a->argv[list_at], "--json") == 0;
	if (a->argc != list_at && !as_json) {
		sr_sink_log(&sink, SR_LOG_ERROR,
			    "snapshots: usage: sandbox-run snapshots [ls] [--json] | rm NAME...");
		return SR_EXIT_FAILURE;
	}
	if (sr_snapshot_list(&all, &err) < 0) {
		sr_sink_log(&sink, SR_LOG_ERROR, "snapshots: %s", err.msg);
		return SR_EXIT_FAILURE;
	}
	if (as_json) {
		status = sr_cli_print_json(all, "snapshots");
	} else {
		print_table(all);
		status = sr_cli_stdout_status("snapshots");
	}
	json_decref(all);
	return status;
}
