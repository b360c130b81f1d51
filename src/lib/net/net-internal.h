/* SPDX-License-Identifier: MIT */
/*
 * What the network's parts (net.h) share: the helpers, the addresses
 * they and the sandbox get, and the network object. net-prepare.c finds
 * the helper and makes the policy before clone; net.c starts the helper
 * after clone, watches it while the sandbox lives, and ends it;
 * net-child.c is the child's side, in the new network namespace. Nothing
 * here is for any other module: net.h is the network's face.
 */
#pragma once

#include "egress.h"
#include "net.h"
#include "resolver.h"

#include <stdbool.h>
#include <sys/types.h>

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
	/*
	 * Ignores SIGPIPE itself (a write to a -vv stderr whose reader has
	 * gone fails with EPIPE): pasta does, and refuses to start where it
	 * is ignored already; slirp4netns does not, and is given it ignored.
	 */
	bool ignores_sigpipe;
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
