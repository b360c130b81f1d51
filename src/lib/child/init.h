/* SPDX-License-Identifier: MIT */
/*
 * PID 1 inside the sandbox, once it is set up: says READY, then spawns
 * the processes its host asks for (the agent, each exec), reports their
 * exits, passes signals to them and reaps every orphan (protocol.h).
 * Ends when asked (END), when a process spawned to end the sandbox exits,
 * or when its host is gone, killing and reaping the rest of the PID
 * namespace first.
 */
#pragma once

#include "setup.h"

__attribute__((noreturn)) void sr_init_run(struct sr_plan *p);
