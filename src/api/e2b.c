/* SPDX-License-Identifier: MIT */
/*
 * E2B, as the official SDK (the e2b npm package) speaks it, pointed at
 * serve with E2B_API_URL and E2B_SANDBOX_URL (docs/api.md):
 *
 *   control plane  POST /sandboxes (v2), GET /sandboxes[/ID] (v2 list),
 *                  DELETE /sandboxes/ID, POST /sandboxes/ID/timeout,
 *                  POST /sandboxes/ID/connect, .../refreshes
 *   envd           GET /health, GET and POST /files, and Connect RPCs:
 *                  process.Process/Start (a stream), SendSignal, List;
 *                  filesystem.Filesystem/ListDir, Stat, MakeDir, Remove
 *
 * envd's requests name their sandbox in the E2b-Sandbox-Id header (one
 * URL serves every sandbox). Everything else E2B has answers "not
 * supported", in the format its SDK reads, at once.
 */
#include "internal.h"
#include "server.h"
#include "state.h"
#include "util.h"

#include <ctype.h>
#include <time.h>

/* The API-made record of id, or the state file's, as E2B's sandbox detail. */
static json_t *detail(struct req *r, const char *id, json_t *state)
{
	struct made *m = srv_made_find(r->s, id);
	/* One made before the server was started again: what its create gave, as kept. */
	json_t *saved = m ? NULL : srv_made_saved(r->s, id);
	json_t *meta = m ? m->metadata : json_object_get(saved, "metadata");
	const char *stmpl = json_string_value(json_object_get(saved, "template"));
	json_t *limits = json_object_get(state, "limits"), *j;
	json_t *mem = json_object_get(limits, "memory_bytes"),
	       *disk = json_object_get(limits, "disk_bytes");
	json_t *cpus = json_object_get(limits, "cpus"),
	       *expires = json_object_get(state, "expires");
	json_t *created = json_object_get(state, "created");
	const char *profile = json_string_value(json_object_get(state, "profile"));
	const char *tmpl = m && m->template ? m->template
			   : stmpl	    ? stmpl
			   : profile	    ? profile
					    : "default";
	char domain[80] = "";

	if (r->via && !r->via->is_unix)
		snprintf(domain, sizeof(domain), "localhost:%d", r->via->port);
	j = json_pack(
	    "{sssssssssssssIsIsIsossssso}", "sandboxID", id, "templateID", tmpl, "alias", tmpl,
	    "clientID", "sandbox-run", "startedAt",
	    json_is_string(created) ? json_string_value(created) : "", "endAt",
	    json_is_string(expires) ? json_string_value(expires) : "9999-12-31T00:00:00Z",
	    "cpuCount",
	    (json_int_t)(json_is_number(cpus) ? json_number_value(cpus) + 0.999
					      : sysconf(_SC_NPROCESSORS_ONLN)),
	    "memoryMB", json_is_integer(mem) ? json_integer_value(mem) >> 20 : (json_int_t)0,
	    "diskSizeMB", json_is_integer(disk) ? json_integer_value(disk) >> 20 : (json_int_t)0,
	    "metadata", json_is_object(meta) ? json_incref(meta) : json_object(), "state",
	    "running", "envdVersion", SR_API_ENVD_VERSION, "domain",
	    domain[0] ? json_string(domain) : json_null());
	if (j)
		json_object_set_new(j, "envdAccessToken",
				    r->via && !r->via->is_unix ? json_string(r->s->token)
							       : json_null());
	if (saved)
		json_decref(saved);
	return j;
}

static int hex(char c)
{
	return isdigit((unsigned char)c) ? c - '0' : tolower((unsigned char)c) - 'a' + 10;
}

/*
 * One percent-decoding, as Go's url.QueryUnescape does it ('+' a space,
 * a bad escape refused; here a NUL too, which no metadata holds): E2B's
 * API decodes the list's metadata filter twice more after the query
 * string's own (the SDK encodes each key and value, then the pairs, then
 * the parameter).
 */
static char *unescape(const char *in, size_t len)
{
	char *out = malloc(len + 1), *o = out;

	for (size_t i = 0; out && i < len; i++) {
		if (in[i] == '+') {
			*o++ = ' ';
		} else if (in[i] != '%') {
			*o++ = in[i];
		} else if (i + 2 < len && isxdigit((unsigned char)in[i + 1]) &&
			   isxdigit((unsigned char)in[i + 2]) &&
			   (in[i + 1] != '0' || in[i + 2] != '0')) {
			*o++ = (char)(hex(in[i + 1]) << 4 | hex(in[i + 2]));
			i += 2;
		} else {
			free(out);
			return NULL;
		}
	}
	if (out)
		*o = '\0';
	return out;
}

/* ?metadata=K=V&K=V (as the query string's decoding left it): {K: V}; NULL when malformed. */
static json_t *metadata_filter(const char *q)
{
	_cleanup_free_ char *all = unescape(q, strlen(q));
	json_t *f = json_object();
	char *p = all;

	if (!all || !f)
		goto bad;
	while (*p) {
		size_t n = strcspn(p, "&");
		char *eq = memchr(p, '=', n);
		_cleanup_free_ char *k = NULL, *v = NULL;

		/* Exactly one '=' in each pair, as E2B's API takes them. */
		if (!eq || memchr(eq + 1, '=', n - (size_t)(eq - p) - 1))
			goto bad;
		k = unescape(p, (size_t)(eq - p));
		v = unescape(eq + 1, n - (size_t)(eq - p) - 1);
		if (!k || !v || json_object_set_new(f, k, json_string(v)) < 0)
			goto bad;
		p += n;
		if (*p == '&' && !*++p)
			goto bad;
	}
	return f;
bad:
	if (f)
		json_decref(f);
	return NULL;
}

/* ?state=running,paused: whether running ones are asked for; -EINVAL for another state. */
static int want_running(const char *states)
{
	bool running = !states || !*states;

	for (const char *s = states; s && *s; s += strspn(s, ",")) {
		size_t len = strcspn(s, ",");

		if (len == 7 && strncmp(s, "running", 7) == 0)
			running = true;
		else if (!(len == 6 && strncmp(s, "paused", 6) == 0))
			return -EINVAL;
		s += len;
	}
	return running;
}

/* Whether d (a sandbox's detail) has every pair of filter in its metadata, and template tmpl. */
static bool matches(json_t *d, json_t *filter, const char *tmpl)
{
	json_t *meta = json_object_get(d, "metadata"), *want;
	const char *key;

	json_object_foreach (filter, key, want)
		if (!json_equal(json_object_get(meta, key), want))
			return false;
	return !tmpl || !*tmpl ||
	       sr_streq(json_string_value(json_object_get(d, "templateID")), tmpl);
}

static int64_t created_ns(const struct sr_entry *e)
{
	return (int64_t)json_integer_value(json_object_get(e->state, "created_ns"));
}

/* Newest first, then by id: the order of E2B's pages. */
static int newest_first(const void *pa, const void *pb)
{
	const struct sr_entry *a = pa, *b = pb;
	int64_t x = created_ns(a), y = created_ns(b);

	return x != y ? (x < y ? 1 : -1) : strcmp(a->id, b->id);
}

/*
 * A page: ?limit= (1 or more, at most E2B's 100), after ?nextToken=
 * (X-Next-Token's NS-ID). /v2's pages are of 100 unless asked; the
 * unversioned GET /sandboxes, which older SDKs call and whose answer they
 * take for the whole list (they read no X-Next-Token), is whole unless
 * ?limit= is given.
 */
struct page {
	size_t limit;
	bool after;
	long long ns;
	char id[33];
};

static int parse_page(struct req *r, struct page *p)
{
	const char *limit = srv_arg(r, "limit"), *tok = srv_arg(r, "nextToken"), *id;
	char *end;

	*p = (struct page){.limit = strncmp(r->url, "/v2/", 4) == 0 ? 100 : SIZE_MAX};
	if (limit) {
		if (!*limit || strlen(limit) > 9 || strspn(limit, "0123456789") != strlen(limit) ||
		    atol(limit) < 1)
			return -EINVAL;
		p->limit = (size_t)(atol(limit) < 100 ? atol(limit) : 100);
	}
	if (!tok || !*tok)
		return 0;
	errno = 0;
	p->ns = strtoll(tok, &end, 10);
	id = end + 1;
	if (end == tok || *end != '-' || errno || !*id || strlen(id) >= sizeof(p->id) ||
	    strspn(id, "0123456789abcdef") != strlen(id))
		return -EINVAL;
	snprintf(p->id, sizeof(p->id), "%s", id);
	p->after = true;
	return 0;
}

static bool past(const struct page *p, const struct sr_entry *e)
{
	int64_t ns = created_ns(e);

	return !p->after || ns < p->ns || (ns == p->ns && strcmp(e->id, p->id) > 0);
}

/*
 * GET /v2/sandboxes: the running ones (none is ever paused here: no
 * ?state=paused one), their metadata holding every pair of ?metadata=,
 * of ?template= when given; a warm sandbox is no one's yet. Newest
 * first, ?limit= of them (E2B's 100 at most), the next page's start in
 * X-Next-Token, which the SDK sends back as ?nextToken=.
 */
static void list(struct req *r)
{
	const char *q = srv_arg(r, "metadata"), *tmpl = srv_arg(r, "template");
	int running = want_running(srv_arg(r, "state"));
	json_t *filter = q && *q ? metadata_filter(q) : json_object(), *a;
	struct sr_entry *v = NULL, *last = NULL;
	struct sr_error err = {0};
	struct page page;
	size_t n = 0;
	bool more = false;
	char next[64];

	if (!filter || running < 0 || parse_page(r, &page) < 0) {
		if (filter)
			json_decref(filter);
		return srv_answer_error(r, -EINVAL,
					"list: expected ?metadata=KEY=VALUE&... (each encoded), "
					"?state=running,paused, ?limit=N, ?nextToken=TOKEN (as "
					"X-Next-Token said)");
	}
	if (running && sr_state_list(srv_statedir(r->s), &v, &n, &err) < 0) {
		json_decref(filter);
		return srv_answer_err(r, "ls", &err);
	}
	if (n)
		qsort(v, n, sizeof(*v), newest_first);
	a = json_array();
	for (size_t i = 0; a && i < n && !more; i++) {
		json_t *d =
		    v[i].state && !srv_warm_held(r->s, v[i].id, v[i].state) && past(&page, &v[i])
			? detail(r, v[i].id, v[i].state)
			: NULL;

		if (d && matches(d, filter, tmpl)) {
			more = json_array_size(a) == page.limit;
			if (!more) {
				json_array_append(a, d);
				last = &v[i];
			}
		}
		if (d)
			json_decref(d);
	}
	/* The page's last, whence the next page goes on. */
	if (more && last)
		snprintf(next, sizeof(next), "%lld-%s", (long long)created_ns(last), last->id);
	sr_entries_free(v, n);
	json_decref(filter);
	if (!a)
		return srv_answer_error(r, -ENOMEM, "serve: out of memory");
	srv_answer_json(r, MHD_HTTP_OK, a);
	if (more && last && r->resp)
		sr_mhd.add_response_header(r->resp, "X-Next-Token", next);
}

static void created(struct req *r, const char *id, const struct sr_error *err)
{
	struct sr_entry e = {0};
	struct sr_error ferr = {0};

	if (!id)
		return srv_answer_err(r, NULL, err);
	if (sr_state_find(srv_statedir(r->s), id, &e, &ferr) < 0)
		return srv_answer_err(r, NULL, &ferr);
	srv_made_state(r->s, id, e.state);
	srv_answer_json(r, MHD_HTTP_CREATED, detail(r, id, e.state));
	sr_entry_free(&e);
}

static void create(struct req *r)
{
	json_t *body = srv_body_json(r);
	struct sr_api_create c = {0};
	struct sr_error err = {0};
	_cleanup_free_ char *tmpl = NULL;

	if (!body)
		return;
	if (sr_api_parse_e2b_create(body, srv_opts(r->s)->e2b_profile, &c, &err) < 0) {
		json_decref(body);
		return srv_answer_err(r, "create", &err);
	}
	tmpl = json_is_string(json_object_get(body, "templateID"))
		   ? strdup(json_string_value(json_object_get(body, "templateID")))
		   : strdup("base");
	json_decref(body);
	srv_create(r, &c, tmpl, created);
}

static void get(struct req *r)
{
	struct sr_entry e = {0};
	struct sr_error err = {0};

	if (srv_state_find(r->s, r->m.id, &e, &err) < 0)
		return srv_answer_err(r, NULL, &err);
	srv_answer_json(r, MHD_HTTP_OK, detail(r, e.id, e.state));
	sr_entry_free(&e);
}

static void no_content(struct req *r, json_t *reply, const struct sr_error *err, void *ctx)
{
	if (!reply)
		return srv_answer_err(r, ctx, err);
	if (r->m.route == SR_ROUTE_E2B_KILL)
		srv_made_forget(r->s, r->m.id);
	srv_answer_empty(r, MHD_HTTP_NO_CONTENT);
}

static void connected(struct req *r, json_t *reply, const struct sr_error *err, void *ctx)
{
	(void)ctx;
	if (!reply)
		return srv_answer_err(r, "timeout", err);
	get(r);
}

/* E2B's SandboxTimeoutDefault: what a refresh keeps a sandbox alive for at least. */
#define E2B_REFRESH_MIN_S 15

/*
 * POST .../timeout {"timeout": s}: the deadline set to s from now, shorter
 * too, and 0 is now (E2B expires the sandbox; to the keeper 0 ms would be
 * no deadline at all, so 1 ms). .../refreshes {"duration": s} (15 s if
 * absent, at least 15) and .../connect {"timeout": s} only extend: a
 * sandbox made for an hour keeps its hour through the SDK's connect(),
 * which asks for its default 300 s.
 */
static void timeout(struct req *r, const char *key, call_done_fn done)
{
	json_t *body = srv_body_json(r), *t, *req;
	bool refresh = r->m.route == SR_ROUTE_E2B_REFRESH;
	struct sr_error err = {0};
	json_int_t ms;

	if (!body)
		return;
	t = json_object_get(body, key);
	if (r->m.route == SR_ROUTE_E2B_CONNECT && !t) {
		json_decref(body);
		return get(r);
	}
	if ((t || !refresh) && (!json_is_integer(t) || json_integer_value(t) < 0 ||
				json_integer_value(t) > 10ll * 365 * 86400)) {
		json_decref(body);
		return srv_answer_error(r, -EINVAL, "timeout: expected {\"%s\": seconds}", key);
	}
	ms = (t ? json_integer_value(t) : 0) * 1000;
	json_decref(body);
	if (refresh && ms < E2B_REFRESH_MIN_S * 1000)
		ms = E2B_REFRESH_MIN_S * 1000;
	if (r->m.route == SR_ROUTE_E2B_TIMEOUT && ms == 0)
		ms = 1;
	req = json_pack("{sssIsb}", "op", "timeout", "ms", ms, "extend",
			r->m.route != SR_ROUTE_E2B_TIMEOUT);
	if (req && srv_call(r, r->m.id, req, NULL, 0, done, "timeout", &err) < 0)
		srv_answer_err(r, NULL, &err);
	if (req)
		json_decref(req);
}

void sr_api_e2b(struct req *r)
{
	json_t *req;
	struct sr_error err = {0};

	switch (r->m.route) {
	case SR_ROUTE_E2B_CREATE:
		return create(r);
	case SR_ROUTE_E2B_LIST:
		return list(r);
	case SR_ROUTE_E2B_GET:
		return get(r);
	case SR_ROUTE_E2B_KILL:
		req = json_pack("{sssb}", "op", "rm", "force", 1);
		if (req && srv_call(r, r->m.id, req, NULL, 0, no_content, "rm", &err) < 0)
			srv_answer_err(r, NULL, &err);
		if (req)
			json_decref(req);
		return;
	case SR_ROUTE_E2B_TIMEOUT:
		return timeout(r, "timeout", no_content);
	case SR_ROUTE_E2B_REFRESH:
		return timeout(r, "duration", no_content);
	case SR_ROUTE_E2B_CONNECT:
		return timeout(r, "timeout", connected);
	default:
		return srv_answer_error(r, -ENOTSUP, "serve: %s %s: not supported", r->method,
					r->url);
	}
}

/* A Connect request's message: the body (unary, application/json) or its first envelope. */
static json_t *rpc_message(struct req *r)
{
	const char *type = srv_header(r, MHD_HTTP_HEADER_CONTENT_TYPE), *msg = r->body;
	size_t len = r->len;
	json_t *j = NULL;

	if (type && strncmp(type, "application/connect+json", 24) == 0 &&
	    sr_connect_unwrap(r->body ? r->body : "", r->len, &msg, &len) < 0) {
		srv_answer_error(r, -EINVAL, "serve: not a Connect envelope");
		return NULL;
	}
	if (len == 0)
		return json_object();
	if (sr_json_parse(msg, len, JSON_REJECT_DUPLICATES, SR_API_JSON_DEPTH, &j) < 0 ||
	    !json_is_object(j)) {
		if (j)
			json_decref(j);
		srv_answer_error(r, -EINVAL, "serve: the message is not a JSON object");
		return NULL;
	}
	return j;
}

static void start(struct req *r, json_t *msg)
{
	const char *timeout = srv_header(r, "Connect-Timeout-Ms");
	struct sr_api_exec x = {0};
	struct sr_error err = {0};

	/*
	 * Connect's deadline: up to 10 digits of ms (0: none, as the SDK's
	 * timeoutMs 0). Anything else is refused: strtoull took "-1" for no
	 * deadline at all, "5s" for 5 ms.
	 */
	if (timeout &&
	    (!*timeout || strlen(timeout) > 10 || strspn(timeout, "0123456789") != strlen(timeout)))
		return srv_answer_error(r, -EINVAL,
					"exec: Connect-Timeout-Ms: expected a number of ms");
	if (sr_api_parse_envd_start(msg, SR_API_HOME, &x, &err) < 0)
		return srv_answer_err(r, "exec", &err);
	if (timeout)
		x.timeout_ms = strtoull(timeout, NULL, 10);
	sr_api_exec(r, &x, true);
	sr_api_exec_free(&x);
}

static void filesystem(struct req *r, const char *method, json_t *msg)
{
	json_t *depth = json_object_get(msg, "depth");
	_cleanup_free_ char *path =
	    sr_api_envd_path(json_string_value(json_object_get(msg, "path")));

	if (!path)
		return srv_answer_error(r, -EINVAL, "%s: a path is needed", method);
	if (strcmp(method, "ListDir") == 0) {
		if (json_is_integer(depth) && json_integer_value(depth) > 1)
			return srv_answer_error(r, -ENOTSUP,
						"ListDir: depth %lld: sandbox-run serve lists one "
						"level (depth 1)",
						(long long)json_integer_value(depth));
		return sr_api_files_list(r, r->m.id, path, false, true);
	}
	if (strcmp(method, "Stat") == 0)
		return sr_api_files_list(r, r->m.id, path, true, true);
	if (strcmp(method, "MakeDir") == 0)
		return sr_api_files_mkdir(r, r->m.id, path);
	if (strcmp(method, "Remove") == 0)
		return sr_api_files_simple(r, r->m.id, "file_remove", path);
	srv_answer_error(r, -ENOTSUP,
			 "filesystem.Filesystem/%s: not supported by sandbox-run serve", method);
}

static void health(struct req *r)
{
	struct sr_entry e = {0};
	struct sr_error err = {0};

	/* 502 is how envd's proxy says the sandbox is not running (the SDK's isRunning). */
	if (srv_state_find(r->s, r->m.id, &e, &err) < 0)
		return srv_answer_error(r, MHD_HTTP_BAD_GATEWAY, "%s", err.msg);
	sr_entry_free(&e);
	srv_answer_empty(r, MHD_HTTP_NO_CONTENT);
}

void sr_api_envd(struct req *r)
{
	const char *rpc = r->m.name, *slash;
	json_t *msg;

	if (!r->m.id[0])
		return srv_answer_error(
		    r, -EINVAL,
		    "serve: the E2b-Sandbox-Id header is needed (E2B's SDK sends "
		    "it)");
	switch (r->m.route) {
	case SR_ROUTE_ENVD_HEALTH:
		return health(r);
	case SR_ROUTE_ENVD_FILES_GET:
		return sr_api_envd_files(r);
	case SR_ROUTE_ENVD_RPC:
		break;
	default:
		return srv_answer_error(r, -ENOTSUP, "serve: %s %s: not supported", r->method,
					r->url);
	}
	msg = rpc_message(r);
	if (!msg)
		return;
	slash = strchr(rpc, '/');
	if (strncmp(rpc, "process.Process/", 16) == 0) {
		if (strcmp(slash + 1, "Start") == 0)
			start(r, msg);
		else if (strcmp(slash + 1, "SendSignal") == 0)
			sr_api_envd_signal(r, msg);
		else if (strcmp(slash + 1, "List") == 0)
			sr_api_envd_list(r);
		else
			srv_answer_error(r, -ENOTSUP,
					 "%s: not supported by sandbox-run serve (docs/api.md)",
					 rpc);
	} else {
		filesystem(r, slash + 1, msg);
	}
	json_decref(msg);
}
