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

void sr_options_usage(FILE *f);
