/* SPDX-License-Identifier: MIT */
/*
 * The keeper: the one process that owns a living sandbox, as conmon does
 * for crun. `create` forks it and returns once the sandbox is ready; from
 * then on the keeper holds the sandbox (its PID 1 dies with the keeper:
 * the parent-death signal), enforces its deadline, serves its control
 * socket (control.h) -- exec, inspect, timeout, rm -- and, when the
 * sandbox ends for any reason, removes every trace of it and exits.
 */
#pragma once

#include "config.h"
#include "log.h"

/*
 * Runs in a process of its own (forked by `create`, in a new session):
 * makes the sandbox c describes and keeps it until it ends. ready_fd, one
 * end of a SOCK_STREAM socketpair, gets one line once the sandbox is ready
 * ("ok ID") or could not be made ("error STATUS ERRNO MESSAGE": the exit
 * status, and the errno the failure had, which the API answers by), then
 * is closed. After "ok ID" the keeper awaits one byte back in its loop
 * (serving meanwhile), sent once the id is out (printed, taken): the
 * other end closed instead means nobody heard it, and the sandbox is
 * ended. Until the answer its messages go down the socket too ("msg LEVEL
 * TEXT", at level); afterwards to the sandbox's keeper.log. Returns the
 * keeper's exit status.
 */
int sr_keeper_main(const struct sr_config *c, enum sr_log_level level, int ready_fd);
