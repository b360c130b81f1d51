/* SPDX-License-Identifier: MIT */
/* The seccomp rule table, shared by the build-time generator and the unit tests. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * When a row matches. The filter's default action is ALLOW: a row lists
 * calls to refuse, so every condition describes the refused case.
 */
enum sr_seccomp_cmp {
	SR_SCMP_ALWAYS,		   /* every call */
	SR_SCMP_ARG_MASKED_EQ,	   /* (arg[n] & mask) == values[0] */
	SR_SCMP_ARG_MASKED_NOT_IN, /* (arg[n] & mask) is none of values[] */
	_SR_SCMP_CMP_MAX,
};

#define SR_SCMP_VALUES_MAX 6

struct sr_seccomp_rule {
	/* A name libseccomp knows, or one of seccomp-syscalls.c. */
	const char *syscall;
	int err; /* errno returned */
	enum sr_seccomp_cmp cmp;
	unsigned arg;
	uint64_t mask;
	size_t n_values;
	uint64_t values[SR_SCMP_VALUES_MAX];
	/*
	 * Not a system call on every architecture (vm86 is i386-only): the
	 * generator skips it with a note where it does not exist.
	 */
	bool optional;
	const char *why;
};

extern const struct sr_seccomp_rule sr_seccomp_rules[];
extern const size_t sr_seccomp_n_rules;
