/* SPDX-License-Identifier: MIT */
/*
 * PID 1's parts (init.c): what they share. init.c has its start, its
 * loop, the host's requests and the processes' ends; init-spawn.c how a
 * process is started; init-usage.c what the sandbox has used. Nothing
 * here is for any other module: init.h is PID 1's face.
 */
#pragma once

#include "log.h"
#include "setup.h"

#include <stdint.h>

#include <sys/types.h>

struct rusage;
struct sr_msg;

/* What the spawned child needs, all of it prepared by PID 1 before the clone. */
struct spawn {
	char *const *argv;
	char *const *envp;
	const char *cwd; /* NULL: stay in /workspace */
	int stdio[3];	 /* become 0, 1, 2 */
	int pty;	 /* a pty's slave, to be the controlling terminal; -1: none */
	int report_fd;
};

/* init-spawn.c */
pid_t init_spawn(struct spawn *s, struct sr_error *err);
pid_t init_spawn_parked(struct spawn *s, struct sr_error *err);

/* init-usage.c */
int64_t init_disk_used(const struct sr_plan *p);
void init_rusage_msg(struct sr_msg *m, const struct rusage *ru);
void init_usage_so_far(const struct sr_plan *p, struct sr_msg *m);
void init_each_usage(void (*fn)(void *ctx, pid_t pgrp, int64_t user_us, int64_t sys_us), void *ctx);
