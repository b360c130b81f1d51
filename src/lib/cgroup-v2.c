/* SPDX-License-Identifier: MIT */
/*
 * cgroup v2, directly: the sandbox's cgroup is a child of the cgroup
 * sandbox-run runs in, and the sandbox is born in it (clone3 with
 * CLONE_INTO_CGROUP), so no task of the sandbox ever runs unlimited.
 */
#include "cgroup-internal.h"
#include "util.h"

#include <signal.h>
#include <stdio.h>

struct ctrl {
	const char *name;
	enum sr_limit limit;
};

static const struct ctrl ctrls[] = {
    {"memory", SR_LIMIT_MEMORY},
    {"cpu", SR_LIMIT_CPUS},
    {"pids", SR_LIMIT_PIDS},
};

static bool wanted(const struct sr_config *c, enum sr_limit l)
{
	return (l == SR_LIMIT_MEMORY && c->memory_bytes) || (l == SR_LIMIT_CPUS && c->cpus_milli) ||
	       (l == SR_LIMIT_PIDS && c->pids);
}

void cg_v2_absent_names(unsigned absent, char *buf, size_t len)
{
	const char *names[SR_ARRAY_SIZE(ctrls)];
	size_t n = 0;

	for (size_t i = 0; i < SR_ARRAY_SIZE(ctrls); i++)
		if (absent & 1u << ctrls[i].limit)
			names[n++] = ctrls[i].name;
	cg_join_words(names, n, buf, len);
}

/*
 * Makes the controllers reach our children. Requested limits need theirs;
 * memory is enabled even without a limit, for memory.peak and OOM events.
 * A requested controller dir does not have is marked in ret_absent and
 * its limit left to the rlimit strategy (docs/limits.md), unless no
 * requested one is there at all: then the strategy does not apply
 * (-ENODEV), as on hybrid hosts, whose v2 hierarchy has none, and the
 * next one (systemd, v1) is tried.
 */
int cg_v2_enable_controllers(int dfd, const char *dir, const struct sr_config *c,
			     unsigned *ret_absent, struct sr_error *err)
{
	char avail[256], enabled[256], add[64] = "";
	unsigned absent = 0;
	bool needed = false, usable = false;
	ssize_t n;
	int r;

	n = cg_read(dfd, "cgroup.controllers", avail, sizeof(avail));
	if (n < 0)
		return sr_error_errno(err, (int)n, "read %s/cgroup.controllers", dir);
	n = cg_read(dfd, "cgroup.subtree_control", enabled, sizeof(enabled));
	if (n < 0)
		return sr_error_errno(err, (int)n, "read %s/cgroup.subtree_control", dir);
	for (size_t i = 0; i < SR_ARRAY_SIZE(ctrls); i++) {
		bool want = wanted(c, ctrls[i].limit);

		if (cg_word_in(enabled, ctrls[i].name)) {
			usable = usable || want;
			continue;
		}
		if (!cg_word_in(avail, ctrls[i].name)) {
			if (want)
				absent |= 1u << ctrls[i].limit;
			continue;
		}
		if (want || ctrls[i].limit == SR_LIMIT_MEMORY) {
			size_t off = strlen(add);

			snprintf(add + off, sizeof(add) - off, "%s+%s", off ? " " : "",
				 ctrls[i].name);
			needed = needed || want;
			usable = usable || want;
		}
	}
	if (absent && !usable) {
		char missing[64];

		cg_v2_absent_names(absent, missing, sizeof(missing));
		return sr_error_msg(err, -ENODEV,
				    "no controller for the limits asked (%s) in %s (bound to "
				    "cgroup v1, or not delegated to us)",
				    missing, dir);
	}
	if (*add) {
		r = cg_write(dfd, "cgroup.subtree_control", add);
		/*
		 * EBUSY: the "no internal processes" rule. A non-root cgroup
		 * that holds processes (we are one of them) cannot hand
		 * controllers to children. Moving ourselves into a leaf would
		 * fix that but changes where the caller put us; we do not, and
		 * fall back instead.
		 */
		if (r == -EBUSY && needed)
			return sr_error_msg(
			    err, r,
			    "cannot enable %s in %s: it holds processes (sandbox-run among "
			    "them), and cgroup v2 hands controllers only to the children of "
			    "a cgroup without processes",
			    add, dir);
		if (r < 0 && needed)
			return sr_error_errno(err, r, "enable %s in %s/cgroup.subtree_control", add,
					      dir);
	}
	*ret_absent = absent;
	return 0;
}

int cg_v2_set_limits(int fd, const struct sr_config *c, unsigned absent, enum sr_enforce enforced[])
{
	int r;

	/* A controller not enabled has no files here: its limit is left to the rlimit strategy. */
	if (c->memory_bytes && !(absent & 1u << SR_LIMIT_MEMORY)) {
		r = cg_write_u64(fd, "memory.max", c->memory_bytes);
		if (r < 0)
			return r;
		/* Swap would let the agent exceed the limit; absent without swap accounting. */
		r = cg_write(fd, "memory.swap.max", "0");
		if (r < 0 && r != -ENOENT)
			return r;
		enforced[SR_LIMIT_MEMORY] = SR_ENFORCE_CGROUP2;
	}
	if (c->cpus_milli && !(absent & 1u << SR_LIMIT_CPUS)) {
		char buf[64];

		snprintf(buf, sizeof(buf), "%llu %d",
			 (unsigned long long)cg_cpu_quota_us(c->cpus_milli), CG_CPU_PERIOD_US);
		r = cg_write(fd, "cpu.max", buf);
		if (r < 0)
			return r;
		enforced[SR_LIMIT_CPUS] = SR_ENFORCE_CGROUP2;
	}
	if (c->pids && !(absent & 1u << SR_LIMIT_PIDS)) {
		r = cg_write_u64(fd, "pids.max", c->pids);
		if (r < 0)
			return r;
		enforced[SR_LIMIT_PIDS] = SR_ENFORCE_CGROUP2;
	}
	return 0;
}

int cg_v2_create_in(struct sr_cgroup *cg, const char *dir, const struct sr_config *c,
		    enum sr_enforce enforced[], struct sr_error *err)
{
	enum sr_enforce set[_SR_LIMIT_MAX];
	unsigned absent = 0;
	int r;

	r = cg_dir_open_parent(&cg->v2, dir, err);
	if (r >= 0)
		r = cg_v2_enable_controllers(cg->v2.parent_fd, dir, c, &absent, err);
	if (r >= 0)
		r = cg_dir_create(&cg->v2, dir, cg->name, err);
	if (r >= 0) {
		memcpy(set, enforced, sizeof(set));
		r = cg_v2_set_limits(cg->v2.fd, c, absent, set);
		if (r < 0)
			sr_error_errno(err, r, "set the limits of %s/%s", dir, cg->name);
	}
	if (r < 0) {
		cg_dir_remove(&cg->v2, cg->name, true);
		return r;
	}
	memcpy(enforced, set, sizeof(set));
	if (set[SR_LIMIT_MEMORY] == SR_ENFORCE_CGROUP2)
		cg_check_swap(cg, cg->v2.fd, "memory.swap.max");
	/* The one limit (or two) the rlimit strategy now takes, or none: -v says why. */
	if (absent) {
		char missing[64], why[CG_REASON_MAX / 2];

		cg_v2_absent_names(absent, missing, sizeof(missing));
		snprintf(why, sizeof(why),
			 "no %s controller in %s (bound to cgroup v1, or not delegated to us)",
			 missing, dir);
		cg_append_reason(cg, "cgroup2", why);
	}
	return 0;
}

static int v2_create(struct sr_cgroup *cg, const struct cg_host *host, const struct sr_config *c,
		     enum sr_enforce enforced[], struct sr_error *err)
{
	_cleanup_free_ char *path = NULL, *dir = NULL;

	if (cg_parse_self(host->self_cgroup, NULL, &path) < 0)
		return sr_error_msg(err, -ENOENT, "not in a cgroup v2 hierarchy");
	if (cg_parse_mountinfo(host->mountinfo, NULL, path, &dir) < 0)
		return sr_error_msg(err, -ENOENT,
				    "our cgroup %s is not reachable through a cgroup2 mount", path);
	return cg_v2_create_in(cg, dir, c, enforced, err);
}

int cg_v2_attach(struct sr_cgroup *cg, pid_t pid, struct sr_error *err)
{
	/*
	 * A no-op when clone3() placed the child already (migrating a task to
	 * its own cgroup changes nothing); needed when it could not.
	 */
	int r = cg_write_u64(cg->v2.fd, "cgroup.procs", (uint64_t)pid);

	if (r < 0)
		return sr_error_errno(err, r, "move pid %d into cgroup %s", (int)pid, cg->name);
	return 0;
}

int cg_v2_kill(struct sr_cgroup *cg)
{
	char buf[4096];
	int r = cg_write(cg->v2.fd, "cgroup.kill", "1");

	if (r != -ENOENT)
		return r;
	/* Before 5.14 there is no cgroup.kill: one pass over the tasks. */
	if (cg_read(cg->v2.fd, "cgroup.procs", buf, sizeof(buf)) < 0)
		return sr_negerrno();
	for (char *p = buf, *e; *p; p = e) {
		long pid = strtol(p, &e, 10);

		if (e == p)
			break;
		if (pid > 0)
			kill((pid_t)pid, SIGKILL);
	}
	return 0;
}

int cg_v2_stats(struct sr_cgroup *cg, struct sr_cgroup_stats *ret)
{
	char buf[1024];
	uint64_t v;

	/* memory.peak exists since 5.19. */
	if (cg_read_u64(cg->v2.fd, "memory.peak", &v) >= 0)
		ret->peak_memory_bytes = (int64_t)v;
	if (cg_read(cg->v2.fd, "cpu.stat", buf, sizeof(buf)) >= 0) {
		if (cg_parse_keyed(buf, "user_usec", &v) >= 0)
			ret->user_ms = (double)v / 1000.0;
		if (cg_parse_keyed(buf, "system_usec", &v) >= 0)
			ret->sys_ms = (double)v / 1000.0;
	}
	/* memory.events is hierarchical: a kill of any task of the sandbox counts. */
	if (cg_read(cg->v2.fd, "memory.events", buf, sizeof(buf)) >= 0 &&
	    cg_parse_keyed(buf, "oom_kill", &v) >= 0)
		ret->oom_kills = (int64_t)v;
	return 0;
}

static void v2_destroy(struct sr_cgroup *cg)
{
	cg_dir_remove(&cg->v2, cg->name, true);
}

const struct cg_manager cg_manager_v2 = {
    .name = "cgroup2",
    .create = v2_create,
    .attach = cg_v2_attach,
    .kill = cg_v2_kill,
    .stats = cg_v2_stats,
    .destroy = v2_destroy,
};
