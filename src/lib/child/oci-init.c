/* SPDX-License-Identifier: MIT */
#include "oci-init.h"
#include "proc.h"
#include "units.h"
#include "util.h"

#include <signal.h>
#include <stdio.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>

/* As a run says it (cli/run.c): a status of its own, or 128+N for signal N. */
static int status_of(int wstatus)
{
	if (WIFEXITED(wstatus))
		return WEXITSTATUS(wstatus);
	if (WIFSIGNALED(wstatus))
		return 128 + WTERMSIG(wstatus);
	return 125;
}

static __attribute__((noreturn)) void agent(char **argv, const sigset_t *none)
{
	int e;

	/* A session of its own: no terminal of the caller's (CVE-2017-5226), a group to signal. */
	setsid();
	sigprocmask(SIG_SETMASK, none, NULL);
	execvp(argv[0], argv);
	e = errno;
	fprintf(stderr, "sandbox-run: %s: %s%s\n", argv[0], strerror(e),
		e == ENOENT ? " (not found on the sandbox's PATH or in the workspace)" : "");
	_exit(e == ENOENT || e == ENOTDIR ? 127 : 126);
}

/* Every process but us: the agent's leftovers, as a run's PID 1 ends them. */
static void end_the_rest(void)
{
	kill(-1, SIGKILL);
	while (waitpid(-1, NULL, 0) > 0 || errno == EINTR)
		;
}

/*
 * --nproc N: RLIMIT_NPROC, lowered here, in the container's user
 * namespace, as a run's PID 1 lowers it (cgroup-rlimit.c). Not in
 * config.json's rlimits: crun sets those before it makes the user
 * namespace, and the kernel then holds every task of the runtime's user
 * on the host to it as well (a namespace's own limit is its creator's
 * RLIMIT_NPROC): rootless, the exporter's shells and browser threads
 * counted against --pids, and past it the container never started.
 */
static int limit_tasks(const char *arg)
{
	uint64_t n;

	if (sr_parse_count(arg, &n) < 0 || n == 0)
		return -EINVAL;
	return sr_proc_lower_rlimit(RLIMIT_NPROC, n);
}

int sr_oci_init_main(int argc, char **argv)
{
	sigset_t all, none;
	pid_t pid;
	int r;

	if (argc >= 5 && strcmp(argv[1], "--nproc") == 0) {
		r = limit_tasks(argv[2]);
		if (r < 0) {
			fprintf(stderr, "sandbox-run: RLIMIT_NPROC %s: %s\n", argv[2],
				strerror(-r));
			return 125;
		}
		argc -= 2;
		argv += 2;
	}
	if (argc < 3 || strcmp(argv[1], "--") != 0) {
		fprintf(stderr, "usage: " SR_OCI_INIT " [--nproc N] -- COMMAND [ARG...]\n");
		return 125;
	}
	prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
	sigfillset(&all);
	sigemptyset(&none);
	/* Everything blocked and taken by sigwaitinfo(): no handler ever runs in PID 1. */
	sigprocmask(SIG_SETMASK, &all, NULL);
	pid = fork();
	if (pid < 0) {
		fprintf(stderr, "sandbox-run: fork: %s\n", strerror(errno));
		return 125;
	}
	if (pid == 0)
		agent(argv + 2, &none);
	for (;;) {
		siginfo_t si;
		int wstatus;
		pid_t done;

		if (sigwaitinfo(&all, &si) < 0)
			continue;
		if (si.si_signo != SIGCHLD) {
			/* Passed on to the agent's group, as a run's PID 1 does. */
			kill(-pid, si.si_signo);
			continue;
		}
		while ((done = waitpid(-1, &wstatus, WNOHANG)) > 0)
			if (done == pid) {
				end_the_rest();
				return status_of(wstatus);
			}
	}
}
