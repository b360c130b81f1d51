/* SPDX-License-Identifier: MIT */
/*
 * The network's child side (net.h), in the new network namespace: lo up;
 * for egress, pasta's tap made and configured, the policy installed, the
 * sockets the host side needs sent to it, slirp4netns waited for; the
 * helper's route tuned; the resolv.conf the sandbox gets.
 */
#include "net-internal.h"
#include "fault.h"
#include "link.h"
#include "nft.h"
#include "protocol.h"
#include "util.h"

#include <fcntl.h>
#include <linux/if_tun.h>
#include <net/if.h>
#include <poll.h>
#include <sys/ioctl.h>
#include <sys/socket.h>

/* slirp4netns was ready 3-20 ms after the fork where measured: past this, broken. */
#define READY_TIMEOUT_MS 5000

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
