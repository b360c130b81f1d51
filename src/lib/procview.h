/* SPDX-License-Identifier: MIT */
/*
 * What the agent sees of its machine: /proc/meminfo shows the sandbox's
 * memory limit and use, not the host's; and where the sandbox may use
 * fewer CPUs than the caller has, it is pinned to as many (rounded up) of
 * them, and /proc/stat and /proc/cpuinfo show the CPUs it runs on alone,
 * so that `nproc`, os.cpus(), os.totalmem() and a runtime's own sizing
 * (V8's heap, worker pools) see the machine production gives the agent
 * (docs/limits.md, "What the agent sees").
 *
 * This side runs in the supervisor: before clone it picks the CPUs and
 * opens, read-only, the two files of the sandbox's memory cgroup the view
 * is computed from; after clone it pins PID 1. The child serves the
 * views (child/viewfs.h); the texts are procview-text.h's.
 */
#pragma once

#include "cgroup.h"
#include "config.h"

#include <sched.h>
#include <stdbool.h>
#include <stdint.h>

struct sr_procview_plan {
	uint64_t memory_bytes; /* the limit /proc/meminfo shows; 0: no view, the host's */
	/*
	 * The sandbox's memory cgroup's memory.current (v2) or
	 * memory.usage_in_bytes (v1), and its memory.stat: read-only fds of
	 * those two files, never of the directory, whose other files are the
	 * caller's to write where systemd delegated it. -1: no memory cgroup
	 * (the rlimit strategy).
	 */
	int usage_fd, stat_fd;
	bool no_swap;	/* the cgroup holds the sandbox's swap at 0 */
	bool pinned;	/* PID 1 pins itself to cpus */
	bool cpu_views; /* cpus are fewer than the host's: /proc/stat and cpuinfo show them alone */
	cpu_set_t cpus; /* the CPUs the sandbox may run on */
};

/* Every fd -1, nothing pinned: a plan with no view. */
void sr_procview_plan_init(struct sr_procview_plan *v);

/*
 * Parent, after sr_cgroup_prepare() and before clone: the memory the view
 * shows and the cgroup files it reads (no files is no error: the view is
 * then the limit over the host's figures), and the CPUs to pin to, from a
 * random start among those of our own affinity, so that sandboxes spread
 * over them. Where there is nothing to pin, the sandbox's CPUs are still
 * those of our affinity, which may be fewer than the host's (taskset, a
 * container's cpuset): /proc/stat and cpuinfo then show those, as nproc
 * does.
 */
void sr_procview_prepare(const struct sr_config *c, const struct sr_cgroup *cg,
			 struct sr_procview_plan *ret);

/*
 * Parent, after clone, before GO: pins PID 1 (and all it will start) to
 * the plan's CPUs. From here, while it sleeps waiting for GO: pinning a
 * running task waits for the kernel to migrate it (a quarter of a
 * millisecond measured), a sleeping one is only told where to wake up.
 */
int sr_procview_parent(const struct sr_procview_plan *v, pid_t pid, struct sr_error *err);

/* Closes the plan's fds (the supervisor's copies, once the child has its own). */
void sr_procview_plan_close(struct sr_procview_plan *v);
