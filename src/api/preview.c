/* SPDX-License-Identifier: MIT */
/*
 * Previews: E2B's getHost(port) names "PORT-ID.DOMAIN", and E2B's edge
 * proxy routes each connection by its Host to that port of that sandbox.
 * serve tells the SDK DOMAIN is "localhost:APIPORT", and does the same on
 * its loopback TCP listeners: it peeks at a new connection's request head
 * (MSG_PEEK: nothing is consumed), and one whose Host is PORT-ID... is
 * relayed, bytes as they are, to the sandbox's PORT (published by its
 * keeper on 127.0.0.1, as `sandbox-run port` does); any other goes to the
 * API. `*.localhost` resolves to 127.0.0.1 in browsers and curl; other
 * clients connect to 127.0.0.1:APIPORT with that Host header.
 *
 * A preview needs no token (a browser has none to send): only this host
 * reaches a loopback listener, and one of another address serves no
 * previews at all. Of this host's users, only the server's own: the
 * client's socket is in our network namespace, and the kernel says whose
 * it is (sr_tcp_peer_uid(), sock_diag), as the Unix socket's peer
 * credentials do. And only the sandboxes this server made, by their whole
 * ids, are previewed (previewable()): ids are not secrets (cgroup names
 * show them to every user of the host), and a preview must not open what
 * the API never made.
 */
#include "internal.h"
#include "peeruid.h"
#include "preview-scan.h"
#include "relay.h"
#include "util.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#define HEAD_PEEK    8192
#define HEAD_WAIT_NS (10ll * 1000000000)
#define PREVIEWS_MAX 256

enum preview_state {
	P_HEAD,	   /* waiting for the request's head */
	P_PORT,	   /* asking the keeper to publish the port */
	P_CONNECT, /* connecting to it */
	P_RELAY,
};

struct preview {
	struct srv *s;
	const struct listener *l;
	enum preview_state state;
	int fd, up;
	struct watch *w, *wu;
	struct kcall k;
	int port;
	bool foreign;	     /* another user's connection: counted while its fd is ours */
	int64_t deadline_ns; /* P_HEAD: its head's; P_RELAY: a half-closed relay's, while idle */
	struct sr_relay relay;
	char host[SR_PREVIEW_HOST_MAX]; /* its first request's Host */
	struct sr_preview_scan scan;	/* what the client sends next (relay_check()) */
	struct preview *next;
};

static void preview_free(struct preview *p)
{
	struct preview **pp = &srv_lists(p->s)->previews;

	while (*pp && *pp != p)
		pp = &(*pp)->next;
	if (*pp)
		*pp = p->next;
	kcall_stop(&p->k);
	srv_unwatch(p->s, &p->w);
	srv_unwatch(p->s, &p->wu);
	if (p->foreign && p->fd >= 0)
		srv_foreign_closed(p->s);
	sr_closep(&p->fd);
	sr_closep(&p->up);
	/* The bytes relayed, a browser's and the sandbox's, not left for a keeper forked later. */
	explicit_bzero(&p->relay, sizeof(p->relay));
	explicit_bzero(&p->scan, sizeof(p->scan));
	free(p);
}

/* A short answer of our own, then the end (the request was never the API's). */
static void refuse(struct preview *p, int status, const char *text)
{
	char buf[1400];
	int n = snprintf(buf, sizeof(buf),
			 "HTTP/1.1 %d %s\r\nContent-Type: text/plain\r\nContent-Length: %zu\r\n"
			 "Connection: close\r\n\r\nsandbox-run: %s\n",
			 status,
			 status == 403	 ? "Forbidden"
			 : status == 404 ? "Not Found"
					 : "Bad Gateway",
			 strlen(text) + 14, text);
	char drain[HEAD_PEEK];
	ssize_t got;

	/* The head, only peeked so far, read: closed unread, the answer would go as a reset. */
	got = recv(p->fd, drain, sizeof(drain), MSG_DONTWAIT);
	/* Whatever it shows (the token) not left on the stack, as on_head's. */
	if (got > 0)
		explicit_bzero(drain, (size_t)got);
	(void)!send(p->fd, buf, (size_t)n, MSG_NOSIGNAL | MSG_DONTWAIT);
	preview_free(p);
}

static void on_relay_client(struct srv *s, void *ctx, uint32_t events);
static void on_relay_up(struct srv *s, void *ctx, uint32_t events);

/*
 * What the client sends goes in only while it is for this preview: the
 * connection was routed by its first request, but an HTTP client that
 * keeps connections by address sends the next of its requests to
 * 127.0.0.1:PORT on it, whatever their Host -- an API call with the token,
 * another sandbox's preview -- and the sandbox would get it and answer
 * it. Neither a request for another Host nor the token ever reaches the
 * sandbox: the connection is closed first (the client's next one is
 * routed afresh); an end of a read that may begin the token waits for
 * the next read.
 */
static ssize_t relay_check(void *ctx, const char *buf, size_t len)
{
	struct preview *p = ctx;
	ssize_t go = sr_api_preview_scan(&p->scan, buf, len);

	if (go < 0)
		sr_debug(srv_opts(p->s)->sink,
			 "serve: a preview's connection closed: a request for another Host, or "
			 "the token, came on it");
	return go;
}

static void relay_events(struct preview *p)
{
	srv_watch_events(p->s, p->w, (uint32_t)sr_relay_events(&p->relay, 0));
	srv_watch_events(p->s, p->wu, (uint32_t)sr_relay_events(&p->relay, 1));
}

static void on_connected(struct srv *s, void *ctx, uint32_t events)
{
	struct preview *p = ctx;
	int e = 0;
	socklen_t len = sizeof(e);

	(void)events;
	if (getsockopt(p->up, SOL_SOCKET, SO_ERROR, &e, &len) < 0 || e)
		return refuse(p, 502, "the sandbox's port could not be reached");
	srv_unwatch(s, &p->wu);
	p->state = P_RELAY;
	sr_relay_init(&p->relay, p->fd, p->up);
	sr_api_preview_scan_init(&p->scan, p->host, srv_token(s));
	p->relay.check = relay_check;
	p->relay.check_ctx = p;
	p->w = srv_watch(s, p->fd, 0, on_relay_client, p);
	p->wu = srv_watch(s, p->up, 0, on_relay_up, p);
	if (!p->w || !p->wu)
		return preview_free(p);
	relay_events(p);
}

/* The client's side (fd) or the sandbox's (up) is ready, as events says. */
static void relay_step(struct preview *p, short client, short up)
{
	struct srv *s = p->s;

	if (!sr_relay_step(&p->relay, client, up))
		return preview_free(p);
	/*
	 * One side ended (a browser closed its connection: its end reaches the
	 * sandbox as a shutdown), the other may never: a relay that then moves
	 * nothing for --client-timeout is over (sr_preview_tick()). An agent
	 * that never closes would otherwise keep every connection the user's
	 * clients ever made to it.
	 */
	if (p->relay.dir[0].eof || p->relay.dir[1].eof)
		p->deadline_ns =
		    sr_monotonic_ns() + (int64_t)srv_opts(s)->client_timeout_s * 1000000000;
	relay_events(p);
}

static void on_relay_client(struct srv *s, void *ctx, uint32_t events)
{
	(void)s;
	relay_step(ctx, (short)events, 0);
}

static void on_relay_up(struct srv *s, void *ctx, uint32_t events)
{
	(void)s;
	relay_step(ctx, 0, (short)events);
}

static void port_msg(struct kcall *k, json_t *msg)
{
	struct preview *p = container_of(k, struct preview, k);
	json_t *hp = json_object_get(json_object_get(msg, "port"), "host_port");
	struct sockaddr_in sa = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	struct sr_error err = {0};

	kcall_stop(k);
	if (sr_ctl_reply_error(msg, &err) < 0 || !json_is_integer(hp))
		return refuse(p, 502, err.code ? err.msg : "no port came back");
	sa.sin_port = htons((uint16_t)json_integer_value(hp));
	p->up = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (p->up < 0 ||
	    (connect(p->up, (struct sockaddr *)&sa, sizeof(sa)) < 0 && errno != EINPROGRESS))
		return refuse(p, 502, "the sandbox's port could not be reached");
	p->state = P_CONNECT;
	p->wu = srv_watch(p->s, p->up, EPOLLOUT, on_connected, p);
	if (!p->wu)
		preview_free(p);
}

static void port_hup(struct kcall *k)
{
	refuse(container_of(k, struct preview, k), 502, "the sandbox is gone");
}

/*
 * Only a sandbox this server made, named by its whole id: a preview needs
 * no token, so the Host must not open what the API never made (the
 * user's `create`d sandboxes, another server's, warm ones not yet taken)
 * nor find one by a name or a 4-digit prefix that anyone may try.
 */
static bool previewable(struct srv *s, const char *ref)
{
	return strlen(ref) == 32 && strspn(ref, "0123456789abcdef") == 32 &&
	       srv_made_find(s, ref) != NULL;
}

/* The head is there: a preview (its Host says PORT-ID.), or the API's. */
static void route(struct preview *p, const char *host)
{
	struct sr_error err = {0};
	char ref[65], why[160];
	json_t *req;
	uid_t uid;
	int r, one = 1;

	/*
	 * on_head's wait for the rest of the head is over: whoever reads next
	 * (libmicrohttpd, the relay) is woken by any byte again, not only once
	 * more than the head's first piece has come (a later request, a
	 * WebSocket's frame, may be shorter).
	 */
	setsockopt(p->fd, SOL_SOCKET, SO_RCVLOWAT, &one, sizeof(one));
	if (!host || !sr_api_preview_host(host, &p->port, ref)) {
		int fd = steal_fd(&p->fd);
		const struct listener *l = p->l;
		struct srv *s = p->s;
		bool foreign = p->foreign;

		preview_free(p);
		srv_add_connection(s, l, fd, foreign);
		return;
	}
	if ((r = sr_tcp_peer_uid(p->fd, &uid)) < 0) {
		snprintf(why, sizeof(why), "whose connection this is, the kernel did not say (%s)",
			 strerror(-r));
		return refuse(p, 403, why);
	}
	if (!sr_uid_is_us(uid)) {
		snprintf(
		    why, sizeof(why),
		    "a preview is for its server's user (uid %u) only; this connection is uid %u's",
		    (unsigned)geteuid(), (unsigned)uid);
		return refuse(p, 403, why);
	}
	snprintf(p->host, sizeof(p->host), "%s", host);
	if (!previewable(p->s, ref))
		return refuse(p, 404,
			      "no sandbox of this server has that id (a preview names "
			      "a sandbox by its whole id)");
	srv_unwatch(p->s, &p->w);
	p->state = P_PORT;
	p->k.on_msg = port_msg;
	p->k.on_hup = port_hup;
	/* Published for this relay alone: the keeper takes the server's user's connections only. */
	req = json_pack("{sssisb}", "op", "port", "port", p->port, "owner_only", 1);
	if (!req || kcall_start(p->s, ref, req, NULL, 0, &p->k, &err) < 0) {
		if (req)
			json_decref(req);
		return refuse(p, 404, err.code ? err.msg : "out of memory");
	}
	json_decref(req);
}

static void on_head(struct srv *s, void *ctx, uint32_t events)
{
	struct preview *p = ctx;
	char buf[HEAD_PEEK], host[256];
	ssize_t n = recv(p->fd, buf, sizeof(buf), MSG_PEEK | MSG_DONTWAIT);
	int lowat, r;

	(void)s;
	if (n < 0 && (errno == EAGAIN || errno == EINTR))
		return;
	if (n <= 0)
		return preview_free(p);
	r = sr_api_sniff_host(buf, (size_t)n, host, sizeof(host));
	/* An API request's head shows the token: not left on the stack, which keepers copy. */
	explicit_bzero(buf, (size_t)n);
	if (r != 0 || n == HEAD_PEEK)
		return route(p, r == 1 ? host : NULL);
	/*
	 * Half a head, and the client has shut its side: the rest never comes.
	 * Dropped now; else the hang-up, which SO_RCVLOWAT does not hold back,
	 * wakes the loop at once, round after round, until the deadline.
	 */
	if (events & (EPOLLRDHUP | EPOLLHUP | EPOLLERR))
		return preview_free(p);
	/* Not all of it yet: woken again only once more has come (poll honours SO_RCVLOWAT). */
	lowat = (int)n + 1;
	setsockopt(p->fd, SOL_SOCKET, SO_RCVLOWAT, &lowat, sizeof(lowat));
}

void sr_preview_accept(struct srv *s, const struct listener *l, int fd, bool foreign)
{
	struct preview *p;
	size_t n = 0;

	/* Those not relaying yet: a relay is the user's own connection, bounded by fds alone. */
	for (p = srv_lists(s)->previews; p; p = p->next)
		n += p->state != P_RELAY;
	p = n < PREVIEWS_MAX ? calloc(1, sizeof(*p)) : NULL;
	if (!p) {
		close(fd);
		if (foreign)
			srv_foreign_closed(s);
		return;
	}
	*p = (struct preview){
	    .s = s, .l = l, .fd = fd, .up = -1, .state = P_HEAD, .foreign = foreign};
	p->k.fd = -1;
	p->deadline_ns = sr_monotonic_ns() + HEAD_WAIT_NS;
	p->w = srv_watch(s, fd, EPOLLIN | EPOLLRDHUP, on_head, p);
	if (!p->w) {
		free(p);
		close(fd);
		if (foreign)
			srv_foreign_closed(s);
		return;
	}
	p->next = srv_lists(s)->previews;
	srv_lists(s)->previews = p;
}

void sr_preview_tick(struct srv *s)
{
	int64_t now = sr_monotonic_ns();

	for (struct preview *p = srv_lists(s)->previews, *next; p; p = next) {
		next = p->next;
		if ((p->state == P_HEAD ||
		     (p->state == P_RELAY && (p->relay.dir[0].eof || p->relay.dir[1].eof))) &&
		    now > p->deadline_ns)
			preview_free(p);
	}
}

void sr_preview_free_all(struct srv *s)
{
	while (srv_lists(s)->previews)
		preview_free(srv_lists(s)->previews);
}
