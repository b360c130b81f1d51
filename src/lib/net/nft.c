/* SPDX-License-Identifier: MIT */
#include "nft.h"
#include "dl.h"
#include "util.h"

#include <arpa/inet.h>
#include <limits.h>
#include <malloc.h>
#include <netinet/in.h>
#include <nftables/libnftables.h>
#include <stdint.h>
#include <sys/mman.h>
#include <unistd.h>

/*
 * Refused by default (docs/network.md): the ranges that reach the machine
 * the sandbox runs on, its LAN and the cloud's control plane rather than
 * "the internet". 127/8 and ::1 reach the sandbox's own lo, which the
 * output chain accepts first; here they catch only packets routed
 * elsewhere. IPv4-mapped IPv6 needs no entry: the kernel sends those as
 * IPv4 packets, which meet the IPv4 rules.
 */
static const char *const refused_default[] = {
    "0.0.0.0/8",     "10.0.0.0/8",     "100.64.0.0/10", "127.0.0.0/8", "169.254.0.0/16",
    "172.16.0.0/12", "192.168.0.0/16", "224.0.0.0/4",	"240.0.0.0/4", "::/128",
    "::1/128",	     "fd00:ec2::254",  "fc00::/7",	"fec0::/10",   "fe80::/10",
    "ff00::/8",	     "64:ff9b:1::/48",
};

/*
 * The well-known NAT64 prefix: where the host's network translates it,
 * 64:ff9b::a9fe:a9fe is 169.254.169.254. Each refused IPv4 range is
 * refused there too; 64:ff9b:1::/48, the local-use prefix (RFC 8215),
 * whose translation only the site knows, is refused whole (above).
 */
#define NAT64_PREFIX "64:ff9b::"

struct dest {
	int family;
	unsigned char addr[16];
	unsigned prefix;
	unsigned port; /* 0: any */
};

static int parse_uint(const char *s, unsigned max, unsigned *ret)
{
	unsigned long v;
	char *end;

	if (*s < '0' || *s > '9')
		return -EINVAL;
	errno = 0;
	v = strtoul(s, &end, 10);
	if (errno || *end || v > max)
		return -EINVAL;
	*ret = (unsigned)v;
	return 0;
}

int sr_nft_split_dest(const char *s, char **ret_host, unsigned *ret_port, struct sr_error *err)
{
	_cleanup_free_ char *host = NULL;
	const char *port = NULL, *colon;
	unsigned p = 0;

	if (s[0] == '[') {
		const char *close = strchr(s, ']');

		if (!close || (close[1] && close[1] != ':'))
			return sr_error_msg(err, -EINVAL, "destination '%s': expected [IPV6]:PORT",
					    s);
		host = strndup(s + 1, (size_t)(close - s - 1));
		if (close[1])
			port = close + 2;
	} else if ((colon = strchr(s, ':')) && !strchr(colon + 1, ':')) {
		host = strndup(s, (size_t)(colon - s));
		port = colon + 1;
	} else {
		/* No colon, or several: a bare IPv6 address, which takes no port. */
		host = strdup(s);
	}
	if (!host)
		return sr_error_errno(err, -ENOMEM, "destination '%s'", s);
	if (!*host)
		return sr_error_msg(err, -EINVAL, "destination '%s': empty host", s);
	if (port && (parse_uint(port, 65535, &p) < 0 || p == 0))
		return sr_error_msg(err, -EINVAL,
				    "destination '%s': port must be a number from 1 to 65535", s);
	*ret_host = steal_pointer(&host);
	*ret_port = p;
	return 0;
}

static int parse_address(const char *s, struct dest *ret)
{
	char buf[INET6_ADDRSTRLEN + 8];
	const char *slash = strchr(s, '/');
	size_t len = slash ? (size_t)(slash - s) : strlen(s);
	struct dest d = {0};
	unsigned bits;

	if (len >= sizeof(buf))
		return -EINVAL;
	memcpy(buf, s, len);
	buf[len] = '\0';
	if (inet_pton(AF_INET, buf, d.addr) == 1) {
		d.family = AF_INET;
		bits = 32;
	} else if (inet_pton(AF_INET6, buf, d.addr) == 1) {
		d.family = AF_INET6;
		bits = 128;
	} else {
		return -EINVAL;
	}
	d.prefix = bits;
	if (slash && parse_uint(slash + 1, bits, &d.prefix) < 0)
		return -EINVAL;
	/*
	 * ::ffff:a.b.c.d is an IPv4 destination: the kernel sends it as an
	 * IPv4 packet, which an ip6 rule never sees.
	 */
	if (d.family == AF_INET6 && d.prefix >= 96 &&
	    IN6_IS_ADDR_V4MAPPED((const struct in6_addr *)d.addr)) {
		memmove(d.addr, d.addr + 12, 4);
		memset(d.addr + 4, 0, 12);
		d.family = AF_INET;
		d.prefix -= 96;
	}
	/* nft refuses a prefix with host bits set: keep the network, as ip(8) would. */
	for (unsigned i = d.prefix; i < bits; i++)
		d.addr[i / 8] &= (unsigned char)~(0x80u >> (i % 8));
	*ret = d;
	return 0;
}

bool sr_nft_is_address(const char *host)
{
	struct dest d;

	return parse_address(host, &d) == 0;
}

static int parse_dest(const char *s, struct dest *ret, struct sr_error *err)
{
	_cleanup_free_ char *host = NULL;
	unsigned port;
	int r;

	r = sr_nft_split_dest(s, &host, &port, err);
	if (r < 0)
		return r;
	if (parse_address(host, ret) < 0)
		return sr_error_msg(err, -EINVAL, "destination '%s': not an IP address or CIDR", s);
	ret->port = port;
	return 0;
}

static void to_public(const struct dest *d, struct sr_nft_dest *ret)
{
	*ret = (struct sr_nft_dest){.family = d->family, .prefix = d->prefix, .port = d->port};
	memcpy(ret->addr, d->addr, sizeof(ret->addr));
}

static void from_public(const struct sr_nft_dest *d, struct dest *ret)
{
	*ret = (struct dest){.family = d->family, .prefix = d->prefix, .port = d->port};
	memcpy(ret->addr, d->addr, sizeof(ret->addr));
}

int sr_nft_parse_dest(const char *s, struct sr_nft_dest *ret, struct sr_error *err)
{
	struct dest d;
	int r = parse_dest(s, &d, err);

	if (r < 0)
		return r;
	to_public(&d, ret);
	return 0;
}

void sr_nft_format_cidr(const struct sr_nft_dest *d, char *buf, size_t len)
{
	char a[INET6_ADDRSTRLEN] = "";

	inet_ntop(d->family, d->addr, a, sizeof(a));
	snprintf(buf, len, "%s/%u", a, d->prefix);
}

static bool covers(const struct dest *range, const struct dest *d);

bool sr_nft_dest_covers(const struct sr_nft_dest *range, const struct sr_nft_dest *d)
{
	struct dest r, x;

	from_public(range, &r);
	from_public(d, &x);
	return covers(&r, &x);
}

const char *sr_nft_refused_default(size_t i)
{
	return i < SR_ARRAY_SIZE(refused_default) ? refused_default[i] : NULL;
}

/*
 * One rule per destination, never interval sets: user entries may overlap
 * the defaults (--deny 10.1.0.0/16), which an nft set refuses. Addresses
 * are re-formatted from their binary form, so no text a user wrote reaches
 * the ruleset.
 */
static void put_match(FILE *f, const struct dest *d)
{
	char a[INET6_ADDRSTRLEN];

	inet_ntop(d->family, d->addr, a, sizeof(a));
	fprintf(f, "\t\t%s daddr %s", d->family == AF_INET ? "ip" : "ip6", a);
	if (d->prefix != (d->family == AF_INET ? 32u : 128u))
		fprintf(f, "/%u", d->prefix);
	if (d->port)
		fprintf(f, " meta l4proto { tcp, udp } th dport %u", d->port);
}

static int put_list(FILE *f, const struct sr_strv *v, const char *verdict, struct sr_error *err)
{
	for (size_t i = 0; v && i < v->n; i++) {
		struct dest d;
		int r = parse_dest(v->items[i], &d, err);

		if (r < 0)
			return r;
		put_match(f, &d);
		fprintf(f, " %s\n", verdict);
	}
	return 0;
}

/* Whether range holds every address of d. */
static bool covers(const struct dest *range, const struct dest *d)
{
	if (range->family != d->family || range->prefix > d->prefix)
		return false;
	for (unsigned i = 0; i < range->prefix; i++) {
		unsigned char bit = (unsigned char)(0x80u >> (i % 8));

		if ((range->addr[i / 8] & bit) != (d->addr[i / 8] & bit))
			return false;
	}
	return true;
}

static bool covered_by_defaults(const struct dest *d)
{
	for (size_t i = 0; i < SR_ARRAY_SIZE(refused_default); i++) {
		struct dest range;

		if (parse_address(refused_default[i], &range) == 0 && covers(&range, d))
			return true;
	}
	return false;
}

/* Whether an allow entry names exactly d's address (a single address, any port). */
static bool named_in(const struct sr_strv *allow, const struct dest *d)
{
	for (size_t i = 0; allow && i < allow->n; i++) {
		struct sr_error ignored = {0};
		struct dest a;

		if (parse_dest(allow->items[i], &a, &ignored) == 0 && a.family == d->family &&
		    a.prefix == d->prefix && memcmp(a.addr, d->addr, sizeof(a.addr)) == 0)
			return true;
	}
	return false;
}

/*
 * The host's own addresses (the helper's sockets are the host's). In
 * allowlist mode a range that covers one does not open it; naming it
 * exactly does, as for any private address -- as an address: a host name
 * that resolves to it does not (the names' sets). In default mode those
 * inside a refused range need no rule of their own.
 */
static int put_host(FILE *f, const struct sr_nft_policy *p, bool allowlist, struct sr_error *err)
{
	for (size_t i = 0; p->host && i < p->host->n; i++) {
		struct dest d;
		int r = parse_dest(p->host->items[i], &d, err);

		if (r < 0)
			return r;
		if (allowlist ? named_in(p->allow, &d) : covered_by_defaults(&d))
			continue;
		put_match(f, &d);
		fputs(" goto refuse\n", f);
	}
	/*
	 * Those the host gains later (an address added, an IPv6 temporary
	 * address made anew each day): the supervisor adds them as they come
	 * (egress.c), already checked against the allow list.
	 */
	if (p->host)
		fputs("\t\tip daddr @" SR_NFT_SET_HOST4 " goto refuse\n"
		      "\t\tip6 daddr @" SR_NFT_SET_HOST6 " goto refuse\n",
		      f);
	return 0;
}

static int put_one(FILE *f, const char *s, const char *what, const char *verdict,
		   struct sr_error *err)
{
	struct dest d;

	if (parse_address(s, &d) < 0 || d.prefix != (d.family == AF_INET ? 32u : 128u))
		return sr_error_msg(err, -EINVAL, "%s '%s': not an IP address", what, s);
	put_match(f, &d);
	fprintf(f, " %s\n", verdict);
	return 0;
}

static void put_input(FILE *f)
{
	/*
	 * Nothing from outside may open a connection; replies and their ICMP
	 * errors (PMTU, unreachable) are "established,related". Neighbour
	 * discovery is untracked and must pass for IPv6 to work on the link;
	 * hop limit 255 proves it came from the link itself (RFC 4861).
	 * Router advertisements do not: PID 1 sets the sandbox's IPv6 address
	 * and route, and nothing from the link may add others.
	 */
	fputs(
	    "\tchain input {\n"
	    "\t\ttype filter hook input priority filter; policy drop;\n"
	    "\t\tiif \"lo\" accept\n"
	    "\t\tct state established,related accept\n"
	    "\t\ticmpv6 type { nd-neighbor-solicit, nd-neighbor-advert } ip6 hoplimit 255 accept\n"
	    "\t}\n",
	    f);
}

static int put_refused_default(FILE *f, struct sr_error *err)
{
	for (size_t i = 0; i < SR_ARRAY_SIZE(refused_default); i++) {
		struct dest d, nat64;

		if (parse_address(refused_default[i], &d) < 0 ||
		    parse_address(NAT64_PREFIX, &nat64) < 0)
			return sr_error_msg(err, -EINVAL, "bad built-in range %s",
					    refused_default[i]);
		put_match(f, &d);
		fputs(" goto refuse\n", f);
		if (d.family != AF_INET)
			continue;
		memcpy(nat64.addr + 12, d.addr, 4);
		nat64.prefix = 96 + d.prefix;
		put_match(f, &nat64);
		fputs(" goto refuse\n", f);
	}
	return 0;
}

static bool any(const struct sr_strv *v)
{
	return v && v->n > 0;
}

/*
 * The allowed names' addresses: DNS's word, so after the default
 * refusals (put_output). Element timeouts, set by whoever adds them.
 */
static void put_allow_sets(FILE *f)
{
	static const struct {
		const char *name, *type;
	} sets[] = {
	    {SR_NFT_SET_ALLOW4, "ipv4_addr"},
	    {SR_NFT_SET_ALLOW6, "ipv6_addr"},
	    {SR_NFT_SET_ALLOW4_PORT, "ipv4_addr . inet_service"},
	    {SR_NFT_SET_ALLOW6_PORT, "ipv6_addr . inet_service"},
	};

	/*
	 * A size makes the kernel take a hash with that many buckets at
	 * install: 16384 a set cost ~0.35 ms of the start-up here, 4096 ~0.07
	 * ms. ("policy memory", a hash that grows, refuses a second element
	 * with EEXIST on nft 1.0.6 and Linux 6.18.)
	 */
	for (size_t i = 0; i < SR_ARRAY_SIZE(sets); i++)
		fprintf(f, "\tset %s {\n\t\ttype %s\n\t\tflags timeout\n\t\tsize %d\n\t}\n",
			sets[i].name, sets[i].type, SR_NFT_ALLOW_MAX);
}

/*
 * What was refused, for the egress record: the first SR_NFT_REFUSED_MAX
 * destinations, each with a counter. Bounded: once full, a refusal is
 * still a refusal, only no longer counted.
 */
static void put_refused_sets(FILE *f)
{
	fprintf(f,
		"\tset " SR_NFT_SET_REFUSED4 " {\n\t\ttype ipv4_addr . inet_proto . inet_service\n"
		"\t\tsize %d\n\t\tflags dynamic\n\t\tcounter\n\t}\n"
		"\tset " SR_NFT_SET_REFUSED6 " {\n\t\ttype ipv6_addr . inet_proto . inet_service\n"
		"\t\tsize %d\n\t\tflags dynamic\n\t\tcounter\n\t}\n",
		SR_NFT_REFUSED_MAX, SR_NFT_REFUSED_MAX);
}

static void put_allow_set_rules(FILE *f)
{
	fputs("\t\tip daddr @" SR_NFT_SET_ALLOW4 " accept\n"
	      "\t\tmeta l4proto { tcp, udp } ip daddr . th dport @" SR_NFT_SET_ALLOW4_PORT
	      " accept\n"
	      "\t\tip6 daddr @" SR_NFT_SET_ALLOW6 " accept\n"
	      "\t\tmeta l4proto { tcp, udp } ip6 daddr . th dport @" SR_NFT_SET_ALLOW6_PORT
	      " accept\n",
	      f);
}

/*
 * The helper's aliases for the host: refused even where an allow covers
 * them, but for the ports --allow-host opens on the IPv4 one (which the
 * helper then takes to the host's loopback: net.c).
 */
static int put_gateways(FILE *f, const struct sr_nft_policy *p, struct sr_error *err)
{
	int r;

	if (p->gateway) {
		for (size_t i = 0; p->host_ports && i < p->host_ports->n; i++) {
			char verdict[64];
			unsigned port;

			if (parse_uint(p->host_ports->items[i], 65535, &port) < 0 || port == 0)
				return sr_error_msg(err, -EINVAL, "host port '%s': not a port",
						    p->host_ports->items[i]);
			snprintf(verdict, sizeof(verdict),
				 "meta l4proto { tcp, udp } th dport %u accept", port);
			r = put_one(f, p->gateway, "gateway", verdict, err);
			if (r < 0)
				return r;
		}
		r = put_one(f, p->gateway, "gateway", "goto refuse", err);
		if (r < 0)
			return r;
	}
	return p->gateway6 ? put_one(f, p->gateway6, "gateway", "goto refuse", err) : 0;
}

static int put_output(FILE *f, const struct sr_nft_policy *p, struct sr_error *err)
{
	bool allowlist = any(p->allow) || p->names;
	int r;

	fprintf(f,
		"\tchain output {\n"
		"\t\ttype filter hook output priority filter; policy %s;\n"
		"\t\toif \"lo\" accept\n"
		"\t\tct state established,related accept\n"
		"\t\ticmpv6 type { nd-neighbor-solicit, nd-neighbor-advert, nd-router-solicit }"
		" accept\n",
		allowlist ? "drop" : "accept");
	/*
	 * The sandbox's own resolver (on lo, above) is its only DNS: queries
	 * to any other server, plain or over TLS, would resolve names it
	 * refuses and carry data out in them. Before every allow: an address
	 * allowed for HTTPS is not thereby a resolver.
	 */
	if (p->dns_locked)
		fputs("\t\tmeta l4proto { tcp, udp } th dport { 53, 853 } goto refuse\n", f);
	/* The resolver lives in 10/8 (slirp4netns): it must pass before the private ranges. */
	else if (p->dns) {
		r = put_one(f, p->dns, "resolver", "meta l4proto { tcp, udp } th dport 53 accept",
			    err);
		if (r < 0)
			return r;
	}
	r = put_gateways(f, p, err);
	if (r >= 0)
		r = put_list(f, p->deny, "goto refuse", err);
	if (r >= 0)
		r = put_host(f, p, allowlist, err);
	if (r < 0)
		return r;
	if (!allowlist) {
		r = put_refused_default(f, err);
		fputs("\t}\n", f);
		return r;
	}
	/* An address the caller wrote opens even a private range: it was meant. */
	r = put_list(f, p->allow, "accept", err);
	/*
	 * An address DNS gave does not. Whoever answers for an allowed name
	 * (its owner, a compromised or spoofed resolver, a rebinding attack)
	 * would otherwise choose what the agent reaches: 169.254.169.254 and
	 * the cloud's credentials, the host's services, the LAN. So the
	 * default refusals come between the two kinds of allow.
	 */
	if (r >= 0 && p->names) {
		r = put_refused_default(f, err);
		put_allow_set_rules(f);
	}
	if (r < 0)
		return r;
	/* The policy is drop for safety; refusing here makes a connect() fail at once. */
	fputs("\t\tgoto refuse\n\t}\n", f);
	return 0;
}

int sr_nft_ruleset(const struct sr_nft_policy *p, char **ret_text, struct sr_error *err)
{
	_cleanup_free_ char *text = NULL;
	size_t len = 0;
	FILE *f;
	int r;

	f = open_memstream(&text, &len);
	if (!f)
		return sr_error_errno(err, sr_negerrno(), "nft ruleset");
	fputs("table inet " SR_NFT_TABLE " {\n", f);
	if (p->names)
		put_allow_sets(f);
	if (p->host)
		fprintf(f,
			"\tset " SR_NFT_SET_HOST4 " {\n\t\ttype ipv4_addr\n\t\tsize %d\n\t}\n"
			"\tset " SR_NFT_SET_HOST6 " {\n\t\ttype ipv6_addr\n\t\tsize %d\n\t}\n",
			SR_NFT_HOST_MAX, SR_NFT_HOST_MAX);
	if (p->record)
		put_refused_sets(f);
	put_input(f);
	r = put_output(f, p, err);
	/*
	 * A reject, not a drop: the agent's connect() fails at once with
	 * ECONNREFUSED (TCP) or EHOSTUNREACH, rather than hanging until its
	 * own timeout. Counted first (the set's add fails once it is full,
	 * which ends only the counting rule).
	 */
	fputs("\tchain refuse {\n", f);
	if (p->record)
		fputs("\t\tmeta l4proto { tcp, udp } update @" SR_NFT_SET_REFUSED4
		      " { ip daddr . meta l4proto . th dport }\n"
		      "\t\tmeta l4proto { tcp, udp } update @" SR_NFT_SET_REFUSED6
		      " { ip6 daddr . meta l4proto . th dport }\n",
		      f);
	fputs("\t\tmeta l4proto tcp reject with tcp reset\n"
	      "\t\treject with icmpx type admin-prohibited\n"
	      "\t}\n"
	      "}\n",
	      f);
	if (fclose(f) != 0 && r >= 0)
		r = sr_error_errno(err, -ENOMEM, "nft ruleset");
	if (r < 0)
		return r;
	*ret_text = steal_pointer(&text);
	return 0;
}

struct nft_api {
	__typeof__(nft_ctx_new) *ctx_new;
	__typeof__(nft_ctx_free) *ctx_free;
	__typeof__(nft_ctx_buffer_output) *buffer_output;
	__typeof__(nft_ctx_buffer_error) *buffer_error;
	__typeof__(nft_ctx_get_error_buffer) *get_error_buffer;
	__typeof__(nft_run_cmd_from_buffer) *run_cmd_from_buffer;
};

static int load(struct nft_api *api, struct sr_error *err)
{
	const struct sr_dl_sym syms[] = {
	    {"nft_ctx_new", (void **)&api->ctx_new},
	    {"nft_ctx_free", (void **)&api->ctx_free},
	    {"nft_ctx_buffer_output", (void **)&api->buffer_output},
	    {"nft_ctx_buffer_error", (void **)&api->buffer_error},
	    {"nft_ctx_get_error_buffer", (void **)&api->get_error_buffer},
	    {"nft_run_cmd_from_buffer", (void **)&api->run_cmd_from_buffer},
	};

	return sr_dl_load(SR_LIBNFTABLES_SONAME, syms, SR_ARRAY_SIZE(syms), err);
}

/*
 * libnftables allocates about 1 MiB to parse and commit the ruleset, six
 * 128 KiB hash tables among it: at glibc's default threshold each is an
 * mmap() of its own, faulted in page by page and unmapped again by
 * nft_ctx_free(). A page fault is cheap on bare metal but costs ~10 us in
 * some VMs, where the install's ~370 faults (192 of them for those
 * tables) were a third of its time (docs/network.md). So PID 1 first
 * raises the thresholds, for the tables to come from the heap and to stay
 * there when freed, and faults in that much heap with one
 * madvise(MADV_POPULATE_WRITE) (Linux 5.14), ~5x cheaper per page. Best
 * effort: if mallopt() refuses, nothing changes; if only madvise() does
 * (older kernels), the tables come from the heap, faulted in one page at a
 * time as before. PID 1 gives the memory back once the agent has run a
 * while (sr_init_run).
 */
#define NFT_HEAP_BYTES (1 << 20)

static void populate_heap(void)
{
#if defined(M_MMAP_THRESHOLD) && defined(M_TRIM_THRESHOLD) && defined(MADV_POPULATE_WRITE)
	_Static_assert(8LL * NFT_HEAP_BYTES <= INT_MAX, "mallopt() takes an int");
	uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
	uintptr_t start, end;
	void *p;

	/* glibc's mallopt() returns 1 on success; the sanitizers' own mallopt() 0 or -1. */
	if (mallopt(M_MMAP_THRESHOLD, 4 * NFT_HEAP_BYTES) != 1 ||
	    mallopt(M_TRIM_THRESHOLD, 8 * NFT_HEAP_BYTES) != 1)
		return;
	p = malloc(NFT_HEAP_BYTES);
	if (!p)
		return;
	start = ((uintptr_t)p + page - 1) & ~(page - 1);
	end = ((uintptr_t)p + NFT_HEAP_BYTES) & ~(page - 1);
	if (end > start)
		(void)madvise((void *)start, end - start, MADV_POPULATE_WRITE);
	free(p);
#endif
}

int sr_nft_install(const char *text, struct sr_error *err)
{
	struct nft_api api;
	struct nft_ctx *ctx;
	int r;

	populate_heap();
	r = load(&api, err);
	if (r < 0)
		return r;
	/* Created here, in the sandbox's namespace: its netlink socket must not be the host's. */
	ctx = api.ctx_new(NFT_CTX_DEFAULT);
	if (!ctx)
		return sr_error_msg(err, -ENOMEM, "nftables: cannot create a context");
	api.buffer_output(ctx);
	api.buffer_error(ctx);
	if (api.run_cmd_from_buffer(ctx, text) != 0) {
		const char *e = api.get_error_buffer(ctx);
		size_t n = e ? strcspn(e, "\n") : 0;

		r = sr_error_msg(err, -EIO, "install nftables policy: %.*s", (int)n,
				 n ? e : "libnftables failed");
	}
	api.ctx_free(ctx);
	return r;
}
