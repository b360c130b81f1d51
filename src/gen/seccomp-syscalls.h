/* SPDX-License-Identifier: MIT */
/*
 * System calls by number, for the names the libseccomp that builds the
 * filter may not know: Debian 12's 2.5.4 stops at futex_requeue (456).
 * The rule table names calls; the generator (and the unit tests) resolve
 * a name here when libseccomp cannot. Pure data: the static probe links
 * it too.
 */
#pragma once

#include <stddef.h>
#include <stdint.h>

struct sr_syscall_number {
	const char *name;
	/* -1: not a system call on that architecture. */
	int x86_64;
	int aarch64;
	/* The Linux release that added it. */
	const char *since;
};

extern const struct sr_syscall_number sr_syscall_numbers[];
extern const size_t sr_n_syscall_numbers;

/*
 * NAME's number on ARCH (an AUDIT_ARCH_* value): >= 0; -ENOSYS where NAME
 * is not a system call on ARCH; -ENOENT if the table does not know NAME,
 * or has no column for ARCH.
 */
int sr_syscall_number(const char *name, uint32_t arch);

/*
 * The first number above every number of the table on ARCH: one no
 * kernel this table knows has given a meaning. -ENOENT for an
 * architecture without a column.
 */
int sr_syscall_number_next(uint32_t arch);
