/* SPDX-License-Identifier: MIT */
/*
 * The supervisor. sandbox-run itself never enters the sandbox: it clones
 * PID 1 into the new namespaces, does what only the parent can (id maps,
 * network helper), then waits -- forwarding signals, enforcing the
 * timeout, and collecting how the agent ended. The agent's stdio is the
 * caller's own fds, inherited: nothing is copied through us.
 */
#include "supervisor.h"
#include "agent.h"
#include "cgroup.h"
#include "env.h"
#include "fault.h"
#include "net.h"
#include "protocol.h"
#include "sandbox.h"
#include "tty.h"
#include "units.h"
#include "userns.h"
#include "util.h"

#include <fcntl.h>
#include <linux/sched.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <sys/random.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/timerfd.h>
#include <sys/wait.h>
#include <time.h>

extern char **environ;

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

struct run {
	const struct sr_config *config;
	struct sr_agent agent;
	struct sr_plan plan;
	struct sr_net *net;
	struct sr_cgroup *cgroup;
	int clone_fd; /* the sandbox's cgroup for CLONE_INTO_CGROUP (owned by cgroup), or -1 */
	int sock;     /* our end of the protocol socket */
	int sigfd;    /* SIGCHLD and the forwarded signals */
	int timerfd;  /* the timeout, -1 for none */
	pid_t pid;    /* PID 1 of the sandbox, as we see it */
	struct timespec start;
	/* what happened */
	bool exec_seen, exit_seen, timed_out, reaped;
	bool oom_elsewhere; /* the OOM killer took a process other than the agent */
	int agent_status;   /* wait status from EXIT */
	int64_t disk_used;
	struct sr_error child_err;
	struct rusage ru;
	int init_status;
	struct sr_tty_state tty; /* the caller's terminal, before the run */
	sigset_t saved_mask;	 /* the signal mask before setup_signals() */
	bool mask_saved;
};

static double ms_since(const struct timespec *t0)
{
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	return (double)(now.tv_sec - t0->tv_sec) * 1e3 + (double)(now.tv_nsec - t0->tv_nsec) / 1e6;
}

static void new_sandbox_id(char id[33])
{
	unsigned char raw[16] = {0};

	if (getrandom(raw, sizeof(raw), GRND_NONBLOCK) != (ssize_t)sizeof(raw)) {
		struct timespec t;

		clock_gettime(CLOCK_REALTIME, &t);
		snprintf((char *)raw, sizeof(raw), "%lx%x", (long)t.tv_nsec, (unsigned)getpid());
	}
	for (size_t i = 0; i < sizeof(raw); i++)
		snprintf(id + 2 * i, 3, "%02x", raw[i]);
}

/*
 * How each limit is applied here, said honestly; a requested limit that
 * nothing enforces is a warning, or with --strict a refusal to start.
 * memory, cpus and pids were filled in by sr_cgroup_prepare().
 */
static int check_enforcement(const struct sr_config *c, const struct sr_net *net,
			     const struct sr_cgroup *cg, struct sr_result *r, struct sr_error *err)
{
	char limits[1024];
	int n;

	/*
	 * The disk is the size of a tmpfs (0: no size, so nothing enforces a
	 * limit and none is asked for); the network policy fails closed (net.c).
	 */
	r->enforced[SR_LIMIT_DISK] = c->disk_bytes ? SR_ENFORCE_TMPFS : SR_ENFORCE_NONE;
	r->enforced[SR_LIMIT_NET] = sr_net_enforced(net);
	n = sr_cgroup_describe(c, r->enforced,
			       c->strict || sr_log_get_level() >= SR_LOG_INFO ? sr_cgroup_reason(cg)
									      : NULL,
			       limits, sizeof(limits));
	if (c->strict && n > 0)
		return sr_error_msg(err, -EOPNOTSUPP, "--strict: %s", limits);
	if (*limits)
		sr_warn("%s%s", limits, n > 0 ? " (--strict refuses)" : "");
	if (sr_cgroup_swap_unbounded(cg)) {
		static const char swap[] =
		    "the memory limit holds RAM only: this host swaps and accounts no swap to "
		    "cgroups (swapaccount=0), so the sandbox can swap past it; see docs/limits.md";

		if (c->strict)
			return sr_error_msg(err, -EOPNOTSUPP, "--strict: %s", swap);
		sr_warn("%s (--strict refuses)", swap);
	}
	return 0;
}

/*
 * An archive is opened here, as the caller, and read by the child. A
 * directory is opened by the child itself (mounts.c): overlayfs takes no
 * lower layer from another mount namespace.
 */
static int open_agent(struct run *run, struct sr_error *err)
{
	const struct sr_agent *a = &run->agent;

	run->plan.agent_fd = -1;
	if (a->kind != SR_AGENT_ARCHIVE)
		return 0;
	run->plan.agent_fd = open(a->archive_path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
	if (run->plan.agent_fd < 0)
		return sr_error_errno(err, sr_negerrno(), "open %s", a->archive_path);
	return 0;
}

static int setup_signals(struct run *run, struct sr_error *err)
{
	/*
	 * SIGCHLD ignored by whoever started us (inherited across exec) would
	 * have the kernel reap our children itself: PID 1 would never be seen
	 * to end, and the helper's pid could be reused under us.
	 */
	const struct sigaction dfl = {.sa_handler = SIG_DFL};
	sigset_t set;

	if (sigaction(SIGCHLD, &dfl, NULL) < 0)
		return sr_error_errno(err, sr_negerrno(), "SIGCHLD");
	sigemptyset(&set);
	sigaddset(&set, SIGCHLD);
	for (size_t i = 0; i < SR_ARRAY_SIZE(forwarded); i++)
		sigaddset(&set, forwarded[i]);
	for (int sig = SIGRTMIN; sig <= SIGRTMAX; sig++)
		sigaddset(&set, sig);
	/* Blocked before clone3, so no SIGCHLD can be lost in between. */
	if (sigprocmask(SIG_BLOCK, &set, &run->saved_mask) < 0)
		return sr_error_errno(err, sr_negerrno(), "block signals");
	run->mask_saved = true;
	run->sigfd = signalfd(-1, &set, SFD_CLOEXEC | SFD_NONBLOCK);
	if (run->sigfd < 0)
		return sr_error_errno(err, sr_negerrno(), "signalfd");
	return 0;
}

static int start_timer(struct run *run, struct sr_error *err)
{
	uint64_t ms = run->config->timeout_ms;
	struct itimerspec its = {
	    .it_value = {.tv_sec = (time_t)(ms / 1000), .tv_nsec = (long)(ms % 1000) * 1000000L}};

	run->timerfd = -1;
	if (ms == 0)
		return 0;
	run->timerfd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
	if (run->timerfd < 0 || timerfd_settime(run->timerfd, 0, &its, NULL) < 0)
		return sr_error_errno(err, sr_negerrno(), "timer");
	return 0;
}

static int clone_sandbox(struct run *run, struct sr_error *err)
{
	struct clone_args args = {
	    .flags = CLONE_NEWUSER | CLONE_NEWPID | CLONE_NEWNS | CLONE_NEWIPC | CLONE_NEWUTS |
		     CLONE_NEWCGROUP | CLONE_NEWNET,
	    .exit_signal = SIGCHLD,
	};
	int sv[2];

	/* Born in its cgroup: no task of the sandbox ever runs unlimited. */
	if (run->clone_fd >= 0) {
		args.flags |= CLONE_INTO_CGROUP;
		args.cgroup = (uint64_t)run->clone_fd;
	}
	long pid;

	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0)
		return sr_error_errno(err, sr_negerrno(), "socketpair");
	run->sock = sv[0];
	run->plan.sock = sv[1];

	/* A fork(): no CLONE_VM, so the child has its own copy of everything. */
	pid = syscall(SYS_clone3, &args, sizeof(args));
	/*
	 * ENOSYS: a seccomp filter that predates clone3 (container runtimes'
	 * default profiles, valgrind) refuses it so that callers fall back to
	 * clone(), as our own filter does. clone() cannot place the child in
	 * its cgroup: sr_cgroup_attach() moves it there while it waits for GO.
	 * A NULL stack: the child runs on its copy of ours, as after fork().
	 */
	if (pid < 0 && errno == ENOSYS)
		pid = syscall(SYS_clone,
			      (unsigned long)(args.flags & ~(uint64_t)CLONE_INTO_CGROUP) | SIGCHLD,
			      NULL, NULL, NULL, NULL);
	if (pid < 0) {
		int e = sr_negerrno();

		close(sv[1]);
		if (e == -EPERM || e == -ENOSPC || e == -EUSERS)
			return sr_error_errno(err, e,
					      "create namespaces (are unprivileged user namespaces "
					      "enabled? sysctl user.max_user_namespaces)");
		return sr_error_errno(err, e, "create namespaces");
	}
	if (pid == 0)
		sr_sandbox_child(&run->plan);
	/*
	 * PID 1 in a process group of its own (it does the same itself, for
	 * whichever of us comes first): a terminal's ^C or a kill of our group
	 * reaches only us, and we forward it once.
	 */
	(void)setpgid((pid_t)pid, (pid_t)pid);
	close(sv[1]);
	run->plan.sock = -1;
	run->pid = (pid_t)pid;
	return 0;
}

/* [1] The parent-side steps, then GO. */
static int parent_steps(struct run *run, struct sr_error *err)
{
	struct sr_msg go = {.type = SR_MSG_GO};
	int r;

	/* sr_fault_point(): test builds only, empty otherwise (fault.h). */
	sr_fault_point("supervisor", "cloned");
	r = sr_userns_parent(run->pid, run->plan.nested_userns, run->plan.host_uid,
			     run->plan.host_gid, err);
	if (r < 0)
		return sr_error_prefix(err, "user namespace");
	sr_fault_point("supervisor", "id maps");
	r = sr_cgroup_attach(run->cgroup, run->pid, err);
	if (r < 0)
		return sr_error_prefix(err, "cgroup");
	sr_fault_point("supervisor", "cgroup");
	r = sr_net_parent(run->net, run->pid, err);
	if (r < 0)
		return sr_error_prefix(err, "network");
	sr_fault_point("supervisor", "network helper");
	r = sr_msg_send(run->sock, &go);
	if (r < 0)
		return sr_error_errno(err, r, "start the sandbox");
	sr_fault_point("supervisor", "go");
	return 0;
}

static void on_message(struct run *run)
{
	struct sr_error err = {0};
	struct sr_msg m;
	int fd;
	int r = sr_msg_recv(run->sock, &m, &fd);

	if (r <= 0) {
		/* EOF (PID 1 gone) or garbage: nothing more to read either way. */
		close(run->sock);
		run->sock = -1;
		return;
	}
	switch (m.type) {
	case SR_MSG_EXEC:
		run->exec_seen = true;
		sr_net_agent_started(run->net);
		break;
	case SR_MSG_ERROR:
		run->child_err.status = m.status;
		sr_error_msg(&run->child_err, m.code, "%s", m.text);
		break;
	case SR_MSG_WARNING:
		sr_warn("%s", m.text);
		break;
	case SR_MSG_TAP:
		/* The policy is in; the agent starts without waiting for the helper. */
		if (run->reaped)
			close(fd); /* read after PID 1 ended: too late */
		else if (sr_net_start_helper(run->net, fd, &err) < 0)
			sr_warn("%s: the sandbox has no network", err.msg);
		break;
	case SR_MSG_EXIT:
		run->exit_seen = true;
		run->agent_status = m.status;
		run->disk_used = m.value;
		break;
	case SR_MSG_ENDED:
		run->disk_used = m.value;
		break;
	default:
		break;
	}
}

/*
 * A stop signal, once passed on: we stop too, as its default action would
 * have stopped us, so that the shell sees its job stopped. Raised while
 * blocked, it is taken when unblocked; SIGCONT resumes us there.
 */
static void stop_as(int sig)
{
	sigset_t one;

	sigemptyset(&one);
	sigaddset(&one, sig);
	raise(sig);
	sigprocmask(SIG_UNBLOCK, &one, NULL);
	sigprocmask(SIG_BLOCK, &one, NULL);
}

static void on_signal(struct run *run)
{
	struct signalfd_siginfo si;

	while (read(run->sigfd, &si, sizeof(si)) == (ssize_t)sizeof(si)) {
		int sig = (int)si.ssi_signo;

		if (sig != SIGCHLD) {
			/* Once reaped, the pid may be another process's already. */
			if (!run->reaped)
				kill(run->pid, sig);
			if (sig == SIGTSTP || sig == SIGTTIN || sig == SIGTTOU)
				stop_as(sig);
			continue;
		}
		/* Only our own child: the network helper is reaped on its pidfd. */
		if (!run->reaped &&
		    wait4(run->pid, &run->init_status, WNOHANG, &run->ru) == run->pid)
			run->reaped = true;
	}
}

/*
 * The whole sandbox ends. PID 1 is asked to kill and reap every other
 * process, report the disk use and exit (protocol.h), so that their CPU
 * time is counted where no cgroup counts it. Should it not be gone a
 * second later, or the agent not be running yet (PID 1 is not listening),
 * the cgroup and PID 1 are killed, and PID 1's namespace with it.
 */
#define END_GRACE_MS 1000

static void on_timeout(struct run *run)
{
	const struct itimerspec grace = {
	    .it_value = {.tv_sec = END_GRACE_MS / 1000, .tv_nsec = END_GRACE_MS % 1000 * 1000000L}};
	const struct sr_msg end = {.type = SR_MSG_END};
	uint64_t expirations;

	(void)!read(run->timerfd, &expirations, sizeof(expirations));
	if (!run->timed_out) {
		run->timed_out = true;
		if (run->exec_seen && sr_msg_send(run->sock, &end) == 0 &&
		    kill(run->pid, SIGCHLD) == 0 &&
		    timerfd_settime(run->timerfd, 0, &grace, NULL) == 0)
			return;
	}
	sr_cgroup_kill(run->cgroup);
	kill(run->pid, SIGKILL);
	sr_closep(&run->timerfd);
}

static void wait_sandbox(struct run *run)
{
	while (!run->reaped) {
		struct pollfd fds[4] = {
		    {.fd = run->sigfd, .events = POLLIN},
		    {.fd = run->sock, .events = POLLIN},
		    {.fd = run->timerfd, .events = POLLIN},
		    {.fd = sr_net_watch_fd(run->net), .events = POLLIN},
		};

		if (poll(fds, SR_ARRAY_SIZE(fds), -1) < 0) {
			if (errno == EINTR)
				continue;
			/* Cannot wait any more: end the sandbox rather than leave it. */
			kill(run->pid, SIGKILL);
			waitpid(run->pid, &run->init_status, 0);
			run->reaped = true;
			break;
		}
		if (fds[1].revents)
			on_message(run);
		if (fds[2].revents & POLLIN)
			on_timeout(run);
		if (fds[0].revents)
			on_signal(run);
		/*
		 * The helper, gone before the sandbox: said while the agent runs.
		 * Before that, slirp4netns's end is the child's error to report.
		 */
		if (fds[3].revents)
			sr_net_helper_exited(run->net, run->exec_seen && !run->exit_seen);
	}
	/* EXIT may still be queued behind the SIGCHLD. */
	while (run->sock >= 0)
		on_message(run);
}

static void fill_result(struct run *run, struct sr_result *r, struct sr_error *err)
{
	struct sr_cgroup_stats cs;

	r->wall_ms = ms_since(&run->start);
	r->user_ms = (double)run->ru.ru_utime.tv_sec * 1e3 + (double)run->ru.ru_utime.tv_usec / 1e3;
	r->sys_ms = (double)run->ru.ru_stime.tv_sec * 1e3 + (double)run->ru.ru_stime.tv_usec / 1e3;
	r->disk_used_bytes = run->disk_used;
	sr_cgroup_stats(run->cgroup, &cs);
	r->peak_memory_bytes = cs.peak_memory_bytes;
	if (cs.user_ms >= 0)
		r->user_ms = cs.user_ms;
	if (cs.sys_ms >= 0)
		r->sys_ms = cs.sys_ms;

	if (run->timed_out && !run->exit_seen) {
		r->status = SR_STATUS_TIMEOUT;
		r->exit_code = 124;
	} else if (run->exit_seen && WIFEXITED(run->agent_status)) {
		r->status = SR_STATUS_EXITED;
		r->exit_code = WEXITSTATUS(run->agent_status);
	} else if (run->exit_seen && WIFSIGNALED(run->agent_status)) {
		r->status = SR_STATUS_SIGNALED;
		r->signal = WTERMSIG(run->agent_status);
		r->exit_code = 128 + r->signal;
	} else if (run->child_err.code) {
		*err = run->child_err;
		r->status = SR_STATUS_ERROR;
		r->exit_code = err->status ? err->status : 125;
		snprintf(r->error, sizeof(r->error), "%s", err->msg);
	} else if (WIFSIGNALED(run->init_status)) {
		/* PID 1 itself was killed from outside: the sandbox ended that way. */
		r->status = SR_STATUS_SIGNALED;
		r->signal = WTERMSIG(run->init_status);
		r->exit_code = 128 + r->signal;
	} else {
		sr_error_msg(err, -EPROTO, "the sandbox ended before its agent started");
		r->status = SR_STATUS_ERROR;
		r->exit_code = 125;
		snprintf(r->error, sizeof(r->error), "%s", err->msg);
	}
	/* The kernel's OOM killer sends SIGKILL; the cgroup counted the kill. */
	if (cs.oom_killed && r->status == SR_STATUS_SIGNALED && r->signal == SIGKILL)
		r->status = SR_STATUS_OOM;
	/* Another process's: the agent's status stands, and log_end() says so. */
	run->oom_elsewhere = cs.oom_killed && r->status != SR_STATUS_OOM;
}

static void run_cleanup(struct run *run)
{
	if (run->pid > 0 && !run->reaped) {
		kill(run->pid, SIGKILL);
		waitpid(run->pid, NULL, 0);
	}
	/* After PID 1 is reaped: its namespace's tasks are gone, the cgroup can go. */
	sr_cgroup_free(run->cgroup);
	sr_tty_restore(&run->tty);
	sr_net_free(run->net);
	sr_closep(&run->sock);
	sr_closep(&run->sigfd);
	sr_closep(&run->timerfd);
	sr_closep(&run->plan.agent_fd);
	sr_closep(&run->plan.workspace_tree);
	sr_strv_free(&run->plan.envp);
	sr_agent_free(&run->agent);
	/*
	 * The sandbox is gone: signals are the caller's again, so that a
	 * record written to a slow pipe can still be interrupted by SIGTERM
	 * or ^C rather than holding sandbox-run with them blocked.
	 */
	if (run->mask_saved)
		sigprocmask(SIG_SETMASK, &run->saved_mask, NULL);
}

/* Appends t to buf (len bytes, *n used), as much as fits. */
static void append(char *buf, size_t len, size_t *n, const char *t)
{
	while (*t && *n + 1 < len)
		buf[(*n)++] = *t++;
	buf[*n] = '\0';
}

/* One word of a command, quoted as a shell would need it where it has a blank or a quote. */
static void append_word(char *buf, size_t len, size_t *n, const char *w)
{
	if (*n > 0)
		append(buf, len, n, " ");
	if (*w && !strpbrk(w, " \t'")) {
		append(buf, len, n, w);
		return;
	}
	append(buf, len, n, "'");
	for (; *w; w++)
		append(buf, len, n, *w == '\'' ? "'\\''" : (const char[]){*w, '\0'});
	append(buf, len, n, "'");
}

/* -v: what this run is, and how each limit is held on this host. */
static void log_start(const struct run *run, const struct sr_result *r)
{
	const struct sr_config *c = run->config;
	char mem[SR_UNITS_BUF_MAX], cpus[SR_UNITS_BUF_MAX], disk[SR_UNITS_BUF_MAX],
	    timeout[SR_UNITS_BUF_MAX];
	static const char *const kind[_SR_AGENT_KIND_MAX] = {
	    [SR_AGENT_DIR] = "a directory",
	    [SR_AGENT_FILE] = "a file",
	    [SR_AGENT_ARCHIVE] = "an archive",
	    [SR_AGENT_COMMAND] = "a command",
	};
	const struct sr_agent *a = &run->agent;
	/* What the caller passed, on one line and with no escape sequence (sr_printable). */
	char raw[1024] = "", profile[512], from[512], workspace[512], command[512];
	size_t n = 0;

	if (sr_log_get_level() < SR_LOG_INFO)
		return;
	sr_format_size(c->memory_bytes, mem, sizeof(mem));
	sr_format_cpus(c->cpus_milli, cpus, sizeof(cpus));
	sr_format_size(c->disk_bytes, disk, sizeof(disk));
	sr_format_duration(c->timeout_ms, timeout, sizeof(timeout));
	sr_printable(c->profile ? c->profile : "-", profile, sizeof(profile));
	sr_printable(c->profile_path ? c->profile_path : "-", from, sizeof(from));
	sr_printable(a->archive_path ? a->archive_path
		     : a->host_dir   ? a->host_dir
				     : "empty",
		     workspace, sizeof(workspace));
	for (size_t i = 0; i < a->argv.n; i++)
		append_word(raw, sizeof(raw), &n, a->argv.items[i]);
	/* An archive's entry is found once it is extracted, in the sandbox. */
	sr_printable(a->argv.n ? raw : "its entry, once extracted", command, sizeof(command));
	sr_info("sandbox %s: profile %s (%s); agent: %s; workspace: %s%s; runs: %s", r->sandbox_id,
		profile, from, kind[a->kind], a->archive_path ? "extracted from " : "", workspace,
		command);
	sr_info("sandbox %s: memory %s (%s), cpus %s (%s), pids %llu (%s), disk %s (%s), "
		"timeout %s, net %s (%s%s%s)",
		r->sandbox_id, mem, sr_enforce_to_string(r->enforced[SR_LIMIT_MEMORY]), cpus,
		sr_enforce_to_string(r->enforced[SR_LIMIT_CPUS]), (unsigned long long)c->pids,
		sr_enforce_to_string(r->enforced[SR_LIMIT_PIDS]), disk,
		sr_enforce_to_string(r->enforced[SR_LIMIT_DISK]), timeout,
		sr_net_mode_to_string(c->net), sr_enforce_to_string(r->enforced[SR_LIMIT_NET]),
		sr_net_helper_path(run->net) ? ", through " : "",
		sr_net_helper_path(run->net) ? sr_net_helper_path(run->net) : "");
}

/* How it ended: a limit that ended it is said (not with -q); the rest with -v. */
static void log_end(const struct run *run, const struct sr_result *r)
{
	const struct sr_config *c = run->config;
	char disk[SR_UNITS_BUF_MAX] = "unknown", peak[SR_UNITS_BUF_MAX] = "unknown";
	char limit[SR_UNITS_BUF_MAX];

	if (r->status == SR_STATUS_TIMEOUT) {
		sr_format_duration(c->timeout_ms, limit, sizeof(limit));
		sr_warn("timed out after %s: the whole sandbox was killed", limit);
	} else if (r->status == SR_STATUS_OOM || run->oom_elsewhere) {
		sr_format_size(c->memory_bytes, limit, sizeof(limit));
		sr_warn("out of memory: %s was killed at the %s memory limit",
			run->oom_elsewhere ? "a process of the sandbox other than the agent"
					   : "the agent",
			limit);
	}
	if (sr_log_get_level() < SR_LOG_INFO)
		return;
	if (r->disk_used_bytes >= 0)
		snprintf(disk, sizeof(disk), "%lld bytes", (long long)r->disk_used_bytes);
	if (r->peak_memory_bytes >= 0)
		snprintf(peak, sizeof(peak), "%lld bytes", (long long)r->peak_memory_bytes);
	sr_info("sandbox %s: %s, exit status %d, %.1f ms (user %.1f ms, sys %.1f ms), "
		"disk used %s, peak memory %s",
		r->sandbox_id, sr_status_to_string(r->status), r->exit_code, r->wall_ms, r->user_ms,
		r->sys_ms, disk, peak);
}

static int prepare(struct run *run, struct sr_result *r, struct sr_error *err)
{
	const struct sr_config *c = run->config;
	int e;

	/* Whom "user" is on the host: the network helper runs with these ids too. */
	sr_userns_host_ids(getuid(), getgid(), &run->plan.host_uid, &run->plan.host_gid);
	if ((e = sr_agent_resolve(c, &run->agent, err)) < 0 || (e = open_agent(run, err)) < 0 ||
	    (e = sr_env_build(c, environ, &run->plan.envp, err)) < 0 ||
	    (e = sr_net_prepare(c, run->plan.host_uid, run->plan.host_gid, &run->net, err)) < 0 ||
	    (e = sr_cgroup_prepare(c, r->sandbox_id, &run->cgroup, &run->clone_fd, r->enforced,
				   err)) < 0 ||
	    (e = check_enforcement(c, run->net, run->cgroup, r, err)) < 0)
		return e;
	log_start(run, r);
	run->plan.config = c;
	run->plan.cgroup = run->cgroup;
	run->plan.agent = &run->agent;
	run->plan.net = run->net;
	run->plan.drop_groups = geteuid() == 0;
	run->plan.nested_userns = sr_net_nested_userns(run->net);
	if (geteuid() == 0 && run->agent.host_dir && run->agent.kind != SR_AGENT_ARCHIVE) {
		struct sr_error ierr = {0};

		/* Without it the agent can read its root-owned files but not change them. */
		if (sr_userns_idmapped_tree(run->agent.host_dir, run->plan.host_uid,
					    run->plan.host_gid, &run->plan.workspace_tree,
					    &ierr) < 0)
			sr_warn("%s: root-owned workspace files stay read-only to the agent",
				ierr.msg);
	}
	/* Test builds only, empty otherwise (fault.h): every host resource exists, no child yet. */
	sr_fault_point("supervisor", "prepared");
	return 0;
}

int sr_supervisor_run(const struct sr_config *c, struct sr_result *r, struct sr_error *err)
{
	struct run run = {
	    .config = c, .clone_fd = -1, .sock = -1, .sigfd = -1, .timerfd = -1, .disk_used = -1};
	int e;

	clock_gettime(CLOCK_MONOTONIC, &run.start);
	sr_tty_save(&run.tty);
	run.plan.agent_fd = -1;
	run.plan.workspace_tree = -1;
	run.plan.sources.workspace = -1;
	run.plan.sources.tap = -1;
	run.plan.sock = -1;
	new_sandbox_id(r->sandbox_id);

	/* Signals first: one that came while prepare() makes the cgroup would leave it behind. */
	if ((e = sr_fault_validate(err)) < 0 || (e = setup_signals(&run, err)) < 0 ||
	    (e = prepare(&run, r, err)) < 0 || (e = clone_sandbox(&run, err)) < 0 ||
	    (e = start_timer(&run, err)) < 0 || (e = parent_steps(&run, err)) < 0) {
		r->status = SR_STATUS_ERROR;
		r->exit_code = err->status ? err->status : 125;
		snprintf(r->error, sizeof(r->error), "%s", err->msg);
		r->wall_ms = ms_since(&run.start);
		run_cleanup(&run);
		return e;
	}
	wait_sandbox(&run);
	fill_result(&run, r, err);
	log_end(&run, r);
	run_cleanup(&run);
	return r->status == SR_STATUS_ERROR ? (err->code ? err->code : -EPROTO) : 0;
}
