/* SPDX-License-Identifier: MIT */
/*
 * Workers: processes PID 1 forks to move files in or out of the sandbox
 * as tar streams (cp, snapshots), through libarchive, or one file or
 * directory at a time (the API: files.h). A worker is a fork
 * of PID 1, so it has exactly the agent's rights: uid 1000, no
 * capabilities, the seccomp filter, the sandbox's mounts -- whatever it
 * reads or writes, the agent could have. It keeps no fd but the stream
 * and its report, and has a session of its own.
 */
#pragma once

#include "setup.h"

/*
 * Starts a worker of kind (SR_WORK_*) on path (NULL for a snapshot) and
 * the stream fd; its pid, and in *ret_report the pipe it reports on (an
 * sr_error if it failed, nothing if it did not) before it exits.
 */
pid_t sr_work_start(const struct sr_plan *p, int kind, const char *path, int fd, int *ret_report,
		    struct sr_error *err);
