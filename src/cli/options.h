/* SPDX-License-Identifier: MIT */
/* The command line: options -> profile + overrides -> struct sr_config. */
#pragma once

#include "config.h"

#include <getopt.h>

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
 * and what to do instead; where the profile did not load, c->profile names
 * the one asked for (-p's, --from's snapshot's configuration, the base
 * profile, or the default).
 */
int sr_options_parse(int argc, char **argv, struct sr_config *c, enum sr_action *ret_action,
		     struct sr_error *err);

/*
 * Whose options: run's, create's (run's and --name, --from; one AGENT at
 * most, no COMMAND), or export's (run's and --name; AGENT or COMMAND
 * optional).
 */
enum sr_options_verb {
	SR_OPTIONS_RUN,
	SR_OPTIONS_CREATE,
	SR_OPTIONS_EXPORT,
	SR_OPTIONS_DEPLOY, /* run's, --name, --install, --install-timeout, --keep; one AGENT */
	SR_OPTIONS_INVOKE, /* run's; one NAME, no COMMAND or --workspace */
};
int sr_options_parse_verb(int argc, char **argv, enum sr_options_verb verb, struct sr_config *c,
			  enum sr_action *ret_action, struct sr_error *err);
/*
 * The same, starting from base_profile (a path: a deployment's
 * config.ini) rather than the default profile when no -p is given.
 */
int sr_options_parse_from(int argc, char **argv, enum sr_options_verb verb,
			  const char *base_profile, struct sr_config *c, enum sr_action *ret_action,
			  struct sr_error *err);

/*
 * create, deploy and invoke take one word (AGENT, NAME) and pass no
 * arguments on, so an option after it can only be theirs (`invoke NAME
 * --net none`): moves the words after the options, each kind in its
 * order, where the parse, which stops at the first word as a run's must
 * (what follows a run's AGENT is the agent's), takes them. An unknown option stays
 * among the options, for the parse to name; what follows `--` stays put.
 */
void sr_options_words_last(int argc, char **argv);

/*
 * A verb's options of its own, beside run's (no profile key): take() gets
 * each as it comes, with its value (NULL for no_argument), and an error
 * it returns is prefixed with the option's name. Their ids (struct
 * option's val) start at SR_OPTIONS_EXTRA_FIRST.
 */
#define SR_OPTIONS_EXTRA_FIRST 0x1000
struct sr_options_extra {
	const struct option *options; /* terminated by an entry with a NULL name */
	int (*take)(void *ctx, int id, const char *arg, struct sr_error *err);
	void *ctx;
};
int sr_options_parse_extra(int argc, char **argv, enum sr_options_verb verb,
			   const struct sr_options_extra *extra, struct sr_config *c,
			   enum sr_action *ret_action, struct sr_error *err);

/*
 * The error for a verb parsing its own options with getopt_long() (with
 * opterr 0 and a leading ':' in its short options): o is what it
 * returned, '?' (unknown: a misspelt long option gets a suggestion, one
 * given a value it takes none is said so) or ':' (a value missing). The
 * option is named as the user wrote it, not by the argument before it.
 */
int sr_options_getopt_error(int o, const struct option *options, int argc, char **argv,
			    struct sr_error *err);

/*
 * After getopt_long() returned an option with a value: -EINVAL (err says
 * so) when that value was the next word and is itself one of options'
 * long ones, its own value forgotten: `--workspace --net none` took
 * "--net" for the directory and made "none" the agent. Else 0.
 */
int sr_options_value_missing(const struct option *options, int argc, char **argv,
			     struct sr_error *err);

void sr_options_usage(FILE *f);
/* The level of sandbox-run's own messages for verbosity (-v count minus -q count). */
enum sr_log_level sr_options_log_level(int verbosity);
