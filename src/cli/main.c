/* SPDX-License-Identifier: MIT */
/*
 * sandbox-run: the verb table (crun's shape). Each verb parses its own
 * options and returns the exit status (see "Exit status" in the man
 * page); nothing below the command line ever exits.
 */
#include "config.h"
#include "json.h"
#include "log.h"
#include "oci-init.h"
#include "options.h"
#include "units.h"
#include "util.h"
#include "verbs.h"

#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

struct verb {
	const char *name;
	int (*run)(const struct sr_verb_args *a);
};

/* "run" is the default: `sandbox-run AGENT` is `sandbox-run run AGENT`. */
static const struct verb verbs[] = {
    {"run", sr_verb_run},
    {"create", sr_verb_create},
    {"exec", sr_verb_exec},
    {"ls", sr_verb_ls},
    {"inspect", sr_verb_inspect},
    {"timeout", sr_verb_timeout},
    {"rm", sr_verb_rm},
    {"cp", sr_verb_cp},
    {"port", sr_verb_port},
    {"snapshot", sr_verb_snapshot},
    {"snapshots", sr_verb_snapshots},
    {"doctor", sr_verb_doctor},
    {"export", sr_verb_export},
    {"deploy", sr_verb_deploy},
    {"invoke", sr_verb_invoke},
    {"deployments", sr_verb_deployments},
    {"secrets", sr_verb_secrets},
    {"diff", sr_verb_diff},
    {"apply", sr_verb_apply},
    {"serve", sr_verb_serve},
    {"help", sr_verb_help},
};

/*
 * `help [VERB]`, as git's and podman's: the usage, or VERB's own --help.
 * It was "agent 'help' not found", status 127.
 */
int sr_verb_help(const struct sr_verb_args *a)
{
	char *argv[] = {a->argc > 1 ? a->argv[1] : NULL, (char *)"--help", NULL};
	const struct sr_verb_args h = {.argc = 2, .argv = argv, .verbosity = a->verbosity};
	struct sr_sink sink;

	sr_sink_stderr(&sink, SR_LOG_ERROR);
	if (a->argc > 2) {
		sr_sink_log(&sink, SR_LOG_ERROR, "help: usage: sandbox-run help [VERB]");
		return SR_EXIT_FAILURE;
	}
	if (a->argc < 2 || strcmp(argv[0], "run") == 0 || sr_cli_is_help(a)) {
		sr_options_usage(stdout);
		return sr_cli_stdout_status("help");
	}
	for (size_t k = 0; k < SR_ARRAY_SIZE(verbs); k++)
		if (verbs[k].run != sr_verb_help && strcmp(argv[0], verbs[k].name) == 0)
			return verbs[k].run(&h);
	sr_sink_log(&sink, SR_LOG_ERROR, "help: no verb '%s' (sandbox-run help lists them)",
		    argv[0]);
	return SR_EXIT_FAILURE;
}

bool sr_cli_is_help(const struct sr_verb_args *a)
{
	return a->argc == 2 && (strcmp(a->argv[1], "-h") == 0 || strcmp(a->argv[1], "--help") == 0);
}

bool sr_cli_asks_help(const struct sr_verb_args *a)
{
	for (int i = 1; i < a->argc && strcmp(a->argv[i], "--") != 0; i++)
		if (strcmp(a->argv[i], "-h") == 0 || strcmp(a->argv[i], "--help") == 0)
			return true;
	return false;
}

bool sr_cli_refuse_options(const struct sr_verb_args *a, int from, const char *verb,
			   const struct sr_sink *sink)
{
	for (int i = from; i < a->argc; i++)
		if (a->argv[i][0] == '-') {
			sr_sink_log(sink, SR_LOG_ERROR, "%s: unknown option '%s' (see --help)",
				    verb, a->argv[i]);
			return true;
		}
	return false;
}

bool sr_cli_named_before(char *const *argv, int first, int i)
{
	for (int j = first; j < i; j++)
		if (strcmp(argv[j], argv[i]) == 0)
			return true;
	return false;
}

void sr_cli_verb_error(const struct sr_sink *sink, const char *verb, const char *msg)
{
	size_t n = strlen(verb);
	bool named = strncmp(msg, verb, n) == 0 && (msg[n] == ' ' || msg[n] == ':');

	sr_sink_log(sink, SR_LOG_ERROR, "%s%s%s", named ? "" : verb, named ? "" : ": ", msg);
}

int sr_cli_stdout_status(const char *what)
{
	struct sr_sink sink;
	int saved;

	errno = 0;
	if (fflush(stdout) == 0 && !ferror(stdout))
		return 0;
	saved = errno ? errno : EIO;
	sr_sink_stderr(&sink, SR_LOG_ERROR);
	sr_sink_log(&sink, SR_LOG_ERROR, "%s: write standard output: %s", what, strerror(saved));
	return SR_EXIT_FAILURE;
}

int sr_cli_idle_timeout(const char *arg, int *ret_ms, struct sr_error *err)
{
	uint64_t ms;
	int r = sr_parse_duration(arg, &ms);

	if (r < 0 || ms > INT_MAX)
		return sr_error_msg(err, r < 0 ? r : -ERANGE,
				    "--idle-timeout: bad duration '%s' (use e.g. 30s, 5m, or 0 to "
				    "wait as long as it takes)",
				    arg);
	*ret_ms = (int)ms;
	return 0;
}

int sr_cli_print_json(const json_t *j, const char *what)
{
	_cleanup_free_ char *text = NULL;
	struct sr_sink sink;

	if (!j || sr_json_dump_line(j, &text) < 0) {
		sr_sink_stderr(&sink, SR_LOG_ERROR);
		sr_sink_log(&sink, SR_LOG_ERROR, "%s: %s", what, strerror(ENOMEM));
		return SR_EXIT_FAILURE;
	}
	fputs(text, stdout);
	return sr_cli_stdout_status(what);
}

/*
 * 0, 1 and 2 open, whatever the caller left closed: an fd we open later
 * must never become a process's stdio by accident (the agent's stderr
 * would be our protocol socket). Whether stdout was closed: a verb whose
 * output is its one result (create's id) refuses rather than print it
 * into /dev/null.
 */
static bool open_stdio(void)
{
	bool stdout_closed = false;

	for (int fd = 0; fd < 3; fd++) {
		if (fcntl(fd, F_GETFD) >= 0 || errno != EBADF)
			continue;
		int null = open("/dev/null", O_RDWR);

		stdout_closed |= fd == STDOUT_FILENO;
		if (null >= 0 && null != fd) {
			dup2(null, fd);
			close(null);
		}
	}
	return stdout_closed;
}

static bool is_verbosity(const char *a, int *v)
{
	if (strcmp(a, "--quiet") == 0 || strcmp(a, "-q") == 0)
		return --*v, true;
	if (strcmp(a, "--verbose") == 0 || strcmp(a, "-v") == 0)
		return ++*v, true;
	if (strcmp(a, "-vv") == 0)
		return *v += 2, true;
	return false;
}

int main(int argc, char **argv)
{
	struct sr_verb_args a = {.argc = argc, .argv = argv};
	const struct sigaction dfl = {.sa_handler = SIG_DFL};
	sigset_t pipe;
	int i = 1, verbosity = 0;
	struct stat st;
	const char *name = argc > 0 ? strrchr(argv[0], '/') : NULL;

	/* PID 1 of an exported bundle's container (oci-init.h): known by its name. */
	if (argc > 0 && strcmp(name ? name + 1 : argv[0], SR_OCI_INIT_NAME) == 0)
		return sr_oci_init_main(argc, argv);

	/*
	 * A closed pipe on stderr, or on stdout for --result /dev/stdout, must
	 * fail a write (EPIPE), not end us mid-run: the sandbox's cgroup would
	 * stay behind and no record be written. Blocked rather than ignored, so
	 * the agent keeps the caller's disposition (a clone inherits no pending
	 * signal, and PID 1 and the helper set their own masks).
	 */
	sigemptyset(&pipe);
	sigaddset(&pipe, SIGPIPE);
	sigprocmask(SIG_BLOCK, &pipe, NULL);
	/*
	 * SIGCHLD ignored by whoever started us (inherited across exec) would
	 * have the kernel reap our children itself: PID 1 would never be seen
	 * to end, and the helper's pid could be reused under us.
	 */
	sigaction(SIGCHLD, &dfl, NULL);
	a.stdout_closed = open_stdio();

	/* A verb, after -q/-v at most, and never a word that names an existing path (an AGENT). */
	while (i < argc && is_verbosity(argv[i], &verbosity))
		i++;
	if (i < argc && lstat(argv[i], &st) < 0) {
		const char *names[SR_ARRAY_SIZE(verbs)], *near;
		size_t n = 0;

		for (size_t k = 0; k < SR_ARRAY_SIZE(verbs); k++) {
			if (verbs[k].run == sr_verb_run)
				continue;
			names[n++] = verbs[k].name;
			if (strcmp(argv[i], verbs[k].name) != 0)
				continue;
			a = (struct sr_verb_args){.argc = argc - i,
						  .argv = argv + i,
						  .verbosity = verbosity,
						  .stdout_closed = a.stdout_closed};
			return verbs[k].run(&a);
		}
		names[n] = NULL;
		/*
		 * A word that is no path and one letter or two from a verb is a
		 * mistyped verb far more often than an agent that is not there:
		 * said so, with the status of an agent not found.
		 */
		near =
		    !strchr(argv[i], '/') && argv[i][0] != '-' ? sr_suggest(argv[i], names) : NULL;
		if (near) {
			struct sr_sink sink;

			sr_sink_stderr(&sink, SR_LOG_ERROR);
			sr_sink_log(&sink, SR_LOG_ERROR,
				    "agent '%s' not found, nor a verb of that name (did you mean "
				    "'sandbox-run %s'?)",
				    argv[i], near);
			return 127;
		}
	}
	/* The run verb reads the whole command line: its options may come before "run". */
	return sr_verb_run(&a);
}
