/* SPDX-License-Identifier: MIT */
#include "relay.h"
#include "util.h"

#include <poll.h>
#include <string.h>
#include <sys/socket.h>

void sr_relay_init(struct sr_relay *r, int a, int b)
{
	r->fd[0] = a;
	r->fd[1] = b;
	for (int i = 0; i < 2; i++)
		r->dir[i].len = r->dir[i].off = 0, r->dir[i].eof = r->dir[i].shut = false;
	r->failed = false;
	r->check = NULL;
	r->check_ctx = NULL;
	r->held_len = 0;
}

short sr_relay_events(const struct sr_relay *r, int i)
{
	short ev = 0;

	if (r->failed)
		return 0;
	/* Read only when the previous read went out: one buffer's worth in flight per direction. */
	if (!r->dir[i].eof && r->dir[i].len == 0)
		ev |= POLLIN;
	if (r->dir[1 - i].len > r->dir[1 - i].off)
		ev |= POLLOUT;
	return ev;
}

/* What fd[0] sent, as check says: some of it now, the rest held for the next read. */
static void checked(struct sr_relay *r, size_t n)
{
	ssize_t k = r->check(r->check_ctx, r->dir[0].buf, n);

	if (k < 0 || n - (size_t)k >= sizeof(r->held)) {
		r->failed = true;
		return;
	}
	r->held_len = n - (size_t)k;
	memcpy(r->held, r->dir[0].buf + k, r->held_len);
	r->dir[0].len = (size_t)k;
	r->dir[0].off = 0;
}

static void fill(struct sr_relay *r, int i)
{
	/* What check held back goes in front (only fd[0]'s: fill comes when dir[0] is empty). */
	size_t held = i == 0 && r->check ? r->held_len : 0;
	ssize_t n;

	memcpy(r->dir[i].buf, r->held, held);
	n = read(r->fd[i], r->dir[i].buf + held, sizeof(r->dir[i].buf) - held);
	if (n > 0 && i == 0 && r->check) {
		checked(r, held + (size_t)n);
	} else if (n > 0) {
		r->dir[i].len = (size_t)n;
		r->dir[i].off = 0;
	} else if (n == 0) {
		/* What was held back never goes: the client sent nothing that completes it. */
		r->held_len = 0;
		r->dir[i].eof = true;
	} else if (errno != EAGAIN && errno != EINTR) {
		r->failed = true;
	}
}

static void drain(struct sr_relay *r, int i)
{
	/* dir[i] goes to fd[1 - i]. */
	ssize_t n = send(r->fd[1 - i], r->dir[i].buf + r->dir[i].off, r->dir[i].len - r->dir[i].off,
			 MSG_NOSIGNAL);

	if (n > 0) {
		r->dir[i].off += (size_t)n;
		if (r->dir[i].off == r->dir[i].len)
			r->dir[i].len = r->dir[i].off = 0;
	} else if (n < 0 && errno != EAGAIN && errno != EINTR) {
		r->failed = true;
	}
}

bool sr_relay_step(struct sr_relay *r, short revents_a, short revents_b)
{
	short rev[2] = {revents_a, revents_b};

	for (int i = 0; i < 2 && !r->failed; i++) {
		/*
		 * A side whose end was read that still says POLLHUP or POLLERR is
		 * gone both ways (closed, reset): nothing more goes to it either.
		 * poll says so at every call, wanted or not: the relay ends, else its
		 * owner's loop would be woken at once, round after round.
		 */
		if ((rev[i] & (POLLHUP | POLLERR)) && r->dir[i].eof) {
			r->failed = true;
			break;
		}
		/* POLLHUP/POLLERR too: the read says what they mean (EOF, or the error). */
		if ((rev[i] & (POLLIN | POLLHUP | POLLERR)) && !r->dir[i].eof && r->dir[i].len == 0)
			fill(r, i);
		/* Sent at once where it fits (the usual case), else when POLLOUT says so. */
		if (!r->failed && r->dir[i].len > 0)
			drain(r, i);
	}
	for (int i = 0; i < 2 && !r->failed; i++)
		if (r->dir[i].eof && r->dir[i].len == 0 && !r->dir[i].shut) {
			shutdown(r->fd[1 - i], SHUT_WR);
			r->dir[i].shut = true;
		}
	return !r->failed && !(r->dir[0].shut && r->dir[1].shut);
}
