/* SPDX-License-Identifier: MIT */
/* The command line: options -> profile + overrides -> struct sr_config. */
#pragma once

#include "config.h"

enum sr_action {
	SR_ACTION_RUN,
	SR_ACTION_PRINT_CONFIG,
	SR_ACTION_HELP,
	SR_ACTION_VERSION,
	_SR_ACTION_MAX,
};

/*
 * Parses argv (not modified; c->argv points into it), loads the profile,
 * applies the options over it and validates. On error err says which option
 * and what to do instead.
 */
int sr_options_parse(int argc, char **argv, struct sr_config *c, enum sr_action *ret_action,
		     struct sr_error *err);

/* Whose options: run's, or create's (run's and --name, --from; one AGENT at most, no COMMAND). */
enum sr_options_verb {
	SR_OPTIONS_RUN,
	SR_OPTIONS_CREATE,
};
int sr_options_parse_verb(int argc, char **argv, enum sr_options_verb verb, struct sr_config *c,
			  enum sr_action *ret_action, struct sr_error *err);

void sr_options_usage(FILE *f);
/* The level of sandbox-run's own messages for verbosity (-v count minus -q count). */
enum sr_log_level sr_options_log_level(int verbosity);
