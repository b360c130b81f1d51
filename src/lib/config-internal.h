/* SPDX-License-Identifier: MIT */
/*
 * The configuration's parts (config.c): what they share. config.c has the
 * configuration's life, its table of keys, the setting of a key by section
 * and name with the did-you-means, and the checks across fields;
 * config-values.c each kind of value parsed into its field;
 * config-paths.c the host and sandbox paths (binds, exports, the env and
 * changes files). Nothing here is for any other module: config.h is the
 * configuration's face.
 */
#pragma once

#include "config.h"

#include <stddef.h>

/* PID_MAX_LIMIT on 64-bit kernels: a larger pids.max cannot mean anything. */
#define PIDS_MAX 4194304u

enum key_kind {
	KEY_IGNORED, /* [profile]: read by the profile loader, not a setting */
	KEY_SIZE,
	KEY_DURATION,
	KEY_CPUS,
	KEY_COUNT,
	KEY_BOOL,
	KEY_NET_MODE,
	KEY_NET_HELPER,
	KEY_DEST_LIST,
	KEY_PORT_LIST,
	KEY_ENV_FILE,
	KEY_ENV_NAME_LIST,
	KEY_BIND,
	KEY_STRING,
	KEY_DISK_BACKING,
	KEY_EXPORT_LIST,
	KEY_PATH,
	_KEY_KIND_MAX,
};

struct key_def {
	const char *section;
	const char *key;
	enum key_kind kind;
	size_t offset;
	bool writable; /* KEY_BIND */
};

/* Sets the value of key k, as its kind reads it. */
int config_set_value(struct sr_config *c, const struct key_def *k, const char *value,
		     struct sr_error *err);

/* [filesystem] bind or ro-bind: "SRC:DST" or "SRC" added; empty: those of its kind dropped. */
int config_set_bind(struct sr_config *c, const char *value, bool writable, struct sr_error *err);
/* A host path setting (empty: unset), with the profile line that set it. */
int config_set_host_path(struct sr_config *c, const char *what, const char *value, char **field,
			 char **origin, struct sr_error *err);

/* Frees every export and leaves the list empty. */
void config_exports_free(struct sr_config *c);
