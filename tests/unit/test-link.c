/* SPDX-License-Identifier: MIT */
#include "link.h"
#include "util.h"
#include "testutil.h"

#include <arpa/inet.h>
#include <check.h>
#include <fcntl.h>
#include <linux/if_tun.h>
#include <linux/rtnetlink.h>
#include <net/if.h>
#include <netlink/attr.h>
#include <netlink/msg.h>
#include <netlink/netlink.h>
#include <netlink/route/addr.h>
#include <netlink/route/link.h>
#include <netlink/route/neighbour.h>
#include <netlink/route/route.h>
#include <sched.h>
#include <sys/ioctl.h>
#include <sys/wait.h>

static const struct sr_route_tuning tuning = {.congctl = "reno", .rto_min_ms = 5};

/*
 * A default route via 10.0.2.2 on ifindex 7, as a helper makes it, with
 * what a newer one might add: a priority, a source, realms, a metric, and
 * a non-zero scope and tos, so that dropping any of them shows.
 */
static struct rtnl_route *helper_route(unsigned n_hops)
{
	struct rtnl_route *r = rtnl_route_alloc();
	struct nl_addr *dst = NULL, *gw = NULL, *src = NULL;

	ck_assert_ptr_nonnull(r);
	ck_assert_int_eq(nl_addr_parse("0.0.0.0/0", AF_INET, &dst), 0);
	ck_assert_int_eq(nl_addr_parse("10.0.2.2", AF_INET, &gw), 0);
	ck_assert_int_eq(nl_addr_parse("10.0.2.100", AF_INET, &src), 0);
	rtnl_route_set_family(r, AF_INET);
	ck_assert_int_eq(rtnl_route_set_dst(r, dst), 0);
	rtnl_route_set_table(r, RT_TABLE_MAIN);
	rtnl_route_set_priority(r, 100);
	rtnl_route_set_protocol(r, RTPROT_BOOT);
	rtnl_route_set_scope(r, RT_SCOPE_LINK);
	rtnl_route_set_tos(r, 0x10);
	rtnl_route_set_type(r, RTN_UNICAST);
	ck_assert_int_eq(rtnl_route_set_pref_src(r, src), 0);
	ck_assert_int_eq(rtnl_route_set_metric(r, RTAX_MTU, 1400), 0);
	ck_assert_int_eq(rtnl_route_set_metric(r, RTAX_LOCK, 1u << RTAX_MTU), 0);
	for (unsigned i = 0; i < n_hops; i++) {
		struct rtnl_nexthop *nh = rtnl_route_nh_alloc();

		ck_assert_ptr_nonnull(nh);
		rtnl_route_nh_set_ifindex(nh, 7 + (int)i);
		rtnl_route_nh_set_gateway(nh, gw);
		rtnl_route_nh_set_flags(nh, RTNH_F_ONLINK);
		rtnl_route_nh_set_realms(nh, 5);
		rtnl_route_add_nexthop(r, nh);
	}
	nl_addr_put(dst);
	nl_addr_put(gw);
	nl_addr_put(src);
	return r;
}

START_TEST(test_tuning_message)
{
	struct rtnl_route *r = helper_route(1);
	struct nlattr *tb[RTA_MAX + 1], *mx[RTAX_MAX + 1];
	struct nl_msg *msg = NULL;
	struct nlmsghdr *hdr;
	struct rtmsg *rtm;
	struct in_addr a;

	ck_assert_int_eq(sr_link_route_tuning_msg(r, &tuning, &msg), 0);
	hdr = nlmsg_hdr(msg);
	ck_assert_int_eq(hdr->nlmsg_type, RTM_NEWROUTE);
	/* Replaces the route or fails: never a second default route. */
	ck_assert(hdr->nlmsg_flags & NLM_F_REPLACE);
	ck_assert(!(hdr->nlmsg_flags & NLM_F_CREATE));
	rtm = nlmsg_data(hdr);
	ck_assert_int_eq(rtm->rtm_family, AF_INET);
	ck_assert_int_eq(rtm->rtm_dst_len, 0);
	ck_assert_int_eq(rtm->rtm_table, RT_TABLE_MAIN);
	ck_assert_int_eq(rtm->rtm_protocol, RTPROT_BOOT);
	ck_assert_int_eq(rtm->rtm_scope, RT_SCOPE_LINK);
	ck_assert_int_eq(rtm->rtm_tos, 0x10);
	ck_assert_int_eq(rtm->rtm_type, RTN_UNICAST);
	ck_assert(rtm->rtm_flags & RTNH_F_ONLINK);

	ck_assert_int_eq(nlmsg_parse(hdr, sizeof(*rtm), tb, RTA_MAX, NULL), 0);
	ck_assert_ptr_null(tb[RTA_DST]);
	ck_assert_uint_eq(nla_get_u32(tb[RTA_TABLE]), RT_TABLE_MAIN);
	ck_assert_uint_eq(nla_get_u32(tb[RTA_PRIORITY]), 100);
	ck_assert_uint_eq(nla_get_u32(tb[RTA_OIF]), 7);
	ck_assert_uint_eq(nla_get_u32(tb[RTA_FLOW]), 5);
	memcpy(&a, nla_data(tb[RTA_GATEWAY]), sizeof(a));
	ck_assert_str_eq(inet_ntoa(a), "10.0.2.2");
	memcpy(&a, nla_data(tb[RTA_PREFSRC]), sizeof(a));
	ck_assert_str_eq(inet_ntoa(a), "10.0.2.100");

	ck_assert_ptr_nonnull(tb[RTA_METRICS]);
	ck_assert_int_eq(nla_parse_nested(mx, RTAX_MAX, tb[RTA_METRICS], NULL), 0);
	ck_assert_uint_eq(nla_get_u32(mx[RTAX_RTO_MIN]), 5);
	ck_assert_str_eq(nla_get_string(mx[RTAX_CC_ALGO]), "reno");
	/* rto_min locked (TCP ignores it otherwise), and the route's own lock and metric kept. */
	ck_assert_uint_eq(nla_get_u32(mx[RTAX_LOCK]), 1u << RTAX_RTO_MIN | 1u << RTAX_MTU);
	ck_assert_uint_eq(nla_get_u32(mx[RTAX_MTU]), 1400);
	nlmsg_free(msg);
	rtnl_route_put(r);
}
END_TEST

START_TEST(test_tuning_refuses_multipath)
{
	struct rtnl_route *r = helper_route(2);
	struct nl_msg *msg = NULL;

	ck_assert_int_eq(sr_link_route_tuning_msg(r, &tuning, &msg), -EINVAL);
	ck_assert_ptr_null(msg);
	rtnl_route_put(r);
	r = helper_route(0);
	ck_assert_int_eq(sr_link_route_tuning_msg(r, &tuning, &msg), -EINVAL);
	rtnl_route_put(r);
}
END_TEST

START_TEST(test_tuning_refuses_what_it_cannot_copy)
{
	struct rtnl_route *r = helper_route(1);
	struct nl_addr *v6 = NULL;
	struct nl_msg *msg = NULL;

	ck_assert_int_eq(nl_addr_parse("fe80::1", AF_INET6, &v6), 0);
	rtnl_route_nh_set_via(rtnl_route_nexthop_n(r, 0), v6);
	ck_assert_int_eq(sr_link_route_tuning_msg(r, &tuning, &msg), -EOPNOTSUPP);
	ck_assert_ptr_null(msg);
	nl_addr_put(v6);
	rtnl_route_put(r);
}
END_TEST

static struct rtnl_route *route_of(const char *dst, uint8_t type, uint32_t table)
{
	struct rtnl_route *r = rtnl_route_alloc();
	struct nl_addr *a = NULL;

	ck_assert_int_eq(nl_addr_parse(dst, AF_UNSPEC, &a), 0);
	rtnl_route_set_family(r, nl_addr_get_family(a));
	rtnl_route_set_dst(r, a);
	rtnl_route_set_type(r, type);
	rtnl_route_set_table(r, table);
	nl_addr_put(a);
	return r;
}

/* Which routes are the host's own destinations, whatever the kernel's dump filter did. */
START_TEST(test_route_is_local)
{
	static const struct {
		const char *dst;
		uint8_t type;
		uint32_t table;
		bool local;
	} cases[] = {
	    {"192.0.2.2/32", RTN_LOCAL, RT_TABLE_LOCAL, true},
	    {"192.0.2.255/32", RTN_BROADCAST, RT_TABLE_LOCAL, true},
	    {"2001:db8::/128", RTN_ANYCAST, RT_TABLE_LOCAL, true},
	    {"203.0.113.0/24", RTN_LOCAL, RT_TABLE_LOCAL, true},
	    /* IPv6 without multiple tables keeps them in main. */
	    {"2001:db8::7/128", RTN_LOCAL, RT_TABLE_MAIN, true},
	    /* TPROXY: delivers only what a rule sends to table 100. */
	    {"198.51.100.0/24", RTN_LOCAL, 100, false},
	    {"192.0.2.0/24", RTN_UNICAST, RT_TABLE_MAIN, false},
	    {"ff00::/8", RTN_MULTICAST, RT_TABLE_LOCAL, false},
	};

	for (size_t i = 0; i < SR_ARRAY_SIZE(cases); i++) {
		struct rtnl_route *r = route_of(cases[i].dst, cases[i].type, cases[i].table);

		ck_assert_msg(sr_link_route_is_local(r) == cases[i].local, "%s type %u table %u",
			      cases[i].dst, cases[i].type, cases[i].table);
		rtnl_route_put(r);
	}
}
END_TEST

/* ---- against the kernel, in a network namespace of the test's own ---- */

static void in_netns(void (*fn)(int fd))
{
	sr_test_in_netns(fn, "test-link: the kernel's side not tested");
}

#define FAIL_IF(fd, cond, ...)                    \
	do {                                      \
		if (cond) {                       \
			dprintf(fd, __VA_ARGS__); \
			_exit(1);                 \
		}                                 \
	} while (0)

/* A route of type through lo in table, added to the kernel: 0, or libnl's error. */
static int add_via_lo(struct nl_sock *sk, const char *dst, uint8_t type, uint32_t table,
		      uint8_t scope, uint32_t prio)
{
	struct rtnl_route *r = route_of(dst, type, table);
	struct rtnl_nexthop *nh = rtnl_route_nh_alloc();
	int k;

	rtnl_route_set_scope(r, scope);
	rtnl_route_set_priority(r, prio);
	rtnl_route_nh_set_ifindex(nh, (int)if_nametoindex("lo"));
	rtnl_route_add_nexthop(r, nh);
	k = rtnl_route_add(sk, r, NLM_F_CREATE | NLM_F_EXCL);
	rtnl_route_put(r);
	return k;
}

/* "default dev lo metric PRIO": the child's stand-in for a helper's route. */
static int add_default(struct nl_sock *sk, uint32_t prio)
{
	return add_via_lo(sk, "0.0.0.0/0", RTN_UNICAST, RT_TABLE_MAIN, RT_SCOPE_LINK, prio);
}

struct seen {
	int n;
	uint32_t rto_min, lock, cc;
	bool gateway_ok; /* the first one: via 10.0.2.2 on eth0 */
};

static void look(struct nl_object *o, void *arg)
{
	struct rtnl_route *r = (struct rtnl_route *)o;
	struct seen *s = arg;

	if (rtnl_route_get_table(r) != RT_TABLE_MAIN ||
	    nl_addr_get_prefixlen(rtnl_route_get_dst(r)) != 0)
		return;
	if (s->n++ == 0 && rtnl_route_get_nnexthops(r) == 1) {
		struct rtnl_nexthop *nh = rtnl_route_nexthop_n(r, 0);
		struct nl_addr *gw = rtnl_route_nh_get_gateway(nh);
		char a[64] = "";

		if (gw)
			nl_addr2str(gw, a, sizeof(a));
		s->gateway_ok = !strcmp(a, "10.0.2.2") &&
				rtnl_route_nh_get_ifindex(nh) == (int)if_nametoindex("eth0");
	}
	rtnl_route_get_metric(r, RTAX_RTO_MIN, &s->rto_min);
	rtnl_route_get_metric(r, RTAX_LOCK, &s->lock);
	rtnl_route_get_metric(r, RTAX_CC_ALGO, &s->cc);
}

static struct seen defaults(struct nl_sock *sk, int fd)
{
	struct nl_cache *c = NULL;
	struct seen s = {0};

	if (rtnl_route_alloc_cache(sk, AF_INET, 0, &c) < 0) {
		FAIL_IF(fd, fd >= 0, "list routes");
		return s;
	}
	nl_cache_foreach(c, look, &s);
	nl_cache_free(c);
	return s;
}

static const char *const peers[] = {"10.0.2.2", "10.0.2.3", NULL};
static const struct sr_link_config tap_config = {
    .ifname = "eth0",
    .mtu = 65520,
    .address = "10.0.2.100/24",
    .gateway = "10.0.2.2",
    .peer_mac = "9a:55:9a:55:9a:55",
    .peers = peers,
};

/* What sr_link_configure left: 0, or why not, in msg. */
static int check_configured(struct nl_sock *sk, char *msg, size_t size)
{
	struct rtnl_link *link = NULL;
	struct nl_cache *c = NULL;
	struct seen s;
	int n_neigh = 0, ifindex, bad = 0;

	if (rtnl_link_get_kernel(sk, 0, "eth0", &link) < 0)
		return snprintf(msg, size, "no eth0");
	ifindex = rtnl_link_get_ifindex(link);
	if (!(rtnl_link_get_flags(link) & IFF_UP) || rtnl_link_get_mtu(link) != 65520)
		bad = snprintf(msg, size, "eth0: flags %#x mtu %u", rtnl_link_get_flags(link),
			       rtnl_link_get_mtu(link));
	rtnl_link_put(link);
	if (bad)
		return bad;
	if (rtnl_neigh_alloc_cache(sk, &c) < 0)
		return snprintf(msg, size, "list neighbours");
	for (struct nl_object *o = nl_cache_get_first(c); o; o = nl_cache_get_next(o)) {
		struct rtnl_neigh *ne = (struct rtnl_neigh *)o;
		char a[64], l[64];

		if (rtnl_neigh_get_ifindex(ne) != ifindex || rtnl_neigh_get_family(ne) != AF_INET)
			continue;
		nl_addr2str(rtnl_neigh_get_dst(ne), a, sizeof(a));
		nl_addr2str(rtnl_neigh_get_lladdr(ne), l, sizeof(l));
		if (rtnl_neigh_get_state(ne) != NUD_PERMANENT || strcmp(l, "9a:55:9a:55:9a:55") ||
		    (strcmp(a, "10.0.2.2") && strcmp(a, "10.0.2.3")))
			bad = snprintf(msg, size, "neighbour %s at %s, state %#x", a, l,
				       rtnl_neigh_get_state(ne));
		n_neigh++;
	}
	nl_cache_free(c);
	if (bad)
		return bad;
	if (n_neigh != 2)
		return snprintf(msg, size, "%d neighbours, not 2", n_neigh);
	s = defaults(sk, -1);
	if (s.n != 1 || !s.gateway_ok)
		return snprintf(msg, size, "%d default routes (via 10.0.2.2 on eth0: %d)", s.n,
				s.gateway_ok);
	return 0;
}

static void tune_in_kernel(int fd)
{
	struct ifreq ifr = {.ifr_flags = IFF_TAP | IFF_NO_PI, .ifr_name = "eth0"};
	struct sr_error err = {0};
	struct nl_sock *sk = nl_socket_alloc();
	char msg[512];
	struct seen s;
	int tun;

	FAIL_IF(fd, sr_link_loopback_up(&err) < 0, "loopback: %s", err.msg);
	FAIL_IF(fd, nl_connect(sk, NETLINK_ROUTE) < 0, "netlink");
	FAIL_IF(fd, sr_link_tune_default_route(&tuning, &err) != -EINVAL,
		"tuning no route must fail");

	/* The link pasta is handed: a tap, up, addressed, its peers known, the default route. */
	tun = open("/dev/net/tun", O_RDWR | O_CLOEXEC);
	if (tun < 0 && (errno == EACCES || errno == ENOENT)) {
		/* /dev/net/tun is root's alone here: a route on lo stands in for the helper's. */
		fprintf(stderr, "test-link: sr_link_configure not tested: /dev/net/tun: %s\n",
			strerror(errno));
		FAIL_IF(fd, add_default(sk, 100) < 0, "add the default route");
	} else {
		FAIL_IF(fd, tun < 0 || ioctl(tun, TUNSETIFF, &ifr) < 0, "tap: %s", strerror(errno));
		FAIL_IF(fd, sr_link_configure(&tap_config, &err) < 0, "configure: %s", err.msg);
		FAIL_IF(fd, check_configured(sk, msg, sizeof(msg)) != 0, "configured: %s", msg);
		/* Only once: configuring again fails (the address exists), adding nothing. */
		FAIL_IF(fd, sr_link_configure(&tap_config, &err) >= 0, "configured twice");
		FAIL_IF(fd, check_configured(sk, msg, sizeof(msg)) != 0, "after a second try: %s",
			msg);
	}

	/* The helper's route, replaced in place, not doubled. */
	FAIL_IF(fd, sr_link_tune_default_route(&tuning, &err) < 0, "tune: %s", err.msg);
	s = defaults(sk, fd);
	FAIL_IF(fd, s.n != 1, "%d default routes after tuning", s.n);
	FAIL_IF(fd, tun >= 0 && !s.gateway_ok, "tuning moved the route");
	/* The kernel dumps congctl as a name; libnl keeps its first four bytes. */
	FAIL_IF(fd, s.rto_min != 5 || !(s.lock & 1u << RTAX_RTO_MIN) || memcmp(&s.cc, "reno", 4),
		"metrics: rto_min %u lock %#x cc %.4s", s.rto_min, s.lock, (char *)&s.cc);

	/* Two default routes: which one the helper meant is unknown, so neither is touched. */
	FAIL_IF(fd, add_default(sk, 200) < 0, "add a second default route");
	FAIL_IF(fd,
		sr_link_tune_default_route(&tuning, &err) != -EINVAL ||
		    !strstr(err.msg, "expected one, found 2"),
		"two routes: %s", err.msg);
	if (tun >= 0)
		close(tun);
	nl_socket_free(sk);
}

START_TEST(test_tune_in_kernel)
{
	in_netns(tune_in_kernel);
}
END_TEST

/* IPv6's address (no duplicate address detection: not tentative) and default route via gw. */
static int check_ipv6(struct nl_sock *sk, const char *ifname, const char *addr, const char *gw,
		      char *msg, size_t size)
{
	struct nl_cache *c = NULL;
	int ifindex = (int)if_nametoindex(ifname), found = 0;
	char a[64];

	if (rtnl_addr_alloc_cache(sk, &c) < 0)
		return snprintf(msg, size, "list addresses");
	for (struct nl_object *o = nl_cache_get_first(c); o; o = nl_cache_get_next(o)) {
		struct rtnl_addr *ad = (struct rtnl_addr *)o;

		nl_addr2str(rtnl_addr_get_local(ad), a, sizeof(a));
		if (rtnl_addr_get_ifindex(ad) == ifindex && strcmp(a, addr) == 0 &&
		    !(rtnl_addr_get_flags(ad) & IFA_F_TENTATIVE))
			found = 1;
	}
	nl_cache_free(c);
	if (!found)
		return snprintf(msg, size, "no usable %s on %s", addr, ifname);
	if (rtnl_route_alloc_cache(sk, AF_INET6, 0, &c) < 0)
		return snprintf(msg, size, "list routes");
	found = 0;
	for (struct nl_object *o = nl_cache_get_first(c); o; o = nl_cache_get_next(o)) {
		struct rtnl_route *r = (struct rtnl_route *)o;
		struct rtnl_nexthop *nh = rtnl_route_nexthop_n(r, 0);
		struct nl_addr *dst = rtnl_route_get_dst(r);

		if (!nh || !rtnl_route_nh_get_gateway(nh) || (dst && nl_addr_get_prefixlen(dst)))
			continue;
		nl_addr2str(rtnl_route_nh_get_gateway(nh), a, sizeof(a));
		found += strcmp(a, gw) == 0 && rtnl_route_nh_get_ifindex(nh) == ifindex;
	}
	nl_cache_free(c);
	return found == 1 ? 0 : snprintf(msg, size, "%d IPv6 default routes via %s", found, gw);
}

/* The link with IPv6: pasta's whole (sr_link_configure), slirp4netns's added (sr_link_add_ipv6). */
static void configure_ipv6(int fd)
{
	static const char *const peers6[] = {"10.0.2.2", "fd00::2", NULL};
	struct sr_link_config c = tap_config;
	struct ifreq ifr = {.ifr_flags = IFF_TAP | IFF_NO_PI, .ifr_name = "eth0"};
	struct sr_error err = {0};
	struct nl_sock *sk = nl_socket_alloc();
	char msg[512];
	int tun, tun2;

	tun = open("/dev/net/tun", O_RDWR | O_CLOEXEC);
	if (tun < 0 && (errno == EACCES || errno == ENOENT)) {
		fprintf(stderr, "test-link: IPv6 not tested: /dev/net/tun: %s\n", strerror(errno));
		nl_socket_free(sk);
		return;
	}
	FAIL_IF(fd, nl_connect(sk, NETLINK_ROUTE) < 0, "netlink");
	FAIL_IF(fd, sr_link_loopback_up(&err) < 0, "loopback: %s", err.msg);
	FAIL_IF(fd, tun < 0 || ioctl(tun, TUNSETIFF, &ifr) < 0, "tap: %s", strerror(errno));
	c.address6 = "fd00::100/64";
	c.gateway6 = "fd00::2";
	c.peers = peers6;
	FAIL_IF(fd, sr_link_configure(&c, &err) < 0, "configure: %s", err.msg);
	FAIL_IF(fd, check_ipv6(sk, "eth0", "fd00::100/64", "fd00::2", msg, sizeof(msg)) != 0, "%s",
		msg);
	/* slirp4netns's tap (pasta's gone: one default route per family), up: IPv6 added. */
	close(tun);
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "tap1");
	tun2 = open("/dev/net/tun", O_RDWR | O_CLOEXEC);
	FAIL_IF(fd, tun2 < 0 || ioctl(tun2, TUNSETIFF, &ifr) < 0, "tap1: %s", strerror(errno));
	ifr.ifr_flags = IFF_UP;
	FAIL_IF(fd, ioctl(socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0), SIOCSIFFLAGS, &ifr) < 0,
		"tap1 up: %s", strerror(errno));
	FAIL_IF(fd, sr_link_add_ipv6("tap1", "fd01::100/64", "fd01::2", &err) < 0, "add: %s",
		err.msg);
	FAIL_IF(fd, check_ipv6(sk, "tap1", "fd01::100/64", "fd01::2", msg, sizeof(msg)) != 0, "%s",
		msg);
	FAIL_IF(fd, sr_link_add_ipv6("nosuch0", "fd02::1/64", "fd02::2", &err) != -ENODEV,
		"no link: %s", err.msg);
	close(tun2);
	nl_socket_free(sk);
}

START_TEST(test_ipv6_in_kernel)
{
	in_netns(configure_ipv6);
}
END_TEST

/* "ADDR/LEN" on lo, as an anycast service address would be. */
static int add_on_lo(struct nl_sock *sk, const char *text, int family)
{
	struct rtnl_addr *a = rtnl_addr_alloc();
	struct nl_addr *local = NULL;
	int k = nl_addr_parse(text, family, &local);

	if (k >= 0) {
		rtnl_addr_set_ifindex(a, (int)if_nametoindex("lo"));
		k = rtnl_addr_set_local(a, local);
	}
	if (k >= 0)
		k = rtnl_addr_add(sk, a, 0);
	nl_addr_put(local);
	rtnl_addr_put(a);
	return k;
}

/* "local PREFIX dev lo table TABLE": in the local table, AnyIP (the whole range is the host's). */
static int add_local_range(struct nl_sock *sk, const char *prefix, uint32_t table)
{
	return add_via_lo(sk, prefix, RTN_LOCAL, table, RT_SCOPE_HOST, 0);
}

static bool listed(const struct sr_strv *v, const char *s)
{
	for (size_t i = 0; i < v->n; i++)
		if (!strcmp(v->items[i], s))
			return true;
	return false;
}

/* Every address the kernel delivers here, whichever link holds it; never loopback. */
static void local_destinations(int fd)
{
	static const char *const want[] = {"198.51.100.7/32", "2001:db8::7/128", "203.0.113.0/24"};
	struct sr_strv v = {0};
	struct sr_error err = {0};
	struct nl_sock *sk = nl_socket_alloc();

	FAIL_IF(fd, sr_link_loopback_up(&err) < 0, "loopback: %s", err.msg);
	FAIL_IF(fd, nl_connect(sk, NETLINK_ROUTE) < 0, "netlink");
	FAIL_IF(fd, add_on_lo(sk, "198.51.100.7/32", AF_INET) < 0, "add 198.51.100.7");
	FAIL_IF(fd, add_on_lo(sk, "2001:db8::7/128", AF_INET6) < 0, "add 2001:db8::7");
	FAIL_IF(fd, add_local_range(sk, "203.0.113.0/24", RT_TABLE_LOCAL) < 0,
		"add local 203.0.113.0/24");
	/* A policy-routing table's "local" route (TPROXY) delivers only what a rule sends there. */
	FAIL_IF(fd, add_local_range(sk, "192.0.2.0/24", 100) < 0,
		"add local 192.0.2.0/24 table 100");
	/* IPv6 adds an address's local route from a work queue, a moment later. */
	for (int tries = 0;; tries++) {
		FAIL_IF(fd, sr_link_local_destinations(&v, &err) < 0, "list: %s", err.msg);
		if (listed(&v, want[1]) || tries == 200)
			break;
		sr_strv_free(&v);
		usleep(5000);
	}
	for (size_t i = 0; i < SR_ARRAY_SIZE(want); i++)
		FAIL_IF(fd, !listed(&v, want[i]), "%s not listed (%zu listed)", want[i], v.n);
	for (size_t i = 0; i < v.n; i++)
		FAIL_IF(fd, !strncmp(v.items[i], "127.", 4) || !strcmp(v.items[i], "::1/128"),
			"loopback listed: %s", v.items[i]);
	FAIL_IF(fd, listed(&v, "192.0.2.0/24"), "table 100's local route listed");
	sr_strv_free(&v);
	nl_socket_free(sk);
}

START_TEST(test_local_destinations)
{
	in_netns(local_destinations);
}
END_TEST

static Suite *link_suite(void)
{
	Suite *s = suite_create("link");
	TCase *tc = tcase_create("route tuning");

	tcase_add_test(tc, test_tuning_message);
	tcase_add_test(tc, test_tuning_refuses_multipath);
	tcase_add_test(tc, test_tuning_refuses_what_it_cannot_copy);
	tcase_add_test(tc, test_route_is_local);
	tcase_add_test(tc, test_tune_in_kernel);
	tcase_add_test(tc, test_ipv6_in_kernel);
	tcase_add_test(tc, test_local_destinations);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return sr_test_run(link_suite());
}
