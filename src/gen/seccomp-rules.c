/* SPDX-License-Identifier: MIT */
/*
 * The syscall policy: default-deny, as Docker's and Podman's default
 * profiles are.
 *
 * Four answers:
 * - Allowed: the rows of the first half, grouped by purpose, each with
 *   the reason agents need it. The list is generous with ordinary calls:
 *   the same filter holds PID 1 of the sandbox (sandbox-run's own code,
 *   after the set-up), the confined archive extraction, and everything
 *   the agent runs: Node, Python, npm, git, compilers, shells.
 * - EPERM: the calls refused on purpose, the second half, each with the
 *   reason; also the refused cases of some allowed calls (namespace flags
 *   of clone and unshare, TIOCSTI, vsock sockets, unsafe personalities,
 *   huge pages).
 *   EPERM is what the kernel itself says to a caller without privilege, so
 *   a program probing for a feature gets an error it already handles.
 * - Skipped (SR_SECCOMP_SKIP): setting the core limit, which returns 0
 *   and changes nothing (see the rows).
 * - ENOSYS (SR_SECCOMP_DEFAULT_ERRNO) for every call this table does not
 *   name: obsolete and unimplemented entries, calls nothing in a sandbox
 *   needs, and every call newer than this table. A C library treats
 *   ENOSYS as "kernel too old" and falls back, so a newer libc keeps
 *   working, while new kernel code stays out of reach until a row here
 *   allows it.
 *
 * The agent has no capabilities, so the kernel itself refuses many of
 * the refused calls; the filter is the second wall, and it removes
 * kernel attack surface that is reachable without any capability
 * (keyrings, io_uring, userfaultfd, nested user namespaces, TIOCSTI, and
 * with the default every call not listed).
 *
 * Names libseccomp does not know (it is older than the kernel) are
 * resolved by number from seccomp-syscalls.c.
 *
 * Deliberately allowed, although a stricter list could refuse them:
 * - ptrace, process_vm_readv/writev, pidfd_getfd: debuggers, strace and
 *   profilers work. Docker allows them too (kernel >= 4.8 checks seccomp
 *   after ptrace stops, so a tracer cannot rewrite a filtered call).
 *   pidfd_getfd makes the same ptrace access check as ptrace itself, so
 *   it reaches nothing a tracer could not. The check still applies: PID
 *   1 of the sandbox is made non-dumpable, and the host is outside the
 *   PID namespace.
 * - mbind, set_mempolicy, get_mempolicy: NUMA placement of the caller's
 *   own memory, used by BLAS and allocator libraries. move_pages and
 *   migrate_pages, which act on another process's pages, are refused.
 * - socket(AF_NETLINK, *, NETLINK_AUDIT): the kernel refuses audit
 *   messages from outside the initial user namespace already.
 * - fchmodat2 (Linux 6.6): what glibc 2.39 and later call for fchmodat()
 *   with flags; the same permission checks as chmod, which is allowed
 *   (set-id bits included: the agent's files are its own).
 * - the *xattrat calls (6.13) are the dirfd forms of the xattr calls
 *   above them, with the same checks; mseal and map_shadow_stack act on
 *   the caller's own memory; futex_wake/wait/requeue are futex(2) split
 *   in three.
 *
 * Deliberately left to the default (ENOSYS), because nothing a sandbox
 * runs needs them and each is kernel code the agent need not reach:
 * process_madvise (advice on another process's memory), memfd_secret,
 * cachestat (page-cache residency of files, the kind of side channel
 * mincore() was restricted for), lsm_* (LSM attributes; libraries
 * read /proc/self/attr instead), file_getattr/file_setattr (the
 * FS_IOC_FSGETXATTR ioctls by path), and the calls that were never
 * implemented (tuxcall, vserver, epoll_ctl_old, ...).
 */
#include "config.h"

#include "seccomp-rules.h"

#include <errno.h>
#include <sched.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/shm.h>
#include <sys/personality.h>
#include <sys/resource.h>
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

/*
 * A pointer argument, told from NULL: every bit but the top one. A value
 * with only bit 63 set passes as NULL, and the kernel answers it EFAULT
 * (a kernel address, or 0 once a tag is stripped): no call it lets
 * through reads from it. 63 bits also keep the masks in the OCI
 * profile's signed 64-bit JSON integers.
 */
#define PTR_MASK 0x7fffffffffffffffULL

#define ALLOW(name, reason)                                                          \
	{                                                                            \
		.syscall = (name), .err = 0, .cmp = SR_SCMP_ALWAYS, .why = (reason), \
	}
#define DENY(name, reason)                                                               \
	{                                                                                \
		.syscall = (name), .err = EPERM, .cmp = SR_SCMP_ALWAYS, .why = (reason), \
	}
#define DENY_ERRNO(name, errno_, reason)                                                    \
	{                                                                                   \
		.syscall = (name), .err = (errno_), .cmp = SR_SCMP_ALWAYS, .why = (reason), \
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
    /* ---- Allowed ---- */

    /* Files: descriptors and their data. */
    ALLOW("read", "read from a descriptor"),
    ALLOW("write", "write to a descriptor"),
    ALLOW("readv", "scattered read"),
    ALLOW("writev", "gathered write"),
    ALLOW("pread64", "read at an offset"),
    ALLOW("pwrite64", "write at an offset"),
    ALLOW("preadv", "scattered read at an offset"),
    ALLOW("pwritev", "gathered write at an offset"),
    ALLOW("preadv2", "scattered read with flags"),
    ALLOW("pwritev2", "gathered write with flags"),
    ALLOW("lseek", "move a file offset"),
    ALLOW("close", "close a descriptor"),
    ALLOW("close_range", "close or mark close-on-exec a range of descriptors (spawning)"),
    ALLOW("dup", "duplicate a descriptor"),
    ALLOW("dup2", "duplicate a descriptor (shell redirections)"),
    ALLOW("dup3", "duplicate a descriptor with flags"),
    ALLOW("fcntl", "descriptor flags, record locks, pipe sizes"),
    ALLOW("flock", "advisory file locks (npm, git, package managers)"),
    ALLOW("ioctl", "terminals, FIONREAD, FICLONE; refused requests below"),
    ALLOW("pipe", "pipes (shell pipelines)"),
    ALLOW("pipe2", "pipes with flags"),
    ALLOW("sendfile", "copy between descriptors in the kernel (Node, cp)"),
    ALLOW("splice", "move data to or from a pipe"),
    ALLOW("tee", "duplicate pipe data"),
    ALLOW("vmsplice", "map user memory into a pipe"),
    ALLOW("copy_file_range", "copy between files in the kernel (cp, Python shutil)"),
    ALLOW("fsync", "flush a file"),
    ALLOW("fdatasync", "flush a file's data"),
    ALLOW("sync", "flush every file system (sync(1))"),
    ALLOW("syncfs", "flush one file system"),
    ALLOW("sync_file_range", "flush part of a file"),
    ALLOW("fadvise64", "access pattern advice"),
    ALLOW("readahead", "prefetch a file"),
    ALLOW("fallocate", "reserve file space"),
    ALLOW("ftruncate", "resize an open file"),
    ALLOW("truncate", "resize a file by name"),
    ALLOW("memfd_create", "anonymous files (JIT code, shared memory, glibc)"),
    ALLOW("eventfd", "event counters"),
    ALLOW("eventfd2", "event counters (libuv, Python asyncio)"),

    /* Files: names and metadata. */
    ALLOW("open", "open a file"),
    ALLOW("openat", "open a file relative to a directory"),
    ALLOW("openat2", "open with resolution flags"),
    ALLOW("creat", "create a file"),
    ALLOW("stat", "file status"),
    ALLOW("lstat", "link status"),
    ALLOW("fstat", "descriptor status"),
    ALLOW("newfstatat", "file status relative to a directory"),
    ALLOW("statx", "extended file status (glibc, Node)"),
    ALLOW("statfs", "file system status"),
    ALLOW("fstatfs", "file system status of a descriptor"),
    ALLOW("access", "check permissions"),
    ALLOW("faccessat", "check permissions relative to a directory"),
    ALLOW("faccessat2", "check permissions with flags"),
    ALLOW("readlink", "read a symbolic link"),
    ALLOW("readlinkat", "read a symbolic link relative to a directory"),
    ALLOW("getdents", "list a directory"),
    ALLOW("getdents64", "list a directory"),
    ALLOW("getcwd", "the working directory"),
    ALLOW("chdir", "change the working directory"),
    ALLOW("fchdir", "change the working directory to a descriptor"),
    ALLOW("mkdir", "create a directory"),
    ALLOW("mkdirat", "create a directory relative to a directory"),
    ALLOW("rmdir", "remove a directory"),
    ALLOW("rename", "rename a file"),
    ALLOW("renameat", "rename relative to directories"),
    ALLOW("renameat2", "rename with flags (exchange, no-replace)"),
    ALLOW("link", "hard link"),
    ALLOW("linkat", "hard link relative to directories"),
    ALLOW("symlink", "symbolic link"),
    ALLOW("symlinkat", "symbolic link relative to a directory"),
    ALLOW("unlink", "remove a file"),
    ALLOW("unlinkat", "remove relative to a directory"),
    ALLOW("mknod", "FIFOs and sockets; devices need CAP_MKNOD, which the agent lacks"),
    ALLOW("mknodat", "FIFOs and sockets (mkfifo)"),
    ALLOW("chmod", "file mode"),
    ALLOW("fchmod", "file mode of a descriptor"),
    ALLOW("fchmodat", "file mode relative to a directory"),
    ALLOW("fchmodat2", "fchmodat with flags: glibc 2.39+ calls it for fchmodat()"),
    ALLOW("chown", "file owner (the agent's own ids only)"),
    ALLOW("fchown", "file owner of a descriptor"),
    ALLOW("lchown", "link owner"),
    ALLOW("fchownat", "file owner relative to a directory"),
    ALLOW("umask", "file creation mask"),
    ALLOW("utime", "file times"),
    ALLOW("utimes", "file times"),
    ALLOW("futimesat", "file times relative to a directory"),
    ALLOW("utimensat", "file times in nanoseconds (touch, tar, git)"),
    ALLOW("setxattr", "extended attributes (cp -a, tar, overlay's user.* attributes)"),
    ALLOW("lsetxattr", "extended attributes of a link"),
    ALLOW("fsetxattr", "extended attributes of a descriptor"),
    ALLOW("getxattr", "read extended attributes (ls, cp)"),
    ALLOW("lgetxattr", "read extended attributes of a link"),
    ALLOW("fgetxattr", "read extended attributes of a descriptor"),
    ALLOW("listxattr", "list extended attributes"),
    ALLOW("llistxattr", "list extended attributes of a link"),
    ALLOW("flistxattr", "list extended attributes of a descriptor"),
    ALLOW("removexattr", "remove an extended attribute"),
    ALLOW("lremovexattr", "remove an extended attribute of a link"),
    ALLOW("fremovexattr", "remove an extended attribute of a descriptor"),
    ALLOW("setxattrat", "setxattr relative to a directory (6.13)"),
    ALLOW("getxattrat", "getxattr relative to a directory (6.13)"),
    ALLOW("listxattrat", "listxattr relative to a directory (6.13)"),
    ALLOW("removexattrat", "removexattr relative to a directory (6.13)"),

    /* Waiting for events. */
    ALLOW("poll", "wait on descriptors"),
    ALLOW("ppoll", "wait on descriptors with a signal mask"),
    ALLOW("select", "wait on descriptors"),
    ALLOW("pselect6", "wait on descriptors with a signal mask"),
    ALLOW("epoll_create", "event loops"),
    ALLOW("epoll_create1", "event loops (libuv, asyncio)"),
    ALLOW("epoll_ctl", "event loops"),
    ALLOW("epoll_wait", "event loops"),
    ALLOW("epoll_pwait", "event loops with a signal mask (libuv)"),
    ALLOW("epoll_pwait2", "event loops with a nanosecond timeout"),
    ALLOW("inotify_init", "watch files"),
    ALLOW("inotify_init1", "watch files (file watchers, dev servers)"),
    ALLOW("inotify_add_watch", "watch files"),
    ALLOW("inotify_rm_watch", "watch files"),
    ALLOW("signalfd", "signals as a descriptor"),
    ALLOW("signalfd4", "signals as a descriptor (event loops)"),
    ALLOW("timerfd_create", "timers as descriptors"),
    ALLOW("timerfd_settime", "timers as descriptors"),
    ALLOW("timerfd_gettime", "timers as descriptors"),

    /*
     * Linux native asynchronous I/O (libaio) on a context io_setup made;
     * io_setup and io_uring are refused below.
     */
    ALLOW("io_destroy", "asynchronous I/O"),
    ALLOW("io_submit", "asynchronous I/O"),
    ALLOW("io_cancel", "asynchronous I/O"),
    ALLOW("io_getevents", "asynchronous I/O"),
    ALLOW("io_pgetevents", "asynchronous I/O with a signal mask"),

    /* Memory: the caller's own. */
    ALLOW("brk", "heap"),
    ALLOW("mmap", "map memory and files"),
    ALLOW("munmap", "unmap"),
    ALLOW("mremap", "grow or move a mapping"),
    ALLOW("mprotect", "change protection (JIT compilers, the dynamic loader)"),
    ALLOW("madvise", "memory advice (allocators, garbage collectors)"),
    ALLOW("mincore", "page residency of own mappings"),
    ALLOW("msync", "flush a shared mapping"),
    ALLOW("mlock", "lock memory (bounded by RLIMIT_MEMLOCK)"),
    ALLOW("mlock2", "lock memory"),
    ALLOW("munlock", "unlock memory"),
    ALLOW("mlockall", "lock memory"),
    ALLOW("munlockall", "unlock memory"),
    ALLOW("remap_file_pages", "deprecated, emulated with mmap"),
    ALLOW("membarrier", "memory barriers across threads (JITs, userspace RCU)"),
    ALLOW("mbind", "NUMA placement of own memory"),
    ALLOW("get_mempolicy", "NUMA policy"),
    ALLOW("set_mempolicy", "NUMA policy"),
    ALLOW("set_mempolicy_home_node", "NUMA policy"),
    ALLOW("pkey_alloc", "memory protection keys (V8)"),
    ALLOW("pkey_free", "memory protection keys"),
    ALLOW("pkey_mprotect", "memory protection keys"),
    ALLOW("mseal", "seal own mappings against change (6.10)"),
    ALLOW("map_shadow_stack", "shadow stacks for CET (glibc 2.39+)"),

    /* Processes and threads. */
    ALLOW("clone", "threads and processes; namespace flags refused below"),
    ALLOW("fork", "processes"),
    ALLOW("vfork", "processes (posix_spawn, shells)"),
    ALLOW("execve", "run a program"),
    ALLOW("execveat", "run a program by descriptor (fexecve)"),
    ALLOW("exit", "end a thread"),
    ALLOW("exit_group", "end a process"),
    ALLOW("wait4", "reap children"),
    ALLOW("waitid", "reap children (also by pidfd)"),
    ALLOW("set_tid_address", "thread start-up (libc)"),
    ALLOW("set_robust_list", "robust futexes (libc)"),
    ALLOW("get_robust_list", "robust futexes"),
    ALLOW("rseq", "restartable sequences (glibc 2.35+)"),
    ALLOW("futex", "locks and condition variables"),
    ALLOW("futex_waitv", "wait on several futexes (Wine, game runtimes)"),
    ALLOW("futex_wake", "futex2 wake (6.7)"),
    ALLOW("futex_wait", "futex2 wait (6.7)"),
    ALLOW("futex_requeue", "futex2 requeue (6.7)"),
    ALLOW("arch_prctl", "thread-local storage, CET, AMX state (x86_64)"),
    ALLOW("prctl", "process attributes (names, no_new_privs, death signal)"),
    ALLOW("personality", "query the execution domain; unsafe ones refused below"),
    ALLOW("unshare", "unshare files and fs state; namespace flags refused below"),
    ALLOW("get_thread_area", "thread-local storage (32-bit segments)"),
    ALLOW("set_thread_area", "thread-local storage (32-bit segments)"),
    ALLOW("restart_syscall", "the kernel's restart of an interrupted call"),
    ALLOW("seccomp", "filters of the agent's own: they can only refuse more"),
    ALLOW("landlock_create_ruleset", "self-sandboxing (coding agents' own sandboxes)"),
    ALLOW("landlock_add_rule", "self-sandboxing"),
    ALLOW("landlock_restrict_self", "self-sandboxing"),
    ALLOW("ptrace", "debuggers, strace (see above)"),
    ALLOW("process_vm_readv", "debuggers and profilers (see above)"),
    ALLOW("process_vm_writev", "debuggers (see above)"),
    ALLOW("pidfd_open", "process descriptors (event loops, Python subprocess)"),
    ALLOW("pidfd_send_signal", "signal through a process descriptor"),
    ALLOW("pidfd_getfd", "copy a descriptor from a traced process (see above)"),
    ALLOW("process_mrelease", "free a killed process's memory sooner"),
    ALLOW("getcpu", "the current CPU (allocators)"),

    /* Identity, limits, scheduling. */
    ALLOW("getpid", "process id"),
    ALLOW("getppid", "parent process id"),
    ALLOW("gettid", "thread id"),
    ALLOW("getuid", "user id"),
    ALLOW("geteuid", "user id"),
    ALLOW("getgid", "group id"),
    ALLOW("getegid", "group id"),
    ALLOW("getresuid", "user ids"),
    ALLOW("getresgid", "group ids"),
    ALLOW("getgroups", "supplementary groups"),
    ALLOW("setuid", "change ids: only to the agent's own without capabilities"),
    ALLOW("setgid", "change ids"),
    ALLOW("setreuid", "change ids"),
    ALLOW("setregid", "change ids"),
    ALLOW("setresuid", "change ids"),
    ALLOW("setresgid", "change ids"),
    ALLOW("setfsuid", "change ids"),
    ALLOW("setfsgid", "change ids"),
    ALLOW("setgroups", "change groups: refused by the user namespace"),
    ALLOW("capget", "read capabilities (all empty)"),
    ALLOW("capset", "drop capabilities"),
    ALLOW("getpgid", "process groups"),
    ALLOW("setpgid", "process groups (shell job control)"),
    ALLOW("getpgrp", "process groups"),
    ALLOW("getsid", "sessions"),
    ALLOW("setsid", "sessions (daemons, PID 1's spawn)"),
    ALLOW("getrlimit", "resource limits"),
    ALLOW("setrlimit", "resource limits (lower, or raise up to the hard limit)"),
    ALLOW("prlimit64", "resource limits"),
    ALLOW("getrusage", "resource usage"),
    ALLOW("times", "process times"),
    ALLOW("getpriority", "nice value"),
    ALLOW("setpriority", "nice value"),
    ALLOW("ioprio_get", "I/O priority"),
    ALLOW("ioprio_set", "I/O priority (ionice)"),
    ALLOW("sched_yield", "yield the CPU"),
    ALLOW("sched_getaffinity", "CPUs allowed (worker pool sizes: libuv, os.cpu_count)"),
    ALLOW("sched_setaffinity", "pin to CPUs"),
    ALLOW("sched_getparam", "scheduling"),
    ALLOW("sched_setparam", "scheduling"),
    ALLOW("sched_getscheduler", "scheduling"),
    ALLOW("sched_setscheduler", "scheduling (real-time classes need a capability)"),
    ALLOW("sched_get_priority_max", "scheduling"),
    ALLOW("sched_get_priority_min", "scheduling"),
    ALLOW("sched_rr_get_interval", "scheduling"),
    ALLOW("sched_getattr", "scheduling"),
    ALLOW("sched_setattr", "scheduling"),
    ALLOW("uname", "system name and release"),
    ALLOW("sysinfo", "memory and load (sysconf, os.totalmem)"),
    ALLOW("getrandom", "random numbers"),

    /* Signals. */
    ALLOW("rt_sigaction", "signal handlers"),
    ALLOW("rt_sigprocmask", "signal mask"),
    ALLOW("rt_sigreturn", "return from a signal handler"),
    ALLOW("rt_sigpending", "pending signals"),
    ALLOW("rt_sigsuspend", "wait for a signal"),
    ALLOW("rt_sigtimedwait", "wait for a signal (PID 1)"),
    ALLOW("rt_sigqueueinfo", "queue a signal with data"),
    ALLOW("rt_tgsigqueueinfo", "queue a signal to a thread"),
    ALLOW("sigaltstack", "alternate signal stack (Go, Rust, sanitizers)"),
    ALLOW("kill", "send a signal"),
    ALLOW("tkill", "signal a thread"),
    ALLOW("tgkill", "signal a thread (raise, pthread_kill)"),
    ALLOW("pause", "wait for a signal"),
    ALLOW("alarm", "alarm signal"),

    /* Time (reading it; setting the clock is refused below). */
    ALLOW("clock_gettime", "clocks"),
    ALLOW("clock_getres", "clock resolution"),
    ALLOW("clock_nanosleep", "sleep"),
    ALLOW("nanosleep", "sleep"),
    ALLOW("gettimeofday", "wall clock"),
    ALLOW("time", "wall clock"),
    ALLOW("getitimer", "interval timers"),
    ALLOW("setitimer", "interval timers (profilers)"),
    ALLOW("timer_create", "POSIX timers"),
    ALLOW("timer_settime", "POSIX timers"),
    ALLOW("timer_gettime", "POSIX timers"),
    ALLOW("timer_getoverrun", "POSIX timers"),
    ALLOW("timer_delete", "POSIX timers"),

    /* Sockets, in the sandbox's own network namespace. */
    ALLOW("socket", "sockets; vsock refused below"),
    ALLOW("socketpair", "connected socket pairs"),
    ALLOW("bind", "bind a socket"),
    ALLOW("connect", "connect a socket"),
    ALLOW("listen", "listen (dev servers, test servers on lo)"),
    ALLOW("accept", "accept a connection"),
    ALLOW("accept4", "accept a connection with flags"),
    ALLOW("getsockname", "socket address"),
    ALLOW("getpeername", "peer address"),
    ALLOW("sendto", "send"),
    ALLOW("recvfrom", "receive"),
    ALLOW("sendmsg", "send with ancillary data (descriptors, credentials)"),
    ALLOW("recvmsg", "receive with ancillary data"),
    ALLOW("sendmmsg", "send several datagrams (DNS resolvers)"),
    ALLOW("recvmmsg", "receive several datagrams"),
    ALLOW("shutdown", "shut a connection down"),
    ALLOW("setsockopt", "socket options"),
    ALLOW("getsockopt", "socket options"),

    /* IPC, in the sandbox's own IPC namespace. */
    ALLOW("shmget", "System V shared memory (PostgreSQL, X clients)"),
    ALLOW("shmat", "System V shared memory"),
    ALLOW("shmdt", "System V shared memory"),
    ALLOW("shmctl", "System V shared memory"),
    ALLOW("semget", "System V semaphores"),
    ALLOW("semop", "System V semaphores"),
    ALLOW("semtimedop", "System V semaphores"),
    ALLOW("semctl", "System V semaphores"),
    ALLOW("msgget", "System V message queues"),
    ALLOW("msgsnd", "System V message queues"),
    ALLOW("msgrcv", "System V message queues"),
    ALLOW("msgctl", "System V message queues"),
    ALLOW("mq_open", "POSIX message queues"),
    ALLOW("mq_unlink", "POSIX message queues"),
    ALLOW("mq_timedsend", "POSIX message queues"),
    ALLOW("mq_timedreceive", "POSIX message queues"),
    ALLOW("mq_notify", "POSIX message queues"),
    ALLOW("mq_getsetattr", "POSIX message queues"),

    /* ---- Refused (EPERM unless the row says otherwise) ---- */

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
    DENY("vm86", "virtual 8086 mode (i386)"),
    DENY("vm86old", "virtual 8086 mode (i386)"),
    /*
     * Per-process segment descriptors, for 16-bit code (DOS emulators,
     * old Wine). The LDT code has had use-after-free and espfix bugs
     * reachable without privilege; no agent runs 16-bit code.
     */
    DENY("modify_ldt", "x86 local descriptor table: 16-bit code only; a history of bugs"),

    /* Exploitation helpers reachable without any capability. */
    DENY("userfaultfd", "stall kernel page faults: turns races into reliable exploits"),
    DENY("keyctl", "kernel keyrings are not namespaced"),
    DENY("add_key", "kernel keyrings are not namespaced"),
    DENY("request_key", "kernel keyrings are not namespaced; can run a host upcall"),
    DENY("io_uring_setup", "io_uring: large attack surface, bypasses this filter for I/O"),
    DENY("io_uring_enter", "io_uring: large attack surface, bypasses this filter for I/O"),
    DENY("io_uring_register", "io_uring: large attack surface, bypasses this filter for I/O"),
    /*
     * Native AIO contexts are counted for the whole host, root's too, with
     * no namespace or rlimit to share them out (fs.aio-max-nr, 65536
     * events): one agent took them all in a second with 2 MB, and every
     * io_setup on the host failed with EAGAIN until it ended. InnoDB
     * (MySQL, MariaDB) turns native AIO off when io_setup fails; a
     * program that insists on it (fio's libaio engine) fails inside.
     */
    DENY("io_setup", "native AIO contexts: a host-wide count any process could use up"),
    /*
     * Huge pages come from a pool the host sets aside (vm.nr_hugepages,
     * for a database or VMs), no namespace's, and a memory cgroup of v1
     * does not count them: an agent mapped all 8 of such a pool and the
     * host's own MAP_HUGETLB (root's) failed with ENOMEM until it ended.
     * Programs asking for them fall back to ordinary pages (glibc's
     * malloc, the JVM); transparent huge pages stay. shmget's flag is
     * refused by the kernel too, except to vm.hugetlb_shm_group, which
     * a caller's supplementary groups (kept inside) may be in.
     */
    DENY_IF_ANY("mmap", 3, MAP_HUGETLB, "the host's huge page pool"),
    DENY_IF_ANY("memfd_create", 1, MFD_HUGETLB, "the host's huge page pool"),
    DENY_IF_ANY("shmget", 2, SHM_HUGETLB, "the host's huge page pool"),
    /*
     * Unprivileged fanotify (5.13) is young kernel code, and what it
     * offers over inotify (whole file systems, permission events) needs
     * CAP_SYS_ADMIN anyway. File watchers use inotify.
     */
    DENY("fanotify_init", "file system monitoring; agents use inotify"),
    DENY("fanotify_mark", "file system monitoring; agents use inotify"),

    /* Namespaces: the sandbox's own must not be left or multiplied. */
    DENY("setns", "join another namespace"),
    DENY("listns", "list namespaces by id (6.19)"),
    DENY("sethostname", "the host name is the sandbox's, fixed at set-up"),
    DENY("setdomainname", "the domain name is the sandbox's, fixed at set-up"),
    DENY_IF_ANY("unshare", 0, NS_FLAGS_UNSHARE,
		"new namespaces; a nested user namespace regains every capability"),
    DENY_IF_ANY("clone", CLONE_FLAGS_ARG, NS_FLAGS_CLONE,
		"new namespaces; a nested user namespace regains every capability"),
    /*
     * clone3() passes its flags in a struct in user memory, which a
     * seccomp filter cannot read. ENOSYS (not EPERM) makes glibc and
     * other runtimes fall back to clone(), whose flags the row above
     * inspects; EPERM would make thread creation fail outright. It is
     * the default answer too: the row says why clone3 is not allowed.
     */
    DENY_ERRNO("clone3", ENOSYS, "flags out of the filter's reach; fall back to clone"),

    /*
     * Another process's limits. Every process of the sandbox has PID 1's
     * uid, which is all prlimit(2) asks for: an agent could lower PID
     * 1's RLIMIT_NOFILE until requests with fds no longer reach it, or
     * its RLIMIT_CPU to end the sandbox. pid 0 (the caller itself, as
     * setrlimit(2) and ulimit use it) stays allowed.
     */
    DENY_IF_ANY("prlimit64", 0, ARG32_MASK,
		"another process's limits: PID 1's are the sandbox's to keep"),

    /*
     * The agent's core limit is 1 byte (child/setup.c): the one value at
     * which the kernel runs no pipe core_pattern (systemd-coredump, which
     * journals the crashed process's environment, the deployment's
     * secrets; apport). Lowering a limit is always allowed, and a script's
     * `ulimit -c 0` would bring the handler back. Setting RLIMIT_CORE is
     * skipped and reports success: at 1 byte no core is written anyway
     * (a file core is at least a page), which is what `ulimit -c 0`
     * asks; raising it (`ulimit -c unlimited`) succeeds as quietly and
     * changes nothing either, where the hard limit of 1 refused it. Reading
     * it (getrlimit, prlimit64 with new NULL) is untouched.
     *
     * prlimit64 with both new and old (util-linux prlimit, Python's
     * resource.prlimit; glibc's setrlimit passes old NULL) returns 0 with
     * old not filled: EPERM would be more honest there, but telling
     * old != NULL apart from NULL with new != NULL takes 63 x 63 masked
     * cases, past what a BPF program holds. A caller of prlimit's reads
     * its own buffer back (util-linux's holds the new values).
     */
    {
	.syscall = "setrlimit",
	.err = SR_SECCOMP_SKIP,
	.cmp = SR_SCMP_ARG_MASKED_EQ,
	.arg = 0,
	.mask = ARG32_MASK,
	.n_values = 1,
	.values = {RLIMIT_CORE},
	.why = "the core limit stays 1 byte: no pipe core handler (skipped, 0 returned)",
    },
    {
	.syscall = "prlimit64",
	.err = SR_SECCOMP_SKIP,
	.cmp = SR_SCMP_ARG_MASKED_EQ,
	.arg = 1,
	.mask = ARG32_MASK,
	.n_values = 1,
	.values = {RLIMIT_CORE},
	.n_and = 2,
	.and = {{.arg = 0, .mask = ARG32_MASK, .value = 0},
		{.arg = 2, .mask = PTR_MASK, .value = 0, .ne = true}},
	.why = "the core limit stays 1 byte: no pipe core handler (skipped, 0 returned)",
    },

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
    DENY("umount", "change the mount table (older ABIs)"),
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
    DENY("stime", "set the host clock (older ABIs)"),
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
