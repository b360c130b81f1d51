/* SPDX-License-Identifier: MIT */
/*
 * A deployment's install, run (install.h): the plan's steps in a sandbox
 * of the deployment's limits, their output to the install log, the
 * package caches in and out, and the installed tree copied out to the
 * host. What the steps are is install-plan.c's.
 */
#include "install.h"
#include "archive.h"
#include "deploy.h"
#include "protocol.h"
#include "sandbox.h"
#include "state.h"
#include "util.h"

#include <poll.h>
#include <sys/epoll.h>
#include <sys/file.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/timerfd.h>
#include <sys/wait.h>

/* node_modules holds tens of thousands of files; the disk limit bounds the bytes. */
#define INSTALL_MAX_ENTRIES (10 * 1000 * 1000)
#define LINE_MAX_SHOWN	    4096
#define TICK_MS		    100
/*
 * The install log is on the host's disk, which the sandbox's disk limit
 * does not bound, and a step may print at pipe speed for its whole
 * timeout: its first LOG_HEAD_MAX bytes are kept, then only the last
 * LOG_TAIL_MAX (what a failure shows), said to be so.
 */
#define LOG_HEAD_MAX (16 * 1024 * 1024)
#define LOG_TAIL_MAX (64 * 1024)

/* The steps' environment, over the sandbox's: quiet, non-interactive, cached. */
static const char *const step_env[] = {
    "npm_config_cache=/home/user/.cache/npm",
    "npm_config_prefer_offline=true",
    "npm_config_update_notifier=false",
    "npm_config_fund=false",
    "npm_config_audit=false",
    "npm_config_progress=false",
    "PIP_DISABLE_PIP_VERSION_CHECK=1",
    "PIP_NO_INPUT=1",
    "PIP_PROGRESS_BAR=off",
    "PYTHONDONTWRITEBYTECODE=1",
};

/* One install: the sandbox, what it reported, the steps' output. */
struct inst {
	struct sr_config *c;
	const struct sr_install_opts *o;
	struct sr_sandbox *sb;
	int out; /* the steps' stdout and stderr, -1 once closed */
	char line[LINE_MAX_SHOWN + 1];
	size_t linelen;
	bool line_long; /* the line being read passed LINE_MAX_SHOWN */
	int64_t deadline_ns;
	int stop;  /* readable on a cancel or past the deadline (copy_stop()); -1: none */
	int timer; /* the deadline's, held while stop watches it */
	bool exited, worked;
	struct sr_exit exit;
	struct sr_error work_err;
	uint64_t logged;	  /* bytes written to the log */
	uint64_t unlogged;	  /* past LOG_HEAD_MAX, not written */
	char tail[LOG_TAIL_MAX];  /* the last of those, a ring */
	size_t tail_at, tail_len; /* where the next byte goes; how many it holds */
};

static void on_exited(void *ctx, struct sr_sandbox *sb, const struct sr_exit *e)
{
	struct inst *in = ctx;

	(void)sb;
	in->exit = *e;
	in->exited = true;
}

static void on_worked(void *ctx, struct sr_sandbox *sb, uint32_t id, const struct sr_error *err)
{
	struct inst *in = ctx;

	(void)sb;
	(void)id;
	in->work_err = *err;
	in->worked = true;
}

static const struct sr_sandbox_ops inst_ops = {.exited = on_exited, .worked = on_worked};

static void emit_line(struct inst *in)
{
	in->line[in->linelen] = '\0';
	if (in->linelen && in->line[in->linelen - 1] == '\r')
		in->line[--in->linelen] = '\0';
	if (in->o->ops && in->o->ops->line)
		in->o->ops->line(in->o->ctx, in->line);
	in->linelen = 0;
	in->line_long = false;
}

/* Output to the log: whole up to LOG_HEAD_MAX, then into the tail's ring. */
static void log_output(struct inst *in, const char *buf, size_t n)
{
	size_t head = in->logged < LOG_HEAD_MAX ? LOG_HEAD_MAX - (size_t)in->logged : 0;

	if (in->o->log_fd < 0)
		return;
	if (head > n)
		head = n;
	if (head && sr_write_all(in->o->log_fd, buf, head) == 0)
		in->logged += head;
	in->unlogged += n - head;
	/* Of the rest, only its last LOG_TAIL_MAX bytes can stay in the ring. */
	if (n - head > LOG_TAIL_MAX)
		head = n - LOG_TAIL_MAX;
	while (head < n) {
		size_t chunk =
		    n - head < LOG_TAIL_MAX - in->tail_at ? n - head : LOG_TAIL_MAX - in->tail_at;

		memcpy(in->tail + in->tail_at, buf + head, chunk);
		in->tail_at = (in->tail_at + chunk) % LOG_TAIL_MAX;
		in->tail_len =
		    in->tail_len + chunk < LOG_TAIL_MAX ? in->tail_len + chunk : LOG_TAIL_MAX;
		head += chunk;
	}
}

/* What the ring holds, after a line saying how much was left out: at the end of a step. */
static void log_flush(struct inst *in)
{
	char note[128];
	size_t start = (in->tail_at + LOG_TAIL_MAX - in->tail_len) % LOG_TAIL_MAX;
	size_t first = in->tail_len < LOG_TAIL_MAX - start ? in->tail_len : LOG_TAIL_MAX - start;
	int n;

	if (!in->tail_len || in->o->log_fd < 0)
		return;
	n = snprintf(note, sizeof(note),
		     "\nsandbox-run: %llu bytes of the install's output not logged; its last "
		     "%zu:\n",
		     (unsigned long long)(in->unlogged - in->tail_len), in->tail_len);
	(void)sr_write_all(in->o->log_fd, note, (size_t)n);
	(void)sr_write_all(in->o->log_fd, in->tail + start, first);
	(void)sr_write_all(in->o->log_fd, in->tail, in->tail_len - first);
	in->tail_len = in->tail_at = 0;
	in->unlogged = 0;
}

/* Reads what the steps printed: to the log (bounded), whole lines to the caller. */
static void drain(struct inst *in)
{
	char buf[16384];
	ssize_t n = -1;

	while (in->out >= 0 && (n = read(in->out, buf, sizeof(buf))) != 0) {
		if (n < 0) {
			if (errno == EINTR)
				continue;
			if (errno != EAGAIN) {
				close(in->out);
				in->out = -1;
			}
			return;
		}
		log_output(in, buf, (size_t)n);
		for (ssize_t i = 0; i < n; i++) {
			if (buf[i] == '\n') {
				emit_line(in);
				continue;
			}
			/* A line too long to show is shown cut; the log has it whole. */
			if (in->linelen < LINE_MAX_SHOWN)
				in->line[in->linelen++] = buf[i];
			else
				in->line_long = true;
		}
	}
	if (n == 0) {
		if (in->linelen)
			emit_line(in);
		close(in->out);
		in->out = -1;
	}
}

/* The install's deadline passed: status 124, as a run's timeout. */
static int timed_out(struct sr_error *err)
{
	sr_error_msg(err, -ETIME, "the install did not end within its timeout");
	err->status = 124;
	return -ETIME;
}

/*
 * Waits (dispatching the sandbox's events, reading the steps' output,
 * ticking) until *flag is set. The sandbox ending first, the timeout, a
 * cancel: an error.
 */
static int wait_for(struct inst *in, const bool *flag, struct sr_error *err)
{
	while (!*flag) {
		struct pollfd fds[SR_SANDBOX_POLL_FDS + 2];
		int sbfds[SR_SANDBOX_POLL_FDS];
		int64_t left = in->deadline_ns ? in->deadline_ns - sr_monotonic_ns() : INT64_MAX;
		int timeout = TICK_MS;

		if (sr_sandbox_ended(in->sb)) {
			const struct sr_error *e = sr_sandbox_error(in->sb);

			if (e && e->code)
				*err = *e;
			else
				sr_error_msg(err, -EPROTO,
					     "the install sandbox ended unexpectedly");
			return err->code;
		}
		if (left <= 0)
			return timed_out(err);
		if (left / 1000000 < timeout)
			timeout = (int)(left / 1000000) + 1;
		sr_sandbox_poll_fds(in->sb, sbfds);
		for (size_t i = 0; i < SR_SANDBOX_POLL_FDS; i++)
			fds[i] = (struct pollfd){.fd = sbfds[i], .events = POLLIN};
		fds[SR_SANDBOX_POLL_FDS] = (struct pollfd){.fd = in->out, .events = POLLIN};
		fds[SR_SANDBOX_POLL_FDS + 1] =
		    (struct pollfd){.fd = in->o->cancel_fd, .events = POLLIN};
		if (poll(fds, SR_ARRAY_SIZE(fds), timeout) < 0 && errno != EINTR)
			return sr_error_errno(err, sr_negerrno(), "poll");
		if (fds[SR_SANDBOX_POLL_FDS + 1].revents)
			return sr_error_msg(err, -ECANCELED, "interrupted");
		if (fds[SR_SANDBOX_POLL_FDS].revents)
			drain(in);
		sr_sandbox_dispatch(in->sb);
		if (in->o->ops && in->o->ops->tick)
			in->o->ops->tick(in->o->ctx);
	}
	return 0;
}

static void step_begins(struct inst *in, const char *what)
{
	if (in->o->ops && in->o->ops->step)
		in->o->ops->step(in->o->ctx, what);
}

/* The environment of a step: the sandbox's, then step_env. */
static int step_environment(struct inst *in, struct sr_strv *ret)
{
	char *const *base = sr_sandbox_env(in->sb);
	struct sr_strv v = {0};

	for (size_t i = 0; base && base[i]; i++)
		if (sr_strv_push(&v, base[i]) < 0)
			goto oom;
	for (size_t i = 0; i < SR_ARRAY_SIZE(step_env); i++)
		if (sr_strv_push(&v, step_env[i]) < 0)
			goto oom;
	*ret = v;
	return 0;
oom:
	sr_strv_free(&v);
	return -ENOMEM;
}

static int run_step(struct inst *in, const struct sr_install_step *s, struct sr_error *err)
{
	struct sr_spawn sp = {.argv = s->argv, .cwd = "/workspace"};
	_cleanup_close_ int null = open("/dev/null", O_RDONLY | O_CLOEXEC);
	_cleanup_close_ int wr = -1;
	struct sr_strv env = {0};
	int p[2], pty = -1, r;
	pid_t pid;

	step_begins(in, s->what);
	if (null < 0 || pipe2(p, O_CLOEXEC) < 0)
		return sr_error_errno(err, sr_negerrno(), "install: pipe");
	in->out = p[0];
	wr = p[1];
	(void)fcntl(in->out, F_SETFL, O_NONBLOCK);
	if (step_environment(in, &env) < 0)
		return sr_error_errno(err, -ENOMEM, "install");
	sp.envp = env.items;
	sp.stdio[0] = null;
	sp.stdio[1] = wr;
	sp.stdio[2] = wr;
	in->exited = false;
	r = sr_sandbox_spawn(in->sb, &sp, &pid, &pty, err);
	sr_strv_free(&env);
	/* Only the step holds the write end now: its end (and its children's) is our EOF. */
	sr_closep(&wr);
	wr = -1;
	if (r < 0)
		return sr_error_prefix(err, "install step '%s'", s->what);
	r = wait_for(in, &in->exited, err);
	/* What it printed last, also what a child that outlives it is still printing. */
	drain(in);
	if (in->out >= 0) {
		close(in->out);
		in->out = -1;
	}
	log_flush(in);
	if (r < 0)
		return r == -ETIME || r == -ECANCELED
			   ? r
			   : sr_error_prefix(err, "install step '%s'", s->what);
	if (WIFEXITED(in->exit.status) && WEXITSTATUS(in->exit.status) == 0)
		return 0;
	if (WIFSIGNALED(in->exit.status)) {
		sr_error_msg(err, -ECHILD, "install step '%s' was killed by signal %d", s->what,
			     WTERMSIG(in->exit.status));
		err->status = 128 + WTERMSIG(in->exit.status);
	} else {
		sr_error_msg(err, -ECHILD, "install step '%s' failed with exit status %d", s->what,
			     WEXITSTATUS(in->exit.status));
		err->status = WEXITSTATUS(in->exit.status);
	}
	return -ECHILD;
}

/* The deployment's cache directory into the sandbox as /home/user/.cache. */
static int cache_in(struct inst *in, int datafd, struct sr_error *err)
{
	struct sr_archive_writer *w = NULL;
	struct stat st;
	struct sr_error werr = {0};
	int p[2], r;
	uint32_t id;

	if (fstatat(datafd, "cache", &st, AT_SYMLINK_NOFOLLOW) < 0 || !S_ISDIR(st.st_mode))
		return 0;
	step_begins(in, "restore the package cache");
	if (pipe2(p, O_CLOEXEC) < 0)
		return sr_error_errno(err, sr_negerrno(), "package cache: pipe");
	in->worked = false;
	r = sr_sandbox_work(in->sb, SR_WORK_TAR_IN, "/home/user", p[0], 0, &id);
	close(p[0]);
	if (r < 0) {
		close(p[1]);
		return sr_error_errno(err, r, "package cache");
	}
	/* A worker that failed closes its end: our write fails, and it says why. */
	if ((r = sr_archive_writer_new(p[1], &(struct sr_write_opts){0}, &w, &werr)) >= 0 &&
	    (r = sr_archive_write_tree(w, datafd, "cache", ".cache", &werr)) >= 0)
		r = sr_archive_writer_end(w, NULL, NULL, &werr);
	sr_archive_writer_free(w);
	close(p[1]);
	if (wait_for(in, &in->worked, err) < 0)
		return err->code;
	if (in->work_err.code) {
		*err = in->work_err;
		return sr_error_prefix(err, "package cache");
	}
	if (r < 0) {
		*err = werr;
		return sr_error_prefix(err, "package cache");
	}
	return 0;
}

/*
 * What ends a copy out of the sandbox before its end: a cancel (the
 * signals that end a deploy) and the install's deadline, as one fd (an
 * epoll set of the cancel fd and a timerfd, readable when either is). The
 * copy is read here without returning to wait_for(), and the sandbox's
 * tar worker is a process of the steps' own user: a process a step left
 * running can stop it (SIGSTOP) and let it go on a little at a time, each
 * time within the copy's idle bound, so that the deploy would outlive its
 * timeout and ^C for as long as the install script likes.
 */
static int copy_stop(struct inst *in, struct sr_error *err)
{
	struct epoll_event ev = {.events = EPOLLIN};
	struct itimerspec at = {
	    .it_value = {.tv_sec = in->deadline_ns / 1000000000,
			 .tv_nsec = in->deadline_ns % 1000000000},
	};

	if (in->stop >= 0 || (in->o->cancel_fd < 0 && !in->deadline_ns))
		return 0;
	in->stop = epoll_create1(EPOLL_CLOEXEC);
	if (in->stop < 0 || (in->o->cancel_fd >= 0 &&
			     epoll_ctl(in->stop, EPOLL_CTL_ADD, in->o->cancel_fd, &ev) < 0))
		return sr_error_errno(err, sr_negerrno(), "install: epoll");
	if (!in->deadline_ns)
		return 0;
	in->timer = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
	if (in->timer < 0 || timerfd_settime(in->timer, TFD_TIMER_ABSTIME, &at, NULL) < 0 ||
	    epoll_ctl(in->stop, EPOLL_CTL_ADD, in->timer, &ev) < 0)
		return sr_error_errno(err, sr_negerrno(), "install: timerfd");
	return 0;
}

/*
 * A tar of path in the sandbox, extracted into (dirfd, as); ended early by
 * a cancel or the deadline (copy_stop()), which wait_for() then reports.
 */
static int copy_out(struct inst *in, const char *path, int dirfd, const char *as,
		    struct sr_error *err)
{
	struct sr_extract_opts x = {
	    .max_bytes = in->c->disk_bytes,
	    .rename_top = as,
	    .max_entries = INSTALL_MAX_ENTRIES,
	    /* As cp's: no link out of the tree; a worker stopped from inside fails the install. */
	    .links_within_top = true,
	    .idle_ms = 60 * 1000,
	};
	struct sr_error xerr = {0};
	int p[2], r;
	uint32_t id;

	if ((r = copy_stop(in, err)) < 0)
		return r;
	x.cancel_fd = in->stop > 0 ? in->stop : 0;
	if (pipe2(p, O_CLOEXEC) < 0)
		return sr_error_errno(err, sr_negerrno(), "pipe");
	in->worked = false;
	r = sr_sandbox_work(in->sb, SR_WORK_TAR_OUT_OWN, path, p[1], 0, &id);
	close(p[1]);
	if (r < 0) {
		close(p[0]);
		return sr_error_errno(err, r, "copy %s", path);
	}
	r = sr_archive_extract_opts(p[0], dirfd, &x, &xerr);
	close(p[0]);
	if (wait_for(in, &in->worked, err) < 0)
		return err->code;
	/* Stopped, the worker ended meanwhile (its pipe closed): the deadline, or a cancel. */
	if (r == -ECANCELED && in->deadline_ns && sr_monotonic_ns() >= in->deadline_ns)
		return timed_out(err);
	/*
	 * The worker is the sandbox's user without capabilities, as the
	 * steps were. What a step left unreadable to its owner (chmod 0, a
	 * directory 0300) it reads all the same (SR_WORK_TAR_OUT_OWN): it is
	 * the sandbox's user's. What it cannot read is another user's: a
	 * file of the agent's code that the caller does not own (nobody's in
	 * the sandbox: a root caller's agent files of a user's, say) with no
	 * read permission for others, or one under such a directory.
	 */
	if (in->work_err.code == -EACCES)
		return sr_error_msg(err, -EACCES,
				    "%s (not the caller's, and unreadable to others: the "
				    "sandbox's user cannot read it; make the agent's files "
				    "the caller's, or readable to all)",
				    in->work_err.msg);
	if (in->work_err.code) {
		*err = in->work_err;
		return err->code;
	}
	if (r < 0) {
		*err = xerr;
		return r;
	}
	return 0;
}

int sr_install_remove_shared_cache(char **ret_path, int64_t *ret_bytes, struct sr_error *err)
{
	_cleanup_free_ char *data = NULL, *path = NULL;
	_cleanup_close_ int datafd = -1, cache = -1;
	struct stat st;
	int64_t bytes = 0;
	int r = sr_data_dir(NULL, &data, err);

	*ret_path = NULL;
	if (r < 0)
		return r;
	datafd = open(data, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (datafd < 0)
		return sr_error_errno(err, sr_negerrno(), "%s", data);
	if (fstatat(datafd, "cache", &st, AT_SYMLINK_NOFOLLOW) < 0)
		return errno == ENOENT ? 0 : sr_error_errno(err, sr_negerrno(), "%s/cache", data);
	/* Another deploy is at it: it says so. */
	if (flock(datafd, LOCK_EX | LOCK_NB) < 0)
		return errno == EWOULDBLOCK ? 0
					    : sr_error_errno(err, sr_negerrno(), "lock %s", data);
	if (fstatat(datafd, "cache", &st, AT_SYMLINK_NOFOLLOW) < 0)
		return errno == ENOENT ? 0 : sr_error_errno(err, sr_negerrno(), "%s/cache", data);
	if (asprintf(&path, "%s/cache", data) < 0)
		return sr_error_errno(err, -ENOMEM, "%s/cache", data);
	if (S_ISDIR(st.st_mode)) {
		cache = openat(datafd, "cache", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		bytes = cache >= 0 ? sr_install_tree_size(cache) : 0;
	}
	r = sr_deploy_remove_tree(datafd, "cache");
	if (r < 0)
		return sr_error_errno(err, r, "remove %s", path);
	*ret_path = steal_pointer(&path);
	*ret_bytes = bytes;
	return 0;
}

/* /home/user/.cache back to the deployment's cache, replacing it whole: a best effort. */
static void cache_out(struct inst *in, int datafd)
{
	char tmp[48], old[48];
	struct sr_error err = {0};
	uint32_t rnd = 0;

	step_begins(in, "save the package cache");
	(void)!getrandom(&rnd, sizeof(rnd), 0);
	snprintf(tmp, sizeof(tmp), SR_INSTALL_CACHE_NEW "%08x", rnd);
	snprintf(old, sizeof(old), SR_INSTALL_CACHE_OLD "%08x", rnd);
	if (copy_out(in, "/home/user/.cache", datafd, tmp, &err) < 0) {
		/* Nothing cached (no step wrote there) is no news. */
		if (err.code != -ENOENT)
			sr_warn(in->o->sink, "package cache not saved: %s", err.msg);
		(void)sr_deploy_remove_tree(datafd, tmp);
		return;
	}
	if (renameat2(datafd, tmp, datafd, "cache", RENAME_EXCHANGE) == 0) {
		(void)renameat(datafd, tmp, datafd, old);
		(void)sr_deploy_remove_tree(datafd, old);
	} else if (renameat(datafd, tmp, datafd, "cache") < 0) {
		sr_warn(in->o->sink, "package cache not saved: %s", strerror(errno));
		(void)sr_deploy_remove_tree(datafd, tmp);
	}
}

static int install(struct inst *in, const struct sr_install_plan *plan, int datafd,
		   struct sr_error *err)
{
	struct sr_sandbox_opts so = {.sink = in->o->sink, .ops = &inst_ops, .ctx = in};
	struct sr_result r;
	int e;

	sr_result_init(&r);
	so.deadline_ns = in->deadline_ns;
	step_begins(in, "start the sandbox");
	e = sr_sandbox_create(in->c, &so, &r, &in->sb, err);
	if (e < 0)
		return e == -ETIME ? (err->status = 124, e) : e;
	/* Nothing to install, nothing to cache: the copy alone. */
	bool cache = datafd >= 0 && plan->n > 0;

	if (cache && (e = cache_in(in, datafd, err)) < 0)
		return e;
	for (size_t i = 0; i < plan->n; i++)
		if ((e = run_step(in, &plan->steps[i], err)) < 0)
			return e;
	step_begins(in, "copy the installed tree");
	e = copy_out(in, "/workspace", in->o->dest_dirfd, "app", err);
	if (e < 0)
		return sr_error_prefix(err, "copy the installed tree out");
	if (cache)
		cache_out(in, datafd);
	return 0;
}

int sr_install_run(struct sr_config *c, const struct sr_install_plan *plan,
		   const struct sr_install_opts *o, struct sr_error *err)
{
	/* The install's own sandbox: the code as workspace, nothing run but the steps. */
	char *saved_ws = c->workspace, **saved_argv = c->argv;
	int saved_argc = c->argc;
	bool saved_cmd = c->command_mode, saved_no_entry = c->no_entry;
	struct inst in = {.c = c, .o = o, .out = -1, .stop = -1, .timer = -1};
	_cleanup_free_ char *ws = strdup(o->code_dir);
	int r;

	if (!ws)
		return sr_error_errno(err, -ENOMEM, "install");
	if (c->install_timeout_ms)
		in.deadline_ns = sr_monotonic_ns() + (int64_t)c->install_timeout_ms * 1000000;
	c->workspace = ws;
	c->argv = NULL;
	c->argc = 0;
	c->command_mode = false;
	c->no_entry = true;
	r = install(&in, plan, o->cache_dirfd, err);
	/* Whatever is left (a step's daemon, a step cut short) is killed with the sandbox. */
	sr_sandbox_free(in.sb);
	if (in.out >= 0)
		close(in.out);
	sr_closep(&in.stop);
	sr_closep(&in.timer);
	c->workspace = saved_ws;
	c->argv = saved_argv;
	c->argc = saved_argc;
	c->command_mode = saved_cmd;
	c->no_entry = saved_no_entry;
	return r;
}
