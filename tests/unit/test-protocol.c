/* SPDX-License-Identifier: MIT */
#include "protocol.h"
#include "util.h"
#include "testutil.h"

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

/* A TAP with two fds: neither is kept, whether or not both fitted. */
START_TEST(test_two_fds_refused)
{
	struct sr_msg tap = {.type = SR_MSG_TAP}, got;
	union {
		char buf[CMSG_SPACE(2 * sizeof(int))];
		struct cmsghdr align;
	} ctl = {0};
	struct iovec iov = {.iov_base = &tap, .iov_len = sizeof(tap)};
	struct msghdr msg = {.msg_iov = &iov,
			     .msg_iovlen = 1,
			     .msg_control = ctl.buf,
			     .msg_controllen = sizeof(ctl.buf)};
	struct cmsghdr *c = CMSG_FIRSTHDR(&msg);
	int fds[2], before, fd = 99;
	ino_t ino;

	fds[0] = probe_fd(&ino);
	fds[1] = probe_fd(&ino);
	c->cmsg_level = SOL_SOCKET;
	c->cmsg_type = SCM_RIGHTS;
	c->cmsg_len = CMSG_LEN(sizeof(fds));
	memcpy(CMSG_DATA(c), fds, sizeof(fds));
	before = open_fds();
	ck_assert_int_eq(sendmsg(sv[0], &msg, 0), (ssize_t)sizeof(tap));
	ck_assert_int_eq(sr_msg_recv(sv[1], &got, &fd), -EBADMSG);
	ck_assert_int_eq(fd, -1);
	ck_assert_int_eq(open_fds(), before);
	close(fds[0]);
	close(fds[1]);
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
	tcase_add_test(tc, test_two_fds_refused);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return sr_test_run(protocol_suite());
}
