/* SPDX-License-Identifier: MIT */
#include "cgroup-internal.h"
#include "util.h"
#include "testutil.h"

#include <check.h>
#include <fcntl.h>
#include <stdarg.h>
#include <sys/file.h>
#include <sys/stat.h>

static const char self_hybrid[] = "9:name=systemd:/\n"
				  "8:pids:/\n"
				  "4:memory:/process_api/f4e6\n"
				  "2:cpu,cpuacct:/user.slice\n"
				  "0::/\n";

static const char self_v2[] = "0::/user.slice/user-1000.slice/session-3.scope\n";

START_TEST(test_parse_self)
{
	_cleanup_free_ char *v2 = NULL, *mem = NULL, *acct = NULL, *cpu = NULL, *none = NULL;

	ck_assert_int_eq(cg_parse_self(self_hybrid, NULL, &v2), 0);
	ck_assert_str_eq(v2, "/");
	ck_assert_int_eq(cg_parse_self(self_hybrid, "memory", &mem), 0);
	ck_assert_str_eq(mem, "/process_api/f4e6");
	ck_assert_int_eq(cg_parse_self(self_hybrid, "cpuacct", &acct), 0);
	ck_assert_str_eq(acct, "/user.slice");
	ck_assert_int_eq(cg_parse_self(self_hybrid, "cpu", &cpu), 0);
	ck_assert_str_eq(cpu, "/user.slice");
	ck_assert_int_eq(cg_parse_self(self_hybrid, "cpuset", &none), -ENOENT);
	ck_assert_ptr_null(none);
	ck_assert_int_eq(cg_parse_self(self_v2, "memory", &none), -ENOENT);
	ck_assert_int_eq(cg_parse_self(self_v2, NULL, &none), 0);
	ck_assert_str_eq(none, "/user.slice/user-1000.slice/session-3.scope");
}
END_TEST

/* Trimmed from this host's /proc/self/mountinfo, plus a sub-cgroup mount. */
static const char mountinfo[] =
    "31 23 0:28 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755\n"
    "32 31 0:29 / /sys/fs/cgroup/cpu rw,relatime - cgroup cgroup rw,cpu\n"
    "33 31 0:30 / /sys/fs/cgroup/cpuacct rw,relatime - cgroup cgroup rw,cpuacct\n"
    "35 31 0:32 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory\n"
    "36 31 0:33 /ctr /mnt/my\\040pids rw shared:5 - cgroup cgroup rw,pids\n"
    "40 31 0:37 / /sys/fs/cgroup/systemd rw,relatime - cgroup cgroup rw,name=systemd\n"
    "41 31 0:38 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw\n";

START_TEST(test_parse_mountinfo)
{
	_cleanup_free_ char *v2 = NULL, *mem = NULL, *cpu = NULL, *pids = NULL, *root = NULL;
	char *none = NULL;

	ck_assert_int_eq(cg_parse_mountinfo(mountinfo, NULL, "/", &v2), 0);
	ck_assert_str_eq(v2, "/sys/fs/cgroup/unified");
	ck_assert_int_eq(cg_parse_mountinfo(mountinfo, "memory", "/process_api/f4e6", &mem), 0);
	ck_assert_str_eq(mem, "/sys/fs/cgroup/memory/process_api/f4e6");
	/* "cpu" must not match the cpuacct mount, nor "cpuacct" the cpu one. */
	ck_assert_int_eq(cg_parse_mountinfo(mountinfo, "cpu", "/a", &cpu), 0);
	ck_assert_str_eq(cpu, "/sys/fs/cgroup/cpu/a");
	/* A mount of a sub-cgroup: the path is taken relative to its root, escapes undone. */
	ck_assert_int_eq(cg_parse_mountinfo(mountinfo, "pids", "/ctr/x", &pids), 0);
	ck_assert_str_eq(pids, "/mnt/my pids/x");
	ck_assert_int_eq(cg_parse_mountinfo(mountinfo, "pids", "/ctr", &root), 0);
	ck_assert_str_eq(root, "/mnt/my pids");
	ck_assert_int_eq(cg_parse_mountinfo(mountinfo, "pids", "/ctrl", &none), -ENOENT);
	ck_assert_int_eq(cg_parse_mountinfo(mountinfo, "pids", "/other", &none), -ENOENT);
	ck_assert_int_eq(cg_parse_mountinfo(mountinfo, "freezer", "/", &none), -ENOENT);
	ck_assert_int_eq(
	    cg_parse_mountinfo("1 0 0:1 / / rw - ext4 /dev/sda rw\n", NULL, "/", &none), -ENOENT);
	ck_assert_ptr_null(none);
}
END_TEST

START_TEST(test_parse_keyed)
{
	static const char cpu_stat[] = "usage_usec 1500\nuser_usec 1000\nsystem_usec 500\n"
				       "nr_periods 0\n";
	static const char oom_control[] = "oom_kill_disable 0\nunder_oom 0\noom_kill 2\n";
	uint64_t v = 7;

	ck_assert_int_eq(cg_parse_keyed(cpu_stat, "user_usec", &v), 0);
	ck_assert_uint_eq(v, 1000);
	ck_assert_int_eq(cg_parse_keyed(cpu_stat, "system_usec", &v), 0);
	ck_assert_uint_eq(v, 500);
	/* A key that is a prefix of another must not match it. */
	ck_assert_int_eq(cg_parse_keyed(oom_control, "oom_kill", &v), 0);
	ck_assert_uint_eq(v, 2);
	ck_assert_int_eq(cg_parse_keyed(oom_control, "oom", &v), -ENOENT);
	ck_assert_int_eq(cg_parse_keyed("oom_kill x\n", "oom_kill", &v), -EINVAL);
	ck_assert_uint_eq(v, 2);
}
END_TEST

START_TEST(test_words_and_quota)
{
	ck_assert(cg_word_in("cpuset cpu io memory pids\n", "cpu"));
	ck_assert(cg_word_in("cpuset cpu io memory pids\n", "pids"));
	ck_assert(!cg_word_in("cpuset io memory\n", "cpu"));
	ck_assert(!cg_word_in("", "memory"));
	ck_assert_uint_eq(cg_cpu_quota_us(0), 0);
	ck_assert_uint_eq(cg_cpu_quota_us(500), 50000);
	ck_assert_uint_eq(cg_cpu_quota_us(2000), 200000);
	ck_assert_uint_eq(cg_cpu_quota_us(1), 1000);
}
END_TEST

static struct sr_config limits(uint64_t mem, uint32_t cpus, uint64_t pids)
{
	struct sr_config c = {0};

	c.memory_bytes = mem;
	c.cpus_milli = cpus;
	c.pids = pids;
	return c;
}

START_TEST(test_describe)
{
	enum sr_enforce e[_SR_LIMIT_MAX] = {0};
	struct sr_config c = limits(1 << 30, 2000, 100);
	char buf[512];

	e[SR_LIMIT_MEMORY] = e[SR_LIMIT_CPUS] = e[SR_LIMIT_PIDS] = SR_ENFORCE_CGROUP2;
	ck_assert_int_eq(sr_cgroup_describe(&c, e, "", buf, sizeof(buf)), 0);
	ck_assert_str_eq(buf, "");

	e[SR_LIMIT_CPUS] = SR_ENFORCE_NONE;
	e[SR_LIMIT_MEMORY] = e[SR_LIMIT_PIDS] = SR_ENFORCE_RLIMIT;
	/* Memory by RLIMIT_DATA is refused too: shared memory passes it. */
	ck_assert_int_eq(sr_cgroup_describe(&c, e, "cgroup1: no", buf, sizeof(buf)), 2);
	ck_assert_str_eq(buf, "cpus limit not enforced and memory and pids only per process "
			      "(rlimit) on this host (cgroup1: no); see docs/limits.md");

	e[SR_LIMIT_MEMORY] = e[SR_LIMIT_PIDS] = SR_ENFORCE_NONE;
	ck_assert_int_eq(sr_cgroup_describe(&c, e, "", buf, sizeof(buf)), 3);
	ck_assert_str_eq(buf, "memory, cpus and pids limits not enforced on this host (no cgroup "
			      "available); see docs/limits.md");
	/* No reason given: the short form every run prints, pointing at -v. */
	ck_assert_int_eq(sr_cgroup_describe(&c, e, NULL, buf, sizeof(buf)), 3);
	ck_assert_str_eq(buf, "memory, cpus and pids limits not enforced on this host; see "
			      "docs/limits.md, -v says why");

	/* Unlimited is not enforced by anything, and is no warning. */
	c = limits(0, 0, 0);
	ck_assert_int_eq(sr_cgroup_describe(&c, e, "x", buf, sizeof(buf)), 0);
	ck_assert_str_eq(buf, "");

	c = limits(1 << 20, 0, 0);
	e[SR_LIMIT_MEMORY] = SR_ENFORCE_RLIMIT;
	ck_assert_int_eq(sr_cgroup_describe(&c, e, "r", buf, sizeof(buf)), 1);
	ck_assert_str_eq(buf, "memory limited only per process (rlimit) on this host (r); see "
			      "docs/limits.md");
	/* pids by RLIMIT_NPROC: said, not refused. */
	c = limits(0, 0, 64);
	e[SR_LIMIT_PIDS] = SR_ENFORCE_RLIMIT;
	ck_assert_int_eq(sr_cgroup_describe(&c, e, "r", buf, sizeof(buf)), 0);
	ck_assert_str_eq(buf, "pids limited only per process (rlimit) on this host (r); see "
			      "docs/limits.md");
}
END_TEST

START_TEST(test_rlimit_fill)
{
	struct sr_cgroup cg = {0};
	enum sr_enforce e[_SR_LIMIT_MAX] = {0};
	struct sr_config c = limits(1 << 30, 1500, 64);
	struct sr_error err = {0};

	e[SR_LIMIT_MEMORY] = SR_ENFORCE_CGROUP1;
	ck_assert_int_eq(cg_manager_rlimit.create(&cg, NULL, &c, e, &err), 0);
	ck_assert_int_eq(e[SR_LIMIT_MEMORY], SR_ENFORCE_CGROUP1);
	ck_assert_uint_eq(cg.rlimit_data, 0);
	ck_assert_int_eq(e[SR_LIMIT_PIDS], SR_ENFORCE_RLIMIT);
	ck_assert_uint_eq(cg.rlimit_nproc, 64);
	ck_assert_int_eq(e[SR_LIMIT_CPUS], SR_ENFORCE_NONE);
}
END_TEST

/* A cgroup directory stand-in: cgroup.controllers and an empty cgroup.subtree_control. */
static int fake_cgroup(char *dir, size_t len, const char *controllers)
{
	char path[256];
	FILE *f;
	int fd;

	sr_test_mkdtemp(dir, len, "/tmp", "sr-test-cgroup");
	snprintf(path, sizeof(path), "%s/cgroup.controllers", dir);
	f = fopen(path, "w");
	ck_assert_ptr_nonnull(f);
	fprintf(f, "%s\n", controllers);
	fclose(f);
	snprintf(path, sizeof(path), "%s/cgroup.subtree_control", dir);
	f = fopen(path, "w");
	ck_assert_ptr_nonnull(f);
	fclose(f);
	fd = open(dir, O_RDONLY | O_DIRECTORY);
	ck_assert_int_ge(fd, 0);
	return fd;
}

/* Empty files named in the NULL-terminated list, under dfd. */
static void fake_files(int dfd, ...)
{
	va_list ap;
	const char *name;

	va_start(ap, dfd);
	while ((name = va_arg(ap, const char *))) {
		int fd = openat(dfd, name, O_WRONLY | O_CREAT | O_TRUNC, 0644);

		ck_assert_int_ge(fd, 0);
		close(fd);
	}
	va_end(ap);
}

/*
 * A controller that is not delegated costs only its own limit (it falls
 * to the rlimit strategy); with none of the requested ones there, as on
 * a hybrid host's v2 hierarchy, the strategy does not apply.
 */
START_TEST(test_v2_missing_controller)
{
	struct sr_config c = limits(1 << 30, 2000, 64);
	struct sr_error err = {0};
	enum sr_enforce e[_SR_LIMIT_MAX] = {0};
	char dir[64], missing[64], buf[256];
	unsigned absent = 0;
	int fd;

	fd = fake_cgroup(dir, sizeof(dir), "memory pids");
	ck_assert_int_eq(cg_v2_enable_controllers(fd, dir, &c, &absent, &err), 0);
	cg_v2_absent_names(absent, missing, sizeof(missing));
	ck_assert_str_eq(missing, "cpu");
	ck_assert_int_ge(cg_read(fd, "cgroup.subtree_control", buf, sizeof(buf)), 0);
	ck_assert_str_eq(buf, "+memory +pids");
	ck_assert_uint_eq(absent, 1u << SR_LIMIT_CPUS);
	/*
	 * The sandbox's cgroup then has memory's and pids' files but no
	 * cpu.max: the limits go where they can, cpus is left unenforced.
	 */
	fake_files(fd, "memory.max", "memory.swap.max", "pids.max", NULL);
	ck_assert_int_eq(cg_v2_set_limits(fd, &c, absent, e), 0);
	ck_assert_int_eq(e[SR_LIMIT_MEMORY], SR_ENFORCE_CGROUP2);
	ck_assert_int_eq(e[SR_LIMIT_PIDS], SR_ENFORCE_CGROUP2);
	ck_assert_int_eq(e[SR_LIMIT_CPUS], SR_ENFORCE_NONE);
	ck_assert_int_ge(cg_read(fd, "pids.max", buf, sizeof(buf)), 0);
	ck_assert_str_eq(buf, "64");
	/* Without the mask the missing cpu.max is an error, as the kernel would say. */
	ck_assert_int_eq(cg_v2_set_limits(fd, &c, 0, e), -ENOENT);
	close(fd);
	sr_test_rmtree(dir);

	fd = fake_cgroup(dir, sizeof(dir), "cpu");
	ck_assert_int_eq(cg_v2_enable_controllers(fd, dir, &c, &absent, &err), 0);
	cg_v2_absent_names(absent, missing, sizeof(missing));
	ck_assert_str_eq(missing, "memory and pids");
	close(fd);
	sr_test_rmtree(dir);

	fd = fake_cgroup(dir, sizeof(dir), "");
	ck_assert_int_eq(cg_v2_enable_controllers(fd, dir, &c, &absent, &err), -ENODEV);
	ck_assert_ptr_nonnull(strstr(err.msg, "memory, cpu and pids"));
	/* Nothing asked: nothing missing, and memory still enabled where it exists. */
	c = limits(0, 0, 0);
	ck_assert_int_eq(cg_v2_enable_controllers(fd, dir, &c, &absent, &err), 0);
	cg_v2_absent_names(absent, missing, sizeof(missing));
	ck_assert_str_eq(missing, "");
	close(fd);
	sr_test_rmtree(dir);
}
END_TEST

/* /proc/swaps: a header, then one line per active area. */
START_TEST(test_parse_swaps)
{
	ck_assert(!cg_parse_swaps("Filename\t\t\t\tType\t\tSize\t\tUsed\t\tPriority\n"));
	ck_assert(!cg_parse_swaps(""));
	ck_assert(cg_parse_swaps(
	    "Filename\t\t\t\tType\t\tSize\t\tUsed\t\tPriority\n"
	    "/dev/sda2                               partition\t8388604\t\t0\t\t-2\n"));
}
END_TEST

/*
 * A stale cgroup is removed under its lock, by name. A name made again
 * (cg_dir_create() makes its directory anew when a remover took the first
 * one before it was locked) is the new directory's: a remover holding the
 * lock of the old one must leave it (the check-load failure of a run's
 * own memory cgroup removed before PID 1 was moved in).
 */
START_TEST(test_remove_if_stale)
{
	char dir[256];
	int parent, old, owner, other;
	struct stat st;

	sr_test_mkdtemp(dir, sizeof(dir), "/tmp", "sr-test-stale");
	parent = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	ck_assert_int_ge(parent, 0);

	/* Unlocked: a killed run's, removed. */
	ck_assert_int_eq(mkdirat(parent, "sandbox-run-a", 0755), 0);
	old = openat(parent, "sandbox-run-a", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	ck_assert_int_eq(cg_remove_if_stale(parent, "sandbox-run-a", old, false), 0);
	ck_assert_int_lt(fstatat(parent, "sandbox-run-a", &st, 0), 0);
	close(old);

	/* Locked by its run: kept. */
	ck_assert_int_eq(mkdirat(parent, "sandbox-run-b", 0755), 0);
	owner = openat(parent, "sandbox-run-b", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	ck_assert_int_eq(flock(owner, LOCK_EX | LOCK_NB), 0);
	other = openat(parent, "sandbox-run-b", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	ck_assert_int_eq(cg_remove_if_stale(parent, "sandbox-run-b", other, false), -EWOULDBLOCK);
	ck_assert_int_eq(fstatat(parent, "sandbox-run-b", &st, 0), 0);
	close(other);
	close(owner);

	/*
	 * Opened by a remover, removed by another, made again and locked by
	 * its run: the remover gets the old one's lock, and must not take
	 * the new one by its name.
	 */
	ck_assert_int_eq(mkdirat(parent, "sandbox-run-c", 0755), 0);
	old = openat(parent, "sandbox-run-c", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	ck_assert_int_eq(unlinkat(parent, "sandbox-run-c", AT_REMOVEDIR), 0);
	ck_assert_int_eq(mkdirat(parent, "sandbox-run-c", 0755), 0);
	owner = openat(parent, "sandbox-run-c", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	ck_assert_int_eq(flock(owner, LOCK_EX | LOCK_NB), 0);
	ck_assert_int_eq(cg_remove_if_stale(parent, "sandbox-run-c", old, false), -ESTALE);
	ck_assert_int_eq(fstatat(owner, ".", &st, 0), 0);
	ck_assert_int_eq(fstatat(parent, "sandbox-run-c", &st, 0), 0);
	close(old);
	close(owner);

	close(parent);
	sr_test_rmtree(dir);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("cgroup");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, test_parse_self);
	tcase_add_test(tc, test_parse_mountinfo);
	tcase_add_test(tc, test_parse_keyed);
	tcase_add_test(tc, test_words_and_quota);
	tcase_add_test(tc, test_describe);
	tcase_add_test(tc, test_rlimit_fill);
	tcase_add_test(tc, test_v2_missing_controller);
	tcase_add_test(tc, test_parse_swaps);
	tcase_add_test(tc, test_remove_if_stale);
	suite_add_tcase(s, tc);
	return sr_test_run(s);
}
