/* SPDX-License-Identifier: MIT */
/*
 * The sandbox's network namespace. Parent side: prepares the policy and
 * starts the egress helper for the child's namespace; child side: brings lo
 * (and, for pasta, the tap it hands over) up through libnl and installs the
 * nftables policy before anything of the agent's runs.
 */
#pragma once

#include "config.h"
#include "result.h"

#include <sys/types.h>

struct sr_net;

/*
 * Parent, before clone: resolves the policy, finds the helper and checks
 * that it may run and open /dev/net/tun as host_uid/host_gid (the
 * sandbox's host ids, which the helper takes: userns.h). The helper's
 * end is said in sink (kept: it must outlive n); at debug level the
 * helper's own stderr is shown.
 */
int sr_net_prepare(const struct sr_config *c, const struct sr_sink *sink, uid_t host_uid,
		   gid_t host_gid, struct sr_net **ret, struct sr_error *err);
/*
 * Parent, after clone, before GO: opens the child's namespaces for the
 * helper and starts slirp4netns on them; pasta starts later, on TAP.
 */
int sr_net_parent(struct sr_net *n, pid_t child, struct sr_error *err);
/*
 * Parent, on the child's TAP message: starts pasta on the tap (taken: it is
 * closed here whatever happens).
 */
int sr_net_start_helper(struct sr_net *n, int tap, struct sr_error *err);
/*
 * Parent, on the child's NET message: the sockets PID 1 made in the
 * sandbox's network namespace (taken: closed here whatever happens); with
 * names in the policy, the sandbox's resolver starts on them (egress.h).
 */
int sr_net_sockets(struct sr_net *n, int *fds, size_t n_fds, struct sr_error *err);
/*
 * Parent: readable when the helper or the resolver has something to say
 * or has exited (-1: nothing to watch). Then sr_net_dispatch does it: the
 * resolver's addresses into the policy's sets, a helper or resolver that
 * ended reaped, and said (the sandbox has lost its network, or its names)
 * if during_run (the agent has not ended). Never blocks.
 */
int sr_net_watch_fd(const struct sr_net *n);
void sr_net_dispatch(struct sr_net *n, bool during_run);
/* Parent, once PID 1 is reaped: what the policy refused, read once more and said at -v. */
void sr_net_ended(struct sr_net *n);
/* The result's "network" (egress; zeroed, not recorded, otherwise). */
void sr_net_record(struct sr_net *n, struct sr_result_network *ret);
/*
 * Parent, on READY: a helper that was ready but has ended since (reaped
 * with during_run false), or a resolver that has ended, is said now, the
 * agent running without it.
 */
void sr_net_agent_started(struct sr_net *n);
/*
 * Child, first, as the caller, in the new network namespace: /dev/net/tun
 * in *ret if the helper is handed its tap (pasta), else -1.
 */
int sr_net_child_open(const struct sr_net *n, int *ret, struct sr_error *err);
/*
 * Child, in the new network namespace, with CAP_NET_ADMIN there: lo up,
 * the helper's link up (pasta: tun, sr_net_child_open's, becomes the
 * configured tap), the policy installed, the sockets the supervisor needs
 * sent to it over sock (NET, protocol.h); slirp4netns is waited for until
 * it is ready. Fails closed. pasta is not waited for: PID 1 sends the tap
 * to the supervisor (TAP) once the agent runs, and the supervisor starts
 * pasta on it.
 */
int sr_net_child(const struct sr_net *n, int tun, int sock, struct sr_error *err);
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
