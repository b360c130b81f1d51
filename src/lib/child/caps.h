/* SPDX-License-Identifier: MIT */
/* Capabilities (libcap): everything dropped before the agent runs. */
#pragma once

#include "log.h"

/*
 * Drops every capability from the bounding, ambient, inheritable,
 * permitted and effective sets and locks the securebits so none can come
 * back through execve or a uid change. Then sets no_new_privs.
 */
int sr_caps_drop_all(struct sr_error *err);
