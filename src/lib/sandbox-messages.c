/* SPDX-License-Identifier: MIT */
/*
 * What PID 1 says (protocol.h): its messages read and handled, the
 * owner's callbacks (sandbox.h) called; PID 1 reaped once it has ended.
 */
#include "sandbox-internal.h"
#include "util.h"

#include <sys/wait.h>

static double us_to_ms(int64_t us)
{
	return (double)us / 1e3;
}

/* The use an EXIT or a STATS tells. */
static struct sr_rusage rusage_of(const struct sr_msg *m)
{
	return (struct sr_rusage){
	    .user_ms = us_to_ms(m->user_us),
	    .sys_ms = us_to_ms(m->sys_us),
	    .disk_used = m->value,
	    .peak_rss = m->peak_rss,
	};
}

/* READY (+ the disk's fd): the set-up [2] is done. */
static void on_ready(struct sr_sandbox *sb, const struct sr_msg *m, struct sr_msg_extra *ex)
{
	sb->ready = true;
	if (m->flags & SR_READY_VIEWS_FROZEN)
		sr_info(sb->opts.sink,
			"sandbox %s: /proc/meminfo%s show%s the sandbox as it was at its "
			"start, not live (%s; see docs/limits.md)",
			sb->id, sb->plan.view.cpu_views ? ", stat and cpuinfo" : "",
			sb->plan.view.cpu_views ? "" : "s", m->text);
	sr_net_agent_started(sb->net);
	/* The disk's root: its use counted here, PID 1 alive or not (disk.h). */
	if (ex->n_fds == 1)
		sr_disk_set_root(sb->disk, steal_fd(&ex->fds[0]));
}

static void on_net(struct sr_sandbox *sb, struct sr_msg_extra *ex)
{
	struct sr_error err = {0};

	/* The set-up waits on nothing here; without its resolver the sandbox does not start. */
	if (sr_net_sockets(sb->net, ex->fds, ex->n_fds, &err) < 0 && !sb->error.code) {
		sb->error = err;
		sr_sandbox_kill(sb);
	}
}

static void on_tap(struct sr_sandbox *sb, struct sr_msg_extra *ex)
{
	struct sr_error err = {0};

	/* The policy is in; the sandbox goes on without waiting for the helper. */
	if (sb->reaped || ex->n_fds != 1)
		return; /* read after PID 1 ended: too late */
	if (sr_net_start_helper(sb->net, steal_fd(&ex->fds[0]), &err) < 0)
		sr_warn(sb->opts.sink, "%s: the sandbox has no network", err.msg);
}

static void on_exited(struct sr_sandbox *sb, const struct sr_msg *m)
{
	struct sr_exit e = {.pid = m->pid, .status = m->status, .ru = rusage_of(m)};

	sb->disk_used = m->value;
	if (sb->ends.pid == m->pid) {
		sb->ends = e;
		sb->ends_seen = true;
		sb->held = sb->ends_holds;
		if (sb->opts.ops && sb->opts.ops->ends_exited)
			sb->opts.ops->ends_exited(sb->opts.ctx, sb, &e);
	} else if (sb->opts.ops && sb->opts.ops->exited) {
		sb->opts.ops->exited(sb->opts.ctx, sb, &e);
	}
}

/* CONNECTED or CONNECT_FAILED. */
static void on_connected(struct sr_sandbox *sb, const struct sr_msg *m, struct sr_msg_extra *ex)
{
	struct sr_error cerr = {0};
	int fd = -1;

	if (!sb->opts.ops || !sb->opts.ops->connected)
		return;
	if (m->type == SR_MSG_CONNECTED && ex->n_fds == 1)
		fd = steal_fd(&ex->fds[0]);
	else
		sr_error_errno(&cerr, m->code ? m->code : -EPROTO, "connect");
	sb->opts.ops->connected(sb->opts.ctx, sb, m->id, fd, &cerr);
}

/* SPAWNED or SPAWN_FAILED, for sr_sandbox_spawn_start(). */
static void on_spawned(struct sr_sandbox *sb, const struct sr_msg *m, struct sr_msg_extra *ex)
{
	struct sr_error serr = {0};
	int pty = -1;

	if (!sb->opts.ops || !sb->opts.ops->spawned)
		return;
	if (m->type == SR_MSG_SPAWN_FAILED) {
		serr.status = m->status;
		sr_error_msg(&serr, m->code < 0 ? m->code : -EIO, "%s", m->text);
	} else if (ex->n_fds == 1) {
		pty = steal_fd(&ex->fds[0]);
	}
	if (m->type == SR_MSG_SPAWNED && sb->ends_spawn && m->id == sb->ends_spawn)
		sb->ends.pid = m->pid;
	sb->opts.ops->spawned(sb->opts.ctx, sb, m->id, m->type == SR_MSG_SPAWNED ? m->pid : 0, pty,
			      &serr);
}

static void on_stats(struct sr_sandbox *sb, const struct sr_msg *m)
{
	const struct sr_usage u = {.processes = m->pid, .ru = rusage_of(m)};

	sb->disk_used = m->value;
	if (sb->opts.ops && sb->opts.ops->stats)
		sb->opts.ops->stats(sb->opts.ctx, sb, m->id, &u);
}

static void on_worked(struct sr_sandbox *sb, const struct sr_msg *m)
{
	struct sr_error werr = {0};

	if (!sb->opts.ops || !sb->opts.ops->worked)
		return;
	if (m->code)
		sr_error_msg(&werr, m->code, "%s", m->text);
	sb->opts.ops->worked(sb->opts.ctx, sb, m->id, &werr);
}

/* One message from PID 1 (but the reply wait_reply() waits for: sandbox.c). */
void sandbox_on_message(struct sr_sandbox *sb, const struct sr_msg *m, struct sr_msg_extra *ex)
{
	switch (m->type) {
	case SR_MSG_READY:
		on_ready(sb, m, ex);
		break;
	case SR_MSG_ERROR:
		sb->error = (struct sr_error){.status = m->status};
		sr_error_msg(&sb->error, m->code, "%s", m->text);
		break;
	case SR_MSG_WARNING:
		sr_warn(sb->opts.sink, "%s", m->text);
		break;
	case SR_MSG_NET:
		on_net(sb, ex);
		break;
	case SR_MSG_TAP:
		on_tap(sb, ex);
		break;
	case SR_MSG_EXIT:
		on_exited(sb, m);
		break;
	case SR_MSG_ENDED:
		sb->disk_used = m->value;
		break;
	case SR_MSG_HALTED:
		sb->disk_used = m->value;
		sb->held = true;
		sr_closep(&sb->endfd); /* answered within its grace */
		break;
	case SR_MSG_CONNECTED:
	case SR_MSG_CONNECT_FAILED:
		on_connected(sb, m, ex);
		break;
	case SR_MSG_SPAWNED:
	case SR_MSG_SPAWN_FAILED:
		on_spawned(sb, m, ex);
		break;
	case SR_MSG_STATS:
		on_stats(sb, m);
		break;
	case SR_MSG_WORKED:
		on_worked(sb, m);
		break;
	default:
		break;
	}
	sr_msg_extra_close(ex);
}

/* Reads one message; 1, 0 at EOF (the socket is closed then), or -EAGAIN. */
int sandbox_read_message(struct sr_sandbox *sb, struct sr_msg *m, struct sr_msg_extra *ex)
{
	int r;

	*ex = (struct sr_msg_extra){0};
	if (sb->sock < 0)
		return 0;
	r = sr_msg_recv_nowait(sb->sock, m, ex);
	if (r == -EAGAIN || r == -EWOULDBLOCK)
		return -EAGAIN;
	if (r <= 0) {
		/* EOF (PID 1 gone) or garbage: nothing more to read either way. */
		close(steal_fd(&sb->sock));
		return 0;
	}
	return 1;
}

/* Everything PID 1 has said so far. */
void sandbox_drain(struct sr_sandbox *sb)
{
	struct sr_msg m;
	struct sr_msg_extra ex;

	while (sandbox_read_message(sb, &m, &ex) == 1)
		sandbox_on_message(sb, &m, &ex);
}

/* PID 1 reaped, if it has ended: its rusage is that of the whole tree. */
bool sandbox_reap(struct sr_sandbox *sb, bool block)
{
	if (sb->reaped || sb->pid <= 0)
		return sb->reaped;
	if (wait4(sb->pid, &sb->init_status, block ? 0 : WNOHANG, &sb->ru) != sb->pid)
		return false;
	sb->reaped = true;
	/* Whatever PID 1 said before it went (EXIT, ENDED) is still queued. */
	sandbox_drain(sb);
	sr_net_ended(sb->net);
	sr_closep(&sb->endfd);
	return true;
}
