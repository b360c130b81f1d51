/* SPDX-License-Identifier: MIT */
#include "policy.h"
#include "link.h"
#include "nft.h"
#include "units.h"
#include "util.h"

#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>
#include <strings.h>
#include <sys/socket.h>

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
 * An entry written as an address goes to the ruleset as it is. A host
 * name in --allow is the sandbox's resolver's, when the agent asks
 * (egress.c); one in --deny is refused by the resolver too, and also
 * resolved here, once, so that its addresses at start are refused by
 * address as well: in default mode nothing else would stop an agent
 * that knows them. Every address, IPv4 and IPv6; none, where it does not
 * resolve. A wildcard names no address to resolve.
 */
static int resolve(const char *entry, struct sr_strv *out, bool names, struct sr_error *err)
{
	const struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM};
	struct addrinfo *ai = NULL;
	struct sr_dest d;
	int r = 0;

	if (sr_parse_dest(entry, &d) < 0)
		return sr_error_msg(err, -EINVAL, "bad destination '%s'", entry);
	if (d.kind != SR_DEST_HOST)
		return sr_strv_push(out, entry) < 0 ? sr_error_errno(err, -ENOMEM, "%s", entry) : 0;
	if (!names || d.wildcard)
		return 0;
	/* One that does not resolve is refused by name all the same. */
	if (getaddrinfo(d.host, NULL, &hints, &ai) != 0)
		return 0;
	for (struct addrinfo *i = ai; i && r >= 0; i = i->ai_next)
		if (i->ai_family == AF_INET || i->ai_family == AF_INET6)
			r = push_address(out, i->ai_addr, d.port);
	freeaddrinfo(ai);
	if (r < 0)
		return sr_error_errno(err, r, "resolve '%s'", d.host);
	return 0;
}

static int resolve_all(const struct sr_strv *in, struct sr_strv *out, bool names, const char *opt,
		       struct sr_error *err)
{
	for (size_t i = 0; i < in->n; i++) {
		int r = resolve(in->items[i], out, names, err);

		if (r < 0)
			return sr_error_prefix(err, "%s", opt);
	}
	return 0;
}

/*
 * What an --allow entry cannot mean: the host's loopback. The helper's
 * alias for the host stays refused, and the sandbox's own loopback is not
 * the host's; both are what a user reaching for a service on the host's
 * 127.0.0.1 writes, and both would be accepted and do nothing. Said, with
 * what does it.
 */
/* Whether d is exactly the address text (NULL: none). */
static bool is_address(const struct sr_dest *d, const char *text)
{
	struct sr_dest a;

	return text && d->kind != SR_DEST_HOST && sr_parse_dest(text, &a) == 0 &&
	       a.kind == d->kind && a.prefix == d->prefix && memcmp(a.addr, d->addr, 16) == 0;
}

static int check_allow(const char *entry, const struct sr_policy_addressing *a,
		       struct sr_error *err)
{
	const char *gw = a->gateway ? a->gateway : "the gateway";
	char port[16] = "PORT";
	struct sr_dest d;
	bool loopback;

	if (sr_parse_dest(entry, &d) < 0)
		return sr_error_msg(err, -EINVAL, "--allow: bad destination '%s'", entry);
	if (d.port)
		snprintf(port, sizeof(port), "%u", d.port);
	loopback =
	    (d.kind == SR_DEST_IPV4 && d.addr[0] == 127 && d.prefix == 32) ||
	    (d.kind == SR_DEST_IPV6 && d.prefix == 128 &&
	     IN6_IS_ADDR_LOOPBACK((const struct in6_addr *)d.addr)) ||
	    (d.kind == SR_DEST_HOST && !d.wildcard &&
	     (strcasecmp(d.host, "localhost") == 0 || strcasecmp(d.host, "localhost.") == 0));
	if (loopback)
		return sr_error_msg(
		    err, -EINVAL,
		    "--allow %s: the sandbox's loopback is its own, not the host's; "
		    "for the host's 127.0.0.1:%s use --allow-host %s (the sandbox "
		    "reaches it at %s:%s)",
		    entry, port, port, gw, port);
	if (is_address(&d, a->gateway) || is_address(&d, a->gateway6))
		return sr_error_msg(err, -EINVAL,
				    "--allow %s: the network helper's address for the host, "
				    "which stays refused; for the host's 127.0.0.1:%s use "
				    "--allow-host %s (the sandbox reaches it at %s:%s)",
				    entry, port, port, gw, port);
	return 0;
}

int sr_policy_check(const struct sr_config *c, const struct sr_policy_addressing *a,
		    struct sr_error *err)
{
	for (size_t i = 0; i < c->allow.n; i++) {
		int r = check_allow(c->allow.items[i], a, err);

		if (r < 0)
			return r;
	}
	return 0;
}

int sr_policy_ruleset(const struct sr_config *c, const struct sr_policy_addressing *a, bool names,
		      bool dns_locked, char **ret, struct sr_error *err)
{
	struct sr_strv allow = {0}, deny = {0}, host = {0};
	struct sr_nft_policy policy = {
	    .allow = &allow,
	    .names = names,
	    .dns_locked = dns_locked,
	    .deny = &deny,
	    .host = &host,
	    /* With names, the helper's resolver is refused like any other. */
	    .dns = dns_locked ? NULL : a->dns,
	    .gateway = a->gateway,
	    .gateway6 = a->gateway6,
	    .host_ports = &c->allow_host,
	    .record = true,
	};
	int r;

	r = resolve_all(&c->allow, &allow, false, "--allow", err);
	if (r >= 0)
		r = resolve_all(&c->deny, &deny, true, "--deny", err);
	/*
	 * The helper's sockets are the host's: without these, an agent could
	 * reach a service listening on 0.0.0.0 through one of the host's own
	 * addresses, whichever interface holds it.
	 */
	if (r >= 0)
		r = sr_link_local_destinations(&host, err);
	if (r >= 0)
		r = sr_nft_ruleset(&policy, ret, err);
	sr_strv_free(&allow);
	sr_strv_free(&deny);
	sr_strv_free(&host);
	return r;
}
