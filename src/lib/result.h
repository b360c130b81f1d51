/* SPDX-License-Identifier: MIT */
/*
 * The result record (--result FILE): one JSON object on one line, written
 * atomically (temp file in the same directory, fsync, rename).
 *
 * - "limits": a limit of 0 in the config (unlimited / no timeout) is
 *   written as null, never as 0, which would read as "nothing allowed".
 *   cpus and timeout_s are numbers with up to 3 decimals (0.5, 2, 1.5).
 * - "signal", "error", "peak_memory_bytes", "disk_used_bytes" and
 *   "sandbox_id" are null when there is none or it is unknown.
 * - "peak_memory_scope" says what the peak is: "sandbox" (the cgroup's:
 *   every process together) or "process" (the largest single process,
 *   from rusage, where limits are rlimits, and in an exec's record,
 *   whose processes' alone it is); null with no peak.
 * - wall_ms, user_ms, sys_ms: 1 to 3 decimals (12.3, 4.0), capped just
 *   under 1e12 ms (31 years); user_ms and sys_ms null where no count was
 *   kept (an exec whose end its sandbox's came before: cpu_unknown).
 * - A limit above 2^63 - 1 (8 EiB, or 292 million years of timeout) is
 *   written as a real with 15 significant digits: jansson's integers are
 *   signed 64-bit.
 * - Written with jansson (src/base/json.h): a '.' in every number
 *   whatever LC_NUMERIC says; control characters escaped; invalid UTF-8
 *   in a string written as U+FFFD, one per byte.
 * - "network" (egress only): {"allowed_names": [NAME...], "refused":
 *   [{"dest": "ADDR:PORT", "proto": "tcp"|"udp", "count": N} | {"name":
 *   NAME, "count": N}...], "truncated": BOOL}, destinations first, each
 *   kind by count, most first.
 * - "output_dropped_bytes": what the agent (an exec's command) wrote to
 *   stdout and stderr and sandbox-run read but could not deliver, the
 *   reader not taking it before the relay gave up (stdio-relay.h); only
 *   when there were some (a signal that cut the wait short ends
 *   sandbox-run by it, with no record).
 * - No environment value ever appears in the record.
 */
#pragma once

#include "config.h"

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

enum sr_status {
	SR_STATUS_EXITED,
	SR_STATUS_SIGNALED,
	SR_STATUS_TIMEOUT,
	SR_STATUS_OOM,
	SR_STATUS_ERROR,
	_SR_STATUS_MAX,
};

/* How one limit was applied on this host: said honestly in "enforced". */
enum sr_enforce {
	SR_ENFORCE_NONE,
	SR_ENFORCE_CGROUP2,
	SR_ENFORCE_CGROUP1,
	SR_ENFORCE_RLIMIT,
	SR_ENFORCE_TMPFS,
	SR_ENFORCE_NFTABLES,
	SR_ENFORCE_NETNS, /* --net none: a network namespace with only lo */
	SR_ENFORCE_EXT4,  /* the disk: an ext4 image's size (disk.h) */
	_SR_ENFORCE_MAX,
};

/*
 * What "peak_memory_bytes" measures: the sandbox's cgroup's peak (all its
 * processes together), or, where no cgroup holds it, the peak resident
 * size of its largest single process (rusage's ru_maxrss).
 */
enum sr_peak_scope {
	SR_PEAK_NONE, /* no peak known: null */
	SR_PEAK_SANDBOX,
	SR_PEAK_PROCESS,
	_SR_PEAK_SCOPE_MAX,
};

enum sr_limit {
	SR_LIMIT_MEMORY,
	SR_LIMIT_CPUS,
	SR_LIMIT_PIDS,
	SR_LIMIT_DISK,
	SR_LIMIT_NET,
	_SR_LIMIT_MAX,
};

/*
 * What the egress policy saw ("network", egress runs only): the allowed
 * names the agent resolved, and what was refused, each destination with
 * the packets refused to it (TCP and UDP) and each name with the queries
 * refused for it; bounded (truncated says more were seen).
 */
#define SR_RESULT_NAMES_MAX   32
#define SR_RESULT_REFUSED_MAX 32

struct sr_result_refused {
	char dest[64];	/* "192.0.2.1:80", "[2001:db8::1]:443", or "" for a name */
	char proto[4];	/* "tcp", "udp"; "" for a name */
	char name[256]; /* a refused name, or "" */
	uint64_t count;
};

struct sr_result_network {
	bool recorded; /* written (an egress sandbox) */
	size_t n_allowed;
	char allowed[SR_RESULT_NAMES_MAX][256];
	size_t n_refused;
	struct sr_result_refused refused[SR_RESULT_REFUSED_MAX];
	bool truncated;
};

struct sr_result {
	enum sr_status status;
	int exit_code;	  /* the status sandbox-run exits with */
	int signal;	  /* 0: none */
	char error[1024]; /* "" : null */
	double wall_ms, user_ms, sys_ms;
	bool cpu_unknown;	   /* user_ms and sys_ms null: no count of them was kept */
	int64_t peak_memory_bytes; /* -1: unknown (null) */
	enum sr_peak_scope peak_memory_scope;
	int64_t disk_used_bytes; /* -1: unknown (null) */
	enum sr_enforce enforced[_SR_LIMIT_MAX];
	char sandbox_id[33];
	struct sr_result_network network;
	uint64_t output_dropped_bytes; /* of stdout and stderr, never delivered; 0: absent */
};

/* status "error" with exit_code 125, unknowns -1, nothing enforced. */
void sr_result_init(struct sr_result *r);
const char *sr_status_to_string(enum sr_status s);
const char *sr_enforce_to_string(enum sr_enforce e);
const char *sr_limit_to_string(enum sr_limit l);
const char *sr_peak_scope_to_string(enum sr_peak_scope s); /* NULL for none */

/* The record as JSON (NULL: out of memory, or no such status), and as one line of it (malloc'd). */
json_t *sr_result_json(const struct sr_result *r, const struct sr_config *c);
/*
 * The record of a process in a living sandbox (an exec's): its limits,
 * enforced, profile and sandbox_id are those of the sandbox's state
 * (state.json, inspect's), as they are now (a `timeout` moves
 * limits.timeout_s); r's own are not read. Each is null where state has
 * none (NULL: no sandbox).
 */
json_t *sr_result_json_state(const struct sr_result *r, json_t *state);
int sr_result_format(const struct sr_result *r, const struct sr_config *c, char **ret_json);
/*
 * The record's "limits" and "enforced" objects (NULL: out of memory), also
 * state.json's, which inspect and ls read: one form for both.
 */
json_t *sr_result_limits_json(const struct sr_config *c);
/* limits.timeout_s of a deadline ms long (0: none, null). */
json_t *sr_result_timeout_json(uint64_t ms);
json_t *sr_result_enforced_json(const struct sr_result *r);
/*
 * Where the record goes, settled before the agent runs: the agent may be
 * able to write FILE's directory (a --bind of it), and must not choose
 * which of the caller's files is overwritten once the run is over.
 *
 * At the start, the kernel resolves FILE's directory (so
 * fs.protected_symlinks applies; no /proc magic link is followed) and
 * sandbox-run looks at the name there. /dev/stdout, /dev/stderr and
 * /proc/self/fd/N (or a link to one) are the caller's own descriptor. A
 * link at the name is followed only if it is the caller's or the
 * directory owner's (the kernel's rule for sticky directories, applied
 * everywhere), and only to a file beneath its own directory: a link
 * planted by another user in /tmp, or left by an agent in a --bind
 * (pointing at ~/.bashrc), is refused with a message, before the run. A
 * name that is not a regular file (a FIFO, a device) is refused unless
 * it is the caller's own stdout or stderr.
 *
 * At the end, no link is followed: the directory is reopened by the path
 * the kernel gave it (RESOLVE_NO_SYMLINKS: a link put in its place during
 * the run fails the write), and the record replaces whatever is at its
 * name (a link or FIFO the agent put there included) with a temporary
 * file + fsync + rename, mode 0644 less the umask.
 */
struct sr_result_target {
	char *shown; /* as given, for messages */
	int fd;	     /* the caller's stdout/stderr or /proc/self/fd/N: its descriptor, not ours */
	int dirfd;   /* otherwise: the directory, as resolved at the start (O_PATH) */
	char *dir;   /* its path then, reopened at the end */
	char *base;
};

#define SR_RESULT_TARGET_INIT          \
	{                              \
		.fd = -1, .dirfd = -1, \
	}

int sr_result_target_open(const char *path, struct sr_result_target *ret, struct sr_error *err);
int sr_result_target_write(const struct sr_result_target *t, const struct sr_result *r,
			   const struct sr_config *c, struct sr_error *err);
/* The same with a record already formatted (an exec's, made by its sandbox's keeper). */
int sr_result_target_write_text(const struct sr_result_target *t, const char *json,
				struct sr_error *err);
void sr_result_target_close(struct sr_result_target *t);
/* Open, write and close, for a record with no run in between. */
int sr_result_write(const struct sr_result *r, const struct sr_config *c, const char *path,
		    struct sr_error *err);
