/* SPDX-License-Identifier: MIT */
#include "config.h"

#include "caps.h"
#include "util.h"

#include <linux/securebits.h>
#include <sys/capability.h>
#include <sys/prctl.h>

/*
 * The "pure capability" mode of capabilities(7), every bit locked:
 * - NOROOT: executing a file as uid 0 (the namespace's root, or a setuid
 *   root binary) grants no capabilities;
 * - NO_SETUID_FIXUP: uid changes neither grant nor clear capabilities, so
 *   the sets stay the empty sets chosen here;
 * - KEEP_CAPS off, NO_CAP_AMBIENT_RAISE on: nothing survives a setuid or
 *   enters the ambient set.
 * The locks make this irreversible even for a task that somehow regained
 * CAP_SETPCAP. With the bounding set empty too, there is no path back to
 * a capability through execve().
 */
#define SR_SECUREBITS                                                                            \
	(SECBIT_NOROOT | SECBIT_NOROOT_LOCKED | SECBIT_NO_SETUID_FIXUP |                         \
	 SECBIT_NO_SETUID_FIXUP_LOCKED | SECBIT_KEEP_CAPS_LOCKED | SECBIT_NO_CAP_AMBIENT_RAISE | \
	 SECBIT_NO_CAP_AMBIENT_RAISE_LOCKED)

SR_DEFINE_CLEANUP(cap_freep, cap_t, cap_free)
SR_DEFINE_CLEANUP(cap_free_namep, char *, cap_free)

static int drop_bounding_set(struct sr_error *err)
{
	cap_value_t last = cap_max_bits();

	for (cap_value_t cap = 0; cap < last; cap++) {
		_cleanup_(cap_free_namep) char *name = NULL;
		int r;

		if (cap_get_bound(cap) == 0)
			continue;
		if (cap_drop_bound(cap) == 0)
			continue;
		r = sr_negerrno();
		name = cap_to_name(cap);
		return sr_error_errno(err, r, "drop %s from the bounding set",
				      name ? name : "a capability");
	}
	return 0;
}

int sr_caps_drop_all(struct sr_error *err)
{
	_cleanup_(cap_freep) cap_t empty = NULL;
	int r;

	if (cap_reset_ambient() < 0)
		return sr_error_errno(err, sr_negerrno(), "clear the ambient capability set");

	/*
	 * Both of the next steps need CAP_SETPCAP in the effective set, so
	 * they come before the permitted and effective sets are emptied.
	 */
	r = drop_bounding_set(err);
	if (r < 0)
		return r;
	if (cap_set_secbits(SR_SECUREBITS) < 0)
		return sr_error_errno(err, sr_negerrno(), "lock securebits");

	empty = cap_init();
	if (!empty)
		return sr_error_errno(err, sr_negerrno(), "allocate an empty capability set");
	if (cap_set_proc(empty) < 0)
		return sr_error_errno(err, sr_negerrno(), "clear the capability sets");

	/*
	 * no_new_privs: execve() can no longer raise privileges at all (setuid
	 * bits and file capabilities are ignored), and it lets the seccomp
	 * filter be installed without CAP_SYS_ADMIN.
	 */
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
		return sr_error_errno(err, sr_negerrno(), "set no_new_privs");
	return 0;
}
