/* SPDX-License-Identifier: MIT */
/* The egress policy as an nftables ruleset, installed with libnftables. */
#pragma once

#include "config.h"

#include <stdbool.h>

/* The table sandbox-run installs in the sandbox's network namespace. */
#define SR_NFT_TABLE "sandbox_run"

/*
 * Its sets. The allowed names' addresses, as the sandbox's resolver
 * found them, each for its answer's TTL (nfnl.h adds them): any port, or
 * one port (address . port). The refused destinations (address . protocol
 * . port), each with a packet counter, for the egress record: the first
 * SR_NFT_REFUSED_MAX of them. The addresses the host gains while the
 * sandbox runs (nfnl.h adds them, for the rest of the run): refused like
 * those it had at start, at most SR_NFT_HOST_MAX of each family.
 */
#define SR_NFT_SET_ALLOW4      "allow4"
#define SR_NFT_SET_ALLOW6      "allow6"
#define SR_NFT_SET_ALLOW4_PORT "allow4p"
#define SR_NFT_SET_ALLOW6_PORT "allow6p"
#define SR_NFT_SET_REFUSED4    "refused4"
#define SR_NFT_SET_REFUSED6    "refused6"
#define SR_NFT_SET_HOST4       "host4"
#define SR_NFT_SET_HOST6       "host6"
#define SR_NFT_ALLOW_MAX       4096
#define SR_NFT_REFUSED_MAX     256
#define SR_NFT_HOST_MAX	       256

/*
 * A policy with every host name already resolved. Entries are
 * "ADDR[/LEN][:PORT]", "[ADDR6[/LEN]]:PORT" or a bare "ADDR6[/LEN]"; a port
 * applies to both TCP and UDP.
 */
struct sr_nft_policy {
	const struct sr_strv *allow; /* written as addresses; with names, allowlist mode */
	/*
	 * Host names are allowed: the addresses the sandbox's resolver finds
	 * for them open (the allow sets, above). DNS is not the caller, so
	 * these never open what the defaults refuse; and the resolver is the
	 * only DNS: port 53 and 853 anywhere else are refused.
	 */
	bool names;
	/* The resolver is the only DNS (names, or a --deny by name): other DNS refused. */
	bool dns_locked;
	const struct sr_strv *deny; /* refused, even when also allowed */
	/* The host's own addresses: refused unless named in allow; and the host sets (above). */
	const struct sr_strv *host;
	const char *dns;      /* the helper's resolver: port 53 allowed; NULL none */
	const char *gateway;  /* the helper's alias for the host: refused; NULL none */
	const char *gateway6; /* the same over IPv6: refused; NULL none */
	/* Ports of the gateway that reach the host's loopback (--allow-host), decimal. */
	const struct sr_strv *host_ports;
	bool record; /* count refused destinations (the refused sets) */
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

/*
 * A destination written as an address, as the ruleset reads it: an
 * IPv4-mapped IPv6 address is IPv4, host bits beyond the prefix cleared.
 * For whoever states the policy elsewhere (export's NetworkPolicy).
 */
struct sr_nft_dest {
	int family; /* AF_INET or AF_INET6 */
	unsigned char addr[16];
	unsigned prefix;
	unsigned port; /* 0: any */
};

int sr_nft_parse_dest(const char *s, struct sr_nft_dest *ret, struct sr_error *err);
/* "ADDR/PREFIX", the port left out. */
void sr_nft_format_cidr(const struct sr_nft_dest *d, char *buf, size_t len);
/* Whether range holds every address of d. */
bool sr_nft_dest_covers(const struct sr_nft_dest *range, const struct sr_nft_dest *d);
/* The ranges refused by default (docs/network.md), one by one: NULL past the last. */
const char *sr_nft_refused_default(size_t i);

/* Installs text in the current network namespace (libnftables, in-process). */
int sr_nft_install(const char *text, struct sr_error *err);
