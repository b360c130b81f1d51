/* SPDX-License-Identifier: MIT */
/* The seccomp rule table, shared by the build-time generator and the unit tests. */
#pragma once

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * What a call the table does not name gets: ENOSYS, as on a kernel too old
 * to have it, so that a C library or runtime falls back to an older call
 * (as glibc does from clone3 to clone, from fchmodat2 to fchmodat).
 */
#define SR_SECCOMP_DEFAULT_ERRNO ENOSYS

/*
 * When a row matches. An allow row (err 0) is unconditional; the refused
 * cases of an allowed call are rows of their own (the generator allows
 * the rest), so every condition describes the refused case.
 */
enum sr_seccomp_cmp {
	SR_SCMP_ALWAYS,		   /* every call */
	SR_SCMP_ARG_MASKED_EQ,	   /* (arg[n] & mask) == values[0] */
	SR_SCMP_ARG_MASKED_NOT_IN, /* (arg[n] & mask) is none of values[] */
	_SR_SCMP_CMP_MAX,
};

#define SR_SCMP_VALUES_MAX 6

/*
 * A row's err for a case the call is skipped in and reports success:
 * SCMP_ACT_ERRNO(0), which the kernel answers by returning 0 without
 * running the call (kernel/seccomp.c: -data as the return value).
 */
#define SR_SECCOMP_SKIP (-1)

/* The errno a refusing row's err returns: 0 for SR_SECCOMP_SKIP. */
static inline int sr_seccomp_errno(int err)
{
	return err == SR_SECCOMP_SKIP ? 0 : err;
}

/* A further condition of a row: (arg[n] & mask) == value, or != with ne. */
struct sr_seccomp_and {
	unsigned arg;
	uint64_t mask;
	uint64_t value;
	bool ne;
};

#define SR_SCMP_AND_MAX 2

struct sr_seccomp_rule {
	/*
	 * A name libseccomp knows, or one of seccomp-syscalls.c. A call that
	 * does not exist on the architecture built for (vm86 on x86_64, open
	 * on aarch64) is left out of the program, with a note.
	 */
	const char *syscall;
	/* 0: allowed; SR_SECCOMP_SKIP: skipped, 0 returned; otherwise the errno returned. */
	int err;
	enum sr_seccomp_cmp cmp;
	unsigned arg;
	uint64_t mask;
	size_t n_values;
	uint64_t values[SR_SCMP_VALUES_MAX];
	/* A conditional row's case is also these (all of them). */
	size_t n_and;
	struct sr_seccomp_and and[SR_SCMP_AND_MAX];
	const char *why;
};

extern const struct sr_seccomp_rule sr_seccomp_rules[];
extern const size_t sr_seccomp_n_rules;
