/* SPDX-License-Identifier: MIT */
/*
 * PID 1 of an exported bundle's container (export/oci.h): what a run's
 * PID 1 is to its agent, for a runtime that has none of its own. An OCI
 * runtime makes the first process of the container PID 1 of its PID
 * namespace, and PID 1 is special: the kernel drops every signal sent to
 * it from inside that it has no handler for (an agent's `kill $$`, a
 * SIGTERM it does not catch), and orphans are its to reap. So the bundle
 * runs this, sandbox-run's own binary bound in as SR_OCI_INIT, which
 * spawns the agent as a run's PID 1 does -- a new session, signals
 * unblocked -- passes signals on to it, reaps every process, ends the
 * rest when the agent ends, and exits with the agent's status (128+N for
 * a signal N, as a run reports it). It makes itself non-dumpable first,
 * as a run's PID 1 is: the agent can neither ptrace it nor read its
 * /proc entries.
 */
#pragma once

/* Where the bundle binds sandbox-run's binary; its name is how main() knows the role. */
#define SR_OCI_INIT	 "/run/sandbox-run-init"
#define SR_OCI_INIT_NAME "sandbox-run-init"

/*
 * argv: SR_OCI_INIT [--nproc N] -- COMMAND [ARG...], --nproc the
 * sandbox's RLIMIT_NPROC (--pids where no cgroup holds it). Returns the
 * exit status.
 */
int sr_oci_init_main(int argc, char **argv);
