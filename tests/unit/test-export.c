/* SPDX-License-Identifier: MIT */
/*
 * export's builders, pure: config.json of an OCI bundle (oci.h) and the
 * Kubernetes objects (k8s.h), every mapped field checked against the
 * configuration it came from.
 */
#include "config.h"
#include "json.h"
#include "k8s.h"
#include "oci.h"
#include "util.h"
#include "testutil.h"

#include <check.h>
#include <stdarg.h>

/* The value at a path of keys and indexes: get(j, "a", "0", "b", NULL). */
static json_t *get(json_t *j, ...)
{
	va_list ap;

	va_start(ap, j);
	for (const char *k; j && (k = va_arg(ap, const char *));)
		j = json_is_array(j) ? json_array_get(j, strtoul(k, NULL, 10))
				     : json_object_get(j, k);
	va_end(ap);
	return j;
}

static const char *str(json_t *j)
{
	ck_assert_msg(json_is_string(j), "not a string");
	return json_string_value(j);
}

/* The element of array a whose key is value. */
static json_t *find(json_t *a, const char *key, const char *value)
{
	size_t i;
	json_t *e;

	json_array_foreach (a, i, e)
		if (sr_streq(json_string_value(json_object_get(e, key)), value))
			return e;
	return NULL;
}

static bool has_string(json_t *a, const char *s)
{
	size_t i;
	json_t *e;

	json_array_foreach (a, i, e)
		if (sr_streq(json_string_value(e), s))
			return true;
	return false;
}

static void config(struct sr_config *c)
{
	struct sr_error err = {0};

	sr_config_init(c);
	c->profile = strdup("default");
	ck_assert_int_eq(sr_config_set(c, "limits", "memory", "512M", &err), 0);
	ck_assert_int_eq(sr_config_set(c, "limits", "cpus", "1.5", &err), 0);
	ck_assert_int_eq(sr_config_set(c, "limits", "pids", "64", &err), 0);
	ck_assert_int_eq(sr_config_set(c, "limits", "disk", "1G", &err), 0);
	ck_assert_int_eq(sr_config_set(c, "limits", "timeout", "90s", &err), 0);
}

/* ---- config.json ---- */

static json_t *oci(const struct sr_config *c)
{
	static char *const argv[] = {"python3", "/workspace/main.py", NULL};
	static char *const envp[] = {"PATH=/usr/bin:/bin", "HOME=/home/user", "KEY=v", NULL};
	struct sr_strv mirrored = {0}, sources = {0};
	struct sr_oci_spec s = {
	    .config = c,
	    .argv = argv,
	    .envp = envp,
	    .host_uid = 4242,
	    .host_gid = 4343,
	    .mirrored = &mirrored,
	    .bind_sources = &sources,
	    .msgqueue = 409600,
	    .sigpending = 48182,
	    .memlock = 4194304,
	    .files = 10000,
	    .files_soft = 1024,
	    .boot_id = "boot_id",
	    .init = "sandbox-run-init",
	};
	struct sr_error err = {0};
	json_t *j = NULL;

	ck_assert_int_eq(sr_strv_push(&mirrored, "/usr"), 0);
	ck_assert_int_eq(sr_strv_push(&mirrored, "/etc/ssl/certs"), 0);
	for (size_t i = 0; i < c->n_binds; i++)
		ck_assert_int_eq(sr_strv_push(&sources, c->binds[i].src), 0);
	ck_assert_msg(sr_oci_config(&s, &j, &err) == 0, "%s", err.msg);
	sr_strv_free(&mirrored);
	sr_strv_free(&sources);
	return j;
}

START_TEST(test_oci_process)
{
	struct sr_config c;
	_cleanup_(sr_json_decrefp) json_t *j = NULL;
	json_t *p, *caps;
	const char *set;

	config(&c);
	j = oci(&c);
	ck_assert_str_eq(str(get(j, "ociVersion", NULL)), SR_OCI_VERSION);
	p = get(j, "process", NULL);
	ck_assert_int_eq(json_integer_value(get(p, "user", "uid", NULL)), 1000);
	ck_assert_int_eq(json_integer_value(get(p, "user", "gid", NULL)), 1000);
	ck_assert_int_eq(json_array_size(get(p, "user", "additionalGids", NULL)), 0);
	/* sandbox-run's init as PID 1, the agent's command after "--". */
	ck_assert_str_eq(str(get(p, "args", "0", NULL)), "/run/sandbox-run-init");
	ck_assert_str_eq(str(get(p, "args", "1", NULL)), "--");
	ck_assert_str_eq(str(get(p, "args", "3", NULL)), "/workspace/main.py");
	ck_assert_str_eq(str(get(p, "env", "2", NULL)), "KEY=v");
	ck_assert_str_eq(str(get(p, "cwd", NULL)), "/workspace");
	ck_assert(json_is_true(get(p, "noNewPrivileges", NULL)));
	ck_assert(json_is_false(get(p, "terminal", NULL)));
	/* No capability in any set. */
	caps = get(p, "capabilities", NULL);
	ck_assert_int_eq(json_object_size(caps), 5);
	json_object_foreach (caps, set, p)
		ck_assert_int_eq(json_array_size(p), 0);
	p = get(j, "process", "rlimits", NULL);
	/* 1, not 0: a pipe core_pattern ignores 0 (child/setup.c). */
	ck_assert_int_eq(json_integer_value(get(find(p, "type", "RLIMIT_CORE"), "hard", NULL)), 1);
	ck_assert_int_eq(json_integer_value(get(find(p, "type", "RLIMIT_CORE"), "soft", NULL)), 1);
	ck_assert_int_eq(json_integer_value(get(find(p, "type", "RLIMIT_MSGQUEUE"), "soft", NULL)),
			 409600);
	ck_assert_int_eq(
	    json_integer_value(get(find(p, "type", "RLIMIT_SIGPENDING"), "hard", NULL)), 48182);
	ck_assert_int_eq(json_integer_value(get(find(p, "type", "RLIMIT_MEMLOCK"), "hard", NULL)),
			 4194304);
	ck_assert_int_eq(json_integer_value(get(find(p, "type", "RLIMIT_NOFILE"), "hard", NULL)),
			 10000);
	ck_assert_int_eq(json_integer_value(get(find(p, "type", "RLIMIT_NOFILE"), "soft", NULL)),
			 1024);
	ck_assert(json_is_true(get(j, "root", "readonly", NULL)));
	ck_assert_str_eq(str(get(j, "root", "path", NULL)), "rootfs");
	ck_assert_str_eq(str(get(j, "hostname", NULL)), "sandbox");
	ck_assert_str_eq(str(get(j, "annotations", "sandbox-run.timeout", NULL)), "90s");
	sr_config_free(&c);
}
END_TEST

START_TEST(test_oci_linux)
{
	struct sr_config c;
	_cleanup_(sr_json_decrefp) json_t *j = NULL;
	json_t *l;
	static const char *const ns[] = {"user", "pid", "mount", "ipc", "uts", "network", "cgroup"};

	config(&c);
	j = oci(&c);
	l = get(j, "linux", NULL);
	ck_assert_int_eq(json_array_size(get(l, "namespaces", NULL)), SR_ARRAY_SIZE(ns));
	for (size_t i = 0; i < SR_ARRAY_SIZE(ns); i++)
		ck_assert_msg(find(get(l, "namespaces", NULL), "type", ns[i]), "no %s namespace",
			      ns[i]);
	/* uid 1000 alone, mapped to the host id a run uses: no root inside. */
	ck_assert_int_eq(json_array_size(get(l, "uidMappings", NULL)), 1);
	ck_assert_int_eq(json_integer_value(get(l, "uidMappings", "0", "containerID", NULL)), 1000);
	ck_assert_int_eq(json_integer_value(get(l, "uidMappings", "0", "hostID", NULL)), 4242);
	ck_assert_int_eq(json_integer_value(get(l, "uidMappings", "0", "size", NULL)), 1);
	ck_assert_int_eq(json_integer_value(get(l, "gidMappings", "0", "hostID", NULL)), 4343);
	/* The limits: memory and swap equal, cpus per 100 ms, pids. */
	ck_assert_int_eq(json_integer_value(get(l, "resources", "memory", "limit", NULL)),
			 512LL << 20);
	ck_assert_int_eq(json_integer_value(get(l, "resources", "memory", "swap", NULL)),
			 512LL << 20);
	ck_assert_int_eq(json_integer_value(get(l, "resources", "cpu", "quota", NULL)), 150000);
	ck_assert_int_eq(json_integer_value(get(l, "resources", "cpu", "period", NULL)), 100000);
	ck_assert_int_eq(json_integer_value(get(l, "resources", "pids", "limit", NULL)), 64);
	/* The profile of the rule table: ENOSYS by default. */
	ck_assert_str_eq(str(get(l, "seccomp", "defaultAction", NULL)), "SCMP_ACT_ERRNO");
	ck_assert_int_eq(json_integer_value(get(l, "seccomp", "defaultErrnoRet", NULL)), 38);
	ck_assert(has_string(get(l, "seccomp", "syscalls", "0", "names", NULL), "read"));
	ck_assert(has_string(get(l, "maskedPaths", NULL), "/proc/kcore"));
	ck_assert(has_string(get(l, "maskedPaths", NULL), "/proc/sysrq-trigger"));
	ck_assert(has_string(get(l, "maskedPaths", NULL), "/proc/acpi"));
	ck_assert(has_string(get(l, "readonlyPaths", NULL), "/proc/sys"));
	sr_config_free(&c);

	/* Limits of 0 are none: no resources. */
	sr_config_init(&c);
	c.memory_bytes = 0;
	c.cpus_milli = 0;
	c.pids = 0;
	j = (json_decref(j), oci(&c));
	ck_assert_int_eq(json_object_size(get(j, "linux", "resources", NULL)), 0);
	sr_config_free(&c);
}
END_TEST

static bool has_option(json_t *m, const char *o)
{
	return has_string(get(m, "options", NULL), o);
}

START_TEST(test_oci_mounts)
{
	struct sr_config c;
	struct sr_error err = {0};
	_cleanup_(sr_json_decrefp) json_t *j = NULL;
	json_t *mounts, *m;
	static const char *const disk[] = {"/workspace", "/tmp", "/home/user", "/dev/shm"};

	config(&c);
	ck_assert_int_eq(sr_config_add_bind(&c, "/srv/data", "/data", false, &err), 0);
	ck_assert_int_eq(sr_config_add_bind(&c, "/srv/out", "/out", true, &err), 0);
	j = oci(&c);
	mounts = get(j, "mounts", NULL);
	ck_assert_str_eq(str(get(find(mounts, "destination", "/proc"), "type", NULL)), "proc");
	ck_assert_str_eq(str(get(find(mounts, "destination", "/dev/pts"), "type", NULL)), "devpts");
	ck_assert(has_option(find(mounts, "destination", "/dev/pts"), "newinstance"));
	/* Every place the agent writes: a tmpfs of the disk limit. */
	for (size_t i = 0; i < SR_ARRAY_SIZE(disk); i++) {
		m = find(mounts, "destination", disk[i]);
		ck_assert_msg(m, "no %s", disk[i]);
		ck_assert_str_eq(str(get(m, "type", NULL)), "tmpfs");
		ck_assert(has_option(m, "size=1073741824"));
		ck_assert(has_option(m, "nosuid"));
	}
	/* The workspace starts as a copy of the agent's files. */
	ck_assert(has_option(find(mounts, "destination", "/workspace"), "tmpcopyup"));
	ck_assert(has_option(find(mounts, "destination", "/workspace"), "uid=1000"));
	/* The host's runtime: bound read-only, recursively. */
	m = find(mounts, "destination", "/usr");
	ck_assert_str_eq(str(get(m, "source", NULL)), "/usr");
	ck_assert(has_option(m, "rbind") && has_option(m, "rro") && has_option(m, "nodev"));
	ck_assert(has_option(find(mounts, "destination", "/etc/ssl/certs"), "rro"));
	ck_assert_str_eq(str(get(find(mounts, "destination", "/proc/sys/kernel/random/boot_id"),
				 "source", NULL)),
			 "boot_id");
	m = find(mounts, "destination", "/run/sandbox-run-init");
	ck_assert_str_eq(str(get(m, "source", NULL)), "sandbox-run-init");
	ck_assert(has_option(m, "ro"));
	/* --ro-bind read-only, --bind writable. */
	ck_assert(has_option(find(mounts, "destination", "/data"), "rro"));
	ck_assert(has_option(find(mounts, "destination", "/out"), "rw"));
	ck_assert_str_eq(str(get(find(mounts, "destination", "/out"), "source", NULL)), "/srv/out");
	sr_config_free(&c);
}
END_TEST

/* ---- Kubernetes ---- */

static void sink_collect(void *ctx, enum sr_log_level level, const char *text)
{
	char *buf = ctx;

	(void)level;
	strncat(buf, text, 4096 - strlen(buf) - 2);
	strcat(buf, "\n");
}

static char warnings[4096];

static json_t *k8s(const struct sr_config *c, bool agent_sandbox, int expect)
{
	static char *const cmd[] = {"node", "/workspace/index.js", NULL};
	struct sr_strv keys = {0};
	struct sr_sink sink = {.level = SR_LOG_WARNING, .write = sink_collect, .ctx = warnings};
	struct sr_k8s_spec s = {
	    .config = c,
	    .name = "agent-1",
	    .namespace_ = "agents",
	    .image = "registry.example/agent:1",
	    .runtime_class = "gvisor",
	    .secret = "agent-1-secrets",
	    .seccomp = "sandbox-run.json",
	    .command = cmd,
	    .workspace = true,
	    .secret_keys = &keys,
	    .agent_sandbox = agent_sandbox,
	    .warm = 3,
	    .now_s = 1700000000,
	};
	struct sr_error err = {0};
	json_t *j = NULL;

	warnings[0] = '\0';
	ck_assert_int_eq(sr_strv_push(&keys, "API_KEY"), 0);
	ck_assert_int_eq(sr_strv_push(&keys, "MODE"), 0);
	ck_assert_int_eq(sr_k8s_objects(&s, &sink, &j, &err), expect);
	sr_strv_free(&keys);
	return j;
}

START_TEST(test_k8s_job)
{
	struct sr_config c;
	struct sr_error err = {0};
	_cleanup_(sr_json_decrefp) json_t *j = NULL;
	json_t *job, *pod, *ctr, *sc, *env;

	config(&c);
	ck_assert_int_eq(sr_config_set_env(&c, "MODE", "fast", &err), 0);
	j = k8s(&c, false, 0);
	ck_assert_str_eq(str(get(j, "kind", NULL)), "List");
	job = get(j, "items", "0", NULL);
	ck_assert_str_eq(str(get(job, "kind", NULL)), "Job");
	ck_assert_str_eq(str(get(job, "apiVersion", NULL)), "batch/v1");
	ck_assert_str_eq(str(get(job, "metadata", "name", NULL)), "agent-1");
	ck_assert_str_eq(str(get(job, "metadata", "namespace", NULL)), "agents");
	ck_assert_int_eq(json_integer_value(get(job, "spec", "backoffLimit", NULL)), 0);
	ck_assert_int_eq(json_integer_value(get(job, "spec", "activeDeadlineSeconds", NULL)), 90);
	pod = get(job, "spec", "template", "spec", NULL);
	ck_assert_str_eq(str(get(pod, "restartPolicy", NULL)), "Never");
	ck_assert(json_is_false(get(pod, "automountServiceAccountToken", NULL)));
	ck_assert(json_is_false(get(pod, "hostUsers", NULL)));
	ck_assert_str_eq(str(get(pod, "runtimeClassName", NULL)), "gvisor");
	ck_assert(json_is_true(get(pod, "securityContext", "runAsNonRoot", NULL)));
	ck_assert_int_eq(json_integer_value(get(pod, "securityContext", "runAsUser", NULL)), 1000);
	ctr = get(pod, "containers", "0", NULL);
	ck_assert_str_eq(str(get(ctr, "image", NULL)), "registry.example/agent:1");
	ck_assert_str_eq(str(get(ctr, "command", "1", NULL)), "/workspace/index.js");
	ck_assert_str_eq(str(get(ctr, "workingDir", NULL)), "/workspace");
	ck_assert(json_is_true(get(ctr, "stdin", NULL)));
	sc = get(ctr, "securityContext", NULL);
	ck_assert(json_is_true(get(sc, "runAsNonRoot", NULL)));
	ck_assert_int_eq(json_integer_value(get(sc, "runAsUser", NULL)), 1000);
	ck_assert(json_is_false(get(sc, "allowPrivilegeEscalation", NULL)));
	ck_assert(json_is_true(get(sc, "readOnlyRootFilesystem", NULL)));
	ck_assert_str_eq(str(get(sc, "capabilities", "drop", "0", NULL)), "ALL");
	ck_assert_int_eq(json_array_size(get(sc, "capabilities", "drop", NULL)), 1);
	ck_assert_ptr_null(get(sc, "capabilities", "add", NULL));
	ck_assert_str_eq(str(get(sc, "seccompProfile", "type", NULL)), "Localhost");
	ck_assert_str_eq(str(get(sc, "seccompProfile", "localhostProfile", NULL)),
			 "sandbox-run.json");
	/* Requests are the limits: 512M, 1.5 CPUs, the 1G disk. */
	ck_assert_str_eq(str(get(ctr, "resources", "limits", "memory", NULL)), "512Mi");
	ck_assert_str_eq(str(get(ctr, "resources", "requests", "memory", NULL)), "512Mi");
	ck_assert_str_eq(str(get(ctr, "resources", "limits", "cpu", NULL)), "1500m");
	ck_assert_str_eq(str(get(ctr, "resources", "limits", "ephemeral-storage", NULL)), "1Gi");
	ck_assert_str_eq(
	    str(get(find(get(pod, "volumes", NULL), "name", "tmp"), "emptyDir", "sizeLimit", NULL)),
	    "1Gi");
	/* The agent's files from the image's /agent. */
	ck_assert_str_eq(str(get(pod, "initContainers", "0", "command", "2", NULL)), "/agent/.");
	/* --env by value; the secret keys by reference, but one --env sets. */
	env = get(ctr, "env", NULL);
	ck_assert_str_eq(str(get(find(env, "name", "MODE"), "value", NULL)), "fast");
	ck_assert_str_eq(
	    str(get(find(env, "name", "API_KEY"), "valueFrom", "secretKeyRef", "name", NULL)),
	    "agent-1-secrets");
	ck_assert_str_eq(
	    str(get(find(env, "name", "API_KEY"), "valueFrom", "secretKeyRef", "key", NULL)),
	    "API_KEY");
	ck_assert_ptr_null(get(find(env, "name", "API_KEY"), "value", NULL));
	ck_assert_ptr_null(get(find(env, "name", "MODE"), "valueFrom", NULL));
	sr_config_free(&c);
}
END_TEST

static json_t *egress_of(json_t *j)
{
	json_t *np = get(j, "items", "1", NULL);

	ck_assert_str_eq(str(get(np, "kind", NULL)), "NetworkPolicy");
	ck_assert(has_string(get(np, "spec", "policyTypes", NULL), "Ingress"));
	ck_assert(has_string(get(np, "spec", "policyTypes", NULL), "Egress"));
	ck_assert_int_eq(json_array_size(get(np, "spec", "ingress", NULL)), 0);
	ck_assert_str_eq(
	    str(get(np, "spec", "podSelector", "matchLabels", "app.kubernetes.io/instance", NULL)),
	    "agent-1");
	return get(np, "spec", "egress", NULL);
}

START_TEST(test_k8s_policy_default)
{
	struct sr_config c;
	struct sr_error err = {0};
	_cleanup_(sr_json_decrefp) json_t *j = NULL;
	json_t *egress, *v4, *v6;
	static const char *const refused4[] = {
	    "10.0.0.0/8",    "172.16.0.0/12", "192.168.0.0/16", "169.254.0.0/16",
	    "100.64.0.0/10", "127.0.0.0/8",   "224.0.0.0/4",	"8.8.8.8/32",
	};
	static const char *const refused6[] = {
	    "fc00::/7", "fe80::/10", "ff00::/8", "::1/128", "2001:db8::/32",
	};

	config(&c);
	ck_assert_int_eq(sr_config_set(&c, "network", "deny", "8.8.8.8:53", &err), 0);
	ck_assert_int_eq(sr_config_set(&c, "network", "deny", "2001:db8::/32", &err), 0);
	j = k8s(&c, false, 0);
	egress = egress_of(j);
	ck_assert_int_eq(json_array_size(egress), 2);
	/* DNS to kube-dns only. */
	ck_assert_str_eq(
	    str(get(egress, "0", "to", "0", "podSelector", "matchLabels", "k8s-app", NULL)),
	    "kube-dns");
	ck_assert_int_eq(json_integer_value(get(egress, "0", "ports", "0", "port", NULL)), 53);
	v4 = get(egress, "1", "to", "0", "ipBlock", NULL);
	v6 = get(egress, "1", "to", "1", "ipBlock", NULL);
	ck_assert_str_eq(str(get(v4, "cidr", NULL)), "0.0.0.0/0");
	ck_assert_str_eq(str(get(v6, "cidr", NULL)), "::/0");
	for (size_t i = 0; i < SR_ARRAY_SIZE(refused4); i++)
		ck_assert_msg(has_string(get(v4, "except", NULL), refused4[i]), "%s not excepted",
			      refused4[i]);
	for (size_t i = 0; i < SR_ARRAY_SIZE(refused6); i++)
		ck_assert_msg(has_string(get(v6, "except", NULL), refused6[i]), "%s not excepted",
			      refused6[i]);
	ck_assert_ptr_nonnull(strstr(warnings, "every port"));
	sr_config_free(&c);
}
END_TEST

START_TEST(test_k8s_policy_allowlist)
{
	struct sr_config c;
	struct sr_error err = {0};
	_cleanup_(sr_json_decrefp) json_t *j = NULL;
	json_t *egress;

	config(&c);
	ck_assert_int_eq(sr_config_set(&c, "network", "allow", "203.0.113.9:443", &err), 0);
	ck_assert_int_eq(sr_config_set(&c, "network", "allow", "10.0.5.0/24", &err), 0);
	ck_assert_int_eq(sr_config_set(&c, "network", "allow", "api.example.com", &err), 0);
	ck_assert_int_eq(sr_config_set(&c, "network", "allow", "198.51.100.7", &err), 0);
	ck_assert_int_eq(sr_config_set(&c, "network", "deny", "10.0.5.7", &err), 0);
	ck_assert_int_eq(sr_config_set(&c, "network", "deny", "198.51.100.0/24", &err), 0);
	j = k8s(&c, false, 0);
	egress = egress_of(j);
	/* DNS, the address with its port, the private range but its denied address; not the
	 * name, nor the address a --deny covers. */
	ck_assert_int_eq(json_array_size(egress), 3);
	ck_assert_str_eq(str(get(egress, "1", "to", "0", "ipBlock", "cidr", NULL)),
			 "203.0.113.9/32");
	ck_assert_int_eq(json_integer_value(get(egress, "1", "ports", "0", "port", NULL)), 443);
	ck_assert_str_eq(str(get(egress, "1", "ports", "0", "protocol", NULL)), "TCP");
	ck_assert_str_eq(str(get(egress, "1", "ports", "1", "protocol", NULL)), "UDP");
	ck_assert_str_eq(str(get(egress, "2", "to", "0", "ipBlock", "cidr", NULL)), "10.0.5.0/24");
	ck_assert_str_eq(str(get(egress, "2", "to", "0", "ipBlock", "except", "0", NULL)),
			 "10.0.5.7/32");
	ck_assert_ptr_null(get(egress, "2", "ports", NULL));
	ck_assert_ptr_nonnull(strstr(warnings, "api.example.com"));
	sr_config_free(&c);
}
END_TEST

START_TEST(test_k8s_allow_host)
{
	struct sr_config c;
	struct sr_error err = {0};
	_cleanup_(sr_json_decrefp) json_t *j = NULL;

	/* The host's loopback port has no rule in a cluster: left out, and said so. */
	config(&c);
	ck_assert_int_eq(sr_config_set(&c, "network", "allow-host", "8080", &err), 0);
	j = k8s(&c, false, 0);
	ck_assert_int_eq(json_array_size(egress_of(j)), 2);
	ck_assert_ptr_nonnull(strstr(warnings, "--allow-host 8080"));
	sr_config_free(&c);
}
END_TEST

START_TEST(test_k8s_pids)
{
	struct sr_config c;
	struct sr_error err = {0};
	_cleanup_(sr_json_decrefp) json_t *j = NULL;

	/* No pod field limits processes: the run's --pids is said to be left behind... */
	config(&c);
	j = k8s(&c, false, 0);
	ck_assert_ptr_nonnull(strstr(warnings, "the process limit (--pids 64) has no field"));
	json_decref(j);
	/* ...and --pids 0 (none) leaves nothing to say. */
	ck_assert_int_eq(sr_config_set(&c, "limits", "pids", "0", &err), 0);
	j = k8s(&c, false, 0);
	ck_assert_ptr_null(strstr(warnings, "--pids"));
	sr_config_free(&c);
}
END_TEST

START_TEST(test_k8s_policy_none)
{
	struct sr_config c;
	struct sr_error err = {0};
	_cleanup_(sr_json_decrefp) json_t *j = NULL;

	config(&c);
	ck_assert_int_eq(sr_config_set(&c, "network", "mode", "none", &err), 0);
	j = k8s(&c, false, 0);
	/* Not even DNS. */
	ck_assert_int_eq(json_array_size(egress_of(j)), 0);
	ck_assert(json_is_array(egress_of(j)));
	sr_config_free(&c);
}
END_TEST

START_TEST(test_k8s_deny_by_name)
{
	struct sr_config c;
	struct sr_error err = {0};
	json_t *j;

	/* A name cannot be refused in a NetworkPolicy: an error, never an open policy. */
	config(&c);
	ck_assert_int_eq(sr_config_set(&c, "network", "deny", "evil.example", &err), 0);
	j = k8s(&c, false, -EINVAL);
	ck_assert_ptr_null(j);
	sr_config_free(&c);
}
END_TEST

START_TEST(test_k8s_agent_sandbox)
{
	struct sr_config c;
	_cleanup_(sr_json_decrefp) json_t *j = NULL;
	json_t *t, *pool, *claim;

	config(&c);
	j = k8s(&c, true, 0);
	ck_assert_int_eq(json_array_size(get(j, "items", NULL)), 3);
	t = get(j, "items", "0", NULL);
	pool = get(j, "items", "1", NULL);
	claim = get(j, "items", "2", NULL);
	ck_assert_str_eq(str(get(t, "apiVersion", NULL)), "extensions.agents.x-k8s.io/v1beta1");
	ck_assert_str_eq(str(get(t, "kind", NULL)), "SandboxTemplate");
	ck_assert_str_eq(str(get(pool, "kind", NULL)), "SandboxWarmPool");
	ck_assert_str_eq(str(get(claim, "kind", NULL)), "SandboxClaim");
	ck_assert_str_eq(str(get(t, "spec", "podTemplate", "spec", "containers", "0",
				 "securityContext", "seccompProfile", "type", NULL)),
			 "Localhost");
	ck_assert_str_eq(str(get(t, "spec", "networkPolicyManagement", NULL)), "Managed");
	ck_assert_str_eq(
	    str(get(t, "spec", "networkPolicy", "egress", "1", "to", "0", "ipBlock", "cidr", NULL)),
	    "0.0.0.0/0");
	ck_assert_ptr_null(get(t, "spec", "networkPolicy", "ingress", NULL));
	ck_assert_int_eq(json_integer_value(get(pool, "spec", "replicas", NULL)), 3);
	ck_assert_str_eq(str(get(pool, "spec", "sandboxTemplateRef", "name", NULL)), "agent-1");
	ck_assert_str_eq(str(get(claim, "spec", "warmPoolRef", "name", NULL)), "agent-1");
	/* The timeout from "now": 1700000000 + 90 s. */
	ck_assert_str_eq(str(get(claim, "spec", "lifecycle", "shutdownTime", NULL)),
			 "2023-11-14T22:14:50Z");
	ck_assert_str_eq(str(get(claim, "spec", "lifecycle", "shutdownPolicy", NULL)), "Delete");
	sr_config_free(&c);
}
END_TEST

START_TEST(test_k8s_quantities)
{
	char buf[32];

	sr_k8s_bytes(2ULL << 30, buf, sizeof(buf));
	ck_assert_str_eq(buf, "2Gi");
	sr_k8s_bytes(1536ULL << 20, buf, sizeof(buf));
	ck_assert_str_eq(buf, "1536Mi");
	sr_k8s_bytes(1000, buf, sizeof(buf));
	ck_assert_str_eq(buf, "1000");
	sr_k8s_cpus(2000, buf, sizeof(buf));
	ck_assert_str_eq(buf, "2");
	sr_k8s_cpus(250, buf, sizeof(buf));
	ck_assert_str_eq(buf, "250m");
	ck_assert(sr_k8s_valid_name("agent-1"));
	ck_assert(!sr_k8s_valid_name("Agent"));
	ck_assert(!sr_k8s_valid_name("-a"));
	ck_assert(!sr_k8s_valid_name("a_b"));
	ck_assert(!sr_k8s_valid_name(""));
}
END_TEST

static Suite *export_suite(void)
{
	Suite *s = suite_create("export");
	TCase *o = tcase_create("oci");
	TCase *k = tcase_create("k8s");

	tcase_add_test(o, test_oci_process);
	tcase_add_test(o, test_oci_linux);
	tcase_add_test(o, test_oci_mounts);
	suite_add_tcase(s, o);
	tcase_add_test(k, test_k8s_job);
	tcase_add_test(k, test_k8s_policy_default);
	tcase_add_test(k, test_k8s_policy_allowlist);
	tcase_add_test(k, test_k8s_allow_host);
	tcase_add_test(k, test_k8s_pids);
	tcase_add_test(k, test_k8s_policy_none);
	tcase_add_test(k, test_k8s_deny_by_name);
	tcase_add_test(k, test_k8s_agent_sandbox);
	tcase_add_test(k, test_k8s_quantities);
	suite_add_tcase(s, k);
	return s;
}

int main(void)
{
	return sr_test_run(export_suite());
}
