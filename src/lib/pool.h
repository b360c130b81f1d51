/* SPDX-License-Identifier: MIT */
/*
 * Warm pools: living sandboxes of one configuration made ahead, so that a
 * request for one is answered at once (serve --warm; invoke). Each is a
 * keeper's sandbox like create's (launch.h), held by the pool (the
 * keeper's hold: "warm" in ls, no deadline, gone with the pool even when
 * the pool's process is killed). sr_pool_take() hands one over --
 * released by the taker, with the deadline asked for -- and it is the
 * taker's from then on: used once, then removed (rm). The pool makes another in the
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

#include <jansson.h>

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
	 * sr_pool_take().
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
 * A warm sandbox, the taker's from now: its id, its holding connection,
 * what state.json says of it (state, as the keeper had it when it was
 * held: "warm", no deadline) and, for a parked one (o.park), its
 * process's stdin (to write), stdout and stderr (to read), non-blocking.
 * -EAGAIN when none is ready.
 *
 * Not released yet: the taker sends the release (sr_pool_taken_release),
 * which gives it a deadline of ms from the keeper's reading it
 * (UINT64_MAX: the configuration's timeout; 0: none), when it suits it:
 * a parked one's once the process's first input is written (the process
 * starts before its keeper wakes); serve's after its answer is on its way
 * (the keeper woken by it would otherwise run ahead of the answer, on a
 * small host). Not waited for: the keeper reads it before the end of the
 * held connection (a seqpacket socket keeps their order), which the taker
 * closes (sr_pool_taken_close). Closed unreleased, the sandbox ends (a
 * parked one with its process unstarted). On a parked one's holding
 * connection the keeper sends the process's exit ({"event": "exit", ...},
 * as for an exec); closing it kills the process.
 */
struct sr_pool_taken {
	char id[33];
	int hold;
	int stdio[3];
	pid_t pid;
	json_t *state;	     /* the keeper's, when it was held (NULL: it did not say) */
	uint64_t release_ms; /* what the release gives it: the take's ms */
	int64_t taken_ns;    /* when (CLOCK_MONOTONIC): its record's time counts from here */
};
int sr_pool_take(struct sr_pool *p, uint64_t ms, struct sr_pool_taken *ret, struct sr_error *err);
int sr_pool_taken_release(struct sr_pool_taken *t);
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
