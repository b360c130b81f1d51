/* SPDX-License-Identifier: MIT */
/*
 * `sandbox-run deployments [--json]`: every version of every deployment
 * (deploy.h); `deployments rollback NAME [VERSION]`, `deployments rm
 * NAME...`, `deployments log NAME [VERSION]` (the install log).
 */
#include "deploy.h"
#include "options.h"
#include "util.h"
#include "verbs.h"

#include <stdlib.h>
#include <time.h>
#include <unistd.h>

static void usage(FILE *f)
{
	fputs("Usage: sandbox-run deployments [ls] [--json]\n"
	      "       sandbox-run deployments rollback NAME [VERSION]\n"
	      "       sandbox-run deployments rm NAME...\n"
	      "       sandbox-run deployments log NAME [VERSION]\n"
	      "List your deployments' versions (name, version, when, size, dependencies,\n"
	      "status: active, ready, failed, installing, incomplete: an install that\n"
	      "was killed); make an older version current again (default: the newest\n"
	      "ready one older than the current); remove a\n"
	      "deployment with every version and its secrets; print a version's install\n"
	      "log (default: the newest).\n",
	      f);
}

static bool parse_version(const char *s, unsigned *ret)
{
	char *end;
	unsigned long v;

	if (!s)
		return *ret = 0, true;
	errno = 0;
	v = strtoul(s, &end, 10);
	if (errno || *end || end == s || v == 0 || v > 999999 || s[0] == '-' || s[0] == '+')
		return false;
	*ret = (unsigned)v;
	return true;
}

static void print_table(json_t *all)
{
	size_t i;
	json_t *m;

	printf("%-24s  %-7s  %-20s  %-10s  %-5s  %s\n", "NAME", "VERSION", "CREATED", "SIZE",
	       "DEPS", "STATUS");
	json_array_foreach (all, i, m) {
		json_t *size = json_object_get(m, "size_bytes");
		json_t *deps = json_object_get(m, "dependencies");
		char sz[32] = "-", dp[16] = "-";

		if (json_is_integer(size))
			snprintf(sz, sizeof(sz), "%lld", (long long)json_integer_value(size));
		if (json_is_integer(deps))
			snprintf(dp, sizeof(dp), "%lld", (long long)json_integer_value(deps));
		printf("%-24s  %-7lld  %-20s  %-10s  %-5s  %s\n",
		       json_string_value(json_object_get(m, "name")) ?: "?",
		       (long long)json_integer_value(json_object_get(m, "version")),
		       json_string_value(json_object_get(m, "created")) ?: "-", sz, dp,
		       json_string_value(json_object_get(m, "status")) ?: "?");
	}
}

static int list(bool as_json, const struct sr_sink *sink)
{
	struct sr_error err = {0};
	json_t *all = NULL;
	int status;

	if (sr_deploy_list(&all, &err) < 0) {
		sr_sink_log(sink, SR_LOG_ERROR, "deployments: %s", err.msg);
		return SR_EXIT_FAILURE;
	}
	if (as_json) {
		status = sr_cli_print_json(all, "deployments");
	} else {
		print_table(all);
		status = sr_cli_stdout_status("deployments");
	}
	json_decref(all);
	return status;
}

/*
 * The log at fd on a terminal: it holds what the install step printed,
 * which an install script controls, so each line is shown as
 * sr_printable makes it (no escape sequence reaches the terminal).
 */
static void print_log_printable(int fd)
{
	_cleanup_fclose_ FILE *f = fdopen(fd, "re");
	_cleanup_free_ char *line = NULL, *shown = NULL;
	size_t cap = 0, shown_cap = 0;
	ssize_t n;

	if (!f)
		return;
	while ((n = getline(&line, &cap, f)) > 0) {
		if (line[n - 1] == '\n')
			line[--n] = '\0';
		for (ssize_t i = 0; i < n; i++)
			if (!line[i])
				line[i] = '?';
		/* Never longer than the line: '?' stands for a byte; room for the cut's "...". */
		if ((size_t)n + 16 > shown_cap) {
			char *p = realloc(shown, (size_t)n + 16);

			if (!p)
				return;
			shown = p;
			shown_cap = (size_t)n + 16;
		}
		sr_printable(line, shown, shown_cap);
		if (printf("%s\n", shown) < 0)
			return;
	}
}

/*
 * The install log of name's version (0: the newest that has one) on
 * stdout: its bytes as they are, or made printable on a terminal.
 */
static int show_log(const char *name, unsigned version, const struct sr_sink *sink)
{
	struct sr_error err = {0};
	json_t *all = NULL, *m, *pick = NULL;
	_cleanup_close_ int fd = -1;
	char buf[65536];
	ssize_t n;
	size_t i;

	if (sr_deploy_list(&all, &err) < 0) {
		sr_sink_log(sink, SR_LOG_ERROR, "deployments log: %s", err.msg);
		return SR_EXIT_FAILURE;
	}
	json_array_foreach (all, i, m) {
		if (!sr_streq(json_string_value(json_object_get(m, "name")), name))
			continue;
		if (!version || json_integer_value(json_object_get(m, "version")) == version)
			pick = m;
	}
	if (pick)
		fd = open(json_string_value(json_object_get(pick, "log")),
			  O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	json_decref(all);
	if (fd < 0) {
		sr_sink_log(sink, SR_LOG_ERROR,
			    "deployments log: no install log of '%s'%s (sandbox-run deployments "
			    "lists them)",
			    name, version ? " at that version" : "");
		return SR_EXIT_FAILURE;
	}
	if (isatty(STDOUT_FILENO)) {
		print_log_printable(steal_fd(&fd));
		return sr_cli_stdout_status("deployments log");
	}
	while ((n = SR_RETRY(read(fd, buf, sizeof(buf)))) > 0)
		if (fwrite(buf, 1, (size_t)n, stdout) != (size_t)n)
			break;
	return sr_cli_stdout_status("deployments log");
}

int sr_verb_deployments(const struct sr_verb_args *a)
{
	struct sr_error err = {0};
	struct sr_sink sink;
	const char *sub = a->argc > 1 ? a->argv[1] : NULL;
	unsigned version = 0;
	int status = 0, list_at;

	sr_sink_stderr(&sink, sr_options_log_level(a->verbosity));
	if (sr_cli_asks_help(a)) {
		usage(stdout);
		return sr_cli_stdout_status("--help");
	}
	/* `deployments ls [--json]` too, as `secrets ls` and `docker image ls` have it. */
	list_at = sr_streq(sub, "ls") ? 2 : 1;
	if (a->argc == list_at || (a->argc == list_at + 1 && sr_streq(a->argv[list_at], "--json")))
		return list(a->argc > list_at, &sink);
	if (sr_streq(sub, "rm") && a->argc >= 3) {
		/* Said before any is removed: no NAME starts with '-'. */
		if (sr_cli_refuse_options(a, 2, "deployments rm", &sink))
			return SR_EXIT_FAILURE;
		for (int i = 2; i < a->argc; i++)
			if (!sr_cli_named_before(a->argv, 2, i) &&
			    sr_deploy_remove(a->argv[i], &err) < 0) {
				sr_sink_log(&sink, SR_LOG_ERROR, "deployments rm: %s", err.msg);
				status = SR_EXIT_FAILURE;
			}
		return status;
	}
	if (sr_streq(sub, "rollback") && (a->argc == 3 || a->argc == 4)) {
		if (!parse_version(a->argc == 4 ? a->argv[3] : NULL, &version)) {
			sr_sink_log(&sink, SR_LOG_ERROR, "deployments rollback: bad version '%s'",
				    a->argv[3]);
			return SR_EXIT_FAILURE;
		}
		if (sr_deploy_rollback(a->argv[2], version, &version, &err) < 0) {
			sr_sink_log(&sink, SR_LOG_ERROR, "deployments rollback: %s", err.msg);
			return SR_EXIT_FAILURE;
		}
		if (sr_sink_enabled(&sink, SR_LOG_WARNING))
			fprintf(stderr, "sandbox-run: %s: version %u is current\n", a->argv[2],
				version);
		return 0;
	}
	if (sr_streq(sub, "log") && (a->argc == 3 || a->argc == 4)) {
		if (!parse_version(a->argc == 4 ? a->argv[3] : NULL, &version)) {
			sr_sink_log(&sink, SR_LOG_ERROR, "deployments log: bad version '%s'",
				    a->argv[3]);
			return SR_EXIT_FAILURE;
		}
		return show_log(a->argv[2], version, &sink);
	}
	sr_sink_log(&sink, SR_LOG_ERROR,
		    "deployments: usage: sandbox-run deployments [ls] [--json] | rollback NAME "
		    "[VERSION] | rm NAME... | log NAME [VERSION]");
	return SR_EXIT_FAILURE;
}
