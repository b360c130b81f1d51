/* SPDX-License-Identifier: MIT */
/*
 * `sandbox-run serve [--listen unix:PATH | [ADDR:]PORT] [--warm N | PROFILE=N]
 * [OPTIONS]`: the local API (docs/api.md). Prints where it listens on
 * stdout, one line each ("unix:PATH", or "http://ADDR:PORT TOKEN-FILE"),
 * then serves until SIGTERM, SIGINT or SIGHUP, and takes its sandboxes
 * down on the way out.
 */
#include "options.h"
#include "proc.h"
#include "serve.h"
#include "units.h"
#include "util.h"
#include "verbs.h"

#include <getopt.h>

static void usage(FILE *f)
{
	fputs("Usage: sandbox-run serve [OPTIONS]\n"
	      "Serve the local API (HTTP/1.1 + JSON; E2B's SDK works with it too) until\n"
	      "SIGTERM, SIGINT or SIGHUP; then take down every sandbox it made. See\n"
	      "docs/api.md.\n"
	      "\n"
	      "  --listen unix:PATH      a Unix socket (default: serve.sock in the state\n"
	      "                          directory, also beside TCP); only your own user\n"
	      "                          may connect\n"
	      "  --listen [ADDR:]PORT    TCP, 127.0.0.1 unless ADDR says otherwise (0: any\n"
	      "                          free port); a bearer token is needed, written to a\n"
	      "                          0600 file; repeatable\n"
	      "  --token-file FILE       where the token goes (default: the state directory)\n"
	      "  --warm N                keep N sandboxes of each deployment set up up to\n"
	      "                          its agent's exec, for invoke (POST\n"
	      "                          /v1/deployments/NAME/invoke, sandbox-run invoke)\n"
	      "  --warm PROFILE=N        keep N sandboxes of PROFILE made ahead, for creates\n"
	      "                          (default=N: the default profile); repeatable\n"
	      "  --e2b-profile NAME      E2B's \"base\" template (default: e2b)\n"
	      "  --max-sandboxes N       live sandboxes made through it, at most (64)\n"
	      "  --max-connections N     connections at once (256)\n"
	      "  --max-processes N       processes started through it (exec, E2B's\n"
	      "                          commands) running at once (128)\n"
	      "  --client-timeout D      drop a client silent this long (30s)\n"
	      "  --idle-timeout D        give up on a file read or listing whose worker in\n"
	      "                          the sandbox sends nothing this long: 504 (60s)\n"
	      "  --max-body SIZE         a JSON request (1M)\n"
	      "  --max-upload SIZE       a file written (1G)\n"
	      "  --max-output SIZE       an exec's stdout and stderr each, unstreamed (16M)\n"
	      "  -q, --quiet / -v, --verbose\n"
	      "  -h, --help\n",
	      f);
}

static int parse_warm(const char *arg, struct sr_serve_opts *o, struct sr_error *err)
{
	const char *eq = strchr(arg, '=');
	uint64_t n;

	if (o->n_warm >= SR_SERVE_WARM_MAX)
		return sr_error_msg(err, -E2BIG, "--warm: %d profiles at most", SR_SERVE_WARM_MAX);
	if (sr_parse_count(eq ? eq + 1 : arg, &n) < 0 || n > 64)
		return sr_error_msg(err, -EINVAL, "--warm %s: expected N or PROFILE=N, N of 0-64",
				    arg);
	if (eq && eq == arg)
		return sr_error_msg(err, -EINVAL, "--warm %s: a profile before '='", arg);
	/* A bare N: per deployment (issue 20); a profile's pool is named (default=N). */
	if (!eq) {
		o->warm_deployments = (unsigned)n;
		return 0;
	}
	if (n == 0)
		return 0;
	o->warm[o->n_warm].size = (unsigned)n;
	o->warm[o->n_warm].profile = strndup(arg, (size_t)(eq - arg));
	if (!o->warm[o->n_warm].profile)
		return sr_error_errno(err, -ENOMEM, "--warm");
	o->n_warm++;
	return 0;
}

static int parse_num(const char *opt, const char *arg, bool size, uint64_t max, uint64_t *ret,
		     struct sr_error *err)
{
	int r = size ? sr_parse_size(arg, ret) : sr_parse_count(arg, ret);

	if (r < 0 || *ret == 0 || *ret > max)
		return sr_error_msg(err, -EINVAL, "%s %s: expected a %s of 1 to %llu", opt, arg,
				    size ? "size" : "number", (unsigned long long)max);
	return 0;
}

enum {
	OPT_LISTEN = 0x100,
	OPT_TOKEN,
	OPT_WARM,
	OPT_E2B,
	OPT_MAX_SB,
	OPT_MAX_CONN,
	OPT_MAX_PROC,
	OPT_TIMEOUT,
	OPT_IDLE_TIMEOUT,
	OPT_MAX_BODY,
	OPT_MAX_UPLOAD,
	OPT_MAX_OUTPUT,
};

static const struct option opts[] = {
    {"listen", required_argument, NULL, OPT_LISTEN},
    {"token-file", required_argument, NULL, OPT_TOKEN},
    {"warm", required_argument, NULL, OPT_WARM},
    {"e2b-profile", required_argument, NULL, OPT_E2B},
    {"max-sandboxes", required_argument, NULL, OPT_MAX_SB},
    {"max-connections", required_argument, NULL, OPT_MAX_CONN},
    {"max-processes", required_argument, NULL, OPT_MAX_PROC},
    {"client-timeout", required_argument, NULL, OPT_TIMEOUT},
    {"idle-timeout", required_argument, NULL, OPT_IDLE_TIMEOUT},
    {"max-body", required_argument, NULL, OPT_MAX_BODY},
    {"max-upload", required_argument, NULL, OPT_MAX_UPLOAD},
    {"max-output", required_argument, NULL, OPT_MAX_OUTPUT},
    {"quiet", no_argument, NULL, 'q'},
    {"verbose", no_argument, NULL, 'v'},
    {"help", no_argument, NULL, 'h'},
    {},
};

/* --max-sandboxes, --max-connections or --max-processes (c) into o. */
static int set_max_count(int c, const char *arg, struct sr_serve_opts *o, struct sr_error *err)
{
	uint64_t v;
	int r;

	/* Named here, not from argv: --max-processes=0 is one word. */
	if ((r = parse_num(c == OPT_MAX_SB     ? "--max-sandboxes"
			   : c == OPT_MAX_CONN ? "--max-connections"
					       : "--max-processes",
			   arg, false, 100000, &v, err)) < 0)
		return r;
	*(c == OPT_MAX_SB     ? &o->max_sandboxes
	  : c == OPT_MAX_CONN ? &o->max_connections
			      : &o->max_processes) = (unsigned)v;
	return 0;
}

/* --client-timeout or --idle-timeout (c) into o. */
static int set_timeout(int c, const char *arg, struct sr_serve_opts *o, struct sr_error *err)
{
	uint64_t v;

	if (sr_parse_duration(arg, &v) < 0 || v < 1000 || v > 3600 * 1000)
		return sr_error_msg(err, -EINVAL, "%s %s: a duration of 1s to 1h",
				    c == OPT_TIMEOUT ? "--client-timeout" : "--idle-timeout", arg);
	if (c == OPT_TIMEOUT)
		o->client_timeout_s = (unsigned)(v / 1000);
	else
		o->idle_ms = v;
	return 0;
}

/* One of opts but --help (c, as getopt_long() returned it) and its value into o. */
static int set_option(int c, const char *arg, struct sr_serve_opts *o, struct sr_error *err)
{
	switch (c) {
	case OPT_LISTEN:
		if (o->n_listen >= SR_SERVE_LISTEN_MAX)
			return sr_error_msg(err, -E2BIG, "--listen: %d at most",
					    SR_SERVE_LISTEN_MAX);
		o->listen[o->n_listen++] = arg;
		return 0;
	case OPT_TOKEN:
		o->token_file = arg;
		return 0;
	case OPT_WARM:
		return parse_warm(arg, o, err);
	case OPT_E2B:
		o->e2b_profile = arg;
		return 0;
	case OPT_MAX_SB:
	case OPT_MAX_CONN:
	case OPT_MAX_PROC:
		return set_max_count(c, arg, o, err);
	case OPT_TIMEOUT:
	case OPT_IDLE_TIMEOUT:
		return set_timeout(c, arg, o, err);
	case OPT_MAX_BODY:
		return parse_num("--max-body", arg, true, 64 << 20, &o->max_body, err);
	case OPT_MAX_UPLOAD:
		return parse_num("--max-upload", arg, true, UINT64_MAX, &o->max_upload, err);
	case OPT_MAX_OUTPUT:
		return parse_num("--max-output", arg, true, 1ull << 30, &o->max_output, err);
	case 'q':
		o->level = SR_LOG_ERROR;
		return 0;
	case 'v':
		o->level = o->level < SR_LOG_DEBUG ? o->level + 1 : SR_LOG_DEBUG;
		return 0;
	}
	return 0;
}

/*
 * --token-file guards a TCP --listen: with none (the Unix socket checks
 * the peer's uid) it was taken and never written, and an empty one
 * ("--token-file $UNSET") alike; a client then read no token there.
 */
static int check_token_file(const struct sr_serve_opts *o, struct sr_error *err)
{
	if (!o->token_file)
		return 0;
	if (!*o->token_file)
		return sr_error_msg(err, -EINVAL, "--token-file: an empty path");
	for (unsigned i = 0; i < o->n_listen; i++)
		if (strncmp(o->listen[i], "unix:", 5) != 0)
			return 0;
	return sr_error_msg(err, -EINVAL,
			    "--token-file is for a TCP --listen ([ADDR:]PORT): the Unix socket "
			    "needs no token (it checks who connects)");
}

static int parse(int argc, char **argv, struct sr_serve_opts *o, struct sr_error *err)
{
	int c, r;

	optind = 0;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "+:qvh", opts, NULL)) != -1) {
		switch (c) {
		case 'h':
			usage(stdout);
			return 1;
		case '?':
		case ':':
			return sr_options_getopt_error(c, opts, argc, argv, err);
		default:
			if ((r = set_option(c, optarg, o, err)) < 0)
				return r;
		}
	}
	if (optind < argc)
		return sr_error_msg(err, -EINVAL, "unexpected argument '%s' (see --help)",
				    argv[optind]);
	return check_token_file(o, err);
}

int sr_verb_serve(const struct sr_verb_args *a)
{
	struct sr_serve_opts o = {.level = sr_options_log_level(a->verbosity)};
	struct sr_serve *s = NULL;
	struct sr_error err = {0};
	struct sr_sink sink;
	const char *url, *token;
	int r;

	sr_sink_stderr(&sink, o.level);
	r = parse(a->argc, a->argv, &o, &err);
	if (r > 0)
		return sr_cli_stdout_status("--help");
	sink.level = o.level;
	o.sink = &sink;
	/* Connections, and the fds it passes to keepers (an exec's pipes). */
	sr_proc_raise_fd_limit();
	if (r == 0 && (r = sr_serve_new(&o, &s, &err)) == 0) {
		for (unsigned i = 0; (url = sr_serve_listening(s, i, &token)); i++)
			printf("%s%s%s\n", url, token ? " " : "", token ? token : "");
		r = sr_cli_stdout_status("serve") ? -EIO : 0;
	}
	if (r == 0)
		r = sr_serve_run(s, &err);
	sr_serve_free(s);
	for (unsigned i = 0; i < o.n_warm; i++)
		free((char *)o.warm[i].profile);
	if (r < 0) {
		if (err.code)
			sr_sink_log(&sink, SR_LOG_ERROR, "serve: %s", err.msg);
		return SR_EXIT_FAILURE;
	}
	return 0;
}
