/* SPDX-License-Identifier: MIT */
/*
 * Profiles: INI files read with inih. NAME is looked up as
 * $XDG_CONFIG_HOME/sandbox-run/profiles/NAME.ini (or ~/.config/...), then
 * $(datadir)/sandbox-run/profiles/NAME.ini, then the copies of the shipped
 * profiles built into the binary (so an uninstalled build works). A value
 * containing '/' is a path. `[profile] inherit = NAME` loads NAME first.
 * Errors say "profile FILE:LINE: ..." with a did-you-mean where it helps.
 */
#pragma once

#include "config.h"

int sr_profile_load(struct sr_config *c, const char *name_or_path, struct sr_error *err);

/* Parses profile text (for tests and the built-in copies); origin names it in errors. */
int sr_profile_load_string(struct sr_config *c, const char *text, const char *origin,
			   struct sr_error *err);

/* Built-in copies of profiles/NAME.ini, or NULL. */
const char *sr_profile_builtin(const char *name);
