/* SPDX-License-Identifier: MIT */
/*
 * The agent's environment: clean, never the caller's. PATH, HOME, LANG and
 * TERM, then --pass-env names copied from the caller, then the --env-file
 * (secrets), then a deployment's secrets (config.h), then [env]/--env
 * values; a later KEY replaces an earlier one.
 * Values are never logged.
 */
#pragma once

#include "config.h"

/* caller_env: the caller's environment (environ), for LANG, TERM and pass-env. */
int sr_env_build(const struct sr_config *c, char *const *caller_env, struct sr_strv *ret,
		 struct sr_error *err);

/*
 * Reads an env file: KEY=VALUE lines, blank lines and '#' comments
 * ignored, values taken literally (no quotes or escapes, as docker
 * --env-file). Refused when group- or world-accessible: it holds secrets.
 */
int sr_env_read_file(const char *path, struct sr_strv *out, struct sr_error *err);

bool sr_env_valid_name(const char *s, size_t len);
