/* SPDX-License-Identifier: MIT */
#include "agent.h"
#include "util.h"
#include "testutil.h"

#include <check.h>
#include <fcntl.h>
#include <ftw.h>
#include <sys/stat.h>

/* A fresh directory per test, inside the suite's base (testutil.h). */
static char tmpdir[96];
static int tmpfd = -1;

static void setup_tmp(void)
{
	sr_test_mkdtemp(tmpdir, sizeof(tmpdir), sr_test_basedir, "t");
	tmpfd = open(tmpdir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	ck_assert_int_ge(tmpfd, 0);
}

static void teardown_tmp(void)
{
	close(tmpfd);
	sr_test_rmtree(tmpdir);
}

static void put(const char *name, const char *content, mode_t mode)
{
	int fd = openat(tmpfd, name, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode);

	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(write(fd, content, strlen(content)), (ssize_t)strlen(content));
	ck_assert_int_eq(fchmod(fd, mode), 0);
	close(fd);
}

static void assert_argv(const struct sr_strv *v, const char *const *want, size_t n)
{
	ck_assert_uint_eq(v->n, n);
	for (size_t i = 0; i < n; i++)
		ck_assert_str_eq(v->items[i], want[i]);
}

/* Detects in tmpdir; returns the result, argv/err filled. */
static int detect(const char *entry, char *const *extra, int n_extra, struct sr_strv *v,
		  struct sr_error *err)
{
	*err = (struct sr_error){};
	return sr_agent_detect_entry_in(tmpfd, "mydir", entry, extra, n_extra, v, err);
}

START_TEST(test_entry_split)
{
	char *extra[] = {"x y", "z"};
	const char *want[] = {"node", "server.js", "--port", "3", "x y", "z"};
	struct sr_strv v = {};
	struct sr_error err;

	ck_assert_int_eq(detect("  node server.js\t--port  3 ", extra, 2, &v, &err), 0);
	assert_argv(&v, want, 6);
	sr_strv_free(&v);

	/* The entry wins over every file rule; nothing is looked up. */
	put("agent", "#!/bin/sh\n", 0755);
	ck_assert_int_eq(detect("./run.sh", NULL, 0, &v, &err), 0);
	ck_assert_uint_eq(v.n, 1);
	ck_assert_str_eq(v.items[0], "./run.sh");
	sr_strv_free(&v);

	ck_assert_int_eq(detect(" \t ", NULL, 0, &v, &err), -EINVAL);
	ck_assert_int_eq(err.status, 125);
	ck_assert_uint_eq(v.n, 0);
}
END_TEST

START_TEST(test_agent_file)
{
	char *extra[] = {"--flag"};
	const char *want[] = {"/workspace/agent", "--flag"};
	struct sr_strv v = {};
	struct sr_error err;

	put("agent", "#!/bin/sh\n", 0700);
	put("main.py", "", 0644);
	ck_assert_int_eq(detect(NULL, extra, 1, &v, &err), 0);
	assert_argv(&v, want, 2);
	sr_strv_free(&v);
}
END_TEST

START_TEST(test_agent_not_executable)
{
	struct sr_strv v = {};
	struct sr_error err;

	put("agent", "#!/bin/sh\n", 0644);
	put("main.py", "", 0644);
	ck_assert_int_eq(detect(NULL, NULL, 0, &v, &err), -EACCES);
	ck_assert_int_eq(err.status, 126);
	ck_assert_str_eq(err.msg, "mydir/agent is not executable (chmod +x agent)");
	ck_assert_uint_eq(v.n, 0);
}
END_TEST

START_TEST(test_agent_symlink_outside)
{
	struct sr_strv v = {};
	struct sr_error err;

	/* /bin/sh is executable on the host: it must not be what decides. */
	ck_assert_int_eq(symlinkat("/bin/sh", tmpfd, "agent"), 0);
	ck_assert_int_eq(detect(NULL, NULL, 0, &v, &err), -EXDEV);
	ck_assert_int_eq(err.status, 126);
	ck_assert_str_eq(err.msg, "mydir/agent is a symbolic link leading out of the workspace");

	ck_assert_int_eq(unlinkat(tmpfd, "agent", 0), 0);
	ck_assert_int_eq(symlinkat("../../../../bin/sh", tmpfd, "agent"), 0);
	ck_assert_int_eq(detect(NULL, NULL, 0, &v, &err), -EXDEV);
	ck_assert_int_eq(err.status, 126);
	ck_assert_uint_eq(v.n, 0);
}
END_TEST

START_TEST(test_agent_symlink_inside)
{
	const char *want[] = {"/workspace/agent"};
	struct sr_strv v = {};
	struct sr_error err;

	ck_assert_int_eq(mkdirat(tmpfd, "bin", 0755), 0);
	put("bin/run", "#!/bin/sh\n", 0755);
	ck_assert_int_eq(symlinkat("bin/run", tmpfd, "agent"), 0);
	ck_assert_int_eq(detect(NULL, NULL, 0, &v, &err), 0);
	assert_argv(&v, want, 1);
	sr_strv_free(&v);

	/* Dangling: there is an `agent`, it just leads nowhere. */
	ck_assert_int_eq(unlinkat(tmpfd, "agent", 0), 0);
	ck_assert_int_eq(symlinkat("bin/missing", tmpfd, "agent"), 0);
	ck_assert_int_eq(detect(NULL, NULL, 0, &v, &err), -ENOENT);
	ck_assert_int_eq(err.status, 127);
	ck_assert_str_eq(err.msg, "mydir/agent is a dangling symbolic link");
}
END_TEST

START_TEST(test_agent_directory_skipped)
{
	const char *want[] = {"python3", "/workspace/main.py"};
	struct sr_strv v = {};
	struct sr_error err;

	ck_assert_int_eq(mkdirat(tmpfd, "agent", 0755), 0);
	put("main.py", "print(1)\n", 0644);
	ck_assert_int_eq(detect(NULL, NULL, 0, &v, &err), 0);
	assert_argv(&v, want, 2);
	sr_strv_free(&v);
}
END_TEST

START_TEST(test_package_json)
{
	struct sr_strv v = {};
	struct sr_error err;
	static const struct {
		const char *json, *script;
	} cases[] = {
	    {"{\"name\":\"x\",\"main\":\"server.js\"}", "/workspace/server.js"},
	    {"{\"name\":\"x\"}", "/workspace/index.js"},
	    {"{\"main\":\"\"}", "/workspace/index.js"},
	    {"{\"main\":\"./lib/app.js\"}", "/workspace/lib/app.js"},
	    {"{\"main\":\".//lib/app.js\"}", "/workspace/lib/app.js"},
	    {"{\"main\":\"lib..js\"}", "/workspace/lib..js"},
	};

	put("main.py", "", 0644);
	for (size_t i = 0; i < SR_ARRAY_SIZE(cases); i++) {
		const char *want[] = {"node", cases[i].script};

		put("package.json", cases[i].json, 0644);
		ck_assert_int_eq(detect(NULL, NULL, 0, &v, &err), 0);
		assert_argv(&v, want, 2);
		sr_strv_free(&v);
	}
}
END_TEST

START_TEST(test_package_json_bad)
{
	struct sr_strv v = {};
	struct sr_error err;
	static const struct {
		const char *json, *msg;
	} cases[] = {
	    {"{\"main\":\"/etc/passwd\"}",
	     "mydir/package.json: \"main\" must be a relative path inside the workspace, not "
	     "'/etc/passwd'"},
	    {"{\"main\":\"../x.js\"}", NULL},
	    {"{\"main\":\"a/../../x.js\"}", NULL},
	    {"{\"main\":\"a/..\"}", NULL},
	    {"{\"main\":", "mydir/package.json: not valid JSON, or \"main\" is not a string"},
	    {"{\"main\":3}", "mydir/package.json: not valid JSON, or \"main\" is not a string"},
	};

	for (size_t i = 0; i < SR_ARRAY_SIZE(cases); i++) {
		put("package.json", cases[i].json, 0644);
		ck_assert_int_lt(detect(NULL, NULL, 0, &v, &err), 0);
		ck_assert_int_eq(err.status, 126);
		if (cases[i].msg)
			ck_assert_str_eq(err.msg, cases[i].msg);
		else
			ck_assert_ptr_nonnull(strstr(err.msg, "must be a relative path"));
		ck_assert_uint_eq(v.n, 0);
	}
}
END_TEST

START_TEST(test_package_json_symlink_outside)
{
	struct sr_strv v = {};
	struct sr_error err;

	ck_assert_int_eq(symlinkat("/etc/passwd", tmpfd, "package.json"), 0);
	ck_assert_int_eq(detect(NULL, NULL, 0, &v, &err), -EXDEV);
	ck_assert_int_eq(err.status, 126);
	ck_assert_str_eq(err.msg,
			 "mydir/package.json is a symbolic link leading out of the workspace");
}
END_TEST

START_TEST(test_package_json_special)
{
	struct sr_strv v = {};
	struct sr_error err;
	char *big;
	int fd;

	/* A FIFO must neither hang open() nor be read. */
	ck_assert_int_eq(mkfifoat(tmpfd, "package.json", 0644), 0);
	ck_assert_int_eq(detect(NULL, NULL, 0, &v, &err), -EINVAL);
	ck_assert_int_eq(err.status, 126);
	ck_assert_str_eq(err.msg, "mydir/package.json is not a regular file");
	ck_assert_int_eq(unlinkat(tmpfd, "package.json", 0), 0);

	/* Over the 1 MiB cap, even if valid. */
	big = malloc(2 * 1024 * 1024);
	ck_assert_ptr_nonnull(big);
	memset(big, ' ', 2 * 1024 * 1024);
	memcpy(big, "{}", 2);
	fd = openat(tmpfd, "package.json", O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(write(fd, big, 2 * 1024 * 1024), 2 * 1024 * 1024);
	close(fd);
	free(big);
	ck_assert_int_eq(detect(NULL, NULL, 0, &v, &err), -EFBIG);
	ck_assert_int_eq(err.status, 126);
	ck_assert_ptr_nonnull(strstr(err.msg, "is larger than 1048576 bytes"));
}
END_TEST

START_TEST(test_main_py_and_precedence)
{
	const char *py[] = {"python3", "/workspace/main.py"};
	const char *node[] = {"node", "/workspace/index.js"};
	struct sr_strv v = {};
	struct sr_error err;

	put("main.py", "", 0644);
	ck_assert_int_eq(detect(NULL, NULL, 0, &v, &err), 0);
	assert_argv(&v, py, 2);
	sr_strv_free(&v);

	put("package.json", "{}", 0644);
	ck_assert_int_eq(detect(NULL, NULL, 0, &v, &err), 0);
	assert_argv(&v, node, 2);
	sr_strv_free(&v);
}
END_TEST

START_TEST(test_nothing_found)
{
	struct sr_strv v = {};
	struct sr_error err = {};

	put("README", "", 0644);
	ck_assert_int_eq(mkdirat(tmpfd, "main.py", 0755), 0);
	ck_assert_int_eq(sr_agent_detect_entry_in(tmpfd, "./agents/x/", NULL, NULL, 0, &v, &err),
			 -ENOENT);
	ck_assert_int_eq(err.status, 127);
	ck_assert_str_eq(err.msg, "no entry point in ./agents/x: looked for --entry, an executable "
				  "'agent', package.json, main.py");

	err = (struct sr_error){};
	ck_assert_int_eq(sr_agent_detect_entry(tmpfd, NULL, NULL, 0, &v, &err), -ENOENT);
	ck_assert_int_eq(err.status, 127);
	ck_assert_str_eq(err.msg, "no entry point in /workspace: looked for --entry, an "
				  "executable 'agent', package.json, main.py");
}
END_TEST

START_TEST(test_argv_appended_or_untouched)
{
	const char *want[] = {"pre", "python3", "/workspace/main.py", "a"};
	char *extra[] = {"a"};
	struct sr_strv v = {};
	struct sr_error err;

	ck_assert_int_eq(sr_strv_push(&v, "pre"), 0);
	ck_assert_int_eq(detect(NULL, extra, 1, &v, &err), -ENOENT);
	ck_assert_uint_eq(v.n, 1);
	ck_assert_str_eq(v.items[0], "pre");

	put("main.py", "", 0644);
	ck_assert_int_eq(detect(NULL, extra, 1, &v, &err), 0);
	assert_argv(&v, want, 4);
	sr_strv_free(&v);
}
END_TEST

static int resolve(char **argv, int argc, struct sr_agent *a, struct sr_error *err)
{
	struct sr_config c = {.argv = argv, .argc = argc};

	*err = (struct sr_error){};
	return sr_agent_resolve(&c, NULL, a, err);
}

static char *tmp_path(const char *name)
{
	static char buf[256];

	snprintf(buf, sizeof(buf), "%s/%s", tmpdir, name);
	return buf;
}

START_TEST(test_resolve_dir)
{
	_cleanup_free_ char *real = realpath(tmpdir, NULL);
	const char *want[] = {"/workspace/agent", "x"};
	char *argv[] = {tmpdir, "x"};
	struct sr_agent a = {};
	struct sr_error err;

	put("agent", "#!/bin/sh\n", 0755);
	ck_assert_int_eq(resolve(argv, 2, &a, &err), 0);
	ck_assert_int_eq(a.kind, SR_AGENT_DIR);
	ck_assert_str_eq(a.host_dir, real);
	ck_assert_ptr_null(a.archive_path);
	assert_argv(&a.argv, want, 2);
	sr_agent_free(&a);

	ck_assert_int_eq(unlinkat(tmpfd, "agent", 0), 0);
	ck_assert_int_eq(resolve(argv, 2, &a, &err), -ENOENT);
	ck_assert_int_eq(err.status, 127);
	ck_assert_ptr_nonnull(strstr(err.msg, tmpdir));
	ck_assert_ptr_null(a.host_dir);
}
END_TEST

START_TEST(test_resolve_file)
{
	_cleanup_free_ char *real = realpath(tmpdir, NULL), *file = NULL;
	const char *want[] = {"/workspace/run.sh", "-v"};
	char *argv[] = {NULL, "-v"};
	struct sr_agent a = {};
	struct sr_error err;

	put("run.sh", "#!/bin/sh\n", 0755);
	argv[0] = strdup(tmp_path("run.sh"));
	ck_assert_int_ge(asprintf(&file, "%s/run.sh", real), 0);
	/* The file alone: no workspace directory, the file copied in. */
	ck_assert_int_eq(resolve(argv, 2, &a, &err), 0);
	ck_assert_int_eq(a.kind, SR_AGENT_FILE);
	ck_assert_ptr_null(a.host_dir);
	ck_assert_str_eq(a.file_path, file);
	assert_argv(&a.argv, want, 2);
	sr_agent_free(&a);

	ck_assert_int_eq(fchmodat(tmpfd, "run.sh", 0644, 0), 0);
	ck_assert_int_eq(resolve(argv, 2, &a, &err), -EACCES);
	ck_assert_int_eq(err.status, 126);
	ck_assert_ptr_nonnull(strstr(err.msg, "is not executable (chmod +x "));
	free(argv[0]);
}
END_TEST

/*
 * --workspace DIR with a file: a file inside DIR runs from there (nothing
 * copied), one outside it is copied in beside DIR's files. A directory or
 * an archive is its own workspace.
 */
START_TEST(test_resolve_file_workspace)
{
	_cleanup_free_ char *real = realpath(tmpdir, NULL), *sub = NULL, *file = NULL;
	const char *inside[] = {"/workspace/bin/run.sh"};
	const char *outside[] = {"/workspace/tool.sh"};
	char *argv[1];
	struct sr_config c = {.argv = argv, .argc = 1};
	struct sr_agent a = {};
	struct sr_error err = {};

	ck_assert_int_eq(mkdirat(tmpfd, "ws", 0755), 0);
	ck_assert_int_eq(mkdirat(tmpfd, "ws/bin", 0755), 0);
	put("ws/bin/run.sh", "#!/bin/sh\n", 0755);
	put("tool.sh", "#!/bin/sh\n", 0755);
	ck_assert_int_ge(asprintf(&sub, "%s/ws", real), 0);
	ck_assert_int_ge(asprintf(&file, "%s/tool.sh", real), 0);
	c.workspace = sub;

	argv[0] = tmp_path("ws/bin/run.sh");
	ck_assert_int_eq(sr_agent_resolve(&c, NULL, &a, &err), 0);
	ck_assert_int_eq(a.kind, SR_AGENT_FILE);
	ck_assert_str_eq(a.host_dir, sub);
	ck_assert_ptr_null(a.file_path);
	assert_argv(&a.argv, inside, 1);
	sr_agent_free(&a);

	argv[0] = tmp_path("tool.sh");
	ck_assert_int_eq(sr_agent_resolve(&c, NULL, &a, &err), 0);
	ck_assert_str_eq(a.host_dir, sub);
	ck_assert_str_eq(a.file_path, file);
	assert_argv(&a.argv, outside, 1);
	sr_agent_free(&a);

	/* A name that only starts like the workspace is not in it. */
	put("wsx", "#!/bin/sh\n", 0755);
	argv[0] = tmp_path("wsx");
	ck_assert_int_eq(sr_agent_resolve(&c, NULL, &a, &err), 0);
	ck_assert_ptr_nonnull(a.file_path);
	sr_agent_free(&a);

	argv[0] = tmp_path("ws");
	ck_assert_int_eq(sr_agent_resolve(&c, NULL, &a, &err), -EINVAL);
	ck_assert_int_eq(err.status, 125);
	ck_assert_ptr_nonnull(strstr(err.msg, "is its own workspace"));
	ck_assert_ptr_null(a.host_dir);

	put("agent.tar.gz", "not checked here", 0755);
	argv[0] = tmp_path("agent.tar.gz");
	ck_assert_int_eq(sr_agent_resolve(&c, NULL, &a, &err), -EINVAL);
	ck_assert_ptr_nonnull(strstr(err.msg, "is its own workspace"));
}
END_TEST

/*
 * --bind sources come back with no link left (hostpath.c); a link among
 * the agent's own files is refused whoever owns it, and the message says
 * what to name instead.
 */
START_TEST(test_resolve_bind_sources)
{
	_cleanup_free_ char *real = realpath(tmpdir, NULL), *want = NULL, *dots = NULL;
	_cleanup_free_ char *through = NULL;
	struct sr_bind binds[1] = {{.dst = "/x"}};
	char *argv[] = {NULL};
	struct sr_config c = {.argv = argv, .argc = 1, .binds = binds, .n_binds = 1};
	struct sr_agent a = {};
	struct sr_error err = {};

	ck_assert_int_eq(mkdirat(tmpfd, "agent", 0755), 0);
	ck_assert_int_eq(mkdirat(tmpfd, "data", 0755), 0);
	ck_assert_int_eq(mkdirat(tmpfd, "data/sub", 0755), 0);
	put("agent/agent", "#!/bin/sh\n", 0755);
	ck_assert_int_eq(symlinkat("../data", tmpfd, "agent/out"), 0);
	argv[0] = strdup(tmp_path("agent"));
	ck_assert_int_ge(asprintf(&want, "%s/data/sub", real), 0);
	ck_assert_int_ge(asprintf(&dots, "%s/./data//sub/../sub", real), 0);
	ck_assert_int_ge(asprintf(&through, "%s/agent/out/sub", real), 0);

	binds[0].src = dots;
	ck_assert_int_eq(sr_agent_resolve(&c, NULL, &a, &err), 0);
	ck_assert_uint_eq(a.bind_sources.n, 1);
	ck_assert_str_eq(a.bind_sources.items[0], want);
	sr_agent_free(&a);

	binds[0].src = through;
	ck_assert_int_eq(sr_agent_resolve(&c, NULL, &a, &err), -ELOOP);
	ck_assert_ptr_nonnull(strstr(err.msg, "in the agent's own files"));
	ck_assert_ptr_nonnull(strstr(err.msg, "name the path it leads to instead"));
	ck_assert_ptr_nonnull(strstr(err.msg, want));
	ck_assert_uint_eq(a.bind_sources.n, 0);

	binds[0].src = tmp_path("data/missing");
	ck_assert_int_eq(sr_agent_resolve(&c, NULL, &a, &err), -ENOENT);
	ck_assert_ptr_nonnull(strstr(err.msg, "bind "));
	free(argv[0]);
}
END_TEST

START_TEST(test_resolve_archive)
{
	struct sr_agent a = {};
	struct sr_error err;
	char *argv[1];

	put("agent.tar.gz", "not checked here", 0644);
	argv[0] = strdup(tmp_path("agent.tar.gz"));
	ck_assert_int_eq(resolve(argv, 1, &a, &err), 0);
	ck_assert_int_eq(a.kind, SR_AGENT_ARCHIVE);
	ck_assert_ptr_nonnull(strstr(a.archive_path, "/agent.tar.gz"));
	ck_assert_int_eq(a.archive_path[0], '/');
	ck_assert_ptr_null(a.host_dir);
	ck_assert_uint_eq(a.argv.n, 0);
	sr_agent_free(&a);
	free(argv[0]);

	/* A directory with an archive's name is a directory. */
	ck_assert_int_eq(mkdirat(tmpfd, "dir.zip", 0755), 0);
	put("dir.zip/main.py", "", 0644);
	argv[0] = strdup(tmp_path("dir.zip"));
	ck_assert_int_eq(resolve(argv, 1, &a, &err), 0);
	ck_assert_int_eq(a.kind, SR_AGENT_DIR);
	sr_agent_free(&a);
	free(argv[0]);
}
END_TEST

START_TEST(test_resolve_missing_and_special)
{
	struct sr_agent a = {};
	struct sr_error err;
	char *argv[1];

	argv[0] = strdup(tmp_path("nope"));
	ck_assert_int_eq(resolve(argv, 1, &a, &err), -ENOENT);
	ck_assert_int_eq(err.status, 127);
	ck_assert_ptr_nonnull(strstr(err.msg, "not found"));
	ck_assert_ptr_nonnull(strstr(err.msg, "/nope'"));
	free(argv[0]);

	ck_assert_int_eq(mkfifoat(tmpfd, "fifo", 0755), 0);
	argv[0] = strdup(tmp_path("fifo"));
	ck_assert_int_eq(resolve(argv, 1, &a, &err), -EACCES);
	ck_assert_int_eq(err.status, 126);
	free(argv[0]);

	ck_assert_int_eq(resolve(argv, 0, &a, &err), -EINVAL);
	ck_assert_int_eq(err.status, 125);
}
END_TEST

START_TEST(test_resolve_command)
{
	_cleanup_free_ char *real = realpath(tmpdir, NULL);
	const char *want[] = {"make", "check"};
	char *argv[] = {"make", "check"};
	struct sr_config c = {.command_mode = true, .argv = argv, .argc = 2};
	struct sr_agent a = {};
	struct sr_error err = {};

	ck_assert_int_eq(sr_agent_resolve(&c, NULL, &a, &err), 0);
	ck_assert_int_eq(a.kind, SR_AGENT_COMMAND);
	ck_assert_ptr_null(a.host_dir);
	assert_argv(&a.argv, want, 2);
	sr_agent_free(&a);

	c.workspace = tmpdir;
	ck_assert_int_eq(sr_agent_resolve(&c, NULL, &a, &err), 0);
	ck_assert_str_eq(a.host_dir, real);
	sr_agent_free(&a);

	put("file", "", 0644);
	c.workspace = tmp_path("file");
	ck_assert_int_eq(sr_agent_resolve(&c, NULL, &a, &err), -ENOTDIR);
	ck_assert_int_eq(err.status, 125);
	c.workspace = tmp_path("missing");
	ck_assert_int_eq(sr_agent_resolve(&c, NULL, &a, &err), -ENOENT);

	c.workspace = NULL;
	c.argc = 0;
	ck_assert_int_eq(sr_agent_resolve(&c, NULL, &a, &err), -EINVAL);
}
END_TEST

START_TEST(test_archive_names)
{
	static const char *const yes[] = {"a.tar", "a.tar.gz",	"a.tgz",   "a.tar.xz",
					  "a.txz", "a.tar.zst", "a.tzst",  "a.tar.bz2",
					  "a.zip", "dir/A.ZIP", "x.Tar.Gz"};
	static const char *const no[] = {"a.gz",   "a.tar.", "a",   ".zip",	"dir/.tar",
					 "a.zip/", "a.xz",   "tar", "a.tar.lz4"};

	for (size_t i = 0; i < SR_ARRAY_SIZE(yes); i++)
		ck_assert_msg(sr_agent_is_archive_name(yes[i]), "%s", yes[i]);
	for (size_t i = 0; i < SR_ARRAY_SIZE(no); i++)
		ck_assert_msg(!sr_agent_is_archive_name(no[i]), "%s", no[i]);
}
END_TEST

/* package_main on a buffer of exactly len bytes (no terminator to lean on). */
static int pmain(const char *json, char **ret)
{
	size_t len = strlen(json);
	char *copy = malloc(len ? len : 1);
	int k;

	ck_assert_ptr_nonnull(copy);
	memcpy(copy, json, len);
	*ret = NULL;
	k = sr_agent_package_main(copy, len, ret);
	free(copy);
	return k;
}

static void assert_main(const char *json, const char *want)
{
	_cleanup_free_ char *m = NULL;

	ck_assert_msg(pmain(json, &m) == 0, "%s", json);
	ck_assert_str_eq(m, want);
}

START_TEST(test_pkg_main_ok)
{
	assert_main("{\"main\":\"a.js\"}", "a.js");
	assert_main(" \r\n\t{ \"main\" : \"a.js\" } \n", "a.js");
	assert_main("{\"name\":\"x\",\"version\":\"1.0.0\",\"main\":\"lib/x.js\",\"private\":true}",
		    "lib/x.js");
	/* "main" only counts in the top-level object. */
	assert_main("{\"x\":{\"main\":\"no\"},\"main\":\"yes\"}", "yes");
	assert_main("{\"main\":\"yes\",\"x\":[{\"main\":\"no\"},[\"main\"]]}", "yes");
	assert_main("{\"a\":{\"b\":{\"main\":\"no\"}},\"main\":\"yes\",\"c\":{\"main\":1}}", "yes");
	/* The last of repeated keys wins, as in JSON.parse. */
	assert_main("{\"main\":\"first\",\"main\":\"second\"}", "second");
	/* Escapes, in values and in the key. */
	assert_main("{\"main\":\"a\\\"b\\\\c\\/d\"}", "a\"b\\c/d");
	assert_main("{\"main\":\"\\b\\f\\n\\r\\t\"}", "\b\f\n\r\t");
	assert_main("{\"main\":\"caf\\u00e9\\u20AC\"}", "caf\xc3\xa9\xe2\x82\xac");
	assert_main("{\"main\":\"\\ud83d\\ude00\"}", "\xf0\x9f\x98\x80");
	assert_main("{\"m\\u0061in\":\"k.js\"}", "k.js");
	assert_main("{\"main\":\"caf\xc3\xa9\"}", "caf\xc3\xa9");
	/* Every kind of value elsewhere. */
	assert_main("{\"n\":[-0,0.5,1e3,-1.25E-2,10,true,false,null,{},[],\"\\u0000\"],"
		    "\"main\":\"v\"}",
		    "v");
	/* Numbers beyond 64 bits and below a double's smallest. */
	assert_main("{\"n\":[123456789012345678901234567890,-1e-400],\"main\":\"v\"}", "v");
	assert_main("{\"main\":\"\"}", "");
}
END_TEST

START_TEST(test_pkg_main_absent)
{
	char *m;

	ck_assert_int_eq(pmain("{}", &m), -ENOENT);
	ck_assert_int_eq(pmain("{\"name\":\"main\"}", &m), -ENOENT);
	ck_assert_int_eq(pmain("{\"x\":{\"main\":\"no\"}}", &m), -ENOENT);
	ck_assert_int_eq(pmain("{\"a\":[{\"main\":\"no\"}]}", &m), -ENOENT);
	ck_assert_int_eq(pmain("{\"mainx\":\"a\",\"mai\":\"b\",\"Main\":\"c\"}", &m), -ENOENT);
	ck_assert_ptr_null(m);
}
END_TEST

START_TEST(test_pkg_main_malformed)
{
	static const char *const bad[] = {
	    "",
	    "   ",
	    "[]",
	    "\"main\"",
	    "null",
	    "{",
	    "}",
	    "{\"main\"",
	    "{\"main\":",
	    "{\"main\":\"x\"",
	    "{\"main\":\"x",
	    "{\"main\":\"x\",}",
	    "{,}",
	    "{\"a\":1,,\"b\":2}",
	    "{\"a\" 1}",
	    "{\"a\":}",
	    "{a:1}",
	    "{'main':'x'}",
	    "{\"a\":[1,]}",
	    "{\"a\":[1 2]}",
	    "{\"a\":[}",
	    "{\"a\":{]}",
	    "{\"a\":{\"b\"}}",
	    "{\"a\":tru}",
	    "{\"a\":nul}",
	    "{\"a\":True}",
	    "{\"a\":01}",
	    "{\"a\":1.}",
	    "{\"a\":.5}",
	    "{\"a\":-}",
	    "{\"a\":1e}",
	    "{\"a\":1e+}",
	    "{\"a\":+1}",
	    "{\"a\":0x10}",
	    "{} x",
	    "{}{}",
	    "{}}",
	    /* Strings: raw control characters, bad escapes, surrogates. */
	    "{\"main\":\"a\nb\"}",
	    "{\"main\":\"a\tb\"}",
	    "{\"main\":\"\\x41\"}",
	    "{\"main\":\"\\u00\"}",
	    "{\"main\":\"\\u00g0\"}",
	    "{\"main\":\"\\ud83d\"}",
	    "{\"main\":\"\\ud83dx\"}",
	    "{\"main\":\"\\ud83d\\u0041\"}",
	    "{\"main\":\"\\ude00\"}",
	    "{\"main\":\"\\\"}",
	    "{\"main\":\"a\\u0000b\"}",
	    /* Invalid UTF-8 anywhere in a string. */
	    "{\"main\":\"\xff\"}",
	    "{\"main\":\"\xc0\xaf\"}",
	    "{\"x\":\"\xed\xa0\x80\"}",
	    "{\"x\":\"\xe2\x82\"}",
	    /* "main" must be a string. */
	    "{\"main\":1}",
	    "{\"main\":null}",
	    "{\"main\":true}",
	    "{\"main\":{\"x\":\"y\"}}",
	    "{\"main\":[\"a.js\"]}",
	    "{\"main\":\"a\",\"main\":2}",
	    /* RFC 8259 allows these; jansson does not (no real package.json has one). */
	    "{\"a\":1e400,\"main\":\"v\"}",
	    "{\"a\":-1e400,\"main\":\"v\"}",
	    "{\"a\\u0000b\":1,\"main\":\"v\"}",
	};
	char *m;

	for (size_t i = 0; i < SR_ARRAY_SIZE(bad); i++) {
		ck_assert_msg(pmain(bad[i], &m) == -EINVAL, "accepted: %s", bad[i]);
		ck_assert_ptr_null(m);
	}
	/* A NUL byte inside the text is not JSON either. */
	ck_assert_int_eq(sr_agent_package_main("{\"main\":\"a\0\"}", 12, &m), -EINVAL);
	/* len is honoured: what follows it is not read. */
	ck_assert_int_eq(sr_agent_package_main("{\"main\":\"a\"}garbage", 12, &m), 0);
	ck_assert_str_eq(m, "a");
	free(m);
}
END_TEST

static char *nested(size_t levels, const char *open, const char *close, const char *inner)
{
	size_t lo = strlen(open), lc = strlen(close), li = strlen(inner);
	char *s = malloc(2 + levels * (lo + lc) + li + 16), *p = s;

	ck_assert_ptr_nonnull(s);
	p = stpcpy(p, "{\"a\":");
	for (size_t i = 0; i < levels; i++)
		p = stpcpy(p, open);
	p = stpcpy(p, inner);
	for (size_t i = 0; i < levels; i++)
		p = stpcpy(p, close);
	stpcpy(p, ",\"main\":\"m\"}");
	return s;
}

START_TEST(test_pkg_main_deep)
{
	char *m, *s;

	s = nested(500, "[", "]", "1");
	ck_assert_int_eq(pmain(s, &m), 0);
	ck_assert_str_eq(m, "m");
	free(m);
	free(s);

	s = nested(300, "{\"main\":", "}", "\"no\"");
	ck_assert_int_eq(pmain(s, &m), 0);
	ck_assert_str_eq(m, "m");
	free(m);
	free(s);

	/* 512 levels, the top-level object included, and no more. */
	s = nested(511, "[", "]", "1");
	ck_assert_int_eq(pmain(s, &m), 0);
	free(m);
	free(s);
	s = nested(512, "[", "]", "1");
	ck_assert_int_eq(pmain(s, &m), -EINVAL);
	free(s);
	s = nested(511, "{\"x\":", "}", "[]");
	ck_assert_int_eq(pmain(s, &m), -EINVAL);
	free(s);
	s = nested(600, "[", "]", "1");
	ck_assert_int_eq(pmain(s, &m), -EINVAL);
	free(s);
	/* Deeper than jansson's own bound (2048): refused, not a stack overflow. */
	s = malloc(1000001);
	ck_assert_ptr_nonnull(s);
	s[0] = '{';
	memcpy(s + 1, "\"a\":", 4);
	memset(s + 5, '[', 999995);
	s[1000000] = '\0';
	ck_assert_int_eq(pmain(s, &m), -EINVAL);
	free(s);
}
END_TEST

START_TEST(test_pkg_main_every_prefix)
{
	static const char doc[] =
	    "{\"name\":\"x\",\"n\":[-1.5e3,{\"k\":[true,false,null]}],\"s\":\"\\u00e9\\ud83d\\ude00"
	    "\\\"\",\"main\":\"lib/\\u0061.js\"}";
	_cleanup_free_ char *m = NULL;
	char *p;

	/* Every proper prefix of a valid document is malformed (no read past len). */
	for (size_t l = 0; l < strlen(doc); l++) {
		ck_assert_msg(pmain(strndupa(doc, l), &p) == -EINVAL, "prefix %zu accepted", l);
		ck_assert_ptr_null(p);
	}
	ck_assert_int_eq(pmain(doc, &m), 0);
	ck_assert_str_eq(m, "lib/a.js");
}
END_TEST

START_TEST(test_pkg_main_mutations)
{
	static const char doc[] = "{\"a\":[1,{\"b\":\"\\u00e9\"}],\"main\":\"x.js\",\"c\":null}";
	static const char bytes[] = "{}[]\",:\\u0a-.e9 \x80\xff";
	unsigned seed = 1;

	/* Single-byte mutations: any result is fine, a crash or a leak is not. */
	for (size_t i = 0; i < strlen(doc); i++) {
		for (size_t b = 0; b < sizeof(bytes) - 1; b++) {
			char buf[sizeof(doc)], *m = NULL;
			int k;

			memcpy(buf, doc, sizeof(doc));
			buf[i] = bytes[(b + rand_r(&seed)) % (sizeof(bytes) - 1)];
			k = pmain(buf, &m);
			ck_assert(k == 0 || k == -EINVAL || k == -ENOENT);
			ck_assert(k == 0 ? m != NULL : m == NULL);
			free(m);
		}
	}
}
END_TEST

static Suite *agent_suite(void)
{
	Suite *s = suite_create("agent");
	TCase *td = tcase_create("detect");
	TCase *tr = tcase_create("resolve");
	TCase *tj = tcase_create("package-json");

	tcase_add_unchecked_fixture(td, sr_test_setup_base, sr_test_teardown_base);
	tcase_add_checked_fixture(td, setup_tmp, teardown_tmp);
	tcase_add_test(td, test_entry_split);
	tcase_add_test(td, test_agent_file);
	tcase_add_test(td, test_agent_not_executable);
	tcase_add_test(td, test_agent_symlink_outside);
	tcase_add_test(td, test_agent_symlink_inside);
	tcase_add_test(td, test_agent_directory_skipped);
	tcase_add_test(td, test_package_json);
	tcase_add_test(td, test_package_json_bad);
	tcase_add_test(td, test_package_json_symlink_outside);
	tcase_add_test(td, test_package_json_special);
	tcase_add_test(td, test_main_py_and_precedence);
	tcase_add_test(td, test_nothing_found);
	tcase_add_test(td, test_argv_appended_or_untouched);
	suite_add_tcase(s, td);

	tcase_add_unchecked_fixture(tr, sr_test_setup_base, sr_test_teardown_base);
	tcase_add_checked_fixture(tr, setup_tmp, teardown_tmp);
	tcase_add_test(tr, test_resolve_dir);
	tcase_add_test(tr, test_resolve_file);
	tcase_add_test(tr, test_resolve_file_workspace);
	tcase_add_test(tr, test_resolve_bind_sources);
	tcase_add_test(tr, test_resolve_archive);
	tcase_add_test(tr, test_resolve_missing_and_special);
	tcase_add_test(tr, test_resolve_command);
	tcase_add_test(tr, test_archive_names);
	suite_add_tcase(s, tr);

	tcase_add_test(tj, test_pkg_main_ok);
	tcase_add_test(tj, test_pkg_main_absent);
	tcase_add_test(tj, test_pkg_main_malformed);
	tcase_add_test(tj, test_pkg_main_deep);
	tcase_add_test(tj, test_pkg_main_every_prefix);
	tcase_add_test(tj, test_pkg_main_mutations);
	suite_add_tcase(s, tj);
	return s;
}

int main(void)
{
	return sr_test_run(agent_suite());
}
