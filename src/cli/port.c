/* SPDX-License-Identifier: MIT */
/*
 * `sandbox-run port ID PORT`: the living sandbox's PORT published on the
 * host's 127.0.0.1 (the same port where it is free, else one the kernel
 * picks), for as long as the sandbox lives; prints the URL. Nothing else
 * of the host or the network reaches the sandbox.
 */
#include "control.h"
#include "options.h"
#include "state.h"
#include "units.h"
#include "util.h"
#include "verbs.h"

int sr_verb_port(const struct sr_verb_args *a)
{
	struct sr_error err = {0};
	struct sr_sink sink;
	json_t *req, *reply = NULL, *url;
	uint64_t port = 0;
	int r;

	sr_sink_stderr(&sink, sr_options_log_level(a->verbosity));
	if (sr_cli_is_help(a)) {
		fputs("Usage: sandbox-run port ID PORT\n"
		      "Publish PORT of the living sandbox ID on this host's loopback, 127.0.0.1\n"
		      "and ::1 (the same port if it is free, else one the kernel picks), and\n"
		      "print its URL. Only this host reaches it, and only through those\n"
		      "addresses; the sandbox's network policy is unchanged. It lasts as long\n"
		      "as the sandbox.\n",
		      stdout);
		return sr_cli_stdout_status("--help");
	}
	if (a->argc != 3 || sr_parse_count(a->argv[2], &port) < 0 || port < 1 || port > 65535) {
		sr_sink_log(&sink, SR_LOG_ERROR, "port: usage: sandbox-run port ID PORT (1-65535)");
		return SR_EXIT_FAILURE;
	}
	req = json_pack("{sssi}", "op", "port", "port", (int)port);
	r = sr_ctl_call_ref(a->argv[1], req, &reply, &err);
	json_decref(req);
	if (r < 0) {
		sr_cli_verb_error(&sink, "port", err.msg);
		return SR_EXIT_FAILURE;
	}
	url = json_object_get(json_object_get(reply, "port"), "url");
	printf("%s\n", json_is_string(url) ? json_string_value(url) : "");
	json_decref(reply);
	return sr_cli_stdout_status("port");
}
