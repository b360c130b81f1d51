/* SPDX-License-Identifier: MIT */
#include "route.h"
#include "util.h"

#include <stdlib.h>

/*
 * Patterns, first match wins: {id}, {port} and {name} match one segment;
 * {rpc} one segment, an RPC's method (a word); a final "*" any number of
 * segments (none too). Method "*" serves every method.
 */
static const struct pattern {
	const char *method;
	const char *path;
	enum sr_route route;
	enum sr_api_family family;
} patterns[] = {
    {"GET", "/v1", SR_ROUTE_HEALTH, SR_API_V1},
    {"GET", "/v1/health", SR_ROUTE_HEALTH, SR_API_V1},
    {"GET", "/v1/sandboxes", SR_ROUTE_SB_LIST, SR_API_V1},
    {"POST", "/v1/sandboxes", SR_ROUTE_SB_CREATE, SR_API_V1},
    {"GET", "/v1/sandboxes/{id}", SR_ROUTE_SB_GET, SR_API_V1},
    {"DELETE", "/v1/sandboxes/{id}", SR_ROUTE_SB_DELETE, SR_API_V1},
    {"POST", "/v1/sandboxes/{id}/exec", SR_ROUTE_SB_EXEC, SR_API_V1},
    {"GET", "/v1/sandboxes/{id}/files", SR_ROUTE_SB_FILES_GET, SR_API_V1},
    {"PUT", "/v1/sandboxes/{id}/files", SR_ROUTE_SB_FILES_PUT, SR_API_V1},
    {"DELETE", "/v1/sandboxes/{id}/files", SR_ROUTE_SB_FILES_DELETE, SR_API_V1},
    {"GET", "/v1/sandboxes/{id}/ports", SR_ROUTE_SB_PORTS, SR_API_V1},
    {"POST", "/v1/sandboxes/{id}/ports/{port}", SR_ROUTE_SB_PORT, SR_API_V1},
    {"POST", "/v1/sandboxes/{id}/timeout", SR_ROUTE_SB_TIMEOUT, SR_API_V1},
    {"POST", "/v1/sandboxes/{id}/snapshots", SR_ROUTE_SB_SNAPSHOT, SR_API_V1},
    {"GET", "/v1/snapshots", SR_ROUTE_SNAP_LIST, SR_API_V1},
    {"DELETE", "/v1/snapshots/{name}", SR_ROUTE_SNAP_DELETE, SR_API_V1},
    {"GET", "/v1/pools", SR_ROUTE_POOLS, SR_API_V1},
    /* {id}: a deployment's name (the same characters). deploy itself is the CLI's. */
    {"POST", "/v1/deployments/{id}/invoke", SR_ROUTE_INVOKE, SR_API_V1},
    {"*", "/v1/deployments/*", SR_ROUTE_UNSUPPORTED, SR_API_V1},
    {"*", "/v1/*", SR_ROUTE_NONE, SR_API_V1},

    {"POST", "/sandboxes", SR_ROUTE_E2B_CREATE, SR_API_E2B},
    {"GET", "/sandboxes", SR_ROUTE_E2B_LIST, SR_API_E2B},
    {"POST", "/v2/sandboxes", SR_ROUTE_E2B_CREATE, SR_API_E2B},
    {"GET", "/v2/sandboxes", SR_ROUTE_E2B_LIST, SR_API_E2B},
    {"GET", "/sandboxes/{id}", SR_ROUTE_E2B_GET, SR_API_E2B},
    {"DELETE", "/sandboxes/{id}", SR_ROUTE_E2B_KILL, SR_API_E2B},
    {"POST", "/sandboxes/{id}/timeout", SR_ROUTE_E2B_TIMEOUT, SR_API_E2B},
    {"POST", "/sandboxes/{id}/connect", SR_ROUTE_E2B_CONNECT, SR_API_E2B},
    {"POST", "/v2/sandboxes/{id}/connect", SR_ROUTE_E2B_CONNECT, SR_API_E2B},
    {"POST", "/sandboxes/{id}/refreshes", SR_ROUTE_E2B_REFRESH, SR_API_E2B},
    /* Pause, resume, fork, metrics, network, snapshots, templates, volumes, secrets. */
    {"*", "/sandboxes/*", SR_ROUTE_UNSUPPORTED, SR_API_E2B},
    {"*", "/v2/*", SR_ROUTE_UNSUPPORTED, SR_API_E2B},
    {"*", "/v3/*", SR_ROUTE_UNSUPPORTED, SR_API_E2B},
    {"*", "/templates/*", SR_ROUTE_UNSUPPORTED, SR_API_E2B},
    {"*", "/snapshots/*", SR_ROUTE_UNSUPPORTED, SR_API_E2B},
    {"*", "/volumes/*", SR_ROUTE_UNSUPPORTED, SR_API_E2B},
    {"*", "/volumecontent/*", SR_ROUTE_UNSUPPORTED, SR_API_E2B},
    {"*", "/secrets/*", SR_ROUTE_UNSUPPORTED, SR_API_E2B},
    {"*", "/teams/*", SR_ROUTE_UNSUPPORTED, SR_API_E2B},

    {"GET", "/health", SR_ROUTE_ENVD_HEALTH, SR_API_ENVD},
    {"GET", "/files", SR_ROUTE_ENVD_FILES_GET, SR_API_ENVD},
    {"POST", "/files", SR_ROUTE_ENVD_FILES_POST, SR_API_ENVD},
    {"POST", "/process.Process/{rpc}", SR_ROUTE_ENVD_RPC, SR_API_ENVD},
    {"POST", "/filesystem.Filesystem/{rpc}", SR_ROUTE_ENVD_RPC, SR_API_ENVD},
    {"*", "/envs", SR_ROUTE_UNSUPPORTED, SR_API_ENVD},
    {"*", "/metrics", SR_ROUTE_UNSUPPORTED, SR_API_ENVD},
    {"*", "/init", SR_ROUTE_UNSUPPORTED, SR_API_ENVD},
};

bool sr_route_valid_ref(const char *s)
{
	size_t n = strlen(s);

	if (n == 0 || n > SR_ROUTE_PARAM_MAX || strcmp(s, ".") == 0 || strcmp(s, "..") == 0)
		return false;
	for (size_t i = 0; i < n; i++) {
		char c = s[i];

		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
		      c == '_' || c == '.' || c == '-'))
			return false;
	}
	return true;
}

static bool valid_word(const char *s)
{
	size_t n = strlen(s);

	if (n == 0 || n > SR_ROUTE_PARAM_MAX)
		return false;
	for (size_t i = 0; i < n; i++)
		if (!((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= 'A' && s[i] <= 'Z')))
			return false;
	return true;
}

/* The next segment of *p (after its '/'), copied into seg; false at the end of the path. */
static bool next_segment(const char **p, char *seg, size_t len, bool *too_long)
{
	size_t n;

	if (**p != '/')
		return false;
	(*p)++;
	n = strcspn(*p, "/");
	*too_long = n >= len;
	snprintf(seg, len, "%.*s", (int)(n >= len ? len - 1 : n), *p);
	*p += n;
	return true;
}

/* Whether path matches pattern; the parameters into m. */
static bool matches(const char *pattern, const char *path, struct sr_route_match *m)
{
	const char *pp = pattern, *p = path;
	char want[SR_ROUTE_PARAM_MAX + 1], seg[SR_ROUTE_PARAM_MAX + 2];
	bool long_want, long_seg;

	for (;;) {
		bool more_want = next_segment(&pp, want, sizeof(want), &long_want);

		if (more_want && strcmp(want, "*") == 0)
			return true;
		if (!next_segment(&p, seg, sizeof(seg), &long_seg))
			return !more_want && *p == '\0';
		if (!more_want || long_seg)
			return false;
		if (strcmp(want, "{id}") == 0) {
			if (!sr_route_valid_ref(seg))
				return false;
			snprintf(m->id, sizeof(m->id), "%s", seg);
		} else if (strcmp(want, "{name}") == 0) {
			if (!sr_route_valid_ref(seg))
				return false;
			snprintf(m->name, sizeof(m->name), "%s", seg);
		} else if (strcmp(want, "{rpc}") == 0) {
			/* "Service/Method": the service is the pattern's first segment. */
			if (!valid_word(seg))
				return false;
			if (snprintf(m->name, sizeof(m->name), "%.*s/%s",
				     (int)strcspn(pattern + 1, "/"), pattern + 1,
				     seg) >= (int)sizeof(m->name))
				return false;
		} else if (strcmp(want, "{port}") == 0) {
			char *end;
			long v = strtol(seg, &end, 10);

			if (!*seg || *end || seg[0] == '0' || v < 1 || v > 65535)
				return false;
			m->port = (int)v;
		} else if (strcmp(want, seg) != 0) {
			return false;
		}
	}
}

/* The family of a path nothing matches: envd's names are flat, E2B's start with its resources. */
static enum sr_api_family family_of(const char *path)
{
	return strncmp(path, "/v1/", 4) == 0 || strcmp(path, "/v1") == 0 ? SR_API_V1 : SR_API_E2B;
}

void sr_route(const char *method, const char *path, struct sr_route_match *ret)
{
	const struct pattern *path_only = NULL;

	*ret = (struct sr_route_match){.route = SR_ROUTE_NONE, .family = family_of(path)};
	for (size_t i = 0; i < SR_ARRAY_SIZE(patterns); i++) {
		struct sr_route_match m = {0};

		if (!matches(patterns[i].path, path, &m))
			continue;
		if (strcmp(patterns[i].method, "*") == 0 ||
		    strcmp(patterns[i].method, method) == 0) {
			if (path_only && patterns[i].route == SR_ROUTE_NONE)
				break;
			*ret = m;
			ret->route = patterns[i].route;
			ret->family = patterns[i].family;
			return;
		}
		if (!path_only)
			path_only = &patterns[i];
	}
	if (!path_only)
		return;
	ret->route = SR_ROUTE_BAD_METHOD;
	ret->family = path_only->family;
	/* Every method of the patterns that match the path. */
	static const char *const methods[] = {"GET", "POST", "PUT", "DELETE"};
	static const char *const allows[] = {"",
					     "GET",
					     "POST",
					     "GET, POST",
					     "PUT",
					     "GET, PUT",
					     "POST, PUT",
					     "GET, POST, PUT",
					     "DELETE",
					     "GET, DELETE",
					     "POST, DELETE",
					     "GET, POST, DELETE",
					     "PUT, DELETE",
					     "GET, PUT, DELETE",
					     "POST, PUT, DELETE",
					     "GET, POST, PUT, DELETE"};
	unsigned bits = 0;

	for (size_t i = 0; i < SR_ARRAY_SIZE(patterns); i++) {
		struct sr_route_match m = {0};

		if (strcmp(patterns[i].method, "*") == 0 || !matches(patterns[i].path, path, &m))
			continue;
		for (size_t k = 0; k < SR_ARRAY_SIZE(methods); k++)
			if (strcmp(patterns[i].method, methods[k]) == 0)
				bits |= 1u << k;
	}
	ret->allow = allows[bits];
}
