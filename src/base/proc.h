/* SPDX-License-Identifier: MIT */
/* What the host's ps shows of us. */
#pragma once

#include <stdint.h>

/*
 * Overwrites this process's whole argument area (argv[0] to the end of
 * the last argument, as long as /proc/self/cmdline says) with text, cut to
 * fit: /proc/PID/cmdline is readable by every user of the host (and, for
 * PID 1, by the agent), and the command line that started us may carry
 * host paths and --env values. The thread's name (comm) becomes comm.
 */
void sr_proc_set_cmdline(const char *text, const char *comm);

/*
 * Drops this process's pages of read-only file mappings (code and
 * constants of the binary and its libraries) from its resident set: a
 * long-lived process (a keeper) gives back what its set-up touched once.
 * The pages stay in the page cache, shared; the few the process uses
 * again come back on use. Writable mappings are never touched.
 */
void sr_proc_drop_clean_pages(void);

/*
 * This process's soft RLIMIT_NOFILE up to its hard one. For a process
 * that holds many fds (a keeper, serve), and for one that passes fds with
 * SCM_RIGHTS (exec, cp, a run, diff, apply, deploy's install, serve): the
 * kernel refuses a pass (ETOOMANYREFS) while the uid's fds in flight are
 * past the sender's soft limit, and the sandbox's processes, of the same
 * uid for an unprivileged caller, may fill them only to half the hard one
 * (child/init-spawn.c: limit_files()). A process that makes a sandbox
 * raises it after: PID 1 keeps the caller's, for its processes to take
 * their share from.
 */
void sr_proc_raise_fd_limit(void);

/*
 * No core dumps from this process, nor from what it runs: RLIMIT_CORE
 * {1, 1}, not {0, 0}. A pipe core_pattern (systemd-coredump, apport) is
 * run whatever the limit, save exactly 1 (fs/coredump.c: the value a core
 * handler runs with, so that its own crash does not recurse), and
 * systemd-coredump, which stores no core under a page, still journals the
 * crash with the process's environment (COREDUMP_ENVIRON): a deployment's
 * secrets. 1 is under ELF's least core (a page): no core file either.
 * Where the hard limit is 0 already (limits.conf's "hard core 0", sudo's
 * or a container's), 1 is out of reach (raising a hard limit needs
 * CAP_SYS_RESOURCE): {0, 0} then, which stops a core file but not a pipe
 * handler. 0, or -errno.
 */
int sr_proc_no_core_dumps(void);

/*
 * The ids the kernel shows for one it cannot map (fs/ns "overflow": 65534
 * unless /proc/sys/kernel/overflowuid or overflowgid say otherwise).
 */
unsigned sr_proc_overflow_uid(void);
unsigned sr_proc_overflow_gid(void);

/*
 * value, or the caller's hard limit of resource where that is lower (or
 * value if it cannot be read): a limit is only ever lowered, raising the
 * hard one needs CAP_SYS_RESOURCE on the host. 0 stays 0.
 */
uint64_t sr_proc_within_hard(int resource, uint64_t value);
/* Both limits of resource set to sr_proc_within_hard(value): 0, or -errno. */
int sr_proc_lower_rlimit(int resource, uint64_t value);
