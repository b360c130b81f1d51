/* SPDX-License-Identifier: MIT */
/*
 * The supervisor <-> sandbox protocol, in one place.
 *
 * A SOCK_SEQPACKET | SOCK_CLOEXEC socketpair: one message per send, never
 * merged or split. The sandbox side is PID 1 of the new PID namespace.
 *
 *   parent                              child (PID 1)
 *   clone3 ---------------------------> waits for GO
 *   [1] uid/gid maps, cgroup, network
 *   GO -------------------------------> [2] mounts, pivot_root, network,
 *                                           hostname, caps, seccomp
 *   <------------------------------- WARNING (any number, during [2])
 *                                       [3] forks the agent, which execs
 *   <------------------------------- EXEC (agent running) | ERROR
 *   starts pasta <------------------- TAP + fd (pasta only)
 *   waits, forwards signals, timeout
 *   <------------------------------- EXIT (agent's wait status, disk use)
 *   or, at the timeout:
 *   END, then SIGCHLD to wake it -----> kills and reaps the rest
 *   <------------------------------- ENDED (disk use)
 *   wait4(PID 1): rusage of the whole tree
 *
 * ERROR carries the errno, the exit status to use (125/126/127) and the
 * message; the child exits right after sending it. WARNING carries a
 * message the supervisor prints, for a step that failed without making
 * the sandbox any less safe (the set-up goes on). TAP carries one fd
 * (SCM_RIGHTS): the sandbox's tap device, made and configured inside, for
 * the egress helper that is handed its tap (net.h). No other message
 * carries one, and an fd that comes with any other is closed unread. EOF
 * without EXIT or ENDED means PID 1 died (killed, or after the timeout's
 * grace).
 */
#pragma once

#include "log.h"

#include <stdint.h>

/*
 * END is the one message after GO to PID 1, which waits for signals, not
 * on the socket: the supervisor sends it, then a SIGCHLD, and PID 1 looks
 * for it whenever it wakes. It comes on the socket, which nothing in the
 * sandbox can reach, not as a signal: the agent can queue any siginfo to
 * PID 1 (rt_sigqueueinfo), and a standard signal already pending is lost.
 * PID 1 kills every other process, reaps them, sends ENDED (not EXIT: the
 * agent did not end by itself) and exits.
 */

enum sr_msg_type {
	SR_MSG_GO = 1,
	SR_MSG_ERROR,
	SR_MSG_EXEC,
	SR_MSG_EXIT,
	SR_MSG_WARNING,
	SR_MSG_TAP,
	SR_MSG_ENDED,
	SR_MSG_END,
	_SR_MSG_TYPE_MAX,
};

struct sr_msg {
	uint32_t type;
	int32_t code;		     /* ERROR: negative errno */
	int32_t status;		     /* ERROR: exit status; EXIT: the agent's wait status */
	int32_t pid;		     /* EXEC: the agent's pid inside the sandbox */
	int64_t value;		     /* EXIT, ENDED: bytes used on the sandbox's disk, -1 unknown */
	char text[SR_ERROR_MSG_MAX]; /* ERROR, WARNING: the message */
};

int sr_msg_send(int fd, const struct sr_msg *m);
/* m with passed_fd attached (SCM_RIGHTS); the caller keeps its own copy. */
int sr_msg_send_fd(int fd, const struct sr_msg *m, int passed_fd);
/*
 * 1 on a message, 0 on EOF, negative errno on error or a malformed message.
 * *ret_fd: the fd a TAP message carries (O_CLOEXEC), else -1; a TAP
 * without one is malformed. NULL ret_fd: TAP is refused (-EBADMSG).
 */
int sr_msg_recv(int fd, struct sr_msg *ret, int *ret_fd);
/* Sends err as an ERROR message (best effort: the caller exits next). */
void sr_msg_send_error(int fd, const struct sr_error *err);
/* Sends err's message as a WARNING (best effort: a lost warning changes nothing). */
void sr_msg_send_warning(int fd, const struct sr_error *err);
