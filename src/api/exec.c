/* SPDX-License-Identifier: MIT */
/*
 * exec over HTTP: a process in a sandbox (the keeper's exec, as `sandbox-
 * run exec` asks it) with pipes of ours as its stdio. Answered three ways:
 *
 *   buffered  one JSON object once it has ended: exit_code, status,
 *             stdout, stderr (each bounded), wall_ms, the record
 *   NDJSON    a line per event as it comes: start, stdout, stderr, exit
 *   Connect   envd's process.Process/Start stream (E2B's commands.run)
 *
 * A streamed answer reads the process's output only as fast as the client
 * takes it (past a megabyte waiting, the pipes are not read, and the
 * process waits on its writes). A /v1 client that hangs up has its
 * process killed (the keeper kills it when its connection closes, as for
 * `sandbox-run exec`); an E2B command goes on alone, as envd's do.
 *
 * Here: the process started (asked for, or a warm invocation's), its end
 * and its free; its pipes and the stream are in exec-stream.c, its end
 * as /v1 answers it in exec-result.c, envd's part in exec-envd.c (what
 * the parts share: exec-internal.h).
 */
#include "exec-internal.h"
#include "util.h"

static void exec_free(struct exec_job *x)
{
	struct exec_job **p = &srv_lists(x->job.s)->execs;

	while (*p && *p != x)
		p = &(*p)->next;
	if (*p)
		*p = x->next;
	kcall_stop(&x->k);
	for (int i = 0; i < 2; i++) {
		srv_unwatch(x->job.s, &x->out[i].w);
		sr_closep(&x->out[i].fd);
		fbuf_free(&x->out[i].all);
	}
	srv_unwatch(x->job.s, &x->in_w);
	sr_closep(&x->in_fd);
	srv_job_remove(&x->job);
	if (x->input)
		explicit_bzero(x->input, x->input_len);
	free(x->input);
	fbuf_free(&x->stream);
	if (x->argv)
		json_decref(x->argv);
	if (x->cwd)
		json_decref(x->cwd);
	if (x->env)
		json_decref(x->env);
	if (x->extra)
		json_decref(x->extra);
	if (x->done)
		x->done(x->done_ctx);
	free(x);
}

/* The end: answered whole (buffered), or its last event queued (streamed). */
static void finish(struct exec_job *x, json_t *ev, const char *error)
{
	struct req *r = x->job.r;

	/*
	 * What the process wrote before it ended is in the pipes: all of it,
	 * which is a pipeful at most, not what a daemon it left adds later.
	 * Read until the pipe was empty, a daemon writing as fast as the loop
	 * read held the loop, and queued tens of megabytes for a client that
	 * took them slowly.
	 */
	for (int i = 0; i < 2; i++) {
		int left = x->out[i].fd >= 0 ? fcntl(x->out[i].fd, F_GETPIPE_SZ) : 0;

		/* A pipe's read takes all it can, up to READ_CHUNK: a pipeful is this many. */
		for (; left > 0 && x->out[i].fd >= 0 && exec_read_output(x, i) > 0;
		     left -= READ_CHUNK)
			;
		if (x->out[i].fd >= 0 && !buffered(x) && x->job.r)
			exec_emit_output(x, i, "", 0, true);
		exec_stop_output(x, i);
	}
	kcall_stop(&x->k);
	x->exited = true;
	if (!r) {
		exec_free(x);
		return;
	}
	if (x->mode == MODE_RAW) {
		json_t *res = exec_result_json(x, ev, error);

		if (res)
			exec_answer_raw(x, res);
		else
			srv_answer_error(r, -ENOMEM, "invoke: out of memory");
		exec_free(x);
		return;
	}
	if (buffered(x)) {
		exec_answer_json(x, exec_result_json(x, ev, error));
		exec_free(x);
		return;
	}
	if (x->mode == MODE_CONNECT) {
		exec_emit_connect_end(x, ev, error);
	} else {
		json_t *res = exec_result_json(x, ev, error);

		if (res)
			json_object_set_new(res, "type", json_string("exit"));
		exec_emit(x, res);
		x->finished = true;
	}
	srv_resume(r);
}

static bool is_exit_event(json_t *msg)
{
	return sr_streq(json_string_value(json_object_get(msg, "event")), "exit");
}

static void exec_msg(struct kcall *k, json_t *msg)
{
	struct exec_job *x = container_of(k, struct exec_job, k);
	struct sr_error err = {0};

	if (!x->started) {
		json_t *status;

		/*
		 * Its timeout passed before PID 1 had started it (1 ms, an agent
		 * keeping PID 1 busy): the keeper tells its end, 124, with no
		 * start before it. The command's own end, as if it had started.
		 */
		if (is_exit_event(msg)) {
			if (!buffered(x) && x->job.r)
				exec_started(x, 0);
			return finish(x, msg, NULL);
		}
		if (sr_ctl_reply_error(msg, &err) == 0)
			return exec_started(x,
					    (pid_t)json_integer_value(json_object_get(msg, "pid")));
		status = json_object_get(msg, "status");
		/* Not found, not executable: the process's own end, as a shell says it. */
		if (json_integer_value(status) == 126 || json_integer_value(status) == 127) {
			json_t *ev = json_pack("{sO}", "exit_code", status);
			char text[SR_ERROR_MSG_MAX + 32];

			snprintf(text, sizeof(text), "sandbox-run: exec: %s", err.msg);
			if (!buffered(x) && x->job.r)
				exec_started(x, 0);
			finish(x, ev, text);
			if (ev)
				json_decref(ev);
			return;
		}
		/*
		 * A working directory that is not there (125, ENOENT: the
		 * spawn's): envd refuses such a cwd as the client's mistake,
		 * invalid_argument, not as not_found.
		 */
		if (x->mode == MODE_CONNECT && json_integer_value(status) == 125 &&
		    (err.code == -ENOENT || err.code == -ENOTDIR))
			err.code = -EINVAL;
		if (x->job.r)
			srv_answer_err(x->job.r, "exec", &err);
		exec_free(x);
		return;
	}
	if (is_exit_event(msg))
		finish(x, msg, NULL);
}

static void exec_hup(struct kcall *k)
{
	struct exec_job *x = container_of(k, struct exec_job, k);
	json_t *ev = json_pack("{si}", "exit_code", 137);

	/* The keeper went (the sandbox ended under the process): killed, as rm kills it. */
	if (!x->started) {
		struct sr_error err = {0};

		sr_error_msg(&err, -ESRCH, "the sandbox's keeper hung up (the sandbox is gone)");
		if (x->job.r)
			srv_answer_err(x->job.r, "exec", &err);
		exec_free(x);
	} else {
		finish(x, ev, "sandbox-run: exec: the sandbox ended");
	}
	if (ev)
		json_decref(ev);
}

static void exec_gone(struct job *j)
{
	struct exec_job *x = container_of(j, struct exec_job, job);

	/* envd's commands outlive their stream (E2B's background commands); /v1's do not. */
	if (x->mode == MODE_CONNECT && !x->exited && !srv_lists(x->job.s)->ending) {
		exec_pause_output(x, false);
		return;
	}
	exec_free(x);
}

static const struct job_ops exec_ops = {.gone = exec_gone};

static int make_pipes(struct exec_job *x, const struct sr_api_exec *in, int child[3])
{
	int p[2];

	child[0] = child[1] = child[2] = -1;
	if (in->has_input) {
		if (pipe2(p, O_CLOEXEC) < 0)
			return sr_negerrno();
		child[0] = p[0];
		x->in_fd = p[1];
		fcntl(x->in_fd, F_SETFL, O_NONBLOCK);
	} else {
		child[0] = open("/dev/null", O_RDONLY | O_CLOEXEC);
		if (child[0] < 0)
			return sr_negerrno();
	}
	for (int i = 0; i < 2; i++) {
		if (pipe2(p, O_CLOEXEC) < 0)
			return sr_negerrno();
		x->out[i].fd = p[0];
		child[i + 1] = p[1];
		fcntl(p[0], F_SETFL, O_NONBLOCK);
	}
	return 0;
}

/*
 * Processes started through the server still running. Each holds up to
 * four of the server's fds (its pipes, its keeper's connection), and
 * E2B's run on once their client has gone, bound by nothing else: with
 * no cap a client could start them until the server had no fd left to
 * accept anyone's connection.
 */
static unsigned running(struct srv *s)
{
	unsigned n = 0;

	for (struct exec_job *x = srv_lists(s)->execs; x; x = x->next)
		n += !x->exited;
	return n;
}

void sr_api_exec(struct req *r, const struct sr_api_exec *in, bool connect)
{
	struct exec_job *x;
	struct sr_error err = {0};
	int child[3] = {-1, -1, -1}, ret;
	json_t *req;

	if (running(r->s) >= srv_opts(r->s)->max_processes)
		return srv_answer_error(r, -EAGAIN,
					"exec: %u processes started through the server are "
					"running (--max-processes)",
					srv_opts(r->s)->max_processes);
	x = calloc(1, sizeof(*x));
	if (!x)
		return srv_answer_error(r, -ENOMEM, "exec: out of memory");
	x->in_fd = x->out[0].fd = x->out[1].fd = -1;
	x->k.fd = -1;
	x->mode = connect ? MODE_CONNECT : in->stream ? MODE_NDJSON : MODE_BUFFER;
	x->base64 = in->base64;
	x->max_output = srv_opts(r->s)->max_output;
	x->start_ns = x->sent_ns = sr_monotonic_ns();
	x->argv = json_incref(in->argv);
	x->env = json_incref(in->env);
	x->cwd = in->cwd ? json_string(in->cwd) : NULL;
	x->k.on_msg = exec_msg;
	x->k.on_hup = exec_hup;
	srv_job_add(r->s, &x->job, &exec_ops, NULL);
	ret = make_pipes(x, in, child);
	req = json_pack("{sssOsOsisI}", "op", "exec", "argv", in->argv, "env", in->env, "pty", 0,
			"timeout_ms", (json_int_t)in->timeout_ms);
	if (req && in->cwd)
		json_object_set_new(req, "cwd", sr_json_string(in->cwd));
	if (ret < 0 || !req)
		sr_error_errno(&err, ret < 0 ? ret : -ENOMEM, "pipe");
	else
		ret = kcall_start(r->s, r->m.id, req, child, 3, &x->k, &err);
	if (req)
		json_decref(req);
	for (int i = 0; i < 3; i++)
		sr_closep(&child[i]);
	if (err.code) {
		/* As exec prints them: "exec: no sandbox 'x' (...)", the keeper's own lines. */
		srv_answer_err(r, "exec", &err);
		exec_free(x);
		return;
	}
	if (in->has_input) {
		x->input = malloc(in->input_len + 1);
		if (x->input) {
			memcpy(x->input, in->input, in->input_len);
			x->input_len = in->input_len;
		}
	}
	/* Read once the process has started: its first event is its start. */
	exec_follow(x, r);
}

void sr_api_exec_attach(struct req *r, struct sr_api_attach *a)
{
	static const enum mode modes[] = {[SR_API_ANSWER_RAW] = MODE_RAW,
					  [SR_API_ANSWER_JSON] = MODE_BUFFER,
					  [SR_API_ANSWER_NDJSON] = MODE_NDJSON};
	struct exec_job *x = calloc(1, sizeof(*x));
	struct sr_pool_taken *t = a->taken;
	int ret;

	if (!x) {
		sr_pool_taken_close(t);
		if (a->extra)
			json_decref(a->extra);
		if (a->done)
			a->done(a->ctx);
		return srv_answer_error(r, -ENOMEM, "invoke: out of memory");
	}
	x->mode = modes[a->answer];
	x->base64 = a->base64;
	x->max_output = srv_opts(r->s)->max_output;
	x->start_ns = x->sent_ns = sr_monotonic_ns();
	x->extra = a->extra;
	x->done = a->done;
	x->done_ctx = a->ctx;
	x->k.fd = -1;
	x->k.on_msg = exec_msg;
	x->k.on_hup = exec_hup;
	x->in_fd = steal_fd(&t->stdio[0]);
	x->out[0].fd = steal_fd(&t->stdio[1]);
	x->out[1].fd = steal_fd(&t->stdio[2]);
	srv_job_add(r->s, &x->job, &exec_ops, NULL);
	x->input = malloc(a->input_len + 1);
	if (!x->input) {
		/* Unreleased, the sandbox ends with its hold, its process never started. */
		sr_pool_taken_close(t);
		srv_answer_error(r, -ENOMEM, "invoke: out of memory");
		exec_free(x);
		return;
	}
	memcpy(x->input, a->input, a->input_len);
	x->input_len = a->input_len;
	/*
	 * The prompt at once (the pipe is empty: all of a small one fits),
	 * which starts the process, then the release, which its keeper can
	 * read while the process runs. Until the release the sandbox has no
	 * deadline: unsent, the process is killed (its hold closed) rather
	 * than left to run without one. A keeper that hung up (the sandbox
	 * ended meanwhile) has left its answer, the exit or the end, to read.
	 */
	exec_on_input(r->s, x, EPOLLOUT);
	ret = sr_pool_taken_release(t);
	if (ret < 0 && ret != -EPIPE && ret != -ECONNRESET) {
		sr_pool_taken_close(t);
		srv_answer_error(r, ret, "invoke: release the warm sandbox: %s", strerror(-ret));
		exec_free(x);
		return;
	}
	ret = kcall_attach(r->s, steal_fd(&t->hold), t->id, &x->k);
	/* What is left of it (its fds are x's now): the keeper's state, no part of an invocation.
	 */
	sr_pool_taken_close(t);
	if (ret < 0) {
		srv_answer_error(r, -ENOMEM, "invoke: out of memory");
		exec_free(x);
		return;
	}
	/* The rest of a long input as the process reads it. */
	exec_follow(x, r);
	exec_started(x, t->pid);
}
