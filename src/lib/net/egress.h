/* SPDX-License-Identifier: MIT */
/*
 * The egress policy while the sandbox lives, host side: the sandbox's
 * resolver (resolver.h) when the policy names hosts, the addresses it
 * finds put into the policy's sets (nfnl.h) before it answers, and the
 * record of what the policy refused (the result's "network", -v's lines).
 * Its fds are the supervisor's alone; PID 1 hands it the sockets it made
 * in the sandbox's network namespace (SR_MSG_NET, protocol.h), with
 * sr_egress_child_sockets().
 */
#pragma once

#include "config.h"
#include "log.h"
#include "result.h"

#include <stdbool.h>
#include <sys/types.h>

struct sr_egress;

/*
 * Before clone: the resolver's configuration from c's allow and deny
 * entries that are host names, and the host's resolvers. Its ids: a root
 * caller's resolver runs as uid/gid. sink: warnings, -v lines (kept).
 */
int sr_egress_new(const struct sr_config *c, const struct sr_sink *sink, uid_t uid, gid_t gid,
		  struct sr_egress **ret, struct sr_error *err);
/*
 * PID 1, at the network step, while it has CAP_NET_ADMIN and
 * CAP_NET_BIND_SERVICE over the sandbox's network namespace: the sockets
 * below made there and sent over sock (NET, protocol.h); PID 1 keeps none.
 */
int sr_egress_child_sockets(const struct sr_egress *e, int sock, struct sr_error *err);
/* Whether the policy names hosts: the sandbox's DNS is the resolver, and nothing else. */
bool sr_egress_names(const struct sr_egress *e);
/* Whether --allow names hosts: an allowlist whose names' addresses the resolver opens. */
bool sr_egress_allows_names(const struct sr_egress *e);
/*
 * On PID 1's NET message: the nfnetlink socket, and with names the
 * resolver's UDP and TCP sockets (all taken: closed here whatever
 * happens); the resolver starts on them.
 */
int sr_egress_sockets(struct sr_egress *e, int *fds, size_t n, struct sr_error *err);
/* Readable when something is to be done (-1: nothing to watch yet); then sr_egress_dispatch. */
int sr_egress_watch_fd(const struct sr_egress *e);
/* The resolver's requests, its end (said if during_run). Never blocks. */
void sr_egress_dispatch(struct sr_egress *e, bool during_run);
/*
 * The sandbox has ended: what was refused is read once more, and said,
 * one line each at -v.
 */
void sr_egress_ended(struct sr_egress *e);
/* The record so far (read now if the sandbox still runs). */
void sr_egress_record(struct sr_egress *e, struct sr_result_network *ret);
void sr_egress_free(struct sr_egress *e);
