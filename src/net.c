/* SPDX-License-Identifier: MIT */
/*
 * The network namespace, loopback only. Egress (a user-mode helper and an
 * nftables policy) is not in this version: a run that asks for it gets no
 * network, and says so (see sr_net_enforced and the supervisor's warning).
 */
#include "net.h"
#include "util.h"

#include <net/if.h>
#include <netlink/netlink.h>
#include <netlink/route/link.h>

struct sr_net {
	enum sr_net_mode mode;
};

int sr_net_prepare(const struct sr_config *c, struct sr_net **ret, struct sr_error *err)
{
	struct sr_net *n = calloc(1, sizeof(*n));

	if (!n)
		return sr_error_errno(err, -ENOMEM, "network");
	n->mode = SR_NET_NONE;
	*ret = n;
	return 0;
}

int sr_net_parent(struct sr_net *n, pid_t child, struct sr_error *err)
{
	return 0;
}

static void nl_sock_freep(struct nl_sock **s)
{
	if (*s)
		nl_socket_free(*s);
}

static void rtnl_link_putp(struct rtnl_link **l)
{
	if (*l)
		rtnl_link_put(*l);
}

/* lo comes down in a new network namespace; programs expect 127.0.0.1 to work. */
static int loopback_up(struct sr_error *err)
{
	_cleanup_(nl_sock_freep) struct nl_sock *sk = nl_socket_alloc();
	_cleanup_(rtnl_link_putp) struct rtnl_link *lo = NULL;
	_cleanup_(rtnl_link_putp) struct rtnl_link *change = NULL;
	int r;

	if (!sk)
		return sr_error_errno(err, -ENOMEM, "bring lo up");
	r = nl_connect(sk, NETLINK_ROUTE);
	if (r < 0)
		return sr_error_msg(err, -EIO, "bring lo up: netlink: %s", nl_geterror(r));
	r = rtnl_link_get_kernel(sk, 0, "lo", &lo);
	if (r < 0)
		return sr_error_msg(err, -ENODEV, "bring lo up: %s", nl_geterror(r));
	change = rtnl_link_alloc();
	if (!change)
		return sr_error_errno(err, -ENOMEM, "bring lo up");
	rtnl_link_set_flags(change, IFF_UP);
	r = rtnl_link_change(sk, lo, change, 0);
	if (r < 0)
		return sr_error_msg(err, -EIO, "bring lo up: %s", nl_geterror(r));
	return 0;
}

int sr_net_child(const struct sr_net *n, struct sr_error *err)
{
	return loopback_up(err);
}

const char *sr_net_resolv_conf(const struct sr_net *n)
{
	return NULL;
}

enum sr_enforce sr_net_enforced(const struct sr_net *n)
{
	return SR_ENFORCE_NETNS;
}

void sr_net_free(struct sr_net *n)
{
	free(n);
}
