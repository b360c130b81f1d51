/* SPDX-License-Identifier: MIT */
/*
 * The syscall deny list, in the spirit of Docker's default profile.
 *
 * The default action is ALLOW and every row refuses a call with an errno
 * (EPERM unless the row says otherwise), never by killing: a program that
 * probes for a feature gets an error it already handles. The agent has no
 * capabilities, so the kernel itself refuses most of these calls; the
 * filter is the second wall, and it removes kernel attack surface that is
 * reachable without any capability (keyrings, io_uring, userfaultfd,
 * nested user namespaces, TIOCSTI).
 *
 * Deliberately allowed:
 * - ptrace, process_vm_readv/writev: debuggers, strace and profilers work.
 *   Docker allows them too (kernel >= 4.8 checks seccomp after ptrace
 *   stops, so a tracer cannot rewrite a filtered call). The ptrace access
 *   check still applies: PID 1 of the sandbox is made non-dumpable, and
 *   the host is outside the PID namespace.
 * - mbind, set_mempolicy, get_mempolicy: NUMA placement of the caller's
 *   own memory, used by BLAS and allocator libraries. move_pages and
 *   migrate_pages, which act on another process's pages, are refused.
 * - socket(AF_NETLINK, *, NETLINK_AUDIT): the kernel refuses audit
 *   messages from outside the initial user namespace already.
 *
 * Calls newer than the libseccomp that builds the filter (Debian 12's
 * 2.5.4 knows none past futex_requeue) are resolved by number from
 * seccomp-syscalls.c.
 */
#include "config.h"

#include "seccomp-rules.h"

#include <errno.h>
#include <sched.h>
#include <sys/ioctl.h>
#include <sys/personality.h>
#include <sys/socket.h>

/*
 * Every namespace flag. CLONE_NEWTIME (0x80) shares its bit with the exit
 * signal in clone()'s flags (CSIGNAL), so only unshare() and clone3() can
 * ask for a time namespace.
 */
#define NS_FLAGS_CLONE                                                                 \
	(CLONE_NEWNS | CLONE_NEWCGROUP | CLONE_NEWUTS | CLONE_NEWIPC | CLONE_NEWUSER | \
	 CLONE_NEWPID | CLONE_NEWNET)
#define NS_FLAGS_UNSHARE (NS_FLAGS_CLONE | CLONE_NEWTIME)

/* clone()'s flags are its first argument everywhere but s390. */
#if defined(__s390__)
#define CLONE_FLAGS_ARG 1
#else
#define CLONE_FLAGS_ARG 0
#endif

/*
 * An int argument (ioctl(2)'s request, socket(2)'s domain, personality(2)'s
 * persona) is 32 bits in the kernel: the upper half of the 64-bit register
 * is dropped. Comparing all 64 bits would let 0x100005412 through as
 * TIOCSTI, so such arguments are compared masked to 32.
 */
#define ARG32_MASK 0xffffffffULL

#define DENY(name, reason)                                                               \
	{                                                                                \
		.syscall = (name), .err = EPERM, .cmp = SR_SCMP_ALWAYS, .why = (reason), \
	}
#define DENY_ERRNO(name, errno_, reason)                                                    \
	{                                                                                   \
		.syscall = (name), .err = (errno_), .cmp = SR_SCMP_ALWAYS, .why = (reason), \
	}
/* A call that is not a system call on every architecture. */
#define DENY_OPTIONAL(name, reason)                                                       \
	{                                                                                 \
		.syscall = (name), .err = EPERM, .cmp = SR_SCMP_ALWAYS, .optional = true, \
		.why = (reason),                                                          \
	}
/* Refused when any of `bits` is set in argument `n`. */
#define DENY_IF_ANY(name, n, bits, reason)                                                     \
	{                                                                                      \
		.syscall = (name), .err = EPERM, .cmp = SR_SCMP_ARG_MASKED_NOT_IN, .arg = (n), \
		.mask = (bits), .n_values = 1, .values = {0}, .why = (reason),                 \
	}
/* Refused, with errno_, when 32-bit argument `n` is `value`. */
#define DENY_ARG32_EQ(name, errno_, n, value, reason)                                         \
	{                                                                                     \
		.syscall = (name), .err = (errno_), .cmp = SR_SCMP_ARG_MASKED_EQ, .arg = (n), \
		.mask = ARG32_MASK, .n_values = 1, .values = {(value)}, .why = (reason),      \
	}
#define DENY_IOCTL(request, reason) DENY_ARG32_EQ("ioctl", EPERM, 1, (request), (reason))

const struct sr_seccomp_rule sr_seccomp_rules[] = {
    /* Kernel code and the running kernel. */
    DENY("init_module", "load a kernel module"),
    DENY("finit_module", "load a kernel module"),
    DENY("delete_module", "unload a kernel module"),
    DENY("create_module", "obsolete module interface"),
    DENY("get_kernel_syms", "obsolete module interface"),
    DENY("query_module", "obsolete module interface"),
    DENY("kexec_load", "replace the running kernel"),
    DENY("kexec_file_load", "replace the running kernel"),
    DENY("reboot", "reboot or halt the machine"),
    DENY("bpf", "load eBPF programs: large in-kernel attack surface"),
    DENY("perf_event_open", "observe the kernel and other processes; frequent CVEs"),
    DENY("lookup_dcookie", "kernel profiling interface"),
    DENY("syslog", "read or clear the kernel log"),
    DENY("iopl", "raw I/O port access"),
    DENY("ioperm", "raw I/O port access"),
    DENY_OPTIONAL("vm86", "virtual 8086 mode (i386)"),
    DENY_OPTIONAL("vm86old", "virtual 8086 mode (i386)"),

    /* Exploitation helpers reachable without any capability. */
    DENY("userfaultfd", "stall kernel page faults: turns races into reliable exploits"),
    DENY("keyctl", "kernel keyrings are not namespaced"),
    DENY("add_key", "kernel keyrings are not namespaced"),
    DENY("request_key", "kernel keyrings are not namespaced; can run a host upcall"),
    DENY("io_uring_setup", "io_uring: large attack surface, bypasses this filter for I/O"),
    DENY("io_uring_enter", "io_uring: large attack surface, bypasses this filter for I/O"),
    DENY("io_uring_register", "io_uring: large attack surface, bypasses this filter for I/O"),

    /* Namespaces: the sandbox's own must not be left or multiplied. */
    DENY("setns", "join another namespace"),
    DENY("listns", "list namespaces by id (6.19)"),
    DENY_IF_ANY("unshare", 0, NS_FLAGS_UNSHARE,
		"new namespaces; a nested user namespace regains every capability"),
    DENY_IF_ANY("clone", CLONE_FLAGS_ARG, NS_FLAGS_CLONE,
		"new namespaces; a nested user namespace regains every capability"),
    /*
     * clone3() passes its flags in a struct in user memory, which a
     * seccomp filter cannot read. ENOSYS (not EPERM) makes glibc and
     * other runtimes fall back to clone(), whose flags the row above
     * inspects; EPERM would make thread creation fail outright.
     */
    DENY_ERRNO("clone3", ENOSYS, "flags out of the filter's reach; fall back to clone"),

    /*
     * vsock is not network-namespaced: one port space per machine, to the
     * hypervisor (CID 2) and the host's own vsock services, beside the
     * sandbox's network namespace and out of the nftables policy's sight.
     * --net none must mean no network. EAFNOSUPPORT, as on a kernel
     * without vsock, which programs probing for it expect.
     */
    DENY_ARG32_EQ("socket", EAFNOSUPPORT, 0, AF_VSOCK,
		  "vsock: a network outside the sandbox's namespace and policy"),

    /* Mounts: the sandbox's view of the filesystem is fixed before exec. */
    DENY("mount", "change the mount table"),
    DENY("umount2", "change the mount table"),
    DENY_OPTIONAL("umount", "change the mount table (older ABIs)"),
    DENY("pivot_root", "change the root directory"),
    DENY("chroot", "change the root directory"),
    DENY("fsopen", "new mount API"),
    DENY("fsconfig", "new mount API"),
    DENY("fsmount", "new mount API"),
    DENY("fspick", "new mount API"),
    DENY("open_tree", "new mount API"),
    DENY("move_mount", "new mount API"),
    DENY("mount_setattr", "new mount API"),
    DENY("open_tree_attr", "new mount API: open_tree with mount attributes (6.15)"),
    DENY("statmount", "new mount API: describe a mount by id (6.8)"),
    DENY("listmount", "new mount API: list mounts by id (6.8)"),
    DENY("open_by_handle_at", "opens files by handle, outside the mount tree (\"shocker\")"),
    DENY("name_to_handle_at", "companion of open_by_handle_at; leaks inode identity"),
    DENY("swapon", "host swap configuration"),
    DENY("swapoff", "host swap configuration"),
    DENY("quotactl", "host quota configuration"),
    DENY("quotactl_fd", "host quota configuration"),
    DENY("acct", "host process accounting"),
    DENY("nfsservctl", "obsolete NFS server interface"),
    DENY("ustat", "obsolete; reports on host file systems"),
    DENY("sysfs", "obsolete; lists host file system types"),
    DENY("_sysctl", "obsolete sysctl interface"),
    DENY("uselib", "obsolete; loads a.out libraries"),

    /* Time is not namespaced (time namespaces only offset monotonic clocks). */
    DENY("settimeofday", "set the host clock"),
    DENY_OPTIONAL("stime", "set the host clock (older ABIs)"),
    DENY("clock_settime", "set the host clock"),
    DENY("clock_adjtime", "adjust the host clock"),
    DENY("adjtimex", "adjust the host clock"),

    /* Other processes and terminals. */
    DENY("kcmp", "compares kernel objects of other processes; checkpoint/restore only"),
    DENY("move_pages", "move another process's memory"),
    DENY("migrate_pages", "move another process's memory"),
    DENY("vhangup", "hang up the controlling terminal"),
    /*
     * TIOCSTI pushes input into a terminal: with the caller's terminal
     * as fd 0, a sandboxed process types commands into the caller's
     * shell (CVE-2017-5226 in bubblewrap). The sandbox's new session
     * already stops it; this row also covers a terminal passed in.
     */
    DENY_IOCTL(TIOCSTI, "inject input into a terminal (CVE-2017-5226)"),
    DENY_IOCTL(TIOCLINUX, "virtual console control; can inject input too"),
    DENY_IOCTL(TIOCSETD, "change a terminal's line discipline: outlives the run, loads modules"),
    /*
     * personality(2) takes an unsigned int. Docker's safe set: Linux and
     * 32-bit Linux, with or without UNAME26, and 0xffffffff (query).
     * Everything else (READ_IMPLIES_EXEC, ADDR_NO_RANDOMIZE,
     * MMAP_PAGE_ZERO, ...) weakens exploit mitigations.
     */
    {
	.syscall = "personality",
	.err = EPERM,
	.cmp = SR_SCMP_ARG_MASKED_NOT_IN,
	.arg = 0,
	.mask = ARG32_MASK,
	.n_values = 5,
	.values = {PER_LINUX, PER_LINUX32, UNAME26, PER_LINUX32 | UNAME26, 0xffffffffULL},
	.why = "execution domains that weaken exploit mitigations",
    },
};

const size_t sr_seccomp_n_rules = sizeof(sr_seccomp_rules) / sizeof(sr_seccomp_rules[0]);
