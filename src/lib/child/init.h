/* SPDX-License-Identifier: MIT */
/*
 * PID 1 inside the sandbox: forks the agent, reaps every zombie, forwards
 * signals to the agent's process group, and reports the agent's exit to the
 * supervisor. Ends when the agent does, killing and reaping the rest of
 * the PID namespace first, or when the supervisor's timeout asks it to
 * (protocol.h).
 */
#pragma once

#include "sandbox.h"

__attribute__((noreturn)) void sr_init_run(struct sr_plan *p);
