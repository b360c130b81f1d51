/* SPDX-License-Identifier: MIT */
#include "util.h"
#include "testutil.h"

#include <check.h>

struct pair {
	int a, b;
};

/* Appends one at a time: doubled from first, the elements kept. */
START_TEST(test_grow_doubles_and_keeps)
{
	struct pair *v = NULL;
	size_t n = 0, cap = 0;

	for (int i = 0; i < 100; i++) {
		ck_assert_int_eq(SR_GROW(v, cap, n + 1, 8), 0);
		v[n++] = (struct pair){i, -i};
		ck_assert_uint_ge(cap, n);
	}
	ck_assert_uint_eq(cap, 128);
	for (int i = 0; i < 100; i++)
		ck_assert(v[i].a == i && v[i].b == -i);
	free(v);
}
END_TEST

/* Room for many at once is one step; room it has is no step. */
START_TEST(test_grow_to_need)
{
	char *s = NULL, *before;
	size_t cap = 0;

	ck_assert_int_eq(SR_GROW(s, cap, 10000, 4096), 0);
	ck_assert_uint_eq(cap, 16384);
	before = s;
	ck_assert_int_eq(SR_GROW(s, cap, 16384, 4096), 0);
	ck_assert_ptr_eq(s, before);
	ck_assert_uint_eq(cap, 16384);
	free(s);
}
END_TEST

/* A need past what size_t counts in bytes: -ENOMEM, the array as it was. */
START_TEST(test_grow_overflow_keeps_array)
{
	struct pair *v = NULL;
	size_t cap = 0;

	ck_assert_int_eq(SR_GROW(v, cap, 4, 4), 0);
	v[3] = (struct pair){7, 8};
	ck_assert_int_eq(SR_GROW(v, cap, SIZE_MAX / 2 + 2, 4), -ENOMEM);
	ck_assert_int_eq(SR_GROW(v, cap, SIZE_MAX / sizeof(*v) + 1, 4), -ENOMEM);
	ck_assert_uint_eq(cap, 4);
	ck_assert(v[3].a == 7 && v[3].b == 8);
	free(v);
}
END_TEST

static Suite *util_suite(void)
{
	Suite *s = suite_create("util");
	TCase *tc = tcase_create("grow");

	tcase_add_test(tc, test_grow_doubles_and_keeps);
	tcase_add_test(tc, test_grow_to_need);
	tcase_add_test(tc, test_grow_overflow_keeps_array);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return sr_test_run(util_suite());
}
