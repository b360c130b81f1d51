/* SPDX-License-Identifier: MIT */
/*
 * PID 1 of the sandbox. It stays in sandbox-run's code (no exec), so it is
 * non-dumpable (set in setup.c) and runs with the full hardening already
 * applied: no capabilities, no_new_privs, seccomp.
 *
 * It serves its host (protocol.h): it spawns the processes it is asked
 * for, with the stdio it is handed, reports each one's exit, passes
 * signals to them, reaps every orphan, and ends the sandbox when asked or
 * when a process spawned to end it does. It blocks every signal and takes
 * them through a signalfd: nothing interrupts it and no handler runs in
 * it. No signal is a request (the agent can queue PID 1 any siginfo it
 * likes): every request comes on the socket, which nothing in the
 * sandbox can reach.
 *
 * How it starts a process (the clone, a parked process's fork, the
 * child's side until its exec) is init-spawn.c's.
 */
#include "init.h"
#include "init-internal.h"
#include "fault.h"
#include "proc.h"
#include "work.h"
#include "protocol.h"
#include "util.h"
#include "viewfs.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <malloc.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/wait.h>

/* A process PID 1 spawned (or a worker it forked) and has not yet reported. */
struct proc {
	pid_t pid;
	bool ends_sandbox;
	bool hold;     /* SR_SPAWN_HOLD: its end holds the sandbox rather than ending it */
	int report_fd; /* a worker's (work.h): its WORK's answer comes from there; else -1 */
	uint32_t work_id;
	int64_t deadline_ns; /* a worker's time limit (CLOCK_MONOTONIC), 0: none */
	bool late;	     /* killed at it */
	/*
	 * Its process group's CPU time when it was signalled or killed
	 * (init_each_usage()): its EXIT says the larger of that and its
	 * rusage, which lacks the children killed with it. sum_*: a count
	 * under way, for the procs counting.
	 */
	int64_t cut_user_us, cut_sys_us, sum_user_us, sum_sys_us;
	bool counting;
};

struct init {
	struct sr_plan *p;
	int sigfd;
	struct proc *procs;
	size_t n_procs, cap_procs;
	char *payload; /* SPAWN's, SR_MSG_PAYLOAD_MAX + 1 bytes */
	bool spawned_once;
	/*
	 * No process runs any more, but the files stay, for the host to copy
	 * out (protocol.h): SPAWN and CONNECT fail, WORK, STAT and END serve.
	 */
	bool held;
};

static void add_usage(void *ctx, pid_t pgrp, int64_t user_us, int64_t sys_us)
{
	struct init *in = ctx;

	for (size_t i = 0; i < in->n_procs; i++)
		if (in->procs[i].counting && in->procs[i].pid == pgrp) {
			in->procs[i].sum_user_us += user_us;
			in->procs[i].sum_sys_us += sys_us;
		}
}

/*
 * What the process groups of the procs marked counting have used, as a
 * signal or the end may end them now: one pass over /proc for them all.
 */
static void count_cuts(struct init *in)
{
	init_each_usage(add_usage, in);
	for (size_t i = 0; i < in->n_procs; i++) {
		struct proc *pr = &in->procs[i];

		if (pr->counting &&
		    pr->sum_user_us + pr->sum_sys_us > pr->cut_user_us + pr->cut_sys_us) {
			pr->cut_user_us = pr->sum_user_us;
			pr->cut_sys_us = pr->sum_sys_us;
		}
		pr->counting = false;
		pr->sum_user_us = pr->sum_sys_us = 0;
	}
}

/*
 * Every other process of the sandbox, killed and reaped here rather than
 * by the kernel as PID 1 exits: that teardown reaps them with SIGCHLD
 * ignored, so their CPU time never reached PID 1's rusage, all the host
 * has where no cgroup counts it. kill(-1) spares PID 1; it is repeated
 * until nothing is left, for what was being forked meanwhile.
 */
static void reaped(struct init *in, pid_t pid, int status, const struct rusage *ru);

static void end_all(struct init *in)
{
	struct rusage ru;
	int st;
	pid_t w;

	for (size_t i = 0; i < in->n_procs; i++)
		in->procs[i].counting = !in->procs[i].ends_sandbox && in->procs[i].report_fd < 0;
	count_cuts(in);
	for (;;) {
		while ((w = wait4(-1, &st, __WALL | WNOHANG, &ru)) > 0)
			reaped(in, w, st, &ru);
		if (kill(-1, SIGKILL) < 0 && errno == ESRCH)
			break;
		w = wait4(-1, &st, __WALL, &ru);
		if (w > 0)
			reaped(in, w, st, &ru);
	}
}

static void send_or_die(int sock, const struct sr_msg *m)
{
	if (sr_msg_send(sock, m) < 0)
		_exit(125);
}

/*
 * An fd passed to the host with the caller's whole hard RLIMIT_NOFILE as
 * the soft one, the limit the kernel holds the uid's fds in flight to
 * (init-spawn.c: limit_files()): twice what the sandbox's processes get.
 * PID 1's own limits stay the caller's otherwise, for each process it
 * starts to take its share from.
 */
static int pass_fd(int sock, const struct sr_msg *m, int fd)
{
	struct rlimit was, whole;
	int r;

	if (getrlimit(RLIMIT_NOFILE, &was) < 0)
		return sr_msg_send_fd(sock, m, fd);
	whole = (struct rlimit){.rlim_cur = was.rlim_max, .rlim_max = was.rlim_max};
	(void)setrlimit(RLIMIT_NOFILE, &whole);
	r = sr_msg_send_fd(sock, m, fd);
	(void)setrlimit(RLIMIT_NOFILE, &was);
	return r;
}

/*
 * An answer that passes an fd to the host (a pty's master, a connection
 * to a published port): 0, or -ETOOMANYREFS for the request to fail
 * rather than the sandbox. The kernel refuses to pass an fd while the
 * sender's host uid has more in flight (sent, not yet received) than the
 * sender's RLIMIT_NOFILE, a count of the uid's, not of a namespace: the
 * agent of any sandbox of an unprivileged caller, of this same uid, can
 * send fds into sockets nobody reads until then. Its half of the limit
 * (pass_fd()) stays below PID 1's, but another sandbox's agent may have
 * had a higher one (made under a higher `ulimit -Hn`), or the limit be
 * too low for the half to leave room: exiting on it would let one
 * sandbox's agent end every other sandbox of the caller's.
 */
static int send_fd_or_die(int sock, const struct sr_msg *m, int fd)
{
	int r = pass_fd(sock, m, fd);

	if (r < 0 && r != -ETOOMANYREFS)
		_exit(125);
	return r;
}

/* A new pty of the sandbox's own devpts: the master for the host, the slave in *ret_slave. */
static int open_pty(int *ret_slave, struct sr_error *err)
{
	_cleanup_close_ int master = open("/dev/ptmx", O_RDWR | O_NOCTTY | O_CLOEXEC);
	int unlock = 0, slave;

	if (master < 0)
		return sr_error_errno(err, sr_negerrno(), "open a pty");
	if (ioctl(master, TIOCSPTLCK, &unlock) < 0)
		return sr_error_errno(err, sr_negerrno(), "unlock the pty");
	/* TIOCGPTPEER: the slave of this master, never a path someone swapped (Linux 4.13). */
	slave = ioctl(master, TIOCGPTPEER, O_RDWR | O_NOCTTY | O_CLOEXEC);
	if (slave < 0)
		return sr_error_errno(err, sr_negerrno(), "open the pty's slave");
	*ret_slave = slave;
	return steal_fd(&master);
}

static int add_proc(struct init *in, pid_t pid, bool ends_sandbox, bool hold)
{
	if (SR_GROW(in->procs, in->cap_procs, in->n_procs + 1, 8) < 0)
		return -ENOMEM;
	in->procs[in->n_procs++] =
	    (struct proc){.pid = pid, .ends_sandbox = ends_sandbox, .report_fd = -1};
	in->procs[in->n_procs - 1].hold = hold;
	return 0;
}

static struct proc *find_proc(struct init *in, pid_t pid)
{
	for (size_t i = 0; i < in->n_procs; i++)
		if (in->procs[i].pid == pid)
			return &in->procs[i];
	return NULL;
}

static void spawn_failed(struct init *in, uint32_t id, const struct sr_error *err)
{
	struct sr_msg m = {
	    .type = SR_MSG_SPAWN_FAILED,
	    .id = id,
	    .code = err->code ? err->code : -EIO,
	    .status = err->status ? err->status : 125,
	};

	snprintf(m.text, sizeof(m.text), "%s", err->msg);
	send_or_die(in->p->sock, &m);
}

/*
 * The process's stdio: the pty where the request asks (a new one, its
 * master in *master for SPAWNED, its slave the controlling terminal), the
 * fds it brought, in order, for the rest.
 */
static int spawn_stdio(const struct sr_msg *req, const struct sr_msg_extra *ex, struct spawn *s,
		       int *master, int *slave, struct sr_error *err)
{
	if (req->flags & SR_SPAWN_PTY) {
		struct winsize ws = {.ws_row = (unsigned short)(req->value >> 16),
				     .ws_col = (unsigned short)(req->value & 0xffff)};
		int r = open_pty(slave, err);

		if (r < 0)
			return r;
		*master = r;
		/* Before the process starts: a shell reads its size once, at once. */
		if (ws.ws_row && ws.ws_col)
			(void)ioctl(*master, TIOCSWINSZ, &ws);
		s->pty = *slave;
	}
	for (int i = 0, next = 0; i < 3; i++) {
		if (req->flags & (SR_SPAWN_PTY_STDIN << i))
			s->stdio[i] = *slave;
		else if ((size_t)next < ex->n_fds)
			s->stdio[i] = ex->fds[next++];
		else
			return sr_error_msg(err, -EBADMSG, "spawn: no stdio");
	}
	return 0;
}

static void on_spawn(struct init *in, const struct sr_msg *req, struct sr_msg_extra *ex)
{
	struct sr_msg m = {.type = SR_MSG_SPAWNED, .id = req->id, .flags = req->flags};
	struct sr_spawn_spec spec = {0};
	struct spawn s = {.stdio = {-1, -1, -1}, .pty = -1};
	struct sr_error err = {0};
	_cleanup_close_ int master = -1, slave = -1;
	bool pty = req->flags & SR_SPAWN_PTY;
	struct proc *pr;
	pid_t pid;

	if (req->flags & SR_SPAWN_AGENT) {
		s.argv = in->p->agent->argv.items;
		s.envp = in->p->envp.items;
	} else if (sr_spawn_decode(ex->len ? ex->payload : NULL, ex->len, &spec) < 0) {
		sr_error_msg(&err, -EBADMSG, "spawn: a malformed request");
		goto fail;
	} else {
		s.argv = spec.argv;
		s.envp = spec.envp;
		s.cwd = spec.cwd;
	}
	if (spawn_stdio(req, ex, &s, &master, &slave, &err) < 0)
		goto fail;
	if ((req->flags & SR_SPAWN_PARK) && pty) {
		sr_error_msg(&err, -EINVAL, "spawn: a parked process has no pty");
		goto fail;
	}
	pid = req->flags & SR_SPAWN_PARK ? init_spawn_parked(&s, &err) : init_spawn(&s, &err);
	if (pid < 0)
		goto fail;
	if (!in->spawned_once) {
		in->spawned_once = true;
		/* Test builds only, empty otherwise (fault.h). */
		sr_fault_point("child", "agent forked");
	}
	if (add_proc(in, pid, req->flags & SR_SPAWN_ENDS_SANDBOX,
		     (req->flags & SR_SPAWN_ENDS_SANDBOX) && (req->flags & SR_SPAWN_HOLD)) < 0) {
		/* Untracked, it would run unreported: not at all, then. */
		kill(pid, SIGKILL);
		sr_error_errno(&err, -ENOMEM, "spawn");
		goto fail;
	}
	m.pid = pid;
	sr_spawn_spec_free(&spec);
	sr_msg_extra_close(ex);
	if (send_fd_or_die(in->p->sock, &m, pty ? master : -1) == 0)
		return;
	/* Nobody gets its pty: the process is killed, and never reported (an orphan). */
	kill(-pid, SIGKILL);
	kill(pid, SIGKILL);
	pr = find_proc(in, pid);
	*pr = in->procs[--in->n_procs];
	sr_error_errno(&err, -ETOOMANYREFS,
		       "pass the pty to the host (past the fds in flight this uid may have, a "
		       "count its sandboxes share)");
fail:
	sr_spawn_spec_free(&spec);
	sr_msg_extra_close(ex);
	spawn_failed(in, req->id, &err);
}

/* To the process's group, as a terminal would: pipelines included. Spawned processes only. */
static void on_signal_request(struct init *in, const struct sr_msg *req)
{
	struct proc *pr = find_proc(in, req->pid);
	int sig = req->flags;

	if (!pr || sig <= 0 || sig >= NSIG)
		return;
	/* One that may end it (not a resize, job control, SIGCHLD, SIGURG). */
	if (sig != SIGCONT && sig != SIGWINCH && sig != SIGCHLD && sig != SIGURG &&
	    sig != SIGSTOP && sig != SIGTSTP && sig != SIGTTIN && sig != SIGTTOU) {
		pr->counting = true;
		count_cuts(in);
	}
	kill(-req->pid, sig);
}

/* How much the sandbox has used so far, for `inspect` where no cgroup counts it. */
static void on_stat(struct init *in, const struct sr_msg *req)
{
	struct sr_msg m = {.type = SR_MSG_STATS, .id = req->id};

	init_usage_so_far(in->p, &m);
	send_or_die(in->p->sock, &m);
}

/*
 * A TCP connection to a port of the sandbox's loopback, for the host to
 * relay a published port to (`sandbox-run port`): made here, in the
 * sandbox's network namespace, with the sandbox's own rights, so the host
 * needs no way into the namespace. 127.0.0.1 first, then ::1; the
 * connect completes on the host's side (non-blocking).
 */
static void on_connect(struct init *in, const struct sr_msg *req)
{
	struct sr_msg m = {.type = SR_MSG_CONNECTED, .id = req->id};
	struct sockaddr_in v4 = {.sin_family = AF_INET,
				 .sin_port = htons((uint16_t)req->flags),
				 .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	struct sockaddr_in6 v6 = {.sin6_family = AF_INET6,
				  .sin6_port = htons((uint16_t)req->flags),
				  .sin6_addr = IN6ADDR_LOOPBACK_INIT};
	const struct sockaddr *addrs[] = {(struct sockaddr *)&v4, (struct sockaddr *)&v6};
	const socklen_t lens[] = {sizeof(v4), sizeof(v6)};
	int e = -EINVAL;

	for (size_t i = 0; req->flags > 0 && req->flags < 65536 && i < 2; i++) {
		_cleanup_close_ int fd =
		    socket(addrs[i]->sa_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);

		if (fd < 0) {
			e = sr_negerrno();
			continue;
		}
		if (connect(fd, addrs[i], lens[i]) < 0 && errno != EINPROGRESS) {
			e = sr_negerrno();
			continue;
		}
		e = send_fd_or_die(in->p->sock, &m, fd);
		if (e == 0)
			return;
		break;
	}
	m = (struct sr_msg){.type = SR_MSG_CONNECT_FAILED, .id = req->id, .code = e};
	send_or_die(in->p->sock, &m);
}

/* A worker for a tar stream in or out (cp, snapshot): WORKED says how it went, once it ends. */
static void on_work(struct init *in, const struct sr_msg *req, struct sr_msg_extra *ex)
{
	struct sr_error err = {0};
	int report = -1;
	pid_t pid = sr_work_start(in->p, req->flags, ex->len ? ex->payload : NULL,
				  ex->n_fds ? ex->fds[0] : -1, &report, &err);

	if (pid > 0 && add_proc(in, pid, false, false) < 0) {
		kill(pid, SIGKILL);
		close(report);
		pid = sr_error_errno(&err, -ENOMEM, "worker");
	}
	if (pid < 0) {
		struct sr_msg m = {.type = SR_MSG_WORKED, .id = req->id, .code = err.code};

		snprintf(m.text, sizeof(m.text), "%s", err.msg);
		send_or_die(in->p->sock, &m);
		return;
	}
	in->procs[in->n_procs - 1].report_fd = report;
	in->procs[in->n_procs - 1].work_id = req->id;
	if (req->value > 0)
		in->procs[in->n_procs - 1].deadline_ns = sr_monotonic_ns() + req->value * 1000000;
}

/*
 * The host gave up on a worker (its client hung up): killed, with its
 * session. It runs as the agent's uid, so the agent can stop it, and a
 * stopped worker would wait on its pipe forever; SIGKILL ends it stopped
 * or not. Its end is reported as any worker's (WORKED).
 */
static void on_cancel(struct init *in, const struct sr_msg *req)
{
	for (size_t i = 0; i < in->n_procs; i++) {
		const struct proc *pr = &in->procs[i];

		if (pr->report_fd < 0 || pr->work_id != req->id)
			continue;
		/* Its group is its own (setsid()), unless it has not got that far. */
		kill(-pr->pid, SIGKILL);
		kill(pr->pid, SIGKILL);
	}
}

/* A worker is gone: what it reported (nothing: done), or how it died. */
static void worked(struct init *in, const struct proc *pr, int status)
{
	struct sr_msg m = {.type = SR_MSG_WORKED, .id = pr->work_id};
	struct sr_error e;
	ssize_t n = SR_RETRY(read(pr->report_fd, &e, sizeof(e)));

	close(pr->report_fd);
	if (n == (ssize_t)sizeof(e)) {
		e.msg[sizeof(e.msg) - 1] = '\0';
		m.code = e.code < 0 && e.code >= -4095 ? e.code : -EIO;
		snprintf(m.text, sizeof(m.text), "%s", e.msg);
	} else if (pr->late) {
		m.code = -ETIMEDOUT;
		snprintf(m.text, sizeof(m.text), "stopped at its time limit");
	} else if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
		m.code = -EIO;
		snprintf(m.text, sizeof(m.text), "the worker %s %d",
			 WIFSIGNALED(status) ? "was killed by signal" : "failed with status",
			 WIFSIGNALED(status) ? WTERMSIG(status) : WEXITSTATUS(status));
	}
	send_or_die(in->p->sock, &m);
}

/*
 * A process of ours is gone (reaped by the SIGCHLD loop or by end_all()):
 * a worker's WORKED, or a spawned process's EXIT. Not the one that ends
 * the sandbox: on_signals() says that one.
 */
static void reaped(struct init *in, pid_t pid, int status, const struct rusage *ru)
{
	struct proc *pr = find_proc(in, pid);
	struct sr_msg m = {.type = SR_MSG_EXIT, .pid = pid, .status = status};

	if (!pr)
		return; /* an orphan: reaped, nothing to say */
	if (pr->ends_sandbox) {
		/* Killed by a HALT: the sandbox's end, said by HALTED. */
	} else if (pr->report_fd >= 0) {
		worked(in, pr, status);
	} else {
		init_rusage_msg(&m, ru);
		if (pr->cut_user_us + pr->cut_sys_us > m.user_us + m.sys_us) {
			m.user_us = pr->cut_user_us;
			m.sys_us = pr->cut_sys_us;
		}
		m.value = init_disk_used(in->p);
		send_or_die(in->p->sock, &m);
	}
	*pr = in->procs[--in->n_procs];
}

/* Workers past their time limit (WORK's value) are killed: holding the sandbox is bounded. */
static int64_t next_deadline(struct init *in)
{
	int64_t now = sr_monotonic_ns(), next = 0;

	for (size_t i = 0; i < in->n_procs; i++) {
		struct proc *pr = &in->procs[i];

		if (!pr->deadline_ns || pr->late)
			continue;
		if (pr->deadline_ns <= now) {
			pr->late = true;
			kill(pr->pid, SIGKILL);
		} else if (!next || pr->deadline_ns < next) {
			next = pr->deadline_ns;
		}
	}
	return next;
}

static __attribute__((noreturn)) void end_sandbox(struct init *in)
{
	struct sr_msg m = {.type = SR_MSG_ENDED};

	end_all(in);
	m.value = init_disk_used(in->p);
	(void)sr_msg_send(in->p->sock, &m);
	_exit(0);
}

/*
 * A request that came broken: its fds did not all fit (the agent, of
 * PID 1's uid, can lower its RLIMIT_NOFILE where the filter lets it), or
 * it is malformed. Answered as failed, so that nobody on the host waits
 * for it; m: its header, NULL when none came whole.
 */
static void refuse(struct init *in, const struct sr_msg *req)
{
	struct sr_error err = {0};
	struct sr_msg m;

	if (!req)
		return;
	sr_error_msg(&err, -EBADMSG, "PID 1 could not take the request whole");
	switch (req->type) {
	case SR_MSG_SPAWN:
		spawn_failed(in, req->id, &err);
		break;
	case SR_MSG_WORK:
		m = (struct sr_msg){.type = SR_MSG_WORKED, .id = req->id, .code = err.code};
		snprintf(m.text, sizeof(m.text), "%s", err.msg);
		send_or_die(in->p->sock, &m);
		break;
	case SR_MSG_CONNECT:
		m = (struct sr_msg){.type = SR_MSG_CONNECT_FAILED, .id = req->id, .code = err.code};
		send_or_die(in->p->sock, &m);
		break;
	default:
		break;
	}
}

/* One request from the host; EOF: the host is gone, and the sandbox with it. */
static void on_request(struct init *in)
{
	struct sr_msg_extra ex = {.payload = in->payload, .cap = SR_MSG_PAYLOAD_MAX + 1};
	struct sr_msg m = {0};
	int r = sr_msg_recv_full(in->p->sock, &m, &ex);

	if (r == 0) {
		end_all(in);
		_exit(0);
	}
	if (r < 0) {
		refuse(in, r == -EBADMSG ? &m : NULL);
		return;
	}
	/* Held: nothing of the sandbox's runs any more. */
	if (in->held && (m.type == SR_MSG_SPAWN || m.type == SR_MSG_CONNECT)) {
		struct sr_error err = {0};
		struct sr_msg no = {.type = SR_MSG_CONNECT_FAILED, .id = m.id, .code = -ESRCH};

		sr_error_msg(&err, -ESRCH, "the sandbox's processes have ended");
		if (m.type == SR_MSG_SPAWN)
			spawn_failed(in, m.id, &err);
		else
			send_or_die(in->p->sock, &no);
		sr_msg_extra_close(&ex);
		return;
	}
	switch (m.type) {
	case SR_MSG_SPAWN:
		on_spawn(in, &m, &ex);
		break;
	case SR_MSG_HALT: {
		struct sr_msg halted = {.type = SR_MSG_HALTED, .id = m.id};

		end_all(in);
		in->held = true;
		halted.value = init_disk_used(in->p);
		send_or_die(in->p->sock, &halted);
		break;
	}
	case SR_MSG_SIGNAL:
		on_signal_request(in, &m);
		break;
	case SR_MSG_STAT:
		on_stat(in, &m);
		break;
	case SR_MSG_WORK:
		on_work(in, &m, &ex);
		break;
	case SR_MSG_CANCEL:
		on_cancel(in, &m);
		break;
	case SR_MSG_CONNECT:
		on_connect(in, &m);
		break;
	case SR_MSG_END:
		end_sandbox(in);
	default:
		break;
	}
	sr_msg_extra_close(&ex);
}

/* The process that ends the sandbox (the agent of a run), if there is one. */
static struct proc *ends_proc(struct init *in)
{
	for (size_t i = 0; i < in->n_procs; i++)
		if (in->procs[i].ends_sandbox)
			return &in->procs[i];
	return NULL;
}

/*
 * SIGCHLD: every zombie reaped; a spawned process's end reported. Any
 * other signal can only come from inside the sandbox (its host asks by
 * message): passed to the agent's process group, where there is one, as
 * an init does for its service -- the agent can only signal itself that
 * way -- and dropped otherwise. Every one is read, so none stays pending.
 */
static void on_signals(struct init *in)
{
	struct signalfd_siginfo si;

	while (read(in->sigfd, &si, sizeof(si)) == (ssize_t)sizeof(si)) {
		struct proc *agent = ends_proc(in);

		if (si.ssi_signo != SIGCHLD && agent && !in->held)
			kill(-agent->pid, (int)si.ssi_signo);
	}
	for (;;) {
		struct rusage ru;
		struct proc *pr;
		struct sr_msg m = {.type = SR_MSG_EXIT};
		bool hold;
		int st;
		pid_t w = wait4(-1, &st, WNOHANG | __WALL, &ru);

		if (w <= 0)
			break;
		pr = find_proc(in, w);
		if (!pr || !pr->ends_sandbox) {
			reaped(in, w, st, &ru);
			continue;
		}
		m.pid = w;
		m.status = st;
		init_rusage_msg(&m, &ru);
		hold = pr->hold;
		*pr = in->procs[--in->n_procs];
		/*
		 * That is the end of the sandbox, as in production: whatever it
		 * left running dies now. Held, its files stay for the host.
		 */
		end_all(in);
		m.value = init_disk_used(in->p);
		if (!hold) {
			(void)sr_msg_send(in->p->sock, &m);
			_exit(0);
		}
		in->held = true;
		send_or_die(in->p->sock, &m);
	}
}

/*
 * PID 1's start: its own signals (all blocked, a signalfd), its stdin and
 * stdout on /dev/null, then READY with the disk's root and, with a tap,
 * TAP: the host side starts the sandbox's life from there. Any failure
 * ends PID 1, its host side told why where it can be.
 */
static void start(struct init *in, struct sr_plan *p)
{
	struct sr_msg m = {.type = SR_MSG_READY};
	sigset_t all;
	int null;

	/*
	 * Before anything of the agent's exists (the set-up was the last
	 * reader of argv): /proc/1/cmdline stays readable to the agent when
	 * PID 1 is non-dumpable (unlike environ and mem), and would show it
	 * sandbox-run's whole command line -- host paths, --env values.
	 */
	sr_proc_set_cmdline("sandbox-run-init", NULL);
	sigfillset(&all);
	sigprocmask(SIG_BLOCK, &all, NULL);
	in->sigfd = signalfd(-1, &all, SFD_CLOEXEC | SFD_NONBLOCK);
	in->payload = malloc(SR_MSG_PAYLOAD_MAX + 1);
	/*
	 * The caller's stdin and stdout are not PID 1's to hold: a process
	 * gets the stdio its SPAWN brings. stderr stays, for a sanitizer's
	 * report in test builds.
	 */
	null = open("/dev/null", O_RDWR | O_CLOEXEC);
	if (in->sigfd < 0 || !in->payload || null < 0 || dup2(null, 0) < 0 || dup2(null, 1) < 0) {
		struct sr_error err = {0};

		sr_error_errno(&err, sr_negerrno(), "start PID 1");
		sr_msg_send_error(p->sock, &err);
		_exit(125);
	}
	close(null);
	if (*sr_viewfs_frozen(p->views)) {
		m.flags = SR_READY_VIEWS_FROZEN;
		snprintf(m.text, sizeof(m.text), "%s", sr_viewfs_frozen(p->views));
	}
	/*
	 * The disk's root, for the host's count of its use (protocol.h); PID 1
	 * keeps none. Refused while the uid's fds in flight are past the limit
	 * (send_fd_or_die()): the sandbox is not made, and says why.
	 */
	if (send_fd_or_die(p->sock, &m, p->sources.disk) < 0) {
		struct sr_error err = {0};

		sr_error_errno(&err, -ETOOMANYREFS,
			       "start PID 1: pass the disk to the host (past the fds in flight "
			       "this uid may have, a count its sandboxes share)");
		sr_msg_send_error(p->sock, &err);
		_exit(125);
	}
	sr_closep(&p->sources.disk);
	/*
	 * pasta starts now, on the tap (net.h): its start-up (~70 ms to its
	 * first packet here) overlaps the agent's, not the set-up's, which two
	 * busy vCPUs slow down. PID 1 keeps no copy.
	 */
	if (p->sources.tap >= 0) {
		struct sr_msg tap = {.type = SR_MSG_TAP};

		if (pass_fd(p->sock, &tap, p->sources.tap) < 0)
			_exit(125);
		close(steal_fd(&p->sources.tap));
	}
}

/*
 * The set-up's heap (libnftables', populated in advance: nft.c) counts
 * against the sandbox's memory while PID 1 only waits. It is given back
 * once the sandbox has run 100 ms: trimming as soon as it starts made
 * short runs 1.5-2 ms slower, on PID 1's way to reaping the agent.
 */
#define TRIM_AFTER_MS 100

/*
 * The wait for this round, in ms (-1: none): until the heap's trim (done
 * here once it is due, *trim_at set to 0), or a worker's time limit.
 */
static int wait_ms(struct init *in, int64_t *trim_at)
{
	int64_t late = next_deadline(in);
	int timeout = -1;

	if (*trim_at) {
		int64_t left = (*trim_at - sr_monotonic_ns()) / 1000000;

		if (left > 0) {
			timeout = (int)left + 1;
		} else {
#ifdef M_TRIM_THRESHOLD /* glibc */
			malloc_trim(0);
#endif
			*trim_at = 0;
		}
	}
	if (late) {
		int64_t ms = (late - sr_monotonic_ns()) / 1000000 + 1;

		if (timeout < 0 || ms < timeout)
			timeout = (int)ms;
	}
	return timeout;
}

void sr_init_run(struct sr_plan *p)
{
	struct init in = {.p = p};
	int64_t trim_at;

	start(&in, p);
	trim_at = sr_monotonic_ns() + TRIM_AFTER_MS * 1000000LL;
	for (;;) {
		struct pollfd fds[2 + _SR_VIEW_MAX] = {
		    {.fd = p->sock, .events = POLLIN},
		    {.fd = in.sigfd, .events = POLLIN},
		};
		/* The views of /proc PID 1 serves (viewfs.h), each a FUSE connection. */
		size_t n = 2 + sr_viewfs_pollfds(p->views, fds + 2);

		if (poll(fds, n, wait_ms(&in, &trim_at)) < 0)
			continue;
		/* Exits first: an EXIT the host reads before a later SPAWNED of the same pid. */
		if (fds[1].revents)
			on_signals(&in);
		if (fds[0].revents)
			on_request(&in);
		sr_viewfs_serve(p->views, fds + 2, n - 2);
	}
}
