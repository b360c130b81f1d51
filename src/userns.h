/* SPDX-License-Identifier: MIT */
/*
 * The user namespace: uid 1000 ("user") inside is the caller outside. A
 * root caller is mapped to an unprivileged host uid instead, never 0: with
 * 0 mapped, the sandbox user could write host files owned by root
 * (/proc/sys among them) through any mount that reaches them.
 */
#pragma once

#include "log.h"

#include <stdbool.h>
#include <sys/types.h>

/*
 * The host ids the sandbox user maps to: the caller's own, or for root the
 * first id of root's /etc/subuid and /etc/subgid ranges, else 65534.
 */
void sr_userns_host_ids(uid_t caller_uid, gid_t caller_gid, uid_t *ret_uid, gid_t *ret_gid);

/* "1000 HOSTID 1\n" */
int sr_userns_map_text(unsigned inside, unsigned outside, char *buf, size_t len);

/* Parent, after clone: setgroups, uid_map and gid_map of child. */
int sr_userns_parent(pid_t child, uid_t host_uid, gid_t host_gid, struct sr_error *err);

/* Child: become uid/gid 1000 with no supplementary groups, keeping the namespace's capabilities. */
int sr_userns_child(bool drop_groups, struct sr_error *err);
