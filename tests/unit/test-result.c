/* SPDX-License-Identifier: MIT */
#include "result.h"
#include "util.h"
#include "testutil.h"

#include <check.h>
#include <dirent.h>
#include <fcntl.h>
#include <ftw.h>
#include <math.h>
#include <sys/stat.h>

/* A fresh directory per test, inside the suite's base (testutil.h). */
static char tmpdir[96];

static void setup_tmp(void)
{
	sr_test_mkdtemp(tmpdir, sizeof(tmpdir), sr_test_basedir, "t");
}

static void teardown_tmp(void)
{
	sr_test_rmtree(tmpdir);
}

START_TEST(test_init)
{
	struct sr_result r;

	memset(&r, 0x55, sizeof(r));
	sr_result_init(&r);
	ck_assert_int_eq(r.status, SR_STATUS_ERROR);
	ck_assert_int_eq(r.exit_code, 125);
	ck_assert_int_eq(r.signal, 0);
	ck_assert_str_eq(r.error, "");
	ck_assert_str_eq(r.sandbox_id, "");
	ck_assert_int_eq(r.peak_memory_bytes, -1);
	ck_assert_int_eq(r.disk_used_bytes, -1);
	for (size_t i = 0; i < _SR_LIMIT_MAX; i++)
		ck_assert_int_eq(r.enforced[i], SR_ENFORCE_NONE);
}
END_TEST

START_TEST(test_to_string)
{
	ck_assert_str_eq(sr_status_to_string(SR_STATUS_EXITED), "exited");
	ck_assert_str_eq(sr_status_to_string(SR_STATUS_SIGNALED), "signaled");
	ck_assert_str_eq(sr_status_to_string(SR_STATUS_TIMEOUT), "timeout");
	ck_assert_str_eq(sr_status_to_string(SR_STATUS_OOM), "oom");
	ck_assert_str_eq(sr_status_to_string(SR_STATUS_ERROR), "error");
	ck_assert_ptr_null(sr_status_to_string(_SR_STATUS_MAX));
	ck_assert_str_eq(sr_enforce_to_string(SR_ENFORCE_NONE), "none");
	ck_assert_str_eq(sr_enforce_to_string(SR_ENFORCE_CGROUP2), "cgroup2");
	ck_assert_str_eq(sr_enforce_to_string(SR_ENFORCE_CGROUP1), "cgroup1");
	ck_assert_str_eq(sr_enforce_to_string(SR_ENFORCE_RLIMIT), "rlimit");
	ck_assert_str_eq(sr_enforce_to_string(SR_ENFORCE_TMPFS), "tmpfs");
	ck_assert_str_eq(sr_enforce_to_string(SR_ENFORCE_NFTABLES), "nftables");
	ck_assert_str_eq(sr_enforce_to_string(SR_ENFORCE_NETNS), "netns");
	ck_assert_ptr_null(sr_enforce_to_string(_SR_ENFORCE_MAX));
	ck_assert_str_eq(sr_limit_to_string(SR_LIMIT_MEMORY), "memory");
	ck_assert_str_eq(sr_limit_to_string(SR_LIMIT_CPUS), "cpus");
	ck_assert_str_eq(sr_limit_to_string(SR_LIMIT_PIDS), "pids");
	ck_assert_str_eq(sr_limit_to_string(SR_LIMIT_DISK), "disk");
	ck_assert_str_eq(sr_limit_to_string(SR_LIMIT_NET), "net");
	ck_assert_ptr_null(sr_limit_to_string(_SR_LIMIT_MAX));
}
END_TEST

static void sample(struct sr_result *r, struct sr_config *c)
{
	sr_result_init(r);
	r->status = SR_STATUS_EXITED;
	r->exit_code = 3;
	r->wall_ms = 12.3;
	r->user_ms = 4.0;
	r->sys_ms = 2.1256;
	r->peak_memory_bytes = 1234567;
	r->peak_memory_scope = SR_PEAK_SANDBOX;
	r->disk_used_bytes = 4096;
	r->enforced[SR_LIMIT_MEMORY] = SR_ENFORCE_CGROUP2;
	r->enforced[SR_LIMIT_CPUS] = SR_ENFORCE_CGROUP2;
	r->enforced[SR_LIMIT_PIDS] = SR_ENFORCE_RLIMIT;
	r->enforced[SR_LIMIT_DISK] = SR_ENFORCE_TMPFS;
	r->enforced[SR_LIMIT_NET] = SR_ENFORCE_NFTABLES;
	snprintf(r->sandbox_id, sizeof(r->sandbox_id), "0123456789abcdef");

	*c = (struct sr_config){
	    .profile = (char *)"default",
	    .memory_bytes = 2147483648ULL,
	    .cpus_milli = 2000,
	    .pids = 1024,
	    .timeout_ms = 120000,
	    .disk_bytes = 10737418240ULL,
	    .net = SR_NET_EGRESS,
	};
}

START_TEST(test_format_exact)
{
	_cleanup_free_ char *json = NULL;
	struct sr_result r;
	struct sr_config c;

	sample(&r, &c);
	ck_assert_int_eq(sr_result_format(&r, &c, &json), 0);
	ck_assert_str_eq(json,
			 "{\"version\":1,\"status\":\"exited\",\"exit_code\":3,\"signal\":null,"
			 "\"error\":null,\"wall_ms\":12.3,\"user_ms\":4.0,\"sys_ms\":2.126,"
			 "\"peak_memory_bytes\":1234567,\"peak_memory_scope\":\"sandbox\","
			 "\"disk_used_bytes\":4096,"
			 "\"limits\":{\"memory_bytes\":2147483648,\"cpus\":2,\"pids\":1024,"
			 "\"timeout_s\":120,\"disk_bytes\":10737418240,\"net\":\"egress\"},"
			 "\"enforced\":{\"memory\":\"cgroup2\",\"cpus\":\"cgroup2\","
			 "\"pids\":\"rlimit\",\"disk\":\"tmpfs\",\"net\":\"nftables\"},"
			 "\"profile\":\"default\",\"sandbox_id\":\"0123456789abcdef\"}\n");
}
END_TEST

/* "network": egress runs only; destinations and names, escaped like any string. */
START_TEST(test_format_network)
{
	_cleanup_free_ char *json = NULL;
	struct sr_result r;
	struct sr_config c;
	struct sr_result_network *n = &r.network;

	sample(&r, &c);
	n->recorded = true;
	n->n_allowed = 2;
	snprintf(n->allowed[0], sizeof(n->allowed[0]), "api.example.com");
	snprintf(n->allowed[1], sizeof(n->allowed[1]), "cdn.example.com");
	n->n_refused = 3;
	n->refused[0] =
	    (struct sr_result_refused){.dest = "10.0.0.5:80", .proto = "tcp", .count = 3};
	n->refused[1] =
	    (struct sr_result_refused){.dest = "[2001:db8::1]:53", .proto = "udp", .count = 1};
	n->refused[2] = (struct sr_result_refused){.name = "evil\\\"x\x01.example", .count = 2};
	n->truncated = true;
	ck_assert_int_eq(sr_result_format(&r, &c, &json), 0);
	ck_assert_ptr_nonnull(strstr(
	    json, ",\"sandbox_id\":\"0123456789abcdef\",\"network\":{\"allowed_names\":["
		  "\"api.example.com\",\"cdn.example.com\"],\"refused\":[{\"dest\":\"10.0.0.5:80\","
		  "\"proto\":\"tcp\",\"count\":3},{\"dest\":\"[2001:db8::1]:53\",\"proto\":\"udp\","
		  "\"count\":1},{\"name\":\"evil\\\\\\\"x\\u0001.example\",\"count\":2}],"
		  "\"truncated\":true}}\n"));

	/* Nothing seen: empty lists. */
	free(steal_pointer(&json));
	*n = (struct sr_result_network){.recorded = true};
	ck_assert_int_eq(sr_result_format(&r, &c, &json), 0);
	ck_assert_ptr_nonnull(
	    strstr(json, "\"network\":{\"allowed_names\":[],\"refused\":[],\"truncated\":false}}"));
}
END_TEST

START_TEST(test_format_nulls_and_fractions)
{
	_cleanup_free_ char *json = NULL;
	struct sr_result r;
	struct sr_config c;

	sample(&r, &c);
	r.status = SR_STATUS_SIGNALED;
	r.exit_code = 137;
	r.signal = 9;
	r.wall_ms = 0.0004;
	r.user_ms = -1;
	r.sys_ms = 1000.5;
	r.peak_memory_bytes = -1;
	r.disk_used_bytes = -1;
	r.sandbox_id[0] = '\0';
	c.memory_bytes = 0;
	c.cpus_milli = 500;
	c.pids = 0;
	c.timeout_ms = 1500;
	c.disk_bytes = 0;
	c.net = SR_NET_NONE;
	ck_assert_int_eq(sr_result_format(&r, &c, &json), 0);
	ck_assert_ptr_nonnull(
	    strstr(json, "\"status\":\"signaled\",\"exit_code\":137,\"signal\":9,"));
	ck_assert_ptr_nonnull(strstr(json, "\"wall_ms\":0.0,\"user_ms\":0.0,\"sys_ms\":1000.5,"));
	ck_assert_ptr_nonnull(strstr(json, "\"peak_memory_bytes\":null,\"peak_memory_scope\":null,"
					   "\"disk_used_bytes\":null,"));
	free(steal_pointer(&json));
	/* Under rlimits: the largest process's peak, and said so. */
	r.peak_memory_bytes = 52428800;
	r.peak_memory_scope = SR_PEAK_PROCESS;
	ck_assert_int_eq(sr_result_format(&r, &c, &json), 0);
	ck_assert_ptr_nonnull(
	    strstr(json, "\"peak_memory_bytes\":52428800,\"peak_memory_scope\":\"process\","));
	ck_assert_ptr_nonnull(strstr(json,
				     "{\"memory_bytes\":null,\"cpus\":0.5,\"pids\":null,"
				     "\"timeout_s\":1.5,\"disk_bytes\":null,\"net\":\"none\"}"));
	ck_assert_ptr_nonnull(strstr(json, "\"sandbox_id\":null}"));
}
END_TEST

START_TEST(test_format_strings)
{
	_cleanup_free_ char *json = NULL;
	struct sr_result r;
	struct sr_config c;

	sample(&r, &c);
	r.status = SR_STATUS_ERROR;
	r.exit_code = 125;
	/* Quotes, escapes, control characters, invalid UTF-8: each byte one U+FFFD. */
	snprintf(r.error, sizeof(r.error), "mount \"/x\\y\": \x1b[1mno\xff\xc0\xaf\n\tcaf\xc3\xa9");
	c.profile = (char *)"./p\xe9.ini";
	ck_assert_int_eq(sr_result_format(&r, &c, &json), 0);
	ck_assert_ptr_nonnull(strstr(json, "\"error\":\"mount \\\"/x\\\\y\\\": "
					   "\\u001B[1mno\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd"
					   "\\n\\tcaf\xc3\xa9\",\"wall_ms\""));
	ck_assert_ptr_nonnull(strstr(json, "\"profile\":\"./p\xef\xbf\xbd.ini\","));
	/* One line. */
	ck_assert_ptr_eq(strchr(json, '\n'), json + strlen(json) - 1);
}
END_TEST

START_TEST(test_format_numbers)
{
	_cleanup_free_ char *json = NULL;
	struct sr_result r;
	struct sr_config c;

	sample(&r, &c);
	r.wall_ms = 0.125;
	r.user_ms = 1e15;
	r.sys_ms = NAN;
	c.memory_bytes = UINT64_MAX;
	c.pids = 1;
	c.cpus_milli = 1;
	c.timeout_ms = 86400001;
	c.disk_bytes = (uint64_t)INT64_MAX;
	ck_assert_int_eq(sr_result_format(&r, &c, &json), 0);
	/* Capped just under 1e12 ms; NaN as 0. */
	ck_assert_ptr_nonnull(
	    strstr(json, "\"wall_ms\":0.125,\"user_ms\":999999999999.999,\"sys_ms\":0.0,"));
	ck_assert_ptr_nonnull(
	    strstr(json, "{\"memory_bytes\":1.84467440737096e19,\"cpus\":0.001,\"pids\":1,"
			 "\"timeout_s\":86400.001,\"disk_bytes\":9223372036854775807,"));
}
END_TEST

/* The decimal point is '.' whatever LC_NUMERIC says: "12,3" is not JSON. */
START_TEST(test_format_comma_locale)
{
	_cleanup_free_ char *json = NULL;
	struct sr_result r;
	struct sr_config c;

	sr_test_comma_locale(tmpdir);
	sample(&r, &c);
	c.cpus_milli = 1500;
	ck_assert_int_eq(sr_result_format(&r, &c, &json), 0);
	ck_assert_ptr_nonnull(strstr(json, "\"wall_ms\":12.3,\"user_ms\":4.0,\"sys_ms\":2.126,"));
	ck_assert_ptr_nonnull(strstr(json, "\"cpus\":1.5,"));
}
END_TEST

/* Runs python3's json module on the record, printing selected fields. */
static void python_check(const char *path, const char *expr, const char *expect)
{
	char cmd[1024], out[1024] = "";
	FILE *p;
	size_t n;

	snprintf(cmd, sizeof(cmd),
		 "python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(%s)' %s", expr,
		 path);
	p = popen(cmd, "r");
	ck_assert_ptr_nonnull(p);
	n = fread(out, 1, sizeof(out) - 1, p);
	out[n] = '\0';
	ck_assert_int_eq(pclose(p), 0);
	ck_assert_str_eq(out, expect);
}

START_TEST(test_format_parses_as_json)
{
	struct sr_error err = {};
	struct sr_result r;
	struct sr_config c;
	char path[128];

	sample(&r, &c);
	r.status = SR_STATUS_ERROR;
	r.exit_code = 125;
	/* Everything an error message may carry: quotes, escapes, bad bytes. */
	snprintf(r.error, sizeof(r.error), "mount \"/x\\y\": \x1b[1mno\xff\n\tcaf\xc3\xa9");
	c.cpus_milli = 1250;
	snprintf(path, sizeof(path), "%s/r.json", tmpdir);
	ck_assert_int_eq(sr_result_write(&r, &c, path, &err), 0);

	python_check(path, "d[\"version\"], d[\"status\"], d[\"exit_code\"], d[\"signal\"]",
		     "1 error 125 None\n");
	python_check(path, "ascii(d[\"error\"])",
		     "'mount \"/x\\\\y\": \\x1b[1mno\\ufffd\\n\\tcaf\\xe9'\n");
	python_check(path, "d[\"wall_ms\"], d[\"user_ms\"], d[\"sys_ms\"]", "12.3 4.0 2.126\n");
	python_check(path,
		     "d[\"limits\"][\"cpus\"], d[\"limits\"][\"memory_bytes\"], "
		     "d[\"limits\"][\"net\"], d[\"enforced\"][\"pids\"], d[\"profile\"]",
		     "1.25 2147483648 egress rlimit default\n");
	python_check(path, "sorted(d.keys())",
		     "['disk_used_bytes', 'enforced', 'error', 'exit_code', 'limits', "
		     "'peak_memory_bytes', 'peak_memory_scope', 'profile', 'sandbox_id', 'signal', "
		     "'status', "
		     "'sys_ms', 'user_ms', 'version', 'wall_ms']\n");
}
END_TEST

static int count_entries(const char *dir)
{
	struct dirent **names;
	int n = scandir(dir, &names, NULL, NULL);

	ck_assert_int_ge(n, 0);
	for (int i = 0; i < n; i++)
		free(names[i]);
	free(names);
	return n - 2;
}

START_TEST(test_write_atomic)
{
	_cleanup_free_ char *json = NULL;
	struct sr_error err = {};
	struct sr_result r;
	struct sr_config c;
	char path[128], buf[4096];
	struct stat st;
	mode_t old;
	int fd;
	ssize_t n;

	sample(&r, &c);
	ck_assert_int_eq(sr_result_format(&r, &c, &json), 0);
	snprintf(path, sizeof(path), "%s/result.json", tmpdir);

	/* An existing file is replaced whole. */
	fd = open(path, O_WRONLY | O_CREAT, 0600);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(write(fd, "old content that is longer", 26), 26);
	close(fd);

	old = umask(022);
	ck_assert_int_eq(sr_result_write(&r, &c, path, &err), 0);
	umask(old);
	fd = open(path, O_RDONLY);
	ck_assert_int_ge(fd, 0);
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	ck_assert_int_gt(n, 0);
	buf[n] = '\0';
	ck_assert_str_eq(buf, json);
	ck_assert_int_eq(stat(path, &st), 0);
	ck_assert_int_eq(st.st_mode & 07777, 0644);
	/* No temporary file left behind. */
	ck_assert_int_eq(count_entries(tmpdir), 1);

	old = umask(077);
	ck_assert_int_eq(sr_result_write(&r, &c, path, &err), 0);
	umask(old);
	ck_assert_int_eq(stat(path, &st), 0);
	ck_assert_int_eq(st.st_mode & 07777, 0600);
	ck_assert_int_eq(count_entries(tmpdir), 1);
}
END_TEST

START_TEST(test_write_errors)
{
	struct sr_error err = {};
	struct sr_result r;
	struct sr_config c;
	char path[128];

	sample(&r, &c);
	snprintf(path, sizeof(path), "%s/missing/result.json", tmpdir);
	ck_assert_int_eq(sr_result_write(&r, &c, path, &err), -ENOENT);
	ck_assert_ptr_nonnull(strstr(err.msg, "missing"));
	ck_assert_ptr_nonnull(strstr(err.msg, "No such file or directory"));

	/* The target is a directory: rename fails, nothing is left behind. */
	snprintf(path, sizeof(path), "%s/sub", tmpdir);
	ck_assert_int_eq(mkdir(path, 0755), 0);
	ck_assert_int_lt(sr_result_write(&r, &c, path, &err), 0);
	ck_assert_int_eq(count_entries(tmpdir), 1);

	snprintf(path, sizeof(path), "%s/", tmpdir);
	ck_assert_int_eq(sr_result_write(&r, &c, path, &err), -EINVAL);
}
END_TEST

START_TEST(test_write_relative)
{
	struct sr_error err = {};
	struct sr_result r;
	struct sr_config c;
	struct stat st;
	char cwd[4096];

	sample(&r, &c);
	ck_assert_ptr_nonnull(getcwd(cwd, sizeof(cwd)));
	ck_assert_int_eq(chdir(tmpdir), 0);
	ck_assert_int_eq(sr_result_write(&r, &c, "rel.json", &err), 0);
	ck_assert_int_eq(stat("rel.json", &st), 0);
	ck_assert_int_eq(chdir(cwd), 0);
	ck_assert_int_eq(count_entries(tmpdir), 1);
}
END_TEST

static void read_file(const char *path, char *buf, size_t len)
{
	int fd = open(path, O_RDONLY);
	ssize_t n;

	ck_assert_int_ge(fd, 0);
	n = read(fd, buf, len - 1);
	close(fd);
	ck_assert_int_ge(n, 0);
	buf[n] = '\0';
}

static void write_file(const char *path, const char *text)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);

	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	close(fd);
}

/* The caller's own links, there when the run starts, are followed. */
START_TEST(test_target_follows_links_at_open)
{
	struct sr_result_target t;
	struct sr_error err = {};
	struct sr_result r;
	struct sr_config c;
	char link[160], link2[160], target[160], buf[4096];
	struct stat st;

	sample(&r, &c);
	snprintf(link, sizeof(link), "%s/link.json", tmpdir);
	snprintf(link2, sizeof(link2), "%s/link2.json", tmpdir);
	snprintf(target, sizeof(target), "%s/target.json", tmpdir);
	/* Two levels, the last one dangling: the record creates the file it names. */
	ck_assert_int_eq(symlink("link2.json", link), 0);
	ck_assert_int_eq(symlink("target.json", link2), 0);
	ck_assert_int_eq(sr_result_target_open(link, &t, &err), 0);
	ck_assert_int_eq(sr_result_target_write(&t, &r, &c, &err), 0);
	sr_result_target_close(&t);
	ck_assert_int_eq(lstat(link, &st), 0);
	ck_assert(S_ISLNK(st.st_mode));
	ck_assert_int_eq(lstat(link2, &st), 0);
	ck_assert(S_ISLNK(st.st_mode));
	read_file(target, buf, sizeof(buf));
	ck_assert_ptr_nonnull(strstr(buf, "\"version\":1"));

	/* A loop is an error at open, not a hang. */
	ck_assert_int_eq(unlink(link2), 0);
	ck_assert_int_eq(symlink("link.json", link2), 0);
	ck_assert_int_eq(sr_result_target_open(link, &t, &err), -ELOOP);
}
END_TEST

/*
 * What the agent does to the path during the run -- a link at the name, a
 * link in place of the directory, a FIFO -- does not move the record or
 * hang the write: the name is replaced, in the directory held from the start.
 */
START_TEST(test_target_not_redirected_during_run)
{
	struct sr_result_target t;
	struct sr_error err = {};
	struct sr_result r;
	struct sr_config c;
	char out[128], path[256], moved[160], victim[160], buf[4096];
	struct stat st;

	sample(&r, &c);
	snprintf(out, sizeof(out), "%s/out", tmpdir);
	snprintf(path, sizeof(path), "%s/result.json", out);
	snprintf(moved, sizeof(moved), "%s/moved", tmpdir);
	snprintf(victim, sizeof(victim), "%s/victim", tmpdir);
	ck_assert_int_eq(mkdir(out, 0755), 0);
	write_file(victim, "precious");

	/* A link at the name, to a file of the caller's. */
	ck_assert_int_eq(sr_result_target_open(path, &t, &err), 0);
	ck_assert_int_eq(symlink(victim, path), 0);
	ck_assert_int_eq(sr_result_target_write(&t, &r, &c, &err), 0);
	sr_result_target_close(&t);
	read_file(victim, buf, sizeof(buf));
	ck_assert_str_eq(buf, "precious");
	ck_assert_int_eq(lstat(path, &st), 0);
	ck_assert(S_ISREG(st.st_mode));

	/* A FIFO at the name: replaced, not opened (nobody would read it). */
	ck_assert_int_eq(unlink(path), 0);
	ck_assert_int_eq(sr_result_target_open(path, &t, &err), 0);
	ck_assert_int_eq(mkfifo(path, 0644), 0);
	ck_assert_int_eq(sr_result_target_write(&t, &r, &c, &err), 0);
	sr_result_target_close(&t);
	ck_assert_int_eq(lstat(path, &st), 0);
	ck_assert(S_ISREG(st.st_mode));

	/*
	 * The directory moved away and a link put in its place: refused, not
	 * followed, and nothing written in either.
	 */
	ck_assert_int_eq(unlink(path), 0);
	ck_assert_int_eq(sr_result_target_open(path, &t, &err), 0);
	ck_assert_int_eq(rename(out, moved), 0);
	ck_assert_int_eq(symlink(tmpdir, out), 0);
	ck_assert_int_eq(sr_result_target_write(&t, &r, &c, &err), -ELOOP);
	ck_assert_ptr_nonnull(strstr(err.msg, "symbolic link"));
	sr_result_target_close(&t);
	snprintf(path, sizeof(path), "%s/result.json", moved);
	ck_assert_int_eq(access(path, F_OK), -1);
	snprintf(path, sizeof(path), "%s/result.json", tmpdir);
	ck_assert_int_eq(access(path, F_OK), -1);

	/* Removed and made again (a "clean" step): the record goes to the new one. */
	ck_assert_int_eq(unlink(out), 0);
	ck_assert_int_eq(mkdir(out, 0755), 0);
	snprintf(path, sizeof(path), "%s/result.json", out);
	ck_assert_int_eq(sr_result_target_open(path, &t, &err), 0);
	ck_assert_int_eq(rmdir(out), 0);
	ck_assert_int_eq(mkdir(out, 0755), 0);
	ck_assert_int_eq(sr_result_target_write(&t, &r, &c, &err), 0);
	sr_result_target_close(&t);
	read_file(path, buf, sizeof(buf));
	ck_assert_ptr_nonnull(strstr(buf, "\"version\":1"));
}
END_TEST

/* Reads a record from fd (a pipe's or FIFO's reading end) and closes it. */
static void assert_record_in(int fd)
{
	char buf[4096];
	ssize_t n = read(fd, buf, sizeof(buf) - 1);

	close(fd);
	ck_assert_int_gt(n, 0);
	buf[n] = '\0';
	ck_assert_ptr_nonnull(strstr(buf, "\"version\":1"));
}

/* A descriptor named through /proc/thread-self is the descriptor itself. */
START_TEST(test_target_proc_fd)
{
	struct sr_result_target t;
	struct sr_error err = {};
	struct sr_result r;
	struct sr_config c;
	char path[64];
	int p[2];

	sample(&r, &c);
	ck_assert_int_eq(pipe(p), 0);
	snprintf(path, sizeof(path), "/proc/thread-self/fd/%d", p[1]);
	ck_assert_int_eq(sr_result_target_open(path, &t, &err), 0);
	ck_assert_int_eq(t.fd, p[1]);
	ck_assert_int_eq(sr_result_target_write(&t, &r, &c, &err), 0);
	sr_result_target_close(&t);
	close(p[1]);
	assert_record_in(p[0]);
}
END_TEST

/*
 * A FIFO is refused before the run (nobody may be reading it: the write
 * would wait for ever), unless it is the caller's own stderr or stdout.
 */
START_TEST(test_target_fifo)
{
	struct sr_result_target t;
	struct sr_error err = {};
	struct sr_result r;
	struct sr_config c;
	char path[160];
	int rd, saved;

	sample(&r, &c);
	snprintf(path, sizeof(path), "%s/fifo", tmpdir);
	ck_assert_int_eq(mkfifo(path, 0644), 0);
	ck_assert_int_eq(sr_result_target_open(path, &t, &err), -EINVAL);
	ck_assert_ptr_nonnull(strstr(err.msg, "not a regular file"));

	rd = open(path, O_RDWR | O_NONBLOCK);
	ck_assert_int_ge(rd, 0);
	saved = dup(2);
	ck_assert_int_ge(saved, 0);
	ck_assert_int_eq(dup2(rd, 2), 2);
	ck_assert_int_eq(sr_result_target_open(path, &t, &err), 0);
	ck_assert_int_eq(t.fd, 2);
	ck_assert_int_eq(sr_result_target_write(&t, &r, &c, &err), 0);
	ck_assert_int_eq(dup2(saved, 2), 2);
	close(saved);
	sr_result_target_close(&t);
	assert_record_in(rd);
}
END_TEST

/*
 * A link is followed only within its directory: one to a file outside it
 * (an agent's, left in a --bind, aimed at ~/.bashrc) is refused at the
 * start, and the file it names is untouched.
 */
START_TEST(test_target_link_out_refused)
{
	struct sr_result_target t;
	struct sr_error err = {};
	char out[128], link[192], victim[160], buf[64];

	snprintf(out, sizeof(out), "%s/out", tmpdir);
	snprintf(link, sizeof(link), "%s/result.json", out);
	snprintf(victim, sizeof(victim), "%s/victim", tmpdir);
	ck_assert_int_eq(mkdir(out, 0755), 0);
	write_file(victim, "precious");
	ck_assert_int_eq(symlink(victim, link), 0);
	ck_assert_int_eq(sr_result_target_open(link, &t, &err), -EXDEV);
	ck_assert_ptr_nonnull(strstr(err.msg, "out of its directory"));
	ck_assert_int_eq(unlink(link), 0);
	ck_assert_int_eq(symlink("../victim", link), 0);
	ck_assert_int_eq(sr_result_target_open(link, &t, &err), -EXDEV);
	read_file(victim, buf, sizeof(buf));
	ck_assert_str_eq(buf, "precious");
}
END_TEST

/*
 * Another user's link is not followed (the kernel's protected_symlinks
 * rule, applied in every directory): not even to a file beneath it.
 */
START_TEST(test_target_foreign_link_refused)
{
	struct sr_result_target t;
	struct sr_error err = {};
	char link[160];

	if (geteuid() != 0)
		return; /* lchown to another uid needs root; the integration tests cover users */
	snprintf(link, sizeof(link), "%s/r.json", tmpdir);
	ck_assert_int_eq(symlink("target.json", link), 0);
	ck_assert_int_eq(lchown(link, 54321, 54321), 0);
	ck_assert_int_eq(sr_result_target_open(link, &t, &err), -EPERM);
	ck_assert_ptr_nonnull(strstr(err.msg, "uid 54321"));
	/* The directory owner's link is: here the caller is that owner too. */
	ck_assert_int_eq(lchown(link, 0, 0), 0);
	ck_assert_int_eq(sr_result_target_open(link, &t, &err), 0);
	sr_result_target_close(&t);
}
END_TEST

static Suite *result_suite(void)
{
	Suite *s = suite_create("result");
	TCase *tc = tcase_create("json");
	TCase *tw = tcase_create("write");

	tcase_add_test(tc, test_init);
	tcase_add_test(tc, test_to_string);
	tcase_add_test(tc, test_format_exact);
	tcase_add_test(tc, test_format_network);
	tcase_add_test(tc, test_format_nulls_and_fractions);
	tcase_add_test(tc, test_format_strings);
	tcase_add_test(tc, test_format_numbers);
	suite_add_tcase(s, tc);

	tcase_add_unchecked_fixture(tw, sr_test_setup_base, sr_test_teardown_base);
	tcase_add_checked_fixture(tw, setup_tmp, teardown_tmp);
	tcase_add_test(tw, test_format_parses_as_json);
	tcase_add_test(tw, test_format_comma_locale);
	tcase_add_test(tw, test_write_atomic);
	tcase_add_test(tw, test_write_errors);
	tcase_add_test(tw, test_write_relative);
	tcase_add_test(tw, test_target_follows_links_at_open);
	tcase_add_test(tw, test_target_not_redirected_during_run);
	tcase_add_test(tw, test_target_fifo);
	tcase_add_test(tw, test_target_link_out_refused);
	tcase_add_test(tw, test_target_foreign_link_refused);
	tcase_add_test(tw, test_target_proc_fd);
	suite_add_tcase(s, tw);
	return s;
}

int main(void)
{
	return sr_test_run(result_suite());
}
