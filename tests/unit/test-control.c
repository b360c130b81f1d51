/* SPDX-License-Identifier: MIT */
#include "control.h"
#include "util.h"
#include "testutil.h"

#include <check.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>

static int sv[2];

static void setup(void)
{
	ck_assert_int_eq(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv), 0);
}

static void teardown(void)
{
	sr_closep(&sv[0]);
	sr_closep(&sv[1]);
}

static void send_op(int fd, const char *op)
{
	json_t *m = json_pack("{ss}", "op", op);

	ck_assert_int_eq(sr_ctl_send(fd, m, NULL, 0), 0);
	json_decref(m);
}

static void recv_op(int fd, const char *op)
{
	json_t *m = NULL;
	int fds[SR_CTL_FDS_MAX];
	size_t n_fds = 9;

	ck_assert_int_eq(sr_ctl_recv(fd, &m, fds, &n_fds), 1);
	ck_assert_str_eq(json_string_value(json_object_get(m, "op")), op);
	ck_assert_uint_eq(n_fds, 0);
	json_decref(m);
}

START_TEST(test_message_then_eof)
{
	json_t *m = NULL;
	int fds[SR_CTL_FDS_MAX];
	size_t n_fds;

	send_op(sv[0], "inspect");
	sr_closep(&sv[0]);
	recv_op(sv[1], "inspect");
	ck_assert_int_eq(sr_ctl_recv(sv[1], &m, fds, &n_fds), 0);
}
END_TEST

/*
 * A warm invocation's end: the keeper tells the exit and closes with the
 * taker's release unread. The kernel then has the taker's socket report
 * ECONNRESET ahead of the exit still queued; the exit is read all the
 * same, then EOF.
 */
START_TEST(test_last_word_survives_a_reset)
{
	json_t *m = NULL;
	int fds[SR_CTL_FDS_MAX];
	size_t n_fds;

	send_op(sv[0], "release"); /* never read */
	send_op(sv[1], "exit");
	sr_closep(&sv[1]);
	recv_op(sv[0], "exit");
	ck_assert_int_eq(sr_ctl_recv(sv[0], &m, fds, &n_fds), 0);
}
END_TEST

/* Nothing said before the reset: EOF, not an error, and no wait. */
START_TEST(test_reset_without_a_word_is_eof)
{
	json_t *m = NULL;
	int fds[SR_CTL_FDS_MAX];
	size_t n_fds;

	send_op(sv[0], "release");
	sr_closep(&sv[1]);
	ck_assert_int_eq(sr_ctl_recv(sv[0], &m, fds, &n_fds), 0);
}
END_TEST

/*
 * A state directory per test with one sandbox's ctl socket listening, as
 * its keeper's; inside the suite's base directory (testutil.h).
 */
#define ID "0123456789abcdef0123456789abcdef"
static char statedir[56];
static int ctl = -1;

static void setup_keeper(void)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};

	sr_test_mkdtemp(statedir, sizeof(statedir), sr_test_basedir, "state");
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s/" ID, statedir);
	ck_assert_int_eq(mkdir(sa.sun_path, 0700), 0);
	strcat(sa.sun_path, "/ctl");
	ctl = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	ck_assert_int_ge(ctl, 0);
	ck_assert_int_eq(bind(ctl, (struct sockaddr *)&sa, sizeof(sa)), 0);
	/* Backlog 0: one connection queued fills it (Linux's unix sockets). */
	ck_assert_int_eq(listen(ctl, 0), 0);
}

static void teardown_keeper(void)
{
	sr_closep(&ctl);
	sr_test_rmtree(statedir);
}

/* The request the keeper reads on a connection it accepts: rm -f. */
static int accept_rm(void)
{
	json_t *m = NULL;
	int fds[SR_CTL_FDS_MAX];
	size_t n_fds;
	int fd = accept4(ctl, NULL, NULL, SOCK_CLOEXEC);

	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(sr_ctl_recv(fd, &m, fds, &n_fds), 1);
	ck_assert_str_eq(json_string_value(json_object_get(m, "op")), "rm");
	ck_assert(json_is_true(json_object_get(m, "force")));
	json_decref(m);
	return fd;
}

START_TEST(test_ask_rm_closes)
{
	json_t *m = NULL;
	int fds[SR_CTL_FDS_MAX];
	size_t n_fds;
	int fd;

	ck_assert_int_eq(sr_ctl_ask_rm(statedir, ID, true, NULL), 0);
	fd = accept_rm();
	ck_assert_int_eq(sr_ctl_recv(fd, &m, fds, &n_fds), 0);
	close(fd);
}
END_TEST

/* Kept, the connection hears the keeper's answer at the end. */
START_TEST(test_ask_rm_keeps)
{
	int fd = -1, keeper;

	ck_assert_int_eq(sr_ctl_ask_rm(statedir, ID, false, &fd), 0);
	ck_assert_int_ge(fd, 0);
	keeper = accept_rm();
	send_op(keeper, "ended");
	recv_op(fd, "ended");
	close(keeper);
	close(fd);
}
END_TEST

/* A keeper not taking connections (stopped): not waited for. */
START_TEST(test_ask_rm_nowait)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	int first = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0), fd = -1;

	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s/" ID "/ctl", statedir);
	ck_assert_int_eq(connect(first, (struct sockaddr *)&sa, sizeof(sa)), 0);
	ck_assert_int_eq(sr_ctl_ask_rm(statedir, ID, true, &fd), -EAGAIN);
	ck_assert_int_eq(fd, -1);
	close(first);
}
END_TEST

START_TEST(test_ask_rm_gone)
{
	ck_assert_int_eq(sr_ctl_ask_rm(statedir, "fedcba9876543210fedcba9876543210", true, NULL),
			 -ENOENT);
}
END_TEST

/* The fds a message carries, not wanted, are closed: no writer is left, the pipe reads EOF. */
START_TEST(test_recv_nofds_closes)
{
	json_t *m = json_pack("{ss}", "op", "with-fd"), *got = NULL;
	int p[2];
	char c;

	ck_assert_int_eq(pipe2(p, O_CLOEXEC | O_NONBLOCK), 0);
	ck_assert_int_eq(sr_ctl_send(sv[0], m, &p[1], 1), 0);
	json_decref(m);
	sr_closep(&p[1]);
	ck_assert_int_eq(sr_ctl_recv_nofds(sv[1], &got), 1);
	ck_assert_str_eq(json_string_value(json_object_get(got, "op")), "with-fd");
	json_decref(got);
	ck_assert_int_eq(read(p[0], &c, 1), 0);
	sr_closep(&p[0]);
}
END_TEST

static Suite *control_suite(void)
{
	Suite *s = suite_create("control");
	TCase *tc = tcase_create("recv");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_message_then_eof);
	tcase_add_test(tc, test_last_word_survives_a_reset);
	tcase_add_test(tc, test_reset_without_a_word_is_eof);
	tcase_add_test(tc, test_recv_nofds_closes);
	suite_add_tcase(s, tc);
	tc = tcase_create("ask_rm");
	tcase_add_unchecked_fixture(tc, sr_test_setup_base, sr_test_teardown_base);
	tcase_add_checked_fixture(tc, setup_keeper, teardown_keeper);
	tcase_add_test(tc, test_ask_rm_closes);
	tcase_add_test(tc, test_ask_rm_keeps);
	tcase_add_test(tc, test_ask_rm_nowait);
	tcase_add_test(tc, test_ask_rm_gone);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return sr_test_run(control_suite());
}
