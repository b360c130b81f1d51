/* SPDX-License-Identifier: MIT */
/*
 * The egress policy from the configuration (docs/network.md): --allow
 * entries checked for what they cannot mean, addresses taken as written,
 * --deny names resolved once, the host's own addresses listed, and the
 * ruleset's text made of it all (nft.h). Host names in --allow are not
 * resolved here: the sandbox's resolver opens their addresses when the
 * agent asks (egress.h).
 */
#pragma once

#include "config.h"
#include "log.h"

#include <stdbool.h>

/* The helper's fixed addresses (net-internal.h). */
struct sr_policy_addressing {
	const char *gateway;  /* its alias for the host: refused but --allow-host's ports */
	const char *gateway6; /* the same over IPv6: refused */
	const char *dns;      /* its resolver: open unless the sandbox's own is the only DNS */
};

/*
 * 0, or an error for an --allow entry that can only mean the host's
 * loopback (the gateway, 127/8, ::1, localhost), which says to use
 * --allow-host instead.
 */
int sr_policy_check(const struct sr_config *c, const struct sr_policy_addressing *a,
		    struct sr_error *err);

/*
 * The ruleset for c. names: --allow names hosts (their addresses come
 * from the resolver, into the sets); dns_locked: the sandbox's resolver
 * is its only DNS (a name in --allow or --deny).
 */
int sr_policy_ruleset(const struct sr_config *c, const struct sr_policy_addressing *a, bool names,
		      bool dns_locked, char **ret, struct sr_error *err);
