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
 */
#include "internal.h"
#include "secmem.h"
#include "util.h"

#include <signal.h>

#define READ_CHUNK  (64 * 1024)
#define STREAM_HIGH (1024 * 1024)
#define STREAM_LOW  (256 * 1024)
/* envd's keep-alive: a stream silent this long gets an empty event (the SDK asks 50 s). */
#define KEEPALIVE_NS (20ll * 1000000000)

enum mode {
	MODE_BUFFER,
	MODE_NDJSON,
	MODE_CONNECT,
	MODE_RAW, /* buffered; stdout the body, the rest in headers (a warm invocation) */
};

struct exec_job {
	struct job job;
	struct kcall k;
	enum mode mode;
	bool base64;
	struct {
		int fd;
		struct watch *w;
		struct fbuf all; /* buffered: everything, up to max */
		bool truncated;
		char pend[4]; /* streamed text: a UTF-8 sequence cut by the chunk */
		size_t n_pend;
	} out[2];
	int in_fd;
	struct watch *in_w;
	char *input;
	size_t input_len, input_off;
	struct fbuf stream; /* streamed: what the client has not taken yet */
	bool paused;
	pid_t pid;
	bool started, exited, finished;
	int64_t start_ns, sent_ns;
	uint64_t max_output, timeout_ms;
	json_t *argv, *cwd, *env; /* envd's List shows them */
	json_t *extra;		  /* an invocation's: joins the answer */
	void (*done)(void *ctx);  /* an invocation's: told once it is over */
	void *done_ctx;
	struct exec_job *next;
};

static bool buffered(const struct exec_job *x)
{
	return x->mode == MODE_BUFFER || x->mode == MODE_RAW;
}

/* One event of the stream, in its format; the client is woken if it waits. */
static void emit(struct exec_job *x, json_t *ev)
{
	_cleanup_free_wiped_ char *text = NULL;

	if (!ev)
		return;
	if (sr_json_dump_line(ev, &text) == 0) {
		if (x->mode == MODE_CONNECT) {
			unsigned char hdr[5];
			size_t n = strlen(text) - 1; /* without its '\n' */

			sr_connect_header(0, n, hdr);
			if (fbuf_add(&x->stream, hdr, 5) == 0)
				fbuf_add(&x->stream, text, n);
		} else {
			fbuf_add(&x->stream, text, strlen(text));
		}
	}
	json_decref(ev);
	x->sent_ns = sr_monotonic_ns();
	if (x->job.r)
		srv_resume(x->job.r);
}

static void emit_end_stream(struct exec_job *x, json_t *error)
{
	_cleanup_free_ char *text = NULL;
	json_t *end = error ? json_pack("{so}", "error", error) : json_object();
	unsigned char hdr[5];

	if (end && sr_json_dump_line(end, &text) == 0) {
		sr_connect_header(SR_CONNECT_END_STREAM, strlen(text) - 1, hdr);
		if (fbuf_add(&x->stream, hdr, 5) == 0)
			fbuf_add(&x->stream, text, strlen(text) - 1);
	}
	if (end)
		json_decref(end);
}

/* Output as an event: text (a cut UTF-8 sequence kept for the next chunk) or base64. */
static void emit_output(struct exec_job *x, int i, const char *data, size_t n, bool last)
{
	static const char *const names[] = {"stdout", "stderr"};
	_cleanup_free_wiped_ char *joined = NULL, *enc = NULL;
	size_t total = x->out[i].n_pend + n, whole;

	joined = malloc(total + 1);
	if (!joined)
		return;
	memcpy(joined, x->out[i].pend, x->out[i].n_pend);
	memcpy(joined + x->out[i].n_pend, data, n);
	whole = x->base64 || last ? total : sr_utf8_whole(joined, total);
	x->out[i].n_pend = total - whole;
	memcpy(x->out[i].pend, joined + whole, x->out[i].n_pend);
	if (whole == 0)
		return;
	if (x->base64 || x->mode == MODE_CONNECT) {
		enc = malloc(sr_base64_len(whole));
		if (!enc)
			return;
		sr_base64_encode(joined, whole, enc);
	}
	if (x->mode == MODE_CONNECT)
		return emit(x, json_pack("{s{s{ss}}}", "event", "data", names[i], enc));
	if (x->base64)
		return emit(x, json_pack("{ssss}", "type", names[i], "data_base64", enc));
	joined[whole] = '\0';
	emit(x, json_pack("{ssso}", "type", names[i], "data", sr_json_string(joined)));
}

/* Output i is read no more: its pipe closed. */
static void stop_output(struct exec_job *x, int i)
{
	srv_unwatch(x->job.s, &x->out[i].w);
	sr_closep(&x->out[i].fd);
	x->out[i].fd = -1;
}

/* A chunk of output i, as read_output() says. */
static int take_output(struct exec_job *x, int i, const char *buf, size_t n)
{
	size_t room;

	if (!buffered(x)) {
		/* A client gone (E2B's commands run on): read, and let go. */
		if (x->job.r)
			emit_output(x, i, buf, n, false);
		return 1;
	}
	room = x->max_output - x->out[i].all.len;
	if (fbuf_add(&x->out[i].all, buf, n < room ? n : room) < 0 || n > room) {
		/*
		 * Past --max-output: kept up to it, and the pipe closed, as `| head
		 * -c` would: the process's next write gets SIGPIPE (EPIPE if it
		 * ignores that) rather than being read and dropped for as long as it
		 * writes (`yes`), or waiting on its writes until its timeout.
		 */
		x->out[i].truncated = true;
		stop_output(x, i);
		return -1;
	}
	return 1;
}

/*
 * Reads a chunk of output i: 1 read, 0 nothing there now, -1 at its end
 * (EOF, an error, past --max-output when buffered).
 */
static int read_output(struct exec_job *x, int i)
{
	char buf[READ_CHUNK];
	ssize_t n = read(x->out[i].fd, buf, sizeof(buf));
	int r;

	if (n < 0 && (errno == EAGAIN || errno == EINTR))
		return 0;
	if (n <= 0) {
		if (!buffered(x) && x->job.r)
			emit_output(x, i, "", 0, true);
		stop_output(x, i);
		return -1;
	}
	r = take_output(x, i, buf, (size_t)n);
	/* Not left on the loop's stack, which a keeper forked later copies. */
	explicit_bzero(buf, (size_t)n);
	return r;
}

static void pause_output(struct exec_job *x, bool pause)
{
	if (x->paused == pause)
		return;
	x->paused = pause;
	for (int i = 0; i < 2; i++)
		srv_watch_events(x->job.s, x->out[i].w, pause ? 0 : EPOLLIN);
}

static void on_output(struct srv *s, void *ctx, uint32_t events)
{
	struct exec_job *x = ctx;

	(void)s;
	(void)events;
	/* A hang-up can come before the start's answer is read: that first. */
	if (!x->started)
		return;
	/* Both watches carry x: a chunk of each that has one. */
	for (int i = 0; i < 2; i++)
		if (x->out[i].fd >= 0)
			read_output(x, i);
	if (fbuf_queued(&x->stream) > STREAM_HIGH)
		pause_output(x, true);
}

static void on_input(struct srv *s, void *ctx, uint32_t events)
{
	struct exec_job *x = ctx;
	ssize_t n;

	(void)events;
	n = write(x->in_fd, x->input + x->input_off, x->input_len - x->input_off);
	if (n > 0)
		x->input_off += (size_t)n;
	if ((n < 0 && errno != EAGAIN && errno != EINTR) || x->input_off == x->input_len) {
		/* All of it, or the process closed its stdin: EOF. */
		srv_unwatch(s, &x->in_w);
		sr_closep(&x->in_fd);
		x->in_fd = -1;
	}
}

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

static json_t *text_or_base64(const struct fbuf *b, bool base64)
{
	_cleanup_free_ char *t = malloc(base64 ? sr_base64_len(b->len) : b->len + 1);

	if (!t)
		return NULL;
	if (base64) {
		sr_base64_encode(b->p ? b->p : "", b->len, t);
		return json_string(t);
	}
	if (b->len)
		memcpy(t, b->p, b->len);
	t[b->len] = '\0';
	/* A NUL in the output ends the text here; output: "base64" keeps every byte. */
	return sr_json_string(t);
}

/* The process's end, as a /v1 answer: exit_code, status, signal, output, wall_ms, record. */
static json_t *result_json(struct exec_job *x, json_t *ev, const char *error)
{
	json_t *record = json_object_get(ev, "record"), *code = json_object_get(ev, "exit_code");
	const char *status = json_string_value(json_object_get(record, "status"));
	json_t *sig = json_object_get(record, "signal");
	json_t *j =
	    json_pack("{sIsssOsf}", "exit_code",
		      json_is_integer(code) ? json_integer_value(code) : (json_int_t)125, "status",
		      status ? status : "error", "signal", sig ? sig : json_null(), "wall_ms",
		      (double)(sr_monotonic_ns() - x->start_ns) / 1e6);

	if (!j)
		return NULL;
	if (buffered(x)) {
		const char *k[2][2] = {{"stdout", "stdout_base64"}, {"stderr", "stderr_base64"}};

		for (int i = 0; i < 2; i++) {
			json_object_set_new(j, k[i][x->base64],
					    text_or_base64(&x->out[i].all, x->base64));
			if (x->out[i].truncated)
				json_object_set_new(j, i ? "stderr_truncated" : "stdout_truncated",
						    json_true());
		}
	}
	json_object_set_new(j, "error", error ? sr_json_string(error) : json_null());
	if (json_is_object(record))
		json_object_set(j, "record", record);
	if (x->extra)
		json_object_update(j, x->extra);
	return j;
}

/*
 * A warm invocation's raw answer: its stdout, and what the record says in
 * headers (Sandbox-Run-Status, -Exit-Code, -Signal, -Wall-Ms, -User-Ms,
 * -Sys-Ms, -Peak-Memory-Bytes, -Disk-Used-Bytes, and extra's: -Version,
 * -Sandbox-Id, -Warm). Nothing of the environment: the record has none.
 */
static void answer_raw(struct exec_job *x, json_t *res)
{
	static const char *const from_record[][2] = {
	    {"user_ms", "Sandbox-Run-User-Ms"},
	    {"sys_ms", "Sandbox-Run-Sys-Ms"},
	    {"peak_memory_bytes", "Sandbox-Run-Peak-Memory-Bytes"},
	    {"disk_used_bytes", "Sandbox-Run-Disk-Used-Bytes"},
	};
	static const char *const from_result[][2] = {
	    {"status", "Sandbox-Run-Status"},	{"exit_code", "Sandbox-Run-Exit-Code"},
	    {"signal", "Sandbox-Run-Signal"},	{"wall_ms", "Sandbox-Run-Wall-Ms"},
	    {"version", "Sandbox-Run-Version"}, {"sandbox_id", "Sandbox-Run-Sandbox-Id"},
	    {"warm", "Sandbox-Run-Warm"},	{"error", "Sandbox-Run-Error"},
	};
	struct MHD_Response *resp = srv_response(x->out[0].all.p ? x->out[0].all.p : "",
						 x->out[0].all.len, "application/octet-stream");
	json_t *record = json_object_get(res, "record");

	for (size_t i = 0; resp && i < SR_ARRAY_SIZE(from_result) + SR_ARRAY_SIZE(from_record);
	     i++) {
		bool rec = i >= SR_ARRAY_SIZE(from_result);
		const char *const *kv =
		    rec ? from_record[i - SR_ARRAY_SIZE(from_result)] : from_result[i];
		json_t *v = json_object_get(rec ? record : res, kv[0]);
		char text[SR_ERROR_MSG_MAX];

		if (json_is_string(v))
			snprintf(text, sizeof(text), "%s", json_string_value(v));
		else if (json_is_integer(v))
			snprintf(text, sizeof(text), "%lld", (long long)json_integer_value(v));
		else if (json_is_real(v))
			snprintf(text, sizeof(text), "%.3f", json_real_value(v));
		else if (json_is_boolean(v))
			snprintf(text, sizeof(text), "%s", json_is_true(v) ? "true" : "false");
		else
			continue;
		/* A header is one line: an error's text has none, but nothing is taken on trust. */
		for (char *c = text; *c; c++)
			if (*c == '\r' || *c == '\n')
				*c = ' ';
		sr_mhd.add_response_header(resp, kv[1], text);
	}
	if (resp && x->out[0].truncated)
		sr_mhd.add_response_header(resp, "Sandbox-Run-Stdout-Truncated", "true");
	srv_answer(x->job.r, MHD_HTTP_OK, resp);
	json_decref(res);
}

/* envd's end event: exitCode, exited, status as Go's ProcessState says it. */
static void emit_connect_end(struct exec_job *x, json_t *ev, const char *error)
{
	json_t *record = json_object_get(ev, "record"), *sig = json_object_get(record, "signal");
	const char *status = json_string_value(json_object_get(record, "status"));
	int code = (int)json_integer_value(json_object_get(ev, "exit_code"));
	bool exited = status && strcmp(status, "exited") == 0;
	char text[64];
	json_t *end;

	if (sr_streq(status, "timeout")) {
		emit_end_stream(
		    x, json_pack("{ssss}", "code", "deadline_exceeded", "message",
				 "sandbox-run: the command's timeout passed: it was killed"));
		x->finished = true;
		return;
	}
	if (exited)
		snprintf(text, sizeof(text), "exit status %d", code);
	else if (json_is_integer(sig))
		snprintf(text, sizeof(text), "signal: %s", strsignal((int)json_integer_value(sig)));
	else
		snprintf(text, sizeof(text), "%s", error ? "error" : status ? status : "ended");
	end =
	    json_pack("{sisbss}", "exitCode", exited ? code : -1, "exited", exited, "status", text);
	if (end && error)
		json_object_set_new(end, "error", sr_json_string(error));
	emit(x, json_pack("{s{so}}", "event", "end", end));
	emit_end_stream(x, NULL);
	x->finished = true;
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
		for (; left > 0 && x->out[i].fd >= 0 && read_output(x, i) > 0; left -= READ_CHUNK)
			;
		if (x->out[i].fd >= 0 && !buffered(x) && x->job.r)
			emit_output(x, i, "", 0, true);
		stop_output(x, i);
	}
	kcall_stop(&x->k);
	x->exited = true;
	if (!r) {
		exec_free(x);
		return;
	}
	if (x->mode == MODE_RAW) {
		json_t *res = result_json(x, ev, error);

		if (res)
			answer_raw(x, res);
		else
			srv_answer_error(r, -ENOMEM, "invoke: out of memory");
		exec_free(x);
		return;
	}
	if (buffered(x)) {
		srv_answer_json(r, MHD_HTTP_OK, result_json(x, ev, error));
		exec_free(x);
		return;
	}
	if (x->mode == MODE_CONNECT) {
		emit_connect_end(x, ev, error);
	} else {
		json_t *res = result_json(x, ev, error);

		if (res)
			json_object_set_new(res, "type", json_string("exit"));
		emit(x, res);
		x->finished = true;
	}
	srv_resume(r);
}

static ssize_t reader(void *cls, uint64_t pos, char *buf, size_t max)
{
	struct req *r = cls;
	struct exec_job *x = r->job ? container_of(r->job, struct exec_job, job) : NULL;
	size_t n;

	(void)pos;
	if (r->gone || !x)
		return MHD_CONTENT_READER_END_WITH_ERROR;
	n = fbuf_take(&x->stream, buf, max);
	if (n) {
		if (x->paused && fbuf_queued(&x->stream) < STREAM_LOW)
			pause_output(x, false);
		return (ssize_t)n;
	}
	if (x->finished)
		return MHD_CONTENT_READER_END_OF_STREAM;
	srv_suspend(r);
	return 0;
}

/* The process started: a stream's answer begins. */
static void started(struct exec_job *x, pid_t pid)
{
	struct req *r = x->job.r;
	struct MHD_Response *resp;

	x->pid = pid;
	x->started = true;
	for (int i = 0; i < 2; i++)
		srv_watch_events(x->job.s, x->out[i].w, EPOLLIN);
	if (buffered(x) || !r)
		return;
	resp = sr_mhd.create_response_from_callback(MHD_SIZE_UNKNOWN, 64 * 1024, reader, r, NULL);
	if (resp) {
		sr_mhd.add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE,
					   x->mode == MODE_CONNECT ? "application/connect+json"
								   : "application/x-ndjson");
		sr_mhd.add_response_header(resp, MHD_HTTP_HEADER_CACHE_CONTROL, "no-store");
	}
	srv_answer(r, MHD_HTTP_OK, resp);
	if (x->mode == MODE_CONNECT)
		emit(x, json_pack("{s{s{si}}}", "event", "start", "pid", (int)pid));
	else
		emit(x, json_pack("{sssi}", "type", "start", "pid", (int)pid));
}

static void exec_msg(struct kcall *k, json_t *msg)
{
	struct exec_job *x = container_of(k, struct exec_job, k);
	struct sr_error err = {0};

	if (!x->started) {
		json_t *status;

		if (sr_ctl_reply_error(msg, &err) == 0)
			return started(x, (pid_t)json_integer_value(json_object_get(msg, "pid")));
		status = json_object_get(msg, "status");
		/* Not found, not executable: the process's own end, as a shell says it. */
		if (json_integer_value(status) == 126 || json_integer_value(status) == 127) {
			json_t *ev = json_pack("{sO}", "exit_code", status);
			char text[SR_ERROR_MSG_MAX + 32];

			snprintf(text, sizeof(text), "sandbox-run: exec: %s", err.msg);
			if (!buffered(x) && x->job.r)
				started(x, 0);
			finish(x, ev, text);
			if (ev)
				json_decref(ev);
			return;
		}
		if (x->job.r)
			srv_answer_err(x->job.r, NULL, &err);
		exec_free(x);
		return;
	}
	if (sr_streq(json_string_value(json_object_get(msg, "event")), "exit"))
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
			srv_answer_err(x->job.r, NULL, &err);
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
		pause_output(x, false);
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

/*
 * x's process, asked for, is r's answer: its output read as it comes,
 * its input (if any is left) written as it takes it, and r held until
 * x is done.
 */
static void follow(struct exec_job *x, struct req *r)
{
	for (int i = 0; i < 2; i++)
		x->out[i].w = srv_watch(r->s, x->out[i].fd, 0, on_output, x);
	if (x->in_fd >= 0)
		x->in_w = srv_watch(r->s, x->in_fd, EPOLLOUT, on_input, x);
	x->job.r = r;
	r->job = &x->job;
	x->next = srv_lists(r->s)->execs;
	srv_lists(r->s)->execs = x;
	srv_suspend(r);
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
		/* As exec prints them: "no sandbox 'x' (...)", the keeper's own lines. */
		srv_answer_err(r, NULL, &err);
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
	follow(x, r);
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
	on_input(r->s, x, EPOLLOUT);
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
	follow(x, r);
	started(x, t->pid);
}

void sr_exec_tick(struct srv *s)
{
	int64_t now = sr_monotonic_ns();

	for (struct exec_job *x = srv_lists(s)->execs; x; x = x->next)
		if (x->mode == MODE_CONNECT && x->job.r && x->started && !x->finished &&
		    now - x->sent_ns > KEEPALIVE_NS)
			emit(x, json_pack("{s{s{}}}", "event", "keepalive"));
}

/* envd: the running process pid of sandbox id, started through this server. */
static struct exec_job *find(struct srv *s, const char *id, pid_t pid)
{
	for (struct exec_job *x = srv_lists(s)->execs; x; x = x->next)
		if (x->started && !x->exited && x->pid == pid && strcmp(x->k.id, id) == 0)
			return x;
	return NULL;
}

void sr_api_envd_signal(struct req *r, json_t *msg)
{
	json_t *pid =
	    json_object_get(json_object_get(json_object_get(msg, "process"), "selector"), "pid");
	json_t *sig = json_object_get(msg, "signal");
	struct exec_job *x;
	json_t *m;
	int signo = SIGKILL;

	if (!pid)
		pid = json_object_get(json_object_get(msg, "process"), "pid");
	x = json_is_integer(pid) ? find(r->s, r->m.id, (pid_t)json_integer_value(pid)) : NULL;
	if (!x)
		return srv_answer_error(r, -ENOENT, "no process %lld started through serve",
					json_is_integer(pid) ? (long long)json_integer_value(pid)
							     : -1ll);
	if (sr_streq(json_string_value(sig), "SIGNAL_SIGTERM") ||
	    (json_is_integer(sig) && json_integer_value(sig) == 15))
		signo = SIGTERM;
	m = json_pack("{sssi}", "op", "signal", "sig", signo);
	if (m) {
		(void)sr_ctl_send(x->k.fd, m, NULL, 0);
		json_decref(m);
	}
	srv_answer_json(r, MHD_HTTP_OK, json_object());
}

void sr_api_envd_list(struct req *r)
{
	json_t *procs = json_array();

	for (struct exec_job *x = srv_lists(r->s)->execs; x; x = x->next) {
		json_t *envs = json_object(), *args = json_array(), *e;
		size_t i;

		if (!x->started || x->exited || strcmp(x->k.id, r->m.id) != 0)
			continue;
		json_array_foreach (x->env, i, e) {
			const char *kv = json_string_value(e), *eq = kv ? strchr(kv, '=') : NULL;

			if (eq) {
				_cleanup_free_ char *k = strndup(kv, (size_t)(eq - kv));

				if (k)
					json_object_set_new(envs, k, json_string(eq + 1));
			}
		}
		for (i = 1; i < json_array_size(x->argv); i++)
			json_array_append(args, json_array_get(x->argv, i));
		json_array_append_new(procs, json_pack("{s{sOsososo}si}", "config", "cmd",
						       json_array_get(x->argv, 0), "args", args,
						       "envs", envs, "cwd",
						       x->cwd ? json_incref(x->cwd) : json_null(),
						       "pid", (int)x->pid));
	}
	srv_answer_json(r, MHD_HTTP_OK, json_pack("{so}", "processes", procs));
}
