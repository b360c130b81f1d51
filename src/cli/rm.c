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
			sr_cli_verb_error(sink, "rm", err.msg);
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

static void usage(void)
{
	fputs("Usage: sandbox-run rm [-f] ID...\n"
	      "End the living sandboxes named: every process is killed, and nothing\n"
	      "of them is left. -f (--force) kills at once, without the second of\n"
	      "grace PID 1 otherwise has to end them, and takes an ID that names no\n"
	      "sandbox (ended already, at its deadline) for one ended. A sandbox\n"
	      "named twice is ended once.\n",
	      stdout);
}

/*
 * The options, wherever they are before a "--" (`rm ID -f`, as docker's),
 * all taken before any sandbox is ended: `rm ID --help` ended ID, then
 * said "no sandbox '--help'". The IDs are moved to the front of refs
 * (no ID starts with '-'); their count, or -1 with the status in *ret.
 */
static int parse(const struct sr_verb_args *a, char **refs, bool *force, const struct sr_sink *sink,
		 int *ret)
{
	bool ids_only = false;
	int n = 0;

	for (int i = 1; i < a->argc; i++) {
		const char *w = a->argv[i];

		if (ids_only || w[0] != '-') {
			refs[n++] = a->argv[i];
		} else if (strcmp(w, "-f") == 0 || strcmp(w, "--force") == 0) {
			*force = true;
		} else if (strcmp(w, "-h") == 0 || strcmp(w, "--help") == 0) {
			usage();
			*ret = sr_cli_stdout_status("--help");
			return -1;
		} else if (strcmp(w, "--") == 0) {
			ids_only = true;
		} else {
			sr_sink_log(sink, SR_LOG_ERROR, "rm: unknown option '%s' (see --help)", w);
			*ret = SR_EXIT_FAILURE;
			return -1;
		}
	}
	if (n == 0) {
		sr_sink_log(sink, SR_LOG_ERROR, "rm: usage: sandbox-run rm [-f] ID...");
		*ret = SR_EXIT_FAILURE;
		return -1;
	}
	return n;
}

int sr_verb_rm(const struct sr_verb_args *a)
{
	_cleanup_free_ char *statedir = NULL;
	_cleanup_free_ char **refs = calloc((size_t)a->argc, sizeof(*refs));
	struct sr_entry *v = NULL;
	struct sr_error err = {0};
	struct sr_sink sink;
	bool force = false;
	int status, n;

	sr_sink_stderr(&sink, sr_options_log_level(a->verbosity));
	if (!refs) {
		sr_sink_log(&sink, SR_LOG_ERROR, "rm: %s", strerror(ENOMEM));
		return SR_EXIT_FAILURE;
	}
	n = parse(a, refs, &force, &sink, &status);
	if (n < 0)
		return status;
	if (sr_state_dir(&statedir, &err) < 0) {
		sr_cli_verb_error(&sink, "rm", err.msg);
		return SR_EXIT_FAILURE;
	}
	status = resolve(statedir, refs, n, force, &sink, &v);
	/* Each found, whatever became of the others: the status says if any failed. */
	for (int i = 0; v && i < n; i++) {
		if (v[i].dir && end_one(&v[i], force, &err) < 0) {
			sr_cli_verb_error(&sink, "rm", err.msg);
			status = SR_EXIT_FAILURE;
		}
		sr_entry_free(&v[i]);
	}
	free(v);
	return status;
}
