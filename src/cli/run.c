/* SPDX-License-Identifier: MIT */
/*
 * `sandbox-run [run] AGENT | -- COMMAND`: one fresh sandbox, one process,
 * gone when it ends. create + spawn(the agent, ending the sandbox) + wait
 * + free, with the caller's stdio, signals passed on, the timeout, and the
 * result record.
 */
#include "artifacts.h"
#include "config.h"
#include "options.h"
#include "proc.h"
#include "protocol.h"
#include "result.h"
#include "sandbox.h"
#include "stdio-relay.h"
#include "tty.h"
#include "units.h"
#include "util.h"
#include "verbs.h"

#include <poll.h>
#include <signal.h>
#include <sys/signalfd.h>
#include <sys/timerfd.h>
#include <sys/wait.h>

/*
 * Signals passed on to the agent (through PID 1, to its process group):
 * SIGWINCH, job control (PID 1 has a process group of its own, so a
 * terminal's ^Z, fg and bg reach only us), and every signal that would
 * otherwise end sandbox-run and leave the sandbox's cgroup and record
 * undone. Not those the kernel raises for a fault of our own (SIGSEGV,
 * SIGBUS, SIGILL, SIGFPE, SIGTRAP, SIGSYS), SIGABRT, nor SIGPIPE, which
 * main() blocks: only our own writes raise it. The real-time signals are
 * added in setup_signals().
 */
static const int forwarded[] = {
    SIGHUP,    SIGINT,	SIGQUIT, SIGUSR1, SIGUSR2,  SIGALRM, SIGTERM, SIGXCPU, SIGXFSZ,
    SIGVTALRM, SIGPROF, SIGIO,	 SIGPWR,  SIGWINCH, SIGTSTP, SIGTTIN, SIGTTOU, SIGCONT,
#ifdef SIGSTKFLT
    SIGSTKFLT,
#endif
};

/* A timeout's grace: PID 1 ends the sandbox itself, or is killed with it. */
#define END_GRACE_MS 1000

struct run {
	const struct sr_config *config;
	struct sr_sink sink;
	struct sr_sandbox *sb;
	int sigfd;   /* SIGCHLD and the forwarded signals */
	int timerfd; /* the timeout, -1 for none */
	pid_t agent; /* in the sandbox; 0 before it runs */
	int64_t start_ns;
	int64_t t0_ns;	  /* CLOCK_REALTIME_COARSE at the start: the changes' base (changes.h) */
	int64_t ended_ns; /* when its processes were all gone (before the artifacts), or 0 */
	bool artifacts;	  /* exports or changes to take out before the end (artifacts.h) */
	struct sr_artifacts *collect; /* while they are taken out */
	int artifacts_failed;
	struct sr_error artifacts_err;
	/* what happened */
	bool timed_out, exit_seen, oom_elsewhere;
	struct sr_exit exit; /* the agent's, once exit_seen */
	sigset_t saved_mask; /* before setup_signals() */
	bool mask_saved;
	struct sr_stdio stdio;	 /* the caller's, as the agent gets it (stdio-relay.h) */
	struct sr_tty_state tty; /* the caller's terminal, before the run */
};

static int setup_signals(struct run *run, struct sr_error *err)
{
	sigset_t set;

	sigemptyset(&set);
	sigaddset(&set, SIGCHLD);
	for (size_t i = 0; i < SR_ARRAY_SIZE(forwarded); i++)
		sigaddset(&set, forwarded[i]);
	for (int sig = SIGRTMIN; sig <= SIGRTMAX; sig++)
		sigaddset(&set, sig);
	/* Blocked before the sandbox's cgroup exists: none of them can end us and leave it. */
	if (sigprocmask(SIG_BLOCK, &set, &run->saved_mask) < 0)
		return sr_error_errno(err, sr_negerrno(), "block signals");
	run->mask_saved = true;
	run->sigfd = signalfd(-1, &set, SFD_CLOEXEC | SFD_NONBLOCK);
	if (run->sigfd < 0)
		return sr_error_errno(err, sr_negerrno(), "signalfd");
	return 0;
}

/* The timer of the rest of the timeout, from the start of the run. */
static int start_timer(struct run *run, struct sr_error *err)
{
	int64_t left_ns;
	struct itimerspec its = {0};

	run->timerfd = -1;
	if (run->config->timeout_ms == 0)
		return 0;
	left_ns = run->start_ns + (int64_t)run->config->timeout_ms * 1000000 - sr_monotonic_ns();
	if (left_ns <= 0)
		left_ns = 1;
	its.it_value.tv_sec = (time_t)(left_ns / 1000000000);
	its.it_value.tv_nsec = (long)(left_ns % 1000000000);
	run->timerfd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
	if (run->timerfd < 0 || timerfd_settime(run->timerfd, 0, &its, NULL) < 0)
		return sr_error_errno(err, sr_negerrno(), "timer");
	return 0;
}

static void on_signal(struct run *run)
{
	struct signalfd_siginfo si;

	while (read(run->sigfd, &si, sizeof(si)) == (ssize_t)sizeof(si)) {
		int sig = (int)si.ssi_signo;

		/* Our children are the sandbox's PID 1 and the helper: each has a pidfd. */
		if (sig == SIGCHLD)
			continue;
		/* A pty takes the terminal's size: the kernel tells its foreground group. */
		if (sig == SIGWINCH && sr_stdio_winch(&run->stdio))
			continue;
		if (run->agent > 0 && !sr_sandbox_ended(run->sb))
			sr_sandbox_signal(run->sb, run->agent, sig);
		if (sig == SIGTSTP || sig == SIGTTIN || sig == SIGTTOU)
			sr_stdio_stop_as(&run->stdio, sig);
	}
}

static void on_timeout(struct run *run)
{
	uint64_t expirations;

	(void)!read(run->timerfd, &expirations, sizeof(expirations));
	sr_closep(&run->timerfd);
	run->timed_out = true;
	/* Its files stay for the artifacts, its processes go: the timeout holds all the same. */
	if (run->artifacts)
		sr_sandbox_halt(run->sb, END_GRACE_MS);
	else
		sr_sandbox_end(run->sb, END_GRACE_MS);
}

static void on_ended(void *ctx, struct sr_sandbox *sb, const struct sr_exit *ends)
{
	struct run *run = ctx;

	(void)sb;
	if (ends) {
		run->exit = *ends;
		run->exit_seen = true;
	}
}

static void on_worked(void *ctx, struct sr_sandbox *sb, uint32_t id, const struct sr_error *err)
{
	struct run *run = ctx;

	(void)sb;
	sr_artifacts_worked(run->collect, id, err);
}

static const struct sr_sandbox_ops run_ops = {.ended = on_ended, .worked = on_worked};

/* Until the sandbox ends, or with until_held, until its files are all that is left of it. */
static void wait_sandbox(struct run *run, bool until_held)
{
	while (!sr_sandbox_ended(run->sb) && !(until_held && sr_sandbox_held(run->sb))) {
		struct pollfd fds[2 + SR_SANDBOX_POLL_FDS + SR_STDIO_POLL_FDS];
		int sbfds[SR_SANDBOX_POLL_FDS];
		size_t n = 2 + SR_SANDBOX_POLL_FDS;

		sr_sandbox_poll_fds(run->sb, sbfds);
		fds[0] = (struct pollfd){.fd = run->sigfd, .events = POLLIN};
		fds[1] = (struct pollfd){.fd = run->timerfd, .events = POLLIN};
		for (size_t i = 0; i < SR_SANDBOX_POLL_FDS; i++)
			fds[2 + i] = (struct pollfd){.fd = sbfds[i], .events = POLLIN};
		n += sr_stdio_poll_fds(&run->stdio, fds + n);
		if (poll(fds, n, -1) < 0) {
			if (errno == EINTR)
				continue;
			/* Cannot wait any more: end the sandbox rather than leave it. */
			sr_sandbox_kill(run->sb);
			sr_sandbox_free(steal_pointer(&run->sb));
			return;
		}
		if (fds[1].revents & POLLIN)
			on_timeout(run);
		if (fds[0].revents)
			on_signal(run);
		sr_stdio_dispatch(&run->stdio, fds + 2 + SR_SANDBOX_POLL_FDS,
				  n - 2 - SR_SANDBOX_POLL_FDS);
		sr_sandbox_dispatch(run->sb);
	}
}

/*
 * Held: the agent exited, failed, timed out or was OOM-killed, and
 * nothing runs any more; its files go out now, within their own time
 * limit (artifacts.h). The caller's signals wait until then.
 */
static void collect_artifacts(struct run *run)
{
	int k = sr_artifacts_start(run->sb, run->config, run->t0_ns, &run->sink, &run->collect,
				   &run->artifacts_err);

	if (k < 0) {
		sr_sink_log(&run->sink, SR_LOG_ERROR, "%s", run->artifacts_err.msg);
		run->artifacts_failed = 1;
		return;
	}
	/* Bounded: a worker or taker past the time limit is stopped, a sandbox gone answers ESRCH.
	 */
	while (!sr_artifacts_done(run->collect)) {
		struct pollfd fds[SR_SANDBOX_POLL_FDS + SR_ARTIFACTS_POLL_FDS];
		int raw[SR_SANDBOX_POLL_FDS + SR_ARTIFACTS_POLL_FDS];

		sr_sandbox_poll_fds(run->sb, raw);
		sr_artifacts_poll_fds(run->collect, raw + SR_SANDBOX_POLL_FDS);
		for (size_t i = 0; i < SR_ARRAY_SIZE(fds); i++)
			fds[i] = (struct pollfd){.fd = raw[i], .events = POLLIN};
		if (poll(fds, SR_ARRAY_SIZE(fds), -1) < 0 && errno != EINTR)
			break;
		sr_sandbox_dispatch(run->sb);
		sr_artifacts_dispatch(run->collect);
	}
	run->artifacts_failed = sr_artifacts_failed(run->collect, &run->artifacts_err);
	if (run->artifacts_failed < 0) {
		sr_error_errno(&run->artifacts_err, sr_negerrno(), "artifacts: wait");
		sr_sink_log(&run->sink, SR_LOG_ERROR, "%s", run->artifacts_err.msg);
		run->artifacts_failed = 1;
	}
	sr_artifacts_free(steal_pointer(&run->collect));
}

static void fill_result(struct run *run, struct sr_result *r, struct sr_error *err)
{
	int init_status = run->sb ? sr_sandbox_init_status(run->sb) : -1;
	const struct sr_error *child_err = run->sb ? sr_sandbox_error(run->sb) : NULL;
	bool oom = run->sb && sr_sandbox_oom_kills(run->sb) > 0;

	r->wall_ms =
	    (double)((run->ended_ns ? run->ended_ns : sr_monotonic_ns()) - run->start_ns) / 1e6;
	if (run->sb)
		sr_sandbox_usage(run->sb, false, r);
	if (run->timed_out && !run->exit_seen) {
		r->status = SR_STATUS_TIMEOUT;
		r->exit_code = 124;
	} else if (run->exit_seen && WIFEXITED(run->exit.status)) {
		r->status = SR_STATUS_EXITED;
		r->exit_code = WEXITSTATUS(run->exit.status);
	} else if (run->exit_seen && WIFSIGNALED(run->exit.status)) {
		r->status = SR_STATUS_SIGNALED;
		r->signal = WTERMSIG(run->exit.status);
		r->exit_code = 128 + r->signal;
	} else if (child_err && child_err->code) {
		*err = *child_err;
		r->status = SR_STATUS_ERROR;
		r->exit_code = err->status ? err->status : 125;
		snprintf(r->error, sizeof(r->error), "%s", err->msg);
	} else if (init_status >= 0 && WIFSIGNALED(init_status)) {
		/* PID 1 itself was killed from outside: the sandbox ended that way. */
		r->status = SR_STATUS_SIGNALED;
		r->signal = WTERMSIG(init_status);
		r->exit_code = 128 + r->signal;
	} else {
		sr_error_msg(err, -EPROTO, "the sandbox ended before its agent started");
		r->status = SR_STATUS_ERROR;
		r->exit_code = 125;
		snprintf(r->error, sizeof(r->error), "%s", err->msg);
	}
	/* The kernel's OOM killer sends SIGKILL; the cgroup counted the kill. */
	if (oom && r->status == SR_STATUS_SIGNALED && r->signal == SIGKILL)
		r->status = SR_STATUS_OOM;
	/* Another process's: the agent's status stands, and log_end() says so. */
	run->oom_elsewhere = oom && r->status != SR_STATUS_OOM;
}

/* How it ended: a limit that ended it is said (not with -q); the rest with -v. */
static void log_end(const struct run *run, const struct sr_result *r)
{
	const struct sr_config *c = run->config;
	const struct sr_sink *sink = &run->sink;
	char disk[SR_UNITS_BUF_MAX] = "unknown", peak[SR_UNITS_BUF_MAX] = "unknown";
	char limit[SR_UNITS_BUF_MAX];

	if (r->status == SR_STATUS_TIMEOUT) {
		sr_format_duration(c->timeout_ms, limit, sizeof(limit));
		sr_warn(sink, "timed out after %s: the whole sandbox was killed", limit);
	} else if (r->status == SR_STATUS_OOM || run->oom_elsewhere) {
		sr_format_size(c->memory_bytes, limit, sizeof(limit));
		sr_warn(sink, "out of memory: %s was killed at the %s memory limit",
			run->oom_elsewhere ? "a process of the sandbox other than the agent"
					   : "the agent",
			limit);
	}
	if (!sr_sink_enabled(sink, SR_LOG_INFO))
		return;
	if (r->disk_used_bytes >= 0)
		snprintf(disk, sizeof(disk), "%lld bytes", (long long)r->disk_used_bytes);
	if (r->peak_memory_bytes >= 0)
		snprintf(peak, sizeof(peak), "%lld bytes", (long long)r->peak_memory_bytes);
	sr_info(sink,
		"sandbox %s: %s, exit status %d, %.1f ms (user %.1f ms, sys %.1f ms), "
		"disk used %s, peak memory %s",
		r->sandbox_id, sr_status_to_string(r->status), r->exit_code, r->wall_ms, r->user_ms,
		r->sys_ms, disk, peak);
}

/* A set-up or spawn failure: the record says so, and how far it got. */
static void fail_result(struct run *run, struct sr_result *r, const struct sr_error *err,
			bool timed_out)
{
	r->wall_ms = (double)(sr_monotonic_ns() - run->start_ns) / 1e6;
	if (timed_out) {
		r->status = SR_STATUS_TIMEOUT;
		r->exit_code = 124;
		return;
	}
	r->status = SR_STATUS_ERROR;
	r->exit_code = err->status ? err->status : 125;
	snprintf(r->error, sizeof(r->error), "%s", err->msg);
}

/*
 * The run itself: 0 when the agent ran (r says how it ended), negative on
 * a set-up failure (err; r says so too).
 */
static int run_sandbox(struct run *run, struct sr_result *r, struct sr_error *err)
{
	const struct sr_config *c = run->config;
	struct sr_sandbox_opts o = {.sink = &run->sink, .ops = &run_ops, .ctx = run};
	static const int caller[3] = {STDIN_FILENO, STDOUT_FILENO, STDERR_FILENO};
	struct sr_spawn agent = {.flags = SR_SPAWN_AGENT | SR_SPAWN_ENDS_SANDBOX};
	char text[256];
	int e, pty = -1;

	if (c->timeout_ms)
		o.deadline_ns = run->start_ns + (int64_t)c->timeout_ms * 1000000;
	/* Signals first: one that came while create makes the cgroup would leave it behind. */
	if ((e = setup_signals(run, err)) < 0 ||
	    (e = sr_sandbox_create(c, &o, r, &run->sb, err)) < 0) {
		if (e == -ETIME) {
			fail_result(run, r, err, true);
			log_end(run, r);
			return 0;
		}
		fail_result(run, r, err, false);
		return e;
	}
	sr_proc_raise_fd_limit();
	/* The caller's terminals and files are not the agent's to hold (stdio-relay.h). */
	if ((e = sr_stdio_prepare(&run->stdio, caller, SR_STDIO_INPUT | SR_STDIO_KEEP_SIGNALS,
				  err)) < 0) {
		fail_result(run, r, err, false);
		return e;
	}
	agent.flags |= run->stdio.pty_mask;
	if (run->artifacts)
		agent.flags |= SR_SPAWN_HOLD;
	memcpy(agent.stdio, run->stdio.pass, sizeof(agent.stdio));
	agent.rows = run->stdio.rows;
	agent.cols = run->stdio.cols;
	e = sr_sandbox_spawn(run->sb, &agent, &run->agent, &pty, err);
	sr_stdio_started(&run->stdio, pty);
	if (e < 0 || (e = start_timer(run, err)) < 0) {
		fail_result(run, r, err, false);
		return e;
	}
	wait_sandbox(run, run->artifacts);
	/* Held: its files go out, and then the sandbox ends. */
	if (sr_sandbox_held(run->sb)) {
		run->ended_ns = sr_monotonic_ns();
		collect_artifacts(run);
		sr_sandbox_end(run->sb, END_GRACE_MS);
		wait_sandbox(run, false);
	}
	/* Everything the agent wrote is out before the record is written (it may be /dev/stdout).
	 */
	/* A slow reader is waited for, as the agent would have waited, until the deadline. */
	sr_stdio_finish(&run->stdio, 100, run->timerfd, run->timed_out ? -1 : run->sigfd);
	fill_result(run, r, err);
	log_end(run, r);
	/* Said now: a signal that cut the relay short ends us once run_cleanup() unblocks it. */
	if (sr_stdio_dropped_text(&run->stdio, "agent", text, sizeof(text)))
		sr_warn(&run->sink, "%s", text);
	r->output_dropped_bytes = sr_stdio_dropped(&run->stdio);
	return r->status == SR_STATUS_ERROR ? (err->code ? err->code : -EPROTO) : 0;
}

static void run_cleanup(struct run *run)
{
	sr_stdio_finish(&run->stdio, 0, -1, -1);
	/* After PID 1 is reaped: its namespace's tasks are gone, the cgroup can go. */
	sr_sandbox_free(steal_pointer(&run->sb));
	sr_tty_restore(&run->tty);
	sr_closep(&run->sigfd);
	sr_closep(&run->timerfd);
	/*
	 * The sandbox is gone: signals are the caller's again, so that a
	 * record written to a slow pipe can still be interrupted by SIGTERM
	 * or ^C rather than holding sandbox-run with them blocked.
	 */
	if (run->mask_saved)
		sigprocmask(SIG_SETMASK, &run->saved_mask, NULL);
}

/* A record asked for is written even for bad input: it says why. */
static int bad_input(struct sr_config *c, struct sr_result *r, struct sr_error *err,
		     const struct sr_sink *sink)
{
	int status = err->status ? err->status : SR_EXIT_FAILURE;

	sr_sink_log(sink, SR_LOG_ERROR, "%s", err->msg);
	if (c->result_path) {
		r->exit_code = status;
		snprintf(r->error, sizeof(r->error), "%s", err->msg);
		if (sr_result_write(r, c, c->result_path, err) < 0)
			sr_sink_log(sink, SR_LOG_ERROR, "%s", err->msg);
	}
	return status;
}

int sr_cli_bad_input(struct sr_config *c, struct sr_error *err)
{
	struct sr_result r;
	struct sr_sink sink;

	sr_result_init(&r);
	sr_sink_stderr(&sink, SR_LOG_WARNING);
	return bad_input(c, &r, err, &sink);
}

int sr_cli_run(struct sr_config *c)
{
	struct sr_error err = {0};
	struct sr_result r;
	struct sr_result_target target = SR_RESULT_TARGET_INIT;
	struct run run = {.config = c,
			  .sigfd = -1,
			  .timerfd = -1,
			  .stdio = {.master = -1,
				    .term_in = -1,
				    .term_out = -1,
				    .files = {{.pipe = -1}, {.pipe = -1}, {.pipe = -1}}}};
	int status;

	sr_result_init(&r);
	sr_sink_stderr(&run.sink, c->log_level);
	/*
	 * An export or changes file that cannot be written where it goes,
	 * found when the sandbox ends, is the agent's work lost: said now.
	 */
	if (sr_artifacts_check(c, &err) < 0)
		return sr_cli_bad_input(c, &err);
	/*
	 * Before the agent runs, which may be able to write the record's
	 * directory (result.h). A record that could not be written is no
	 * reason to run: said now, not after the run.
	 */
	if (c->result_path && sr_result_target_open(c->result_path, &target, &err) < 0) {
		sr_sink_log(&run.sink, SR_LOG_ERROR, "%s", err.msg);
		return SR_EXIT_FAILURE;
	}
	run.start_ns = sr_monotonic_ns();
	{
		struct timespec t;

		clock_gettime(CLOCK_REALTIME_COARSE, &t);
		run.t0_ns = (int64_t)t.tv_sec * 1000000000 + t.tv_nsec;
	}
	run.artifacts = sr_artifacts_wanted(c);
	sr_tty_save(&run.tty);
	if (run_sandbox(&run, &r, &err) < 0)
		sr_sink_log(&run.sink, SR_LOG_ERROR, "%s", err.msg);
	run_cleanup(&run);
	/* An artifact that could not be taken out fails a run that succeeded, as a record does. */
	if (run.artifacts_failed && r.exit_code == 0) {
		r.exit_code = SR_EXIT_FAILURE;
		snprintf(r.error, sizeof(r.error), "%s", run.artifacts_err.msg);
	}
	/*
	 * So does the agent's output, relayed to a file, that could not be
	 * written (a full disk), or was not all delivered (said already).
	 */
	{
		int fd, e = sr_stdio_write_error(&run.stdio, &fd);
		struct sr_error werr = {0};

		if (e) {
			sr_error_errno(&werr, -e, "the agent's standard %s: write",
				       fd == 1 ? "output" : "error");
			sr_sink_log(&run.sink, SR_LOG_ERROR, "%s", werr.msg);
		} else
			sr_stdio_dropped_text(&run.stdio, "agent", werr.msg, sizeof(werr.msg));
		if (werr.msg[0] && r.exit_code == 0) {
			r.exit_code = SR_EXIT_FAILURE;
			snprintf(r.error, sizeof(r.error), "%s", werr.msg);
		}
	}
	status = r.exit_code;
	/* The agent's own status stands; only a clean run turns into a failure. */
	if (c->result_path) {
		struct sr_error werr = {0};

		if (sr_result_target_write(&target, &r, c, &werr) < 0) {
			sr_sink_log(&run.sink, SR_LOG_ERROR, "%s", werr.msg);
			if (status == 0)
				status = SR_EXIT_FAILURE;
		}
		sr_result_target_close(&target);
	}
	return status;
}

int sr_verb_run(const struct sr_verb_args *a)
{
	struct sr_config c;
	struct sr_error err = {0};
	struct sr_result r;
	struct sr_sink sink;
	enum sr_action action = SR_ACTION_RUN;
	sigset_t pipe;
	int status;

	sr_config_init(&c);
	sr_result_init(&r);
	sr_sink_stderr(&sink, SR_LOG_WARNING);
	if (sr_options_parse(a->argc, a->argv, &c, &action, &err) < 0) {
		status = bad_input(&c, &r, &err, &sink);
		sr_config_free(&c);
		return status;
	}
	/* Printing only: `sandbox-run --help | head` ends as any filter's writer does. */
	sigemptyset(&pipe);
	sigaddset(&pipe, SIGPIPE);
	if (action != SR_ACTION_RUN)
		sigprocmask(SIG_UNBLOCK, &pipe, NULL);
	switch (action) {
	case SR_ACTION_HELP:
		sr_options_usage(stdout);
		sr_config_free(&c);
		return sr_cli_stdout_status("--help");
	case SR_ACTION_VERSION:
		printf("%s %s\n", PACKAGE_NAME, PACKAGE_VERSION);
		sr_config_free(&c);
		return sr_cli_stdout_status("--version");
	case SR_ACTION_PRINT_CONFIG:
		status = sr_cli_print_config(&c);
		sr_config_free(&c);
		return status;
	default:
		break;
	}
	status = sr_cli_run(&c);
	sr_config_free(&c);
	return status;
}

int sr_cli_print_config(const struct sr_config *c)
{
	struct sr_sink sink;
	int r = sr_config_print(c, stdout);

	sr_sink_stderr(&sink, SR_LOG_WARNING);
	if (r == -ENOMEM)
		sr_sink_log(&sink, SR_LOG_ERROR, "--print-config: %s", strerror(ENOMEM));
	else if (r < 0)
		sr_sink_log(&sink, SR_LOG_ERROR, "--print-config: write standard output: %s",
			    strerror(-r));
	return r < 0 ? SR_EXIT_FAILURE : 0;
}
