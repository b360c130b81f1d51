/* SPDX-License-Identifier: MIT */
/*
 * The network before clone (sr_net_prepare): the helpers as they are run,
 * the one --net-helper picks found in $PATH, whether it may run and open
 * /dev/net/tun, whether the sandbox gets IPv6, the policy made; and what
 * the preparation decided, for create.
 */
#include "net-internal.h"
#include "policy.h"
#include "util.h"

#include <fcntl.h>
#include <limits.h>
#include <net/if.h>
#include <signal.h>
#include <sys/epoll.h>
#include <sys/stat.h>

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
    .ignores_sigpipe = true,
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
