/* SPDX-License-Identifier: MIT */
/*
 * The server's listeners: --listen's sockets opened (a Unix socket's path
 * taken back from a server that died, never from one that serves), and
 * their connections accepted: a Unix socket's of the server's user only,
 * a TCP listener's of other users counted, and, out of fds, left in the
 * backlog until the next tick.
 */
#include "internal.h"
#include "server.h"
#include "peeruid.h"
#include "util.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>

/* Connections of other users open at once on the TCP listeners (admit_foreign()). */
#define FOREIGN_MAX 16

static void on_accept(struct srv *s, void *ctx, uint32_t events);

/* "unix:PATH", "[::1]:PORT", "ADDR:PORT", ":PORT", "PORT" (127.0.0.1), "localhost:PORT". */
static int parse_listen(const char *spec, struct sockaddr_storage *ss, socklen_t *len,
			struct listener *l, struct sr_error *err)
{
	char host[64];
	const char *colon = strrchr(spec, ':');
	char *end;
	long port;

	if (strncmp(spec, "unix:", 5) == 0) {
		struct sockaddr_un *un = (struct sockaddr_un *)ss;

		if (spec[5] != '/' || snprintf(un->sun_path, sizeof(un->sun_path), "%s",
					       spec + 5) >= (int)sizeof(un->sun_path))
			return sr_error_msg(err, -EINVAL,
					    "--listen %s: an absolute path of at most %zu bytes",
					    spec, sizeof(un->sun_path) - 1);
		un->sun_family = AF_UNIX;
		*len = sizeof(*un);
		l->is_unix = true;
		l->path = strdup(spec + 5);
		snprintf(l->addr, sizeof(l->addr), "unix:%.58s", spec + 5);
		snprintf(l->url, sizeof(l->url), "unix:%s", spec + 5);
		return l->path ? 0 : sr_error_errno(err, -ENOMEM, "listen");
	}
	/* Only a port: 127.0.0.1. Any other address must be written out. */
	snprintf(host, sizeof(host), "%.*s", colon ? (int)(colon - spec) : 0, spec);
	port = strtol(colon ? colon + 1 : spec, &end, 10);
	if (*end || end == (colon ? colon + 1 : spec) || port < 0 || port > 65535)
		return sr_error_msg(err, -EINVAL,
				    "--listen %s: expected unix:PATH, PORT or ADDRESS:PORT", spec);
	if (!*host || strcmp(host, "localhost") == 0)
		snprintf(host, sizeof(host), "127.0.0.1");
	if (host[0] == '[' && host[strlen(host) - 1] == ']') {
		struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)ss;

		host[strlen(host) - 1] = '\0';
		if (inet_pton(AF_INET6, host + 1, &in6->sin6_addr) != 1)
			return sr_error_msg(err, -EINVAL, "--listen %s: not an IPv6 address", spec);
		in6->sin6_family = AF_INET6;
		in6->sin6_port = htons((uint16_t)port);
		*len = sizeof(*in6);
		l->loopback = IN6_IS_ADDR_LOOPBACK(&in6->sin6_addr);
	} else {
		struct sockaddr_in *in = (struct sockaddr_in *)ss;

		if (inet_pton(AF_INET, host, &in->sin_addr) != 1)
			return sr_error_msg(err, -EINVAL,
					    "--listen %s: not an IPv4 address (write the address, "
					    "not a host name)",
					    spec);
		in->sin_family = AF_INET;
		in->sin_port = htons((uint16_t)port);
		*len = sizeof(*in);
		l->loopback = (ntohl(in->sin_addr.s_addr) >> 24) == 127;
	}
	return 0;
}

/*
 * Whether a server listens on the Unix socket at path: a connect that is
 * taken (or waits in a full backlog). ECONNREFUSED is a socket its
 * server left behind when it died.
 */
static bool unix_listened(const struct sockaddr_storage *ss, socklen_t len)
{
	_cleanup_close_ int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);

	if (fd < 0)
		return false;
	return connect(fd, (const struct sockaddr *)ss, len) == 0 || errno == EAGAIN ||
	       errno == EINPROGRESS;
}

bool srv_has_unix_listener(const struct srv *s)
{
	for (unsigned i = 0; i < s->n_listeners; i++)
		if (s->listeners[i].is_unix)
			return true;
	return false;
}

/*
 * A Unix listener's path made free to bind: a socket left by a server that
 * died is replaced; one a server listens on is not taken from it (it would
 * serve on, unreachable, and lose the path again when we end); anything
 * else is left for bind() to refuse.
 */
static int take_unix_path(struct listener *l, const struct sockaddr_storage *ss, socklen_t len,
			  const char *spec, struct sr_error *err)
{
	struct stat st;

	if (lstat(l->path, &st) < 0 || !S_ISSOCK(st.st_mode) || st.st_uid != geteuid())
		return 0;
	if (unix_listened(ss, len)) {
		free(l->path);
		l->path = NULL; /* not ours to remove */
		return sr_error_msg(err, -EADDRINUSE,
				    "--listen %s: a server is listening there already (stop it, "
				    "or --listen another)",
				    spec);
	}
	unlink(l->path);
	return 0;
}

/* A TCP listener's port, address and URL, as the kernel bound it (PORT 0: its choice). */
static void name_tcp(struct listener *l)
{
	struct sockaddr_storage ss = {0};
	socklen_t len = sizeof(ss);
	char ip[INET6_ADDRSTRLEN];

	getsockname(l->fd, (struct sockaddr *)&ss, &len);
	if (ss.ss_family == AF_INET6) {
		l->port = ntohs(((struct sockaddr_in6 *)&ss)->sin6_port);
		inet_ntop(AF_INET6, &((struct sockaddr_in6 *)&ss)->sin6_addr, ip, sizeof(ip));
		snprintf(l->addr, sizeof(l->addr), "[%s]:%d", ip, l->port);
		snprintf(l->url, sizeof(l->url), "http://[%s]:%d", ip, l->port);
	} else {
		l->port = ntohs(((struct sockaddr_in *)&ss)->sin_port);
		inet_ntop(AF_INET, &((struct sockaddr_in *)&ss)->sin_addr, ip, sizeof(ip));
		snprintf(l->addr, sizeof(l->addr), "%s:%d", ip, l->port);
		snprintf(l->url, sizeof(l->url), "http://%s:%d", ip, l->port);
	}
}

/* A listener's socket: its watch, its address and URL named as the kernel bound it. */
static int watch_tcp(struct srv *s, struct listener *l, struct sr_error *err)
{
	name_tcp(l);
	l->w = srv_watch(s, l->fd, EPOLLIN, on_accept, l);
	return l->w ? 0 : sr_error_errno(err, -ENOMEM, "listen");
}

/*
 * 127.0.0.1:PORT, with a twin on [::1] at the same port (peeruid.h:
 * sr_listen_loopback(), as published ports have): clients of
 * `localhost:PORT` (the previews' `*.localhost`) may go there first. A
 * port asked for whose ::1 side is taken is refused; port 0 is one free
 * on both. No IPv6 on the host: no twin.
 */
static int open_localhost(struct srv *s, struct listener *l, const char *spec, int port,
			  struct sr_error *err)
{
	int fd6 = -1, r;
	bool v6_taken = false;

	l->fd = sr_listen_loopback(port, false, &fd6, &port, &v6_taken);
	if (l->fd < 0) {
		r = l->fd;
		if (v6_taken)
			return sr_error_msg(
			    err, r,
			    "--listen %s: [::1]:%d, where localhost:%d also goes, is "
			    "taken (another user's?): free it, or --listen another port",
			    spec, port, port);
		return sr_error_errno(err, r, "--listen %s", spec);
	}
	s->n_listeners++;
	if ((r = watch_tcp(s, l, err)) < 0 || fd6 < 0)
		return r;
	l = &s->listeners[s->n_listeners++];
	*l = (struct listener){.fd = fd6, .loopback = true, .twin = true};
	return watch_tcp(s, l, err);
}

int srv_open_listener(struct srv *s, const char *spec, struct sr_error *err)
{
	struct listener *l = &s->listeners[s->n_listeners];
	struct sockaddr_storage ss = {0};
	socklen_t len = 0;
	int one = 1, r;
	mode_t old;

	*l = (struct listener){.fd = -1};
	r = parse_listen(spec, &ss, &len, l, err);
	if (r < 0)
		return r;
	if (ss.ss_family == AF_INET &&
	    ((struct sockaddr_in *)&ss)->sin_addr.s_addr == htonl(INADDR_LOOPBACK))
		return open_localhost(s, l, spec, ntohs(((struct sockaddr_in *)&ss)->sin_port),
				      err);
	l->fd = socket(ss.ss_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (l->fd < 0)
		return sr_error_errno(err, sr_negerrno(), "--listen %s: socket", spec);
	s->n_listeners++;
	if (l->is_unix && (r = take_unix_path(l, &ss, len, spec, err)) < 0)
		return r;
	if (!l->is_unix)
		setsockopt(l->fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	/* 0600 from the start: no moment where another user could connect (the uid check aside). */
	old = umask(0077);
	r = bind(l->fd, (struct sockaddr *)&ss, len);
	umask(old);
	if (r < 0 || listen(l->fd, 128) < 0) {
		r = sr_negerrno();
		free(l->path);
		l->path = NULL; /* not ours to remove */
		return sr_error_errno(err, r, "--listen %s", spec);
	}
	if (!l->is_unix) {
		name_tcp(l);
		if (!l->loopback)
			sr_warn(s->o.sink,
				"serve: listening on %s, beyond this host: anyone who can reach it "
				"and has the token drives your sandboxes",
				l->addr);
	}
	l->w = srv_watch(s, l->fd, EPOLLIN, on_accept, l);
	return l->w ? 0 : sr_error_errno(err, -ENOMEM, "listen");
}

/*
 * No fd for a new connection (RLIMIT_NOFILE reached: connections, and what
 * requests hold, such as E2B's commands that run on). The connection
 * stays in the listener's backlog, so the listener stays readable: watched
 * still, it would wake the loop again at once, round after round, a core
 * spent doing nothing until an fd came free. It rests until the next
 * tick (a second) instead; connections wait in the backlog meanwhile.
 */
static void rest(struct srv *s, struct listener *l)
{
	struct rlimit rl = {0};

	if (l->resting)
		return;
	if (!l->said_full) {
		(void)getrlimit(RLIMIT_NOFILE, &rl);
		sr_info(s->o.sink,
			"serve: out of file descriptors (%llu open at most): connections on %s "
			"wait",
			(unsigned long long)rl.rlim_cur, l->addr);
		l->said_full = true;
	}
	l->resting = true;
	srv_watch_events(s, l->w, 0);
}

void srv_wake_listeners(struct srv *s)
{
	for (unsigned i = 0; i < s->n_listeners; i++)
		if (s->listeners[i].resting) {
			s->listeners[i].resting = false;
			srv_watch_events(s, s->listeners[i].w, EPOLLIN);
		}
}

/*
 * Whether a TCP connection is another user's of this host: the kernel says
 * whose its client's socket is (sr_tcp_peer_uid()). Ours and root's are
 * not. On a loopback listener, one it cannot tell (its client gone
 * already) is; on a listener beyond this host, one from another host is
 * not: the token and --max-connections are all that hold there.
 */
static bool foreign(const struct listener *l, int fd)
{
	uid_t uid;

	if (sr_tcp_peer_uid(fd, &uid) < 0)
		return l->loopback;
	return !sr_uid_is_us(uid) && uid != 0;
}

/*
 * A connection of another user: one more, up to FOREIGN_MAX at once. Any
 * user of the host can connect to a TCP listener (only the token keeps
 * them out of the API), and each connection takes a slot until its head
 * comes or its time is up; so many that the server's own user found none
 * left would deny it its own server.
 */
static bool admit_foreign(struct srv *s, const struct listener *l)
{
	if (s->n_foreign < FOREIGN_MAX) {
		s->n_foreign++;
		return true;
	}
	if (!s->foreign_full_said)
		sr_info(s->o.sink,
			"serve: %d connections of other users are open on %s: more are refused",
			FOREIGN_MAX, l->addr);
	s->foreign_full_said = true;
	return false;
}

void srv_foreign_closed(struct srv *s)
{
	if (s->n_foreign > 0 && --s->n_foreign == 0)
		s->foreign_full_said = false;
}

static void on_accept(struct srv *s, void *ctx, uint32_t events)
{
	struct listener *l = ctx;

	(void)events;
	for (int i = 0; i < 64; i++) {
		int fd = accept4(l->fd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
		bool f;

		if (fd < 0) {
			if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS ||
			    errno == ENOMEM)
				rest(s, l);
			return;
		}
		l->said_full = false;
		/* The server's own user only: the socket's mode says so too, this says it surely.
		 */
		if (l->is_unix) {
			if (sr_ctl_peer_is_us(fd) < 0) {
				sr_info(s->o.sink,
					"serve: a connection of another user refused on %s",
					l->addr);
				close(fd);
			} else {
				srv_add_connection(s, l, fd, false);
			}
			continue;
		}
		f = foreign(l, fd);
		if (f && !admit_foreign(s, l)) {
			close(fd);
			continue;
		}
		if (l->loopback)
			sr_preview_accept(s, l, fd, f);
		else
			srv_add_connection(s, l, fd, f);
	}
}
