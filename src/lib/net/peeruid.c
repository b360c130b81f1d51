/* SPDX-License-Identifier: MIT */
/*
 * Whose is a loopback TCP connection: the client's socket is in our
 * network namespace too, and sock_diag finds it by its four-tuple (its
 * source is our peer, its destination us) and says which uid made it.
 * One request, one answer, on a netlink socket of its own. And the
 * listeners such connections come to: both loopback addresses at once.
 */
#include "peeruid.h"
#include "proc.h"
#include "util.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/inet_diag.h>
#include <linux/netlink.h>
#include <linux/sock_diag.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

/* What a uid this user namespace does not map reads as (65534 unless set otherwise). */
/* An address and port of ours into the diag id's form (addresses as __be32[4]). */
static int to_id(const struct sockaddr_storage *ss, __be32 addr[4], __be16 *port)
{
	if (ss->ss_family == AF_INET) {
		const struct sockaddr_in *in = (const struct sockaddr_in *)ss;

		addr[0] = in->sin_addr.s_addr;
		*port = in->sin_port;
		return 0;
	}
	if (ss->ss_family == AF_INET6) {
		const struct sockaddr_in6 *in6 = (const struct sockaddr_in6 *)ss;

		memcpy(addr, &in6->sin6_addr, 16);
		*port = in6->sin6_port;
		return 0;
	}
	return -EAFNOSUPPORT;
}

int sr_tcp_peer_uid(int fd, uid_t *ret)
{
	struct sockaddr_storage me, peer;
	socklen_t ml = sizeof(me), pl = sizeof(peer);
	struct {
		struct nlmsghdr nlh;
		struct inet_diag_req_v2 r;
	} req = {
	    .nlh = {.nlmsg_len = sizeof(req),
		    .nlmsg_type = SOCK_DIAG_BY_FAMILY,
		    .nlmsg_flags = NLM_F_REQUEST},
	    .r = {.sdiag_protocol = IPPROTO_TCP,
		  .idiag_states = ~0U,
		  .id.idiag_cookie = {INET_DIAG_NOCOOKIE, INET_DIAG_NOCOOKIE}},
	};
	struct sockaddr_nl kernel = {.nl_family = AF_NETLINK};
	union {
		struct nlmsghdr nlh;
		char buf[8192];
	} ans;
	const struct inet_diag_msg *msg;
	_cleanup_close_ int nl = -1;
	ssize_t n;

	if (getsockname(fd, (struct sockaddr *)&me, &ml) < 0 ||
	    getpeername(fd, (struct sockaddr *)&peer, &pl) < 0)
		return sr_negerrno();
	if (me.ss_family != peer.ss_family)
		return -EAFNOSUPPORT;
	req.r.sdiag_family = (__u8)peer.ss_family;
	/* The client's socket: from it, its source is our peer, its destination us. */
	if (to_id(&peer, req.r.id.idiag_src, &req.r.id.idiag_sport) < 0 ||
	    to_id(&me, req.r.id.idiag_dst, &req.r.id.idiag_dport) < 0)
		return -EAFNOSUPPORT;
	nl = socket(AF_NETLINK, SOCK_DGRAM | SOCK_CLOEXEC, NETLINK_SOCK_DIAG);
	if (nl < 0)
		return sr_negerrno();
	if (sendto(nl, &req, sizeof(req), 0, (struct sockaddr *)&kernel, sizeof(kernel)) < 0)
		return sr_negerrno();
	n = SR_RETRY(recv(nl, &ans, sizeof(ans), 0));
	if (n < 0)
		return sr_negerrno();
	if ((size_t)n < sizeof(ans.nlh) || !NLMSG_OK(&ans.nlh, (size_t)n))
		return -EIO;
	if (ans.nlh.nlmsg_type == NLMSG_ERROR) {
		const struct nlmsgerr *e = NLMSG_DATA(&ans.nlh);

		if (ans.nlh.nlmsg_len < NLMSG_LENGTH(sizeof(*e)))
			return -EIO;
		return e->error < 0 ? e->error : -EIO;
	}
	if (ans.nlh.nlmsg_type != SOCK_DIAG_BY_FAMILY ||
	    ans.nlh.nlmsg_len < NLMSG_LENGTH(sizeof(struct inet_diag_msg)))
		return -EIO;
	msg = NLMSG_DATA(&ans.nlh);
	/*
	 * The socket asked for, connected: a client bound to a device is not
	 * found by the exact lookup, which then answers with a listener on
	 * its address and port (anyone's, and one that can be waited for).
	 */
	if (msg->idiag_family != req.r.sdiag_family || msg->idiag_state == TCP_LISTEN ||
	    msg->idiag_state == TCP_CLOSE || msg->id.idiag_sport != req.r.id.idiag_sport ||
	    msg->id.idiag_dport != req.r.id.idiag_dport ||
	    memcmp(msg->id.idiag_src, req.r.id.idiag_src, sizeof(msg->id.idiag_src)) != 0 ||
	    memcmp(msg->id.idiag_dst, req.r.id.idiag_dst, sizeof(msg->id.idiag_dst)) != 0)
		return -ENOENT;
	/*
	 * Closed by its program (an orphan, or the time-wait remnant the
	 * kernel keeps of one), it is nobody's: such a socket reports uid 0.
	 */
	if (msg->idiag_inode == 0)
		return -ENOENT;
	*ret = msg->idiag_uid;
	return 0;
}

bool sr_uid_is_us(uid_t uid)
{
	/* A uid our user namespace does not map reads as the overflow uid: not ours to tell. */
	return uid == geteuid() && uid != (uid_t)sr_proc_overflow_uid();
}

/* A socket listening on 127.0.0.1:port or [::1]:port (0: the kernel's choice), or -errno. */
static int listen_on(int family, int port)
{
	struct sockaddr_in in = {.sin_family = AF_INET,
				 .sin_port = htons((uint16_t)port),
				 .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	struct sockaddr_in6 in6 = {.sin6_family = AF_INET6,
				   .sin6_port = htons((uint16_t)port),
				   .sin6_addr = IN6ADDR_LOOPBACK_INIT};
	const struct sockaddr *sa =
	    family == AF_INET ? (struct sockaddr *)&in : (struct sockaddr *)&in6;
	socklen_t len = family == AF_INET ? sizeof(in) : sizeof(in6);
	int one = 1, r, fd = socket(family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);

	if (fd < 0)
		return sr_negerrno();
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (family == AF_INET6)
		setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof(one));
	if (bind(fd, sa, len) < 0 || listen(fd, 128) < 0) {
		r = sr_negerrno();
		close(fd);
		return r;
	}
	return fd;
}

static int bound_port(int fd)
{
	struct sockaddr_in sa;
	socklen_t len = sizeof(sa);

	return getsockname(fd, (struct sockaddr *)&sa, &len) < 0 ? -1 : ntohs(sa.sin_port);
}

#define LOOPBACK_TRIES 16

int sr_listen_loopback(int port, bool fall_back, int *ret_fd6, int *ret_port, bool *ret_v6_taken)
{
	int tries = fall_back || port == 0 ? LOOPBACK_TRIES : 1;

	if (ret_v6_taken)
		*ret_v6_taken = false;
	for (int attempt = 0; attempt < tries; attempt++) {
		int fd = listen_on(AF_INET, attempt ? 0 : port), fd6, got;

		if ((fd == -EADDRINUSE || fd == -EACCES) && tries > 1)
			continue;
		if (fd < 0)
			return fd;
		got = bound_port(fd);
		fd6 = got > 0 ? listen_on(AF_INET6, got) : -EIO;
		if (fd6 >= 0 || fd6 == -EAFNOSUPPORT || fd6 == -EADDRNOTAVAIL) {
			*ret_fd6 = fd6 >= 0 ? fd6 : -1;
			*ret_port = got;
			return fd;
		}
		close(fd);
		if (fd6 != -EADDRINUSE && fd6 != -EACCES)
			return fd6;
		if (ret_v6_taken)
			*ret_v6_taken = true;
	}
	return -EADDRINUSE;
}
