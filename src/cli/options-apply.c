/* SPDX-License-Identifier: MIT */
/*
 * The collected options taken into the configuration (options-internal.h):
 * --result first, the profile (-p's, create --from's snapshot's, a
 * deployment's, or the default), then each option over it, as the
 * profile key it names or as what it sets itself (--env, the binds,
 * --workspace, --name, --from).
 */
#include "options-internal.h"

#include "profile.h"
#include "snapshot.h"
#include "state.h"
#include "util.h"

/* Options that are exactly one profile key: one code path for both. */
static const struct {
	int id;
	const char *section;
	const char *key;
} option_keys[] = {
    {OPT_MEMORY, "limits", "memory"},
    {OPT_CPUS, "limits", "cpus"},
    {OPT_PIDS, "limits", "pids"},
    {OPT_TIMEOUT, "limits", "timeout"},
    {OPT_DISK, "limits", "disk"},
    {OPT_NET, "network", "mode"},
    {OPT_NET_HELPER, "network", "helper"},
    {OPT_ALLOW, "network", "allow"},
    {OPT_DENY, "network", "deny"},
    {OPT_ALLOW_HOST, "network", "allow-host"},
    {OPT_ENV_FILE, "env", "file"},
    {OPT_PASS_ENV, "env", "pass"},
    {OPT_ENTRY, "agent", "entry"},
    {OPT_INSTALL, "deploy", "install"},
    {OPT_INSTALL_TIMEOUT, "deploy", "install-timeout"},
    {OPT_KEEP, "deploy", "keep"},
    {OPT_DISK_BACKING, "limits", "disk-backing"},
    {OPT_EXPORT, "artifacts", "export"},
    {OPT_CHANGES, "artifacts", "changes"},
};

static int apply_env(struct sr_config *c, const char *arg, struct sr_error *err)
{
	_cleanup_free_ char *name = NULL;
	const char *eq = strchr(arg, '=');

	if (!eq)
		return sr_error_msg(err, -EINVAL,
				    "expected KEY=VALUE, got '%s' (use --pass-env %s to copy it "
				    "from your environment)",
				    arg, arg);
	name = strndup(arg, (size_t)(eq - arg));
	if (!name)
		return sr_error_errno(err, -ENOMEM, "env");
	return sr_config_set_env(c, name, eq + 1, err);
}

static int set_path(char **field, const char *arg, struct sr_error *err)
{
	if (arg[0] == '\0')
		return sr_error_msg(err, -EINVAL, "empty path");
	free(*field);
	*field = strdup(arg);
	if (!*field)
		return sr_error_errno(err, -ENOMEM, "path");
	return 0;
}

static int apply_one(struct sr_config *c, const struct collected *o, struct sr_error *err)
{
	for (size_t i = 0; i < SR_ARRAY_SIZE(option_keys); i++)
		if (option_keys[i].id == o->id)
			return sr_config_apply(c, option_keys[i].section, option_keys[i].key,
					       o->arg, err);
	switch (o->id) {
	case OPT_ENV:
		return apply_env(c, o->arg, err);
	case OPT_RO_BIND:
	case OPT_BIND:
		return sr_config_add_bind(c, o->arg, o->arg2, o->id == OPT_BIND, err);
	case OPT_STRICT:
		return sr_config_apply(c, "limits", "strict", "true", err);
	case OPT_WORKSPACE:
		return set_path(&c->workspace, o->arg, err);
	case OPT_RESULT:
		return 0; /* taken before the profile */
	case OPT_NAME:
		if (!sr_state_valid_name(o->arg))
			return sr_error_msg(
			    err, -EINVAL,
			    "bad name '%s' (1-64 of letters, digits, '_', '.', '-', "
			    "starting with a letter or digit)",
			    o->arg);
		/*
		 * An ID is a whole id before it is a name (state.h): a name of
		 * 32 hex digits could never be used, and another sandbox's
		 * whole id as a name would have rm NAME end that other one.
		 */
		if (strlen(o->arg) == 32 && strspn(o->arg, "0123456789abcdefABCDEF") == 32)
			return sr_error_msg(
			    err, -EINVAL,
			    "bad name '%s': 32 hex digits are a sandbox's id, not a "
			    "name (choose another)",
			    o->arg);
		return set_path(&c->name, o->arg, err);
	case OPT_FROM:
		return set_path(&c->from, o->arg, err);
	default:
		return sr_error_msg(err, -EINVAL, "unexpected option");
	}
}

/*
 * --result first: a caller that asked for a record gets one also when
 * the profile or another option, before or after it, is bad (main.c).
 */
int options_take_result(const struct parsed *p, struct sr_config *c, struct sr_error *err)
{
	for (size_t i = 0; i < p->n; i++) {
		int r;

		if (p->opts[i].id != OPT_RESULT)
			continue;
		r = set_path(&c->result_path, p->opts[i].arg, err);
		if (r < 0)
			return sr_error_prefix(err, "option --result");
	}
	return 0;
}

/*
 * create --from NAME starts from the snapshot's own configuration
 * (snapshot.h), unless a profile is named; options go over it.
 */
static int snapshot_profile(const struct parsed *p, char **ret, struct sr_error *err)
{
	_cleanup_free_ char *path = NULL;

	for (size_t i = 0; !p->profile && i < p->n; i++) {
		int r;

		if (p->opts[i].id != OPT_FROM)
			continue;
		free(steal_pointer(&path));
		r = sr_snapshot_config_path(p->opts[i].arg, &path, err);
		if (r < 0)
			return sr_error_prefix(err, "option --from");
		if (access(path, R_OK) < 0)
			return sr_error_msg(
			    err, -ENOENT,
			    "option --from: no snapshot '%s' (sandbox-run snapshots "
			    "lists them)",
			    p->opts[i].arg);
	}
	*ret = steal_pointer(&path);
	return 0;
}

/* The profile -p names, else --from's snapshot's, else base_profile, else the default. */
int options_load_profile(const struct parsed *p, const char *base_profile, struct sr_config *c,
			 struct sr_error *err)
{
	_cleanup_free_ char *from_profile = NULL;
	const char *asked;
	int r;

	r = snapshot_profile(p, &from_profile, err);
	if (r < 0)
		return r;
	asked = p->profile     ? p->profile
		: from_profile ? from_profile
		: base_profile ? base_profile
			       : SR_DEFAULT_PROFILE;
	r = sr_profile_load(c, asked, err);
	if (r < 0) {
		/*
		 * The record names the profile asked for, above all when it
		 * failed; the server tells by it whose it was (a deployment's,
		 * or the one its client's -p named).
		 */
		if (!c->profile)
			c->profile = strdup(asked);
		return r;
	}
	return 0;
}

int options_apply(const struct parsed *p, struct sr_config *c, struct sr_error *err)
{
	for (size_t i = 0; i < p->n; i++) {
		int r = apply_one(c, &p->opts[i], err);

		if (r < 0)
			return sr_error_prefix(err, "option --%s", options_name(p, p->opts[i].id));
		if (p->opts[i].id == OPT_ENTRY)
			c->entry_given = c->entry != NULL;
	}
	return 0;
}
