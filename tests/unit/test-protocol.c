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

/*
 * PID 1's last word: it tells the keeper something, then exits with a
 * request of the keeper's unread. The kernel has the keeper's socket
 * report ECONNRESET ahead of what is queued; it is read all the same.
 */
START_TEST(test_last_word_survives_a_reset)
{
	struct sr_msg req = {.type = SR_MSG_WARNING}, last = {.type = SR_MSG_WARNING}, got;

	snprintf(last.text, sizeof(last.text), "exited");
	ck_assert_int_eq(sr_msg_send(sv[0], &req), 0); /* never read */
	ck_assert_int_eq(sr_msg_send(sv[1], &last), 0);
	close(sv[1]);
	sv[1] = -1;
	ck_assert_int_eq(sr_msg_recv_nowait(sv[0], &got, NULL), 1);
	ck_assert_str_eq(got.text, "exited");
	ck_assert_int_eq(sr_msg_recv_nowait(sv[0], &got, NULL), 0);
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

/* SPAWN: its command in the payload, three stdio fds; the receiver's buffer bounds it. */
START_TEST(test_spawn_payload_and_fds)
{
	char *argv[] = {"ls", "-l", NULL}, *envp[] = {"PATH=/bin", "A=b c", NULL};
	struct sr_msg m = {.type = SR_MSG_SPAWN, .id = 7}, got;
	char buf[SR_MSG_PAYLOAD_MAX + 1];
	struct sr_msg_extra ex = {.payload = buf, .cap = sizeof(buf)};
	struct sr_spawn_spec spec;
	_cleanup_free_ char *payload = NULL;
	size_t len;
	ino_t ino;
	int fds[3], before;

	for (int i = 0; i < 3; i++)
		fds[i] = probe_fd(&ino);
	ck_assert_int_eq(sr_spawn_encode(argv, envp, "/workspace/sub", &payload, &len), 0);
	ck_assert_int_eq(sr_msg_send_full(sv[0], &m, payload, len, fds, 3), 0);
	ck_assert_int_eq(sr_msg_recv_full(sv[1], &got, &ex), 1);
	ck_assert_int_eq(got.id, 7);
	ck_assert_uint_eq(ex.n_fds, 3);
	ck_assert_uint_eq(ex.len, len);
	ck_assert_int_eq(sr_spawn_decode(ex.payload, ex.len, &spec), 0);
	ck_assert_str_eq(spec.argv[0], "ls");
	ck_assert_str_eq(spec.argv[1], "-l");
	ck_assert_ptr_null(spec.argv[2]);
	ck_assert_str_eq(spec.envp[1], "A=b c");
	ck_assert_ptr_null(spec.envp[2]);
	ck_assert_str_eq(spec.cwd, "/workspace/sub");
	sr_spawn_spec_free(&spec);
	sr_msg_extra_close(&ex);

	/* The same message to a receiver with no room for a payload: refused, no fd kept. */
	before = open_fds();
	ck_assert_int_eq(sr_msg_send_full(sv[0], &m, payload, len, fds, 3), 0);
	ck_assert_int_eq(sr_msg_recv(sv[1], &got, NULL), -EBADMSG);
	ck_assert_int_eq(open_fds(), before);
	/* More fds than SPAWN takes with a pty: refused. */
	m.flags = SR_SPAWN_PTY;
	ck_assert_int_eq(sr_msg_send_full(sv[0], &m, payload, len, fds, 3), 0);
	ck_assert_int_eq(sr_msg_recv_full(sv[1], &got, &ex), -EBADMSG);
	ck_assert_int_eq(open_fds(), before);
	for (int i = 0; i < 3; i++)
		close(fds[i]);
}
END_TEST

/* The payload's format: no empty argument or argv, every list ended, nothing after cwd. */
START_TEST(test_spawn_decode_malformed)
{
	struct sr_spawn_spec spec;
	char *empty_argv[] = {NULL}, *argv[] = {"a", NULL}, *bad_env[] = {"", NULL};
	char *p = NULL;
	size_t len;
	static const char *const bad[] = {
	    "",		   /* nothing */
	    "a",	   /* an unended string */
	    "\0\0\0",	   /* no argv */
	    "a\0\0",	   /* no environment list end */
	    "a\0\0\0x",	   /* a cwd that does not end */
	    "a\0\0\0/\0x", /* something after the cwd */
	};
	static const size_t lens[] = {0, 1, 3, 3, 5, 7};

	ck_assert_int_eq(sr_spawn_encode(empty_argv, NULL, NULL, &p, &len), -EINVAL);
	ck_assert_int_eq(sr_spawn_encode(argv, bad_env, NULL, &p, &len), -EINVAL);
	for (size_t i = 0; i < sizeof(lens) / sizeof(lens[0]); i++) {
		char buf[16];

		memcpy(buf, bad[i], lens[i]);
		buf[lens[i]] = '\0';
		ck_assert_msg(sr_spawn_decode(buf, lens[i], &spec) == -EBADMSG, "case %zu", i);
	}
	/* No environment and the default cwd. */
	ck_assert_int_eq(sr_spawn_encode(argv, NULL, NULL, &p, &len), 0);
	ck_assert_int_eq(sr_spawn_decode(p, len, &spec), 0);
	ck_assert_ptr_null(spec.envp[0]);
	ck_assert_ptr_null(spec.cwd);
	sr_spawn_spec_free(&spec);
	free(p);
}
END_TEST

/*
 * A CANCEL finding PID 1's socket full (PID 1 kept busy from inside): it
 * waits, behind any other, and goes once the peer reads; sent as-is with
 * sr_msg_send(), it failed with EAGAIN and the worker ran on.
 */
START_TEST(test_queue_waits_for_room)
{
	struct sr_msg_queue q = {0};
	struct sr_msg m = {.type = SR_MSG_STATS}, got;
	size_t filled = 0, read_back = 0;
	int r;

	ck_assert_int_eq(fcntl(sv[0], F_SETFL, O_NONBLOCK), 0);
	while ((r = sr_msg_send(sv[0], &m)) == 0)
		filled++;
	ck_assert_int_eq(r, -EAGAIN);
	ck_assert_uint_gt(filled, 0);
	/* Full: both wait, in order, and say so. */
	ck_assert_int_eq(
	    sr_msg_queue_send(&q, sv[0], &(struct sr_msg){.type = SR_MSG_CANCEL, .id = 7}), 0);
	ck_assert_int_eq(
	    sr_msg_queue_send(&q, sv[0], &(struct sr_msg){.type = SR_MSG_CANCEL, .id = 8}), 0);
	ck_assert(sr_msg_queue_pending(&q));
	ck_assert_int_eq(sr_msg_queue_flush(&q, sv[0]), -EAGAIN);
	ck_assert(sr_msg_queue_pending(&q));
	/* The peer reads everything: then they go, and come after what filled it. */
	for (;;) {
		while (sr_msg_recv_nowait(sv[1], &got, NULL) == 1) {
			if (got.type == SR_MSG_CANCEL)
				break;
			read_back++;
		}
		if (got.type == SR_MSG_CANCEL)
			break;
		(void)sr_msg_queue_flush(&q, sv[0]);
	}
	ck_assert_uint_eq(read_back, filled);
	ck_assert_int_eq(got.id, 7);
	ck_assert_int_eq(sr_msg_queue_flush(&q, sv[0]), 0);
	ck_assert(!sr_msg_queue_pending(&q));
	ck_assert_int_eq(sr_msg_recv_nowait(sv[1], &got, NULL), 1);
	ck_assert_int_eq(got.type, SR_MSG_CANCEL);
	ck_assert_int_eq(got.id, 8);
	/* With room, a message goes at once. */
	ck_assert_int_eq(
	    sr_msg_queue_send(&q, sv[0], &(struct sr_msg){.type = SR_MSG_CANCEL, .id = 9}), 0);
	ck_assert(!sr_msg_queue_pending(&q));
	ck_assert_int_eq(sr_msg_recv_nowait(sv[1], &got, NULL), 1);
	ck_assert_int_eq(got.id, 9);
	/* The peer gone: an error, and nothing left waiting for nobody. */
	ck_assert_int_eq(
	    sr_msg_queue_send(&q, sv[0], &(struct sr_msg){.type = SR_MSG_CANCEL, .id = 10}), 0);
	close(sv[1]);
	sv[1] = -1;
	r = sr_msg_queue_send(&q, sv[0], &(struct sr_msg){.type = SR_MSG_CANCEL, .id = 11});
	ck_assert(r == -EPIPE || r == -ECONNRESET);
	ck_assert(!sr_msg_queue_pending(&q));
	sr_msg_queue_free(&q);
}
END_TEST

/* A peer that reads nothing: the queue stops at SR_MSG_QUEUE_MAX, saying so. */
START_TEST(test_queue_bounded)
{
	struct sr_msg_queue q = {0};
	struct sr_msg m = {.type = SR_MSG_STATS};

	ck_assert_int_eq(fcntl(sv[0], F_SETFL, O_NONBLOCK), 0);
	while (sr_msg_send(sv[0], &m) == 0)
		;
	for (unsigned i = 0; i < SR_MSG_QUEUE_MAX; i++)
		ck_assert_int_eq(
		    sr_msg_queue_send(&q, sv[0], &(struct sr_msg){.type = SR_MSG_CANCEL, .id = i}),
		    0);
	ck_assert_int_eq(
	    sr_msg_queue_send(&q, sv[0], &(struct sr_msg){.type = SR_MSG_CANCEL, .id = 9999}),
	    -ENOBUFS);
	ck_assert_uint_eq(q.n, SR_MSG_QUEUE_MAX);
	sr_msg_queue_free(&q);
}
END_TEST

static Suite *protocol_suite(void)
{
	Suite *s = suite_create("protocol");
	TCase *tc = tcase_create("messages");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_plain_message);
	tcase_add_test(tc, test_last_word_survives_a_reset);
	tcase_add_test(tc, test_tap_carries_an_fd);
	tcase_add_test(tc, test_refused_fds_are_closed);
	tcase_add_test(tc, test_two_fds_refused);
	tcase_add_test(tc, test_spawn_payload_and_fds);
	tcase_add_test(tc, test_spawn_decode_malformed);
	tcase_add_test(tc, test_queue_waits_for_room);
	tcase_add_test(tc, test_queue_bounded);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return sr_test_run(protocol_suite());
}
