/* SPDX-License-Identifier: MIT */
#include "userns.h"
#include "util.h"
#include "testutil.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

static char tmpdir[96];

static void setup_tmp(void)
{
	char state[160];

	sr_test_mkdtemp(tmpdir, sizeof(tmpdir), sr_test_basedir, "t");
	snprintf(state, sizeof(state), "%s/state", tmpdir);
	ck_assert_int_eq(setenv("SANDBOX_RUN_STATE_DIR", state, 1), 0);
}

static void teardown_tmp(void)
{
	sr_test_rmtree(tmpdir);
}

static void write_file(const char *name, const char *text, char *path, size_t len)
{
	FILE *f;

	snprintf(path, len, "%s/%s", tmpdir, name);
	f = fopen(path, "w");
	ck_assert_ptr_nonnull(f);
	fputs(text, f);
	fclose(f);
}

START_TEST(test_map_text)
{
	char buf[32];

	ck_assert_int_eq(sr_userns_map_text(1000, 100000, buf, sizeof(buf)), 14);
	ck_assert_str_eq(buf, "1000 100000 1\n");
	ck_assert_int_eq(sr_userns_map_text(1000, 100000, buf, 5), -ENOBUFS);
}
END_TEST

/* Each living sandbox of root's has an id of root's range no other holds; a freed one comes back.
 */
START_TEST(test_root_ids_distinct)
{
	char su[160], sg[160];
	uid_t u1, u2, u3;
	gid_t g1, g2, g3;
	int l1, l2, l3;

	write_file("subuid", "user:200000:65536\nroot:100000:65536\n", su, sizeof(su));
	write_file("subgid", "root:300000:3\n", sg, sizeof(sg));
	sr_userns_root_ids(su, sg, &u1, &g1, &l1);
	sr_userns_root_ids(su, sg, &u2, &g2, &l2);
	ck_assert_int_eq(u1, 100000);
	ck_assert_int_eq(g1, 300000);
	ck_assert_int_eq(u2, 100001);
	ck_assert_int_eq(g2, 300001);
	ck_assert_int_ge(l1, 0);
	ck_assert_int_ge(l2, 0);
	close(l1);
	sr_userns_root_ids(su, sg, &u3, &g3, &l3);
	ck_assert_int_eq(u3, 100000);
	close(l2);
	close(l3);
}
END_TEST

/* As many as the smaller range holds; then they share the first, as before. */
START_TEST(test_root_ids_exhausted_and_missing)
{
	char su[160], sg[160], none[160];
	uid_t u[3];
	gid_t g[3];
	int l[3];

	write_file("subuid", "root:100000:65536\n", su, sizeof(su));
	write_file("subgid", "root:300000:2\n", sg, sizeof(sg));
	for (int i = 0; i < 3; i++)
		sr_userns_root_ids(su, sg, &u[i], &g[i], &l[i]);
	ck_assert_int_eq(u[1], 100001);
	ck_assert_int_eq(u[2], 100000);
	ck_assert_int_eq(l[2], -1);
	for (int i = 0; i < 2; i++)
		close(l[i]);
	write_file("empty", "", none, sizeof(none));
	sr_userns_root_ids(none, sg, &u[0], &g[0], &l[0]);
	ck_assert_int_eq(u[0], 65534);
	ck_assert_int_eq(g[0], 65534);
	ck_assert_int_eq(l[0], -1);
}
END_TEST

static Suite *userns_suite(void)
{
	Suite *s = suite_create("userns");
	TCase *tc = tcase_create("ids");

	tcase_add_unchecked_fixture(tc, sr_test_setup_base, sr_test_teardown_base);
	tcase_add_checked_fixture(tc, setup_tmp, teardown_tmp);
	tcase_add_test(tc, test_map_text);
	tcase_add_test(tc, test_root_ids_distinct);
	tcase_add_test(tc, test_root_ids_exhausted_and_missing);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return sr_test_run(userns_suite());
}
