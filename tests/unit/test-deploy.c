/* SPDX-License-Identifier: MIT */
/*
 * Deployments without sandboxes: the install plan, counts, pruning, the
 * secrets store, and versions made, published, failed, held, rolled back
 * and removed in a data directory of the test's own.
 */
#include "config.h"
#include "deploy.h"
#include "install.h"
#include "secmem.h"
#include "secrets.h"
#include "testutil.h"

#include <check.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static char base[128];
static char dir[256];

static void suite_setup(void)
{
	snprintf(base, sizeof(base), "/tmp/sr-test-deploy.XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(base));
}

static void suite_teardown(void)
{
	sr_test_rmtree(base);
}

/* A fresh data directory per test. */
static void setup(void)
{
	sr_test_mkdtemp(dir, sizeof(dir), base, "t");
	ck_assert_int_eq(setenv("SANDBOX_RUN_DATA_DIR", dir, 1), 0);
}

static void put(const char *d, const char *name, const char *text)
{
	char path[512];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", d, name);
	f = fopen(path, "w");
	ck_assert_ptr_nonnull(f);
	fputs(text, f);
	ck_assert_int_eq(fclose(f), 0);
}

static int open_dir(const char *d)
{
	int fd = open(d, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

	ck_assert_int_ge(fd, 0);
	return fd;
}

START_TEST(test_package_has_deps)
{
	const char *yes[] = {
	    "{\"dependencies\":{\"is-number\":\"7.0.0\"}}",
	    "{\"devDependencies\":{\"a\":\"1\"}}",
	    "{\"optionalDependencies\":{\"a\":\"1\"},\"dependencies\":{}}",
	};
	const char *no[] = {
	    "{\"name\":\"x\"}",
	    "{\"dependencies\":{}}",
	    "{\"dependencies\":[\"a\"]}",
	    "[1]",
	    "not json",
	    "",
	};

	for (size_t i = 0; i < SR_ARRAY_SIZE(yes); i++)
		ck_assert_msg(sr_install_package_has_deps(yes[i], strlen(yes[i])), "%s", yes[i]);
	for (size_t i = 0; i < SR_ARRAY_SIZE(no); i++)
		ck_assert_msg(!sr_install_package_has_deps(no[i], strlen(no[i])), "%s", no[i]);
}
END_TEST

START_TEST(test_count_npm)
{
	const char *lock = "{\"name\":\"a\",\"lockfileVersion\":3,\"packages\":{"
			   "\"\":{\"name\":\"a\"},"
			   "\"node_modules/is-number\":{\"version\":\"7.0.0\"},"
			   "\"node_modules/@s/x\":{\"version\":\"1.0.0\"},"
			   "\"node_modules/local\":{\"resolved\":\"lib\",\"link\":true}}}";

	ck_assert_int_eq(sr_install_count_npm(lock, strlen(lock)), 2);
	ck_assert_int_eq(sr_install_count_npm("{}", 2), -1);
	ck_assert_int_eq(sr_install_count_npm("{", 1), -1);
}
END_TEST

static void plan_is(const char *custom, const char *const *whats, bool python)
{
	struct sr_install_plan p;
	struct sr_error err = {0};
	int fd = open_dir(dir);
	size_t n = 0;

	ck_assert_int_eq(sr_install_plan(fd, custom, &p, &err), 0);
	close(fd);
	while (whats[n])
		n++;
	ck_assert_uint_eq(p.n, n);
	for (size_t i = 0; i < n; i++)
		ck_assert_str_eq(p.steps[i].what, whats[i]);
	ck_assert_int_eq(p.python, python);
	sr_install_plan_free(&p);
}

START_TEST(test_install_plan)
{
	const char *const none[] = {NULL};
	const char *const install[] = {"npm install", NULL};
	const char *const ci[] = {"npm ci", NULL};
	const char *const both[] = {"npm ci", "pip install -r requirements.txt", NULL};
	const char *const custom[] = {"make deps && echo done", NULL};
	struct sr_install_plan p;
	struct sr_error err = {0};
	int fd;

	plan_is(NULL, none, false);
	put(dir, "package.json", "{\"name\":\"a\",\"main\":\"index.js\"}");
	plan_is(NULL, none, false);
	put(dir, "package.json", "{\"name\":\"a\",\"dependencies\":{\"is-number\":\"7\"}}");
	plan_is(NULL, install, false);
	put(dir, "package-lock.json", "{}");
	plan_is(NULL, ci, false);
	put(dir, "requirements.txt", "six\n");
	plan_is(NULL, both, true);
	/* Yours instead, by /bin/sh -c: never split, never quoted. */
	plan_is("make deps && echo done", custom, false);
	fd = open_dir(dir);
	ck_assert_int_eq(sr_install_plan(fd, "make deps && echo done", &p, &err), 0);
	close(fd);
	ck_assert_str_eq(p.steps[0].argv[0], "/bin/sh");
	ck_assert_str_eq(p.steps[0].argv[1], "-c");
	ck_assert_str_eq(p.steps[0].argv[2], "make deps && echo done");
	ck_assert_ptr_null(p.steps[0].argv[3]);
	sr_install_plan_free(&p);
}
END_TEST

START_TEST(test_prune_pick)
{
	/* Ready 1-6, failed 7 and 8, abandoned 9, busy abandoned 10 (being made). */
	const struct sr_version_state v[] = {
	    {1, SR_VERSION_READY, false},      {2, SR_VERSION_READY, true},
	    {3, SR_VERSION_READY, false},      {4, SR_VERSION_READY, false},
	    {5, SR_VERSION_READY, false},      {6, SR_VERSION_READY, false},
	    {7, SR_VERSION_FAILED, false},     {8, SR_VERSION_FAILED, false},
	    {9, SR_VERSION_INCOMPLETE, false}, {10, SR_VERSION_INCOMPLETE, true},
	};
	const bool want3[] = {true, false, true, false, false, false, false, false, true, false};
	const bool want1[] = {false, false, true, true, true, false, true, false, true, false};
	const bool want0[] = {false, false, false, false, false, false, false, false, true, false};
	bool rm[SR_ARRAY_SIZE(v)];

	/* keep 3: 4 (current), 5, 6 the newest ready, 2 in use, 7 and 8 the newest failed. */
	sr_deploy_prune_pick(v, SR_ARRAY_SIZE(v), 4, 3, rm);
	for (size_t i = 0; i < SR_ARRAY_SIZE(v); i++)
		ck_assert_msg(rm[i] == want3[i], "keep 3: version %u", v[i].version);
	/* keep 1: 6 and 8 newest; 1 is current (a rollback), 2 in use. */
	sr_deploy_prune_pick(v, SR_ARRAY_SIZE(v), 1, 1, rm);
	for (size_t i = 0; i < SR_ARRAY_SIZE(v); i++)
		ck_assert_msg(rm[i] == want1[i], "keep 1: version %u", v[i].version);
	/* keep 0: all kept but what was abandoned. */
	sr_deploy_prune_pick(v, SR_ARRAY_SIZE(v), 6, 0, rm);
	for (size_t i = 0; i < SR_ARRAY_SIZE(v); i++)
		ck_assert_msg(rm[i] == want0[i], "keep 0: version %u", v[i].version);
}
END_TEST

static int mode_of(const char *path)
{
	struct stat st;

	ck_assert_int_eq(lstat(path, &st), 0);
	return (int)(st.st_mode & 07777);
}

START_TEST(test_secrets)
{
	struct sr_error err = {0};
	struct sr_strv v = {0};
	char **loaded = NULL;
	char path[512];

	ck_assert_int_eq(sr_secret_set("web", "B_KEY", "two", 3, &err), 0);
	ck_assert_int_eq(sr_secret_set("web", "A_KEY", "line1\nline2", 11, &err), 0);
	ck_assert_int_eq(sr_secret_set("web", "A_KEY", "pem\n-----", 9, &err), 0);
	snprintf(path, sizeof(path), "%s/secrets/web", dir);
	ck_assert_int_eq(mode_of(path), 0700);
	snprintf(path, sizeof(path), "%s/secrets/web/A_KEY", dir);
	ck_assert_int_eq(mode_of(path), 0600);

	ck_assert_int_eq(sr_secret_list("web", &v, &err), 0);
	ck_assert_uint_eq(v.n, 2);
	ck_assert_str_eq(v.items[0], "A_KEY");
	ck_assert_str_eq(v.items[1], "B_KEY");
	sr_strv_free(&v);
	ck_assert_int_eq(sr_secret_load("web", &loaded, &err), 0);
	ck_assert_str_eq(loaded[0], "A_KEY=pem\n-----");
	ck_assert_str_eq(loaded[1], "B_KEY=two");
	ck_assert_ptr_null(loaded[2]);
	sr_secmem_free(loaded);
	loaded = NULL;
	ck_assert_int_eq(sr_secret_load("none-set", &loaded, &err), 0);
	ck_assert_ptr_null(loaded);

	/* Refusals name the key, never the value. */
	ck_assert_int_eq(sr_secret_set("web", "BAD", "a\0b-secretvalue", 15, &err), -EINVAL);
	ck_assert_ptr_null(strstr(err.msg, "secretvalue"));
	ck_assert_int_eq(sr_secret_set("web", "1BAD", "x", 1, &err), -EINVAL);
	ck_assert_int_eq(sr_secret_set("../web", "K", "x", 1, &err), -EINVAL);
	ck_assert_int_eq(sr_secret_set("web/x", "K", "x", 1, &err), -EINVAL);
	ck_assert_int_eq(sr_secret_set("web", "EMPTY", "", 0, &err), -EINVAL);

	/* A file opened to others is refused at load. */
	ck_assert_int_eq(chmod(path, 0644), 0);
	ck_assert_int_eq(sr_secret_load("web", &loaded, &err), -EPERM);
	ck_assert_ptr_nonnull(strstr(err.msg, "secret A_KEY"));
	ck_assert_ptr_null(strstr(err.msg, "pem"));
	ck_assert_ptr_null(loaded);

	ck_assert_int_eq(sr_secret_remove("web", "A_KEY", &err), 0);
	ck_assert_int_eq(sr_secret_remove("web", "A_KEY", &err), -ENOENT);
	ck_assert_int_eq(sr_secret_list("other", &v, &err), 0);
	ck_assert_uint_eq(v.n, 0);
	ck_assert_int_eq(sr_secret_remove_all("web", &err), 0);
	snprintf(path, sizeof(path), "%s/secrets/web", dir);
	ck_assert_int_eq(access(path, F_OK), -1);
}
END_TEST

/* Whether the page holding p is mapped in this process (msync: ENOMEM where it is not). */
static bool mapped(const void *p)
{
	uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);

	return msync((void *)((uintptr_t)p & ~(page - 1)), page, MS_ASYNC) == 0;
}

/*
 * Loaded secrets are in memory that a fork's child has not (a server's
 * keepers: each gets the copy made for it, in ordinary memory, alone).
 */
START_TEST(test_secrets_not_inherited)
{
	struct sr_error err = {0};
	char **loaded = NULL, **copy;
	size_t size = 0;
	pid_t pid;
	int status;

	ck_assert_int_eq(sr_secret_set("fork", "KEY", "v4lue", 5, &err), 0);
	ck_assert_int_eq(sr_secret_load("fork", &loaded, &err), 0);
	copy = sr_secrets_pack(loaded, malloc, &size);
	ck_assert_ptr_nonnull(copy);
	ck_assert_uint_eq(size, 2 * sizeof(char *) + sizeof("KEY=v4lue"));
	ck_assert(mapped(loaded) && mapped(loaded[0]));
	pid = fork();
	ck_assert_int_ge(pid, 0);
	/* The vector and its strings are one block: the child may not read loaded[0]. */
	if (pid == 0)
		_exit(!mapped(loaded) && strcmp(copy[0], "KEY=v4lue") == 0 && !copy[1] ? 0 : 1);
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0,
		      "the child has the loaded secrets, or not its copy");
	ck_assert_str_eq(loaded[0], "KEY=v4lue");
	free(copy);
	sr_secmem_free(loaded);
	ck_assert_int_eq(sr_secret_remove_all("fork", &err), 0);
}
END_TEST

/* A version made by hand: app/ with one file, published with c. */
static unsigned make_version(const char *name, const struct sr_config *c, bool ok)
{
	struct sr_deploy_new v;
	struct sr_error err = {0};
	json_t *meta = json_object();
	unsigned version;

	ck_assert_int_eq(sr_deploy_begin(name, &v, &err), 0);
	ck_assert_int_eq(mkdirat(v.vdirfd, "app", 0755), 0);
	ck_assert_int_eq(close(openat(v.vdirfd, "app/agent", O_CREAT | O_WRONLY, 0755)), 0);
	if (ok)
		ck_assert_msg(sr_deploy_publish(&v, c, meta, &err) == 0, "%s", err.msg);
	else
		ck_assert_int_eq(sr_deploy_fail(&v, meta, &err), 0);
	version = v.version;
	json_decref(meta);
	sr_deploy_new_free(&v);
	return version;
}

START_TEST(test_versions)
{
	struct sr_config c;
	struct sr_error err = {0};
	struct sr_deployment *d = NULL, *d2 = NULL;
	unsigned removed = 0, to = 0;
	json_t *all = NULL;
	char path[512];

	sr_config_init(&c);
	ck_assert_int_eq(sr_config_set(&c, "limits", "memory", "512M", &err), 0);
	ck_assert_int_eq(sr_deploy_open("web", &d, &err), -ENOENT);
	ck_assert_str_eq(err.msg, "no deployment 'web' (sandbox-run deployments lists them)");
	ck_assert_int_eq(sr_deploy_begin("a/b", &(struct sr_deploy_new){0}, &err), -EINVAL);

	ck_assert_uint_eq(make_version("web", &c, true), 1);
	ck_assert_uint_eq(make_version("web", &c, true), 2);
	ck_assert_uint_eq(make_version("web", &c, false), 3);
	ck_assert_uint_eq(sr_deploy_current("web"), 2);

	/* An invocation holds version 2 and gets its configuration. */
	ck_assert_int_eq(sr_deploy_open("web", &d, &err), 0);
	ck_assert_uint_eq(sr_deployment_version(d), 2);
	snprintf(path, sizeof(path), "%s/deployments/web/versions/2/app", dir);
	ck_assert_str_eq(sr_deployment_app(d), path);
	ck_assert_int_eq(sr_secret_set("web", "TOKEN", "t0k", 3, &err), 0);
	sr_config_free(&c);
	sr_config_init(&c);
	ck_assert_msg(sr_deploy_config(d, &c, &err) == 0, "%s", err.msg);
	ck_assert_uint_eq(c.memory_bytes, UINT64_C(512) << 20);
	ck_assert_str_eq(c.argv[0], path);
	ck_assert_str_eq(c.secrets[0], "TOKEN=t0k");
	ck_assert_ptr_null(c.secrets[1]);

	/* A redeploy meanwhile: the next open gets it; keep 1 prunes all but 4, 3 and the held 2.
	 */
	ck_assert_uint_eq(make_version("web", &c, true), 4);
	ck_assert_int_eq(sr_deploy_open("web", &d2, &err), 0);
	ck_assert_uint_eq(sr_deployment_version(d2), 4);
	sr_deployment_close(d2);
	ck_assert_int_eq(sr_deploy_prune("web", 1, &removed, &err), 0);
	ck_assert_uint_eq(removed, 1);
	snprintf(path, sizeof(path), "%s/deployments/web/versions/1", dir);
	ck_assert_int_eq(access(path, F_OK), -1);
	ck_assert_int_eq(access(sr_deployment_app(d), F_OK), 0);
	ck_assert_int_eq(sr_deploy_remove("web", &err), -EBUSY);

	/* Rollback: to the newest ready one older than the current; a failed one never. */
	ck_assert_int_eq(sr_deploy_rollback("web", 0, &to, &err), 0);
	ck_assert_uint_eq(to, 2);
	ck_assert_int_eq(sr_deploy_rollback("web", 3, &to, &err), -ENOENT);
	ck_assert_int_eq(sr_deploy_rollback("web", 4, &to, &err), 0);

	ck_assert_int_eq(sr_deploy_list(&all, &err), 0);
	ck_assert_uint_eq(json_array_size(all), 3);
	ck_assert_str_eq(json_string_value(json_object_get(json_array_get(all, 0), "status")),
			 "ready");
	ck_assert_str_eq(json_string_value(json_object_get(json_array_get(all, 1), "status")),
			 "failed");
	ck_assert_str_eq(json_string_value(json_object_get(json_array_get(all, 2), "status")),
			 "active");
	json_decref(all);

	sr_deployment_close(d);
	ck_assert_int_eq(sr_deploy_remove("web", &err), 0);
	ck_assert_uint_eq(sr_deploy_current("web"), 0);
	ck_assert_int_eq(sr_secret_list("web", &(struct sr_strv){0}, &err), 0);
	snprintf(path, sizeof(path), "%s/secrets/web", dir);
	ck_assert_int_eq(access(path, F_OK), -1);
	sr_config_free(&c);
}
END_TEST

START_TEST(test_tail)
{
	char path[512], *tail = NULL;
	struct sr_error err = {0};

	snprintf(path, sizeof(path), "%s/log", dir);
	put(dir, "log", "one\ntwo\nthree\nfour\n\n");
	ck_assert_int_eq(sr_deploy_tail(path, 2, &tail, &err), 0);
	ck_assert_str_eq(tail, "three\nfour");
	free(tail);
	ck_assert_int_eq(sr_deploy_tail(path, 20, &tail, &err), 0);
	ck_assert_str_eq(tail, "one\ntwo\nthree\nfour");
	free(tail);
}
END_TEST

static Suite *deploy_suite(void)
{
	Suite *s = suite_create("deploy");
	TCase *tc = tcase_create("core");

	tcase_add_unchecked_fixture(tc, suite_setup, suite_teardown);
	tcase_add_checked_fixture(tc, setup, NULL);
	tcase_add_test(tc, test_package_has_deps);
	tcase_add_test(tc, test_count_npm);
	tcase_add_test(tc, test_install_plan);
	tcase_add_test(tc, test_prune_pick);
	tcase_add_test(tc, test_secrets);
	tcase_add_test(tc, test_secrets_not_inherited);
	tcase_add_test(tc, test_versions);
	tcase_add_test(tc, test_tail);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return sr_test_run(deploy_suite());
}
