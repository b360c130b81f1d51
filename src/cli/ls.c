/* SPDX-License-Identifier: MIT */
/*
 * `sandbox-run ls [--json]` and `sandbox-run inspect ID`: the user's
 * living sandboxes. ls reads their state files (no keeper is woken); a
 * keeper that died is cleaned up on the way (state.h). inspect asks the
 * keeper, for usage so far.
 */
#include "control.h"
#include "options.h"
#include "state.h"
#include "util.h"
#include "verbs.h"

#include <limits.h>
#include <time.h>

static const char *str(json_t *state, const char *key, const char *none)
{
	json_t *v = state ? json_object_get(state, key) : NULL;

	return json_is_string(v) ? json_string_value(v) : none;
}

/* "12s", "5m", "3h", "2d": how long ago (ms < 0) or from now. */
static void span(int64_t ms, char *buf, size_t len)
{
	int64_t s = (ms < 0 ? -ms : ms) / 1000;

	if (s < 120)
		snprintf(buf, len, "%llds", (long long)s);
	else if (s < 7200)
		snprintf(buf, len, "%lldm", (long long)(s / 60));
	else if (s < 172800)
		snprintf(buf, len, "%lldh", (long long)(s / 3600));
	else
		snprintf(buf, len, "%lldd", (long long)(s / 86400));
}

static int64_t now_ms(void)
{
	struct timespec t;

	clock_gettime(CLOCK_REALTIME, &t);
	return (int64_t)t.tv_sec * 1000 + t.tv_nsec / 1000000;
}

static void print_table(struct sr_entry *v, size_t n)
{
	printf("%-12s  %-20s  %-8s  %-8s  %-8s  %s\n", "ID", "NAME", "STATE", "AGE", "EXPIRES",
	       "PROFILE");
	for (size_t i = 0; i < n; i++) {
		json_t *s = v[i].state;
		json_t *created = s ? json_object_get(s, "created_ns") : NULL;
		json_t *expires = s ? json_object_get(s, "expires_ms") : NULL;
		char age[16] = "-", left[16] = "never", profile[PATH_MAX];
		const char *name;
		unsigned version;

		if (json_is_integer(created))
			span(now_ms() - json_integer_value(created) / 1000000, age, sizeof(age));
		if (json_is_integer(expires) && json_integer_value(expires) > now_ms())
			span(json_integer_value(expires) - now_ms(), left, sizeof(left));
		else if (json_is_integer(expires))
			snprintf(left, sizeof(left), "overdue"); /* its keeper is ending it */
		/*
		 * A profile is any path (-p FILE): one line of the table, no escape
		 * sequence. One made --from a snapshot runs on the snapshot's own
		 * configuration file, which is named by the snapshot, and one of a
		 * deployment (a server's warm one: its keeper wrote which) on its
		 * version's config.ini, named by the deployment and version (--json
		 * has the path).
		 */
		if (json_is_string(json_object_get(s, "from"))) {
			char from[PATH_MAX - 16];

			sr_printable(str(s, "from", "-"), from, sizeof(from));
			snprintf(profile, sizeof(profile), "snapshot:%s", from);
		} else if (sr_state_deployment(s, &name, &version)) {
			snprintf(profile, sizeof(profile), "deployment:%s@%u", name, version);
		} else {
			sr_printable(str(s, "profile", "-"), profile, sizeof(profile));
		}
		printf("%-12.12s  %-20s  %-8s  %-8s  %-8s  %s\n", v[i].id, str(s, "name", "-"),
		       str(s, "state", "unknown"), age, left, profile);
	}
}

int sr_verb_ls(const struct sr_verb_args *a)
{
	_cleanup_free_ char *statedir = NULL;
	struct sr_entry *v = NULL;
	struct sr_error err = {0};
	struct sr_sink sink;
	bool json = false;
	size_t n = 0;
	int status;

	sr_sink_stderr(&sink, sr_options_log_level(a->verbosity));
	for (int i = 1; i < a->argc; i++) {
		if (strcmp(a->argv[i], "--json") == 0) {
			json = true;
		} else if (strcmp(a->argv[i], "-h") == 0 || strcmp(a->argv[i], "--help") == 0) {
			fputs("Usage: sandbox-run ls [--json]\n"
			      "List your living sandboxes (sandbox-run create): id, name, state, "
			      "age,\n"
			      "time left before the deadline, profile. --json: one array of their\n"
			      "state objects (see sandbox-run(1), LIVING SANDBOXES).\n",
			      stdout);
			return sr_cli_stdout_status("--help");
		} else if (a->argv[i][0] != '-') {
			/* `ls ID`, as `docker ps` users filter: inspect is the one-sandbox view. */
			sr_sink_log(&sink, SR_LOG_ERROR,
				    "ls: takes no ID ('%s'): it lists every sandbox; sandbox-run "
				    "inspect %s shows one",
				    a->argv[i], a->argv[i]);
			return SR_EXIT_FAILURE;
		} else {
			sr_sink_log(&sink, SR_LOG_ERROR, "ls: unknown argument '%s' (see --help)",
				    a->argv[i]);
			return SR_EXIT_FAILURE;
		}
	}
	if (sr_state_dir(&statedir, &err) < 0 || sr_state_list(statedir, &v, &n, &err) < 0) {
		sr_sink_log(&sink, SR_LOG_ERROR, "ls: %s", err.msg);
		return SR_EXIT_FAILURE;
	}
	if (json) {
		json_t *arr = json_array();

		for (size_t i = 0; arr && i < n; i++)
			if (v[i].state) {
				sr_state_add_deployment(v[i].state);
				json_array_append(arr, v[i].state);
			}
		status = sr_cli_print_json(arr, "ls");
		json_decref(arr);
	} else {
		print_table(v, n);
		status = sr_cli_stdout_status("ls");
	}
	sr_entries_free(v, n);
	return status;
}

int sr_verb_inspect(const struct sr_verb_args *a)
{
	_cleanup_free_ char *statedir = NULL;
	struct sr_error err = {0};
	struct sr_sink sink;
	json_t *req, *reply = NULL;
	int r;

	sr_sink_stderr(&sink, sr_options_log_level(a->verbosity));
	if (sr_cli_is_help(a)) {
		fputs(
		    "Usage: sandbox-run inspect ID\n"
		    "Print what the living sandbox ID is, as one JSON object: its state, when it\n"
		    "was made and expires, its limits and how they are held, its usage so far,\n"
		    "its ports (see sandbox-run(1), LIVING SANDBOXES).\n",
		    stdout);
		return sr_cli_stdout_status("--help");
	}
	if (a->argc != 2) {
		sr_sink_log(&sink, SR_LOG_ERROR, "inspect: usage: sandbox-run inspect ID");
		return SR_EXIT_FAILURE;
	}
	/* No id or name starts with '-': "no sandbox '--json'" sent the user to ls. */
	if (a->argv[1][0] == '-') {
		if (strcmp(a->argv[1], "--json") == 0)
			sr_sink_log(&sink, SR_LOG_ERROR,
				    "inspect: takes no --json: it prints JSON already "
				    "(sandbox-run inspect ID)");
		else
			sr_sink_log(&sink, SR_LOG_ERROR,
				    "inspect: unknown option '%s' (see --help)", a->argv[1]);
		return SR_EXIT_FAILURE;
	}
	req = json_pack("{ss}", "op", "inspect");
	r = sr_ctl_call_ref(a->argv[1], req, &reply, &err);
	json_decref(req);
	if (r < 0) {
		sr_cli_verb_error(&sink, "inspect", err.msg);
		return SR_EXIT_FAILURE;
	}
	json_object_del(reply, "ok");
	sr_state_add_deployment(reply);
	r = sr_cli_print_json(reply, "inspect");
	json_decref(reply);
	return r;
}
