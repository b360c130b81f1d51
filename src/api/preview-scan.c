/* SPDX-License-Identifier: MIT */
/*
 * What a preview's connection says (preview.c relays it): the Host that
 * routes it, and the scan of everything its client sends after that, which
 * keeps another Host's requests and the API's token out of the sandbox.
 * Pure (no I/O), for the fuzz harness (tests/fuzz/fuzz-api.c).
 */
#include "preview-scan.h"
#include "util.h"

#include <ctype.h>
#include <string.h>
#include <strings.h>

bool sr_api_preview_host(const char *host, int *ret_port, char ret_ref[65])
{
	size_t digits = strspn(host, "0123456789"), ref;
	long port;

	if (digits == 0 || digits > 5 || host[0] == '0' || host[digits] != '-')
		return false;
	port = strtol(host, NULL, 10);
	ref = strspn(host + digits + 1,
		     "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-");
	if (port < 1 || port > 65535 || ref == 0 || ref > 64 || host[digits + 1 + ref] != '.')
		return false;
	*ret_port = (int)port;
	snprintf(ret_ref, 65, "%.*s", (int)ref, host + digits + 1);
	return true;
}

int sr_api_sniff_host(const char *buf, size_t len, char *host, size_t hostlen)
{
	const char *p = buf, *end = buf + len, *nl;
	bool first = true;

	while ((nl = memchr(p, '\n', (size_t)(end - p)))) {
		size_t n = (size_t)(nl - p);

		if (n > 0 && p[n - 1] == '\r')
			n--;
		if (first) {
			/* "METHOD TARGET HTTP/1.x" */
			if (n < 14 || memcmp(p + n - 9, " HTTP/1.", 8) != 0)
				return -1;
			first = false;
		} else if (n == 0) {
			return -1;
		} else if (n > 5 && strncasecmp(p, "host:", 5) == 0) {
			const char *v = p + 5, *ve = p + n;

			while (v < ve && (*v == ' ' || *v == '\t'))
				v++;
			while (ve > v && (ve[-1] == ' ' || ve[-1] == '\t'))
				ve--;
			snprintf(host, hostlen, "%.*s", (int)(ve - v), v);
			return 1;
		}
		p = nl + 1;
	}
	return 0;
}

enum { SCAN_LINE_START, SCAN_NAME, SCAN_VALUE, SCAN_OTHER };

void sr_api_preview_scan_init(struct sr_preview_scan *sc, const char *host, const char *token)
{
	*sc = (struct sr_preview_scan){.host = host, .token = token, .state = SCAN_LINE_START};
}

/* A Host line's value whole: the preview's own, spaces and the CR aside. */
static bool scan_host_ok(struct sr_preview_scan *sc)
{
	const char *v = sc->value, *ve = sc->value + sc->value_len;

	while (v < ve && (*v == ' ' || *v == '\t'))
		v++;
	while (ve > v && (ve[-1] == ' ' || ve[-1] == '\t' || ve[-1] == '\r'))
		ve--;
	return sc->value_len < sizeof(sc->value) && strlen(sc->host) == (size_t)(ve - v) &&
	       strncasecmp(sc->host, v, (size_t)(ve - v)) == 0;
}

/*
 * How many bytes at buf's end to hold back: those of an end that may
 * begin the token, SR_PREVIEW_HOLD_MIN characters of it at least, counting
 * the last that went before buf (fewer than that, so all of them are held
 * but for those).
 */
static size_t token_start_at_end(struct sr_preview_scan *sc, const char *buf, size_t len)
{
	size_t n = strlen(sc->token), tail = len < n ? len : n, have;
	char joint[SR_PREVIEW_HOLD_MIN + 128];
	size_t held = 0;

	if (n > 128)
		return 0;
	memcpy(joint, sc->sent, sc->sent_len);
	memcpy(joint + sc->sent_len, buf + len - tail, tail);
	have = sc->sent_len + tail;
	for (size_t k = n - 1 < have ? n - 1 : have; k >= SR_PREVIEW_HOLD_MIN; k--)
		if (memcmp(joint + have - k, sc->token, k) == 0) {
			held = k < len ? k : len;
			break;
		}
	explicit_bzero(joint, sizeof(joint));
	return held;
}

/*
 * Whether the token is in buf, or begins in what went before it (fewer
 * than SR_PREVIEW_HOLD_MIN bytes: more would have been held back).
 */
static bool token_in(struct sr_preview_scan *sc, const char *buf, size_t len)
{
	size_t n = strlen(sc->token), head = len < n ? len : n;
	char joint[SR_PREVIEW_HOLD_MIN + 128];
	bool found;

	if (memmem(buf, len, sc->token, n))
		return true;
	if (sc->sent_len == 0 || n > 128)
		return false;
	memcpy(joint, sc->sent, sc->sent_len);
	memcpy(joint + sc->sent_len, buf, head);
	found = memmem(joint, sc->sent_len + head, sc->token, n) != NULL;
	explicit_bzero(joint, sizeof(joint));
	return found;
}

/* What goes now (buf's first go bytes): its last bytes kept for token_in(). */
static void keep_sent(struct sr_preview_scan *sc, const char *buf, size_t go)
{
	size_t keep =
	    sc->sent_len + go < sizeof(sc->sent) - 1 ? sc->sent_len + go : sizeof(sc->sent) - 1;

	if (go >= keep) {
		memcpy(sc->sent, buf + go - keep, keep);
	} else {
		memmove(sc->sent, sc->sent + sc->sent_len - (keep - go), keep - go);
		memcpy(sc->sent + keep - go, buf, go);
	}
	sc->sent_len = keep;
}

ssize_t sr_api_preview_scan(struct sr_preview_scan *sc, const char *buf, size_t len)
{
	static const char name[] = "host:";
	size_t go = len;

	if (sc->token && *sc->token) {
		if (token_in(sc, buf, len))
			return -1;
		go = len - token_start_at_end(sc, buf, len);
		keep_sent(sc, buf, go);
	}
	for (size_t i = 0; i < go; i++) {
		char c = buf[i];

		switch (sc->state) {
		case SCAN_OTHER: {
			const char *nl = memchr(buf + i, '\n', go - i);

			if (!nl)
				return (ssize_t)go;
			i = (size_t)(nl - buf);
			sc->state = SCAN_LINE_START;
			break;
		}
		case SCAN_LINE_START:
		case SCAN_NAME:
			if (sc->state == SCAN_LINE_START)
				sc->matched = 0;
			if (c == '\n') {
				sc->state = SCAN_LINE_START;
			} else if (tolower((unsigned char)c) == name[sc->matched]) {
				sc->state = ++sc->matched == strlen(name) ? SCAN_VALUE : SCAN_NAME;
				sc->value_len = 0;
			} else {
				sc->state = SCAN_OTHER;
			}
			break;
		case SCAN_VALUE:
			if (c == '\n') {
				if (!scan_host_ok(sc))
					return -1;
				sc->state = SCAN_LINE_START;
			} else if (sc->value_len < sizeof(sc->value)) {
				sc->value[sc->value_len++] = c;
			}
			break;
		}
	}
	return (ssize_t)go;
}
