/* SPDX-License-Identifier: MIT */
/*
 * Test-only fault injection (see fault.h). Compiled only with
 * configure --enable-fault-injection.
 */
#include "fault.h"
#include "util.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

/*
 * Every point, in the order a run reaches them; the number of a point is
 * its position, from 1. The supervisor's and the child's run concurrently
 * after clone, so "in order" is per process. The child's "before"/"after"
 * pairs follow the steps[] table of setup.c; a point added there must be
 * added here (sr_fault_validate() would refuse its name otherwise).
 */
static const char *const points[] = {
    "supervisor resolved",
    "supervisor prepared",
    "supervisor cloned",
    "supervisor id maps",
    "supervisor cgroup",
    "supervisor network helper",
    "supervisor go",
    "child started",
    "child go",
    "child before sources",
    "child after sources",
    "child before user ids",
    "child after user ids",
    "child before filesystem",
    "child after filesystem",
    "child before network",
    "child after network",
    "child before hostname",
    "child after hostname",
    "child before inner user ids",
    "child after inner user ids",
    "child before limits",
    "child after limits",
    "child before capabilities",
    "child after capabilities",
    "child before seccomp",
    "child after seccomp",
    "child agent forked",
};

/*
 * Points of other verbs, named only (numbered on after points[]): the
 * numbers fault.sh walks with runs stay the run's. "apply checked":
 * apply's checks are done, nothing is written yet (changes-apply.c).
 */
static const char *const verb_points[] = {
    "apply checked",
};

/* What SANDBOX_RUN_TEST_FAIL may name: steps whose failure is not fatal. */
static const char *const fail_names[] = {
    "network tuning",
};

/* The wanted point's number, 0 when the variable is unset, -1 when it names none. */
static int wanted(void)
{
	const char *v = getenv(SR_FAULT_ENV);
	char *end;
	long n;

	if (!v || !*v)
		return 0;
	for (size_t i = 0; i < SR_ARRAY_SIZE(points); i++)
		if (strcmp(v, points[i]) == 0)
			return (int)i + 1;
	for (size_t i = 0; i < SR_ARRAY_SIZE(verb_points); i++)
		if (strcmp(v, verb_points[i]) == 0)
			return (int)(SR_ARRAY_SIZE(points) + i) + 1;
	errno = 0;
	n = strtol(v, &end, 10);
	if (errno || *end || n < 1 || n > (long)SR_ARRAY_SIZE(points))
		return -1;
	return (int)n;
}

int sr_fault_validate(struct sr_error *err)
{
	const char *fail = getenv(SR_FAULT_FAIL_ENV);
	bool known = !fail || !*fail;

	if (wanted() < 0)
		return sr_error_msg(err, -EINVAL,
				    "%s: no fault point '%s' (a number 1-%zu or a name from "
				    "src/fault.c)",
				    SR_FAULT_ENV, getenv(SR_FAULT_ENV), SR_ARRAY_SIZE(points));
	for (size_t i = 0; i < SR_ARRAY_SIZE(fail_names) && !known; i++)
		known = strcmp(fail, fail_names[i]) == 0;
	if (!known)
		return sr_error_msg(err, -EINVAL, "%s: no step '%s' to fail (see src/fault.c)",
				    SR_FAULT_FAIL_ENV, fail);
	return 0;
}

bool sr_fault_fail(const char *name)
{
	const char *fail = getenv(SR_FAULT_FAIL_ENV);

	return fail && strcmp(fail, name) == 0;
}

const char *sr_fault_proc_sys(void)
{
	const char *v = getenv(SR_FAULT_PROC_SYS_ENV);

	return v && *v ? v : "/proc/sys";
}

static bool resume_wanted(void)
{
	const char *v = getenv(SR_FAULT_RESUME_ENV);

	return v && *v;
}

/*
 * This process's pid in the caller's PID namespace: what a test signals.
 * The child is PID 1 of a namespace of its own, where getpid() says 1;
 * /proc/self names it in the namespace of the /proc it is read through,
 * which is the caller's until the child's filesystem step mounts the
 * sandbox's. So it is read at a process's first point ("child started"
 * for the child, which inherits the supervisor's copy but not its pid)
 * and kept for its later ones. (A supervisor that is itself PID 1 of a
 * namespace would pass its own on: no test runs it so.)
 */
static pid_t caller_pid(void)
{
	static pid_t pid, read_as;
	char buf[32];
	ssize_t n;

	if (pid > 0 && read_as == getpid())
		return pid;
	n = readlink("/proc/self", buf, sizeof(buf) - 1);
	if (n <= 0)
		return getpid();
	buf[n] = '\0';
	read_as = getpid();
	pid = (pid_t)atoi(buf);
	return pid;
}

static volatile sig_atomic_t resumed;

static void on_resume(int sig)
{
	resumed = 1;
}

/*
 * SIGUSR1 blocked before its handler is in place and the line is out, and
 * taken only in sigsuspend(): one sent as soon as the line is read is
 * neither lost nor fatal. What the process had before is put back.
 */
static void wait_for_resume(int n, const char *name)
{
	struct sigaction sa = {.sa_handler = on_resume}, old_sa;
	sigset_t usr1, old_mask, waiting;

	sigemptyset(&usr1);
	sigaddset(&usr1, SIGUSR1);
	sigprocmask(SIG_BLOCK, &usr1, &old_mask);
	sigaction(SIGUSR1, &sa, &old_sa);
	resumed = 0;
	dprintf(STDERR_FILENO,
		"sandbox-run: fault injection: stopped at %d (%s)\n"
		"sandbox-run: fault injection: pid %d waits for SIGUSR1\n",
		n, name, (int)caller_pid());
	waiting = old_mask;
	sigdelset(&waiting, SIGUSR1);
	while (!resumed)
		sigsuspend(&waiting);
	sigaction(SIGUSR1, &old_sa, NULL);
	sigprocmask(SIG_SETMASK, &old_mask, NULL);
}

void sr_fault_point(const char *side, const char *what)
{
	char name[128];
	int n = wanted();

	if (n <= 0)
		return;
	if (resume_wanted())
		caller_pid();
	snprintf(name, sizeof(name), "%s %s", side, what);
	if (strcmp(name, (size_t)n > SR_ARRAY_SIZE(points)
			     ? verb_points[(size_t)n - 1 - SR_ARRAY_SIZE(points)]
			     : points[n - 1]) != 0)
		return;
	if (resume_wanted()) {
		wait_for_resume(n, name);
		return;
	}
	/*
	 * pause(), not raise(SIGSTOP): PID 1 of a PID namespace ignores
	 * SIGSTOP sent from inside it, itself included. The line on stderr
	 * is how the test knows the point was reached.
	 */
	dprintf(STDERR_FILENO, "sandbox-run: fault injection: stopped at %d (%s)\n", n, name);
	for (;;)
		pause();
}

void sr_fault_step(const char *when, const char *step)
{
	char what[96];

	snprintf(what, sizeof(what), "%s %s", when, step);
	sr_fault_point("child", what);
}
