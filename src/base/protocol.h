/* SPDX-License-Identifier: MIT */
/*
 * The supervisor <-> sandbox protocol, in one place.
 *
 * A SOCK_SEQPACKET | SOCK_CLOEXEC socketpair: one message per send, never
 * merged or split. The sandbox side is PID 1 of the new PID namespace; the
 * host side is whoever owns the sandbox (sandbox.h): sandbox-run itself
 * for a run, the keeper of a sandbox that lives.
 *
 *   host                                PID 1
 *   clone3 ---------------------------> waits for GO
 *   [1] uid/gid maps, cgroup, network
 *   GO -------------------------------> [2] mounts, pivot_root, network,
 *                                           hostname, caps, seccomp
 *   <------------------------------- WARNING (any number, during [2])
 *   resolver, sets <----------------- NET + fds (--net egress, in [2])
 *   <------------------------------- READY (+ the disk's fd) | ERROR
 *   starts pasta <------------------- TAP + fd (pasta only)
 *   [3] any number of, in any order:
 *   SPAWN + stdio fds ----------------> forks, the child execs
 *   <------------------------------- SPAWNED (its pid) | SPAWN_FAILED
 *   SIGNAL ---------------------------> to a spawned process's group
 *   STAT -----------------------------> counts processes, CPU time, disk
 *   <------------------------------- STATS
 *   WORK + fd ------------------------> a worker reads or writes a tar
 *   <------------------------------- WORKED  on the fd (cp, snapshot,
 *                                            export, changes)
 *   CANCEL (a WORK's id) -------------> kills that worker (WORKED follows)
 *   CONNECT --------------------------> a TCP connection to a port of
 *   <------------------------------- CONNECTED + fd | CONNECT_FAILED
 *                                       the sandbox's loopback (port)
 *   <------------------------------- EXIT (a spawned process ended)
 *   HALT -----------------------------> kills and reaps every process,
 *   <------------------------------- HALTED (disk use); files held
 *   [4] held (after HALT, or the exit of a process spawned with
 *       SR_SPAWN_HOLD): WORK, CANCEL, STAT and END only; no process runs
 *   END ------------------------------> kills and reaps every process
 *   <------------------------------- ENDED (disk use); PID 1 exits
 *
 * ERROR carries the errno, the exit status to use (125/126/127) and the
 * message; PID 1 exits right after sending it. WARNING carries a message
 * the host prints, for a step that failed without making the sandbox any
 * less safe. A process spawned with SR_SPAWN_ENDS_SANDBOX ends the sandbox
 * with it: PID 1 kills and reaps every other process, sends its EXIT
 * (with the disk use) and exits, as a one-shot run has it. EOF without
 * EXIT or ENDED means PID 1 died (killed, or after a timeout's grace).
 *
 * Requests carry a number (id), echoed by their reply, so a host that
 * has several in flight matches them. Payloads (SPAWN's command) ride in
 * the same datagram after the fixed part; fds (SCM_RIGHTS) only with the
 * messages that take them: SPAWN (stdin, stdout, stderr, but those on a
 * pty: SR_SPAWN_PTY_*), SPAWNED (1 with a pty: its master), TAP,
 * WORK and CONNECTED (1 each), NET (an nfnetlink socket of the sandbox's
 * network namespace, then with names in the policy the resolver's UDP and
 * TCP sockets: net.h), READY (1 or none: the root of the sandbox's disk,
 * O_PATH, so that the host can count its use even after PID 1 is gone).
 * Anything else that brings an fd is malformed, and the fd is closed
 * unread.
 *
 * A held sandbox (HALT, or SR_SPAWN_HOLD) is one whose processes are all
 * gone but whose files stay, for the host to copy out (exports, changes)
 * before it sends END; a SPAWN or CONNECT then fails, and a worker past
 * its time limit (WORK's value) is killed, so that holding is bounded.
 */
#pragma once

#include "log.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum sr_msg_type {
	SR_MSG_GO = 1,
	SR_MSG_ERROR,
	SR_MSG_READY,
	SR_MSG_EXIT,
	SR_MSG_WARNING,
	SR_MSG_TAP,
	SR_MSG_ENDED,
	SR_MSG_END,
	SR_MSG_SPAWN,
	SR_MSG_SPAWNED,
	SR_MSG_SPAWN_FAILED,
	SR_MSG_SIGNAL,
	SR_MSG_STAT,
	SR_MSG_STATS,
	SR_MSG_WORK,
	SR_MSG_WORKED,
	SR_MSG_CONNECT,
	SR_MSG_CONNECTED,
	SR_MSG_CONNECT_FAILED,
	SR_MSG_CANCEL,
	SR_MSG_NET,
	SR_MSG_HALT,
	SR_MSG_HALTED,
	_SR_MSG_TYPE_MAX,
};

/* SPAWN's flags. */
enum {
	/* Run the agent the sandbox was made for (its argv and environment, in PID 1's plan). */
	SR_SPAWN_AGENT = 1 << 0,
	/* When this process exits, the sandbox ends (a run, an invocation). */
	SR_SPAWN_ENDS_SANDBOX = 1 << 1,
	/*
	 * These of its stdin, stdout, stderr are a new pty of the sandbox's
	 * devpts, its controlling terminal (the others come as fds).
	 */
	SR_SPAWN_PTY_STDIN = 1 << 2,
	SR_SPAWN_PTY_STDOUT = 1 << 3,
	SR_SPAWN_PTY_STDERR = 1 << 4,
	SR_SPAWN_PTY = SR_SPAWN_PTY_STDIN | SR_SPAWN_PTY_STDOUT | SR_SPAWN_PTY_STDERR,
	/*
	 * With SR_SPAWN_ENDS_SANDBOX: when it exits every other process is
	 * killed as then, but PID 1 and the sandbox's files stay, held for
	 * WORK (exports, changes: artifacts.h) until END.
	 */
	SR_SPAWN_HOLD = 1 << 5,
	/*
	 * Parked: set up (its session, stdio, working directory, every other
	 * fd closed) and held just before its exec until its stdin is readable
	 * or at its end, so that the request's first byte starts it without a
	 * message to PID 1 (a warm invocation, serve --warm). A fork, not a
	 * spawn: PID 1 must not wait for an exec that comes later. An exec
	 * that fails then is the process's own end: 126 or 127, the reason on
	 * its stderr. Not with a pty.
	 */
	SR_SPAWN_PARK = 1 << 6,
};

/* READY's flags. */
enum {
	/*
	 * /proc/meminfo (stat, cpuinfo) are snapshots of the start, not live
	 * views (viewfs.h); the text says why. For -v.
	 */
	SR_READY_VIEWS_FROZEN = 1 << 0,
};

/*
 * WORK's kinds (its flags): what a worker does with the stream on its fd.
 * The payload is a path in the sandbox (relative: to /workspace).
 */
enum {
	SR_WORK_TAR_OUT = 1, /* writes a tar of the path, its entries named after its last part */
	SR_WORK_TAR_IN,	     /* extracts the tar it reads: into the path if it is a directory,
				else as the path */
	SR_WORK_SNAPSHOT,    /* writes a zstd tar of /workspace, /home/user and /tmp (no path) */
	SR_WORK_CHANGES,     /* writes what changed in /workspace (work.h; no path) */
	/* Single files and directories, for the API (child/files.h): */
	SR_WORK_FILE_READ,  /* writes the bytes of the regular file path */
	SR_WORK_FILE_WRITE, /* writes what it reads into the file path (made with its parents) */
	SR_WORK_LIST,	    /* writes a JSON line per entry of the directory path */
	SR_WORK_STAT,	    /* writes one JSON line for path itself */
	SR_WORK_REMOVE,	    /* removes path, a directory with everything in it */
	SR_WORK_MKDIR,	    /* makes the directory path with its parents */
	/*
	 * As TAR_OUT, and what its owner left unreadable read all the same,
	 * its mode as it was (sr_write_opts.read_own): an install's tree.
	 */
	SR_WORK_TAR_OUT_OWN,
	/*
	 * As STAT, following symbolic links as stat(2) does; a link that
	 * leads nowhere is its own line, then the error (envd's MakeDir).
	 */
	SR_WORK_STAT_FOLLOW,
	_SR_WORK_MAX,
};

struct sr_msg {
	uint32_t type;
	uint32_t id;	/* requests and their replies: the request's number; CANCEL: the WORK's */
	int32_t code;	/* ERROR, SPAWN_FAILED, WORKED: negative errno (WORKED: 0 is done) */
	int32_t status; /* ERROR, SPAWN_FAILED: exit status; EXIT: the wait status */
	int32_t pid; /* SPAWNED, EXIT, SIGNAL: the process's pid in the sandbox; STATS: processes */
	int32_t flags;	 /* SPAWN, SPAWNED: SR_SPAWN_*; SIGNAL: the signal; WORK: SR_WORK_*;
			    CONNECT: the port; READY: SR_READY_* */
	int64_t value;	 /* EXIT, ENDED, HALTED, STATS: bytes used on the sandbox's disk, -1
			    unknown; SPAWN with SR_SPAWN_PTY: the terminal's rows << 16 | columns;
			    WORK: its time limit in ms (0: none), past which it is killed */
	int64_t user_us; /* EXIT: CPU time of the process and what it waited for; STATS: all */
	int64_t sys_us;
	int64_t peak_rss; /* EXIT, STATS: the largest process's peak resident bytes; -1 unknown */
	char text[SR_ERROR_MSG_MAX]; /* ERROR, WARNING, SPAWN_FAILED, WORKED, READY: the message */
};

/* The largest payload (SPAWN's argv, environment and working directory together). */
#define SR_MSG_PAYLOAD_MAX (128 * 1024)
#define SR_MSG_FDS_MAX	   3

/*
 * What a message brought beyond its fixed part. The receiver provides the
 * payload's buffer (cap bytes, of which the last is kept for a NUL) or
 * none (NULL: a payload is malformed); the fds are its to close.
 */
struct sr_msg_extra {
	int fds[SR_MSG_FDS_MAX];
	size_t n_fds;
	char *payload;
	size_t cap;
	size_t len; /* what came, NUL-terminated past it */
};

int sr_msg_send(int fd, const struct sr_msg *m);
/* m with passed_fd attached (SCM_RIGHTS); the caller keeps its own copy. */
int sr_msg_send_fd(int fd, const struct sr_msg *m, int passed_fd);
/* m, then payload (len bytes, may be 0), then fds: -EMSGSIZE past SR_MSG_PAYLOAD_MAX. */
int sr_msg_send_full(int fd, const struct sr_msg *m, const void *payload, size_t len,
		     const int *fds, size_t n_fds);
/*
 * 1 on a message, 0 on EOF, negative errno on error or a malformed message
 * (wrong size, unknown type, fds with a type that takes none, more fds
 * than the type takes, a payload with no buffer for it; on -EBADMSG, *ret
 * holds the header when a whole one of a known type came, so that a
 * request can be answered as failed, else is untouched). ex: NULL
 * refuses any payload or fd (-EBADMSG); else filled, the fds released
 * with sr_msg_extra_close(). The *ret_fd form: one fd (TAP)
 * or -1, no payload.
 */
int sr_msg_recv(int fd, struct sr_msg *ret, int *ret_fd);
int sr_msg_recv_full(int fd, struct sr_msg *ret, struct sr_msg_extra *ex);
/* The same, -EAGAIN at once when nothing is there. */
int sr_msg_recv_nowait(int fd, struct sr_msg *ret, struct sr_msg_extra *ex);
void sr_msg_extra_close(struct sr_msg_extra *ex);
/* How many fds a message of this type may carry (SPAWN: 3, SPAWNED: 1, ...). */
size_t sr_msg_fds_allowed(const struct sr_msg *m);
/*
 * Messages that must reach the peer but want no answer (the host's
 * CANCEL), on a non-blocking socket the peer may leave full for a while
 * (PID 1 kept busy from inside): what finds no room waits here, in order,
 * to be sent once the socket is writable, rather than being lost.
 */
struct sr_msg_queue {
	struct sr_msg *v;
	size_t n, cap;
};
/* Messages waiting at most: a peer that leaves this many unread reads nothing. */
#define SR_MSG_QUEUE_MAX 1024
/*
 * m sent now, or queued behind those waiting (no room): 0, or -errno (the
 * peer gone), -ENOBUFS when SR_MSG_QUEUE_MAX wait already.
 */
int sr_msg_queue_send(struct sr_msg_queue *q, int fd, const struct sr_msg *m);
/*
 * Sends what waits, in order, while there is room: 0 once nothing waits,
 * -EAGAIN while something still does (poll fd for POLLOUT), or -errno (the
 * peer gone: what waited is dropped).
 */
int sr_msg_queue_flush(struct sr_msg_queue *q, int fd);
static inline bool sr_msg_queue_pending(const struct sr_msg_queue *q)
{
	return q->n > 0;
}
void sr_msg_queue_free(struct sr_msg_queue *q);
/* Sends err as an ERROR message (best effort: the caller exits next). */
void sr_msg_send_error(int fd, const struct sr_error *err);
/* Sends err's message as a WARNING (best effort: a lost warning changes nothing). */
void sr_msg_send_warning(int fd, const struct sr_error *err);

/*
 * SPAWN's payload: argv, the environment and the working directory as
 * NUL-terminated strings, each list ended by an empty string:
 * "ls\0-l\0\0PATH=/bin\0\0/workspace\0". Strings are not empty; an
 * empty cwd means the sandbox's default (/workspace).
 */
struct sr_spawn_spec {
	char **argv; /* NULL-terminated, pointing into the payload */
	char **envp;
	const char *cwd;
};
/* Encodes argv and envp (NULL-terminated) and cwd (NULL: default) into *ret (malloc'd). */
int sr_spawn_encode(char *const *argv, char *const *envp, const char *cwd, char **ret,
		    size_t *ret_len);
/* Decodes payload (len bytes, NUL-terminated past len) in place; -EBADMSG if malformed. */
int sr_spawn_decode(char *payload, size_t len, struct sr_spawn_spec *ret);
void sr_spawn_spec_free(struct sr_spawn_spec *s);
