/* SPDX-License-Identifier: MIT */
/*
 * libmicrohttpd, loaded by serve alone (dl.h): it brings GnuTLS and ten
 * more shared objects that no run should map. The functions the server
 * calls, through one table filled by sr_mhd_load().
 */
#pragma once

#include "log.h"

#include <microhttpd.h>

struct sr_mhd {
	__typeof__(MHD_start_daemon) *start_daemon;
	__typeof__(MHD_stop_daemon) *stop_daemon;
	__typeof__(MHD_quiesce_daemon) *quiesce_daemon;
	__typeof__(MHD_get_daemon_info) *get_daemon_info;
	__typeof__(MHD_add_connection) *add_connection;
	__typeof__(MHD_run) *run;
	__typeof__(MHD_get_timeout) *get_timeout;
	__typeof__(MHD_get_connection_info) *get_connection_info;
	__typeof__(MHD_lookup_connection_value) *lookup_connection_value;
	__typeof__(MHD_get_connection_values) *get_connection_values;
	__typeof__(MHD_suspend_connection) *suspend_connection;
	__typeof__(MHD_resume_connection) *resume_connection;
	__typeof__(MHD_create_response_from_buffer_with_free_callback)
	    *create_response_from_buffer_with_free_callback;
	__typeof__(MHD_create_response_from_callback) *create_response_from_callback;
	__typeof__(MHD_add_response_header) *add_response_header;
	__typeof__(MHD_queue_response) *queue_response;
	__typeof__(MHD_destroy_response) *destroy_response;
};

extern struct sr_mhd sr_mhd;

/* Loads the library once per process and fills sr_mhd. */
int sr_mhd_load(struct sr_error *err);
