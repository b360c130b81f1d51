/* SPDX-License-Identifier: MIT */
/*
 * `sandbox-run create [OPTIONS] [--name NAME] [AGENT | --workspace DIR |
 * --from SNAPSHOT]`: a sandbox that lives until `rm` or its deadline.
 * Forks its keeper (keeper.h), waits until the sandbox is ready, prints
 * its id and returns: the keeper goes on alone.
 */
#include "artifacts.h"
#include "config.h"
#include "keeper.h"
#include "options.h"
#include "util.h"
#include "verbs.h"

#include <signal.h>
#include <stdio.h>
#include <sys/socket.h>
#include <sys/wait.h>

static void usage(FILE *f)
{
	fputs("Usage: sandbox-run create [OPTIONS] [--name NAME] [AGENT | --workspace DIR |\n"
	      "                          --from SNAPSHOT]\n"
	      "Make a sandbox that lives until `sandbox-run rm` or its timeout, and print\n"
	      "its id. Run commands in it with `sandbox-run exec ID -- COMMAND`.\n"
	      "\n"
	      "  --name NAME          a name to use instead of the id (unique among yours)\n"
	      "  --workspace DIR      DIR is /workspace (an overlay: DIR is never written)\n"
	      "  AGENT                a directory or archive: its files are /workspace\n"
	      "  --from SNAPSHOT      the files and configuration of `sandbox-run snapshot`\n"
	      "                       (the options go over it)\n"
	      "  --timeout DURATION   its deadline, from now (default: the profile's; 0: none)\n"
	      "  -h, --help           print this help and exit\n"
	      "\n"
	      "Every option of `sandbox-run run` applies (see sandbox-run --help): -p,\n"
	      "--memory, --cpus, --pids, --disk, --net, --allow, --deny, --allow-host, --env,\n"
	      "--env-file, --pass-env, --ro-bind, --bind, --export, --changes (taken when it\n"
	      "ends), --strict, -q, -v. The limits hold for the whole sandbox, every exec in\n"
	      "it together. Options may also follow AGENT.\n",
	      f);
}

/*
 * The id printed, then the keeper told it is out (keeper.h): until it
 * hears so, the sandbox is one nobody knows of, which it ends if we are
 * gone -- a Ctrl-C before this point leaves nothing. The signals that
 * would end us wait from here on, for good: the id printed, the sandbox
 * lives, and create says so with status 0, not 130 to a script that
 * would then never remove it.
 */
static int print_id(int fd, const char *id, const struct sr_sink *sink)
{
	static const int ends[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT};
	sigset_t set;
	int status;

	sigemptyset(&set);
	for (size_t i = 0; i < SR_ARRAY_SIZE(ends); i++)
		sigaddset(&set, ends[i]);
	sigprocmask(SIG_BLOCK, &set, NULL);
	printf("%s\n", id);
	status = sr_cli_stdout_status("create");
	/* An id we could not print is not acknowledged: the keeper ends its sandbox. */
	if (status == 0 && send(fd, "\n", 1, MSG_NOSIGNAL) != 1) {
		sr_sink_log(
		    sink, SR_LOG_ERROR,
		    "create: the sandbox's keeper ended before it heard the id was printed");
		return SR_EXIT_FAILURE;
	}
	return status;
}

/*
 * Lines from the keeper: "msg LEVEL TEXT" to print, then "ok ID" or
 * "error STATUS ERRNO TEXT" (keeper.h).
 */
static int read_answer(int fd, const struct sr_sink *sink)
{
	_cleanup_fclose_ FILE *f = fdopen(fd, "r");
	char line[4096];

	if (!f) {
		close(fd);
		return SR_EXIT_FAILURE;
	}
	while (fgets(line, sizeof(line), f)) {
		char *text;
		long n;

		line[strcspn(line, "\n")] = '\0';
		if (strncmp(line, "ok ", 3) == 0)
			return print_id(fileno(f), line + 3, sink);
		if (strncmp(line, "msg ", 4) != 0 && strncmp(line, "error ", 6) != 0)
			continue;
		n = strtol(strchr(line, ' ') + 1, &text, 10);
		text += *text == ' ';
		if (line[0] == 'e') {
			(void)strtol(text, &text, 10); /* the errno: the API's, not ours */
			text += *text == ' ';
			/* The keeper's words are create's, named as its own errors are. */
			sr_cli_verb_error(sink, "create", text);
			return n > 0 && n < 256 ? (int)n : SR_EXIT_FAILURE;
		}
		if (n >= SR_LOG_ERROR && n < _SR_LOG_LEVEL_MAX)
			sr_sink_log(sink, (enum sr_log_level)n, "%s", text);
	}
	sr_sink_log(sink, SR_LOG_ERROR, "create: the sandbox's keeper died before it was ready");
	return SR_EXIT_FAILURE;
}

int sr_verb_create(const struct sr_verb_args *a)
{
	struct sr_config c;
	struct sr_error err = {0};
	enum sr_action action = SR_ACTION_RUN;
	struct sr_sink sink;
	int ready[2], status;
	pid_t pid;

	sr_config_init(&c);
	sr_sink_stderr(&sink, SR_LOG_WARNING);
	sr_options_words_last(a->argc, a->argv); /* `create ./agent --timeout 10m` */
	if (sr_options_parse_verb(a->argc, a->argv, SR_OPTIONS_CREATE, &c, &action, &err) < 0) {
		sr_cli_verb_error(&sink, "create", err.msg);
		sr_config_free(&c);
		return err.status ? err.status : SR_EXIT_FAILURE;
	}
	if (action == SR_ACTION_HELP || action == SR_ACTION_VERSION) {
		usage(stdout);
		sr_config_free(&c);
		return sr_cli_stdout_status("--help");
	}
	if (action == SR_ACTION_PRINT_CONFIG) {
		status = sr_config_print(&c, stdout) < 0 ? SR_EXIT_FAILURE : 0;
		sr_config_free(&c);
		return status;
	}
	sink.level = sr_options_log_level((int)c.log_level - SR_LOG_WARNING + a->verbosity);
	/* Taken when it ends (rm, its deadline): said now, not when its work is to come out. */
	if (sr_artifacts_check(&c, &err) < 0) {
		sr_cli_verb_error(&sink, "create", err.msg);
		sr_config_free(&c);
		return SR_EXIT_FAILURE;
	}
	/*
	 * Its id is the one handle on the sandbox: with stdout closed it would
	 * go into /dev/null (main.c) and the sandbox live on unseen until its
	 * deadline. Refused before there is anything to end.
	 */
	if (a->stdout_closed) {
		sr_sink_log(&sink, SR_LOG_ERROR,
			    "create: standard output is closed: nowhere to print the new "
			    "sandbox's id");
		sr_config_free(&c);
		return SR_EXIT_FAILURE;
	}
	/* Both ways: the keeper's answer, then our word that its id is out (print_id). */
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, ready) < 0) {
		sr_sink_log(&sink, SR_LOG_ERROR, "create: socketpair: %s", strerror(errno));
		sr_config_free(&c);
		return SR_EXIT_FAILURE;
	}
	pid = fork();
	if (pid < 0) {
		sr_sink_log(&sink, SR_LOG_ERROR, "create: fork: %s", strerror(errno));
		sr_config_free(&c);
		return SR_EXIT_FAILURE;
	}
	if (pid == 0) {
		/*
		 * The keeper: a session of its own (no terminal's signals, no
		 * job of the caller's shell), outliving this command.
		 */
		close(ready[0]);
		setsid();
		_exit(sr_keeper_main(&c, sink.level, ready[1]));
	}
	close(ready[1]);
	status = read_answer(ready[0], &sink);
	/*
	 * A keeper that failed, or whose id we could not print (it ends its
	 * sandbox), exits: reaped, not left a zombie to our caller, and
	 * nothing of the sandbox is left when we return.
	 */
	if (status != 0)
		waitpid(pid, NULL, 0);
	sr_config_free(&c);
	return status;
}
