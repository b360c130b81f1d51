/* SPDX-License-Identifier: MIT */
#include "nfnl.h"
#include "nft.h"
#include "util.h"
#include "testutil.h"

#include <arpa/inet.h>
#include <check.h>
#include <linux/netfilter/nfnetlink.h>
#include <linux/netlink.h>
#include <nftables/libnftables.h>
#include <netinet/in.h>
#include <sched.h>
#include <sys/wait.h>

#define STRV(...)                                            \
	(&(struct sr_strv){.items = (char *[]){__VA_ARGS__}, \
			   .n = sizeof((char *[]){__VA_ARGS__}) / sizeof(char *)})

static const struct sr_strv empty = {0};

static char *ruleset(const struct sr_nft_policy *p)
{
	struct sr_error err = {0};
	char *text = NULL;

	ck_assert_msg(sr_nft_ruleset(p, &text, &err) == 0, "%s", err.msg);
	ck_assert_ptr_nonnull(text);
	return text;
}

/* Offset of line in text; fails the test when absent. */
static long line_at(const char *text, const char *line)
{
	_cleanup_free_ char *needle = NULL;
	const char *hit;

	ck_assert_int_ge(asprintf(&needle, "\t%s\n", line), 0);
	hit = strstr(text, needle);
	ck_assert_msg(hit, "missing line '%s' in:\n%s", line, text);
	return hit - text;
}

static bool has(const char *text, const char *s)
{
	return strstr(text, s) != NULL;
}

static const struct sr_nft_policy slirp = {
    .allow = &empty,
    .deny = &empty,
    .host = &empty,
    .dns = "10.0.2.3",
    .gateway = "10.0.2.2",
};

START_TEST(test_default_policy)
{
	_cleanup_free_ char *t = ruleset(&slirp);
	long dns, private;

	ck_assert(has(t, "table inet sandbox_run {\n"));
	line_at(t, "\ttype filter hook input priority filter; policy drop;");
	line_at(t, "\tiif \"lo\" accept");
	line_at(t, "\tct state established,related accept");
	line_at(t, "\ttype filter hook output priority filter; policy accept;");
	line_at(t, "\toif \"lo\" accept");
	dns = line_at(t, "\tip daddr 10.0.2.3 meta l4proto { tcp, udp } th dport 53 accept");
	private = line_at(t, "\tip daddr 10.0.0.0/8 goto refuse");
	ck_assert_int_lt(dns, private);
	ck_assert_int_lt(line_at(t, "\tip daddr 10.0.2.2 goto refuse"), private);
	line_at(t, "\tip daddr 169.254.0.0/16 goto refuse");
	line_at(t, "\tip daddr 172.16.0.0/12 goto refuse");
	line_at(t, "\tip daddr 192.168.0.0/16 goto refuse");
	line_at(t, "\tip daddr 100.64.0.0/10 goto refuse");
	line_at(t, "\tip daddr 224.0.0.0/4 goto refuse");
	line_at(t, "\tip daddr 0.0.0.0/8 goto refuse");
	line_at(t, "\tip daddr 127.0.0.0/8 goto refuse");
	line_at(t, "\tip6 daddr fd00:ec2::254 goto refuse");
	line_at(t, "\tip6 daddr fc00::/7 goto refuse");
	line_at(t, "\tip6 daddr fe80::/10 goto refuse");
	line_at(t, "\tip6 daddr ff00::/8 goto refuse");
	line_at(t, "\tip6 daddr fec0::/10 goto refuse");
	line_at(t, "\tip6 daddr :: goto refuse");
	/* The IPv4 ranges behind the well-known NAT64 prefix; the local-use one whole. */
	line_at(t, "\tip6 daddr 64:ff9b::a9fe:0/112 goto refuse");
	line_at(t, "\tip6 daddr 64:ff9b::a00:0/104 goto refuse");
	line_at(t, "\tip6 daddr 64:ff9b::7f00:0/104 goto refuse");
	line_at(t, "\tip6 daddr 64:ff9b::6440:0/106 goto refuse");
	line_at(t, "\tip6 daddr 64:ff9b:1::/48 goto refuse");
	/* Neighbour discovery in, router advertisements not: PID 1 sets the routes. */
	line_at(
	    t, "\ticmpv6 type { nd-neighbor-solicit, nd-neighbor-advert } ip6 hoplimit 255 accept");
	ck_assert(!has(t, "nd-router-advert"));
	line_at(t, "\tmeta l4proto tcp reject with tcp reset");
	line_at(t, "\treject with icmpx type admin-prohibited");
	/* Loopback is accepted before 127/8 is refused. */
	ck_assert_int_lt(line_at(t, "\toif \"lo\" accept"),
			 line_at(t, "\tip daddr 127.0.0.0/8 goto refuse"));
}
END_TEST

START_TEST(test_no_helper)
{
	struct sr_nft_policy p = {.allow = &empty, .deny = &empty};
	_cleanup_free_ char *t = ruleset(&p);

	ck_assert(!has(t, "dport 53"));
	ck_assert(!has(t, "10.0.2.2"));
	line_at(t, "\tip daddr 10.0.0.0/8 goto refuse");
}
END_TEST

START_TEST(test_deny)
{
	struct sr_nft_policy p = slirp;
	_cleanup_free_ char *t = NULL;
	long d;

	p.deny = STRV("203.0.113.7", "198.51.100.0/24:22", "[2001:db8::1]:443", "2001:db8::/32",
		      "10.1.2.3/16");
	p.host = STRV("192.0.2.2", "2001:db8:ffff::2");
	t = ruleset(&p);
	d = line_at(t, "\tip daddr 203.0.113.7 goto refuse");
	line_at(t, "\tip daddr 198.51.100.0/24 meta l4proto { tcp, udp } th dport 22 goto refuse");
	line_at(t, "\tip6 daddr 2001:db8::1 meta l4proto { tcp, udp } th dport 443 goto refuse");
	line_at(t, "\tip6 daddr 2001:db8::/32 goto refuse");
	/* Host bits are cleared, as nft requires. */
	line_at(t, "\tip daddr 10.1.0.0/16 goto refuse");
	line_at(t, "\tip daddr 192.0.2.2 goto refuse");
	line_at(t, "\tip6 daddr 2001:db8:ffff::2 goto refuse");
	ck_assert_int_lt(d, line_at(t, "\tip daddr 10.0.0.0/8 goto refuse"));
	line_at(t, "\ttype filter hook output priority filter; policy accept;");
}
END_TEST

START_TEST(test_allowlist)
{
	struct sr_nft_policy p = slirp;
	_cleanup_free_ char *t = NULL;
	long dns, gw, deny, allow;

	p.allow = STRV("10.200.0.2", "192.0.2.0/24:443", "[2001:db8::5]:8080", "2001:db8:1::/48",
		       "198.51.100.9:53");
	p.deny = STRV("10.200.0.3");
	p.host = STRV("192.0.2.2");
	t = ruleset(&p);
	line_at(t, "\ttype filter hook output priority filter; policy drop;");
	dns = line_at(t, "\tip daddr 10.0.2.3 meta l4proto { tcp, udp } th dport 53 accept");
	gw = line_at(t, "\tip daddr 10.0.2.2 goto refuse");
	deny = line_at(t, "\tip daddr 10.200.0.3 goto refuse");
	allow = line_at(t, "\tip daddr 10.200.0.2 accept");
	line_at(t, "\tip daddr 192.0.2.0/24 meta l4proto { tcp, udp } th dport 443 accept");
	line_at(t, "\tip6 daddr 2001:db8::5 meta l4proto { tcp, udp } th dport 8080 accept");
	line_at(t, "\tip6 daddr 2001:db8:1::/48 accept");
	line_at(t, "\tip daddr 198.51.100.9 meta l4proto { tcp, udp } th dport 53 accept");
	ck_assert_int_lt(dns, gw);
	ck_assert_int_lt(gw, deny);
	ck_assert_int_lt(deny, allow);
	/* Everything not listed is refused; the default ranges are then moot. */
	ck_assert_int_lt(allow, line_at(t, "\tgoto refuse"));
	ck_assert(!has(t, "169.254.0.0/16"));
	/* The host's address, covered by an allowed range: refused before the allows. */
	ck_assert_int_lt(deny, line_at(t, "\tip daddr 192.0.2.2 goto refuse"));
	ck_assert_int_lt(line_at(t, "\tip daddr 192.0.2.2 goto refuse"), allow);
}
END_TEST

/*
 * The host's own addresses: in default mode only those outside the
 * refused ranges need a rule; in allowlist mode each is refused unless an
 * entry names exactly it.
 */
START_TEST(test_host_addresses)
{
	struct sr_nft_policy p = slirp;
	_cleanup_free_ char *t = NULL, *a = NULL;

	p.host = STRV("192.168.1.5/32", "203.0.113.7/32", "198.51.100.0/24", "fd00::2/128",
		      "2001:db8::2/128", "fe80::1/128");
	t = ruleset(&p);
	line_at(t, "\tip daddr 203.0.113.7 goto refuse");
	line_at(t, "\tip daddr 198.51.100.0/24 goto refuse");
	line_at(t, "\tip6 daddr 2001:db8::2 goto refuse");
	ck_assert(!has(t, "192.168.1.5"));
	ck_assert(!has(t, "fd00::2"));
	ck_assert(!has(t, "fe80::1"));

	p.allow = STRV("192.168.1.5:8080", "0.0.0.0/0:443", "2001:db8::/32");
	a = ruleset(&p);
	line_at(a, "\tip daddr 203.0.113.7 goto refuse");
	line_at(a, "\tip6 daddr 2001:db8::2 goto refuse");
	line_at(a, "\tip6 daddr fd00::2 goto refuse");
	ck_assert(!has(a, "192.168.1.5 goto refuse"));
	line_at(a, "\tip daddr 192.168.1.5 meta l4proto { tcp, udp } th dport 8080 accept");
	ck_assert_int_lt(
	    line_at(a, "\tip daddr 203.0.113.7 goto refuse"),
	    line_at(a, "\tip daddr 0.0.0.0/0 meta l4proto { tcp, udp } th dport 443 accept"));

	/*
	 * Those the host gains during the run: the supervisor's sets, refused
	 * in both modes, before any allow (egress.c adds them).
	 */
	line_at(t, "set host4 {\n\t\ttype ipv4_addr\n\t\tsize 256\n\t}");
	line_at(t, "set host6 {\n\t\ttype ipv6_addr\n\t\tsize 256\n\t}");
	line_at(t, "\tip daddr @host4 goto refuse");
	line_at(t, "\tip6 daddr @host6 goto refuse");
	ck_assert_int_lt(
	    line_at(a, "\tip6 daddr @host6 goto refuse"),
	    line_at(a, "\tip daddr 0.0.0.0/0 meta l4proto { tcp, udp } th dport 443 accept"));
}
END_TEST

/*
 * A host name's addresses are DNS's word, not the caller's: the sets the
 * sandbox's resolver fills come after the default refusals, so a name
 * that resolves to the metadata service, a private or loopback address or
 * the host's own is refused all the same. The same address written as an
 * address opens it.
 */
START_TEST(test_names)
{
	struct sr_nft_policy p = slirp;
	_cleanup_free_ char *t = NULL, *only = NULL;
	long literal, metadata, private, set4, set6p, lock, last;

	p.allow = STRV("10.200.0.2", "198.51.100.0/24:53");
	p.names = p.dns_locked = true;
	p.dns = NULL;
	p.host = STRV("203.0.113.7", "10.200.0.2");
	t = ruleset(&p);
	line_at(t, "\ttype filter hook output priority filter; policy drop;");
	line_at(t, "set allow4 {\n\t\ttype ipv4_addr\n\t\tflags timeout\n\t\tsize 4096\n\t}");
	line_at(t, "set allow6p {\n\t\ttype ipv6_addr . inet_service\n\t\tflags timeout");
	lock = line_at(t, "\tmeta l4proto { tcp, udp } th dport { 53, 853 } goto refuse");
	literal = line_at(t, "\tip daddr 10.200.0.2 accept");
	metadata = line_at(t, "\tip daddr 169.254.0.0/16 goto refuse");
	private = line_at(t, "\tip daddr 10.0.0.0/8 goto refuse");
	line_at(t, "\tip daddr 127.0.0.0/8 goto refuse");
	line_at(t, "\tip daddr 100.64.0.0/10 goto refuse");
	line_at(t, "\tip6 daddr fd00:ec2::254 goto refuse");
	set4 = line_at(t, "\tip daddr @allow4 accept");
	line_at(t, "\tmeta l4proto { tcp, udp } ip daddr . th dport @allow4p accept");
	line_at(t, "\tip6 daddr @allow6 accept");
	set6p = line_at(t, "\tmeta l4proto { tcp, udp } ip6 daddr . th dport @allow6p accept");
	last = line_at(t, "\tgoto refuse");
	/* Written as an address: before the defaults; resolved: after them. */
	ck_assert_int_lt(literal, private);
	ck_assert_int_lt(metadata, set4);
	ck_assert_int_lt(private, set4);
	ck_assert_int_lt(set6p, last);
	/* No DNS but the sandbox's own, even to an address allowed with port 53. */
	ck_assert_int_lt(lock, line_at(t, "\tip daddr 198.51.100.0/24 meta l4proto { tcp, udp } "
					  "th dport 53 accept"));
	ck_assert(!has(t, "10.0.2.3"));
	/*
	 * The host's address: a name that resolves to it does not open it
	 * (refused before any allow); the one written as an address does.
	 */
	ck_assert_int_lt(line_at(t, "\tip daddr 203.0.113.7 goto refuse"), literal);
	ck_assert(!has(t, "10.200.0.2 goto refuse"));

	/* Names alone are an allowlist too. */
	p.allow = &empty;
	only = ruleset(&p);
	line_at(only, "\ttype filter hook output priority filter; policy drop;");
	ck_assert_int_lt(line_at(only, "\tip daddr 169.254.0.0/16 goto refuse"),
			 line_at(only, "\tip daddr @allow4 accept"));
	ck_assert_int_lt(line_at(only, "\tip6 daddr @allow6 accept"),
			 line_at(only, "\tgoto refuse"));
}
END_TEST

/* Denied names alone: DNS is the resolver's, but no allowlist (and no sets). */
START_TEST(test_dns_locked_default)
{
	struct sr_nft_policy p = slirp;
	_cleanup_free_ char *t = NULL;

	p.dns_locked = true;
	t = ruleset(&p);
	line_at(t, "\ttype filter hook output priority filter; policy accept;");
	line_at(t, "\tmeta l4proto { tcp, udp } th dport { 53, 853 } goto refuse");
	ck_assert(!has(t, "10.0.2.3"));
	ck_assert(!has(t, "allow4"));
}
END_TEST

/* --allow-host: those ports of the gateway, and nothing else of it. */
START_TEST(test_host_ports)
{
	struct sr_nft_policy p = slirp;
	_cleanup_free_ char *t = NULL;
	long open, shut;

	p.host_ports = STRV("8080", "5432");
	p.gateway6 = "fd00::2";
	p.allow = STRV("10.0.2.0/24");
	t = ruleset(&p);
	open = line_at(t, "\tip daddr 10.0.2.2 meta l4proto { tcp, udp } th dport 8080 accept");
	line_at(t, "\tip daddr 10.0.2.2 meta l4proto { tcp, udp } th dport 5432 accept");
	shut = line_at(t, "\tip daddr 10.0.2.2 goto refuse");
	ck_assert_int_lt(open, shut);
	ck_assert_int_lt(shut, line_at(t, "\tip daddr 10.0.2.0/24 accept"));
	line_at(t, "\tip6 daddr fd00::2 goto refuse");
	p.host_ports = STRV("0");
	ck_assert_int_eq(sr_nft_ruleset(&p, &(char *){NULL}, &(struct sr_error){0}), -EINVAL);
}
END_TEST

/* What was refused is counted, before the refusal, whatever refused it. */
START_TEST(test_record)
{
	struct sr_nft_policy p = slirp;
	_cleanup_free_ char *t = NULL;

	p.record = true;
	t = ruleset(&p);
	line_at(t, "set refused4 {\n\t\ttype ipv4_addr . inet_proto . inet_service\n"
		   "\t\tsize 256\n\t\tflags dynamic\n\t\tcounter\n\t}");
	line_at(t, "set refused6 {\n\t\ttype ipv6_addr . inet_proto . inet_service");
	ck_assert_int_lt(line_at(t,
				 "\tmeta l4proto { tcp, udp } update @refused4 { ip daddr . meta "
				 "l4proto . th dport }"),
			 line_at(t, "\tmeta l4proto tcp reject with tcp reset"));
	line_at(t, "\tmeta l4proto { tcp, udp } update @refused6 { ip6 daddr . meta l4proto . th "
		   "dport }");
}
END_TEST

/* ::ffff:a.b.c.d is sent as IPv4: an ip6 rule for it would never match. */
START_TEST(test_v4_mapped)
{
	struct sr_nft_policy p = slirp;
	_cleanup_free_ char *t = NULL;

	p.deny = STRV("::ffff:198.51.100.2", "::ffff:198.51.100.0/120", "[::ffff:192.0.2.9]:22");
	t = ruleset(&p);
	line_at(t, "\tip daddr 198.51.100.2 goto refuse");
	line_at(t, "\tip daddr 198.51.100.0/24 goto refuse");
	line_at(t, "\tip daddr 192.0.2.9 meta l4proto { tcp, udp } th dport 22 goto refuse");
	ck_assert(!has(t, "::ffff"));
}
END_TEST

START_TEST(test_bad_entries)
{
	static const char *const bad[] = {
	    "example.com",
	    "1.2.3.4:0",
	    "1.2.3.4:65536",
	    "1.2.3.4:http",
	    "[::1",
	    "[::1]x",
	    "1.2.3.4/33",
	    "::1/129",
	    "",
	    "1.2.3.4/",
	    "1.2.3.4:",
	    "10.0.0.1/-1",
	    "1.2.3.4; flush ruleset",
	};

	for (size_t i = 0; i < SR_ARRAY_SIZE(bad); i++) {
		struct sr_nft_policy p = slirp;
		struct sr_error err = {0};
		char *text = (char *)"untouched";

		p.allow = &(struct sr_strv){.items = (char **)&bad[i], .n = 1};
		ck_assert_msg(sr_nft_ruleset(&p, &text, &err) == -EINVAL, "accepted '%s'", bad[i]);
		ck_assert_str_eq(text, "untouched");
		ck_assert_msg(strstr(err.msg, "destination '"), "%s", err.msg);
	}
}
END_TEST

START_TEST(test_split_dest)
{
	static const struct {
		const char *in, *host;
		unsigned port;
	} ok[] = {
	    {"api.example.com", "api.example.com", 0},
	    {"api.example.com:443", "api.example.com", 443},
	    {"1.2.3.4:80", "1.2.3.4", 80},
	    {"10.0.0.0/8", "10.0.0.0/8", 0},
	    {"[2001:db8::1]:443", "2001:db8::1", 443},
	    {"[2001:db8::/32]:22", "2001:db8::/32", 22},
	    {"2001:db8::1", "2001:db8::1", 0},
	    {"[::1]", "::1", 0},
	};
	struct sr_error err = {0};

	for (size_t i = 0; i < SR_ARRAY_SIZE(ok); i++) {
		_cleanup_free_ char *host = NULL;
		unsigned port = 7;

		ck_assert_msg(sr_nft_split_dest(ok[i].in, &host, &port, &err) == 0, "%s", err.msg);
		ck_assert_str_eq(host, ok[i].host);
		ck_assert_uint_eq(port, ok[i].port);
	}
	ck_assert(sr_nft_is_address("10.0.0.0/8"));
	ck_assert(sr_nft_is_address("2001:db8::1"));
	ck_assert(!sr_nft_is_address("api.example.com"));
	ck_assert(!sr_nft_is_address("10.0.0.0/40"));
}
END_TEST

/*
 * The text must be what nft accepts, not only what this test expects:
 * install it for real in a fresh user+network namespace (no root needed)
 * and read it back.
 */
static int install_and_list(const struct sr_nft_policy *p, const char *expect, char *msg,
			    size_t len)
{
	_cleanup_free_ char *t = NULL;
	struct sr_error err = {0};
	struct nft_ctx *ctx;
	const char *out;
	int r;

	if (sr_nft_ruleset(p, &t, &err) < 0 || sr_nft_install(t, &err) < 0) {
		snprintf(msg, len, "%s", err.msg);
		return -1;
	}
	ctx = nft_ctx_new(NFT_CTX_DEFAULT);
	nft_ctx_buffer_output(ctx);
	nft_ctx_buffer_error(ctx);
	r = nft_run_cmd_from_buffer(ctx, "list table inet " SR_NFT_TABLE);
	out = nft_ctx_get_output_buffer(ctx);
	if (r != 0 || !strstr(out, expect)) {
		snprintf(msg, len, "listing lacks '%s': %s%s", expect, out,
			 nft_ctx_get_error_buffer(ctx));
		r = -1;
	}
	nft_ctx_free(ctx);
	return r;
}

static void in_netns(void (*fn)(int fd))
{
	sr_test_in_netns(fn, "test-nft: install not tested");
}

static void install_default(int fd)
{
	char msg[4000];
	struct sr_nft_policy p = slirp;

	p.deny = STRV("10.1.0.0/16", "[2001:db8::1]:443", "198.51.100.0/24:22");
	p.host = STRV("192.0.2.2");
	if (install_and_list(&p, "ip daddr 10.0.0.0/8 goto refuse", msg, sizeof(msg)) < 0) {
		(void)!write(fd, msg, strlen(msg));
		_exit(1);
	}
}

static void install_allowlist(int fd)
{
	char msg[4000];
	struct sr_nft_policy p = slirp;

	p.allow = STRV("10.200.0.2", "192.0.2.0/24:443", "[2001:db8::5]:8080", "2001:db8:1::/48");
	p.names = p.dns_locked = p.record = true;
	p.host_ports = STRV("8080");
	p.gateway6 = "fd00::2";
	if (install_and_list(&p,
			     "ip6 daddr 2001:db8::5 meta l4proto { tcp, udp } th dport 8080 accept",
			     msg, sizeof(msg)) < 0) {
		(void)!write(fd, msg, strlen(msg));
		_exit(1);
	}
}

static void install_bad(int fd)
{
	struct sr_error err = {0};

	if (sr_nft_install("table inet " SR_NFT_TABLE " { chain c { bogus } }", &err) != -EIO ||
	    !strstr(err.msg, "install nftables policy: Error:")) {
		dprintf(fd, "bad ruleset: '%s'", err.msg);
		_exit(1);
	}
}

START_TEST(test_public_dest)
{
	struct sr_nft_dest d, range;
	struct sr_error err = {0};
	char buf[64];
	size_t n = 0;

	ck_assert_int_eq(sr_nft_parse_dest("::ffff:192.0.2.7:443", &d, &err), -EINVAL);
	ck_assert_int_eq(sr_nft_parse_dest("[::ffff:192.0.2.7]:443", &d, &err), 0);
	ck_assert_int_eq(d.family, AF_INET);
	ck_assert_uint_eq(d.port, 443);
	sr_nft_format_cidr(&d, buf, sizeof(buf));
	ck_assert_str_eq(buf, "192.0.2.7/32");
	/* Host bits go, as in the ruleset. */
	ck_assert_int_eq(sr_nft_parse_dest("10.1.2.3/8", &range, &err), 0);
	sr_nft_format_cidr(&range, buf, sizeof(buf));
	ck_assert_str_eq(buf, "10.0.0.0/8");
	ck_assert_int_eq(sr_nft_parse_dest("10.200.0.0/16:22", &d, &err), 0);
	ck_assert(sr_nft_dest_covers(&range, &d));
	ck_assert(!sr_nft_dest_covers(&d, &range));
	ck_assert_int_eq(sr_nft_parse_dest("2001:db8::/32", &d, &err), 0);
	ck_assert(!sr_nft_dest_covers(&range, &d));
	sr_nft_format_cidr(&d, buf, sizeof(buf));
	ck_assert_str_eq(buf, "2001:db8::/32");
	ck_assert_int_eq(sr_nft_parse_dest("example.com", &d, &err), -EINVAL);
	/* The defaults: the metadata address among them, each one parses. */
	ck_assert_int_eq(sr_nft_parse_dest("169.254.169.254", &d, &err), 0);
	for (const char *r; (r = sr_nft_refused_default(n)); n++) {
		ck_assert_int_eq(sr_nft_parse_dest(r, &range, &err), 0);
		if (sr_nft_dest_covers(&range, &d))
			d.port = 1; /* found */
	}
	ck_assert_uint_gt(n, 10);
	ck_assert_uint_eq(d.port, 1);
}
END_TEST

/* nft's listing of one set (malloc'd), or NULL. */
static char *list_set(const char *set)
{
	struct nft_ctx *ctx = nft_ctx_new(NFT_CTX_DEFAULT);
	char cmd[128], *out = NULL;

	nft_ctx_buffer_output(ctx);
	nft_ctx_buffer_error(ctx);
	snprintf(cmd, sizeof(cmd), "list set inet " SR_NFT_TABLE " %s", set);
	if (nft_run_cmd_from_buffer(ctx, cmd) == 0)
		out = strdup(nft_ctx_get_output_buffer(ctx));
	nft_ctx_free(ctx);
	return out;
}

static int run_nft(const char *cmd)
{
	struct nft_ctx *ctx = nft_ctx_new(NFT_CTX_DEFAULT);
	int r;

	nft_ctx_buffer_output(ctx);
	nft_ctx_buffer_error(ctx);
	r = nft_run_cmd_from_buffer(ctx, cmd);
	nft_ctx_free(ctx);
	return r;
}

#define FAIL_IN_NS(fd, ...)                 \
	do {                                \
		dprintf((fd), __VA_ARGS__); \
		_exit(1);                   \
	} while (0)

/*
 * The sets from outside (nfnl.h): addresses added with their timeouts,
 * added again (the timeout starts again, nothing fails), and the refused
 * destinations read back with their counters.
 */
static void nfnl_sets(int fd)
{
	struct sr_nft_policy p = slirp;
	struct sr_nfnl_elem e[3] = {
	    {.family = AF_INET, .timeout_ms = 60000},
	    {.family = AF_INET, .port = 443, .timeout_ms = 120000},
	    {.family = AF_INET6, .timeout_ms = 30000},
	};
	struct sr_nfnl_refused got[8];
	_cleanup_free_ char *t = NULL, *l4 = NULL, *l4p = NULL, *l6 = NULL;
	struct sr_error err = {0};
	char a[INET6_ADDRSTRLEN];
	size_t n = 0;
	int nl;

	p.names = p.dns_locked = p.record = true;
	p.dns = NULL;
	if (sr_nft_ruleset(&p, &t, &err) < 0 || sr_nft_install(t, &err) < 0)
		FAIL_IN_NS(fd, "%s", err.msg);
	inet_pton(AF_INET, "198.51.100.7", e[0].addr);
	inet_pton(AF_INET, "198.51.100.8", e[1].addr);
	inet_pton(AF_INET6, "2001:db8::9", e[2].addr);
	nl = sr_nfnl_open();
	if (nl < 0)
		FAIL_IN_NS(fd, "sr_nfnl_open: %s", strerror(-nl));
	if (sr_nfnl_allow(nl, e, 3, &err) < 0 || sr_nfnl_allow(nl, e, 3, &err) < 0)
		FAIL_IN_NS(fd, "sr_nfnl_allow: %s", err.msg);
	l4 = list_set(SR_NFT_SET_ALLOW4);
	l4p = list_set(SR_NFT_SET_ALLOW4_PORT);
	l6 = list_set(SR_NFT_SET_ALLOW6);
	if (!l4 || !strstr(l4, "198.51.100.7 timeout 1m expires") || !l4p ||
	    !strstr(l4p, "198.51.100.8 . 443 timeout 2m expires") || !l6 ||
	    !strstr(l6, "2001:db8::9 timeout 30s expires"))
		FAIL_IN_NS(fd, "sets after sr_nfnl_allow:\n%s%s%s", l4 ? l4 : "-", l4p ? l4p : "-",
			   l6 ? l6 : "-");
	if (run_nft("add element inet " SR_NFT_TABLE " " SR_NFT_SET_REFUSED4
		    " { 10.0.0.5 . tcp . 80 counter packets 3 bytes 180 }; add element "
		    "inet " SR_NFT_TABLE " " SR_NFT_SET_REFUSED6
		    " { 2001:db8::1 . udp . 53 counter packets 1 bytes 80 }") != 0)
		FAIL_IN_NS(fd, "nft could not add to the refused sets");
	if (sr_nfnl_refused(nl, got, 8, &n, &err) < 0)
		FAIL_IN_NS(fd, "sr_nfnl_refused: %s", err.msg);
	if (n != 2 || got[0].family != AF_INET || got[0].proto != IPPROTO_TCP ||
	    got[0].port != 80 || got[0].packets != 3 ||
	    strcmp(inet_ntop(AF_INET, got[0].addr, a, sizeof(a)), "10.0.0.5") ||
	    got[1].family != AF_INET6 || got[1].proto != IPPROTO_UDP || got[1].port != 53 ||
	    got[1].packets != 1)
		FAIL_IN_NS(fd, "refused: %zu entries, first %d %u %u %llu", n, got[0].family,
			   got[0].proto, got[0].port, (unsigned long long)got[0].packets);
	/* Bounded by what the caller takes. */
	if (sr_nfnl_refused(nl, got, 1, &n, &err) < 0 || n != 1)
		FAIL_IN_NS(fd, "refused, at most 1: %zu", n);
	close(nl);
}

/* The batch itself: begin, three messages per set used, end; acknowledgements asked for each. */
START_TEST(test_nfnl_batch)
{
	struct sr_nfnl_elem e[2] = {{.family = AF_INET, .port = 443}, {.family = AF_INET6}};
	uint8_t buf[4096];
	size_t len, off = 0;
	unsigned acks, msgs = 0;

	ck_assert_int_eq(sr_nfnl_allow_batch(e, 2, 100, buf, sizeof(buf), &len, &acks), 0);
	ck_assert_uint_eq(acks, 6);
	while (off < len) {
		const struct nlmsghdr *h = (const struct nlmsghdr *)(buf + off);

		ck_assert_uint_eq(h->nlmsg_seq, 100 + msgs);
		if (msgs == 0)
			ck_assert_uint_eq(h->nlmsg_type, NFNL_MSG_BATCH_BEGIN);
		else if (off + h->nlmsg_len == len)
			ck_assert_uint_eq(h->nlmsg_type, NFNL_MSG_BATCH_END);
		else
			ck_assert_uint_eq(h->nlmsg_flags & NLM_F_ACK, NLM_F_ACK);
		off += NLMSG_ALIGN(h->nlmsg_len);
		msgs++;
	}
	ck_assert_uint_eq(off, len);
	ck_assert_uint_eq(msgs, 8);
	ck_assert_int_eq(sr_nfnl_allow_batch(e, 2, 100, buf, 64, &len, &acks), -ENOBUFS);
}
END_TEST

START_TEST(test_install)
{
	in_netns(install_default);
	in_netns(install_allowlist);
	in_netns(install_bad);
	in_netns(nfnl_sets);
}
END_TEST

static Suite *nft_suite(void)
{
	Suite *s = suite_create("nft");
	TCase *tc = tcase_create("ruleset");

	tcase_add_test(tc, test_default_policy);
	tcase_add_test(tc, test_no_helper);
	tcase_add_test(tc, test_deny);
	tcase_add_test(tc, test_allowlist);
	tcase_add_test(tc, test_host_addresses);
	tcase_add_test(tc, test_names);
	tcase_add_test(tc, test_dns_locked_default);
	tcase_add_test(tc, test_host_ports);
	tcase_add_test(tc, test_record);
	tcase_add_test(tc, test_v4_mapped);
	tcase_add_test(tc, test_bad_entries);
	tcase_add_test(tc, test_split_dest);
	tcase_add_test(tc, test_public_dest);
	tcase_add_test(tc, test_nfnl_batch);
	tcase_add_test(tc, test_install);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return sr_test_run(nft_suite());
}
