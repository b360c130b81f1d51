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

/*
 * A TCP listener on this host's loopback, 127.0.0.1:port and [::1]:port
 * both (0: the kernel's choice, one free on both). Both, because
 * "localhost" is ::1 as well, first for many clients (browsers, curl,
 * Python, Node where /etc/hosts says so): with 127.0.0.1 alone, another
 * user of the host who listened on [::1]:port got what the owner sent to
 * localhost:port. Where either side is taken (or privileged), with
 * fall_back, the kernel's choice of a port free on both; without it,
 * -EADDRINUSE, and *ret_v6_taken (if given) says whether ::1's side was.
 * A host without IPv6 loopback: 127.0.0.1 alone (*ret_fd6 -1).
 * The 127.0.0.1 socket's fd, its port in *ret_port; or -errno.
 */
int sr_listen_loopback(int port, bool fall_back, int *ret_fd6, int *ret_port, bool *ret_v6_taken);
