/* SPDX-License-Identifier: MIT */
/*
 * What each kind of key takes (config-internal.h): sizes, durations, CPUs
 * and counts, booleans, the network mode and helper, the disk backing by
 * name, lists of destinations, ports and variable names, [env] variables;
 * a value that is none of these told what one looks like.
 */
#include "config-internal.h"

#include "secmem.h"
#include "units.h"
#include "util.h"

#include <arpa/inet.h>
#include <ctype.h>

/* Smallest non-zero memory or disk limit: no sandbox starts in less. */
#define SIZE_MIN (UINT64_C(1) << 20)

static const char *const hints[_KEY_KIND_MAX] = {
    [KEY_SIZE] = "use e.g. 512M, 2G, or 0 for unlimited",
    [KEY_DURATION] = "use e.g. 120, 90s, 5m, 1h, or 0 for none",
    [KEY_CPUS] = "use e.g. 0.5, 2, or 0 for unlimited; at most 1024 and 3 decimals",
    [KEY_COUNT] = "use e.g. 1024, or 0 for unlimited; at most 4194304",
    [KEY_BOOL] = "use true or false",
    [KEY_NET_MODE] = "use none or egress",
    [KEY_NET_HELPER] = "use auto, slirp4netns or pasta",
    [KEY_DEST_LIST] = "use e.g. 10.0.0.0/8, 192.0.2.1, example.com:443, *.example.com or "
		      "[2001:db8::1]:443",
    [KEY_PORT_LIST] = "use a port number from 1 to 65535",
    [KEY_ENV_NAME_LIST] = "use letters, digits and '_', not starting with a digit",
    [KEY_BIND] = "use SRC:DST or SRC, e.g. /srv/data:/data",
    [KEY_DISK_BACKING] = "use auto, disk or memory",
    [KEY_EXPORT_LIST] = "use PATH or PATH:HOSTDIR, e.g. coverage or reports:out/reports",
};

static const char *const kind_nouns[_KEY_KIND_MAX] = {
    [KEY_SIZE] = "size",
    [KEY_DURATION] = "duration",
    [KEY_CPUS] = "CPU count",
    [KEY_COUNT] = "count",
    [KEY_BOOL] = "boolean",
    [KEY_NET_MODE] = "network mode",
    [KEY_NET_HELPER] = "network helper",
    [KEY_DEST_LIST] = "destination",
    [KEY_PORT_LIST] = "port",
    [KEY_ENV_NAME_LIST] = "variable name",
    [KEY_DISK_BACKING] = "disk backing",
};

static const char *const net_modes[_SR_NET_MODE_MAX] = {
    [SR_NET_NONE] = "none",
    [SR_NET_EGRESS] = "egress",
};

const char *sr_net_mode_to_string(enum sr_net_mode m)
{
	if ((unsigned)m >= _SR_NET_MODE_MAX)
		return NULL;
	return net_modes[m];
}

static const char *const net_helpers[_SR_NET_HELPER_MAX] = {
    [SR_NET_HELPER_AUTO] = "auto",
    [SR_NET_HELPER_SLIRP4NETNS] = "slirp4netns",
    [SR_NET_HELPER_PASTA] = "pasta",
};

const char *sr_net_helper_to_string(enum sr_net_helper h)
{
	if ((unsigned)h >= _SR_NET_HELPER_MAX)
		return NULL;
	return net_helpers[h];
}

static const char *const disk_backings[_SR_DISK_BACKING_MAX] = {
    [SR_DISK_BACKING_AUTO] = "auto",
    [SR_DISK_BACKING_DISK] = "disk",
    [SR_DISK_BACKING_MEMORY] = "memory",
};

const char *sr_disk_backing_to_string(enum sr_disk_backing b)
{
	if ((unsigned)b >= _SR_DISK_BACKING_MAX)
		return NULL;
	return disk_backings[b];
}

static bool env_name_valid(const char *name)
{
	if (!isalpha((unsigned char)name[0]) && name[0] != '_')
		return false;
	for (const char *p = name; *p; p++)
		if (!isalnum((unsigned char)*p) && *p != '_')
			return false;
	return true;
}

int sr_config_set_env(struct sr_config *c, const char *name, const char *value,
		      struct sr_error *err)
{
	/* A value may be a secret: every copy wiped when freed (sr_config_free() says why). */
	_cleanup_free_wiped_ char *entry = NULL;
	size_t len = strlen(name);

	if (!env_name_valid(name))
		return sr_error_msg(err, -EINVAL, "bad variable name '%s' (%s)", name,
				    hints[KEY_ENV_NAME_LIST]);
	if (strcmp(name, "file") == 0 || strcmp(name, "pass") == 0)
		return sr_error_msg(err, -EINVAL,
				    "variable name '%s' is reserved: [env] %s is a setting", name,
				    name);
	if (asprintf(&entry, "%s=%s", name, value) < 0)
		return sr_error_errno(err, -ENOMEM, "env %s", name);
	for (size_t i = 0; i < c->env.n; i++) {
		if (strncmp(c->env.items[i], name, len) == 0 && c->env.items[i][len] == '=') {
			sr_free_wiped(c->env.items[i]);
			c->env.items[i] = steal_pointer(&entry);
			return 0;
		}
	}
	if (sr_strv_push(&c->env, entry) < 0)
		return sr_error_errno(err, -ENOMEM, "env %s", name);
	return 0;
}

/* Syntax only, kept as written; names are resolved later by the network setup. */
static int dest_check(const char *value, struct sr_error *err)
{
	char fixed[INET6_ADDRSTRLEN];
	struct sr_dest d;
	int r;

	r = sr_parse_dest(value, &d);
	if (r == -ERANGE)
		return sr_error_msg(err, r, "bad port in '%s' (use 1-65535, e.g. example.com:443)",
				    value);
	if (r < 0)
		return sr_error_msg(err, r, "bad destination '%s' (%s)", value,
				    hints[KEY_DEST_LIST]);
	if (d.host_bits_set) {
		inet_ntop(d.kind == SR_DEST_IPV4 ? AF_INET : AF_INET6, d.addr, fixed,
			  sizeof(fixed));
		return sr_error_msg(err, -EINVAL, "'%s' has host bits set (did you mean %s/%u?)",
				    value, fixed, d.prefix);
	}
	return 0;
}

static int set_number(const struct key_def *k, void *field, const char *value, struct sr_error *err)
{
	uint64_t v = 0;
	uint32_t milli = 0;
	int r;

	switch (k->kind) {
	case KEY_SIZE:
		r = sr_parse_size(value, &v);
		break;
	case KEY_DURATION:
		r = sr_parse_duration(value, &v);
		break;
	case KEY_CPUS:
		r = sr_parse_cpus(value, &milli);
		break;
	case KEY_COUNT:
		r = sr_parse_count(value, &v);
		if (r == 0 && v > PIDS_MAX)
			r = -ERANGE;
		break;
	default:
		return sr_error_msg(err, -EINVAL, "not a number key");
	}
	if (r == -ERANGE)
		return sr_error_msg(err, r, "%s '%s' is out of range (%s)", kind_nouns[k->kind],
				    value, hints[k->kind]);
	/* "--memory 512" is a forgotten unit far more often than a 512-byte sandbox. */
	if (r == 0 && k->kind == KEY_SIZE && v != 0 && v < SIZE_MIN) {
		if (value[strspn(value, "0123456789")] == '\0')
			return sr_error_msg(err, -ERANGE,
					    "size '%s' is below 1M (did you mean %sM?)", value,
					    value);
		return sr_error_msg(err, -ERANGE, "size '%s' is below 1M (%s)", value,
				    hints[k->kind]);
	}
	if (r < 0)
		return sr_error_msg(err, r, "bad %s '%s' (%s)", kind_nouns[k->kind], value,
				    hints[k->kind]);
	if (k->kind == KEY_CPUS)
		*(uint32_t *)field = milli;
	else
		*(uint64_t *)field = v;
	return 0;
}

static int set_string(char **field, const char *value, struct sr_error *err)
{
	char *copy = NULL;

	if (value[0] != '\0') {
		copy = strdup(value);
		if (!copy)
			return sr_error_errno(err, -ENOMEM, "value");
	}
	free(*field);
	*field = copy;
	return 0;
}

static int set_entry(char **field, const char *value, struct sr_error *err)
{
	_cleanup_free_ char *copy = strdup(value + strspn(value, " \t"));
	size_t n;

	if (!copy)
		return sr_error_errno(err, -ENOMEM, "entry");
	for (n = strlen(copy); n > 0 && (copy[n - 1] == ' ' || copy[n - 1] == '\t'); n--)
		copy[n - 1] = '\0';
	return set_string(field, copy, err);
}

static int set_list(const struct key_def *k, struct sr_strv *list, const char *value,
		    struct sr_error *err)
{
	if (value[0] == '\0') {
		sr_strv_free(list);
		return 0;
	}
	if (k->kind == KEY_ENV_NAME_LIST && !env_name_valid(value))
		return sr_error_msg(err, -EINVAL, "bad variable name '%s' (%s)", value,
				    hints[k->kind]);
	if (k->kind == KEY_DEST_LIST) {
		int r = dest_check(value, err);
		if (r < 0)
			return r;
	}
	if (k->kind == KEY_PORT_LIST) {
		uint64_t port;
		char canon[8];

		if (sr_parse_count(value, &port) < 0 || port == 0 || port > 65535)
			return sr_error_msg(err, -ERANGE, "bad port '%s' (%s)", value,
					    hints[k->kind]);
		snprintf(canon, sizeof(canon), "%u", (unsigned)port);
		for (size_t i = 0; i < list->n; i++)
			if (strcmp(list->items[i], canon) == 0)
				return 0;
		return sr_strv_push(list, canon) < 0 ? sr_error_errno(err, -ENOMEM, "%s", k->key)
						     : 0;
	}
	if (sr_strv_push(list, value) < 0)
		return sr_error_errno(err, -ENOMEM, "%s", k->key);
	return 0;
}

int config_set_value(struct sr_config *c, const struct key_def *k, const char *value,
		     struct sr_error *err)
{
	void *field = (char *)c + k->offset;
	bool b;

	switch (k->kind) {
	case KEY_IGNORED:
		return 0;
	case KEY_SIZE:
	case KEY_DURATION:
	case KEY_CPUS:
	case KEY_COUNT:
		return set_number(k, field, value, err);
	case KEY_BOOL:
		if (sr_parse_bool(value, &b) < 0)
			return sr_error_msg(err, -EINVAL, "bad boolean '%s' (%s)", value,
					    hints[k->kind]);
		*(bool *)field = b;
		return 0;
	case KEY_NET_MODE:
		for (int m = 0; m < _SR_NET_MODE_MAX; m++) {
			if (strcmp(value, net_modes[m]) == 0) {
				*(enum sr_net_mode *)field = (enum sr_net_mode)m;
				return 0;
			}
		}
		return sr_error_msg(err, -EINVAL, "bad network mode '%s' (%s)", value,
				    hints[k->kind]);
	case KEY_NET_HELPER:
		for (int h = 0; h < _SR_NET_HELPER_MAX; h++) {
			if (strcmp(value, net_helpers[h]) == 0) {
				*(enum sr_net_helper *)field = (enum sr_net_helper)h;
				return 0;
			}
		}
		return sr_error_msg(err, -EINVAL, "bad network helper '%s' (%s)", value,
				    hints[k->kind]);
	case KEY_DEST_LIST:
	case KEY_PORT_LIST:
	case KEY_ENV_NAME_LIST:
		return set_list(k, field, value, err);
	case KEY_ENV_FILE:
		return config_set_host_path(c, "env file", value, &c->env_file, &c->env_file_origin,
					    err);
	case KEY_PATH:
		return config_set_host_path(c, k->key, value, (char **)field, &c->changes_origin,
					    err);
	case KEY_DISK_BACKING:
		for (int d = 0; d < _SR_DISK_BACKING_MAX; d++) {
			if (strcmp(value, disk_backings[d]) == 0) {
				*(enum sr_disk_backing *)field = (enum sr_disk_backing)d;
				return 0;
			}
		}
		return sr_error_msg(err, -EINVAL, "bad disk backing '%s' (%s)", value,
				    hints[k->kind]);
	case KEY_EXPORT_LIST:
		return sr_config_add_export(c, value, err);
	case KEY_BIND:
		return config_set_bind(c, value, k->writable, err);
	case KEY_STRING:
		return set_entry(field, value, err);
	case _KEY_KIND_MAX:
		break;
	}
	return sr_error_msg(err, -EINVAL, "bad key kind");
}
