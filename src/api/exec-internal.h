/* SPDX-License-Identifier: MIT */
/*
 * exec over HTTP's parts (exec.c): what they share. exec.c has the
 * process's start (a request's, a warm invocation's), its end and its
 * free; exec-stream.c its pipes and the stream they feed; exec-result.c
 * its end as /v1 answers it (one JSON object, or a warm invocation's
 * stdout with headers); exec-envd.c envd's Process service on the
 * processes: Connect's end event and keep-alives, SendSignal and List.
 * Nothing here is for the server's other files: internal.h is their view.
 */
#pragma once

#include "internal.h"

#define READ_CHUNK (64 * 1024)
/*
 * What is read of an E2B command's output once its client has gone, a
 * tick (a second) at most: read and dropped, so that a dev server's log
 * never fills its pipe and stops it, but not as fast as a process can
 * write (`yes`), which kept the server reading a CPU's worth for as long
 * as it ran. Past it the pipes rest until the next tick.
 */
#define DETACHED_READ_PER_TICK (1024 * 1024)

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
	uint64_t dropped; /* client gone: read and dropped since the last tick */
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

static inline bool buffered(const struct exec_job *x)
{
	return x->mode == MODE_BUFFER || x->mode == MODE_RAW;
}

/* exec-stream.c: the pipes and the stream. */
void exec_emit(struct exec_job *x, json_t *ev);
/* last: the pipe's end (a cut UTF-8 sequence goes as it is). */
void exec_emit_output(struct exec_job *x, int i, const char *data, size_t n, bool last);
void exec_stop_output(struct exec_job *x, int i);
int exec_read_output(struct exec_job *x, int i);
void exec_pause_output(struct exec_job *x, bool pause);
/* A watch's callback: writes what the process takes of x's input. */
void exec_on_input(struct srv *s, void *ctx, uint32_t events);
void exec_started(struct exec_job *x, pid_t pid);
void exec_follow(struct exec_job *x, struct req *r);

/* exec-result.c: the end as /v1 answers it; exec_answer_raw() takes res. */
json_t *exec_result_json(struct exec_job *x, json_t *ev, const char *error);
void exec_answer_raw(struct exec_job *x, json_t *res);
/* A buffered exec's JSON answer, its outputs escaped as they are sent; takes res. */
void exec_answer_json(struct exec_job *x, json_t *res);

/* exec-envd.c: the end as envd streams it. */
void exec_emit_connect_end(struct exec_job *x, json_t *ev, const char *error);
