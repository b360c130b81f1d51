/* SPDX-License-Identifier: MIT */
/*
 * The sandbox's file system, as data: what mounts.c builds inside the
 * sandbox, and what `sandbox-run export` describes to an OCI runtime
 * (export/bundle.c). One list each, so that the two cannot drift apart.
 */
#pragma once

#include <stddef.h>
#include <sys/types.h>

/* The root's directories, made first; and /var/tmp, a link to ../tmp. */
struct sr_layout_dir {
	const char *path; /* relative to the root */
	mode_t mode;
};
extern const struct sr_layout_dir sr_layout_skeleton[];
extern const size_t sr_layout_n_skeleton;

/* The host's runtime, mirrored read-only: /usr and the top-level links or directories into it. */
extern const char *const sr_layout_host_top[];
extern const size_t sr_layout_n_host_top;

/* The parts of /etc that programs need, mirrored read-only (paths below /etc). */
extern const char *const sr_layout_host_etc[];
extern const size_t sr_layout_n_host_etc;

/* Entries of /proc that reveal or change the host kernel: hidden (files, directories) or read-only.
 */
extern const char *const sr_layout_proc_hidden_files[];
extern const size_t sr_layout_n_proc_hidden_files;
extern const char *const sr_layout_proc_hidden_dirs[];
extern const size_t sr_layout_n_proc_hidden_dirs;
extern const char *const sr_layout_proc_readonly[];
extern const size_t sr_layout_n_proc_readonly;

/* The host's character devices bound into the sandbox's /dev. */
extern const char *const sr_layout_dev_nodes[];
extern const size_t sr_layout_n_dev_nodes;

/*
 * Ptys: every devpts instance draws from one host-wide pool
 * (kernel.pty.max, 4096, of which kernel.pty.reserve, 1024, only the
 * host's own instance may use): a sandbox that opened them all would
 * leave other sandboxes none. 64 each; the host keeps its reserve.
 */
#define SR_LAYOUT_PTYS_MAX "64"

/* The sandbox user's ids (setup.h) as text, for mount options: "uid=" SR_LAYOUT_UID. */
#define SR_LAYOUT_STR_(x) #x
#define SR_LAYOUT_STR(x)  SR_LAYOUT_STR_(x)
#define SR_LAYOUT_UID	  SR_LAYOUT_STR(SR_SANDBOX_UID)
#define SR_LAYOUT_GID	  SR_LAYOUT_STR(SR_SANDBOX_GID)

/* The synthesized /etc files: passwd, group, hosts, hostname. */
extern const char sr_layout_passwd[];
extern const char sr_layout_group[];
extern const char sr_layout_hosts[];
extern const char sr_layout_hostname[];
