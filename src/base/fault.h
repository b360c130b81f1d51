/* SPDX-License-Identifier: MIT */
/*
 * Test-only fault injection: configure --enable-fault-injection.
 *
 * SANDBOX_RUN_TEST_STOP_AT=<point name or number> makes the process that
 * reaches that point of the set-up say so on stderr ("sandbox-run: fault
 * injection: stopped at N (NAME)") and wait there forever, so that a test
 * can SIGKILL sandbox-run at every step and prove that nothing is left
 * behind (tests/security/fault.sh). The points are listed in fault.c, in
 * the order a run reaches them.
 *
 * Normal builds do not compile fault.c and these calls are empty inline
 * functions: a shipped binary must not react to the variable at all.
 * Whoever sets a caller's environment could otherwise freeze sandbox-run
 * half-way, holding a half-built sandbox (every namespace created, the
 * child still holding all its capabilities, no seccomp yet) open for as
 * long as they like, or make a run that should fail closed hang instead.
 */
#pragma once

#include "log.h"

#include <stdbool.h>

#define SR_FAULT_ENV "SANDBOX_RUN_TEST_STOP_AT"
/*
 * SANDBOX_RUN_TEST_RESUME=1: the point SANDBOX_RUN_TEST_STOP_AT names
 * waits for SIGUSR1 instead of forever, then the run goes on. A test can
 * so change the host between two steps -- swap a symbolic link into a
 * --bind source while the child is stopped before it opens its sources,
 * and see the run refuse it (tests/security/race.sh). After the "stopped
 * at" line comes "sandbox-run: fault injection: pid P waits for SIGUSR1":
 * P as the caller's /proc sees it, the child's too, which is PID 1 of its
 * own PID namespace (fault.c says how). A handler, not the default
 * action: PID 1 of a PID namespace gets only the signals it handles.
 */
#define SR_FAULT_RESUME_ENV "SANDBOX_RUN_TEST_RESUME"
/*
 * SANDBOX_RUN_TEST_FAIL=<name> makes the step of that name (fail_names in
 * fault.c) fail as if the kernel had refused it: for the steps whose
 * failure is not fatal, so a test can see the run go on and say so.
 */
#define SR_FAULT_FAIL_ENV "SANDBOX_RUN_TEST_FAIL"
/*
 * SANDBOX_RUN_TEST_PROC_SYS=DIR: doctor, and the diagnosis a failed run
 * prints (doctor.h), read the user-namespace sysctls under DIR instead of
 * /proc/sys, so that a test can show them hosts this one is not (Ubuntu's
 * AppArmor restriction, Debian's unprivileged_userns_clone=0). They only
 * read it; still test builds only, as the rest: what a shipped binary
 * reports must be the host's, whoever set its environment.
 */
#define SR_FAULT_PROC_SYS_ENV "SANDBOX_RUN_TEST_PROC_SYS"

#ifdef SR_FAULT_INJECTION
/* Refuses a value that names no point, so a test cannot silently stop nowhere. */
int sr_fault_validate(struct sr_error *err);
/* Stops here (forever, or until SIGUSR1) if the variable names the point "SIDE WHAT". */
void sr_fault_point(const char *side, const char *what);
/* The child's point "child WHEN STEP" around each entry of setup.c's steps[]. */
void sr_fault_step(const char *when, const char *step);
/* Whether the variable asks step `name` to fail. */
bool sr_fault_fail(const char *name);
/* The /proc/sys to read sysctls from: "/proc/sys" unless the variable says otherwise. */
const char *sr_fault_proc_sys(void);
#else
static inline int sr_fault_validate(struct sr_error *err)
{
	return 0;
}

static inline void sr_fault_point(const char *side, const char *what)
{
}

static inline void sr_fault_step(const char *when, const char *step)
{
}

static inline bool sr_fault_fail(const char *name)
{
	return false;
}

static inline const char *sr_fault_proc_sys(void)
{
	return "/proc/sys";
}
#endif
