/* SPDX-License-Identifier: MIT */
/*
 * `sandbox-run diff ID|FILE [--stat|--patch]`: what a sandbox changed in
 * its workspace, for review (changes.h): a living sandbox's so far, or a
 * changes file's (--changes FILE of a run).
 */
#include "apply.h"
#include "changes.h"
#include "options.h"
#include "util.h"
#include "verbs.h"

#include <sys/stat.h>

int sr_cli_open_changes(const char *arg, const struct sr_sink *sink, int *ret_fd, bool *ret_file,
			struct sr_error *err)
{
	struct stat st;
	int fd;

	/* A file by that name wins: a sandbox's name is rarely a path. */
	*ret_file = strchr(arg, '/') || (stat(arg, &st) == 0 && S_ISREG(st.st_mode));
	if (*ret_file) {
		fd = open(arg, O_RDONLY | O_CLOEXEC | O_NOCTTY);
		if (fd < 0)
			return sr_error_errno(err, sr_negerrno(), "%s", arg);
		if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
			close(fd);
			return sr_error_msg(
			    err, -EINVAL, "%s: not a changes file (one that --changes FILE wrote)",
			    arg);
		}
		*ret_fd = fd;
		return 0;
	}
	return sr_changes_fetch(arg, sink, ret_fd, err);
}

void sr_cli_changes_error(const char *arg, bool file, struct sr_error *err)
{
	if (file && strncmp(err->msg, arg, strlen(arg)) != 0 &&
	    strncmp(err->msg, "read archive", 12) == 0)
		sr_error_prefix(err, "%s: not a changes file", arg);
}

int sr_verb_diff(const struct sr_verb_args *a)
{
	enum sr_diff_mode mode = SR_DIFF_SUMMARY;
	struct sr_error err = {0};
	_cleanup_close_ int fd = -1;
	const char *what = NULL;
	struct sr_sink sink;
	bool file = false;

	sr_sink_stderr(&sink, sr_options_log_level(a->verbosity));
	for (int i = 1; i < a->argc; i++) {
		if (strcmp(a->argv[i], "-h") == 0 || strcmp(a->argv[i], "--help") == 0) {
			fputs("Usage: sandbox-run diff ID|FILE [--stat | --patch]\n"
			      "What a sandbox changed in /workspace: a living sandbox's so far "
			      "(ID),\n"
			      "or a changes file's (written by --changes FILE). One line per "
			      "change:\n"
			      "A added, M modified, D deleted, R renamed.\n"
			      "\n"
			      "  --stat    lines added and removed per file\n"
			      "  --patch   a unified diff of every text file (git-style headers)\n"
			      "\n"
			      "Apply them to the host with sandbox-run apply ID|FILE.\n",
			      stdout);
			return sr_cli_stdout_status("--help");
		}
		if (strcmp(a->argv[i], "--stat") == 0)
			mode = SR_DIFF_STAT;
		else if (strcmp(a->argv[i], "--patch") == 0 || strcmp(a->argv[i], "-p") == 0)
			mode = SR_DIFF_PATCH;
		else if (a->argv[i][0] == '-' && a->argv[i][1]) {
			sr_sink_log(&sink, SR_LOG_ERROR, "diff: unknown option '%s' (see --help)",
				    a->argv[i]);
			return SR_EXIT_FAILURE;
		} else if (!what) {
			what = a->argv[i];
		} else {
			sr_sink_log(&sink, SR_LOG_ERROR,
				    "diff: usage: sandbox-run diff ID|FILE "
				    "[--stat|--patch]");
			return SR_EXIT_FAILURE;
		}
	}
	if (!what) {
		sr_sink_log(&sink, SR_LOG_ERROR,
			    "diff: usage: sandbox-run diff ID|FILE [--stat|--patch]");
		return SR_EXIT_FAILURE;
	}
	if (sr_cli_open_changes(what, &sink, &fd, &file, &err) < 0 ||
	    sr_changes_show(fd, mode, stdout, &err) < 0) {
		sr_cli_changes_error(what, file, &err);
		sr_sink_log(&sink, SR_LOG_ERROR, "diff: %s", err.msg);
		return SR_EXIT_FAILURE;
	}
	return sr_cli_stdout_status("diff");
}
