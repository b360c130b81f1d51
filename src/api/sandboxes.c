/* SPDX-License-Identifier: MIT */
/*
 * /v1: the verbs as resources (docs/api.md). Each handler checks what it
 * was given, then asks the sandbox's keeper what the verb would, and
 * answers with what the verb would print (as JSON), or its error.
 */
#include "internal.h"
#include "result.h"
#include "snapshot.h"
#include "state.h"
#include "util.h"

void srv_answer_sandboxes(struct req *r, const char *key, srv_sandbox_json_fn each)
{
	struct sr_entry *v = NULL;
	struct sr_error err = {0};
	json_t *a = json_array();
	size_t n = 0;

	if (sr_state_list(srv_statedir(r->s), &v, &n, &err) < 0) {
		json_decref(a);
		return srv_answer_err(r, "ls", &err);
	}
	for (size_t i = 0; i < n; i++) {
		if (!v[i].state || srv_warm_held(r->s, v[i].id, v[i].state))
			continue;
		if (!each)
			sr_state_add_deployment(v[i].state);
		json_array_append_new(a, each ? each(r, v[i].id, v[i].state)
					      : json_incref(v[i].state));
	}
	sr_entries_free(v, n);
	srv_answer_json(r, MHD_HTTP_OK, key ? json_pack("{so}", key, a) : a);
}

static void created(struct req *r, const char *id, const struct sr_error *err)
{
	struct made *m = id ? srv_made_find(r->s, id) : NULL;
	struct sr_entry e = {0};
	struct sr_error ferr = {0};
	json_t *j;

	if (!id)
		return srv_answer_err(r, NULL, err);
	/*
	 * What ls shows of it: a warm one's as its keeper said when the pool
	 * held it (made to say what its release will), a made one's as the
	 * keeper wrote it before answering.
	 */
	if (m && m->state) {
		j = steal_pointer(&m->state);
		srv_made_state(r->s, id, j);
	} else if (sr_state_find(srv_statedir(r->s), id, &e, &ferr) == 0 && e.state) {
		j = json_incref(e.state);
		srv_made_state(r->s, id, j);
	} else {
		j = json_pack("{ss}", "id", id);
	}
	sr_entry_free(&e);
	sr_state_add_deployment(j);
	srv_answer_json(r, MHD_HTTP_CREATED, j);
}

static void create(struct req *r)
{
	struct sr_api_create c = {0};
	struct sr_error err = {0};
	json_t *body = srv_body_json(r);

	if (!body)
		return;
	if (sr_api_parse_create(body, &c, &err) < 0) {
		json_decref(body);
		return srv_answer_err(r, "create", &err);
	}
	json_decref(body);
	srv_create(r, &c, NULL, created);
}

/* A keeper's request answered with its reply, "ok" left out. */
static void reply_done(struct req *r, json_t *reply, const struct sr_error *err, void *ctx)
{
	if (!reply)
		return srv_answer_err(r, ctx, err);
	json_object_del(reply, "ok");
	/* A warm one just taken, asked before its keeper read the release: as it will say. */
	if (json_is_string(json_object_get(reply, "id")))
		srv_made_state(r->s, json_string_value(json_object_get(reply, "id")), reply);
	sr_state_add_deployment(reply);
	srv_answer_json(r, MHD_HTTP_OK, json_incref(reply));
}

static void ports_done(struct req *r, json_t *reply, const struct sr_error *err, void *ctx)
{
	json_t *ports = reply ? json_object_get(reply, "ports") : NULL;

	if (!reply)
		return srv_answer_err(r, ctx, err);
	srv_answer_json(r, MHD_HTTP_OK,
			json_pack("{so}", "ports", ports ? json_incref(ports) : json_array()));
}

static void port_done(struct req *r, json_t *reply, const struct sr_error *err, void *ctx)
{
	json_t *port = reply ? json_object_get(reply, "port") : NULL;

	if (!reply)
		return srv_answer_err(r, ctx, err);
	srv_answer_json(r, MHD_HTTP_OK, port ? json_incref(port) : json_object());
}

static void removed(struct req *r, json_t *reply, const struct sr_error *err, void *ctx)
{
	if (!reply)
		return srv_answer_err(r, ctx, err);
	srv_made_forget(r->s, json_string_value(json_object_get(reply, "id")));
	srv_answer_json(r, MHD_HTTP_OK, json_pack("{sO}", "id", json_object_get(reply, "id")));
}

static void snapshot_done(struct req *r, json_t *reply, const struct sr_error *err, void *ctx)
{
	if (!reply)
		return srv_answer_err(r, ctx, err);
	json_object_del(reply, "ok");
	srv_answer_json(r, MHD_HTTP_CREATED, json_incref(reply));
}

/* One request to the keeper of {id}; verb names it in errors, as the CLI would. */
static void call(struct req *r, json_t *req, call_done_fn done, const char *verb)
{
	struct sr_error err = {0};

	if (!req)
		return srv_answer_error(r, -ENOMEM, "serve: out of memory");
	if (srv_call(r, r->m.id, req, NULL, 0, done, (void *)verb, &err) < 0)
		srv_answer_err(r, verb, &err);
	json_decref(req);
}

static void timeout(struct req *r)
{
	json_t *body = srv_body_json(r), *t;
	struct sr_error err = {0};
	uint64_t ms;

	if (!body)
		return;
	t = json_object_get(body, "timeout");
	if (!t) {
		json_decref(body);
		return srv_answer_error(r, -EINVAL,
					"timeout: expected {\"timeout\": DURATION} (120, \"90s\", "
					"\"5m\", \"1h\"; 0: none)");
	}
	if (sr_api_duration_field("timeout", t, &ms, &err) < 0) {
		json_decref(body);
		return srv_answer_err(r, NULL, &err);
	}
	json_decref(body);
	call(r, json_pack("{sssI}", "op", "timeout", "ms", (json_int_t)ms), reply_done, "timeout");
}

static void snapshot(struct req *r)
{
	json_t *body = srv_body_json(r), *name;

	if (!body)
		return;
	name = json_object_get(body, "name");
	if (!json_is_string(name) || !sr_state_valid_name(json_string_value(name))) {
		json_decref(body);
		return srv_answer_error(
		    r, -EINVAL,
		    "snapshot: expected {\"name\": NAME} (1-64 of A-Z a-z 0-9 _ "
		    ". -, starting with a letter or digit)");
	}
	/* Its worker, stopped by the agent, is given up as a file's is (--idle-timeout): 504. */
	call(r,
	     json_pack("{sssOsI}", "op", "snapshot", "name", name, "idle_ms",
		       (json_int_t)srv_opts(r->s)->idle_ms),
	     snapshot_done, "snapshot");
	json_decref(body);
}

static void snapshots(struct req *r)
{
	struct sr_error err = {0};
	json_t *all = NULL;

	if (r->m.route == SR_ROUTE_SNAP_DELETE) {
		if (sr_snapshot_remove(r->m.name, &err) < 0)
			return srv_answer_err(r, "snapshots rm", &err);
		return srv_answer_json(r, MHD_HTTP_OK, json_pack("{ss}", "name", r->m.name));
	}
	if (sr_snapshot_list(&all, &err) < 0)
		return srv_answer_err(r, "snapshots", &err);
	srv_answer_json(r, MHD_HTTP_OK, json_pack("{so}", "snapshots", all));
}

static void exec(struct req *r)
{
	struct sr_api_exec x = {0};
	struct sr_error err = {0};
	json_t *body = srv_body_json(r);

	if (!body)
		return;
	if (sr_api_parse_exec(body, &x, &err) < 0) {
		json_decref(body);
		return srv_answer_err(r, "exec", &err);
	}
	json_decref(body);
	sr_api_exec(r, &x, false);
	sr_api_exec_free(&x);
}

void sr_api_v1(struct req *r)
{
	const char *force;

	switch (r->m.route) {
	case SR_ROUTE_HEALTH:
		return srv_answer_json(
		    r, MHD_HTTP_OK,
		    json_pack("{sbssss}", "ok", 1, "version", PACKAGE_VERSION, "api", "v1"));
	case SR_ROUTE_SB_LIST:
		return srv_answer_sandboxes(r, "sandboxes", NULL);
	case SR_ROUTE_SB_CREATE:
		return create(r);
	case SR_ROUTE_SB_GET:
		return call(r, json_pack("{ss}", "op", "inspect"), reply_done, "inspect");
	case SR_ROUTE_SB_DELETE:
		force = srv_arg(r, "force");
		return call(r,
			    json_pack("{sssb}", "op", "rm", "force",
				      force && strcmp(force, "0") && strcmp(force, "false")),
			    removed, "rm");
	case SR_ROUTE_SB_EXEC:
		return exec(r);
	case SR_ROUTE_SB_FILES_GET:
	case SR_ROUTE_SB_FILES_PUT:
	case SR_ROUTE_SB_FILES_DELETE:
		return sr_api_files(r);
	case SR_ROUTE_SB_PORTS:
		return call(r, json_pack("{ss}", "op", "inspect"), ports_done, "port");
	case SR_ROUTE_SB_PORT:
		return call(r, json_pack("{sssi}", "op", "port", "port", r->m.port), port_done,
			    "port");
	case SR_ROUTE_SB_TIMEOUT:
		return timeout(r);
	case SR_ROUTE_SB_SNAPSHOT:
		return snapshot(r);
	case SR_ROUTE_SNAP_LIST:
	case SR_ROUTE_SNAP_DELETE:
		return snapshots(r);
	case SR_ROUTE_POOLS:
		return srv_answer_json(r, MHD_HTTP_OK,
				       json_pack("{soso}", "pools", srv_pools_json(r->s),
						 "deployments", sr_invoke_pools_json(r->s)));
	case SR_ROUTE_INVOKE:
		return sr_api_invoke(r);
	default:
		return srv_answer_error(r, -ENOENT, "serve: %s %s: no such resource", r->method,
					r->url);
	}
}
