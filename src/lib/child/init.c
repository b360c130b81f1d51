/* SPDX-License-Identifier: MIT */
/*
 * PID 1 of the sandbox. It stays in sandbox-run's code (no exec), so it is
 * non-dumpable (set in sandbox.c) and runs with the full hardening already
 * applied: no capabilities, no_new_privs, seccomp.
 *
 * As PID 1 of a PID namespace it only receives the signals it has not
 * left at their default; it blocks them all and takes them with
 * sigwaitinfo(), so nothing interrupts it and no handler runs in it.
 */
#include "init.h"
#include "fault.h"
#include "protocol.h"
#include "util.h"

#include <fcntl.h>
#include <linux/close_range.h>
#include <malloc.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#ifdef SR_SANITIZERS
#include <sanitizer/asan_interface.h>
#endif

/* The code of the spawned child (start_agent). */
#if defined(__has_attribute)
#if __has_attribute(no_sanitize_address)
#define SR_SPAWNED __attribute__((no_sanitize_address))
#endif
#endif
#ifndef SR_SPAWNED
#define SR_SPAWNED
#endif

#define SR_DEFAULT_PATH "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

struct exec_failure {
	int code;
	int status;
	char text[512];
};

static const char *env_get(const struct sr_strv *envp, const char *key)
{
	size_t kl = strlen(key);

	for (size_t i = 0; i < envp->n; i++)
		if (strncmp(envp->items[i], key, kl) == 0 && envp->items[i][kl] == '=')
			return envp->items[i] + kl + 1;
	return NULL;
}

/*
 * execvpe() searches the PATH of the caller's environment, not of the one
 * it is given: search the sandbox's PATH ourselves. The error kept is the
 * most telling one, as a shell does: "cannot execute" beats "not found".
 */
SR_SPAWNED static int exec_agent(char *const *argv, const struct sr_strv *envp)
{
	const char *path = env_get(envp, "PATH");
	char buf[4096];
	int saved = ENOENT;

	if (strchr(argv[0], '/')) {
		execve(argv[0], argv, envp->items);
		return -errno;
	}
	if (!path)
		path = SR_DEFAULT_PATH;
	while (*path) {
		const char *end = strchrnul(path, ':');
		size_t dl = (size_t)(end - path);

		if (dl == 0)
			dl = 1, path = "."; /* an empty entry is the cwd */
		if (dl + 1 + strlen(argv[0]) < sizeof(buf)) {
			memcpy(buf, path, dl);
			buf[dl] = '/';
			strcpy(buf + dl + 1, argv[0]);
			execve(buf, argv, envp->items);
			if (errno != ENOENT && errno != ENOTDIR)
				saved = errno;
		}
		path = *end ? end + 1 : end;
	}
	return -saved;
}

SR_SPAWNED __attribute__((noreturn)) static void agent_child(struct sr_plan *p, int report_fd)
{
	struct exec_failure f = {0};
	sigset_t none;
	int r;

	/*
	 * A new session: the agent has no controlling terminal, so even a
	 * TIOCSTI that got past seccomp could not push input into the caller's
	 * shell (CVE-2017-5226).
	 */
	if (setsid() < 0) {
		r = -errno;
		goto fail;
	}
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	/* The report pipe is O_CLOEXEC: a successful exec closes it, which is the signal. */
	syscall(SYS_close_range, 3, ~0U, CLOSE_RANGE_CLOEXEC);
	r = exec_agent(p->agent->argv.items, &p->envp);
fail:
	f.code = r;
	f.status = r == -ENOENT || r == -ENOTDIR ? 127 : 126;
	snprintf(f.text, sizeof(f.text), "%s: %s%s", p->agent->argv.items[0], strerror(-r),
		 r == -ENOENT ? " (not found on the sandbox's PATH or in the workspace)" : "");
	(void)!write(report_fd, &f, sizeof(f));
	_exit(f.status);
}

/* Bytes in use on the sandbox's disk tmpfs (/tmp is a bind of it). */
static int64_t disk_used(void)
{
	struct statfs sf;

	if (statfs("/tmp", &sf) < 0 || sf.f_blocks == 0)
		return -1;
	return (int64_t)(sf.f_blocks - sf.f_bfree) * (int64_t)sf.f_bsize;
}

struct spawn {
	struct sr_plan *p;
	int report_fd;
};

SR_SPAWNED static int agent_entry(void *arg)
{
	const struct spawn *s = arg;

	agent_child(s->p, s->report_fd);
}

/*
 * The agent is spawned as posix_spawn() does it: clone(CLONE_VM |
 * CLONE_VFORK), the child on a stack of its own in PID 1's memory, PID 1
 * suspended until the child has exec'd or exited. fork() would copy PID
 * 1's page tables and write-protect its memory only for the exec to throw
 * the copy away: 1 ms of every run's start-up on the VM measured
 * (docs/performance.md).
 *
 * What the child shares with PID 1 and must not disturb: it writes its
 * own stack, fd table (no CLONE_FILES) and signal mask, and, through the
 * thread-local storage it shares, PID 1's errno, which PID 1 does not
 * read after a clone() that succeeded. It allocates nothing. No signal
 * reaches it before its exec: PID 1 blocks them all and forwards them to
 * the agent only once start_agent() has returned. PID 1 has no handler
 * that could run in it, bar a sanitizer build's for faults.
 *
 * The stack is an array in this frame, as musl's posix_spawn() has it.
 * It has no guard page: PID 1's live frames lie next to it, so the child
 * must stay within it, and does by a wide margin. agent_child() and what
 * it calls do not recurse and allocate no variable-length arrays; the
 * deepest need, a failed exec reported with snprintf(), measured 7 KiB
 * (exec_agent()'s 4 KiB path buffer among it; under 10 KiB in a
 * sanitizer build), against 64 KiB here.
 *
 * The functions the child runs (SR_SPAWNED) are built without
 * AddressSanitizer where it is on: their frames would leave its poison in
 * the shadow of that array when the exec ends them, and its no-return
 * hook would unpoison PID 1's live frames.
 */
#define SPAWN_STACK_BYTES (64 * 1024)
/* clone() takes the end the stack grows from: the top but on hppa, as in glibc's posix_spawn. */
#ifdef __hppa__
#define SPAWN_STACK_START(a) ((void *)(a))
#else
#define SPAWN_STACK_START(a) ((void *)((a) + sizeof(a)))
#endif

static pid_t start_agent(struct sr_plan *p)
{
	_Alignas(16) char stack[SPAWN_STACK_BYTES];
	struct exec_failure f;
	struct spawn s = {.p = p};
	int pipefd[2];
	pid_t pid;
	ssize_t n;

	if (pipe2(pipefd, O_CLOEXEC) < 0)
		return -errno;
	s.report_fd = pipefd[1];
	pid = clone(agent_entry, SPAWN_STACK_START(stack), CLONE_VM | CLONE_VFORK | SIGCHLD, &s);
	if (pid < 0) {
		int e = -errno;

		close(pipefd[0]);
		close(pipefd[1]);
		return e;
	}
#ifdef SR_SANITIZERS
	/* Sanitizer builds check SR_SPAWNED at every run: stale poison here would fault later. */
	if (__asan_region_is_poisoned(stack, sizeof(stack))) {
		fprintf(stderr, "sandbox-run: the agent's spawn left poison on PID 1's stack\n");
		abort();
	}
#endif
	close(pipefd[1]);
	n = SR_RETRY(read(pipefd[0], &f, sizeof(f)));
	close(pipefd[0]);
	if (n == (ssize_t)sizeof(f)) {
		struct sr_error err = {.status = f.status};

		f.text[sizeof(f.text) - 1] = '\0';
		sr_error_msg(&err, f.code, "%s", f.text);
		sr_msg_send_error(p->sock, &err);
		waitpid(pid, NULL, 0);
		_exit(f.status);
	}
	return pid;
}

/*
 * Every other process of the sandbox, killed and reaped here rather than
 * by the kernel as PID 1 exits: that teardown reaps them with SIGCHLD
 * ignored, so their CPU time never reached PID 1's rusage, all the
 * supervisor has where no cgroup counts it. kill(-1) spares PID 1; it is
 * repeated until nothing is left, for what was being forked meanwhile.
 */
static void end_all(void)
{
	for (;;) {
		while (waitpid(-1, NULL, __WALL | WNOHANG) > 0)
			;
		if (kill(-1, SIGKILL) < 0 && errno == ESRCH)
			break;
		(void)waitpid(-1, NULL, __WALL);
	}
}

/* The supervisor's END (protocol.h), if it has come: read whenever PID 1 wakes. */
static bool end_requested(int sock)
{
	struct pollfd pfd = {.fd = sock, .events = POLLIN};
	struct sr_msg m;

	return poll(&pfd, 1, 0) == 1 && (pfd.revents & POLLIN) &&
	       sr_msg_recv(sock, &m, NULL) == 1 && m.type == SR_MSG_END;
}

/*
 * /proc/1/cmdline stays world-readable when PID 1 is non-dumpable (unlike
 * environ and mem): overwrite the argument area, which would otherwise
 * show the agent sandbox-run's whole command line -- host paths, --env
 * values. It is one block, from argv[0] to the end of the last argument.
 */
static void hide_cmdline(const struct sr_config *c)
{
	char *start = program_invocation_name;
	char *end;
	static const char name[] = "sandbox-run-init";

	if (!start || c->argc < 1 || !c->argv[c->argc - 1])
		return;
	end = c->argv[c->argc - 1] + strlen(c->argv[c->argc - 1]) + 1;
	if (end <= start || (size_t)(end - start) > 1 << 20)
		return;
	memset(start, 0, (size_t)(end - start));
	if ((size_t)(end - start) > sizeof(name))
		memcpy(start, name, sizeof(name));
}

/*
 * The set-up's heap (libnftables', populated in advance: nft.c) counts
 * against the sandbox's memory while PID 1 only waits. It is given back
 * once the agent has run 100 ms: trimming as soon as it starts made short
 * runs 1.5-2 ms slower, on PID 1's way to reaping the agent.
 */
#define TRIM_AFTER_NS (100 * 1000 * 1000LL)

void sr_init_run(struct sr_plan *p)
{
	struct sr_msg m = {.type = SR_MSG_EXEC};
	int64_t trim_at;
	bool trimmed = false;
	sigset_t all;
	pid_t agent;
	int status = 0;

	/* Before the agent exists; the setup was the last reader of argv. */
	hide_cmdline(p->config);
	sigfillset(&all);
	sigprocmask(SIG_BLOCK, &all, NULL);
	agent = start_agent(p);
	if (agent < 0) {
		struct sr_error err = {0};

		sr_error_errno(&err, (int)agent, "start the agent");
		sr_msg_send_error(p->sock, &err);
		_exit(125);
	}
	/* Test builds only, empty otherwise (fault.h). */
	sr_fault_point("child", "agent forked");
	m.pid = agent;
	if (sr_msg_send(p->sock, &m) < 0)
		_exit(125);
	/*
	 * pasta starts now, on the tap (net.h): its start-up (~70 ms to its
	 * first packet here) overlaps the agent's, not the set-up's, which two
	 * busy vCPUs slow down. PID 1 keeps no copy.
	 */
	if (p->sources.tap >= 0) {
		struct sr_msg tap = {.type = SR_MSG_TAP};

		if (sr_msg_send_fd(p->sock, &tap, p->sources.tap) < 0)
			_exit(125);
		close(steal_fd(&p->sources.tap));
	}

	trim_at = sr_monotonic_ns() + TRIM_AFTER_NS;
	for (;;) {
		int64_t left = trim_at - sr_monotonic_ns();
		struct timespec wait = {left / 1000000000, left % 1000000000};
		siginfo_t si;
		bool done = false;
		int sig;

		if (!trimmed && left <= 0) {
#ifdef M_TRIM_THRESHOLD /* glibc */
			malloc_trim(0);
#endif
			trimmed = true;
		}
		/* No timeout once trimmed: sigwaitinfo(). */
		sig = sigtimedwait(&all, &si, trimmed ? NULL : &wait);
		if (sig < 0)
			continue;
		if (end_requested(p->sock)) {
			int st;

			/* Ended at the deadline by itself: its own status stands. */
			if (waitpid(agent, &st, WNOHANG) == agent) {
				status = st;
				break;
			}
			end_all();
			m = (struct sr_msg){.type = SR_MSG_ENDED, .value = disk_used()};
			(void)sr_msg_send(p->sock, &m);
			_exit(0);
		}
		if (sig != SIGCHLD) {
			/* To the agent's process group: as a terminal would, pipelines included. */
			kill(-agent, sig);
			continue;
		}
		for (;;) {
			int st;
			pid_t w = waitpid(-1, &st, WNOHANG);

			if (w <= 0)
				break;
			if (w == agent) {
				status = st;
				done = true;
			}
		}
		if (done)
			break;
	}

	/*
	 * The agent is gone: that is the end of the sandbox, as in
	 * production. Whatever it left running dies now.
	 */
	end_all();
	m = (struct sr_msg){.type = SR_MSG_EXIT, .status = status, .value = disk_used()};
	(void)sr_msg_send(p->sock, &m);
	_exit(0);
}
