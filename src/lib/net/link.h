/* SPDX-License-Identifier: MIT */
/*
 * The sandbox's links and routes over rtnetlink (libnl), in the calling
 * process's network namespace: bringing lo up, configuring the link to
 * the helper, and tuning TCP on its default route. Needs CAP_NET_ADMIN
 * there.
 */
#pragma once

#include "config.h"
#include "log.h"

#include <stdbool.h>

struct nl_msg;
struct rtnl_route;

/* A new network namespace has lo, down: even 127.0.0.1 fails until it is up. */
int sr_link_loopback_up(struct sr_error *err);

/* A link to a user-mode helper on its other end: IPv4, and IPv6 where address6 is set. */
struct sr_link_config {
	const char *ifname;
	unsigned mtu;
	const char *address;	  /* ours, with its prefix: "10.0.2.100/24" */
	const char *gateway;	  /* the default route's, on the link */
	const char *address6;	  /* ours over IPv6, "fd00::100/64"; NULL: no IPv6 */
	const char *gateway6;	  /* the IPv6 default route's */
	const char *peer_mac;	  /* the helper's MAC */
	const char *const *peers; /* addresses at peer_mac, NULL-terminated: no ARP/NDP for them */
};

/*
 * Brings ifname up as c says: MTU, addresses (IPv6 without duplicate
 * address detection), permanent neighbours, default routes.
 */
int sr_link_configure(const struct sr_link_config *c, struct sr_error *err);
/* Adds an IPv6 address (no duplicate address detection) and default route to ifname. */
int sr_link_add_ipv6(const char *ifname, const char *address6, const char *gateway6,
		     struct sr_error *err);

/* How TCP over one route behaves: the route metrics congctl and rto_min. */
struct sr_route_tuning {
	const char *congctl; /* a congestion control algorithm's name */
	unsigned rto_min_ms; /* retransmission timeout floor, locked */
};

/*
 * The RTM_NEWROUTE that gives route r the tuning: NLM_F_REPLACE without
 * NLM_F_CREATE, so it replaces r (same table, prefix, tos and priority)
 * or fails, never adding a second route. Keeps where r goes (gateway,
 * device, onlink, preferred source, realms), its protocol, scope and type
 * and its other metrics. r must have exactly one next hop (-EINVAL
 * otherwise), without a via or an encapsulation (-EOPNOTSUPP). A route
 * bound to a nexthop object (nhid) comes back inline: libnl 3.7 does not
 * see the id. Pure: unit-tested.
 */
int sr_link_route_tuning_msg(struct rtnl_route *r, const struct sr_route_tuning *t,
			     struct nl_msg **ret);

/* Applies the tuning to the main table's IPv4 default route, which must be the only one. */
int sr_link_tune_default_route(const struct sr_route_tuning *t, struct sr_error *err);
/* The same for family's (AF_INET, AF_INET6). */
int sr_link_tune_default_route_of(int family, const struct sr_route_tuning *t,
				  struct sr_error *err);

/*
 * Every destination the host's kernel delivers to the host itself, as
 * "ADDR/LEN": the local, broadcast and anycast routes -- the addresses of
 * every interface, lo's beyond 127/8 (anycast service addresses) and
 * AnyIP ranges (`ip route add local 203.0.113.0/24 dev lo`) alike.
 * Loopback (127/8, ::1) is left out. Appended to out.
 */
int sr_link_local_destinations(struct sr_strv *out, struct sr_error *err);
/*
 * Whether route rt is one sr_link_local_destinations() lists: a local,
 * broadcast or anycast route of the local or main table. Pure: unit-tested.
 */
bool sr_link_route_is_local(struct rtnl_route *rt);

/*
 * The destinations the host's kernel comes to deliver to the host itself
 * after sr_link_local_destinations() listed them (an address added, a
 * new IPv6 temporary address): a netlink socket that hears of new local
 * routes, for an event loop to poll.
 */
struct sr_link_watch;
int sr_link_watch_new(struct sr_link_watch **ret, struct sr_error *err);
int sr_link_watch_fd(const struct sr_link_watch *w);
/*
 * What came since the last read, as sr_link_local_destinations() writes
 * it, appended to out; where notifications were lost, every destination
 * the host has now.
 */
int sr_link_watch_read(struct sr_link_watch *w, struct sr_strv *out, struct sr_error *err);
void sr_link_watch_free(struct sr_link_watch *w);
