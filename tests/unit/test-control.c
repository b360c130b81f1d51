/* SPDX-License-Identifier: MIT */
#include "control.h"
#include "util.h"
#include "testutil.h"

#include <check.h>
#include <sys/socket.h>

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

static Suite *control_suite(void)
{
	Suite *s = suite_create("control");
	TCase *tc = tcase_create("recv");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_message_then_eof);
	tcase_add_test(tc, test_last_word_survives_a_reset);
	tcase_add_test(tc, test_reset_without_a_word_is_eof);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return sr_test_run(control_suite());
}
