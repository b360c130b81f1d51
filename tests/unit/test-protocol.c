/* SPDX-License-Identifier: MIT */
#include "protocol.h"
#include "util.h"

#include <check.h>
#include <fcntl.h>
#include <sys/socket.h>
#include <sys/stat.h>

static int sv[2];

static void setup(void)
{
	ck_assert_int_eq(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv), 0);
}

static void teardown(void)
{
	close(sv[0]);
	close(sv[1]);
}

/* An fd to pass: its inode tells it apart from any other fd. */
static int probe_fd(ino_t *ino)
{
	struct stat st;
	int fd = open("/dev/null", O_RDONLY | O_CLOEXEC);

	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(fstat(fd, &st), 0);
	*ino = st.st_ino;
	return fd;
}

static int open_fds(void)
{
	int n = 0;

	for (int fd = 0; fd < 1024; fd++)
		n += fcntl(fd, F_GETFD) >= 0;
	return n;
}

START_TEST(test_plain_message)
{
	struct sr_msg m = {.type = SR_MSG_WARNING, .code = -EIO}, got;
	int fd = 99;

	snprintf(m.text, sizeof(m.text), "careful");
	ck_assert_int_eq(sr_msg_send(sv[0], &m), 0);
	ck_assert_int_eq(sr_msg_recv(sv[1], &got, &fd), 1);
	ck_assert_int_eq(got.type, SR_MSG_WARNING);
	ck_assert_int_eq(got.code, -EIO);
	ck_assert_str_eq(got.text, "careful");
	ck_assert_int_eq(fd, -1);
	close(sv[0]);
	sv[0] = -1;
	ck_assert_int_eq(sr_msg_recv(sv[1], &got, NULL), 0);
}
END_TEST

/* TAP carries the tap: the same open file arrives, close-on-exec. */
START_TEST(test_tap_carries_an_fd)
{
	struct sr_msg m = {.type = SR_MSG_TAP}, got;
	struct stat st;
	ino_t ino;
	int passed = probe_fd(&ino), fd = -1;

	ck_assert_int_eq(sr_msg_send_fd(sv[0], &m, passed), 0);
	close(passed);
	ck_assert_int_eq(sr_msg_recv(sv[1], &got, &fd), 1);
	ck_assert_int_eq(got.type, SR_MSG_TAP);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(fstat(fd, &st), 0);
	ck_assert(st.st_ino == ino);
	ck_assert_int_eq(fcntl(fd, F_GETFD), FD_CLOEXEC);
	close(fd);
}
END_TEST

/* An fd with any other message, a TAP without one or unasked for: refused, nothing leaks. */
START_TEST(test_refused_fds_are_closed)
{
	struct sr_msg warn = {.type = SR_MSG_WARNING}, tap = {.type = SR_MSG_TAP}, got;
	int before, fd = 99, passed;
	ino_t ino;

	passed = probe_fd(&ino);
	before = open_fds();
	ck_assert_int_eq(sr_msg_send_fd(sv[0], &warn, passed), 0);
	ck_assert_int_eq(sr_msg_recv(sv[1], &got, &fd), -EBADMSG);
	ck_assert_int_eq(fd, -1);
	ck_assert_int_eq(open_fds(), before);

	ck_assert_int_eq(sr_msg_send(sv[0], &tap), 0);
	ck_assert_int_eq(sr_msg_recv(sv[1], &got, &fd), -EBADMSG);

	ck_assert_int_eq(sr_msg_send_fd(sv[0], &tap, passed), 0);
	ck_assert_int_eq(sr_msg_recv(sv[1], &got, NULL), -EBADMSG);
	ck_assert_int_eq(open_fds(), before);
	close(passed);
}
END_TEST

static Suite *protocol_suite(void)
{
	Suite *s = suite_create("protocol");
	TCase *tc = tcase_create("messages");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_plain_message);
	tcase_add_test(tc, test_tap_carries_an_fd);
	tcase_add_test(tc, test_refused_fds_are_closed);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(protocol_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
