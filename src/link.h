/* SPDX-License-Identifier: MIT */
/*
 * The sandbox's links and routes over rtnetlink (libnl), in the calling
 * process's network namespace: bringing lo up, waiting for a helper's
 * default route, and tuning TCP on it. Needs CAP_NET_ADMIN there, except
 * sr_link_wait_default_route.
 */
#pragma once

#include "log.h"

struct nl_msg;
struct rtnl_route;

/* A new network namespace has lo, down: even 127.0.0.1 fails until it is up. */
int sr_link_loopback_up(struct sr_error *err);

/*
 * Returns once the main table has an IPv4 default route. -ECONNABORTED if
 * watch_fd becomes readable first (data, EOF or a hang-up: whoever was to
 * add the route holds its write end and never writes), -ETIMEDOUT after
 * timeout_ms; both with a generic message that the caller, which knows
 * what it waited for, may replace.
 */
int sr_link_wait_default_route(int watch_fd, int timeout_ms, struct sr_error *err);

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
