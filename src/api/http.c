/* SPDX-License-Identifier: MIT */
/*
 * libmicrohttpd in the server's loop: connections handed over from our
 * own listeners, each request routed (route.h), authenticated, its body
 * bounded, then served; answers and errors in each family's format.
 */
#include "internal.h"
#include "secmem.h"
#include "server.h"
#include "util.h"

#include <stdarg.h>
#include <strings.h>
#include <sys/socket.h>

/* A request's line and headers, at most (libmicrohttpd answers 431 past it). */
#define HEAD_MAX (64 * 1024)

const char *srv_arg(struct req *r, const char *key)
{
	return sr_mhd.lookup_connection_value(r->conn, MHD_GET_ARGUMENT_KIND, key);
}

const char *srv_header(struct req *r, const char *key)
{
	return sr_mhd.lookup_connection_value(r->conn, MHD_HEADER_KIND, key);
}

/*
 * An answer's bytes are a copy of ours that libmicrohttpd frees wiped: one
 * may hold the token (E2B's envdAccessToken), and what the server frees
 * unwiped is in every keeper it forks later (docs/security.md).
 */
struct MHD_Response *srv_response(const void *data, size_t len, const char *type)
{
	char *copy = malloc(len ? len : 1);
	struct MHD_Response *resp;

	if (!copy)
		return NULL;
	memcpy(copy, data, len);
	resp = sr_mhd.create_response_from_buffer_with_free_callback(len, copy, sr_free_wiped);
	if (!resp)
		sr_free_wiped(copy);
	else if (type)
		sr_mhd.add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE, type);
	return resp;
}

static void on_hup(struct srv *s, void *ctx, uint32_t events);

void srv_suspend(struct req *r)
{
	const union MHD_ConnectionInfo *ci;

	if (r->suspended || r->gone)
		return;
	sr_mhd.suspend_connection(r->conn);
	r->suspended = true;
	/* libmicrohttpd does not see a suspended connection's hang-up: we do. */
	ci = sr_mhd.get_connection_info(r->conn, MHD_CONNECTION_INFO_CONNECTION_FD);
	if (ci)
		r->hup = srv_watch(r->s, ci->connect_fd, EPOLLRDHUP, on_hup, r);
}

void srv_resume(struct req *r)
{
	if (!r->suspended)
		return;
	srv_unwatch(r->s, &r->hup);
	r->suspended = false;
	sr_mhd.resume_connection(r->conn);
}

/* The client is gone: its job is told (an exec of /v1 is killed), then the request ends. */
static void client_gone(struct req *r)
{
	struct job *j = r->job;

	r->gone = true;
	r->up = NULL; /* an upload is the request's job: gone with it */
	if (j) {
		r->job = NULL;
		j->r = NULL;
		j->ops->gone(j);
	}
}

static void on_hup(struct srv *s, void *ctx, uint32_t events)
{
	struct req *r = ctx;

	(void)s;
	(void)events;
	client_gone(r);
	srv_resume(r);
}

void srv_answer(struct req *r, unsigned status, struct MHD_Response *resp)
{
	if (!resp) {
		status = MHD_HTTP_SERVICE_UNAVAILABLE;
		resp = srv_response("", 0, NULL);
	}
	if (r->resp)
		sr_mhd.destroy_response(r->resp);
	r->resp = resp;
	r->status = status;
	srv_resume(r);
}

void srv_answer_json(struct req *r, unsigned status, json_t *j)
{
	char *text = NULL;

	if (!j || sr_json_dump_line(j, &text) < 0) {
		if (j)
			json_decref(j);
		return srv_answer(r, MHD_HTTP_SERVICE_UNAVAILABLE, NULL);
	}
	json_decref(j);
	srv_answer(r, status, srv_response(text, strlen(text), "application/json"));
	sr_free_wiped(text);
}

void srv_answer_empty(struct req *r, unsigned status)
{
	srv_answer(r, status, srv_response("", 0, NULL));
}

json_t *srv_body_json(struct req *r)
{
	json_t *j = NULL;

	if (r->len == 0)
		return json_object();
	/*
	 * A key said twice is refused, not taken at its last: what checked
	 * the body on its way (a proxy, a policy) may have read the first.
	 */
	if (sr_json_parse(r->body, r->len, JSON_REJECT_DUPLICATES, SR_API_JSON_DEPTH, &j) < 0 ||
	    !json_is_object(j)) {
		if (j)
			json_decref(j);
		srv_answer_error(r, -EINVAL,
				 "serve: the request's body is not a JSON object (of at most %d "
				 "levels, each key once)",
				 SR_API_JSON_DEPTH);
		return NULL;
	}
	return j;
}

unsigned srv_http_status(int code)
{
	if (code > 0)
		return (unsigned)code;
	switch (-code) {
	case ENOENT:
	case ESRCH:
		return MHD_HTTP_NOT_FOUND;
	case EINVAL:
	case ENOTDIR:
	case EISDIR:
	case ENAMETOOLONG:
	case ELOOP:
	case EBADMSG:
	case ERANGE:
	case ENXIO: /* a FIFO with no reader, a device with nothing behind it */
		return MHD_HTTP_BAD_REQUEST;
	case EEXIST:
	case EBUSY:
	case ENOTEMPTY:
		return MHD_HTTP_CONFLICT;
	case EACCES:
	case EPERM:
	case EROFS:
		return MHD_HTTP_FORBIDDEN;
	case ENOSPC:
	case EDQUOT:
		return MHD_HTTP_INSUFFICIENT_STORAGE;
	case EAGAIN:
	case EUSERS:
		return MHD_HTTP_TOO_MANY_REQUESTS;
	case EMSGSIZE:
	case E2BIG:
	case EFBIG:
		return MHD_HTTP_CONTENT_TOO_LARGE;
	case ENOTSUP:
	case ENOSYS:
		return MHD_HTTP_NOT_IMPLEMENTED;
	case ETIME:
	case ETIMEDOUT:
		return MHD_HTTP_GATEWAY_TIMEOUT;
	case ECONNRESET:
	case ECONNREFUSED:
	case EPIPE:
		return MHD_HTTP_BAD_GATEWAY;
	case ENOMEM:
		return MHD_HTTP_SERVICE_UNAVAILABLE;
	default:
		return MHD_HTTP_INTERNAL_SERVER_ERROR;
	}
}

/* sandbox-run's own names of the statuses it answers. */
static const char *v1_code(unsigned status)
{
	switch (status) {
	case 400:
		return "bad_request";
	case 401:
		return "unauthorized";
	case 403:
		return "forbidden";
	case 404:
		return "not_found";
	case 405:
		return "method_not_allowed";
	case 409:
		return "conflict";
	case 413:
		return "too_large";
	case 429:
		return "too_many";
	case 501:
		return "not_supported";
	case 502:
		return "sandbox_gone";
	case 503:
		return "unavailable";
	case 504:
		return "timeout";
	case 505:
		return "http_version";
	case 507:
		return "no_space";
	default:
		return "internal";
	}
}

const char *srv_rpc_code(int code)
{
	switch (srv_http_status(code)) {
	case 400:
		return "invalid_argument";
	case 401:
		return "unauthenticated";
	case 403:
		return "permission_denied";
	case 404:
		return "not_found";
	case 409:
		return "already_exists";
	case 413:
	case 429:
	case 507:
		return "resource_exhausted";
	case 501:
		return "unimplemented";
	case 502:
	case 503:
		return "unavailable";
	case 504:
		return "deadline_exceeded";
	default:
		return "internal";
	}
}

/* envd's streaming RPCs answer errors in the stream's end, with status 200 (Connect). */
static bool streaming_rpc(const struct req *r)
{
	return r->m.route == SR_ROUTE_ENVD_RPC &&
	       (strcmp(r->m.name, "process.Process/Start") == 0 ||
		strcmp(r->m.name, "process.Process/Connect") == 0);
}

static void answer_error_text(struct req *r, int code, const char *msg)
{
	unsigned status = srv_http_status(code);
	json_t *j;

	if (r->m.family == SR_API_V1) {
		j = json_pack("{ssso}", "code", v1_code(status), "message", sr_json_string(msg));
	} else if (r->m.route == SR_ROUTE_ENVD_RPC) {
		j = json_pack("{ssso}", "code", srv_rpc_code(code), "message", sr_json_string(msg));
		if (j && streaming_rpc(r)) {
			_cleanup_free_ char *text = NULL;
			json_t *end = json_pack("{so}", "error", j);
			unsigned char hdr[5];
			struct MHD_Response *resp = NULL;
			char *buf;

			if (end && sr_json_dump_line(end, &text) == 0 &&
			    (buf = malloc(strlen(text) + 5))) {
				sr_connect_header(SR_CONNECT_END_STREAM, strlen(text), hdr);
				memcpy(buf, hdr, 5);
				memcpy(buf + 5, text, strlen(text));
				resp =
				    srv_response(buf, strlen(text) + 5, "application/connect+json");
				free(buf);
			}
			if (end)
				json_decref(end);
			return srv_answer(r, MHD_HTTP_OK, resp);
		}
	} else {
		j = json_pack("{siso}", "code", (int)status, "message", sr_json_string(msg));
	}
	srv_answer_json(r, status, j);
}

void srv_answer_error(struct req *r, int code, const char *fmt, ...)
{
	char msg[SR_ERROR_MSG_MAX + 64];
	int n = snprintf(msg, sizeof(msg), "sandbox-run: ");
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg + n, sizeof(msg) - (size_t)n, fmt, ap);
	va_end(ap);
	answer_error_text(r, code, msg);
}

void srv_answer_err(struct req *r, const char *verb, const struct sr_error *err)
{
	if (verb)
		srv_answer_error(r, err->code ? err->code : -EIO, "%s: %s", verb, err->msg);
	else
		srv_answer_error(r, err->code ? err->code : -EIO, "%s", err->msg);
}

void srv_profile_error(struct srv *s, const char *verb, const char *field, const char *noun,
		       const char *name, struct sr_error *err)
{
	const char *of = field ? field : "", *sep = field ? ": " : "";

	if (err->kind != SR_ERROR_PROFILE_MISSING && err->kind != SR_ERROR_PROFILE_BROKEN)
		return;
	/* A path the client gave that is not there: the path is all it says, and the client's. */
	if (err->kind == SR_ERROR_PROFILE_MISSING && strchr(name, '/'))
		return;
	if (err->kind == SR_ERROR_PROFILE_MISSING) {
		sr_info(srv_sink(s), "serve: %s: %s", verb, err->msg);
		sr_error_msg(err, -ENOENT, "%s%sno %s \"%s\" on this server", of, sep, noun, name);
		return;
	}
	/* The operator's to mend, who may not run with -v. */
	sr_warn(srv_sink(s), "serve: %s: %s", verb, err->msg);
	/* A client's own file (a path) is the request's fault; one of the server's is not. */
	sr_error_msg(err, strchr(name, '/') ? -EINVAL : -EIO,
		     "%s%s%s \"%s\" is broken on this server (its log says why)", of, sep, noun,
		     name);
}

/*
 * What a connection handed to libmicrohttpd carries (its socket context):
 * the listener it came on, and whether it is another user's (counted
 * until it closes). libmicrohttpd owns it from its STARTED notice, which
 * comes inside MHD_add_connection(), and tells its CLOSED, also when it
 * gives up on the connection after STARTED: freed then, before
 * MHD_add_connection() returns (srv_add_connection() looks at s->adding,
 * never at the tag, to know).
 */
struct conn_tag {
	const struct listener *l;
	bool foreign;
};

struct token_check {
	const char *want; /* NULL: no token (no TCP listener) */
	bool ok;
};

/*
 * One header of the request: one that may show the token is compared (in
 * constant time), then wiped where it is. libmicrohttpd keeps a request's
 * head where it read it, in the connection's buffer, until the request is
 * over (a buffer it moves is zeroed behind it, and so is the buffer for
 * the next request), and a keeper forked meanwhile -- a pool's refill
 * while an invocation streams its answer -- would hold the token there.
 */
static enum MHD_Result token_header(void *cls, enum MHD_ValueKind kind, const char *key,
				    const char *value)
{
	static const char *const keys[] = {MHD_HTTP_HEADER_AUTHORIZATION, "X-API-Key",
					   "X-Access-Token"};
	struct token_check *t = cls;

	(void)kind;
	for (size_t i = 0; value && i < SR_ARRAY_SIZE(keys); i++) {
		const char *v = value;
		unsigned char diff = 0;

		if (strcasecmp(key, keys[i]) != 0)
			continue;
		if (i == 0)
			v = strncasecmp(v, "Bearer ", 7) == 0 ? v + 7 : NULL;
		if (v && t->want && strlen(v) == strlen(t->want)) {
			for (size_t k = 0; t->want[k]; k++)
				diff |= (unsigned char)(v[k] ^ t->want[k]);
			t->ok |= diff == 0;
		}
		explicit_bzero((char *)value, strlen(value));
		break;
	}
	return MHD_YES;
}

/* The token, if this request needs one (TCP) and shows it. */
static bool token_ok(struct req *r)
{
	struct token_check t = {.want = r->s->token};

	sr_mhd.get_connection_values(r->conn, MHD_HEADER_KIND, token_header, &t);
	/*
	 * The Unix socket's peer is the server's user (server-listen.c);
	 * anything else shows the token.
	 */
	return t.ok || (r->via && r->via->is_unix);
}

/* What a route takes in: an upload streamed into a sandbox, or JSON read whole. */
static bool is_upload(const struct req *r)
{
	return r->m.route == SR_ROUTE_SB_FILES_PUT || r->m.route == SR_ROUTE_ENVD_FILES_POST;
}

/*
 * How much past its bound a body is read and dropped before the 413
 * (drain_first): what a client's oversized request may cost the server
 * to read, a fraction of a second on a local connection.
 */
#define DRAIN_MAX (64ull << 20)

/*
 * Whether a body of len, over r->max, is read (and dropped) before the
 * 413 rather than answered at once. A client that waits to be told to
 * send it (Expect: 100-continue, as curl past 1 MiB) is answered at once.
 * Any other is sending it already, and closing the connection with it
 * unread has the kernel reset it: a client that writes its whole body
 * before it reads (Python's http.client and urllib) would get a broken
 * pipe instead of the 413 that says which bound it passed. Past
 * DRAIN_MAX, the connection is not worth what reading the rest costs.
 */
static bool drain_first(struct req *r, unsigned long long len)
{
	const char *expect = srv_header(r, MHD_HTTP_HEADER_EXPECT);

	if (expect && strcasecmp(expect, "100-continue") == 0)
		return false;
	return len - r->max <= DRAIN_MAX;
}

/* The first call: headers only. Answers now what can be answered without the body. */
static void begin(struct req *r)
{
	const char *len = srv_header(r, MHD_HTTP_HEADER_CONTENT_LENGTH);
	const char *path = r->url;

	sr_route(r->method, path, &r->m);
	if (!token_ok(r))
		return srv_answer_error(
		    r, MHD_HTTP_UNAUTHORIZED,
		    "serve: a token is needed on TCP (Authorization: Bearer TOKEN; the token is "
		    "in the file serve printed)");
	if (r->nul)
		return srv_answer_error(r, -EINVAL,
					"serve: a NUL byte (%%00) in the request's target");
	/* envd's requests name their sandbox in a header: one URL serves them all. */
	if (r->m.family == SR_API_ENVD) {
		const char *id = srv_header(r, "E2b-Sandbox-Id");

		if (id && sr_route_valid_ref(id))
			snprintf(r->m.id, sizeof(r->m.id), "%s", id);
		else if (r->m.route != SR_ROUTE_NONE && r->m.route != SR_ROUTE_UNSUPPORTED)
			return srv_answer_error(r, -EINVAL,
						"serve: the E2b-Sandbox-Id header is needed (E2B's "
						"SDK sends it)");
	}
	/* An invocation's body is its prompt, read whole (bounded as an exec's output). */
	r->max = is_upload(r)			 ? r->s->o.max_upload
		 : r->m.route == SR_ROUTE_INVOKE ? r->s->o.max_output
						 : r->s->o.max_body;
	if (len && strtoull(len, NULL, 10) > r->max) {
		if (!drain_first(r, strtoull(len, NULL, 10)))
			return srv_answer_error(r, -EMSGSIZE,
						"serve: the request's body is over %llu bytes",
						(unsigned long long)r->max);
		/* dispatch() answers 413 once the body is in; body_data() drops it. */
		r->overflow = r->drain = true;
		return;
	}
	if (r->m.route == SR_ROUTE_BAD_METHOD) {
		srv_answer_error(r, MHD_HTTP_METHOD_NOT_ALLOWED, "serve: %s %s: use %s", r->method,
				 path, r->m.allow);
		if (r->resp)
			sr_mhd.add_response_header(r->resp, MHD_HTTP_HEADER_ALLOW, r->m.allow);
		return;
	}
	if (is_upload(r) && !sr_api_upload_begin(r))
		return;
}

static void dispatch(struct req *r)
{
	if (r->overflow)
		return srv_answer_error(r, -EMSGSIZE,
					"serve: the request's body is over %llu bytes",
					(unsigned long long)r->max);
	if (r->up)
		return sr_api_upload_end(r);
	switch (r->m.route) {
	case SR_ROUTE_NONE:
		return srv_answer_error(r, -ENOENT, "serve: %s %s: no such resource (docs/api.md)",
					r->method, r->url);
	case SR_ROUTE_UNSUPPORTED:
		return srv_answer_error(r, -ENOTSUP,
					"serve: %s %s: not supported by sandbox-run serve (the "
					"list is in docs/api.md)",
					r->method, r->url);
	default:
		break;
	}
	switch (r->m.family) {
	case SR_API_V1:
		return sr_api_v1(r);
	case SR_API_E2B:
		return sr_api_e2b(r);
	default:
		return sr_api_envd(r);
	}
}

static enum MHD_Result queue(struct req *r)
{
	enum MHD_Result ret = sr_mhd.queue_response(r->conn, r->status, r->resp);

	sr_mhd.destroy_response(r->resp);
	r->resp = NULL;
	return ret;
}

/* n bytes of the body: how many were taken (an upload may leave some for later). */
static size_t body_data(struct req *r, const char *data, size_t n)
{
	if (r->up)
		return sr_api_upload_data(r, data, n);
	if (r->overflow || r->len + n > r->max) {
		r->overflow = true;
		return n;
	}
	if (SR_GROW(r->body, r->cap, r->len + n + 1, 4096) < 0) {
		r->overflow = true;
		return n;
	}
	memcpy(r->body + r->len, data, n);
	r->len += n;
	r->body[r->len] = '\0';
	return n;
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *conn, const char *url,
				  const char *method, const char *version, const char *upload,
				  size_t *upload_size, void **con_cls)
{
	struct srv *s = cls;
	struct req *r = *con_cls;

	if (!r || !r->begun) {
		const union MHD_ConnectionInfo *ci =
		    sr_mhd.get_connection_info(conn, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
		const struct conn_tag *tag;
		bool nul = r && r->nul;

		if (!r && !(r = calloc(1, sizeof(*r))))
			return MHD_NO;
		*r = (struct req){.s = s,
				  .conn = conn,
				  .url = url,
				  .method = method,
				  .nul = nul,
				  .http10 = version && strcmp(version, MHD_HTTP_VERSION_1_0) == 0};
		r->begun = true;
		tag = ci ? ci->socket_context : NULL;
		r->via = tag ? tag->l : NULL;
		*con_cls = r;
		begin(r);
		return r->resp ? queue(r) : MHD_YES;
	}
	if (r->gone)
		return MHD_NO;
	if (r->resp)
		return queue(r);
	if (*upload_size) {
		/* What an upload left waits in libmicrohttpd's buffer, to come again. */
		*upload_size -= body_data(r, upload, *upload_size);
		/*
		 * Past the bound with no length said (a length over it is answered
		 * 413 before the body, or after it: drain_first): the rest is not
		 * read, the connection is closed (libmicrohttpd takes no answer in
		 * the middle of a body).
		 */
		if (r->overflow && !r->drain)
			return MHD_NO;
		return r->resp ? queue(r) : MHD_YES;
	}
	if (r->suspended)
		return MHD_YES;
	if (!r->dispatched) {
		r->dispatched = true;
		dispatch(r);
	}
	if (r->resp)
		return queue(r);
	if (!r->suspended) {
		srv_answer_error(r, -EIO, "serve: nothing answered %s %s", method, url);
		return queue(r);
	}
	return MHD_YES;
}

static void on_completed(void *cls, struct MHD_Connection *conn, void **con_cls,
			 enum MHD_RequestTerminationCode toe)
{
	struct req *r = *con_cls;

	(void)cls;
	(void)conn;
	(void)toe;
	if (!r)
		return;
	srv_unwatch(r->s, &r->hup);
	client_gone(r);
	if (r->resp)
		sr_mhd.destroy_response(r->resp);
	/* What it carried is not left in memory that a keeper forked later would copy. */
	if (r->body)
		explicit_bzero(r->body, r->cap);
	free(r->body);
	free(r);
	*con_cls = NULL;
}

/*
 * The request's target as it came, before libmicrohttpd decodes it in
 * place: a %00 there ends the decoded path or argument early, so that
 * "DELETE /v1/sandboxes/ID%00/files?path=x" would remove the sandbox, and
 * "?path=run.sh%00.txt" write run.sh. Noted here, refused by begin().
 */
static void *on_uri(void *cls, const char *uri, struct MHD_Connection *conn)
{
	struct req *r = calloc(1, sizeof(*r));

	(void)conn;
	if (r) {
		r->s = cls;
		r->nul = strstr(uri, "%00") != NULL;
	}
	return r;
}

static void on_connection(void *cls, struct MHD_Connection *conn, void **socket_context,
			  enum MHD_ConnectionNotificationCode toe)
{
	struct srv *s = cls;
	struct conn_tag *t;

	(void)conn;
	if (toe == MHD_CONNECTION_NOTIFY_STARTED) {
		/* Taken: libmicrohttpd's from now (NULL says so to srv_add_connection()). */
		t = steal_pointer(&s->adding);
		*socket_context = t;
	} else if (toe == MHD_CONNECTION_NOTIFY_CLOSED && (t = *socket_context)) {
		if (t->foreign)
			srv_foreign_closed(s);
		free(t);
		*socket_context = NULL;
	}
}

static void on_log(void *cls, const char *fmt, va_list ap)
{
	struct srv *s = cls;
	char msg[512];

	vsnprintf(msg, sizeof(msg), fmt, ap);
	msg[strcspn(msg, "\n")] = '\0';
	sr_debug(s->o.sink, "serve: libmicrohttpd: %s", msg);
}

static void on_mhd_ready(struct srv *s, void *ctx, uint32_t events)
{
	(void)s;
	(void)ctx;
	(void)events;
	/* MHD_run() follows every round of events. */
}

void srv_add_connection(struct srv *s, const struct listener *l, int fd, bool foreign)
{
	struct sockaddr_storage ss;
	socklen_t len = sizeof(ss);
	struct conn_tag *t = calloc(1, sizeof(*t));
	enum MHD_Result r;
	bool taken;

	if (!t || getpeername(fd, (struct sockaddr *)&ss, &len) < 0) {
		free(t);
		close(fd);
		if (foreign)
			srv_foreign_closed(s);
		return;
	}
	*t = (struct conn_tag){.l = l, .foreign = foreign};
	s->adding = t;
	/* It closes fd itself if it cannot take it (its connection limit). */
	r = sr_mhd.add_connection(s->mhd, fd, (struct sockaddr *)&ss, len);
	taken = !s->adding;
	s->adding = NULL;
	if (r == MHD_NO && !taken) {
		if (foreign)
			srv_foreign_closed(s);
		free(t);
	}
}

int srv_http_start(struct srv *s, struct sr_error *err)
{
	const union MHD_DaemonInfo *di;

	s->mhd = sr_mhd.start_daemon(
	    MHD_USE_NO_LISTEN_SOCKET | MHD_USE_EPOLL | MHD_ALLOW_SUSPEND_RESUME | MHD_USE_ERROR_LOG,
	    0, NULL, NULL, on_request, s, MHD_OPTION_CONNECTION_LIMIT,
	    (unsigned)s->o.max_connections, MHD_OPTION_CONNECTION_TIMEOUT,
	    (unsigned)s->o.client_timeout_s, MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)HEAD_MAX,
	    MHD_OPTION_URI_LOG_CALLBACK, on_uri, s, MHD_OPTION_NOTIFY_COMPLETED, on_completed, s,
	    MHD_OPTION_NOTIFY_CONNECTION, on_connection, s, MHD_OPTION_EXTERNAL_LOGGER, on_log, s,
	    MHD_OPTION_END);
	if (!s->mhd)
		return sr_error_msg(err, -EIO, "serve: libmicrohttpd would not start");
	di = sr_mhd.get_daemon_info(s->mhd, MHD_DAEMON_INFO_EPOLL_FD);
	if (!di)
		return sr_error_msg(err, -EIO, "serve: libmicrohttpd has no epoll fd");
	s->mhd_w = srv_watch(s, di->epoll_fd, EPOLLIN, on_mhd_ready, NULL);
	return s->mhd_w ? 0 : sr_error_errno(err, -ENOMEM, "serve");
}

void srv_http_stop(struct srv *s)
{
	if (!s->mhd)
		return;
	srv_unwatch(s, &s->mhd_w);
	sr_mhd.stop_daemon(s->mhd);
	s->mhd = NULL;
}
