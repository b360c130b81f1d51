/* SPDX-License-Identifier: MIT */
#include "oci-init.h"
#include "util.h"

#include <signal.h>
#include <stdio.h>
#include <sys/prctl.h>
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

int sr_oci_init_main(int argc, char **argv)
{
	sigset_t all, none;
	pid_t pid;

	if (argc < 3 || strcmp(argv[1], "--") != 0) {
		fprintf(stderr, "usage: " SR_OCI_INIT " -- COMMAND [ARG...]\n");
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
