/* SPDX-License-Identifier: MIT */
/* The egress policy as an nftables ruleset, installed with libnftables. */
#pragma once

#include "config.h"

#include <stdbool.h>

/* The table sandbox-run installs in the sandbox's network namespace. */
#define SR_NFT_TABLE "sandbox_run"

/*
 * A policy with every host name already resolved. Entries are
 * "ADDR[/LEN][:PORT]", "[ADDR6[/LEN]]:PORT" or a bare "ADDR6[/LEN]"; a port
 * applies to both TCP and UDP.
 */
struct sr_nft_policy {
	const struct sr_strv *allow; /* written as addresses; with allow_named, allowlist mode */
	/*
	 * The addresses of the allowed host names, as DNS gave them: DNS is
	 * not the caller, so these never open what the defaults refuse.
	 */
	const struct sr_strv *allow_named;
	const struct sr_strv *deny; /* refused, even when also allowed */
	const struct sr_strv *host; /* the host's own addresses: refused unless named in allow */
	const char *dns;	    /* the helper's resolver: port 53 allowed; NULL none */
	const char *gateway;	    /* the helper's alias for the host: always refused; NULL none */
};

/* Ruleset text for the policy (pure: unit-tested). */
int sr_nft_ruleset(const struct sr_nft_policy *p, char **ret_text, struct sr_error *err);

/*
 * Splits a destination as written ("HOST", "HOST:PORT", "[V6]:PORT", bare
 * V6) into its host part (malloc'd) and its port (0: any).
 */
int sr_nft_split_dest(const char *s, char **ret_host, unsigned *ret_port, struct sr_error *err);
/* Whether host is an IP address or a CIDR (and not a name to resolve). */
bool sr_nft_is_address(const char *host);

/* Installs text in the current network namespace (libnftables, in-process). */
int sr_nft_install(const char *text, struct sr_error *err);
