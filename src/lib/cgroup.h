/* SPDX-License-Identifier: MIT */
/*
 * Resource limits behind a strategy table: cgroup v2 (own subtree, or a
 * systemd-delegated scope), cgroup v1 for root on hybrid hosts, rlimits as
 * the last resort. Each limit reports how it was enforced.
 */
#pragma once

#include "config.h"
#include "result.h"

#include <stdbool.h>
#include <sys/types.h>

struct sr_cgroup;

struct sr_cgroup_stats {
	int64_t peak_memory_bytes; /* -1 unknown */
	double user_ms, sys_ms;	   /* < 0 unknown */
	int64_t oom_kills;	   /* the kernel's OOM kills in it; -1 unknown */
};

/*
 * Parent, before clone: picks the strategy, creates the sandbox's cgroup
 * beneath our own and sets the limits. *ret_clone_fd is a directory fd for
 * clone3(CLONE_INTO_CGROUP), or -1; it belongs to *ret (do not close it)
 * and stays valid until sr_cgroup_free(). Fills enforced[memory, cpus,
 * pids]: a limit of 0 (unlimited) is SR_ENFORCE_NONE and is no warning.
 * Fails only when out of memory: a host without usable cgroups is the
 * rlimit strategy, described by sr_cgroup_describe().
 */
int sr_cgroup_prepare(const struct sr_config *c, const char *sandbox_id, struct sr_cgroup **ret,
		      int *ret_clone_fd, enum sr_enforce enforced[], struct sr_error *err);
/* Parent, after clone (v1: join the hierarchies). */
int sr_cgroup_attach(struct sr_cgroup *cg, pid_t pid, struct sr_error *err);
/* Child, before exec: the rlimit fallback where no cgroup enforces a limit. */
int sr_cgroup_child(const struct sr_cgroup *cg, struct sr_error *err);
/* Kills every process in the sandbox's cgroup (timeout). */
int sr_cgroup_kill(struct sr_cgroup *cg);
int sr_cgroup_stats(struct sr_cgroup *cg, struct sr_cgroup_stats *ret);
/*
 * Read-only fds of the sandbox's memory use and memory.stat (v2:
 * memory.current; v1: memory.usage_in_bytes), for the view PID 1 serves
 * (procview.h); -ENOENT where no memory cgroup holds the sandbox.
 */
int sr_cgroup_memory_files(const struct sr_cgroup *cg, int *ret_usage, int *ret_stat);
/* Removes the cgroup; NULL is fine. */
void sr_cgroup_free(struct sr_cgroup *cg);
/*
 * The sandbox's cgroup directories, as absolute paths (none for rlimits),
 * for whoever must remove them after their owner died (state.h).
 */
int sr_cgroup_paths(const struct sr_cgroup *cg, struct sr_strv *ret);
/*
 * Removes the sandbox cgroup at path if nobody holds its lock (its owner
 * died) once its processes are gone (retried while busy, as at the end of
 * a run). Only a directory named as ours is ever touched.
 */
void sr_cgroup_remove_stale(const char *path);

/* "cgroup2", "cgroup1" or "rlimit": the strategy chosen. */
const char *sr_cgroup_strategy(const struct sr_cgroup *cg);
/* Why each cgroup strategy tried before it could not be used ("" when none failed). */
const char *sr_cgroup_reason(const struct sr_cgroup *cg);
/*
 * Whether the memory limit a cgroup holds bounds RAM only: the host has
 * swap but no swap accounting (no memory.swap.max, no memsw), so the
 * sandbox can swap past it.
 */
bool sr_cgroup_swap_unbounded(const struct sr_cgroup *cg);
/*
 * The one warning for requested limits that are not fully enforced, for
 * the supervisor to print (or, under --strict, to refuse with). Returns
 * how many requested limits --strict refuses (> 0: it refuses): those
 * nothing enforces (SR_ENFORCE_NONE), and memory held only by
 * RLIMIT_DATA, which shared memory passes. buf is "" when there is nothing
 * to say, else e.g. "cpus limit not enforced on this host (<reason>); see
 * docs/limits.md". pids held by RLIMIT_NPROC are mentioned, not counted:
 * it counts the sandbox's tasks exactly. Pure: reads only its arguments.
 */
int sr_cgroup_describe(const struct sr_config *c, const enum sr_enforce enforced[],
		       const char *reason, char *buf, size_t len);
