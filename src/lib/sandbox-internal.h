/* SPDX-License-Identifier: MIT */
/*
 * The sandbox object's parts (sandbox.c): what they share. sandbox.c has
 * the requests to PID 1, the sandbox's end, the fds for its owner's event
 * loop, usage and free; sandbox-create.c create, from the host's
 * preparations to READY; sandbox-messages.c what PID 1 says, and its
 * reaping. Nothing here is for any other module: sandbox.h is the
 * sandbox's face.
 */
#pragma once

#include "agent.h"
#include "cgroup.h"
#include "disk.h"
#include "net.h"
#include "protocol.h"
#include "sandbox.h"
#include "setup.h"

#include <stdbool.h>
#include <stdint.h>
#include <sys/resource.h>
#include <sys/types.h>

struct sr_sandbox {
	const struct sr_config *config;
	struct sr_sandbox_opts opts;
	char id[33];
	struct sr_agent agent;
	struct sr_plan plan;
	struct sr_net *net;
	struct sr_cgroup *cgroup;
	struct sr_disk *disk;
	int clone_fd; /* the sandbox's cgroup for CLONE_INTO_CGROUP (owned by cgroup), or -1 */
	int sock;     /* our end of the protocol socket */
	int pidfd;    /* PID 1 */
	int endfd;    /* timerfd: the grace of an END, -1 when none is running */
	int uid_lock; /* root callers: the lock on the host uid this sandbox has (userns.h) */
	pid_t pid;    /* PID 1, as we see it */
	uint32_t next_id;
	bool ready, reaped, end_sent;
	bool halt_sent, held; /* HALT asked; every process gone, the files held (protocol.h) */
	bool ends_holds;      /* the process that ends the sandbox was spawned with SR_SPAWN_HOLD */
	bool ends_seen;	      /* the EXIT of the process that ends the sandbox */
	struct sr_exit ends;  /* which */
	uint32_t ends_spawn;  /* the SPAWN of sr_sandbox_spawn_start() that ends it, 0 for none */
	int init_status;      /* wait status of PID 1, once reaped */
	struct rusage ru;     /* of PID 1 and all it reaped */
	int64_t disk_used;    /* as last reported */
	struct sr_error error;	 /* PID 1's ERROR, if it sent one */
	struct sr_msg_queue out; /* CANCELs, kills waiting for room on sock (sr_sandbox_cancel()) */
};

/* sandbox-messages.c */
int sandbox_read_message(struct sr_sandbox *sb, struct sr_msg *m, struct sr_msg_extra *ex);
void sandbox_on_message(struct sr_sandbox *sb, const struct sr_msg *m, struct sr_msg_extra *ex);
void sandbox_drain(struct sr_sandbox *sb);
bool sandbox_reap(struct sr_sandbox *sb, bool block);
