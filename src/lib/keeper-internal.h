/* SPDX-License-Identifier: MIT */
/*
 * The keeper's parts (keeper.c): what they share. keeper.c has the loop,
 * the sandbox's start and end and the create command's answer;
 * keeper-clients.c the control socket's connections and their requests;
 * keeper-exec.c exec and warm invocations; keeper-work.c the workers
 * (cp, files, diff/apply, snapshot); keeper-ports.c published ports and
 * their relays; keeper-state.c state.json, inspect and the deadline.
 * Nothing here is for any other module: keeper.h is the keeper's face.
 */
#pragma once

#include "artifacts.h"
#include "config.h"
#include "log.h"
#include "relay.h"
#include "result.h"
#include "sandbox.h"
#include "snapshot.h"

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

/*
 * Connections at once: each is an fd and a little memory. Past this an
 * idle one (connected, asking nothing) makes room for a new one, so that
 * the user's idle connections cannot keep out an rm; past the reserve,
 * refused. Requests that keep their connection until they end (an exec,
 * a worker's) are CLIENTS_MAX at most, the next refused: the reserve is
 * always there for rm and inspect (keeper_on_request).
 */
#define CLIENTS_MAX	512
#define CLIENTS_RESERVE 32

struct client {
	int fd;
	pid_t pid;	   /* the process it exec'd, 0 before (or none) */
	uint32_t spawn;	   /* its exec's SPAWN, until PID 1 answers; 0 for none */
	uint32_t stat;	   /* its inspect's STAT, until PID 1 answers; 0 for none */
	uint32_t work;	   /* the worker it waits for (cp, snapshot), 0 for none */
	int wait_kind;	   /* a worker's request waiting for room (keeper_work_next()); 0 */
	char *wait_path;   /* its path (NULL: none) */
	int wait_fd;	   /* its stream, -1 */
	uint64_t wait_seq; /* the order they came in */
	int64_t since_ns;  /* connected */
	struct sr_snapshot_new snap; /* a snapshot being made for it (name set) */
	int snap_fd;		     /* its file, watched for growth (SNAPSHOT_IDLE_MS); -1 */
	off_t snap_size;	     /* its size at the last look */
	int64_t snap_idle_ms;
	int64_t start_ns;
	int timerfd; /* its --timeout, -1 for none */
	bool timed_out;
	bool waits_end;	    /* rm: answered once the sandbox is gone */
	bool holds;	    /* hold: the sandbox ends when this client hangs up (a warm pool's) */
	bool hung_up;	    /* gone: its process is killed, nobody is told */
	bool killed;	    /* that kill is sent */
	int cancel_sig;	    /* the signal that ended its exec before PID 1 started it; 0 */
	int64_t oom_before; /* the sandbox's OOM kills when its exec began; -1 unknown */
	/* A warm invocation's exit, seen before its release: told once that is read. */
	bool exit_pending;
	struct sr_exit exit;
	int64_t exit_ns;
};

/* A published port: 127.0.0.1:host_port and [::1]:host_port on the host, port inside. */
struct port {
	int port, host_port;
	int listen_fd, listen_fd6; /* listen_fd6: -1 on a host without IPv6 loopback */
	bool owner_only; /* a preview's (serve): the keeper's own user's connections only */
};

/* One connection to a published port: waiting for the sandbox's side, then relayed. */
struct conn {
	int host_fd;
	int sandbox_fd; /* -1 until PID 1 has connected */
	uint32_t id;	/* the CONNECT's, while waiting */
	struct sr_relay relay;
};

struct keeper {
	const struct sr_config *config;
	struct sr_sink sink;
	int ready_fd; /* the create command's socket, until the sandbox is ready */
	/*
	 * Then the same socket, until create says the id is out (keeper.h):
	 * awaited in the loop, which serves rm and keeps the deadline
	 * meanwhile -- a create stopped (Ctrl-Z) must not stop its sandbox's
	 * keeper with it. Closed first: nobody heard, the sandbox ends.
	 */
	int ack_fd;
	bool unheard;
	int log_fd;
	size_t logged;
	char id[33];
	char *dir;
	int lock;
	json_t *state;
	int64_t save_at_ns; /* state.json to write then (keeper_save_state_later), 0: nothing */
	int64_t trim_at_ns; /* its code's pages to drop then (TRIM_IDLE_MS), 0: nothing */
	struct sr_result record; /* enforced, as create found it */
	struct sr_sandbox *sb;
	int listen_fd;
	int sigfd;
	int deadline_fd;
	struct client **clients;
	size_t n_clients;
	size_t n_waiting;  /* the clients' worker requests waiting for room (keeper_work_next()) */
	uint64_t work_seq; /* worker requests come in so far */
	struct port *ports;
	size_t n_ports;
	struct conn **conns;
	size_t n_conns;
	const char *end_reason;	  /* NULL until the sandbox is ending */
	int64_t accept_paused_ns; /* CLOCK_MONOTONIC until which nothing is accepted */
	bool done;
	int64_t t0_ns;	/* CLOCK_REALTIME_COARSE before the sandbox: the changes' base */
	bool collected; /* create --export/--changes taken out (artifacts.h) */
	struct sr_artifacts *artifacts; /* while they are */
	struct sr_error artifacts_err;	/* the first that failed, told to rm */
	/*
	 * A warm pool's sandbox its pool has not held yet (config.h
	 * pool_token): no request is taken but rm and the pool's hold.
	 */
	bool reserved;
	/*
	 * Its pool's word (config.h pool_token, in secmem.h's memory) until
	 * the hold it opens, then wiped and NULL: a sandbox is held once, so
	 * the word opens nothing of the keeper's from then on, and the keeper
	 * of a sandbox taken, which runs whatever its taker asks beside the
	 * sandbox, holds nothing that works on the pool's other sandboxes.
	 */
	char *pool_token;
};

/* keeper.c */
void keeper_begin_end(struct keeper *k, const char *reason);
void keeper_trim_when_idle(struct keeper *k);

/* keeper-clients.c */
void keeper_hang_up(struct client *cl);
bool keeper_client_gone(const struct client *cl);
void keeper_drop_client(struct keeper *k, size_t i);
void keeper_reply(struct client *cl, json_t *msg, const int *fds, size_t n_fds);
void keeper_reply_error(struct client *cl, int code, int status, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
bool keeper_under_way(const struct client *cl);
const char *keeper_busy_text(const struct keeper *k);
void keeper_out_of_fds(struct keeper *k);
int keeper_arm_client_timer(struct client *cl, int64_t ms, bool repeat);
void keeper_on_client_timer(struct keeper *k, struct client *cl);
void keeper_on_connection(struct keeper *k);
void keeper_on_request(struct keeper *k, struct client *cl);
void keeper_end_clients(struct keeper *k);

/* keeper-exec.c */
void keeper_exec_ended(struct keeper *k, struct client *cl, const struct sr_exit *e);
void keeper_on_exited(void *ctx, struct sr_sandbox *sb, const struct sr_exit *e);
void keeper_on_ends_exited(void *ctx, struct sr_sandbox *sb, const struct sr_exit *e);
void keeper_on_spawned(void *ctx, struct sr_sandbox *sb, uint32_t id, pid_t pid, int pty,
		       const struct sr_error *err);
void keeper_do_exec(struct keeper *k, struct client *cl, json_t *req, int *fds, size_t n_fds);
void keeper_cancel_spawn(struct keeper *k, struct client *cl, int sig);
void keeper_do_hold(struct keeper *k, struct client *cl, bool hold, json_t *req);

/* keeper-work.c */
int keeper_work_kind(const char *op);
void keeper_do_copy(struct keeper *k, struct client *cl, json_t *req, int kind, int *fds,
		    size_t n_fds);
void keeper_do_changes(struct keeper *k, struct client *cl, int *fds, size_t n_fds);
void keeper_do_snapshot(struct keeper *k, struct client *cl, json_t *req);
void keeper_on_snapshot_timer(struct client *cl);
void keeper_on_worked(void *ctx, struct sr_sandbox *sb, uint32_t id, const struct sr_error *err);
void keeper_work_forget(struct keeper *k, struct client *cl);
void keeper_work_next(struct keeper *k);

/* keeper-ports.c */
void keeper_do_port(struct keeper *k, struct client *cl, json_t *req);
/* A connection waits on listen_fd, one of p's. */
void keeper_on_port_connection(struct keeper *k, struct port *p, int listen_fd);
void keeper_on_connected(void *ctx, struct sr_sandbox *sb, uint32_t id, int fd,
			 const struct sr_error *err);
void keeper_drop_conn(struct keeper *k, size_t i);

/* keeper-state.c */
json_t *keeper_initial_state(struct keeper *k);
void keeper_state_made(struct keeper *k);
void keeper_save_state(struct keeper *k);
void keeper_save_state_later(struct keeper *k);
int keeper_set_deadline(struct keeper *k, uint64_t ms, bool later);
json_t *keeper_inspect_json(struct keeper *k, const struct sr_usage *u);
void keeper_on_stats(void *ctx, struct sr_sandbox *sb, uint32_t id, const struct sr_usage *u);
void keeper_do_timeout(struct keeper *k, struct client *cl, json_t *req);
void keeper_do_inspect(struct keeper *k, struct client *cl);
