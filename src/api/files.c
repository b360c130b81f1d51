/* SPDX-License-Identifier: MIT */
/*
 * Files of a sandbox over HTTP, each moved by a worker inside with the
 * agent's rights (child/files.h) on a pipe of ours: read (streamed out
 * as it comes), written (the request's body streamed in: raw, or the
 * parts of a multipart/form-data body, as E2B's SDK sends them), listed,
 * stat'ed, removed, made. An upload is read no faster than the sandbox
 * takes it. A write cut off part-way (the client gone, its worker given
 * up: upload.c) leaves what came: files are written in place, as envd
 * writes them.
 */
#include "files.h"
#include "internal.h"
#include "secmem.h"
#include "units.h"
#include "util.h"

#include <limits.h>
#include <sys/stat.h>
#include <time.h>

#define QUEUE_HIGH (1024 * 1024)
#define QUEUE_LOW  (256 * 1024)

/* A path as envd takes it: relative ones from the home directory. */
char *sr_api_envd_path(const char *path)
{
	char *p = NULL;

	if (!path || !*path)
		return NULL;
	if (path[0] == '/')
		return strdup(path);
	if (strncmp(path, "~/", 2) == 0)
		path += 2;
	return asprintf(&p, SR_API_HOME "/%s", path) < 0 ? NULL : p;
}

/*
 * A worker in the sandbox that moved nothing for --idle-timeout: the agent
 * stopped it (it runs as the agent's uid), or the sandbox is frozen; it
 * would keep the request, its connection and its worker's slots for ever.
 * err says so (504, deadline_exceeded for envd's RPCs), starting with what
 * did not happen; the keeper's connection, closed, has the worker killed.
 */
bool srv_idle_expired(struct srv *s, int64_t moved_ns, int64_t now, const char *what,
		      struct sr_error *err)
{
	uint64_t idle_ms = srv_opts(s)->idle_ms;
	char d[SR_UNITS_BUF_MAX];

	if (now - moved_ns < (int64_t)idle_ms * 1000000)
		return false;
	sr_format_duration(idle_ms, d, sizeof(d));
	sr_error_msg(err, -ETIMEDOUT,
		     "%s for %s: its worker is stopped or gone; gave up (serve --idle-timeout "
		     "sets how long it waits)",
		     what, d);
	return true;
}

static bool idle_timeout(struct srv *s, int64_t moved_ns, int64_t now, struct sr_error *err)
{
	return srv_idle_expired(s, moved_ns, now, "nothing came from the sandbox", err);
}

/* ---- what a read and a listing share ---- */

/*
 * A worker in the sandbox (its keeper starts it for an op on a path)
 * writing into a pipe of ours, and the keeper's report of how it went.
 * progress() is told of each step: data, the pipe's end, the report.
 */
struct worker_job {
	struct job job;
	struct kcall k;
	int fd;
	struct watch *w;
	struct fbuf q;
	bool eof, replied;
	int64_t moved_ns; /* when the worker last wrote or answered (idle_timeout()) */
	struct sr_error err;
	void (*progress)(struct worker_job *wj);
};

/* All wj holds; the job that embeds it is the caller's to free. */
static void worker_release(struct worker_job *wj)
{
	kcall_stop(&wj->k);
	srv_unwatch(wj->job.s, &wj->w);
	sr_closep(&wj->fd);
	srv_job_remove(&wj->job);
	fbuf_free(&wj->q);
}

/* No more from the pipe (its end, or ours): the worker gets EPIPE if it goes on. */
static void worker_close_pipe(struct worker_job *wj)
{
	wj->eof = true;
	srv_unwatch(wj->job.s, &wj->w);
	sr_closep(&wj->fd);
}

static void worker_hup(struct kcall *k)
{
	struct worker_job *wj = container_of(k, struct worker_job, k);

	wj->replied = true;
	if (!wj->err.code)
		sr_error_msg(&wj->err, -ESRCH,
			     "the sandbox's keeper hung up (the sandbox is gone)");
	kcall_stop(k);
	wj->progress(wj);
}

/* Starts a worker op on path with the pipe end fd_child (ours: fd_ours); err as the CLI says. */
static int start_worker(struct req *r, struct kcall *k, const char *ref, const char *op,
			const char *path, int fd_child, struct sr_error *err)
{
	json_t *req = json_pack("{ssso}", "op", op, "path", sr_json_string(path));
	int ret;

	if (!req)
		return sr_error_errno(err, -ENOMEM, "serve");
	ret = kcall_start(r->s, ref, req, &fd_child, 1, k, err);
	json_decref(req);
	return ret;
}

/*
 * wj's worker for op on path, its pipe's data to on_data, its keeper's
 * messages to on_msg; the request waits (suspended) for its answer. 0,
 * or -errno with the request answered and wj the caller's to free.
 */
static int worker_start(struct req *r, struct worker_job *wj, const struct job_ops *ops,
			srv_watch_fn on_data, void (*on_msg)(struct kcall *k, json_t *msg),
			const char *ref, const char *op, const char *path)
{
	struct sr_error err = {0};
	int p[2] = {-1, -1};

	wj->fd = -1;
	wj->k.fd = -1; /* not calloc's 0: a free before kcall_start() would close fd 0 */
	if (pipe2(p, O_CLOEXEC) < 0) {
		srv_answer_error(r, -ENOMEM, "serve: out of resources");
		return -ENOMEM;
	}
	wj->fd = p[0];
	wj->moved_ns = sr_monotonic_ns();
	wj->k.on_msg = on_msg;
	wj->k.on_hup = worker_hup;
	fcntl(wj->fd, F_SETFL, O_NONBLOCK);
	srv_job_add(r->s, &wj->job, ops, NULL);
	if (start_worker(r, &wj->k, ref, op, path, p[1], &err) < 0 ||
	    !(wj->w = srv_watch(r->s, wj->fd, EPOLLIN, on_data, wj))) {
		close(p[1]);
		if (!err.code)
			sr_error_errno(&err, -ENOMEM, "serve");
		srv_answer_err(r, NULL, &err);
		return err.code;
	}
	close(p[1]);
	wj->job.r = r;
	r->job = &wj->job;
	srv_suspend(r);
	return 0;
}

/* ---- read ---- */

struct read_job {
	struct worker_job wk;
	bool answered, paused;
};

static void read_free(struct read_job *j)
{
	worker_release(&j->wk);
	free(j);
}

static ssize_t read_reader(void *cls, uint64_t pos, char *buf, size_t max)
{
	struct req *r = cls;
	struct read_job *j = r->job ? container_of(r->job, struct read_job, wk.job) : NULL;
	size_t n;

	(void)pos;
	if (r->gone || !j)
		return MHD_CONTENT_READER_END_WITH_ERROR;
	n = fbuf_take(&j->wk.q, buf, max);
	if (n) {
		if (j->paused && fbuf_queued(&j->wk.q) < QUEUE_LOW) {
			j->paused = false;
			j->wk.moved_ns =
			    sr_monotonic_ns(); /* idle from now: it waited on the client */
			srv_watch_events(j->wk.job.s, j->wk.w, EPOLLIN);
		}
		return (ssize_t)n;
	}
	if (j->wk.eof && j->wk.replied)
		return j->wk.err.code ? MHD_CONTENT_READER_END_WITH_ERROR
				      : MHD_CONTENT_READER_END_OF_STREAM;
	srv_suspend(r);
	return 0;
}

/* The answer begins with the first byte (200), or with the worker's report (an error). */
static void read_progress(struct worker_job *wj)
{
	struct read_job *j = container_of(wj, struct read_job, wk);
	struct req *r = wj->job.r;
	struct MHD_Response *resp;

	if (!r)
		return;
	if (j->answered) {
		srv_resume(r);
		return;
	}
	if (wj->replied && wj->err.code)
		return srv_answer_err(r, r->m.family == SR_API_V1 ? "cp" : NULL, &wj->err);
	if (wj->q.len == 0 && !(wj->eof && wj->replied))
		return;
	j->answered = true;
	resp =
	    sr_mhd.create_response_from_callback(MHD_SIZE_UNKNOWN, 64 * 1024, read_reader, r, NULL);
	if (resp)
		sr_mhd.add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE,
					   "application/octet-stream");
	srv_answer(r, MHD_HTTP_OK, resp);
}

static void on_read_data(struct srv *s, void *ctx, uint32_t events)
{
	struct read_job *j = container_of(ctx, struct read_job, wk);
	char buf[65536];
	ssize_t n = read(j->wk.fd, buf, sizeof(buf));

	(void)events;
	if (n < 0 && (errno == EAGAIN || errno == EINTR))
		return;
	j->wk.moved_ns = sr_monotonic_ns();
	if (n <= 0) {
		worker_close_pipe(&j->wk);
	} else if (fbuf_add(&j->wk.q, buf, (size_t)n) < 0) {
		sr_error_errno(&j->wk.err, -ENOMEM, "read");
	} else if (fbuf_queued(&j->wk.q) > QUEUE_HIGH) {
		j->paused = true;
		srv_watch_events(s, j->wk.w, 0);
	}
	/* The file's bytes not left on the loop's stack, which a keeper forked later copies. */
	if (n > 0)
		explicit_bzero(buf, (size_t)n);
	read_progress(&j->wk);
}

/* The worker's report: an error it says replaces any of ours. */
static void read_msg(struct kcall *k, json_t *msg)
{
	struct worker_job *wj = container_of(k, struct worker_job, k);

	wj->replied = true;
	sr_ctl_reply_error(msg, &wj->err);
	kcall_stop(k);
	read_progress(wj);
}

static void read_gone(struct job *job)
{
	read_free(container_of(job, struct read_job, wk.job));
}

/*
 * Not while the client is what it waits for (paused: it has not taken
 * what came); answered already, the body is cut off (the connection
 * closed), as for any error past the start.
 */
static void read_tick(struct job *job, int64_t now)
{
	struct read_job *j = container_of(job, struct read_job, wk.job);
	struct worker_job *wj = &j->wk;

	if (j->paused || (wj->eof && wj->replied) ||
	    !idle_timeout(job->s, wj->moved_ns, now, &wj->err))
		return;
	worker_close_pipe(wj);
	wj->replied = true;
	kcall_stop(&wj->k);
	read_progress(wj);
}

static const struct job_ops read_ops = {.gone = read_gone, .tick = read_tick};

static void file_read(struct req *r, const char *ref, const char *path)
{
	struct read_job *j = calloc(1, sizeof(*j));

	/*
	 * A file is sent as it is read, its length unknown until its end:
	 * HTTP/1.1's chunked answer tells one cut short (the worker failed,
	 * the sandbox ended) by its missing last chunk; HTTP/1.0's ends with
	 * the connection closed either way, a cut-short file seen whole.
	 */
	if (r->http10) {
		free(j);
		return srv_answer_error(r, MHD_HTTP_HTTP_VERSION_NOT_SUPPORTED,
					"a file is sent as it is read, and HTTP/1.0 cannot tell a "
					"file cut short from a whole one: ask with HTTP/1.1");
	}
	if (!j)
		return srv_answer_error(r, -ENOMEM, "serve: out of resources");
	j->wk.progress = read_progress;
	if (worker_start(r, &j->wk, &read_ops, on_read_data, read_msg, ref, "file_read", path) < 0)
		read_free(j);
}

/* ---- list, stat; remove, mkdir ---- */

/*
 * What the worker's pipe brings: entries (a listing, a stat), or for
 * remove and mkdir (SIMPLE) only signs of life -- a remove writes a byte
 * every so many entries (child/files.c) -- so that a long one that goes
 * on is told from a stopped one.
 */
enum list_format { LIST_V1, STAT_V1, LIST_ENVD, STAT_ENVD, SIMPLE, MKDIR_CHECK };

struct list_job {
	struct worker_job wk;
	enum list_format format;
	uint64_t max;
	char *path;	 /* SIMPLE, MKDIR_CHECK, LIST_ENVD: what was asked for */
	bool missing_ok; /* envd's Remove: a path that is not there is removed already */
};

static void list_free(struct list_job *j)
{
	worker_release(&j->wk);
	free(j->path);
	free(j);
}

/* "-rw-r--r--", as ls and envd show a mode. */
static void permissions(const char *type, int mode, char out[11])
{
	static const char rwx[] = "rwxrwxrwx";

	out[0] = strcmp(type, "dir") == 0 ? 'd' : strcmp(type, "symlink") == 0 ? 'l' : '-';
	for (int i = 0; i < 9; i++)
		out[i + 1] = (mode & (0400 >> i)) ? rwx[i] : '-';
	out[10] = '\0';
}

static const char *owner(json_int_t id)
{
	return id == 1000 ? "user" : id == 0 ? "root" : "nobody";
}

/* A worker's entry as envd's EntryInfo (protobuf JSON). */
static json_t *envd_entry(json_t *e)
{
	const char *type = json_string_value(json_object_get(e, "type"));
	json_int_t ns = json_integer_value(json_object_get(e, "mtime_ns"));
	int mode = (int)json_integer_value(json_object_get(e, "mode"));
	time_t sec = (time_t)(ns / 1000000000);
	char perm[11], when[64], frac[16];
	struct tm tm;
	json_t *j;

	if (!type)
		return NULL;
	permissions(type, mode, perm);
	gmtime_r(&sec, &tm);
	strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%S", &tm);
	snprintf(frac, sizeof(frac), ".%09lldZ", (long long)(ns % 1000000000));
	strncat(when, frac, sizeof(when) - strlen(when) - 1);
	j = json_pack("{sOsssOsIsissssssss}", "name", json_object_get(e, "name"), "type",
		      strcmp(type, "dir") == 0	     ? "FILE_TYPE_DIRECTORY"
		      : strcmp(type, "symlink") == 0 ? "FILE_TYPE_SYMLINK"
		      : strcmp(type, "file") == 0    ? "FILE_TYPE_FILE"
						     : "FILE_TYPE_UNSPECIFIED",
		      "path", json_object_get(e, "path"), "size",
		      json_integer_value(json_object_get(e, "size")), "mode", mode, "permissions",
		      perm, "owner", owner(json_integer_value(json_object_get(e, "uid"))), "group",
		      owner(json_integer_value(json_object_get(e, "gid"))), "modifiedTime", when);
	if (j && json_object_get(e, "target"))
		json_object_set(j, "symlinkTarget", json_object_get(e, "target"));
	return j;
}

/* The next entry of the worker's lines from *line (up to end), as r's family has them; NULL at the
 * end. */
static json_t *next_entry(struct list_job *j, char **line, char *end)
{
	while (*line < end) {
		char *nl = memchr(*line, '\n', (size_t)(end - *line));
		json_t *e = NULL, *x;

		if (!nl)
			return NULL;
		if (sr_json_parse(*line, (size_t)(nl - *line), 0, 4, &e) < 0)
			e = NULL;
		*line = nl + 1;
		if (e && (j->format == LIST_ENVD || j->format == STAT_ENVD)) {
			x = envd_entry(e);
			json_decref(e);
			e = x;
		}
		if (e)
			return e;
	}
	return NULL;
}

/*
 * envd's ListDir of what is not a directory: invalid_argument, as envd
 * says it. The worker lists such a path as its one entry, whose path is
 * the path itself (a directory's entries have theirs beneath it).
 */
static bool listed_not_dir(struct list_job *j)
{
	char *line = j->wk.q.p, *end = j->wk.q.p + j->wk.q.len, norm[PATH_MAX];
	json_t *e;
	bool self;

	if (j->format != LIST_ENVD || !j->path || sr_files_path(j->path, norm, sizeof(norm)) < 0 ||
	    !(e = next_entry(j, &line, end)))
		return false;
	self = sr_streq(json_string_value(json_object_get(e, "path")), norm);
	json_decref(e);
	if (self)
		srv_answer_error(j->wk.job.r, -EINVAL, "path is not a directory: %s", j->path);
	return self;
}

/*
 * A listing, {"entries": [...]}, written an entry at a time: each of the
 * worker's lines parsed, made the family's entry, dumped and freed before
 * the next. The agent makes the names, 100,000 at no cost: parsed whole
 * into one answer, a listing of 12 MB took 170 MB of the server's memory
 * (240 MB as envd's) for each request that asked for it; this way, about
 * the listing's size once more.
 */
static void answer_entries(struct list_job *j)
{
	struct req *r = j->wk.job.r;
	char *line = j->wk.q.p, *end = j->wk.q.p + j->wk.q.len;
	struct fbuf out = {0};
	struct MHD_Response *resp;
	bool first = true;
	json_t *e;
	int ret;

	if (listed_not_dir(j))
		return;
	ret = fbuf_add(&out, "{\"entries\":[", 12);

	while (ret == 0 && (e = next_entry(j, &line, end))) {
		_cleanup_free_wiped_ char *text = NULL;

		ret = sr_json_dump_line(e, &text);
		json_decref(e);
		if (ret == 0 && !first)
			ret = fbuf_add(&out, ",", 1);
		/* Without its '\n'. */
		if (ret == 0)
			ret = fbuf_add(&out, text, strlen(text) - 1);
		first = false;
	}
	if (ret == 0)
		ret = fbuf_add(&out, "]}\n", 3);
	resp = ret == 0 ? sr_mhd.create_response_from_buffer_with_free_callback(out.len, out.p,
										sr_free_wiped)
			: NULL;
	if (!resp) {
		fbuf_free(&out);
		return srv_answer_error(r, -ENOMEM, "serve: out of memory");
	}
	sr_mhd.add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE, "application/json");
	srv_answer(r, MHD_HTTP_OK, resp);
}

/* A stat: the one entry the worker gave. */
static void answer_stat(struct list_job *j)
{
	struct req *r = j->wk.job.r;
	char *line = j->wk.q.p, *end = j->wk.q.p + j->wk.q.len;
	json_t *e = next_entry(j, &line, end), *more = e ? next_entry(j, &line, end) : NULL;

	if (!e || more) {
		if (e)
			json_decref(e);
		if (more)
			json_decref(more);
		return srv_answer_error(r, -EIO, "stat: no answer");
	}
	srv_answer_json(r, MHD_HTTP_OK, j->format == STAT_V1 ? e : json_pack("{so}", "entry", e));
}

static void list_answer(struct list_job *j)
{
	if (j->format == LIST_V1 || j->format == LIST_ENVD)
		answer_entries(j);
	else
		answer_stat(j);
}

/* A remove's or mkdir's: the path, as /v1 and envd's MakeDir answer it. */
static void simple_answer(struct req *r, const char *path)
{
	const char *slash = strrchr(path, '/');

	if (r->m.family == SR_API_V1)
		srv_answer_json(r, MHD_HTTP_OK, json_pack("{so}", "path", sr_json_string(path)));
	else if (r->m.route == SR_ROUTE_ENVD_RPC && strstr(r->m.name, "MakeDir"))
		srv_answer_json(r, MHD_HTTP_OK,
				json_pack("{s{sosssoss}}", "entry", "name",
					  sr_json_string(slash ? slash + 1 : path), "type",
					  "FILE_TYPE_DIRECTORY", "path", sr_json_string(path),
					  "permissions", "drwxr-xr-x"));
	else
		srv_answer_json(r, MHD_HTTP_OK, json_object());
}

static void mkdir_checked(struct list_job *j, struct req *r);

static void list_progress(struct worker_job *wj)
{
	struct list_job *j = container_of(wj, struct list_job, wk);
	struct req *r = wj->job.r;

	if (!(wj->eof && wj->replied))
		return;
	if (r && j->format == MKDIR_CHECK)
		return mkdir_checked(j, r);
	if (r) {
		if (wj->err.code && !(j->missing_ok && wj->err.code == -ENOENT))
			srv_answer_err(r, r->m.family == SR_API_V1 ? "cp" : NULL, &wj->err);
		else if (j->format == SIMPLE)
			simple_answer(r, j->path);
		else
			list_answer(j);
	}
	list_free(j);
}

static void on_list_data(struct srv *s, void *ctx, uint32_t events)
{
	struct list_job *j = container_of(ctx, struct list_job, wk);
	char buf[65536];
	ssize_t n = read(j->wk.fd, buf, sizeof(buf));
	bool taken;

	(void)s;
	(void)events;
	if (n < 0 && (errno == EAGAIN || errno == EINTR))
		return;
	j->wk.moved_ns = sr_monotonic_ns();
	taken = n > 0 && (j->format == SIMPLE || (j->wk.q.len + (size_t)n <= j->max &&
						  fbuf_add(&j->wk.q, buf, (size_t)n) == 0));
	/* Not left on the loop's stack, which a keeper forked later copies. */
	if (n > 0)
		explicit_bzero(buf, (size_t)n);
	if (taken)
		return;
	if (n > 0 && !j->wk.err.code)
		sr_error_msg(&j->wk.err, -EMSGSIZE, "the listing is over %llu bytes",
			     (unsigned long long)j->max);
	/* The end, or too much. */
	worker_close_pipe(&j->wk);
	list_progress(&j->wk);
}

/* The worker's report: an error of ours comes first (too much: the worker then met EPIPE). */
static void list_msg(struct kcall *k, json_t *msg)
{
	struct worker_job *wj = container_of(k, struct worker_job, k);
	struct sr_error err = {0};

	wj->replied = true;
	if (sr_ctl_reply_error(msg, &err) < 0 && !wj->err.code)
		wj->err = err;
	kcall_stop(k);
	list_progress(wj);
}

static void list_gone(struct job *job)
{
	list_free(container_of(job, struct list_job, wk.job));
}

static void list_tick(struct job *job, int64_t now)
{
	struct list_job *j = container_of(job, struct list_job, wk.job);
	struct sr_error err = {0};

	if (!idle_timeout(job->s, j->wk.moved_ns, now, &err))
		return;
	if (!j->wk.err.code)
		j->wk.err = err;
	j->wk.eof = j->wk.replied = true;
	list_progress(&j->wk);
}

static const struct job_ops list_ops = {.gone = list_gone, .tick = list_tick};

/*
 * A worker's op on path, answered as format says once it has reported and
 * its pipe ended: the job, or NULL with the request answered.
 */
static struct list_job *list_start(struct req *r, const char *ref, const char *op, const char *path,
				   enum list_format format)
{
	struct list_job *j = calloc(1, sizeof(*j));

	if (!j || ((format == SIMPLE || format == MKDIR_CHECK || format == LIST_ENVD) &&
		   !(j->path = strdup(path)))) {
		free(j);
		srv_answer_error(r, -ENOMEM, "serve: out of resources");
		return NULL;
	}
	j->wk.progress = list_progress;
	j->format = format;
	j->max = srv_opts(r->s)->max_output;
	if (worker_start(r, &j->wk, &list_ops, on_list_data, list_msg, ref, op, path) < 0) {
		list_free(j);
		return NULL;
	}
	return j;
}

void sr_api_files_list(struct req *r, const char *ref, const char *path, bool stat, bool envd)
{
	list_start(r, ref, stat ? "file_stat" : "file_list", path,
		   envd ? (stat ? STAT_ENVD : LIST_ENVD) : (stat ? STAT_V1 : LIST_V1));
}

/* Remove, mkdir: bounded by --idle-timeout as a listing is (a stopped worker answers 504). */
void sr_api_files_simple(struct req *r, const char *ref, const char *op, const char *path)
{
	struct list_job *j = list_start(r, ref, op, path, SIMPLE);

	/* As envd's os.RemoveAll(): nothing there is no error (the path's parent missing too). */
	if (j && r->m.family == SR_API_ENVD && strcmp(op, "file_remove") == 0)
		j->missing_ok = true;
}

/*
 * envd's MakeDir, once its worker has stat'ed the path as envd's
 * os.Stat() does, following symbolic links (the kernel's, up to 40):
 * made (with its parents) when nothing is there, or a parent is not a
 * directory (the mkdir's own error then); already_exists for a
 * directory, which the SDK's makeDir() answers false; invalid_argument
 * for anything else there. A link to nothing is envd's internal error
 * (its mkdir finds the link there, its chown then nothing behind it),
 * and nothing is made; the worker tells such a link by its entry before
 * the error (child/files.c stat_follow()).
 */
static void mkdir_checked(struct list_job *j, struct req *r)
{
	_cleanup_free_ char *path = steal_pointer(&j->path);
	char *line = j->wk.q.p, *end = j->wk.q.p + j->wk.q.len;
	json_t *e = next_entry(j, &line, end);
	const char *type = json_string_value(json_object_get(e, "type"));
	struct sr_error err = j->wk.err;
	bool link = sr_streq(type, "symlink"), make = false;

	if (link && err.code == -ENOENT)
		srv_answer_error(r, -EIO,
				 "failed to chown directory: chown %s: no such file or directory",
				 path);
	else if (link && err.code == -ENOTDIR)
		srv_answer_error(r, -EIO, "error getting file info: stat %s: not a directory",
				 path);
	else if (link && err.code == -ELOOP)
		srv_answer_error(
		    r, -EIO, "error getting file info: stat %s: too many levels of symbolic links",
		    path);
	else if (err.code && err.code != -ENOENT && err.code != -ENOTDIR)
		srv_answer_err(r, NULL, &err);
	else if (sr_streq(type, "dir"))
		srv_answer_error(r, -EEXIST, "directory already exists: %s", path);
	else if (type && !link)
		srv_answer_error(r, -EINVAL, "path already exists but it is not a directory: %s",
				 path);
	else
		make = true;
	if (e)
		json_decref(e);
	/* Its worker's job gone before the next one's (a request has one job at a time). */
	list_free(j);
	if (make)
		sr_api_files_simple(r, r->m.id, "file_mkdir", path);
}

void sr_api_files_mkdir(struct req *r, const char *ref, const char *path)
{
	list_start(r, ref, "file_stat_follow", path, MKDIR_CHECK);
}

/* ---- /v1 and envd's GET ---- */

void sr_api_files(struct req *r)
{
	const char *path = srv_arg(r, "path"), *list = srv_arg(r, "list"),
		   *stat = srv_arg(r, "stat");
	const char *dir = srv_arg(r, "dir");

	if (!path || !*path)
		return srv_answer_error(r, -EINVAL,
					"files: ?path=PATH is needed (relative: to /workspace)");
	switch (r->m.route) {
	case SR_ROUTE_SB_FILES_DELETE:
		return sr_api_files_simple(r, r->m.id, "file_remove", path);
	case SR_ROUTE_SB_FILES_PUT:
		/* ?dir=1 (no body): a directory, made with its parents. */
		if (dir && strcmp(dir, "0") && strcmp(dir, "false"))
			return sr_api_files_simple(r, r->m.id, "file_mkdir", path);
		return srv_answer_error(r, -EINVAL, "files: a malformed request");
	default:
		if (list && strcmp(list, "0") && strcmp(list, "false"))
			return sr_api_files_list(r, r->m.id, path, false, false);
		if (stat && strcmp(stat, "0") && strcmp(stat, "false"))
			return sr_api_files_list(r, r->m.id, path, true, false);
		return file_read(r, r->m.id, path);
	}
}

void sr_api_envd_files(struct req *r)
{
	_cleanup_free_ char *path = sr_api_envd_path(srv_arg(r, "path"));

	if (!path)
		return srv_answer_error(r, -EINVAL, "files: ?path=PATH is needed");
	file_read(r, r->m.id, path);
}
