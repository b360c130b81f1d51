/* SPDX-License-Identifier: MIT */
/*
 * The syscall filter. The rule table (seccomp-rules.c) is compiled to BPF
 * at build time by sr-seccomp-gen with libseccomp; at run time the
 * sandbox only installs that program: no libseccomp on the start-up path.
 */
#pragma once

#include "log.h"

#include <jansson.h>

/* Installs the filter on the calling thread. Requires no_new_privs. */
int sr_seccomp_apply(struct sr_error *err);

/*
 * The same rules as an OCI runtime-spec seccomp profile (config.json's
 * linux.seccomp, a Kubernetes Localhost profile), generated from the same
 * table by sr-seccomp-gen --oci: a new reference in *ret.
 */
int sr_seccomp_oci_profile(json_t **ret, struct sr_error *err);
