/* SPDX-License-Identifier: MIT */
/*
 * The network helper's process, between fork and exec (net.c starts it):
 * into the sandbox's outer user namespace as its uid 0, tied to
 * sandbox-run, in a process group of its own, its fds in place, then
 * exec'd with an empty environment.
 */
#pragma once

#include <stdbool.h>
#include <sys/types.h>

struct sr_helper_exec {
	const char *path;
	const char *const *argv; /* as run, NULL-terminated */
	pid_t parent;		 /* sandbox-run, to which the parent-death signal ties it */
	bool show_stderr;
	bool ignore_sigpipe; /* with show_stderr: given SIGPIPE ignored */
	bool caller_is_root; /* its groups must go; anyone else's cannot (setgroups denied) */
	int userns;	     /* the sandbox's outer user namespace, joined before exec */
	int fds[3];	     /* become 3-5; -1: that one stays closed */
};

/* In the forked child: async-signal-safe calls only. Never returns (127 on a failure). */
_Noreturn void sr_helper_exec(const struct sr_helper_exec *x);
