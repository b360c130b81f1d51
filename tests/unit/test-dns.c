/* SPDX-License-Identifier: MIT */
/* DNS messages as the sandbox's resolver reads and writes them (src/lib/net/dns.h). */
#include "dns.h"
#include "resolver-internal.h"
#include "testutil.h"

#include <arpa/inet.h>
#include <errno.h>
#include <string.h>

/* A message under construction. */
struct msg {
	uint8_t b[4096];
	size_t n;
};

static void u8(struct msg *m, unsigned v)
{
	m->b[m->n++] = (uint8_t)v;
}

static void u16(struct msg *m, unsigned v)
{
	u8(m, v >> 8);
	u8(m, v & 0xff);
}

static void u32(struct msg *m, uint32_t v)
{
	u16(m, v >> 16);
	u16(m, v & 0xffff);
}

static void hdr(struct msg *m, unsigned id, unsigned flags, unsigned qd, unsigned an, unsigned ns,
		unsigned ar)
{
	m->n = 0;
	u16(m, id);
	u16(m, flags);
	u16(m, qd);
	u16(m, an);
	u16(m, ns);
	u16(m, ar);
}

/* "a.b.c" as labels and the root; "" is the root alone. */
static void name(struct msg *m, const char *s)
{
	while (*s) {
		size_t l = strcspn(s, ".");

		u8(m, (unsigned)l);
		memcpy(m->b + m->n, s, l);
		m->n += l;
		s += l + (s[l] == '.');
	}
	u8(m, 0);
}

static void ptr(struct msg *m, unsigned to)
{
	u16(m, 0xc000 | to);
}

static void opt(struct msg *m, unsigned size)
{
	u8(m, 0);
	u16(m, SR_DNS_OPT);
	u16(m, size);
	u32(m, 0);
	u16(m, 0);
}

static void query(struct msg *m, unsigned id, const char *qname, unsigned qtype, bool edns)
{
	hdr(m, id, 0x0100, 1, 0, 0, edns ? 1 : 0);
	name(m, qname);
	u16(m, qtype);
	u16(m, 1);
	if (edns)
		opt(m, 4096);
}

/* An RR header whose rdata comes next: owner as a pointer (to) or a name (s). */
static void rr(struct msg *m, int to, const char *s, unsigned type, uint32_t ttl, unsigned rdlen)
{
	if (to >= 0)
		ptr(m, (unsigned)to);
	else
		name(m, s);
	u16(m, type);
	u16(m, 1);
	u32(m, ttl);
	u16(m, rdlen);
}

START_TEST(test_parse_query)
{
	struct sr_dns_query q;
	struct msg m;

	query(&m, 0x1234, "Api.Example.COM", SR_DNS_A, false);
	ck_assert_int_eq(sr_dns_parse_query(m.b, m.n, &q), 0);
	ck_assert_uint_eq(q.id, 0x1234);
	ck_assert_str_eq(q.name, "api.example.com");
	ck_assert_uint_eq(q.qtype, SR_DNS_A);
	ck_assert_uint_eq(q.qclass, 1);
	ck_assert_uint_eq(q.question_len, 17 + 4);
	ck_assert(!q.edns);
	ck_assert_uint_eq(q.udp_size, 512);

	query(&m, 1, "example.com", SR_DNS_AAAA, true);
	ck_assert_int_eq(sr_dns_parse_query(m.b, m.n, &q), 0);
	ck_assert(q.edns);
	ck_assert_uint_eq(q.udp_size, SR_DNS_UDP_MAX);
	m.b[m.n - 8] = 0; /* the OPT's size: 100, read as 512 */
	m.b[m.n - 7] = 100;
	ck_assert_int_eq(sr_dns_parse_query(m.b, m.n, &q), 0);
	ck_assert_uint_eq(q.udp_size, 512);

	/* Bytes no host name has, escaped; the root. */
	hdr(&m, 1, 0, 1, 0, 0, 0);
	u8(&m, 3);
	u8(&m, 'a');
	u8(&m, '.');
	u8(&m, 0);
	name(&m, "x");
	u16(&m, 16);
	u16(&m, 1);
	ck_assert_int_eq(sr_dns_parse_query(m.b, m.n, &q), 0);
	ck_assert_str_eq(q.name, "a\\046\\000.x");
	query(&m, 1, "", SR_DNS_A, false);
	ck_assert_int_eq(sr_dns_parse_query(m.b, m.n, &q), 0);
	ck_assert_str_eq(q.name, "");
}
END_TEST

START_TEST(test_parse_query_refuses)
{
	struct sr_dns_query q;
	struct msg m;
	char big[300];

	query(&m, 7, "example.com", SR_DNS_A, false);
	ck_assert_int_eq(sr_dns_parse_query(m.b, 11, &q), -EBADMSG);
	m.b[2] |= 0x80; /* a response */
	ck_assert_int_eq(sr_dns_parse_query(m.b, m.n, &q), -EBADMSG);
	m.b[2] = 0x28; /* opcode 5, UPDATE */
	ck_assert_int_eq(sr_dns_parse_query(m.b, m.n, &q), -EOPNOTSUPP);
	ck_assert_uint_eq(q.id, 7);
	query(&m, 7, "example.com", SR_DNS_A, false);
	m.b[5] = 2; /* two questions */
	ck_assert_int_eq(sr_dns_parse_query(m.b, m.n, &q), -EOPNOTSUPP);
	/* Cut short: in the name, in the type. */
	query(&m, 7, "example.com", SR_DNS_A, false);
	ck_assert_int_eq(sr_dns_parse_query(m.b, 16, &q), -EPROTO);
	ck_assert_int_eq(sr_dns_parse_query(m.b, m.n - 1, &q), -EPROTO);
	/* A question's name is never compressed. */
	hdr(&m, 7, 0, 1, 0, 0, 0);
	ptr(&m, 12);
	u16(&m, 1);
	u16(&m, 1);
	ck_assert_int_eq(sr_dns_parse_query(m.b, m.n, &q), -EPROTO);
	/* Longer than 255 bytes on the wire. */
	memset(big, 0, sizeof(big));
	for (size_t i = 0; i < 4 * 64; i += 64) {
		memset(big + i, 'a', 63);
		big[i + 63] = '.';
	}
	big[4 * 64 - 1] = '\0';
	query(&m, 7, big, SR_DNS_A, false);
	ck_assert_int_eq(sr_dns_parse_query(m.b, m.n, &q), -EPROTO);
	/* A label of 64 and the extended label types. */
	hdr(&m, 7, 0, 1, 0, 0, 0);
	u8(&m, 64);
	m.n += 64;
	u8(&m, 0);
	u16(&m, 1);
	u16(&m, 1);
	ck_assert_int_eq(sr_dns_parse_query(m.b, m.n, &q), -EPROTO);
	/* An additional record that runs past the end. */
	query(&m, 7, "example.com", SR_DNS_A, true);
	ck_assert_int_eq(sr_dns_parse_query(m.b, m.n - 1, &q), -EPROTO);
}
END_TEST

START_TEST(test_build_query)
{
	uint8_t out[SR_DNS_QUERY_MAX];
	struct sr_dns_query q;
	struct msg m;
	size_t n;

	/* The client's extra records and flags stay behind. */
	query(&m, 0x1111, "Example.com", SR_DNS_AAAA, true);
	m.b[3] |= 0x10; /* AD */
	ck_assert_int_eq(sr_dns_parse_query(m.b, m.n, &q), 0);
	n = sr_dns_build_query(m.b, &q, 0xbeef, out);
	ck_assert_uint_eq(n, 12 + q.question_len + 11);
	ck_assert_uint_eq(out[0], 0xbe);
	ck_assert_uint_eq(out[1], 0xef);
	ck_assert_uint_eq(out[2], 0x01); /* RD */
	ck_assert_uint_eq(out[3], 0x00);
	ck_assert_uint_eq(out[5], 1);
	ck_assert_uint_eq(out[7] | out[9], 0);
	ck_assert_uint_eq(out[11], 1);
	ck_assert_int_eq(memcmp(out + 12, m.b + 12, q.question_len), 0); /* the case kept */
	ck_assert_uint_eq(out[12 + q.question_len + 2], SR_DNS_OPT);
	ck_assert_uint_eq((out[12 + q.question_len + 3] << 8) | out[12 + q.question_len + 4],
			  SR_DNS_UDP_MAX);
}
END_TEST

/*
 * The answer to "www.example.com A": a CNAME to edge.cdn.example.net, its
 * two A records and an AAAA, an A record of a name off the chain, and an
 * SOA in the authority section; the upstream's OPT in the additional.
 */
static size_t answer(struct msg *m, unsigned id, uint32_t ttl, size_t *ret_soa_ttl)
{
	size_t edge;

	hdr(m, id, 0x8180, 1, 5, 1, 1);
	name(m, "WWW.example.com");
	u16(m, SR_DNS_A);
	u16(m, 1);
	rr(m, 12, NULL, SR_DNS_CNAME, 300, 22);
	edge = m->n;
	name(m, "edge.cdn.example.net");
	rr(m, (int)edge, NULL, SR_DNS_A, ttl, 4);
	u32(m, 0xc0000201);
	rr(m, (int)edge, NULL, SR_DNS_A, 7, 4);
	u32(m, 0xc0000202);
	rr(m, (int)edge, NULL, SR_DNS_AAAA, 7, 16);
	u32(m, 0x20010db8);
	u32(m, 0);
	u32(m, 0);
	u32(m, 1);
	rr(m, -1, "other.example", SR_DNS_A, 7, 4);
	u32(m, 0x0a000001);
	rr(m, (int)edge + 9, NULL, 6, 86400 * 7, 22); /* SOA of cdn.example.net... */
	*ret_soa_ttl = m->n - 6;
	name(m, "ns");
	name(m, "h");
	m->n += 22 - 4 - 3;
	opt(m, 4096);
	return edge;
}

/*
 * A chain whose end the resolver does not read: longer than
 * SR_DNS_CHAIN_MAX names (c0 -> ... -> cN), or after more CNAME records
 * than it keeps (decoys off the chain, first). A client follows it to the
 * end all the same, through a denied name perhaps.
 */
START_TEST(test_chain_cut)
{
	struct sr_dns_answer *a = calloc(1, sizeof(*a));
	struct sr_dns_query q;
	struct msg m, ans;
	char from[32], to[32];
	unsigned decoys;

	query(&m, 0x3333, "c0.example", SR_DNS_A, false);
	ck_assert_int_eq(sr_dns_parse_query(m.b, m.n, &q), 0);
	for (unsigned len = SR_DNS_CHAIN_MAX - 1; len <= SR_DNS_CHAIN_MAX + 1; len++) {
		for (decoys = 0; decoys <= 2 * SR_DNS_CHAIN_MAX; decoys += 2 * SR_DNS_CHAIN_MAX) {
			hdr(&ans, 0x3333, 0x8180, 1, decoys + len + 1, 0, 0);
			name(&ans, "c0.example");
			u16(&ans, SR_DNS_A);
			u16(&ans, 1);
			for (unsigned i = 0; i < decoys; i++) {
				snprintf(from, sizeof(from), "x%u.example", i);
				snprintf(to, sizeof(to), "y%u.example", i);
				rr(&ans, -1, from, SR_DNS_CNAME, 60, (unsigned)strlen(to) + 2);
				name(&ans, to);
			}
			for (unsigned i = 0; i < len; i++) {
				snprintf(from, sizeof(from), "c%u.example", i);
				snprintf(to, sizeof(to), "c%u.example", i + 1);
				rr(&ans, -1, from, SR_DNS_CNAME, 60, (unsigned)strlen(to) + 2);
				name(&ans, to);
			}
			rr(&ans, -1, to, SR_DNS_A, 60, 4);
			u32(&ans, 0xc0000201);
			ck_assert_int_eq(
			    sr_dns_parse_answer(ans.b, ans.n, m.b, &q, 0x3333, 3600, a), 0);
			/* len CNAMEs: len + 1 names, all read only up to SR_DNS_CHAIN_MAX. */
			ck_assert_msg(a->chain_cut == (decoys > 0 || len + 1 > SR_DNS_CHAIN_MAX),
				      "len %u decoys %u", len, decoys);
			if (!a->chain_cut)
				ck_assert_uint_eq(a->n_addrs, 1);
		}
	}
	free(a);
}
END_TEST

START_TEST(test_parse_answer)
{
	struct sr_dns_answer *a = calloc(1, sizeof(*a));
	struct sr_dns_query q;
	struct msg m, ans;
	char text[INET6_ADDRSTRLEN];
	size_t soa_ttl;

	query(&m, 0x2222, "www.example.com", SR_DNS_A, false);
	ck_assert_int_eq(sr_dns_parse_query(m.b, m.n, &q), 0);
	answer(&ans, 0x9999, 0x80000000u, &soa_ttl);
	ck_assert_int_eq(sr_dns_parse_answer(ans.b, ans.n, m.b, &q, 0x9999, 3600, a), 0);
	ck_assert_uint_eq(a->rcode, 0);
	ck_assert(!a->truncated);
	ck_assert_uint_eq(a->n_chain, 2);
	ck_assert(!a->chain_cut);
	ck_assert_str_eq(a->chain[0], "www.example.com");
	ck_assert_str_eq(a->chain[1], "edge.cdn.example.net");
	/* Not other.example's: it is off the chain. */
	ck_assert_uint_eq(a->n_addrs, 3);
	ck_assert_int_eq(a->addrs[0].family, AF_INET);
	ck_assert_str_eq(inet_ntop(AF_INET, a->addrs[0].addr, text, sizeof(text)), "192.0.2.1");
	ck_assert_uint_eq(a->addrs[0].ttl, 0); /* the top bit set: 0 (RFC 2181) */
	ck_assert_uint_eq(a->addrs[1].ttl, 7);
	ck_assert_int_eq(a->addrs[2].family, AF_INET6);
	ck_assert_str_eq(inet_ntop(AF_INET6, a->addrs[2].addr, text, sizeof(text)), "2001:db8::1");
	/* Every TTL at most the bound, in place; the OPT is cut off. */
	ck_assert_uint_eq((ans.b[soa_ttl] << 24 | ans.b[soa_ttl + 1] << 16 |
			   ans.b[soa_ttl + 2] << 8 | ans.b[soa_ttl + 3]),
			  3600);
	ck_assert_uint_eq(a->keep_len, ans.n - 11);

	/* Not an answer to this query: another id, another question, another type. */
	answer(&ans, 0x9999, 60, &soa_ttl);
	ck_assert_int_eq(sr_dns_parse_answer(ans.b, ans.n, m.b, &q, 0x9998, 3600, a), -EBADMSG);
	ans.b[13] = 'x';
	ck_assert_int_eq(sr_dns_parse_answer(ans.b, ans.n, m.b, &q, 0x9999, 3600, a), -EBADMSG);
	answer(&ans, 0x9999, 60, &soa_ttl);
	ans.b[12 + 17 + 1] = SR_DNS_AAAA;
	ck_assert_int_eq(sr_dns_parse_answer(ans.b, ans.n, m.b, &q, 0x9999, 3600, a), -EBADMSG);
	answer(&ans, 0x9999, 60, &soa_ttl);
	ans.b[2] &= 0x7f; /* a query, not an answer */
	ck_assert_int_eq(sr_dns_parse_answer(ans.b, ans.n, m.b, &q, 0x9999, 3600, a), -EBADMSG);
	/* Cut anywhere in the records. */
	for (size_t cut = 12 + q.question_len + 1; cut < ans.n - 11; cut++) {
		answer(&ans, 0x9999, 60, &soa_ttl);
		ck_assert_int_eq(sr_dns_parse_answer(ans.b, cut, m.b, &q, 0x9999, 3600, a),
				 -EBADMSG);
	}
	free(a);
}
END_TEST

START_TEST(test_compression_loops)
{
	struct sr_dns_answer *a = calloc(1, sizeof(*a));
	struct sr_dns_query q;
	struct msg m, ans;
	size_t at;

	query(&m, 1, "x.example", SR_DNS_A, false);
	ck_assert_int_eq(sr_dns_parse_query(m.b, m.n, &q), 0);
	/* A pointer to itself, then one forwards, then two pointing at each other. */
	for (int kind = 0; kind < 3; kind++) {
		hdr(&ans, 1, 0x8180, 1, 1, 0, 0);
		name(&ans, "x.example");
		u16(&ans, 1);
		u16(&ans, 1);
		at = ans.n;
		if (kind == 0) {
			ptr(&ans, (unsigned)at);
		} else if (kind == 1) {
			ptr(&ans, (unsigned)at + 2);
			name(&ans, "x.example");
		} else {
			u8(&ans, 1);
			u8(&ans, 'a');
			ptr(&ans, (unsigned)at + 4);
			ptr(&ans, (unsigned)at);
		}
		u16(&ans, SR_DNS_A);
		u16(&ans, 1);
		u32(&ans, 60);
		u16(&ans, 4);
		u32(&ans, 0x01020304);
		ck_assert_int_eq(sr_dns_parse_answer(ans.b, ans.n, m.b, &q, 1, 3600, a), -EBADMSG);
	}
	/* A CNAME whose target runs past its rdata. */
	hdr(&ans, 1, 0x8180, 1, 1, 0, 0);
	name(&ans, "x.example");
	u16(&ans, 1);
	u16(&ans, 1);
	rr(&ans, 12, NULL, SR_DNS_CNAME, 60, 3);
	name(&ans, "y.example");
	ck_assert_int_eq(sr_dns_parse_answer(ans.b, ans.n, m.b, &q, 1, 3600, a), -EBADMSG);
	free(a);
}
END_TEST

START_TEST(test_finish)
{
	struct sr_dns_answer *a = calloc(1, sizeof(*a));
	struct sr_dns_query q;
	struct msg m, ans;
	size_t soa_ttl, n;

	/* With EDNS: our OPT instead of the upstream's, the client's id. */
	query(&m, 0x4242, "www.example.com", SR_DNS_A, true);
	ck_assert_int_eq(sr_dns_parse_query(m.b, m.n, &q), 0);
	answer(&ans, 0x9999, 60, &soa_ttl);
	ck_assert_int_eq(sr_dns_parse_answer(ans.b, ans.n, m.b, &q, 0x9999, 3600, a), 0);
	n = sr_dns_finish(ans.b, sizeof(ans.b), a, &q, true);
	ck_assert_uint_eq(n, a->keep_len + 11);
	ck_assert_uint_eq(ans.b[0] << 8 | ans.b[1], 0x4242);
	ck_assert_uint_eq(ans.b[7], 5);
	ck_assert_uint_eq(ans.b[11], 1);
	ck_assert_uint_eq(ans.b[n - 9], SR_DNS_OPT);

	/* Without: no OPT at all. */
	query(&m, 0x4243, "www.example.com", SR_DNS_A, false);
	ck_assert_int_eq(sr_dns_parse_query(m.b, m.n, &q), 0);
	answer(&ans, 0x9999, 60, &soa_ttl);
	ck_assert_int_eq(sr_dns_parse_answer(ans.b, ans.n, m.b, &q, 0x9999, 3600, a), 0);
	n = sr_dns_finish(ans.b, sizeof(ans.b), a, &q, true);
	ck_assert_uint_eq(n, a->keep_len);
	ck_assert_uint_eq(ans.b[11], 0);
	ck_assert_uint_eq(ans.b[2] & 0x02, 0);

	/* Too large for 512 bytes over UDP: the question alone, truncated; whole over TCP. */
	answer(&ans, 0x9999, 60, &soa_ttl);
	ck_assert_int_eq(sr_dns_parse_answer(ans.b, ans.n, m.b, &q, 0x9999, 3600, a), 0);
	a->keep_len = 600;
	n = sr_dns_finish(ans.b, sizeof(ans.b), a, &q, true);
	ck_assert_uint_eq(n, 12 + q.question_len);
	ck_assert_uint_eq(ans.b[2] & 0x02, 0x02);
	ck_assert_uint_eq(ans.b[7] | ans.b[9] | ans.b[11], 0);
	a->keep_len = 600;
	ck_assert_uint_eq(sr_dns_finish(ans.b, sizeof(ans.b), a, &q, false), 600);
	free(a);
}
END_TEST

START_TEST(test_error)
{
	uint8_t out[SR_DNS_QUERY_MAX];
	struct sr_dns_query q;
	struct msg m;
	size_t n;
	int r;

	query(&m, 0x5150, "evil.example", 16, true);
	r = sr_dns_parse_query(m.b, m.n, &q);
	ck_assert_int_eq(r, 0);
	n = sr_dns_error(m.b, m.n, &q, r, SR_DNS_REFUSED, out);
	ck_assert_uint_eq(n, 12 + q.question_len + 11);
	ck_assert_uint_eq(out[0] << 8 | out[1], 0x5150);
	ck_assert_uint_eq(out[2], 0x81); /* QR, RD */
	ck_assert_uint_eq(out[3], 0x80 | SR_DNS_REFUSED);
	ck_assert_uint_eq(out[5], 1);
	ck_assert_uint_eq(out[7] | out[9], 0);
	ck_assert_uint_eq(out[11], 1);
	ck_assert_int_eq(memcmp(out + 12, m.b + 12, q.question_len), 0);

	/* Malformed: the header alone; not a query: nothing. */
	r = sr_dns_parse_query(m.b, 20, &q);
	ck_assert_int_eq(r, -EPROTO);
	n = sr_dns_error(m.b, 20, &q, r, SR_DNS_FORMERR, out);
	ck_assert_uint_eq(n, 12);
	ck_assert_uint_eq(out[3] & 0x0f, SR_DNS_FORMERR);
	ck_assert_uint_eq(out[5], 0);
	r = sr_dns_parse_query(m.b, 5, &q);
	ck_assert_uint_eq(sr_dns_error(m.b, 5, &q, r, SR_DNS_FORMERR, out), 0);
}
END_TEST

START_TEST(test_name_matches)
{
	ck_assert(sr_dns_name_matches("api.example.com", "api.example.com", false));
	ck_assert(sr_dns_name_matches("api.example.com", "API.Example.com.", false));
	ck_assert(!sr_dns_name_matches("api.example.com", "example.com", false));
	ck_assert(!sr_dns_name_matches("api.example.com.evil", "api.example.com", false));
	ck_assert(sr_dns_name_matches("api.example.com", "example.com", true));
	ck_assert(sr_dns_name_matches("a.b.c.example.com", "example.com", true));
	ck_assert(!sr_dns_name_matches("example.com", "example.com", true));
	ck_assert(!sr_dns_name_matches("badexample.com", "example.com", true));
	ck_assert(!sr_dns_name_matches("", "example.com", true));
	ck_assert(!sr_dns_name_matches("", "", false));
	ck_assert(!sr_dns_name_matches("x", ".", true));
}
END_TEST

/*
 * The supervisor's ACK finds its query by the id the resolver sent: for
 * every generation, the 16,777,216th query sent upstream and after
 * included (their ACKs were ignored before: every allowed name answered
 * SERVFAIL after 2 s for the rest of a long-lived sandbox's life).
 */
START_TEST(test_ack_id)
{
	static const uint32_t gens[] = {1,	   2,	       0xffffff,  0x1000000,
					0x1000001, 0xabcdef12, UINT32_MAX};

	for (size_t i = 0; i < SR_ARRAY_SIZE(gens); i++) {
		for (size_t slot = 0; slot < PENDING_MAX; slot += 21) {
			uint32_t id = resolver_ack_id(slot, gens[i]);

			ck_assert_msg(resolver_ack_is_for(id, slot, gens[i]), "gen %#x slot %zu",
				      gens[i], slot);
			ck_assert(!resolver_ack_is_for(id, slot, gens[i] + 1));
			ck_assert(!resolver_ack_is_for(id, slot ^ 1, gens[i]));
		}
	}
}
END_TEST

static Suite *dns_suite(void)
{
	Suite *s = suite_create("dns");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, test_parse_query);
	tcase_add_test(tc, test_parse_query_refuses);
	tcase_add_test(tc, test_build_query);
	tcase_add_test(tc, test_parse_answer);
	tcase_add_test(tc, test_chain_cut);
	tcase_add_test(tc, test_compression_loops);
	tcase_add_test(tc, test_finish);
	tcase_add_test(tc, test_error);
	tcase_add_test(tc, test_name_matches);
	tcase_add_test(tc, test_ack_id);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return sr_test_run(dns_suite());
}
