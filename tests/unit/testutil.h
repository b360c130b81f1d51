/* SPDX-License-Identifier: MIT */
/*
 * What the unit suites share: their main(), and scratch directories (one
 * base per suite, an unchecked fixture; a fresh directory per test inside
 * it, removed again even when the test fails).
 */
#pragma once

#include <check.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>

static inline int sr_test_rm_entry(const char *path, const struct stat *st, int flag,
				   struct FTW *ftw)
{
	return remove(path);
}

/* PARENT/NAME.XXXXXX, created; fails the test otherwise. */
static inline void sr_test_mkdtemp(char *buf, size_t len, const char *parent, const char *name)
{
	snprintf(buf, len, "%s/%s.XXXXXX", parent, name);
	ck_assert_ptr_nonnull(mkdtemp(buf));
}

static inline void sr_test_rmtree(const char *path)
{
	nftw(path, sr_test_rm_entry, 16, FTW_DEPTH | FTW_PHYS);
}

/* A suite's main(): runs s, and returns main's exit status. */
static inline int sr_test_run(Suite *s)
{
	SRunner *sr = srunner_create(s);
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
