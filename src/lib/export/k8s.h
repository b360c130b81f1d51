/* SPDX-License-Identifier: MIT */
/*
 * `sandbox-run export --k8s`: the sandbox a run would make, as Kubernetes
 * objects (one v1 List, in JSON: JSON is YAML 1.2, and kubectl applies a
 * List as its items).
 *
 * A Job per invocation (no retry: a fresh sandbox each time, the agent's
 * status its own), its pod as locked down as a run -- uid 1000 in a user
 * namespace of its own (hostUsers: false), no capability, no privilege
 * escalation, a read-only root, the same seccomp profile (Localhost), no
 * service account token, no service links -- with the run's limits as
 * requests and limits, its timeout as the Job's deadline, the workspace,
 * /tmp and $HOME as emptyDirs within the disk limit, and an egress-only
 * NetworkPolicy stating the run's nftables policy in CIDRs. Secrets are
 * Secret references, never values. With agent_sandbox, the same pod and
 * policy as kubernetes-sigs/agent-sandbox objects instead: a
 * SandboxTemplate, a SandboxWarmPool of pods waiting for their prompt,
 * and a SandboxClaim that takes one.
 *
 * docs/scale-out.md has the table of what maps and what cannot.
 */
#pragma once

#include "config.h"

#include <jansson.h>
#include <stdint.h>

struct sr_k8s_spec {
	const struct sr_config *config; /* limits, timeout, network policy, --env */
	const char *name;		/* every object's name (a DNS label) */
	const char *namespace_;		/* NULL: kubectl's */
	const char *image;		/* holds the agent's runtime, and its files in /agent */
	const char *runtime_class;	/* gvisor, kata, ...; NULL: the cluster's default */
	const char *secret;		/* the Secret the secret variables come from */
	const char *seccomp;  /* the profile's path under the kubelet's seccomp directory */
	char *const *command; /* NULL-terminated; NULL: the image's own */
	bool workspace;	      /* /agent of the image is copied to /workspace first */
	const struct sr_strv *secret_keys; /* variables set from the Secret */
	bool agent_sandbox;
	unsigned warm; /* the warm pool's size */
	int64_t now_s; /* the time (Unix seconds) a claim's deadline counts from */
};

/* The objects as one v1 List; what cannot be stated goes to sink as warnings. */
int sr_k8s_objects(const struct sr_k8s_spec *s, const struct sr_sink *sink, json_t **ret,
		   struct sr_error *err);

/* The egress rules of a NetworkPolicy stating c's policy (the DNS rule first). */
int sr_k8s_egress(const struct sr_config *c, const struct sr_sink *sink, json_t **ret,
		  struct sr_error *err);

/* A Kubernetes quantity: "2Gi", "512Mi", "1500" (bytes); "2", "500m" (CPUs). */
void sr_k8s_bytes(uint64_t bytes, char *buf, size_t len);
void sr_k8s_cpus(uint32_t milli, char *buf, size_t len);

/* Whether s is a DNS label (RFC 1123): 1-63 of a-z, 0-9 and '-', alphanumeric at both ends. */
bool sr_k8s_valid_name(const char *s);
