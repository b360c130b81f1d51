/* SPDX-License-Identifier: MIT */
/*
 * The local API server (`sandbox-run serve`, docs/api.md): HTTP/1.1 and
 * JSON over libmicrohttpd, in one thread and one event loop (epoll), with
 * sandboxes made and served through their keepers, as the verbs do: the
 * API is a front for the same lifecycle, and `sandbox-run ls/exec/rm` see
 * what it made (docs/architecture.md says why).
 *
 * Who may talk to it: on a Unix socket, the server's own user (the peer's
 * uid, SO_PEERCRED, at accept); on TCP, whoever shows the bearer token the
 * server wrote into a 0600 file. Nothing of it is reachable from inside a
 * sandbox (docs/security.md).
 */
#pragma once

#include "log.h"

#include <stdint.h>

#define SR_SERVE_LISTEN_MAX 8
#define SR_SERVE_WARM_MAX   16

struct sr_serve_warm {
	const char *profile; /* a profile name or file */
	unsigned size;	     /* sandboxes kept warm */
};

struct sr_serve_opts {
	const char *listen[SR_SERVE_LISTEN_MAX]; /* "unix:PATH", "ADDR:PORT", ":PORT", "PORT" */
	unsigned n_listen;			 /* 0: unix:<state dir>/serve.sock */
	const char *token_file;			 /* NULL: <state dir>/serve-PORT.token */
	struct sr_serve_warm warm[SR_SERVE_WARM_MAX];
	unsigned n_warm;
	unsigned warm_deployments; /* sandboxes kept warm per deployment (invoke) */
	const char *e2b_profile;   /* E2B's "base" template (NULL: e2b) */
	unsigned max_sandboxes;	   /* live ones it made, at most (0: 64) */
	unsigned max_connections;  /* at once (0: 256) */
	/*
	 * Processes started through it (exec, envd's Start) running at once
	 * (0: 128): each holds its pipes and its keeper's connection, and
	 * E2B's go on once their client has gone.
	 */
	unsigned max_processes;
	unsigned
	    client_timeout_s; /* a client that sends nothing for this long is dropped (0: 30) */
	uint64_t max_body;    /* a JSON request's bytes (0: 1 MiB) */
	uint64_t max_upload;  /* a file's bytes (0: 1 GiB) */
	uint64_t max_output;  /* an exec's stdout and stderr each, when not streamed (0: 16 MiB) */
	/*
	 * A file read or listing whose worker in the sandbox moves nothing
	 * this long (the agent stopped it) is answered 504 (0: 60 s).
	 */
	uint64_t idle_ms;
	enum sr_log_level level;    /* the keepers' messages */
	const struct sr_sink *sink; /* the server's own: what it serves at, warnings, -v lines */
};

struct sr_serve;

/*
 * Loads libmicrohttpd, opens the listening sockets, writes the token
 * file, starts the warm pools. Says where it listens on o->sink (info).
 */
int sr_serve_new(const struct sr_serve_opts *o, struct sr_serve **ret, struct sr_error *err);
/*
 * Its i-th listener ("unix:PATH" or "http://ADDR:PORT"), NULL past the
 * last; *ret_token_file: the token's file for a TCP one, else NULL.
 */
const char *sr_serve_listening(const struct sr_serve *s, unsigned i, const char **ret_token_file);
/*
 * Serves until SIGTERM, SIGINT or SIGHUP (blocked here, read from a
 * signalfd); then takes down every sandbox it made and its warm ones,
 * removes its sockets and token file, and returns 0.
 */
int sr_serve_run(struct sr_serve *s, struct sr_error *err);
void sr_serve_free(struct sr_serve *s);
