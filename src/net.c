/* SPDX-License-Identifier: MIT */
#include "net.h"
#include "nft.h"
#include "util.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netlink/netlink.h>
#include <netlink/route/link.h>
#include <poll.h>
#include <spawn.h>
#include <sys/socket.h>

/*
 * The user-mode helper that gives the sandbox egress without root: it reads
 * the sandbox's packets from a tap device and replays them as ordinary
 * sockets of the calling user on the host. slirp4netns and not pasta:
 * measured here (docs/network.md), Debian 12's pasta moved bulk TCP ~10x
 * slower and needs --runas 0:0 as root. The addresses are fixed by slirp's
 * default 10.0.2.0/24 network.
 */
struct helper {
	const char *name;
	const char *gateway; /* the helper's alias for the host */
	const char *dns;     /* the helper's resolver, forwarding to the host's */
	const char *resolv_conf;
};

static const struct helper slirp4netns = {
    .name = "slirp4netns",
    .gateway = "10.0.2.2",
    .dns = "10.0.2.3",
    .resolv_conf = "nameserver 10.0.2.3\noptions edns0\n",
};

/* The helper signals readiness within ~3 ms here; past this it is broken. */
#define READY_TIMEOUT_MS 5000

struct sr_net {
	enum sr_net_mode mode;
	const struct helper *helper;
	char *ruleset;
	/*
	 * Created before clone, so the child inherits the read end
	 * (sr_net_child_fd): it waits for the helper itself while the parent
	 * goes on, and the helper's start overlaps the child's mounts. The
	 * child closes its copy of the write end with every other inherited
	 * fd. Both ends are O_CLOEXEC.
	 */
	int ready[2];
	int exit_w; /* parent only: the helper exits when this closes (even on SIGKILL) */
	pid_t pid;
};

static void nl_socket_freep(struct nl_sock **s)
{
	if (*s)
		nl_socket_free(*s);
}

static void rtnl_link_putp(struct rtnl_link **l)
{
	if (*l)
		rtnl_link_put(*l);
}

static int nl_error(struct sr_error *err, int nlerr, const char *what)
{
	int code = nlerr == -NLE_PERM || nlerr == -NLE_NOACCESS ? -EPERM : -EIO;

	return sr_error_msg(err, code, "%s: %s", what, nl_geterror(nlerr));
}

/* A new network namespace has lo, down: even 127.0.0.1 fails until it is up. */
static int loopback_up(struct sr_error *err)
{
	_cleanup_(nl_socket_freep) struct nl_sock *sk = nl_socket_alloc();
	_cleanup_(rtnl_link_putp) struct rtnl_link *lo = NULL;
	_cleanup_(rtnl_link_putp) struct rtnl_link *change = rtnl_link_alloc();
	int r;

	if (!sk || !change)
		return sr_error_errno(err, -ENOMEM, "bring up lo");
	r = nl_connect(sk, NETLINK_ROUTE);
	if (r < 0)
		return nl_error(err, r, "bring up lo: netlink");
	r = rtnl_link_get_kernel(sk, 0, "lo", &lo);
	if (r < 0)
		return nl_error(err, r, "bring up lo");
	rtnl_link_set_flags(change, IFF_UP);
	r = rtnl_link_change(sk, lo, change, 0);
	if (r < 0)
		return nl_error(err, r, "bring up lo");
	return 0;
}

static int push_address(struct sr_strv *v, const struct sockaddr *sa, unsigned port)
{
	char a[INET6_ADDRSTRLEN], s[INET6_ADDRSTRLEN + 16];
	const void *p = sa->sa_family == AF_INET
			    ? (const void *)&((const struct sockaddr_in *)sa)->sin_addr
			    : (const void *)&((const struct sockaddr_in6 *)sa)->sin6_addr;

	if (!inet_ntop(sa->sa_family, p, a, sizeof(a)))
		return sr_negerrno();
	if (!port)
		snprintf(s, sizeof(s), "%s", a);
	else if (sa->sa_family == AF_INET)
		snprintf(s, sizeof(s), "%s:%u", a, port);
	else
		snprintf(s, sizeof(s), "[%s]:%u", a, port);
	return sr_strv_push(v, s);
}

/*
 * Host names are resolved once, here: the rule pins a name to the
 * addresses it had at start (docs/network.md). Every address, IPv4 and
 * IPv6, is listed, whichever the agent's resolver later picks.
 */
static int resolve(const char *entry, struct sr_strv *out, struct sr_error *err)
{
	const struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM};
	_cleanup_free_ char *host = NULL;
	struct addrinfo *ai = NULL;
	unsigned port;
	int r;

	r = sr_nft_split_dest(entry, &host, &port, err);
	if (r < 0)
		return r;
	if (sr_nft_is_address(host))
		return sr_strv_push(out, entry) < 0 ? sr_error_errno(err, -ENOMEM, "%s", entry) : 0;
	r = getaddrinfo(host, NULL, &hints, &ai);
	if (r != 0)
		return sr_error_msg(err, -EHOSTUNREACH, "resolve '%s': %s", host,
				    r == EAI_SYSTEM ? strerror(errno) : gai_strerror(r));
	for (struct addrinfo *i = ai; i && r >= 0; i = i->ai_next)
		if (i->ai_family == AF_INET || i->ai_family == AF_INET6)
			r = push_address(out, i->ai_addr, port);
	freeaddrinfo(ai);
	if (r < 0)
		return sr_error_errno(err, r, "resolve '%s'", host);
	return 0;
}

static int resolve_all(const struct sr_strv *in, struct sr_strv *out, const char *opt,
		       struct sr_error *err)
{
	for (size_t i = 0; i < in->n; i++) {
		int r = resolve(in->items[i], out, err);

		if (r < 0)
			return sr_error_prefix(err, "%s", opt);
	}
	return 0;
}

/*
 * The helper's sockets are the host's: without these, an agent could reach
 * a service listening on 0.0.0.0 through the host's own public address.
 * Loopback needs no entry (127/8, ::1 are refused anyway).
 */
static int host_addresses(struct sr_strv *out, struct sr_error *err)
{
	struct ifaddrs *ifa = NULL;
	int r = 0;

	if (getifaddrs(&ifa) < 0)
		return sr_error_errno(err, sr_negerrno(), "list the host's addresses");
	for (struct ifaddrs *i = ifa; i && r >= 0; i = i->ifa_next) {
		if (!i->ifa_addr || (i->ifa_flags & IFF_LOOPBACK))
			continue;
		if (i->ifa_addr->sa_family == AF_INET || i->ifa_addr->sa_family == AF_INET6)
			r = push_address(out, i->ifa_addr, 0);
	}
	freeifaddrs(ifa);
	if (r < 0)
		return sr_error_errno(err, r, "list the host's addresses");
	return 0;
}

static int prepare_egress(const struct sr_config *c, struct sr_net *n, struct sr_error *err)
{
	struct sr_strv allow = {0}, deny = {0}, host = {0};
	struct sr_nft_policy policy = {
	    .allow = &allow,
	    .deny = &deny,
	    .host = &host,
	    .dns = n->helper->dns,
	    .gateway = n->helper->gateway,
	};
	int r;

	/* The helper opens the tap as the caller: say why before it fails obscurely. */
	if (access("/dev/net/tun", R_OK | W_OK) < 0)
		return sr_error_errno(
		    err, sr_negerrno(),
		    "--net egress needs /dev/net/tun (mode 0666, as Debian ships it)");
	r = resolve_all(&c->allow, &allow, "--allow", err);
	if (r >= 0)
		r = resolve_all(&c->deny, &deny, "--deny", err);
	if (r >= 0 && allow.n == 0)
		r = host_addresses(&host, err);
	if (r >= 0)
		r = sr_nft_ruleset(&policy, &n->ruleset, err);
	sr_strv_free(&allow);
	sr_strv_free(&deny);
	sr_strv_free(&host);
	if (r < 0)
		return r;
	if (pipe2(n->ready, O_CLOEXEC) < 0)
		return sr_error_errno(err, sr_negerrno(), "pipe");
	return 0;
}

int sr_net_prepare(const struct sr_config *c, struct sr_net **ret, struct sr_error *err)
{
	struct sr_net *n = calloc(1, sizeof(*n));
	int r;

	if (!n)
		return sr_error_errno(err, -ENOMEM, "network");
	n->mode = c->net;
	n->ready[0] = n->ready[1] = n->exit_w = -1;
	if (n->mode == SR_NET_EGRESS) {
		n->helper = &slirp4netns;
		r = prepare_egress(c, n, err);
		if (r < 0) {
			sr_net_free(n);
			return r;
		}
	}
	*ret = n;
	return 0;
}

/* fd moved to a number >= 10, so that the helper's dup2()s onto 3 and 4 cannot collide. */
static int high_fd(int fd)
{
	return fcntl(fd, F_DUPFD_CLOEXEC, 10);
}

static int spawn_slirp4netns(struct sr_net *n, pid_t child, int exit_r, struct sr_error *err)
{
	_cleanup_close_ int ready_hi = high_fd(n->ready[1]);
	_cleanup_close_ int exit_hi = high_fd(exit_r);
	char pid[16];
	/*
	 * --disable-host-loopback: 10.0.2.2 must not reach the host's
	 * 127.0.0.1 (the policy refuses it too). --enable-sandbox and
	 * --enable-seccomp confine the helper itself, which parses the
	 * untrusted agent's packets. MTU 65520: bulk TCP is ~3x faster than
	 * at 1500 (docs/network.md).
	 */
	char *argv[] = {
	    (char *)"slirp4netns",
	    (char *)"--configure",
	    (char *)"--mtu=65520",
	    (char *)"--disable-host-loopback",
	    (char *)"--enable-sandbox",
	    (char *)"--enable-seccomp",
	    (char *)"--ready-fd=3",
	    (char *)"--exit-fd=4",
	    pid,
	    (char *)"eth0",
	    NULL,
	};
	posix_spawn_file_actions_t fa;
	int r;

	if (ready_hi < 0 || exit_hi < 0)
		return sr_error_errno(err, sr_negerrno(), "start %s: dup", n->helper->name);
	snprintf(pid, sizeof(pid), "%d", (int)child);
	r = posix_spawn_file_actions_init(&fa);
	if (r == 0)
		r = posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDWR, 0);
	if (r == 0)
		r = posix_spawn_file_actions_adddup2(&fa, 0, 1);
	/* Its chatter would land in the agent's stderr; -v shows it. */
	if (r == 0 && sr_log_get_level() < SR_LOG_DEBUG)
		r = posix_spawn_file_actions_adddup2(&fa, 0, 2);
	if (r == 0)
		r = posix_spawn_file_actions_adddup2(&fa, ready_hi, 3);
	if (r == 0)
		r = posix_spawn_file_actions_adddup2(&fa, exit_hi, 4);
	if (r == 0)
		r = posix_spawn_file_actions_addclosefrom_np(&fa, 5);
	if (r == 0)
		r = posix_spawnp(&n->pid, argv[0], &fa, NULL, argv, environ);
	posix_spawn_file_actions_destroy(&fa);
	if (r == ENOENT)
		return sr_error_msg(err, -ENOENT,
				    "start %s: not found (install it, or use --net none)",
				    n->helper->name);
	if (r != 0)
		return sr_error_errno(err, -r, "start %s", n->helper->name);
	return 0;
}

int sr_net_parent(struct sr_net *n, pid_t child, struct sr_error *err)
{
	int exitp[2];
	int r;

	if (n->mode != SR_NET_EGRESS)
		return 0;
	/*
	 * The helper polls the read end and exits when it reads EOF: it
	 * cannot outlive sandbox-run, however sandbox-run dies. Created after
	 * clone, so the sandbox never holds the write end.
	 */
	if (pipe2(exitp, O_CLOEXEC) < 0)
		return sr_error_errno(err, sr_negerrno(), "pipe");
	n->exit_w = exitp[1];
	r = spawn_slirp4netns(n, child, exitp[0], err);
	close(exitp[0]);
	/* Only the helper (and the child, which closes its copy) may hold it now: EOF = helper
	 * died. */
	close(steal_fd(&n->ready[1]));
	close(steal_fd(&n->ready[0]));
	return r;
}

static int wait_ready(const struct sr_net *n, struct sr_error *err)
{
	struct pollfd p = {.fd = n->ready[0], .events = POLLIN};
	char c;
	ssize_t k;
	int r;

	r = SR_RETRY(poll(&p, 1, READY_TIMEOUT_MS));
	if (r < 0)
		return sr_error_errno(err, sr_negerrno(), "wait for %s", n->helper->name);
	if (r == 0)
		return sr_error_msg(err, -ETIMEDOUT, "%s: network not ready after %d ms",
				    n->helper->name, READY_TIMEOUT_MS);
	k = SR_RETRY(read(n->ready[0], &c, 1));
	close(n->ready[0]);
	if (k < 0)
		return sr_error_errno(err, sr_negerrno(), "wait for %s", n->helper->name);
	if (k == 0)
		return sr_error_msg(err, -ECONNABORTED,
				    "%s exited before the network was up (run with -v to see why)",
				    n->helper->name);
	return 0;
}

int sr_net_child(const struct sr_net *n, struct sr_error *err)
{
	int r;

	r = loopback_up(err);
	if (r < 0 || n->mode != SR_NET_EGRESS)
		return r;
	/*
	 * Fail closed: without the policy there is no network at all.
	 * libnftables is dlopen()ed here rather than before clone: its ~1 ms
	 * of loading then overlaps the helper's start-up (docs/network.md).
	 */
	r = sr_nft_install(n->ruleset, err);
	if (r < 0)
		return r;
	return wait_ready(n, err);
}

int sr_net_child_fd(const struct sr_net *n)
{
	return n->ready[0];
}

const char *sr_net_resolv_conf(const struct sr_net *n)
{
	return n->mode == SR_NET_EGRESS ? n->helper->resolv_conf : NULL;
}

enum sr_enforce sr_net_enforced(const struct sr_net *n)
{
	return n->mode == SR_NET_EGRESS ? SR_ENFORCE_NFTABLES : SR_ENFORCE_NETNS;
}

void sr_net_free(struct sr_net *n)
{
	if (!n)
		return;
	/*
	 * Not waited for: the helper exits on EOF and deletes its tap on its
	 * own time (15-35 ms), off the invocation's path. It is reaped when
	 * sandbox-run exits.
	 */
	if (n->exit_w >= 0)
		close(n->exit_w);
	if (n->ready[0] >= 0)
		close(n->ready[0]);
	if (n->ready[1] >= 0)
		close(n->ready[1]);
	free(n->ruleset);
	free(n);
}
