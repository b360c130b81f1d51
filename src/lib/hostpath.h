/* SPDX-License-Identifier: MIT */
/*
 * Host paths the caller named (the sources of --bind and --ro-bind, cp's
 * host paths, the agent, --workspace DIR, deploy's AGENT), resolved so
 * that a symbolic link someone else planted on the way cannot redirect
 * them. Host side: the owners of links are only known there (in the
 * sandbox's user namespace host root and other users are all "nobody").
 */
#pragma once

#include "log.h"

#include <stdbool.h>
#include <sys/types.h>

/*
 * Resolves the absolute path one component at a time, following a
 * symbolic link only where root owns both the link and the directory
 * that holds it, and that directory is in none of agent_trees (absolute,
 * no link; NULL-terminated, or NULL): hostpath.c says why. The result has
 * no link left (malloc'd); whoever opens it later opens it with
 * RESOLVE_NO_SYMLINKS, so a link put there meanwhile is refused, not
 * followed. On failure -errno, and err says "WHAT PATH: why" (-ELOOP: a
 * link that is not followed, and what to name instead).
 */
int sr_hostpath_resolve(const char *what, const char *path, const char *const *agent_trees,
			char **ret_path, struct sr_error *err);

/*
 * path as given, or beneath the current directory (getcwd() names it
 * with no link in it): malloc'd, NULL with errno on failure.
 */
char *sr_hostpath_absolute(const char *path);

/*
 * The same for a path as the caller typed it (the agent, --workspace DIR):
 * a relative one is taken from the current directory.
 */
int sr_hostpath_resolve_arg(const char *what, const char *path, char **ret_path,
			    struct sr_error *err);

/*
 * The directory path (as the caller typed it) resolved as
 * sr_hostpath_resolve_arg() does and opened (O_RDONLY | O_DIRECTORY) with
 * RESOLVE_NO_SYMLINKS: a link put on its way since is refused, never
 * followed. An fd, or -errno with err ("WHAT PATH: why").
 */
int sr_hostpath_open_dir(const char *what, const char *path, struct sr_error *err);

/*
 * The nearest owner but root of the directory dir (an fd) and those above
 * it, as they are now (each ".." the kernel's, from dir itself), and that
 * directory's group: uid 0 for a tree of root's all the way up. A user
 * may rename a directory of root's to a name in a directory of theirs
 * (no right to what is moved is needed): it is in their tree, theirs to
 * answer for. -errno.
 */
int sr_hostpath_tree_owner(int dir, uid_t *ret_uid, gid_t *ret_gid);

/*
 * Whether only root and owner can change what is at the name of fd,
 * opened by path: every directory above it, each ".." the kernel's, is
 * root's or owner's, and writable by nobody else unless sticky (not for
 * a file's own directory: a file moves in from elsewhere with no right on
 * it) or by owner's own group (hostpath.c). A file's directory is opened
 * by path, absolute and with no link, and must hold it still. Renaming an
 * entry needs the right to write the directory that holds it, none on
 * the entry: a user who may write a directory above can move another
 * user's private directory to the name a caller gave. 0, or -errno with
 * err ("WHAT PATH: ..."): -EPERM names the directory and what to give
 * instead.
 */
int sr_hostpath_held(int fd, uid_t owner, const char *what, const char *path, struct sr_error *err);

/*
 * The same for the entry name in the directory dir, as one reading it
 * through dir judges it: only root and owner may change the names in dir
 * (sticky is enough for a directory, which moves in from elsewhere only
 * with the right to write it; not for a file), nor the name of dir or of
 * any directory above. 0, or -errno with err as above.
 */
int sr_hostpath_entry_held(int dir, const char *name, uid_t owner, const char *what,
			   const char *path, struct sr_error *err);

/*
 * The same for what a root caller acts on as owner's (a writable bind,
 * the workspace's id map, an export or changes file, apply), where that
 * would read a private directory moved in, or write in it as its owner.
 * Nothing is checked for a tree of root's (owner 0): what could be moved
 * to its name is root's too, from a directory others may write (a CI
 * checkout made with a umask of 000, GitLab's), or another user's, whose
 * tree it then is, checked.
 */
int sr_hostpath_owner_held(int fd, uid_t owner, const char *what, const char *path,
			   struct sr_error *err);
