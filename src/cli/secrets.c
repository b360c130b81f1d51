/* SPDX-License-Identifier: MIT */
/*
 * `sandbox-run secrets set NAME KEY` (the value from stdin, not echoed on
 * a terminal), `secrets ls NAME [--json]` (names only), `secrets rm NAME
 * KEY`: a deployment's secrets (secrets.h). The value never comes on the
 * command line, where ps would show it to every user.
 */
#include "deploy.h"
#include "json.h"
#include "options.h"
#include "secrets.h"
#include "util.h"
#include "verbs.h"

#include <signal.h>
#include <termios.h>

static void usage(FILE *f)
{
	fputs("Usage: sandbox-run secrets set NAME KEY   (the value on standard input)\n"
	      "       sandbox-run secrets ls NAME [--json]\n"
	      "       sandbox-run secrets rm NAME KEY\n"
	      "Keep the secrets of deployment NAME: each invocation gets KEY=VALUE in its\n"
	      "environment. Values are kept in files only you can read, and never shown:\n"
	      "ls lists names. On a terminal, set asks for the value without echoing it;\n"
	      "otherwise it reads standard input to its end, less one final newline:\n"
	      "\n"
	      "  printf %s \"$OPENAI_API_KEY\" | sandbox-run secrets set my-agent OPENAI_API_KEY\n",
	      f);
}

/* The terminal as it was before the prompt, for a signal that ends us meanwhile. */
static struct termios saved_tty;

/*
 * ^C, ^\\, a hang-up or a kill at the prompt: the terminal's echo back
 * on, then the signal's own end (SA_RESETHAND: raised again on return).
 */
static void restore_tty(int sig)
{
	int e = errno;

	(void)tcsetattr(STDIN_FILENO, TCSANOW, &saved_tty);
	raise(sig);
	errno = e;
}

/* One line from the terminal, not echoed; the line without its newline. */
static ssize_t read_terminal(const char *key, char *buf, size_t len)
{
	static const int sigs[] = {SIGINT, SIGQUIT, SIGTERM, SIGHUP};
	struct sigaction sa = {.sa_handler = restore_tty, .sa_flags = SA_RESETHAND};
	struct sigaction old[SR_ARRAY_SIZE(sigs)];
	struct termios quiet;
	ssize_t n = 0;
	char ch;

	fprintf(stderr, "Value of %s (not shown): ", key);
	fflush(stderr);
	if (tcgetattr(STDIN_FILENO, &saved_tty) < 0)
		return -1;
	quiet = saved_tty;
	quiet.c_lflag &= ~(tcflag_t)(ECHO | ECHONL);
	/* Those the caller ignores stay ignored. */
	for (size_t i = 0; i < SR_ARRAY_SIZE(sigs); i++)
		if (sigaction(sigs[i], NULL, &old[i]) == 0 && old[i].sa_handler != SIG_IGN)
			sigaction(sigs[i], &sa, NULL);
	if (tcsetattr(STDIN_FILENO, TCSAFLUSH, &quiet) < 0)
		n = -1;
	while (n >= 0 && (size_t)n < len && SR_RETRY(read(STDIN_FILENO, &ch, 1)) == 1 && ch != '\n')
		buf[n++] = ch;
	(void)tcsetattr(STDIN_FILENO, TCSAFLUSH, &saved_tty);
	for (size_t i = 0; i < SR_ARRAY_SIZE(sigs); i++)
		sigaction(sigs[i], &old[i], NULL);
	if (n >= 0)
		fputc('\n', stderr);
	return n;
}

/*
 * All of stdin, less one final newline ("\n" or "\r\n"), as `echo VALUE |`
 * sends it; -1 with errno when it cannot be read (a directory), not the
 * empty value that was read so far.
 */
static ssize_t read_stream(char *buf, size_t len)
{
	size_t n = 0;
	ssize_t r = 0;

	while (n < len && (r = SR_RETRY(read(STDIN_FILENO, buf + n, len - n))) > 0)
		n += (size_t)r;
	if (r < 0)
		return -1;
	if (n > 0 && buf[n - 1] == '\n')
		n--;
	if (n > 0 && buf[n - 1] == '\r')
		n--;
	return (ssize_t)n;
}

/*
 * No value came: the user forgot the pipe (`secrets set NAME KEY
 * </dev/null`, or a script's stdin closed, which main.c made /dev/null),
 * or pressed Enter at the prompt, rather than meant an empty secret,
 * which no program could tell from an unset one. Says where the value is
 * read from, and how to give it.
 */
static void no_value(const char *name, const char *key, bool tty, const struct sr_sink *sink)
{
	sr_sink_log(sink, SR_LOG_ERROR,
		    "secrets set: %s %s%s: printf %%s \"$VALUE\" | sandbox-run secrets set %s %s",
		    tty ? "no value typed for" : "no value for", key,
		    tty ? ": type it at the prompt, or give it on standard input"
			: " on standard input, where it is read from (never the command line)",
		    name, key);
}

static int set(const char *name, const char *key, const struct sr_sink *sink)
{
	/* One byte more than a value may hold: a longer one is refused, not cut. */
	_cleanup_free_ char *buf = malloc(SR_SECRET_MAX + 2);
	struct sr_error err = {0};
	bool tty = isatty(STDIN_FILENO);
	ssize_t n;
	int r;

	if (!buf) {
		sr_sink_log(sink, SR_LOG_ERROR, "secrets set: %s", strerror(ENOMEM));
		return SR_EXIT_FAILURE;
	}
	if (sr_secret_check_names(name, key, &err) < 0) {
		sr_sink_log(sink, SR_LOG_ERROR, "secrets set: %s", err.msg);
		return SR_EXIT_FAILURE;
	}
	n = tty ? read_terminal(key, buf, SR_SECRET_MAX + 1) : read_stream(buf, SR_SECRET_MAX + 2);
	if (n == 0) {
		no_value(name, key, tty, sink);
		return SR_EXIT_FAILURE;
	}
	if (n < 0) {
		sr_sink_log(sink, SR_LOG_ERROR, "secrets set: read the value of %s: %s", key,
			    strerror(errno));
		return SR_EXIT_FAILURE;
	}
	r = sr_secret_set(name, key, buf, (size_t)n, &err);
	explicit_bzero(buf, SR_SECRET_MAX + 2);
	if (r < 0) {
		sr_sink_log(sink, SR_LOG_ERROR, "secrets set: %s", err.msg);
		return SR_EXIT_FAILURE;
	}
	return 0;
}

/* Whether `deployments` lists a version of name, whatever its status (a failed first deploy's). */
static int listed(const char *name, bool *ret, struct sr_error *err)
{
	json_t *all = NULL, *m;
	size_t i;
	int r = sr_deploy_list(&all, err);

	if (r < 0)
		return r;
	*ret = false;
	json_array_foreach (all, i, m)
		if (sr_streq(json_string_value(json_object_get(m, "name")), name))
			*ret = true;
	json_decref(all);
	return 0;
}

static int ls(const char *name, bool as_json, const struct sr_sink *sink)
{
	struct sr_error err = {0};
	struct sr_strv keys = {0};
	bool known = true;
	int status;

	/*
	 * A name is known by its deployment or by secrets set for it before
	 * its first deploy. Neither: a mistyped name, said so rather than
	 * listed as a deployment with no secrets.
	 */
	if (sr_secret_list(name, &keys, &err) < 0 ||
	    (keys.n == 0 && listed(name, &known, &err) < 0)) {
		sr_sink_log(sink, SR_LOG_ERROR, "secrets ls: %s", err.msg);
		return SR_EXIT_FAILURE;
	}
	if (!known) {
		sr_sink_log(sink, SR_LOG_ERROR,
			    "secrets ls: no deployment '%s' and no secrets set for it "
			    "(sandbox-run deployments lists them)",
			    name);
		return SR_EXIT_FAILURE;
	}
	if (as_json) {
		json_t *a = json_array();

		for (size_t i = 0; a && i < keys.n; i++)
			json_array_append_new(a, json_string(keys.items[i]));
		status = sr_cli_print_json(a, "secrets ls");
		json_decref(a);
	} else {
		for (size_t i = 0; i < keys.n; i++)
			printf("%s\n", keys.items[i]);
		status = sr_cli_stdout_status("secrets ls");
	}
	sr_strv_free(&keys);
	return status;
}

int sr_verb_secrets(const struct sr_verb_args *a)
{
	struct sr_error err = {0};
	struct sr_sink sink;
	const char *sub = a->argc > 1 ? a->argv[1] : NULL;

	sr_sink_stderr(&sink, sr_options_log_level(a->verbosity));
	if (sr_cli_asks_help(a)) {
		usage(stdout);
		return sr_cli_stdout_status("--help");
	}
	if (sr_streq(sub, "set") && a->argc == 4)
		return set(a->argv[2], a->argv[3], &sink);
	if (sr_streq(sub, "ls") &&
	    (a->argc == 3 || (a->argc == 4 && sr_streq(a->argv[3], "--json"))))
		return ls(a->argv[2], a->argc == 4, &sink);
	if (sr_streq(sub, "rm") && a->argc == 4) {
		if (sr_secret_remove(a->argv[2], a->argv[3], &err) < 0) {
			sr_sink_log(&sink, SR_LOG_ERROR, "secrets rm: %s", err.msg);
			return SR_EXIT_FAILURE;
		}
		return 0;
	}
	if (sr_streq(sub, "set") && a->argc > 4)
		sr_sink_log(&sink, SR_LOG_ERROR,
			    "secrets set: the value comes on standard input, never on the command "
			    "line (ps shows every user a command line): sandbox-run secrets set "
			    "NAME KEY");
	else
		sr_sink_log(&sink, SR_LOG_ERROR,
			    "secrets: usage: sandbox-run secrets set NAME KEY | ls NAME [--json] | "
			    "rm NAME KEY");
	return SR_EXIT_FAILURE;
}
