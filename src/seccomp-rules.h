/* SPDX-License-Identifier: MIT */
/* The seccomp rule table, shared by the build-time generator and the unit tests. */
#pragma once

#include <stddef.h>
#include <stdint.h>

enum sr_seccomp_cmp {
	SR_SCMP_ALWAYS,        /* every call */
	SR_SCMP_ARG_MASKED_EQ, /* (arg[n] & mask) == value */
	SR_SCMP_ARG_MASKED_NE, /* (arg[n] & mask) != value ... see seccomp-rules.c */
	_SR_SCMP_CMP_MAX,
};

struct sr_seccomp_rule {
	const char *syscall;
	int err; /* errno returned */
	enum sr_seccomp_cmp cmp;
	unsigned arg;
	uint64_t mask;
	uint64_t value;
	const char *why;
};

extern const struct sr_seccomp_rule sr_seccomp_rules[];
extern const size_t sr_seccomp_n_rules;
