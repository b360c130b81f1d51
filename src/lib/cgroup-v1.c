/* SPDX-License-Identifier: MIT */
/*
 * cgroup v1, for root on hybrid hosts where memory, cpu and pids are
 * bound to v1 hierarchies: one directory per hierarchy, each beneath our
 * own cgroup there. v1 has no CLONE_INTO_CGROUP; the supervisor attaches
 * PID 1 while it still waits for GO, before it runs anything of the agent's.
 */
#include "cgroup-internal.h"
#include "util.h"

#include <fcntl.h>
#include <signal.h>
#include <stdio.h>

static const char *const ctrl_names[_CG_V1_CTRL_MAX] = {
    [CG_V1_MEMORY] = "memory",
    [CG_V1_CPU] = "cpu",
    [CG_V1_CPUACCT] = "cpuacct",
    [CG_V1_PIDS] = "pids",
};

static int dup_dir(struct cg_dir *to, const struct cg_dir *from)
{
	to->fd = fcntl(from->fd, F_DUPFD_CLOEXEC, 3);
	to->parent_fd = fcntl(from->parent_fd, F_DUPFD_CLOEXEC, 3);
	to->created = false;
	return to->fd < 0 || to->parent_fd < 0 ? sr_negerrno() : 0;
}

static void v1_destroy(struct sr_cgroup *cg)
{
	bool wait = true;

	/*
	 * An exiting task leaves every hierarchy at once: once the first
	 * directory could be removed the others are empty too, and a first
	 * one still busy after waiting is not worth waiting for again.
	 */
	for (size_t i = 0; i < _CG_V1_CTRL_MAX; i++) {
		bool created = cg->v1[i].created;

		cg_dir_remove(&cg->v1[i], cg->name, wait);
		if (created)
			wait = false;
	}
}

/* _cleanup_free_ on an array would free its first element only. */
static void dirs_free(char *(*dirs)[_CG_V1_CTRL_MAX])
{
	for (size_t i = 0; i < _CG_V1_CTRL_MAX; i++)
		free((*dirs)[i]);
}

static int create_dirs(struct sr_cgroup *cg, const struct cg_host *host, struct sr_error *err)
{
	_cleanup_(dirs_free) char *dirs[_CG_V1_CTRL_MAX] = {0};
	bool any = false;
	int r;

	for (size_t i = 0; i < _CG_V1_CTRL_MAX; i++) {
		_cleanup_free_ char *path = NULL;
		size_t same = i;

		if (cg_parse_self(host->self_cgroup, ctrl_names[i], &path) < 0 ||
		    cg_parse_mountinfo(host->mountinfo, ctrl_names[i], path, &dirs[i]) < 0)
			continue;
		/* cpu and cpuacct are often one hierarchy ("cpu,cpuacct"). */
		for (size_t j = 0; j < i; j++)
			if (sr_streq(dirs[j], dirs[i]))
				same = j;
		if (same != i) {
			r = dup_dir(&cg->v1[i], &cg->v1[same]);
			if (r < 0)
				return sr_error_errno(err, r, "dup");
			continue;
		}
		r = cg_dir_open_parent(&cg->v1[i], dirs[i], err);
		if (r >= 0)
			r = cg_dir_create(&cg->v1[i], dirs[i], cg->name, err);
		if (r < 0)
			return r;
		any = true;
	}
	if (!any)
		return sr_error_msg(err, -ENOENT, "no cgroup v1 hierarchy mounted");
	return 0;
}

static int set_limits(struct sr_cgroup *cg, const struct sr_config *c, enum sr_enforce enforced[],
		      struct sr_error *err)
{
	int mem = cg->v1[CG_V1_MEMORY].fd, cpu = cg->v1[CG_V1_CPU].fd, pids = cg->v1[CG_V1_PIDS].fd;
	int r;

	if (c->memory_bytes && mem >= 0) {
		r = cg_write_u64(mem, "memory.limit_in_bytes", c->memory_bytes);
		if (r < 0)
			return sr_error_errno(err, r, "set memory.limit_in_bytes");
		/*
		 * memory+swap at the same value: no swap beyond the limit.
		 * Absent without swap accounting; must follow limit_in_bytes,
		 * as the kernel refuses memsw below the memory limit.
		 */
		r = cg_write_u64(mem, "memory.memsw.limit_in_bytes", c->memory_bytes);
		if (r < 0 && r != -ENOENT)
			return sr_error_errno(err, r, "set memory.memsw.limit_in_bytes");
		enforced[SR_LIMIT_MEMORY] = SR_ENFORCE_CGROUP1;
	}
	if (c->cpus_milli && cpu >= 0) {
		r = cg_write_u64(cpu, "cpu.cfs_period_us", CG_CPU_PERIOD_US);
		if (r >= 0)
			r = cg_write_u64(cpu, "cpu.cfs_quota_us", cg_cpu_quota_us(c->cpus_milli));
		if (r < 0)
			return sr_error_errno(err, r, "set cpu.cfs_quota_us");
		enforced[SR_LIMIT_CPUS] = SR_ENFORCE_CGROUP1;
	}
	if (c->pids && pids >= 0) {
		r = cg_write_u64(pids, "pids.max", c->pids);
		if (r < 0)
			return sr_error_errno(err, r, "set pids.max");
		enforced[SR_LIMIT_PIDS] = SR_ENFORCE_CGROUP1;
	}
	return 0;
}

static int v1_create(struct sr_cgroup *cg, const struct cg_host *host, const struct sr_config *c,
		     enum sr_enforce enforced[], struct sr_error *err)
{
	enum sr_enforce set[_SR_LIMIT_MAX];
	int r;

	memcpy(set, enforced, sizeof(set));
	r = create_dirs(cg, host, err);
	if (r >= 0)
		r = set_limits(cg, c, set, err);
	if (r < 0) {
		v1_destroy(cg);
		return r;
	}
	memcpy(enforced, set, sizeof(set));
	if (set[SR_LIMIT_MEMORY] == SR_ENFORCE_CGROUP1)
		cg_check_swap(cg, cg->v1[CG_V1_MEMORY].fd, "memory.memsw.limit_in_bytes");
	return 0;
}

static int v1_attach(struct sr_cgroup *cg, pid_t pid, struct sr_error *err)
{
	for (size_t i = 0; i < _CG_V1_CTRL_MAX; i++) {
		int r;

		if (!cg->v1[i].created)
			continue;
		r = cg_write_u64(cg->v1[i].fd, "cgroup.procs", (uint64_t)pid);
		if (r < 0)
			return sr_error_errno(err, r, "move pid %d into the %s cgroup %s", (int)pid,
					      ctrl_names[i], cg->name);
	}
	return 0;
}

/*
 * v1 has no cgroup.kill. Used when PID 1 did not end the sandbox itself:
 * the supervisor also kills PID 1, which takes the whole PID namespace
 * with it; this sweep catches tasks of the sandbox that are somehow
 * outside it. Repeated because a task may fork while we read.
 */
static int v1_kill(struct sr_cgroup *cg)
{
	int fd = -1;

	for (size_t i = 0; i < _CG_V1_CTRL_MAX && fd < 0; i++)
		if (cg->v1[i].created)
			fd = cg->v1[i].fd;
	for (int pass = 0; fd >= 0 && pass < 10; pass++) {
		char buf[4096];
		bool any = false;

		if (cg_read(fd, "cgroup.procs", buf, sizeof(buf)) < 0)
			return sr_negerrno();
		for (char *p = buf, *e; *p; p = e) {
			long pid = strtol(p, &e, 10);

			if (e == p)
				break;
			if (pid > 0 && kill((pid_t)pid, SIGKILL) == 0)
				any = true;
		}
		if (!any)
			break;
	}
	return 0;
}

static int v1_stats(struct sr_cgroup *cg, struct sr_cgroup_stats *ret)
{
	int mem = cg->v1[CG_V1_MEMORY].fd, acct = cg->v1[CG_V1_CPUACCT].fd;
	char buf[1024];
	uint64_t v;

	if (mem >= 0) {
		if (cg_read_u64(mem, "memory.max_usage_in_bytes", &v) >= 0)
			ret->peak_memory_bytes = (int64_t)v;
		/* "oom_kill N" in memory.oom_control since 4.13. */
		if (cg_read(mem, "memory.oom_control", buf, sizeof(buf)) >= 0 &&
		    cg_parse_keyed(buf, "oom_kill", &v) >= 0)
			ret->oom_kills = (int64_t)v;
	}
	if (acct >= 0) {
		/* Nanoseconds. */
		if (cg_read_u64(acct, "cpuacct.usage_user", &v) >= 0)
			ret->user_ms = (double)v / 1e6;
		if (cg_read_u64(acct, "cpuacct.usage_sys", &v) >= 0)
			ret->sys_ms = (double)v / 1e6;
	}
	return 0;
}

const struct cg_manager cg_manager_v1 = {
    .name = "cgroup1",
    .create = v1_create,
    .attach = v1_attach,
    .kill = v1_kill,
    .stats = v1_stats,
    .destroy = v1_destroy,
};
