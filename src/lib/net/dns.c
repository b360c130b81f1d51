/* SPDX-License-Identifier: MIT */
#include "dns.h"

#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>

/* Header flags (the second 16 bits). */
#define F_QR	 0x8000
#define F_OPCODE 0x7800
#define F_TC	 0x0200
#define F_RD	 0x0100
#define F_RA	 0x0080
#define F_RCODE	 0x000f

#define CLASS_IN   1
#define OPT_LEN	   11 /* root name, type, class (size), ttl, rdlength 0 */
#define CNAMES_MAX (SR_DNS_CHAIN_MAX * 2)

static uint16_t get16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

static uint32_t get32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static void put16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

static void put32(uint8_t *p, uint32_t v)
{
	put16(p, (uint16_t)(v >> 16));
	put16(p + 2, (uint16_t)v);
}

/* One label's bytes appended to out (*n used of SR_DNS_NAME_MAX), lower case, escaped. */
static int put_label(char *out, size_t *n, const uint8_t *l, size_t len)
{
	if (*n > 0) {
		if (*n + 1 >= SR_DNS_NAME_MAX)
			return -EBADMSG;
		out[(*n)++] = '.';
	}
	for (size_t i = 0; i < len; i++) {
		uint8_t c = l[i];

		if (*n + 5 >= SR_DNS_NAME_MAX)
			return -EBADMSG;
		if (c > ' ' && c <= '~' && c != '.' && c != '\\') {
			out[(*n)++] = (char)(c >= 'A' && c <= 'Z' ? c + ('a' - 'A') : c);
		} else {
			snprintf(out + *n, 5, "\\%03u", c);
			*n += 4;
		}
	}
	out[*n] = '\0';
	return 0;
}

/*
 * The name at *off of msg (len bytes) in presentation form (out: NULL
 * reads past it only); *off moves past it as it is written there (a
 * pointer ends it). Pointers are followed only backwards, to a name
 * before the one that points, so they cannot loop; compressed:
 * whether pointers are allowed at all; at most 255 bytes of name.
 */
static int read_name(const uint8_t *msg, size_t len, size_t *off, bool compressed, char *out)
{
	size_t p = *off, n = 0, wire = 1, end = 0;
	size_t limit = *off; /* a pointer must point before this */
	bool jumped = false;

	if (out)
		out[0] = '\0';
	for (;;) {
		uint8_t l;

		if (p >= len)
			return -EBADMSG;
		l = msg[p];
		if (l == 0) {
			if (!jumped)
				end = p + 1;
			break;
		}
		if ((l & 0xc0) == 0xc0) {
			size_t to;

			if (!compressed || p + 1 >= len)
				return -EBADMSG;
			to = (size_t)(l & 0x3f) << 8 | msg[p + 1];
			if (to >= limit)
				return -EBADMSG;
			if (!jumped)
				end = p + 2;
			jumped = true;
			limit = to;
			p = to;
			continue;
		}
		if (l & 0xc0) /* 0x40, 0x80: extended label types, obsolete */
			return -EBADMSG;
		wire += 1u + l;
		if (wire > 255 || p + 1 + l > len)
			return -EBADMSG;
		if (out && put_label(out, &n, msg + p + 1, l) < 0)
			return -EBADMSG;
		p += 1u + l;
	}
	*off = end;
	return 0;
}

/* Skips the RRs from *off, count of them; the OPT record's payload size into *ret_opt. */
static int skip_rrs(const uint8_t *msg, size_t len, size_t *off, unsigned count, int *ret_opt)
{
	for (unsigned i = 0; i < count; i++) {
		size_t p = *off;
		uint16_t rdlen;

		if (read_name(msg, len, &p, true, NULL) < 0 || p + 10 > len)
			return -EPROTO;
		rdlen = get16(msg + p + 8);
		if (p + 10 + rdlen > len)
			return -EPROTO;
		if (ret_opt && get16(msg + p) == SR_DNS_OPT && msg[*off] == 0)
			*ret_opt = get16(msg + p + 2);
		*off = p + 10 + rdlen;
	}
	return 0;
}

int sr_dns_parse_query(const uint8_t *msg, size_t len, struct sr_dns_query *ret)
{
	size_t off = SR_DNS_HEADER;
	int opt = -1, r;

	if (len < SR_DNS_HEADER || (get16(msg + 2) & F_QR))
		return -EBADMSG;
	ret->id = get16(msg);
	ret->flags = get16(msg + 2);
	ret->name[0] = '\0';
	ret->edns = false;
	ret->udp_size = 512;
	if ((ret->flags & F_OPCODE) != 0 || get16(msg + 4) != 1)
		return -EOPNOTSUPP;
	if (read_name(msg, len, &off, false, ret->name) < 0 || off + 4 > len)
		return -EPROTO;
	ret->qtype = get16(msg + off);
	ret->qclass = get16(msg + off + 2);
	ret->question_len = off + 4 - SR_DNS_HEADER;
	off += 4;
	r = skip_rrs(msg, len, &off, (unsigned)get16(msg + 6) + get16(msg + 8) + get16(msg + 10),
		     &opt);
	if (r < 0)
		return r;
	if (opt >= 0) {
		ret->edns = true;
		/* RFC 6891: a size under 512 is read as 512. */
		ret->udp_size = opt < 512	       ? 512
				: opt > SR_DNS_UDP_MAX ? SR_DNS_UDP_MAX
						       : (uint16_t)opt;
	}
	return 0;
}

static void put_opt(uint8_t *p)
{
	p[0] = 0;
	put16(p + 1, SR_DNS_OPT);
	put16(p + 3, SR_DNS_UDP_MAX);
	put32(p + 5, 0);
	put16(p + 9, 0);
}

size_t sr_dns_build_query(const uint8_t *msg, const struct sr_dns_query *q, uint16_t id,
			  uint8_t *buf)
{
	memset(buf, 0, SR_DNS_HEADER);
	put16(buf, id);
	put16(buf + 2, F_RD);
	put16(buf + 4, 1);
	put16(buf + 10, 1);
	memcpy(buf + SR_DNS_HEADER, msg + SR_DNS_HEADER, q->question_len);
	put_opt(buf + SR_DNS_HEADER + q->question_len);
	return SR_DNS_HEADER + q->question_len + OPT_LEN;
}

/*
 * The same question, the name's ASCII case aside: what an answer's must
 * be. The last 4 bytes (type, class) exactly; in the name, a length byte
 * is at most 63, never a letter.
 */
static bool same_question(const uint8_t *a, const uint8_t *b, size_t len)
{
	if (memcmp(a + len - 4, b + len - 4, 4) != 0)
		return false;
	for (size_t i = 0; i < len - 4; i++) {
		uint8_t x = a[i], y = b[i];

		if (x >= 'A' && x <= 'Z')
			x = (uint8_t)(x + ('a' - 'A'));
		if (y >= 'A' && y <= 'Z')
			y = (uint8_t)(y + ('a' - 'A'));
		if (x != y)
			return false;
	}
	return true;
}

/* What one pass over the answer section found, before the chain is followed. */
struct records {
	size_t n_cnames;
	bool cnames_dropped; /* more than CNAMES_MAX */
	struct {
		char from[SR_DNS_NAME_MAX], to[SR_DNS_NAME_MAX];
	} cnames[CNAMES_MAX];
	size_t n_addrs;
	struct {
		struct sr_dns_addr a;
		char owner[SR_DNS_NAME_MAX];
	} addrs[SR_DNS_ADDRS_MAX];
};

/* One RR at *off: its TTL lowered to ttl_max in place; in the answer section, remembered. */
static int read_rr(uint8_t *ans, size_t len, size_t *off, bool answer, uint32_t ttl_max,
		   struct records *rec)
{
	char owner[SR_DNS_NAME_MAX];
	size_t p = *off;
	uint16_t type, class, rdlen;
	uint32_t ttl;

	if (read_name(ans, len, &p, true, owner) < 0 || p + 10 > len)
		return -EBADMSG;
	type = get16(ans + p);
	class = get16(ans + p + 2);
	ttl = get32(ans + p + 4);
	rdlen = get16(ans + p + 8);
	if (p + 10 + rdlen > len)
		return -EBADMSG;
	/* RFC 2181 8: a TTL with the top bit set is 0. */
	if (ttl > 0x7fffffffu)
		ttl = 0;
	if (ttl > ttl_max)
		ttl = ttl_max;
	if (type != SR_DNS_OPT)
		put32(ans + p + 4, ttl);
	*off = p + 10 + rdlen;
	if (!answer || class != CLASS_IN)
		return 0;
	p += 10;
	if (type == SR_DNS_CNAME && rec->n_cnames == CNAMES_MAX) {
		rec->cnames_dropped = true;
	} else if (type == SR_DNS_CNAME) {
		size_t q = p;

		if (read_name(ans, p + rdlen, &q, true, rec->cnames[rec->n_cnames].to) < 0 ||
		    q != p + rdlen)
			return -EBADMSG;
		memcpy(rec->cnames[rec->n_cnames].from, owner, sizeof(owner));
		rec->n_cnames++;
	} else if ((type == SR_DNS_A && rdlen == 4) || (type == SR_DNS_AAAA && rdlen == 16)) {
		if (rec->n_addrs >= SR_DNS_ADDRS_MAX)
			return 0;
		rec->addrs[rec->n_addrs].a.family = type == SR_DNS_A ? AF_INET : AF_INET6;
		memset(rec->addrs[rec->n_addrs].a.addr, 0, 16);
		memcpy(rec->addrs[rec->n_addrs].a.addr, ans + p, rdlen);
		rec->addrs[rec->n_addrs].a.ttl = ttl;
		memcpy(rec->addrs[rec->n_addrs].owner, owner, sizeof(owner));
		rec->n_addrs++;
	} else if (type == SR_DNS_A || type == SR_DNS_AAAA) {
		return -EBADMSG;
	}
	return 0;
}

/* The chain from the question's name through the CNAMEs, and the addresses of its names. */
static void follow_chain(const struct records *rec, const char *qname, struct sr_dns_answer *ret)
{
	snprintf(ret->chain[0], SR_DNS_NAME_MAX, "%s", qname);
	ret->n_chain = 1;
	for (bool more = true; more && ret->n_chain < SR_DNS_CHAIN_MAX;) {
		more = false;
		for (size_t i = 0; i < rec->n_cnames; i++) {
			if (strcmp(rec->cnames[i].from, ret->chain[ret->n_chain - 1]) != 0)
				continue;
			memcpy(ret->chain[ret->n_chain++], rec->cnames[i].to, SR_DNS_NAME_MAX);
			more = true;
			break;
		}
	}
	/*
	 * A client follows the chain to its end, whatever its length: one
	 * followed only so far could pass a denied name unseen, after it or
	 * among the CNAME records not kept.
	 */
	ret->chain_cut = rec->cnames_dropped;
	for (size_t i = 0; i < rec->n_cnames && ret->n_chain == SR_DNS_CHAIN_MAX; i++)
		if (strcmp(rec->cnames[i].from, ret->chain[ret->n_chain - 1]) == 0)
			ret->chain_cut = true;
	ret->n_addrs = 0;
	for (size_t i = 0; i < rec->n_addrs; i++)
		for (size_t c = 0; c < ret->n_chain; c++)
			if (strcmp(rec->addrs[i].owner, ret->chain[c]) == 0) {
				ret->addrs[ret->n_addrs++] = rec->addrs[i].a;
				break;
			}
}

int sr_dns_parse_answer(uint8_t *ans, size_t len, const uint8_t *msg, const struct sr_dns_query *q,
			uint16_t id, uint32_t ttl_max, struct sr_dns_answer *ret)
{
	struct records rec; /* ~100 KiB: the resolver's stack is 8 MiB */
	size_t off = SR_DNS_HEADER + q->question_len;
	uint16_t flags;
	unsigned an, ns;

	if (len < off || get16(ans) != id)
		return -EBADMSG;
	flags = get16(ans + 2);
	if (!(flags & F_QR) || (flags & F_OPCODE) || get16(ans + 4) != 1 ||
	    !same_question(ans + SR_DNS_HEADER, msg + SR_DNS_HEADER, q->question_len))
		return -EBADMSG;
	ret->rcode = flags & F_RCODE;
	ret->truncated = flags & F_TC;
	an = get16(ans + 6);
	ns = get16(ans + 8);
	rec.n_cnames = rec.n_addrs = 0;
	rec.cnames_dropped = false;
	for (unsigned i = 0; i < an + ns; i++)
		if (read_rr(ans, len, &off, i < an, ttl_max, &rec) < 0)
			return -EBADMSG;
	ret->keep_len = off;
	follow_chain(&rec, q->name, ret);
	return 0;
}

static void reply_header(uint8_t *p, const struct sr_dns_query *q, uint16_t rcode, bool tc)
{
	put16(p, q->id);
	put16(p + 2, (uint16_t)(F_QR | (q->flags & F_RD) | F_RA | (tc ? F_TC : 0) | rcode));
}

size_t sr_dns_finish(uint8_t *ans, size_t cap, const struct sr_dns_answer *a,
		     const struct sr_dns_query *q, bool udp)
{
	size_t len = a->keep_len, opt = q->edns ? OPT_LEN : 0;
	bool tc = a->truncated;

	if (udp && len + opt > q->udp_size) {
		/* Only the question, which fits: the client asks again over TCP. */
		len = SR_DNS_HEADER + q->question_len;
		put16(ans + 6, 0);
		put16(ans + 8, 0);
		tc = true;
	}
	if (len + opt > cap)
		return 0;
	reply_header(ans, q, a->rcode, tc);
	put16(ans + 10, q->edns ? 1 : 0);
	if (q->edns)
		put_opt(ans + len);
	return len + opt;
}

size_t sr_dns_error(const uint8_t *msg, size_t len, const struct sr_dns_query *q, int r,
		    uint16_t rcode, uint8_t *buf)
{
	size_t n = SR_DNS_HEADER;

	if (r == -EBADMSG || len < SR_DNS_HEADER)
		return 0;
	memset(buf, 0, SR_DNS_HEADER);
	reply_header(buf, q, rcode, false);
	if (r < 0)
		return n;
	put16(buf + 4, 1);
	memcpy(buf + n, msg + SR_DNS_HEADER, q->question_len);
	n += q->question_len;
	if (q->edns) {
		put16(buf + 10, 1);
		put_opt(buf + n);
		n += OPT_LEN;
	}
	return n;
}

bool sr_dns_name_matches(const char *name, const char *pattern, bool wildcard)
{
	size_t n = strlen(name), p = strlen(pattern);

	if (p > 0 && pattern[p - 1] == '.')
		p--;
	if (p == 0)
		return false;
	if (!wildcard)
		return n == p && strncasecmp(name, pattern, p) == 0;
	/* Beneath it: at least one more label, ending in ".pattern". */
	return n > p + 1 && name[n - p - 1] == '.' && strncasecmp(name + n - p, pattern, p) == 0;
}
