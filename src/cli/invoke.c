/* SPDX-License-Identifier: MIT */
/*
 * `sandbox-run invoke [OPTIONS] NAME`: the prompt on stdin, the response
 * on stdout, from a fresh sandbox over the current version of deployment
 * NAME (deploy.h): a run whose read-only layer is the version's installed
 * tree, whose configuration starts from the deployment's (options go over
 * it), and whose environment has the deployment's secrets. The version is
 * held for the whole invocation: a redeploy meanwhile changes the next
 * invocation's, not this one's.
 */
#include "deploy.h"
#include "invoke-warm.h"
#include "options.h"
#include "util.h"
#include "verbs.h"

static void usage(FILE *f)
{
	fputs("Usage: sandbox-run invoke [OPTIONS] NAME\n"
	      "Run the current version of deployment NAME once, in a fresh sandbox: the\n"
	      "prompt on standard input, the response on standard output.\n"
	      "\n"
	      "The deployment's configuration (its profile and deploy's options) applies,\n"
	      "its secrets are environment variables, and every option of `sandbox-run run`\n"
	      "goes over them (see sandbox-run --help): -p, --memory, --cpus, --timeout,\n"
	      "--net, --allow, --env, --result FILE, --print-config, -q, -v. They may\n"
	      "also follow NAME.\n"
	      "\n"
	      "Exit status: the agent's own; 124 timeout; 125 sandbox-run failed (no such\n"
	      "deployment); 126, 127 entry point not executable or not found; 128+N signal N.\n",
	      f);
}

static bool wants_help(const struct sr_verb_args *a)
{
	for (int i = 1; i < a->argc; i++) {
		if (sr_streq(a->argv[i], "--"))
			break;
		if (sr_streq(a->argv[i], "-h") || sr_streq(a->argv[i], "--help"))
			return true;
	}
	return false;
}

int sr_verb_invoke(const struct sr_verb_args *a)
{
	struct sr_config c;
	struct sr_error err = {0}, open_err = {0};
	enum sr_action action = SR_ACTION_RUN;
	struct sr_deployment *d = NULL;
	const char *name;
	struct sr_sink sink;
	int status, r;

	/* `invoke NAME --net none` as `invoke --net none NAME`: NAME is the last word. */
	sr_options_words_last(a->argc, a->argv);
	name = a->argc > 1 ? a->argv[a->argc - 1] : NULL;
	if (wants_help(a)) {
		usage(stdout);
		return sr_cli_stdout_status("--help");
	}
	sr_config_init(&c);
	sr_sink_stderr(&sink, SR_LOG_WARNING);
	/* NAME is the last word: its configuration is the profile the options go over. */
	if (name && name[0] != '-' && sr_deploy_open(name, &d, &open_err) < 0)
		sr_error_prefix(&open_err, "invoke");
	else
		sr_error_msg(&open_err, -EINVAL,
			     "invoke: missing NAME (see sandbox-run invoke --help)");
	r = sr_options_parse_from(a->argc, a->argv, SR_OPTIONS_INVOKE,
				  d ? sr_deployment_profile(d) : NULL, &c, &action, &err);
	if (r < 0)
		sr_error_prefix(&err, "invoke"); /* as every other verb's option errors */
	/* Bad options first; then no such deployment (a record, if asked for, says which). */
	if (r >= 0 && !d) {
		err = open_err;
		r = err.code;
	}
	if (r >= 0)
		r = sr_deploy_apply(d, &c, &err);
	if (r < 0) {
		status = sr_cli_bad_input(&c, &err);
		sr_deployment_close(d);
		sr_config_free(&c);
		return status;
	}
	c.log_level = sr_options_log_level((int)c.log_level - SR_LOG_WARNING + a->verbosity);
	sink.level = c.log_level;
	if (action == SR_ACTION_PRINT_CONFIG) {
		status = sr_cli_print_config(&c);
		sr_deployment_close(d);
		sr_config_free(&c);
		return status;
	}
	/*
	 * The prompt typed, not piped (the pipe forgotten): the agent waits
	 * for it in silence, which looks like a hang.
	 */
	if (isatty(STDIN_FILENO) && sr_sink_enabled(&sink, SR_LOG_WARNING))
		fprintf(stderr,
			"sandbox-run: invoke %s: the prompt is read from this terminal: type it, "
			"then ^D at the start of a line (or pipe it: echo PROMPT | sandbox-run "
			"invoke %s)\n",
			sr_deployment_name(d), sr_deployment_name(d));
	if (sr_invoke_warm(a->argc, a->argv, sr_deployment_name(d), &c, &sink, &status) == 0) {
		sr_info(&sink, "invoke %s: version %u, a fresh sandbox (cold start)",
			sr_deployment_name(d), sr_deployment_version(d));
		status = sr_cli_run(&c);
	}
	/* After the sandbox is gone: the version may be pruned from now on. */
	sr_deployment_close(d);
	sr_config_free(&c);
	return status;
}
