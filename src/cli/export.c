/* SPDX-License-Identifier: MIT */
/*
 * `sandbox-run export --oci DIR | --k8s [OPTIONS] [AGENT | -- COMMAND]`:
 * the sandbox a run with the same options would make, as an OCI bundle
 * for crun or runc (export/oci.h), or as Kubernetes objects
 * (export/k8s.h). Runs nothing.
 */
#include "config.h"
#include "agent.h"
#include "env.h"
#include "json.h"
#include "k8s.h"
#include "oci.h"
#include "options.h"
#include "seccomp.h"
#include "util.h"
#include "verbs.h"

#include <stdio.h>
#include <sys/stat.h>

enum {
	OPT_OCI = SR_OPTIONS_EXTRA_FIRST,
	OPT_K8S,
	OPT_IMAGE,
	OPT_NAMESPACE,
	OPT_SECRET,
	OPT_SECRET_NAME,
	OPT_RUNTIME_CLASS,
	OPT_AGENT_SANDBOX,
	OPT_WARM,
	OPT_SECCOMP_PROFILE,
};

static const struct option export_options[] = {
    {"oci", required_argument, NULL, OPT_OCI},
    {"k8s", no_argument, NULL, OPT_K8S},
    {"image", required_argument, NULL, OPT_IMAGE},
    {"namespace", required_argument, NULL, OPT_NAMESPACE},
    {"secret", required_argument, NULL, OPT_SECRET},
    {"secret-name", required_argument, NULL, OPT_SECRET_NAME},
    {"runtime-class", required_argument, NULL, OPT_RUNTIME_CLASS},
    {"agent-sandbox", no_argument, NULL, OPT_AGENT_SANDBOX},
    {"warm", required_argument, NULL, OPT_WARM},
    {"seccomp-profile", required_argument, NULL, OPT_SECCOMP_PROFILE},
    {},
};

struct export
{
	const char *oci; /* --oci DIR */
	bool k8s;
	const char *image, *namespace_, *secret_name, *runtime_class, *seccomp_file;
	struct sr_strv secrets; /* --secret KEY */
	bool agent_sandbox;
	long warm;     /* -1: not given */
	bool k8s_only; /* an option of --k8s's was given */
};

static void usage(FILE *f)
{
	fputs("Usage: sandbox-run export --oci DIR [OPTIONS] [AGENT | -- COMMAND]\n"
	      "       sandbox-run export --k8s --image IMAGE [OPTIONS] [AGENT | -- COMMAND]\n"
	      "The sandbox `sandbox-run [OPTIONS] AGENT` would make, for another runtime.\n"
	      "\n"
	      "  --oci DIR              write an OCI runtime bundle (config.json, rootfs/) to\n"
	      "                         DIR, new or empty and yours: `crun run --bundle DIR\n"
	      "                         NAME` runs the agent as a run does (the host's /usr\n"
	      "                         bound read-only: for this machine)\n"
	      "  --k8s                  print Kubernetes objects (a v1 List in JSON, which is\n"
	      "                         YAML): a Job and an egress-only NetworkPolicy\n"
	      "  --image IMAGE          (--k8s) the image: the agent's runtime, its files in\n"
	      "                         /agent (copied to /workspace when an AGENT is given)\n"
	      "  --name NAME            (--k8s) the objects' name (default: the agent's)\n"
	      "  --namespace NS         (--k8s) their namespace\n"
	      "  --secret KEY           (--k8s) variable KEY from the Secret; repeatable.\n"
	      "                         --env-file's keys and --pass-env's names are too:\n"
	      "                         a value is never printed\n"
	      "  --secret-name NAME     (--k8s) that Secret (default: NAME-secrets)\n"
	      "  --runtime-class NAME   (--k8s) e.g. gvisor or kata\n"
	      "  --seccomp-profile FILE (--k8s) write the seccomp profile to FILE; install it\n"
	      "                         on every node as /var/lib/kubelet/seccomp/<its name>\n"
	      "                         (default name: sandbox-run.json)\n"
	      "  --agent-sandbox        (--k8s) kubernetes-sigs/agent-sandbox objects instead:\n"
	      "                         SandboxTemplate, SandboxWarmPool, SandboxClaim\n"
	      "  --warm N               (--agent-sandbox) the warm pool's size (default 1)\n"
	      "  -h, --help             print this help and exit\n"
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
	char *end;

	e->k8s_only |= id != OPT_OCI && id != OPT_K8S;
	switch (id) {
	case OPT_OCI:
		if (!*arg)
			return sr_error_msg(err, -EINVAL, "empty path");
		e->oci = arg;
		return 0;
	case OPT_K8S:
		e->k8s = true;
		return 0;
	case OPT_IMAGE:
		e->image = arg;
		return *arg ? 0 : sr_error_msg(err, -EINVAL, "empty image");
	case OPT_NAMESPACE:
		e->namespace_ = arg;
		break;
	case OPT_SECRET:
		if (!sr_env_valid_name(arg, strlen(arg)))
			return sr_error_msg(
			    err, -EINVAL, "'%s': a variable name is letters, digits and '_'", arg);
		return sr_strv_push(&e->secrets, arg) < 0 ? sr_error_errno(err, -ENOMEM, "secret")
							  : 0;
	case OPT_SECRET_NAME:
		e->secret_name = arg;
		break;
	case OPT_RUNTIME_CLASS:
		e->runtime_class = arg;
		break;
	case OPT_AGENT_SANDBOX:
		e->agent_sandbox = true;
		return 0;
	case OPT_WARM:
		errno = 0;
		e->warm = strtol(arg, &end, 10);
		if (errno || *end || end == arg || e->warm < 0 || e->warm > 10000)
			return sr_error_msg(err, -EINVAL, "'%s': a number of pods, 0 to 10000",
					    arg);
		return 0;
	case OPT_SECCOMP_PROFILE:
		if (!*arg)
			return sr_error_msg(err, -EINVAL, "empty path");
		e->seccomp_file = arg;
		return 0;
	default:
		return sr_error_msg(err, -EINVAL, "unexpected option");
	}
	/* A name Kubernetes takes: lowercase letters, digits, '-'. */
	if (!sr_k8s_valid_name(arg))
		return sr_error_msg(err, -EINVAL,
				    "'%s': a Kubernetes name is 1-63 of a-z, 0-9 and '-', "
				    "starting and ending with a letter or digit",
				    arg);
	return 0;
}

/* The objects' name: --name, else the agent's (lowercased, '-' for the rest), else sandbox-run. */
static int object_name(const struct sr_config *c, char *buf, size_t len, struct sr_error *err)
{
	const char *base = NULL, *p;
	size_t n = 0;

	if (c->name) {
		if (!sr_k8s_valid_name(c->name))
			return sr_error_msg(err, -EINVAL,
					    "--name %s: a Kubernetes name is 1-63 of a-z, 0-9 and "
					    "'-', starting and ending with a letter or digit",
					    c->name);
		snprintf(buf, len, "%s", c->name);
		return 0;
	}
	if (!c->command_mode && c->argc > 0) {
		_cleanup_free_ char *copy = strdup(c->argv[0]);
		char *slash;

		if (!copy)
			return sr_error_errno(err, -ENOMEM, "name");
		while ((slash = strrchr(copy, '/')) && !slash[1] && slash != copy)
			*slash = '\0';
		base = strrchr(copy, '/') ? strrchr(copy, '/') + 1 : copy;
		for (p = base; *p && n + 1 < len && n < 63; p++) {
			char ch = *p >= 'A' && *p <= 'Z' ? (char)(*p - 'A' + 'a') : *p;

			if ((ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9'))
				buf[n++] = ch;
			else if (n && buf[n - 1] != '-')
				buf[n++] = '-';
		}
		while (n && buf[n - 1] == '-')
			n--;
		buf[n] = '\0';
	}
	if (n == 0)
		snprintf(buf, len, "sandbox-run");
	return 0;
}

/*
 * The variables whose values are secrets, by name only: --secret, the
 * --env-file's keys (its values are read, never kept), --pass-env's.
 */
static int secret_keys(const struct sr_config *c, const struct export *e, struct sr_strv *ret,
		       struct sr_error *err)
{
	struct sr_strv file = {0};
	const struct sr_strv *lists[3] = {&e->secrets, &file, &c->pass_env};
	int r = 0;

	if (c->env_file && (r = sr_env_read_file(c->env_file, &file, err)) < 0) {
		sr_strv_wipe(&file);
		return r;
	}
	for (size_t l = 0; l < 3 && r >= 0; l++) {
		for (size_t i = 0; i < lists[l]->n && r >= 0; i++) {
			const char *item = lists[l]->items[i];
			_cleanup_free_ char *key = strndup(item, strcspn(item, "="));
			bool seen = false;

			for (size_t j = 0; key && j < ret->n && !seen; j++)
				seen = strcmp(ret->items[j], key) == 0;
			if (!key || (!seen && sr_strv_push(ret, key) < 0))
				r = sr_error_errno(err, -ENOMEM, "secrets");
		}
	}
	sr_strv_wipe(&file);
	return r;
}

/* Writes the seccomp profile to path, whole or not at all. */
static int write_profile(const char *path, struct sr_error *err)
{
	_cleanup_(sr_json_decrefp) json_t *profile = NULL;
	_cleanup_free_ char *text = NULL, *tmp = NULL;
	_cleanup_close_ int fd = -1;
	int r;

	if ((r = sr_seccomp_oci_profile(&profile, err)) < 0)
		return r;
	if ((r = sr_json_dump_document(profile, &text)) < 0 || asprintf(&tmp, "%s.tmp", path) < 0)
		return sr_error_errno(err, -ENOMEM, "%s", path);
	fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
	if (fd < 0)
		return sr_error_errno(err, sr_negerrno(), "%s", tmp);
	r = sr_write_all(fd, text, strlen(text));
	if (r >= 0 && fsync(fd) < 0)
		r = sr_negerrno();
	if (r >= 0 && rename(tmp, path) < 0)
		r = sr_negerrno();
	if (r < 0) {
		unlink(tmp);
		return sr_error_errno(err, r, "%s", path);
	}
	return 0;
}

/* The command and whether the image's /agent is the workspace: as a run would find them. */
static int k8s_command(const struct sr_config *c, const struct sr_sink *sink, struct sr_agent *a,
		       bool *ret_workspace, struct sr_error *err)
{
	int r;

	*ret_workspace = false;
	if (!c->command_mode && c->argc == 0)
		return 0; /* the image's own entry point, in an empty workspace */
	r = sr_agent_resolve(c, sink, a, err);
	if (r < 0)
		return r;
	if (a->kind == SR_AGENT_ARCHIVE)
		return sr_error_msg(err, -EOPNOTSUPP,
				    "an archive is extracted inside a sandbox only "
				    "(docs/security.md): extract it, then export the directory");
	if (c->n_binds)
		return sr_error_msg(err, -EOPNOTSUPP,
				    "--bind, --ro-bind: host paths are this machine's, not a "
				    "cluster's (use a volume: docs/scale-out.md)");
	*ret_workspace = a->host_dir || a->file_path;
	return 0;
}

static int export_k8s(const struct sr_config *c, const struct export *e, const struct sr_sink *sink,
		      struct sr_error *err)
{
	_cleanup_(sr_agent_free) struct sr_agent agent = {0};
	_cleanup_(sr_json_decrefp) json_t *objects = NULL;
	_cleanup_free_ char *text = NULL, *secret = NULL;
	struct sr_strv keys = {0};
	const char *slash = e->seccomp_file ? strrchr(e->seccomp_file, '/') : NULL;
	struct sr_k8s_spec s = {
	    .config = c,
	    .namespace_ = e->namespace_,
	    .image = e->image,
	    .runtime_class = e->runtime_class,
	    .seccomp = slash		 ? slash + 1
		       : e->seccomp_file ? e->seccomp_file
					 : "sandbox-run.json",
	    .agent_sandbox = e->agent_sandbox,
	    .warm = e->warm < 0 ? 1 : (unsigned)e->warm,
	    .now_s = (int64_t)time(NULL),
	};
	char name[64];
	int r;

	if (!e->image)
		return sr_error_msg(err, -EINVAL,
				    "export --k8s needs --image IMAGE: the agent's runtime, with "
				    "its files in /agent (docs/scale-out.md)");
	if ((r = object_name(c, name, sizeof(name), err)) < 0 ||
	    (r = k8s_command(c, sink, &agent, &s.workspace, err)) < 0 ||
	    (r = secret_keys(c, e, &keys, err)) < 0)
		goto out;
	if (!e->secret_name && asprintf(&secret, "%.48s-secrets", name) < 0) {
		secret = NULL;
		r = sr_error_errno(err, -ENOMEM, "secret");
		goto out;
	}
	s.name = name;
	s.secret = e->secret_name ? e->secret_name : secret;
	s.secret_keys = &keys;
	s.command = agent.argv.n ? agent.argv.items : NULL;
	r = sr_k8s_objects(&s, sink, &objects, err);
	if (r >= 0 && e->seccomp_file)
		r = write_profile(e->seccomp_file, err);
	if (r >= 0 && (r = sr_json_dump_document(objects, &text)) < 0)
		r = sr_error_errno(err, r, "objects");
	if (r >= 0 && fputs(text, stdout) < 0)
		r = sr_error_errno(err, sr_negerrno(), "write standard output");
out:
	sr_strv_free(&keys);
	return r;
}

static int check(const struct sr_config *c, const struct export *e, struct sr_error *err)
{
	if (e->oci && e->k8s)
		return sr_error_msg(err, -EINVAL,
				    "--oci DIR or --k8s, not both (see export --help)");
	if (!e->oci && !e->k8s)
		return sr_error_msg(err, -EINVAL,
				    "needs one of --oci DIR or --k8s (see export --help)");
	if (e->oci && e->k8s_only)
		return sr_error_msg(
		    err, -EINVAL,
		    "--image, --namespace, --secret, --secret-name, "
		    "--runtime-class, --seccomp-profile, --agent-sandbox and --warm "
		    "are for --k8s");
	if (e->warm >= 0 && !e->agent_sandbox)
		return sr_error_msg(err, -EINVAL, "--warm is for --agent-sandbox");
	if (e->oci && c->name)
		return sr_error_msg(err, -EINVAL,
				    "--name is for --k8s (the bundle's container is named when "
				    "it is run: crun run --bundle DIR NAME)");
	if (c->result_path)
		return sr_error_msg(err, -EINVAL, "--result: export runs nothing");
	if (c->n_exports > 0 || c->changes_path)
		return sr_error_msg(err, -EINVAL,
				    "--export, --changes ([artifacts]): export runs nothing, so "
				    "nothing comes out of it (docs/artifacts.md)");
	return 0;
}

/*
 * Warnings (what does not map to the other runtime) held until the export
 * is done: bad input is one line, the error, not a warning about the
 * network first and then the reason nothing was made. Said once it is
 * made; dropped if it fails.
 */
struct held_line {
	enum sr_log_level level;
	char *text;
};

struct held {
	const struct sr_sink *out;
	struct held_line *v;
	size_t n, cap;
};

static void hold(void *ctx, enum sr_log_level level, const char *text)
{
	struct held *h = ctx;
	char *copy = strdup(text);

	if (!copy || SR_GROW(h->v, h->cap, h->n + 1, 4) < 0) {
		free(copy);
		return;
	}
	h->v[h->n++] = (struct held_line){level, copy};
}

static void held_flush(struct held *h)
{
	for (size_t i = 0; i < h->n; i++)
		sr_sink_log(h->out, h->v[i].level, "%s", h->v[i].text);
}

static void held_free(struct held *h)
{
	for (size_t i = 0; i < h->n; i++)
		free(h->v[i].text);
	free(h->v);
}

int sr_verb_export(const struct sr_verb_args *a)
{
	struct export e = {.warm = -1};
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
	if (r >= 0) {
		struct held h = {.out = &sink};
		const struct sr_sink holding = {.level = sink.level, .write = hold, .ctx = &h};

		r = e.oci ? sr_oci_bundle(e.oci, &c, &holding, &err)
			  : export_k8s(&c, &e, &holding, &err);
		if (r >= 0)
			held_flush(&h);
		held_free(&h);
	}
	if (r >= 0 && e.k8s)
		status = sr_cli_stdout_status("export");
	else if (r < 0) {
		sr_cli_verb_error(&sink, "export", err.msg);
		status = SR_EXIT_FAILURE;
	}
out:
	sr_strv_free(&e.secrets);
	sr_config_free(&c);
	return status;
}
