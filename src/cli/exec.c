/* SPDX-License-Identifier: MIT */
/*
 * `sandbox-run exec [-i] [-t] [--env K=V] [--workdir DIR] [--timeout D]
 * [--result FILE] ID -- COMMAND [ARG...]`: a process in a living sandbox,
 * through its keeper. The process gets this command's own stdout and
 * stderr (and stdin with -i) as they are, passed to PID 1: nothing is
 * copied through us. With -t it gets a pty of the sandbox's own instead,
 * and we relay our terminal to it.
 */
#include "control.h"
#include "env.h"
#include "options.h"
#include "proc.h"
#include "protocol.h"
#include "result.h"
#include "state.h"
#include "stdio-relay.h"
#include "units.h"
#include "util.h"
#include "verbs.h"

#include <getopt.h>
#include <poll.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/signalfd.h>

struct exec {
	bool interactive, tty;
	json_t *env;
	const char *workdir;
	uint64_t timeout_ms;
	const char *result;
	const char *ref;
	json_t *state; /* the sandbox's state.json, once found */
	char **argv;
	int argc;
	struct sr_sink sink;
	int ctl, sigfd;
	struct sr_stdio stdio;
	int64_t oom_limit;     /* killed for memory (the record's oom): the limit; 0 */
	const char *timed_out; /* ended by a timeout: "exec" (its --timeout) or "sandbox"; NULL */
};

static void usage(FILE *f)
{
	fputs("Usage: sandbox-run exec [OPTIONS] ID -- COMMAND [ARG...]\n"
	      "Run COMMAND in the living sandbox ID (its id, a prefix of 4 or more, or its\n"
	      "--name), as its user, in /workspace, with no capabilities and the sandbox's\n"
	      "environment. Exit status: COMMAND's own; 124 timeout; 125 sandbox-run\n"
	      "failed; 126 cannot execute; 127 not found; 128+N killed by signal N.\n"
	      "OPTIONS may also follow ID when a -- ends them.\n"
	      "\n"
	      "  -i, --interactive    pass this standard input (else /dev/null)\n"
	      "  -t, --tty            a pseudo-terminal of the sandbox's own, with job control\n"
	      "      --env KEY=VALUE  set a variable; repeatable\n"
	      "      --workdir DIR    working directory (relative: to /workspace)\n"
	      "      --timeout DURATION  kill COMMAND (and its process group) after it: 124\n"
	      "      --result FILE    write the result record (JSON) to FILE\n"
	      "  -q, --quiet          only errors on stderr (-v: taken, adds nothing)\n"
	      "  -h, --help           print this help and exit\n",
	      f);
}

/* Is there a "--" among argv[from..]? */
static bool has_separator(int argc, char **argv, int from)
{
	for (int i = from; i < argc; i++)
		if (strcmp(argv[i], "--") == 0)
			return true;
	return false;
}

/*
 * --env KEY=VALUE, said here as a run says it: a bad KEY went to the
 * keeper, whose "--env: expected KEY=VALUE, got '1=2'" named neither
 * the verb nor what was wrong with it.
 */
static int env_option(const char *arg, struct sr_error *err)
{
	const char *eq = strchr(arg, '=');

	if (!eq)
		return sr_error_msg(err, -EINVAL, "--env: expected KEY=VALUE, got '%s'", arg);
	if (!sr_env_valid_name(arg, (size_t)(eq - arg)))
		return sr_error_msg(err, -EINVAL,
				    "--env: bad variable name '%.*s' (use letters, digits and '_', "
				    "not starting with a digit)",
				    (int)(eq - arg), arg);
	return 0;
}

/*
 * Options, from optind to the first word that is not one (or "--", which
 * getopt steps over). Called again after ID for `exec ID [OPTIONS] -- CMD`.
 */
static int parse_options(int argc, char **argv, struct exec *x, struct sr_error *err)
{
	enum { OPT_ENV = 0x100, OPT_WORKDIR, OPT_TIMEOUT, OPT_RESULT };
	static const struct option opts[] = {
	    {"interactive", no_argument, NULL, 'i'},
	    {"tty", no_argument, NULL, 't'},
	    {"env", required_argument, NULL, OPT_ENV},
	    {"workdir", required_argument, NULL, OPT_WORKDIR},
	    {"timeout", required_argument, NULL, OPT_TIMEOUT},
	    {"result", required_argument, NULL, OPT_RESULT},
	    {"quiet", no_argument, NULL, 'q'},
	    {"verbose", no_argument, NULL, 'v'},
	    {"help", no_argument, NULL, 'h'},
	    {},
	};
	int o, r;

	opterr = 0;
	while ((o = getopt_long(argc, argv, "+:itqvh", opts, NULL)) != -1) {
		if (sr_options_value_missing(opts, argc, argv, err) < 0)
			return -EINVAL;
		switch (o) {
		case 'i':
			x->interactive = true;
			break;
		case 't':
			x->tty = true;
			break;
		case 'q':
			x->sink.level = SR_LOG_ERROR;
			break;
		case 'v':
			break;
		case 'h':
			usage(stdout);
			return 1;
		case OPT_ENV:
			if ((r = env_option(optarg, err)) < 0)
				return r;
			json_array_append_new(x->env, json_string(optarg));
			break;
		case OPT_WORKDIR:
			x->workdir = optarg;
			break;
		case OPT_TIMEOUT:
			r = sr_parse_duration(optarg, &x->timeout_ms);
			if (r < 0)
				return sr_error_msg(
				    err, r, "--timeout: bad duration '%s' (use e.g. 30, 90s, 5m)",
				    optarg);
			break;
		case OPT_RESULT:
			x->result = optarg;
			break;
		default:
			return sr_options_getopt_error(o, opts, argc, argv, err);
		}
	}
	return 0;
}

/*
 * `exec [OPTIONS] ID [--] COMMAND`, and, as kubectl takes them, options
 * between ID and a "--" too. Without a "--" the command starts right
 * after ID, as docker exec's does; one that starts with '-' is refused
 * there rather than run as a command named after an option.
 */
static int parse(int argc, char **argv, struct exec *x, struct sr_error *err)
{
	int r;

	optind = 0;
	r = parse_options(argc, argv, x, err);
	if (r != 0)
		return r;
	if (optind >= argc)
		return sr_error_msg(err, -EINVAL,
				    "missing ID (usage: sandbox-run exec ID -- COMMAND)");
	x->ref = argv[optind++];
	if (optind < argc && argv[optind][0] == '-' && strcmp(argv[optind], "--") != 0) {
		if (!has_separator(argc, argv, optind))
			return sr_error_msg(
			    err, -EINVAL,
			    "COMMAND '%s' looks like an option: give options before "
			    "ID, or end them with -- (sandbox-run exec ID [OPTIONS] "
			    "-- COMMAND)",
			    argv[optind]);
		r = parse_options(argc, argv, x, err);
		if (r != 0)
			return r;
	} else if (optind < argc && strcmp(argv[optind], "--") == 0)
		optind++;
	if (optind >= argc)
		return sr_error_msg(err, -EINVAL,
				    "missing COMMAND (usage: sandbox-run exec ID -- COMMAND)");
	if (argv[optind][0] == '\0')
		return sr_error_msg(err, -EINVAL,
				    "COMMAND is an empty word: name a command (sandbox-run exec ID "
				    "-- COMMAND)");
	x->argv = argv + optind;
	x->argc = argc - optind;
	return 0;
}

static json_t *request(struct exec *x)
{
	json_t *argv = json_array();
	json_t *req;

	for (int i = 0; i < x->argc; i++)
		json_array_append_new(argv, sr_json_string(x->argv[i]));
	req = json_pack("{sssosOsisI}", "op", "exec", "argv", argv, "env", x->env, "pty",
			(int)x->stdio.pty_mask, "timeout_ms", (json_int_t)x->timeout_ms);
	if (req && x->workdir)
		json_object_set_new(req, "cwd", sr_json_string(x->workdir));
	if (req && x->stdio.pty_mask) {
		const char *term = getenv("TERM");

		json_object_set_new(req, "rows", json_integer(x->stdio.rows));
		json_object_set_new(req, "cols", json_integer(x->stdio.cols));
		/* The terminal it will talk to is ours: its type too, unless given. */
		if (term && *term) {
			char kv[256];

			snprintf(kv, sizeof(kv), "TERM=%s", term);
			json_array_insert_new(x->env, 0, json_string(kv));
		}
	}
	return req;
}

static int setup_signals(struct exec *x)
{
	static const int passed[] = {SIGHUP,  SIGINT,	SIGQUIT, SIGTERM, SIGUSR1,
				     SIGUSR2, SIGWINCH, SIGALRM, SIGCONT};
	sigset_t set;

	sigemptyset(&set);
	for (size_t i = 0; i < SR_ARRAY_SIZE(passed); i++)
		sigaddset(&set, passed[i]);
	if (sigprocmask(SIG_BLOCK, &set, NULL) < 0)
		return -errno;
	x->sigfd = signalfd(-1, &set, SFD_CLOEXEC | SFD_NONBLOCK);
	return x->sigfd < 0 ? -errno : 0;
}

/* Signals to us go to the process's group; a window change to the pty. */
static void on_signal(struct exec *x)
{
	struct signalfd_siginfo si;

	while (read(x->sigfd, &si, sizeof(si)) == (ssize_t)sizeof(si)) {
		json_t *m;

		if (si.ssi_signo == SIGWINCH && sr_stdio_winch(&x->stdio))
			continue;
		if (si.ssi_signo == SIGCONT)
			sr_stdio_foreground(&x->stdio, true);
		m = json_pack("{sssi}", "op", "signal", "sig", (int)si.ssi_signo);
		if (m) {
			(void)sr_ctl_send(x->ctl, m, NULL, 0);
			json_decref(m);
		}
		if (si.ssi_signo == SIGTSTP || si.ssi_signo == SIGTTIN || si.ssi_signo == SIGTTOU)
			sr_stdio_stop_as(&x->stdio, (int)si.ssi_signo);
	}
}

/*
 * The keeper's answer to the request: the process started (ok), could not
 * (an error), or the exec ended before it did (an exit event: a signal of
 * ours while PID 1 had not started it, or the sandbox's end). Signals to
 * us are passed on meanwhile, so that ^C ends an exec that waits. 1, or
 * 0 when the keeper hung up.
 */
static int first_reply(struct exec *x, json_t **ret, int fds[SR_CTL_FDS_MAX], size_t *n_fds)
{
	for (;;) {
		struct pollfd p[2] = {
		    {.fd = x->ctl, .events = POLLIN},
		    {.fd = x->sigfd, .events = POLLIN},
		};

		if (poll(p, 2, -1) < 0) {
			if (errno == EINTR)
				continue;
			return 0;
		}
		if (p[1].revents)
			on_signal(x);
		if (p[0].revents)
			return sr_ctl_recv(x->ctl, ret, fds, n_fds) > 0;
	}
}

/* The exit status an exit event carries, its record in *ret_record (malloc'd). */
static int exit_event(struct exec *x, json_t *ev, char **ret_record)
{
	json_t *code = json_object_get(ev, "exit_code");
	json_t *record = json_object_get(ev, "record");
	const char *timed_out = json_string_value(json_object_get(ev, "timed_out"));

	if (json_is_object(record))
		sr_json_dump_line(record, ret_record);
	if (sr_streq(json_string_value(json_object_get(record, "status")), "oom"))
		x->oom_limit = json_integer_value(
		    json_object_get(json_object_get(record, "limits"), "memory_bytes"));
	/* A literal, not the event's string, which is freed with it. */
	x->timed_out = sr_streq(timed_out, "exec")	? "exec"
		       : sr_streq(timed_out, "sandbox") ? "sandbox"
							: NULL;
	return json_is_integer(code) ? (int)json_integer_value(code) : 125;
}

static bool is_exit_event(json_t *ev)
{
	return sr_streq(json_string_value(json_object_get(ev, "event")), "exit");
}

/* Until the exit event: the record's JSON (malloc'd) and the exit status. */
static int wait_exit(struct exec *x, char **ret_record, struct sr_error *err)
{
	for (;;) {
		struct pollfd fds[2 + SR_STDIO_POLL_FDS] = {
		    {.fd = x->ctl, .events = POLLIN},
		    {.fd = x->sigfd, .events = POLLIN},
		};
		size_t n = 2 + sr_stdio_poll_fds(&x->stdio, fds + 2);
		json_t *ev = NULL;
		int r;

		if (poll(fds, n, -1) < 0) {
			if (errno == EINTR)
				continue;
			return sr_error_errno(err, sr_negerrno(), "exec: poll");
		}
		if (fds[1].revents)
			on_signal(x);
		sr_stdio_dispatch(&x->stdio, fds + 2, n - 2);
		if (!fds[0].revents)
			continue;
		r = sr_ctl_recv_nofds(x->ctl, &ev);
		if (r <= 0)
			return sr_error_msg(err, -ECONNRESET,
					    "exec: the sandbox's keeper hung up (the sandbox is "
					    "gone)");
		if (is_exit_event(ev)) {
			int status = exit_event(x, ev, ret_record);

			json_decref(ev);
			return status;
		}
		json_decref(ev);
	}
}

/* x->ref's keeper, its control socket in x->ctl. */
static int connect_keeper(struct exec *x, struct sr_error *err)
{
	_cleanup_free_ char *statedir = NULL;
	struct sr_entry e = {0};
	int r;

	if ((r = sr_state_dir(&statedir, err)) < 0 ||
	    (r = sr_state_find(statedir, x->ref, &e, err)) < 0 ||
	    (r = sr_ctl_connect(e.dir, &x->ctl, err)) < 0) {
		sr_entry_free(&e);
		return r;
	}
	x->state = json_incref(e.state);
	sr_entry_free(&e);
	return 0;
}

/* The exec request to the keeper, with the process's stdio that is not a pty of its own. */
static int send_request(struct exec *x, struct sr_error *err)
{
	json_t *req = request(x);
	int pass[3];
	size_t n_pass = 0;
	int r;

	if (!req)
		return sr_error_errno(err, -ENOMEM, "exec");
	if (setup_signals(x) < 0) {
		json_decref(req);
		return sr_error_errno(err, sr_negerrno(), "exec: signals");
	}
	for (int i = 0; i < 3; i++)
		if (!(x->stdio.pty_mask & (SR_SPAWN_PTY_STDIN << i)))
			pass[n_pass++] = x->stdio.pass[i];
	r = sr_ctl_send(x->ctl, req, pass, n_pass);
	json_decref(req);
	if (r == -EMSGSIZE)
		return sr_error_msg(err, r, "exec: the command and its environment are too long");
	if (r < 0)
		return sr_error_errno(err, r, "exec: talk to the sandbox's keeper");
	return 0;
}

static void close_all(const int *fds, size_t n)
{
	for (size_t i = 0; i < n; i++)
		close(fds[i]);
}

/* The process, from the keeper's first answer to its exit: the exit status, the record. */
static int follow(struct exec *x, char **ret_record, struct sr_error *err)
{
	json_t *reply = NULL;
	int passed[SR_CTL_FDS_MAX];
	size_t n_fds = 0;
	int status;

	if (!first_reply(x, &reply, passed, &n_fds))
		return sr_error_msg(err, -ECONNRESET, "exec: the sandbox's keeper hung up");
	if (is_exit_event(reply)) {
		status = exit_event(x, reply, ret_record);
		json_decref(reply);
		close_all(passed, n_fds);
		sr_stdio_finish(&x->stdio, 0, -1, -1);
		return status;
	}
	if (sr_ctl_reply_error(reply, err) < 0) {
		close_all(passed, n_fds);
		json_decref(reply);
		return -EIO;
	}
	json_decref(reply);
	if (x->stdio.pty_mask && n_fds != 1) {
		close_all(passed, n_fds);
		return sr_error_msg(err, -EPROTO, "exec: no pty came back");
	}
	sr_stdio_started(&x->stdio, x->stdio.pty_mask ? passed[0] : -1);
	status = wait_exit(x, ret_record, err);
	/* A slow reader is waited for, as the command would have waited, but past a timeout. */
	sr_stdio_finish(&x->stdio, 50, -1, x->timed_out ? -1 : x->sigfd);
	return status;
}

/*
 * The keeper's record with what our relay did not deliver of the
 * command's output (result.h), as *ret_owned (malloc'd); NULL: out of
 * memory.
 */
static const char *with_dropped(const struct exec *x, const char *record, char **ret_owned)
{
	_cleanup_(sr_json_decrefp) json_t *rec = json_loads(record, 0, NULL);

	if (!json_is_object(rec) ||
	    json_object_set_new(rec, "output_dropped_bytes",
				json_integer((json_int_t)sr_stdio_dropped(&x->stdio))) < 0 ||
	    sr_json_dump_line(rec, ret_owned) < 0)
		return NULL;
	return *ret_owned;
}

/* status once the command's output and its record are where they go. */
static int final_status(struct exec *x, const struct sr_result_target *target, const char *record,
			int status)
{
	_cleanup_free_ char *owned = NULL;
	int fd, werr = sr_stdio_write_error(&x->stdio, &fd);
	char limit[SR_UNITS_BUF_MAX], text[256];

	/* As a run says it (not with -q): the kernel's OOM killer, at the sandbox's limit. */
	if (x->oom_limit > 0 && sr_format_size((uint64_t)x->oom_limit, limit, sizeof(limit)) == 0)
		sr_warn(&x->sink,
			"out of memory: the command was killed at the sandbox's %s memory limit",
			limit);
	/* And a timeout, the keeper says whose: its own --timeout, or the sandbox's deadline. */
	if (sr_streq(x->timed_out, "exec") &&
	    sr_format_duration(x->timeout_ms, limit, sizeof(limit)) == 0)
		sr_warn(&x->sink, "timed out after %s: the command was killed", limit);
	else if (x->timed_out)
		sr_warn(&x->sink, "the sandbox's deadline came: the command was killed");

	/*
	 * What the command wrote and we could not (a full disk), or gave up
	 * on (its reader too slow): said, and a clean exit fails.
	 */
	if (werr) {
		sr_sink_log(&x->sink, SR_LOG_ERROR, "exec: the command's standard %s: write: %s",
			    fd == 1 ? "output" : "error", strerror(werr));
		if (status == 0)
			status = SR_EXIT_FAILURE;
	} else if (sr_stdio_dropped_text(&x->stdio, "command", text, sizeof(text))) {
		sr_warn(&x->sink, "%s", text);
		if (status == 0)
			status = SR_EXIT_FAILURE;
	}
	if (x->result && target) {
		struct sr_error rerr = {0};

		if (!record)
			sr_error_msg(&rerr, -EPROTO, "result %s: no record came back", x->result);
		else if (sr_stdio_dropped(&x->stdio) && !(record = with_dropped(x, record, &owned)))
			sr_error_msg(&rerr, -ENOMEM, "result %s: format", x->result);
		if (!record || sr_result_target_write_text(target, record, &rerr) < 0) {
			sr_cli_verb_error(&x->sink, "exec", rerr.msg);
			if (status == 0)
				status = SR_EXIT_FAILURE;
		}
	}
	return status;
}

static int run_exec(struct exec *x, const struct sr_result_target *target, struct sr_error *err)
{
	_cleanup_free_ char *record = NULL;
	_cleanup_close_ int null = -1;
	int fds[3];
	int r, status;

	r = connect_keeper(x, err);
	if (r < 0)
		return r;
	null = open("/dev/null", O_RDONLY | O_CLOEXEC);
	fds[0] = x->interactive ? STDIN_FILENO : null;
	fds[1] = STDOUT_FILENO;
	fds[2] = STDERR_FILENO;
	/*
	 * The caller's terminals and files are not the process's to hold
	 * (stdio-relay.h); -t gives it a pty whatever they are, all its
	 * signals with it (the job control inside is its own).
	 */
	r = sr_stdio_prepare(&x->stdio, fds,
			     SR_STDIO_RELAY_ALL | (x->interactive ? SR_STDIO_INPUT : 0) |
				 (x->tty ? SR_STDIO_FORCE_PTY : SR_STDIO_KEEP_SIGNALS),
			     err);
	if (r < 0)
		return r;
	r = send_request(x, err);
	if (r < 0)
		return r;
	status = follow(x, &record, err);
	if (status < 0)
		return status;
	return final_status(x, target, record, status);
}

/*
 * The record of an exec whose command never ran (no such sandbox, a
 * command not found or not executable, a bad --workdir): status error
 * and why, as a run's. Its limits, how they are held, its profile and
 * its id are the sandbox's state's, as inspect says them (and as the
 * record of a command that ran has them), and null with no sandbox:
 * nothing of the default profile, whose limits this sandbox may not
 * have.
 */
static void write_error_record(struct exec *x, const struct sr_result_target *target, int status,
			       const char *msg)
{
	_cleanup_free_ char *text = NULL;
	struct sr_error werr = {0};
	struct sr_result r;
	json_t *record;

	sr_result_init(&r);
	r.exit_code = status;
	snprintf(r.error, sizeof(r.error), "%s", msg);
	record = sr_result_json_state(&r, json_is_object(x->state) ? x->state : NULL);
	if (!record || sr_json_dump_line(record, &text) < 0)
		sr_error_msg(&werr, -ENOMEM, "result %s: format", x->result);
	else
		(void)sr_result_target_write_text(target, text, &werr);
	if (werr.msg[0])
		sr_cli_verb_error(&x->sink, "exec", werr.msg);
	json_decref(record);
}

int sr_verb_exec(const struct sr_verb_args *a)
{
	struct exec x = {.ctl = -1,
			 .sigfd = -1,
			 .env = json_array(),
			 .stdio = {.master = -1,
				   .term_in = -1,
				   .term_out = -1,
				   .files = {{.pipe = -1}, {.pipe = -1}, {.pipe = -1}}}};
	struct sr_result_target target = SR_RESULT_TARGET_INIT;
	struct sr_error err = {0};
	int status;

	sr_sink_stderr(&x.sink, sr_options_log_level(a->verbosity));
	status = parse(a->argc, a->argv, &x, &err);
	if (status != 0) {
		json_decref(x.env);
		if (status > 0)
			return sr_cli_stdout_status("--help");
		sr_sink_log(&x.sink, SR_LOG_ERROR, "exec: %s", err.msg);
		return SR_EXIT_FAILURE;
	}
	sr_proc_raise_fd_limit();
	/* Settled before the command runs, as for a run (result.h). */
	if (x.result && sr_result_target_open(x.result, &target, &err) < 0) {
		sr_cli_verb_error(&x.sink, "exec", err.msg);
		json_decref(x.env);
		return SR_EXIT_FAILURE;
	}
	status = run_exec(&x, &target, &err);
	if (status < 0) {
		sr_cli_verb_error(&x.sink, "exec", err.msg);
		status = err.status ? err.status : SR_EXIT_FAILURE;
		if (x.result)
			write_error_record(&x, &target, status, err.msg);
	}
	sr_result_target_close(&target);
	sr_closep(&x.ctl);
	sr_closep(&x.sigfd);
	json_decref(x.env);
	json_decref(x.state);
	return status;
}
