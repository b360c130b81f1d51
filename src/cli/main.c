/* SPDX-License-Identifier: MIT */
/*
 * sandbox-run: the command line, and the only place that decides the exit
 * status (see "Exit status" in the man page).
 */
#include "config.h"
#include "log.h"
#include "options.h"
#include "result.h"
#include "supervisor.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>

/* What --help and --version wrote must have reached stdout (a full disk, a closed pipe). */
static int stdout_status(const char *what)
{
	int saved;

	errno = 0;
	if (fflush(stdout) == 0 && !ferror(stdout))
		return 0;
	saved = errno ? errno : EIO;
	sr_log(SR_LOG_ERROR, "%s: write standard output: %s", what, strerror(saved));
	return 125;
}

int main(int argc, char **argv)
{
	struct sr_config c;
	struct sr_error err = {0};
	struct sr_result r;
	struct sr_result_target target = SR_RESULT_TARGET_INIT;
	enum sr_action action = SR_ACTION_RUN;
	int status;

	/*
	 * A closed pipe on stderr, or on stdout for --result /dev/stdout, must
	 * fail a write (EPIPE), not end us mid-run: the sandbox's cgroup would
	 * stay behind and no record be written. Blocked rather than ignored, so
	 * the agent keeps the caller's disposition (a clone inherits no pending
	 * signal, and PID 1 and the helper set their own masks).
	 */
	sigset_t pipe;

	sigemptyset(&pipe);
	sigaddset(&pipe, SIGPIPE);
	sigprocmask(SIG_BLOCK, &pipe, NULL);
	sr_config_init(&c);
	sr_result_init(&r);
	if (sr_options_parse(argc, argv, &c, &action, &err) < 0) {
		sr_log(SR_LOG_ERROR, "%s", err.msg);
		status = err.status ? err.status : 125;
		/* A caller that asked for a record gets one, also for bad input. */
		if (c.result_path) {
			r.exit_code = status;
			snprintf(r.error, sizeof(r.error), "%s", err.msg);
			if (sr_result_write(&r, &c, c.result_path, &err) < 0)
				sr_log(SR_LOG_ERROR, "%s", err.msg);
		}
		sr_config_free(&c);
		return status;
	}
	/* Printing only: `sandbox-run --help | head` ends as any filter's writer does. */
	if (action != SR_ACTION_RUN)
		sigprocmask(SIG_UNBLOCK, &pipe, NULL);
	switch (action) {
	case SR_ACTION_HELP:
		sr_options_usage(stdout);
		sr_config_free(&c);
		return stdout_status("--help");
	case SR_ACTION_VERSION:
		printf("%s %s\n", PACKAGE_NAME, PACKAGE_VERSION);
		sr_config_free(&c);
		return stdout_status("--version");
	case SR_ACTION_PRINT_CONFIG:
		status = sr_config_print(&c, stdout);
		if (status == -ENOMEM)
			sr_log(SR_LOG_ERROR, "--print-config: %s", strerror(ENOMEM));
		else if (status < 0)
			sr_log(SR_LOG_ERROR, "--print-config: write standard output: %s",
			       strerror(-status));
		sr_config_free(&c);
		return status < 0 ? 125 : 0;
	default:
		break;
	}

	/*
	 * Before the agent runs, which may be able to write the record's
	 * directory (result.h). A record that could not be written is no
	 * reason to run: said now, not after the run.
	 */
	if (c.result_path && sr_result_target_open(c.result_path, &target, &err) < 0) {
		sr_log(SR_LOG_ERROR, "%s", err.msg);
		sr_config_free(&c);
		return 125;
	}
	if (sr_supervisor_run(&c, &r, &err) < 0)
		sr_log(SR_LOG_ERROR, "%s", err.msg);
	status = r.exit_code;
	/* The agent's own status stands; only a clean run turns into a failure. */
	if (c.result_path) {
		struct sr_error werr = {0};

		if (sr_result_target_write(&target, &r, &c, &werr) < 0) {
			sr_log(SR_LOG_ERROR, "%s", werr.msg);
			if (status == 0)
				status = 125;
		}
		sr_result_target_close(&target);
	}
	sr_config_free(&c);
	return status;
}
