/* SPDX-License-Identifier: MIT */
/*
 * A sandbox: one set of namespaces, one writable layer, one cgroup, and
 * PID 1 inside, serving its host (protocol.h). The operations a verb may
 * call, as crun's libcrun/container.h has them for containers:
 *
 *   create   prepare the host side, clone PID 1, set it up, wait READY
 *   spawn    start a process inside (the agent, an exec), with its stdio
 *   signal   a spawned process's group
 *   end      ask PID 1 to kill every process and exit (a deadline, rm)
 *   free     whatever is left killed and reaped, host resources released
 *
 * The one-shot run is create + spawn(SR_SPAWN_AGENT | SR_SPAWN_ENDS_SANDBOX)
 * + wait + free. Waiting is the caller's event loop: it polls the fds of
 * sr_sandbox_poll_fds() and calls sr_sandbox_dispatch() when any is
 * readable; dispatch reports through the callbacks given at create. There
 * is no global state: one process may hold many sandboxes, each with its
 * own message sink.
 */
#pragma once

#include "config.h"
#include "log.h"
#include "result.h"

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

struct sr_sandbox;

/* What PID 1 counts of a process's or the sandbox's use (an EXIT's, a STATS's). */
struct sr_rusage {
	double user_ms; /* CPU time */
	double sys_ms;
	int64_t disk_used; /* bytes on the sandbox's disk, -1 unknown */
	int64_t peak_rss;  /* the largest process's peak resident bytes, -1 unknown */
};

/* A spawned process's end, as PID 1 saw it. */
struct sr_exit {
	pid_t pid;	     /* in the sandbox's PID namespace */
	int status;	     /* wait status */
	struct sr_rusage ru; /* of the process and of what it waited for; the disk then */
};

/* Usage so far, as PID 1 counts it (where no cgroup does). */
struct sr_usage {
	int processes;	     /* alive now, PID 1 aside */
	struct sr_rusage ru; /* so far: PID 1, the living and the reaped */
};

struct sr_sandbox_ops {
	/* A spawned process ended (not called for one that ends the sandbox: see ended). */
	void (*exited)(void *ctx, struct sr_sandbox *sb, const struct sr_exit *e);
	/*
	 * The process that ends the sandbox ended: PID 1 has killed and
	 * reaped every other one, and exits next (ended follows, with the
	 * same exit). For a caller that answers at once rather than after
	 * the namespaces' teardown (a warm invocation's). Optional.
	 */
	void (*ends_exited)(void *ctx, struct sr_sandbox *sb, const struct sr_exit *e);
	/*
	 * PID 1 is gone and reaped: the sandbox is over. ends: the exit of
	 * the process that ended it, or NULL (END, a kill, a failure).
	 */
	void (*ended)(void *ctx, struct sr_sandbox *sb, const struct sr_exit *ends);
	/* A worker of sr_sandbox_work() is done: err->code 0, or why it failed. */
	void (*worked)(void *ctx, struct sr_sandbox *sb, uint32_t id, const struct sr_error *err);
	/*
	 * A connection of sr_sandbox_connect(): fd (the callee's, connecting:
	 * non-blocking, to be checked with SO_ERROR), or -1 and why.
	 */
	void (*connected)(void *ctx, struct sr_sandbox *sb, uint32_t id, int fd,
			  const struct sr_error *err);
	/*
	 * A process of sr_sandbox_spawn_start(): its pid inside and the
	 * master of its pty (-1 without one; the callee's), or pid 0 and why
	 * (err->status 126/127/125 as sr_sandbox_spawn() has them).
	 */
	void (*spawned)(void *ctx, struct sr_sandbox *sb, uint32_t id, pid_t pid, int pty,
			const struct sr_error *err);
	/* The answer to sr_sandbox_stat_start(). */
	void (*stats)(void *ctx, struct sr_sandbox *sb, uint32_t id, const struct sr_usage *u);
};

struct sr_sandbox_opts {
	const struct sr_sink *sink; /* messages: warnings, -v lines; NULL: none */
	const struct sr_sandbox_ops *ops;
	void *ctx;
	/*
	 * CLOCK_MONOTONIC ns by which the set-up must be done, or 0: past it,
	 * create kills the sandbox and fails with -ETIME (a run's timeout
	 * covers its set-up, an archive's extraction included).
	 */
	int64_t deadline_ns;
	const char *id; /* the sandbox's id (32 hex digits), or NULL for a new one */
};

/*
 * Makes a sandbox for c (which must outlive it) and waits until PID 1 is
 * READY. r: the sandbox's id and "enforced" are filled in as soon as they
 * are known, also when create fails later. On failure nothing is left:
 * no process, cgroup or helper.
 */
int sr_sandbox_create(const struct sr_config *c, const struct sr_sandbox_opts *o,
		      struct sr_result *r, struct sr_sandbox **ret, struct sr_error *err);

struct sr_spawn {
	unsigned flags;	   /* SR_SPAWN_* (protocol.h) */
	char *const *argv; /* NULL with SR_SPAWN_AGENT */
	char *const *envp; /* the whole environment; NULL with SR_SPAWN_AGENT */
	const char *cwd;   /* NULL: /workspace */
	int stdio[3];	   /* its stdin, stdout, stderr (those not on the pty: SR_SPAWN_PTY_*) */
	unsigned short rows, cols; /* with a pty: the terminal's size (0: unknown) */
};

/*
 * Starts a process in the sandbox; its pid inside in *ret_pid. With
 * any SR_SPAWN_PTY_*, *ret_pty is the master of its pty (else -1). A process
 * that could not be started: err->status 126/127 (as a shell's), 125 for
 * a bad working directory.
 */
int sr_sandbox_spawn(struct sr_sandbox *sb, const struct sr_spawn *s, pid_t *ret_pid, int *ret_pty,
		     struct sr_error *err);
/*
 * The same without waiting: *ret_id names the request to the spawned
 * callback, which comes through dispatch. What serves many clients uses
 * this one: PID 1 answers late, or never, when the agent keeps it busy.
 * One process may end the sandbox (SR_SPAWN_ENDS_SANDBOX, a warm
 * invocation's): its exit comes to the ended callback, not to exited.
 */
int sr_sandbox_spawn_start(struct sr_sandbox *sb, const struct sr_spawn *s, uint32_t *ret_id,
			   struct sr_error *err);
/* Asks PID 1 for the usage it counts; the stats callback answers. 0, -ESRCH or -EAGAIN. */
int sr_sandbox_stat_start(struct sr_sandbox *sb, uint32_t *ret_id);
/*
 * Starts a worker in the sandbox (work.h: SR_WORK_*) on path and the
 * stream fd (the caller keeps its copy), killed by PID 1 past limit_ms (0:
 * none); *ret_id names it to the worked callback, which comes through
 * dispatch once it is done.
 */
int sr_sandbox_work(struct sr_sandbox *sb, int kind, const char *path, int fd, int64_t limit_ms,
		    uint32_t *ret_id);
/*
 * Kills the worker of sr_sandbox_work() id, if it still runs: its client
 * gave up on it (a worker the agent stopped would wait on its pipe
 * forever). The worked callback follows as for any worker's end. Never
 * lost to a full socket: it waits for room (sr_sandbox_poll_out_fd()).
 */
int sr_sandbox_cancel(struct sr_sandbox *sb, uint32_t id);
/*
 * Asks PID 1 to kill every process but keep the files (protocol.h: held),
 * for exports and changes before the end. If it has not answered grace_ms
 * later, everything is killed, as for sr_sandbox_end(). Held (or ended)
 * comes through dispatch.
 */
int sr_sandbox_halt(struct sr_sandbox *sb, int grace_ms);
/* Whether every process is gone and the files are held (until sr_sandbox_end()). */
bool sr_sandbox_held(const struct sr_sandbox *sb);
/* Asks PID 1 for a TCP connection to port on the sandbox's loopback (connected callback). */
int sr_sandbox_connect(struct sr_sandbox *sb, int port, uint32_t *ret_id);
/* Sends sig to the process group of spawned process pid. */
int sr_sandbox_signal(struct sr_sandbox *sb, pid_t pid, int sig);
/*
 * SIGKILL to it, for a process whose client went: never lost to a full
 * socket, as sr_sandbox_cancel().
 */
int sr_sandbox_kill_process(struct sr_sandbox *sb, pid_t pid);
/*
 * Asks PID 1 to end the sandbox. If it has not ended grace_ms later (or
 * cannot be asked), every process is killed; either way the end comes
 * through dispatch (ended).
 */
int sr_sandbox_end(struct sr_sandbox *sb, int grace_ms);
/* Kills every process of the sandbox now (its cgroup, PID 1 and its namespace). */
void sr_sandbox_kill(struct sr_sandbox *sb);

/* The fds to poll for input (POLLIN), -1 entries to skip: SR_SANDBOX_POLL_FDS of them. */
#define SR_SANDBOX_POLL_FDS 4
void sr_sandbox_poll_fds(const struct sr_sandbox *sb, int fds[SR_SANDBOX_POLL_FDS]);
/*
 * The fd to poll for POLLOUT, or -1: PID 1's socket while a message waits
 * for room on it (sr_sandbox_cancel()); dispatch sends it.
 */
int sr_sandbox_poll_out_fd(const struct sr_sandbox *sb);
/*
 * Whether PID 1's socket has room for a request now: nothing waits for
 * room ahead of it, and a quarter of the socket's buffer at most is
 * unread (POLLOUT on a Unix socket), so that one more message fits
 * without the wait that fails it (-EAGAIN). True once the sandbox is gone.
 */
bool sr_sandbox_has_room(const struct sr_sandbox *sb);
/* The fd to poll for POLLOUT until sr_sandbox_has_room(), or -1 (gone). */
int sr_sandbox_room_fd(const struct sr_sandbox *sb);
/* Reads what is there, sends what waits, and calls the ops; never blocks. */
void sr_sandbox_dispatch(struct sr_sandbox *sb);
/* Whether PID 1 is gone and reaped. */
bool sr_sandbox_ended(const struct sr_sandbox *sb);

/*
 * Usage so far (or at the end): CPU time and peak memory from the cgroup
 * where one holds the sandbox (peak scope "sandbox"), else from PID 1's
 * rusage once reaped, or the process that ended it (scope "process": the
 * largest process's peak); disk use as last reported, or counted on the
 * host. Fills the record's usage fields. live: asked while the sandbox
 * runs, by a loop that serves others (a keeper's exec end, inspect): a
 * disk that is a host directory, whose count is a walk of every file the
 * agent made, is walked only up to SR_SANDBOX_LIVE_WALK files (past them,
 * no count: -1), so that an agent's million files cannot stall it for
 * seconds at a time.
 */
#define SR_SANDBOX_LIVE_WALK 100000
void sr_sandbox_usage(struct sr_sandbox *sb, bool live, struct sr_result *r);
/* How many processes of the sandbox the kernel's OOM killer took; -1 unknown (no cgroup). */
int64_t sr_sandbox_oom_kills(struct sr_sandbox *sb);
/* How PID 1 ended, once reaped (wait status); -1 before. */
int sr_sandbox_init_status(const struct sr_sandbox *sb);
/* The error PID 1 reported, if it ended on one (code 0: none). */
const struct sr_error *sr_sandbox_error(const struct sr_sandbox *sb);
const char *sr_sandbox_id(const struct sr_sandbox *sb);
const struct sr_config *sr_sandbox_config(const struct sr_sandbox *sb);
/* The environment every process starts from (the agent's: PATH, HOME, ..., --env, secrets). */
char *const *sr_sandbox_env(const struct sr_sandbox *sb);
/* Its cgroup (cgroup.h), NULL where none was made. */
struct sr_cgroup *sr_sandbox_cgroup(const struct sr_sandbox *sb);
/* The host directory or archive its workspace came from, NULL for an empty one. */
const char *sr_sandbox_workspace(const struct sr_sandbox *sb);
/* The host directory below its workspace (the overlay's lower layer), or NULL. */
const char *sr_sandbox_workspace_dir(const struct sr_sandbox *sb);

/* Kills and reaps whatever is left, releases the cgroup and the helper. NULL is fine. */
void sr_sandbox_free(struct sr_sandbox *sb);

/* A fresh sandbox id: 32 hex digits. */
void sr_sandbox_new_id(char id[33]);
