/* SPDX-License-Identifier: MIT */
/*
 * What the resolver's parts (resolver.h) share: its fds, its bounds, the
 * state its loop keeps. resolver.c has the process (its start, its
 * confinement, its loop) and the queries (refused, or asked upstream and
 * given once the supervisor has the addresses); resolver-tcp.c the TCP
 * connections from the sandbox (accepted, read a query at a time, their
 * replies written). Nothing here is for any other module: resolver.h is
 * the resolver's face.
 */
#pragma once

#include "resolver.h"
#include "util.h"

#include <stdbool.h>
#include <stdint.h>
#include <sys/socket.h>

/* The fds the resolver runs with. */
enum { FD_UDP = 3, FD_TCP, FD_CTL, FD_FIRST_FREE };

#define PENDING_MAX    64    /* queries in flight; more get SERVFAIL */
#define CLIENTS_MAX    16    /* TCP connections from the sandbox; more are closed */
#define ATTEMPTS       3     /* upstream tries, round robin over the upstreams */
#define ATTEMPT_MS     1200  /* each: 3.6 s in all, under glibc's 5 s */
#define ACK_MS	       2000  /* the supervisor's answer */
#define CLIENT_IDLE_MS 10000 /* a TCP client that says nothing */
#define QUERY_IN_MAX   SR_DNS_UDP_MAX
#define TCP_ANSWER_MAX 65535
#define UDP_ANSWER_MAX 4096

/* A TCP connection from the sandbox. */
struct client {
	int fd; /* -1: free */
	uint8_t in[2 + QUERY_IN_MAX];
	size_t in_len;
	uint8_t *out; /* a reply being written, with its length in front */
	size_t out_len, out_sent;
	bool busy; /* a query of its is pending */
	int64_t idle_deadline;
};

/* Where a query came from: a TCP client's slot, or (-1) a UDP peer. */
struct origin {
	int client;
	struct sockaddr_storage from;
	socklen_t from_len;
};

struct resolver {
	const struct sr_resolver_config *c;
	struct pending *p; /* PENDING_MAX */
	struct client *cl; /* CLIENTS_MAX */
	uint8_t buf[UDP_ANSWER_MAX];
	struct sr_resolver_msg msg;
	uint32_t gen;
};

/*
 * The id of an SR_RESOLVER_ADDRESSES message, which the supervisor's ACK
 * repeats: the query's slot in the low 8 bits, its generation (a count of
 * the queries sent upstream) above, of which 24 bits fit: they are what
 * is compared, or from the 2^24th query on no ACK would be taken.
 */
_Static_assert(PENDING_MAX <= 0x100, "a slot fits the id's low 8 bits");

static inline uint32_t resolver_ack_id(size_t slot, uint32_t gen)
{
	return (uint32_t)slot | gen << 8;
}

/* Whether an ACK's id is for the query in slot whose generation is gen. */
static inline bool resolver_ack_is_for(uint32_t id, size_t slot, uint32_t gen)
{
	return (id & 0xff) == slot && id >> 8 == (gen & 0xffffff);
}

static inline int64_t now_ms(void)
{
	return sr_monotonic_ns() / 1000000;
}

/* resolver.c: a query from the sandbox, refused or sent upstream. */
void resolver_on_query(struct resolver *rs, const uint8_t *msg, size_t len, const struct origin *o);

/* resolver-tcp.c: the TCP clients. */
void resolver_client_close(struct client *cl);
/* The client's query is answered (len 0: with nothing): its reply, written as it drains. */
void resolver_client_reply(struct client *cl, const uint8_t *msg, size_t len);
/* A new connection on FD_TCP: a free slot, or closed. */
void resolver_on_accept(struct resolver *rs);
/* Client i's socket is ready (poll's revents): its reply written, its queries taken. */
void resolver_on_client(struct resolver *rs, size_t i, short revents);
