/* SPDX-License-Identifier: MIT */
#include "net.h"
#include "egress.h"
#include "fault.h"
#include "link.h"
#include "nft.h"
#include "policy.h"
#include "protocol.h"
#include "resolver.h"
#include "spawn.h"
#include "util.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/if_tun.h>
#include <net/if.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>

/*
 * The user-mode helper that gives the sandbox egress without root: it reads
 * the sandbox's packets from a tap device and replays them as ordinary
 * sockets of the calling user on the host. --net-helper picks one; "auto"
 * takes slirp4netns where installed, which is ready for the agent's first
 * connection 60-90 ms sooner, and pasta otherwise, with which the agent
 * starts 3-9 ms sooner and uploads twice as fast (docs/network.md). To
 * confine itself the helper becomes uid 0 in the user namespace that owns
 * the sandbox's network, which is why an egress sandbox is set up in an
 * outer namespace mapping 0 (userns.h). Both get the same fixed addresses
 * (slirp's default 10.0.2.0/24), so the policy does not depend on the
 * helper.
 *
 * slirp4netns opens the tap itself, inside the sandbox's network
 * namespace, and is started right after clone; the sandbox waits until it
 * says the network is up. pasta is handed its tap instead (takes_tap): PID
 * 1 makes it from /dev/net/tun, which it opened as the caller, configures
 * it (sr_link_configure) and installs the policy; once the agent runs it
 * sends the tap to the supervisor, which starts pasta on it. Nothing
 * waits for pasta: what the agent sends before pasta reads waits in the
 * tap's queue (500 frames), and the helper's addresses need no ARP
 * (permanent neighbour entries), so pasta's start-up overlaps the agent's
 * (docs/network.md).
 *
 * The fds they start with: 3 the write end of the ready pipe (slirp4netns)
 * or the tap (pasta), 4 the read end of the exit pipe (slirp4netns), 5 the
 * sandbox's network namespace. They start as uid 0 of the sandbox's outer
 * user namespace.
 */
struct helper {
	const char *name;
	const char *package;	 /* Debian's, to say what to install */
	const char *const *argv; /* argv[0] is looked up in $PATH */
	/* Parent: what ends it in sr_net_free (0: it ends on its own, by the exit fd). */
	int stop_signal;
	/* Handed the sandbox's tap on fd 3 rather than opening one (above). */
	bool takes_tap;
	/* The argument that keeps the gateway off the host's loopback: left out for --allow-host.
	 */
	const char *no_host_loopback;
	/* With IPv6 (the host has a default route for it): what to add, and to leave out. */
	const char *const *ipv6_args;
	const char *ipv4_only;
};

#define SR_NET_IFNAME	   "eth0"     /* the helper's tap in the sandbox */
#define SR_NET_GATEWAY	   "10.0.2.2" /* the helper's alias for the host */
#define SR_NET_DNS	   "10.0.2.3" /* the helper's resolver, forwarding to the host's */
#define SR_NET_RESOLV_CONF "nameserver " SR_NET_DNS "\noptions edns0\n"
/* With names in the policy: the sandbox's resolver (resolver.h), its only DNS. */
#define SR_NET_RESOLV_CONF_NAMES "nameserver " SR_RESOLVER_ADDRESS "\noptions edns0\n"
#define SR_NET_ADDRESS		 "10.0.2.100" /* the sandbox's */
#define SR_NET_PREFIX		 "24"
/*
 * IPv6, slirp4netns's prefix (fd00::/64, a ULA: refused as a destination
 * like every private range) for both helpers. The sandbox's address and
 * route are set by PID 1, not learnt from router advertisements: those
 * would take a second (duplicate address detection), and the policy
 * drops them.
 */
#define SR_NET_ADDRESS6 "fd00::100"
#define SR_NET_PREFIX6	"64"
#define SR_NET_GATEWAY6 "fd00::2" /* the helper's, and its alias for the host */
#define SR_NET_MTU	65520
/* pasta's, for the gateway and resolver: locally administered, unicast. */
#define SR_NET_HELPER_MAC "9a:55:9a:55:9a:55"

/* slirp4netns was ready 3-20 ms after the fork where measured: past this, broken. */
#define READY_TIMEOUT_MS 5000

struct sr_net {
	enum sr_net_mode mode;
	const struct sr_sink *sink; /* the helper's end is said there; -vv shows its stderr */
	const struct helper *helper;
	char *helper_path;
	/* Who the helper runs as on the host: the sandbox's host ids (userns.h). */
	uid_t helper_uid;
	gid_t helper_gid;
	char *ruleset;
	/*
	 * Created before clone, so the child inherits the read end
	 * (sr_net_child_fd): it waits for the helper itself while the parent
	 * goes on, and the helper's start overlaps the child's mounts. The
	 * child closes its copy of the write end with every other inherited
	 * fd, so EOF means the helper died. Both ends are O_CLOEXEC.
	 */
	int ready[2];
	int exit_w; /* parent only: slirp4netns exits when this closes (even on SIGKILL) */
	/* Parent: the sandbox's namespaces, opened before GO, until the helper has them. */
	int userns, netns;
	pid_t pid; /* the helper, until it is reaped */
	int pidfd; /* the helper, for sr_net_watch_fd; -1 without pidfd_open */
	/* How it ended, once reaped (waitpid's return and status), and whether that was said. */
	bool ended, said;
	pid_t ended_w;
	int ended_status;
	/* --allow-host: the helper takes the gateway to the host's loopback. */
	bool host_loopback;
	/* The host routes IPv6: the sandbox gets it too. */
	bool ipv6;
	/* While the sandbox lives: the resolver, the sets, the record (egress.h). */
	struct sr_egress *egress;
	int epfd; /* the helper's pidfd and the egress's fd, for sr_net_watch_fd */
};

static int helper_gone(const struct sr_net *n, struct sr_error *err)
{
	return sr_error_msg(err, -ECONNABORTED,
			    "%s exited before the network was up (run with -v to see why)",
			    n->helper->name);
}

static int not_ready(const struct sr_net *n, struct sr_error *err)
{
	return sr_error_msg(err, -ETIMEDOUT, "%s: network not ready after %d ms", n->helper->name,
			    READY_TIMEOUT_MS);
}

/* slirp4netns writes a byte to its --ready-fd once eth0 is configured. */
static int wait_ready_fd(const struct sr_net *n, struct sr_error *err)
{
	struct pollfd p = {.fd = n->ready[0], .events = POLLIN};
	char c;
	ssize_t k;
	int r;

	r = SR_RETRY(poll(&p, 1, READY_TIMEOUT_MS));
	if (r < 0)
		return sr_error_errno(err, sr_negerrno(), "wait for %s", n->helper->name);
	if (r == 0)
		return not_ready(n, err);
	k = SR_RETRY(read(n->ready[0], &c, 1));
	if (k < 0)
		return sr_error_errno(err, sr_negerrno(), "wait for %s", n->helper->name);
	if (k == 0)
		return helper_gone(n, err);
	return 0;
}

/*
 * --disable-host-loopback: 10.0.2.2 must not reach the host's 127.0.0.1
 * (the policy refuses it too). --enable-sandbox and --enable-seccomp
 * confine the helper itself, which parses the untrusted agent's packets:
 * its own mount namespace on an empty root, every capability dropped but
 * CAP_NET_BIND_SERVICE, a syscall filter. That needs uid 0 in a user
 * namespace: like every helper it is started in the sandbox's outer one,
 * where 0 is the caller (userns.h), so it holds no capability on the host.
 * MTU 65520: bulk TCP is ~3x faster than at 1500 (docs/network.md).
 */
/* clang-format off */
static const char *const slirp4netns_argv[] = {
    "slirp4netns",
    "--configure",
    "--mtu=65520",
    "--disable-host-loopback",
    "--enable-sandbox",
    "--enable-seccomp",
    "--ready-fd=3",
    "--exit-fd=4",
    "--netns-type=path",
    "/proc/self/fd/5",
    SR_NET_IFNAME,
    NULL,
};
/* clang-format on */

/*
 * --fd=3: the tap PID 1 made (above); pasta leaves its configuration to
 * us, and must still agree with it: the addresses, the MTU, its own MAC.
 * Every port forwarding off (-t/-u/-T/-U none): by default pasta forwards
 * the host's bound ports into the sandbox and the sandbox's out to the
 * host's loopback. --no-map-gw: 10.0.2.2 is not the host's loopback.
 * IPv4 only, as slirp4netns. It is started as uid 0 of the sandbox's outer
 * user namespace, not of the host's, so it keeps those ids (as host root
 * it would switch to "nobody"). pasta confines itself (namespaces,
 * seccomp) unasked.
 */
/* clang-format off */
static const char *const pasta_argv[] = {
    "pasta",
    "--fd=3",
    "--foreground",
    "--quiet",
    "--ipv4-only",
    "--tcp-ports=none",
    "--udp-ports=none",
    "--tcp-ns=none",
    "--udp-ns=none",
    "--ns-ifname=" SR_NET_IFNAME,
    "--address=" SR_NET_ADDRESS,
    "--netmask=" SR_NET_PREFIX,
    "--mac-addr=" SR_NET_HELPER_MAC,
    "--gateway=" SR_NET_GATEWAY,
    "--dns-forward=" SR_NET_DNS,
    "--no-map-gw",
    "--no-dhcp",
    "--mtu=65520",
    "--netns=/proc/self/fd/5",
    NULL,
};
/* clang-format on */

/* slirp4netns 1.2 calls it experimental; it forwards TCP and UDP over IPv6 as over IPv4. */
static const char *const slirp4netns_ipv6[] = {"--enable-ipv6", NULL};
static const char *const pasta_ipv6[] = {"--address=" SR_NET_ADDRESS6, "--gateway=" SR_NET_GATEWAY6,
					 NULL};

static const struct helper slirp4netns = {
    .name = "slirp4netns",
    .package = "slirp4netns",
    .argv = slirp4netns_argv,
    .no_host_loopback = "--disable-host-loopback",
    .ipv6_args = slirp4netns_ipv6,
};

static const struct helper pasta = {
    .name = "pasta",
    .package = "passt",
    .argv = pasta_argv,
    .stop_signal = SIGKILL,
    .takes_tap = true,
    .no_host_loopback = "--no-map-gw",
    .ipv6_args = pasta_ipv6,
    .ipv4_only = "--ipv4-only",
};

/* The tap PID 1 makes for pasta, as pasta expects it (IPv6 where the host has it). */
static const char *const helper_neighbours[] = {SR_NET_GATEWAY, SR_NET_DNS, SR_NET_GATEWAY6, NULL};
static const struct sr_link_config tap_config = {
    .ifname = SR_NET_IFNAME,
    .mtu = SR_NET_MTU,
    .address = SR_NET_ADDRESS "/" SR_NET_PREFIX,
    .gateway = SR_NET_GATEWAY,
    .peer_mac = SR_NET_HELPER_MAC,
    .peers = helper_neighbours,
};

/* By --net-helper. */
static const struct helper *const helpers[_SR_NET_HELPER_MAX] = {
    [SR_NET_HELPER_SLIRP4NETNS] = &slirp4netns,
    [SR_NET_HELPER_PASTA] = &pasta,
};

/* "auto" takes the first one installed, in this order. */
static const enum sr_net_helper auto_order[] = {SR_NET_HELPER_SLIRP4NETNS, SR_NET_HELPER_PASTA};

/*
 * Whether the helper may open path with `want` (R_OK/W_OK/X_OK), and search
 * every directory above it. It runs as the caller, except that a root
 * caller's helper runs as the sandbox's unprivileged ids with no groups
 * (userns.h): access(2) would answer for root, who may do anything.
 */
static int helper_may(const struct sr_net *n, const char *path, int want)
{
	char dir[PATH_MAX], *slash;

	if (geteuid() != 0)
		return access(path, want) < 0 ? sr_negerrno() : 0;
	snprintf(dir, sizeof(dir), "%s", path);
	for (;;) {
		struct stat st;
		unsigned bits;

		if (stat(dir, &st) < 0)
			return sr_negerrno();
		bits = st.st_uid == n->helper_uid   ? st.st_mode >> 6
		       : st.st_gid == n->helper_gid ? st.st_mode >> 3
						    : st.st_mode;
		if ((bits & (unsigned)want) != (unsigned)want)
			return -EACCES;
		slash = strrchr(dir, '/');
		if (!slash || slash == dir)
			return 0;
		*slash = '\0';
		want = X_OK;
	}
}

/*
 * Looked up before the clone, so that a missing helper is a clear error
 * and not a helper that died in the fork before exec.
 */
static int find_program(const struct sr_net *n, const char *name, char **ret)
{
	const char *path = getenv("PATH");
	int r = -ENOENT;

	if (!path || !*path)
		path = "/usr/local/bin:/usr/bin:/bin";
	while (*path) {
		size_t len = strcspn(path, ":");
		char *full;

		if (len > 0) {
			if (asprintf(&full, "%.*s/%s", (int)len, path, name) < 0)
				return -ENOMEM;
			if (access(full, F_OK) == 0) {
				r = helper_may(n, full, X_OK);
				if (r == 0) {
					*ret = full;
					return 0;
				}
			}
			free(full);
		}
		path += len + (path[len] == ':');
	}
	return r;
}

static int find_helper(enum sr_net_helper want, struct sr_net *n, struct sr_error *err)
{
	bool any = want == SR_NET_HELPER_AUTO;
	size_t n_try = any ? SR_ARRAY_SIZE(auto_order) : 1;
	int r = -ENOENT;

	for (size_t i = 0; i < n_try && r == -ENOENT; i++) {
		n->helper = helpers[any ? auto_order[i] : want];
		r = find_program(n, n->helper->argv[0], &n->helper_path);
	}
	if (r == -ENOENT && any)
		return sr_error_msg(err, r,
				    "--net egress needs slirp4netns or pasta: neither is in $PATH "
				    "(install one, or use --net none)");
	if (r == -ENOENT)
		return sr_error_msg(
		    err, r,
		    "network helper %s (--net-helper, [network] helper): %s is not in "
		    "$PATH (install %s, or use auto)",
		    n->helper->name, n->helper->name, n->helper->package);
	if (r < 0)
		return sr_error_errno(err, r, "%s%s", n->helper->name,
				      geteuid() == 0 ? " (the network helper runs unprivileged)"
						     : "");
	return 0;
}

/*
 * Whether the host has an IPv6 default route (in the network namespace
 * sandbox-run runs in), which the helper's sockets would take. Without
 * one the sandbox gets no IPv6 either: its connections fail at once
 * (no route) rather than wait on a helper that cannot send them.
 */
static bool host_routes_ipv6(void)
{
	_cleanup_fclose_ FILE *f = fopen("/proc/net/ipv6_route", "re");
	char dst[33], dev[IFNAMSIZ + 1];
	unsigned plen, flags;

	/* dst plen src plen next-hop metric refcount use flags device */
	while (f &&
	       fscanf(f, "%32s %x %*s %*x %*s %*x %*x %*x %x %16s", dst, &plen, &flags, dev) == 4) {
		/* RTF_UP, not RTF_REJECT (the kernel's own unreachable default on lo). */
		if (plen == 0 && strspn(dst, "0") == 32 && (flags & 0x0001) && !(flags & 0x0200) &&
		    strcmp(dev, "lo") != 0)
			return true;
	}
	return false;
}

static int prepare_egress(const struct sr_config *c, struct sr_net *n, struct sr_error *err)
{
	static const struct sr_policy_addressing addressing = {
	    .gateway = SR_NET_GATEWAY,
	    .gateway6 = SR_NET_GATEWAY6,
	    .dns = SR_NET_DNS,
	};
	int r;

	n->ipv6 = host_routes_ipv6();
	r = find_helper(c->net_helper, n, err);
	if (r < 0)
		return r;
	/*
	 * Whoever opens /dev/net/tun, with their own ids: PID 1 as the caller
	 * (takes_tap), else the helper. Said now, before it fails obscurely.
	 */
	if (n->helper->takes_tap)
		r = access("/dev/net/tun", R_OK | W_OK) < 0 ? sr_negerrno() : 0;
	else
		r = helper_may(n, "/dev/net/tun", R_OK | W_OK);
	if (r < 0)
		return sr_error_errno(err, r,
				      "--net egress needs /dev/net/tun (mode 0666, as Debian ships "
				      "it)%s",
				      geteuid() == 0 && !n->helper->takes_tap
					  ? ", and slirp4netns runs unprivileged"
					  : "");
	r = sr_policy_check(c, &addressing, err);
	if (r >= 0)
		r = sr_egress_new(c, n->sink, n->helper_uid, n->helper_gid, &n->egress, err);
	if (r >= 0)
		r = sr_policy_ruleset(c, &addressing, sr_egress_allows_names(n->egress),
				      sr_egress_names(n->egress), &n->ruleset, err);
	if (r < 0)
		return r;
	n->host_loopback = c->allow_host.n > 0;
	n->epfd = epoll_create1(EPOLL_CLOEXEC);
	if (n->epfd < 0)
		return sr_error_errno(err, sr_negerrno(), "epoll");
	if (!n->helper->takes_tap && pipe2(n->ready, O_CLOEXEC) < 0)
		return sr_error_errno(err, sr_negerrno(), "pipe");
	return 0;
}

int sr_net_prepare(const struct sr_config *c, const struct sr_sink *sink, uid_t host_uid,
		   gid_t host_gid, struct sr_net **ret, struct sr_error *err)
{
	struct sr_net *n = calloc(1, sizeof(*n));
	int r;

	if (!n)
		return sr_error_errno(err, -ENOMEM, "network");
	n->mode = c->net;
	n->sink = sink;
	n->helper_uid = host_uid;
	n->helper_gid = host_gid;
	n->ready[0] = n->ready[1] = n->exit_w = -1;
	n->userns = n->netns = n->pidfd = n->epfd = -1;
	if (n->mode == SR_NET_EGRESS) {
		r = prepare_egress(c, n, err);
		if (r < 0) {
			sr_net_free(n);
			return r;
		}
	}
	*ret = n;
	return 0;
}

/* fd moved to a number >= 10, so that the dup2()s onto 0-5 cannot collide with it. */
static int high_fd(int fd)
{
	return fcntl(fd, F_DUPFD_CLOEXEC, 10);
}

/*
 * The child's namespace, opened now: the helper starts while the child
 * sets up, and once the child is non-dumpable an unprivileged helper could
 * no longer open /proc/PID/ns/ itself. The helper gets the fds.
 */
static int open_ns(pid_t child, const char *name, struct sr_error *err)
{
	_cleanup_close_ int fd = -1;
	char path[64];
	int hi;

	snprintf(path, sizeof(path), "/proc/%d/ns/%s", (int)child, name);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return sr_error_errno(err, sr_negerrno(), "open %s", path);
	hi = high_fd(fd);
	if (hi < 0)
		return sr_error_errno(err, sr_negerrno(), "open %s: dup", path);
	return hi;
}

/*
 * fd3, fd4: high (>= 10), to become 3 and 4 (-1: closed); 5 is the
 * sandbox's network namespace. The helper's pid and a pidfd on it go in n,
 * and the namespaces are the helper's alone from here on.
 */
static int spawn_helper(struct sr_net *n, int fd3, int fd4, struct sr_error *err)
{
	const char *argv[32];
	struct sr_helper_exec x = {
	    .path = n->helper_path,
	    .argv = argv,
	    .parent = getpid(),
	    .show_stderr = sr_sink_enabled(n->sink, SR_LOG_DEBUG),
	    .caller_is_root = geteuid() == 0,
	    .userns = n->userns,
	    .fds = {fd3, fd4, n->netns},
	};
	size_t k = 0;
	pid_t pid;

	/*
	 * The arguments as run: IPv6's added where the host has it; with
	 * --allow-host, the gateway reaches the host's loopback, which the
	 * policy narrows to those ports.
	 */
	argv[k++] = n->helper->argv[0];
	for (size_t j = 0; n->ipv6 && n->helper->ipv6_args[j]; j++)
		argv[k++] = n->helper->ipv6_args[j];
	for (size_t i = 1; n->helper->argv[i] && k + 1 < SR_ARRAY_SIZE(argv); i++) {
		const char *a = n->helper->argv[i];

		if ((n->host_loopback && sr_streq(a, n->helper->no_host_loopback)) ||
		    (n->ipv6 && sr_streq(a, n->helper->ipv4_only)))
			continue;
		argv[k++] = a;
	}
	argv[k] = NULL;
	/* fork, not posix_spawn: the parent-death signal is set between fork and exec. */
	pid = fork();
	if (pid == 0)
		sr_helper_exec(&x);
	close(steal_fd(&n->userns));
	close(steal_fd(&n->netns));
	if (pid < 0)
		return sr_error_errno(err, sr_negerrno(), "start %s", n->helper->name);
	n->pid = pid;
	/* Only to tell the supervisor if it dies early: none before Linux 5.3. */
#ifdef SYS_pidfd_open
	n->pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
#endif
	if (n->pidfd >= 0 &&
	    epoll_ctl(n->epfd, EPOLL_CTL_ADD, n->pidfd,
		      &(struct epoll_event){.events = EPOLLIN, .data.fd = n->pidfd}) < 0)
		return sr_error_errno(err, sr_negerrno(), "watch %s", n->helper->name);
	return 0;
}

/* slirp4netns: started now, it opens the tap in the namespace itself. */
static int start_slirp4netns(struct sr_net *n, struct sr_error *err)
{
	_cleanup_close_ int ready_hi = -1, exit_hi = -1;
	int exitp[2], r;

	/*
	 * slirp4netns polls the read end and exits when it reads EOF, and
	 * deletes its tap on the way. Created after clone, so the sandbox
	 * never holds the write end.
	 */
	if (pipe2(exitp, O_CLOEXEC) < 0)
		return sr_error_errno(err, sr_negerrno(), "pipe");
	n->exit_w = exitp[1];
	ready_hi = high_fd(n->ready[1]);
	exit_hi = high_fd(exitp[0]);
	close(exitp[0]);
	if (ready_hi < 0 || exit_hi < 0)
		return sr_error_errno(err, sr_negerrno(), "start %s: dup", n->helper->name);
	r = spawn_helper(n, ready_hi, exit_hi, err);
	/* Only the helper (and the child, which closes its copy) may hold it now: EOF = helper
	 * died. */
	close(steal_fd(&n->ready[1]));
	close(steal_fd(&n->ready[0]));
	return r;
}

int sr_net_parent(struct sr_net *n, pid_t child, struct sr_error *err)
{
	if (n->mode != SR_NET_EGRESS)
		return 0;
	/* Now, for either helper: pasta starts later, on TAP (sr_net_start_helper). */
	n->userns = open_ns(child, "user", err);
	if (n->userns < 0)
		return n->userns;
	n->netns = open_ns(child, "net", err);
	if (n->netns < 0)
		return n->netns;
	return n->helper->takes_tap ? 0 : start_slirp4netns(n, err);
}

int sr_net_start_helper(struct sr_net *n, int tap, struct sr_error *err)
{
	_cleanup_close_ int tap_hi = -1;

	/* netns is gone once a helper was started: one tap, one pasta. */
	if (n->mode != SR_NET_EGRESS || !n->helper->takes_tap || n->netns < 0) {
		close(tap);
		return sr_error_msg(err, -EPROTO, "a tap nobody asked for");
	}
	tap_hi = high_fd(tap);
	close(tap);
	if (tap_hi < 0)
		return sr_error_errno(err, sr_negerrno(), "start %s: dup", n->helper->name);
	return spawn_helper(n, tap_hi, -1, err);
}

int sr_net_watch_fd(const struct sr_net *n)
{
	return n->epfd;
}

static void say_ended(struct sr_net *n)
{
	int st = n->ended_status;

	if (n->said)
		return;
	n->said = true;
	if (n->ended_w < 0)
		sr_warn(n->sink, "%s exited: the sandbox has no network from here on",
			n->helper->name);
	else if (WIFSIGNALED(st))
		sr_warn(n->sink,
			"%s was killed by signal %d: the sandbox has no network from here on",
			n->helper->name, WTERMSIG(st));
	else
		sr_warn(n->sink,
			"%s exited with status %d: the sandbox has no network from here on (run "
			"with -v to see why)",
			n->helper->name, WEXITSTATUS(st));
}

static void helper_exited(struct sr_net *n, bool during_run)
{
	pid_t w;
	int st = 0;

	if (n->pid <= 0)
		return;
	w = waitpid(n->pid, &st, WNOHANG);
	if (w == 0 || (w < 0 && errno == EINTR))
		return; /* not yet: the pidfd stays, readable again */
	/* Reaped, by us or (ECHILD) not: either way its pid is not ours to signal any more. */
	n->pid = 0;
	if (n->pidfd >= 0)
		epoll_ctl(n->epfd, EPOLL_CTL_DEL, n->pidfd, NULL);
	close(steal_fd(&n->pidfd));
	n->ended = true;
	n->ended_w = w;
	n->ended_status = st;
	if (during_run)
		say_ended(n);
}

void sr_net_dispatch(struct sr_net *n, bool during_run)
{
	/* Level-triggered: each party checks without blocking, and what is left stays readable. */
	helper_exited(n, during_run);
	sr_egress_dispatch(n->egress, during_run);
}

int sr_net_sockets(struct sr_net *n, int *fds, size_t n_fds, struct sr_error *err)
{
	int r, w;

	if (!n->egress) {
		for (size_t i = 0; i < n_fds; i++)
			sr_closep(&fds[i]);
		return sr_error_msg(err, -EPROTO, "network sockets nobody asked for");
	}
	r = sr_egress_sockets(n->egress, fds, n_fds, err);
	if (r < 0)
		return r;
	w = sr_egress_watch_fd(n->egress);
	if (w >= 0 &&
	    epoll_ctl(n->epfd, EPOLL_CTL_ADD, w,
		      &(struct epoll_event){.events = EPOLLIN, .data.fd = w}) < 0 &&
	    errno != EEXIST)
		return sr_error_errno(err, sr_negerrno(), "watch the resolver");
	return 0;
}

void sr_net_ended(struct sr_net *n)
{
	sr_egress_ended(n->egress);
}

void sr_net_record(struct sr_net *n, struct sr_result_network *ret)
{
	if (n->mode == SR_NET_EGRESS)
		sr_egress_record(n->egress, ret);
	else
		*ret = (struct sr_result_network){0};
}

void sr_net_agent_started(struct sr_net *n)
{
	sr_egress_dispatch(n->egress, true);
	/* Ready, then gone before the agent started: the agent runs without a network. */
	if (n->ended)
		say_ended(n);
}

/*
 * TCP on the sandbox's side of the helper (docs/network.md). Both helpers
 * terminate the agent's connections and replay them from host sockets,
 * which run the host's congestion control over the real path; the
 * sandbox's own TCP only crosses the tap to the helper, lossless but for
 * one thing: pasta drops what its host socket cannot take at once
 * (EAGAIN), answers no SACK, and leaves the sandbox to retransmit. The
 * host's default congestion control is wrong for that hop: bbr keeps
 * sending into pasta's drops and waits out 200 ms retransmission
 * timeouts, and bbr and cubic grow their window far slower than
 * slirp4netns drains it. So the default route, which carries everything
 * but the helper's own 10.0.2.0/24, gets:
 *  - congctl reno: loss-based, no pacing, no delay heuristics; a route
 *    metric may name it in any network namespace;
 *  - rto_min 5 ms (locked) instead of 200 ms: a segment pasta dropped is
 *    sent again after 5 ms (rounded up to a jiffy). Where pasta holds its
 *    ACKs until the remote end has the data, the timeout still follows the
 *    measured round trip: Linux takes srtt plus the larger of 4 x rttvar
 *    and rto_min. Recent kernels also cap the delayed-ACK timer below
 *    rto_min, so the sandbox acknowledges sooner too.
 * Route metrics rather than sysctls: /proc/sys is read-only by now, and a
 * metric applies to that route alone, not to loopback.
 */
static const struct sr_route_tuning helper_tuning = {
    .congctl = "reno",
    .rto_min_ms = 5,
};

int sr_net_child_open(const struct sr_net *n, int *ret, struct sr_error *err)
{
	int fd;

	*ret = -1;
	if (n->mode != SR_NET_EGRESS || !n->helper->takes_tap)
		return 0;
	/* Non-blocking: pasta reads until EAGAIN. The tap will be in this (our) namespace. */
	fd = open("/dev/net/tun", O_RDWR | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		return sr_error_errno(err, sr_negerrno(), "open /dev/net/tun");
	*ret = fd;
	return 0;
}

/* The tap on tun, configured as pasta expects it (tap_config). */
static int make_tap(const struct sr_net *n, int tun, struct sr_error *err)
{
	struct ifreq ifr = {.ifr_flags = IFF_TAP | IFF_NO_PI};
	struct sr_link_config c = tap_config;

	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", SR_NET_IFNAME);
	if (ioctl(tun, TUNSETIFF, &ifr) < 0)
		return sr_error_errno(err, sr_negerrno(), "create the tap device %s",
				      SR_NET_IFNAME);
	if (n->ipv6) {
		c.address6 = SR_NET_ADDRESS6 "/" SR_NET_PREFIX6;
		c.gateway6 = SR_NET_GATEWAY6;
	}
	return sr_link_configure(&c, err);
}

int sr_net_child(const struct sr_net *n, int tun, int sock, struct sr_error *err)
{
	int r;

	r = sr_link_loopback_up(err);
	if (r < 0 || n->mode != SR_NET_EGRESS)
		return r;
	if (n->helper->takes_tap) {
		r = make_tap(n, tun, err);
		if (r < 0)
			return r;
	}
	/*
	 * Fail closed: without the policy there is no network at all.
	 * libnftables is dlopen()ed here rather than before clone: its ~1 ms
	 * of loading then overlaps the helper's start-up (docs/network.md).
	 */
	r = sr_nft_install(n->ruleset, err);
	if (r >= 0)
		r = sr_egress_child_sockets(n->egress, sock, err);
	if (r < 0)
		return r;
	if (n->helper->takes_tap)
		return 0;
	r = wait_ready_fd(n, err);
	close(n->ready[0]);
	/*
	 * slirp4netns configures IPv4 only, and its tap exists once it is
	 * ready. Without IPv6 the sandbox is as safe, and only says so.
	 */
	if (r >= 0 && n->ipv6) {
		struct sr_error v6 = {0};

		if (sr_link_add_ipv6(SR_NET_IFNAME, SR_NET_ADDRESS6 "/" SR_NET_PREFIX6,
				     SR_NET_GATEWAY6, &v6) < 0) {
			sr_error_prefix(&v6, "the sandbox has no IPv6");
			sr_msg_send_warning(sock, &v6);
		}
	}
	return r;
}

int sr_net_child_tune(const struct sr_net *n, struct sr_error *err)
{
	int r;

	if (n->mode != SR_NET_EGRESS)
		return 0;
	/* Test builds only (fault.h): the warning path, which no real host takes. */
	if (sr_fault_fail("network tuning"))
		r = sr_error_msg(err, -EIO, "tune the default route: injected failure");
	else
		r = sr_link_tune_default_route(&helper_tuning, err);
	if (r >= 0 && n->ipv6)
		r = sr_link_tune_default_route_of(AF_INET6, &helper_tuning, err);
	if (r < 0)
		sr_error_prefix(err, "TCP through the network helper is not tuned");
	return r;
}

int sr_net_child_fd(const struct sr_net *n)
{
	return n->ready[0];
}

const char *sr_net_resolv_conf(const struct sr_net *n)
{
	if (n->mode != SR_NET_EGRESS)
		return NULL;
	return sr_egress_names(n->egress) ? SR_NET_RESOLV_CONF_NAMES : SR_NET_RESOLV_CONF;
}

bool sr_net_nested_userns(const struct sr_net *n)
{
	return n->mode == SR_NET_EGRESS;
}

const char *sr_net_helper_path(const struct sr_net *n)
{
	return n->helper_path;
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
	 * Not waited for: slirp4netns exits on EOF and deletes its tap on its
	 * own time (15-35 ms), pasta is killed (its tap goes with the
	 * namespace), both off the invocation's path. The zombie keeps its
	 * pid from being reused until sandbox-run exits and it is reaped; a
	 * helper reaped already (sr_net_helper_exited) has pid 0.
	 */
	if (n->pid > 0 && n->helper->stop_signal) {
		/* Through the pidfd where there is one: it cannot name a reused pid. */
#ifdef SYS_pidfd_send_signal
		if (n->pidfd < 0 ||
		    syscall(SYS_pidfd_send_signal, n->pidfd, n->helper->stop_signal, NULL, 0) < 0)
#endif
			kill(n->pid, n->helper->stop_signal);
	}
	sr_egress_free(n->egress);
	sr_closep(&n->epfd);
	sr_closep(&n->pidfd);
	sr_closep(&n->userns);
	sr_closep(&n->netns);
	sr_closep(&n->exit_w);
	sr_closep(&n->ready[0]);
	sr_closep(&n->ready[1]);
	free(n->helper_path);
	free(n->ruleset);
	free(n);
}
