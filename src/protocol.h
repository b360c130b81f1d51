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
 *   waits, forwards signals, timeout
 *   <------------------------------- EXIT (agent's wait status, disk use)
 *   wait4(PID 1): rusage of the whole tree
 *
 * ERROR carries the errno, the exit status to use (125/126/127) and the
 * message; the child exits right after sending it. WARNING carries a
 * message the supervisor prints, for a step that failed without making
 * the sandbox any less safe (the set-up goes on). EOF without EXIT means
 * PID 1 died (killed, or sandbox-run's own timeout).
 */
#pragma once

#include "log.h"

#include <stdint.h>

enum sr_msg_type {
	SR_MSG_GO = 1,
	SR_MSG_ERROR,
	SR_MSG_EXEC,
	SR_MSG_EXIT,
	SR_MSG_WARNING,
	_SR_MSG_TYPE_MAX,
};

struct sr_msg {
	uint32_t type;
	int32_t code;		     /* ERROR: negative errno */
	int32_t status;		     /* ERROR: exit status; EXIT: the agent's wait status */
	int32_t pid;		     /* EXEC: the agent's pid inside the sandbox */
	int64_t value;		     /* EXIT: bytes used on the sandbox's disk, -1 unknown */
	char text[SR_ERROR_MSG_MAX]; /* ERROR, WARNING: the message */
};

int sr_msg_send(int fd, const struct sr_msg *m);
/* 1 on a message, 0 on EOF, negative errno on error or a malformed message. */
int sr_msg_recv(int fd, struct sr_msg *ret);
/* Sends err as an ERROR message (best effort: the caller exits next). */
void sr_msg_send_error(int fd, const struct sr_error *err);
/* Sends err's message as a WARNING (best effort: a lost warning changes nothing). */
void sr_msg_send_warning(int fd, const struct sr_error *err);
