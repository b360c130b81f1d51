/* SPDX-License-Identifier: MIT */
/*
 * What the API server's files share (serve.h is the outside's view):
 *
 *   server*.c    the loop, listeners, auth, libmicrohttpd's callbacks,
 *                answers and errors in each family's format
 *   keepers.c    asynchronous requests to sandboxes' keepers; the
 *                sandboxes the server made; create (cold or warm)
 *   sandboxes.c  /v1: sandboxes, ports, timeout, snapshots, pools
 *   exec*.c      exec: buffered, NDJSON and Connect streams (exec-internal.h)
 *   files.c      files: read, write (raw or multipart), list, remove
 *   e2b.c        E2B's control plane and envd
 *   preview.c    E2B's getHost(port): Host-routed relays on TCP
 *
 * One thread: nothing here locks. Every fd is a watch in the server's
 * epoll set; long operations are jobs, and the HTTP connection waiting
 * for one is suspended (libmicrohttpd) until it has its answer.
 */
#pragma once

#include "body.h"
#include "control.h"
#include "fbuf.h"
#include "mhd.h"
#include "pool.h"
#include "route.h"
#include "serve.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>

struct sr_entry;

#define container_of(ptr, type, member) ((type *)((char *)(ptr)-offsetof(type, member)))

/* A sandbox's home, where E2B's relative paths and commands start. */
#define SR_API_HOME "/home/user"
/* What the E2B SDK is told its envd is: the features it may use (docs/api.md). */
#define SR_API_ENVD_VERSION "0.5.7"

struct srv;
struct req;

/* An fd in the loop: fn(ctx, epoll events) when it is ready. */
typedef void (*srv_watch_fn)(struct srv *s, void *ctx, uint32_t events);
struct watch {
	int fd;
	srv_watch_fn fn;
	void *ctx;
	bool dead;
	struct watch *next_dead;
};
struct watch *srv_watch(struct srv *s, int fd, uint32_t events, srv_watch_fn fn, void *ctx);
void srv_watch_events(struct srv *s, struct watch *w, uint32_t events);
/* Out of the loop (before its fd is closed); *w NULL. NULL is fine. */
void srv_unwatch(struct srv *s, struct watch **w);

struct listener {
	int fd;
	bool is_unix;
	bool loopback; /* 127.0.0.0/8 or ::1: previews are served (preview.c) */
	int port;
	char *path; /* unix: removed at the end */
	char addr[64];
	char url[128]; /* "unix:PATH", "http://ADDR:PORT" */
	struct watch *w;
	bool resting;	/* out of fds: not watched until the next tick (server-listen.c: rest()) */
	bool said_full; /* and said so, once until a connection is taken again */
	/*
	 * [::1] at a 127.0.0.1 listener's port: `localhost`'s other address
	 * (server-listen.c: open_twin()). Served alike, listed not.
	 */
	bool twin;
};

/* Something long a request waits for (a keeper's answer, a process, a file). */
struct job;
struct job_ops {
	/* The client went away (hung up, or the server stops): end it or let it go on alone. */
	void (*gone)(struct job *j);
	/* Each second (NULL: not needed), now: sr_monotonic_ns(); it may free j. */
	void (*tick)(struct job *j, int64_t now);
};
struct job {
	const struct job_ops *ops;
	struct srv *s;
	struct req *r; /* NULL once the client is gone */
	struct job *prev, *next;
};
void srv_job_add(struct srv *s, struct job *j, const struct job_ops *ops, struct req *r);
/* Out of the server's list; the caller frees it. */
void srv_job_remove(struct job *j);

struct upload; /* files.c: a request body streamed into the sandbox */

struct req {
	struct srv *s;
	struct MHD_Connection *conn;
	const struct listener *via;
	const char *method, *url;
	struct sr_route_match m;
	char *body; /* a JSON request's, whole */
	size_t len, cap;
	uint64_t max;
	bool overflow;
	bool drain; /* over max by its Content-Length: read and dropped, then 413 */
	struct upload *up;
	struct job *job;
	struct MHD_Response *resp; /* the answer, queued at the next call */
	unsigned status;
	struct watch *hup; /* while suspended: the client's socket, for its hang-up */
	bool suspended, dispatched, gone;
	bool begun;
	bool nul;    /* the target has a %00: its path or query, as decoded, would end there */
	bool http10; /* an HTTP/1.0 request: no chunked answer, an answer's end is the close */
};

/* Waits (libmicrohttpd calls nothing for it) until srv_resume(); watches for a hang-up. */
void srv_suspend(struct req *r);
void srv_resume(struct req *r);
/* The answer (resp is taken); queued at once or when the request is next called. */
void srv_answer(struct req *r, unsigned status, struct MHD_Response *resp);
void srv_answer_json(struct req *r, unsigned status, json_t *j); /* j is taken */
void srv_answer_empty(struct req *r, unsigned status);
/* The request's body as a JSON object (an empty body: {}), or NULL with the 400 answered. */
json_t *srv_body_json(struct req *r);
/*
 * An error, as r's family has them: /v1 {"code": "not_found", "message":
 * "sandbox-run: ..."}; E2B and envd {"code": 404, "message": ...}; envd's
 * RPCs {"code": "not_found", "message": ...}. code: a negative errno,
 * which says the HTTP status.
 */
void srv_answer_error(struct req *r, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* err as the CLI prints it: "sandbox-run: <verb>: <message>". */
void srv_answer_err(struct req *r, const char *verb, const struct sr_error *err);
/*
 * A profile that did not load (err->kind: profile.h) said of what the
 * request named -- its field (NULL: none), what it is ("profile",
 * "template", "snapshot", "deployment") and its name as given -- not in
 * the loader's words, which name the server's files (where it looked, a
 * file and its line): those go to its log, at info for one that is
 * nowhere (a client's typo; serve -v) and as a warning for one that is
 * there but does not load (the operator's to mend). Nowhere: 404, "no
 * profile \"x\" on this server"; broken: 500, the server's fault, not
 * the request's ("profile \"x\" is broken on this server"). A path the
 * client gave keeps the loader's words where it is not there (the path
 * is the client's), and is 400 where it is broken. Any other error is
 * left as it is.
 */
void srv_profile_error(struct srv *s, const char *verb, const char *field, const char *noun,
		       const char *name, struct sr_error *err);
unsigned srv_http_status(int code);
const char *srv_rpc_code(int code);
/* A query argument ("path"), NULL when absent. */
const char *srv_arg(struct req *r, const char *key);
const char *srv_header(struct req *r, const char *key);
/* A buffer response (copied). */
struct MHD_Response *srv_response(const void *data, size_t len, const char *type);

/* A request to a sandbox's keeper, answered in the loop (keepers.c). */
struct kcall {
	struct srv *s;
	int fd;
	struct watch *w;
	char id[33];
	char dir[4096];
	/* Each message that comes; fds are the callee's to close. */
	void (*on_msg)(struct kcall *k, json_t *msg);
	/* The keeper hung up (the sandbox is gone). */
	void (*on_hup)(struct kcall *k);
};
/* Finds ref (id, prefix, name), connects, sends req with fds: err as the verbs say it. */
int kcall_start(struct srv *s, const char *ref, json_t *req, const int *fds, size_t n_fds,
		struct kcall *k, struct sr_error *err);
/* The same on a connection made already (a warm invocation's, pool.h): fd is taken. */
int kcall_attach(struct srv *s, int fd, const char *id, struct kcall *k);
void kcall_stop(struct kcall *k);
/*
 * A request with one answer (inspect, timeout, port, rm, snapshot, the
 * files' small ones): done(r, reply or NULL and err) in the loop; r is
 * NULL if the client went meanwhile.
 */
typedef void (*call_done_fn)(struct req *r, json_t *reply, const struct sr_error *err, void *ctx);
int srv_call(struct req *r, const char *ref, json_t *req, const int *fds, size_t n_fds,
	     call_done_fn done, void *ctx, struct sr_error *err);

/* The sandboxes the server made: for the cap, E2B's metadata, and the end. */
struct made {
	char id[33];
	char *template;
	json_t *metadata;
	int64_t started_ms;
	uint64_t timeout_ms;
	bool warm;	    /* taken from a pool */
	int64_t expires_ms; /* warm: its deadline (wall clock ms, 0: none) */
	json_t *state;	    /* warm: what its keeper said of it when held, until answered */
};
struct made *srv_made_find(struct srv *s, const char *id);
/*
 * What the create of a sandbox the server did not make (or made before it
 * was started again) gave: {"metadata": {...}, "template": NAME}, each
 * there if given; NULL when none was kept.
 */
json_t *srv_made_saved(struct srv *s, const char *id);
/*
 * A warm sandbox's release is not waited for (pool.h): its state file may
 * still say "warm" for a moment. state (read from it) is made to say what
 * it will: running, with its deadline.
 */
void srv_made_state(struct srv *s, const char *id, json_t *state);
void srv_made_forget(struct srv *s, const char *id);
/* Every one forgotten (the server's end). */
void srv_made_forget_all(struct srv *s);
/*
 * Whether sandbox id (state: its state file's) is warm, a pool's and not
 * taken by this server: nobody's yet, and answered as an unknown id is
 * (its keeper refuses it too: what anyone did in it would be met by the
 * request it is handed to; docs/security.md).
 */
bool srv_warm_held(struct srv *s, const char *id, json_t *state);
/*
 * sr_state_find() of the server's state directory, warm ones
 * (srv_warm_held) counting for nothing: each as an unknown id, and none
 * making a prefix ambiguous or coming before a name, as the API lists none.
 */
int srv_state_find(struct srv *s, const char *ref, struct sr_entry *ret, struct sr_error *err);
/* Whether sandbox id's state directory is still there: its keeper removes it last. */
bool srv_sandbox_alive(struct srv *s, const char *id);

/*
 * Makes a sandbox for a create request (a warm one when the request is
 * poolable and a pool of its profile has one): done(r, id or NULL and
 * err). c is taken.
 */
typedef void (*create_done_fn)(struct req *r, const char *id, const struct sr_error *err);
void srv_create(struct req *r, struct sr_api_create *c, const char *template, create_done_fn done);

/* The state directory (state.h). */
const char *srv_statedir(struct srv *s);
/* The API's token (NULL: no TCP listener). */
const char *srv_token(struct srv *s);
const struct sr_serve_opts *srv_opts(struct srv *s);
const struct sr_sink *srv_sink(struct srv *s);
/* The warm pools' stats, as JSON. */
json_t *srv_pools_json(struct srv *s);

/*
 * sandboxes.c: the sandboxes of the state directory (as `ls` lists them),
 * each one's state as each() makes it (NULL: as its state file has it),
 * answered as an array alone (key NULL) or as {key: [...]}.
 */
typedef json_t *(*srv_sandbox_json_fn)(struct req *r, const char *id, json_t *state);
void srv_answer_sandboxes(struct req *r, const char *key, srv_sandbox_json_fn each);

/* Handlers, by family. */
void sr_api_v1(struct req *r);						    /* sandboxes.c */
void sr_api_exec(struct req *r, const struct sr_api_exec *x, bool connect); /* exec.c */
/*
 * A warm invocation (invoke.c): its process parked on pipes (pool.h), its
 * keeper's connection; answered as an exec is (the exit's record), as
 * stdout with headers (raw), one JSON object, or NDJSON events. The
 * input is written to its stdin and closed, which starts it. done(ctx)
 * once it is over, answered or not; extra (taken) joins the JSON answers
 * and becomes Sandbox-Run-* headers of the raw one.
 */
enum sr_api_answer {
	SR_API_ANSWER_RAW,
	SR_API_ANSWER_JSON,
	SR_API_ANSWER_NDJSON,
};
struct sr_api_attach {
	struct sr_pool_taken *taken; /* its fds are taken */
	const char *input;
	size_t input_len;
	enum sr_api_answer answer;
	bool base64;
	json_t *extra;
	void (*done)(void *ctx);
	void *ctx;
};
void sr_api_exec_attach(struct req *r, struct sr_api_attach *a);
/* POST /v1/deployments/{name}/invoke (invoke.c). */
void sr_api_invoke(struct req *r);
/* invoke.c: the deployments' pools, at the start and at each tick; freed at the end. */
int sr_invoke_start(struct srv *s, struct sr_error *err);
void sr_invoke_tick(struct srv *s);
void sr_invoke_free(struct srv *s);
json_t *sr_invoke_pools_json(struct srv *s);
void sr_api_files(struct req *r); /* files.c: /v1 files */
void sr_api_envd_files(struct req *r);
void sr_api_files_list(struct req *r, const char *ref, const char *path, bool stat, bool envd);
/* file_remove, file_mkdir: answered as r's family has them. */
void sr_api_files_simple(struct req *r, const char *ref, const char *op, const char *path);
/* envd's MakeDir: already_exists for a directory there, invalid_argument for another thing. */
void sr_api_files_mkdir(struct req *r, const char *ref, const char *path);
/* files.c: a body as it comes (an upload), before the request is whole: false to refuse. */
bool sr_api_upload_begin(struct req *r);
/* How much of data it took: the rest comes again once the request is resumed. */
size_t sr_api_upload_data(struct req *r, const char *data, size_t len);
void sr_api_upload_end(struct req *r);
/*
 * files.c: whether a worker in the sandbox that moved nothing since
 * moved_ns has had its --idle-timeout; err then says so (-ETIMEDOUT),
 * starting with what (for want of the worker) did not happen.
 */
bool srv_idle_expired(struct srv *s, int64_t moved_ns, int64_t now, const char *what,
		      struct sr_error *err);
/* envd's path: relative ones from SR_API_HOME (malloc'd, NULL for none). */
char *sr_api_envd_path(const char *path);
void sr_api_e2b(struct req *r);	 /* e2b.c */
void sr_api_envd(struct req *r); /* e2b.c: envd's REST and RPCs */
/* exec-envd.c: envd's process.Process/SendSignal and List, on the processes it runs. */
void sr_api_envd_signal(struct req *r, json_t *msg);
void sr_api_envd_list(struct req *r);

/*
 * preview.c: a connection accepted on a loopback TCP listener, routed by
 * its Host; foreign: another user's (counted: srv_foreign_closed() at its end).
 */
void sr_preview_accept(struct srv *s, const struct listener *l, int fd, bool foreign);
/* http.c: hands a connection to libmicrohttpd; a foreign one is counted until it closes. */
void srv_add_connection(struct srv *s, const struct listener *l, int fd, bool foreign);
/* server-listen.c: a connection of another user has ended. */
void srv_foreign_closed(struct srv *s);
/* preview.c: drops previews whose head did not come in time (the server's tick). */
void sr_preview_tick(struct srv *s);
void sr_preview_free_all(struct srv *s);
/* exec-envd.c: keep-alives of Connect streams, the rate of what nobody reads (the server's tick).
 */
void sr_exec_tick(struct srv *s);

/* The server's part that other files keep their lists in. */
struct srv_lists {
	struct job jobs; /* sentinel of the jobs' list */
	struct preview *previews;
	struct exec_job *execs; /* for envd's pids */
	unsigned files_open;	/* upload.c: files being written, by every upload */
	bool ending;		/* the server is going: every job ends with it */
};
struct srv_lists *srv_lists(struct srv *s);
