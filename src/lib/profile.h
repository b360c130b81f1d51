/* SPDX-License-Identifier: MIT */
/*
 * Profiles: INI files read with inih. NAME is looked up as
 * $XDG_CONFIG_HOME/sandbox-run/profiles/NAME.ini (or ~/.config/...), then
 * $(datadir)/sandbox-run/profiles/NAME.ini, then the copies of the shipped
 * profiles built into the binary (so an uninstalled build works; origin
 * "builtin:NAME"). A value containing '/' is a path; a NAME is letters,
 * digits, '_', '-' and inner dots, not ending in ".ini" (a file's name).
 * `[profile] inherit = NAME` loads NAME first wherever the line is in the
 * file; a relative inherit path is relative to the inheriting file's
 * directory. Chains are at most
 * SR_PROFILE_DEPTH_MAX deep and loops are errors naming the chain.
 *
 * Syntax, as this loader drives inih: "[section]" and "key = value" lines;
 * a line starting with ';' or '#' is a comment, and so is the rest of a
 * line from a ';' that follows a blank ("memory = 2G ; two gigs"), but a
 * '#' after a value is part of the value. Blanks around keys and values
 * are ignored, including leading blanks on a line: there are no
 * continuation lines. A line holds at most INI_MAX_LINE - 2 characters
 * (198 with Debian's inih). Every key must be inside a section.
 *
 * Errors say "profile FILE:LINE: ..." with a did-you-mean where it helps.
 * sr_profile_load() says what failed in err->kind too, for a caller that
 * must not show the text (the API server: it names the host's files):
 * SR_ERROR_PROFILE_MISSING, the profile asked for is nowhere (a name in
 * none of the places, a path that is not there); SR_ERROR_PROFILE_BROKEN,
 * it is there but does not load (unreadable, a bad line or value, an
 * inherit that fails). A name refused as such (bad characters, foo.ini)
 * is SR_ERROR_PLAIN: nothing was looked for.
 */
#pragma once

#include "config.h"

#define SR_PROFILE_DEPTH_MAX 8
#define SR_PROFILE_SIZE_MAX  (1024 * 1024)

/* On success sets c->profile (as asked for) and c->profile_path (where it was found). */
int sr_profile_load(struct sr_config *c, const char *name_or_path, struct sr_error *err);

/*
 * Parses profile text (for tests and the built-in copies); origin names it
 * in errors. Leaves c->profile and c->profile_path alone.
 */
int sr_profile_load_string(struct sr_config *c, const char *text, const char *origin,
			   struct sr_error *err);

/*
 * Whether NAME is a profile's name (letters, digits, '_', '-' and inner
 * dots, at most 64, not ending in ".ini"), not a path nor "builtin:NAME".
 */
bool sr_profile_name_valid(const char *name);

/* Built-in copies of profiles/NAME.ini, or NULL. */
const char *sr_profile_builtin(const char *name);
