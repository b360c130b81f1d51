/* SPDX-License-Identifier: MIT */
/* A preview's connection: its Host, and what its client sends after it (preview-scan.c). */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

/*
 * A preview's Host: "PORT-REF.anything" (E2B's getHost(port): PORT-ID.DOMAIN),
 * the port (1-65535) and the sandbox's ref. false for any other host.
 */
bool sr_api_preview_host(const char *host, int *ret_port, char ret_ref[65]);
/*
 * The Host header of the HTTP request head at buf (len bytes, not all of
 * it may have come): 1 found (host, NUL-terminated, cut to hostlen), 0
 * not yet (the head is not complete), -1 none (a complete head without
 * one, or not HTTP/1).
 */
int sr_api_sniff_host(const char *buf, size_t len, char *host, size_t hostlen);

/*
 * What a preview's client sends, looked at before it goes on: a preview is
 * routed by its connection's first request, and relayed as bytes, but a
 * client that keeps connections by address (urllib3, Go's, Node's agents)
 * sends its next request to 127.0.0.1:PORT on the same connection, an
 * API call with the token among them. The scan refuses a request that
 * names another Host than the preview's, and the token wherever it
 * shows; a Host line or the token in a body is taken for one.
 */
#define SR_PREVIEW_HOST_MAX 256
/* Held back: the end of a read that may begin the token (SR_PREVIEW_HOLD_MIN of it, or more). */
#define SR_PREVIEW_HOLD_MIN 8
struct sr_preview_scan {
	const char *host;  /* the preview's, as its first request named it */
	const char *token; /* NULL: none */
	int state;
	size_t matched; /* of "host:", at a line's start */
	char value[SR_PREVIEW_HOST_MAX];
	size_t value_len;
	char sent[SR_PREVIEW_HOLD_MIN]; /* the last bytes that went: a token's start */
	size_t sent_len;
};
void sr_api_preview_scan_init(struct sr_preview_scan *sc, const char *host, const char *token);
/*
 * The next bytes the client sent (after what the last call held back):
 * how many of them go on now, the rest to come again in front of the
 * next; -1 if they must not reach the sandbox. Held back: an end that may
 * begin the token, from SR_PREVIEW_HOLD_MIN of its characters to all but
 * its last (fewer may go: too few to guess the rest from).
 */
ssize_t sr_api_preview_scan(struct sr_preview_scan *sc, const char *buf, size_t len);
