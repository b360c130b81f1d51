/* SPDX-License-Identifier: MIT */
/*
 * Files in or out of a living sandbox (`sandbox-run cp`), the host's
 * side: a tar stream on a pipe, handed to the sandbox's keeper on its
 * control socket ctl (control.h), read or written there by a worker
 * with the agent's rights (work.h) and here with the caller's. Either
 * side's extraction follows the rules of archive agents (archive.h).
 *
 * As cp(1) and docker cp: DST an existing directory gets SRC inside it
 * under SRC's name; otherwise DST is the copy's name (its parent must
 * exist). A relative PATH in the sandbox is relative to /workspace.
 */
#pragma once

#include "log.h"

/* The sandbox's PATH to the host's dst. */
int sr_copy_out(int ctl, const char *path, const char *dst, struct sr_error *err);
/* The host's src to the sandbox's PATH. */
int sr_copy_in(int ctl, const char *src, const char *path, struct sr_error *err);
