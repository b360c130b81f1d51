/* SPDX-License-Identifier: MIT */
#include "pool.h"
#include "control.h"
#include "launch.h"
#include "state.h"
#include "util.h"

#include <poll.h>
#include <sys/epoll.h>
#include <sys/timerfd.h>

#define BACKOFF_FIRST_MS 1000
#define BACKOFF_MAX_MS	 60000
/*
 * A take's refill starts this much later, not in the middle of the request
 * that took one: making a sandbox is a fork and a few milliseconds of CPU
 * that the taker's next steps (its exec) would wait behind on a small host.
 */
#define REFILL_DELAY_MS 50

struct warm {
	struct sr_launch launch; /* being made: its keeper's answer (launch.fd >= 0) */
	int hold;		 /* made and held: the holding connection (-1 before) */
	char id[33];
};

struct sr_pool {
	struct sr_pool_opts o;
	char *statedir;
	struct warm *v; /* o.size of them; unused ones have launch.fd == hold == -1 */
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
	uint64_t backoff_ms;
	struct sr_pool_stats stats;
};

static bool unused(const struct warm *w)
{
	return w->launch.fd < 0 && w->hold < 0;
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
	*w = (struct warm){.launch.fd = -1, .hold = -1};
}

static int watch(struct sr_pool *p, int fd)
{
	struct epoll_event ev = {.events = EPOLLIN, .data.fd = fd};

	return epoll_ctl(p->ep, EPOLL_CTL_ADD, fd, &ev) < 0 ? sr_negerrno() : 0;
}

int sr_pool_new(const struct sr_pool_opts *o, struct sr_pool **ret, struct sr_error *err)
{
	struct sr_pool *p = calloc(1, sizeof(*p));
	int r;

	if (!p || !(p->v = calloc(o->size ? o->size : 1, sizeof(*p->v)))) {
		free(p);
		return sr_error_errno(err, -ENOMEM, "pool");
	}
	p->o = *o;
	p->timerfd = p->soonfd = -1;
	p->ep = -1;
	if (!p->o.parallel)
		p->o.parallel = 1;
	for (size_t i = 0; i < o->size; i++)
		p->v[i] = (struct warm){.launch.fd = -1, .hold = -1};
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
		sr_warn(p->o.sink, "warm pool (profile %s): %s; trying again in the background",
			p->o.config->profile ? p->o.config->profile : "default", err->msg);
	its.it_value.tv_sec = (time_t)(p->backoff_ms / 1000);
	its.it_value.tv_nsec = (long)(p->backoff_ms % 1000) * 1000000L;
	if (timerfd_settime(p->timerfd, 0, &its, NULL) == 0)
		p->waiting = true;
}

/* A keeper that answered "ok": its sandbox held (a hold that fails lets it go). */
static int hold(struct sr_pool *p, struct warm *w, struct sr_error *err)
{
	_cleanup_free_ char *dir = NULL;
	json_t *req = json_pack("{ss}", "op", "hold"), *reply = NULL;
	int fds[SR_CTL_FDS_MAX];
	size_t n_fds = 0;
	int r;

	memcpy(w->id, w->launch.id, sizeof(w->id));
	if (asprintf(&dir, "%s/%s", p->statedir, w->id) < 0)
		dir = NULL;
	r = dir ? sr_ctl_connect(dir, &w->hold, err) : sr_error_errno(err, -ENOMEM, "pool");
	if (r >= 0)
		r = sr_ctl_send(w->hold, req, NULL, 0);
	if (r >= 0)
		r = sr_ctl_recv(w->hold, &reply, fds, &n_fds);
	for (size_t i = 0; r > 0 && i < n_fds; i++)
		close(fds[i]);
	if (r == 0)
		r = -ECONNRESET;
	if (r > 0)
		r = sr_ctl_reply_error(reply, err);
	else if (!err->code)
		sr_error_errno(err, r, "hold the sandbox");
	json_decref(req);
	if (reply)
		json_decref(reply);
	return r < 0 ? r : 0;
}

static void made(struct sr_pool *p, struct warm *w)
{
	_cleanup_free_ char *dir = NULL;
	struct sr_error err = {0}, rmerr = {0};
	json_t *rm;

	if (!w->launch.id[0]) {
		failed(p, &w->launch.err);
		drop(p, w);
		return;
	}
	if (hold(p, w, &err) == 0 && watch(p, w->hold) == 0) {
		p->stats.made++;
		p->backoff_ms = 0;
		return;
	}
	/* Made but not held: removed, not left to live until the profile's deadline. */
	rm = json_pack("{sssb}", "op", "rm", "force", 1);
	if (rm && asprintf(&dir, "%s/%s", p->statedir, w->id) >= 0)
		(void)sr_ctl_call(dir, rm, NULL, &rmerr);
	json_decref(rm);
	failed(p, &err);
	drop(p, w);
}

/* A held sandbox's connection is readable: its keeper hung up (rm, a signal): gone. */
static void check_held(struct sr_pool *p, struct warm *w)
{
	struct pollfd pfd = {.fd = w->hold, .events = POLLIN};

	if (poll(&pfd, 1, 0) == 1)
		drop(p, w);
}

static void refill(struct sr_pool *p)
{
	unsigned making = 0;

	for (size_t i = 0; i < p->o.size; i++)
		making += p->v[i].launch.fd >= 0;
	for (size_t i = 0; i < p->o.size && making < p->o.parallel && !p->waiting && !p->deferred;
	     i++) {
		struct sr_error err = {0};

		if (!unused(&p->v[i]))
			continue;
		if (sr_launch_start(p->o.config, p->o.level, p->o.sink, &p->v[i].launch, &err) <
			0 ||
		    watch(p, p->v[i].launch.fd) < 0) {
			if (!err.code)
				sr_error_errno(&err, sr_negerrno(), "pool: epoll");
			failed(p, &err);
			drop(p, &p->v[i]);
			break;
		}
		making++;
	}
}

void sr_pool_dispatch(struct sr_pool *p)
{
	uint64_t x;

	if (read(p->timerfd, &x, sizeof(x)) == (ssize_t)sizeof(x))
		p->waiting = false;
	if (read(p->soonfd, &x, sizeof(x)) == (ssize_t)sizeof(x))
		p->deferred = false;
	for (size_t i = 0; i < p->o.size; i++) {
		struct warm *w = &p->v[i];

		if (w->launch.fd >= 0 && sr_launch_read(&w->launch)) {
			unwatch(p, w->launch.fd);
			sr_launch_cancel(&w->launch);
			made(p, w);
		} else if (w->hold >= 0)
			check_held(p, w);
	}
	refill(p);
}

static void refill_soon(struct sr_pool *p)
{
	struct itimerspec its = {.it_value.tv_nsec = REFILL_DELAY_MS * 1000000L};

	if (p->deferred)
		return;
	if (timerfd_settime(p->soonfd, 0, &its, NULL) == 0)
		p->deferred = true;
	else
		refill(p);
}

int sr_pool_take(struct sr_pool *p, uint64_t ms, char ret_id[33], struct sr_error *err)
{
	for (size_t i = 0; i < p->o.size; i++) {
		struct warm *w = &p->v[i];
		struct pollfd pfd;
		json_t *req;
		int r;

		if (w->hold < 0)
			continue;
		/* Its keeper hung up meanwhile (rm, a signal): gone, the next one then. */
		pfd = (struct pollfd){.fd = w->hold, .events = POLLIN};
		if (poll(&pfd, 1, 0) == 1) {
			drop(p, w);
			continue;
		}
		req = json_pack("{ss}", "op", "release");
		if (req && ms != UINT64_MAX)
			json_object_set_new(req, "ms", json_integer((json_int_t)ms));
		r = req ? sr_ctl_send(w->hold, req, NULL, 0) : -ENOMEM;
		json_decref(req);
		/*
		 * Not waited for: the keeper reads the release before the end of
		 * the connection closed here (a seqpacket socket keeps their order),
		 * so the end no longer ends the sandbox. Waiting would cost the
		 * taker a wake-up of an idle keeper, most of a warm create.
		 */
		if (r >= 0) {
			memcpy(ret_id, w->id, 33);
			p->stats.taken++;
		}
		drop(p, w);
		if (r >= 0) {
			refill_soon(p);
			return 0;
		}
	}
	refill_soon(p);
	return sr_error_msg(err, -EAGAIN, "no warm sandbox is ready");
}

void sr_pool_stats(const struct sr_pool *p, struct sr_pool_stats *ret)
{
	*ret = p->stats;
	ret->ready = ret->making = 0;
	for (size_t i = 0; i < p->o.size; i++) {
		ret->ready += p->v[i].hold >= 0;
		ret->making += p->v[i].launch.fd >= 0;
	}
}

size_t sr_pool_ids(const struct sr_pool *p, char (*ids)[33], size_t n)
{
	size_t k = 0;

	for (size_t i = 0; i < p->o.size && k < n; i++)
		if (p->v[i].hold >= 0)
			memcpy(ids[k++], p->v[i].id, 33);
	return k;
}

void sr_pool_free(struct sr_pool *p)
{
	if (!p)
		return;
	for (size_t i = 0; p->v && i < p->o.size; i++)
		drop(p, &p->v[i]);
	free(p->v);
	free(p->statedir);
	sr_closep(&p->timerfd);
	sr_closep(&p->soonfd);
	sr_closep(&p->ep);
	free(p);
}
