/* SPDX-License-Identifier: MIT */
/*
 * Workers: cp, the API's file requests, diff/apply and snapshot, each a
 * process PID 1 forks in the sandbox on the client's stream. Their
 * requests go to PID 1 as its socket has room; until then they wait on
 * their clients, in the order they came.
 */
#include "keeper-internal.h"
#include "control.h"
#include "protocol.h"
#include "units.h"
#include "util.h"

#include <limits.h>
#include <sys/stat.h>

/*
 * A snapshot's worker writes the file here itself, as the agent's uid: the
 * agent can stop it (SIGSTOP), and the snapshot would wait for ever. One
 * whose file has not grown for this long is given up (its request may say
 * another time, 0: wait), as cp gives up on a stream that does not move.
 */
#define SNAPSHOT_IDLE_MS (60 * 1000)

/* The client's waiting request is dropped (it hung up, the sandbox ended), or taken. */
void keeper_work_forget(struct keeper *k, struct client *cl)
{
	if (cl->wait_kind && k->n_waiting > 0)
		k->n_waiting--;
	cl->wait_kind = 0;
	free(steal_pointer(&cl->wait_path));
	sr_closep(&cl->wait_fd);
}

/* A snapshot's watch (SNAPSHOT_IDLE_MS), from now: none if it cannot be had, as before. */
static void watch_snapshot(struct client *cl)
{
	sr_closep(&cl->timerfd);
	if (cl->snap_idle_ms > 0 && keeper_arm_client_timer(cl, cl->snap_idle_ms, true) < 0)
		sr_closep(&cl->timerfd);
}

/* The requests served by a worker in the sandbox (work.h), on the stream fd the client passes. */
static const struct {
	const char *op;
	int kind;
} work_ops[] = {
    {"cp_out", SR_WORK_TAR_OUT},
    {"cp_in", SR_WORK_TAR_IN},
    {"file_read", SR_WORK_FILE_READ},
    {"file_write", SR_WORK_FILE_WRITE},
    {"file_list", SR_WORK_LIST},
    {"file_stat", SR_WORK_STAT},
    {"file_remove", SR_WORK_REMOVE},
    {"file_mkdir", SR_WORK_MKDIR},
    {"file_stat_follow", SR_WORK_STAT_FOLLOW},
};

int keeper_work_kind(const char *op)
{
	for (size_t i = 0; op && i < SR_ARRAY_SIZE(work_ops); i++)
		if (strcmp(op, work_ops[i].op) == 0)
			return work_ops[i].kind;
	return -1;
}

/* The verb a worker of this kind serves, for its messages. */
static const char *work_verb(const struct client *cl, int kind)
{
	return cl->snap.name ? "snapshot" : kind == SR_WORK_CHANGES ? "changes" : "cp";
}

/*
 * The client's waiting request to PID 1: its worker starts. A snapshot's
 * file is watched from then on, idle_ms at a time from its start.
 */
static void work_send(struct keeper *k, struct client *cl)
{
	int kind = cl->wait_kind;
	const char *verb = work_verb(cl, kind);
	_cleanup_free_ char *path = steal_pointer(&cl->wait_path);
	_cleanup_close_ int fd = steal_fd(&cl->wait_fd);
	int r;

	keeper_work_forget(k, cl);
	r = sr_sandbox_work(k->sb, kind, path, fd, 0, &cl->work);
	if (r < 0) {
		cl->work = 0;
		sr_closep(&cl->timerfd);
		sr_snapshot_abort(&cl->snap);
		return keeper_reply_error(cl, r, 125, "%s: %s", verb, strerror(-r));
	}
	if (kind == SR_WORK_SNAPSHOT) {
		watch_snapshot(cl);
		if (cl->timerfd >= 0)
			cl->snap_fd = steal_fd(&fd);
	}
}

/*
 * The requests that wait start, the first come first, while PID 1's
 * socket has room. A request is a message there, and the socket holds
 * about 90 (208 KiB): a burst of more (serve writes up to 128 files at
 * once, each a worker) filled it while PID 1 forked workers as fast as a
 * loaded machine let it, and a request that found no room within
 * SEND_WAIT_MS (sandbox.c) failed as though the agent kept PID 1 busy
 * (EAGAIN). Only unread messages are waited for, never a worker's end:
 * workers that run on (a download its client reads slowly, a worker the
 * agent stopped) hold up no other request.
 */
void keeper_work_next(struct keeper *k)
{
	while (k->n_waiting > 0 && !k->end_reason && sr_sandbox_has_room(k->sb)) {
		struct client *first = NULL;

		for (size_t i = 0; i < k->n_clients; i++) {
			struct client *cl = k->clients[i];

			if (cl->wait_kind && !cl->hung_up &&
			    (!first || cl->wait_seq < first->wait_seq))
				first = cl;
		}
		if (!first)
			return;
		work_send(k, first);
	}
}

/*
 * A worker for the client, once PID 1's socket has room (keeper_work_next(), and
 * at the end of each round): kind, on the stream *fd (taken), at path
 * (NULL: none). A snapshot's watch runs while it waits: PID 1 reads its
 * socket within milliseconds unless it is kept from it, and a snapshot
 * gives up then as one whose worker writes nothing.
 */
static void work_queue(struct keeper *k, struct client *cl, int kind, const char *path, int *fd)
{
	const char *verb = work_verb(cl, kind);

	if (path && !(cl->wait_path = strdup(path))) {
		sr_snapshot_abort(&cl->snap);
		return keeper_reply_error(cl, -ENOMEM, 125, "%s: %s", verb, strerror(ENOMEM));
	}
	cl->wait_kind = kind;
	cl->wait_fd = steal_fd(fd);
	cl->wait_seq = ++k->work_seq;
	k->n_waiting++;
	if (kind == SR_WORK_SNAPSHOT)
		watch_snapshot(cl);
	keeper_work_next(k);
}

/* cp, files: a worker in the sandbox writes or reads the stream on the client's pipe. */
void keeper_do_copy(struct keeper *k, struct client *cl, json_t *req, int kind, int *fds,
		    size_t n_fds)
{
	const char *path = json_string_value(json_object_get(req, "path"));

	if (!path || !*path || n_fds != 1)
		return keeper_reply_error(cl, -EINVAL, 125, "cp: a malformed request");
	if (k->end_reason || keeper_under_way(cl))
		return keeper_reply_error(cl, -EBUSY, 125, "cp: %s", keeper_busy_text(k));
	work_queue(k, cl, kind, path, &fds[0]);
}

/* diff ID, apply ID: a worker writes the workspace's changes, raw (changes.h), on the client's
 * pipe. */
void keeper_do_changes(struct keeper *k, struct client *cl, int *fds, size_t n_fds)
{
	if (n_fds != 1)
		return keeper_reply_error(cl, -EINVAL, 125, "changes: a malformed request");
	if (k->end_reason || keeper_under_way(cl))
		return keeper_reply_error(cl, -EBUSY, 125, "changes: %s", keeper_busy_text(k));
	work_queue(k, cl, SR_WORK_CHANGES, NULL, &fds[0]);
}

/*
 * snapshot NAME: the sandbox's files, written by a worker inside (work.c)
 * into a file of the user's data directory opened here, then the
 * configuration beside it (snapshot.h).
 */
void keeper_do_snapshot(struct keeper *k, struct client *cl, json_t *req)
{
	const char *name = json_string_value(json_object_get(req, "name"));
	json_t *idle = json_object_get(req, "idle_ms");
	struct sr_error err = {0};
	_cleanup_close_ int fd = -1;

	if (!name || (idle && (!json_is_integer(idle) || json_integer_value(idle) < 0 ||
			       json_integer_value(idle) > INT_MAX)))
		return keeper_reply_error(cl, -EINVAL, 125, "snapshot: a malformed request");
	if (k->end_reason || keeper_under_way(cl))
		return keeper_reply_error(cl, -EBUSY, 125, "snapshot: %s", keeper_busy_text(k));
	if (sr_snapshot_begin(name, &cl->snap, &fd, &err) < 0)
		return keeper_reply(cl, sr_ctl_error_reply(&err), NULL, 0);
	cl->snap_idle_ms = idle ? json_integer_value(idle) : SNAPSHOT_IDLE_MS;
	work_queue(k, cl, SR_WORK_SNAPSHOT, NULL, &fd);
}

/*
 * A snapshot's watch: its file grew since the last look, or it is given
 * up (the client told why, its worker cancelled, its files removed) --
 * also while its request waits for room on PID 1's socket (work_queue()).
 */
void keeper_on_snapshot_timer(struct client *cl)
{
	char took[32];
	struct stat st;

	if (!cl->wait_kind && fstat(cl->snap_fd, &st) == 0 && st.st_size != cl->snap_size) {
		cl->snap_size = st.st_size;
		return;
	}
	sr_closep(&cl->timerfd);
	sr_format_duration((uint64_t)cl->snap_idle_ms, took, sizeof(took));
	/* Its files gone before the 125 is heard: nothing of it to see after. */
	sr_closep(&cl->snap_fd);
	sr_snapshot_abort(&cl->snap);
	if (cl->wait_kind)
		keeper_reply_error(
		    cl, -ETIMEDOUT, 125,
		    "snapshot: PID 1 took no request for %s (kept busy from inside?)", took);
	else
		keeper_reply_error(
		    cl, -ETIMEDOUT, 125,
		    "snapshot: nothing was written for %s (its worker in the sandbox "
		    "stopped?)",
		    took);
	keeper_hang_up(cl);
}

void keeper_on_worked(void *ctx, struct sr_sandbox *sb, uint32_t id, const struct sr_error *err)
{
	struct keeper *k = ctx;

	(void)sb;
	if (sr_artifacts_worked(k->artifacts, id, err))
		return;
	for (size_t i = 0; i < k->n_clients; i++) {
		struct client *cl = k->clients[i];
		struct sr_error cerr = {0};
		json_t *meta = NULL;

		if (cl->work != id)
			continue;
		cl->work = 0;
		cl->hung_up = true;
		sr_closep(&cl->snap_fd);
		sr_closep(&cl->timerfd);
		if (!cl->snap.name) {
			keeper_reply(
			    cl, err->code ? sr_ctl_error_reply(err) : json_pack("{sb}", "ok", 1),
			    NULL, 0);
			continue;
		}
		/* A snapshot's files are written: its configuration beside them, then its name. */
		if (err->code ||
		    sr_snapshot_commit(&cl->snap, k->config, k->id, &meta, &cerr) < 0) {
			json_t *reply = sr_ctl_error_reply(err->code ? err : &cerr);

			/* Its files gone before the 125 is heard: nothing of it to see after. */
			sr_snapshot_abort(&cl->snap);
			keeper_reply(cl, reply, NULL, 0);
		} else {
			json_object_set_new(meta, "ok", json_true());
			keeper_reply(cl, meta, NULL, 0);
		}
		sr_snapshot_abort(&cl->snap);
	}
}
