/* SPDX-License-Identifier: MIT */
/*
 * diff ID, apply ID: a living sandbox's changes so far. Its keeper has
 * a worker write them raw on our pipe (keeper.c: "changes"); they are
 * compared here, as the caller, with the sandbox's host directory
 * (state.json's workspace_dir), into an unnamed temporary file.
 */
#include "changes.h"
#include "control.h"
#include "state.h"
#include "util.h"

static const char *tmp_dir(void)
{
	const char *t = getenv("TMPDIR");

	return t && t[0] == '/' ? t : "/tmp";
}

int sr_changes_fetch(const char *ref, const struct sr_sink *sink, int *ret_fd, struct sr_error *err)
{
	_cleanup_free_ char *statedir = NULL;
	_cleanup_close_ int ctl = -1, out = -1, spool = -1;
	struct sr_entry e = {0};
	struct sr_error berr = {0};
	json_t *req = NULL, *reply = NULL;
	int fds[SR_CTL_FDS_MAX], p[2] = {-1, -1}, k;
	size_t n_fds = 0, n = 0;
	const char *ws;
	json_t *disk;

	if ((k = sr_state_dir(&statedir, err)) < 0 ||
	    (k = sr_state_find(statedir, ref, &e, err)) < 0 ||
	    (k = sr_ctl_connect(e.dir, &ctl, err)) < 0)
		goto out;
	spool = open(tmp_dir(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	out = spool >= 0 ? openat(spool, ".", O_TMPFILE | O_RDWR | O_CLOEXEC, 0600) : -1;
	if (out < 0 || pipe2(p, O_CLOEXEC) < 0) {
		k = sr_error_errno(err, sr_negerrno(), "changes: a temporary file in %s",
				   tmp_dir());
		goto out;
	}
	req = json_pack("{ss}", "op", "changes");
	k = req ? sr_ctl_send(ctl, req, &p[1], 1) : -ENOMEM;
	sr_closep(&p[1]);
	if (k < 0) {
		sr_error_errno(err, k, "changes: talk to the sandbox's keeper");
		goto out;
	}
	ws = json_string_value(json_object_get(e.state, "workspace_dir"));
	disk = json_object_get(json_object_get(e.state, "limits"), "disk_bytes");
	k = sr_changes_build(p[0], ws, e.id,
			     json_integer_value(json_object_get(e.state, "base_time_ns")),
			     json_is_integer(disk) && json_integer_value(disk) > 0
				 ? (uint64_t)json_integer_value(disk)
				 : 0,
			     spool, out, sink, &n, &berr);
	/* Closed before the answer: a worker still writing (we stopped) gets EPIPE and ends. */
	sr_closep(&p[0]);
	if (sr_ctl_recv(ctl, &reply, fds, &n_fds) <= 0) {
		k = sr_error_msg(err, -ECONNRESET, "changes: the sandbox's keeper hung up");
		goto out;
	}
	for (size_t i = 0; i < n_fds; i++)
		close(fds[i]);
	/* Past a bound of ours we stopped reading: the worker's broken pipe is not the story. */
	if (k == -EFBIG) {
		*err = berr;
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
