/* SPDX-License-Identifier: MIT */
/*
 * An exec's pipes and its stream: the process's output read, as an event
 * in the stream's format (NDJSON or Connect) when it is streamed, and
 * its input written as it takes it. The stream is read by libmicrohttpd
 * as the client takes it; past STREAM_HIGH queued, the pipes are not
 * read until it is under STREAM_LOW again.
 */
#include "exec-internal.h"
#include "secmem.h"
#include "util.h"

#define STREAM_HIGH (1024 * 1024)
#define STREAM_LOW  (256 * 1024)

/* One event of the stream, in its format; the client is woken if it waits. */
void exec_emit(struct exec_job *x, json_t *ev)
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

/* Output as an event: text (a cut UTF-8 sequence kept for the next chunk) or base64. */
void exec_emit_output(struct exec_job *x, int i, const char *data, size_t n, bool last)
{
	static const char *const names[] = {"stdout", "stderr"};
	_cleanup_free_wiped_ char *joined = NULL, *enc = NULL;
	size_t total = x->out[i].n_pend + n, whole;

	joined = malloc(total);
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
		return exec_emit(x, json_pack("{s{s{ss}}}", "event", "data", names[i], enc));
	if (x->base64)
		return exec_emit(x, json_pack("{ssss}", "type", names[i], "data_base64", enc));
	exec_emit(x, json_pack("{ssso}", "type", names[i], "data", sr_json_stringn(joined, whole)));
}

/* Output i is read no more: its pipe closed. */
void exec_stop_output(struct exec_job *x, int i)
{
	srv_unwatch(x->job.s, &x->out[i].w);
	sr_closep(&x->out[i].fd);
	x->out[i].fd = -1;
}

/* A chunk of output i, as exec_read_output() says. */
static int take_output(struct exec_job *x, int i, const char *buf, size_t n)
{
	size_t room;

	if (!buffered(x)) {
		if (x->job.r) {
			exec_emit_output(x, i, buf, n, false);
			return 1;
		}
		/* A client gone (E2B's commands run on): read, and let go, up to a rate. */
		x->dropped += n;
		if (x->dropped >= DETACHED_READ_PER_TICK)
			exec_pause_output(x, true);
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
		exec_stop_output(x, i);
		return -1;
	}
	return 1;
}

/*
 * Reads a chunk of output i: 1 read, 0 nothing there now, -1 at its end
 * (EOF, an error, past --max-output when buffered).
 */
int exec_read_output(struct exec_job *x, int i)
{
	char buf[READ_CHUNK];
	ssize_t n = read(x->out[i].fd, buf, sizeof(buf));
	int r;

	if (n < 0 && (errno == EAGAIN || errno == EINTR))
		return 0;
	if (n <= 0) {
		if (!buffered(x) && x->job.r)
			exec_emit_output(x, i, "", 0, true);
		exec_stop_output(x, i);
		return -1;
	}
	r = take_output(x, i, buf, (size_t)n);
	/* Not left on the loop's stack, which a keeper forked later copies. */
	explicit_bzero(buf, (size_t)n);
	return r;
}

void exec_pause_output(struct exec_job *x, bool pause)
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
			exec_read_output(x, i);
	if (fbuf_queued(&x->stream) > STREAM_HIGH)
		exec_pause_output(x, true);
}

void exec_on_input(struct srv *s, void *ctx, uint32_t events)
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
			exec_pause_output(x, false);
		return (ssize_t)n;
	}
	if (x->finished)
		return MHD_CONTENT_READER_END_OF_STREAM;
	srv_suspend(r);
	return 0;
}

/* The process started: a stream's answer begins. */
void exec_started(struct exec_job *x, pid_t pid)
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
		exec_emit(x, json_pack("{s{s{si}}}", "event", "start", "pid", (int)pid));
	else
		exec_emit(x, json_pack("{sssi}", "type", "start", "pid", (int)pid));
}

/*
 * x's process, asked for, is r's answer: its output read as it comes,
 * its input (if any is left) written as it takes it, and r held until
 * x is done.
 */
void exec_follow(struct exec_job *x, struct req *r)
{
	for (int i = 0; i < 2; i++)
		x->out[i].w = srv_watch(r->s, x->out[i].fd, 0, on_output, x);
	if (x->in_fd >= 0)
		x->in_w = srv_watch(r->s, x->in_fd, EPOLLOUT, exec_on_input, x);
	x->job.r = r;
	r->job = &x->job;
	x->next = srv_lists(r->s)->execs;
	srv_lists(r->s)->execs = x;
	srv_suspend(r);
}
