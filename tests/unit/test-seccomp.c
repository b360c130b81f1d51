/* SPDX-License-Identifier: MIT */
/*
 * The seccomp rule table, the generated program loaded for real, and the
 * capability drop. Each filtered probe runs in its own forked child: a
 * filter cannot be removed once installed.
 */
#include "config.h"
#include "testutil.h"

#include <check.h>
#include <fcntl.h>
#include <linux/audit.h>
#include <linux/keyctl.h>
#include <pthread.h>
#include <sched.h>
#include <seccomp.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/personality.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include "caps.h"
#include "seccomp-bpf.h"
#include "seccomp-rules.h"
#include "seccomp-syscalls.h"
#include "seccomp.h"
#include "util.h"

#ifndef __X32_SYSCALL_BIT
#define __X32_SYSCALL_BIT 0x40000000
#endif

#define PROBE_SETUP_FAILED 200

/* ---- the table ---- */

/* A row's number on ARCH: libseccomp's, else seccomp-syscalls.c's; < 0 if none. */
static int row_nr(const char *name, uint32_t arch)
{
	int nr = seccomp_syscall_resolve_name_arch(arch, name);

	if (nr == __NR_SCMP_ERROR)
		nr = sr_syscall_number(name, arch);
	return nr;
}

START_TEST(test_rules_well_formed)
{
	for (size_t i = 0; i < sr_seccomp_n_rules; i++) {
		const struct sr_seccomp_rule *r = &sr_seccomp_rules[i];

		ck_assert_msg(r->syscall && *r->syscall, "row %zu has no syscall", i);
		ck_assert_msg(r->why && *r->why, "%s: no why", r->syscall);
		/* EPERM; ENOSYS for clone3; EAFNOSUPPORT for a socket family. */
		ck_assert_msg(r->err == EPERM || r->err == ENOSYS ||
				  (r->err == EAFNOSUPPORT && !strcmp(r->syscall, "socket")),
			      "%s: errno %d", r->syscall, r->err);
		ck_assert_int_lt(r->cmp, _SR_SCMP_CMP_MAX);
		if (r->cmp == SR_SCMP_ALWAYS)
			continue;
		ck_assert_msg(r->arg < 6, "%s: arg %u", r->syscall, r->arg);
		ck_assert_msg(r->mask != 0, "%s: empty mask", r->syscall);
		ck_assert_msg(r->n_values >= 1 && r->n_values <= SR_SCMP_VALUES_MAX,
			      "%s: %zu values", r->syscall, r->n_values);
		if (r->cmp == SR_SCMP_ARG_MASKED_EQ)
			ck_assert_uint_eq(r->n_values, 1);
		for (size_t v = 0; v < r->n_values; v++)
			ck_assert_msg((r->values[v] & ~r->mask) == 0,
				      "%s: value 0x%llx outside mask", r->syscall,
				      (unsigned long long)r->values[v]);
	}
}
END_TEST

static bool same_rule(const struct sr_seccomp_rule *a, const struct sr_seccomp_rule *b)
{
	if (!sr_streq(a->syscall, b->syscall) || a->cmp != b->cmp)
		return false;
	if (a->cmp == SR_SCMP_ALWAYS || b->cmp == SR_SCMP_ALWAYS)
		return true;
	return a->arg == b->arg && a->mask == b->mask && a->n_values == b->n_values &&
	       memcmp(a->values, b->values, a->n_values * sizeof(a->values[0])) == 0;
}

START_TEST(test_rules_unique)
{
	for (size_t i = 0; i < sr_seccomp_n_rules; i++) {
		for (size_t j = i + 1; j < sr_seccomp_n_rules; j++) {
			const struct sr_seccomp_rule *a = &sr_seccomp_rules[i],
						     *b = &sr_seccomp_rules[j];

			ck_assert_msg(!same_rule(a, b), "rows %zu and %zu: duplicate %s", i, j,
				      a->syscall);
			/* An unconditional row makes any other row for the call dead. */
			if (sr_streq(a->syscall, b->syscall))
				ck_assert_msg(a->cmp != SR_SCMP_ALWAYS && b->cmp != SR_SCMP_ALWAYS,
					      "%s: unconditional row next to another", a->syscall);
		}
	}
}
END_TEST

START_TEST(test_rules_resolve_x86_64)
{
	for (size_t i = 0; i < sr_seccomp_n_rules; i++) {
		const struct sr_seccomp_rule *r = &sr_seccomp_rules[i];
		int nr = row_nr(r->syscall, SCMP_ARCH_X86_64);

		/* Optional rows must still be real names somewhere. */
		ck_assert_msg(nr != __NR_SCMP_ERROR && nr != -ENOENT, "%s: unknown", r->syscall);
		if (!r->optional)
			ck_assert_msg(nr >= 0, "%s: not a system call on x86_64", r->syscall);
	}
}
END_TEST

START_TEST(test_numbers_table)
{
	for (size_t i = 0; i < sr_n_syscall_numbers; i++) {
		const struct sr_syscall_number *s = &sr_syscall_numbers[i];
		int lib_x86_64 = seccomp_syscall_resolve_name_arch(SCMP_ARCH_X86_64, s->name);
		int lib_aarch64 = seccomp_syscall_resolve_name_arch(SCMP_ARCH_AARCH64, s->name);

		ck_assert_msg(s->since && *s->since, "%s: no kernel version", s->name);
		ck_assert_msg(s->x86_64 >= 0 || s->aarch64 >= 0, "%s: no number", s->name);
		/* Where libseccomp knows the call, the table must agree with it. */
		if (lib_x86_64 != __NR_SCMP_ERROR)
			ck_assert_int_eq(lib_x86_64 < 0 ? -1 : lib_x86_64, s->x86_64);
		if (lib_aarch64 != __NR_SCMP_ERROR)
			ck_assert_int_eq(lib_aarch64 < 0 ? -1 : lib_aarch64, s->aarch64);
		/* Since Linux 5.1 a new call has one number everywhere it exists. */
		if (s->x86_64 >= 424 && s->aarch64 >= 0)
			ck_assert_int_eq(s->x86_64, s->aarch64);
		ck_assert_int_eq(sr_syscall_number(s->name, AUDIT_ARCH_X86_64),
				 s->x86_64 < 0 ? -ENOSYS : s->x86_64);
	}
	ck_assert_int_eq(sr_syscall_number("read", AUDIT_ARCH_X86_64), -ENOENT);
	ck_assert_int_eq(sr_syscall_number("statmount", AUDIT_ARCH_S390X), -ENOENT);
	ck_assert_int_eq(sr_syscall_number("uretprobe", AUDIT_ARCH_AARCH64), -ENOSYS);
	/* listns (470, Linux 6.19) is the newest the table knows. */
	ck_assert_int_eq(sr_syscall_number_next(AUDIT_ARCH_X86_64), 471);
	ck_assert_int_eq(sr_syscall_number_next(AUDIT_ARCH_AARCH64), 471);
	ck_assert_int_eq(sr_syscall_number_next(AUDIT_ARCH_S390X), -ENOENT);
}
END_TEST

static const struct sr_seccomp_rule *find_rule(const char *name)
{
	for (size_t i = 0; i < sr_seccomp_n_rules; i++)
		if (sr_streq(sr_seccomp_rules[i].syscall, name))
			return &sr_seccomp_rules[i];
	return NULL;
}

START_TEST(test_rules_cover_required)
{
	/* The calls the design brief names, space-separated. */
	static const char required[] =
	    "init_module finit_module delete_module create_module kexec_load "
	    "kexec_file_load bpf perf_event_open userfaultfd keyctl add_key "
	    "request_key io_uring_setup io_uring_enter io_uring_register mount "
	    "umount2 pivot_root chroot fsopen fsconfig fsmount fspick open_tree "
	    "move_mount mount_setattr open_tree_attr statmount listmount setns unshare "
	    "clone clone3 open_by_handle_at "
	    "name_to_handle_at reboot swapon swapoff acct syslog quotactl "
	    "lookup_dcookie nfsservctl personality settimeofday clock_settime "
	    "clock_adjtime adjtimex iopl ioperm vm86 vm86old ustat sysfs _sysctl "
	    "uselib get_kernel_syms query_module vhangup ioctl";
	_cleanup_free_ char *copy = strdup(required);
	char *save = NULL;

	ck_assert_ptr_nonnull(copy);
	for (char *name = strtok_r(copy, " ", &save); name; name = strtok_r(NULL, " ", &save))
		ck_assert_msg(find_rule(name), "no row for %s", name);
	ck_assert_int_eq(find_rule("clone3")->err, ENOSYS);
	ck_assert_ptr_null(find_rule("ptrace"));
}
END_TEST

START_TEST(test_program_checks_arch_first)
{
	/* ld [offsetof(struct seccomp_data, arch)]; jeq <native AUDIT_ARCH_*> */
	ck_assert_uint_le(SR_ARRAY_SIZE(sr_seccomp_bpf), BPF_MAXINSNS);
	ck_assert_uint_eq(sr_seccomp_bpf[0].code, BPF_LD | BPF_W | BPF_ABS);
	ck_assert_uint_eq(sr_seccomp_bpf[0].k, 4);
	ck_assert_uint_eq(sr_seccomp_bpf[1].code, BPF_JMP | BPF_JEQ | BPF_K);
	ck_assert_uint_eq(sr_seccomp_bpf[1].k, seccomp_arch_native());
	/*
	 * Any other architecture (i386 through int 0x80) jumps straight to
	 * "kill the process": checked here on every kernel, also those that
	 * have no int 0x80 entry for test_filter_kills_other_abis to try.
	 */
	ck_assert_uint_eq(sr_seccomp_bpf[2 + sr_seccomp_bpf[1].jf].code, BPF_RET | BPF_K);
	ck_assert_uint_eq(sr_seccomp_bpf[2 + sr_seccomp_bpf[1].jf].k, SECCOMP_RET_KILL_PROCESS);
}
END_TEST

/* ---- the program, loaded ---- */

static int errno_of(long r)
{
	return r < 0 ? errno : 0;
}

/*
 * Runs probe() in a child, under the filter when `filtered`. The probe
 * returns 0 or an errno; the result is the child's raw wait status.
 */
static int run_probe(int (*probe)(void), bool filtered)
{
	int status;
	pid_t pid;

	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		struct sr_error err = {0};

		if (filtered &&
		    (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0 || sr_seccomp_apply(&err) < 0))
			_exit(PROBE_SETUP_FAILED);
		_exit(probe());
	}
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	return status;
}

static void assert_probe(int (*probe)(void), bool filtered, int expected, const char *what)
{
	int status = run_probe(probe, filtered);

	ck_assert_msg(!WIFSIGNALED(status), "%s: killed by signal %d", what, WTERMSIG(status));
	ck_assert_msg(WEXITSTATUS(status) != PROBE_SETUP_FAILED, "%s: filter not installed", what);
	ck_assert_msg(WEXITSTATUS(status) == expected, "%s: got %s, want %s", what,
		      strerror(WEXITSTATUS(status)), strerror(expected));
}

#define assert_filtered(probe, expected) assert_probe(probe, true, expected, #probe)

static int try_keyctl(void)
{
	return errno_of(syscall(SYS_keyctl, KEYCTL_GET_KEYRING_ID, KEY_SPEC_SESSION_KEYRING, 0));
}

static int try_bpf(void)
{
	return errno_of(syscall(SYS_bpf, -1, NULL, 0));
}

static int try_perf_event_open(void)
{
	return errno_of(syscall(SYS_perf_event_open, NULL, 0, -1, -1, 0));
}

static int try_userfaultfd(void)
{
	return errno_of(syscall(SYS_userfaultfd, O_CLOEXEC));
}

static int try_io_uring_setup(void)
{
	return errno_of(syscall(SYS_io_uring_setup, 0, NULL));
}

static int try_mount(void)
{
	/* MS_NOUSER: the kernel refuses it with EINVAL before doing anything. */
	return errno_of(mount(NULL, "/", NULL, MS_NOUSER, NULL));
}

static int try_unshare_user(void)
{
	return errno_of(unshare(CLONE_NEWUSER));
}

static int try_unshare_mnt(void)
{
	return errno_of(unshare(CLONE_NEWNS));
}

static int try_unshare_time(void)
{
	return errno_of(unshare(CLONE_NEWTIME));
}

static int try_unshare_files(void)
{
	return errno_of(unshare(CLONE_FILES));
}

static int raw_clone(unsigned long flags)
{
	long pid = syscall(SYS_clone, flags | SIGCHLD, NULL, NULL, NULL, 0);

	if (pid == 0)
		_exit(0);
	if (pid < 0)
		return errno;
	return waitpid((pid_t)pid, NULL, 0) == pid ? 0 : errno;
}

static int try_clone_user(void)
{
	return raw_clone(CLONE_NEWUSER);
}

static int try_clone_plain(void)
{
	return raw_clone(0);
}

static int try_clone3(void)
{
	return errno_of(syscall(SYS_clone3, NULL, 0));
}

static int try_setns(void)
{
	return errno_of(syscall(SYS_setns, -1, 0));
}

static int try_open_by_handle_at(void)
{
	return errno_of(syscall(SYS_open_by_handle_at, -1, NULL, 0));
}

static int try_kexec_load(void)
{
	/* Flags name no architecture: refused with EINVAL, loads nothing. */
	return errno_of(syscall(SYS_kexec_load, 0, 0, NULL, ~0UL));
}

static int try_init_module(void)
{
	return errno_of(syscall(SYS_init_module, NULL, 0, NULL));
}

static int try_personality_query(void)
{
	return errno_of(personality(0xffffffff));
}

static int try_personality_linux(void)
{
	return errno_of(personality(PER_LINUX));
}

static int try_personality_norandom(void)
{
	return errno_of(personality(ADDR_NO_RANDOMIZE));
}

static int try_personality_norandom_high(void)
{
	/* The kernel reads an unsigned int: this is ADDR_NO_RANDOMIZE. */
	return errno_of(syscall(SYS_personality, (1UL << 32) | ADDR_NO_RANDOMIZE));
}

static int try_getpid(void)
{
	return syscall(SYS_getpid) == getpid() ? 0 : EIO;
}

static int try_pipe_io(void)
{
	int fds[2];
	char c = 0;

	if (pipe(fds) < 0)
		return errno;
	if (write(fds[1], "x", 1) != 1 || read(fds[0], &c, 1) != 1)
		return errno ? errno : EIO;
	return c == 'x' ? 0 : EIO;
}

static int try_fork(void)
{
	pid_t pid = fork();
	int status;

	if (pid == 0)
		_exit(7);
	if (pid < 0)
		return errno;
	if (waitpid(pid, &status, 0) != pid)
		return errno;
	return WIFEXITED(status) && WEXITSTATUS(status) == 7 ? 0 : EIO;
}

static int thread_token;

static void *thread_main(void *arg)
{
	return arg;
}

static int try_thread(void)
{
	pthread_t t;
	void *ret = NULL;
	int r;

	/* glibc tries clone3 first; ENOSYS must make it fall back to clone. */
	r = pthread_create(&t, NULL, thread_main, &thread_token);
	if (r != 0)
		return r;
	r = pthread_join(t, &ret);
	return r ? r : ret == &thread_token ? 0 : EIO;
}

/* A call by number with invalid arguments (-1, NULL): EBADF or EFAULT from the kernel. */
static int by_number(long nr)
{
	return errno_of(syscall(nr, -1L, 0L, 0L, 0L, 0L, 0L));
}

static int try_by_table(const char *name)
{
	int nr = sr_syscall_number(name, seccomp_arch_native());

	return nr < 0 ? PROBE_SETUP_FAILED : by_number(nr);
}

static int try_statmount(void)
{
	return try_by_table("statmount");
}

static int try_listmount(void)
{
	return try_by_table("listmount");
}

static int try_open_tree_attr(void)
{
	return try_by_table("open_tree_attr");
}

START_TEST(test_filter_refuses)
{
	assert_filtered(try_keyctl, EPERM);
	assert_filtered(try_bpf, EPERM);
	assert_filtered(try_perf_event_open, EPERM);
	assert_filtered(try_userfaultfd, EPERM);
	assert_filtered(try_io_uring_setup, EPERM);
	assert_filtered(try_mount, EPERM);
	assert_filtered(try_unshare_user, EPERM);
	assert_filtered(try_unshare_mnt, EPERM);
	assert_filtered(try_unshare_time, EPERM);
	assert_filtered(try_clone_user, EPERM);
	assert_filtered(try_setns, EPERM);
	assert_filtered(try_open_by_handle_at, EPERM);
	assert_filtered(try_kexec_load, EPERM);
	assert_filtered(try_init_module, EPERM);
	assert_filtered(try_personality_norandom, EPERM);
	assert_filtered(try_personality_norandom_high, EPERM);
	assert_filtered(try_clone3, ENOSYS);
	/* The newest mount API, refused by number (libseccomp 2.5 does not know it). */
	assert_filtered(try_statmount, EPERM);
	assert_filtered(try_listmount, EPERM);
	assert_filtered(try_open_tree_attr, EPERM);
}
END_TEST

START_TEST(test_filter_allows)
{
	assert_filtered(try_getpid, 0);
	assert_filtered(try_pipe_io, 0);
	assert_filtered(try_fork, 0);
	assert_filtered(try_clone_plain, 0);
	assert_filtered(try_thread, 0);
	assert_filtered(try_unshare_files, 0);
	assert_filtered(try_personality_query, 0);
	assert_filtered(try_personality_linux, 0);
}
END_TEST

/* The same probes without the filter: proof the assertions above can fail. */
START_TEST(test_unfiltered_control)
{
	assert_probe(try_clone3, false, EINVAL, "try_clone3");
	assert_probe(try_setns, false, EBADF, "try_setns");
	assert_probe(try_mount, false, EINVAL, "try_mount");
	/* EFAULT since Linux 6.8 and 6.15; ENOSYS before: never EPERM. */
	ck_assert_int_ne(WEXITSTATUS(run_probe(try_statmount, false)), EPERM);
	ck_assert_int_ne(WEXITSTATUS(run_probe(try_open_tree_attr, false)), EPERM);
}
END_TEST

#if defined(__x86_64__)
static int try_x32_getpid(void)
{
	return errno_of(syscall(__X32_SYSCALL_BIT | SYS_getpid));
}

static int try_i386_getpid(void)
{
	long ret = 20; /* __NR_getpid in the i386 table */

	/* Where int 0x80 faults, die of it: ASan's handler would make it exit(1). */
	signal(SIGSEGV, SIG_DFL);

	__asm__ volatile("int $0x80" : "+a"(ret) : : "memory", "r8", "r9", "r10", "r11");
	return ret == getpid() ? 0 : ret < 0 ? (int)-ret : EIO;
}

static void assert_killed_by_sigsys(int (*probe)(void), const char *what)
{
	int status = run_probe(probe, true);

	ck_assert_msg(WIFSIGNALED(status), "%s: not killed (exit %d)", what, WEXITSTATUS(status));
	ck_assert_msg(WTERMSIG(status) == SIGSYS, "%s: killed by signal %d", what,
		      WTERMSIG(status));
}

START_TEST(test_filter_kills_other_abis)
{
	/*
	 * Without the filter neither kills: an x32 call returns ENOSYS (or
	 * works, where x32 is built in) and int 0x80 reaches the i386 getpid
	 * (or faults with SIGSEGV where ia32 emulation is off).
	 */
	int bare_i386 = run_probe(try_i386_getpid, false);
	int status;

	ck_assert(WIFEXITED(run_probe(try_x32_getpid, false)));
	assert_killed_by_sigsys(try_x32_getpid, "try_x32_getpid");
	if (!WIFSIGNALED(bare_i386) || WTERMSIG(bare_i386) != SIGSEGV) {
		assert_killed_by_sigsys(try_i386_getpid, "try_i386_getpid");
		return;
	}
	/*
	 * No int 0x80 entry at all (ia32_emulation=0, or a PVM guest, which
	 * faults on the instruction): no system call is ever made, so there is
	 * nothing for the filter to kill (test_program_checks_arch_first checks
	 * the program's answer instead). It must still not run.
	 */
	status = run_probe(try_i386_getpid, true);
	ck_assert_msg(WIFSIGNALED(status) && WTERMSIG(status) == SIGSEGV,
		      "try_i386_getpid without an int 0x80 entry: status %#x", status);
}
END_TEST
#endif

/* ---- TIOCSTI / TIOCLINUX on a real terminal ---- */

static int open_pty_slave(void)
{
	int master = posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC);

	if (master < 0 || grantpt(master) < 0 || unlockpt(master) < 0)
		return -1;
	/* The master stays open (leaked to the short-lived child) so the slave lives. */
	return open(ptsname(master), O_RDWR | O_NOCTTY | O_CLOEXEC);
}

static int tty_ioctl(unsigned long request)
{
	int fd = open_pty_slave();
	/* TIOCSTI reads a char, TIOCLINUX a subcode, TIOCGWINSZ writes this. */
	struct winsize arg = {0};

	if (fd < 0)
		return PROBE_SETUP_FAILED;
	/* syscall(): glibc's ioctl() would be fine too, but this says "all 64 bits". */
	return errno_of(syscall(SYS_ioctl, fd, request, &arg));
}

static int try_tiocsti(void)
{
	return tty_ioctl(TIOCSTI);
}

static int try_tiocsti_high(void)
{
	return tty_ioctl((1UL << 32) | TIOCSTI);
}

static int try_tioclinux(void)
{
	return tty_ioctl(TIOCLINUX);
}

static int try_tiocgwinsz(void)
{
	return tty_ioctl(TIOCGWINSZ);
}

/* N_TTY (0, what arg holds) on a fresh pty: unfiltered, a harmless success. */
static int try_tiocsetd(void)
{
	return tty_ioctl(TIOCSETD);
}

static int try_tiocsetd_high(void)
{
	return tty_ioctl((1UL << 32) | TIOCSETD);
}

START_TEST(test_filter_terminal_ioctls)
{
	assert_filtered(try_tiocsti, EPERM);
	assert_filtered(try_tiocsti_high, EPERM);
	assert_filtered(try_tioclinux, EPERM);
	assert_filtered(try_tiocsetd, EPERM);
	assert_filtered(try_tiocsetd_high, EPERM);
	assert_filtered(try_tiocgwinsz, 0);
	/*
	 * Unfiltered, the kernel drops the high bits: the call is TIOCSTI and
	 * gets TIOCSTI's answer (whatever the caller's privileges make it).
	 */
	ck_assert_int_eq(WEXITSTATUS(run_probe(try_tiocsti_high, false)),
			 WEXITSTATUS(run_probe(try_tiocsti, false)));
	/* Unfiltered, N_TTY on a pty is set (both ways): EPERM is the filter's. */
	ck_assert_int_eq(WEXITSTATUS(run_probe(try_tiocsetd, false)), 0);
	ck_assert_int_eq(WEXITSTATUS(run_probe(try_tiocsetd_high, false)), 0);
}
END_TEST

START_TEST(test_apply_requires_no_new_privs)
{
	pid_t pid = fork();
	int status;

	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		struct sr_error err = {0};
		int r = sr_seccomp_apply(&err);

		_exit(r == -EPERM && strstr(err.msg, "no_new_privs") ? 0 : 1);
	}
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	ck_assert(WIFEXITED(status));
	ck_assert_int_eq(WEXITSTATUS(status), 0);
}
END_TEST

/* ---- capabilities ---- */

/*
 * A child in a new user namespace (where it holds every capability)
 * drops them all and sends back its /proc/self/status and securebits.
 */
static char *status_after_drop(bool drop)
{
	/* A leading newline lets field() match "\nKey:" on the first line too. */
	static char buf[8192] = "\n";
	int fds[2], status;
	size_t len = 1;
	ssize_t n;
	pid_t pid;

	ck_assert_int_eq(pipe(fds), 0);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		struct sr_error err = {0};
		char line[64];
		int fd;

		close(fds[0]);
		if (unshare(CLONE_NEWUSER) < 0)
			_exit(2);
		if (drop && sr_caps_drop_all(&err) < 0) {
			dprintf(fds[1], "error: %s\n", err.msg);
			_exit(3);
		}
		snprintf(line, sizeof(line), "Securebits:\t%x\n", prctl(PR_GET_SECUREBITS));
		if (write(fds[1], line, strlen(line)) < 0)
			_exit(4);
		fd = open("/proc/self/status", O_RDONLY | O_CLOEXEC);
		while (fd >= 0 && (n = read(fd, line, sizeof(line))) > 0)
			if (write(fds[1], line, (size_t)n) != n)
				_exit(4);
		_exit(fd < 0 ? 4 : 0);
	}
	close(fds[1]);
	while ((n = read(fds[0], buf + len, sizeof(buf) - 1 - len)) > 0)
		len += (size_t)n;
	buf[len] = '\0';
	close(fds[0]);
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0, "child failed (%d): %s",
		      WEXITSTATUS(status), buf);
	return buf;
}

static const char *field(const char *status, const char *key)
{
	static char value[64];
	char needle[64];
	const char *p;
	size_t n;

	snprintf(needle, sizeof(needle), "\n%s:\t", key);
	p = strstr(status, needle);
	ck_assert_msg(p, "no %s in /proc/self/status", key);
	p += strlen(needle);
	n = strcspn(p, "\n");
	ck_assert_uint_lt(n, sizeof(value));
	memcpy(value, p, n);
	value[n] = '\0';
	return value;
}

START_TEST(test_caps_drop_all)
{
	const char *st = status_after_drop(true);

	ck_assert_str_eq(field(st, "CapInh"), "0000000000000000");
	ck_assert_str_eq(field(st, "CapPrm"), "0000000000000000");
	ck_assert_str_eq(field(st, "CapEff"), "0000000000000000");
	ck_assert_str_eq(field(st, "CapBnd"), "0000000000000000");
	ck_assert_str_eq(field(st, "CapAmb"), "0000000000000000");
	ck_assert_str_eq(field(st, "NoNewPrivs"), "1");
	/* NOROOT, NO_SETUID_FIXUP, NO_CAP_AMBIENT_RAISE and every lock. */
	ck_assert_str_eq(field(st, "Securebits"), "ef");
}
END_TEST

START_TEST(test_caps_control)
{
	/* Without the drop the new namespace grants everything. */
	const char *st = status_after_drop(false);

	ck_assert_str_ne(field(st, "CapEff"), "0000000000000000");
	ck_assert_str_ne(field(st, "CapBnd"), "0000000000000000");
	ck_assert_str_eq(field(st, "NoNewPrivs"), "0");
}
END_TEST

static Suite *seccomp_suite(void)
{
	Suite *s = suite_create("seccomp");
	TCase *table = tcase_create("table");
	TCase *filter = tcase_create("filter");
	TCase *caps = tcase_create("caps");

	tcase_add_test(table, test_rules_well_formed);
	tcase_add_test(table, test_rules_unique);
	tcase_add_test(table, test_rules_resolve_x86_64);
	tcase_add_test(table, test_numbers_table);
	tcase_add_test(table, test_rules_cover_required);
	tcase_add_test(table, test_program_checks_arch_first);
	suite_add_tcase(s, table);

	tcase_add_test(filter, test_filter_refuses);
	tcase_add_test(filter, test_filter_allows);
	tcase_add_test(filter, test_unfiltered_control);
#if defined(__x86_64__)
	tcase_add_test(filter, test_filter_kills_other_abis);
#endif
	tcase_add_test(filter, test_filter_terminal_ioctls);
	tcase_add_test(filter, test_apply_requires_no_new_privs);
	suite_add_tcase(s, filter);

	tcase_add_test(caps, test_caps_drop_all);
	tcase_add_test(caps, test_caps_control);
	suite_add_tcase(s, caps);
	return s;
}

int main(void)
{
	return sr_test_run(seccomp_suite());
}
