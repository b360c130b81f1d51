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

/*
 * Every ID as a sandbox, all before any is ended: `rm box box`, or a name
 * and a prefix of its id, name one sandbox, which a look-up after the
 * first was ended would no longer find. (*ret_v)[i] is the i-th ID's; its
 * dir is NULL when there is no such sandbox or an earlier ID named it.
 * The status: 125 if an ID named none (with -f, as rm -f and docker rm
 * -f, one that is gone already, say at its deadline, is no error: a
 * cleanup step may run whatever became of the sandbox).
 */
static int resolve(const char *statedir, char **refs, int n, bool force, const struct sr_sink *sink,
		   struct sr_entry **ret_v)
{
	struct sr_entry *v = calloc((size_t)n, sizeof(*v));
	int status = 0;

	if (!v) {
		sr_sink_log(sink, SR_LOG_ERROR, "rm: %s", strerror(ENOMEM));
		return SR_EXIT_FAILURE;
	}
	for (int i = 0; i < n; i++) {
		struct sr_error err = {0};
		int r = sr_state_find(statedir, refs[i], &v[i], &err);

		if (r == -ENOENT && force)
			continue;
		if (r < 0) {
			sr_sink_log(sink, SR_LOG_ERROR, "rm: %s", err.msg);
			status = SR_EXIT_FAILURE;
			continue;
		}
		for (int j = 0; j < i; j++)
			if (v[j].dir && strcmp(v[j].id, v[i].id) == 0) {
				sr_entry_free(&v[i]);
				break;
			}
	}
	*ret_v = v;
	return status;
}

/* One sandbox ended: 0, or -errno with err set. */
static int end_one(const struct sr_entry *e, bool force, struct sr_error *err)
{
	json_t *req = json_pack("{sssb}", "op", "rm", "force", force);
	int r = req ? sr_ctl_call(e->dir, req, NULL, err)
		    : sr_error_msg(err, -ENOMEM, "%s", strerror(ENOMEM));

	json_decref(req);
	/* Its keeper hung up on us: ending by itself meanwhile (its deadline) is gone all the
	 * same. */
	if (r < 0 && access(e->dir, F_OK) < 0)
		r = 0;
	return r;
}

int sr_verb_rm(const struct sr_verb_args *a)
{
	_cleanup_free_ char *statedir = NULL;
	struct sr_entry *v = NULL;
	struct sr_error err = {0};
	struct sr_sink sink;
	bool force = false;
	int status, first = 1;

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
			    "grace PID 1 otherwise has to end them, and takes an ID that names no\n"
			    "sandbox (ended already, at its deadline) for one ended. A sandbox\n"
			    "named twice is ended once.\n",
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
	status = resolve(statedir, a->argv + first, a->argc - first, force, &sink, &v);
	/* Each found, whatever became of the others: the status says if any failed. */
	for (int i = 0; v && i < a->argc - first; i++) {
		if (v[i].dir && end_one(&v[i], force, &err) < 0) {
			sr_sink_log(&sink, SR_LOG_ERROR, "rm: %s", err.msg);
			status = SR_EXIT_FAILURE;
		}
		sr_entry_free(&v[i]);
	}
	free(v);
	return status;
}
