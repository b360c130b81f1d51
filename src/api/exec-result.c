/* SPDX-License-Identifier: MIT */
/*
 * An exec's end as /v1 answers it: one JSON object (exit_code, status,
 * signal, the output when buffered, wall_ms, the record), an NDJSON
 * stream's last event, or a warm invocation's stdout with headers.
 */
#include "exec-internal.h"
#include "secmem.h"
#include "util.h"

static json_t *text_or_base64(const struct fbuf *b, bool base64)
{
	_cleanup_free_ char *t = NULL;

	/* Text keeps a NUL as \u0000; a byte that is no UTF-8 becomes U+FFFD (base64 keeps it). */
	if (!base64)
		return sr_json_stringn(b->p ? b->p : "", b->len);
	t = malloc(sr_base64_len(b->len));
	if (!t)
		return NULL;
	sr_base64_encode(b->p ? b->p : "", b->len, t);
	return json_string(t);
}

/* The process's end, as a /v1 answer: exit_code, status, signal, output, wall_ms, record. */
json_t *exec_result_json(struct exec_job *x, json_t *ev, const char *error)
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
void exec_answer_raw(struct exec_job *x, json_t *res)
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

/*
 * A buffered exec's answer, its outputs escaped as they are sent. Dumped
 * whole, 16 MiB of NULs on stdout and on stderr were 96 MiB of \u0000
 * each, twice over (jansson's buffer and its copy), and once more as the
 * response's copy: one exec whose output the agent chose took the server
 * 530 MB. The rest of the object is dumped as ever; each output follows
 * it, escaped as jansson escapes (no byte of it is other than UTF-8 by
 * now), a block at a time.
 */
struct lazy {
	json_t *str[2];
	char key[2][24];
	unsigned n, cur; /* strings; the piece being sent (piece()) */
	char *rest;	 /* "{...}\n": the object without the strings */
	size_t rest_len; /* its text before "}\n" */
	size_t off;
};

/* c as jansson writes it in a string: into e (8 bytes), its length. */
static size_t esc(unsigned char c, char e[8])
{
	static const char two[] = "\"\"\\\\\bb\ff\nn\rr\tt";

	if (c >= 0x20 && c != '"' && c != '\\') {
		e[0] = (char)c;
		return 1;
	}
	for (size_t i = 0; i < sizeof(two) - 1; i += 2)
		if (c == (unsigned char)two[i]) {
			e[0] = '\\';
			e[1] = two[i + 1];
			return 2;
		}
	if (c < 0x20)
		return (size_t)snprintf(e, 8, "\\u%04X", c);
	e[0] = (char)c;
	return 1;
}

/* Piece i of l (3 per string: its key's text, its text, its quote; then "}\n"). */
static size_t piece(const struct lazy *l, unsigned i, const char **p, char *tmp)
{
	if (i == 0) {
		*p = l->rest;
		return l->rest_len;
	}
	if (i > 3 * l->n) {
		*p = "}\n";
		return 2;
	}
	i--;
	if (i % 3 == 1) {
		*p = json_string_value(l->str[i / 3]);
		return json_string_length(l->str[i / 3]);
	}
	if (i % 3 == 2) {
		*p = "\"";
		return 1;
	}
	*p = tmp;
	return (size_t)snprintf(tmp, 40, "%s\"%s\":\"", l->rest_len > 1 || i ? "," : "",
				l->key[i / 3]);
}

static ssize_t lazy_read(void *cls, uint64_t pos, char *buf, size_t max)
{
	struct lazy *l = cls;
	size_t n = 0;

	(void)pos; /* MHD reads it in order, once */
	for (; l->cur <= 3 * l->n + 1 && n < max; l->cur++, l->off = 0) {
		char tmp[40], e[8];
		const char *p;
		size_t len = piece(l, l->cur, &p, tmp), k;
		bool text = l->cur > 0 && l->cur <= 3 * l->n && (l->cur - 1) % 3 == 1;

		for (; l->off < len && (k = text ? esc((unsigned char)p[l->off], e) : 1) <= max - n;
		     l->off++, n += k)
			memcpy(buf + n, text ? e : p + l->off, k);
		if (l->off < len)
			break;
	}
	return n ? (ssize_t)n : MHD_CONTENT_READER_END_OF_STREAM;
}

static void lazy_free(void *cls)
{
	struct lazy *l = cls;

	for (unsigned i = 0; i < l->n; i++)
		json_decref(l->str[i]);
	sr_free_wiped(l->rest);
	free(l);
}

/* The answer's length: what lazy_read() sends. */
static uint64_t lazy_len(struct lazy *l)
{
	uint64_t total = 0;
	char tmp[40], e[8];
	const char *p;

	for (unsigned i = 0; i <= 3 * l->n + 1; i++) {
		size_t len = piece(l, i, &p, tmp);

		if (i > 0 && i <= 3 * l->n && (i - 1) % 3 == 1)
			for (size_t k = 0; k < len; k++)
				total += esc((unsigned char)p[k], e);
		else
			total += len;
	}
	return total;
}

void exec_answer_json(struct exec_job *x, json_t *res)
{
	static const char *const keys[] = {"stdout", "stderr", "stdout_base64", "stderr_base64"};
	struct lazy *l = res ? calloc(1, sizeof(*l)) : NULL;
	struct MHD_Response *resp = NULL;

	for (size_t i = 0; l && i < SR_ARRAY_SIZE(keys) && l->n < 2; i++) {
		json_t *s = json_object_get(res, keys[i]);

		if (!json_is_string(s))
			continue;
		snprintf(l->key[l->n], sizeof(l->key[0]), "%s", keys[i]);
		l->str[l->n++] = json_incref(s);
		json_object_del(res, keys[i]);
	}
	if (l && sr_json_dump_line(res, &l->rest) == 0 && (l->rest_len = strlen(l->rest)) >= 3) {
		l->rest_len -= 2; /* "}\n" */
		resp = sr_mhd.create_response_from_callback(lazy_len(l), 64 * 1024, lazy_read, l,
							    lazy_free);
	}
	if (res)
		json_decref(res);
	if (!resp) {
		if (l)
			lazy_free(l);
		return srv_answer(x->job.r, MHD_HTTP_SERVICE_UNAVAILABLE, NULL);
	}
	sr_mhd.add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE, "application/json");
	srv_answer(x->job.r, MHD_HTTP_OK, resp);
}
