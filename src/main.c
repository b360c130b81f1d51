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

#include <stdio.h>

static int write_result(const struct sr_result *r, const struct sr_config *c)
{
	struct sr_error err = {0};
	int e = sr_result_write(r, c, c->result_path, &err);

	if (e < 0)
		sr_log(SR_LOG_ERROR, "%s", err.msg);
	return e;
}

int main(int argc, char **argv)
{
	struct sr_config c;
	struct sr_error err = {0};
	struct sr_result r;
	enum sr_action action = SR_ACTION_RUN;
	int status;

	sr_config_init(&c);
	sr_result_init(&r);
	if (sr_options_parse(argc, argv, &c, &action, &err) < 0) {
		sr_log(SR_LOG_ERROR, "%s", err.msg);
		status = err.status ? err.status : 125;
		/* A caller that asked for a record gets one, also for bad input. */
		if (c.result_path) {
			r.exit_code = status;
			snprintf(r.error, sizeof(r.error), "%s", err.msg);
			write_result(&r, &c);
		}
		sr_config_free(&c);
		return status;
	}
	switch (action) {
	case SR_ACTION_HELP:
		sr_options_usage(stdout);
		sr_config_free(&c);
		return 0;
	case SR_ACTION_VERSION:
		printf("%s %s\n", PACKAGE_NAME, PACKAGE_VERSION);
		sr_config_free(&c);
		return 0;
	case SR_ACTION_PRINT_CONFIG:
		status = sr_config_print(&c, stdout) < 0 || fflush(stdout) != 0 ? 125 : 0;
		sr_config_free(&c);
		return status;
	default:
		break;
	}

	if (sr_supervisor_run(&c, &r, &err) < 0)
		sr_log(SR_LOG_ERROR, "%s", err.msg);
	status = r.exit_code;
	/* The agent's own status stands; only a clean run turns into a failure. */
	if (c.result_path && write_result(&r, &c) < 0 && status == 0)
		status = 125;
	sr_config_free(&c);
	return status;
}
