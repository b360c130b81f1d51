/* SPDX-License-Identifier: MIT */
#include "dl.h"
#include "util.h"

#include <dlfcn.h>

int sr_dl_load(const char *soname, const struct sr_dl_sym *syms, size_t n, struct sr_error *err)
{
	void *h;

	/*
	 * RTLD_NOW: a missing symbol fails here, with a clear message, and not
	 * later in the middle of extracting an archive or installing rules.
	 * The handle is never closed: the library serves the rest of the run.
	 */
	h = dlopen(soname, RTLD_NOW | RTLD_LOCAL);
	if (!h)
		return sr_error_msg(err, -ENOENT,
				    "load %s: %s (install the package that provides it)", soname,
				    dlerror());
	for (size_t i = 0; i < n; i++) {
		void *p = dlsym(h, syms[i].name);

		if (!p)
			return sr_error_msg(err, -ENOENT, "load %s: symbol %s missing", soname,
					    syms[i].name);
		*syms[i].ptr = p;
	}
	return 0;
}
