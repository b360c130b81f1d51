/* SPDX-License-Identifier: MIT */
/*
 * The server's side of the keepers (control.h): requests answered in the
 * loop, the sandboxes it made, and create -- a warm sandbox from a pool
 * when one fits, else a keeper launched (launch.h) and waited for.
 */
#include "internal.h"
#include "launch.h"
#include "options.h"
#include "result.h"
#include "server.h"
#include "state.h"
#include "util.h"

static void on_kcall(struct srv *s, void *ctx, uint32_t events)
{
	struct kcall *k = ctx;
	json_t *msg = NULL;
	int r;

	(void)s;
	(void)events;
	r = sr_ctl_recv_nofds(k->fd, &msg);
	/* The callbacks may end k: nothing of it is touched after them. */
	if (r <= 0) {
		k->on_hup(k);
		return;
	}
	k->on_msg(k, msg);
	json_decref(msg);
}

bool srv_warm_held(struct srv *s, const char *id, json_t *state)
{
	return sr_streq(json_string_value(json_object_get(state, "state")), "warm") &&
	       !srv_made_find(s, id);
}

static bool warm_hidden(void *ctx, const struct sr_entry *e)
{
	return srv_warm_held(ctx, e->id, e->state);
}

int srv_state_find(struct srv *s, const char *ref, struct sr_entry *ret, struct sr_error *err)
{
	return sr_state_find_if(s->statedir, ref, warm_hidden, s, ret, err);
}

int kcall_start(struct srv *s, const char *ref, json_t *req, const int *fds, size_t n_fds,
		struct kcall *k, struct sr_error *err)
{
	struct sr_entry e = {0};
	int r;

	k->s = s;
	k->fd = -1;
	k->w = NULL;
	/*
	 * One this server made (a whole id, what clients hold): its keeper's
	 * socket at once, no file read. Anything else (another's, gone, a
	 * name, a prefix) is looked up once, as the verbs do, for their
	 * answer or their message, a warm one as unknown (srv_state_find()).
	 */
	if (srv_made_find(s, ref)) {
		snprintf(k->dir, sizeof(k->dir), "%s/%s", s->statedir, ref);
		if (sr_ctl_connect_nowait(k->dir, &k->fd, err) == 0) {
			memcpy(k->id, ref, 33);
			sr_error_clear(err);
		}
	}
	if (k->fd < 0) {
		r = srv_state_find(s, ref, &e, err);
		if (r < 0)
			return r;
		memcpy(k->id, e.id, sizeof(k->id));
		snprintf(k->dir, sizeof(k->dir), "%s", e.dir);
		sr_entry_free(&e);
		r = sr_ctl_connect_nowait(k->dir, &k->fd, err);
		if (r < 0)
			return r;
	}
	r = sr_ctl_send(k->fd, req, fds, n_fds);
	if (r < 0) {
		kcall_stop(k);
		if (r == -EMSGSIZE)
			return sr_error_msg(err, r,
					    "the request is too long for the sandbox's keeper");
		return sr_error_errno(err, r, "talk to the sandbox's keeper");
	}
	k->w = srv_watch(s, k->fd, EPOLLIN, on_kcall, k);
	if (!k->w) {
		kcall_stop(k);
		return sr_error_errno(err, -ENOMEM, "serve");
	}
	return 0;
}

int kcall_attach(struct srv *s, int fd, const char *id, struct kcall *k)
{
	k->s = s;
	k->fd = fd;
	snprintf(k->id, sizeof(k->id), "%s", id);
	snprintf(k->dir, sizeof(k->dir), "%s/%s", s->statedir, id);
	k->w = srv_watch(s, k->fd, EPOLLIN, on_kcall, k);
	return k->w ? 0 : -ENOMEM;
}

void kcall_stop(struct kcall *k)
{
	srv_unwatch(k->s, &k->w);
	sr_closep(&k->fd);
	k->fd = -1;
}

struct call_job {
	struct job job;
	struct kcall k;
	call_done_fn done;
	void *ctx;
};

static void call_end(struct call_job *c, json_t *reply, const struct sr_error *err)
{
	struct req *r = c->job.r;

	kcall_stop(&c->k);
	srv_job_remove(&c->job);
	if (r)
		c->done(r, reply, err, c->ctx);
	free(c);
}

static void call_msg(struct kcall *k, json_t *msg)
{
	struct call_job *c = container_of(k, struct call_job, k);
	struct sr_error err = {0};

	if (sr_ctl_reply_error(msg, &err) < 0)
		return call_end(c, NULL, &err);
	call_end(c, msg, NULL);
}

static void call_hup(struct kcall *k)
{
	struct call_job *c = container_of(k, struct call_job, k);
	struct sr_error err = {0};

	sr_error_msg(&err, -ESRCH, "the sandbox's keeper hung up (the sandbox is gone)");
	call_end(c, NULL, &err);
}

/* The client went: the request was sent, and what it asked (rm, a snapshot) goes on alone. */
static void call_gone(struct job *j)
{
	struct call_job *c = container_of(j, struct call_job, job);

	kcall_stop(&c->k);
	srv_job_remove(j);
	free(c);
}

static const struct job_ops call_ops = {.gone = call_gone};

int srv_call(struct req *r, const char *ref, json_t *req, const int *fds, size_t n_fds,
	     call_done_fn done, void *ctx, struct sr_error *err)
{
	struct call_job *c = calloc(1, sizeof(*c));
	int ret;

	if (!c)
		return sr_error_errno(err, -ENOMEM, "serve");
	c->done = done;
	c->ctx = ctx;
	c->k.on_msg = call_msg;
	c->k.on_hup = call_hup;
	ret = kcall_start(r->s, ref, req, fds, n_fds, &c->k, err);
	if (ret < 0) {
		free(c);
		return ret;
	}
	srv_job_add(r->s, &c->job, &call_ops, r);
	srv_suspend(r);
	return 0;
}

bool srv_sandbox_alive(struct srv *s, const char *id)
{
	char dir[4200];

	snprintf(dir, sizeof(dir), "%s/%s", s->statedir, id);
	return access(dir, F_OK) == 0;
}

static void made_free(struct made *m)
{
	free(m->template);
	if (m->metadata)
		json_decref(m->metadata);
	if (m->state)
		json_decref(m->state);
}

/* The sandboxes it made that ended meanwhile (rm, their deadline), forgotten. */
static void prune(struct srv *s)
{
	for (size_t i = s->n_made; i-- > 0;)
		if (!srv_sandbox_alive(s, s->made[i].id)) {
			made_free(&s->made[i]);
			s->made[i] = s->made[--s->n_made];
		}
}

struct made *srv_made_find(struct srv *s, const char *id)
{
	for (size_t i = 0; i < s->n_made; i++)
		if (strcmp(s->made[i].id, id) == 0)
			return &s->made[i];
	return NULL;
}

void srv_made_forget(struct srv *s, const char *id)
{
	struct made *m = srv_made_find(s, id);

	if (!m)
		return;
	made_free(m);
	*m = s->made[--s->n_made];
}

void srv_made_forget_all(struct srv *s)
{
	for (size_t i = 0; i < s->n_made; i++)
		made_free(&s->made[i]);
	free(s->made);
	s->made = NULL;
	s->n_made = s->cap_made = 0;
}

/*
 * What a create gave that only the server knows (E2B's metadata, its
 * template's name), kept beside the sandbox's state file: api.json, 0600
 * in the user's 0700 state directory, removed with it (sr_state_remove).
 * The sandboxes outlive the server, and what its list finds them by must
 * too, for the server started again. Written once, at the create (a
 * failure costs only that); what is there is never replaced.
 */
#define SAVED_FILE "api.json"
#define SAVED_MAX  (SR_API_METADATA_MAX + 4096)

static void made_save(struct srv *s, const struct made *m)
{
	char path[4200];
	_cleanup_free_ char *text = NULL;
	_cleanup_close_ int dir = -1, fd = -1;
	json_t *j = json_object();
	size_t len;

	if (j && m->metadata)
		json_object_set(j, "metadata", m->metadata);
	if (j && m->template)
		json_object_set_new(j, "template", json_string(m->template));
	text = j ? json_dumps(j, JSON_COMPACT) : NULL;
	if (j)
		json_decref(j);
	if (!text || (len = strlen(text)) > SAVED_MAX || (!m->metadata && !m->template))
		return;
	snprintf(path, sizeof(path), "%s/%s", s->statedir, m->id);
	dir = open(path, O_PATH | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
	fd = dir < 0 ? -1
		     : openat(dir, SAVED_FILE, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW,
			      0600);
	if (fd < 0)
		return;
	(void)!write(fd, text, len);
	/*
	 * A sandbox that ended at once: its keeper removes state.json first,
	 * api.json after it, then the directory. Made past that removal, the
	 * file would keep the directory for good (no lock in it: taken for
	 * one being made, never swept); whichever of us comes last removes it.
	 */
	if (faccessat(dir, "state.json", F_OK, AT_SYMLINK_NOFOLLOW) < 0 && errno == ENOENT) {
		(void)unlinkat(dir, SAVED_FILE, 0);
		(void)rmdir(path);
	}
}

json_t *srv_made_saved(struct srv *s, const char *id)
{
	char path[4200], buf[SAVED_MAX + 1];
	_cleanup_close_ int fd = -1;
	json_t *j = NULL;
	ssize_t n;

	snprintf(path, sizeof(path), "%s/%s/" SAVED_FILE, s->statedir, id);
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
	if (fd < 0 || (n = read(fd, buf, sizeof(buf))) <= 0 || (size_t)n > SAVED_MAX)
		return NULL;
	if (sr_json_parse(buf, (size_t)n, 0, SR_API_JSON_DEPTH, &j) < 0)
		return NULL;
	if (!json_is_object(j)) {
		json_decref(j);
		return NULL;
	}
	return j;
}

static struct made *made_add(struct srv *s, const char *id, const struct sr_api_create *c,
			     const char *template)
{
	struct timespec now;
	struct made *m;

	if (SR_GROW(s->made, s->cap_made, s->n_made + 1, 16) < 0)
		return NULL;
	m = &s->made[s->n_made++];
	*m = (struct made){0};
	snprintf(m->id, sizeof(m->id), "%s", id);
	m->template = template ? strdup(template) : NULL;
	m->metadata = c->metadata ? json_incref(c->metadata) : NULL;
	m->timeout_ms = c->has_timeout ? c->timeout_ms : 0;
	clock_gettime(CLOCK_REALTIME, &now);
	m->started_ms = (int64_t)now.tv_sec * 1000 + now.tv_nsec / 1000000;
	made_save(s, m);
	return m;
}

void srv_made_state(struct srv *s, const char *id, json_t *state)
{
	struct made *m = srv_made_find(s, id);
	time_t sec;
	struct tm tm;
	char buf[32];

	if (!m || !m->warm || !json_is_object(state) ||
	    !sr_streq(json_string_value(json_object_get(state, "state")), "warm"))
		return;
	json_object_set_new(state, "state", json_string("running"));
	/*
	 * Its profile's timeout_s, held without a deadline: its release gave
	 * it this one, which its keeper says from then on (keeper_set_deadline()).
	 */
	if (json_is_object(json_object_get(state, "limits")))
		json_object_set_new(
		    json_object_get(state, "limits"), "timeout_s",
		    sr_result_timeout_json(m->expires_ms ? (uint64_t)(m->expires_ms - m->started_ms)
							 : 0));
	if (!m->expires_ms) {
		json_object_set_new(state, "expires", json_null());
		json_object_set_new(state, "expires_ms", json_null());
		return;
	}
	sec = (time_t)(m->expires_ms / 1000);
	gmtime_r(&sec, &tm);
	strftime(buf, sizeof(buf), "%Y-%m-%dT%H:%M:%SZ", &tm);
	json_object_set_new(state, "expires", json_string(buf));
	json_object_set_new(state, "expires_ms", json_integer(m->expires_ms));
}

/*
 * A warm sandbox's release, sent once the answer that hands it over is
 * on its way: sent first, it wakes the keeper, which on a small host runs
 * ahead of the answer (a state file written, the release answered) while
 * the client waits. The keeper's work then overlaps the client's next
 * request instead.
 */
int srv_release_later(struct srv *s, struct sr_pool_taken *t)
{
	if (s->n_releases == SR_ARRAY_SIZE(s->releases))
		return -ENOBUFS;
	s->releases[s->n_releases++] = *t;
	*t = (struct sr_pool_taken){.hold = -1, .stdio = {-1, -1, -1}};
	return 0;
}

void srv_release_taken(struct srv *s)
{
	for (size_t i = 0; i < s->n_releases; i++) {
		/* A keeper gone meanwhile has ended its sandbox: nothing to release. */
		(void)sr_pool_taken_release(&s->releases[i]);
		sr_pool_taken_close(&s->releases[i]);
	}
	s->n_releases = 0;
}

struct create_job {
	struct job job;
	struct sr_launch launch;
	struct watch *w;
	struct sr_api_create c;
	char *template;
	create_done_fn done;
};

static void create_free(struct create_job *cj)
{
	srv_unwatch(cj->job.s, &cj->w);
	sr_launch_cancel(&cj->launch);
	srv_job_remove(&cj->job);
	cj->job.s->creating--;
	sr_api_create_free(&cj->c);
	free(cj->template);
	free(cj);
}

/*
 * Every error of create's said once as the CLI says it (sr_cli_verb_error):
 * "create: ...", be it ours, create's parser's, or its keeper's own line
 * (a name taken), which names no verb.
 */
static void create_failed(struct req *r, struct sr_error *err, create_done_fn done)
{
	static const char verb[] = "create";
	const size_t n = sizeof(verb) - 1;

	if (strncmp(err->msg, verb, n) != 0 || (err->msg[n] != ':' && err->msg[n] != ' '))
		sr_error_prefix(err, verb);
	done(r, NULL, err);
}

static void on_launch(struct srv *s, void *ctx, uint32_t events)
{
	struct create_job *cj = ctx;
	struct req *r = cj->job.r;

	(void)events;
	if (!sr_launch_read(&cj->launch))
		return;
	/* Out of the loop before it is closed (launch.h says why). */
	srv_unwatch(s, &cj->w);
	sr_launch_cancel(&cj->launch);
	if (cj->launch.id[0] && !r) {
		/* Made for a client that went: ended (rm -f), its end not waited for. */
		(void)sr_ctl_ask_rm(s->statedir, cj->launch.id, true, NULL);
	} else if (cj->launch.id[0] && !made_add(s, cj->launch.id, &cj->c, cj->template)) {
		/* Untracked, it would outlive serve's stop and escape --max-sandboxes. */
		(void)sr_ctl_ask_rm(s->statedir, cj->launch.id, true, NULL);
		cj->launch.id[0] = '\0';
		sr_error_errno(&cj->launch.err, -ENOMEM, "create");
	}
	if (r && cj->launch.id[0])
		cj->done(r, cj->launch.id, NULL);
	else if (r)
		create_failed(r, &cj->launch.err, cj->done);
	create_free(cj);
}

/*
 * The client went before the sandbox was ready. Its keeper's answer is
 * awaited all the same (on_launch() removes what it made): closed now,
 * the keeper would end its sandbox too, hearing no word back (keeper.h),
 * but only once made, and no longer counted by --max-sandboxes
 * meanwhile -- a client that leaves at once could have any number made
 * side by side. At the server's end, nobody waits.
 */
static void create_gone(struct job *j)
{
	struct create_job *cj = container_of(j, struct create_job, job);

	if (srv_lists(cj->job.s)->ending)
		create_free(cj);
}

static const struct job_ops create_ops = {.gone = create_gone};

/*
 * A warm sandbox of pool, taken and answered at once (released once the
 * answer is on its way: srv_release_taken); false, c untouched, if none
 * is ready.
 */
static bool create_warm(struct req *r, struct sr_pool *pool, uint64_t timeout,
			struct sr_api_create *c, const char *template, create_done_fn done)
{
	struct srv *s = r->s;
	struct sr_error err = {0};
	struct sr_pool_taken taken;
	struct made *m;
	char id[33];

	if (!pool || sr_pool_take(pool, timeout, &taken, &err) < 0)
		return false;
	m = made_add(s, taken.id, c, template);
	if (!m) {
		/*
		 * Untracked, it would outlive serve's stop and escape
		 * --max-sandboxes: closed unreleased, it ends with its keeper.
		 */
		sr_pool_taken_close(&taken);
		sr_api_create_free(c);
		sr_error_errno(&err, -ENOMEM, "create");
		create_failed(r, &err, done);
		return true;
	}
	m->warm = true;
	m->expires_ms = timeout ? m->started_ms + (int64_t)timeout : 0;
	m->state = steal_pointer(&taken.state);
	snprintf(id, sizeof(id), "%s", taken.id);
	if (srv_release_later(s, &taken) < 0) {
		(void)sr_pool_taken_release(&taken);
		sr_pool_taken_close(&taken);
	}
	sr_api_create_free(c);
	done(r, id, NULL);
	return true;
}

/*
 * A profile that did not load, said of what the request named it by
 * (srv_profile_error): E2B's template; else the profile, which -p takes
 * over a snapshot's; else the snapshot, whose configuration it is; else
 * the default.
 */
static void profile_error(struct srv *s, const struct sr_api_create *c, const char *template,
			  struct sr_error *err)
{
	if (template)
		srv_profile_error(s, "create", "templateID", "template", template, err);
	else if (c->profile || !c->from)
		srv_profile_error(s, "create", "profile", "profile",
				  c->profile ? c->profile : SR_DEFAULT_PROFILE, err);
	else
		srv_profile_error(s, "create", "from", "snapshot", c->from, err);
}

/* A keeper launched as create launches it (launch.h), its answer awaited in the loop. */
static void create_cold(struct req *r, struct sr_api_create *c, const char *template,
			create_done_fn done)
{
	struct srv *s = r->s;
	struct sr_error err = {0};
	struct create_job *cj;
	struct sr_config cfg;
	enum sr_action action;

	sr_config_init(&cfg);
	cj = calloc(1, sizeof(*cj));
	if (!cj) {
		sr_error_errno(&err, -ENOMEM, "create");
	} else if (sr_options_parse_verb((int)c->argv.n, c->argv.items, SR_OPTIONS_CREATE, &cfg,
					 &action, &err) < 0 ||
		   action != SR_ACTION_RUN) {
		/* As the CLI says it, of the request's field: "sandbox-run: create: memory: ..." */
		if (!err.code)
			sr_error_msg(&err, -EINVAL, "a malformed request");
		if (!template)
			sr_api_create_error(&err);
		profile_error(s, c, template, &err);
	} else if (sr_launch_start(&cfg, s->o.level, s->o.sink, &cj->launch, &err) == 0) {
		err.code = 0;
	}
	if (err.code) {
		sr_config_free(&cfg);
		sr_api_create_free(c);
		free(cj);
		return create_failed(r, &err, done);
	}
	/* The keeper has its copy: ours can go. */
	sr_config_free(&cfg);
	cj->c = *c;
	*c = (struct sr_api_create){0};
	cj->template = template ? strdup(template) : NULL;
	cj->done = done;
	s->creating++;
	srv_job_add(s, &cj->job, &create_ops, r);
	cj->w = srv_watch(s, cj->launch.fd, EPOLLIN, on_launch, cj);
	if (!cj->w) {
		sr_error_errno(&err, -ENOMEM, "create");
		create_free(cj);
		return create_failed(r, &err, done);
	}
	srv_suspend(r);
}

void srv_create(struct req *r, struct sr_api_create *c, const char *template, create_done_fn done)
{
	struct srv *s = r->s;
	struct warm_pool *wp = c->poolable ? srv_warm(s, c->profile) : NULL;
	uint64_t timeout = c->has_timeout ? c->timeout_ms : wp ? wp->config.timeout_ms : 0;
	struct sr_error err = {0};

	prune(s);
	if (s->n_made + s->creating >= s->o.max_sandboxes) {
		sr_error_msg(&err, -EUSERS,
			     "%zu sandboxes made through this server live already (serve "
			     "--max-sandboxes %u)",
			     s->n_made, s->o.max_sandboxes);
		sr_api_create_free(c);
		return create_failed(r, &err, done);
	}
	if (!create_warm(r, wp ? wp->pool : NULL, timeout, c, template, done))
		create_cold(r, c, template, done);
}
