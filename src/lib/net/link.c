/* SPDX-License-Identifier: MIT */
#include "link.h"
#include "util.h"

#include <arpa/inet.h>
#include <linux/rtnetlink.h>
#include <net/if.h>
#include <netlink/attr.h>
#include <netlink/msg.h>
#include <netlink/netlink.h>
#include <netlink/route/addr.h>
#include <netlink/route/link.h>
#include <netlink/route/neighbour.h>
#include <netlink/route/route.h>
#include <poll.h>
#include <sys/socket.h>

SR_DEFINE_CLEANUP(nl_socket_freep, struct nl_sock *, nl_socket_free)
SR_DEFINE_CLEANUP(nl_cache_freep, struct nl_cache *, nl_cache_free)
SR_DEFINE_CLEANUP(nl_msg_freep, struct nl_msg *, nlmsg_free)
SR_DEFINE_CLEANUP(nl_addr_putp, struct nl_addr *, nl_addr_put)
SR_DEFINE_CLEANUP(rtnl_link_putp, struct rtnl_link *, rtnl_link_put)
SR_DEFINE_CLEANUP(rtnl_addr_putp, struct rtnl_addr *, rtnl_addr_put)
SR_DEFINE_CLEANUP(rtnl_neigh_putp, struct rtnl_neigh *, rtnl_neigh_put)
SR_DEFINE_CLEANUP(rtnl_route_putp, struct rtnl_route *, rtnl_route_put)

/* libnl's error codes, back to the errno the kernel (mostly) said. */
static int nl_errno(int nlerr)
{
	static const struct {
		int nl, err;
	} map[] = {
	    {NLE_NOMEM, ENOMEM}, {NLE_EXIST, EEXIST},	      {NLE_INVAL, EINVAL},
	    {NLE_RANGE, ERANGE}, {NLE_OPNOTSUPP, EOPNOTSUPP}, {NLE_OBJ_NOTFOUND, ENOENT},
	    {NLE_NODEV, ENODEV}, {NLE_PERM, EPERM},	      {NLE_NOACCESS, EACCES},
	    {NLE_BUSY, EBUSY},	 {NLE_AGAIN, EAGAIN},	      {NLE_INTR, EINTR},
	};

	for (size_t i = 0; i < SR_ARRAY_SIZE(map); i++)
		if (-nlerr == map[i].nl)
			return -map[i].err;
	return -EIO;
}

static int nl_error(struct sr_error *err, int nlerr, const char *what)
{
	return sr_error_msg(err, nl_errno(nlerr), "%s: %s", what, nl_geterror(nlerr));
}

static int nl_open(struct nl_sock **ret, const char *what, struct sr_error *err)
{
	_cleanup_(nl_socket_freep) struct nl_sock *sk = nl_socket_alloc();
	int r;

	if (!sk)
		return sr_error_errno(err, -ENOMEM, "%s", what);
	r = nl_connect(sk, NETLINK_ROUTE);
	if (r < 0)
		return nl_error(err, r, what);
	*ret = steal_pointer(&sk);
	return 0;
}

/* ifname up, with mtu unless 0; its index in *ifindex unless NULL. */
static int link_up(struct nl_sock *sk, const char *ifname, unsigned mtu, int *ifindex,
		   struct sr_error *err)
{
	_cleanup_(rtnl_link_putp) struct rtnl_link *link = NULL;
	_cleanup_(rtnl_link_putp) struct rtnl_link *change = rtnl_link_alloc();
	char what[IFNAMSIZ + 16];
	int r;

	snprintf(what, sizeof(what), "bring up %s", ifname);
	if (!change)
		return sr_error_errno(err, -ENOMEM, "%s", what);
	r = rtnl_link_get_kernel(sk, 0, ifname, &link);
	if (r < 0)
		return nl_error(err, r, what);
	if (mtu)
		rtnl_link_set_mtu(change, mtu);
	rtnl_link_set_flags(change, IFF_UP);
	r = rtnl_link_change(sk, link, change, 0);
	if (r < 0)
		return nl_error(err, r, what);
	if (ifindex)
		*ifindex = rtnl_link_get_ifindex(link);
	return 0;
}

int sr_link_loopback_up(struct sr_error *err)
{
	_cleanup_(nl_socket_freep) struct nl_sock *sk = NULL;
	int r = nl_open(&sk, "bring up lo", err);

	return r < 0 ? r : link_up(sk, "lo", 0, NULL, err);
}

static bool is_default(struct rtnl_route *r)
{
	struct nl_addr *dst = rtnl_route_get_dst(r);

	return rtnl_route_get_table(r) == RT_TABLE_MAIN &&
	       (!dst || nl_addr_get_prefixlen(dst) == 0);
}

struct defaults {
	size_t n;
	struct rtnl_route *first; /* borrowed from the cache */
};

static void count_default(struct nl_object *o, void *arg)
{
	struct defaults *d = arg;

	if (!is_default((struct rtnl_route *)o))
		return;
	if (d->n++ == 0)
		d->first = (struct rtnl_route *)o;
}

static int list_defaults(struct nl_sock *sk, int family, struct nl_cache **ret_cache,
			 struct defaults *ret, const char *what, struct sr_error *err)
{
	_cleanup_(nl_cache_freep) struct nl_cache *routes = NULL;
	struct defaults d = {0};
	int r;

	r = rtnl_route_alloc_cache(sk, family, 0, &routes);
	if (r < 0)
		return nl_error(err, r, what);
	nl_cache_foreach(routes, count_default, &d);
	*ret_cache = steal_pointer(&routes);
	*ret = d;
	return 0;
}

/* text as family's address (AF_INET, AF_LLC), or -EINVAL with the text said. */
static int parse_addr(const char *text, int family, struct nl_addr **ret, struct sr_error *err)
{
	int r = nl_addr_parse(text, family, ret);

	return r < 0 ? sr_error_msg(err, -EINVAL, "not an address: '%s'", text) : 0;
}

static int family_of(const char *text)
{
	return strchr(text, ':') ? AF_INET6 : AF_INET;
}

/*
 * An IPv6 one without duplicate address detection: usable at once, not a
 * second later (on a link whose other end is the helper alone).
 */
static int add_address(struct nl_sock *sk, const char *address, int ifindex, struct sr_error *err)
{
	_cleanup_(rtnl_addr_putp) struct rtnl_addr *a = rtnl_addr_alloc();
	_cleanup_(nl_addr_putp) struct nl_addr *local = NULL;
	int r;

	if (!a)
		return sr_error_errno(err, -ENOMEM, "address %s", address);
	r = parse_addr(address, family_of(address), &local, err);
	if (r < 0)
		return r;
	rtnl_addr_set_ifindex(a, ifindex);
	if (family_of(address) == AF_INET6)
		rtnl_addr_set_flags(a, IFA_F_NODAD);
	r = rtnl_addr_set_local(a, local);
	if (r >= 0)
		r = rtnl_addr_add(sk, a, 0);
	if (r < 0)
		return nl_error(err, r, address);
	return 0;
}

static int add_neighbour(struct nl_sock *sk, const char *address, struct nl_addr *mac, int ifindex,
			 struct sr_error *err)
{
	_cleanup_(rtnl_neigh_putp) struct rtnl_neigh *n = rtnl_neigh_alloc();
	_cleanup_(nl_addr_putp) struct nl_addr *dst = NULL;
	int r;

	if (!n)
		return sr_error_errno(err, -ENOMEM, "neighbour %s", address);
	r = parse_addr(address, family_of(address), &dst, err);
	if (r < 0)
		return r;
	rtnl_neigh_set_ifindex(n, ifindex);
	rtnl_neigh_set_lladdr(n, mac);
	rtnl_neigh_set_state(n, NUD_PERMANENT);
	r = rtnl_neigh_set_dst(n, dst);
	if (r >= 0)
		r = rtnl_neigh_add(sk, n, NLM_F_CREATE | NLM_F_EXCL);
	if (r < 0)
		return nl_error(err, r, address);
	return 0;
}

static int add_default_route(struct nl_sock *sk, const char *gateway, int ifindex,
			     struct sr_error *err)
{
	int family = family_of(gateway);
	_cleanup_(rtnl_route_putp) struct rtnl_route *route = rtnl_route_alloc();
	_cleanup_(nl_addr_putp) struct nl_addr *any = NULL, *gw = NULL;
	struct rtnl_nexthop *nh = rtnl_route_nh_alloc();
	int r;

	if (!route || !nh) {
		if (nh)
			rtnl_route_nh_free(nh);
		return sr_error_errno(err, -ENOMEM, "default route");
	}
	r = parse_addr(gateway, family, &gw, err);
	if (r >= 0)
		r = parse_addr(family == AF_INET ? "0.0.0.0/0" : "::/0", family, &any, err);
	if (r < 0) {
		rtnl_route_nh_free(nh);
		return r;
	}
	rtnl_route_nh_set_ifindex(nh, ifindex);
	rtnl_route_nh_set_gateway(nh, gw);
	rtnl_route_add_nexthop(route, nh); /* the route owns it now */
	rtnl_route_set_family(route, (uint8_t)family);
	rtnl_route_set_table(route, RT_TABLE_MAIN);
	rtnl_route_set_scope(route, RT_SCOPE_UNIVERSE);
	rtnl_route_set_protocol(route, RTPROT_BOOT); /* as `ip route add`, and the helpers */
	r = rtnl_route_set_dst(route, any);
	if (r >= 0)
		r = rtnl_route_add(sk, route, NLM_F_EXCL);
	if (r < 0)
		return nl_error(err, r, "default route");
	return 0;
}

int sr_link_configure(const struct sr_link_config *c, struct sr_error *err)
{
	_cleanup_(nl_socket_freep) struct nl_sock *sk = NULL;
	_cleanup_(nl_addr_putp) struct nl_addr *mac = NULL;
	int ifindex = 0, r;

	if ((r = nl_open(&sk, c->ifname, err)) < 0 ||
	    (r = parse_addr(c->peer_mac, AF_LLC, &mac, err)) < 0 ||
	    (r = link_up(sk, c->ifname, c->mtu, &ifindex, err)) < 0 ||
	    (r = add_address(sk, c->address, ifindex, err)) < 0 ||
	    (c->address6 && (r = add_address(sk, c->address6, ifindex, err)) < 0))
		return r;
	for (const char *const *p = c->peers; *p; p++) {
		if (family_of(*p) == AF_INET6 && !c->address6)
			continue;
		r = add_neighbour(sk, *p, mac, ifindex, err);
		if (r < 0)
			return r;
	}
	r = add_default_route(sk, c->gateway, ifindex, err);
	if (r >= 0 && c->address6)
		r = add_default_route(sk, c->gateway6, ifindex, err);
	return r;
}

int sr_link_add_ipv6(const char *ifname, const char *address6, const char *gateway6,
		     struct sr_error *err)
{
	_cleanup_(nl_socket_freep) struct nl_sock *sk = NULL;
	int ifindex, r;

	if ((r = nl_open(&sk, ifname, err)) < 0)
		return r;
	ifindex = (int)if_nametoindex(ifname);
	if (ifindex <= 0)
		return sr_error_errno(err, -ENODEV, "%s", ifname);
	r = add_address(sk, address6, ifindex, err);
	return r < 0 ? r : add_default_route(sk, gateway6, ifindex, err);
}

/*
 * The next hop's fields, which a single-path IPv4 route carries at its top
 * level. A gateway of another family (RTA_VIA) or an encapsulation would
 * not survive the copy: refused rather than changed.
 */
static int put_next_hop(struct nl_msg *msg, struct rtnl_route *r, struct rtmsg *rtm)
{
	struct rtnl_nexthop *nh = rtnl_route_nexthop_n(r, 0);
	struct nl_addr *gw;

	if (rtnl_route_get_nnexthops(r) != 1 || !nh)
		return -EINVAL;
	if (rtnl_route_nh_get_via(nh) || rtnl_route_nh_get_encap_mpls_dst(nh))
		return -EOPNOTSUPP;
	if (rtnl_route_nh_get_realms(nh) &&
	    nla_put_u32(msg, RTA_FLOW, rtnl_route_nh_get_realms(nh)) < 0)
		return -ENOMEM;
	rtm->rtm_flags |= rtnl_route_nh_get_flags(nh) & RTNH_F_ONLINK;
	gw = rtnl_route_nh_get_gateway(nh);
	if (gw && nla_put_addr(msg, RTA_GATEWAY, gw) < 0)
		return -ENOMEM;
	if (rtnl_route_nh_get_ifindex(nh) > 0 &&
	    nla_put_u32(msg, RTA_OIF, (uint32_t)rtnl_route_nh_get_ifindex(nh)) < 0)
		return -ENOMEM;
	return 0;
}

/* r's metrics but those the tuning sets, then the tuning's. */
static int put_metrics(struct nl_msg *msg, struct rtnl_route *r, const struct sr_route_tuning *t)
{
	struct nlattr *nest = nla_nest_start(msg, RTA_METRICS);
	uint32_t lock = 0, v;

	if (!nest)
		return -ENOMEM;
	(void)rtnl_route_get_metric(r, RTAX_LOCK, &lock);
	for (int m = 1; m <= RTAX_MAX; m++) {
		/* RTAX_CC_ALGO is a name, which libnl reads as a number: not copyable. */
		if (m == RTAX_LOCK || m == RTAX_RTO_MIN || m == RTAX_CC_ALGO)
			continue;
		if (rtnl_route_get_metric(r, m, &v) == 0 && nla_put_u32(msg, m, v) < 0)
			return -ENOMEM;
	}
	/* TCP honours rto_min only when it is locked (tcp_rto_min()). */
	if (nla_put_u32(msg, RTAX_LOCK, lock | 1u << RTAX_RTO_MIN) < 0 ||
	    nla_put_u32(msg, RTAX_RTO_MIN, t->rto_min_ms) < 0 ||
	    nla_put_string(msg, RTAX_CC_ALGO, t->congctl) < 0)
		return -ENOMEM;
	nla_nest_end(msg, nest);
	return 0;
}

int sr_link_route_tuning_msg(struct rtnl_route *r, const struct sr_route_tuning *t,
			     struct nl_msg **ret)
{
	_cleanup_(nl_msg_freep) struct nl_msg *msg = NULL;
	struct nl_addr *dst = rtnl_route_get_dst(r), *src = rtnl_route_get_pref_src(r);
	uint32_t table = rtnl_route_get_table(r);
	struct rtmsg rtm = {
	    .rtm_family = (unsigned char)rtnl_route_get_family(r),
	    .rtm_dst_len = dst ? (unsigned char)nl_addr_get_prefixlen(dst) : 0,
	    .rtm_tos = rtnl_route_get_tos(r),
	    .rtm_table = table < 256 ? (unsigned char)table : RT_TABLE_UNSPEC,
	    .rtm_protocol = rtnl_route_get_protocol(r),
	    .rtm_scope = rtnl_route_get_scope(r),
	    .rtm_type = rtnl_route_get_type(r),
	};
	struct nlmsghdr *hdr;
	int k;

	msg = nlmsg_alloc_simple(RTM_NEWROUTE, NLM_F_REQUEST | NLM_F_ACK | NLM_F_REPLACE);
	if (!msg || nlmsg_reserve(msg, sizeof(rtm), NLMSG_ALIGNTO) == NULL)
		return -ENOMEM;
	if (dst && nl_addr_get_prefixlen(dst) > 0 && nla_put_addr(msg, RTA_DST, dst) < 0)
		return -ENOMEM;
	if (nla_put_u32(msg, RTA_TABLE, table) < 0 ||
	    nla_put_u32(msg, RTA_PRIORITY, rtnl_route_get_priority(r)) < 0 ||
	    (src && nla_put_addr(msg, RTA_PREFSRC, src) < 0))
		return -ENOMEM;
	k = put_next_hop(msg, r, &rtm);
	if (k < 0)
		return k;
	k = put_metrics(msg, r, t);
	if (k < 0)
		return k;
	/* The header last: put_next_hop() sets its flags. */
	hdr = nlmsg_hdr(msg);
	memcpy(nlmsg_data(hdr), &rtm, sizeof(rtm));
	*ret = steal_pointer(&msg);
	return 0;
}

int sr_link_tune_default_route(const struct sr_route_tuning *t, struct sr_error *err)
{
	return sr_link_tune_default_route_of(AF_INET, t, err);
}

int sr_link_tune_default_route_of(int family, const struct sr_route_tuning *t, struct sr_error *err)
{
	const char *what =
	    family == AF_INET ? "tune the default route" : "tune the IPv6 default route";
	_cleanup_(nl_socket_freep) struct nl_sock *sk = NULL;
	_cleanup_(nl_cache_freep) struct nl_cache *routes = NULL;
	_cleanup_(nl_msg_freep) struct nl_msg *msg = NULL;
	struct defaults d = {0};
	int r;

	if ((r = nl_open(&sk, what, err)) < 0 ||
	    (r = list_defaults(sk, family, &routes, &d, what, err)) < 0)
		return r;
	if (d.n != 1)
		return sr_error_msg(err, -EINVAL, "%s: expected one, found %zu", what, d.n);
	r = sr_link_route_tuning_msg(d.first, t, &msg);
	if (r == -EINVAL)
		return sr_error_msg(err, r, "%s: it has %d next hops, not one", what,
				    rtnl_route_get_nnexthops(d.first));
	if (r == -EOPNOTSUPP)
		return sr_error_msg(err, r, "%s: its next hop has a via or an encapsulation", what);
	if (r < 0)
		return sr_error_errno(err, r, "%s", what);
	r = nl_send_auto(sk, msg);
	if (r >= 0)
		r = nl_wait_for_ack(sk);
	if (r < 0)
		return nl_error(err, r, what);
	return 0;
}

bool sr_link_route_is_local(struct rtnl_route *rt)
{
	struct nl_addr *dst = rtnl_route_get_dst(rt);
	uint32_t table = rtnl_route_get_table(rt);

	switch (rtnl_route_get_type(rt)) {
	case RTN_LOCAL:
	case RTN_BROADCAST:
	case RTN_ANYCAST:
		break;
	default:
		return false;
	}
	/*
	 * The local table, where the kernel keeps them; main too, which is
	 * where IPv6 keeps them without multiple tables. Not policy-routing
	 * tables (TPROXY's "local" routes), which a kernel without strict
	 * dump checking also sends.
	 */
	return dst && (table == RT_TABLE_LOCAL || table == RT_TABLE_MAIN);
}

/* 127/8 and ::1 reach only lo, never through a helper. */
static bool loopback(int family, const unsigned char *a)
{
	return family == AF_INET ? a[0] == 127
				 : IN6_IS_ADDR_LOOPBACK((const struct in6_addr *)(const void *)a);
}

struct locals {
	struct sr_strv *out;
	int r;
};

static void add_local(struct nl_object *o, void *arg)
{
	struct rtnl_route *rt = (struct rtnl_route *)o;
	struct nl_addr *dst = rtnl_route_get_dst(rt);
	struct locals *l = arg;
	char a[INET6_ADDRSTRLEN], text[INET6_ADDRSTRLEN + 8];
	int family;

	if (l->r < 0 || !sr_link_route_is_local(rt))
		return;
	family = nl_addr_get_family(dst);
	if ((family != AF_INET && family != AF_INET6) ||
	    nl_addr_get_len(dst) != (family == AF_INET ? 4u : 16u) ||
	    loopback(family, nl_addr_get_binary_addr(dst)) ||
	    !inet_ntop(family, nl_addr_get_binary_addr(dst), a, sizeof(a)))
		return;
	snprintf(text, sizeof(text), "%s/%u", a, nl_addr_get_prefixlen(dst));
	l->r = sr_strv_push(l->out, text);
}

static int parse_route(struct nl_msg *msg, void *arg)
{
	/* Not a route libnl can read: not one of ours to list. */
	(void)nl_msg_parse(msg, add_local, arg);
	return NL_OK;
}

int sr_link_local_destinations(struct sr_strv *out, struct sr_error *err)
{
	static const char what[] = "list the host's own addresses";
	_cleanup_(nl_socket_freep) struct nl_sock *sk = NULL;
	struct rtmsg rtm = {.rtm_family = AF_UNSPEC, .rtm_table = RT_TABLE_LOCAL};
	struct locals l = {.out = out};
	size_t n_before = out->n;
	int one = 1, r;

	r = nl_open(&sk, what, err);
	if (r < 0)
		return r;
	/*
	 * With strict checking (Linux 4.20) the kernel dumps the local table
	 * alone, where it keeps these routes, instead of every table (a
	 * router's may hold a million); before, add_local() filters.
	 */
	(void)setsockopt(nl_socket_get_fd(sk), SOL_NETLINK, NETLINK_GET_STRICT_CHK, &one,
			 sizeof(one));
	r = nl_socket_modify_cb(sk, NL_CB_VALID, NL_CB_CUSTOM, parse_route, &l);
	/*
	 * Routes changed during the dump (NLE_DUMP_INTR): the list may miss
	 * some, so it is taken again; a third torn one is an error.
	 */
	for (int tries = 0; r >= 0; tries++) {
		while (out->n > n_before) {
			free(out->items[--out->n]);
			out->items[out->n] = NULL; /* the list stays NULL-terminated */
		}
		r = nl_send_simple(sk, RTM_GETROUTE, NLM_F_DUMP, &rtm, sizeof(rtm));
		if (r >= 0)
			r = nl_recvmsgs_default(sk);
		if (r != -NLE_DUMP_INTR || tries == 2)
			break;
		r = 0;
	}
	if (r < 0)
		return nl_error(err, r, what);
	if (l.r < 0)
		return sr_error_errno(err, l.r, what);
	return 0;
}

struct sr_link_watch {
	struct nl_sock *sk;
};

static int parse_new_route(struct nl_msg *msg, void *arg)
{
	/* A destination the host gives up stays refused: it may be the host's again. */
	if (nlmsg_hdr(msg)->nlmsg_type == RTM_NEWROUTE)
		(void)nl_msg_parse(msg, add_local, arg);
	return NL_OK;
}

int sr_link_watch_new(struct sr_link_watch **ret, struct sr_error *err)
{
	static const char what[] = "watch the host's own addresses";
	_cleanup_(nl_socket_freep) struct nl_sock *sk = NULL;
	struct sr_link_watch *w;
	int r;

	r = nl_open(&sk, what, err);
	if (r < 0)
		return r;
	/* Notifications carry no sequence number of ours. */
	nl_socket_disable_seq_check(sk);
	r = nl_socket_add_memberships(sk, RTNLGRP_IPV4_ROUTE, RTNLGRP_IPV6_ROUTE, 0);
	if (r >= 0)
		r = nl_socket_set_nonblocking(sk);
	if (r < 0)
		return nl_error(err, r, what);
	w = calloc(1, sizeof(*w));
	if (!w)
		return sr_error_errno(err, -ENOMEM, "%s", what);
	w->sk = steal_pointer(&sk);
	*ret = w;
	return 0;
}

int sr_link_watch_fd(const struct sr_link_watch *w)
{
	return w ? nl_socket_get_fd(w->sk) : -1;
}

/* Whether a notification waits (libnl versions differ in what EAGAIN returns). */
static bool pending(const struct sr_link_watch *w)
{
	struct pollfd p = {.fd = nl_socket_get_fd(w->sk), .events = POLLIN};

	return poll(&p, 1, 0) > 0;
}

int sr_link_watch_read(struct sr_link_watch *w, struct sr_strv *out, struct sr_error *err)
{
	struct locals l = {.out = out};
	int r;

	r = nl_socket_modify_cb(w->sk, NL_CB_VALID, NL_CB_CUSTOM, parse_new_route, &l);
	while (r >= 0 && l.r >= 0 && pending(w))
		r = nl_recvmsgs_default(w->sk);
	if (l.r < 0)
		return sr_error_errno(err, l.r, "the host's new addresses");
	if (r >= 0 || r == -NLE_AGAIN)
		return 0;
	/*
	 * Notifications lost (the socket's buffer overran while the
	 * supervisor was busy, -NLE_NOMEM) or unreadable: every destination
	 * the host has now, which holds the ones missed.
	 */
	while (pending(w) && nl_recvmsgs_default(w->sk) != -NLE_AGAIN)
		;
	return sr_link_local_destinations(out, err);
}

void sr_link_watch_free(struct sr_link_watch *w)
{
	if (!w)
		return;
	nl_socket_free(w->sk);
	free(w);
}
