/* SPDX-License-Identifier: MIT */
/*
 * `sandbox-run doctor [--json]`: can this host run sandboxes, and how
 * well. The library gathers the facts and judges them (doctor.h); this
 * prints the checks, one per line with its fix, or as one JSON object.
 * Exit status 0 full strength, 1 degraded, 2 sandboxes cannot run.
 */
#include "doctor.h"
#include "fault.h"
#include "json.h"
#include "options.h"
#include "util.h"
#include "verbs.h"

#include <signal.h>

static void usage(void)
{
	fputs("Usage: sandbox-run doctor [--json]\n"
	      "Check whether this host can run sandboxes, and how well: the kernel, user\n"
	      "namespaces and their sysctls, AppArmor, overlayfs, a container around us,\n"
	      "cgroups, subordinate ids, the network helpers, /dev/net/tun, nf_tables, the\n"
	      "libraries loaded on demand, and two trial sandboxes. Each check is ok,\n"
	      "degraded or fails, with the exact fix. --json: one JSON object (see\n"
	      "sandbox-run(1), DOCTOR).\n"
	      "Exit status: 0 full strength, 1 degraded, 2 sandboxes cannot run.\n",
	      stdout);
}

static json_t *to_json(const struct sr_host_facts *f, const struct sr_check *c, size_t n,
		       enum sr_verdict v)
{
	json_t *checks = json_array();
	json_t *o;

	for (size_t i = 0; i < n; i++)
		json_array_append_new(
		    checks, json_pack("{sssssoso}", "name", c[i].name, "verdict",
				      sr_verdict_to_string(c[i].verdict), "found",
				      sr_json_string(c[i].found), "fix",
				      *c[i].fix ? sr_json_string(c[i].fix) : json_null()));
	o = json_pack("{sisssisbsoso}", "version", 1, "verdict", sr_verdict_to_string(v),
		      "exit_code", sr_doctor_exit_status(v), "root", f->root, "kernel",
		      sr_json_string(f->release), "checks", checks);
	return o;
}

static void print_text(const struct sr_check *c, size_t n, enum sr_verdict v)
{
	static const char *const summary[] = {
	    "sandboxes run here at full strength",
	    "sandboxes run here, but not at full strength: see the fixes above",
	    "sandboxes cannot run here: see the fixes above",
	};

	for (size_t i = 0; i < n; i++) {
		printf("%-9s %-16s %s\n", sr_verdict_to_string(c[i].verdict), c[i].name,
		       c[i].found);
		if (*c[i].fix)
			printf("%-26s fix: %s\n", "", c[i].fix);
	}
	printf("%s: %s\n", sr_verdict_to_string(v), summary[v]);
}

int sr_verb_doctor(const struct sr_verb_args *a)
{
	struct sr_host_facts f;
	struct sr_check checks[SR_DOCTOR_CHECKS];
	struct sr_sink sink;
	enum sr_verdict v;
	sigset_t ends, saved;
	bool json = false;
	size_t n;
	int status;

	sr_sink_stderr(&sink, sr_options_log_level(a->verbosity));
	for (int i = 1; i < a->argc; i++) {
		if (strcmp(a->argv[i], "--json") == 0) {
			json = true;
		} else if (strcmp(a->argv[i], "-h") == 0 || strcmp(a->argv[i], "--help") == 0) {
			usage();
			return sr_cli_stdout_status("--help");
		} else {
			sr_sink_log(&sink, SR_LOG_ERROR,
				    "doctor: unknown argument '%s' (see --help)", a->argv[i]);
			return SR_EXIT_FAILURE;
		}
	}
	/*
	 * The trial sandboxes live a few milliseconds; a ^C meanwhile is
	 * taken once they are gone, so that none leaves its cgroup behind.
	 */
	sigemptyset(&ends);
	sigaddset(&ends, SIGINT);
	sigaddset(&ends, SIGTERM);
	sigaddset(&ends, SIGHUP);
	sigaddset(&ends, SIGQUIT);
	sigprocmask(SIG_BLOCK, &ends, &saved);
	/* Trial warnings (a limit not enforced) are the checks' to say: -v shows them. */
	sink.level = sr_options_log_level(a->verbosity - 1);
	sr_doctor_gather(sr_fault_proc_sys(), &sink, &f);
	sigprocmask(SIG_SETMASK, &saved, NULL);

	n = sr_doctor_evaluate(&f, checks);
	v = sr_doctor_verdict(checks, n);
	if (json) {
		_cleanup_free_ char *text = NULL;
		json_t *o = to_json(&f, checks, n, v);

		if (!o || sr_json_dump_line(o, &text) < 0) {
			json_decref(o);
			sr_sink_log(&sink, SR_LOG_ERROR, "doctor: %s", strerror(ENOMEM));
			return SR_EXIT_FAILURE;
		}
		fputs(text, stdout);
		json_decref(o);
	} else {
		print_text(checks, n, v);
	}
	status = sr_cli_stdout_status("doctor");
	return status ? status : sr_doctor_exit_status(v);
}
