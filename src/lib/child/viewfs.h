/* SPDX-License-Identifier: MIT */
/*
 * The sandbox's view of its machine (procview.h), inside: /proc/meminfo,
 * and where the sandbox has fewer CPUs than the host /proc/stat and
 * /proc/cpuinfo, covered by files PID 1 serves over FUSE from its event
 * loop, so that what `free`, top or a runtime reads follows the sandbox
 * as it goes; where FUSE cannot be had (/dev/fuse missing or closed to
 * the caller), by a snapshot made at the start.
 *
 * Deadlock rules. PID 1 is the views' only server and serves only from
 * its event loop (init.c), so:
 *  - nothing in the set-up may open or stat a view once it is mounted
 *    (the set-up ends before PID 1 serves): they are mounted last in /proc;
 *  - nothing PID 1 forks may keep its FUSE fds (work.c's workers close
 *    every fd they are not given; spawned processes get them O_CLOEXEC);
 *  - PID 1 answers every request it reads before it reads the next: a
 *    request read and not answered would hold its reader for ever.
 */
#pragma once

#include "setup.h"

#include <poll.h>

enum sr_view {
	SR_VIEW_MEMINFO,
	SR_VIEW_STAT,
	SR_VIEW_CPUINFO,
	_SR_VIEW_MAX,
};

/* Its name under /proc. */
const char *sr_viewfs_name(enum sr_view v);

/*
 * Child, sources step: /dev/fuse for each view the plan wants, opened
 * with the caller's own rights (a root caller's PID 1 is still host root
 * here), in the sandbox's user namespace, which the kernel requires of a
 * FUSE mount's fd. Where it cannot be opened the views become snapshots
 * (sr_viewfs_frozen() says why). Fails only when out of memory.
 */
int sr_viewfs_open(struct sr_plan *p, struct sr_error *err);

/*
 * Child, filesystem step, last in /proc (proc: the new /proc's fd; dir:
 * its path) while PID 1 still has CAP_SYS_ADMIN over the mount
 * namespace: opens the real /proc file the view is made from, then
 * covers it with a FUSE file (0) or, where that fails, hands back the
 * snapshot to cover it with (1, *ret_text malloc'ed). 0 too when the
 * plan wants no such view, or the host has no such file.
 */
int sr_viewfs_mount(struct sr_plan *p, enum sr_view v, int proc, const char *dir, char **ret_text,
		    struct sr_error *err);

/* PID 1: the connections to poll (up to _SR_VIEW_MAX), and their requests served. */
size_t sr_viewfs_pollfds(const struct sr_viewfs *vf, struct pollfd *fds);
void sr_viewfs_serve(struct sr_viewfs *vf, const struct pollfd *fds, size_t n);

/* "" when the views are live (or none is wanted); else why they are snapshots. */
const char *sr_viewfs_frozen(const struct sr_viewfs *vf);
