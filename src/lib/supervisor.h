/* SPDX-License-Identifier: MIT */
/*
 * The supervisor: stays outside the sandbox. Creates it (clone3 into new
 * namespaces), does the parent-side steps, waits with the timeout, forwards
 * signals, and fills the result. Never execs anything itself.
 */
#pragma once

#include "config.h"
#include "result.h"

/* 0 when the sandbox ran (r says how it ended), negative on a setup failure (err). */
int sr_supervisor_run(const struct sr_config *c, struct sr_result *r, struct sr_error *err);
