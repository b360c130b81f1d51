/* SPDX-License-Identifier: MIT */
/*
 * What the unit suites share: their main(), scratch directories (one
 * base per suite, an unchecked fixture; a fresh directory per test inside
 * it, removed again even when the test fails), a decimal-comma locale, a
 * network namespace of a test's own.
 */
#pragma once

#include <check.h>
#include <errno.h>
#include <ftw.h>
#include <locale.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

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

/*
 * The suite's base directory, /tmp/sr-PROGRAM.XXXXXX (sr-test-json for
 * test-json): made and removed by the parent around a test case (an
 * unchecked fixture runs even when a forked test fails), so that what a
 * test makes inside it goes too.
 */
static char sr_test_basedir[40];

static inline void sr_test_setup_base(void)
{
	char name[24];

	snprintf(name, sizeof(name), "sr-%s", program_invocation_short_name);
	sr_test_mkdtemp(sr_test_basedir, sizeof(sr_test_basedir), "/tmp", name);
}

static inline void sr_test_teardown_base(void)
{
	sr_test_rmtree(sr_test_basedir);
}

/*
 * LC_NUMERIC set to a locale made in dir whose decimal point is a comma
 * (no German locale need be installed): a "%g" of 12.3 writes "12,3"
 * there. localedef comes with libc, its character maps with the locales
 * package. Exit status 1: the locale is written, with a warning for each
 * category left out.
 */
static inline void sr_test_comma_locale(const char *dir)
{
	char cmd[512], buf[32];
	FILE *f;

	snprintf(cmd, sizeof(cmd), "%s/comma.src", dir);
	f = fopen(cmd, "w");
	ck_assert_ptr_nonnull(f);
	fputs("LC_NUMERIC\ndecimal_point \"<U002C>\"\nthousands_sep \"<U002E>\"\n"
	      "grouping 3;3\nEND LC_NUMERIC\n",
	      f);
	ck_assert_int_eq(fclose(f), 0);
	snprintf(cmd, sizeof(cmd), "localedef -c -i %s/comma.src %s/comma >/dev/null 2>&1", dir,
		 dir);
	ck_assert_int_ne(system(cmd), -1);
	ck_assert_int_eq(setenv("LOCPATH", dir, 1), 0);
	ck_assert_msg(setlocale(LC_NUMERIC, "comma"),
		      "localedef made no locale (Debian: apt-get install locales)");
	snprintf(buf, sizeof(buf), "%g", 12.3);
	ck_assert_str_eq(buf, "12,3");
}

/*
 * Runs fn(fd) in a child in a new user and network namespace: a message
 * it writes to fd, or an exit status other than 0, fails the test. Where
 * the kernel or the host's policy forbids user namespaces there is
 * nothing to test with: "UNTESTED: why" on stderr, and the test passes.
 */
static inline void sr_test_in_netns(void (*fn)(int fd), const char *untested)
{
	int pipefd[2], status;
	char msg[4096] = "";
	ssize_t n;
	pid_t pid;

	ck_assert_int_eq(pipe(pipefd), 0);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		close(pipefd[0]);
		if (unshare(CLONE_NEWUSER | CLONE_NEWNET) < 0) {
			dprintf(pipefd[1], "unshare(CLONE_NEWUSER|CLONE_NEWNET): %s",
				strerror(errno));
			_exit(77);
		}
		fn(pipefd[1]);
		_exit(0);
	}
	close(pipefd[1]);
	n = read(pipefd[0], msg, sizeof(msg) - 1);
	msg[n > 0 ? n : 0] = '\0';
	close(pipefd[0]);
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	if (WIFEXITED(status) && WEXITSTATUS(status) == 77) {
		fprintf(stderr, "%s: %s\n", untested, msg);
		return;
	}
	ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0 && msg[0] == '\0', "%s", msg);
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
