/* SPDX-License-Identifier: MIT */
/*
 * `sandbox-run export --oci DIR`: the sandbox a run would make, as an OCI
 * runtime bundle (config.json and rootfs/) that crun or runc runs.
 *
 * The same namespaces (user, PID, mount, IPC, UTS, network, cgroup), uid
 * 1000 mapped to the host id a run uses, no capability, no_new_privs, the
 * seccomp profile of the same rule table (sr_seccomp_oci_profile), the
 * same /proc masks, /dev, hostname and /etc files (child/layout.h), the
 * limits as linux.resources and, for a runtime with no cgroup it may use,
 * memory and pids as a run's rlimits too, the agent's command,
 * environment and cwd.
 * The workspace is the agent's files copied into rootfs/workspace and
 * mounted as a tmpfs that starts as a copy of them (crun's and runc's
 * "tmpcopyup"): writes go to memory and are gone with the container, as a
 * run's overlay upper layer is. docs/scale-out.md says what does not map
 * (the egress policy, the timeout, one disk limit for every mount).
 *
 * PID 1 is sandbox-run's (oci-init.h), as in a run: the binary is copied
 * into the bundle and bound in.
 *
 * The host's runtime is bound read-only, not copied: /usr is gigabytes,
 * and bound it is exactly the runtime the agent has under sandbox-run, so
 * the output is the same. The bundle runs on this machine, or one with
 * the same /usr; a sandbox for another machine is an image, which is what
 * export --k8s names.
 */
#pragma once

#include "config.h"

#include <jansson.h>
#include <stdint.h>
#include <sys/types.h>

/* What config.json says, every host fact already read: sr_oci_config() is pure. */
struct sr_oci_spec {
	const struct sr_config *config; /* limits, --bind/--ro-bind, profile */
	char *const *argv;		/* the command, NULL-terminated */
	char *const *envp;		/* its whole environment, NULL-terminated */
	uid_t host_uid;			/* who uid 1000 is on the host */
	gid_t host_gid;
	/* Absolute host directories bound read-only at the same place (/usr, /etc/ssl/certs). */
	const struct sr_strv *mirrored;
	/* config->binds[i]'s source, resolved on the host (hostpath.h). */
	const struct sr_strv *bind_sources;
	/* Whether config->binds[i]'s source is a file, not a directory (NULL: none is). */
	const bool *bind_files;
	uint64_t msgqueue;   /* RLIMIT_MSGQUEUE for the sandbox, 0 to leave it */
	uint64_t sigpending; /* RLIMIT_SIGPENDING for the sandbox, 0 to leave it */
	uint64_t memlock;    /* RLIMIT_MEMLOCK for the sandbox, 0 to leave it */
	/* RLIMIT_NOFILE for the sandbox, hard and soft; a hard 0 to leave it. */
	uint64_t files, files_soft;
	/*
	 * RLIMIT_DATA and RLIMIT_NPROC: --memory and --pids as a run holds
	 * them where it has no cgroup (cgroup-rlimit.c), within the
	 * exporter's hard limits; 0 to leave them. nproc is the init's to
	 * set (oci-init.h): none without one.
	 */
	uint64_t data, nproc;
	/* A file of the bundle bound over /proc/sys/kernel/random/boot_id, or NULL. */
	const char *boot_id;
	/*
	 * sandbox-run's binary in the bundle, bound as SR_OCI_INIT to be the
	 * container's PID 1 (oci-init.h) and run argv; NULL: argv is PID 1.
	 */
	const char *init;
};

/* The runtime spec version config.json is written to. */
#define SR_OCI_VERSION "1.0.2"

int sr_oci_config(const struct sr_oci_spec *s, json_t **ret, struct sr_error *err);

/*
 * Writes the bundle of c's sandbox into dir (created, or empty): rootfs/
 * and config.json (0600: the environment may hold --env-file's secrets).
 * Warnings (what does not map) go to sink. On failure what was written
 * stays, for the caller to see; err says what failed.
 */
int sr_oci_bundle(const char *dir, const struct sr_config *c, const struct sr_sink *sink,
		  struct sr_error *err);
