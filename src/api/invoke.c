/* SPDX-License-Identifier: MIT */
/*
 * POST /v1/deployments/{name}/invoke: a deployment's invocation (deploy.h)
 * in a warm sandbox, and the warm pools that keep them (serve --warm N).
 *
 * A pool per deployment and per set of invoke options (most invocations
 * give none), keyed by what its sandboxes were made of: the version
 * current when they were made (its number and its tree's inode: a
 * deployment removed and deployed again starts at 1 again) and the stamp
 * of its secrets (secrets.h: one each `secrets set` and `rm` changes). Each
 * request opens the deployment as a cold invoke does (sr_deploy_open: the
 * version current now, held until the invocation is over), and a pool
 * made of anything else is stale: let go (its keepers end their
 * sandboxes) and made again. So a redeploy, a rollback or a secret's
 * change takes effect at once for every request that starts after it,
 * and an invocation under way finishes on what it started with.
 *
 * Each warm sandbox is a keeper's, held by its pool (pool.h) and set up
 * up to the exec of the entry point: its agent is parked on pipes of the
 * server's. A request takes one, writes the prompt to its stdin (which
 * starts it) and answers with what it writes; its exit ends the sandbox.
 * One sandbox serves one request: nothing passes to the next.
 */
#include "internal.h"
#include "deploy.h"
#include "options.h"
#include "secrets.h"
#include "server.h"
#include "state.h"
#include "util.h"

#include <sys/stat.h>

/* Pools at once (deployments times option sets); past it, the least recently used goes. */
#define DEP_POOLS_MAX 32
/* Invoke options in one request, at most. */
#define ARGS_MAX 64
/*
 * Sandboxes made at once for one pool (its refill, or requests waiting):
 * one per CPU, at least 2 and at most DEP_PARALLEL_MAX. Making one is
 * mostly CPU; on the 2-CPU reference host 1 at a time left a CPU idle
 * and 4 were no faster than 2 (docs/performance.md, "Warm invocations").
 */
#define DEP_PARALLEL_MAX 8

struct stamp {
	dev_t dev;
	ino_t ino;
	struct timespec mtime;
	bool present;
};

struct waiter;

struct dep_pool {
	char name[65];
	char what[96]; /* "deployment NAME", for the pool's warnings */
	char *key;     /* the options, NUL-separated ("" for none) */
	size_t key_len;
	unsigned version;		/* of what its sandboxes are made */
	struct stamp app;		/* that version's tree */
	struct sr_secret_stamp secrets; /* taken before they were loaded */
	struct sr_config config;
	struct sr_strv argv; /* config points into it */
	char *agent[2];	     /* config.argv: the version's app/ (d's own is gone with d) */
	struct sr_pool *pool;
	struct watch *w;
	struct waiter *waiters; /* oldest first */
	unsigned n_waiting;
	int64_t used_ns;
	struct srv *s;
};

/* A request waiting for a sandbox of its pool. */
struct waiter {
	struct job job;
	struct dep_pool *dp;
	struct sr_deployment *d; /* held until its invocation is over */
	enum sr_api_answer answer;
	bool base64;
	struct waiter *next;
};

/* An invocation under way: its hold on the version, let go when it is over. */
struct held {
	struct sr_deployment *d;
};

static void stamp_of(int dirfd, const char *path, struct stamp *ret)
{
	struct stat st;

	*ret = (struct stamp){0};
	if (fstatat(dirfd, path, &st, AT_SYMLINK_NOFOLLOW) == 0)
		*ret = (struct stamp){
		    .dev = st.st_dev, .ino = st.st_ino, .mtime = st.st_mtim, .present = true};
}

static bool stamp_eq(const struct stamp *a, const struct stamp *b)
{
	return a->present == b->present && a->dev == b->dev && a->ino == b->ino &&
	       a->mtime.tv_sec == b->mtime.tv_sec && a->mtime.tv_nsec == b->mtime.tv_nsec;
}

static void on_pool(struct srv *s, void *ctx, uint32_t events)
{
	(void)s;
	(void)events;
	sr_pool_dispatch(((struct dep_pool *)ctx)->pool);
}

static void serve_waiters(void *ctx, struct sr_pool *p);

static unsigned dep_parallel(void)
{
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);

	return cpus < 2 ? 2 : cpus > DEP_PARALLEL_MAX ? DEP_PARALLEL_MAX : (unsigned)cpus;
}

/*
 * A profile that did not load, said of what the request named
 * (srv_profile_error): the deployment, whose configuration it is, or the
 * profile its -p named (options.h names in config.profile the one asked
 * for).
 */
static void profile_error(struct dep_pool *dp, const struct sr_deployment *d, struct sr_error *err)
{
	const char *asked = dp->config.profile;

	if (!asked || sr_streq(asked, sr_deployment_profile(d))) {
		/* Listed, its configuration gone: the server's to mend, not "no deployment". */
		if (err->kind == SR_ERROR_PROFILE_MISSING)
			err->kind = SR_ERROR_PROFILE_BROKEN;
		srv_profile_error(dp->s, "invoke", NULL, "deployment", dp->name, err);
	} else
		srv_profile_error(dp->s, "invoke", NULL, "profile", asked, err);
}

/* Made again from d (the version current now) and the options in key. */
static int dep_pool_make(struct dep_pool *dp, struct sr_deployment *d, struct sr_error *err)
{
	struct srv *s = dp->s;
	struct sr_strv *argv = &dp->argv;
	enum sr_action action = SR_ACTION_RUN;
	struct sr_pool_opts po = {.size = s->o.warm_deployments,
				  .what = dp->what,
				  .parallel = dep_parallel(),
				  .level = s->o.level,
				  .sink = s->o.sink,
				  .park = true,
				  .ready = serve_waiters,
				  .ctx = dp};
	int r = 0;

	sr_config_init(&dp->config);
	/*
	 * Before sr_deploy_apply loads the secrets: a `secrets set` between
	 * the two makes the next stamp differ from this one, and the pool is
	 * made again. Taken after, the stamp would be the new one, and the
	 * pool would keep the old values for good.
	 */
	sr_secret_stamp(dp->name, &dp->secrets);
	if (sr_strv_push(argv, "invoke") < 0)
		r = -ENOMEM;
	for (size_t off = 0; r == 0 && off < dp->key_len; off += strlen(dp->key + off) + 1)
		if (sr_strv_push(argv, dp->key + off) < 0)
			r = -ENOMEM;
	if (r == 0 && sr_strv_push(argv, dp->name) < 0)
		r = -ENOMEM;
	if (r < 0)
		return sr_error_errno(err, r, "invoke");
	/* As the invoke verb makes it: the version's profile, the options over it, then the
	 * version. */
	r = sr_options_parse_from((int)argv->n, argv->items, SR_OPTIONS_INVOKE,
				  sr_deployment_profile(d), &dp->config, &action, err);
	if (r < 0)
		profile_error(dp, d, err);
	if (r >= 0 && action != SR_ACTION_RUN)
		r = sr_error_msg(err, -EINVAL,
				 "invoke: --help, --version and --print-config are "
				 "the CLI's");
	if (r >= 0)
		r = sr_deploy_apply(d, &dp->config, err);
	if (r >= 0 && !(dp->agent[0] = strdup(sr_deployment_app(d))))
		r = sr_error_errno(err, -ENOMEM, "invoke");
	if (r < 0)
		return sr_error_prefix(err, "invoke"), r;
	dp->config.argv = dp->agent;
	/* Its messages are the server's; a record is the client's to write. */
	free(dp->config.result_path);
	dp->config.result_path = NULL;
	dp->version = sr_deployment_version(d);
	stamp_of(AT_FDCWD, sr_deployment_app(d), &dp->app);
	po.config = &dp->config;
	snprintf(dp->what, sizeof(dp->what), "deployment %s", dp->name);
	r = sr_pool_new(&po, &dp->pool, err);
	if (r < 0)
		return r;
	dp->w = srv_watch(s, sr_pool_fd(dp->pool), EPOLLIN, on_pool, dp);
	if (!dp->w)
		return sr_error_errno(err, -ENOMEM, "invoke");
	sr_pool_want(dp->pool, dp->n_waiting);
	return 0;
}

/* Its sandboxes let go (each keeper ends its own), its configuration (the secrets) wiped. */
static void dep_pool_drain(struct dep_pool *dp)
{
	srv_unwatch(dp->s, &dp->w);
	sr_pool_free(dp->pool);
	dp->pool = NULL;
	sr_config_free(&dp->config);
	sr_strv_free(&dp->argv);
	free(dp->agent[0]);
	dp->agent[0] = NULL;
}

static void waiter_fail(struct waiter *w, const struct sr_error *err);

static void dep_pool_free(struct srv *s, size_t i)
{
	struct dep_pool *dp = s->deps[i];

	while (dp->waiters) {
		struct sr_error err = {0};

		sr_error_msg(&err, -ENOENT, "invoke %s: the deployment's pool went", dp->name);
		waiter_fail(dp->waiters, &err);
	}
	dep_pool_drain(dp);
	free(dp->key);
	free(dp);
	s->deps[i] = s->deps[--s->n_deps];
}

/* Whether the pool's sandboxes are of what d and the secrets are now. */
static bool fresh(const struct dep_pool *dp, const struct sr_deployment *d)
{
	struct sr_secret_stamp secrets;
	struct stamp app;

	if (!dp->pool || dp->version != sr_deployment_version(d))
		return false;
	stamp_of(AT_FDCWD, sr_deployment_app(d), &app);
	sr_secret_stamp(dp->name, &secrets);
	return stamp_eq(&app, &dp->app) && sr_secret_stamp_eq(&secrets, &dp->secrets);
}

static struct dep_pool *find(struct srv *s, const char *name, const char *key, size_t key_len)
{
	for (size_t i = 0; i < s->n_deps; i++)
		if (strcmp(s->deps[i]->name, name) == 0 && s->deps[i]->key_len == key_len &&
		    memcmp(s->deps[i]->key, key, key_len) == 0)
			return s->deps[i];
	return NULL;
}

/* The pool of name and these options, of the version d holds: made, or made again. */
static struct dep_pool *dep_pool_get(struct srv *s, struct sr_deployment *d, const char *key,
				     size_t key_len, struct sr_error *err)
{
	const char *name = sr_deployment_name(d);
	struct dep_pool *dp = find(s, name, key, key_len);

	if (dp && fresh(dp, d)) {
		dp->used_ns = sr_monotonic_ns();
		return dp;
	}
	if (!dp) {
		struct dep_pool **nv;

		if (s->n_deps >= DEP_POOLS_MAX) {
			size_t lru = SIZE_MAX;

			for (size_t i = 0; i < s->n_deps; i++)
				if (!s->deps[i]->n_waiting &&
				    (lru == SIZE_MAX ||
				     s->deps[i]->used_ns < s->deps[lru]->used_ns))
					lru = i;
			if (lru == SIZE_MAX) {
				sr_error_msg(err, -EBUSY,
					     "invoke: %d deployment pools are busy already",
					     DEP_POOLS_MAX);
				return NULL;
			}
			dep_pool_free(s, lru);
		}
		nv = realloc(s->deps, (s->n_deps + 1) * sizeof(*nv));
		dp = calloc(1, sizeof(*dp));
		if (nv)
			s->deps = nv;
		if (!nv || !dp || !(dp->key = malloc(key_len + 1))) {
			free(dp);
			sr_error_errno(err, -ENOMEM, "invoke");
			return NULL;
		}
		memcpy(dp->key, key, key_len);
		dp->key_len = key_len;
		snprintf(dp->name, sizeof(dp->name), "%s", name);
		dp->s = s;
		s->deps[s->n_deps++] = dp;
	} else {
		/* Stale: a redeploy, a rollback, a secret changed. Its waiters move on. */
		sr_info(s->o.sink, "serve: deployment %s: version %u%s: its warm sandboxes let go",
			name, sr_deployment_version(d),
			dp->version == sr_deployment_version(d) ? " (secrets changed)" : "");
		dep_pool_drain(dp);
	}
	dp->used_ns = sr_monotonic_ns();
	if (dep_pool_make(dp, d, err) < 0) {
		dep_pool_drain(dp);
		/* Those waiting for it hear why (the tick lets the pool go). */
		while (dp->waiters)
			waiter_fail(dp->waiters, err);
		return NULL;
	}
	return dp;
}

static void held_done(void *ctx)
{
	struct held *h = ctx;

	/* After the sandbox's end: the version may be pruned from now on. */
	sr_deployment_close(h->d);
	free(h);
}

/* d is taken; the request answered one way or the other. */
static void start(struct req *r, struct dep_pool *dp, struct sr_deployment *d,
		  struct sr_pool_taken *t, enum sr_api_answer answer, bool base64)
{
	struct held *h = calloc(1, sizeof(*h));
	struct sr_api_attach a = {.taken = t,
				  .input = r->body,
				  .input_len = r->len,
				  .answer = answer,
				  .base64 = base64,
				  .done = held_done,
				  .ctx = h};

	if (!h) {
		sr_pool_taken_close(t);
		sr_deployment_close(d);
		return srv_answer_error(r, -ENOMEM, "invoke: out of memory");
	}
	h->d = d;
	a.extra =
	    json_pack("{sisssb}", "version", (int)dp->version, "sandbox_id", t->id, "warm", 1);
	sr_info(srv_sink(r->s), "serve: invoke %s: version %u, warm sandbox %.12s", dp->name,
		dp->version, t->id);
	sr_api_exec_attach(r, &a);
}

static bool take(struct dep_pool *dp, struct sr_pool_taken *t)
{
	struct sr_error err = {0};

	/* The deadline from now: the configuration's timeout, as a cold invoke's. */
	return dp->pool && sr_pool_take(dp->pool, UINT64_MAX, t, &err) == 0;
}

static void waiter_unlink(struct waiter *w)
{
	struct waiter **p = &w->dp->waiters;

	while (*p && *p != w)
		p = &(*p)->next;
	if (*p) {
		*p = w->next;
		w->dp->n_waiting--;
		if (w->dp->pool)
			sr_pool_want(w->dp->pool, w->dp->n_waiting);
	}
	srv_job_remove(&w->job);
}

static void waiter_fail(struct waiter *w, const struct sr_error *err)
{
	struct req *r = w->job.r;

	waiter_unlink(w);
	sr_deployment_close(w->d);
	if (r)
		srv_answer_err(r, NULL, err);
	free(w);
}

static void waiter_gone(struct job *j)
{
	struct waiter *w = container_of(j, struct waiter, job);

	waiter_unlink(w);
	sr_deployment_close(w->d);
	free(w);
}

static const struct job_ops waiter_ops = {.gone = waiter_gone};

/* A sandbox became ready: the oldest waiter gets it. */
static void serve_waiters(void *ctx, struct sr_pool *p)
{
	struct dep_pool *dp = ctx;

	(void)p;
	while (dp->waiters) {
		struct waiter *w = dp->waiters;
		struct sr_pool_taken t;
		struct req *r = w->job.r;

		/* Served: not one more to make for it (the take's refill counts what is wanted). */
		if (!dp->pool)
			return;
		sr_pool_want(dp->pool, dp->n_waiting - 1);
		if (!take(dp, &t)) {
			sr_pool_want(dp->pool, dp->n_waiting);
			return;
		}
		waiter_unlink(w);
		srv_resume(r);
		start(r, dp, w->d, &t, w->answer, w->base64);
		free(w);
	}
}

/* The request's options: each `arg` of its query, in order, NUL-separated. */
struct args {
	char *key;
	size_t len;
	unsigned n;
	bool bad;
};

static enum MHD_Result each_arg(void *cls, enum MHD_ValueKind kind, const char *k, const char *v)
{
	struct args *a = cls;
	size_t n = v ? strlen(v) : 0;
	char *nk;

	(void)kind;
	if (strcmp(k, "arg") != 0)
		return MHD_YES;
	if (!v || ++a->n > ARGS_MAX || !(nk = realloc(a->key, a->len + n + 1))) {
		a->bad = true;
		return MHD_NO;
	}
	a->key = nk;
	memcpy(a->key + a->len, v, n + 1);
	a->len += n + 1;
	return MHD_YES;
}

static enum sr_api_answer answer_of(struct req *r)
{
	const char *accept = srv_header(r, MHD_HTTP_HEADER_ACCEPT);

	if (accept && strstr(accept, "application/x-ndjson"))
		return SR_API_ANSWER_NDJSON;
	if (accept && strstr(accept, "application/json"))
		return SR_API_ANSWER_JSON;
	return SR_API_ANSWER_RAW;
}

void sr_api_invoke(struct req *r)
{
	struct args a = {0};
	struct sr_deployment *d = NULL;
	struct sr_error err = {0};
	struct sr_pool_taken t;
	struct dep_pool *dp;
	struct waiter *w;
	const char *output = srv_arg(r, "output");
	bool base64 = sr_streq(output, "base64");

	if (output && !base64 && !sr_streq(output, "text"))
		return srv_answer_error(r, -EINVAL, "invoke: output is text or base64");
	sr_mhd.get_connection_values(r->conn, MHD_GET_ARGUMENT_KIND, each_arg, &a);
	if (a.bad) {
		free(a.key);
		return srv_answer_error(r, -EINVAL, "invoke: at most %d options", ARGS_MAX);
	}
	/* The version current now, held for the invocation's life, as a cold invoke holds it. */
	if (sr_deploy_open(r->m.id, &d, &err) < 0) {
		free(a.key);
		sr_error_prefix(&err, "invoke");
		return srv_answer_err(r, NULL, &err);
	}
	dp = dep_pool_get(r->s, d, a.key ? a.key : "", a.len, &err);
	free(a.key);
	if (!dp) {
		sr_deployment_close(d);
		return srv_answer_err(r, NULL, &err);
	}
	if (take(dp, &t))
		return start(r, dp, d, &t, answer_of(r), base64);
	/* None ready: one more is made for this request, which waits for it. */
	w = calloc(1, sizeof(*w));
	if (!w) {
		sr_deployment_close(d);
		return srv_answer_error(r, -ENOMEM, "invoke: out of memory");
	}
	*w = (struct waiter){.dp = dp, .d = d, .answer = answer_of(r), .base64 = base64};
	{
		struct waiter **p = &dp->waiters;

		while (*p)
			p = &(*p)->next;
		*p = w;
	}
	dp->n_waiting++;
	srv_job_add(r->s, &w->job, &waiter_ops, r);
	srv_suspend(r);
	sr_pool_want(dp->pool, dp->n_waiting);
}

/* A pool for every deployment that has a current version: N warm from the start. */
int sr_invoke_start(struct srv *s, struct sr_error *err)
{
	json_t *all = NULL, *v;
	size_t i;

	if (!s->o.warm_deployments)
		return 0;
	if (sr_deploy_list(&all, err) < 0)
		return sr_error_prefix(err, "--warm");
	json_array_foreach (all, i, v) {
		const char *name = json_string_value(json_object_get(v, "name"));
		struct sr_deployment *d = NULL;
		struct sr_error derr = {0};

		if (!name || !sr_streq(json_string_value(json_object_get(v, "status")), "active") ||
		    sr_deploy_open(name, &d, &derr) < 0)
			continue;
		if (!dep_pool_get(s, d, "", 0, &derr))
			sr_warn(s->o.sink, "serve: deployment %s: %s", name, derr.msg);
		sr_deployment_close(d);
	}
	json_decref(all);
	return 0;
}

/*
 * Each second: a pool whose deployment moved on (a redeploy, a rollback,
 * a secret, `deployments rm`) is made again or let go, so that no warm
 * sandbox of what is gone waits for a request that will never take it.
 */
void sr_invoke_tick(struct srv *s)
{
	for (size_t i = s->n_deps; i-- > 0;) {
		struct dep_pool *dp = s->deps[i];
		struct sr_deployment *d = NULL;
		struct sr_error err = {0};
		unsigned current = sr_deploy_current(dp->name);
		struct sr_secret_stamp st;

		/* Gone (deployments rm), or a pool that could not be made and nobody waits for. */
		if (!current || (!dp->pool && !dp->n_waiting)) {
			dep_pool_free(s, i);
			continue;
		}
		sr_secret_stamp(dp->name, &st);
		if (dp->pool && current == dp->version && sr_secret_stamp_eq(&st, &dp->secrets))
			continue;
		if (sr_deploy_open(dp->name, &d, &err) < 0)
			continue;
		if (!fresh(dp, d) && !dep_pool_get(s, d, dp->key, dp->key_len, &err))
			sr_warn(s->o.sink, "serve: deployment %s: %s", dp->name, err.msg);
		sr_deployment_close(d);
	}
}

void sr_invoke_free(struct srv *s)
{
	while (s->n_deps)
		dep_pool_free(s, s->n_deps - 1);
	free(s->deps);
	s->deps = NULL;
}

/*
 * An invoke option as /v1/pools shows it: a variable's value given with
 * --env (an API key passed per request) is not repeated to whoever lists
 * the pools, its name is.
 */
static json_t *option_json(const char *prev, const char *opt)
{
	const char *kv = prev && strcmp(prev, "--env") == 0 ? opt
			 : strncmp(opt, "--env=", 6) == 0   ? opt + 6
							    : NULL;
	const char *eq = kv ? strchr(kv, '=') : NULL;
	_cleanup_free_ char *shown = NULL;

	if (!eq)
		return sr_json_string(opt);
	if (asprintf(&shown, "%.*s=(hidden)", (int)(eq - opt), opt) < 0)
		return NULL;
	return sr_json_string(shown);
}

json_t *sr_invoke_pools_json(struct srv *s)
{
	json_t *a = json_array();

	for (size_t i = 0; a && i < s->n_deps; i++) {
		struct dep_pool *dp = s->deps[i];
		struct sr_pool_stats st = {0};
		json_t *opts = json_array();

		for (size_t off = 0, prev = SIZE_MAX; opts && off < dp->key_len;
		     prev = off, off += strlen(dp->key + off) + 1)
			json_array_append_new(
			    opts,
			    option_json(prev == SIZE_MAX ? NULL : dp->key + prev, dp->key + off));
		if (dp->pool)
			sr_pool_stats(dp->pool, &st);
		json_array_append_new(
		    a, json_pack("{sssosisisisisIsIsI}", "deployment", dp->name, "options", opts,
				 "version", (int)dp->version, "size", (int)s->o.warm_deployments,
				 "ready", (int)st.ready, "making", (int)st.making, "taken",
				 (json_int_t)st.taken, "made", (json_int_t)st.made, "failed",
				 (json_int_t)st.failed));
	}
	return a;
}
