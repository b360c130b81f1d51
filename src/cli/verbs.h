/* SPDX-License-Identifier: MIT */
/*
 * The verbs, one file each (crun's shape): each parses its own options,
 * calls the library and returns the exit status; main.c (the verb table)
 * is the only caller. argv[0] is the verb's name ("sandbox-run" for the
 * default run); verbosity is what -q/-v before the verb said.
 */
#pragma once

#include "log.h"

#include <jansson.h>
#include <stdbool.h>

/* The exit status of sandbox-run itself failing. */
#define SR_EXIT_FAILURE 125

struct sr_verb_args {
	int argc;
	char **argv;
	int verbosity;	    /* -v count minus -q count, given before the verb */
	bool stdout_closed; /* fd 1 was closed when we started (now /dev/null) */
};

int sr_verb_run(const struct sr_verb_args *a);
int sr_verb_create(const struct sr_verb_args *a);
int sr_verb_exec(const struct sr_verb_args *a);
int sr_verb_ls(const struct sr_verb_args *a);
int sr_verb_inspect(const struct sr_verb_args *a);
int sr_verb_timeout(const struct sr_verb_args *a);
int sr_verb_rm(const struct sr_verb_args *a);
int sr_verb_cp(const struct sr_verb_args *a);
int sr_verb_port(const struct sr_verb_args *a);
int sr_verb_snapshot(const struct sr_verb_args *a);
int sr_verb_snapshots(const struct sr_verb_args *a);
int sr_verb_doctor(const struct sr_verb_args *a);
int sr_verb_export(const struct sr_verb_args *a);

int sr_verb_deploy(const struct sr_verb_args *a);
int sr_verb_invoke(const struct sr_verb_args *a);
int sr_verb_deployments(const struct sr_verb_args *a);
int sr_verb_secrets(const struct sr_verb_args *a);
int sr_verb_serve(const struct sr_verb_args *a);
/* `help [VERB]`: the usage, or VERB --help (main.c, beside the verb table). */
int sr_verb_help(const struct sr_verb_args *a);

/*
 * A run of c, parsed and validated (run.c): the sandbox, the agent with
 * the caller's stdio, signals passed on, the timeout, the record; its exit
 * status. invoke is a run over a deployment's version.
 */
struct sr_config;
int sr_cli_run(struct sr_config *c);
/* Bad input before a run: said on stderr, and in c's record if one was asked for; the status. */
struct sr_error;
int sr_cli_bad_input(struct sr_config *c, struct sr_error *err);
/* --print-config of c on stdout: 0, or 125 with a message. */
int sr_cli_print_config(const struct sr_config *c);
int sr_verb_diff(const struct sr_verb_args *a);
int sr_verb_apply(const struct sr_verb_args *a);

/*
 * How long cp, snapshot, diff and apply wait for a worker in a living
 * sandbox that moves nothing (the agent can stop it) before giving up,
 * unless --idle-timeout says otherwise: long enough for any worker that
 * works (a tree of millions of small files, a slow --bind), short enough
 * that a stopped one is noticed.
 */
#define SR_CLI_IDLE_MS (60 * 1000)
/* --idle-timeout's value: milliseconds (0: wait as long as it takes), or a one-line error. */
int sr_cli_idle_timeout(const char *arg, int *ret_ms, struct sr_error *err);

/*
 * diff, apply: FILE (a changes file) or ID (a living sandbox's changes so
 * far, its worker given idle_ms: SR_CLI_IDLE_MS), at its start;
 * *ret_file says which it was.
 */
int sr_cli_open_changes(const char *arg, int idle_ms, const struct sr_sink *sink, int *ret_fd,
			bool *ret_file, struct sr_error *err);
/* diff, apply: an error reading FILE's changes names FILE (it may be no changes file at all). */
void sr_cli_changes_error(const char *arg, bool file, struct sr_error *err);

/*
 * What --help and --version wrote must have reached stdout (a full disk,
 * a closed pipe): 0, or 125 with a message naming what.
 */
int sr_cli_stdout_status(const char *what);

/*
 * j as one line of JSON on stdout (--json, inspect), which must reach it:
 * 0, or 125 with a message naming what (j NULL, or no memory to print it,
 * is out of memory).
 */
int sr_cli_print_json(const json_t *j, const char *what);

/* `VERB -h` or `VERB --help`, alone. */
bool sr_cli_is_help(const struct sr_verb_args *a);

/*
 * -h or --help anywhere before a "--": `deployments rm NAME --help`,
 * `snapshots rm NAME --help` and `rm ID --help` removed NAME, then
 * said that '--help' was no name. A verb whose words are names (none
 * starts with '-') asks this first and does nothing else.
 */
bool sr_cli_asks_help(const struct sr_verb_args *a);

/*
 * Whether one of a's words from `from` on starts with '-' (no name does:
 * an option given where only names go); said as VERB's unknown option, so
 * that the caller removes none of the names.
 */
bool sr_cli_refuse_options(const struct sr_verb_args *a, int from, const char *verb,
			   const struct sr_sink *sink);

/*
 * argv[i] is one of argv[first..i-1]: `snapshots rm a a`, `deployments rm
 * a a` remove a once, as the user meant, rather than fail to find it the
 * second time.
 */
bool sr_cli_named_before(char *const *argv, int first, int i);

/*
 * Logs msg as verb's error, "VERB: MSG", unless msg names verb already
 * (the option parser's "create takes one AGENT ...", "deploy: missing
 * AGENT"): said twice, "create: create takes ...", it reads as a stutter.
 */
void sr_cli_verb_error(const struct sr_sink *sink, const char *verb, const char *msg);
