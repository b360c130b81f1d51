/* SPDX-License-Identifier: MIT */
/*
 * The run options' parts (options.c): what they share. options.c has the
 * table of run's options, their collecting from the command line, the
 * words after them and the parse; options-apply.c the collected options
 * taken into the configuration: --result first, then the profile, then
 * each option over it. Nothing here is for any other module: options.h
 * is the options' face.
 */
#pragma once

#include "options.h"

#include <getopt.h>
#include <stdbool.h>
#include <stddef.h>

enum {
	OPT_PROFILE = 'p',
	OPT_QUIET = 'q',
	OPT_VERBOSE = 'v',
	OPT_HELP = 'h',
	OPT_MEMORY = 0x100,
	OPT_CPUS,
	OPT_PIDS,
	OPT_TIMEOUT,
	OPT_DISK,
	OPT_NET,
	OPT_NET_HELPER,
	OPT_ALLOW,
	OPT_DENY,
	OPT_ALLOW_HOST,
	OPT_ENV,
	OPT_ENV_FILE,
	OPT_PASS_ENV,
	OPT_RO_BIND,
	OPT_BIND,
	OPT_WORKSPACE,
	OPT_ENTRY,
	OPT_RESULT,
	OPT_STRICT,
	OPT_PRINT_CONFIG,
	OPT_VERSION,
	OPT_NAME,
	OPT_FROM,
	OPT_INSTALL,
	OPT_INSTALL_TIMEOUT,
	OPT_KEEP,
	OPT_DISK_BACKING,
	OPT_EXPORT,
	OPT_CHANGES,
};

struct collected {
	int id;
	const char *arg;
	const char *arg2; /* DST of --ro-bind / --bind */
};

struct parsed {
	enum sr_options_verb verb;
	const struct option *options;	      /* long_options, then the verb's own */
	const struct sr_options_extra *extra; /* the verb's own, or NULL */
	struct collected *opts;
	size_t n;
	const char *profile;
	int verbosity; /* -v minus -q */
	bool print_config;
	bool command_mode;
	int first_arg;
	enum sr_action action;
};

/* options.c */
/* The long name of option id among p's options, "?" for none. */
const char *options_name(const struct parsed *p, int id);

/* options-apply.c */
int options_take_result(const struct parsed *p, struct sr_config *c, struct sr_error *err);
int options_load_profile(const struct parsed *p, const char *base_profile, struct sr_config *c,
			 struct sr_error *err);
int options_apply(const struct parsed *p, struct sr_config *c, struct sr_error *err);
