/* SPDX-License-Identifier: MIT */
/*
 * `sandbox-run apply ID|FILE [--to DIR] [--force]`: a sandbox's changes
 * made to the host directory its workspace came from (or DIR), as the
 * caller: refused, naming the paths, where the host copy changed since
 * the sandbox started (unless --force), and whatever a crafted changes
 * file carries that leaves DIR, is a device or has a set-id bit.
 */
#include "apply.h"
#include "options.h"
#include "proc.h"
#include "util.h"
#include "verbs.h"

#include <getopt.h>

static void usage(FILE *f)
{
	fputs("Usage: sandbox-run apply ID|FILE [--to DIR] [--force] [--idle-timeout DURATION]\n"
	      "Make a sandbox's changes to /workspace (a living sandbox's so far, or\n"
	      "a changes file's) in the host directory its workspace came from, or\n"
	      "DIR, as your own files. Nothing is changed when the host copy of a\n"
	      "path changed since the sandbox started (the paths are named): review\n"
	      "with sandbox-run diff, then --force applies over the host's. A link\n"
	      "on the way is never followed; devices and set-id bits never made.\n"
	      "\n"
	      "      --to DIR    apply to DIR (e.g. a copy of the checkout)\n"
	      "  -f, --force     apply where the host copy changed too\n"
	      "      --idle-timeout DURATION  give up when the sandbox sends nothing for\n"
	      "                  DURATION (a worker stopped inside: default 60s; 0: wait)\n"
	      "  -h, --help      print this help and exit\n",
	      f);
}

struct apply_args {
	const char *what, *to;
	bool force;
	int idle_ms;
};

/* 1 for --help, 0, or -errno with err. */
static int parse(const struct sr_verb_args *a, struct apply_args *p, struct sr_error *err)
{
	enum { OPT_TO = 0x100, OPT_IDLE_TIMEOUT };
	static const struct option opts[] = {
	    {"to", required_argument, NULL, OPT_TO},
	    {"force", no_argument, NULL, 'f'},
	    {"idle-timeout", required_argument, NULL, OPT_IDLE_TIMEOUT},
	    {"help", no_argument, NULL, 'h'},
	    {},
	};
	int o;

	optind = 0;
	opterr = 0;
	while ((o = getopt_long(a->argc, a->argv, ":fh", opts, NULL)) != -1) {
		switch (o) {
		case OPT_TO:
			/* An unset variable ("--to $DIR"): said as such, not ": No such file". */
			if (!*optarg)
				return sr_error_msg(err, -EINVAL,
						    "--to: an empty path (is the variable that "
						    "should hold it set?)");
			p->to = optarg;
			break;
		case 'f':
			p->force = true;
			break;
		case OPT_IDLE_TIMEOUT:
			if (sr_cli_idle_timeout(optarg, &p->idle_ms, err) < 0)
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
				    "usage: sandbox-run apply ID|FILE [--to DIR] [--force] "
				    "[--idle-timeout DURATION]");
	p->what = a->argv[optind];
	return 0;
}

int sr_verb_apply(const struct sr_verb_args *a)
{
	struct apply_args p = {.idle_ms = SR_CLI_IDLE_MS};
	struct sr_apply_report rep = {0};
	struct sr_error err = {0};
	_cleanup_close_ int fd = -1;
	struct sr_sink sink;
	bool file = false;
	int r;

	sr_sink_stderr(&sink, sr_options_log_level(a->verbosity));
	r = parse(a, &p, &err);
	if (r > 0)
		return sr_cli_stdout_status("--help");
	sr_proc_raise_fd_limit(); /* a sandbox's changes come through a pipe passed to its keeper */
	if (r < 0 || sr_cli_open_changes(p.what, p.idle_ms, &sink, &fd, &file, &err) < 0 ||
	    sr_changes_apply(fd, p.to, p.force, &sink, &rep, &err) < 0) {
		if (r >= 0)
			sr_cli_changes_error(p.what, file, &err);
		sr_sink_log(&sink, SR_LOG_ERROR, "%s%s",
			    strncmp(err.msg, "apply", 5) ? "apply: " : "", err.msg);
		return SR_EXIT_FAILURE;
	}
	sr_sink_log(&sink, SR_LOG_INFO,
		    "applied: %zu added, %zu modified, %zu deleted, %zu already so%s", rep.added,
		    rep.modified, rep.deleted, rep.unchanged,
		    rep.conflicts ? " (conflicts forced over the host's)" : "");
	return 0;
}
