/* SPDX-License-Identifier: MIT */
/*
 * The API's resources: a request's method and path to what serves it.
 * Three families share one server (docs/api.md):
 *
 *   /v1/...          sandbox-run's own API, the verbs as resources
 *   /sandboxes, /v2  E2B's control plane (REST), as the e2b SDK calls it
 *   /files, /health, /process.Process/M, /filesystem.Filesystem/M
 *                    E2B's in-sandbox daemon (envd: REST and Connect RPC)
 *
 * Each family answers errors in its own format, so the match says which
 * family a path is of even when nothing serves it. Pure: no I/O.
 */
#pragma once

#include <stdbool.h>

enum sr_api_family {
	SR_API_V1,
	SR_API_E2B,
	SR_API_ENVD,
	_SR_API_FAMILY_MAX,
};

enum sr_route {
	SR_ROUTE_NONE,	      /* no such resource: 404 */
	SR_ROUTE_BAD_METHOD,  /* the resource exists, not with this method: 405 */
	SR_ROUTE_UNSUPPORTED, /* a resource of the family that serve does not provide: 501 */
	/* sandbox-run's own */
	SR_ROUTE_HEALTH,
	SR_ROUTE_SB_LIST,
	SR_ROUTE_SB_CREATE,
	SR_ROUTE_SB_GET,
	SR_ROUTE_SB_DELETE,
	SR_ROUTE_SB_EXEC,
	SR_ROUTE_SB_FILES_GET,
	SR_ROUTE_SB_FILES_PUT,
	SR_ROUTE_SB_FILES_DELETE,
	SR_ROUTE_SB_PORTS,
	SR_ROUTE_SB_PORT,
	SR_ROUTE_SB_TIMEOUT,
	SR_ROUTE_SB_SNAPSHOT,
	SR_ROUTE_SNAP_LIST,
	SR_ROUTE_SNAP_DELETE,
	SR_ROUTE_POOLS,
	SR_ROUTE_INVOKE,
	/* E2B's control plane */
	SR_ROUTE_E2B_CREATE,
	SR_ROUTE_E2B_LIST,
	SR_ROUTE_E2B_GET,
	SR_ROUTE_E2B_KILL,
	SR_ROUTE_E2B_TIMEOUT,
	SR_ROUTE_E2B_CONNECT,
	SR_ROUTE_E2B_REFRESH,
	/* E2B's envd */
	SR_ROUTE_ENVD_HEALTH,
	SR_ROUTE_ENVD_FILES_GET,
	SR_ROUTE_ENVD_FILES_POST,
	SR_ROUTE_ENVD_RPC,
	_SR_ROUTE_MAX,
};

#define SR_ROUTE_PARAM_MAX 64

struct sr_route_match {
	enum sr_route route;
	enum sr_api_family family;
	char id[SR_ROUTE_PARAM_MAX + 1];   /* {id}: a sandbox's id, id prefix or name */
	char name[SR_ROUTE_PARAM_MAX + 1]; /* {name}: a snapshot's; an RPC's "Service/Method" */
	int port;			   /* {port}: 1-65535 */
	const char *allow;		   /* SR_ROUTE_BAD_METHOD: the methods that are */
};

/*
 * Matches method and path (the URL's path, decoded, without the query).
 * Always fills ret; its route says what was found. A parameter that is
 * not one (an id with a '/' or of 65 characters, port 0) is no match.
 */
void sr_route(const char *method, const char *path, struct sr_route_match *ret);

/* A sandbox id, prefix or --name as a path parameter: 1-64 of [A-Za-z0-9_.-], not "." or "..". */
bool sr_route_valid_ref(const char *s);
