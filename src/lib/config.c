/* SPDX-License-Identifier: MIT */
/*
 * The run configuration (config.h): its life, the one table of the keys a
 * profile may say, a key set by section and name (did-you-mean for an
 * unknown one), and the checks across fields. What each kind of value
 * takes is in config-values.c, the paths in config-paths.c.
 */
#include "config-internal.h"

#include "secmem.h"
#include "units.h"
#include "util.h"

#include <ctype.h>
#include <stddef.h>

#define FIELD(f) offsetof(struct sr_config, f)

/* The one list of what a profile may say; options map onto these too. */
static const struct key_def keys[] = {
    {"profile", "inherit", KEY_IGNORED, 0, false},
    {"profile", "description", KEY_IGNORED, 0, false},
    {"limits", "memory", KEY_SIZE, FIELD(memory_bytes), false},
    {"limits", "cpus", KEY_CPUS, FIELD(cpus_milli), false},
    {"limits", "pids", KEY_COUNT, FIELD(pids), false},
    {"limits", "timeout", KEY_DURATION, FIELD(timeout_ms), false},
    {"limits", "disk", KEY_SIZE, FIELD(disk_bytes), false},
    {"limits", "disk-backing", KEY_DISK_BACKING, FIELD(disk_backing), false},
    {"limits", "strict", KEY_BOOL, FIELD(strict), false},
    {"network", "mode", KEY_NET_MODE, FIELD(net), false},
    {"network", "helper", KEY_NET_HELPER, FIELD(net_helper), false},
    {"network", "allow", KEY_DEST_LIST, FIELD(allow), false},
    {"network", "deny", KEY_DEST_LIST, FIELD(deny), false},
    {"network", "allow-host", KEY_PORT_LIST, FIELD(allow_host), false},
    {"env", "file", KEY_ENV_FILE, FIELD(env_file), false},
    {"env", "pass", KEY_ENV_NAME_LIST, FIELD(pass_env), false},
    {"filesystem", "ro-bind", KEY_BIND, 0, false},
    {"filesystem", "bind", KEY_BIND, 0, true},
    {"agent", "entry", KEY_STRING, FIELD(entry), false},
    {"deploy", "install", KEY_STRING, FIELD(install), false},
    {"deploy", "install-timeout", KEY_DURATION, FIELD(install_timeout_ms), false},
    {"deploy", "keep", KEY_COUNT, FIELD(keep_versions), false},
    {"artifacts", "export", KEY_EXPORT_LIST, 0, false},
    {"artifacts", "changes", KEY_PATH, FIELD(changes_path), false},
};

static const char *const sections[] = {
    "profile", "limits", "network", "env", "filesystem", "agent", "deploy", "artifacts", NULL,
};

int sr_strv_push(struct sr_strv *v, const char *s)
{
	_cleanup_free_ char *copy = strdup(s);
	char **items;

	if (!copy)
		return -ENOMEM;
	items = reallocarray(v->items, v->n + 2, sizeof(*items));
	if (!items)
		return -ENOMEM;
	items[v->n++] = steal_pointer(&copy);
	items[v->n] = NULL;
	v->items = items;
	return 0;
}

void sr_strv_free(struct sr_strv *v)
{
	for (size_t i = 0; i < v->n; i++)
		free(v->items[i]);
	free(v->items);
	v->items = NULL;
	v->n = 0;
}

void sr_strv_wipe(struct sr_strv *v)
{
	for (size_t i = 0; i < v->n; i++)
		explicit_bzero(v->items[i], strlen(v->items[i]));
	sr_strv_free(v);
}

void sr_config_init(struct sr_config *c)
{
	*c = (struct sr_config){
	    .memory_bytes = UINT64_C(2) << 30,
	    .cpus_milli = 2000,
	    .pids = 1024,
	    .timeout_ms = 120 * 1000,
	    .disk_bytes = UINT64_C(10) << 30,
	    .net = SR_NET_EGRESS,
	    .install_timeout_ms = SR_DEFAULT_INSTALL_TIMEOUT_MS,
	    .keep_versions = SR_DEFAULT_KEEP_VERSIONS,
	    .log_level = SR_LOG_WARNING,
	};
}

static void binds_free(struct sr_config *c)
{
	for (size_t i = 0; i < c->n_binds; i++) {
		free(c->binds[i].src);
		free(c->binds[i].dst);
		free(c->binds[i].origin);
	}
	free(c->binds);
	c->binds = NULL;
	c->n_binds = 0;
}

void config_exports_free(struct sr_config *c)
{
	for (size_t i = 0; i < c->n_exports; i++) {
		free(c->exports[i].path);
		free(c->exports[i].host);
		free(c->exports[i].origin);
	}
	free(c->exports);
	c->exports = NULL;
	c->n_exports = 0;
}

/*
 * The environment is wiped: its values may be secrets, and a server that
 * made a sandbox through the API frees its configuration as it goes on;
 * freed as they were, they would be in every keeper it forked later
 * (docs/security.md, "What a keeper holds").
 */
void sr_config_free(struct sr_config *c)
{
	free(c->profile);
	free(c->profile_path);
	sr_strv_free(&c->allow);
	sr_strv_free(&c->deny);
	sr_strv_free(&c->allow_host);
	sr_strv_wipe(&c->env);
	free(c->env_file);
	free(c->env_file_origin);
	sr_strv_free(&c->pass_env);
	binds_free(c);
	config_exports_free(c);
	free(c->changes_path);
	free(c->changes_origin);
	free(c->entry);
	free(c->install);
	sr_secmem_free(c->secrets);
	free(c->workspace);
	free(c->result_path);
	free(c->name);
	free(c->from);
	free(c->deployment);
	*c = (struct sr_config){};
}

/* Optimal string alignment distance, case-insensitive; words here are short. */
static size_t edit_distance(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b);
	size_t d[3][64];
	size_t *prev2 = d[0], *prev = d[1], *cur = d[2];

	if (la >= 63 || lb >= 63)
		return SIZE_MAX;
	for (size_t j = 0; j <= lb; j++)
		prev[j] = j;
	for (size_t i = 1; i <= la; i++) {
		cur[0] = i;
		for (size_t j = 1; j <= lb; j++) {
			size_t cost =
			    tolower((unsigned char)a[i - 1]) != tolower((unsigned char)b[j - 1]);
			size_t best = prev[j - 1] + cost;

			if (prev[j] + 1 < best)
				best = prev[j] + 1;
			if (cur[j - 1] + 1 < best)
				best = cur[j - 1] + 1;
			if (i > 1 && j > 1 &&
			    tolower((unsigned char)a[i - 1]) == tolower((unsigned char)b[j - 2]) &&
			    tolower((unsigned char)a[i - 2]) == tolower((unsigned char)b[j - 1]) &&
			    prev2[j - 2] + 1 < best)
				best = prev2[j - 2] + 1;
			cur[j] = best;
		}
		size_t *t = prev2;
		prev2 = prev;
		prev = cur;
		cur = t;
	}
	return prev[lb];
}

const char *sr_suggest(const char *word, const char *const *candidates)
{
	const char *best = NULL;
	size_t best_d = SIZE_MAX;

	for (; *candidates; candidates++) {
		size_t d = edit_distance(word, *candidates);
		size_t limit = strlen(*candidates) < 5 ? 1 : 2;

		if (d <= limit && d < best_d) {
			best = *candidates;
			best_d = d;
		}
	}
	return best;
}

bool sr_config_known_section(const char *section)
{
	for (size_t i = 0; sections[i]; i++)
		if (strcmp(sections[i], section) == 0)
			return true;
	return false;
}

const char *sr_config_suggest_section(const char *section)
{
	return sr_suggest(section, sections);
}

static const struct key_def *find_key(const char *section, const char *key)
{
	for (size_t i = 0; i < SR_ARRAY_SIZE(keys); i++)
		if (strcmp(keys[i].section, section) == 0 && strcmp(keys[i].key, key) == 0)
			return &keys[i];
	return NULL;
}

bool sr_config_known_key(const char *section, const char *key)
{
	if (strcmp(section, "env") == 0)
		return true;
	return find_key(section, key) != NULL;
}

const char *sr_config_suggest_key(const char *section, const char *key)
{
	const char *names[SR_ARRAY_SIZE(keys) + 1];
	size_t n = 0;

	for (size_t i = 0; i < SR_ARRAY_SIZE(keys); i++)
		if (strcmp(keys[i].section, section) == 0)
			names[n++] = keys[i].key;
	names[n] = NULL;
	return sr_suggest(key, (const char *const *)names);
}

/* The section a key belongs to, for "put it under [limits]". */
static const char *section_of(const char *key)
{
	for (size_t i = 0; i < SR_ARRAY_SIZE(keys); i++)
		if (strcmp(keys[i].key, key) == 0)
			return keys[i].section;
	return NULL;
}

static int unknown_key(const char *section, const char *key, struct sr_error *err)
{
	const char *s = sr_config_suggest_key(section, key);
	const char *home;

	if (s)
		return sr_error_msg(err, -EINVAL, "unknown key '%s' in [%s] (did you mean '%s'?)",
				    key, section, s);
	home = section_of(key);
	if (home)
		return sr_error_msg(err, -EINVAL, "unknown key '%s' in [%s] (it belongs in [%s])",
				    key, section, home);
	return sr_error_msg(err, -EINVAL, "unknown key '%s' in [%s]", key, section);
}

int sr_config_check_section(const char *section, struct sr_error *err)
{
	char known[128] = "";
	const char *s;

	if (sr_config_known_section(section))
		return 0;
	s = sr_config_suggest_section(section);
	if (s)
		return sr_error_msg(err, -EINVAL, "unknown section [%s] (did you mean [%s]?)",
				    section, s);
	/* From the table itself, so that a section added there is named here too. */
	for (size_t i = 0; sections[i]; i++) {
		if (i > 0)
			strncat(known, ", ", sizeof(known) - strlen(known) - 1);
		strncat(known, sections[i], sizeof(known) - strlen(known) - 1);
	}
	return sr_error_msg(err, -EINVAL, "unknown section [%s] (known: %s)", section, known);
}

static int set_common(struct sr_config *c, const char *section, const char *key, const char *value,
		      bool name_key, struct sr_error *err)
{
	const struct key_def *k;
	const char *s;
	int r;

	if (section[0] == '\0') {
		s = section_of(key);
		if (s)
			return sr_error_msg(
			    err, -EINVAL, "key '%s' outside a section (put it under [%s])", key, s);
		return sr_error_msg(err, -EINVAL, "key '%s' outside a section", key);
	}
	r = sr_config_check_section(section, err);
	if (r < 0)
		return r;
	k = find_key(section, key);
	if (!k && strcmp(section, "env") != 0)
		return unknown_key(section, key, err);
	if (!k)
		r = sr_config_set_env(c, key, value, err);
	else
		r = config_set_value(c, k, value, err);
	if (r < 0 && name_key && k)
		sr_error_prefix(err, "%s", key);
	return r;
}

int sr_config_set(struct sr_config *c, const char *section, const char *key, const char *value,
		  struct sr_error *err)
{
	return set_common(c, section, key, value, true, err);
}

int sr_config_apply(struct sr_config *c, const char *section, const char *key, const char *value,
		    struct sr_error *err)
{
	return set_common(c, section, key, value, false, err);
}

int sr_config_validate(const struct sr_config *c, struct sr_error *err)
{
	if (c->allow.n > 0 && c->net == SR_NET_NONE)
		return sr_error_msg(err, -EINVAL,
				    "network: allow '%s' given but the network mode is none "
				    "(use --net egress, or drop the allow entries)",
				    c->allow.items[0]);
	if (c->allow_host.n > 0 && c->net == SR_NET_NONE)
		return sr_error_msg(err, -EINVAL,
				    "network: allow-host %s given but the network mode is none "
				    "(use --net egress, or drop the allow-host entries)",
				    c->allow_host.items[0]);
	if (c->cpus_milli > SR_CPUS_MAX_MILLI)
		return sr_error_msg(err, -ERANGE, "cpus: out of range");
	if (c->pids > PIDS_MAX)
		return sr_error_msg(err, -ERANGE, "pids: out of range");
	if ((unsigned)c->net >= _SR_NET_MODE_MAX)
		return sr_error_msg(err, -EINVAL, "network: bad mode");
	if ((unsigned)c->net_helper >= _SR_NET_HELPER_MAX)
		return sr_error_msg(err, -EINVAL, "network: bad helper");
	if ((unsigned)c->disk_backing >= _SR_DISK_BACKING_MAX)
		return sr_error_msg(err, -EINVAL, "limits: bad disk backing");
	return 0;
}
