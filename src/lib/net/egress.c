/* SPDX-License-Identifier: MIT */
#include "egress.h"
#include "link.h"
#include "nfnl.h"
#include "nft.h"
#include "protocol.h"
#include "resolver.h"
#include "units.h"
#include "util.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>

/*
 * An allowed address stays in its set at least this long, whatever its
 * TTL (0 included): an agent connects right after it resolves, and some
 * runtimes keep an answer a little longer than they should. At most
 * SR_RESOLVER_TTL_MAX, to which the resolver lowers every TTL.
 */
#define TTL_MIN_S 60

/* A name the policy allows, with the port its entry gives (0: any). */
struct entry {
	struct sr_resolver_name name;
	uint16_t port;
};

struct counted {
	char name[256];
	uint64_t count;
};

/* An element the supervisor put into an allow set, and when it expires there. */
struct held {
	struct sr_nfnl_elem el; /* its timeout_ms not read */
	int64_t expires_ms;	/* monotonic */
};

/* The most the sets hold at once: more can be forgotten, they are refused anyway. */
#define HELD_MAX (4 * SR_NFT_ALLOW_MAX)

struct sr_egress {
	const struct sr_sink *sink;
	struct sr_resolver_config rc;
	struct sr_resolver_name *allow, *deny;
	struct entry *entries; /* rc.allow, with ports */
	size_t n_entries;
	int nfnl; /* the sandbox's nfnetlink socket (nfnl.h), -1 */
	/* The host's addresses as it gains them, refused as they come (nft.h's host sets). */
	struct sr_link_watch *host_watch;
	int host_watch_fd; /* its socket, kept here: dispatch then runs no code of link.c's */
	bool allowlist;	   /* --allow given: only an entry naming one opens it */
	struct sr_nft_dest *named; /* the --allow entries that are one address */
	size_t n_named;
	/* The resolver's sockets, until the agent's first query starts it (-1 then). */
	int udp, tcp;
	int epfd; /* those, then the resolver's control socket and pidfd */
	pid_t pid;
	int pidfd, ctl;
	bool ended;	/* the sandbox has: the record is final */
	bool full_said; /* that an allow set is full, once */
	/* The record. */
	struct counted allowed[SR_RESULT_NAMES_MAX], refused[SR_RESULT_REFUSED_MAX];
	size_t n_allowed, n_refused;
	bool names_truncated;
	struct sr_nfnl_refused dests[2 * SR_NFT_REFUSED_MAX];
	size_t n_dests;
	struct sr_resolver_msg msg;
	struct held *held; /* what the allow sets hold, unexpired ones at least */
	size_t n_held;
};

static int add_name(struct sr_resolver_name **v, size_t *n, const struct sr_dest *d)
{
	struct sr_resolver_name *bigger = realloc(*v, (*n + 1) * sizeof(**v));

	if (!bigger)
		return -ENOMEM;
	*v = bigger;
	snprintf(bigger[*n].name, sizeof(bigger[*n].name), "%s", d->host);
	bigger[*n].wildcard = d->wildcard;
	(*n)++;
	return 0;
}

/* The names among c's entries (addresses are the ruleset's: nft.h). */
static int collect_names(struct sr_egress *e, const struct sr_config *c)
{
	size_t n_allow = 0, n_deny = 0;
	int r = 0;

	for (size_t i = 0; r >= 0 && i < c->allow.n; i++) {
		struct sr_dest d;
		struct entry *bigger;

		if (sr_parse_dest(c->allow.items[i], &d) < 0 || d.kind != SR_DEST_HOST)
			continue;
		r = add_name(&e->allow, &n_allow, &d);
		bigger = r < 0 ? NULL : realloc(e->entries, n_allow * sizeof(*bigger));
		if (!bigger)
			return -ENOMEM;
		e->entries = bigger;
		e->entries[n_allow - 1] =
		    (struct entry){.name = e->allow[n_allow - 1], .port = d.port};
	}
	for (size_t i = 0; r >= 0 && i < c->deny.n; i++) {
		struct sr_dest d;

		if (sr_parse_dest(c->deny.items[i], &d) == 0 && d.kind == SR_DEST_HOST)
			r = add_name(&e->deny, &n_deny, &d);
	}
	e->n_entries = n_allow;
	e->rc.allow = e->allow;
	e->rc.n_allow = n_allow;
	e->rc.deny = e->deny;
	e->rc.n_deny = n_deny;
	return r;
}

static int watch(struct sr_egress *e, int fd)
{
	struct epoll_event ev = {.events = EPOLLIN, .data.fd = fd};

	if (fd < 0)
		return 0;
	if (e->epfd < 0)
		e->epfd = epoll_create1(EPOLL_CLOEXEC);
	if (e->epfd < 0 || epoll_ctl(e->epfd, EPOLL_CTL_ADD, fd, &ev) < 0)
		return sr_negerrno();
	return 0;
}

/* The --allow entries that name one address, which open that address of the host's too. */
static int collect_named(struct sr_egress *e, const struct sr_config *c)
{
	e->allowlist = c->allow.n > 0;
	for (size_t i = 0; i < c->allow.n; i++) {
		struct sr_error ignored = {0};
		struct sr_nft_dest d, *bigger;

		/* A host name is no address (the resolver's). */
		if (sr_nft_parse_dest(c->allow.items[i], &d, &ignored) < 0)
			continue;
		bigger = realloc(e->named, (e->n_named + 1) * sizeof(*bigger));
		if (!bigger)
			return -ENOMEM;
		e->named = bigger;
		e->named[e->n_named++] = d;
	}
	return 0;
}

int sr_egress_new(const struct sr_config *c, const struct sr_sink *sink, uid_t uid, gid_t gid,
		  struct sr_egress **ret, struct sr_error *err)
{
	struct sr_egress *e = calloc(1, sizeof(*e));
	int r;

	if (!e)
		return sr_error_errno(err, -ENOMEM, "network");
	e->sink = sink;
	e->nfnl = e->epfd = e->pidfd = e->ctl = e->udp = e->tcp = e->host_watch_fd = -1;
	e->rc.change_ids = geteuid() == 0;
	e->rc.uid = uid;
	e->rc.gid = gid;
	e->rc.show_stderr = sr_sink_enabled(sink, SR_LOG_DEBUG);
	r = collect_names(e, c);
	if (r >= 0)
		r = collect_named(e, c);
	if (r >= 0 && sr_egress_names(e))
		r = sr_resolver_read_upstreams("/etc/resolv.conf", &e->rc);
	if (r < 0) {
		sr_egress_free(e);
		return sr_error_errno(err, r, "the sandbox's resolver: /etc/resolv.conf");
	}
	/*
	 * Watched from now, before the policy lists the host's addresses
	 * (sr_policy_ruleset): one added in between is both listed and heard
	 * of, never neither.
	 */
	r = sr_link_watch_new(&e->host_watch, err);
	if (r >= 0)
		e->host_watch_fd = sr_link_watch_fd(e->host_watch);
	if (r >= 0 && (r = watch(e, e->host_watch_fd)) < 0)
		sr_error_errno(err, r, "watch the host's addresses");
	if (r < 0) {
		sr_egress_free(e);
		return r;
	}
	*ret = e;
	return 0;
}

bool sr_egress_names(const struct sr_egress *e)
{
	return e && (e->rc.n_allow > 0 || e->rc.n_deny > 0);
}

bool sr_egress_allows_names(const struct sr_egress *e)
{
	return e && e->rc.n_allow > 0;
}

int sr_egress_sockets(struct sr_egress *e, int *fds, size_t n, struct sr_error *err)
{
	int r;

	if (n < 1 || e->nfnl >= 0 || (sr_egress_names(e) ? n != 3 : n != 1)) {
		for (size_t i = 0; i < n; i++)
			sr_closep(&fds[i]);
		return sr_error_msg(err, -EPROTO, "network sockets nobody asked for");
	}
	e->nfnl = steal_fd(&fds[0]);
	if (!sr_egress_names(e))
		return 0;
	/*
	 * The resolver starts on the agent's first query, not now: a fork
	 * here, while PID 1 finishes, would slow the set-up on a busy host
	 * (the supervisor's pages copied on write, two processes on the
	 * CPUs), and a run that resolves nothing never needs it. The query
	 * waits in the socket meanwhile.
	 */
	e->udp = steal_fd(&fds[1]);
	e->tcp = steal_fd(&fds[2]);
	r = watch(e, e->udp);
	if (r >= 0)
		r = watch(e, e->tcp);
	if (r < 0)
		return sr_error_errno(err, r, "watch the resolver's sockets");
	return 0;
}

/* On the first query: the resolver takes the sockets. */
static void start_resolver(struct sr_egress *e)
{
	struct sr_error err = {0};
	int r;

	epoll_ctl(e->epfd, EPOLL_CTL_DEL, e->udp, NULL);
	epoll_ctl(e->epfd, EPOLL_CTL_DEL, e->tcp, NULL);
	r = sr_resolver_start(&e->rc, e->udp, e->tcp, &e->pid, &e->pidfd, &e->ctl, &err);
	if (r >= 0 && ((r = watch(e, e->ctl)) < 0 || (r = watch(e, e->pidfd)) < 0))
		sr_error_errno(&err, r, "watch the resolver");
	/* Closed here either way: without a resolver, a query fails at once (no port). */
	sr_closep(&e->udp);
	sr_closep(&e->tcp);
	e->udp = e->tcp = -1;
	if (r < 0)
		sr_warn(e->sink, "%s: names do not resolve", err.msg);
}

static bool readable(int fd)
{
	struct pollfd p = {.fd = fd, .events = POLLIN};

	return fd >= 0 && poll(&p, 1, 0) > 0;
}

int sr_egress_watch_fd(const struct sr_egress *e)
{
	return e ? e->epfd : -1;
}

static void count(struct counted *v, size_t max, size_t *n, bool *truncated, const char *name)
{
	for (size_t i = 0; i < *n; i++) {
		if (strcmp(v[i].name, name) == 0) {
			v[i].count++;
			return;
		}
	}
	if (*n == max) {
		*truncated = true;
		return;
	}
	snprintf(v[*n].name, sizeof(v[*n].name), "%s", name);
	v[(*n)++].count = 1;
}

/*
 * Adds el to out unless it is there (an answer may repeat an address;
 * two entries may give the same port): the batch deletes each element it
 * adds, and a second delete of one would fail it. The longer timeout.
 */
static size_t add_elem(struct sr_nfnl_elem *out, size_t n, const struct sr_nfnl_elem *el)
{
	for (size_t i = 0; i < n; i++) {
		if (out[i].family != el->family || out[i].port != el->port ||
		    memcmp(out[i].addr, el->addr, sizeof(el->addr)) != 0)
			continue;
		if (el->timeout_ms > out[i].timeout_ms)
			out[i].timeout_ms = el->timeout_ms;
		return n;
	}
	out[n] = *el;
	return n + 1;
}

/* The elements for an allowed name's addresses: one per address and port its entries give. */
static size_t elements(const struct sr_egress *e, const struct sr_resolver_msg *m,
		       struct sr_nfnl_elem *out, size_t max)
{
	size_t n = 0;

	for (size_t i = 0; i < e->n_entries; i++) {
		const struct entry *en = &e->entries[i];

		if (!sr_dns_name_matches(m->name, en->name.name, en->name.wildcard))
			continue;
		for (size_t a = 0; a < m->n_addrs && n < max; a++) {
			const struct sr_dns_addr *ad = &m->addrs[a];
			uint32_t ttl = ad->ttl < TTL_MIN_S ? TTL_MIN_S : ad->ttl;

			if (ad->family != AF_INET && ad->family != AF_INET6)
				continue;
			struct sr_nfnl_elem el = {
			    .family = ad->family, .port = en->port, .timeout_ms = ttl * 1000};

			if (ttl > SR_RESOLVER_TTL_MAX)
				el.timeout_ms = SR_RESOLVER_TTL_MAX * 1000;
			memcpy(el.addr, ad->addr, sizeof(el.addr));
			n = add_elem(out, n, &el);
		}
	}
	return n;
}

/*
 * Whether the host's address d needs no element: an --allow entry names
 * it exactly (opened, as meant: nft.c, put_host), or, without an allow
 * list, a default range refuses it anyway.
 */
static bool needs_no_element(const struct sr_egress *e, const struct sr_nft_dest *d)
{
	const char *range;

	for (size_t i = 0; e->allowlist && i < e->n_named; i++)
		if (e->named[i].family == d->family && e->named[i].prefix == d->prefix &&
		    memcmp(e->named[i].addr, d->addr, sizeof(d->addr)) == 0)
			return true;
	for (size_t i = 0; !e->allowlist && (range = sr_nft_refused_default(i)); i++) {
		struct sr_error ignored = {0};
		struct sr_nft_dest r;

		if (sr_nft_parse_dest(range, &r, &ignored) == 0 && sr_nft_dest_covers(&r, d))
			return true;
	}
	return false;
}

/*
 * Addresses the host gained since the policy listed its own: refused as
 * those were (nft.c, put_host), for the rest of the run. The helper's
 * sockets are the host's, so without this a service on 0.0.0.0 would be
 * reachable at a new address of the host's (a new IPv6 temporary
 * address, a DHCP lease, an interface brought up), by address in default
 * mode, and through an allowed name that DNS points at it otherwise.
 */
static void on_host_addresses(struct sr_egress *e)
{
	struct sr_strv added = {0};
	struct sr_error err = {0};
	struct sr_nfnl_elem *elems = NULL;
	size_t n = 0;
	int r;

	if (e->host_watch_fd < 0 || e->nfnl < 0 || e->ended || !readable(e->host_watch_fd))
		return;
	r = sr_link_watch_read(e->host_watch, &added, &err);
	if (r >= 0 && !(elems = calloc(added.n ? added.n : 1, sizeof(*elems))))
		r = sr_error_errno(&err, -ENOMEM, "the host's new addresses");
	for (size_t i = 0; r >= 0 && i < added.n; i++) {
		struct sr_error ignored = {0};
		struct sr_nft_dest d;

		if (sr_nft_parse_dest(added.items[i], &d, &ignored) < 0 || needs_no_element(e, &d))
			continue;
		/* A range made local (AnyIP) has no element in an address set: said. */
		if (d.prefix != (d.family == AF_INET ? 32u : 128u)) {
			sr_warn(e->sink, "the host made %s its own: not refused in the sandbox",
				added.items[i]);
			continue;
		}
		elems[n] = (struct sr_nfnl_elem){.family = d.family};
		memcpy(elems[n++].addr, d.addr, sizeof(d.addr));
	}
	if (r >= 0)
		r = sr_nfnl_refuse_host(e->nfnl, elems, n, &err);
	if (r < 0)
		sr_warn(e->sink, "%s: an address the host gained may be reachable from the sandbox",
			err.msg);
	free(elems);
	sr_strv_free(&added);
}

static struct held *find_held(struct sr_egress *e, const struct sr_nfnl_elem *el)
{
	for (size_t i = 0; i < e->n_held; i++) {
		const struct sr_nfnl_elem *h = &e->held[i].el;

		if (h->family == el->family && h->port == el->port &&
		    memcmp(h->addr, el->addr, sizeof(h->addr)) == 0)
			return &e->held[i];
	}
	return NULL;
}

/*
 * Each element's timeout raised to what it has left in its set, where
 * that is longer. An element put in again starts its timeout anew (add,
 * delete, add: nfnl.c), so another name's shorter TTL would cut short
 * an address that an earlier answer gave for longer (a CDN's, which names
 * share), while the agent may still hold that answer. Expired ones are
 * forgotten first.
 */
static void keep_longer(struct sr_egress *e, struct sr_nfnl_elem *el, size_t n, int64_t now)
{
	size_t k = 0;

	for (size_t i = 0; i < e->n_held; i++)
		if (e->held[i].expires_ms > now)
			e->held[k++] = e->held[i];
	e->n_held = k;
	for (size_t i = 0; i < n; i++) {
		const struct held *h = find_held(e, &el[i]);

		if (h && h->expires_ms - now > (int64_t)el[i].timeout_ms)
			el[i].timeout_ms = (uint32_t)(h->expires_ms - now);
	}
}

/* The elements now in the sets, and until when (at most HELD_MAX are kept). */
static void remember(struct sr_egress *e, const struct sr_nfnl_elem *el, size_t n, int64_t now)
{
	for (size_t i = 0; i < n; i++) {
		struct held *h = find_held(e, &el[i]);

		if (!h && e->n_held < HELD_MAX) {
			if (!e->held && !(e->held = calloc(HELD_MAX, sizeof(*e->held))))
				return;
			h = &e->held[e->n_held++];
		}
		if (h)
			*h = (struct held){.el = el[i], .expires_ms = now + el[i].timeout_ms};
	}
}

/*
 * An allowed name's addresses: into the sets, then the resolver may
 * answer. The name is checked again here: the resolver parses what the
 * agent sends, and is not trusted to say which names the policy allows.
 */
static void on_addresses(struct sr_egress *e, struct sr_resolver_msg *m)
{
	struct sr_resolver_msg ack = {.type = SR_RESOLVER_ACK, .id = m->id};
	struct sr_error err = {0};
	struct sr_nfnl_elem *elems;
	size_t max, n;

	m->name[sizeof(m->name) - 1] = '\0';
	if (m->n_addrs > SR_DNS_ADDRS_MAX || !sr_resolver_allowed(&e->rc, m->name)) {
		ack.code = -EPERM;
	} else {
		max = (size_t)m->n_addrs * (e->n_entries ? e->n_entries : 1);
		elems = calloc(max ? max : 1, sizeof(*elems));
		int64_t now = sr_monotonic_ns() / 1000000;

		n = elems ? elements(e, m, elems, max) : 0;
		keep_longer(e, elems, n, now);
		ack.code = !elems ? -ENOMEM : sr_nfnl_allow(e->nfnl, elems, n, &err);
		if (ack.code >= 0)
			remember(e, elems, n, now);
		free(elems);
		/*
		 * A full set (ENFILE, "too many open files in system" as
		 * strerror() has it) is said once, in words: the agent that
		 * filled it would otherwise have a line printed for each query.
		 */
		if (ack.code == -ENFILE && !e->full_said)
			sr_warn(e->sink,
				"the sandbox's allowed addresses are full (%d of each kind at a "
				"time, each kept for its TTL): '%s', and any name with an "
				"address not among them, is answered SERVFAIL until some expire",
				SR_NFT_ALLOW_MAX, m->name);
		else if (ack.code < 0 && ack.code != -ENFILE)
			sr_warn(e->sink, "%s: '%s' is answered SERVFAIL", err.msg, m->name);
		e->full_said |= ack.code == -ENFILE;
		if (ack.code >= 0)
			count(e->allowed, SR_RESULT_NAMES_MAX, &e->n_allowed, &e->names_truncated,
			      m->name);
	}
	(void)send(e->ctl, &ack, sizeof(ack), MSG_DONTWAIT | MSG_NOSIGNAL);
}

static void resolver_gone(struct sr_egress *e, bool during_run)
{
	int st = 0;
	pid_t w;

	if (e->pid <= 0)
		return;
	w = waitpid(e->pid, &st, WNOHANG);
	if (w == 0)
		return;
	e->pid = 0;
	if (e->epfd >= 0 && e->pidfd >= 0)
		epoll_ctl(e->epfd, EPOLL_CTL_DEL, e->pidfd, NULL);
	sr_closep(&e->pidfd);
	e->pidfd = -1;
	if (!during_run)
		return;
	if (w > 0 && WIFSIGNALED(st))
		sr_warn(e->sink,
			"the sandbox's resolver was killed by signal %d: names no longer resolve",
			WTERMSIG(st));
	else
		sr_warn(e->sink,
			"the sandbox's resolver exited with status %d: names no longer resolve",
			w > 0 ? WEXITSTATUS(st) : -1);
}

void sr_egress_dispatch(struct sr_egress *e, bool during_run)
{
	if (!e)
		return;
	on_host_addresses(e);
	if (readable(e->udp) || readable(e->tcp))
		start_resolver(e);
	for (int i = 0; e->ctl >= 0 && i < 64; i++) {
		struct sr_resolver_msg *m = &e->msg;
		ssize_t k = recv(e->ctl, m, sizeof(*m), MSG_DONTWAIT);

		if (k < 0 && errno == EAGAIN)
			break;
		if (k <= 0) {
			epoll_ctl(e->epfd, EPOLL_CTL_DEL, e->ctl, NULL);
			sr_closep(&e->ctl);
			e->ctl = -1;
			break;
		}
		if (k != (ssize_t)sizeof(*m))
			continue;
		m->name[sizeof(m->name) - 1] = '\0';
		if (m->type == SR_RESOLVER_ADDRESSES)
			on_addresses(e, m);
		else if (m->type == SR_RESOLVER_REFUSED)
			count(e->refused, SR_RESULT_REFUSED_MAX, &e->n_refused, &e->names_truncated,
			      m->name);
	}
	resolver_gone(e, during_run);
}

static void read_refused(struct sr_egress *e)
{
	struct sr_error err = {0};
	size_t n = 0;

	if (e->nfnl < 0)
		return;
	if (sr_nfnl_refused(e->nfnl, e->dests, SR_ARRAY_SIZE(e->dests), &n, &err) < 0) {
		sr_debug(e->sink, "%s", err.msg);
		return;
	}
	e->n_dests = n;
}

static void format_dest(const struct sr_nfnl_refused *d, char *buf, size_t len)
{
	char a[INET6_ADDRSTRLEN];

	inet_ntop(d->family, d->addr, a, sizeof(a));
	snprintf(buf, len, d->family == AF_INET6 ? "[%s]:%u" : "%s:%u", a, d->port);
}

static const char *proto_name(uint8_t p)
{
	return p == IPPROTO_TCP ? "tcp" : p == IPPROTO_UDP ? "udp" : "?";
}

static int by_packets(const void *a, const void *b)
{
	const struct sr_nfnl_refused *x = a, *y = b;

	return x->packets < y->packets ? 1 : x->packets > y->packets ? -1 : 0;
}

static int by_count(const void *a, const void *b)
{
	const struct counted *x = a, *y = b;

	return x->count < y->count ? 1 : x->count > y->count ? -1 : strcmp(x->name, y->name);
}

void sr_egress_ended(struct sr_egress *e)
{
	char dest[64];

	if (!e || e->ended)
		return;
	read_refused(e);
	e->ended = true;
	qsort(e->dests, e->n_dests, sizeof(e->dests[0]), by_packets);
	qsort(e->refused, e->n_refused, sizeof(e->refused[0]), by_count);
	for (size_t i = 0; i < e->n_dests; i++) {
		format_dest(&e->dests[i], dest, sizeof(dest));
		sr_info(e->sink, "refused: %s/%s (%llu packet%s)", dest,
			proto_name(e->dests[i].proto), (unsigned long long)e->dests[i].packets,
			e->dests[i].packets == 1 ? "" : "s");
	}
	for (size_t i = 0; i < e->n_refused; i++)
		sr_info(e->sink, "refused name: %s (%llu quer%s)", e->refused[i].name,
			(unsigned long long)e->refused[i].count,
			e->refused[i].count == 1 ? "y" : "ies");
}

void sr_egress_record(struct sr_egress *e, struct sr_result_network *ret)
{
	size_t n = 0;

	*ret = (struct sr_result_network){.recorded = true};
	if (!e)
		return;
	if (!e->ended) {
		read_refused(e);
		qsort(e->dests, e->n_dests, sizeof(e->dests[0]), by_packets);
		qsort(e->refused, e->n_refused, sizeof(e->refused[0]), by_count);
	}
	for (size_t i = 0; i < e->n_allowed; i++)
		snprintf(ret->allowed[i], sizeof(ret->allowed[i]), "%s", e->allowed[i].name);
	ret->n_allowed = e->n_allowed;
	for (size_t i = 0; i < e->n_dests && n < SR_RESULT_REFUSED_MAX; i++, n++) {
		format_dest(&e->dests[i], ret->refused[n].dest, sizeof(ret->refused[n].dest));
		snprintf(ret->refused[n].proto, sizeof(ret->refused[n].proto), "%s",
			 proto_name(e->dests[i].proto));
		ret->refused[n].count = e->dests[i].packets;
	}
	for (size_t i = 0; i < e->n_refused && n < SR_RESULT_REFUSED_MAX; i++, n++) {
		snprintf(ret->refused[n].name, sizeof(ret->refused[n].name), "%s",
			 e->refused[i].name);
		ret->refused[n].count = e->refused[i].count;
	}
	ret->n_refused = n;
	/* The sets hold at most SR_NFT_REFUSED_MAX each: full, some went uncounted. */
	ret->truncated =
	    e->names_truncated || n < e->n_dests + e->n_refused || e->n_dests >= SR_NFT_REFUSED_MAX;
}

/* A socket of the sandbox's resolver, on its address inside: port 53 (CAP_NET_BIND_SERVICE). */
static int resolver_socket(int type, struct sr_error *err)
{
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons(53)};
	_cleanup_close_ int fd = socket(AF_INET, type | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);

	inet_pton(AF_INET, SR_RESOLVER_ADDRESS, &a.sin_addr);
	if (fd < 0 || bind(fd, (struct sockaddr *)&a, sizeof(a)) < 0 ||
	    (type == SOCK_STREAM && listen(fd, 64) < 0))
		return sr_error_errno(err, sr_negerrno(), "the resolver's socket on %s:53",
				      SR_RESOLVER_ADDRESS);
	return steal_fd(&fd);
}

/*
 * What the supervisor needs of this namespace while the sandbox lives
 * (NET, protocol.h): an nfnetlink socket for the sets (nfnl.h), and with
 * names the resolver's sockets. Made here, while PID 1 has
 * CAP_NET_ADMIN over the namespace (the kernel checks the opener's too),
 * before anything of the agent's runs; PID 1 keeps none of them.
 */
int sr_egress_child_sockets(const struct sr_egress *e, int sock, struct sr_error *err)
{
	struct sr_msg m = {.type = SR_MSG_NET};
	int fds[3] = {-1, -1, -1}, r = 0;
	size_t k = sr_egress_names(e) ? 3 : 1;

	fds[0] = sr_nfnl_open();
	if (fds[0] < 0)
		r = sr_error_errno(err, fds[0], "nftables: netlink socket");
	if (r >= 0 && k == 3 && (fds[1] = resolver_socket(SOCK_DGRAM, err)) < 0)
		r = fds[1];
	if (r >= 0 && k == 3 && (fds[2] = resolver_socket(SOCK_STREAM, err)) < 0)
		r = fds[2];
	if (r >= 0) {
		r = sr_msg_send_full(sock, &m, NULL, 0, fds, k);
		if (r < 0)
			sr_error_errno(err, r, "send the network's sockets");
	}
	for (size_t i = 0; i < SR_ARRAY_SIZE(fds); i++)
		sr_closep(&fds[i]);
	return r;
}

void sr_egress_free(struct sr_egress *e)
{
	if (!e)
		return;
	if (e->pid > 0) {
		/* Through the pidfd where there is one: it cannot name a reused pid. */
#ifdef SYS_pidfd_send_signal
		if (e->pidfd < 0 || syscall(SYS_pidfd_send_signal, e->pidfd, SIGKILL, NULL, 0) < 0)
#endif
			kill(e->pid, SIGKILL);
		/* Killed, it is gone at once: reaped, so that a server does not gather zombies. */
		(void)waitpid(e->pid, NULL, 0);
	}
	sr_closep(&e->pidfd);
	sr_closep(&e->ctl);
	sr_closep(&e->udp);
	sr_closep(&e->tcp);
	sr_closep(&e->epfd);
	sr_closep(&e->nfnl);
	sr_link_watch_free(e->host_watch);
	free(e->named);
	free(e->allow);
	free(e->deny);
	free(e->entries);
	free(e->held);
	free(e);
}
