/* SPDX-License-Identifier: MIT */
/*
 * The sandbox object, host side. Its owner (sandbox-run for a run, a
 * keeper for a sandbox that lives) never enters the sandbox: create clones
 * PID 1 into the new namespaces and does what only the parent can (id
 * maps, cgroup, network helper); from then on PID 1 does the work inside,
 * on request (protocol.h), and this side reads its reports. Here: the
 * requests, the sandbox's end, its fds for the owner's event loop, usage,
 * free; create is in sandbox-create.c, the reports are read in
 * sandbox-messages.c (what the parts share: sandbox-internal.h).
 */
#include "sandbox-internal.h"
#include "procview.h"
#include "util.h"

#include <poll.h>
#include <signal.h>
#include <sys/random.h>
#include <sys/syscall.h>
#include <sys/timerfd.h>
#include <time.h>

void sr_sandbox_new_id(char id[33])
{
	unsigned char raw[16] = {0};

	if (getrandom(raw, sizeof(raw), GRND_NONBLOCK) != (ssize_t)sizeof(raw)) {
		struct timespec t;

		clock_gettime(CLOCK_REALTIME, &t);
		snprintf((char *)raw, sizeof(raw), "%lx%x", (long)t.tv_nsec, (unsigned)getpid());
	}
	for (size_t i = 0; i < sizeof(raw); i++)
		snprintf(id + 2 * i, 3, "%02x", raw[i]);
}

/*
 * How long a request waits for room on PID 1's socket. The queue fills
 * only while PID 1 does not read it -- when the agent keeps it waiting
 * (it can stop a process PID 1 is starting) -- and the request fails
 * then rather than hold up whoever serves the sandbox.
 */
#define SEND_WAIT_MS 1000

/* PID 1's socket has room within SEND_WAIT_MS: 0, else -EAGAIN. */
static int wait_room(struct sr_sandbox *sb)
{
	struct pollfd p = {.fd = sb->sock, .events = POLLOUT};

	return SR_RETRY(poll(&p, 1, SEND_WAIT_MS)) == 1 ? 0 : -EAGAIN;
}

static int send_request(struct sr_sandbox *sb, struct sr_msg *m, const void *payload, size_t len,
			const int *fds, size_t n_fds)
{
	bool waited = false;
	int r;

	if (sb->sock < 0 || sb->reaped)
		return -ESRCH;
	/* Behind what waits for room (a CANCEL, a kill), never ahead of it; one wait in all. */
	r = sr_msg_queue_flush(&sb->out, sb->sock);
	if (r == -EAGAIN) {
		waited = true;
		if (wait_room(sb) == 0)
			r = sr_msg_queue_flush(&sb->out, sb->sock);
	}
	if (r < 0)
		return r;
	m->id = ++sb->next_id;
	r = sr_msg_send_full(sb->sock, m, payload, len, fds, n_fds);
	if (r == -EAGAIN && !waited && wait_room(sb) == 0)
		r = sr_msg_send_full(sb->sock, m, payload, len, fds, n_fds);
	return r;
}

/* The error of a request that could not be sent. */
static int request_failed(int r, const char *what, struct sr_error *err)
{
	if (r == -ESRCH)
		return sr_error_msg(err, r, "the sandbox has ended");
	if (r == -EAGAIN)
		return sr_error_msg(err, r,
				    "%s: the sandbox takes no requests (its PID 1 is kept busy "
				    "from inside)",
				    what);
	return sr_error_errno(err, r, "%s", what);
}

/* Reads until the reply to request id (answering everything else that comes meanwhile). */
static int wait_reply(struct sr_sandbox *sb, uint32_t id, struct sr_msg *ret,
		      struct sr_msg_extra *ret_ex)
{
	for (;;) {
		struct pollfd p = {.fd = sb->sock, .events = POLLIN};
		int r = sandbox_read_message(sb, ret, ret_ex);

		if (r == 0)
			return -ESRCH;
		if (r == -EAGAIN) {
			if (SR_RETRY(poll(&p, 1, -1)) < 0)
				return sr_negerrno();
			continue;
		}
		if (ret->id == id &&
		    (ret->type == SR_MSG_SPAWNED || ret->type == SR_MSG_SPAWN_FAILED))
			return 0;
		sandbox_on_message(sb, ret, ret_ex);
	}
}

/* SPAWN's message for s: its payload (argv, envp, cwd) and the fds it passes. */
static int spawn_message(const struct sr_spawn *s, struct sr_msg *m, char **ret_payload,
			 size_t *ret_len, int fds[3], size_t *ret_n_fds, struct sr_error *err)
{
	*m = (struct sr_msg){.type = SR_MSG_SPAWN,
			     .flags = (int32_t)s->flags,
			     .value = (int64_t)s->rows << 16 | s->cols};
	*ret_payload = NULL;
	*ret_len = 0;
	*ret_n_fds = 0;
	if (!(s->flags & SR_SPAWN_AGENT)) {
		int r = sr_spawn_encode(s->argv, s->envp, s->cwd, ret_payload, ret_len);

		if (r == -E2BIG)
			return sr_error_msg(err, r,
					    "the command's arguments, environment and working "
					    "directory exceed %d KiB together",
					    SR_MSG_PAYLOAD_MAX / 1024);
		if (r < 0)
			return sr_error_errno(err, r, "spawn");
	}
	for (int i = 0; i < 3; i++)
		if (!(s->flags & (SR_SPAWN_PTY_STDIN << i)))
			fds[(*ret_n_fds)++] = s->stdio[i];
	return 0;
}

int sr_sandbox_spawn_start(struct sr_sandbox *sb, const struct sr_spawn *s, uint32_t *ret_id,
			   struct sr_error *err)
{
	_cleanup_free_ char *payload = NULL;
	struct sr_msg m;
	size_t len, n_fds;
	int fds[3];
	int r;

	/* One process ends the sandbox: its EXIT is the ended callback's. */
	if ((s->flags & SR_SPAWN_ENDS_SANDBOX) && (sb->ends_spawn || sb->ends.pid > 0))
		return sr_error_msg(err, -EBUSY, "spawn: a process ends this sandbox already");
	if ((r = spawn_message(s, &m, &payload, &len, fds, &n_fds, err)) < 0)
		return r;
	r = send_request(sb, &m, payload, len, fds, n_fds);
	if (r < 0)
		return request_failed(r, "spawn", err);
	if (s->flags & SR_SPAWN_ENDS_SANDBOX)
		sb->ends_spawn = m.id;
	*ret_id = m.id;
	return 0;
}

int sr_sandbox_spawn(struct sr_sandbox *sb, const struct sr_spawn *s, pid_t *ret_pid, int *ret_pty,
		     struct sr_error *err)
{
	_cleanup_free_ char *payload = NULL;
	struct sr_msg m, reply;
	struct sr_msg_extra ex = {0};
	bool pty = s->flags & SR_SPAWN_PTY;
	size_t len, n_fds;
	int fds[3];
	int r;

	if (ret_pty)
		*ret_pty = -1;
	if ((r = spawn_message(s, &m, &payload, &len, fds, &n_fds, err)) < 0)
		return r;
	r = send_request(sb, &m, payload, len, fds, n_fds);
	if (r == 0)
		r = wait_reply(sb, m.id, &reply, &ex);
	if (r < 0)
		return request_failed(r, "spawn", err);
	if (reply.type == SR_MSG_SPAWN_FAILED) {
		sr_msg_extra_close(&ex);
		err->status = reply.status;
		return sr_error_msg(err, reply.code < 0 ? reply.code : -EIO, "%s", reply.text);
	}
	if (s->flags & SR_SPAWN_ENDS_SANDBOX) {
		sb->ends.pid = reply.pid;
		sb->ends_holds = s->flags & SR_SPAWN_HOLD;
	}
	if (pty && ret_pty && ex.n_fds == 1)
		*ret_pty = steal_fd(&ex.fds[0]);
	sr_msg_extra_close(&ex);
	*ret_pid = reply.pid;
	return 0;
}

int sr_sandbox_stat_start(struct sr_sandbox *sb, uint32_t *ret_id)
{
	struct sr_msg m = {.type = SR_MSG_STAT};
	int r = send_request(sb, &m, NULL, 0, NULL, 0);

	if (r < 0)
		return r;
	*ret_id = m.id;
	return 0;
}

int sr_sandbox_work(struct sr_sandbox *sb, int kind, const char *path, int fd, int64_t limit_ms,
		    uint32_t *ret_id)
{
	struct sr_msg m = {.type = SR_MSG_WORK, .flags = kind, .value = limit_ms};
	int r = send_request(sb, &m, path, path ? strlen(path) + 1 : 0, &fd, 1);

	if (r < 0)
		return r;
	*ret_id = m.id;
	return 0;
}

/*
 * m queued for PID 1 (send_later's callers). One that has left
 * SR_MSG_QUEUE_MAX of them unread reads nothing any more (stuck, or made
 * to stop): what they were to end, the sandbox's end ends.
 */
static int send_later(struct sr_sandbox *sb, const struct sr_msg *m)
{
	int r;

	if (sb->sock < 0 || sb->reaped)
		return -ESRCH;
	r = sr_msg_queue_send(&sb->out, sb->sock, m);
	if (r == -ENOBUFS)
		sr_sandbox_kill(sb);
	return r;
}

/*
 * Not a request that may fail after SEND_WAIT_MS: a worker whose client
 * went must end (the agent may keep it stopped, and PID 1 kills it only
 * when told), so a CANCEL finding PID 1's socket full waits in sb->out
 * for room, sent by sr_sandbox_dispatch() (sr_sandbox_poll_out_fd()).
 */
int sr_sandbox_cancel(struct sr_sandbox *sb, uint32_t id)
{
	return send_later(sb, &(struct sr_msg){.type = SR_MSG_CANCEL, .id = id});
}

int sr_sandbox_halt(struct sr_sandbox *sb, int grace_ms)
{
	const struct itimerspec grace = {.it_value = sr_timespec_ms((uint64_t)grace_ms)};
	struct sr_msg halt = {.type = SR_MSG_HALT};

	if (sb->reaped || sb->held || sb->halt_sent || sb->end_sent)
		return 0;
	halt.id = ++sb->next_id;
	if (sb->ready && sr_msg_send(sb->sock, &halt) == 0) {
		sb->halt_sent = true;
		sb->endfd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
		if (sb->endfd >= 0 && timerfd_settime(sb->endfd, 0, &grace, NULL) == 0)
			return 0;
	}
	sr_sandbox_kill(sb);
	return 0;
}

bool sr_sandbox_held(const struct sr_sandbox *sb)
{
	return sb->held && !sb->reaped;
}

int sr_sandbox_connect(struct sr_sandbox *sb, int port, uint32_t *ret_id)
{
	struct sr_msg m = {.type = SR_MSG_CONNECT, .flags = port};
	int r = send_request(sb, &m, NULL, 0, NULL, 0);

	if (r < 0)
		return r;
	*ret_id = m.id;
	return 0;
}

int sr_sandbox_signal(struct sr_sandbox *sb, pid_t pid, int sig)
{
	struct sr_msg m = {.type = SR_MSG_SIGNAL, .pid = pid, .flags = sig};

	return send_request(sb, &m, NULL, 0, NULL, 0);
}

/* As sr_sandbox_cancel(): a kill that must not be lost waits for room. */
int sr_sandbox_kill_process(struct sr_sandbox *sb, pid_t pid)
{
	return send_later(sb,
			  &(struct sr_msg){.type = SR_MSG_SIGNAL, .pid = pid, .flags = SIGKILL});
}

void sr_sandbox_kill(struct sr_sandbox *sb)
{
	if (sb->reaped)
		return;
	if (sb->cgroup)
		sr_cgroup_kill(sb->cgroup);
	if (sb->pidfd >= 0)
		syscall(SYS_pidfd_send_signal, sb->pidfd, SIGKILL, NULL, 0);
	else if (sb->pid > 0)
		kill(sb->pid, SIGKILL);
	sr_closep(&sb->endfd);
}

int sr_sandbox_end(struct sr_sandbox *sb, int grace_ms)
{
	const struct itimerspec grace = {.it_value = sr_timespec_ms((uint64_t)grace_ms)};
	const struct sr_msg end = {.type = SR_MSG_END};

	if (sb->reaped)
		return 0;
	if (sb->end_sent)
		return 0; /* the grace runs already */
	/*
	 * PID 1 kills and reaps every other process itself, so that their
	 * CPU time reaches its rusage where no cgroup counts it. Should it
	 * not be gone by the end of the grace (or not be listening yet),
	 * everything is killed.
	 */
	if (sb->ready && grace_ms > 0 && sr_msg_send(sb->sock, &end) == 0) {
		sb->end_sent = true;
		sr_closep(&sb->endfd); /* a HALT's grace, if one was running */
		sb->endfd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
		if (sb->endfd >= 0 && timerfd_settime(sb->endfd, 0, &grace, NULL) == 0)
			return 0;
	}
	sr_sandbox_kill(sb);
	return 0;
}

void sr_sandbox_poll_fds(const struct sr_sandbox *sb, int fds[SR_SANDBOX_POLL_FDS])
{
	fds[0] = sb->reaped ? -1 : sb->sock;
	fds[1] = sb->reaped ? -1 : sb->pidfd;
	fds[2] = sb->endfd;
	fds[3] = sr_net_watch_fd(sb->net);
}

int sr_sandbox_poll_out_fd(const struct sr_sandbox *sb)
{
	return !sb->reaped && sr_msg_queue_pending(&sb->out) ? sb->sock : -1;
}

bool sr_sandbox_has_room(const struct sr_sandbox *sb)
{
	struct pollfd p = {.fd = sb->sock, .events = POLLOUT};

	if (sb->sock < 0 || sb->reaped)
		return true; /* a request fails at once (ESRCH), waits for nothing */
	return !sr_msg_queue_pending(&sb->out) && poll(&p, 1, 0) == 1;
}

int sr_sandbox_room_fd(const struct sr_sandbox *sb)
{
	return sb->reaped ? -1 : sb->sock;
}

void sr_sandbox_dispatch(struct sr_sandbox *sb)
{
	struct pollfd fds[SR_SANDBOX_POLL_FDS];
	int raw[SR_SANDBOX_POLL_FDS];

	if (sr_sandbox_poll_out_fd(sb) >= 0)
		(void)sr_msg_queue_flush(&sb->out, sb->sock);

	sr_sandbox_poll_fds(sb, raw);
	for (size_t i = 0; i < SR_ARRAY_SIZE(fds); i++)
		fds[i] = (struct pollfd){.fd = raw[i], .events = POLLIN};
	if (poll(fds, SR_ARRAY_SIZE(fds), 0) <= 0)
		return;
	if (fds[0].revents)
		sandbox_drain(sb);
	if (fds[2].revents & POLLIN)
		sr_sandbox_kill(sb); /* the END's grace is over */
	/*
	 * The helper, gone before the sandbox: said while it is ready. Before
	 * that, slirp4netns's end is the child's error to report.
	 */
	if (fds[3].revents)
		sr_net_dispatch(sb->net, sb->ready && !sb->reaped);
	if ((fds[1].revents || sb->sock < 0) && sandbox_reap(sb, fds[1].revents == 0) &&
	    sb->opts.ops && sb->opts.ops->ended)
		sb->opts.ops->ended(sb->opts.ctx, sb, sb->ends_seen ? &sb->ends : NULL);
}

bool sr_sandbox_ended(const struct sr_sandbox *sb)
{
	return sb->reaped;
}

void sr_sandbox_usage(struct sr_sandbox *sb, bool live, struct sr_result *r)
{
	struct sr_cgroup_stats cs;
	int64_t used;

	r->user_ms = (double)sb->ru.ru_utime.tv_sec * 1e3 + (double)sb->ru.ru_utime.tv_usec / 1e3;
	r->sys_ms = (double)sb->ru.ru_stime.tv_sec * 1e3 + (double)sb->ru.ru_stime.tv_usec / 1e3;
	r->disk_used_bytes = sb->disk_used;
	/* Counted on the host: also when PID 1 is gone (an OOM kill), or cannot count (a
	 * directory). */
	used = sr_disk_used(sb->disk, live ? SR_SANDBOX_LIVE_WALK : 0);
	if (used >= 0)
		r->disk_used_bytes = used;
	r->peak_memory_bytes = -1;
	sr_net_record(sb->net, &r->network);
	r->peak_memory_scope = SR_PEAK_NONE;
	/*
	 * Without a cgroup's count, the largest process's peak: ru_maxrss of
	 * PID 1's rusage is the largest of it and everything it reaped.
	 */
	if (sb->reaped && sb->ru.ru_maxrss > 0)
		r->peak_memory_bytes = (int64_t)sb->ru.ru_maxrss * 1024;
	if (sb->ends_seen && sb->ends.ru.peak_rss > r->peak_memory_bytes)
		r->peak_memory_bytes = sb->ends.ru.peak_rss;
	if (r->peak_memory_bytes >= 0)
		r->peak_memory_scope = SR_PEAK_PROCESS;
	if (!sb->cgroup)
		return;
	sr_cgroup_stats(sb->cgroup, &cs);
	if (cs.peak_memory_bytes >= 0) {
		r->peak_memory_bytes = cs.peak_memory_bytes;
		r->peak_memory_scope = SR_PEAK_SANDBOX;
	}
	if (cs.user_ms >= 0)
		r->user_ms = cs.user_ms;
	if (cs.sys_ms >= 0)
		r->sys_ms = cs.sys_ms;
}

int64_t sr_sandbox_oom_kills(struct sr_sandbox *sb)
{
	struct sr_cgroup_stats cs;

	if (!sb->cgroup)
		return -1;
	sr_cgroup_stats(sb->cgroup, &cs);
	return cs.oom_kills;
}

int sr_sandbox_init_status(const struct sr_sandbox *sb)
{
	return sb->reaped ? sb->init_status : -1;
}

const struct sr_error *sr_sandbox_error(const struct sr_sandbox *sb)
{
	return &sb->error;
}

const char *sr_sandbox_id(const struct sr_sandbox *sb)
{
	return sb->id;
}

const struct sr_config *sr_sandbox_config(const struct sr_sandbox *sb)
{
	return sb->config;
}

char *const *sr_sandbox_env(const struct sr_sandbox *sb)
{
	return sb->plan.envp.items;
}

struct sr_cgroup *sr_sandbox_cgroup(const struct sr_sandbox *sb)
{
	return sb->cgroup;
}

const char *sr_sandbox_workspace(const struct sr_sandbox *sb)
{
	return sb->agent.archive_path ? sb->agent.archive_path : sb->agent.host_dir;
}

const char *sr_sandbox_workspace_dir(const struct sr_sandbox *sb)
{
	return sb->agent.kind == SR_AGENT_ARCHIVE ? NULL : sb->agent.host_dir;
}

void sr_sandbox_free(struct sr_sandbox *sb)
{
	if (!sb)
		return;
	if (sb->pid > 0 && !sb->reaped) {
		sr_sandbox_kill(sb);
		sandbox_reap(sb, true);
	}
	/* After PID 1 is reaped: its namespace's tasks are gone, the cgroup can go. */
	sr_cgroup_free(sb->cgroup);
	sr_net_free(sb->net);
	/* After PID 1 too: nothing writes to the disk any more when it goes. */
	sr_disk_free(sb->disk);
	for (size_t i = 0; sb->plan.bind_trees && i < sb->config->n_binds; i++)
		sr_closep(&sb->plan.bind_trees[i]);
	free(sb->plan.bind_trees);
	sr_closep(&sb->sock);
	sr_msg_queue_free(&sb->out);
	sr_closep(&sb->pidfd);
	sr_closep(&sb->endfd);
	sr_closep(&sb->uid_lock);
	sr_closep(&sb->plan.agent_fd);
	sr_closep(&sb->plan.workspace_tree);
	sr_procview_plan_close(&sb->plan.view);
	sr_strv_free(&sb->plan.envp);
	sr_agent_free(&sb->agent);
	free(sb);
}
