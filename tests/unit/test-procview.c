/* SPDX-License-Identifier: MIT */
/* The view builders (procview-text.h), fed recorded host texts (tests/unit/procview/). */
#include "procview-text.h"
#include "util.h"
#include "testutil.h"

#include <check.h>
#include <regex.h>

#define MIB (1024ULL * 1024)

/* A fixture's text, malloc'ed; fails the test when it cannot be read. */
static char *fixture(const char *name)
{
	char path[512], *buf = NULL;
	size_t len = 0;
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", SR_TEST_PROCVIEW_DIR, name);
	f = fopen(path, "re");
	ck_assert_msg(f, "%s: %s", path, strerror(errno));
	ck_assert_int_ge(getdelim(&buf, &len, '\0', f), 1);
	fclose(f);
	return buf;
}

/* The number of "Key:  N kB" line key, or -1. */
static long long kb_of(const char *text, const char *key)
{
	char want[64];
	const char *p;

	snprintf(want, sizeof(want), "\n%s:", key);
	if (strncmp(text, want + 1, strlen(want + 1)) == 0)
		p = text + strlen(want + 1);
	else if ((p = strstr(text, want)))
		p += strlen(want);
	else
		return -1;
	return strtoll(p, NULL, 10);
}

/* The text's line that starts with prefix, into buf. */
static const char *line_of(const char *text, const char *prefix, char *buf, size_t len)
{
	for (const char *p = text; *p;) {
		const char *end = strchrnul(p, '\n');

		if (strncmp(p, prefix, strlen(prefix)) == 0) {
			snprintf(buf, len, "%.*s", (int)(end - p), p);
			return buf;
		}
		p = *end ? end + 1 : end;
	}
	return NULL;
}

static size_t count_lines(const char *text, const char *pattern)
{
	regex_t re;
	size_t n = 0;

	ck_assert_int_eq(regcomp(&re, pattern, REG_EXTENDED | REG_NOSUB | REG_NEWLINE), 0);
	for (const char *p = text; *p;) {
		const char *end = strchrnul(p, '\n');
		char line[4096];

		snprintf(line, sizeof(line), "%.*s", (int)(end - p), p);
		if (regexec(&re, line, 0, NULL, 0) == 0)
			n++;
		p = *end ? end + 1 : end;
	}
	regfree(&re);
	return n;
}

START_TEST(test_memstat_v2)
{
	_cleanup_free_ char *text = fixture("memory.stat-v2");
	struct sr_memstat s;

	sr_procview_parse_memstat(text, &s);
	ck_assert_uint_eq(s.have, (1u << _SR_MEMSTAT_FIELD_MAX) - 1);
	ck_assert_uint_eq(s.v[SR_MEMSTAT_ANON], 73400320);
	ck_assert_uint_eq(s.v[SR_MEMSTAT_FILE], 25165824);
	ck_assert_uint_eq(s.v[SR_MEMSTAT_SHMEM], 16777216);
	ck_assert_uint_eq(s.v[SR_MEMSTAT_INACTIVE_ANON], 90177536);
	ck_assert_uint_eq(s.v[SR_MEMSTAT_SLAB_RECLAIMABLE], 1572864);
	ck_assert_uint_eq(s.v[SR_MEMSTAT_KERNEL_STACK], 540672);
}
END_TEST

/* v1: the total_* counts (the cgroup and those below it), never the plain ones. */
START_TEST(test_memstat_v1)
{
	_cleanup_free_ char *text = fixture("memory.stat-v1");
	struct sr_memstat s;

	sr_procview_parse_memstat(text, &s);
	ck_assert_uint_eq(s.v[SR_MEMSTAT_ANON], 70455296);
	ck_assert_uint_eq(s.v[SR_MEMSTAT_FILE], 17002496);
	ck_assert_uint_eq(s.v[SR_MEMSTAT_SHMEM], 17002496);
	ck_assert_uint_eq(s.v[SR_MEMSTAT_INACTIVE_ANON], 87408640);
	ck_assert(s.have & 1u << SR_MEMSTAT_UNEVICTABLE);
	/* v1 keeps no slab, kernel stack or page table counts. */
	ck_assert(!(s.have & 1u << SR_MEMSTAT_SLAB_RECLAIMABLE));
	ck_assert(!(s.have & 1u << SR_MEMSTAT_KERNEL_STACK));
	ck_assert(!(s.have & 1u << SR_MEMSTAT_PAGETABLES));

	sr_procview_parse_memstat("cache 5\nrss 7\ntotal_rss 9\n", &s);
	ck_assert_uint_eq(s.v[SR_MEMSTAT_ANON], 9);
	ck_assert(!(s.have & 1u << SR_MEMSTAT_FILE));
	sr_procview_parse_memstat("", &s);
	ck_assert_uint_eq(s.have, 0);
}
END_TEST

/* Every line of the host's, in its order, and each kB line as the kernel prints it. */
static void assert_meminfo_shape(const char *host, const char *view)
{
	ck_assert_uint_eq(count_lines(view, ".*"), count_lines(host, ".*"));
	ck_assert_uint_eq(count_lines(view, "^[A-Za-z0-9_()]+: +[0-9]{1,} kB$"),
			  count_lines(host, " kB$"));
	for (const char *h = host, *v = view; *h && *v;) {
		const char *hc = strchr(h, ':'), *vc = strchr(v, ':');

		ck_assert_ptr_nonnull(hc);
		ck_assert_ptr_nonnull(vc);
		ck_assert_int_eq(hc - h, vc - v);
		ck_assert_int_eq(memcmp(h, v, (size_t)(hc - h)), 0);
		h = strchr(h, '\n') + 1;
		v = strchr(v, '\n') + 1;
	}
}

START_TEST(test_meminfo_v2)
{
	_cleanup_free_ char *host = fixture("x86-meminfo"), *stat = fixture("memory.stat-v2");
	_cleanup_free_ char *view = NULL;
	struct sr_procview_mem m = {
	    .limit_bytes = 2048 * MIB, .cgroup = true, .usage_bytes = 100 * MIB, .no_swap = true};
	char line[128];
	ssize_t n;

	sr_procview_parse_memstat(stat, &m.stat);
	n = sr_procview_meminfo(host, &m, &view);
	ck_assert_int_eq(n, (ssize_t)strlen(view));
	assert_meminfo_shape(host, view);
	/* The kernel's own format: "%-16s%8lu kB". */
	ck_assert_str_eq(line_of(view, "MemTotal:", line, sizeof(line)),
			 "MemTotal:        2097152 kB");
	ck_assert_str_eq(line_of(view, "Buffers:", line, sizeof(line)),
			 "Buffers:               0 kB");
	ck_assert_int_eq(kb_of(view, "MemFree"), 2097152 - 102400);
	/* Plus the file pages (2 + 6 MiB) and the reclaimable slab (1.5 MiB). */
	ck_assert_int_eq(kb_of(view, "MemAvailable"), 2097152 - 102400 + 9728);
	ck_assert_int_eq(kb_of(view, "Cached"), 24576);
	ck_assert_int_eq(kb_of(view, "Shmem"), 16384);
	ck_assert_int_eq(kb_of(view, "AnonPages"), 71680);
	ck_assert_int_eq(kb_of(view, "Inactive"), 88064 + 6144);
	ck_assert_int_eq(kb_of(view, "Active(file)"), 2048);
	ck_assert_int_eq(kb_of(view, "Slab"), 2856);
	ck_assert_int_eq(kb_of(view, "KernelStack"), 528);
	ck_assert_int_eq(kb_of(view, "SwapCached"), 0);
	ck_assert_int_eq(kb_of(view, "SwapTotal"), 0);
	/* Other sizes: the host's, capped; address space and counts as they are. */
	ck_assert_int_eq(kb_of(view, "CommitLimit"), 2097152);
	ck_assert_int_eq(kb_of(view, "Committed_AS"), 236980);
	ck_assert_int_eq(kb_of(view, "VmallocTotal"), 34359738367LL);
	ck_assert_int_eq(kb_of(view, "DirectMap1G"), 25165824);
	ck_assert_int_eq(kb_of(view, "Hugepagesize"), 2048);
	ck_assert_str_eq(line_of(view, "HugePages_Total:", line, sizeof(line)),
			 "HugePages_Total:       0");
}
END_TEST

START_TEST(test_meminfo_v1)
{
	_cleanup_free_ char *host = fixture("x86-meminfo"), *stat = fixture("memory.stat-v1");
	_cleanup_free_ char *view = NULL;
	struct sr_procview_mem m = {
	    .limit_bytes = 512 * MIB, .cgroup = true, .usage_bytes = 88027136, .no_swap = true};

	sr_procview_parse_memstat(stat, &m.stat);
	ck_assert_int_gt(sr_procview_meminfo(host, &m, &view), 0);
	assert_meminfo_shape(host, view);
	ck_assert_int_eq(kb_of(view, "MemTotal"), 524288);
	ck_assert_int_eq(kb_of(view, "MemFree"), 524288 - 88027136 / 1024);
	ck_assert_int_eq(kb_of(view, "MemAvailable"), kb_of(view, "MemFree"));
	ck_assert_int_eq(kb_of(view, "AnonPages"), 70455296 / 1024);
	ck_assert_int_eq(kb_of(view, "Shmem"), 16604);
	/* Counts v1 does not keep are 0, not the host's 380 MB of slab. */
	ck_assert_int_eq(kb_of(view, "Slab"), 0);
	ck_assert_int_eq(kb_of(view, "SReclaimable"), 0);
	ck_assert_int_eq(kb_of(view, "PageTables"), 0);
}
END_TEST

/* The rlimit strategy: the limit, over the host's figures. */
START_TEST(test_meminfo_no_cgroup)
{
	_cleanup_free_ char *host = fixture("x86-meminfo"), *view = NULL;
	struct sr_procview_mem m = {.limit_bytes = 512 * MIB};

	ck_assert_int_gt(sr_procview_meminfo(host, &m, &view), 0);
	assert_meminfo_shape(host, view);
	ck_assert_int_eq(kb_of(view, "MemTotal"), 524288);
	ck_assert_int_eq(kb_of(view, "MemFree"), 524288);
	ck_assert_int_eq(kb_of(view, "MemAvailable"), 524288);
	ck_assert_int_eq(kb_of(view, "Buffers"), 27496);
	ck_assert_int_eq(kb_of(view, "Cached"), 524288);
	ck_assert_int_eq(kb_of(view, "Shmem"), 10084);
}
END_TEST

/* A limit above the host's memory shows the host's; the swap is the host's unless held. */
START_TEST(test_meminfo_host_bounds)
{
	static const char host[] = "MemTotal:        4000000 kB\n"
				   "MemFree:         3000000 kB\n"
				   "MemAvailable:    3500000 kB\n"
				   "SwapTotal:       8000000 kB\n"
				   "SwapFree:        7999000 kB\n"
				   "ShmemPmdMapped:        0 kB\n"
				   "not a line of meminfo\n";
	_cleanup_free_ char *view = NULL, *held = NULL;
	struct sr_procview_mem m = {.limit_bytes = 64 * 1024 * MIB, .cgroup = true};
	char line[128];

	ck_assert_int_gt(sr_procview_meminfo(host, &m, &view), 0);
	ck_assert_int_eq(kb_of(view, "MemTotal"), 4000000);
	ck_assert_int_eq(kb_of(view, "MemFree"), 4000000);
	ck_assert_int_eq(kb_of(view, "SwapTotal"), 8000000);
	ck_assert_int_eq(kb_of(view, "SwapFree"), 7999000);
	ck_assert_str_eq(line_of(view, "ShmemPmdMapped:", line, sizeof(line)),
			 "ShmemPmdMapped:        0 kB");
	ck_assert_ptr_nonnull(line_of(view, "not a line of meminfo", line, sizeof(line)));
	m.no_swap = true;
	m.usage_bytes = 5000000ULL * 1024; /* more than the host has: nothing free */
	ck_assert_int_gt(sr_procview_meminfo(host, &m, &held), 0);
	ck_assert_int_eq(kb_of(held, "SwapTotal"), 0);
	ck_assert_int_eq(kb_of(held, "MemFree"), 0);
}
END_TEST

static cpu_set_t cpus_of(const int *list, size_t n)
{
	cpu_set_t s;

	CPU_ZERO(&s);
	for (size_t i = 0; i < n; i++)
		CPU_SET((size_t)list[i], &s);
	return s;
}

START_TEST(test_stat)
{
	_cleanup_free_ char *host = fixture("x86-stat"), *view = NULL;
	cpu_set_t one = cpus_of((int[]){1}, 1);
	char line[256];

	ck_assert_int_gt(sr_procview_stat(host, &one, &view), 0);
	/* glibc's get_nprocs() and libuv's os.cpus() count these. */
	ck_assert_uint_eq(count_lines(view, "^cpu[0-9]+ "), 1);
	ck_assert_str_eq(line_of(view, "cpu1 ", line, sizeof(line)),
			 "cpu1 140371 0 71102 286333 3027 0 1131 99 0 0");
	ck_assert_str_eq(line_of(view, "cpu ", line, sizeof(line)),
			 "cpu  140371 0 71102 286333 3027 0 1131 99 0 0");
	ck_assert_ptr_null(line_of(view, "cpu0 ", line, sizeof(line)));
	/* The rest is the host's, in its order. */
	ck_assert_ptr_nonnull(strstr(view, "\nintr 5910715 "));
	ck_assert_ptr_nonnull(strstr(view, "\nctxt 16016499\nbtime 1795693733\n"));
	ck_assert_uint_eq(count_lines(view, ".*"), count_lines(host, ".*") - 1);
}
END_TEST

START_TEST(test_stat_sum)
{
	static const char host[] = "cpu  30 3 3 3\n"
				   "cpu0 1 1 1 1\n"
				   "cpu2 10 1 1 1\n"
				   "cpu7 19 1 1 1\n"
				   "intr 1\n";
	_cleanup_free_ char *view = NULL, *none = NULL;
	cpu_set_t two = cpus_of((int[]){2, 7}, 2), absent = cpus_of((int[]){5}, 1);

	ck_assert_int_gt(sr_procview_stat(host, &two, &view), 0);
	ck_assert_str_eq(view, "cpu  29 2 2 2\ncpu2 10 1 1 1\ncpu7 19 1 1 1\nintr 1\n");
	/* None of the CPUs there: the host's text, rather than a machine without any. */
	ck_assert_int_gt(sr_procview_stat(host, &absent, &none), 0);
	ck_assert_str_eq(none, host);
}
END_TEST

START_TEST(test_cpuinfo_x86)
{
	_cleanup_free_ char *host = fixture("x86-cpuinfo"), *view = NULL;
	cpu_set_t one = cpus_of((int[]){1}, 1);

	ck_assert_int_gt(sr_procview_cpuinfo(host, &one, &view), 0);
	/* glibc's get_nprocs_conf() fallback counts these; libuv takes the models. */
	ck_assert_uint_eq(count_lines(view, "^processor"), 1);
	ck_assert_uint_eq(count_lines(view, "^model name"), 1);
	ck_assert_ptr_nonnull(strstr(view, "processor\t: 1\n"));
	ck_assert_ptr_nonnull(strstr(view, "core id\t\t: 1\n"));
	ck_assert_ptr_null(strstr(view, "processor\t: 0\n"));
	ck_assert_ptr_nonnull(strstr(view, "power management:\n\n"));
}
END_TEST

START_TEST(test_cpuinfo_arm64)
{
	_cleanup_free_ char *host = fixture("arm64-cpuinfo"), *view = NULL;
	cpu_set_t two = cpus_of((int[]){1, 3}, 2);

	ck_assert_int_gt(sr_procview_cpuinfo(host, &two, &view), 0);
	ck_assert_uint_eq(count_lines(view, "^processor"), 2);
	ck_assert_uint_eq(count_lines(view, "^CPU part"), 2);
	ck_assert_int_eq(strncmp(view, "processor\t: 1\nBogoMIPS", 22), 0);
	ck_assert_ptr_nonnull(strstr(view, "CPU revision\t: 1\n\nprocessor\t: 3\n"));
	ck_assert_ptr_null(strstr(view, "processor\t: 2\n"));
}
END_TEST

/* 32-bit arm ends with a block of its own ("Hardware"): kept. */
START_TEST(test_cpuinfo_trailer)
{
	static const char host[] = "processor\t: 0\nmodel name\t: ARMv7\n\n"
				   "processor\t: 1\nmodel name\t: ARMv7\n\n"
				   "Hardware\t: BCM2835\nRevision\t: a02082\n";
	_cleanup_free_ char *view = NULL, *none = NULL;
	cpu_set_t one = cpus_of((int[]){0}, 1), absent = cpus_of((int[]){4}, 1);

	ck_assert_int_gt(sr_procview_cpuinfo(host, &one, &view), 0);
	ck_assert_str_eq(view, "processor\t: 0\nmodel name\t: ARMv7\n\n"
			       "Hardware\t: BCM2835\nRevision\t: a02082\n");
	ck_assert_int_gt(sr_procview_cpuinfo(host, &absent, &none), 0);
	ck_assert_str_eq(none, host);
}
END_TEST

START_TEST(test_pick_cpus)
{
	cpu_set_t eight = cpus_of((int[]){0, 1, 2, 3, 4, 5, 6, 7}, 8);
	cpu_set_t sparse = cpus_of((int[]){1, 3, 5, 9}, 4);
	cpu_set_t got, want;

	ck_assert_uint_eq(sr_procview_pick_cpus(&eight, 2, 0, &got), 8);
	want = cpus_of((int[]){0, 1}, 2);
	ck_assert(CPU_EQUAL(&got, &want));
	/* From a random start, wrapping around. */
	sr_procview_pick_cpus(&eight, 2, 7, &got);
	want = cpus_of((int[]){7, 0}, 2);
	ck_assert(CPU_EQUAL(&got, &want));
	sr_procview_pick_cpus(&eight, 3, 8 * 1000 + 3, &got);
	want = cpus_of((int[]){3, 4, 5}, 3);
	ck_assert(CPU_EQUAL(&got, &want));
	/* Only CPUs of the caller's affinity. */
	ck_assert_uint_eq(sr_procview_pick_cpus(&sparse, 3, 2, &got), 4);
	want = cpus_of((int[]){5, 9, 1}, 3);
	ck_assert(CPU_EQUAL(&got, &want));
	/* No limit, or not fewer than there are: all of them. */
	sr_procview_pick_cpus(&sparse, 0, 1, &got);
	ck_assert(CPU_EQUAL(&got, &sparse));
	sr_procview_pick_cpus(&sparse, 4, 1, &got);
	ck_assert(CPU_EQUAL(&got, &sparse));
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("procview");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, test_memstat_v2);
	tcase_add_test(tc, test_memstat_v1);
	tcase_add_test(tc, test_meminfo_v2);
	tcase_add_test(tc, test_meminfo_v1);
	tcase_add_test(tc, test_meminfo_no_cgroup);
	tcase_add_test(tc, test_meminfo_host_bounds);
	tcase_add_test(tc, test_stat);
	tcase_add_test(tc, test_stat_sum);
	tcase_add_test(tc, test_cpuinfo_x86);
	tcase_add_test(tc, test_cpuinfo_arm64);
	tcase_add_test(tc, test_cpuinfo_trailer);
	tcase_add_test(tc, test_pick_cpus);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return sr_test_run(suite());
}
