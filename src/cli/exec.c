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
#include "options.h"
#include "result.h"
#include "state.h"
#include "units.h"
#include "util.h"
#include "verbs.h"

#include <getopt.h>
#include <poll.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/signalfd.h>
#include <termios.h>

struct exec {
	bool interactive, tty;
	json_t *env;
	const char *workdir;
	uint64_t timeout_ms;
	const char *result;
	const char *ref;
	char **argv;
	int argc;
	struct sr_sink sink;
	int ctl, sigfd, pty;
	bool raw;
	struct termios saved;
};

static void usage(FILE *f)
{
	fputs("Usage: sandbox-run exec [OPTIONS] ID -- COMMAND [ARG...]\n"
	      "Run COMMAND in the living sandbox ID (its id, a prefix of 4 or more, or its\n"
	      "--name), as its user, in /workspace, with no capabilities and the sandbox's\n"
	      "environment. Exit status: COMMAND's own; 124 timeout; 125 sandbox-run\n"
	      "failed; 126 cannot execute; 127 not found; 128+N killed by signal N.\n"
	      "\n"
	      "  -i, --interactive    pass this standard input (else /dev/null)\n"
	      "  -t, --tty            a pseudo-terminal of the sandbox's own, with job control\n"
	      "      --env KEY=VALUE  set a variable; repeatable\n"
	      "      --workdir DIR    working directory (relative: to /workspace)\n"
	      "      --timeout DURATION  kill COMMAND (and its process group) after it: 124\n"
	      "      --result FILE    write the result record (JSON) to FILE\n"
	      "  -q, --quiet          only errors on stderr\n"
	      "  -h, --help           print this help and exit\n",
	      f);
}

static int parse(int argc, char **argv, struct exec *x, struct sr_error *err)
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

	optind = 0;
	opterr = 0;
	while ((o = getopt_long(argc, argv, "+:itqvh", opts, NULL)) != -1) {
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
			if (!strchr(optarg, '='))
				return sr_error_msg(err, -EINVAL,
						    "--env: expected KEY=VALUE, got '%s'", optarg);
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
		case ':':
			return sr_error_msg(err, -EINVAL, "option %s needs a value (see --help)",
					    argv[optind - 1]);
		default:
			return sr_error_msg(err, -EINVAL, "unknown option '%s' (see --help)",
					    argv[optind - 1]);
		}
	}
	if (optind >= argc)
		return sr_error_msg(err, -EINVAL,
				    "missing ID (usage: sandbox-run exec ID -- COMMAND)");
	x->ref = argv[optind++];
	if (optind < argc && strcmp(argv[optind], "--") == 0)
		optind++;
	if (optind >= argc)
		return sr_error_msg(err, -EINVAL,
				    "missing COMMAND (usage: sandbox-run exec ID -- COMMAND)");
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
	req = json_pack("{sssosOsbsI}", "op", "exec", "argv", argv, "env", x->env, "tty", x->tty,
			"timeout_ms", (json_int_t)x->timeout_ms);
	if (req && x->workdir)
		json_object_set_new(req, "cwd", sr_json_string(x->workdir));
	if (req && x->tty) {
		struct winsize ws;
		const char *term = getenv("TERM");

		if (ioctl(STDIN_FILENO, TIOCGWINSZ, &ws) == 0 ||
		    ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0) {
			json_object_set_new(req, "rows", json_integer(ws.ws_row));
			json_object_set_new(req, "cols", json_integer(ws.ws_col));
		}
		/* The terminal it will talk to is ours: its type too, unless given. */
		if (term && *term) {
			char kv[256];

			snprintf(kv, sizeof(kv), "TERM=%s", term);
			json_array_insert_new(x->env, 0, json_string(kv));
		}
	}
	return req;
}

/* Our terminal raw while the sandbox's pty has it: its line discipline does the work. */
static void raw_mode(struct exec *x)
{
	struct termios t;

	if (!isatty(STDIN_FILENO) || tcgetattr(STDIN_FILENO, &x->saved) < 0)
		return;
	t = x->saved;
	cfmakeraw(&t);
	if (tcsetattr(STDIN_FILENO, TCSADRAIN, &t) == 0)
		x->raw = true;
}

static void restore_mode(struct exec *x)
{
	if (x->raw)
		tcsetattr(STDIN_FILENO, TCSADRAIN, &x->saved);
	x->raw = false;
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

		if (si.ssi_signo == SIGWINCH && x->pty >= 0) {
			struct winsize ws;

			if (ioctl(STDIN_FILENO, TIOCGWINSZ, &ws) == 0)
				ioctl(x->pty, TIOCSWINSZ, &ws);
			continue;
		}
		m = json_pack("{sssi}", "op", "signal", "sig", (int)si.ssi_signo);
		if (m) {
			(void)sr_ctl_send(x->ctl, m, NULL, 0);
			json_decref(m);
		}
	}
}

/* Copies what is there from in to out; false at EOF or an error (of either). */
static bool relay(int in, int out)
{
	char buf[16384];
	ssize_t n = read(in, buf, sizeof(buf));

	if (n < 0 && (errno == EAGAIN || errno == EINTR))
		return true;
	return n > 0 && sr_write_all(out, buf, (size_t)n) == 0;
}

/* The pty's last output, after the process ended: what is there, not what a daemon may add. */
static void drain_pty(struct exec *x)
{
	for (int i = 0; i < 100; i++) {
		struct pollfd p = {.fd = x->pty, .events = POLLIN};

		if (poll(&p, 1, 20) <= 0 || !relay(x->pty, STDOUT_FILENO))
			return;
	}
}

/* Until the exit event: the record's JSON (malloc'd) and the exit status. */
static int wait_exit(struct exec *x, char **ret_record, struct sr_error *err)
{
	bool stdin_open = x->tty && x->interactive, pty_open = x->pty >= 0;

	for (;;) {
		struct pollfd fds[4] = {
		    {.fd = x->ctl, .events = POLLIN},
		    {.fd = x->sigfd, .events = POLLIN},
		    {.fd = pty_open ? x->pty : -1, .events = POLLIN},
		    {.fd = stdin_open ? STDIN_FILENO : -1, .events = POLLIN},
		};
		json_t *ev = NULL;
		int passed[SR_CTL_FDS_MAX];
		size_t n_fds;
		int r;

		if (poll(fds, 4, -1) < 0) {
			if (errno == EINTR)
				continue;
			return sr_error_errno(err, sr_negerrno(), "exec: poll");
		}
		if (fds[1].revents)
			on_signal(x);
		/* EIO: every holder of the slave has closed it; the exit comes next. */
		if (fds[2].revents && !relay(x->pty, STDOUT_FILENO))
			pty_open = false;
		if (fds[3].revents && !relay(STDIN_FILENO, x->pty))
			stdin_open = false;
		if (!fds[0].revents)
			continue;
		r = sr_ctl_recv(x->ctl, &ev, passed, &n_fds);
		for (size_t i = 0; r > 0 && i < n_fds; i++)
			close(passed[i]);
		if (r <= 0)
			return sr_error_msg(err, -ECONNRESET,
					    "exec: the sandbox's keeper hung up (the sandbox is "
					    "gone)");
		if (sr_streq(json_string_value(json_object_get(ev, "event")), "exit")) {
			json_t *code = json_object_get(ev, "exit_code");
			json_t *record = json_object_get(ev, "record");
			int status = json_is_integer(code) ? (int)json_integer_value(code) : 125;

			if (json_is_object(record))
				sr_json_dump_line(record, ret_record);
			json_decref(ev);
			return status;
		}
		json_decref(ev);
	}
}

static int run_exec(struct exec *x, const struct sr_result_target *target, struct sr_error *err)
{
	_cleanup_free_ char *statedir = NULL, *record = NULL;
	_cleanup_close_ int null = -1;
	struct sr_entry e = {0};
	json_t *req = NULL, *reply = NULL;
	int fds[3], passed[SR_CTL_FDS_MAX];
	size_t n_fds = 0;
	int r, status;

	if ((r = sr_state_dir(&statedir, err)) < 0 ||
	    (r = sr_state_find(statedir, x->ref, &e, err)) < 0 ||
	    (r = sr_ctl_connect(e.dir, &x->ctl, err)) < 0) {
		sr_entry_free(&e);
		return r;
	}
	sr_entry_free(&e);
	null = open("/dev/null", O_RDONLY | O_CLOEXEC);
	fds[0] = x->interactive ? STDIN_FILENO : null;
	fds[1] = STDOUT_FILENO;
	fds[2] = STDERR_FILENO;
	req = request(x);
	if (!req)
		return sr_error_errno(err, -ENOMEM, "exec");
	if (setup_signals(x) < 0) {
		json_decref(req);
		return sr_error_errno(err, sr_negerrno(), "exec: signals");
	}
	/* Raw before the process starts: nothing typed meanwhile is echoed twice. */
	if (x->tty)
		raw_mode(x);
	r = sr_ctl_send(x->ctl, req, x->tty ? NULL : fds, x->tty ? 0 : 3);
	json_decref(req);
	if (r == -EMSGSIZE)
		return sr_error_msg(err, r, "exec: the command and its environment are too long");
	if (r < 0)
		return sr_error_errno(err, r, "exec: talk to the sandbox's keeper");
	r = sr_ctl_recv(x->ctl, &reply, passed, &n_fds);
	if (r <= 0) {
		restore_mode(x);
		return sr_error_msg(err, -ECONNRESET, "exec: the sandbox's keeper hung up");
	}
	if (sr_ctl_reply_error(reply, err) < 0) {
		restore_mode(x);
		for (size_t i = 0; i < n_fds; i++)
			close(passed[i]);
		json_decref(reply);
		return -EIO;
	}
	json_decref(reply);
	if (x->tty) {
		if (n_fds != 1) {
			restore_mode(x);
			return sr_error_msg(err, -EPROTO, "exec: no pty came back");
		}
		x->pty = passed[0];
		fcntl(x->pty, F_SETFL, O_NONBLOCK);
	}
	status = wait_exit(x, &record, err);
	if (x->pty >= 0) {
		drain_pty(x);
		close(x->pty);
	}
	restore_mode(x);
	if (status < 0)
		return status;
	if (x->result && target) {
		struct sr_error werr = {0};

		if (!record)
			sr_error_msg(&werr, -EPROTO, "result %s: no record came back", x->result);
		if (!record || sr_result_target_write_text(target, record, &werr) < 0) {
			sr_sink_log(&x->sink, SR_LOG_ERROR, "%s", werr.msg);
			if (status == 0)
				status = SR_EXIT_FAILURE;
		}
	}
	return status;
}

int sr_verb_exec(const struct sr_verb_args *a)
{
	struct exec x = {.ctl = -1, .sigfd = -1, .pty = -1, .env = json_array()};
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
	/* Settled before the command runs, as for a run (result.h). */
	if (x.result && sr_result_target_open(x.result, &target, &err) < 0) {
		sr_sink_log(&x.sink, SR_LOG_ERROR, "%s", err.msg);
		json_decref(x.env);
		return SR_EXIT_FAILURE;
	}
	status = run_exec(&x, &target, &err);
	if (status < 0) {
		sr_sink_log(&x.sink, SR_LOG_ERROR, "%s", err.msg);
		status = err.status ? err.status : SR_EXIT_FAILURE;
	}
	sr_result_target_close(&target);
	sr_closep(&x.ctl);
	sr_closep(&x.sigfd);
	json_decref(x.env);
	return status;
}
