/* SPDX-License-Identifier: MIT */
/*
 * Starting a keeper (keeper.h) from a process that goes on and does not
 * wait for it: the server, a warm pool. `create` forks its keeper and
 * blocks on its answer; here the answer is read as it comes, from the
 * caller's event loop.
 *
 * The keeper is made by a double fork: it is never the caller's child
 * (nothing to reap; like create's, it outlives the caller), leads a
 * session of its own, and holds none of the caller's fds (a server's
 * listening sockets and clients), only 0-2 and its answer socket. Its
 * answer is keeper.h's: message lines, then "ok ID" or "error STATUS
 * ERRNO TEXT"; the id, once read, is acknowledged at once. Closing the
 * socket before that (sr_launch_cancel) makes the keeper end its
 * sandbox: one whose id nobody heard must not live on.
 */
#pragma once

#include "config.h"
#include "log.h"

#include <stdbool.h>

struct sr_launch {
	int fd;		     /* the answer's socket, to poll for POLLIN; -1 once answered */
	char id[33];	     /* the sandbox's, once it is ready ("" until then) */
	struct sr_error err; /* why it failed: the keeper's message and exit status */
	bool done;	     /* answered (id set) or failed (err set) */
	char buf[4096];	     /* a line being read */
	size_t len;
	const struct sr_sink *sink; /* the keeper's messages before its answer (warnings) */
};

/*
 * Forks the keeper of a sandbox made from c, its messages at level. l is
 * filled in; poll l->fd and call sr_launch_read() when it is readable.
 * The keeper gets c's secrets, which no child of the caller inherits
 * (secrets.h), in a copy of its own.
 */
int sr_launch_start(const struct sr_config *c, enum sr_log_level level, const struct sr_sink *sink,
		    struct sr_launch *l, struct sr_error *err);
/*
 * Reads what the keeper said so far (never blocks): true once l->done.
 * The socket stays open: the caller takes it out of its poll set, then
 * closes it with sr_launch_cancel(). (Closing an fd does not take it out
 * of an epoll set while another process still holds the file -- a keeper
 * being forked at that moment does, until it closes what it inherited.)
 */
bool sr_launch_read(struct sr_launch *l);
/* Closes the socket; before the answer, that makes the keeper end its sandbox. */
void sr_launch_cancel(struct sr_launch *l);
