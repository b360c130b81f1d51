/* SPDX-License-Identifier: MIT */
/*
 * The user namespace: uid 1000 ("user") inside is the caller outside. A
 * root caller is mapped to an unprivileged host uid instead, never 0: with
 * 0 mapped, the sandbox user could write host files owned by root
 * (/proc/sys among them) through any mount that reaches them.
 *
 * Nested (--net egress): the network helper must become uid 0 in the
 * namespace that owns the sandbox's network (slirp4netns does, to confine
 * itself), so that outer namespace maps 0 to the caller's host ids, PID 1
 * sets the sandbox up in it, and then enters an inner namespace mapping
 * 1000 to that 0 -- the same host ids -- for itself and the agent, with a
 * new IPC namespace (whose sysctls the kernel gives to its owner's uid 0
 * by uid). The agent's namespace maps no uid 0 either way, and owns no
 * other namespace of the sandbox but that IPC one (docs/security.md).
 */
#pragma once

#include "log.h"

#include <stdbool.h>
#include <sys/types.h>

/*
 * The host ids the sandbox user maps to: the caller's own, or for root an
 * id of root's /etc/subuid and /etc/subgid ranges no other sandbox of
 * root's holds (the first free one of the first 1024: the lowest whose
 * lock in the state directory we take, *ret_lock, to close when the
 * sandbox is gone; -1 for none), else 65534.
 */
void sr_userns_host_ids(uid_t caller_uid, gid_t caller_gid, uid_t *ret_uid, gid_t *ret_gid,
			int *ret_lock);
/* The root caller's case, from the subordinate-id files named (unit tests use their own). */
void sr_userns_root_ids(const char *subuid, const char *subgid, uid_t *ret_uid, gid_t *ret_gid,
			int *ret_lock);

/* "1000 HOSTID 1\n" */
int sr_userns_map_text(unsigned inside, unsigned outside, char *buf, size_t len);

/* Parent, after clone: setgroups, uid_map and gid_map of child (inside: 0 if nested, else 1000). */
int sr_userns_parent(pid_t child, bool nested, uid_t host_uid, gid_t host_gid,
		     struct sr_error *err);

/*
 * Root callers only: a detached clone of the mount at fd (O_PATH; what:
 * its name in errors), idmapped so
 * that files owned by from_uid (and group from_gid) appear owned by
 * host_uid/host_gid -- the sandbox user -- and what the sandbox user
 * creates there is from_uid's on the disk; read-only unless writable.
 * nosuid, nodev. The sandbox never maps host root: without this, a root
 * caller's workspace (a checkout of root's or of another user's) would be
 * read-only to its own agent, and a --bind'ed directory unwritable, or
 * written as an anonymous host uid.
 */
int sr_userns_idmapped_tree(int fd, const char *what, uid_t from_uid, gid_t from_gid,
			    uid_t host_uid, gid_t host_gid, bool writable, int *ret_fd,
			    struct sr_error *err);

/*
 * Root callers: for each of c's binds (sources: as resolved), the
 * idmapped clone of a writable one's directory, owned by a user: its
 * owner and group are the sandbox user inside, and what the sandbox
 * writes there is that owner's on the host; -1 for the others. A
 * writable bind of a directory of root's is refused with what to do
 * (nothing the sandbox writes may become host root's), unless every user
 * may write it (o+w, /tmp-like: the sandbox writes as its own uid).
 */
struct sr_config;
struct sr_strv;
int sr_userns_bind_trees(const struct sr_config *c, const struct sr_strv *sources, uid_t host_uid,
			 gid_t host_gid, int **ret_trees, struct sr_error *err);

/*
 * Child: become uid/gid 1000 (0 if nested) with no supplementary groups,
 * keeping the namespace's capabilities.
 */
int sr_userns_child(bool drop_groups, bool nested, struct sr_error *err);

/*
 * Child, nested, after every step that needs the outer namespace's
 * capabilities (mounts, network, hostname): unshare a user namespace and
 * an IPC namespace, map 1000 to our 0 outside, and become 1000. Leaves us
 * non-dumpable, with every capability of the new namespace only.
 */
int sr_userns_enter_inner(struct sr_error *err);
