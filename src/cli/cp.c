/* SPDX-License-Identifier: MIT */
/*
 * `sandbox-run cp SRC DST`, one of them ID:PATH: files in or out of a
 * living sandbox (lib/copy.h).
 */
#include "control.h"
#include "copy.h"
#include "options.h"
#include "proc.h"
#include "state.h"
#include "units.h"
#include "util.h"
#include "verbs.h"

#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <sys/signalfd.h>

struct cp {
	const char *src, *dst;
	uint64_t max_bytes;
	int idle_ms;
	bool max_given;
	struct sr_sink sink;
};

static void usage(FILE *f)
{
	fputs("Usage: sandbox-run cp [OPTIONS] ID:PATH HOSTPATH\n"
	      "       sandbox-run cp [OPTIONS] HOSTPATH ID:PATH\n"
	      "Copy a file or a tree out of or into a living sandbox (a relative PATH is\n"
	      "relative to /workspace). An existing directory as the destination gets the\n"
	      "copy inside it; anything else is the copy's name (a file there is replaced,\n"
	      "a symbolic link refused). A symbolic link on the way to HOSTPATH is\n"
	      "followed only where root owns it and its directory, as for --bind sources.\n"
	      "Run by root, a copy out is written as --export writes: as its directory's\n"
	      "owner, refused where others could have swapped that directory in.\n"
	      "Modes, mtimes, holes and symbolic links within the copy are kept; owners,\n"
	      "devices, FIFOs, sockets and set-id bits are not, and nothing is written\n"
	      "outside the destination.\n"
	      "\n"
	      "      --max-size SIZE  out: write at most SIZE on the host, holes included\n"
	      "                       (default: the sandbox's --disk; 0: no bound)\n"
	      "      --idle-timeout DURATION  give up when nothing moves for DURATION (a\n"
	      "                       worker stopped inside: default 60s; 0: wait)\n"
	      "  -q, --quiet          only errors on stderr (-v: taken, adds nothing)\n"
	      "  -h, --help           print this help and exit\n",
	      f);
}

static int parse(int argc, char **argv, struct cp *c, struct sr_error *err)
{
	enum { OPT_MAX_SIZE = 0x100, OPT_IDLE_TIMEOUT };
	static const struct option opts[] = {
	    {"max-size", required_argument, NULL, OPT_MAX_SIZE},
	    {"idle-timeout", required_argument, NULL, OPT_IDLE_TIMEOUT},
	    {"quiet", no_argument, NULL, 'q'},
	    {"verbose", no_argument, NULL, 'v'},
	    {"help", no_argument, NULL, 'h'},
	    {},
	};
	int o, r;

	optind = 0;
	opterr = 0;
	while ((o = getopt_long(argc, argv, ":qvh", opts, NULL)) != -1) {
		switch (o) {
		case 'q':
			c->sink.level = SR_LOG_ERROR;
			break;
		case 'v':
			break;
		case 'h':
			usage(stdout);
			return 1;
		case OPT_MAX_SIZE:
			r = sr_parse_size(optarg, &c->max_bytes);
			if (r < 0)
				return sr_error_msg(
				    err, r,
				    "--max-size: bad size '%s' (use e.g. 512M, 20G, or 0 for none)",
				    optarg);
			c->max_given = true;
			break;
		case OPT_IDLE_TIMEOUT:
			r = sr_cli_idle_timeout(optarg, &c->idle_ms, err);
			if (r < 0)
				return r;
			break;
		default:
			return sr_options_getopt_error(o, opts, argc, argv, err);
		}
	}
	if (argc - optind != 2)
		return sr_error_msg(err, -EINVAL, "usage: sandbox-run cp SRC DST (one is ID:PATH)");
	c->src = argv[optind];
	c->dst = argv[optind + 1];
	return 0;
}

/* "ID:PATH" (ID with no slash): the sandbox's part in *ret_ref and *ret_path. */
static bool sandbox_side(const char *arg, char **ret_ref, const char **ret_path)
{
	const char *colon = strchr(arg, ':');

	if (!colon || colon == arg || memchr(arg, '/', (size_t)(colon - arg)))
		return false;
	*ret_ref = strndup(arg, (size_t)(colon - arg));
	*ret_path = colon + 1;
	return *ret_ref != NULL;
}

/*
 * How much cp out may write on the host: --max-size, else the sandbox's
 * disk limit (what it could have made itself, holes aside), else none.
 */
static void bound(const struct cp *c, json_t *state, struct sr_copy_opts *o, char *what, size_t len)
{
	json_t *disk = json_object_get(json_object_get(state, "limits"), "disk_bytes");
	char size[SR_UNITS_BUF_MAX];

	o->max_bytes = c->max_given	       ? c->max_bytes
		       : json_is_integer(disk) ? (uint64_t)json_integer_value(disk)
					       : 0;
	sr_format_size(o->max_bytes, size, sizeof(size));
	if (c->max_given)
		snprintf(what, len, "the --max-size of %s", size);
	else
		snprintf(what, len, "%s, the sandbox's disk limit (--max-size raises it)", size);
	o->limit_what = what;
}

/*
 * cp out: SIGINT, SIGTERM and SIGHUP (a ^C, a kill, a closed terminal)
 * stop the copy rather than end us midway, so that what was extracted
 * under its temporary name is removed (copy.h's cancel_fd). Blocked from
 * here to our exit; one the caller ignores (a background job's SIGINT)
 * stays ignored. -1 where no signalfd could be made (they stay as they
 * were).
 */
static int cancel_signals(void)
{
	static const int sigs[] = {SIGINT, SIGTERM, SIGHUP};
	struct sigaction old;
	sigset_t set;
	int fd;

	sigemptyset(&set);
	for (size_t i = 0; i < SR_ARRAY_SIZE(sigs); i++)
		if (sigaction(sigs[i], NULL, &old) == 0 && old.sa_handler != SIG_IGN)
			sigaddset(&set, sigs[i]);
	fd = signalfd(-1, &set, SFD_CLOEXEC | SFD_NONBLOCK);
	if (fd >= 0 && sigprocmask(SIG_BLOCK, &set, NULL) < 0) {
		close(fd);
		return -1;
	}
	return fd;
}

/* 128 + the signal that cancelled the copy (SIGINT if it cannot be read). */
static int cancelled_status(int fd)
{
	struct signalfd_siginfo si;

	if (read(fd, &si, sizeof(si)) == (ssize_t)sizeof(si) && si.ssi_signo > 0)
		return 128 + (int)si.ssi_signo;
	return 128 + SIGINT;
}

int sr_verb_cp(const struct sr_verb_args *a)
{
	_cleanup_free_ char *statedir = NULL, *src_ref = NULL, *dst_ref = NULL;
	_cleanup_close_ int ctl = -1, cancel = -1;
	const char *src_path = NULL, *dst_path = NULL;
	struct cp c = {.idle_ms = SR_CLI_IDLE_MS};
	struct sr_entry e = {0};
	struct sr_error err = {0};
	struct sr_copy_opts o = {0};
	char what[128];
	bool out, in;
	int r;

	sr_sink_stderr(&c.sink, sr_options_log_level(a->verbosity));
	r = parse(a->argc, a->argv, &c, &err);
	if (r > 0)
		return sr_cli_stdout_status("--help");
	if (r < 0) {
		sr_sink_log(&c.sink, SR_LOG_ERROR, "cp: %s", err.msg);
		return SR_EXIT_FAILURE;
	}
	out = sandbox_side(c.src, &src_ref, &src_path);
	in = sandbox_side(c.dst, &dst_ref, &dst_path);
	if (out == in) {
		sr_sink_log(&c.sink, SR_LOG_ERROR,
			    "cp: one of SRC and DST must be ID:PATH, the other a host path (write "
			    "./a:b for a host path with a colon)");
		return SR_EXIT_FAILURE;
	}
	if (!*(out ? src_path : dst_path)) {
		sr_sink_log(&c.sink, SR_LOG_ERROR,
			    "cp: '%s' has no PATH after its colon: name a file or directory in the "
			    "sandbox (a relative one is in /workspace)",
			    out ? c.src : c.dst);
		return SR_EXIT_FAILURE;
	}
	sr_proc_raise_fd_limit();
	r = sr_state_dir(&statedir, &err);
	if (r >= 0)
		r = sr_state_find(statedir, out ? src_ref : dst_ref, &e, &err);
	if (r >= 0)
		r = sr_ctl_connect(e.dir, &ctl, &err);
	if (r >= 0) {
		/* Its workspace's directory on the host: its author's links are not followed. */
		const char *ws = json_string_value(json_object_get(e.state, "workspace"));
		const char *trees[] = {ws && ws[0] == '/' ? ws : NULL, NULL};

		o.agent_trees = trees;
		o.idle_ms = c.idle_ms;
		bound(&c, e.state, &o, what, sizeof(what));
		if (out) {
			cancel = cancel_signals();
			o.cancel_fd = cancel > 0 ? cancel : 0;
		}
		r = out ? sr_copy_out(ctl, src_path, c.dst, &o, &err)
			: sr_copy_in(ctl, c.src, dst_path, &o, &err);
	}
	sr_entry_free(&e);
	if (r == -ECANCELED && cancel > 0) {
		sr_cli_verb_error(&c.sink, "cp", err.msg);
		return cancelled_status(cancel);
	}
	if (r < 0) {
		sr_cli_verb_error(&c.sink, "cp", err.msg);
		return SR_EXIT_FAILURE;
	}
	return 0;
}
