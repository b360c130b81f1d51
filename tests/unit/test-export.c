/* SPDX-License-Identifier: MIT */
/*
 * export's builders, pure: config.json of an OCI bundle (oci.h), every
 * mapped field checked against the configuration it came from.
 */
#include "config.h"
#include "json.h"
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
	ck_assert_int_eq(json_integer_value(get(find(p, "type", "RLIMIT_CORE"), "hard", NULL)), 0);
	ck_assert_int_eq(json_integer_value(get(find(p, "type", "RLIMIT_MSGQUEUE"), "soft", NULL)),
			 409600);
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

static Suite *export_suite(void)
{
	Suite *s = suite_create("export");
	TCase *o = tcase_create("oci");

	tcase_add_test(o, test_oci_process);
	tcase_add_test(o, test_oci_linux);
	tcase_add_test(o, test_oci_mounts);
	suite_add_tcase(s, o);
	return s;
}

int main(void)
{
	return sr_test_run(export_suite());
}
