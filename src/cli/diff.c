/* SPDX-License-Identifier: MIT */
/*
 * `sandbox-run diff ID|FILE [--stat|--patch|--json]`: what a sandbox
 * changed in its workspace, for review (changes.h): a living sandbox's so
 * far, or a changes file's (--changes FILE of a run).
 */
#include "apply.h"
#include "changes.h"
#include "options.h"
#include "proc.h"
#include "state.h"
#include "util.h"
#include "verbs.h"

#include <getopt.h>
#include <sys/stat.h>

/*
 * Whether arg may name a sandbox: false only when surely none has that
 * name or id. What names none and is no regular file here was "no
 * sandbox 'agnet.changes'" alone, as if the user had meant a sandbox,
 * for a mistyped changes file; any other failure to look it up (no state
 * directory, an ambiguous prefix) is left for the fetch to say.
 */
static bool sandbox_named(const char *arg)
{
	_cleanup_free_ char *statedir = NULL;
	struct sr_entry e = {0};
	struct sr_error err = {0};
	int r;

	if (sr_state_dir(&statedir, &err) < 0)
		return true;
	r = sr_state_find(statedir, arg, &e, &err);
	sr_entry_free(&e);
	return r != -ENOENT;
}

int sr_cli_open_changes(const char *arg, int idle_ms, const struct sr_sink *sink, int *ret_fd,
			bool *ret_file, struct sr_error *err)
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
	if (sandbox_named(arg))
		return sr_changes_fetch(arg, idle_ms, sink, ret_fd, err);
	if (access(arg, F_OK) == 0)
		return sr_error_msg(err, -EINVAL,
				    "%s: not a changes file (one that --changes FILE wrote)", arg);
	return sr_error_msg(err, -ENOENT,
			    "no changes file or sandbox '%s' (a file: check its path; sandbox-run "
			    "ls lists the sandboxes)",
			    arg);
}

void sr_cli_changes_error(const char *arg, bool file, struct sr_error *err)
{
	if (file && strncmp(err->msg, arg, strlen(arg)) != 0 &&
	    strncmp(err->msg, "read archive", 12) == 0)
		sr_error_prefix(err, "%s: not a changes file", arg);
}

static void usage(FILE *f)
{
	fputs("Usage: sandbox-run diff ID|FILE [--stat | --patch | --json]\n"
	      "                         [--idle-timeout DURATION]\n"
	      "What a sandbox changed in /workspace: a living sandbox's so far (ID),\n"
	      "or a changes file's (written by --changes FILE). One line per change:\n"
	      "A added, M modified, D deleted, R renamed.\n"
	      "\n"
	      "      --stat      lines added and removed per file\n"
	      "  -p, --patch     a unified diff of every text file (git-style headers)\n"
	      "      --json      the changes file's manifest: one JSON object\n"
	      "      --idle-timeout DURATION  give up when the sandbox sends nothing for\n"
	      "                  DURATION (a worker stopped inside: default 60s; 0: wait)\n"
	      "  -h, --help      print this help and exit\n"
	      "\n"
	      "Apply them to the host with sandbox-run apply ID|FILE.\n",
	      f);
}

/* 1 for --help, 0, or -errno with err. */
static int parse(const struct sr_verb_args *a, enum sr_diff_mode *mode, bool *json, int *idle_ms,
		 const char **what, struct sr_error *err)
{
	enum { OPT_STAT = 0x100, OPT_JSON, OPT_IDLE_TIMEOUT };
	static const struct option opts[] = {
	    {"stat", no_argument, NULL, OPT_STAT},
	    {"patch", no_argument, NULL, 'p'},
	    {"json", no_argument, NULL, OPT_JSON},
	    {"idle-timeout", required_argument, NULL, OPT_IDLE_TIMEOUT},
	    {"help", no_argument, NULL, 'h'},
	    {},
	};
	int o;

	optind = 0;
	opterr = 0;
	while ((o = getopt_long(a->argc, a->argv, ":ph", opts, NULL)) != -1) {
		switch (o) {
		case OPT_STAT:
			*mode = SR_DIFF_STAT;
			break;
		case 'p':
			*mode = SR_DIFF_PATCH;
			break;
		case OPT_JSON:
			*json = true;
			break;
		case OPT_IDLE_TIMEOUT:
			if (sr_cli_idle_timeout(optarg, idle_ms, err) < 0)
				return err->code;
			break;
		case 'h':
			usage(stdout);
			return 1;
		default:
			return sr_options_getopt_error(o, opts, a->argc, a->argv, err);
		}
	}
	if (a->argc - optind != 1)
		return sr_error_msg(err, -EINVAL,
				    "usage: sandbox-run diff ID|FILE [--stat|--patch|--json] "
				    "[--idle-timeout DURATION]");
	if (*json && *mode != SR_DIFF_SUMMARY)
		return sr_error_msg(err, -EINVAL,
				    "--json is the changes as JSON, --%s is text: give one of them",
				    *mode == SR_DIFF_STAT ? "stat" : "patch");
	*what = a->argv[optind];
	return 0;
}

/*
 * --json: the changes file's manifest as it is (docs/artifacts.md), for a
 * script that would otherwise parse the lines of the summary. 0, 125
 * when it could not reach stdout (said), or -errno with err.
 */
static int show_json(int fd, struct sr_error *err)
{
	struct sr_archive_reader *r = NULL;
	struct sr_changes c = {0};
	json_t *j = NULL;
	int k;

	if (lseek(fd, 0, SEEK_SET) < 0)
		return sr_error_errno(err, sr_negerrno(), "read the changes");
	k = sr_archive_reader_open(fd, 0, &r, err);
	if (k >= 0)
		k = sr_changes_read(r, &c, err);
	if (k >= 0 && !(j = sr_changes_manifest(&c)))
		k = sr_error_errno(err, -ENOMEM, "the changes as JSON");
	if (k >= 0)
		k = sr_cli_print_json(j, "diff");
	json_decref(j);
	sr_archive_reader_free(r);
	sr_changes_free(&c);
	return k;
}

int sr_verb_diff(const struct sr_verb_args *a)
{
	enum sr_diff_mode mode = SR_DIFF_SUMMARY;
	struct sr_error err = {0};
	_cleanup_close_ int fd = -1;
	int idle_ms = SR_CLI_IDLE_MS, r;
	const char *what = NULL;
	struct sr_sink sink;
	bool file = false, json = false, parsed;

	sr_sink_stderr(&sink, sr_options_log_level(a->verbosity));
	r = parse(a, &mode, &json, &idle_ms, &what, &err);
	if (r > 0)
		return sr_cli_stdout_status("--help");
	parsed = r >= 0;
	sr_proc_raise_fd_limit(); /* a sandbox's changes come through a pipe passed to its keeper */
	if (r >= 0 && sr_cli_open_changes(what, idle_ms, &sink, &fd, &file, &err) < 0)
		r = err.code;
	if (r >= 0 && json) {
		r = show_json(fd, &err);
		if (r >= 0)
			return r; /* 0, or 125 said */
	} else if (r >= 0) {
		/* On a terminal the agent's control characters are shown; a file gets the bytes. */
		FILE *out = isatty(STDOUT_FILENO) ? sr_changes_visible_open(stdout) : stdout;

		if (!out)
			r = sr_error_errno(&err, sr_negerrno(), "diff");
		else
			r = sr_changes_show(fd, mode, out, &err);
		if (out && out != stdout)
			fclose(out);
	}
	if (r < 0) {
		if (parsed)
			sr_cli_changes_error(what, file, &err);
		sr_sink_log(&sink, SR_LOG_ERROR, "diff: %s", err.msg);
		return SR_EXIT_FAILURE;
	}
	return sr_cli_stdout_status("diff");
}
