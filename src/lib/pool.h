/* SPDX-License-Identifier: MIT */
/*
 * Warm pools: living sandboxes of one configuration made ahead, so that a
 * request for one is answered at once (serve --warm; invoke). Each is a
 * keeper's sandbox like create's (launch.h), held by the pool (the
 * keeper's hold: "warm" in ls, no deadline, gone with the pool even when
 * the pool's process is killed). sr_pool_take() hands one over --
 * released, with the deadline asked for -- and it is the taker's from
 * then on: used once, then removed (rm). The pool makes another in the
 * background, from the caller's event loop, starting 50 ms after a take
 * (not in the middle of the request that took one; takes in a burst are
 * all served before a refill competes with them), or at once when
 * requests wait for one (sr_pool_want).
 *
 * A pool that cannot make a sandbox (a bad profile, a host without a
 * helper) says why once on its sink and tries again later, each time
 * waiting longer (1 s doubling to a minute); take fails meanwhile with
 * -EAGAIN, and the caller makes a sandbox itself (a cold create), which
 * reports the same failure to its user.
 */
#pragma once

#include "config.h"
#include "log.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct sr_pool;

struct sr_pool_opts {
	/* What each sandbox is made from; must outlive the pool. Its timeout is a taken one's
	 * default deadline. */
	const struct sr_config *config;
	unsigned size;		    /* sandboxes kept warm */
	unsigned parallel;	    /* made at once at most (0: 1), so that making them does not
				       crowd out what the caller serves */
	enum sr_log_level level;    /* the keepers' messages */
	const struct sr_sink *sink; /* failures to make one (warnings) */
	/*
	 * Each sandbox set up up to the exec of its agent (a deployment's
	 * invocation): held, with the agent parked on pipes of the pool's
	 * (the keeper's exec "invoke"), so that a taker's first byte on its
	 * stdin starts it and its exit ends the sandbox. Take it with
	 * sr_pool_take_parked().
	 */
	bool park;
	const char *what; /* what it says it is in a warning (NULL: "profile NAME") */
	/* Called when a sandbox has become ready (a caller may be waiting for one). */
	void (*ready)(void *ctx, struct sr_pool *p);
	void *ctx;
};

int sr_pool_new(const struct sr_pool_opts *o, struct sr_pool **ret, struct sr_error *err);

/*
 * The one fd to poll for POLLIN (an epoll instance of the pool's own fds:
 * keepers' answers, held connections, its timer).
 */
int sr_pool_fd(const struct sr_pool *p);
/* Reads what is there, makes up for what went, never blocks. */
void sr_pool_dispatch(struct sr_pool *p);

/*
 * A warm sandbox, released with a deadline of ms from now (UINT64_MAX:
 * the configuration's timeout; 0: none): its id in ret_id. -EAGAIN when
 * none is ready. The release is sent, not waited for (its keeper reads
 * it before the held connection's end): state.json says "running" and
 * the deadline a moment later.
 */
int sr_pool_take(struct sr_pool *p, uint64_t ms, char ret_id[33], struct sr_error *err);

/*
 * A parked invocation's sandbox (o.park), the taker's from now: its
 * holding connection, on which the keeper sends the process's exit
 * ({"event": "exit", ...}, as for an exec) -- closing it kills the
 * process --, and the process's stdin (to write), stdout and stderr (to
 * read), non-blocking. Not released yet: see sr_pool_taken_release().
 */
struct sr_pool_taken {
	char id[33];
	int hold;
	int stdio[3];
	pid_t pid;
	uint64_t release_ms; /* what the release gives it: the take's ms */
	int64_t taken_ns;    /* when (CLOCK_MONOTONIC): its record's time counts from here */
};
/*
 * The release of a parked one, sent by the taker once it has written the
 * process's first input: the process starts before its keeper wakes.
 * Until then the sandbox has no deadline: a taker that cannot send it
 * closes the sandbox (sr_pool_taken_close), which kills the process.
 * Closing a parked one unreleased ends it too, its process unstarted.
 */
int sr_pool_taken_release(struct sr_pool_taken *t);
int sr_pool_take_parked(struct sr_pool *p, uint64_t ms, struct sr_pool_taken *ret,
			struct sr_error *err);
void sr_pool_taken_close(struct sr_pool_taken *t);
/* extra sandboxes wanted beyond the pool's size (requests waiting for one); 0 when none. */
void sr_pool_want(struct sr_pool *p, unsigned extra);

struct sr_pool_stats {
	unsigned ready, making;
	uint64_t taken, made, failed;
};
void sr_pool_stats(const struct sr_pool *p, struct sr_pool_stats *ret);
/* The ids of the sandboxes it holds (ready ones), for a caller that waits for their end. */
size_t sr_pool_ids(const struct sr_pool *p, char (*ids)[33], size_t n);

/* Lets every warm sandbox go (each keeper ends its own) and frees the pool. NULL is fine. */
void sr_pool_free(struct sr_pool *p);
