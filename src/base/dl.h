/* SPDX-License-Identifier: MIT */
/*
 * Libraries loaded on demand. libarchive and libnftables pull in ~20
 * shared objects; linking them would cost every run ~2.5 ms of dynamic
 * loading (docs/performance.md), so only the runs that need them (an
 * archive agent, the egress network) dlopen() them.
 */
#pragma once

#include "log.h"

#include <stddef.h>

struct sr_dl_sym {
	const char *name;
	void **ptr; /* where to store the address */
};

/* Opens soname (once per process) and resolves every symbol, or fails naming the first missing. */
int sr_dl_load(const char *soname, const struct sr_dl_sym *syms, size_t n, struct sr_error *err);
