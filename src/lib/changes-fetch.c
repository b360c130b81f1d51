/* SPDX-License-Identifier: MIT */
/*
 * diff ID, apply ID: a living sandbox's changes so far. Its keeper has
 * a worker write them raw on our pipe (keeper-work.c: "changes"); they are
 * compared here, as the caller, with the sandbox's host directory
 * (state.json's workspace_dir), into an unnamed temporary file.
 */
#include "changes.h"
#include "control.h"
#include "state.h"
#include "units.h"
#include "util.h"

#include <poll.h>

/*
 * The worker stopped (by the agent, whose uid it runs as): we give up and
 * close our connection, on which the keeper ends it.
 */
static int worker_stuck(int idle_ms, bool at_end, struct sr_error *err)
{
	char d[SR_UNITS_BUF_MAX];

	sr_format_duration((uint64_t)idle_ms, d, sizeof(d));
	return sr_error_msg(err, -ETIMEDOUT,
			    "changes: %s %s%s: its worker is stopped or gone; gave up "
			    "(--idle-timeout sets how long to wait)",
			    at_end ? "the sandbox's worker did not finish within"
				   : "nothing came from the sandbox for",
			    d, at_end ? " of the stream's end" : "");
}

/* The keeper's answer, once the stream is over: at most idle_ms (0: as long as it takes). */
static int keeper_answer(int ctl, int idle_ms, json_t **ret, struct sr_error *err)
{
	struct pollfd p = {.fd = ctl, .events = POLLIN};
	int r;

	do
		r = poll(&p, 1, idle_ms > 0 ? idle_ms : -1);
	while (r < 0 && errno == EINTR);
	if (r == 0)
		return worker_stuck(idle_ms, true, err);
	if (sr_ctl_recv_nofds(ctl, ret) <= 0)
		return sr_error_msg(err, -ECONNRESET, "changes: the sandbox's keeper hung up");
	return 0;
}

int sr_changes_fetch(const char *ref, int idle_ms, const struct sr_sink *sink, int *ret_fd,
		     struct sr_error *err)
{
	_cleanup_free_ char *statedir = NULL;
	_cleanup_close_ int ctl = -1, out = -1, spool = -1;
	struct sr_entry e = {0};
	struct sr_error berr = {0};
	json_t *req = NULL, *reply = NULL;
	int p[2] = {-1, -1}, k, r;
	size_t n = 0;
	struct sr_changes_origin o;
	json_t *disk;

	if ((k = sr_state_dir(&statedir, err)) < 0 ||
	    (k = sr_state_find(statedir, ref, &e, err)) < 0 ||
	    (k = sr_ctl_connect(e.dir, &ctl, err)) < 0)
		goto out;
	spool = open(sr_changes_tmp_dir(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	out = spool >= 0 ? openat(spool, ".", O_TMPFILE | O_RDWR | O_CLOEXEC, 0600) : -1;
	if (out < 0 || pipe2(p, O_CLOEXEC) < 0) {
		k = sr_error_errno(err, sr_negerrno(), "changes: a temporary file in %s",
				   sr_changes_tmp_dir());
		goto out;
	}
	req = json_pack("{ss}", "op", "changes");
	k = req ? sr_ctl_send(ctl, req, &p[1], 1) : -ENOMEM;
	sr_closep(&p[1]);
	if (k < 0) {
		sr_error_errno(err, k, "changes: talk to the sandbox's keeper");
		goto out;
	}
	disk = json_object_get(json_object_get(e.state, "limits"), "disk_bytes");
	o = (struct sr_changes_origin){
	    .workspace = json_string_value(json_object_get(e.state, "workspace_dir")),
	    .sandbox_id = e.id,
	    .t0_ns = json_integer_value(json_object_get(e.state, "base_time_ns")),
	    .max_bytes = json_is_integer(disk) && json_integer_value(disk) > 0
			     ? (uint64_t)json_integer_value(disk)
			     : 0,
	    .idle_ms = idle_ms,
	};
	k = sr_changes_build(p[0], &o, spool, out, sink, &n, &berr);
	if (k == -ETIMEDOUT) {
		k = worker_stuck(idle_ms, false, err);
		goto out;
	}
	/* Closed before the answer: a worker still writing (we stopped) gets EPIPE and ends. */
	sr_closep(&p[0]);
	r = keeper_answer(ctl, idle_ms, &reply, err);
	/* Past a bound of ours we stopped reading: the worker's broken pipe is not the story. */
	if (k == -EFBIG) {
		*err = berr;
		goto out;
	}
	if (r < 0) {
		k = r;
		goto out;
	}
	if (sr_ctl_reply_error(reply, err) < 0) {
		k = sr_error_prefix(err, "changes");
		goto out;
	}
	if (k < 0) {
		*err = berr;
		goto out;
	}
	*ret_fd = steal_fd(&out);
out:
	sr_closep(&p[0]);
	sr_closep(&p[1]);
	json_decref(req);
	json_decref(reply);
	sr_entry_free(&e);
	return k < 0 ? k : 0;
}
