/* SPDX-License-Identifier: MIT */
/* Kubernetes objects of an export (k8s.h). Pure: every fact is in the spec. */
#include "k8s.h"
#include "agent.h"
#include "json.h"
#include "nft.h"
#include "setup.h"
#include "util.h"

#include <inttypes.h>
#include <netinet/in.h>
#include <time.h>

/* How long a finished Job (or claim) stays to be read: its logs are the agent's stdout. */
#define FINISHED_TTL_S 600
/* Where the image holds the agent's files (docs/scale-out.md). */
#define IMAGE_AGENT_DIR	  "/agent"
#define AGENT_SANDBOX_API "extensions.agents.x-k8s.io/v1beta1"

void sr_k8s_bytes(uint64_t bytes, char *buf, size_t len)
{
	static const char *const suffix[] = {"Ei", "Pi", "Ti", "Gi", "Mi", "Ki"};

	for (size_t i = 0; i < SR_ARRAY_SIZE(suffix); i++) {
		uint64_t unit = 1ULL << (10 * (6 - i));

		if (bytes && bytes % unit == 0) {
			snprintf(buf, len, "%" PRIu64 "%s", bytes / unit, suffix[i]);
			return;
		}
	}
	snprintf(buf, len, "%" PRIu64, bytes);
}

void sr_k8s_cpus(uint32_t milli, char *buf, size_t len)
{
	if (milli % 1000 == 0)
		snprintf(buf, len, "%u", milli / 1000);
	else
		snprintf(buf, len, "%um", milli);
}

bool sr_k8s_valid_name(const char *s)
{
	size_t n = s ? strlen(s) : 0;

	if (n == 0 || n > 63 || s[0] == '-' || s[n - 1] == '-')
		return false;
	for (size_t i = 0; i < n; i++)
		if (!((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= '0' && s[i] <= '9') || s[i] == '-'))
			return false;
	return true;
}

/* ---- the NetworkPolicy's egress ---- */

/*
 * DNS, to the cluster's resolver only: a run's resolver (the helper's) is
 * always open, a cluster's is kube-dns, in kube-system.
 */
static json_t *dns_rule(void)
{
	return json_pack("{s:[{s:{s:{s:s}}, s:{s:{s:s}}}], s:[{s:s, s:i}, {s:s, s:i}]}", "to",
			 "namespaceSelector", "matchLabels", "kubernetes.io/metadata.name",
			 "kube-system", "podSelector", "matchLabels", "k8s-app", "kube-dns",
			 "ports", "protocol", "UDP", "port", 53, "protocol", "TCP", "port", 53);
}

static json_t *cidr_string(const struct sr_nft_dest *d)
{
	char buf[64];

	sr_nft_format_cidr(d, buf, sizeof(buf));
	return json_string(buf);
}

/*
 * The refused destinations: --deny, each an address (a name cannot be
 * stated in a NetworkPolicy, and leaving it out would open it: an error).
 * A NetworkPolicy allows, so a refusal is an "except" of what it allows,
 * for every port: a --deny with a port refuses the whole address here.
 */
static int read_denied(const struct sr_config *c, const struct sr_sink *sink,
		       struct sr_nft_dest **ret, struct sr_error *err)
{
	_cleanup_free_ struct sr_nft_dest *d = calloc(c->deny.n + 1, sizeof(*d));

	if (!d)
		return sr_error_errno(err, -ENOMEM, "--deny");
	for (size_t i = 0; i < c->deny.n; i++) {
		_cleanup_free_ char *host = NULL;
		unsigned port;

		if (sr_nft_split_dest(c->deny.items[i], &host, &port, err) < 0)
			return sr_error_prefix(err, "--deny");
		if (!sr_nft_is_address(host))
			return sr_error_msg(err, -EINVAL,
					    "--deny %s: a NetworkPolicy names no hosts; deny its "
					    "addresses instead",
					    c->deny.items[i]);
		if (sr_nft_parse_dest(c->deny.items[i], &d[i], err) < 0)
			return sr_error_prefix(err, "--deny");
		if (d[i].port)
			sr_warn(sink,
				"--deny %s: a NetworkPolicy refuses the address on every port, not "
				"port %u alone",
				c->deny.items[i], d[i].port);
	}
	*ret = steal_pointer(&d);
	return 0;
}

/*
 * An ipBlock allowing range but what extra and deny refuse inside it (an
 * except must lie strictly inside the block; a --deny inside one of
 * extra's needs no entry of its own). NULL, and *closed, when a refusal
 * covers the whole range: --deny wins over --allow, as in a run.
 */
/* Whether one of list's n ranges holds all of d. */
static bool within(const struct sr_nft_dest *d, const struct sr_nft_dest *list, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (sr_nft_dest_covers(&list[i], d))
			return true;
	return false;
}

static json_t *ip_block(const struct sr_nft_dest *range, const struct sr_nft_dest *extra,
			size_t n_extra, const struct sr_nft_dest *deny, size_t n_deny, bool *closed)
{
	json_t *except = json_array();
	const struct sr_nft_dest *lists[2] = {extra, deny};
	size_t counts[2] = {n_extra, n_deny};

	*closed = false;
	for (size_t l = 0; except && l < 2; l++) {
		for (size_t i = 0; i < counts[l]; i++) {
			const struct sr_nft_dest *x = &lists[l][i];

			if (x->family != range->family)
				continue;
			if (sr_nft_dest_covers(x, range)) {
				*closed = true;
				json_decref(except);
				return NULL;
			}
			if (!sr_nft_dest_covers(range, x) || (l == 1 && within(x, extra, n_extra)))
				continue;
			if (json_array_append_new(except, cidr_string(x)) < 0)
				return json_decref(except), NULL;
		}
	}
	if (!except)
		return NULL;
	if (json_array_size(except) == 0)
		return json_decref(except),
		       json_pack("{s:{s:o}}", "ipBlock", "cidr", cidr_string(range));
	return json_pack("{s:{s:o, s:o}}", "ipBlock", "cidr", cidr_string(range), "except", except);
}

/* Default mode: everything but the default refusals and --deny, IPv4 and IPv6. */
static int default_rule(json_t *rules, const struct sr_nft_dest *deny, size_t n_deny,
			struct sr_error *err)
{
	struct sr_nft_dest refused[32], all[2];
	json_t *to = json_array();
	size_t n = 0;

	if (!to)
		return sr_error_errno(err, -ENOMEM, "NetworkPolicy");
	for (const char *r; (r = sr_nft_refused_default(n)); n++)
		if (n >= SR_ARRAY_SIZE(refused) || sr_nft_parse_dest(r, &refused[n], err) < 0)
			return json_decref(to), sr_error_errno(err, -EINVAL, "default refusals");
	if (sr_nft_parse_dest("0.0.0.0/0", &all[0], err) < 0 ||
	    sr_nft_parse_dest("::/0", &all[1], err) < 0)
		return json_decref(to), err->code;
	for (size_t f = 0; f < 2; f++) {
		bool closed;
		json_t *block = ip_block(&all[f], refused, n, deny, n_deny, &closed);

		if (!block && !closed)
			return json_decref(to), sr_error_errno(err, -ENOMEM, "NetworkPolicy");
		if (block && json_array_append_new(to, block) < 0)
			return json_decref(to), sr_error_errno(err, -ENOMEM, "NetworkPolicy");
	}
	if (json_array_size(to) == 0)
		return json_decref(to), 0;
	return json_array_append_new(rules, json_pack("{s:o}", "to", to)) < 0
		   ? sr_error_errno(err, -ENOMEM, "NetworkPolicy")
		   : 0;
}

/*
 * Allowlist mode: each --allow written as an address, with its port for
 * TCP and UDP. An address written out opens even a private range, as in
 * a run. A host name cannot be stated (NetworkPolicy has no names): left
 * out, so that the cluster refuses it -- closed, never open.
 */
static int allow_rules(const struct sr_config *c, const struct sr_sink *sink, json_t *rules,
		       const struct sr_nft_dest *deny, size_t n_deny, struct sr_error *err)
{
	for (size_t i = 0; i < c->allow.n; i++) {
		_cleanup_free_ char *host = NULL;
		struct sr_nft_dest d;
		json_t *block, *rule;
		unsigned port;
		bool closed;

		if (sr_nft_split_dest(c->allow.items[i], &host, &port, err) < 0)
			return sr_error_prefix(err, "--allow");
		if (!sr_nft_is_address(host)) {
			sr_warn(
			    sink,
			    "--allow %s: a NetworkPolicy names no hosts: refused in the cluster "
			    "(allow its addresses, or use your network plugin's DNS policy: "
			    "docs/scale-out.md)",
			    c->allow.items[i]);
			continue;
		}
		if (sr_nft_parse_dest(c->allow.items[i], &d, err) < 0)
			return sr_error_prefix(err, "--allow");
		block = ip_block(&d, NULL, 0, deny, n_deny, &closed);
		if (closed)
			continue;
		rule = block ? json_pack("{s:[o]}", "to", block) : NULL;
		if (rule && d.port &&
		    json_object_set_new(rule, "ports",
					json_pack("[{s:s, s:i}, {s:s, s:i}]", "protocol", "TCP",
						  "port", (int)d.port, "protocol", "UDP", "port",
						  (int)d.port)) < 0)
			rule = (json_decref(rule), NULL);
		if (!rule || json_array_append_new(rules, rule) < 0)
			return sr_error_errno(err, -ENOMEM, "NetworkPolicy");
	}
	return 0;
}

/*
 * --allow-host opens a port of the host's own loopback; a pod's node is no
 * such host (and the cluster's nodes are not this machine), so no rule can
 * state it. Left out, so refused in the cluster -- closed, never open --
 * but said, rather than an option of the run dropped without a word.
 */
static void host_ports(const struct sr_config *c, const struct sr_sink *sink)
{
	for (size_t i = 0; i < c->allow_host.n; i++)
		sr_warn(sink,
			"--allow-host %s: a pod has no host loopback to reach: refused in the "
			"cluster (run the service in the cluster and --allow its address: "
			"docs/scale-out.md)",
			c->allow_host.items[i]);
}

int sr_k8s_egress(const struct sr_config *c, const struct sr_sink *sink, json_t **ret,
		  struct sr_error *err)
{
	_cleanup_(sr_json_decrefp) json_t *rules = json_array();
	_cleanup_free_ struct sr_nft_dest *deny = NULL;
	int r;

	if (!rules)
		return sr_error_errno(err, -ENOMEM, "NetworkPolicy");
	/* --net none: no egress at all, not even DNS. */
	if (c->net == SR_NET_NONE) {
		*ret = steal_pointer(&rules);
		return 0;
	}
	r = read_denied(c, sink, &deny, err);
	if (r < 0)
		return r;
	host_ports(c, sink);
	if (json_array_append_new(rules, dns_rule()) < 0)
		return sr_error_errno(err, -ENOMEM, "NetworkPolicy");
	r = c->allow.n ? allow_rules(c, sink, rules, deny, c->deny.n, err)
		       : default_rule(rules, deny, c->deny.n, err);
	if (r < 0)
		return r;
	*ret = steal_pointer(&rules);
	return 0;
}

/* ---- the pod ---- */

static json_t *labels(const struct sr_k8s_spec *s)
{
	return json_pack("{s:s, s:s}", "app.kubernetes.io/name", "sandbox-run",
			 "app.kubernetes.io/instance", s->name);
}

static json_t *metadata(const struct sr_k8s_spec *s)
{
	json_t *m = json_pack("{s:s, s:o}", "name", s->name, "labels", labels(s));

	if (m && s->namespace_ &&
	    json_object_set_new(m, "namespace", json_string(s->namespace_)) < 0)
		return json_decref(m), NULL;
	return m;
}

static json_t *seccomp_profile(const struct sr_k8s_spec *s)
{
	return json_pack("{s:s, s:s}", "type", "Localhost", "localhostProfile", s->seccomp);
}

/* As a run's agent: uid 1000, nothing to gain, nothing to write but its volumes. */
static json_t *container_security(const struct sr_k8s_spec *s)
{
	return json_pack("{s:b, s:i, s:i, s:b, s:b, s:b, s:{s:[s]}, s:o}", "runAsNonRoot", true,
			 "runAsUser", SR_SANDBOX_UID, "runAsGroup", SR_SANDBOX_GID,
			 "allowPrivilegeEscalation", false, "privileged", false,
			 "readOnlyRootFilesystem", true, "capabilities", "drop", "ALL",
			 "seccompProfile", seccomp_profile(s));
}

/* Requests equal to limits: the run's limits, held (Guaranteed QoS). */
static json_t *resources(const struct sr_config *c)
{
	json_t *limits = json_object();
	char buf[32];

	if (!limits)
		return NULL;
	if (c->memory_bytes) {
		sr_k8s_bytes(c->memory_bytes, buf, sizeof(buf));
		json_object_set_new(limits, "memory", json_string(buf));
	}
	if (c->cpus_milli) {
		sr_k8s_cpus(c->cpus_milli, buf, sizeof(buf));
		json_object_set_new(limits, "cpu", json_string(buf));
	}
	/* What the pod writes, its emptyDirs included: evicted past it. */
	if (c->disk_bytes) {
		sr_k8s_bytes(c->disk_bytes, buf, sizeof(buf));
		json_object_set_new(limits, "ephemeral-storage", json_string(buf));
	}
	return json_pack("{s:O, s:o}", "requests", limits, "limits", limits);
}

/*
 * One entry for name: an earlier one replaced in its place, else appended
 * (entry is stolen). Twice the same name is a List that server-side
 * apply refuses (a duplicate merge key) and one whose value the reader
 * must guess.
 */
static int env_put(json_t *env, json_t *entry)
{
	const char *name = json_string_value(json_object_get(entry, "name"));

	if (!entry)
		return -ENOMEM;
	for (size_t i = 0; i < json_array_size(env); i++) {
		const char *other =
		    json_string_value(json_object_get(json_array_get(env, i), "name"));

		if (sr_streq(other, name))
			return json_array_set_new(env, i, entry) < 0 ? -ENOMEM : 0;
	}
	return json_array_append_new(env, entry) < 0 ? -ENOMEM : 0;
}

/*
 * The environment of a run: PATH, HOME, LANG (C.UTF-8: the exporter's
 * locale need not be in the image); the secret variables (--env-file's
 * keys, --pass-env's names, --secret) from the Secret by reference;
 * --env values. Each name once, the later replacing the earlier as in a
 * run (env.c): `--pass-env HOME` is the Secret's HOME, not the default
 * beside it, and --env's value wins over a secret's.
 */
static json_t *environment(const struct sr_k8s_spec *s)
{
	const struct sr_config *c = s->config;
	json_t *env =
	    json_pack("[{s:s, s:s}, {s:s, s:s}, {s:s, s:s}]", "name", "PATH", "value",
		      "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", "name",
		      "HOME", "value", SR_SANDBOX_HOME, "name", "LANG", "value", "C.UTF-8");

	for (size_t i = 0; env && s->secret_keys && i < s->secret_keys->n; i++) {
		const char *key = s->secret_keys->items[i];

		if (env_put(env, json_pack("{s:s, s:{s:{s:s, s:s}}}", "name", key, "valueFrom",
					   "secretKeyRef", "name", s->secret, "key", key)) < 0)
			return json_decref(env), NULL;
	}
	for (size_t i = 0; env && i < c->env.n; i++) {
		const char *kv = c->env.items[i], *eq = strchr(kv, '=');
		_cleanup_free_ char *key = eq ? strndup(kv, (size_t)(eq - kv)) : NULL;

		if (!key || env_put(env, json_pack("{s:s, s:o}", "name", key, "value",
						   sr_json_string(eq + 1))) < 0)
			return json_decref(env), NULL;
	}
	return env;
}

static json_t *mount(const char *name, const char *path)
{
	return json_pack("{s:s, s:s}", "name", name, "mountPath", path);
}

static json_t *agent_container(const struct sr_k8s_spec *s)
{
	json_t *c = json_pack("{s:s, s:s, s:s, s:b, s:b, s:b, s:o, s:o, s:o, s:[o, o, o]}", "name",
			      "agent", "image", s->image, "workingDir", SR_WORKSPACE, "stdin", true,
			      "stdinOnce", true, "tty", false, "env", environment(s), "resources",
			      resources(s->config), "securityContext", container_security(s),
			      "volumeMounts", mount("workspace", SR_WORKSPACE),
			      mount("tmp", "/tmp"), mount("home", SR_SANDBOX_HOME));
	json_t *cmd = s->command ? json_array() : NULL;

	for (char *const *a = s->command; c && cmd && *a; a++)
		if (json_array_append_new(cmd, sr_json_string(*a)) < 0)
			cmd = (json_decref(cmd), NULL);
	/* No command: the image's own entry point runs. */
	if (c && s->command && (!cmd || json_object_set_new(c, "command", cmd) < 0))
		return json_decref(c), NULL;
	return c;
}

/*
 * The agent's files from the image into the writable workspace, as a
 * run's overlay has them: POSIX cp -R (modes kept but for the umask's
 * bits; GNU's and busybox's alike), as uid 1000, whose copies they are.
 */
static json_t *workspace_container(const struct sr_k8s_spec *s)
{
	return json_pack("{s:s, s:s, s:[s, s, s, s], s:o, s:o, s:[o]}", "name", "workspace",
			 "image", s->image, "command", "cp", "-R", IMAGE_AGENT_DIR "/.",
			 SR_WORKSPACE "/", "resources", resources(s->config), "securityContext",
			 container_security(s), "volumeMounts", mount("workspace", SR_WORKSPACE));
}

static json_t *volume(const char *name, const struct sr_config *c)
{
	char size[32];

	if (!c->disk_bytes)
		return json_pack("{s:s, s:{}}", "name", name, "emptyDir");
	sr_k8s_bytes(c->disk_bytes, size, sizeof(size));
	return json_pack("{s:s, s:{s:s}}", "name", name, "emptyDir", "sizeLimit", size);
}

/*
 * The pod: in a user namespace of its own (hostUsers: false), so that
 * uid 1000 is no host uid of the node's; no service account token and no
 * service links (the agent gets no cluster credentials and no addresses
 * of the namespace's services); the pause container as PID 1, reaping
 * what the agent leaves (as a run's init; PID 1 would also ignore every
 * signal it has no handler for); a second for the agent to end on
 * SIGTERM, as a run's END grace.
 */
static json_t *pod_spec(const struct sr_k8s_spec *s)
{
	json_t *pod = json_pack(
	    "{s:s, s:b, s:b, s:b, s:b, s:s, s:i, s:{s:b, s:i, s:i, s:i, s:o}, s:[o], s:[o, o, o]}",
	    "restartPolicy", "Never", "automountServiceAccountToken", false, "enableServiceLinks",
	    false, "hostUsers", false, "shareProcessNamespace", true, "hostname",
	    SR_SANDBOX_HOSTNAME, "terminationGracePeriodSeconds", 1, "securityContext",
	    "runAsNonRoot", true, "runAsUser", SR_SANDBOX_UID, "runAsGroup", SR_SANDBOX_GID,
	    "fsGroup", SR_SANDBOX_GID, "seccompProfile", seccomp_profile(s), "containers",
	    agent_container(s), "volumes", volume("workspace", s->config), volume("tmp", s->config),
	    volume("home", s->config));

	if (pod && s->runtime_class &&
	    json_object_set_new(pod, "runtimeClassName", json_string(s->runtime_class)) < 0)
		return json_decref(pod), NULL;
	if (pod && s->workspace &&
	    json_object_set_new(pod, "initContainers", json_pack("[o]", workspace_container(s))) <
		0)
		return json_decref(pod), NULL;
	return pod;
}

/* ---- the objects ---- */

static json_t *job(const struct sr_k8s_spec *s)
{
	json_t *j =
	    json_pack("{s:s, s:s, s:o, s:{s:i, s:i, s:{s:o, s:o}}}", "apiVersion", "batch/v1",
		      "kind", "Job", "metadata", metadata(s), "spec", "backoffLimit", 0,
		      "ttlSecondsAfterFinished", FINISHED_TTL_S, "template", "metadata",
		      json_pack("{s:o}", "labels", labels(s)), "spec", pod_spec(s));
	/* The run's timeout, from the pod's start: then the Job fails, its pod killed. */
	if (j && s->config->timeout_ms &&
	    json_object_set_new(json_object_get(j, "spec"), "activeDeadlineSeconds",
				json_integer((json_int_t)((s->config->timeout_ms + 999) / 1000))) <
		0)
		return json_decref(j), NULL;
	return j;
}

/* Egress only: nothing comes in; out, the run's policy. */
static json_t *network_policy(const struct sr_k8s_spec *s, json_t *egress)
{
	return json_pack("{s:s, s:s, s:o, s:{s:{s:o}, s:[s, s], s:[], s:O}}", "apiVersion",
			 "networking.k8s.io/v1", "kind", "NetworkPolicy", "metadata", metadata(s),
			 "spec", "podSelector", "matchLabels", labels(s), "policyTypes", "Ingress",
			 "Egress", "ingress", "egress", egress);
}

/*
 * agent-sandbox: the template holds the pod and the policy (the
 * controller makes the NetworkPolicy from it: ingress left empty is none
 * allowed); warm pods start the agent, which waits on stdin for its
 * prompt; a claim takes one, until the run's timeout from now.
 */
static int agent_sandbox(const struct sr_k8s_spec *s, json_t *egress, json_t *items)
{
	json_t *claim, *lifecycle;

	if (json_array_append_new(
		items,
		json_pack("{s:s, s:s, s:o, s:{s:{s:{s:o}, s:o}, s:s, s:{s:O}, s:s}}", "apiVersion",
			  AGENT_SANDBOX_API, "kind", "SandboxTemplate", "metadata", metadata(s),
			  "spec", "podTemplate", "metadata", "labels", labels(s), "spec",
			  pod_spec(s), "networkPolicyManagement", "Managed", "networkPolicy",
			  "egress", egress, "envVarsInjectionPolicy", "Disallowed")) < 0 ||
	    json_array_append_new(items, json_pack("{s:s, s:s, s:o, s:{s:i, s:{s:s}}}",
						   "apiVersion", AGENT_SANDBOX_API, "kind",
						   "SandboxWarmPool", "metadata", metadata(s),
						   "spec", "replicas", (int)s->warm,
						   "sandboxTemplateRef", "name", s->name)) < 0)
		return -ENOMEM;
	lifecycle = json_pack("{s:s, s:i}", "shutdownPolicy", "Delete", "ttlSecondsAfterFinished",
			      FINISHED_TTL_S);
	if (lifecycle && s->config->timeout_ms) {
		time_t t = (time_t)(s->now_s + (int64_t)((s->config->timeout_ms + 999) / 1000));
		struct tm tm;
		char when[32];

		if (!gmtime_r(&t, &tm) ||
		    !strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%SZ", &tm) ||
		    json_object_set_new(lifecycle, "shutdownTime", json_string(when)) < 0)
			lifecycle = (json_decref(lifecycle), NULL);
	}
	claim = json_pack("{s:s, s:s, s:o, s:{s:{s:s}, s:o}}", "apiVersion", AGENT_SANDBOX_API,
			  "kind", "SandboxClaim", "metadata", metadata(s), "spec", "warmPoolRef",
			  "name", s->name, "lifecycle", lifecycle);
	return json_array_append_new(items, claim) < 0 ? -ENOMEM : 0;
}

/*
 * A pod spec has no process limit: the kubelet's podPidsLimit is one
 * value for every pod of a node (unlimited unless its operator set it).
 * The run's --pids is not held in the cluster, and is said so rather
 * than dropped without a word (--pids 0 asks for none).
 */
static void unheld_limits(const struct sr_config *c, const struct sr_sink *sink)
{
	if (c->pids)
		sr_warn(sink,
			"the process limit (--pids %llu) has no field in a pod spec (the "
			"kubelet's podPidsLimit is node-wide): not held in the cluster "
			"(docs/scale-out.md)",
			(unsigned long long)c->pids);
}

int sr_k8s_objects(const struct sr_k8s_spec *s, const struct sr_sink *sink, json_t **ret,
		   struct sr_error *err)
{
	_cleanup_(sr_json_decrefp) json_t *egress = NULL;
	_cleanup_(sr_json_decrefp) json_t *items = json_array();
	int r;

	if (!items)
		return sr_error_errno(err, -ENOMEM, "objects");
	r = sr_k8s_egress(s->config, sink, &egress, err);
	if (r < 0)
		return r;
	unheld_limits(s->config, sink);
	if (s->agent_sandbox)
		r = agent_sandbox(s, egress, items);
	else if (json_array_append_new(items, job(s)) < 0 ||
		 json_array_append_new(items, network_policy(s, egress)) < 0)
		r = -ENOMEM;
	if (r < 0)
		return sr_error_errno(err, r, "objects");
	*ret = json_pack("{s:s, s:s, s:O}", "apiVersion", "v1", "kind", "List", "items", items);
	return *ret ? 0 : sr_error_errno(err, -ENOMEM, "objects");
}
