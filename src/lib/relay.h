/* SPDX-License-Identifier: MIT */
/*
 * A byte relay between two connected, non-blocking sockets (a published
 * port: the host's connection and the sandbox's), driven by its owner's
 * poll loop: ask which events each side wants, hand back what came.
 * Each direction has a buffer of its own; an end of one direction is
 * passed on as a shutdown(SHUT_WR) of the other side once its data is
 * out, so half-closed protocols (HTTP/1.0, a client done sending) work.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#define SR_RELAY_BUF	  (64 * 1024)
#define SR_RELAY_HOLD_MAX 128

struct sr_relay {
	int fd[2];
	struct {
		char buf[SR_RELAY_BUF]; /* read from fd[i], to be written to fd[1 - i] */
		size_t len, off;
		bool eof;  /* fd[i] will send no more */
		bool shut; /* and fd[1 - i] was told so */
	} dir[2];
	bool failed;
	/*
	 * Optional: each read from fd[0] is shown to check first, after what
	 * it held back of the reads before. It answers how many of those bytes
	 * go on now; the rest (fewer than SR_RELAY_HOLD_MAX) wait for the next
	 * read, in front of it; -1 ends the relay, nothing of them sent.
	 */
	ssize_t (*check)(void *ctx, const char *buf, size_t len);
	void *check_ctx;
	char held[SR_RELAY_HOLD_MAX];
	size_t held_len;
};

/* A relay of a and b (it owns neither: its owner closes them when it is over), no check. */
void sr_relay_init(struct sr_relay *r, int a, int b);
/* The poll events side i (0: a, 1: b) waits for now (0: none). */
short sr_relay_events(const struct sr_relay *r, int i);
/* After poll: what happened on each side; false once the relay is over (both ends done, or an
 * error). */
bool sr_relay_step(struct sr_relay *r, short revents_a, short revents_b);
