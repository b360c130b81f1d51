/* SPDX-License-Identifier: MIT */
/*
 * `sandbox-run export --oci DIR [OPTIONS] [AGENT | -- COMMAND]`: the
 * sandbox a run with the same options would make, as an OCI bundle for
 * crun or runc (export/oci.h). Runs nothing.
 */
#include "config.h"
#include "oci.h"
#include "options.h"
#include "util.h"
#include "verbs.h"

#include <stdio.h>

enum {
	OPT_OCI = SR_OPTIONS_EXTRA_FIRST,
};

static const struct option export_options[] = {
    {"oci", required_argument, NULL, OPT_OCI},
    {},
};

struct export {
	const char *oci; /* --oci DIR */
};

static void usage(FILE *f)
{
	fputs("Usage: sandbox-run export --oci DIR [OPTIONS] [AGENT | -- COMMAND]\n"
	      "The sandbox `sandbox-run [OPTIONS] AGENT` would make, for another runtime.\n"
	      "\n"
	      "  --oci DIR              write an OCI runtime bundle (config.json, rootfs/) to\n"
	      "                         DIR, new or empty: `crun run --bundle DIR NAME` runs\n"
	      "                         the agent as a run does (the host's /usr bound\n"
	      "                         read-only: for this machine)\n"
	      "\n"
	      "Every option of `sandbox-run run` applies (see sandbox-run --help): -p,\n"
	      "--memory, --cpus, --pids, --timeout, --disk, --net, --allow, --deny, --env,\n"
	      "--env-file, --pass-env, --ro-bind, --bind, --workspace, --entry, --strict.\n"
	      "What does not map, and why: docs/scale-out.md.\n",
	      f);
}

static int take(void *ctx, int id, const char *arg, struct sr_error *err)
{
	struct export *e = ctx;

	if (id != OPT_OCI)
		return sr_error_msg(err, -EINVAL, "unexpected option");
	if (!*arg)
		return sr_error_msg(err, -EINVAL, "empty path");
	e->oci = arg;
	return 0;
}

static int check(const struct sr_config *c, const struct export *e, struct sr_error *err)
{
	if (!e->oci)
		return sr_error_msg(err, -EINVAL, "export needs --oci DIR (see export --help)");
	if (c->name)
		return sr_error_msg(err, -EINVAL,
				    "--name: the bundle's container is named when it is run: "
				    "crun run --bundle DIR NAME");
	if (c->result_path)
		return sr_error_msg(err, -EINVAL, "--result: export runs nothing");
	return 0;
}

int sr_verb_export(const struct sr_verb_args *a)
{
	struct export e = {0};
	const struct sr_options_extra extra = {.options = export_options, .take = take, .ctx = &e};
	struct sr_config c;
	struct sr_error err = {0};
	enum sr_action action = SR_ACTION_RUN;
	struct sr_sink sink;
	int r, status = 0;

	sr_config_init(&c);
	sr_sink_stderr(&sink, SR_LOG_WARNING);
	r = sr_options_parse_extra(a->argc, a->argv, SR_OPTIONS_EXPORT, &extra, &c, &action, &err);
	if (r >= 0 && (action == SR_ACTION_HELP || action == SR_ACTION_VERSION)) {
		usage(stdout);
		status = sr_cli_stdout_status("--help");
		goto out;
	}
	if (r >= 0 && action == SR_ACTION_PRINT_CONFIG) {
		status = sr_config_print(&c, stdout) < 0 ? SR_EXIT_FAILURE : 0;
		goto out;
	}
	sink.level = sr_options_log_level((int)c.log_level - SR_LOG_WARNING + a->verbosity);
	if (r >= 0)
		r = check(&c, &e, &err);
	if (r >= 0)
		r = sr_oci_bundle(e.oci, &c, &sink, &err);
	if (r < 0) {
		sr_sink_log(&sink, SR_LOG_ERROR, "export: %s", err.msg);
		status = SR_EXIT_FAILURE;
	}
out:
	sr_config_free(&c);
	return status;
}
