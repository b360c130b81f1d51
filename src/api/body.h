/* SPDX-License-Identifier: MIT */
/*
 * What API requests carry, read into what the verbs take. Pure (no I/O),
 * so that the fuzz harness (tests/fuzz/fuzz-api.c) can drive it.
 *
 * A create's JSON becomes create's own command line (options.h): every
 * value is then checked, and refused, by the code the CLI has, and
 * nothing the CLI could not ask for can be asked here. Its message names
 * the field, not the option (sr_api_create_error()).
 */
#pragma once

#include "config.h"
#include "json.h"
#include "log.h"
#include "wire.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* Nesting accepted in a request's JSON (jansson recurses). */
#define SR_API_JSON_DEPTH 8
/*
 * E2B's metadata at most, as compact JSON: it is kept beside the
 * sandbox's state (serve's api.json) and given in every list, so a
 * create may not make it as large as a body (1 MiB).
 */
#define SR_API_METADATA_MAX 8192

/*
 * A duration in a request (sr_api_duration(): a string as on the command
 * line, or seconds), or an error naming the field, key, and the value it
 * got: "timeout: '5x' is not a duration (...)".
 */
int sr_api_duration_field(const char *key, json_t *v, uint64_t *ret_ms, struct sr_error *err);

struct sr_api_create {
	struct sr_strv argv; /* "create", OPTIONS..., [AGENT] */
	char *profile;	     /* the profile asked for, NULL for the default */
	char *from;	     /* the snapshot asked for, NULL for none */
	bool poolable;	     /* nothing but the profile and a timeout: a warm sandbox will do */
	uint64_t timeout_ms; /* with has_timeout */
	bool has_timeout;
	json_t *metadata; /* E2B's metadata (strings), NULL when none */
};
void sr_api_create_free(struct sr_api_create *c);

/*
 * POST /v1/sandboxes: {"profile", "name", "timeout", "memory", "cpus",
 * "pids", "disk", "net", "allow": [..], "deny": [..], "env": {K: V},
 * "env_file", "workspace", "from", "agent", "strict", "ro_bind": [[SRC,
 * DST]..], "bind": [[SRC, DST]..]} (docs/api.md). Sizes and durations
 * are strings as on the command line, or numbers (bytes, seconds).
 */
int sr_api_parse_create(json_t *body, struct sr_api_create *ret, struct sr_error *err);
/*
 * An error of create's parser over such an argv said of the field it
 * came from, as the request named it: "option --memory: size '1K' is
 * below 1M" is "memory: size '1K' is below 1M" (no client gave an option).
 */
void sr_api_create_error(struct sr_error *err);
/*
 * E2B's POST /sandboxes (v2): templateID names a profile ("base", the
 * SDK's default: base_profile; a name, never a path), timeout in seconds
 * (up to a living sandbox's longest), envVars (names as create's --env
 * takes them), allow_internet_access (a boolean), metadata. Each is
 * checked here, a bad one said of the field and its value as the SDK
 * sent it: "envVars: bad variable name 'A B' (...)", never as create's
 * option. What E2B offers and sandbox-run does not (mcp, volumeMounts,
 * network rules) is refused, not ignored.
 */
int sr_api_parse_e2b_create(json_t *body, const char *base_profile, struct sr_api_create *ret,
			    struct sr_error *err);

struct sr_api_exec {
	json_t *argv; /* array of strings */
	json_t *env;  /* array of "KEY=VALUE" */
	char *cwd;    /* NULL: the sandbox's default */
	char *input;  /* stdin's bytes, with has_input */
	size_t input_len;
	bool has_input;
	uint64_t timeout_ms; /* 0: none */
	bool stream;	     /* NDJSON events as they come */
	bool base64;	     /* output as base64, not text */
};
void sr_api_exec_free(struct sr_api_exec *x);

/*
 * POST /v1/sandboxes/{id}/exec: {"argv": [..]} or {"cmd": "shell
 * string"}, "env": {K: V}, "cwd", "stdin" (text) or "stdin_base64",
 * "timeout" (duration), "stream": bool, "output": "text" | "base64".
 */
int sr_api_parse_exec(json_t *body, struct sr_api_exec *ret, struct sr_error *err);
/*
 * envd's process.Process/Start request (protobuf JSON): process.cmd,
 * args, envs, cwd (relative cwds and a missing one: from home, as envd
 * has it). A pty is refused (not supported).
 */
int sr_api_parse_envd_start(json_t *body, const char *home, struct sr_api_exec *ret,
			    struct sr_error *err);

/* A duration: a string as on the command line ("90s", "5m") or a number of seconds. */
int sr_api_duration(json_t *v, uint64_t *ret_ms);
