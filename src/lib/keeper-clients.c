/* SPDX-License-Identifier: MIT */
/*
 * The control socket's connections (ctl, control.h): each has one
 * request under way at a time, dispatched here to the keeper's parts;
 * its timer (an exec's --timeout, inspect's wait, a snapshot's watch);
 * and its end -- a client hung up on is done with at the end of the
 * loop's round (keeper_end_clients), its process or worker killed.
 */
#include "keeper-internal.h"
#include "control.h"
#include "peeruid.h"
#include "protocol.h"
#include "util.h"

#include <poll.h>
#include <sys/socket.h>
#include <sys/timerfd.h>

/* After accept(2) ran out of fds: the listeners rest this long (not a busy loop). */
#define ACCEPT_PAUSE_MS 100

/*
 * The client has gone, or reads nothing (its socket is full): it is done
 * with, and its exec's process is killed (the loop sends that).
 */
void keeper_hang_up(struct client *cl)
{
	sr_closep(&cl->fd);
	cl->hung_up = true;
}

/*
 * Whether the client has closed its end (POLLHUP: both ways shut, which a
 * client that only shut down its writing does not do) -- a request it
 * sent and then hung up on, still to be read, has nobody to answer.
 */
bool keeper_client_gone(const struct client *cl)
{
	struct pollfd p = {.fd = cl->fd};

	return cl->fd < 0 || (poll(&p, 1, 0) > 0 && (p.revents & POLLHUP));
}

/*
 * Client sockets never block the keeper: a client that does not read its
 * answers is hung up on rather than waited for -- the deadline, rm and
 * every other client depend on this loop.
 */
void keeper_reply(struct client *cl, json_t *msg, const int *fds, size_t n_fds)
{
	if (msg && cl->fd >= 0 && sr_ctl_send(cl->fd, msg, fds, n_fds) < 0)
		keeper_hang_up(cl);
	if (msg)
		json_decref(msg);
}

void keeper_reply_error(struct client *cl, int code, int status, const char *fmt, ...)
{
	struct sr_error err = {.status = status};
	char msg[SR_ERROR_MSG_MAX];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	sr_error_msg(&err, code, "%s", msg);
	keeper_reply(cl, sr_ctl_error_reply(&err), NULL, 0);
}

/*
 * Whether the client's connection has a request under way (an exec, an
 * inspect, a worker's): the next waits until it is answered. They share
 * the connection's one timer (an exec's timeout, inspect's wait, a
 * snapshot's watch) and its answers, which one request at a time keeps
 * apart.
 */
bool keeper_under_way(const struct client *cl)
{
	return cl->pid > 0 || cl->spawn || cl->stat || cl->work || cl->wait_kind;
}

/* Why a request is refused while another is under way, or the sandbox ends. */
const char *keeper_busy_text(const struct keeper *k)
{
	return k->end_reason ? "the sandbox is ending" : "this connection has a request under way";
}

/* Whether a client only holds its connection: nothing asked, nothing under way. */
static bool idle(const struct client *cl)
{
	return cl->fd >= 0 && !cl->hung_up && !keeper_under_way(cl) && !cl->waits_end && !cl->holds;
}

/* Hangs up on the longest-idle client; false if none is idle. */
static bool evict_idle(struct keeper *k)
{
	struct client *oldest = NULL;

	for (size_t i = 0; i < k->n_clients; i++)
		if (idle(k->clients[i]) && (!oldest || k->clients[i]->since_ns < oldest->since_ns))
			oldest = k->clients[i];
	if (oldest)
		keeper_hang_up(oldest);
	return oldest != NULL;
}

/* accept(2) found no fd to give: room is made, or the listeners rest a while. */
void keeper_out_of_fds(struct keeper *k)
{
	if (!evict_idle(k))
		k->accept_paused_ns = sr_monotonic_ns() + ACCEPT_PAUSE_MS * 1000000LL;
}

void keeper_drop_client(struct keeper *k, size_t i)
{
	struct client *cl = k->clients[i];

	keeper_work_forget(k, cl);
	sr_snapshot_abort(&cl->snap);
	sr_closep(&cl->snap_fd);
	sr_closep(&cl->fd);
	sr_closep(&cl->timerfd);
	free(cl);
	k->clients[i] = k->clients[--k->n_clients];
	keeper_trim_when_idle(k);
}

/* The client's timer: ms from now, and every ms after with repeat; none for ms <= 0. */
int keeper_arm_client_timer(struct client *cl, int64_t ms, bool repeat)
{
	struct itimerspec its = {.it_value = sr_timespec_ms(ms > 0 ? (uint64_t)ms : 0)};

	if (ms <= 0)
		return 0;
	if (repeat)
		its.it_interval = its.it_value;
	cl->timerfd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
	if (cl->timerfd < 0 || timerfd_settime(cl->timerfd, 0, &its, NULL) < 0)
		return sr_negerrno();
	return 0;
}

/*
 * A client's timer: its inspect has waited long enough for PID 1, or its
 * exec's --timeout is over -- also when PID 1 has not started the
 * process yet (it is killed once it has): the client hears 124 now.
 */
void keeper_on_client_timer(struct keeper *k, struct client *cl)
{
	uint64_t x;

	/* Not its time: a timer set anew this round (keeper-work.c) after poll saw the old one. */
	if (read(cl->timerfd, &x, sizeof(x)) != (ssize_t)sizeof(x))
		return;
	if ((cl->work && cl->snap_fd >= 0) || cl->wait_kind == SR_WORK_SNAPSHOT)
		return keeper_on_snapshot_timer(cl);
	sr_closep(&cl->timerfd);
	if (cl->stat) {
		cl->stat = 0;
		keeper_reply(cl, keeper_inspect_json(k, NULL), NULL, 0);
		return;
	}
	if (cl->pid <= 0 && !cl->spawn)
		return;
	cl->timed_out = true;
	if (cl->pid > 0) {
		sr_sandbox_kill_process(k->sb, cl->pid);
		return;
	}
	keeper_exec_ended(k, cl, NULL);
	keeper_hang_up(cl);
}

void keeper_on_connection(struct keeper *k)
{
	struct client **nv, *cl;
	int fd = accept4(k->listen_fd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);

	if (fd < 0) {
		if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM)
			keeper_out_of_fds(k);
		return;
	}
	/* The state directory is the user's own already; the peer's uid is checked all the same. */
	if (sr_ctl_peer_is_us(fd) < 0 || (k->n_clients >= CLIENTS_MAX && !evict_idle(k) &&
					  k->n_clients >= CLIENTS_MAX + CLIENTS_RESERVE)) {
		close(fd);
		return;
	}
	cl = calloc(1, sizeof(*cl));
	nv = cl ? realloc(k->clients, sizeof(*nv) * (k->n_clients + 1)) : NULL;
	if (!nv) {
		free(cl);
		close(fd);
		return;
	}
	/* Non-blocking, for good: see keeper_reply(). */
	*cl = (struct client){
	    .fd = fd, .timerfd = -1, .snap_fd = -1, .wait_fd = -1, .since_ns = sr_monotonic_ns()};
	k->clients = nv;
	k->clients[k->n_clients++] = cl;
}

/* Clients that keep their slot until something ends: a request under way, a warm sandbox held. */
static size_t busy_clients(const struct keeper *k)
{
	size_t n = 0;

	for (size_t i = 0; i < k->n_clients; i++)
		n += keeper_under_way(k->clients[i]) || k->clients[i]->holds;
	return n;
}

/*
 * A request that keeps its client's slot until it ends (an exec, a
 * worker's, a snapshot, changes): at most CLIENTS_MAX of them at once,
 * the next refused (EAGAIN). Taken, they filled the reserve too, and a
 * new connection was closed unread -- rm's and inspect's among them: the
 * owner could no longer end the sandbox. rm, inspect and the requests
 * answered at once always find the reserve.
 */
static bool at_cap(const struct keeper *k, const struct client *cl, const char *op)
{
	bool holds_slot = sr_streq(op, "exec") || keeper_work_kind(op) > 0 ||
			  sr_streq(op, "snapshot") || sr_streq(op, "changes");

	return holds_slot && !keeper_under_way(cl) && busy_clients(k) >= CLIENTS_MAX;
}

/*
 * Whether the sandbox is warm and held by another client than cl: a
 * pool's (pool.h), nobody's yet. Its holder's word comes first: a taker
 * sends the release on the held connection before it (or the client it
 * answered) asks anything on another one, and that word may wait unread
 * in the same round.
 */
static bool held_by_another(struct keeper *k, struct client *cl)
{
	for (size_t i = 0; i < k->n_clients; i++) {
		struct client *h = k->clients[i];
		struct pollfd p = {.fd = h->fd, .events = POLLIN};

		if (h == cl || !h->holds)
			continue;
		if (h->fd >= 0 && poll(&p, 1, 0) == 1 && (p.revents & POLLIN))
			keeper_on_request(k, h);
		/* Hung up, it is still held until keeper_end_clients() ends it. */
		return h->holds;
	}
	return false;
}

/*
 * A warm sandbox is its pool's until taken: what anyone else does in it
 * (an exec, a file written, a port) would be met by the request it is
 * handed to, which must find it as fresh as a new one (docs/security.md).
 * The owner may still remove it (rm); the pool makes another.
 */
static bool refuse_held(struct keeper *k, struct client *cl, const char *op)
{
	if (sr_streq(op, "rm"))
		return false;
	/* Not held yet: its pool's hold, whose word keeper_do_hold() checks, comes first. */
	if (k->reserved ? sr_streq(op, "hold") : !held_by_another(k, cl))
		return false;
	keeper_reply_error(cl, -ENOENT, 125,
			   "sandbox %s is warm: its pool holds it until a request takes it, "
			   "and nobody else may use it",
			   k->id);
	return true;
}

void keeper_on_request(struct keeper *k, struct client *cl)
{
	json_t *req = NULL;
	int fds[SR_CTL_FDS_MAX];
	size_t n_fds = 0;
	const char *op;
	int r = sr_ctl_recv(cl->fd, &req, fds, &n_fds);

	/* Read already (a holder's word read first: held_by_another()). */
	if (r == -EAGAIN)
		return;
	if (r <= 0) {
		/*
		 * Hung up (or garbage): an exec of its is killed, and a cp's or
		 * snapshot's worker (one the agent stopped would never see its
		 * pipe's end); nothing of a client outlives it.
		 */
		keeper_hang_up(cl);
		return;
	}
	op = json_string_value(json_object_get(req, "op"));
	if (refuse_held(k, cl, op)) {
		/* Answered. */
	} else if (at_cap(k, cl, op)) {
		keeper_reply_error(
		    cl, -EAGAIN, 125,
		    "%s: the sandbox's keeper has %d requests under way, its most: try "
		    "again once some have ended",
		    op, CLIENTS_MAX);
	} else if (sr_streq(op, "inspect") && !keeper_under_way(cl) &&
		   busy_clients(k) >= CLIENTS_MAX) {
		/* Answered at once, without PID 1's count: it holds no slot of the reserve. */
		keeper_reply(cl, keeper_inspect_json(k, NULL), NULL, 0);
	} else if (sr_streq(op, "exec")) {
		keeper_do_exec(k, cl, req, fds, n_fds);
	} else if (sr_streq(op, "signal")) {
		json_t *sig = json_object_get(req, "sig");

		if (cl->pid > 0 && json_is_integer(sig))
			sr_sandbox_signal(k->sb, cl->pid, (int)json_integer_value(sig));
		else if (cl->spawn && json_is_integer(sig))
			keeper_cancel_spawn(k, cl, (int)json_integer_value(sig));
	} else if (keeper_work_kind(op) > 0) {
		keeper_do_copy(k, cl, req, keeper_work_kind(op), fds, n_fds);
	} else if (sr_streq(op, "hold") || sr_streq(op, "release")) {
		keeper_do_hold(k, cl, sr_streq(op, "hold"), req);
	} else if (sr_streq(op, "snapshot")) {
		keeper_do_snapshot(k, cl, req);
	} else if (sr_streq(op, "changes")) {
		keeper_do_changes(k, cl, fds, n_fds);
	} else if (sr_streq(op, "port")) {
		keeper_do_port(k, cl, req);
	} else if (sr_streq(op, "inspect")) {
		keeper_do_inspect(k, cl);
	} else if (sr_streq(op, "timeout")) {
		keeper_do_timeout(k, cl, req);
	} else if (sr_streq(op, "rm")) {
		cl->waits_end = true;
		keeper_begin_end(k, "rm");
		if (json_is_true(json_object_get(req, "force")))
			sr_sandbox_kill(k->sb);
	} else {
		keeper_reply_error(cl, -EINVAL, 125, "unknown request '%s'", op ? op : "?");
	}
	for (size_t i = 0; i < n_fds; i++)
		sr_closep(&fds[i]); /* a worker's request that waits took its stream */
	json_decref(req);
}

/*
 * Clients done with: hung up (or answered), their exec's process killed
 * and gone, their worker killed, PID 1 no longer to answer them.
 */
void keeper_end_clients(struct keeper *k)
{
	for (size_t i = k->n_clients; i-- > 0;) {
		struct client *cl = k->clients[i];

		if (!cl->hung_up)
			continue;
		/* However the holder went (hung up, evicted, unread): its warm sandbox ends. */
		if (cl->holds) {
			cl->holds = false;
			keeper_begin_end(k, "released");
		}
		if (cl->pid > 0 && !cl->killed) {
			sr_sandbox_kill_process(k->sb, cl->pid);
			cl->killed = true;
		}
		if (cl->work) {
			sr_sandbox_cancel(k->sb, cl->work);
			cl->work = 0;
		}
		keeper_work_forget(k, cl);
		if (cl->pid <= 0 && !cl->spawn && !cl->stat)
			keeper_drop_client(k, i);
	}
	/* Those waiting for room on PID 1's socket, as it has some. */
	keeper_work_next(k);
}
