/* SPDX-License-Identifier: MIT */
/* The child side: ordered set-up inside the new namespaces, then PID 1 (init.h). */
#pragma once

#include "agent.h"
#include "config.h"
#include "procview.h"

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

struct sr_net;
struct sr_cgroup;
struct sr_viewfs;

/* Host paths the filesystem is built from, opened by the child first (mounts-sources.c). */
struct sr_sources {
	int workspace;	/* the agent's directory, or -1 */
	int agent_file; /* an executable-file agent to copy in (agent.h file_path), or -1 */
	int *binds;	/* one per config->binds[] */
	size_t n_binds;
	/*
	 * For a helper handed its tap (net.h): /dev/net/tun as opened here,
	 * the configured tap after the network step, sent to the supervisor
	 * once the agent runs (init.c); else -1.
	 */
	int tap;
	/*
	 * The workspace's upper layer, kept by PID 1 (non-dumpable: out of
	 * the agent's reach) for the changes worker (work.h); -1 without an
	 * overlay. And the disk's root (O_PATH), handed to the host with
	 * READY for its count of the disk's use; -1 after that.
	 */
	int upper;
	int disk;
	int disk_dir; /* SR_DISK_DIR: the host directory, opened to be bound; else -1 */
};

/* Everything the child needs, prepared by the supervisor before clone. */
struct sr_plan {
	const struct sr_config *config;
	struct sr_agent *agent;
	struct sr_strv envp; /* the agent's whole environment, secrets included */
	int agent_fd;	     /* the archive (SR_AGENT_ARCHIVE), opened by the caller; else -1 */
	int workspace_tree;  /* root callers: the idmapped workspace (userns.h); else -1 */
	int sock;	     /* the child's end of the protocol socket */
	uid_t host_uid;	     /* who "user" (uid 1000 inside) is on the host */
	gid_t host_gid;
	/*
	 * Per-user kernel counts the sandbox shares with its host uid (the
	 * caller's own, unprivileged): its user namespace's limits, set to
	 * half of the host's so that the caller keeps the other half
	 * (userns.h); 0: leave as it is.
	 */
	uint64_t max_inotify_instances, max_inotify_watches;
	bool drop_groups;   /* the caller is root: shed its supplementary groups */
	bool nested_userns; /* set up as 0 in an outer user namespace (userns.h) */
	/*
	 * The sandbox's disk (disk.h): a tmpfs made here (-1), or the host's
	 * ext4 image's detached mount or directory, to attach (disk_kind).
	 */
	int disk_kind;	  /* enum sr_disk_kind */
	int disk_tree;	  /* SR_DISK_EXT4: the detached mount; else -1 */
	char *disk_dir;	  /* SR_DISK_DIR: the host directory (no link on its path) */
	bool disk_counts; /* statfs of the disk is its own count (not a host filesystem's) */
	int *bind_trees;  /* per bind: an idmapped detached mount to attach (root callers), or -1 */
	struct sr_sources sources; /* child only */

	/* What the agent sees of its machine (procview.h); child only: its server (viewfs.h). */
	struct sr_procview_plan view;
	struct sr_viewfs *views;

	const struct sr_net *net;
	const struct sr_cgroup *cgroup;
};

#define SR_SANDBOX_UID	    1000
#define SR_SANDBOX_GID	    1000
#define SR_SANDBOX_USER	    "user"
#define SR_SANDBOX_HOME	    "/home/user"
#define SR_SANDBOX_HOSTNAME "sandbox"

/* Runs in the child right after clone3; never returns. */
__attribute__((noreturn)) void sr_setup_child(struct sr_plan *p);

/* Closes every fd from 3 up but those in keep (-1 entries ignored; keep is sorted in place). */
int sr_close_fds_except(int *keep, size_t n);
