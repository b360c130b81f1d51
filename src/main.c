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

int main(int argc, char **argv)
{
	struct sr_config c;
	struct sr_error err = {0};
	struct sr_result r;
	enum sr_action action = SR_ACTION_RUN;
	int status;

	sr_config_init(&c);
	if (sr_options_parse(argc, argv, &c, &action, &err) < 0) {
		sr_log(SR_LOG_ERROR, "%s", err.msg);
		sr_config_free(&c);
		return err.status ? err.status : 125;
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

	sr_result_init(&r);
	if (sr_supervisor_run(&c, &r, &err) < 0)
		sr_log(SR_LOG_ERROR, "%s", err.msg);
	status = r.exit_code;
	if (c.result_path) {
		struct sr_error werr = {0};

		if (sr_result_write(&r, &c, c.result_path, &werr) < 0) {
			sr_log(SR_LOG_ERROR, "%s", werr.msg);
			/* The agent's own status stands; only a clean run turns into a failure. */
			if (status == 0)
				status = 125;
		}
	}
	sr_config_free(&c);
	return status;
}
