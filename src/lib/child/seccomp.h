/* SPDX-License-Identifier: MIT */
/*
 * The syscall filter. The rule table (seccomp-rules.c) is compiled to BPF
 * at build time by sr-seccomp-gen with libseccomp; at run time the
 * sandbox only installs that program: no libseccomp on the start-up path.
 */
#pragma once

#include "log.h"

/* Installs the filter on the calling thread. Requires no_new_privs. */
int sr_seccomp_apply(struct sr_error *err);
