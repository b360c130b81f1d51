/* SPDX-License-Identifier: MIT */
/*
 * state.json (what ls, inspect and serve read), the deadline, inspect's
 * numbers.
 */
#include "keeper-internal.h"
#include "cgroup.h"
#include "control.h"
#include "state.h"
#include "units.h"
#include "util.h"

#include <sys/timerfd.h>
#include <time.h>

/* How much later a release's state.json is written (keeper_save_state_later). */
#define SAVE_LATER_MS 5
/* inspect's wait for PID 1's count; without it, the keeper's own numbers. */
#define STAT_WAIT_MS 1000

static int64_t wall_ms(void)
{
	struct timespec t;

	clock_gettime(CLOCK_REALTIME, &t);
	return (int64_t)t.tv_sec * 1000 + t.tv_nsec / 1000000;
}

/* "2026-11-26T12:34:56Z" */
static json_t *iso_time(int64_t ms)
{
	time_t s = (time_t)(ms / 1000);
	struct tm tm;
	char buf[32];

	gmtime_r(&s, &tm);
	strftime(buf, sizeof(buf), "%Y-%m-%dT%H:%M:%SZ", &tm);
	return json_string(buf);
}

json_t *keeper_initial_state(struct keeper *k)
{
	const struct sr_config *c = k->config;
	struct timespec now;

	clock_gettime(CLOCK_REALTIME, &now);
	/*
	 * "ports" from the start, empty until `port` publishes one: a program
	 * reads one shape. "deployment" as its configuration says (state.h): an
	 * older reader puts its own guess from the profile's path over it.
	 */
	return json_pack("{sssosssIsosisosososos[]so}", "id", k->id, "name",
			 c->name ? json_string(c->name) : json_null(), "state",
			 k->reserved ? "warm" : "creating", "created_ns",
			 (json_int_t)now.tv_sec * 1000000000 + now.tv_nsec, "created",
			 iso_time(wall_ms()), "keeper_pid", (int)getpid(), "profile",
			 sr_json_string(c->profile), "from",
			 c->from ? sr_json_string(c->from) : json_null(), "limits",
			 sr_result_limits_json(c), "expires", json_null(), "ports", "deployment",
			 c->deployment ? json_pack("{sssI}", "name", c->deployment, "version",
						   (json_int_t)c->deployment_version)
				       : json_null());
}

/* The sandbox made: what state.json says of it, running from now. */
void keeper_state_made(struct keeper *k)
{
	struct sr_strv cgroups = {0};
	json_t *cg = json_array();

	if (sr_sandbox_cgroup(k->sb) && sr_cgroup_paths(sr_sandbox_cgroup(k->sb), &cgroups) >= 0)
		for (size_t i = 0; i < cgroups.n; i++)
			json_array_append_new(cg, json_string(cgroups.items[i]));
	sr_strv_free(&cgroups);
	json_object_set_new(k->state, "cgroups", cg);
	json_object_set_new(k->state, "enforced", sr_result_enforced_json(&k->record));
	json_object_set_new(k->state, "workspace", sr_json_string(sr_sandbox_workspace(k->sb)));
	json_object_set_new(k->state, "workspace_dir",
			    sr_json_string(sr_sandbox_workspace_dir(k->sb)));
	json_object_set_new(k->state, "base_time_ns", json_integer(k->t0_ns));
	json_object_set_new(k->state, "state", json_string(k->reserved ? "warm" : "running"));
}

void keeper_save_state(struct keeper *k)
{
	struct sr_error err = {0};

	k->save_at_ns = 0;
	if (sr_state_write(k->dir, k->state, &err) < 0)
		sr_warn(&k->sink, "%s", err.msg);
}

/*
 * state.json a moment later (SAVE_LATER_MS), for the changes at the end
 * of a warm sandbox's short life: its release and its end. Its taker's
 * next request (an exec, at once) is read meanwhile, not kept waiting
 * behind the write, and what changes within the moment is written once,
 * or not at all when the sandbox is gone by then (an invocation over as
 * it is released, the usual case). Each write is a file made and one
 * removed in the state directory, which costs most on a disk (this VM's
 * /run: ext4 without a journal looks past every inode freed in the last
 * 30 s for a new one). ls says what it said a moment longer; serve's
 * answers say what the release made of it already (srv_made_state).
 */
void keeper_save_state_later(struct keeper *k)
{
	if (!k->save_at_ns)
		k->save_at_ns = sr_monotonic_ns() + SAVE_LATER_MS * 1000000LL;
}

/*
 * The deadline, ms from now (0: none), in the timerfd and in state.json
 * (now, or later). Its length is the sandbox's limits.timeout_s from now
 * on, in inspect, ls, serve's answers and each exec's record alike, and
 * expires is when it was set plus that (docs/living.md): the create's,
 * the timeout verb's, a warm sandbox's release's. A warm sandbox waiting
 * for its taker has none meanwhile, and keeps its profile's, the one a
 * release without one gives.
 */
int keeper_set_deadline(struct keeper *k, uint64_t ms, bool later)
{
	struct itimerspec its = {.it_value = sr_timespec_ms(ms)};
	json_t *limits = json_object_get(k->state, "limits");
	int64_t at = wall_ms() + (int64_t)ms;

	if (timerfd_settime(k->deadline_fd, 0, &its, NULL) < 0)
		return sr_negerrno();
	json_object_set_new(k->state, "expires", ms ? iso_time(at) : json_null());
	json_object_set_new(k->state, "expires_ms",
			    ms ? json_integer((json_int_t)at) : json_null());
	if (json_is_object(limits) &&
	    !sr_streq(json_string_value(json_object_get(k->state, "state")), "warm"))
		json_object_set_new(limits, "timeout_s", sr_result_timeout_json(ms));
	if (later)
		keeper_save_state_later(k);
	else
		keeper_save_state(k);
	return 0;
}

/* state.json with the usage: the cgroup's and ours, and PID 1's count u where it answered. */
json_t *keeper_inspect_json(struct keeper *k, const struct sr_usage *u)
{
	json_t *j = json_deep_copy(k->state), *usage = json_object();
	struct sr_result r;
	size_t running = 0;

	sr_result_init(&r);
	sr_sandbox_usage(k->sb, true, &r);
	json_object_set_new(usage, "processes", u ? json_integer(u->processes) : json_null());
	if (u) {
		/* A cgroup counts CPU time better (the kernel's own); PID 1's count otherwise. */
		if (!sr_sandbox_cgroup(k->sb) || r.user_ms <= 0) {
			r.user_ms = u->ru.user_ms;
			r.sys_ms = u->ru.sys_ms;
		}
		if (u->ru.disk_used >= 0)
			r.disk_used_bytes = u->ru.disk_used;
		if (r.peak_memory_scope != SR_PEAK_SANDBOX && u->ru.peak_rss >= 0) {
			r.peak_memory_bytes = u->ru.peak_rss;
			r.peak_memory_scope = SR_PEAK_PROCESS;
		}
	}
	for (size_t i = 0; i < k->n_clients; i++)
		running += k->clients[i]->pid > 0;
	json_object_set_new(usage, "user_ms", json_real(r.user_ms));
	json_object_set_new(usage, "sys_ms", json_real(r.sys_ms));
	json_object_set_new(usage, "peak_memory_bytes",
			    r.peak_memory_bytes >= 0 ? json_integer(r.peak_memory_bytes)
						     : json_null());
	json_object_set_new(usage, "peak_memory_scope",
			    sr_json_string(r.peak_memory_bytes >= 0
					       ? sr_peak_scope_to_string(r.peak_memory_scope)
					       : NULL));
	json_object_set_new(usage, "disk_used_bytes",
			    r.disk_used_bytes >= 0 ? json_integer(r.disk_used_bytes) : json_null());
	json_object_set_new(usage, "execs_running", json_integer((json_int_t)running));
	json_object_set_new(j, "usage", usage);
	json_object_set_new(j, "ok", json_true());
	return j;
}

void keeper_on_stats(void *ctx, struct sr_sandbox *sb, uint32_t id, const struct sr_usage *u)
{
	struct keeper *k = ctx;

	(void)sb;
	for (size_t i = 0; i < k->n_clients; i++) {
		struct client *cl = k->clients[i];

		if (cl->stat != id)
			continue;
		cl->stat = 0;
		sr_closep(&cl->timerfd);
		keeper_reply(cl, keeper_inspect_json(k, u), NULL, 0);
		return;
	}
}

/* The deadline is later than ms from now, or there is none. */
static bool deadline_beyond(struct keeper *k, uint64_t ms)
{
	struct itimerspec its;

	if (timerfd_gettime(k->deadline_fd, &its) < 0)
		return false;
	if (its.it_value.tv_sec == 0 && its.it_value.tv_nsec == 0)
		return true;
	return (uint64_t)its.it_value.tv_sec * 1000 + (uint64_t)its.it_value.tv_nsec / 1000000 >=
	       ms;
}

/*
 * The deadline set to ms from now (0: none); with "extend", only if that
 * is later than the deadline the sandbox has (E2B's refresh and connect
 * keep a sandbox alive at least that long, never shorten its life).
 */
void keeper_do_timeout(struct keeper *k, struct client *cl, json_t *req)
{
	json_t *ms = json_object_get(req, "ms"), *extend = json_object_get(req, "extend");

	if (!json_is_integer(ms) || json_integer_value(ms) < 0 ||
	    (extend && !json_is_boolean(extend)))
		return keeper_reply_error(cl, -EINVAL, 125, "timeout: a malformed request");
	if ((uint64_t)json_integer_value(ms) > SR_DEADLINE_MAX_MS)
		return keeper_reply_error(cl, -EINVAL, 125, "timeout: at most %d days",
					  SR_DEADLINE_MAX_DAYS);
	if (!(json_is_true(extend) && deadline_beyond(k, (uint64_t)json_integer_value(ms))) &&
	    keeper_set_deadline(k, (uint64_t)json_integer_value(ms), false) < 0)
		return keeper_reply_error(cl, sr_negerrno(), 125, "timeout: %s", strerror(errno));
	keeper_reply(cl,
		     json_pack("{sbsO}", "ok", 1, "expires", json_object_get(k->state, "expires")),
		     NULL, 0);
}

/* Answered with PID 1's count (keeper_on_stats), or without it once STAT_WAIT_MS have passed. */
void keeper_do_inspect(struct keeper *k, struct client *cl)
{
	if (keeper_under_way(cl))
		return keeper_reply_error(cl, -EBUSY, 125, "inspect: %s", keeper_busy_text(k));
	if (sr_sandbox_stat_start(k->sb, &cl->stat) < 0 ||
	    keeper_arm_client_timer(cl, STAT_WAIT_MS, false) < 0) {
		cl->stat = 0;
		sr_closep(&cl->timerfd);
		keeper_reply(cl, keeper_inspect_json(k, NULL), NULL, 0);
	}
}
