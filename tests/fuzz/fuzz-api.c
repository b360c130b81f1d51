/* SPDX-License-Identifier: MIT */
/*
 * The API's request parsing and routing (src/api/route.c, body.c): what
 * serve does with a request before any sandbox is touched. The input is
 * a method, a path and a Host, one per line, then a body; the body is
 * also taken whole as a request head (the preview's Host sniffing) and
 * as a Connect envelope. Every parser gets the input as a client would
 * send it, and what each header promises is checked:
 *
 *   route      a match names a valid ref and a port of 1-65535; a
 *              405 says which methods there are
 *   create     argv is "create", then options; an AGENT comes last and is
 *              no option; a poolable request has nothing but a profile
 *              and a timeout. E2B's: its profile is the base one or a
 *              name (no '/', no ".."); allow_internet_access other than
 *              true or nothing is refused, or --net none
 *   exec       argv is 1..4096 non-empty strings; every env entry is K=V
 *   base64     decode(encode(x)) == x
 *   utf-8      the whole prefix ends at a sequence's start
 */
#include "fuzz-common.h"

#include "body.h"
#include "preview-scan.h"
#include "relay.h"
#include "route.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	return 0;
}

/* The next line of *p (NUL-terminated in place), or NULL at the end. */
static char *next_line(char **p, char *end)
{
	char *s = *p, *nl;

	if (s >= end)
		return NULL;
	nl = memchr(s, '\n', (size_t)(end - s));
	if (!nl)
		return NULL;
	*nl = '\0';
	*p = nl + 1;
	return s;
}

static void check_route(const char *method, const char *path)
{
	struct sr_route_match m;

	sr_route(method, path, &m);
	FUZZ_CHECK(m.route >= SR_ROUTE_NONE && m.route < _SR_ROUTE_MAX);
	FUZZ_CHECK(m.family < _SR_API_FAMILY_MAX);
	if (m.id[0])
		FUZZ_CHECK(sr_route_valid_ref(m.id));
	if (m.route == SR_ROUTE_SB_PORT)
		FUZZ_CHECK(m.port >= 1 && m.port <= 65535);
	if (m.route == SR_ROUTE_BAD_METHOD)
		FUZZ_CHECK(m.allow && m.allow[0]);
	if (m.route == SR_ROUTE_ENVD_RPC)
		FUZZ_CHECK(strchr(m.name, '/') != NULL);
}

static void check_e2b_create(json_t *body, const struct sr_api_create *c)
{
	json_t *net = json_object_get(body, "allow_internet_access");
	bool none = false;

	FUZZ_CHECK(c->profile && c->argv.n >= 3 && strcmp(c->argv.items[1], "--profile") == 0);
	FUZZ_CHECK(strcmp(c->profile, "e2b") == 0 ||
		   (c->profile[0] && !strchr(c->profile, '/') && !strstr(c->profile, "..")));
	for (size_t i = 1; i + 1 < c->argv.n; i++)
		none = none || (strcmp(c->argv.items[i], "--net") == 0 &&
				strcmp(c->argv.items[i + 1], "none") == 0);
	/* A user who asked for no internet never has it: any value but true is refused, or none. */
	FUZZ_CHECK(!net || json_is_null(net) || json_is_true(net) || none);
	if (c->has_timeout)
		FUZZ_CHECK(c->timeout_ms > 0 && c->timeout_ms <= SR_DEADLINE_MAX_MS);
}

static void check_create(json_t *body, bool e2b)
{
	struct sr_api_create c;
	struct sr_error err = {0};
	int r = e2b ? sr_api_parse_e2b_create(body, "e2b", &c, &err)
		    : sr_api_parse_create(body, &c, &err);

	FUZZ_CHECK(r == 0 || r == -EINVAL || r == -ENOTSUP || r == -ENOMEM);
	if (r < 0) {
		FUZZ_CHECK(err.msg[0] != '\0');
		return;
	}
	FUZZ_CHECK(c.argv.n >= 1 && strcmp(c.argv.items[0], "create") == 0);
	FUZZ_CHECK(c.argv.items[c.argv.n] == NULL);
	/* An AGENT is the last word and never an option getopt would take. */
	if (!e2b && json_is_string(json_object_get(body, "agent")))
		FUZZ_CHECK(c.argv.items[c.argv.n - 1][0] != '-');
	if (c.poolable && !e2b)
		for (size_t i = 1; i < c.argv.n; i += 2)
			FUZZ_CHECK(strcmp(c.argv.items[i], "--profile") == 0 ||
				   strcmp(c.argv.items[i], "--timeout") == 0);
	if (e2b)
		check_e2b_create(body, &c);
	sr_api_create_free(&c);
}

static void check_exec(json_t *body, bool envd)
{
	struct sr_api_exec x;
	struct sr_error err = {0};
	int r = envd ? sr_api_parse_envd_start(body, "/home/user", &x, &err)
		     : sr_api_parse_exec(body, &x, &err);
	size_t i;
	json_t *e;

	FUZZ_CHECK(r == 0 || r == -EINVAL || r == -ENOTSUP || r == -ENOMEM);
	if (r < 0)
		return;
	FUZZ_CHECK(json_array_size(x.argv) >= 1 && json_array_size(x.argv) <= 4096);
	json_array_foreach (x.argv, i, e)
		FUZZ_CHECK(json_is_string(e) && json_string_value(e)[0]);
	json_array_foreach (x.env, i, e) {
		const char *kv = json_string_value(e);

		FUZZ_CHECK(kv && strchr(kv, '=') && kv[0] != '=');
	}
	if (envd)
		FUZZ_CHECK(x.cwd && x.cwd[0] == '/');
	sr_api_exec_free(&x);
}

/*
 * A preview's client sending data in two reads, cut where its first byte
 * says, as the relay feeds the scan (what it holds back in front of the
 * next read): what goes is never more than was given, what is held back
 * fits the relay's room for it, and no piece that went holds the token.
 */
static void check_preview_scan(const char *data, size_t size)
{
	static const char token[] =
	    "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";
	struct sr_preview_scan sc;
	size_t cut = size ? (unsigned char)data[0] % (size + 1) : 0, held = 0;
	char *buf = malloc(size + 1);
	ssize_t go;

	if (!buf)
		abort();
	sr_api_preview_scan_init(&sc, "8000-abcd.localhost:8049", token);
	memcpy(buf, data, cut);
	go = sr_api_preview_scan(&sc, buf, cut);
	if (go >= 0) {
		FUZZ_CHECK((size_t)go <= cut && cut - (size_t)go < SR_RELAY_HOLD_MAX);
		FUZZ_CHECK(!memmem(buf, (size_t)go, token, strlen(token)));
		held = cut - (size_t)go;
		memmove(buf, buf + go, held);
		memcpy(buf + held, data + cut, size - cut);
		go = sr_api_preview_scan(&sc, buf, held + size - cut);
		if (go >= 0)
			FUZZ_CHECK((size_t)go <= held + size - cut &&
				   !memmem(buf, (size_t)go, token, strlen(token)));
	}
	free(buf);
}

static void check_bytes(const char *data, size_t size)
{
	char *enc = malloc(sr_base64_len(size));
	unsigned char *dec = malloc(size + 1);
	const char *msg;
	size_t n, whole;
	char host[128];
	int port;
	char ref[65];

	if (!enc || !dec)
		abort();
	sr_base64_encode(data, size, enc);
	FUZZ_CHECK(sr_base64_decode(enc, strlen(enc), dec, &n) == 0);
	FUZZ_CHECK(n == size && memcmp(dec, data, size) == 0);
	/* Any input, as base64 to decode: no overrun (size * 3 / 4 + 1 bytes are enough). */
	if (sr_base64_decode(data, size, dec, &n) == 0)
		FUZZ_CHECK(n <= size * 3 / 4 + 1);
	whole = sr_utf8_whole(data, size);
	FUZZ_CHECK(whole <= size && size - whole <= 3);
	if (whole < size)
		FUZZ_CHECK(((unsigned char)data[whole] & 0xC0) == 0xC0);
	if (sr_connect_unwrap(data, size, &msg, &n) == 0)
		FUZZ_CHECK(msg == data + 5 && n <= size - 5);
	if (sr_api_sniff_host(data, size, host, sizeof(host)) == 1) {
		FUZZ_CHECK(strlen(host) < sizeof(host));
		if (sr_api_preview_host(host, &port, ref))
			FUZZ_CHECK(port >= 1 && port <= 65535 && sr_route_valid_ref(ref));
	}
	check_preview_scan(data, size);
	free(enc);
	free(dec);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *copy = fuzz_strndup(data, size), *p = copy, *end = copy + size;
	char *method = next_line(&p, end), *path = method ? next_line(&p, end) : NULL;
	char *host = path ? next_line(&p, end) : NULL;
	json_t *body = NULL;
	char ref[65];
	int port;

	check_bytes((const char *)data, size);
	if (method && path)
		check_route(method, path);
	if (host && sr_api_preview_host(host, &port, ref))
		FUZZ_CHECK(port >= 1 && port <= 65535 && sr_route_valid_ref(ref));
	if (host && sr_json_parse(p, (size_t)(end - p), 0, SR_API_JSON_DEPTH, &body) == 0) {
		check_create(body, false);
		check_create(body, true);
		check_exec(body, false);
		check_exec(body, true);
		json_decref(body);
	}
	free(copy);
	return 0;
}
