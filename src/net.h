/* SPDX-License-Identifier: MIT */
/*
 * The sandbox's network namespace. Parent side: prepares the policy and
 * starts the egress helper for the child's namespace; child side: brings lo
 * (and the helper's tap) up through libnl and installs the nftables policy
 * before anything of the agent's runs.
 */
#pragma once

#include "config.h"
#include "result.h"

#include <sys/types.h>

struct sr_net;

/*
 * Parent, before clone: resolves the policy, finds the helper and checks
 * that it may run and open /dev/net/tun as host_uid/host_gid (the
 * sandbox's host ids, which the helper takes: userns.h).
 */
int sr_net_prepare(const struct sr_config *c, uid_t host_uid, gid_t host_gid, struct sr_net **ret,
		   struct sr_error *err);
/* Parent, after clone, before GO: connects the child's namespace to the outside. */
int sr_net_parent(struct sr_net *n, pid_t child, struct sr_error *err);
/*
 * Child, in the new network namespace, with CAP_NET_ADMIN there: lo up,
 * the policy installed, the helper's link up. Fails closed.
 */
int sr_net_child(const struct sr_net *n, struct sr_error *err);
/*
 * Child, after sr_net_child: tunes TCP on the helper's link. A matter of
 * throughput, not of policy: the caller may report a failure as a
 * warning and go on.
 */
int sr_net_child_tune(const struct sr_net *n, struct sr_error *err);
/*
 * The one inherited fd the child must keep for sr_net_child (-1: none); it
 * must close every other, the write end of the helper's ready pipe among
 * them, or the helper's death is only noticed at a timeout.
 */
int sr_net_child_fd(const struct sr_net *n);
/* What resolv.conf the sandbox gets (NULL: none). */
const char *sr_net_resolv_conf(const struct sr_net *n);

/*
 * Whether the sandbox is set up in an outer user namespace that maps 0 to
 * the caller (userns.h): the helper becomes uid 0 in the namespace owning
 * the network to confine itself.
 */
bool sr_net_nested_userns(const struct sr_net *n);
enum sr_enforce sr_net_enforced(const struct sr_net *n);
/* The egress helper's path, as found in $PATH (NULL: none). */
const char *sr_net_helper_path(const struct sr_net *n);
/* Ends the helper (off the critical path) and frees. NULL is fine. */
void sr_net_free(struct sr_net *n);
