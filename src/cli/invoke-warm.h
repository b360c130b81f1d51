/* SPDX-License-Identifier: MIT */
/*
 * `sandbox-run invoke` through a running server (serve --warm): its warm
 * sandbox instead of a cold start, with the same output, exit statuses
 * and --result record (invoke-warm.c).
 */
#pragma once

#include "config.h"
#include "log.h"

/*
 * Invokes name (argv: invoke's own command line, validated; c: its
 * configuration) through the server on the user's default socket. 1 when
 * it was served, *ret_status the exit status to give; 0 when it is the
 * caller's to run cold (said on sink at -v: why), stdin then still whole
 * (what was read of it is put back as a memfd).
 */
int sr_invoke_warm(int argc, char **argv, const char *name, const struct sr_config *c,
		   const struct sr_sink *sink, int *ret_status);
