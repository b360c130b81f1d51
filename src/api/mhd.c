/* SPDX-License-Identifier: MIT */
#include "mhd.h"
#include "dl.h"
#include "util.h"

struct sr_mhd sr_mhd;

int sr_mhd_load(struct sr_error *err)
{
#define SYM(name)                                   \
	{                                           \
		"MHD_" #name, (void **)&sr_mhd.name \
	}
	static const struct sr_dl_sym syms[] = {
	    SYM(start_daemon),
	    SYM(stop_daemon),
	    SYM(quiesce_daemon),
	    SYM(get_daemon_info),
	    SYM(add_connection),
	    SYM(run),
	    SYM(get_timeout),
	    SYM(get_connection_info),
	    SYM(lookup_connection_value),
	    SYM(get_connection_values),
	    SYM(suspend_connection),
	    SYM(resume_connection),
	    SYM(create_response_from_buffer_with_free_callback),
	    SYM(create_response_from_callback),
	    SYM(add_response_header),
	    SYM(queue_response),
	    SYM(destroy_response),
	};
#undef SYM

	static bool loaded;

	if (!loaded && sr_dl_load(SR_LIBMICROHTTPD_SONAME, syms, SR_ARRAY_SIZE(syms), err) < 0)
		return err->code;
	loaded = true;
	return 0;
}
