/* SPDX-License-Identifier: MIT */
#include "procview.h"
#include "procview-text.h"
#include "util.h"

#include <sys/random.h>
#include <sys/sysinfo.h>

void sr_procview_plan_init(struct sr_procview_plan *v)
{
	*v = (struct sr_procview_plan){.usage_fd = -1, .stat_fd = -1};
}

/*
 * A 2-CPU limit on a 24-CPU host is 24 CPUs running at a twelfth of the
 * time each: the quota (cpu.max) enforces it, but nproc, os.cpus() and
 * every pool sized from them see 24, and a runtime starts 24 threads where
 * production's 2-vCPU machine has 2. Pinned to 2 CPUs, the sandbox is
 * that machine (a VM cannot run more threads at once than it has vCPUs
 * either), and the quota still holds --cpus 0.5 to half of one. The start
 * is random, so that sandboxes spread over the caller's CPUs.
 */
static void pick_cpus(const struct sr_config *c, struct sr_procview_plan *v)
{
	unsigned want = (c->cpus_milli + 999) / 1000, start = 0, n;
	cpu_set_t allowed;

	/* More CPUs than a cpu_set_t holds (EINVAL): neither pinned nor shown. */
	if (sched_getaffinity(0, sizeof(allowed), &allowed) < 0)
		return;
	if (want && getrandom(&start, sizeof(start), GRND_NONBLOCK) != (ssize_t)sizeof(start))
		start = (unsigned)sr_monotonic_ns();
	n = sr_procview_pick_cpus(&allowed, want, start, &v->cpus);
	v->pinned = want && want < n;
	/* glibc's count of the online CPUs: /sys/devices/system/cpu/online. */
	v->cpu_views = v->pinned || n < (unsigned)get_nprocs();
}

void sr_procview_prepare(const struct sr_config *c, const struct sr_cgroup *cg,
			 struct sr_procview_plan *ret)
{
	struct sr_procview_plan v;

	sr_procview_plan_init(&v);
	pick_cpus(c, &v);
	v.memory_bytes = c->memory_bytes;
	if (v.memory_bytes && cg && sr_cgroup_memory_files(cg, &v.usage_fd, &v.stat_fd) >= 0)
		v.no_swap = !sr_cgroup_swap_unbounded(cg);
	*ret = v;
}

int sr_procview_parent(const struct sr_procview_plan *v, pid_t pid, struct sr_error *err)
{
	if (v->pinned && sched_setaffinity(pid, sizeof(v->cpus), &v->cpus) < 0)
		return sr_error_errno(err, sr_negerrno(), "pin to %d CPUs", CPU_COUNT(&v->cpus));
	return 0;
}

void sr_procview_plan_close(struct sr_procview_plan *v)
{
	sr_closep(&v->usage_fd);
	sr_closep(&v->stat_fd);
	v->usage_fd = v->stat_fd = -1;
}
