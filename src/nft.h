/* SPDX-License-Identifier: MIT */
/* The egress policy as an nftables ruleset, installed with libnftables. */
#pragma once

#include "config.h"

/* Ruleset text for the policy (pure: unit-tested). allow/deny already resolved to addresses. */
int sr_nft_ruleset(const struct sr_strv *allow, const struct sr_strv *deny, char **ret_text,
		   struct sr_error *err);
/* Installs text in the current network namespace (libnftables, dlopen()ed). */
int sr_nft_install(const char *text, struct sr_error *err);
