/* SPDX-License-Identifier: MIT */
#include "nfnl.h"
#include "nft.h"
#include "util.h"

#include <arpa/inet.h>
#include <endian.h>
#include <linux/netfilter.h>
#include <linux/netfilter/nf_tables.h>
#include <linux/netfilter/nfnetlink.h>
#include <linux/netlink.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>

#define ALIGN(n) (((n) + 3u) & ~3u)

/* A message under construction in a caller's buffer. */
struct buf {
	uint8_t *p;
	size_t cap, len;
	bool full;
};

static void *put(struct buf *b, const void *data, size_t n)
{
	size_t at = b->len;

	if (b->full || ALIGN(n) > b->cap - b->len) {
		b->full = true;
		return NULL;
	}
	memset(b->p + at, 0, ALIGN(n));
	if (data)
		memcpy(b->p + at, data, n);
	b->len += ALIGN(n);
	return b->p + at;
}

/* An attribute; a nested one is closed by end_nest() with what put() returned. */
static size_t attr(struct buf *b, uint16_t type, const void *data, size_t n)
{
	struct nlattr a = {.nla_len = (uint16_t)(NLA_HDRLEN + n), .nla_type = type};
	size_t at = b->len;

	put(b, &a, sizeof(a));
	if (n)
		put(b, data, n);
	return at;
}

static size_t nest(struct buf *b, uint16_t type)
{
	return attr(b, NLA_F_NESTED | type, NULL, 0);
}

static void end_nest(struct buf *b, size_t at)
{
	if (!b->full)
		((struct nlattr *)(b->p + at))->nla_len = (uint16_t)(b->len - at);
}

static size_t msg(struct buf *b, uint16_t type, uint16_t flags, uint32_t seq, uint8_t family,
		  uint16_t res_id)
{
	struct nlmsghdr h = {.nlmsg_type = type, .nlmsg_flags = flags, .nlmsg_seq = seq};
	struct nfgenmsg g = {.nfgen_family = family, .version = NFNETLINK_V0, .res_id = res_id};
	size_t at = b->len;

	put(b, &h, sizeof(h));
	put(b, &g, sizeof(g));
	return at;
}

static void end_msg(struct buf *b, size_t at)
{
	if (!b->full)
		((struct nlmsghdr *)(b->p + at))->nlmsg_len = (uint32_t)(b->len - at);
}

static const char *allow_set(const struct sr_nfnl_elem *e)
{
	if (e->family == AF_INET)
		return e->port ? SR_NFT_SET_ALLOW4_PORT : SR_NFT_SET_ALLOW4;
	return e->port ? SR_NFT_SET_ALLOW6_PORT : SR_NFT_SET_ALLOW6;
}

/*
 * A set's key: each part of a concatenation takes whole 32-bit registers
 * (an address 4 or 16 bytes, a port 2 bytes and 2 of padding).
 */
static size_t key(const struct sr_nfnl_elem *e, uint8_t out[20])
{
	size_t n = e->family == AF_INET ? 4 : 16;
	uint16_t port = htons(e->port);

	memcpy(out, e->addr, n);
	if (!e->port)
		return n;
	memset(out + n, 0, 4);
	memcpy(out + n, &port, 2);
	return n + 4;
}

static const char *host_set(const struct sr_nfnl_elem *e)
{
	return e->family == AF_INET ? SR_NFT_SET_HOST4 : SR_NFT_SET_HOST6;
}

/* One NEWSETELEM or DELSETELEM for the elements of e that go to set (by set_of). */
static void set_elems(struct buf *b, uint16_t type, uint16_t flags, uint32_t seq, const char *set,
		      const char *(*set_of)(const struct sr_nfnl_elem *),
		      const struct sr_nfnl_elem *e, size_t n, bool timeout)
{
	size_t m =
	    msg(b, (uint16_t)(NFNL_SUBSYS_NFTABLES << 8 | type), flags, seq, NFPROTO_INET, 0);
	size_t list;

	attr(b, NFTA_SET_ELEM_LIST_TABLE, SR_NFT_TABLE, sizeof(SR_NFT_TABLE));
	attr(b, NFTA_SET_ELEM_LIST_SET, set, strlen(set) + 1);
	list = nest(b, NFTA_SET_ELEM_LIST_ELEMENTS);
	for (size_t i = 0; i < n; i++) {
		uint8_t k[20];
		size_t el, kn;

		if (strcmp(set_of(&e[i]), set) != 0)
			continue;
		el = nest(b, NFTA_LIST_ELEM);
		kn = nest(b, NFTA_SET_ELEM_KEY);
		attr(b, NFTA_DATA_VALUE, k, key(&e[i], k));
		end_nest(b, kn);
		if (timeout) {
			uint64_t ms = htobe64(e[i].timeout_ms);

			attr(b, NFTA_SET_ELEM_TIMEOUT, &ms, sizeof(ms));
		}
		end_nest(b, el);
	}
	end_nest(b, list);
	end_msg(b, m);
}

/* A batch's begin or end: what makes its messages one transaction. */
static void batch_edge(struct buf *b, uint16_t type, uint32_t seq)
{
	end_msg(b, msg(b, type, NLM_F_REQUEST, seq, AF_UNSPEC, htons(NFNL_SUBSYS_NFTABLES)));
}

/* Whether any element of e goes to set (by set_of). */
static bool set_used(const struct sr_nfnl_elem *e, size_t n, const char *set,
		     const char *(*set_of)(const struct sr_nfnl_elem *))
{
	for (size_t i = 0; i < n; i++)
		if (strcmp(set_of(&e[i]), set) == 0)
			return true;
	return false;
}

int sr_nfnl_allow_batch(const struct sr_nfnl_elem *elems, size_t n, uint32_t seq, uint8_t *buf,
			size_t cap, size_t *ret_len, unsigned *ret_acks)
{
	static const char *const sets[] = {SR_NFT_SET_ALLOW4, SR_NFT_SET_ALLOW6,
					   SR_NFT_SET_ALLOW4_PORT, SR_NFT_SET_ALLOW6_PORT};
	const uint16_t ack = NLM_F_REQUEST | NLM_F_ACK;
	struct buf b = {.p = buf, .cap = cap};
	unsigned acks = 0;

	batch_edge(&b, NFNL_MSG_BATCH_BEGIN, seq++);
	for (size_t s = 0; s < SR_ARRAY_SIZE(sets); s++) {
		if (!set_used(elems, n, sets[s], allow_set))
			continue;
		/*
		 * Added (a no-op where it is there), deleted (it is there now),
		 * added again with its timeout: whether or not it was there, it
		 * stays for its timeout from now, and nothing fails on it. One
		 * transaction: no packet sees it missing.
		 */
		set_elems(&b, NFT_MSG_NEWSETELEM, ack | NLM_F_CREATE, seq++, sets[s], allow_set,
			  elems, n, true);
		set_elems(&b, NFT_MSG_DELSETELEM, ack, seq++, sets[s], allow_set, elems, n, false);
		set_elems(&b, NFT_MSG_NEWSETELEM, ack | NLM_F_CREATE, seq++, sets[s], allow_set,
			  elems, n, true);
		acks += 3;
	}
	batch_edge(&b, NFNL_MSG_BATCH_END, seq);
	if (b.full)
		return -ENOBUFS;
	*ret_len = b.len;
	*ret_acks = acks;
	return 0;
}

int sr_nfnl_open(void)
{
	int fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_NETFILTER);

	return fd < 0 ? sr_negerrno() : fd;
}

/* What the kernel left queued from an earlier exchange: dropped. */
static void drain(int fd)
{
	uint8_t junk[4096];

	while (recv(fd, junk, sizeof(junk), MSG_DONTWAIT) > 0)
		;
}

/*
 * The acknowledgements of the messages numbered from first, n of them:
 * 0, or the first error. The kernel handles a batch within sendmsg(),
 * so everything is queued by now.
 */
static int read_acks(int fd, uint32_t first, unsigned n)
{
	uint8_t buf[8192];
	unsigned seen = 0;

	while (seen < n) {
		ssize_t k = recv(fd, buf, sizeof(buf), MSG_DONTWAIT);
		size_t left = k > 0 ? (size_t)k : 0;

		if (k < 0)
			return errno == EAGAIN ? -EPROTO : sr_negerrno();
		for (struct nlmsghdr *h = (struct nlmsghdr *)buf; NLMSG_OK(h, left);
		     h = NLMSG_NEXT(h, left)) {
			const struct nlmsgerr *e = NLMSG_DATA(h);

			if (h->nlmsg_type != NLMSG_ERROR || h->nlmsg_seq < first ||
			    h->nlmsg_seq >= first + n ||
			    h->nlmsg_len < NLMSG_LENGTH(sizeof(struct nlmsgerr)))
				continue;
			if (e->error)
				return e->error;
			seen++;
		}
	}
	return 0;
}

/*
 * Sequence numbers only tell this exchange's replies from what an earlier
 * one left queued (drained first anyway): the clock's low bits will do.
 */
static uint32_t new_seq(void)
{
	return (uint32_t)(sr_monotonic_ns() / 1000) & 0x3fffffff;
}

/* A batch sent, and its acks read: the first's sequence number is first. */
static int transact(int fd, const uint8_t *buf, size_t len, uint32_t first, unsigned acks,
		    const char *sets, struct sr_error *err)
{
	int r;

	drain(fd);
	if (send(fd, buf, len, 0) != (ssize_t)len)
		return sr_error_errno(err, sr_negerrno(), "nftables: add to %s", sets);
	r = read_acks(fd, first, acks);
	if (r < 0)
		return sr_error_errno(err, r, "nftables: add to %s", sets);
	return 0;
}

int sr_nfnl_allow(int fd, const struct sr_nfnl_elem *elems, size_t n, struct sr_error *err)
{
	/* Each element goes into three messages, at most ~60 bytes each time. */
	size_t cap = 1024 + n * 3 * 64, len;
	_cleanup_free_ uint8_t *buf = malloc(cap);
	uint32_t seq = new_seq();
	unsigned acks;
	int r;

	if (n == 0)
		return 0;
	if (!buf)
		return sr_error_errno(err, -ENOMEM, "nftables");
	r = sr_nfnl_allow_batch(elems, n, seq, buf, cap, &len, &acks);
	if (r < 0)
		return sr_error_errno(err, r, "nftables: %zu addresses", n);
	return transact(fd, buf, len, seq + 1, acks, "the allowed sets", err);
}

int sr_nfnl_refuse_host(int fd, const struct sr_nfnl_elem *elems, size_t n, struct sr_error *err)
{
	static const char *const sets[] = {SR_NFT_SET_HOST4, SR_NFT_SET_HOST6};
	size_t cap = 1024 + n * 64;
	_cleanup_free_ uint8_t *buf = malloc(cap);
	const uint32_t first = new_seq();
	uint32_t seq = first;
	struct buf b = {.p = buf, .cap = cap};
	unsigned acks = 0;

	if (n == 0)
		return 0;
	if (!buf)
		return sr_error_errno(err, -ENOMEM, "nftables");
	batch_edge(&b, NFNL_MSG_BATCH_BEGIN, seq++);
	for (size_t s = 0; s < SR_ARRAY_SIZE(sets); s++) {
		if (!set_used(elems, n, sets[s], host_set))
			continue;
		/* No NLM_F_EXCL: one already there is no error, and stays. */
		set_elems(&b, NFT_MSG_NEWSETELEM, NLM_F_REQUEST | NLM_F_ACK | NLM_F_CREATE, seq++,
			  sets[s], host_set, elems, n, false);
		acks++;
	}
	batch_edge(&b, NFNL_MSG_BATCH_END, seq);
	if (b.full)
		return sr_error_errno(err, -ENOBUFS, "nftables: %zu addresses", n);
	return transact(fd, buf, b.len, first + 1, acks, "the host's sets", err);
}

/* The attributes nested in a (payload, len), by type, the last of each kept. */
static void parse_attrs(const uint8_t *p, size_t len, const struct nlattr **tb, size_t max)
{
	memset(tb, 0, max * sizeof(*tb));
	while (len >= NLA_HDRLEN) {
		const struct nlattr *a = (const struct nlattr *)p;
		size_t n = a->nla_len, type = a->nla_type & NLA_TYPE_MASK;

		if (n < NLA_HDRLEN || n > len)
			return;
		if (type < max)
			tb[type] = a;
		n = ALIGN(n);
		if (n >= len)
			return;
		p += n;
		len -= n;
	}
}

static const uint8_t *payload(const struct nlattr *a, size_t *ret_len)
{
	*ret_len = a->nla_len - NLA_HDRLEN;
	return (const uint8_t *)a + NLA_HDRLEN;
}

/* A counter expression's packets, 0 if it is none. */
static uint64_t counter_packets(const struct nlattr *expr)
{
	const struct nlattr *tb[NFTA_EXPR_MAX + 1], *ctr[NFTA_COUNTER_MAX + 1];
	const uint8_t *p;
	size_t n;
	uint64_t v;

	p = payload(expr, &n);
	parse_attrs(p, n, tb, SR_ARRAY_SIZE(tb));
	if (!tb[NFTA_EXPR_NAME] || !tb[NFTA_EXPR_DATA])
		return 0;
	p = payload(tb[NFTA_EXPR_NAME], &n);
	if (n < 8 || memcmp(p, "counter", 8) != 0)
		return 0;
	p = payload(tb[NFTA_EXPR_DATA], &n);
	parse_attrs(p, n, ctr, SR_ARRAY_SIZE(ctr));
	if (!ctr[NFTA_COUNTER_PACKETS] || ctr[NFTA_COUNTER_PACKETS]->nla_len != NLA_HDRLEN + 8)
		return 0;
	memcpy(&v, payload(ctr[NFTA_COUNTER_PACKETS], &n), 8);
	return be64toh(v);
}

/* One element of a refused set (address . protocol . port) into *ret. */
static bool refused_elem(const struct nlattr *el, int family, struct sr_nfnl_refused *ret)
{
	const struct nlattr *tb[NFTA_SET_ELEM_MAX + 1], *kv[NFTA_DATA_MAX + 1];
	size_t alen = family == AF_INET ? 4 : 16, n;
	const uint8_t *p;
	uint16_t port;

	p = payload(el, &n);
	parse_attrs(p, n, tb, SR_ARRAY_SIZE(tb));
	if (!tb[NFTA_SET_ELEM_KEY])
		return false;
	p = payload(tb[NFTA_SET_ELEM_KEY], &n);
	parse_attrs(p, n, kv, SR_ARRAY_SIZE(kv));
	if (!kv[NFTA_DATA_VALUE])
		return false;
	p = payload(kv[NFTA_DATA_VALUE], &n);
	if (n != alen + 8)
		return false;
	*ret = (struct sr_nfnl_refused){.family = family, .proto = p[alen]};
	memcpy(ret->addr, p, alen);
	memcpy(&port, p + alen + 4, 2);
	ret->port = ntohs(port);
	if (tb[NFTA_SET_ELEM_EXPR])
		ret->packets = counter_packets(tb[NFTA_SET_ELEM_EXPR]);
	if (tb[NFTA_SET_ELEM_EXPRESSIONS]) {
		const uint8_t *q = payload(tb[NFTA_SET_ELEM_EXPRESSIONS], &n);

		/* A list of expressions: the counter is the set's only one. */
		if (n >= NLA_HDRLEN && ((const struct nlattr *)q)->nla_len <= n)
			ret->packets = counter_packets((const struct nlattr *)q);
	}
	return true;
}

/* The elements of one NEWSETELEM of a dump, appended to ret. */
static void dump_message(const struct nlmsghdr *h, int family, struct sr_nfnl_refused *ret,
			 size_t max, size_t *n)
{
	const struct nlattr *tb[NFTA_SET_ELEM_LIST_MAX + 1];
	size_t len = h->nlmsg_len - NLMSG_LENGTH(sizeof(struct nfgenmsg)), el_len;
	const uint8_t *p = (const uint8_t *)NLMSG_DATA(h) + NLMSG_ALIGN(sizeof(struct nfgenmsg));

	if (h->nlmsg_len < NLMSG_LENGTH(sizeof(struct nfgenmsg)))
		return;
	parse_attrs(p, len, tb, SR_ARRAY_SIZE(tb));
	if (!tb[NFTA_SET_ELEM_LIST_ELEMENTS])
		return;
	p = payload(tb[NFTA_SET_ELEM_LIST_ELEMENTS], &el_len);
	while (el_len >= NLA_HDRLEN && *n < max) {
		const struct nlattr *el = (const struct nlattr *)p;
		size_t step = ALIGN(el->nla_len);

		if (el->nla_len < NLA_HDRLEN || el->nla_len > el_len)
			return;
		if ((el->nla_type & NLA_TYPE_MASK) == NFTA_LIST_ELEM &&
		    refused_elem(el, family, &ret[*n]))
			(*n)++;
		if (step >= el_len)
			return;
		p += step;
		el_len -= step;
	}
}

static int dump_set(int fd, const char *set, int family, uint32_t seq, struct sr_nfnl_refused *ret,
		    size_t max, size_t *n)
{
	uint8_t out[256], *in;
	struct buf b = {.p = out, .cap = sizeof(out)};
	size_t m = msg(&b, NFNL_SUBSYS_NFTABLES << 8 | NFT_MSG_GETSETELEM,
		       NLM_F_REQUEST | NLM_F_DUMP, seq, NFPROTO_INET, 0);
	int r = -EPROTO;

	attr(&b, NFTA_SET_ELEM_LIST_TABLE, SR_NFT_TABLE, sizeof(SR_NFT_TABLE));
	attr(&b, NFTA_SET_ELEM_LIST_SET, set, strlen(set) + 1);
	end_msg(&b, m);
	in = malloc(65536);
	if (!in)
		return -ENOMEM;
	drain(fd);
	if (send(fd, out, b.len, 0) != (ssize_t)b.len) {
		free(in);
		return sr_negerrno();
	}
	/* A dump is made as the socket is read: each part is there at once. */
	for (;;) {
		struct pollfd p = {.fd = fd, .events = POLLIN};
		ssize_t k;
		size_t left;

		if (SR_RETRY(poll(&p, 1, 1000)) <= 0) {
			r = -ETIMEDOUT;
			break;
		}
		k = SR_RETRY(recv(fd, in, 65536, MSG_DONTWAIT));
		left = k > 0 ? (size_t)k : 0;
		if (k <= 0) {
			r = k < 0 ? sr_negerrno() : -EPROTO;
			break;
		}
		for (struct nlmsghdr *h = (struct nlmsghdr *)in; NLMSG_OK(h, left);
		     h = NLMSG_NEXT(h, left)) {
			if (h->nlmsg_seq != seq)
				continue;
			if (h->nlmsg_type == NLMSG_DONE) {
				free(in);
				return 0;
			}
			if (h->nlmsg_type == NLMSG_ERROR) {
				const struct nlmsgerr *e = NLMSG_DATA(h);

				free(in);
				return e->error ? e->error : -EPROTO;
			}
			dump_message(h, family, ret, max, n);
		}
	}
	free(in);
	return r;
}

int sr_nfnl_refused(int fd, struct sr_nfnl_refused *ret, size_t max, size_t *ret_n,
		    struct sr_error *err)
{
	uint32_t seq = new_seq();
	size_t n = 0;
	int r;

	r = dump_set(fd, SR_NFT_SET_REFUSED4, AF_INET, seq++, ret, max, &n);
	if (r >= 0)
		r = dump_set(fd, SR_NFT_SET_REFUSED6, AF_INET6, seq++, ret, max, &n);
	if (r < 0)
		return sr_error_errno(err, r, "nftables: read the refused destinations");
	*ret_n = n;
	return 0;
}
