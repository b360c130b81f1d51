/* SPDX-License-Identifier: MIT */
#pragma once

#include <stdbool.h>
#include <sys/types.h>

/*
 * The user who owns the other end of an accepted TCP connection that came
 * over this host's loopback (its socket is in our network namespace), as
 * the kernel's socket diagnostics tell it (sock_diag, what `ss -e` shows):
 * 0 and *ret, or -errno (-ENOENT: no such socket here, or one its program
 * has closed: the client gone, or not local).
 */
int sr_tcp_peer_uid(int fd, uid_t *ret);

/*
 * uid is our effective uid, and one that can be told apart: not the
 * overflow uid, which every uid our user namespace does not map reads as.
 */
bool sr_uid_is_us(uid_t uid);
