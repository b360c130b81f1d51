/* SPDX-License-Identifier: MIT */
/*
 * Deployments without sandboxes: the install plan, counts, pruning, the
 * secrets store, and versions made, published, failed, held, rolled back
 * and removed in a data directory of the test's own; names claimed,
 * deploys taking turns, locks that outlive a removal, the old shared cache.
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
#include <sys/file.h>
#include <sched.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static char dir[256];

/* A fresh data directory per test. */
static void setup(void)
{
	sr_test_mkdtemp(dir, sizeof(dir), sr_test_basedir, "t");
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

	ck_assert_int_eq(sr_deploy_begin(name, NULL, &v, &err), 0);
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
	ck_assert_int_eq(sr_deploy_begin("a/b", NULL, &(struct sr_deploy_new){0}, &err), -EINVAL);

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

/* A version of name begun with o and published (ok) or failed; its number, or the -errno begin or
 * publish returned. */
static int try_version(const char *name, const struct sr_deploy_begin_opts *o, bool ok,
		       struct sr_error *err)
{
	struct sr_config c;
	struct sr_deploy_new v;
	json_t *meta = json_object();
	int r;

	sr_config_init(&c);
	r = sr_deploy_begin(name, o, &v, err);
	if (r < 0) {
		json_decref(meta);
		sr_config_free(&c);
		return r;
	}
	ck_assert_int_eq(mkdirat(v.vdirfd, "app", 0755), 0);
	if (ok)
		r = sr_deploy_publish(&v, &c, meta, err);
	if (r < 0 || !ok)
		ck_assert_int_eq(sr_deploy_fail(&v, meta, &(struct sr_error){0}), 0);
	if (r == 0)
		r = (int)v.version;
	json_decref(meta);
	sr_deploy_new_free(&v);
	sr_config_free(&c);
	return r;
}

static const char *meta_source(const char *name, unsigned version)
{
	static char buf[256];
	char path[512];
	json_t *m;

	snprintf(path, sizeof(path), "%s/deployments/%s/versions/%u/meta.json", dir, name, version);
	m = json_load_file(path, 0, NULL);
	ck_assert_ptr_nonnull(m);
	snprintf(buf, sizeof(buf), "%s", json_string_value(json_object_get(m, "source")));
	json_decref(m);
	return buf;
}

/*
 * A name the agent chose may not claim a deployment made from another
 * source (its current version's or its newest's) nor secrets waiting for
 * a first deployment; checked at begin, and again at publish.
 */
START_TEST(test_claims)
{
	struct sr_deploy_begin_opts a = {.source = "/src/a", .name_chosen = true, .cancel_fd = -1};
	struct sr_deploy_begin_opts b = a, b_named = a;
	struct sr_deploy_new v;
	struct sr_config c;
	struct sr_error err = {0};
	json_t *meta = json_object();
	unsigned to = 0;

	b.source = b_named.source = "/src/b";
	b_named.name_chosen = false;
	ck_assert_int_eq(try_version("web", &a, true, &err), 1);
	ck_assert_str_eq(meta_source("web", 1), "/src/a");
	ck_assert_int_eq(try_version("web", &a, true, &err), 2);
	ck_assert_int_eq(try_version("web", &b, true, &err), -EEXIST);
	ck_assert_str_eq(err.msg,
			 "deployment 'web' is deployed from /src/a, not from /src/b, which "
			 "names itself 'web': --name web replaces it, --name OTHER deploys "
			 "it apart");
	ck_assert_int_eq(try_version("web", &b_named, true, &err), 3);
	ck_assert_int_eq(try_version("web", &a, true, &err), -EEXIST);
	ck_assert_int_eq(try_version("web", &b, true, &err), 4);

	/* The source is in meta.json ("installing") from begin on. */
	sr_config_init(&c);
	ck_assert_int_eq(sr_deploy_begin("web", &b, &v, &err), 0);
	ck_assert_uint_eq(v.version, 5);
	ck_assert_str_eq(meta_source("web", 5), "/src/b");
	/* A rollback to a's version meanwhile: b's may not become current over it. */
	ck_assert_int_eq(sr_deploy_rollback("web", 2, &to, &err), 0);
	ck_assert_int_eq(mkdirat(v.vdirfd, "app", 0755), 0);
	ck_assert_int_eq(sr_deploy_publish(&v, &c, meta, &err), -EEXIST);
	ck_assert_uint_eq(sr_deploy_current("web"), 2);
	ck_assert_int_eq(sr_deploy_fail(&v, meta, &err), 0);
	sr_deploy_new_free(&v);
	/* Current is a's, the newest b's: neither source's chosen name passes. */
	ck_assert_int_eq(try_version("web", &a, true, &err), -EEXIST);
	ck_assert_int_eq(try_version("web", &b, true, &err), -EEXIST);

	/* Secrets waiting for a first deployment: a chosen name is refused, --name takes them. */
	ck_assert_int_eq(sr_secret_set("api", "KEY", "k", 1, &err), 0);
	ck_assert_int_eq(try_version("api", &a, true, &err), -EEXIST);
	ck_assert_str_eq(err.msg,
			 "secrets are set for 'api', which is not deployed yet, and /src/a "
			 "names itself 'api': --name api deploys it with them, --name "
			 "OTHER apart");
	a.name_chosen = false;
	ck_assert_int_eq(try_version("api", &a, true, &err), 1);
	json_decref(meta);
	sr_config_free(&c);
}
END_TEST

static void note_wait(void *ctx)
{
	++*(int *)ctx;
}

/* Deploys of one name take turns: the second waits (saying so once), and may stop waiting. */
START_TEST(test_turns)
{
	struct sr_deploy_new first, second;
	struct sr_error err = {0};
	int waits = 0, p[2];
	struct sr_deploy_begin_opts o = {.waiting = note_wait, .ctx = &waits};
	json_t *meta = json_object();
	char path[512];

	ck_assert_int_eq(pipe(p), 0);
	o.cancel_fd = p[0];
	ck_assert_int_eq(sr_deploy_begin("web", NULL, &first, &err), 0);
	ck_assert_int_eq(write(p[1], "x", 1), 1);
	ck_assert_int_eq(sr_deploy_begin("web", &o, &second, &err), -ECANCELED);
	ck_assert_str_eq(err.msg, "stopped while waiting for another deploy of 'web'");
	ck_assert_int_eq(waits, 1);
	snprintf(path, sizeof(path), "%s/deployments/web/versions/2", dir);
	ck_assert_int_eq(access(path, F_OK), -1);
	/* Another deployment's deploy does not wait. */
	ck_assert_int_eq(sr_deploy_begin("api", &o, &second, &err), 0);
	sr_deploy_new_free(&second);
	ck_assert_int_eq(waits, 1);
	ck_assert_int_eq(sr_deploy_fail(&first, meta, &err), 0);
	sr_deploy_new_free(&first);
	ck_assert_int_eq(sr_deploy_begin("web", &o, &second, &err), 0);
	ck_assert_uint_eq(second.version, 2);
	sr_deploy_new_free(&second);
	json_decref(meta);
	close(p[0]);
	close(p[1]);
}
END_TEST

/* A secret is set only while no deploy holds the secrets to check them. */
START_TEST(test_secrets_hold)
{
	struct sr_error err = {0};
	int hold = -1, status = 0;
	pid_t pid;

	ck_assert_int_eq(sr_secret_hold(&hold, &err), 0);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	/* The child's copy of the hold is the same lock (flock: per open file): closed there. */
	if (pid == 0) {
		close(hold);
		_exit(sr_secret_set("web", "KEY", "v", 1, &err) == 0 ? 0 : 1);
	}
	usleep(200 * 1000);
	ck_assert_int_eq(waitpid(pid, &status, WNOHANG), 0);
	close(hold);
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	ck_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}
END_TEST

/*
 * Who waited for a deployment's lock while `deployments rm` held it finds
 * the deployment gone, not a lock in the directory removed, under which it
 * would change what nobody sees (or a deployment made anew meanwhile).
 */
START_TEST(test_lock_after_remove)
{
	struct sr_config c;
	struct sr_error err = {0};
	char path[512], gone[512];
	unsigned to = 0;
	int lock, status = 0;
	pid_t pid;

	sr_config_init(&c);
	ck_assert_uint_eq(make_version("web", &c, true), 1);
	ck_assert_uint_eq(make_version("web", &c, true), 2);
	snprintf(path, sizeof(path), "%s/deployments/web/lock", dir);
	lock = open(path, O_RDWR | O_CLOEXEC);
	ck_assert_int_ge(lock, 0);
	ck_assert_int_eq(flock(lock, LOCK_EX), 0);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		int r;

		close(lock);
		r = sr_deploy_rollback("web", 0, &to, &err);

		_exit(r == -ENOENT &&
			      strcmp(err.msg, "no deployment 'web' (sandbox-run deployments "
					      "lists them)") == 0
			  ? 0
			  : 1);
	}
	usleep(100 * 1000);
	snprintf(path, sizeof(path), "%s/deployments/web", dir);
	snprintf(gone, sizeof(gone), "%s/deployments/.gone-web", dir);
	ck_assert_int_eq(rename(path, gone), 0);
	close(lock);
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	ck_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	/* Nothing changed in the one removed: its current is still 2. */
	ck_assert_int_eq(rename(gone, path), 0);
	ck_assert_uint_eq(sr_deploy_current("web"), 2);
	sr_config_free(&c);
}
END_TEST

/*
 * The package cache all deployments shared once, <data>/cache: removed
 * whatever its modes, following no link, and said once.
 */
START_TEST(test_shared_cache)
{
	struct sr_error err = {0};
	char path[512], outside[512], link[512];
	char *removed = NULL;
	int64_t bytes = 0;

	snprintf(outside, sizeof(outside), "%s/outside", dir);
	ck_assert_int_eq(mkdir(outside, 0700), 0);
	put(outside, "keep", "keep");
	snprintf(path, sizeof(path), "%s/cache", dir);
	ck_assert_int_eq(mkdir(path, 0700), 0);
	put(path, "blob", "0123456789");
	snprintf(link, sizeof(link), "%s/cache/out", dir);
	ck_assert_int_eq(symlink(outside, link), 0);
	snprintf(path, sizeof(path), "%s/cache/ro", dir);
	ck_assert_int_eq(mkdir(path, 0700), 0);
	put(path, "x", "x");
	ck_assert_int_eq(chmod(path, 0500), 0);
	ck_assert_int_eq(sr_install_remove_shared_cache(&removed, &bytes, &err), 0);
	snprintf(path, sizeof(path), "%s/cache", dir);
	ck_assert_str_eq(removed, path);
	ck_assert_int_eq(bytes, 11 + (int64_t)strlen(outside));
	free(removed);
	ck_assert_int_eq(access(path, F_OK), -1);
	snprintf(path, sizeof(path), "%s/keep", outside);
	ck_assert_int_eq(access(path, F_OK), 0);
	ck_assert_int_eq(sr_install_remove_shared_cache(&removed, &bytes, &err), 0);
	ck_assert_ptr_null(removed);
	/* A link named cache: the link goes. */
	snprintf(path, sizeof(path), "%s/cache", dir);
	ck_assert_int_eq(symlink(outside, path), 0);
	ck_assert_int_eq(sr_install_remove_shared_cache(&removed, &bytes, &err), 0);
	free(removed);
	ck_assert_int_eq(access(path, F_OK), -1);
	snprintf(path, sizeof(path), "%s/keep", outside);
	ck_assert_int_eq(access(path, F_OK), 0);
}
END_TEST

/*
 * A mount below a tree being removed (at cache/sub/mnt, made in a user and
 * mount namespace of a child, so no privilege is needed): a tmpfs, or a
 * bind of a directory of the tree's own file system (bind: its source),
 * whose st_dev is the tree's. Left whole, -EXDEV said; the rest removed.
 * Before, its files went too (a bind's until the mount's id was compared).
 */
static bool write_file(const char *path, const char *text)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC);
	bool ok = fd >= 0 && write(fd, text, strlen(text)) == (ssize_t)strlen(text);

	if (fd >= 0)
		close(fd);
	return ok;
}

static int remove_across_mount(const char *bind)
{
	char top[512], mnt[512], kept[600], map[64];
	uid_t uid = getuid();
	gid_t gid = getgid();
	int fd, r;

	snprintf(top, sizeof(top), "%s/cache", dir);
	snprintf(mnt, sizeof(mnt), "%s/cache/sub/mnt", dir);
	snprintf(kept, sizeof(kept), "%s/precious", mnt);
	if (unshare(CLONE_NEWUSER | CLONE_NEWNS) < 0)
		return 2;
	snprintf(map, sizeof(map), "0 %u 1", (unsigned)uid);
	if (!write_file("/proc/self/uid_map", map) || !write_file("/proc/self/setgroups", "deny"))
		return 7;
	snprintf(map, sizeof(map), "0 %u 1", (unsigned)gid);
	if (!write_file("/proc/self/gid_map", map))
		return 7;
	if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0 ||
	    (bind ? mount(bind, mnt, NULL, MS_BIND, NULL)
		  : mount("tmpfs", mnt, "tmpfs", 0, "size=1M")) < 0)
		return 3;
	put(mnt, "precious", "x");
	fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	r = sr_deploy_remove_tree(fd, "cache");
	close(fd);
	if (r != -EXDEV)
		return 4;
	if (access(kept, F_OK) < 0)
		return 5;
	/* Beside the mount, what is on the tree's own file system is gone. */
	snprintf(kept, sizeof(kept), "%s/blob", top);
	return access(kept, F_OK) == 0 ? 6 : 0;
}

static void remove_tree_with_mount(bool bind)
{
	char path[600], source[512];
	int status;
	pid_t pid;

	snprintf(source, sizeof(source), "%s/elsewhere", dir);
	if (bind)
		ck_assert_int_eq(mkdir(source, 0700), 0);

	snprintf(path, sizeof(path), "%s/cache", dir);
	ck_assert_int_eq(mkdir(path, 0700), 0);
	put(path, "blob", "0123456789");
	snprintf(path, sizeof(path), "%s/cache/sub", dir);
	ck_assert_int_eq(mkdir(path, 0700), 0);
	snprintf(path, sizeof(path), "%s/cache/sub/mnt", dir);
	ck_assert_int_eq(mkdir(path, 0700), 0);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0)
		_exit(remove_across_mount(bind ? source : NULL));
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	ck_assert(WIFEXITED(status));
	ck_assert_int_eq(WEXITSTATUS(status), 0);
	if (bind) {
		/* The bind's source, seen outside the child's namespace: its file is there. */
		snprintf(path, sizeof(path), "%s/precious", source);
		ck_assert_int_eq(access(path, F_OK), 0);
	}
}

START_TEST(test_remove_tree_stays_on_its_file_system)
{
	remove_tree_with_mount(false);
}
END_TEST

START_TEST(test_remove_tree_skips_a_bind_of_its_own_file_system)
{
	remove_tree_with_mount(true);
}
END_TEST

/*
 * What a deploy, a prune or a removal killed midway left beside the
 * versions: a version renamed away to be removed (.gone-*), a package
 * cache being saved (cache.new-*, cache.old-*). The next deploy of the
 * name removes them, whatever their modes; the cache itself stays.
 */
START_TEST(test_leftovers)
{
	const char *left[] = {"versions/.gone-1-0badf00d", "cache.new-12345678",
			      "cache.old-12345678"};
	struct sr_config c;
	char path[512], sub[600];

	sr_config_init(&c);
	ck_assert_uint_eq(make_version("web", &c, true), 1);
	snprintf(path, sizeof(path), "%s/deployments/web/cache", dir);
	ck_assert_int_eq(mkdir(path, 0700), 0);
	for (size_t i = 0; i < sizeof(left) / sizeof(*left); i++) {
		snprintf(path, sizeof(path), "%s/deployments/web/%s", dir, left[i]);
		ck_assert_int_eq(mkdir(path, 0700), 0);
		snprintf(sub, sizeof(sub), "%s/ro", path);
		ck_assert_int_eq(mkdir(sub, 0700), 0);
		put(sub, "blob", "0123456789");
		ck_assert_int_eq(chmod(sub, 0500), 0);
	}
	ck_assert_uint_eq(make_version("web", &c, true), 2);
	for (size_t i = 0; i < sizeof(left) / sizeof(*left); i++) {
		snprintf(path, sizeof(path), "%s/deployments/web/%s", dir, left[i]);
		ck_assert_msg(access(path, F_OK) < 0, "%s is left", left[i]);
	}
	snprintf(path, sizeof(path), "%s/deployments/web/cache", dir);
	ck_assert_int_eq(access(path, F_OK), 0);
	sr_config_free(&c);
}
END_TEST

/*
 * What a `deployments rm` killed midway left (the deployment renamed
 * away, deployments/.gone-*) is removed by the next one, but not one that
 * another removal is at (it holds deployments/ shared meanwhile).
 */
START_TEST(test_removal_leftovers)
{
	struct sr_config c;
	struct sr_error err = {0};
	char path[512], sub[600];
	int top;

	sr_config_init(&c);
	ck_assert_uint_eq(make_version("web", &c, true), 1);
	ck_assert_uint_eq(make_version("api", &c, true), 1);
	snprintf(path, sizeof(path), "%s/deployments/.gone-old-0badf00d", dir);
	ck_assert_int_eq(mkdir(path, 0700), 0);
	snprintf(sub, sizeof(sub), "%s/ro", path);
	ck_assert_int_eq(mkdir(sub, 0700), 0);
	put(sub, "blob", "0123456789");
	ck_assert_int_eq(chmod(sub, 0500), 0);

	/* Another removal under way: left to it. */
	snprintf(sub, sizeof(sub), "%s/deployments", dir);
	top = open(sub, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	ck_assert_int_ge(top, 0);
	ck_assert_int_eq(flock(top, LOCK_SH), 0);
	ck_assert_msg(sr_deploy_remove("web", &err) == 0, "%s", err.msg);
	ck_assert_int_eq(access(path, F_OK), 0);
	close(top);

	ck_assert_msg(sr_deploy_remove("api", &err) == 0, "%s", err.msg);
	ck_assert_int_eq(access(path, F_OK), -1);
	sr_config_free(&c);
}
END_TEST

/*
 * A tree deeper than the open files a process may have (one an install
 * step made: an agent's to shape) is removed all the same.
 */
START_TEST(test_remove_deep_tree)
{
	struct rlimit few = {.rlim_cur = 64, .rlim_max = 64};
	int top, fd;

	top = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	ck_assert_int_ge(top, 0);
	ck_assert_int_eq(mkdirat(top, "deep", 0700), 0);
	fd = openat(top, "deep", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	for (int i = 0; i < 200; i++) {
		int sub;

		ck_assert_int_ge(fd, 0);
		ck_assert_int_eq(mkdirat(fd, "d", 0700), 0);
		sub = openat(fd, "d", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		ck_assert_int_eq(close(openat(fd, "f", O_CREAT | O_WRONLY | O_CLOEXEC, 0600)), 0);
		/* Some read-only once filled, as a package may ship them (a user's test too). */
		if (i % 50 == 0)
			ck_assert_int_eq(fchmod(fd, 0500), 0);
		close(fd);
		fd = sub;
	}
	close(fd);
	ck_assert_int_eq(setrlimit(RLIMIT_NOFILE, &few), 0);
	ck_assert_int_eq(sr_deploy_remove_tree(top, "deep"), 0);
	ck_assert_int_eq(faccessat(top, "deep", F_OK, AT_SYMLINK_NOFOLLOW), -1);
	close(top);
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

	tcase_add_unchecked_fixture(tc, sr_test_setup_base, sr_test_teardown_base);
	tcase_add_checked_fixture(tc, setup, NULL);
	tcase_add_test(tc, test_package_has_deps);
	tcase_add_test(tc, test_count_npm);
	tcase_add_test(tc, test_install_plan);
	tcase_add_test(tc, test_prune_pick);
	tcase_add_test(tc, test_secrets);
	tcase_add_test(tc, test_secrets_not_inherited);
	tcase_add_test(tc, test_versions);
	tcase_add_test(tc, test_claims);
	tcase_add_test(tc, test_turns);
	tcase_add_test(tc, test_secrets_hold);
	tcase_add_test(tc, test_lock_after_remove);
	tcase_add_test(tc, test_shared_cache);
	tcase_add_test(tc, test_remove_tree_stays_on_its_file_system);
	tcase_add_test(tc, test_remove_tree_skips_a_bind_of_its_own_file_system);
	tcase_add_test(tc, test_leftovers);
	tcase_add_test(tc, test_removal_leftovers);
	tcase_add_test(tc, test_remove_deep_tree);
	tcase_add_test(tc, test_tail);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return sr_test_run(deploy_suite());
}
