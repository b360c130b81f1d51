/* SPDX-License-Identifier: MIT */
/*
 * Every system call added since Linux 6.5 (and the two x86_64-only uprobe
 * calls), with its number on x86_64 and aarch64. Since Linux 5.1 a new
 * call gets one number on every architecture but alpha, mips and ia64
 * (arch/.../syscall.tbl, include/uapi/asm-generic/unistd.h), so the two
 * columns agree but for calls only one of them has.
 *
 * A row here says what a number is, not what the filter does with it: the
 * rule table (seccomp-rules.c) decides that, and a call it does not name
 * gets the default, ENOSYS. When a new kernel adds calls, add them here
 * (so that sr_syscall_number_next() stays above them) and decide in the
 * rule table whether any of them must be refused with EPERM instead.
 */
#include "config.h"

#include "seccomp-syscalls.h"

#include <errno.h>
#include <linux/audit.h>
#include <string.h>

const struct sr_syscall_number sr_syscall_numbers[] = {
    /*
     * From the x86 uprobe trampolines. The kernel exempts both from
     * seccomp filters (seccomp_uprobe_exception()): no row can touch them.
     */
    {"uretprobe", 335, -1, "6.11"},	    {"uprobe", 336, -1, "6.18"},
    {"cachestat", 451, 451, "6.5"},	    {"fchmodat2", 452, 452, "6.6"},
    {"map_shadow_stack", 453, 453, "6.6"},  {"futex_wake", 454, 454, "6.7"},
    {"futex_wait", 455, 455, "6.7"},	    {"futex_requeue", 456, 456, "6.7"},
    {"statmount", 457, 457, "6.8"},	    {"listmount", 458, 458, "6.8"},
    {"lsm_get_self_attr", 459, 459, "6.8"}, {"lsm_set_self_attr", 460, 460, "6.8"},
    {"lsm_list_modules", 461, 461, "6.8"},  {"mseal", 462, 462, "6.10"},
    {"setxattrat", 463, 463, "6.13"},	    {"getxattrat", 464, 464, "6.13"},
    {"listxattrat", 465, 465, "6.13"},	    {"removexattrat", 466, 466, "6.13"},
    {"open_tree_attr", 467, 467, "6.15"},   {"file_getattr", 468, 468, "6.17"},
    {"file_setattr", 469, 469, "6.17"},	    {"listns", 470, 470, "6.19"},
};

const size_t sr_n_syscall_numbers = sizeof(sr_syscall_numbers) / sizeof(sr_syscall_numbers[0]);

static int column(const struct sr_syscall_number *s, uint32_t arch)
{
	switch (arch) {
	case AUDIT_ARCH_X86_64:
		return s->x86_64;
	case AUDIT_ARCH_AARCH64:
		return s->aarch64;
	default:
		return -ENOENT;
	}
}

int sr_syscall_number(const char *name, uint32_t arch)
{
	for (size_t i = 0; i < sr_n_syscall_numbers; i++) {
		int nr;

		if (strcmp(sr_syscall_numbers[i].name, name) != 0)
			continue;
		nr = column(&sr_syscall_numbers[i], arch);
		return nr == -1 ? -ENOSYS : nr;
	}
	return -ENOENT;
}

int sr_syscall_number_next(uint32_t arch)
{
	int max = -1;

	for (size_t i = 0; i < sr_n_syscall_numbers; i++) {
		int nr = column(&sr_syscall_numbers[i], arch);

		if (nr == -ENOENT)
			return -ENOENT;
		if (nr > max)
			max = nr;
	}
	return max + 1;
}
