/* SPDX-License-Identifier: MIT */
/*
 * The sandbox's resolver's messages (src/lib/net/dns.h), both hostile:
 * the input is a query (the agent's) and an answer (an upstream's), split
 * at the first two bytes' length. The query is read; what goes upstream
 * is built from it and read back as a query to the same question; the
 * answer is read against it, and the reply made of it. Checked: every
 * address came from an A or AAAA record of the chain, the chain starts at
 * the question's name, a reply over UDP fits the client's size and keeps
 * its id, error replies are well formed.
 */
#include "fuzz-common.h"

#include "dns.h"

#include <errno.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	return 0;
}

static uint16_t get16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

static void check_error_reply(const uint8_t *msg, size_t len, const struct sr_dns_query *q, int r)
{
	uint8_t out[SR_DNS_QUERY_MAX];
	size_t n = sr_dns_error(msg, len, q, r, 5, out);

	if (r == -EBADMSG) {
		FUZZ_CHECK(n == 0);
		return;
	}
	FUZZ_CHECK(n >= SR_DNS_HEADER && n <= SR_DNS_QUERY_MAX);
	FUZZ_CHECK(get16(out) == q->id && (out[2] & 0x80) && (out[3] & 0x0f) == 5);
	FUZZ_CHECK(n <= q->udp_size);
}

static void check_answer(const uint8_t *msg, const struct sr_dns_query *q, const uint8_t *data,
			 size_t size)
{
	struct sr_dns_answer *a = malloc(sizeof(*a));
	uint8_t *ans = malloc(SR_DNS_UDP_MAX * 4 + 64);
	size_t cap = SR_DNS_UDP_MAX * 4 + 64, n;
	uint16_t id;

	if (!a || !ans)
		abort();
	if (size < 2 || size - 2 > cap)
		goto out;
	id = get16(data);
	memcpy(ans, data + 2, size - 2);
	if (sr_dns_parse_answer(ans, size - 2, msg, q, id, 3600, a) < 0)
		goto out;
	FUZZ_CHECK(a->n_chain >= 1 && a->n_chain <= SR_DNS_CHAIN_MAX);
	FUZZ_CHECK(strcmp(a->chain[0], q->name) == 0);
	FUZZ_CHECK(a->n_addrs <= SR_DNS_ADDRS_MAX);
	for (size_t i = 0; i < a->n_addrs; i++) {
		FUZZ_CHECK(a->addrs[i].family == AF_INET || a->addrs[i].family == AF_INET6);
		FUZZ_CHECK(a->addrs[i].ttl <= 3600);
	}
	FUZZ_CHECK(a->keep_len >= SR_DNS_HEADER + q->question_len && a->keep_len <= size - 2);
	n = sr_dns_finish(ans, cap, a, q, true);
	FUZZ_CHECK(n > 0 && n <= q->udp_size && get16(ans) == q->id);
out:
	free(a);
	free(ans);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct sr_dns_query q, back;
	uint8_t up[SR_DNS_QUERY_MAX], *msg;
	size_t qlen, n;
	int r;

	if (size < 2)
		return 0;
	qlen = get16(data);
	if (qlen > size - 2)
		qlen = size - 2;
	/* Exactly qlen bytes on the heap: ASan sees a read past the end. */
	msg = malloc(qlen ? qlen : 1);
	if (!msg)
		abort();
	memcpy(msg, data + 2, qlen);
	r = sr_dns_parse_query(msg, qlen, &q);
	FUZZ_CHECK(r == 0 || r == -EBADMSG || r == -EPROTO || r == -EOPNOTSUPP);
	check_error_reply(msg, qlen, &q, r);
	if (r == 0) {
		FUZZ_CHECK(q.question_len >= 5 && SR_DNS_HEADER + q.question_len <= qlen);
		FUZZ_CHECK(strlen(q.name) < SR_DNS_NAME_MAX);
		FUZZ_CHECK(q.udp_size >= 512 && q.udp_size <= SR_DNS_UDP_MAX);
		n = sr_dns_build_query(msg, &q, 0x1234, up);
		FUZZ_CHECK(n <= SR_DNS_QUERY_MAX);
		/* What goes upstream is a query for the same question, and nothing else. */
		FUZZ_CHECK(sr_dns_parse_query(up, n, &back) == 0);
		FUZZ_CHECK(strcmp(back.name, q.name) == 0 && back.qtype == q.qtype &&
			   back.qclass == q.qclass && back.edns && get16(up + 6) == 0 &&
			   get16(up + 8) == 0 && get16(up + 10) == 1);
		check_answer(msg, &q, data + 2 + qlen, size - 2 - qlen);
	}
	free(msg);
	return 0;
}
