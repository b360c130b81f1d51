/* SPDX-License-Identifier: MIT */
#include "relay.h"
#include "util.h"

#include <poll.h>
#include <sys/socket.h>

void sr_relay_init(struct sr_relay *r, int a, int b)
{
	r->fd[0] = a;
	r->fd[1] = b;
	for (int i = 0; i < 2; i++)
		r->dir[i].len = r->dir[i].off = 0, r->dir[i].eof = r->dir[i].shut = false;
	r->failed = false;
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

static void fill(struct sr_relay *r, int i)
{
	ssize_t n = read(r->fd[i], r->dir[i].buf, sizeof(r->dir[i].buf));

	if (n > 0) {
		r->dir[i].len = (size_t)n;
		r->dir[i].off = 0;
	} else if (n == 0) {
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
