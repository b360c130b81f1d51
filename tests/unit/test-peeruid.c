/* SPDX-License-Identifier: MIT */
#include "peeruid.h"
#include "util.h"
#include "testutil.h"

#include <arpa/inet.h>
#include <check.h>
#include <errno.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

/* A loopback connection of ours: *listener, *client and *accepted. */
static void connect_loopback(int family, int *listener, int *client, int *accepted)
{
	struct sockaddr_storage ss = {.ss_family = (sa_family_t)family};
	socklen_t len =
	    family == AF_INET ? sizeof(struct sockaddr_in) : sizeof(struct sockaddr_in6);

	if (family == AF_INET)
		((struct sockaddr_in *)&ss)->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	else
		((struct sockaddr_in6 *)&ss)->sin6_addr = in6addr_loopback;
	*listener = socket(family, SOCK_STREAM | SOCK_CLOEXEC, 0);
	ck_assert_int_ge(*listener, 0);
	ck_assert_int_eq(bind(*listener, (struct sockaddr *)&ss, len), 0);
	ck_assert_int_eq(listen(*listener, 1), 0);
	ck_assert_int_eq(getsockname(*listener, (struct sockaddr *)&ss, &len), 0);
	*client = socket(family, SOCK_STREAM | SOCK_CLOEXEC, 0);
	ck_assert_int_ge(*client, 0);
	ck_assert_int_eq(connect(*client, (struct sockaddr *)&ss, len), 0);
	*accepted = accept4(*listener, NULL, NULL, SOCK_CLOEXEC);
	ck_assert_int_ge(*accepted, 0);
}

START_TEST(test_our_own_connection_is_ours)
{
	_cleanup_close_ int l = -1, c = -1, a = -1;
	uid_t uid = (uid_t)-1;

	connect_loopback(AF_INET, &l, &c, &a);
	ck_assert_int_eq(sr_tcp_peer_uid(a, &uid), 0);
	ck_assert_uint_eq(uid, geteuid());
	/* From the client's side too: its peer is the accepted socket. */
	uid = (uid_t)-1;
	ck_assert_int_eq(sr_tcp_peer_uid(c, &uid), 0);
	ck_assert_uint_eq(uid, geteuid());
}
END_TEST

START_TEST(test_ipv6_loopback)
{
	_cleanup_close_ int probe = socket(AF_INET6, SOCK_STREAM | SOCK_CLOEXEC, 0);
	_cleanup_close_ int l = -1, c = -1, a = -1;
	struct sockaddr_in6 lo = {.sin6_family = AF_INET6, .sin6_addr = IN6ADDR_LOOPBACK_INIT};
	uid_t uid = (uid_t)-1;

	/* A host without IPv6 (or ::1) has nothing to test here. */
	if (probe < 0 || bind(probe, (struct sockaddr *)&lo, sizeof(lo)) < 0)
		return;
	connect_loopback(AF_INET6, &l, &c, &a);
	ck_assert_int_eq(sr_tcp_peer_uid(a, &uid), 0);
	ck_assert_uint_eq(uid, geteuid());
}
END_TEST

START_TEST(test_gone_client_is_not_found)
{
	_cleanup_close_ int l = -1, c = -1, a = -1;
	uid_t uid = 4242;
	int r;

	connect_loopback(AF_INET, &l, &c, &a);
	/* Aborted (SO_LINGER 0: a reset, no TIME_WAIT): no socket of the client's is left. */
	ck_assert_int_eq(
	    setsockopt(c, SOL_SOCKET, SO_LINGER, &(struct linger){1, 0}, sizeof(struct linger)), 0);
	sr_closep(&c);
	r = sr_tcp_peer_uid(a, &uid);
	ck_assert_msg(r == -ENOENT || r == -ENOTCONN, "r = %d", r);
	ck_assert_uint_eq(uid, 4242);
}
END_TEST

START_TEST(test_closed_client_is_nobodys)
{
	_cleanup_close_ int l = -1, c = -1, a = -1;
	uid_t uid = 4242;

	connect_loopback(AF_INET, &l, &c, &a);
	ck_assert_int_eq(send(c, "GET", 3, 0), 3);
	/* Closed, not reset: its socket lives on in FIN_WAIT2, no program's, as uid 0. */
	sr_closep(&c);
	ck_assert_int_eq(sr_tcp_peer_uid(a, &uid), -ENOENT);
	ck_assert_uint_eq(uid, 4242);
}
END_TEST

/*
 * A client bound to lo is not found by the exact lookup, which answers
 * with a listener on the client's address and port instead: not it.
 */
START_TEST(test_device_bound_client_is_not_a_listener)
{
	_cleanup_close_ int l = -1, a = -1, c = -1, squat = -1;
	struct sockaddr_in sa = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	struct sockaddr_in to = sa;
	socklen_t len = sizeof(sa);
	uid_t uid = 4242;
	int one = 1;

	l = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	ck_assert_int_eq(bind(l, (struct sockaddr *)&to, sizeof(to)), 0);
	ck_assert_int_eq(listen(l, 1), 0);
	ck_assert_int_eq(getsockname(l, (struct sockaddr *)&to, &len), 0);
	c = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	ck_assert_int_eq(setsockopt(c, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)), 0);
	if (setsockopt(c, SOL_SOCKET, SO_BINDTODEVICE, "lo", 3) < 0)
		return; /* before Linux 5.7, root's alone */
	ck_assert_int_eq(bind(c, (struct sockaddr *)&sa, sizeof(sa)), 0);
	len = sizeof(sa);
	ck_assert_int_eq(getsockname(c, (struct sockaddr *)&sa, &len), 0);
	/* A listener on the client's own address and port, as SO_REUSEADDR allows. */
	squat = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	ck_assert_int_eq(setsockopt(squat, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)), 0);
	ck_assert_int_eq(bind(squat, (struct sockaddr *)&sa, sizeof(sa)), 0);
	ck_assert_int_eq(listen(squat, 1), 0);
	ck_assert_int_eq(connect(c, (struct sockaddr *)&to, sizeof(to)), 0);
	a = accept4(l, NULL, NULL, SOCK_CLOEXEC);
	ck_assert_int_ge(a, 0);
	ck_assert_int_eq(sr_tcp_peer_uid(a, &uid), -ENOENT);
	ck_assert_uint_eq(uid, 4242);
}
END_TEST

START_TEST(test_not_tcp)
{
	int sv[2];
	uid_t uid = 4242;

	ck_assert_int_eq(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
	ck_assert_int_eq(sr_tcp_peer_uid(sv[0], &uid), -EAFNOSUPPORT);
	ck_assert_uint_eq(uid, 4242);
	close(sv[0]);
	close(sv[1]);
}
END_TEST

static Suite *peeruid_suite(void)
{
	Suite *s = suite_create("peeruid");
	TCase *tc = tcase_create("loopback");

	tcase_add_test(tc, test_our_own_connection_is_ours);
	tcase_add_test(tc, test_ipv6_loopback);
	tcase_add_test(tc, test_gone_client_is_not_found);
	tcase_add_test(tc, test_closed_client_is_nobodys);
	tcase_add_test(tc, test_device_bound_client_is_not_a_listener);
	tcase_add_test(tc, test_not_tcp);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return sr_test_run(peeruid_suite());
}
