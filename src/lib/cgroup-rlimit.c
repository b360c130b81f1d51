/* SPDX-License-Identifier: MIT */
/*
 * The last resort, where no cgroup is ours to use: rlimits set by PID 1 of
 * the sandbox before it drops its capabilities, inherited by everything the
 * agent runs. Weaker than a cgroup, and said so in "enforced" and in the
 * warning (docs/limits.md):
 *
 * - memory: RLIMIT_DATA, per process. It bounds a process's writable
 *   private mappings (heap, anonymous mmap; Linux >= 4.7), which is close
 *   to what the process can dirty. RLIMIT_AS would count address space
 *   merely reserved: every WebAssembly.Memory in node reserves ~10 GB of
 *   PROT_NONE guard pages, and fails under RLIMIT_AS=2G (it works under
 *   RLIMIT_DATA=2G, while a 1 GB Buffer fails under RLIMIT_DATA=512M).
 * - pids: RLIMIT_NPROC. The kernel counts tasks (processes and threads)
 *   per user in each user namespace (ucounts, Linux >= 5.14): in the
 *   sandbox's fresh namespace that is exactly the sandbox's tasks, PID 1
 *   included, the same set pids.max would count.
 * - cpus: nothing (RLIMIT_CPU bounds CPU seconds, not a share of CPUs).
 */
#include "cgroup-internal.h"
#include "proc.h"
#include "util.h"

#include <sys/resource.h>

static int rl_create(struct sr_cgroup *cg, const struct cg_host *host, const struct sr_config *c,
		     enum sr_enforce enforced[], struct sr_error *err)
{
	if (c->memory_bytes && enforced[SR_LIMIT_MEMORY] == SR_ENFORCE_NONE) {
		cg->rlimit_data = c->memory_bytes;
		enforced[SR_LIMIT_MEMORY] = SR_ENFORCE_RLIMIT;
	}
	if (c->pids && enforced[SR_LIMIT_PIDS] == SR_ENFORCE_NONE) {
		cg->rlimit_nproc = c->pids;
		enforced[SR_LIMIT_PIDS] = SR_ENFORCE_RLIMIT;
	}
	return 0;
}

static int lower(int resource, const char *name, uint64_t value, struct sr_error *err)
{
	int r = sr_proc_lower_rlimit(resource, value);

	return r < 0 ? sr_error_errno(err, r, "setrlimit %s", name) : 0;
}

int cg_rlimit_apply(const struct sr_cgroup *cg, struct sr_error *err)
{
	int r = 0;

	if (cg->rlimit_data)
		r = lower(RLIMIT_DATA, "RLIMIT_DATA", cg->rlimit_data, err);
	if (r >= 0 && cg->rlimit_nproc)
		r = lower(RLIMIT_NPROC, "RLIMIT_NPROC", cg->rlimit_nproc, err);
	return r;
}

static int rl_attach(struct sr_cgroup *cg, pid_t pid, struct sr_error *err)
{
	return 0;
}

/* No cgroup to sweep: PID 1 ends the sandbox itself, or killing it ends its PID namespace. */
static int rl_kill(struct sr_cgroup *cg)
{
	return 0;
}

/* Unknown here; the supervisor has the rusage of the whole tree from wait4(). */
static int rl_stats(struct sr_cgroup *cg, struct sr_cgroup_stats *ret)
{
	return 0;
}

static void rl_destroy(struct sr_cgroup *cg)
{
}

const struct cg_manager cg_manager_rlimit = {
    .name = "rlimit",
    .create = rl_create,
    .attach = rl_attach,
    .kill = rl_kill,
    .stats = rl_stats,
    .destroy = rl_destroy,
};
