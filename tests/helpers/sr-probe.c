/* SPDX-License-Identifier: MIT */
/*
 * sr-probe: a static multi-call probe that integration tests run inside
 * the sandbox. Each subcommand tries something and prints one line per
 * attempt, "LABEL: RESULT", where RESULT is
 *   ok                  the call succeeded (some add detail: "ok 12 bytes")
 *   EPERM, ENOSYS, ...  it failed with that errno ("errno N" if unnamed)
 *   killed by SIGSYS    the attempt's process died of that signal
 * and exits 0 whatever the results were: the test decides what is right.
 * Exit 2 is bad usage, 1 a failure of the probe itself (fork, pipe).
 *
 * Attempts that could change or kill the probe run in a forked child
 * whose exit code carries the errno.
 */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/audit.h>
#include <linux/fs.h>
#include <linux/sched.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/personality.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "seccomp-syscalls.h"

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))
#define CHILD_FAILED  255 /* exit code of a child that could not attempt */

/* ---- names ---- */

#define NAME(x)       \
	{             \
		x, #x \
	}
static const struct {
	int value;
	const char *name;
} errno_names[] = {
    NAME(EPERM),	NAME(ENOENT),	     NAME(ESRCH),	    NAME(EINTR),
    NAME(EIO),		NAME(ENXIO),	     NAME(E2BIG),	    NAME(ENOEXEC),
    NAME(EBADF),	NAME(ECHILD),	     NAME(EAGAIN),	    NAME(ENOMEM),
    NAME(EACCES),	NAME(EFAULT),	     NAME(EBUSY),	    NAME(EEXIST),
    NAME(EXDEV),	NAME(ENODEV),	     NAME(ENOTDIR),	    NAME(EISDIR),
    NAME(EINVAL),	NAME(ENFILE),	     NAME(EMFILE),	    NAME(ENOTTY),
    NAME(ETXTBSY),	NAME(EFBIG),	     NAME(ENOSPC),	    NAME(ESPIPE),
    NAME(EROFS),	NAME(EMLINK),	     NAME(EPIPE),	    NAME(ERANGE),
    NAME(ENAMETOOLONG), NAME(ENOSYS),	     NAME(ENOTEMPTY),	    NAME(ELOOP),
    NAME(EOPNOTSUPP),	NAME(ENOTSOCK),	     NAME(EPROTONOSUPPORT), NAME(EAFNOSUPPORT),
    NAME(EADDRINUSE),	NAME(EADDRNOTAVAIL), NAME(ENETUNREACH),	    NAME(ECONNREFUSED),
    NAME(ECONNRESET),	NAME(EHOSTUNREACH),  NAME(ETIMEDOUT),	    NAME(EDQUOT),
    NAME(ENOKEY),	NAME(EKEYREVOKED),   NAME(EOVERFLOW),	    NAME(ENOMSG),
    NAME(ENODATA),	NAME(EUSERS),	     NAME(EOWNERDEAD),
};

static const struct {
	int value;
	const char *name;
} signal_names[] = {
    NAME(SIGHUP),  NAME(SIGINT),  NAME(SIGQUIT), NAME(SIGILL),	NAME(SIGTRAP), NAME(SIGABRT),
    NAME(SIGBUS),  NAME(SIGFPE),  NAME(SIGKILL), NAME(SIGUSR1), NAME(SIGSEGV), NAME(SIGUSR2),
    NAME(SIGPIPE), NAME(SIGALRM), NAME(SIGTERM), NAME(SIGCHLD), NAME(SIGCONT), NAME(SIGSTOP),
    NAME(SIGTSTP), NAME(SIGXCPU), NAME(SIGXFSZ), NAME(SIGSYS),
};

static const char *errno_name(int e, char *buf, size_t size)
{
	for (size_t i = 0; i < ARRAY_SIZE(errno_names); i++)
		if (errno_names[i].value == e)
			return errno_names[i].name;
	snprintf(buf, size, "errno %d", e);
	return buf;
}

static const char *signal_name(int sig, char *buf, size_t size)
{
	for (size_t i = 0; i < ARRAY_SIZE(signal_names); i++)
		if (signal_names[i].value == sig)
			return signal_names[i].name;
	snprintf(buf, size, "signal %d", sig);
	return buf;
}

/* "TERM", "SIGTERM" or a number; -1 if none of those. */
static int parse_signal(const char *s)
{
	char *end;
	long n;

	for (size_t i = 0; i < ARRAY_SIZE(signal_names); i++)
		if (strcmp(s, signal_names[i].name) == 0 ||
		    strcmp(s, signal_names[i].name + 3) == 0)
			return signal_names[i].value;
	errno = 0;
	n = strtol(s, &end, 10);
	return (errno || *end || end == s || n < 0 || n > 64) ? -1 : (int)n;
}

static pid_t parse_pid(const char *s)
{
	char *end;
	long n;

	errno = 0;
	n = strtol(s, &end, 10);
	return (errno || *end || end == s || n <= 0 || n > INT_MAX) ? -1 : (pid_t)n;
}

/* ---- reporting ---- */

static void print_errno(const char *label, int e)
{
	char buf[32];

	if (e == 0)
		printf("%s: ok\n", label);
	else
		printf("%s: %s\n", label, errno_name(e, buf, sizeof(buf)));
}

static void print_status(const char *label, int status)
{
	char buf[32];

	if (WIFSIGNALED(status))
		printf("%s: killed by %s\n", label,
		       signal_name(WTERMSIG(status), buf, sizeof(buf)));
	else if (WEXITSTATUS(status) == CHILD_FAILED)
		printf("%s: not attempted\n", label);
	else
		print_errno(label, WEXITSTATUS(status));
}

static int errno_of(long r)
{
	return r < 0 ? errno : 0;
}

/*
 * Runs attempt(arg) in a child and prints how it ended. A new session
 * (no controlling terminal) keeps calls like vhangup() from touching the
 * terminal the probe runs on.
 */
static void attempt_in_child(const char *label, int (*attempt)(const void *), const void *arg,
			     bool new_session)
{
	int status;
	pid_t pid;

	fflush(stdout);
	pid = fork();
	if (pid < 0) {
		perror("sr-probe: fork");
		exit(1);
	}
	if (pid == 0) {
		if (new_session && setsid() < 0)
			_exit(CHILD_FAILED);
		_exit(attempt(arg));
	}
	if (waitpid(pid, &status, 0) != pid) {
		perror("sr-probe: waitpid");
		exit(1);
	}
	print_status(label, status);
}

/* clone-like calls return 0 in a new child: it leaves at once. */
static int reap_clone(long pid)
{
	if (pid == 0)
		_exit(0);
	if (pid < 0)
		return errno;
	return waitpid((pid_t)pid, NULL, __WALL) == pid ? 0 : errno;
}

/* ---- syscall ---- */

enum { CALL_PLAIN, CALL_FORKS, CALL_PTRACE_INIT };

/*
 * Arguments are harmless: most are invalid in a way the kernel rejects
 * with an errno other than EPERM (EBADF, EFAULT, EINVAL, ENOENT), so
 * EPERM points at the filter. Calls whose capability check comes first
 * (kexec_load, init_module, reboot, ...) give EPERM either way.
 */
#define CALL(call, ...)                                                  \
	{                                                                \
		.name = #call, .nr = SYS_##call, .args = { __VA_ARGS__ } \
	}

static const struct probe_call {
	const char *name;
	long nr;
	int kind;
	long args[6];
} probe_calls[] = {
    CALL(init_module, 0, 0, 0),
    CALL(finit_module, -1, 0, 0),
    CALL(delete_module, 0, 0),
    CALL(kexec_load, 0, 0, 0, -1), /* flags name no architecture: EINVAL */
    CALL(kexec_file_load, -1, -1, 0, 0, -1),
    CALL(reboot, 0, 0, 0, 0), /* wrong magic: EINVAL */
    CALL(bpf, -1, 0, 0),
    CALL(perf_event_open, 0, 0, -1, -1, 0),
    CALL(lookup_dcookie, 0, 0, 0),
    CALL(syslog, 10 /* SYSLOG_ACTION_SIZE_BUFFER */, 0, 0),
    CALL(userfaultfd, 0x5), /* UFFD_USER_MODE_ONLY | an unknown flag: EINVAL */
    CALL(keyctl, 0x7fffffff, 0, 0, 0, 0),
    CALL(add_key, 0, 0, 0, 0, 0),
    CALL(request_key, 0, 0, 0, 0),
    CALL(io_uring_setup, 0, 0),
    CALL(io_uring_enter, -1, 0, 0, 0, 0, 0),
    CALL(io_uring_register, -1, 0, 0, 0),
    CALL(setns, -1, 0),
    CALL(unshare, CLONE_NEWUSER),
    {.name = "clone", .nr = SYS_clone, .kind = CALL_FORKS, .args = {CLONE_NEWUSER | SIGCHLD}},
    CALL(clone3, 0, 0),
    CALL(mount, 0, (long)"/", 0, MS_NOUSER, 0), /* MS_NOUSER: EINVAL */
    CALL(umount2, (long)"/", -1),
    CALL(pivot_root, (long)"", (long)""),
    CALL(chroot, (long)""),
    CALL(fsopen, 0, -1),
    CALL(fsconfig, -1, -1, 0, 0, 0),
    CALL(fsmount, -1, -1, 0),
    CALL(fspick, -1, (long)"", -1),
    CALL(open_tree, -1, (long)"", 0),
    CALL(move_mount, -1, (long)"", -1, (long)"", -1),
    CALL(mount_setattr, -1, (long)"", 0, 0, 0),
    CALL(open_by_handle_at, -1, 0, 0),
    CALL(name_to_handle_at, AT_FDCWD, (long)"", 0, 0, -1),
    CALL(swapon, 0, 0),
    CALL(swapoff, 0),
    CALL(quotactl, 0, 0, 0, 0),
    CALL(quotactl_fd, -1, 0, 0, 0),
    CALL(acct, (long)""),
    CALL(settimeofday, 0, 0),
    CALL(clock_settime, CLOCK_REALTIME, 0),
    CALL(clock_adjtime, CLOCK_REALTIME, 0),
    CALL(adjtimex, 0),
    CALL(kcmp, 0, 0, 0, 0, 0),
    CALL(move_pages, 0, 0, 0, 0, 0, 0),
    CALL(migrate_pages, 0, 0, 0, 0),
    CALL(vhangup),
    CALL(ioctl, -1, TIOCSTI, 0),
    CALL(personality, ADDR_NO_RANDOMIZE),
    CALL(sethostname, 0, 65),	/* longer than a host name: EINVAL */
    CALL(fanotify_init, -1, 0), /* unknown flags: EINVAL (EPERM first without a capability) */
    /* Named by no row: the filter's default answers (ENOSYS; unfiltered EBADF). */
    CALL(process_madvise, -1, 0, 0, 0, 0),
    {.name = "ptrace", .nr = SYS_ptrace, .kind = CALL_PTRACE_INIT},
#if defined(__x86_64__)
    /* Legacy calls that newer architectures never had. */
    CALL(iopl, 0),
    CALL(modify_ldt, 0, 0, 0), /* read 0 bytes of the LDT: ok, harmless */
    CALL(ioperm, 0, 0, 0),
    CALL(create_module, 0, 0),
    CALL(get_kernel_syms, 0),
    CALL(query_module, 0, 0, 0, 0, 0),
    CALL(nfsservctl, 0, 0, 0),
    CALL(ustat, 0, 0),
    CALL(sysfs, 1, 0),
    CALL(_sysctl, 0),
    CALL(uselib, 0),
    CALL(mknod, (long)"", S_IFCHR | 0600, 0x103 /* 1:3 */),
#endif
};

static int ptrace_attach(pid_t pid)
{
	if (ptrace(PTRACE_ATTACH, pid, 0, 0) < 0)
		return errno;
	/* Attached: wait for the stop, then let the tracee go unharmed. */
	waitpid(pid, NULL, __WALL);
	ptrace(PTRACE_DETACH, pid, 0, 0);
	return 0;
}

static int try_call(const void *arg)
{
	const struct probe_call *c = arg;
	long r;

	if (c->kind == CALL_PTRACE_INIT)
		return ptrace_attach(1);
	r = syscall(c->nr, c->args[0], c->args[1], c->args[2], c->args[3], c->args[4], c->args[5]);
	if (c->kind == CALL_FORKS)
		return reap_clone(r);
	return errno_of(r);
}

static int cmd_syscall(char **argv)
{
	bool all = strcmp(argv[0], "all") == 0 && !argv[1];

	for (; *argv; argv++) {
		bool found = false;

		for (size_t i = 0; i < ARRAY_SIZE(probe_calls); i++) {
			if (!all && strcmp(*argv, probe_calls[i].name) != 0)
				continue;
			found = true;
			attempt_in_child(probe_calls[i].name, try_call, &probe_calls[i], true);
		}
		if (!found) {
			fprintf(stderr, "sr-probe: syscall: no probe for '%s'\n", *argv);
			return 2;
		}
	}
	return 0;
}

static int cmd_list(char **argv)
{
	for (size_t i = 0; i < ARRAY_SIZE(probe_calls); i++)
		printf("%s\n", probe_calls[i].name);
	return 0;
}

/* ---- nr ---- */

#if defined(__x86_64__)
#define NATIVE_ARCH AUDIT_ARCH_X86_64
#elif defined(__aarch64__)
#define NATIVE_ARCH AUDIT_ARCH_AARCH64
#else
#define NATIVE_ARCH 0 /* no column in seccomp-syscalls.c: numbers only */
#endif

static int try_nr(const void *arg)
{
	/* -1 and zeros: an invalid descriptor or pointer for every call tried. */
	return errno_of(syscall(*(const long *)arg, -1L, 0L, 0L, 0L, 0L, 0L));
}

/*
 * A call by number, for those newer than the libc headers: a NAME of
 * seccomp-syscalls.c (statmount, open_tree_attr, ...), a number, or
 * "next", the first number above every call the table knows. Prints
 * "NAME (NUMBER): RESULT", "NUMBER: RESULT".
 */
static int cmd_nr(char **argv)
{
	for (; *argv; argv++) {
		char label[128], *end;
		long nr;

		errno = 0;
		nr = strtol(*argv, &end, 10);
		if (errno == 0 && *end == '\0' && end != *argv && nr >= 0 && nr < 100000) {
			snprintf(label, sizeof(label), "%ld", nr);
		} else {
			nr = strcmp(*argv, "next") == 0 ? sr_syscall_number_next(NATIVE_ARCH)
							: sr_syscall_number(*argv, NATIVE_ARCH);
			if (nr < 0) {
				fprintf(stderr, "sr-probe: nr: no number for '%s' here\n", *argv);
				return 2;
			}
			snprintf(label, sizeof(label), "%s (%ld)", *argv, nr);
		}
		attempt_in_child(label, try_nr, &nr, true);
	}
	return 0;
}

/* ---- caps ---- */

static int cmd_caps(char **argv)
{
	static const char *const keys[] = {"CapInh", "CapPrm",	   "CapEff",  "CapBnd",
					   "CapAmb", "NoNewPrivs", "Seccomp", "Seccomp_filters"};
	char line[256];
	char values[ARRAY_SIZE(keys)][64] = {{0}};
	FILE *f = fopen("/proc/self/status", "re");

	if (!f) {
		perror("sr-probe: /proc/self/status");
		return 1;
	}
	while (fgets(line, sizeof(line), f)) {
		char *value = strchr(line, ':');

		if (!value)
			continue;
		*value++ = '\0';
		value += strspn(value, " \t");
		value[strcspn(value, "\n")] = '\0';
		for (size_t i = 0; i < ARRAY_SIZE(keys); i++)
			if (strcmp(line, keys[i]) == 0)
				snprintf(values[i], sizeof(values[i]), "%s", value);
	}
	fclose(f);
	for (size_t i = 0; i < ARRAY_SIZE(keys); i++)
		printf("%s: %s\n", keys[i], values[i][0] ? values[i] : "missing");
	printf("Securebits: 0x%x\n", (unsigned)prctl(PR_GET_SECUREBITS, 0, 0, 0, 0));
	printf("Uid: %u\nGid: %u\n", (unsigned)getuid(), (unsigned)getgid());
	return 0;
}

/* ---- tiocsti ---- */

struct tty_ioctl {
	int fd;
	unsigned long request;
};

static int try_tty_ioctl(const void *arg)
{
	const struct tty_ioctl *t = arg;
	/* TIOCSTI reads one char (NUL: harmless if it lands), TIOCLINUX a subcode (0: none). */
	char byte = '\0';

	return errno_of(syscall(SYS_ioctl, t->fd, t->request, &byte));
}

static int cmd_tiocsti(char **argv)
{
	static const struct {
		const char *name;
		unsigned long request;
	} requests[] = {
	    {"TIOCSTI", TIOCSTI},
	    /* The kernel truncates the request to 32 bits: this is TIOCSTI too. */
	    {"TIOCSTI|1<<32", (1UL << 32) | TIOCSTI},
	    {"TIOCLINUX", TIOCLINUX},
	};
	int tty = open("/dev/tty", O_RDWR | O_NOCTTY | O_CLOEXEC);
	int tty_errno = errno;
	char label[64], buf[32];

	for (size_t i = 0; i < ARRAY_SIZE(requests); i++) {
		struct tty_ioctl on_stdin = {0, requests[i].request};
		struct tty_ioctl on_bad_fd = {-1, requests[i].request};
		struct tty_ioctl on_tty = {tty, requests[i].request};

		snprintf(label, sizeof(label), "%s fd 0", requests[i].name);
		attempt_in_child(label, try_tty_ioctl, &on_stdin, false);
		/* The kernel says EBADF for fd -1: only the filter says EPERM. */
		snprintf(label, sizeof(label), "%s fd -1", requests[i].name);
		attempt_in_child(label, try_tty_ioctl, &on_bad_fd, false);
		snprintf(label, sizeof(label), "%s /dev/tty", requests[i].name);
		if (tty < 0)
			printf("%s: open: %s\n", label, errno_name(tty_errno, buf, sizeof(buf)));
		else
			attempt_in_child(label, try_tty_ioctl, &on_tty, false);
	}
	if (tty >= 0)
		close(tty);
	return 0;
}

/* ---- ldisc ---- */

/*
 * ldisc [N]: fd 0's line discipline; with N, first try to set it (as is,
 * with the request's upper 32 bits set, and on fd -1, where the bare
 * kernel says EBADF), then say it again.
 */
static int cmd_ldisc(char **argv)
{
	static const struct {
		const char *name;
		unsigned long request;
	} requests[] = {
	    {"TIOCSETD", TIOCSETD},
	    /* The kernel truncates the request to 32 bits: this is TIOCSETD too. */
	    {"TIOCSETD|1<<32", (1UL << 32) | TIOCSETD},
	};
	char label[64];
	int now;

	for (size_t i = 0; argv[0] && i < ARRAY_SIZE(requests); i++) {
		int want = atoi(argv[0]);

		snprintf(label, sizeof(label), "%s fd 0", requests[i].name);
		print_errno(label, errno_of(syscall(SYS_ioctl, 0, requests[i].request, &want)));
		snprintf(label, sizeof(label), "%s fd -1", requests[i].name);
		print_errno(label, errno_of(syscall(SYS_ioctl, -1, requests[i].request, &want)));
	}
	if (ioctl(0, TIOCGETD, &now) < 0)
		print_errno("ldisc", errno);
	else
		printf("ldisc: %d\n", now);
	return 0;
}

/* ---- userns ---- */

static int try_unshare_user(const void *arg)
{
	return errno_of(unshare(CLONE_NEWUSER));
}

static int try_clone_user(const void *arg)
{
	return reap_clone(syscall(SYS_clone, CLONE_NEWUSER | SIGCHLD, 0, 0, 0, 0));
}

static int try_clone3_user(const void *arg)
{
	struct clone_args ca = {.flags = CLONE_NEWUSER, .exit_signal = SIGCHLD};

	return reap_clone(syscall(SYS_clone3, &ca, sizeof(ca)));
}

static int cmd_userns(char **argv)
{
	attempt_in_child("unshare(CLONE_NEWUSER)", try_unshare_user, NULL, false);
	attempt_in_child("clone(CLONE_NEWUSER)", try_clone_user, NULL, false);
	attempt_in_child("clone3(CLONE_NEWUSER)", try_clone3_user, NULL, false);
	return 0;
}

/* ---- other ABIs ---- */

#if defined(__x86_64__)
#ifndef __X32_SYSCALL_BIT
#define __X32_SYSCALL_BIT 0x40000000
#endif

static int try_x32_getpid(const void *arg)
{
	return errno_of(syscall(__X32_SYSCALL_BIT | SYS_getpid));
}

static int try_i386_getpid(const void *arg)
{
	long ret = 20; /* getpid in the i386 table */

	__asm__ volatile("int $0x80" : "+a"(ret) : : "memory", "r8", "r9", "r10", "r11");
	return ret < 0 ? (int)-ret : 0;
}

static int cmd_x32(char **argv)
{
	attempt_in_child("x32 getpid", try_x32_getpid, NULL, false);
	return 0;
}

static int cmd_i386(char **argv)
{
	attempt_in_child("i386 getpid", try_i386_getpid, NULL, false);
	return 0;
}
#else
static int cmd_x32(char **argv)
{
	printf("x32 getpid: not x86_64\n");
	return 0;
}

static int cmd_i386(char **argv)
{
	printf("i386 getpid: not x86_64\n");
	return 0;
}
#endif

/* ---- fds ---- */

static int cmd_fds(char **argv)
{
	long max = sysconf(_SC_OPEN_MAX);
	bool any = false;

	/* fcntl() rather than /proc/self/fd: it works without /proc. */
	if (max < 0 || max > 65536)
		max = 65536;
	for (int fd = 3; fd < max; fd++) {
		char path[64], target[PATH_MAX];
		ssize_t n;

		if (fcntl(fd, F_GETFD) < 0)
			continue;
		snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
		n = readlink(path, target, sizeof(target) - 1);
		target[n < 0 ? 0 : n] = '\0';
		printf("fd %d: %s\n", fd, n < 0 ? "?" : target);
		any = true;
	}
	if (!any)
		printf("fds: none\n");
	return 0;
}

/* ---- files ---- */

static int cmd_write(char **argv)
{
	char label[PATH_MAX + 16];
	int fd, e = 0;

	snprintf(label, sizeof(label), "write %s", argv[0]);
	fd = open(argv[0], O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
	if (fd < 0)
		e = errno;
	else if (write(fd, "sr-probe\n", 9) != 9)
		e = errno ? errno : EIO;
	if (fd >= 0 && close(fd) < 0 && e == 0)
		e = errno;
	print_errno(label, e);
	return 0;
}

static int cmd_read(char **argv)
{
	char label[PATH_MAX + 16], buf[65536];
	unsigned long long total = 0;
	ssize_t n = 0;
	int fd;

	snprintf(label, sizeof(label), "read %s", argv[0]);
	fd = open(argv[0], O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		print_errno(label, errno);
		return 0;
	}
	/* Capped: /dev/zero must not keep the probe busy forever. */
	while (total < (16ULL << 20) && (n = read(fd, buf, sizeof(buf))) > 0)
		total += (unsigned long long)n;
	if (n < 0)
		print_errno(label, errno);
	else
		printf("%s: ok %llu bytes\n", label, total);
	close(fd);
	return 0;
}

static int cmd_mknod(char **argv)
{
	char label[PATH_MAX + 16];
	int e;

	snprintf(label, sizeof(label), "mknod %s", argv[0]);
	/* A character device like /dev/null (1:3); removed again if it was made. */
	e = errno_of(mknod(argv[0], S_IFCHR | 0600, makedev(1, 3)));
	if (e == 0)
		unlink(argv[0]);
	print_errno(label, e);
	return 0;
}

/*
 * CVE-2019-5736: a process that can open the runtime's /proc/PID/exe for
 * writing can overwrite the host binary. Tried directly and through an
 * O_PATH descriptor re-opened via /proc/self/fd, which skips the path
 * walk that the direct open does.
 */
static int cmd_open_exe(char **argv)
{
	char path[64], label[128];
	pid_t pid = parse_pid(argv[0]);
	int fd, opath;

	if (pid < 0) {
		fprintf(stderr, "sr-probe: open-exe: bad PID '%s'\n", argv[0]);
		return 2;
	}
	snprintf(path, sizeof(path), "/proc/%d/exe", (int)pid);
	snprintf(label, sizeof(label), "open-exe %d O_WRONLY", (int)pid);
	fd = open(path, O_WRONLY | O_CLOEXEC);
	print_errno(label, fd < 0 ? errno : 0);
	if (fd >= 0)
		close(fd);

	snprintf(label, sizeof(label), "open-exe %d O_PATH", (int)pid);
	opath = open(path, O_PATH | O_CLOEXEC);
	print_errno(label, opath < 0 ? errno : 0);

	snprintf(label, sizeof(label), "open-exe %d O_PATH reopen O_WRONLY", (int)pid);
	if (opath < 0) {
		printf("%s: not attempted\n", label);
		return 0;
	}
	snprintf(path, sizeof(path), "/proc/self/fd/%d", opath);
	fd = open(path, O_WRONLY | O_CLOEXEC);
	print_errno(label, fd < 0 ? errno : 0);
	if (fd >= 0)
		close(fd);
	close(opath);
	return 0;
}

/* ---- processes and sockets ---- */

static int cmd_kill(char **argv)
{
	char label[128];
	pid_t pid = parse_pid(argv[0]);
	int sig = parse_signal(argv[1]);

	if (pid < 0 || sig < 0) {
		fprintf(stderr, "sr-probe: kill: bad PID or signal '%s' '%s'\n", argv[0], argv[1]);
		return 2;
	}
	snprintf(label, sizeof(label), "kill %s %s", argv[0], argv[1]);
	print_errno(label, errno_of(kill(pid, sig)));
	return 0;
}

/*
 * Stops the next process made in this PID namespace (the last pid + 1)
 * as soon as it exists: one PID 1 is starting is caught before its exec,
 * while PID 1 waits for that exec (CLONE_VFORK). Two spinners (this
 * process and a child made first), so that one is likely on a CPU when
 * it appears. Writes "ready" to READY_PATH once spinning; prints the pid
 * stopped.
 */
static int cmd_stop_next(char **argv)
{
	char buf[32] = "";
	pid_t child = fork(), next;
	int fd;
	ssize_t n;

	if (child < 0) {
		perror("sr-probe: stop-next: fork");
		return 2;
	}
	if (child > 0) {
		fd = open("/proc/sys/kernel/ns_last_pid", O_RDONLY | O_CLOEXEC);
		n = fd < 0 ? -1 : read(fd, buf, sizeof(buf) - 1);
		if (n <= 0) {
			perror("sr-probe: stop-next: ns_last_pid");
			kill(child, SIGKILL);
			return 2;
		}
		close(fd);
		next = (pid_t)atoi(buf) + 1;
		/* The child spins on next too: it gets the number through a pipe-less way, its own
		 * pid + 1. */
		if (next != child + 1) {
			fprintf(stderr, "sr-probe: stop-next: a process was made meanwhile\n");
			kill(child, SIGKILL);
			return 2;
		}
		fd = open(argv[0], O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
		if (fd < 0 || write(fd, "ready\n", 6) != 6) {
			perror("sr-probe: stop-next: ready file");
			kill(child, SIGKILL);
			return 2;
		}
		close(fd);
	} else {
		next = getpid() + 1;
	}
	while (kill(next, SIGSTOP) < 0)
		if (errno != ESRCH)
			break;
	if (child == 0)
		_exit(0);
	waitpid(child, NULL, 0);
	printf("stopped %d\n", (int)next);
	return 0;
}

static int cmd_ptrace(char **argv)
{
	char label[64];
	pid_t pid = parse_pid(argv[0]);

	if (pid < 0) {
		fprintf(stderr, "sr-probe: ptrace: bad PID '%s'\n", argv[0]);
		return 2;
	}
	snprintf(label, sizeof(label), "ptrace %d", (int)pid);
	print_errno(label, ptrace_attach(pid));
	return 0;
}

static int cmd_connect_abstract(char **argv)
{
	struct sockaddr_un addr = {.sun_family = AF_UNIX};
	size_t len = strlen(argv[0]);
	char label[160];
	int fd, e;

	if (len == 0 || len >= sizeof(addr.sun_path) - 1) {
		fprintf(stderr, "sr-probe: connect-abstract: bad name '%s'\n", argv[0]);
		return 2;
	}
	/* Abstract names start with a NUL and belong to the network namespace. */
	memcpy(addr.sun_path + 1, argv[0], len);
	snprintf(label, sizeof(label), "connect-abstract %s", argv[0]);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		print_errno(label, errno);
		return 0;
	}
	e = errno_of(connect(fd, (struct sockaddr *)&addr,
			     (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + len)));
	close(fd);
	print_errno(label, e);
	return 0;
}

/*
 * swap-link DIR NAME TARGET: a racer run on the host (as another user
 * who may write DIR), not in a sandbox. Swaps DIR/NAME, a directory,
 * with a symbolic link to TARGET (RENAME_EXCHANGE) until killed, giving
 * the directory mode 0755 back each time: whoever changes NAME's mode by
 * its name, following links, now and then changes TARGET's instead.
 */
static int cmd_swap_link(char **argv)
{
	struct stat a, b;
	unsigned junk = 0;
	char spare[NAME_MAX + 1], old[NAME_MAX + 16];
	int dir = open(argv[0], O_RDONLY | O_DIRECTORY | O_CLOEXEC);

	if (dir < 0 || snprintf(spare, sizeof(spare), ".%s.link", argv[1]) >= (int)sizeof(spare)) {
		perror("sr-probe: swap-link");
		return 2;
	}
	for (unsigned n = 1;; n++) {
		(void)!fchmodat(dir, argv[1], 0755, AT_SYMLINK_NOFOLLOW);
		(void)!fchmodat(dir, spare, 0755, AT_SYMLINK_NOFOLLOW);
		if (syscall(SYS_renameat2, dir, argv[1], dir, spare, RENAME_EXCHANGE) == 0 &&
		    n % 64 != 0)
			continue;
		/* One of the two went or changed (the victim replaced it): made again. */
		if (fstatat(dir, argv[1], &a, AT_SYMLINK_NOFOLLOW) < 0) {
			(void)mkdirat(dir, argv[1], 0755);
		} else if (fstatat(dir, spare, &b, AT_SYMLINK_NOFOLLOW) < 0) {
			(void)!symlinkat(argv[2], dir, spare);
		} else if (!S_ISLNK(a.st_mode) && !S_ISLNK(b.st_mode)) {
			snprintf(old, sizeof(old), ".old%u", junk++);
			(void)renameat(dir, spare, dir, old);
		}
	}
}

/* ---- main ---- */

static const struct command {
	const char *name;
	int min_args, max_args; /* max -1: any */
	int (*run)(char **argv);
	const char *usage;
} commands[] = {
    {"syscall", 1, -1, cmd_syscall, "syscall NAME...|all"},
    {"list", 0, 0, cmd_list, "list                   names for 'syscall'"},
    {"nr", 1, -1, cmd_nr, "nr NUMBER|NAME|next...  a call by number"},
    {"caps", 0, 0, cmd_caps, "caps"},
    {"tiocsti", 0, 0, cmd_tiocsti, "tiocsti"},
    {"ldisc", 0, 1, cmd_ldisc, "ldisc [N]              fd 0's line discipline (set to N first)"},
    {"fds", 0, 0, cmd_fds, "fds"},
    {"userns", 0, 0, cmd_userns, "userns"},
    {"x32", 0, 0, cmd_x32, "x32"},
    {"i386", 0, 0, cmd_i386, "i386"},
    {"write", 1, 1, cmd_write, "write PATH"},
    {"read", 1, 1, cmd_read, "read PATH"},
    {"mknod", 1, 1, cmd_mknod, "mknod PATH"},
    {"open-exe", 1, 1, cmd_open_exe, "open-exe PID"},
    {"kill", 2, 2, cmd_kill, "kill PID SIGNAL"},
    {"ptrace", 1, 1, cmd_ptrace, "ptrace PID"},
    {"stop-next", 1, 1, cmd_stop_next, "stop-next READY_PATH  SIGSTOP the next process made"},
    {"connect-abstract", 1, 1, cmd_connect_abstract, "connect-abstract NAME"},
    {"swap-link", 3, 3, cmd_swap_link, "swap-link DIR NAME TARGET  (on the host) a racer"},
};

static int usage(void)
{
	fprintf(stderr, "usage: sr-probe COMMAND [ARG...]\n");
	for (size_t i = 0; i < ARRAY_SIZE(commands); i++)
		fprintf(stderr, "  sr-probe %s\n", commands[i].usage);
	return 2;
}

int main(int argc, char **argv)
{
	int n_args = argc - 2;

	if (argc < 2)
		return usage();
	for (size_t i = 0; i < ARRAY_SIZE(commands); i++) {
		const struct command *c = &commands[i];
		int r;

		if (strcmp(argv[1], c->name) != 0)
			continue;
		if (n_args < c->min_args || (c->max_args >= 0 && n_args > c->max_args))
			return usage();
		r = c->run(argv + 2);
		if (fflush(stdout) != 0)
			return 1;
		return r;
	}
	return usage();
}
