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

struct sr_seccomp_rule {
	/*
	 * A name libseccomp knows, or one of seccomp-syscalls.c. A call that
	 * does not exist on the architecture built for (vm86 on x86_64, open
	 * on aarch64) is left out of the program, with a note.
	 */
	const char *syscall;
	/* 0: allowed; otherwise the errno returned. */
	int err;
	enum sr_seccomp_cmp cmp;
	unsigned arg;
	uint64_t mask;
	size_t n_values;
	uint64_t values[SR_SCMP_VALUES_MAX];
	const char *why;
};

extern const struct sr_seccomp_rule sr_seccomp_rules[];
extern const size_t sr_seccomp_n_rules;
