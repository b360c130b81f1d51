/* SPDX-License-Identifier: MIT */
/*
 * The resolver's TCP clients (resolver-internal.h): connections from the
 * sandbox, accepted up to CLIENTS_MAX, read one query at a time, and
 * their replies written with the length in front (RFC 1035 4.2.2).
 */
#include "resolver-internal.h"

#include <poll.h>

void resolver_client_close(struct client *cl)
{
	sr_closep(&cl->fd);
	cl->fd = -1;
	free(cl->out);
	cl->out = NULL;
	cl->in_len = cl->out_len = cl->out_sent = 0;
	cl->busy = false;
}

/* A reply for the client, written as its socket drains. */
void resolver_client_reply(struct client *cl, const uint8_t *msg, size_t len)
{
	cl->busy = false;
	if (cl->fd < 0 || len == 0)
		return;
	free(cl->out);
	cl->out = malloc(len + 2);
	if (!cl->out) {
		resolver_client_close(cl);
		return;
	}
	cl->out[0] = (uint8_t)(len >> 8);
	cl->out[1] = (uint8_t)len;
	memcpy(cl->out + 2, msg, len);
	cl->out_len = len + 2;
	cl->out_sent = 0;
	cl->idle_deadline = now_ms() + CLIENT_IDLE_MS;
}

void resolver_on_accept(struct resolver *rs)
{
	int fd = accept4(FD_TCP, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);

	if (fd < 0)
		return;
	for (size_t i = 0; i < CLIENTS_MAX; i++) {
		if (rs->cl[i].fd >= 0)
			continue;
		rs->cl[i].fd = fd;
		rs->cl[i].idle_deadline = now_ms() + CLIENT_IDLE_MS;
		return;
	}
	close(fd);
}

/* The length of the client's next query: the two bytes in front of it (in_len >= 2). */
static size_t query_len(const struct client *cl)
{
	return (size_t)cl->in[0] << 8 | cl->in[1];
}

/* Whether a whole query of the client's was read and waits to be taken. */
static bool query_read(const struct client *cl)
{
	return cl->in_len >= 2 && cl->in_len >= 2 + query_len(cl);
}

/* A TCP client's bytes: a query once its length has come. */
void resolver_on_client(struct resolver *rs, size_t i, short revents)
{
	struct client *cl = &rs->cl[i];
	ssize_t k;

	if (cl->out && (revents & POLLOUT)) {
		k = send(cl->fd, cl->out + cl->out_sent, cl->out_len - cl->out_sent,
			 MSG_DONTWAIT | MSG_NOSIGNAL);
		if (k < 0 && errno != EAGAIN) {
			resolver_client_close(cl);
			return;
		}
		cl->out_sent += k > 0 ? (size_t)k : 0;
		if (cl->out_sent == cl->out_len) {
			free(cl->out);
			cl->out = NULL;
		}
	}
	if (cl->busy || cl->out)
		return;
	/*
	 * A query read already goes first: what is read next may be the
	 * client's end (it sent A and AAAA, then shut its side), which closes
	 * it.
	 */
	if (!query_read(cl) && (revents & (POLLIN | POLLHUP | POLLERR))) {
		k = recv(cl->fd, cl->in + cl->in_len, sizeof(cl->in) - cl->in_len, MSG_DONTWAIT);
		if (k == 0 || (k < 0 && errno != EAGAIN)) {
			resolver_client_close(cl);
			return;
		}
		cl->in_len += k > 0 ? (size_t)k : 0;
		cl->idle_deadline = now_ms() + CLIENT_IDLE_MS;
	}
	/*
	 * One query at a time; the next one the client sent meanwhile is
	 * taken once this one's reply has gone, from what was read already:
	 * a client may send several before it reads (RFC 7766 6.2.1.1; glibc
	 * sends A and AAAA together), and nothing more may come to wake it.
	 */
	while (cl->fd >= 0 && !cl->busy && !cl->out && cl->in_len >= 2) {
		size_t want = query_len(cl);
		struct origin o = {.client = (int)i};
		uint8_t query[QUERY_IN_MAX];

		if (want > QUERY_IN_MAX) {
			resolver_client_close(cl);
			return;
		}
		if (cl->in_len < 2 + want)
			return;
		/* Taken off first: a reply that cannot be kept closes the client. */
		memcpy(query, cl->in + 2, want);
		memmove(cl->in, cl->in + 2 + want, cl->in_len - 2 - want);
		cl->in_len -= 2 + want;
		resolver_on_query(rs, query, want, &o);
	}
}
