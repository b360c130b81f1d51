/* SPDX-License-Identifier: MIT */
/* The server object, for server*.c, http.c and keepers.c (internal.h is the rest's). */
#pragma once

#include "config.h"
#include "pool.h"
#include "internal.h"

struct warm_pool {
	const char *profile;
	struct sr_config config; /* what its sandboxes are made from */
	struct sr_strv argv;	 /* config points into it */
	struct sr_pool *pool;
	struct watch *w;
};

struct srv {
	struct sr_serve_opts o;
	char *statedir;
	int ep; /* every fd of the server's, libmicrohttpd's epoll fd among them */
	int sigfd, tickfd;
	struct watch *sig_w, *tick_w;
	/* --listen's, each 127.0.0.1 one's twin, and the default socket. */
	struct listener listeners[2 * SR_SERVE_LISTEN_MAX + 1];
	unsigned n_listeners;
	char *token; /* hex, in memory no keeper inherits (secmem.h); NULL: no TCP listener */
	char *token_path;
	struct MHD_Daemon *mhd;
	struct watch *mhd_w;
	struct conn_tag *adding; /* the connection being handed to MHD (http.c) */
	/*
	 * Connections of the host's other users on a TCP listener, open at
	 * once (waiting for their head or the API's): at most FOREIGN_MAX, so
	 * that they cannot take every slot from the server's own user.
	 */
	unsigned n_foreign;
	bool foreign_full_said;
	struct warm_pool pools[SR_SERVE_WARM_MAX];
	unsigned n_pools;
	/* Warm sandboxes handed over in this round, released at its end (keepers.c). */
	struct sr_pool_taken releases[16];
	size_t n_releases;
	struct made *made; /* the sandboxes it made, live or not (pruned at each create) */
	size_t n_made, cap_made;
	unsigned creating;	/* creates under way: they count against the cap too */
	struct dep_pool **deps; /* the deployments' warm pools (invoke.c) */
	size_t n_deps;
	struct watch *dead; /* watches to free after this round */
	struct srv_lists lists;
	bool stopping;
};

/* server-listen.c: --listen's spec, its socket bound and in the loop. */
int srv_open_listener(struct srv *s, const char *spec, struct sr_error *err);
bool srv_has_unix_listener(const struct srv *s);
/* The listeners that rest for want of fds (rest()) watched again: the tick's. */
void srv_wake_listeners(struct srv *s);
/* http.c: libmicrohttpd's daemon, in the server's loop. */
int srv_http_start(struct srv *s, struct sr_error *err);
void srv_http_stop(struct srv *s);
/* The warm pool of a profile, NULL if none (keepers.c takes warm sandboxes from it). */
struct warm_pool *srv_warm(struct srv *s, const char *profile);
/*
 * keepers.c: a taken warm sandbox to release once this round's answers
 * are sent (srv_release_taken(), after libmicrohttpd's run); -ENOBUFS
 * when too many wait (the caller releases it at once).
 */
int srv_release_later(struct srv *s, struct sr_pool_taken *t);
void srv_release_taken(struct srv *s);
