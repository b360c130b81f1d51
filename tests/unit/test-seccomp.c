/* SPDX-License-Identifier: MIT */
/*
 * The seccomp rule table, the generated program loaded for real, and the
 * capability drop. Each filtered probe runs in its own forked child: a
 * filter cannot be removed once installed.
 */
#include "config.h"
#include "testutil.h"

#include <check.h>
#include <ctype.h>
#include <fcntl.h>
#include <linux/audit.h>
#include <linux/keyctl.h>
#include <linux/seccomp.h>
#include <pthread.h>
#include <sched.h>
#include <seccomp.h>
#include <signal.h>
#include <sys/epoll.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/personality.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include "caps.h"
#include "json.h"
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
		/*
		 * Allowed; EPERM; ENOSYS for clone3; EAFNOSUPPORT for a socket
		 * family; skipped for the core limit.
		 */
		ck_assert_msg(r->err == 0 || r->err == EPERM ||
				  (r->err == ENOSYS && !strcmp(r->syscall, "clone3")) ||
				  (r->err == EAFNOSUPPORT && !strcmp(r->syscall, "socket")) ||
				  (r->err == SR_SECCOMP_SKIP && (!strcmp(r->syscall, "setrlimit") ||
								 !strcmp(r->syscall, "prlimit64"))),
			      "%s: errno %d", r->syscall, r->err);
		ck_assert_uint_le(r->n_and, SR_SCMP_AND_MAX);
		for (size_t k = 0; k < r->n_and; k++) {
			ck_assert_uint_lt(r->and[k].arg, 6);
			ck_assert_uint_ne(r->and[k].mask, 0);
			ck_assert_uint_eq(r->and[k].value & ~r->and[k].mask, 0);
		}
		ck_assert_int_lt(r->cmp, _SR_SCMP_CMP_MAX);
		/* The refused cases of an allowed call are rows of their own. */
		if (r->err == 0 || r->cmp == SR_SCMP_ALWAYS)
			ck_assert_msg(r->cmp == SR_SCMP_ALWAYS && r->n_and == 0,
				      "%s: conditional allow, or further conditions of none",
				      r->syscall);
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
	       memcmp(a->values, b->values, a->n_values * sizeof(a->values[0])) == 0 &&
	       a->n_and == b->n_and && memcmp(a->and, b->and, a->n_and * sizeof(a->and[0])) == 0;
}

START_TEST(test_rules_unique)
{
	for (size_t i = 0; i < sr_seccomp_n_rules; i++) {
		for (size_t j = i + 1; j < sr_seccomp_n_rules; j++) {
			const struct sr_seccomp_rule *a = &sr_seccomp_rules[i],
						     *b = &sr_seccomp_rules[j];

			ck_assert_msg(!same_rule(a, b), "rows %zu and %zu: duplicate %s", i, j,
				      a->syscall);
			if (!sr_streq(a->syscall, b->syscall))
				continue;
			/* An unconditional refusal makes any other row for the call dead. */
			ck_assert_msg(!(a->err && a->cmp == SR_SCMP_ALWAYS) &&
					  !(b->err && b->cmp == SR_SCMP_ALWAYS),
				      "%s: unconditional refusal next to another row", a->syscall);
		}
	}
}
END_TEST

/*
 * Every name is a system call somewhere (a typo would be refused by the
 * generator, which is the build failing, not a hole). On x86_64 only the
 * i386-only rows may be missing.
 */
START_TEST(test_rules_resolve)
{
	static const char i386_only[] = " vm86 vm86old umount stime ";

	for (size_t i = 0; i < sr_seccomp_n_rules; i++) {
		const char *name = sr_seccomp_rules[i].syscall;
		int x86_64 = row_nr(name, SCMP_ARCH_X86_64);
		int aarch64 = row_nr(name, SCMP_ARCH_AARCH64);
		int i386 = seccomp_syscall_resolve_name_arch(SCMP_ARCH_X86, name);
		char padded[64];

		ck_assert_msg(x86_64 >= 0 || aarch64 >= 0 || i386 >= 0, "%s: unknown", name);
		snprintf(padded, sizeof(padded), " %s ", name);
		if (!strstr(i386_only, padded))
			ck_assert_msg(x86_64 >= 0, "%s: not a system call on x86_64", name);
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

static const struct sr_seccomp_rule *find_rule(const char *name, bool allowed)
{
	for (size_t i = 0; i < sr_seccomp_n_rules; i++)
		if (sr_streq(sr_seccomp_rules[i].syscall, name) &&
		    (sr_seccomp_rules[i].err == 0) == allowed)
			return &sr_seccomp_rules[i];
	return NULL;
}

/* Each space-separated name has a row, allowing or refusing. */
static void assert_rows(const char *names, bool allowed)
{
	_cleanup_free_ char *copy = strdup(names);
	char *save = NULL;

	ck_assert_ptr_nonnull(copy);
	for (char *name = strtok_r(copy, " ", &save); name; name = strtok_r(NULL, " ", &save))
		ck_assert_msg(find_rule(name, allowed), "no %s row for %s",
			      allowed ? "allow" : "refusing", name);
}

START_TEST(test_rules_cover_required)
{
	/* The calls the design brief names, and the mount API's newest. */
	assert_rows("init_module finit_module delete_module create_module kexec_load "
		    "kexec_file_load bpf perf_event_open userfaultfd keyctl add_key "
		    "request_key io_uring_setup io_uring_enter io_uring_register mount "
		    "umount2 pivot_root chroot fsopen fsconfig fsmount fspick open_tree "
		    "move_mount mount_setattr open_tree_attr statmount listmount setns unshare "
		    "clone clone3 open_by_handle_at name_to_handle_at reboot swapon swapoff "
		    "acct syslog quotactl lookup_dcookie nfsservctl personality settimeofday "
		    "clock_settime clock_adjtime adjtimex iopl ioperm vm86 vm86old ustat sysfs "
		    "_sysctl uselib get_kernel_syms query_module vhangup ioctl socket",
		    false);
	/*
	 * What ordinary userland calls, PID 1 (sandbox-run's own code inside)
	 * among it: event loops, process descriptors, spawning, sockets.
	 */
	assert_rows("read write openat openat2 close close_range statx newfstatat faccessat2 "
		    "getdents64 mmap mprotect munmap madvise brk mremap memfd_create "
		    "signalfd4 epoll_create1 epoll_ctl epoll_pwait epoll_pwait2 poll ppoll "
		    "select pselect6 eventfd2 timerfd_create inotify_init1 inotify_add_watch "
		    "pidfd_open pidfd_send_signal pidfd_getfd waitid wait4 clone fork vfork "
		    "execve execveat exit_group set_robust_list set_tid_address rseq futex "
		    "futex_waitv arch_prctl prctl getrandom copy_file_range splice tee "
		    "vmsplice sendfile fallocate flock socket socketpair connect bind listen "
		    "accept4 sendmsg recvmsg sendmmsg recvmmsg io_submit "
		    "rt_sigaction rt_sigprocmask rt_sigtimedwait sigaltstack kill tgkill "
		    "clock_gettime clock_nanosleep sched_getaffinity prlimit64 setsid setpgid "
		    "statfs ptrace fchmodat2 personality unshare ioctl",
		    true);
	ck_assert_int_eq(find_rule("clone3", false)->err, ENOSYS);
	ck_assert_ptr_null(find_rule("clone3", true));
	ck_assert_ptr_null(find_rule("io_uring_setup", true));
	ck_assert_int_eq(find_rule("io_setup", false)->err, EPERM);
	ck_assert_ptr_null(find_rule("io_setup", true));
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

/* ---- the program, run on every number ---- */

/*
 * A classic BPF interpreter for what libseccomp emits (loads from struct
 * seccomp_data, AND, conditional jumps, returns), so the generated program
 * can be checked against the table for every call number and many
 * arguments without loading it. An instruction it does not know fails
 * the test. The kernel's own answers are checked further down, for a few.
 */
#define BPF_UNKNOWN 0xdeadbeefU

static uint32_t bpf_run(const struct sock_filter *prog, size_t n, const struct seccomp_data *d)
{
	uint32_t a = 0;

	for (size_t pc = 0; pc < n; pc++) {
		const struct sock_filter *i = &prog[pc];
		bool jump;

		switch (i->code) {
		case BPF_LD | BPF_W | BPF_ABS:
			if (i->k % 4 || i->k + 4 > sizeof(*d))
				return BPF_UNKNOWN;
			memcpy(&a, (const char *)d + i->k, 4);
			continue;
		case BPF_ALU | BPF_AND | BPF_K:
			a &= i->k;
			continue;
		case BPF_JMP | BPF_JA:
			pc += i->k;
			continue;
		case BPF_JMP | BPF_JEQ | BPF_K:
			jump = a == i->k;
			break;
		case BPF_JMP | BPF_JGT | BPF_K:
			jump = a > i->k;
			break;
		case BPF_JMP | BPF_JGE | BPF_K:
			jump = a >= i->k;
			break;
		case BPF_JMP | BPF_JSET | BPF_K:
			jump = (a & i->k) != 0;
			break;
		case BPF_RET | BPF_K:
			return i->k;
		default:
			return BPF_UNKNOWN;
		}
		pc += jump ? i->jt : i->jf;
	}
	return BPF_UNKNOWN; /* ran off the end */
}

static uint32_t program_says(int nr, const uint64_t args[6])
{
	struct seccomp_data d = {.nr = nr, .arch = seccomp_arch_native()};

	memcpy(d.args, args, sizeof(d.args));
	return bpf_run(sr_seccomp_bpf, SR_ARRAY_SIZE(sr_seccomp_bpf), &d);
}

static bool row_matches(const struct sr_seccomp_rule *r, const uint64_t args[6])
{
	uint64_t v = args[r->arg] & r->mask;

	for (size_t k = 0; k < r->n_and; k++)
		if (((args[r->and[k].arg] & r->and[k].mask) == r->and[k].value) == r->and[k].ne)
			return false;

	switch (r->cmp) {
	case SR_SCMP_ALWAYS:
		return true;
	case SR_SCMP_ARG_MASKED_EQ:
		return v == r->values[0];
	case SR_SCMP_ARG_MASKED_NOT_IN:
		for (size_t i = 0; i < r->n_values; i++)
			if (v == r->values[i])
				return false;
		return true;
	case _SR_SCMP_CMP_MAX:
		break;
	}
	ck_abort_msg("%s: bad comparison", r->syscall);
	return false;
}

/* What the table means, read plainly: a refusal that matches, else allowed, else ENOSYS. */
static uint32_t table_says(int nr, const uint64_t args[6])
{
	bool allowed = false;

	for (size_t i = 0; i < sr_seccomp_n_rules; i++) {
		const struct sr_seccomp_rule *r = &sr_seccomp_rules[i];

		if (row_nr(r->syscall, seccomp_arch_native()) != nr)
			continue;
		if (r->err == 0)
			allowed = true;
		else if (row_matches(r, args))
			return SECCOMP_RET_ERRNO | (uint32_t)sr_seccomp_errno(r->err);
	}
	return allowed ? SECCOMP_RET_ALLOW : SECCOMP_RET_ERRNO | SR_SECCOMP_DEFAULT_ERRNO;
}

static uint64_t next_random(uint64_t *state)
{
	/* xorshift64*: deterministic, so a failure reproduces. */
	*state ^= *state >> 12;
	*state ^= *state << 25;
	*state ^= *state >> 27;
	return *state * 0x2545f4914f6cdd1dULL;
}

typedef uint32_t says_fn(int nr, const uint64_t args[6]);

static void assert_same_as(says_fn *says, const char *what, int nr, const uint64_t args[6])
{
	uint32_t want = table_says(nr, args), got = says(nr, args);

	ck_assert_msg(got == want, "nr %d, args 0x%llx 0x%llx: %s 0x%x, table 0x%x", nr,
		      (unsigned long long)args[0], (unsigned long long)args[1], what, got, want);
}

/*
 * Every number up to well past the newest call with plain arguments, and
 * the calls with conditions: each value, its neighbours bit by bit,
 * random ones.
 */
static void assert_matches_table(says_fn *says, const char *what)
{
	uint64_t state = 0x5eed5eed5eedULL;
	uint64_t zero[6] = {0}, ones[6];

	memset(ones, 0xff, sizeof(ones));
	for (int nr = 0; nr < 1024; nr++) {
		assert_same_as(says, what, nr, zero);
		assert_same_as(says, what, nr, ones);
	}
	for (size_t i = 0; i < sr_seccomp_n_rules; i++) {
		const struct sr_seccomp_rule *r = &sr_seccomp_rules[i];
		int nr = row_nr(r->syscall, seccomp_arch_native());
		uint64_t args[6] = {0};

		if (r->cmp == SR_SCMP_ALWAYS || nr < 0)
			continue;
		/* The further conditions met (an != one by its value's neighbour)... */
		for (size_t t = 0; t < r->n_and; t++)
			args[r->and[t].arg] = r->and[t].value ^ (r->and[t].ne ? 1 : 0);
		for (size_t v = 0; v < r->n_values; v++) {
			for (int bit = -1; bit < 64; bit++) {
				args[r->arg] = r->values[v] ^ (bit < 0 ? 0 : 1ULL << bit);
				assert_same_as(says, what, nr, args);
			}
			/* ... and each of them bit by bit, the first condition met. */
			args[r->arg] = r->values[v];
			for (size_t t = 0; t < r->n_and; t++) {
				uint64_t met = args[r->and[t].arg];

				for (int bit = -1; bit < 64; bit++) {
					args[r->and[t].arg] =
					    r->and[t].value ^ (bit < 0 ? 0 : 1ULL << bit);
					assert_same_as(says, what, nr, args);
				}
				args[r->and[t].arg] = met;
			}
		}
		for (int k = 0; k < 2000; k++) {
			args[r->arg] = next_random(&state);
			if (k % 2)
				args[r->arg] &= r->mask | (1ULL << 40); /* near the values */
			for (size_t t = 0; t < r->n_and && k % 4 >= 2; t++)
				args[r->and[t].arg] =
				    next_random(&state) & (k % 8 >= 4 ? 1 : ~0ULL);
			assert_same_as(says, what, nr, args);
		}
	}
}

START_TEST(test_program_matches_table)
{
	assert_matches_table(program_says, "program");
}
END_TEST

/* ---- the OCI profile (sandbox-run export), compiled as a runtime does ---- */

static struct sock_filter *oci_prog;
static size_t oci_len;

/*
 * What crun does with linux.seccomp (src/libcrun/seccomp.c): seccomp_init
 * with the default action, the architectures added, then one rule per
 * name of each entry, its args as conditions; a name this libseccomp
 * does not know is skipped. The program exported to BPF, unoptimized.
 */
static void oci_compile(void)
{
	_cleanup_(sr_json_decrefp) json_t *profile = NULL;
	struct sr_error err = {0};
	scmp_filter_ctx ctx;
	json_t *entry, *name, *arch;
	size_t i, k;
	int fd;
	off_t size;

	if (oci_prog)
		return;
	ck_assert_msg(sr_seccomp_oci_profile(&profile, &err) == 0, "%s", err.msg);
	ck_assert_str_eq(json_string_value(json_object_get(profile, "defaultAction")),
			 "SCMP_ACT_ERRNO");
	ctx = seccomp_init(SCMP_ACT_ERRNO(
	    (uint16_t)json_integer_value(json_object_get(profile, "defaultErrnoRet"))));
	ck_assert_ptr_nonnull(ctx);
	/* The native one alone: SCMP_ARCH_X86_64 is libseccomp's "x86_64". */
	json_array_foreach (json_object_get(profile, "architectures"), i, arch) {
		char lower[32] = "";
		const char *a = json_string_value(arch);

		ck_assert(a && strncmp(a, "SCMP_ARCH_", 10) == 0 && strlen(a) < 10 + sizeof(lower));
		for (k = 0; a[10 + k]; k++)
			lower[k] = (char)tolower((unsigned char)a[10 + k]);
		ck_assert_uint_eq(seccomp_arch_resolve_name(lower), seccomp_arch_native());
	}
	json_array_foreach (json_object_get(profile, "syscalls"), i, entry) {
		const char *action = json_string_value(json_object_get(entry, "action"));
		json_t *errno_ret = json_object_get(entry, "errnoRet");
		struct scmp_arg_cmp conds[6];
		json_t *arg;
		size_t n = 0;
		uint32_t act;

		ck_assert_ptr_nonnull(action);
		if (strcmp(action, "SCMP_ACT_ALLOW") == 0) {
			act = SCMP_ACT_ALLOW;
		} else {
			ck_assert_str_eq(action, "SCMP_ACT_ERRNO");
			ck_assert(json_is_integer(errno_ret));
			act = SCMP_ACT_ERRNO((uint16_t)json_integer_value(errno_ret));
		}
		json_array_foreach (json_object_get(entry, "args"), k, arg) {
			ck_assert_uint_lt(n, SR_ARRAY_SIZE(conds));
			ck_assert_str_eq(json_string_value(json_object_get(arg, "op")),
					 "SCMP_CMP_MASKED_EQ");
			conds[n++] = SCMP_CMP(
			    (unsigned)json_integer_value(json_object_get(arg, "index")),
			    SCMP_CMP_MASKED_EQ,
			    (scmp_datum_t)json_integer_value(json_object_get(arg, "value")),
			    (scmp_datum_t)json_integer_value(json_object_get(arg, "valueTwo")));
		}
		json_array_foreach (json_object_get(entry, "names"), k, name) {
			int nr = seccomp_syscall_resolve_name(json_string_value(name));

			if (nr == __NR_SCMP_ERROR)
				continue;
			ck_assert_msg(seccomp_rule_add_array(ctx, act, nr, (unsigned)n, conds) == 0,
				      "rule for %s refused", json_string_value(name));
		}
	}
	fd = memfd_create("oci-bpf", MFD_CLOEXEC);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(seccomp_export_bpf(ctx, fd), 0);
	size = lseek(fd, 0, SEEK_END);
	ck_assert_int_gt(size, 0);
	oci_prog = malloc((size_t)size);
	ck_assert_ptr_nonnull(oci_prog);
	ck_assert_int_eq(pread(fd, oci_prog, (size_t)size, 0), size);
	oci_len = (size_t)size / sizeof(*oci_prog);
	close(fd);
	seccomp_release(ctx);
}

/*
 * The profile, as this libseccomp compiles it. A call it does not know by
 * name (newer than it: statmount, open_tree_attr, ...) is not in its
 * program, and gets the default: so does it under a runtime with such a
 * libseccomp (docs/scale-out.md). The table's answer otherwise.
 */
static uint32_t oci_says(int nr, const uint64_t args[6])
{
	struct seccomp_data d = {.nr = nr, .arch = seccomp_arch_native()};

	oci_compile();
	memcpy(d.args, args, sizeof(d.args));
	return bpf_run(oci_prog, oci_len, &d);
}

static uint32_t oci_or_unknown_says(int nr, const uint64_t args[6])
{
	for (size_t i = 0; i < sr_n_syscall_numbers; i++)
		if (sr_syscall_number(sr_syscall_numbers[i].name, seccomp_arch_native()) == nr &&
		    seccomp_syscall_resolve_name(sr_syscall_numbers[i].name) == __NR_SCMP_ERROR) {
			ck_assert_uint_eq(oci_says(nr, args),
					  SECCOMP_RET_ERRNO | SR_SECCOMP_DEFAULT_ERRNO);
			return table_says(nr, args);
		}
	return oci_says(nr, args);
}

START_TEST(test_oci_profile_matches_table)
{
	assert_matches_table(oci_or_unknown_says, "OCI profile");
}
END_TEST

START_TEST(test_oci_profile_names)
{
	_cleanup_(sr_json_decrefp) json_t *profile = NULL;
	struct sr_error err = {0};
	json_t *entry, *name;
	size_t i, k, named = 0, calls = 0;

	ck_assert_int_eq(sr_seccomp_oci_profile(&profile, &err), 0);
	ck_assert_int_eq(json_integer_value(json_object_get(profile, "defaultErrnoRet")), ENOSYS);
	ck_assert_int_eq(json_array_size(json_object_get(profile, "architectures")), 1);
	/* Every call of the table that exists here is named, none other. */
	for (size_t r = 0; r < sr_seccomp_n_rules; r++) {
		bool first = true, found = false;

		for (size_t j = 0; j < r; j++)
			first = first &&
				strcmp(sr_seccomp_rules[j].syscall, sr_seccomp_rules[r].syscall);
		if (!first || row_nr(sr_seccomp_rules[r].syscall, seccomp_arch_native()) < 0)
			continue;
		calls++;
		json_array_foreach (json_object_get(profile, "syscalls"), i, entry)
			json_array_foreach (json_object_get(entry, "names"), k, name)
				found = found || strcmp(json_string_value(name),
							sr_seccomp_rules[r].syscall) == 0;
		/* clone3 is refused with the default's ENOSYS: no rule of its own. */
		ck_assert_msg(found || strcmp(sr_seccomp_rules[r].syscall, "clone3") == 0,
			      "%s missing from the profile", sr_seccomp_rules[r].syscall);
	}
	json_array_foreach (json_object_get(profile, "syscalls"), i, entry)
		json_array_foreach (json_object_get(entry, "names"), k, name) {
			ck_assert_int_ge(row_nr(json_string_value(name), seccomp_arch_native()), 0);
			named++;
		}
	ck_assert_uint_ge(named, calls - 1);
}
END_TEST

START_TEST(test_program_examples)
{
	uint64_t args[6] = {0};

	/* Spot checks that do not rely on table_says(). */
	ck_assert_uint_eq(program_says(SCMP_SYS(read), args), SECCOMP_RET_ALLOW);
	ck_assert_uint_eq(program_says(1000, args), SECCOMP_RET_ERRNO | ENOSYS);
	ck_assert_uint_eq(program_says(sr_syscall_number_next(seccomp_arch_native()), args),
			  SECCOMP_RET_ERRNO | ENOSYS);
	ck_assert_uint_eq(program_says(SCMP_SYS(clone3), args), SECCOMP_RET_ERRNO | ENOSYS);
	ck_assert_uint_eq(program_says(SCMP_SYS(process_madvise), args),
			  SECCOMP_RET_ERRNO | ENOSYS);
	ck_assert_uint_eq(program_says(SCMP_SYS(mount), args), SECCOMP_RET_ERRNO | EPERM);
	ck_assert_uint_eq(program_says(457 /* statmount */, args), SECCOMP_RET_ERRNO | EPERM);
	ck_assert_uint_eq(program_says(458 /* listmount */, args), SECCOMP_RET_ERRNO | EPERM);
	ck_assert_uint_eq(program_says(467 /* open_tree_attr */, args), SECCOMP_RET_ERRNO | EPERM);
	ck_assert_uint_eq(program_says(452 /* fchmodat2 */, args), SECCOMP_RET_ALLOW);
	args[1] = TIOCSTI | (1ULL << 32);
	ck_assert_uint_eq(program_says(SCMP_SYS(ioctl), args), SECCOMP_RET_ERRNO | EPERM);
	args[1] = FIONREAD;
	ck_assert_uint_eq(program_says(SCMP_SYS(ioctl), args), SECCOMP_RET_ALLOW);
	args[0] = CLONE_NEWUSER | SIGCHLD;
	ck_assert_uint_eq(program_says(SCMP_SYS(clone), args), SECCOMP_RET_ERRNO | EPERM);
	args[0] = CLONE_VM | CLONE_VFORK | SIGCHLD;
	ck_assert_uint_eq(program_says(SCMP_SYS(clone), args), SECCOMP_RET_ALLOW);
	args[0] = 0xffffffff;
	ck_assert_uint_eq(program_says(SCMP_SYS(personality), args), SECCOMP_RET_ALLOW);
	args[0] = ADDR_NO_RANDOMIZE;
	ck_assert_uint_eq(program_says(SCMP_SYS(personality), args), SECCOMP_RET_ERRNO | EPERM);
	args[0] = AF_VSOCK;
	ck_assert_uint_eq(program_says(SCMP_SYS(socket), args), SECCOMP_RET_ERRNO | EAFNOSUPPORT);
	args[0] = AF_INET6;
	ck_assert_uint_eq(program_says(SCMP_SYS(socket), args), SECCOMP_RET_ALLOW);
	/* Setting the core limit is skipped (0 returned), reading it allowed. */
	args[0] = RLIMIT_CORE;
	ck_assert_uint_eq(program_says(SCMP_SYS(setrlimit), args), SECCOMP_RET_ERRNO | 0);
	args[0] = RLIMIT_NOFILE;
	ck_assert_uint_eq(program_says(SCMP_SYS(setrlimit), args), SECCOMP_RET_ALLOW);
	args[0] = 0;
	args[1] = RLIMIT_CORE;
	args[2] = 0x7ffc12345670;
	ck_assert_uint_eq(program_says(SCMP_SYS(prlimit64), args), SECCOMP_RET_ERRNO | 0);
	args[3] = 0x7ffc12345680;
	ck_assert_uint_eq(program_says(SCMP_SYS(prlimit64), args), SECCOMP_RET_ERRNO | 0);
	args[2] = 1ULL << 32;
	ck_assert_uint_eq(program_says(SCMP_SYS(prlimit64), args), SECCOMP_RET_ERRNO | 0);
	args[2] = 0;
	ck_assert_uint_eq(program_says(SCMP_SYS(prlimit64), args), SECCOMP_RET_ALLOW);
	args[1] = RLIMIT_NOFILE;
	args[2] = 0x7ffc12345670;
	ck_assert_uint_eq(program_says(SCMP_SYS(prlimit64), args), SECCOMP_RET_ALLOW);
	args[0] = 1;
	ck_assert_uint_eq(program_says(SCMP_SYS(prlimit64), args), SECCOMP_RET_ERRNO | EPERM);
	memset(args, 0, sizeof(args));
#if defined(__x86_64__)
	/* x32 numbers carry the x86_64 arch: the program kills them by number. */
	ck_assert_uint_eq(program_says(__X32_SYSCALL_BIT | SCMP_SYS(read), args),
			  SECCOMP_RET_KILL_PROCESS);
#endif
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

static int try_unknown_1000(void)
{
	return by_number(1000);
}

static int try_number_next(void)
{
	return by_number(sr_syscall_number_next(seccomp_arch_native()));
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

static int try_process_madvise(void)
{
	return by_number(SYS_process_madvise);
}

/* What PID 1 and every event loop need, each on a real descriptor. */
static int try_event_calls(void)
{
	_cleanup_close_ int mfd = -1, sfd = -1, efd = -1, pfd = -1;
	struct epoll_event ev = {.events = EPOLLIN};
	sigset_t set;

	sigemptyset(&set);
	sigaddset(&set, SIGUSR1);
	mfd = memfd_create("sr-test", MFD_CLOEXEC);
	sfd = signalfd(-1, &set, SFD_CLOEXEC);
	efd = epoll_create1(EPOLL_CLOEXEC);
	pfd = (int)syscall(SYS_pidfd_open, getpid(), 0);
	if (mfd < 0 || sfd < 0 || efd < 0 || pfd < 0)
		return errno;
	ev.data.fd = sfd;
	if (epoll_ctl(efd, EPOLL_CTL_ADD, sfd, &ev) < 0 || epoll_wait(efd, &ev, 1, 0) < 0)
		return errno;
	if (syscall(SYS_pidfd_send_signal, pfd, 0, NULL, 0) < 0)
		return errno;
	return errno_of(syscall(SYS_close_range, 1000, 2000, 0));
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

/* Default-deny: whatever no row names gets ENOSYS. */
START_TEST(test_filter_default)
{
	assert_filtered(try_unknown_1000, ENOSYS);
	assert_filtered(try_number_next, ENOSYS);
	assert_filtered(try_process_madvise, ENOSYS);
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
	assert_filtered(try_event_calls, 0);
}
END_TEST

/* The same probes without the filter: proof the assertions above can fail. */
START_TEST(test_unfiltered_control)
{
	assert_probe(try_clone3, false, EINVAL, "try_clone3");
	assert_probe(try_setns, false, EBADF, "try_setns");
	assert_probe(try_mount, false, EINVAL, "try_mount");
	assert_probe(try_process_madvise, false, EBADF, "try_process_madvise");
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

/*
 * Setting the core limit (setrlimit, as bash's ulimit does; prlimit with
 * an old value asked too; the setrlimit call) returns 0 and leaves it at
 * the soft 1 the test set; reading it works.
 */
static int try_core_limit(void)
{
	struct rlimit zero = {0, 0}, got = {7, 7}, old = {7, 7};

	if (setrlimit(RLIMIT_CORE, &zero) < 0 || prlimit(0, RLIMIT_CORE, &zero, &old) < 0 ||
	    syscall(SYS_setrlimit, RLIMIT_CORE, &zero) < 0)
		return errno;
	if (getrlimit(RLIMIT_CORE, &got) < 0 || prlimit(0, RLIMIT_CORE, NULL, &old) < 0)
		return errno;
	return got.rlim_cur == 1 && old.rlim_cur == 1 ? 0 : EINVAL;
}

START_TEST(test_filter_core_limit)
{
	struct rlimit orig, one;

	ck_assert_int_eq(getrlimit(RLIMIT_CORE, &orig), 0);
	one = (struct rlimit){1, orig.rlim_max};
	ck_assert_int_eq(setrlimit(RLIMIT_CORE, &one), 0);
	assert_filtered(try_core_limit, 0);
	/* Unfiltered, the limit goes to 0. */
	ck_assert_int_eq(WEXITSTATUS(run_probe(try_core_limit, false)), EINVAL);
	ck_assert_int_eq(setrlimit(RLIMIT_CORE, &orig), 0);
}
END_TEST

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
	tcase_add_test(table, test_rules_resolve);
	tcase_add_test(table, test_numbers_table);
	tcase_add_test(table, test_rules_cover_required);
	tcase_add_test(table, test_program_checks_arch_first);
	tcase_add_test(table, test_program_matches_table);
	tcase_add_test(table, test_program_examples);
	tcase_add_test(table, test_oci_profile_matches_table);
	tcase_add_test(table, test_oci_profile_names);
	suite_add_tcase(s, table);

	tcase_add_test(filter, test_filter_refuses);
	tcase_add_test(filter, test_filter_default);
	tcase_add_test(filter, test_filter_allows);
	tcase_add_test(filter, test_unfiltered_control);
#if defined(__x86_64__)
	tcase_add_test(filter, test_filter_kills_other_abis);
#endif
	tcase_add_test(filter, test_filter_terminal_ioctls);
	tcase_add_test(filter, test_filter_core_limit);
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
