/* SPDX-License-Identifier: MIT */
/*
 * The keeper's control socket: how the verbs (exec, inspect, rm, ...)
 * talk to the process that owns a living sandbox (keeper.h).
 *
 * <state>/<id>/ctl, AF_UNIX SOCK_SEQPACKET, in the user's 0700 state
 * directory; each side checks the other's uid (SO_PEERCRED) all the same.
 * One packet is one JSON object (at most SR_CTL_MAX bytes) and up to
 * three fds (SCM_RIGHTS). A request names its "op"; a reply says
 * {"ok": true, ...} or {"ok": false, "error": "<one line>", "status": N,
 * "errno": E} (the exit status a verb should give, 125 unless said; the
 * errno of the failure, 0 when none applies). An exec's
 * connection stays open: the client may send {"op": "signal"} on it, and
 * gets one {"event": "exit", ...} when the process has ended.
 */
#pragma once

#include "json.h"
#include "log.h"

#include <stdbool.h>
#include <stddef.h>

#define SR_CTL_MAX     (192 * 1024)
#define SR_CTL_FDS_MAX 3

int sr_ctl_send(int fd, json_t *msg, const int *fds, size_t n_fds);
/*
 * 1 with a message (*ret, and its fds in fds[], *n_fds of them, which the
 * caller closes), 0 at EOF, negative errno (-EBADMSG: not one JSON
 * object, or too many fds, all closed then).
 */
int sr_ctl_recv(int fd, json_t **ret, int fds[SR_CTL_FDS_MAX], size_t *n_fds);
/* The same for a message whose fds are not wanted: any it carries are closed. */
int sr_ctl_recv_nofds(int fd, json_t **ret);

/*
 * The peer of a connected unix socket is this user in this PID
 * namespace, not a sandbox's process (or the check cannot be made:
 * -errno).
 */
int sr_ctl_peer_is_us(int fd);

/* Client: a connection to the keeper of the sandbox whose state directory is dir. */
int sr_ctl_connect(const char *dir, int *ret, struct sr_error *err);
/*
 * The same for an event loop (serve's): the connection is non-blocking,
 * and a keeper whose queue of connections is full (stopped, or not
 * taking them) is not waited for: -EAGAIN.
 */
int sr_ctl_connect_nowait(const char *dir, int *ret, struct sr_error *err);
/*
 * Client: one request, one reply, on a connection of its own. A reply
 * with "ok": false becomes err (its "error", "status" and "errno"); *ret_reply
 * holds the reply otherwise (NULL: not wanted).
 */
int sr_ctl_call(const char *dir, json_t *req, json_t **ret_reply, struct sr_error *err);
/*
 * The same for the user's living sandbox ref (an id, a prefix of one, or
 * a name: state.h), found in the user's state directory.
 */
int sr_ctl_call_ref(const char *ref, json_t *req, json_t **ret_reply, struct sr_error *err);
/*
 * Client: asks the keeper of sandbox id, in the state directory statedir,
 * to end its sandbox and remove it (rm -f), and does not wait for the
 * end. nowait: a keeper whose queue of connections is full is not waited
 * for either (-EAGAIN), as an event loop needs: a keeper stopped would
 * stop it. The connection is closed at once, or is *ret_fd (NULL: not
 * wanted), which the keeper answers when the sandbox is gone.
 */
int sr_ctl_ask_rm(const char *statedir, const char *id, bool nowait, int *ret_fd);
/* The same check on a reply already read. */
int sr_ctl_reply_error(json_t *reply, struct sr_error *err);
/* {"ok": false, "error": msg, "status": status}, for a keeper's reply. */
json_t *sr_ctl_error_reply(const struct sr_error *err);
