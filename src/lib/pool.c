/* SPDX-License-Identifier: MIT */
#include "pool.h"
#include "control.h"
#include "launch.h"
#include "secmem.h"
#include "state.h"
#include "util.h"

#include <poll.h>
#include <sys/epoll.h>
#include <sys/random.h>
#include <sys/timerfd.h>

#define BACKOFF_FIRST_MS 1000
#define BACKOFF_MAX_MS	 60000
/*
 * A take's refill starts this much later, not in the middle of the request
 * that took one: making a sandbox is a fork and a few milliseconds of CPU
 * that the taker's next steps (its exec) would wait behind on a small host.
 * Not while requests wait for one (sr_pool_want): they wait for the refill.
 */
#define REFILL_DELAY_MS 50
/* Distinct warnings of its keepers a pool remembers having said; more are said each time. */
#define SAID_MAX 16

struct warm {
	struct sr_launch launch; /* being made: its keeper's answer (launch.fd >= 0) */
	int hold;		 /* made and held: the holding connection (-1 before) */
	char id[33];
	/* o.park: the invocation's stdio, ours (-1 before), and its process once parked. */
	int stdio[3];
	pid_t pid;
	json_t *state; /* the keeper's, as its hold's answer had it */
	bool holding;  /* its hold sent, the keeper's answer awaited on hold */
	bool parking;  /* its exec sent, the keeper's answer awaited on hold */
};

#define WARM_EMPTY                                                   \
	(struct warm)                                                \
	{                                                            \
		.launch.fd = -1, .hold = -1, .stdio = { -1, -1, -1 } \
	}

struct sr_pool {
	struct sr_pool_opts o;
	char *statedir;
	/*
	 * What its keepers are held with (config.h pool_token): random, the
	 * pool's alone, 32 hex digits in memory no child inherits (secmem.h).
	 * The server forks every keeper of every pool, and each is given its
	 * own pool's word (launch.c), not a copy of them all.
	 */
	char *token;
	struct warm *v; /* cap of them; unused ones have launch.fd == hold == -1 */
	size_t cap;
	unsigned extra; /* sandboxes wanted beyond o.size (sr_pool_want) */
	/*
	 * Every fd of the pool's, for the caller to poll as one. Each is taken
	 * out before it is closed: a keeper being forked (ours or a caller's)
	 * holds a copy of every fd for a moment, and the set keeps an fd whose
	 * file is still open somewhere, closed here or not.
	 */
	int ep;
	int timerfd; /* the wait after a failure */
	int soonfd;  /* a take's refill, a little later */
	bool waiting, deferred;
	bool became_ready; /* o.ready to call, at the end of dispatch */
	uint64_t backoff_ms;
	struct sr_pool_stats stats;
	/*
	 * What its keepers say before their answer, on the way to o.sink.
	 * Every keeper of the pool has the same configuration on the same
	 * host, so the same warnings (a limit this host cannot enforce): each
	 * is said once, by the first, not by every sandbox made and remade.
	 * Other levels go through as they come (-v's lines name their
	 * sandbox), and so does a failure to make one (failed()).
	 */
	struct sr_sink keepers;
	char *said[SAID_MAX];
};

static bool unused(const struct warm *w)
{
	return w->launch.fd < 0 && w->hold < 0;
}

/* Held and, with o.park, parked: what a take hands over. */
static bool ready(const struct sr_pool *p, const struct warm *w)
{
	return w->hold >= 0 && !w->holding && (!p->o.park || (w->pid > 0 && !w->parking));
}

/* Its keeper's answer awaited: to the launch, the hold or the park. */
static bool answer_awaited(const struct warm *w)
{
	return w->launch.fd >= 0 || w->holding || w->parking;
}

static void unwatch(struct sr_pool *p, int fd)
{
	if (fd >= 0)
		epoll_ctl(p->ep, EPOLL_CTL_DEL, fd, NULL);
}

static void drop(struct sr_pool *p, struct warm *w)
{
	unwatch(p, w->launch.fd);
	unwatch(p, w->hold);
	sr_launch_cancel(&w->launch);
	sr_closep(&w->hold);
	for (int i = 0; i < 3; i++)
		sr_closep(&w->stdio[i]);
	if (w->state)
		json_decref(w->state);
	*w = WARM_EMPTY;
}

static bool said_before(struct sr_pool *p, const char *text)
{
	size_t i;

	for (i = 0; i < SAID_MAX && p->said[i]; i++)
		if (strcmp(p->said[i], text) == 0)
			return true;
	/* No room, or no memory for it: said again next time, never lost. */
	if (i < SAID_MAX)
		p->said[i] = strdup(text);
	return false;
}

static void keeper_said(void *ctx, enum sr_log_level level, const char *text)
{
	struct sr_pool *p = ctx;

	if (!sr_sink_enabled(p->o.sink, level) || (level == SR_LOG_WARNING && said_before(p, text)))
		return;
	p->o.sink->write(p->o.sink->ctx, level, text);
}

static int watch(struct sr_pool *p, int fd)
{
	struct epoll_event ev = {.events = EPOLLIN, .data.fd = fd};

	return epoll_ctl(p->ep, EPOLL_CTL_ADD, fd, &ev) < 0 ? sr_negerrno() : 0;
}

/* 16 random bytes in hex: the pool's token, 33 bytes. */
static int new_token(char *token)
{
	unsigned char raw[16];

	if (getrandom(raw, sizeof(raw), 0) != (ssize_t)sizeof(raw))
		return -EIO;
	for (size_t i = 0; i < sizeof(raw); i++)
		snprintf(token + 2 * i, 3, "%02x", raw[i]);
	explicit_bzero(raw, sizeof(raw));
	return 0;
}

int sr_pool_new(const struct sr_pool_opts *o, struct sr_pool **ret, struct sr_error *err)
{
	struct sr_pool *p = calloc(1, sizeof(*p));
	int r;

	if (!p || !(p->v = calloc(o->size ? o->size : 1, sizeof(*p->v)))) {
		free(p);
		return sr_error_errno(err, -ENOMEM, "pool");
	}
	p->cap = o->size ? o->size : 1;
	p->o = *o;
	p->keepers = (struct sr_sink){
	    .level = o->sink ? o->sink->level : SR_LOG_ERROR, .write = keeper_said, .ctx = p};
	p->timerfd = p->soonfd = -1;
	p->ep = -1;
	if (!p->o.parallel)
		p->o.parallel = 1;
	for (size_t i = 0; i < p->cap; i++)
		p->v[i] = WARM_EMPTY;
	p->timerfd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
	p->soonfd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
	p->ep = epoll_create1(EPOLL_CLOEXEC);
	if (p->timerfd < 0 || p->soonfd < 0 || p->ep < 0 || watch(p, p->timerfd) < 0 ||
	    watch(p, p->soonfd) < 0) {
		r = sr_error_errno(err, sr_negerrno(), "pool: timer");
		sr_pool_free(p);
		return r;
	}
	r = sr_state_dir(&p->statedir, err);
	if (r >= 0 && !(p->token = sr_secmem_alloc(33)))
		r = sr_error_errno(err, sr_negerrno(), "pool: the pool's word");
	if (r >= 0 && new_token(p->token) < 0)
		r = sr_error_msg(err, -EIO, "pool: getrandom failed");
	if (r < 0) {
		sr_pool_free(p);
		return r;
	}
	*ret = p;
	sr_pool_dispatch(p);
	return 0;
}

int sr_pool_fd(const struct sr_pool *p)
{
	return p->ep;
}

static void failed(struct sr_pool *p, const struct sr_error *err)
{
	struct itimerspec its = {0};

	p->stats.failed++;
	p->backoff_ms = p->backoff_ms ? p->backoff_ms * 2 : BACKOFF_FIRST_MS;
	if (p->backoff_ms > BACKOFF_MAX_MS)
		p->backoff_ms = BACKOFF_MAX_MS;
	/* Said once per series of failures, not every minute. */
	if (p->backoff_ms == BACKOFF_FIRST_MS)
		sr_warn(p->o.sink, "warm pool (%s%s): %s; trying again in the background",
			p->o.what ? "" : "profile ",
			p->o.what	       ? p->o.what
			: p->o.config->profile ? p->o.config->profile
					       : "default",
			err->msg);
	its.it_value = sr_timespec_ms(p->backoff_ms);
	if (timerfd_settime(p->timerfd, 0, &its, NULL) == 0)
		p->waiting = true;
}

/*
 * The holding connection, made without waiting (a keeper whose queue is
 * full is stopped), then blocking as its takers use it: one message at a
 * time, each read once poll says it is there.
 */
static int connect_held(const char *dir, int *ret, struct sr_error *err)
{
	int r = sr_ctl_connect_nowait(dir, ret, err);

	if (r >= 0 && fcntl(*ret, F_SETFL, 0) < 0)
		r = sr_error_errno(err, sr_negerrno(), "hold the sandbox");
	return r;
}

/* The held connection in the pool's epoll set, where its keeper's answers and hang-up are seen. */
static int watch_held(struct sr_pool *p, struct warm *w, struct sr_error *err)
{
	int r = watch(p, w->hold);

	return r < 0 ? sr_error_errno(err, r, "watching sandbox %s", w->id) : 0;
}

/*
 * A keeper that answered "ok" asked to hold its sandbox. Its answer is
 * awaited in dispatch (held()), as the launch's was: a keeper stopped
 * (SIGSTOP, a frozen cgroup) must not stop the caller's loop -- serve's
 * whole API -- and one merely slow on a loaded host is not given up on
 * and its sandbox made again, each time the host is that slow.
 */
static int ask_hold(struct sr_pool *p, struct warm *w, struct sr_error *err)
{
	_cleanup_free_ char *dir = NULL;
	/* Its copies of the word, jansson's and the message's text, are wiped when freed. */
	json_t *req = json_pack("{ssss}", "op", "hold", "token", p->token);
	int r;

	memcpy(w->id, w->launch.id, sizeof(w->id));
	if (!req || asprintf(&dir, "%s/%s", p->statedir, w->id) < 0) {
		dir = NULL;
		r = sr_error_errno(err, -ENOMEM, "pool");
	} else {
		r = connect_held(dir, &w->hold, err);
	}
	if (r >= 0 && (r = sr_ctl_send(w->hold, req, NULL, 0)) < 0)
		sr_error_errno(err, r, "hold the sandbox");
	if (req)
		json_decref(req);
	if (r >= 0)
		r = watch_held(p, w, err);
	if (r >= 0)
		w->holding = true;
	return r < 0 ? r : 0;
}

/* The hold's answer, there to read: 0 and the keeper's state kept for its taker, or err. */
static int hold_answer(struct warm *w, struct sr_error *err)
{
	json_t *reply = NULL;
	int r = sr_ctl_recv_nofds(w->hold, &reply);

	if (r == 0)
		r = -ECONNRESET;
	if (r > 0)
		r = sr_ctl_reply_error(reply, err);
	else
		sr_error_errno(err, r, "hold the sandbox");
	/* What ls shows of it, for its taker's answer (no file to read then). */
	if (r >= 0 && json_is_object(json_object_get(reply, "state")))
		w->state = json_incref(json_object_get(reply, "state"));
	if (reply)
		json_decref(reply);
	return r < 0 ? r : 0;
}

/*
 * o.park: the invocation's process, asked for on the holding connection
 * with pipes of ours as its stdio; parked once the keeper answers (its
 * pid), which dispatch reads.
 */
static int park(struct sr_pool *p, struct warm *w, struct sr_error *err)
{
	json_t *req = json_pack("{sssb}", "op", "exec", "invoke", 1);
	int child[3] = {-1, -1, -1}, pipes[2], r = 0;

	for (int i = 0; i < 3 && r == 0; i++) {
		if (pipe2(pipes, O_CLOEXEC) < 0) {
			r = sr_negerrno();
			break;
		}
		/* stdin: the child reads pipes[0], we write; stdout, stderr: the other way. */
		child[i] = pipes[i == 0 ? 0 : 1];
		w->stdio[i] = pipes[i == 0 ? 1 : 0];
		fcntl(w->stdio[i], F_SETFL, O_NONBLOCK);
	}
	if (r == 0)
		r = req ? sr_ctl_send(w->hold, req, child, 3) : -ENOMEM;
	for (int i = 0; i < 3; i++)
		sr_closep(&child[i]);
	if (req)
		json_decref(req);
	if (r < 0)
		return sr_error_errno(err, r, "park the invocation");
	w->parking = true;
	return 0;
}

/* The keeper's answer to park(): the process is parked, or the sandbox is let go. */
static void parked(struct sr_pool *p, struct warm *w)
{
	struct sr_error err = {0};
	json_t *reply = NULL;
	int r = sr_ctl_recv_nofds(w->hold, &reply);

	if (r > 0 && sr_ctl_reply_error(reply, &err) == 0 &&
	    json_integer_value(json_object_get(reply, "pid")) > 0) {
		w->pid = (pid_t)json_integer_value(json_object_get(reply, "pid"));
		w->parking = false;
		p->stats.made++;
		p->backoff_ms = 0;
	} else {
		if (!err.code)
			sr_error_msg(&err, r < 0 ? r : -ECONNRESET,
				     "the sandbox ended before its invocation was parked");
		r = -1;
	}
	if (reply)
		json_decref(reply);
	if (r < 0) {
		failed(p, &err);
		drop(p, w);
	} else {
		p->became_ready = true;
	}
}

/*
 * Made but not held: removed, not left to live until the profile's
 * deadline. Asked, not waited for: nothing of the answer is the pool's
 * to use, and a keeper stopped meanwhile would stop the caller's loop.
 */
static void let_go(struct sr_pool *p, struct warm *w, const struct sr_error *err)
{
	(void)sr_ctl_ask_rm(p->statedir, w->id, true, NULL);
	failed(p, err);
	drop(p, w);
}

/* The keeper's answer to the launch: its sandbox made, to be held; or it failed. */
static void made(struct sr_pool *p, struct warm *w)
{
	struct sr_error err = {0};

	if (!w->launch.id[0]) {
		failed(p, &w->launch.err);
		drop(p, w);
	} else if (ask_hold(p, w, &err) < 0) {
		let_go(p, w, &err);
	}
}

/* The keeper's answer to ask_hold(): held (and with o.park, its process asked for), or let go. */
static void held(struct sr_pool *p, struct warm *w)
{
	struct sr_error err = {0};

	w->holding = false;
	if (hold_answer(w, &err) < 0 || (p->o.park && park(p, w, &err) < 0)) {
		let_go(p, w, &err);
		return;
	}
	if (!p->o.park) {
		p->stats.made++;
		p->backoff_ms = 0;
		p->became_ready = true;
	}
}

/* A held sandbox's connection is readable: its keeper hung up (rm, a signal): gone. */
static void check_held(struct sr_pool *p, struct warm *w)
{
	struct pollfd pfd = {.fd = w->hold, .events = POLLIN};

	if (poll(&pfd, 1, 0) == 1)
		drop(p, w);
}

/* Room for o.size + extra: false when there is none to be had. */
static bool grow(struct sr_pool *p)
{
	size_t want = (size_t)p->o.size + p->extra;
	struct warm *nv;

	if (want <= p->cap)
		return true;
	nv = realloc(p->v, want * sizeof(*nv));
	if (!nv)
		return false;
	for (size_t i = p->cap; i < want; i++)
		nv[i] = WARM_EMPTY;
	p->v = nv;
	p->cap = want;
	return true;
}

static void refill(struct sr_pool *p)
{
	unsigned making = 0, alive = 0;

	(void)grow(p);
	for (size_t i = 0; i < p->cap; i++) {
		making += answer_awaited(&p->v[i]);
		alive += !unused(&p->v[i]);
	}
	for (size_t i = 0; i < p->cap && making < p->o.parallel && !p->waiting &&
			   (!p->deferred || p->extra) && alive < p->o.size + p->extra;
	     i++) {
		struct sr_error err = {0};

		if (!unused(&p->v[i]))
			continue;
		struct sr_config c = *p->o.config;

		c.pool_token = p->token;
		if (sr_launch_start(&c, p->o.level, &p->keepers, &p->v[i].launch, &err) < 0 ||
		    watch(p, p->v[i].launch.fd) < 0) {
			if (!err.code)
				sr_error_errno(&err, sr_negerrno(), "pool: epoll");
			failed(p, &err);
			drop(p, &p->v[i]);
			break;
		}
		making++;
		alive++;
	}
}

void sr_pool_dispatch(struct sr_pool *p)
{
	uint64_t x;

	if (read(p->timerfd, &x, sizeof(x)) == (ssize_t)sizeof(x))
		p->waiting = false;
	if (read(p->soonfd, &x, sizeof(x)) == (ssize_t)sizeof(x))
		p->deferred = false;
	for (size_t i = 0; i < p->cap; i++) {
		struct warm *w = &p->v[i];
		struct pollfd pfd = {.fd = w->hold, .events = POLLIN};

		if (w->launch.fd >= 0 && sr_launch_read(&w->launch)) {
			unwatch(p, w->launch.fd);
			sr_launch_cancel(&w->launch);
			made(p, w);
		} else if (w->hold >= 0 && (w->holding || w->parking)) {
			/* An answer there: the hold's, or after it the park's. */
			if (poll(&pfd, 1, 0) == 1 && w->holding)
				held(p, w);
			else if (pfd.revents)
				parked(p, w);
		} else if (w->hold >= 0)
			check_held(p, w);
	}
	refill(p);
	/* Last: the callee may take one, and so change v. */
	if (p->became_ready && p->o.ready) {
		p->became_ready = false;
		p->o.ready(p->o.ctx, p);
	}
}

static void refill_soon(struct sr_pool *p)
{
	struct itimerspec its = {.it_value = sr_timespec_ms(REFILL_DELAY_MS)};

	/* Requests wait for one: no delay. */
	if (p->extra)
		return refill(p);
	if (p->deferred)
		return;
	if (timerfd_settime(p->soonfd, 0, &its, NULL) == 0)
		p->deferred = true;
	else
		refill(p);
}

void sr_pool_taken_close(struct sr_pool_taken *t)
{
	sr_closep(&t->hold);
	for (int i = 0; i < 3; i++)
		sr_closep(&t->stdio[i]);
	if (t->state)
		json_decref(steal_pointer(&t->state));
}

/* Not waited for (pool.h): waiting would cost the taker a wake-up of an idle keeper. */
static int send_release(int fd, uint64_t ms, int64_t taken_ns)
{
	json_t *req = json_pack("{ss}", "op", "release");
	int r;

	if (req && ms != UINT64_MAX)
		json_object_set_new(req, "ms", json_integer((json_int_t)ms));
	if (req && taken_ns)
		json_object_set_new(req, "taken_ns", json_integer((json_int_t)taken_ns));
	r = req ? sr_ctl_send(fd, req, NULL, 0) : -ENOMEM;
	if (req)
		json_decref(req);
	return r;
}

int sr_pool_taken_release(struct sr_pool_taken *t)
{
	return send_release(t->hold, t->release_ms, t->taken_ns);
}

int sr_pool_take(struct sr_pool *p, uint64_t ms, struct sr_pool_taken *ret, struct sr_error *err)
{
	for (size_t i = 0; i < p->cap; i++) {
		struct warm *w = &p->v[i];
		struct pollfd pfd;

		if (!ready(p, w))
			continue;
		/* Its keeper hung up meanwhile (rm, a signal): gone, the next one then. */
		pfd = (struct pollfd){.fd = w->hold, .events = POLLIN};
		if (poll(&pfd, 1, 0) == 1) {
			drop(p, w);
			continue;
		}
		unwatch(p, w->hold);
		*ret = (struct sr_pool_taken){.hold = steal_fd(&w->hold),
					      .pid = w->pid,
					      .state = steal_pointer(&w->state),
					      .release_ms = ms,
					      .taken_ns = sr_monotonic_ns()};
		memcpy(ret->id, w->id, 33);
		for (int k = 0; k < 3; k++)
			ret->stdio[k] = steal_fd(&w->stdio[k]);
		p->stats.taken++;
		drop(p, w);
		refill_soon(p);
		return 0;
	}
	refill_soon(p);
	return sr_error_msg(err, -EAGAIN, "no warm sandbox is ready");
}

void sr_pool_want(struct sr_pool *p, unsigned extra)
{
	p->extra = extra;
	refill(p);
}

void sr_pool_stats(const struct sr_pool *p, struct sr_pool_stats *ret)
{
	*ret = p->stats;
	ret->ready = ret->making = 0;
	for (size_t i = 0; i < p->cap; i++) {
		ret->ready += ready(p, &p->v[i]);
		ret->making += answer_awaited(&p->v[i]);
	}
}

size_t sr_pool_ids(const struct sr_pool *p, char (*ids)[33], size_t n)
{
	size_t k = 0;

	for (size_t i = 0; i < p->cap && k < n; i++)
		if (p->v[i].hold >= 0)
			memcpy(ids[k++], p->v[i].id, 33);
	return k;
}

void sr_pool_free(struct sr_pool *p)
{
	if (!p)
		return;
	for (size_t i = 0; p->v && i < p->cap; i++)
		drop(p, &p->v[i]);
	free(p->v);
	for (size_t i = 0; i < SAID_MAX; i++)
		free(p->said[i]);
	free(p->statedir);
	sr_secmem_free(p->token);
	sr_closep(&p->timerfd);
	sr_closep(&p->soonfd);
	sr_closep(&p->ep);
	free(p);
}
