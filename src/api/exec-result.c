/* SPDX-License-Identifier: MIT */
/*
 * An exec's end as /v1 answers it: one JSON object (exit_code, status,
 * signal, the output when buffered, wall_ms, the record), an NDJSON
 * stream's last event, or a warm invocation's stdout with headers.
 */
#include "exec-internal.h"
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
