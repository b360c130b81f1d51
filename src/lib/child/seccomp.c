/* SPDX-License-Identifier: MIT */
#include "config.h"

#include "seccomp.h"
#include "json.h"
#include "util.h"

#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sys/prctl.h>
#include <sys/syscall.h>

#include "seccomp-bpf.h"
#include "seccomp-oci.h"

int sr_seccomp_apply(struct sr_error *err)
{
	struct sock_fprog prog = {
	    .len = (unsigned short)SR_ARRAY_SIZE(sr_seccomp_bpf),
	    /* The kernel copies the program; it never writes through this. */
	    .filter = (struct sock_filter *)sr_seccomp_bpf,
	};
	int r;

	/*
	 * Without no_new_privs the kernel still accepts a filter from a task
	 * with CAP_SYS_ADMIN in its user namespace, which the sandbox child
	 * has until sr_caps_drop_all(). Refusing here keeps the order of the
	 * child's setup honest: capabilities and no_new_privs first, the
	 * filter last.
	 */
	r = prctl(PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0);
	if (r < 0)
		return sr_error_errno(err, sr_negerrno(), "read no_new_privs");
	if (r != 1)
		return sr_error_msg(err, -EPERM,
				    "install seccomp filter: no_new_privs is not set (drop "
				    "capabilities first)");

	/*
	 * No SECCOMP_FILTER_FLAG_TSYNC: the sandbox child is single-threaded.
	 * No SECCOMP_FILTER_FLAG_SPEC_ALLOW: the kernel's default enables the
	 * speculative store bypass mitigation for filtered tasks, which is
	 * what untrusted code should get.
	 */
	if (syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog) == 0)
		return 0;
	if (errno != ENOSYS)
		return sr_error_errno(err, sr_negerrno(), "install seccomp filter");
	/* seccomp(2) is from Linux 3.17; the prctl predates it. */
	if (prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog, 0, 0) < 0)
		return sr_error_errno(err, sr_negerrno(), "install seccomp filter (prctl)");
	return 0;
}

int sr_seccomp_oci_profile(json_t **ret, struct sr_error *err)
{
	/* Generated, and flat: a few levels deep. */
	int r = sr_json_parse(sr_seccomp_oci_json, sizeof(sr_seccomp_oci_json) - 1, 0, 8, ret);

	if (r < 0)
		return sr_error_errno(err, r, "the seccomp profile");
	return 0;
}
