/* SPDX-License-Identifier: MIT */
/*
 * The server: its listeners and token, the warm pools, one epoll loop
 * over everything (libmicrohttpd's own epoll fd among the rest), signals,
 * and the end that leaves nothing behind. The listeners' sockets, and the
 * connections they accept, are in server-listen.c.
 */
#include "internal.h"
#include "server.h"
#include "options.h"
#include "profile.h"
#include "secmem.h"
#include "state.h"
#include "util.h"

#include <signal.h>
#include <sys/random.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <sys/timerfd.h>

/* How long the end waits for the sandboxes it takes down. */
#define END_WAIT_MS 10000

struct watch *srv_watch(struct srv *s, int fd, uint32_t events, srv_watch_fn fn, void *ctx)
{
	struct watch *w = calloc(1, sizeof(*w));
	struct epoll_event ev = {.events = events};

	if (!w)
		return NULL;
	*w = (struct watch){.fd = fd, .fn = fn, .ctx = ctx};
	ev.data.ptr = w;
	if (epoll_ctl(s->ep, EPOLL_CTL_ADD, fd, &ev) < 0) {
		free(w);
		return NULL;
	}
	return w;
}

void srv_watch_events(struct srv *s, struct watch *w, uint32_t events)
{
	struct epoll_event ev = {.events = events, .data.ptr = w};

	if (w && !w->dead)
		epoll_ctl(s->ep, EPOLL_CTL_MOD, w->fd, &ev);
}

void srv_unwatch(struct srv *s, struct watch **w)
{
	if (!*w)
		return;
	epoll_ctl(s->ep, EPOLL_CTL_DEL, (*w)->fd, NULL);
	/* Freed after this round of events: one of them may still name it. */
	(*w)->dead = true;
	(*w)->next_dead = s->dead;
	s->dead = *w;
	*w = NULL;
}

void srv_job_add(struct srv *s, struct job *j, const struct job_ops *ops, struct req *r)
{
	j->ops = ops;
	j->s = s;
	j->r = r;
	j->next = s->lists.jobs.next;
	j->prev = &s->lists.jobs;
	s->lists.jobs.next->prev = j;
	s->lists.jobs.next = j;
	if (r)
		r->job = j;
}

void srv_job_remove(struct job *j)
{
	if (!j->prev)
		return;
	j->prev->next = j->next;
	j->next->prev = j->prev;
	j->prev = j->next = NULL;
	if (j->r && j->r->job == j)
		j->r->job = NULL;
	j->r = NULL;
}

struct srv_lists *srv_lists(struct srv *s)
{
	return &s->lists;
}

const char *srv_token(struct srv *s)
{
	return s->token;
}

const char *srv_statedir(struct srv *s)
{
	return s->statedir;
}

const struct sr_serve_opts *srv_opts(struct srv *s)
{
	return &s->o;
}

const struct sr_sink *srv_sink(struct srv *s)
{
	return s->o.sink;
}

/*
 * The bearer token: 32 random bytes as hex, in a 0600 file (made aside
 * and renamed in), and in memory that the keepers, forks of the server,
 * do not inherit.
 */
static int write_token(struct srv *s, struct sr_error *err)
{
	static const char hex[] = "0123456789abcdef";
	unsigned char raw[32];
	_cleanup_free_ char *tmp = NULL;
	_cleanup_close_ int fd = -1;
	int port = 0;

	for (unsigned i = 0; i < s->n_listeners; i++)
		if (!s->listeners[i].is_unix && !port)
			port = s->listeners[i].port;
	if (!port)
		return 0;
	if (!(s->token = sr_secmem_alloc(2 * sizeof(raw) + 1)))
		return sr_error_errno(err, sr_negerrno(), "token");
	if (getrandom(raw, sizeof(raw), 0) != (ssize_t)sizeof(raw))
		return sr_error_errno(err, sr_negerrno(), "token: getrandom");
	for (size_t i = 0; i < sizeof(raw); i++) {
		s->token[2 * i] = hex[raw[i] >> 4];
		s->token[2 * i + 1] = hex[raw[i] & 15];
	}
	explicit_bzero(raw, sizeof(raw));
	if (s->o.token_file)
		s->token_path = strdup(s->o.token_file);
	else if (asprintf(&s->token_path, "%s/serve-%d.token", s->statedir, port) < 0)
		s->token_path = NULL;
	if (!s->token_path || asprintf(&tmp, "%s.XXXXXX", s->token_path) < 0)
		return sr_error_errno(err, -ENOMEM, "token");
	fd = mkostemp(tmp, O_CLOEXEC);
	if (fd < 0)
		return sr_error_errno(err, sr_negerrno(), "token file %s", tmp);
	if (fchmod(fd, 0600) < 0 || sr_write_all(fd, s->token, strlen(s->token)) < 0 ||
	    sr_write_all(fd, "\n", 1) < 0 || rename(tmp, s->token_path) < 0) {
		int r = sr_negerrno();

		unlink(tmp);
		return sr_error_errno(err, r, "token file %s", s->token_path);
	}
	return 0;
}

/*
 * A start that failed takes back the files it made: the Unix sockets it
 * bound (a path is kept only for those) and, once written, the token's
 * file; else they stayed, a socket nobody listens on and a token that
 * opens nothing.
 */
static void remove_files(struct srv *s, bool token_written)
{
	for (unsigned i = 0; i < s->n_listeners; i++)
		if (s->listeners[i].path) {
			unlink(s->listeners[i].path);
			free(s->listeners[i].path);
			s->listeners[i].path = NULL;
		}
	if (token_written && s->token_path)
		unlink(s->token_path);
}

static void on_signal(struct srv *s, void *ctx, uint32_t events)
{
	struct signalfd_siginfo si;

	(void)ctx;
	(void)events;
	while (read(s->sigfd, &si, sizeof(si)) == (ssize_t)sizeof(si))
		s->stopping = true;
}

/* The jobs that watch the time (a worker that moves nothing: job_ops.tick). */
static void jobs_tick(struct srv *s)
{
	int64_t now = sr_monotonic_ns();

	for (struct job *j = s->lists.jobs.next, *next; j != &s->lists.jobs; j = next) {
		next = j->next; /* a tick may free j */
		if (j->ops && j->ops->tick)
			j->ops->tick(j, now);
	}
}

static void on_tick(struct srv *s, void *ctx, uint32_t events)
{
	uint64_t x;

	(void)ctx;
	(void)events;
	(void)!read(s->tickfd, &x, sizeof(x));
	srv_wake_listeners(s);
	sr_preview_tick(s);
	sr_exec_tick(s);
	sr_invoke_tick(s);
	jobs_tick(s);
}

static void on_pool(struct srv *s, void *ctx, uint32_t events)
{
	(void)s;
	(void)events;
	sr_pool_dispatch(((struct warm_pool *)ctx)->pool);
}

static int start_pools(struct srv *s, struct sr_error *err)
{
	for (unsigned i = 0; i < s->o.n_warm; i++) {
		struct warm_pool *wp = &s->pools[s->n_pools];
		struct sr_pool_opts po = {
		    .size = s->o.warm[i].size, .level = s->o.level, .sink = s->o.sink};
		enum sr_action action;
		int r;

		*wp = (struct warm_pool){0};
		sr_config_init(&wp->config);
		if (sr_strv_push(&wp->argv, "create") < 0 ||
		    sr_strv_push(&wp->argv, "--profile") < 0 ||
		    sr_strv_push(&wp->argv, s->o.warm[i].profile) < 0)
			return sr_error_errno(err, -ENOMEM, "warm pool");
		s->n_pools++;
		r = sr_options_parse_verb((int)wp->argv.n, wp->argv.items, SR_OPTIONS_CREATE,
					  &wp->config, &action, err);
		if (r < 0)
			return sr_error_prefix(err, "--warm %s=%u", s->o.warm[i].profile,
					       s->o.warm[i].size);
		wp->profile = s->o.warm[i].profile;
		po.config = &wp->config;
		r = sr_pool_new(&po, &wp->pool, err);
		if (r < 0)
			return r;
		wp->w = srv_watch(s, sr_pool_fd(wp->pool), EPOLLIN, on_pool, wp);
		if (!wp->w)
			return sr_error_errno(err, -ENOMEM, "warm pool");
	}
	return 0;
}

static int setup_signals(struct srv *s, struct sr_error *err)
{
	sigset_t set;

	sigemptyset(&set);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGHUP);
	if (sigprocmask(SIG_BLOCK, &set, NULL) < 0)
		return sr_error_errno(err, sr_negerrno(), "serve: signals");
	s->sigfd = signalfd(-1, &set, SFD_CLOEXEC | SFD_NONBLOCK);
	if (s->sigfd < 0 || !(s->sig_w = srv_watch(s, s->sigfd, EPOLLIN, on_signal, NULL)))
		return sr_error_errno(err, s->sigfd < 0 ? sr_negerrno() : -ENOMEM,
				      "serve: signalfd");
	return 0;
}

static int setup_tick(struct srv *s, struct sr_error *err)
{
	struct itimerspec its = {.it_interval = {.tv_sec = 1}, .it_value = {.tv_sec = 1}};

	s->tickfd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
	if (s->tickfd < 0 || timerfd_settime(s->tickfd, 0, &its, NULL) < 0 ||
	    !(s->tick_w = srv_watch(s, s->tickfd, EPOLLIN, on_tick, NULL)))
		return sr_error_errno(err, sr_negerrno(), "serve: timer");
	return 0;
}

/* E2B's creates are made of --e2b-profile: one that loads no profile is refused at once. */
static int check_e2b_profile(struct srv *s, struct sr_error *err)
{
	struct sr_config c;
	int r;

	sr_config_init(&c);
	r = sr_profile_load(&c, s->o.e2b_profile, err);
	sr_config_free(&c);
	if (r < 0)
		sr_error_prefix(err, "--e2b-profile");
	return r;
}

int sr_serve_new(const struct sr_serve_opts *o, struct sr_serve **ret, struct sr_error *err)
{
	struct srv *s = calloc(1, sizeof(*s));
	_cleanup_free_ char *def = NULL;
	int r;

	if (!s)
		return sr_error_errno(err, -ENOMEM, "serve");
	/*
	 * Jansson's blocks are wiped when it frees them: requests' bodies
	 * parsed, answers made (E2B's carry the token). What the server frees
	 * as it was is in every keeper it forks later (docs/security.md).
	 */
	json_set_alloc_funcs(malloc, sr_free_wiped);
	s->o = *o;
	s->ep = s->sigfd = s->tickfd = -1;
	s->lists.jobs.next = s->lists.jobs.prev = &s->lists.jobs;
	if (!s->o.e2b_profile)
		s->o.e2b_profile = "e2b";
	if (!s->o.max_sandboxes)
		s->o.max_sandboxes = 64;
	if (!s->o.max_connections)
		s->o.max_connections = 256;
	if (!s->o.max_processes)
		s->o.max_processes = 128;
	if (!s->o.client_timeout_s)
		s->o.client_timeout_s = 30;
	if (!s->o.idle_ms)
		s->o.idle_ms = 60 * 1000;
	if (!s->o.max_body)
		s->o.max_body = 1 << 20;
	if (!s->o.max_upload)
		s->o.max_upload = 1ull << 30;
	if (!s->o.max_output)
		s->o.max_output = 16 << 20;
	*ret = (struct sr_serve *)s;
	if ((r = sr_mhd_load(err)) < 0 || (r = check_e2b_profile(s, err)) < 0 ||
	    (r = sr_state_dir(&s->statedir, err)) < 0)
		return r;
	s->ep = epoll_create1(EPOLL_CLOEXEC);
	if (s->ep < 0)
		return sr_error_errno(err, sr_negerrno(), "serve: epoll");
	if ((r = setup_signals(s, err)) < 0 || (r = setup_tick(s, err)) < 0)
		return r;
	for (unsigned i = 0; i < s->o.n_listen; i++)
		if ((r = srv_open_listener(s, s->o.listen[i], err)) < 0) {
			remove_files(s, false);
			return r;
		}
	/*
	 * The API is on a Unix socket, and on TCP only besides (design.md): a
	 * --listen of TCP alone keeps the default socket, where invoke and the
	 * user's other clients look for the server.
	 */
	if (!srv_has_unix_listener(s)) {
		if (asprintf(&def, "unix:%s/serve.sock", s->statedir) < 0)
			return sr_error_errno(err, -ENOMEM, "serve");
		if ((r = srv_open_listener(s, def, err)) < 0) {
			remove_files(s, false);
			return r;
		}
	}
	if ((r = write_token(s, err)) < 0) {
		remove_files(s, false);
		return r;
	}
	if ((r = srv_http_start(s, err)) < 0 || (r = start_pools(s, err)) < 0 ||
	    (r = sr_invoke_start(s, err)) < 0) {
		remove_files(s, true);
		return r;
	}
	for (unsigned i = 0; i < s->n_listeners; i++)
		sr_info(s->o.sink, "serve: listening on %s%s%s%s", s->listeners[i].addr,
			s->listeners[i].is_unix ? "" : " (token in ",
			s->listeners[i].is_unix ? "" : s->token_path,
			s->listeners[i].is_unix ? "" : ")");
	return 0;
}

const char *sr_serve_listening(const struct sr_serve *ss, unsigned i, const char **ret_token_file)
{
	const struct srv *s = (const struct srv *)ss;

	for (unsigned j = 0; j < s->n_listeners; j++) {
		if (s->listeners[j].twin || i-- > 0)
			continue; /* a twin is its 127.0.0.1 listener's URL too */
		*ret_token_file = s->listeners[j].is_unix ? NULL : s->token_path;
		return s->listeners[j].url;
	}
	return NULL;
}

/*
 * The end: nothing new accepted, every sandbox it made taken down (rm:
 * its keeper ends it and removes it), the warm ones let go, and the wait
 * until their state directories are gone, bounded.
 */
static void stop(struct srv *s)
{
	size_t n_ids = s->n_made, warm = 0;
	char(*ids)[33];
	int *fds = calloc(s->n_made + 1, sizeof(*fds));
	int64_t until = sr_monotonic_ns() + (int64_t)END_WAIT_MS * 1000000;

	srv_release_taken(s);
	for (unsigned i = 0; i < s->n_pools; i++)
		warm += s->o.warm[i].size;
	ids = calloc(n_ids + warm + 1, sizeof(*ids));
	for (unsigned i = 0; i < s->n_listeners; i++) {
		srv_unwatch(s, &s->listeners[i].w);
		sr_closep(&s->listeners[i].fd);
		s->listeners[i].fd = -1;
		if (s->listeners[i].path)
			unlink(s->listeners[i].path);
	}
	if (s->token_path)
		unlink(s->token_path);
	for (size_t i = 0; ids && fds && i < s->n_made; i++) {
		fds[i] = -1;
		memcpy(ids[i], s->made[i].id, 33);
		/* Sent, not waited for here: every one ends at once, side by side. */
		(void)sr_ctl_ask_rm(s->statedir, s->made[i].id, false, &fds[i]);
	}
	for (unsigned i = 0; i < s->n_pools; i++) {
		if (ids)
			n_ids += sr_pool_ids(s->pools[i].pool, ids + n_ids, s->o.warm[i].size);
		srv_unwatch(s, &s->pools[i].w);
		sr_pool_free(s->pools[i].pool);
		s->pools[i].pool = NULL;
	}
	/* The deployments' warm ones: let go, each keeper ends its own (not waited for). */
	sr_invoke_free(s);
	for (size_t i = 0; ids && i < n_ids; i++)
		while (srv_sandbox_alive(s, ids[i]) && sr_monotonic_ns() < until)
			usleep(10000);
	for (size_t i = 0; fds && i < s->n_made; i++)
		sr_closep(&fds[i]);
	free(fds);
	free(ids);
}

int sr_serve_run(struct sr_serve *ss, struct sr_error *err)
{
	struct srv *s = (struct srv *)ss;
	struct epoll_event evs[64];

	while (!s->stopping) {
		MHD_UNSIGNED_LONG_LONG mhd_ms = 0;
		int timeout = 1000, n;

		if (sr_mhd.get_timeout(s->mhd, &mhd_ms) == MHD_YES && mhd_ms < 1000)
			timeout = (int)mhd_ms;
		n = epoll_wait(s->ep, evs, SR_ARRAY_SIZE(evs), timeout);
		if (n < 0 && errno != EINTR)
			return sr_error_errno(err, sr_negerrno(), "serve: epoll_wait");
		for (int i = 0; i < n; i++) {
			struct watch *w = evs[i].data.ptr;

			if (!w->dead)
				w->fn(s, w->ctx, evs[i].events);
		}
		sr_mhd.run(s->mhd);
		srv_release_taken(s);
		while (s->dead) {
			struct watch *w = s->dead;

			s->dead = w->next_dead;
			free(w);
		}
	}
	sr_info(s->o.sink, "serve: stopping: taking down %zu sandboxes it made", s->n_made);
	stop(s);
	return 0;
}

void sr_serve_free(struct sr_serve *ss)
{
	struct srv *s = (struct srv *)ss;

	if (!s)
		return;
	/* Every request ends (its job told), then the jobs left alone are ended. */
	s->lists.ending = true;
	srv_http_stop(s);
	while (s->lists.jobs.next != &s->lists.jobs) {
		struct job *j = s->lists.jobs.next;

		srv_job_remove(j);
		j->ops->gone(j);
	}
	sr_preview_free_all(s);
	sr_invoke_free(s);
	for (unsigned i = 0; i < s->n_pools; i++) {
		sr_pool_free(s->pools[i].pool);
		sr_config_free(&s->pools[i].config);
		sr_strv_free(&s->pools[i].argv);
	}
	for (unsigned i = 0; i < s->n_listeners; i++) {
		sr_closep(&s->listeners[i].fd);
		free(s->listeners[i].path);
	}
	srv_unwatch(s, &s->sig_w);
	srv_unwatch(s, &s->tick_w);
	for (unsigned i = 0; i < s->n_listeners; i++)
		srv_unwatch(s, &s->listeners[i].w);
	for (unsigned i = 0; i < s->n_pools; i++)
		srv_unwatch(s, &s->pools[i].w);
	srv_made_forget_all(s);
	while (s->dead) {
		struct watch *w = s->dead;

		s->dead = w->next_dead;
		free(w);
	}
	sr_closep(&s->ep);
	sr_closep(&s->sigfd);
	sr_closep(&s->tickfd);
	sr_secmem_free(s->token);
	free(s->token_path);
	free(s->statedir);
	free(s);
}

struct warm_pool *srv_warm(struct srv *s, const char *profile)
{
	for (unsigned i = 0; i < s->n_pools; i++)
		if (s->pools[i].pool &&
		    strcmp(s->pools[i].profile, profile ? profile : "default") == 0)
			return &s->pools[i];
	return NULL;
}

json_t *srv_pools_json(struct srv *s)
{
	json_t *a = json_array();

	for (unsigned i = 0; a && i < s->n_pools; i++) {
		struct sr_pool_stats st;

		if (!s->pools[i].pool)
			continue;
		sr_pool_stats(s->pools[i].pool, &st);
		json_array_append_new(
		    a, json_pack("{sosisisisIsIsI}", "profile", sr_json_string(s->pools[i].profile),
				 "size", (int)s->o.warm[i].size, "ready", (int)st.ready, "making",
				 (int)st.making, "taken", (json_int_t)st.taken, "made",
				 (json_int_t)st.made, "failed", (json_int_t)st.failed));
	}
	return a;
}
