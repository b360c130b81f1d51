/* SPDX-License-Identifier: MIT */
/*
 * invoke through a running server (serve --warm, docs/deploy.md): the
 * prompt read whole, POSTed to /v1/deployments/NAME/invoke on the user's
 * own socket, and the answer's NDJSON events written back as they come:
 * stdout and stderr (base64, every byte as the agent wrote it), then the
 * exit with its record. The same statuses and record as a cold invoke:
 * the keeper's exec makes both.
 *
 * Whatever cannot be served warm (no server, options that name the
 * caller's files or environment, a terminal on stdin, a server that
 * refuses before the agent starts) is run cold by the caller, with the
 * prompt already read put back on stdin (a memfd).
 */
#include "invoke-warm.h"
#include "body.h"
#include "json.h"
#include "result.h"
#include "state.h"
#include "units.h"
#include "util.h"
#include "verbs.h"

#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/un.h>

/* What the server takes as a prompt by default (serve --max-output). */
#define PROMPT_MAX     (16ull << 20)
#define LINE_MAX_BYTES (64u << 20)

/*
 * Options a server can apply as this command would: none names a file, a
 * profile or a variable of the caller's (the server resolves those in its
 * own cwd and environment). --result, -q and -v are this command's own.
 */
static const char *const portable[] = {"memory", "cpus",       "pids",	 "timeout", "disk",
				       "net",	 "net-helper", "allow",	 "deny",    "allow-host",
				       "env",	 "entry",      "strict", NULL};

static bool is_portable(const char *name, size_t len)
{
	for (size_t i = 0; portable[i]; i++)
		if (strlen(portable[i]) == len && strncmp(portable[i], name, len) == 0)
			return true;
	return false;
}

/*
 * argv's options (validated already: sr_options_parse_from) as the
 * server's ?arg= list; false with *why when one is not portable.
 */
static bool portable_args(int argc, char **argv, struct sr_strv *ret, const char **why)
{
	for (int i = 1; i < argc - 1; i++) {
		const char *a = argv[i], *eq;
		size_t len;

		if (a[0] == '-' && a[1] != '-') {
			/* Short options: -q and -v only (any number). */
			if (strspn(a + 1, "qv") != strlen(a + 1)) {
				*why = a;
				return false;
			}
			continue;
		}
		eq = strchr(a, '=');
		len = eq ? (size_t)(eq - a - 2) : strlen(a + 2);
		if (strncmp(a + 2, "result", len) == 0 && len == 6) {
			i += !eq;
			continue;
		}
		if ((len == 5 && strncmp(a + 2, "quiet", 5) == 0) ||
		    (len == 7 && strncmp(a + 2, "verbose", 7) == 0))
			continue;
		if (!is_portable(a + 2, len)) {
			*why = a;
			return false;
		}
		if (sr_strv_push(ret, a) < 0)
			return *why = "(out of memory)", false;
		if (!eq && !(len == 6 && strncmp(a + 2, "strict", 6) == 0)) {
			if (++i >= argc - 1 || sr_strv_push(ret, argv[i]) < 0)
				return *why = a, false;
		}
	}
	return true;
}

/* Reads all of fd (stdin): the prompt, at most PROMPT_MAX. */
static int read_all(int fd, char **ret, size_t *ret_len)
{
	size_t len = 0, cap = 65536;
	char *buf = malloc(cap);

	if (!buf)
		return -ENOMEM;
	for (;;) {
		ssize_t n;

		if (len == cap) {
			char *nb = cap >= PROMPT_MAX ? NULL : realloc(buf, cap * 2);

			if (!nb) {
				*ret = buf;
				*ret_len = len;
				return -EFBIG;
			}
			buf = nb;
			cap *= 2;
		}
		n = SR_RETRY(read(fd, buf + len, cap - len));
		if (n < 0) {
			int e = sr_negerrno();

			*ret = buf;
			*ret_len = len;
			return e;
		}
		if (n == 0)
			break;
		len += (size_t)n;
	}
	*ret = buf;
	*ret_len = len;
	return 0;
}

/* What was read of stdin, and the rest of it, back on fd 0 for a cold run. */
static void put_back(const char *data, size_t len, bool rest)
{
	_cleanup_close_ int fd = memfd_create("prompt", MFD_CLOEXEC);

	if (fd < 0 || sr_write_all(fd, data, len) < 0)
		return;
	if (rest) {
		char buf[65536];
		ssize_t n;

		while ((n = SR_RETRY(read(0, buf, sizeof(buf)))) > 0)
			if (sr_write_all(fd, buf, (size_t)n) < 0)
				return;
	}
	if (lseek(fd, 0, SEEK_SET) == 0)
		(void)dup2(fd, 0);
}

static int connect_server(const char *path)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	int fd;

	if (snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", path) >= (int)sizeof(sa.sun_path))
		return -ENAMETOOLONG;
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return sr_negerrno();
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		int e = sr_negerrno();

		close(fd);
		return e;
	}
	return fd;
}

/* s percent-encoded for a query (RFC 3986's unreserved characters kept). */
static int query_add(char **q, size_t *len, const char *key, const char *s)
{
	size_t n = strlen(key) + 2 + strlen(s) * 3;
	char *nq = realloc(*q, *len + n + 1), *p;

	if (!nq)
		return -ENOMEM;
	*q = nq;
	p = nq + *len;
	p += sprintf(p, "%c%s=", *len ? '&' : '?', key);
	for (const unsigned char *c = (const unsigned char *)s; *c; c++) {
		if ((*c >= 'A' && *c <= 'Z') || (*c >= 'a' && *c <= 'z') ||
		    (*c >= '0' && *c <= '9') || strchr("-._~", *c))
			*p++ = (char)*c;
		else
			p += sprintf(p, "%%%02X", *c);
	}
	*p = '\0';
	*len = (size_t)(p - nq);
	return 0;
}

/* A buffered reader of the answer: the head, then the body (chunked or with a length). */
struct rd {
	int fd;
	char buf[65536];
	size_t off, len;
	bool chunked;
	uint64_t left; /* the chunk's or the body's bytes still to come */
	bool body_end;
	bool has_length;
};

static int rd_fill(struct rd *r)
{
	ssize_t n;

	if (r->off == r->len)
		r->off = r->len = 0;
	if (r->len == sizeof(r->buf)) {
		memmove(r->buf, r->buf + r->off, r->len - r->off);
		r->len -= r->off;
		r->off = 0;
	}
	n = SR_RETRY(read(r->fd, r->buf + r->len, sizeof(r->buf) - r->len));
	if (n < 0)
		return sr_negerrno();
	r->len += (size_t)n;
	return n > 0 ? 1 : 0;
}

/* One line of the head (CRLF cut), in line (cap bytes). */
static int rd_line(struct rd *r, char *line, size_t cap)
{
	for (;;) {
		char *nl = memchr(r->buf + r->off, '\n', r->len - r->off);
		int f;

		if (nl) {
			size_t n = (size_t)(nl - (r->buf + r->off));

			if (n && nl[-1] == '\r')
				n--;
			if (n >= cap)
				return -E2BIG;
			memcpy(line, r->buf + r->off, n);
			line[n] = '\0';
			r->off = (size_t)(nl + 1 - r->buf);
			return 1;
		}
		if ((f = rd_fill(r)) <= 0)
			return f < 0 ? f : -ECONNRESET;
	}
}

/* Up to cap bytes of the body; 0 at its end. */
static ssize_t rd_body(struct rd *r, char *out, size_t cap)
{
	char line[64];
	size_t n;
	int f;

	if (r->body_end)
		return 0;
	if (r->chunked && r->left == 0) {
		f = rd_line(r, line, sizeof(line));
		if (f < 0)
			return f;
		if (!*line && (f = rd_line(r, line, sizeof(line))) < 0)
			return f;
		r->left = strtoull(line, NULL, 16);
		if (r->left == 0) {
			r->body_end = true;
			return 0;
		}
	}
	if (!r->chunked && r->has_length && r->left == 0) {
		r->body_end = true;
		return 0;
	}
	if (r->off == r->len && (f = rd_fill(r)) <= 0) {
		if (f == 0 && !r->chunked && !r->has_length)
			r->body_end = true;
		return f < 0 ? f : r->body_end ? 0 : -ECONNRESET;
	}
	n = r->len - r->off;
	if (n > cap)
		n = cap;
	if ((r->chunked || r->has_length) && n > r->left)
		n = (size_t)r->left;
	memcpy(out, r->buf + r->off, n);
	r->off += n;
	if (r->chunked || r->has_length)
		r->left -= n;
	return (ssize_t)n;
}

/* One NDJSON event: output written, the exit kept. */
static int on_event(const char *line, size_t len, json_t **ret_exit)
{
	json_t *ev = NULL;
	const char *type, *data;
	int r = sr_json_parse(line, len, 0, 16, &ev);

	if (r < 0)
		return r;
	type = json_string_value(json_object_get(ev, "type"));
	data = json_string_value(json_object_get(ev, "data_base64"));
	if ((sr_streq(type, "stdout") || sr_streq(type, "stderr")) && data) {
		size_t dl = strlen(data), n = 0;
		_cleanup_free_ unsigned char *bytes = malloc(dl / 4 * 3 + 3);

		if (bytes && sr_base64_decode(data, dl, bytes, &n) == 0)
			(void)sr_write_all(sr_streq(type, "stdout") ? 1 : 2, bytes, n);
	} else if (sr_streq(type, "exit")) {
		*ret_exit = json_incref(ev);
	}
	json_decref(ev);
	return 0;
}

struct answer {
	unsigned status;
	json_t *exit;  /* the exit event */
	json_t *error; /* a refusal's body ({"code", "message"}) */
	bool started;  /* the agent may have run: no cold run after this */
};

static int read_answer(int fd, struct answer *a)
{
	struct rd r = {.fd = fd};
	char line[8192], chunk[65536];
	_cleanup_free_ char *acc = NULL;
	size_t acc_len = 0, acc_cap = 0;
	ssize_t n;
	int f;

	if ((f = rd_line(&r, line, sizeof(line))) < 0)
		return f;
	if (sscanf(line, "HTTP/1.%*c %u", &a->status) != 1)
		return -EPROTO;
	while ((f = rd_line(&r, line, sizeof(line))) > 0 && *line) {
		if (strncasecmp(line, "Transfer-Encoding:", 18) == 0 && strcasestr(line, "chunked"))
			r.chunked = true;
		else if (strncasecmp(line, "Content-Length:", 15) == 0) {
			r.has_length = true;
			r.left = strtoull(line + 15, NULL, 10);
		}
	}
	if (f < 0)
		return f;
	a->started = a->status == 200;
	while ((n = rd_body(&r, chunk, sizeof(chunk))) > 0) {
		if (acc_len + (size_t)n > LINE_MAX_BYTES)
			return -E2BIG;
		if (SR_GROW(acc, acc_cap, acc_len + (size_t)n + 1, 65536) < 0)
			return -ENOMEM;
		memcpy(acc + acc_len, chunk, (size_t)n);
		acc_len += (size_t)n;
		/* Each whole line an event, as soon as it is here. */
		for (char *nl; a->status == 200 && (nl = memchr(acc, '\n', acc_len));) {
			size_t ln = (size_t)(nl - acc);

			if (ln && on_event(acc, ln, &a->exit) < 0)
				return -EPROTO;
			memmove(acc, nl + 1, acc_len - ln - 1);
			acc_len -= ln + 1;
		}
	}
	if (n < 0)
		return (int)n;
	if (a->status != 200 && acc_len)
		(void)sr_json_parse(acc, acc_len, 0, 8, &a->error);
	return 0;
}

/* argv's portable options and the output wanted: the request's query. */
static int build_query(const struct sr_strv *args, char **ret)
{
	_cleanup_free_ char *query = NULL;
	size_t qlen = 0;
	int r = query_add(&query, &qlen, "output", "base64");

	for (size_t i = 0; r == 0 && i < args->n; i++)
		r = query_add(&query, &qlen, "arg", args->items[i]);
	if (r < 0)
		return r;
	*ret = steal_pointer(&query);
	return 0;
}

/*
 * The server on the user's own socket, connected, with the query that
 * carries argv's options; -1 when this invoke is for a cold start (said on
 * sink: why).
 */
static int connect_warm(int argc, char **argv, const char *name, const struct sr_sink *sink,
			char **ret_sock, char **ret_query)
{
	_cleanup_free_ char *statedir = NULL, *sock = NULL, *query = NULL;
	struct sr_strv args = {0};
	struct sr_error err = {0};
	const char *why = NULL;
	_cleanup_close_ int fd = -1;
	int r;

	if (!portable_args(argc, argv, &args, &why)) {
		sr_info(sink, "invoke %s: %s is the caller's to apply: a cold start", name, why);
		sr_strv_free(&args);
		return -1;
	}
	if (isatty(0)) {
		sr_info(sink, "invoke %s: stdin is a terminal: a cold start", name);
		sr_strv_free(&args);
		return -1;
	}
	if (sr_state_dir(&statedir, &err) < 0 || asprintf(&sock, "%s/serve.sock", statedir) < 0 ||
	    (fd = connect_server(sock)) < 0) {
		sr_info(sink, "invoke %s: no server on %s (sandbox-run serve): a cold start", name,
			sock ? sock : "the state directory");
		sr_strv_free(&args);
		return -1;
	}
	r = build_query(&args, &query);
	sr_strv_free(&args);
	if (r < 0)
		return -1;
	*ret_sock = steal_pointer(&sock);
	*ret_query = steal_pointer(&query);
	return steal_fd(&fd);
}

/*
 * The prompt POSTed to the deployment's invoke, and the answer read into a;
 * -EPROTO for an answer that is neither the events nor a refusal a cold run
 * would make too.
 */
static int post_prompt(int fd, const char *name, const char *query, const char *prompt, size_t plen,
		       struct answer *a)
{
	_cleanup_free_ char *head = NULL;
	int hl, r;

	hl = asprintf(&head,
		      "POST /v1/deployments/%s/invoke%s HTTP/1.1\r\nHost: sandbox-run\r\n"
		      "Accept: application/x-ndjson\r\nContent-Type: application/octet-stream\r\n"
		      "Content-Length: %zu\r\nConnection: close\r\n\r\n",
		      name, query, plen);
	if (hl < 0)
		return -ENOMEM;
	if ((r = sr_write_all(fd, head, (size_t)hl)) < 0 ||
	    (plen && (r = sr_write_all(fd, prompt, plen)) < 0) || (r = read_answer(fd, a)) < 0)
		return r;
	if (a->status != 200 && a->status != 404 && a->status != 400)
		return -EPROTO;
	return 0;
}

/* A refusal a cold run would make too (the deployment went meanwhile): its message. */
static void log_refusal(const json_t *error, const struct sr_sink *sink)
{
	const char *msg = json_string_value(json_object_get(error, "message"));

	sr_sink_log(sink, SR_LOG_ERROR, "%s",
		    msg && strncmp(msg, "sandbox-run: ", 13) == 0 ? msg + 13
		    : msg					  ? msg
								  : "invoke: refused");
}

/* The exit event as a cold run would end: its status, its error, its record. */
static void report_exit(const json_t *exit, const char *name, const char *sock,
			const char *result_path, const struct sr_result_target *target,
			const struct sr_sink *sink, int *ret_status)
{
	struct sr_error err = {0};
	const char *status_text;

	*ret_status = (int)json_integer_value(json_object_get(exit, "exit_code"));
	status_text = json_string_value(json_object_get(exit, "error"));
	if (status_text)
		sr_sink_log(sink, SR_LOG_ERROR, "%s",
			    strncmp(status_text, "sandbox-run: ", 13) == 0 ? status_text + 13
									   : status_text);
	sr_info(sink, "invoke %s: version %lld, warm sandbox %.12s of the server on %s", name,
		(long long)json_integer_value(json_object_get(exit, "version")),
		json_string_value(json_object_get(exit, "sandbox_id")) ?: "?", sock);
	if (result_path) {
		_cleanup_free_ char *text = NULL;
		json_t *record = json_object_get(exit, "record");

		if (!json_is_object(record) || sr_json_dump_line(record, &text) < 0 ||
		    sr_result_target_write_text(target, text, &err) < 0) {
			sr_sink_log(sink, SR_LOG_ERROR, "%s",
				    err.code ? err.msg : "--result: the server sent no record");
			if (*ret_status == 0)
				*ret_status = SR_EXIT_FAILURE;
		}
	}
}

int sr_invoke_warm(int argc, char **argv, const char *name, const struct sr_config *c,
		   const struct sr_sink *sink, int *ret_status)
{
	_cleanup_free_ char *sock = NULL, *query = NULL, *prompt = NULL;
	struct sr_result_target target = SR_RESULT_TARGET_INIT;
	struct answer a = {0};
	struct sr_error err = {0};
	size_t plen = 0;
	_cleanup_close_ int fd = -1;
	int r;

	fd = connect_warm(argc, argv, name, sink, &sock, &query);
	if (fd < 0)
		return 0;
	/* Before the agent runs, as a cold run opens it (result.h). */
	if (c->result_path && sr_result_target_open(c->result_path, &target, &err) < 0) {
		sr_sink_log(sink, SR_LOG_ERROR, "%s", err.msg);
		*ret_status = SR_EXIT_FAILURE;
		return 1;
	}
	r = read_all(0, &prompt, &plen);
	if (r < 0) {
		/* Too long for a server: all of it to the cold run. */
		put_back(prompt ? prompt : "", plen, r == -EFBIG);
		sr_info(sink, "invoke %s: a prompt of over %llu bytes: a cold start", name,
			PROMPT_MAX);
		sr_result_target_close(&target);
		return 0;
	}
	if (post_prompt(fd, name, query, prompt, plen, &a) < 0) {
		if (a.started) {
			/* It may have run: not again. */
			sr_sink_log(sink, SR_LOG_ERROR,
				    "invoke %s: the server's answer was cut short", name);
			*ret_status = SR_EXIT_FAILURE;
			goto out;
		}
		sr_info(sink, "invoke %s: the server did not take it (%u): a cold start", name,
			a.status);
		put_back(prompt, plen, false);
		sr_result_target_close(&target);
		if (a.error)
			json_decref(a.error);
		return 0;
	}
	if (a.status != 200) {
		log_refusal(a.error, sink);
		*ret_status = SR_EXIT_FAILURE;
	} else if (!a.exit) {
		sr_sink_log(sink, SR_LOG_ERROR, "invoke %s: the server's answer had no end", name);
		*ret_status = SR_EXIT_FAILURE;
	} else {
		report_exit(a.exit, name, sock, c->result_path, &target, sink, ret_status);
	}
out:
	sr_result_target_close(&target);
	if (a.exit)
		json_decref(a.exit);
	if (a.error)
		json_decref(a.error);
	return 1;
}
