/* SPDX-License-Identifier: MIT */
/*
 * DNS messages as the sandbox's resolver reads and writes them (RFC 1035;
 * RFC 6891 for EDNS): pure functions over byte buffers. Every byte is an
 * adversary's: queries come from the agent, answers from whoever answers
 * for a name the agent may ask for. So nothing here trusts a length, a
 * count or a compression pointer, and what goes upstream is built anew
 * from the question alone (tests/unit/test-dns.c, tests/fuzz/fuzz-dns.c).
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define SR_DNS_HEADER	12
#define SR_DNS_NAME_MAX 1024 /* a name in presentation form: 255 wire bytes, \DDD escapes */
/* The UDP payload asked of the upstream and offered to the agent (the DNS flag day's). */
#define SR_DNS_UDP_MAX 1232
/* A query's largest size: header, a 255-byte name, type, class, an OPT record. */
#define SR_DNS_QUERY_MAX (SR_DNS_HEADER + 255 + 4 + 11)
#define SR_DNS_ADDRS_MAX 64 /* addresses taken from one answer; more are not opened */
#define SR_DNS_CHAIN_MAX 8  /* names of a CNAME chain, the question's first */

enum sr_dns_rcode {
	SR_DNS_NOERROR = 0,
	SR_DNS_FORMERR = 1,
	SR_DNS_SERVFAIL = 2,
	SR_DNS_NXDOMAIN = 3,
	SR_DNS_NOTIMP = 4,
	SR_DNS_REFUSED = 5,
};

enum sr_dns_type {
	SR_DNS_A = 1,
	SR_DNS_CNAME = 5,
	SR_DNS_AAAA = 28,
	SR_DNS_OPT = 41,
	SR_DNS_IXFR = 251,
	SR_DNS_AXFR = 252,
};

struct sr_dns_query {
	uint16_t id;
	uint16_t flags; /* the header's second 16 bits */
	/* Lower case, no final dot, bytes other than [!-~] and '.' or '\' in a label as \DDD. */
	char name[SR_DNS_NAME_MAX];
	uint16_t qtype, qclass;
	size_t question_len; /* the question's bytes (name, type, class), after the header */
	bool edns;	     /* it carried an OPT record */
	uint16_t udp_size;   /* what the client takes over UDP: 512, or its OPT's (at most ours) */
};

/*
 * Reads a query. 0; -EBADMSG: no query at all (shorter than a header, or a
 * response): answer nothing; -EPROTO: the header is read (id, flags) but
 * the rest is malformed: answer FORMERR; -EOPNOTSUPP: not one standard
 * query (opcode, question count): answer NOTIMP. Names in a question may
 * not be compressed.
 */
int sr_dns_parse_query(const uint8_t *msg, size_t len, struct sr_dns_query *ret);

/*
 * The query to send upstream for q (whose message is msg): a new header
 * (id, recursion desired), q's question as the client wrote it, and an OPT
 * record offering SR_DNS_UDP_MAX. Nothing else of the client's goes on.
 * Its length; buf must hold SR_DNS_QUERY_MAX bytes.
 */
size_t sr_dns_build_query(const uint8_t *msg, const struct sr_dns_query *q, uint16_t id,
			  uint8_t *buf);

struct sr_dns_addr {
	int family; /* AF_INET, AF_INET6 */
	uint8_t addr[16];
	uint32_t ttl; /* as clamped */
};

struct sr_dns_answer {
	uint16_t rcode;
	bool truncated;
	/* The A and AAAA records of the CNAME chain, at most SR_DNS_ADDRS_MAX. */
	size_t n_addrs;
	struct sr_dns_addr addrs[SR_DNS_ADDRS_MAX];
	/* The names the chain runs through: the question's, then each CNAME's target. */
	size_t n_chain;
	char chain[SR_DNS_CHAIN_MAX][SR_DNS_NAME_MAX];
	/*
	 * The chain goes on past what was read (more than SR_DNS_CHAIN_MAX
	 * names, a loop, or more CNAME records than are kept): where it ends,
	 * and whether through a denied name, is not known.
	 */
	bool chain_cut;
	size_t keep_len; /* the message up to its additional section */
};

/*
 * Reads an upstream's answer to the query sent with id for q (msg is q's
 * own message), in place: every TTL of the answer and authority sections
 * is lowered to ttl_max. -EBADMSG if it is no answer to that query (id,
 * question, opcode) or is malformed.
 */
int sr_dns_parse_answer(uint8_t *ans, size_t len, const uint8_t *msg, const struct sr_dns_query *q,
			uint16_t id, uint32_t ttl_max, struct sr_dns_answer *ret);

/*
 * Makes ans (parsed: a) the reply to q, in place (cap bytes): q's id and
 * recursion-desired bit, the additional section dropped (the upstream's
 * OPT and glue), an OPT of ours if q had one; over UDP, if it does not
 * fit q's size, only the question with the truncated bit set. Its length.
 */
size_t sr_dns_finish(uint8_t *ans, size_t cap, const struct sr_dns_answer *a,
		     const struct sr_dns_query *q, bool udp);

/*
 * An answer with rcode and no records to query msg (its first len bytes),
 * read into q by sr_dns_parse_query with result r: with q's question and
 * OPT when r was 0, the header alone otherwise. Its length (0: none to
 * give, r was -EBADMSG); buf must hold SR_DNS_QUERY_MAX bytes.
 */
size_t sr_dns_error(const uint8_t *msg, size_t len, const struct sr_dns_query *q, int r,
		    uint16_t rcode, uint8_t *buf);

/*
 * Whether name (as sr_dns_parse_query gives it) is pattern (a host name,
 * any case, a final dot or not) or, with wildcard, a name beneath it.
 */
bool sr_dns_name_matches(const char *name, const char *pattern, bool wildcard);
