/* SPDX-License-Identifier: MIT */
/*
 * Writing files from a request's body as it comes: PUT /v1/.../files
 * (the body is the file) and envd's POST /files (the body is the file,
 * or multipart/form-data with a "file" part per file, as E2B's SDK sends
 * it: multipart.h). Each file has its worker
 * in the sandbox (file_write) reading a pipe we fill; when the sandbox
 * does not take it as fast as the client sends, the client waits (its
 * connection is suspended until the queue has drained).
 *
 * The request is answered once its body is whole and every worker has
 * reported: the first failure, or what was written.
 *
 * A multipart body of many small files would start a worker (a process
 * in the sandbox, a pipe and a keeper connection of the server's) for
 * each part as fast as the client sends them: the client also waits while
 * FILES_OPEN_HIGH of its files are still being written, or SERVER_FILES_HIGH
 * of every upload's (each holds two of the server's fds: ten uploads at
 * once took the usual 1,024, and those that found none failed), and a
 * request has at most FILES_MAX files (a tree is a tar: cp, or the files
 * API's archive).
 *
 * A worker the agent stopped (it runs as the agent's uid) takes nothing:
 * one that has had bytes or the end waiting for --idle-timeout is given
 * up (its keeper's connection closed: the worker is killed), its slot
 * freed, and the request answered 504 once its body is in. The file is
 * written in place, as envd writes it: what the worker had written stays.
 */
#include "files.h"
#include "internal.h"
#include "multipart.h"
#include "util.h"

#include <limits.h>
#include <strings.h>

#define QUEUE_HIGH	  (1024 * 1024)
#define QUEUE_LOW	  (256 * 1024)
#define FILES_OPEN_HIGH	  64
#define FILES_OPEN_LOW	  16
#define FILES_MAX	  10000
#define SERVER_FILES_HIGH 128
#define SERVER_FILES_LOW  64
/* At most a few parts' headers: how many files a slice of the body may start. */
#define PART_SLICE 512

struct wfile {
	struct upload *up;
	struct kcall k;
	int fd; /* the pipe the worker reads */
	struct watch *w;
	struct fbuf q;
	char *path;
	uint64_t bytes;
	bool closing; /* no more data: the pipe closes once q is out */
	bool replied;
	int64_t moved_ns; /* since when the worker has taken nothing of what waits for it */
	struct sr_error err;
	struct wfile *next;
};

struct upload {
	struct job job;
	struct sr_multipart *form; /* NULL: the body is the file */
	struct wfile *files, *cur;
	char *path;   /* the query's */
	json_t *seen; /* a multipart body's paths so far, as the worker makes them (keys) */
	bool envd, ended, waiting;
	uint64_t bytes, max;
	size_t queued;
	size_t n_files, open; /* files started; of them not yet reported */
	struct sr_error err;  /* the first failure of the request's own */
};

static const struct job_ops upload_ops;
static void wake_uploads(struct srv *s);

static void wfile_free(struct srv *s, struct wfile *f)
{
	kcall_stop(&f->k);
	srv_unwatch(s, &f->w);
	sr_closep(&f->fd);
	fbuf_free(&f->q);
	free(f->path);
	free(f);
}

static void upload_free(struct upload *up)
{
	struct srv *s = up->job.s;

	if (up->form) {
		sr_multipart_free(up->form);
		free(up->form);
	}
	while (up->files) {
		struct wfile *f = up->files;

		up->files = f->next;
		if (!f->replied)
			srv_lists(s)->files_open--;
		wfile_free(s, f);
	}
	if (up->job.r)
		up->job.r->up = NULL;
	srv_job_remove(&up->job);
	if (up->seen)
		json_decref(up->seen);
	free(up->path);
	free(up);
	wake_uploads(s);
}

static json_t *written(struct upload *up)
{
	json_t *a;

	if (!up->envd)
		return json_pack("{sosI}", "path", sr_json_string(up->files->path), "size",
				 (json_int_t)up->files->bytes);
	/* envd's WriteInfo for each. */
	a = json_array();
	for (struct wfile *f = up->files; a && f; f = f->next) {
		const char *slash = strrchr(f->path, '/');

		json_array_insert_new(a, 0,
				      json_pack("{sossso}", "name",
						sr_json_string(slash ? slash + 1 : f->path), "type",
						"file", "path", sr_json_string(f->path)));
	}
	return a;
}

/* Answered once the body is whole and every worker has said how it went: true then. */
static bool check_done(struct upload *up)
{
	struct req *r = up->job.r;
	const struct sr_error *fail = up->err.code ? &up->err : NULL;

	if (!up->ended)
		return false;
	for (struct wfile *f = up->files; f; f = f->next) {
		if (!f->replied)
			return false;
		if (!fail && f->err.code)
			fail = &f->err;
	}
	if (r) {
		if (fail)
			srv_answer_err(r, up->envd ? NULL : "cp", fail);
		else if (!up->files)
			srv_answer_error(r, -EINVAL, "files: no file in the request");
		else
			srv_answer_json(r, MHD_HTTP_OK, written(up));
	}
	upload_free(up);
	return true;
}

/* The client goes on once the sandbox has taken what came and most files are written. */
static void resume_if_drained(struct upload *up)
{
	if (up->job.r && up->waiting && up->queued < QUEUE_LOW && up->open <= FILES_OPEN_LOW &&
	    srv_lists(up->job.s)->files_open <= SERVER_FILES_LOW) {
		up->waiting = false;
		srv_resume(up->job.r);
	}
}

/* Files written, of every upload: those that wait for that may go on. */
static void wake_uploads(struct srv *s)
{
	struct job *jobs = &srv_lists(s)->jobs;

	if (srv_lists(s)->files_open > SERVER_FILES_LOW)
		return;
	for (struct job *j = jobs->next; j != jobs; j = j->next)
		if (j->ops == &upload_ops)
			resume_if_drained(container_of(j, struct upload, job));
}

static void on_writable(struct srv *s, void *ctx, uint32_t events)
{
	struct wfile *f = ctx;
	struct upload *up = f->up;

	(void)events;
	while (f->q.len > f->q.off) {
		ssize_t n = write(f->fd, f->q.p + f->q.off, f->q.len - f->q.off);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno == EAGAIN)
			break;
		if (n <= 0) {
			/* The worker stopped reading (it failed: its report says why): dropped. */
			up->queued -= f->q.len - f->q.off;
			f->q.len = f->q.off = 0;
			f->closing = true;
			break;
		}
		f->q.off += (size_t)n;
		up->queued -= (size_t)n;
		f->moved_ns = sr_monotonic_ns();
	}
	if (f->q.len == f->q.off) {
		if (f->closing) {
			srv_unwatch(s, &f->w);
			sr_closep(&f->fd);
			f->fd = -1;
		} else {
			srv_watch_events(s, f->w, 0);
		}
	}
	resume_if_drained(up);
}

/* Its worker has reported (or is gone): one file fewer open. */
static void wfile_replied(struct wfile *f)
{
	f->replied = true;
	f->up->open--;
	srv_lists(f->up->job.s)->files_open--;
	resume_if_drained(f->up);
	wake_uploads(f->up->job.s);
}

static void wfile_msg(struct kcall *k, json_t *msg)
{
	struct wfile *f = container_of(k, struct wfile, k);

	wfile_replied(f);
	sr_ctl_reply_error(msg, &f->err);
	kcall_stop(k);
	check_done(f->up);
}

static void wfile_hup(struct kcall *k)
{
	struct wfile *f = container_of(k, struct wfile, k);

	wfile_replied(f);
	if (!f->err.code)
		sr_error_msg(&f->err, -ESRCH, "the sandbox's keeper hung up (the sandbox is gone)");
	kcall_stop(k);
	check_done(f->up);
}

/* A worker for the next file, at path. */
static struct wfile *wfile_start(struct upload *up, struct req *r, const char *path)
{
	struct wfile *f = calloc(1, sizeof(*f));
	json_t *req = json_pack("{ssso}", "op", "file_write", "path", sr_json_string(path));
	int p[2] = {-1, -1}, ret = -ENOMEM;

	/*
	 * No fd yet: calloc's 0 is stdin's. Freed after a failure, it was
	 * closed (out of fds, at the first pipe that could not be made), and
	 * closed again at the next one, whatever had taken the number since:
	 * another request's socket (libmicrohttpd aborted the server) or a
	 * sandbox's pipe.
	 */
	if (f)
		f->fd = f->k.fd = -1;
	if (f && req && (f->path = strdup(path)))
		ret = pipe2(p, O_CLOEXEC) < 0 ? sr_negerrno() : 0;
	if (ret == 0) {
		f->up = up;
		f->fd = p[1];
		f->moved_ns = sr_monotonic_ns();
		f->k.on_msg = wfile_msg;
		f->k.on_hup = wfile_hup;
		fcntl(f->fd, F_SETFL, O_NONBLOCK);
		ret = kcall_start(r->s, r->m.id, req, &p[0], 1, &f->k, &up->err);
		close(p[0]);
		if (ret == 0)
			f->w = srv_watch(r->s, f->fd, 0, on_writable, f);
		if (ret == 0 && !f->w)
			ret = -ENOMEM;
	}
	if (req)
		json_decref(req);
	if (ret < 0) {
		if (!up->err.code)
			sr_error_errno(&up->err, ret, "files");
		if (f) {
			f->fd = p[1];
			wfile_free(r->s, f);
		}
		return NULL;
	}
	f->next = up->files;
	up->files = f;
	up->n_files++;
	up->open++;
	srv_lists(r->s)->files_open++;
	return f;
}

/* Whether the worker has something to take (bytes, or the end) that it has not. */
static bool waits_on_worker(const struct wfile *f)
{
	return !f->replied && (f->q.len > f->q.off || f->closing);
}

static void wfile_add(struct upload *up, const char *data, size_t n)
{
	struct wfile *f = up->cur;

	if (!f || f->closing || n == 0)
		return;
	/* Idle from now: until these came, it was the client it waited for. */
	if (!waits_on_worker(f))
		f->moved_ns = sr_monotonic_ns();
	if (fbuf_add(&f->q, data, n) < 0) {
		sr_error_errno(&up->err, -ENOMEM, "files");
		return;
	}
	f->bytes += n;
	up->queued += n;
	srv_watch_events(up->job.s, f->w, EPOLLOUT);
}

static void wfile_close(struct upload *up)
{
	struct wfile *f = up->cur;

	up->cur = NULL;
	if (!f)
		return;
	if (!waits_on_worker(f))
		f->moved_ns = sr_monotonic_ns();
	f->closing = true;
	srv_watch_events(up->job.s, f->w, EPOLLOUT);
}

/*
 * A part naming a path an earlier part of the request named (the same
 * file once the worker has made the path absolute and dropped its empty
 * and "." parts; every part, with ?path=): refused, 400, as envd refuses
 * it, and nothing after it is written. The earlier one is, as envd's is:
 * it was written as it came.
 */
static bool named_before(struct upload *up, const char *path)
{
	char norm[PATH_MAX];

	if (sr_files_path(path, norm, sizeof(norm)) < 0)
		return false; /* the worker refuses it, saying why */
	/* A set, not a walk of the files: 10,000 of them would be 50 million comparisons. */
	if (!up->seen && !(up->seen = json_object()))
		return false;
	if (json_object_get(up->seen, norm)) {
		sr_error_msg(&up->err, -EINVAL,
			     "you cannot upload multiple files to the same path '%s' in one upload "
			     "request, only the first specified file was uploaded",
			     norm);
		return true;
	}
	(void)json_object_set_new_nocheck(up->seen, norm, json_true());
	return false;
}

/* Each "file" part of a multipart body: a file of its own, named by its filename (or ?path=). */
static void on_part(void *ctx, const char *name, const char *filename)
{
	struct upload *up = ctx;
	_cleanup_free_ char *path = NULL;

	wfile_close(up);
	if (!sr_streq(name, "file") || up->err.code)
		return;
	if (up->n_files >= FILES_MAX) {
		sr_error_msg(&up->err, -E2BIG,
			     "files: more than %d files in one request (send a tree as a tar "
			     "archive)",
			     FILES_MAX);
		return;
	}
	path = sr_api_envd_path(filename && *filename ? filename : up->path);
	if (!path) {
		sr_error_msg(&up->err, -EINVAL, "files: a part with no file name and no ?path=");
		return;
	}
	if (named_before(up, path))
		return;
	up->cur = up->job.r ? wfile_start(up, up->job.r, path) : NULL;
}

static void on_part_data(void *ctx, const char *data, size_t n)
{
	struct upload *up = ctx;

	if (!up->err.code)
		wfile_add(up, data, n);
}

static const struct sr_multipart_ops form_ops = {.begin = on_part, .data = on_part_data};

static void upload_gone(struct job *j)
{
	upload_free(container_of(j, struct upload, job));
}

/*
 * A worker that took nothing for --idle-timeout: given up as one that
 * failed is (what waits for it dropped, the rest of its part too), its
 * keeper's connection closed, which has it killed.
 */
static void wfile_give_up(struct wfile *f, const struct sr_error *why)
{
	struct upload *up = f->up;

	up->queued -= f->q.len - f->q.off;
	f->q.len = f->q.off = 0;
	f->closing = true;
	f->err = *why;
	srv_unwatch(up->job.s, &f->w);
	sr_closep(&f->fd);
	f->fd = -1;
	kcall_stop(&f->k);
	wfile_replied(f);
}

static void upload_tick(struct job *j, int64_t now)
{
	struct upload *up = container_of(j, struct upload, job);
	struct sr_error err = {0};
	bool gave_up = false;

	for (struct wfile *f = up->files; f; f = f->next)
		if (waits_on_worker(f) &&
		    srv_idle_expired(j->s, f->moved_ns, now, "the sandbox took nothing", &err)) {
			wfile_give_up(f, &err);
			gave_up = true;
		}
	/* Its body whole, it is answered now (504); else once the rest has come. */
	if (gave_up)
		check_done(up);
}

static const struct job_ops upload_ops = {.gone = upload_gone, .tick = upload_tick};

/* envd's multipart body, if it is one (else the body is the file): an error answered. */
static int start_form(struct upload *up, struct req *r)
{
	int ret;

	up->form = malloc(sizeof(*up->form));
	if (!up->form) {
		upload_free(up);
		srv_answer_error(r, -ENOMEM, "serve: out of memory");
		return -ENOMEM;
	}
	ret =
	    sr_multipart_init(up->form, srv_header(r, MHD_HTTP_HEADER_CONTENT_TYPE), &form_ops, up);
	if (ret == -ENOMSG) {
		free(up->form);
		up->form = NULL;
		return 0;
	}
	if (ret < 0) {
		upload_free(up);
		srv_answer_error(r, ret, "files: multipart/form-data without a valid boundary");
		return ret;
	}
	return 0;
}

/*
 * Whether the body is the bytes as they are: no Content-Encoding, or
 * "identity". Another (the SDK's files.write(..., {gzip: true}) sends
 * gzip) would be written as it came, the file's bytes compressed.
 */
static bool plain_body(struct req *r)
{
	const char *enc = srv_header(r, MHD_HTTP_HEADER_CONTENT_ENCODING);
	size_t n;

	if (!enc)
		return true;
	enc += strspn(enc, " \t");
	n = strcspn(enc, " \t;");
	return n == 0 || (n == 8 && strncasecmp(enc, "identity", 8) == 0);
}

bool sr_api_upload_begin(struct req *r)
{
	const char *dir = srv_arg(r, "dir"), *path = srv_arg(r, "path");
	struct upload *up;

	/* PUT ?dir=1 makes a directory: no upload (files.c). */
	if (r->m.route == SR_ROUTE_SB_FILES_PUT && dir && strcmp(dir, "0") && strcmp(dir, "false"))
		return true;
	up = calloc(1, sizeof(*up));
	if (!up) {
		srv_answer_error(r, -ENOMEM, "serve: out of memory");
		return false;
	}
	up->envd = r->m.family == SR_API_ENVD;
	up->max = srv_opts(r->s)->max_upload;
	up->path = up->envd ? sr_api_envd_path(path) : path ? strdup(path) : NULL;
	srv_job_add(r->s, &up->job, &upload_ops, r);
	r->up = up;
	/*
	 * Nothing written, as envd refuses an encoding it does not know (400):
	 * the body read and dropped, then answered, so that the client that
	 * sent it all reads the answer rather than a connection closed on it.
	 */
	if (!plain_body(r)) {
		sr_error_msg(&up->err, -EINVAL,
			     "files: Content-Encoding: %.64s: not supported by sandbox-run serve "
			     "(send the bytes as they are)",
			     srv_header(r, MHD_HTTP_HEADER_CONTENT_ENCODING));
		return true;
	}
	if (up->envd && start_form(up, r) < 0)
		return false;
	if (up->form)
		return true;
	/* The body is the file. */
	if (!up->path) {
		upload_free(up);
		srv_answer_error(r, -EINVAL, "files: ?path=PATH is needed (relative: to %s)",
				 r->m.family == SR_API_ENVD ? SR_API_HOME : "/workspace");
		return false;
	}
	up->cur = wfile_start(up, r, up->path);
	return true;
}

/* Whether the client is to wait: the sandbox has not taken what came, or has many files open. */
static bool must_wait(const struct upload *up)
{
	return up->queued > QUEUE_HIGH || up->open > FILES_OPEN_HIGH ||
	       srv_lists(up->job.s)->files_open > SERVER_FILES_HIGH;
}

static void take(struct upload *up, const char *data, size_t len)
{
	if (up->err.code)
		return;
	if (up->form) {
		if (sr_multipart_feed(up->form, data, len) < 0 && !up->err.code)
			sr_error_msg(&up->err, -EINVAL, "files: the body is not the form it says");
	} else {
		wfile_add(up, data, len);
	}
}

size_t sr_api_upload_data(struct req *r, const char *data, size_t len)
{
	struct upload *up = r->up;
	size_t used = 0;

	/*
	 * A multipart body a slice at a time: one chunk of it (up to
	 * libmicrohttpd's buffer, 64 KiB) may hold hundreds of tiny parts,
	 * each a worker started. The rest waits in that buffer, unread, while
	 * the client does.
	 */
	while (used < len && !must_wait(up)) {
		size_t n = up->form && len - used > PART_SLICE ? PART_SLICE : len - used;

		up->bytes += n;
		if (up->bytes > up->max) {
			/* Said no length, or not the truth: cut off (http.c), not read on. */
			r->overflow = true;
			return len;
		}
		take(up, data + used, n);
		used += n;
	}
	if (must_wait(up)) {
		up->waiting = true;
		srv_suspend(r);
	}
	return used;
}

void sr_api_upload_end(struct req *r)
{
	struct upload *up = r->up;

	if (up->form && sr_multipart_end(up->form) < 0 && !up->err.code)
		sr_error_msg(
		    &up->err, -EINVAL,
		    "files: the body is not the form it says (it has no closing boundary)");
	wfile_close(up);
	up->ended = true;
	if (up->err.code)
		for (struct wfile *f = up->files; f; f = f->next)
			f->closing = true;
	if (!check_done(up))
		srv_suspend(r);
}
