/* SPDX-License-Identifier: MIT */
/*
 * The policy's sets (nft.h), from outside the sandbox: the allowed names'
 * addresses added with their timeouts, the refused destinations read back
 * with their counters. Over an nfnetlink socket that PID 1 opened in the
 * sandbox's network namespace during its set-up and handed to the
 * supervisor: a socket speaks to the nftables of the namespace it was
 * made in, and the kernel checks CAP_NET_ADMIN over that namespace both
 * of whoever made it (PID 1 then, uid 0 of the outer user namespace) and
 * of whoever sends (the supervisor, that namespace's owner), never of
 * the agent, which holds it in no namespace that matters (userns.h).
 *
 * A few fixed messages, written by hand (no libnftnl): a batch of
 * NEWSETELEM/DELSETELEM, and a GETSETELEM dump.
 */
#pragma once

#include "log.h"

#include <stddef.h>
#include <stdint.h>

/* An nfnetlink socket in the current network namespace (close-on-exec), or -errno. */
int sr_nfnl_open(void);

struct sr_nfnl_elem {
	int family; /* AF_INET, AF_INET6 */
	uint8_t addr[16];
	uint16_t port;	     /* 0: any port (the allow4/allow6 sets) */
	uint32_t timeout_ms; /* how long it stays: from now, even if it was there */
};

/*
 * Puts elements into the allow sets, each for its timeout from now, in
 * one transaction: every element added, or none. An element already
 * there is replaced, so that its timeout starts again (kernels before
 * 6.10 keep the old one on a second add).
 */
int sr_nfnl_allow(int fd, const struct sr_nfnl_elem *elems, size_t n, struct sr_error *err);

/*
 * Puts addresses the host gained into the host sets (nft.h), for the rest
 * of the run; ports and timeouts are not read. One already there stays.
 */
int sr_nfnl_refuse_host(int fd, const struct sr_nfnl_elem *elems, size_t n, struct sr_error *err);

struct sr_nfnl_refused {
	int family;
	uint8_t addr[16];
	uint8_t proto; /* IPPROTO_TCP, IPPROTO_UDP */
	uint16_t port;
	uint64_t packets;
};

/* Reads the refused sets: at most max entries into ret, their number in *ret_n. */
int sr_nfnl_refused(int fd, struct sr_nfnl_refused *ret, size_t max, size_t *ret_n,
		    struct sr_error *err);

/*
 * The message sr_nfnl_allow sends (pure: unit-tested): into buf (cap
 * bytes), its length in *ret_len and the number of messages that ask for
 * an acknowledgement in *ret_acks, numbered from seq. -ENOBUFS if it does
 * not fit.
 */
int sr_nfnl_allow_batch(const struct sr_nfnl_elem *elems, size_t n, uint32_t seq, uint8_t *buf,
			size_t cap, size_t *ret_len, unsigned *ret_acks);
