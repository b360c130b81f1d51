/* SPDX-License-Identifier: MIT */
/*
 * doctor's judgement from facts alone: sysctls read from a fake /proc/sys
 * root (Ubuntu's AppArmor restriction, Debian's unprivileged_userns_clone,
 * user.max_user_namespaces=0), and every other check from facts built here.
 */
#include "doctor.h"
#include "util.h"
#include "testutil.h"

#include <check.h>
#include <limits.h>
#include <stdarg.h>
#include <sys/stat.h>

/* A fake /proc/sys with the given "dir/name" = value files; NULL ends. */
static void fake_sysctls(char *root, size_t len, ...)
{
	static const char *const dirs[] = {"kernel", "user"};
	va_list ap;
	const char *name;

	sr_test_mkdtemp(root, len, sr_test_basedir, "proc-sys");
	for (size_t i = 0; i < SR_ARRAY_SIZE(dirs); i++) {
		char path[256];

		snprintf(path, sizeof(path), "%s/%s", root, dirs[i]);
		ck_assert_int_eq(mkdir(path, 0755), 0);
	}
	va_start(ap, len);
	while ((name = va_arg(ap, const char *))) {
		const char *value = va_arg(ap, const char *);
		char path[256];
		FILE *f;

		snprintf(path, sizeof(path), "%s/%s", root, name);
		f = fopen(path, "w");
		ck_assert_ptr_nonnull(f);
		fprintf(f, "%s\n", value);
		ck_assert_int_eq(fclose(f), 0);
	}
	va_end(ap);
}

/* A host where everything is at full strength, for an unprivileged caller. */
static void healthy(struct sr_host_facts *f)
{
	*f = (struct sr_host_facts){
	    .release = "6.1.0-28-amd64",
	    .kernel_major = 6,
	    .kernel_minor = 1,
	    .has_mount_setattr = true,
	    .has_clone3 = true,
	    .userns_clone = SR_SYSCTL_ABSENT,
	    .max_userns = 63429,
	    .apparmor_restrict = SR_SYSCTL_ABSENT,
	    .exe = SR_BINDIR "/sandbox-run",
	    .overlay = 1,
	    .cgroup_layout = 2,
	    .cgroup_strategy = "cgroup2",
	    .cgroup_enforced = {SR_ENFORCE_CGROUP2, SR_ENFORCE_CGROUP2, SR_ENFORCE_CGROUP2},
	    .user_manager = true,
	    .slirp4netns = "slirp4netns version 1.2.0",
	    .tun = 1,
	    .nf_tables = 1,
	    .trial = {.tried = true, .ok = true, .net = SR_ENFORCE_NETNS},
	    .egress = {.tried = true, .ok = true, .net = SR_ENFORCE_NFTABLES},
	};
}

static const struct sr_check *find(const struct sr_check *c, size_t n, const char *name)
{
	for (size_t i = 0; i < n; i++)
		if (strcmp(c[i].name, name) == 0)
			return &c[i];
	ck_abort_msg("no check %s", name);
	return NULL;
}

/* Evaluates f; the exit status, and check name's verdict in *v. */
static int judge(const struct sr_host_facts *f, const char *name, enum sr_verdict *v,
		 struct sr_check out[SR_DOCTOR_CHECKS])
{
	size_t n = sr_doctor_evaluate(f, out);

	ck_assert_uint_eq(n, SR_DOCTOR_CHECKS);
	*v = find(out, n, name)->verdict;
	return sr_doctor_exit_status(sr_doctor_verdict(out, n));
}

START_TEST(test_healthy)
{
	struct sr_host_facts f;
	struct sr_check c[SR_DOCTOR_CHECKS];
	enum sr_verdict v;

	healthy(&f);
	ck_assert_int_eq(judge(&f, "kernel", &v, c), 0);
	for (size_t i = 0; i < SR_DOCTOR_CHECKS; i++) {
		ck_assert_msg(c[i].verdict == SR_VERDICT_OK, "%s: %s", c[i].name, c[i].found);
		ck_assert_str_eq(c[i].fix, "");
		ck_assert_str_ne(c[i].found, "");
	}
}
END_TEST

/* Ubuntu 23.10+: kernel.apparmor_restrict_unprivileged_userns=1. */
START_TEST(test_apparmor_restrict)
{
	char root[128];
	struct sr_host_facts f;
	struct sr_check c[SR_DOCTOR_CHECKS];
	const struct sr_check *a;
	enum sr_verdict v;

	fake_sysctls(root, sizeof(root), "kernel/apparmor_restrict_unprivileged_userns", "1",
		     "user/max_user_namespaces", "63429", NULL);
	healthy(&f);
	sr_doctor_read_userns(root, &f);
	ck_assert_int_eq(f.apparmor_restrict, 1);
	ck_assert_int_eq(f.max_userns, 63429);
	ck_assert_int_eq(f.userns_clone, SR_SYSCTL_ABSENT);

	/* Unconfined and unprivileged: restricted; the fix loads the shipped profile. */
	snprintf(f.exe, sizeof(f.exe), "%s", SR_BINDIR "/sandbox-run");
	f.root = false;
	f.apparmor_label[0] = '\0';
	f.apparmor_profile = true;
	ck_assert_int_eq(judge(&f, "apparmor", &v, c), 2);
	ck_assert_int_eq(v, SR_VERDICT_FAILS);
	a = find(c, SR_DOCTOR_CHECKS, "apparmor");
	ck_assert_ptr_nonnull(strstr(a->found, "apparmor_restrict_unprivileged_userns is 1"));
	ck_assert_ptr_nonnull(strstr(a->fix, "sudo apparmor_parser -r " SR_APPARMOR_PROFILE));
	ck_assert_ptr_null(strstr(a->fix, "does not cover"));

	/* Another binary than the installed one: the profile would not cover it. */
	snprintf(f.exe, sizeof(f.exe), "/home/u/src/sandbox-run");
	judge(&f, "apparmor", &v, c);
	ck_assert_ptr_nonnull(strstr(find(c, SR_DOCTOR_CHECKS, "apparmor")->fix,
				     "does not cover this binary, /home/u/src/sandbox-run"));

	/* Profile not installed: the fix installs it first. */
	f.apparmor_profile = false;
	judge(&f, "apparmor", &v, c);
	ck_assert_ptr_nonnull(strstr(find(c, SR_DOCTOR_CHECKS, "apparmor")->fix,
				     "sudo install -m 0644 apparmor/sandbox-run"));

	/* "unconfined" is no profile either. */
	snprintf(f.apparmor_label, sizeof(f.apparmor_label), "unconfined");
	ck_assert_int_eq(judge(&f, "apparmor", &v, c), 2);

	/* Under the loaded profile: ok. */
	snprintf(f.apparmor_label, sizeof(f.apparmor_label), "sandbox-run (unconfined)");
	ck_assert_int_eq(judge(&f, "apparmor", &v, c), 0);
	ck_assert_int_eq(v, SR_VERDICT_OK);

	/* Root is not restricted. */
	f.apparmor_label[0] = '\0';
	f.root = true;
	f.subuid = true;
	ck_assert_int_eq(judge(&f, "apparmor", &v, c), 0);
}
END_TEST

START_TEST(test_max_user_namespaces_zero)
{
	char root[128];
	struct sr_host_facts f;
	struct sr_check c[SR_DOCTOR_CHECKS];
	const struct sr_check *u;
	enum sr_verdict v;

	fake_sysctls(root, sizeof(root), "user/max_user_namespaces", "0", NULL);
	healthy(&f);
	sr_doctor_read_userns(root, &f);
	ck_assert_int_eq(f.max_userns, 0);
	ck_assert_int_eq(f.apparmor_restrict, SR_SYSCTL_ABSENT);
	/* The trial fails too, as it would: explained by the sysctl, not by the container. */
	f.trial = (struct sr_doctor_trial){.tried = true, .error = "create namespaces: ..."};
	f.egress.tried = false;
	snprintf(f.container, sizeof(f.container), "docker");
	for (int r = 0; r < 2; r++) {
		f.root = r;
		f.subuid = true;
		ck_assert_int_eq(judge(&f, "user_namespaces", &v, c), 2);
		ck_assert_int_eq(v, SR_VERDICT_FAILS);
		u = find(c, SR_DOCTOR_CHECKS, "user_namespaces");
		ck_assert_ptr_nonnull(strstr(u->found, "user.max_user_namespaces is 0"));
		ck_assert_ptr_nonnull(
		    strstr(u->fix, "sudo sysctl -w user.max_user_namespaces=15000"));
		ck_assert_int_eq(find(c, SR_DOCTOR_CHECKS, "container")->verdict, SR_VERDICT_OK);
		ck_assert_int_eq(find(c, SR_DOCTOR_CHECKS, "sandbox")->verdict, SR_VERDICT_FAILS);
		ck_assert_ptr_nonnull(
		    strstr(find(c, SR_DOCTOR_CHECKS, "sandbox")->fix, "failing checks above"));
	}
}
END_TEST

/* Debian before 11: kernel.unprivileged_userns_clone=0 stops users, not root. */
START_TEST(test_userns_clone_zero)
{
	char root[128];
	struct sr_host_facts f;
	struct sr_check c[SR_DOCTOR_CHECKS];
	enum sr_verdict v;

	fake_sysctls(root, sizeof(root), "kernel/unprivileged_userns_clone", "0",
		     "user/max_user_namespaces", "15000", NULL);
	healthy(&f);
	sr_doctor_read_userns(root, &f);
	f.root = false;
	ck_assert_int_eq(judge(&f, "user_namespaces", &v, c), 2);
	ck_assert_ptr_nonnull(strstr(find(c, SR_DOCTOR_CHECKS, "user_namespaces")->fix,
				     "kernel.unprivileged_userns_clone=1"));
	f.root = true;
	f.subuid = true;
	ck_assert_int_eq(judge(&f, "user_namespaces", &v, c), 0);
	ck_assert_ptr_nonnull(
	    strstr(find(c, SR_DOCTOR_CHECKS, "user_namespaces")->found, "restricts users"));
}
END_TEST

/* An empty /proc/sys: no knob exists, nothing restricts. */
START_TEST(test_sysctls_absent)
{
	char root[128];
	struct sr_host_facts f;
	struct sr_check c[SR_DOCTOR_CHECKS];
	enum sr_verdict v;

	fake_sysctls(root, sizeof(root), NULL);
	healthy(&f);
	sr_doctor_read_userns(root, &f);
	ck_assert_int_eq(f.max_userns, SR_SYSCTL_ABSENT);
	f.root = false;
	ck_assert_int_eq(judge(&f, "user_namespaces", &v, c), 0);
}
END_TEST

START_TEST(test_cgroup_fixes)
{
	struct sr_host_facts f;
	struct sr_check c[SR_DOCTOR_CHECKS];
	const struct sr_check *g;
	enum sr_verdict v;

	healthy(&f);
	snprintf(f.cgroup_strategy, sizeof(f.cgroup_strategy), "rlimit");
	f.cgroup_enforced[0] = f.cgroup_enforced[2] = SR_ENFORCE_RLIMIT;
	f.cgroup_enforced[1] = SR_ENFORCE_NONE;
	ck_assert_int_eq(judge(&f, "cgroup", &v, c), 1);
	ck_assert_int_eq(v, SR_VERDICT_DEGRADED);
	g = find(c, SR_DOCTOR_CHECKS, "cgroup");
	ck_assert_ptr_nonnull(strstr(g->found, "memory, cpus and pids limits"));
	ck_assert_ptr_nonnull(strstr(g->fix, "systemd-run --user --scope -p Delegate=yes"));

	f.user_manager = false;
	judge(&f, "cgroup", &v, c);
	ck_assert_ptr_nonnull(strstr(find(c, SR_DOCTOR_CHECKS, "cgroup")->fix, "enable-linger"));

	f.cgroup_layout = 1;
	judge(&f, "cgroup", &v, c);
	ck_assert_ptr_nonnull(
	    strstr(find(c, SR_DOCTOR_CHECKS, "cgroup")->fix, "systemd.unified_cgroup_hierarchy=1"));

	f.cgroup_layout = 2;
	snprintf(f.container, sizeof(f.container), "docker");
	judge(&f, "cgroup", &v, c);
	ck_assert_ptr_nonnull(
	    strstr(find(c, SR_DOCTOR_CHECKS, "cgroup")->fix, "--cgroupns=private"));

	/* cgroup v1 for root holds every limit: ok. */
	healthy(&f);
	f.root = true;
	f.subuid = true;
	f.cgroup_layout = 1;
	snprintf(f.cgroup_strategy, sizeof(f.cgroup_strategy), "cgroup1");
	for (int i = 0; i < 3; i++)
		f.cgroup_enforced[i] = SR_ENFORCE_CGROUP1;
	ck_assert_int_eq(judge(&f, "cgroup", &v, c), 0);

	/* Only pids weak: said alone. */
	f.cgroup_enforced[2] = SR_ENFORCE_RLIMIT;
	judge(&f, "cgroup", &v, c);
	ck_assert_ptr_nonnull(
	    strstr(find(c, SR_DOCTOR_CHECKS, "cgroup")->found, "pids limit only"));
}
END_TEST

START_TEST(test_container_breaks_trial)
{
	struct sr_host_facts f;
	struct sr_check c[SR_DOCTOR_CHECKS];
	enum sr_verdict v;

	healthy(&f);
	snprintf(f.container, sizeof(f.container), "docker");
	snprintf(f.container_sign, sizeof(f.container_sign), "/.dockerenv");
	ck_assert_int_eq(judge(&f, "container", &v, c), 0);
	f.trial = (struct sr_doctor_trial){.tried = true, .error = "mount proc: Permission denied"};
	f.egress.tried = false;
	ck_assert_int_eq(judge(&f, "container", &v, c), 2);
	ck_assert_int_eq(v, SR_VERDICT_FAILS);
	ck_assert_ptr_nonnull(strstr(find(c, SR_DOCTOR_CHECKS, "container")->fix,
				     "--security-opt systempaths=unconfined"));
	ck_assert_ptr_nonnull(
	    strstr(find(c, SR_DOCTOR_CHECKS, "sandbox")->found, "mount proc: Permission denied"));
	ck_assert_ptr_nonnull(
	    strstr(find(c, SR_DOCTOR_CHECKS, "sandbox_egress")->found, "no sandbox runs here"));
}
END_TEST

START_TEST(test_network_degraded)
{
	struct sr_host_facts f;
	struct sr_check c[SR_DOCTOR_CHECKS];
	enum sr_verdict v;

	healthy(&f);
	f.slirp4netns[0] = '\0';
	f.egress.tried = false;
	ck_assert_int_eq(judge(&f, "network_helper", &v, c), 1);
	ck_assert_int_eq(v, SR_VERDICT_DEGRADED);
	ck_assert_ptr_nonnull(strstr(find(c, SR_DOCTOR_CHECKS, "network_helper")->fix,
				     "apt-get install slirp4netns"));
	ck_assert_int_eq(find(c, SR_DOCTOR_CHECKS, "sandbox_egress")->verdict, SR_VERDICT_DEGRADED);
	ck_assert_int_eq(find(c, SR_DOCTOR_CHECKS, "nf_tables")->verdict, SR_VERDICT_OK);

	healthy(&f);
	f.tun = -1;
	ck_assert_int_eq(judge(&f, "tun", &v, c), 1);
	ck_assert_ptr_nonnull(strstr(find(c, SR_DOCTOR_CHECKS, "tun")->fix, "chmod 0666"));

	healthy(&f);
	f.egress.net = SR_ENFORCE_NONE;
	ck_assert_int_eq(judge(&f, "nf_tables", &v, c), 1);

	healthy(&f);
	snprintf(f.libarchive_error, sizeof(f.libarchive_error), "load libarchive.so.13: gone");
	ck_assert_int_eq(judge(&f, "libraries", &v, c), 1);
	ck_assert_str_eq(find(c, SR_DOCTOR_CHECKS, "libraries")->fix,
			 "sudo apt-get install libarchive13");
}
END_TEST

START_TEST(test_kernel)
{
	struct sr_host_facts f;
	struct sr_check c[SR_DOCTOR_CHECKS];
	enum sr_verdict v;

	healthy(&f);
	f.kernel_major = 5;
	f.kernel_minor = 10;
	ck_assert_int_eq(judge(&f, "kernel", &v, c), 2);
	healthy(&f);
	f.has_clone3 = false;
	ck_assert_int_eq(judge(&f, "kernel", &v, c), 1);
	healthy(&f);
	f.root = true;
	f.subuid = false;
	ck_assert_int_eq(judge(&f, "subuid", &v, c), 1);
	ck_assert_ptr_nonnull(strstr(find(c, SR_DOCTOR_CHECKS, "subuid")->fix, "usermod"));
}
END_TEST

START_TEST(test_line_and_explain)
{
	struct sr_check c = {.name = "x", .found = "found it", .fix = "do this"};
	struct sr_error err = {0};
	char line[256];

	sr_check_line(&c, line, sizeof(line));
	ck_assert_str_eq(line, "found it; fix: do this");
	c.fix[0] = '\0';
	sr_check_line(&c, line, sizeof(line));
	ck_assert_str_eq(line, "found it");
	/* Not a failure a host setting explains: untouched. */
	sr_error_msg(&err, -EIO, "read: it broke");
	sr_doctor_explain(&err);
	ck_assert_str_eq(err.msg, "read: it broke");
	ck_assert_str_eq(sr_verdict_to_string(SR_VERDICT_DEGRADED), "degraded");
	ck_assert_int_eq(sr_doctor_exit_status(SR_VERDICT_FAILS), 2);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("doctor");
	TCase *tc = tcase_create("core");

	tcase_add_unchecked_fixture(tc, sr_test_setup_base, sr_test_teardown_base);
	tcase_add_test(tc, test_healthy);
	tcase_add_test(tc, test_apparmor_restrict);
	tcase_add_test(tc, test_max_user_namespaces_zero);
	tcase_add_test(tc, test_userns_clone_zero);
	tcase_add_test(tc, test_sysctls_absent);
	tcase_add_test(tc, test_cgroup_fixes);
	tcase_add_test(tc, test_container_breaks_trial);
	tcase_add_test(tc, test_network_degraded);
	tcase_add_test(tc, test_kernel);
	tcase_add_test(tc, test_line_and_explain);
	suite_add_tcase(s, tc);
	return sr_test_run(s);
}
