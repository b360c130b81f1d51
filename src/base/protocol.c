/* SPDX-License-Identifier: MIT */
#include "protocol.h"
#include "util.h"

#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

/* Control data with room for one fd (SCM_RIGHTS), aligned as a cmsghdr. */
union one_fd {
	char buf[CMSG_SPACE(sizeof(int))];
	struct cmsghdr align;
};

int sr_msg_send(int fd, const struct sr_msg *m)
{
	return sr_msg_send_fd(fd, m, -1);
}

int sr_msg_send_fd(int fd, const struct sr_msg *m, int passed_fd)
{
	union one_fd ctl = {0};
	struct iovec iov = {.iov_base = (void *)m, .iov_len = sizeof(*m)};
	struct msghdr msg = {.msg_iov = &iov, .msg_iovlen = 1};
	ssize_t n;

	if (passed_fd >= 0) {
		struct cmsghdr *c;

		msg.msg_control = ctl.buf;
		msg.msg_controllen = sizeof(ctl.buf);
		c = CMSG_FIRSTHDR(&msg);
		c->cmsg_level = SOL_SOCKET;
		c->cmsg_type = SCM_RIGHTS;
		c->cmsg_len = CMSG_LEN(sizeof(int));
		memcpy(CMSG_DATA(c), &passed_fd, sizeof(int));
	}
	/* MSG_NOSIGNAL: a dead peer is an error to report, not a SIGPIPE. */
	n = SR_RETRY(sendmsg(fd, &msg, MSG_NOSIGNAL));
	if (n < 0)
		return sr_negerrno();
	return n == (ssize_t)sizeof(*m) ? 0 : -EMSGSIZE;
}

/* Every fd the message brought: at most one is kept, in *ret. */
static int take_fds(struct msghdr *msg, int *ret)
{
	int n = 0;

	*ret = -1;
	for (struct cmsghdr *c = CMSG_FIRSTHDR(msg); c; c = CMSG_NXTHDR(msg, c)) {
		const unsigned char *data = CMSG_DATA(c);
		size_t k;

		if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS)
			continue;
		k = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
		for (size_t i = 0; i < k; i++) {
			int fd;

			memcpy(&fd, data + i * sizeof(int), sizeof(int));
			if (n++ == 0)
				*ret = fd;
			else
				close(fd);
		}
	}
	return n;
}

int sr_msg_recv(int fd, struct sr_msg *ret, int *ret_fd)
{
	union one_fd ctl;
	struct sr_msg m;
	struct iovec iov = {.iov_base = &m, .iov_len = sizeof(m)};
	struct msghdr msg = {
	    .msg_iov = &iov,
	    .msg_iovlen = 1,
	    .msg_control = ctl.buf,
	    .msg_controllen = sizeof(ctl.buf),
	};
	ssize_t n = SR_RETRY(recvmsg(fd, &msg, MSG_CMSG_CLOEXEC));
	int passed, count;

	if (ret_fd)
		*ret_fd = -1;
	if (n < 0)
		return sr_negerrno();
	count = take_fds(&msg, &passed);
	if (n == 0 && count == 0)
		return 0;
	/* SOCK_SEQPACKET keeps boundaries: anything but one whole message is a bug. */
	if (n != (ssize_t)sizeof(m) || m.type == 0 || m.type >= _SR_MSG_TYPE_MAX ||
	    (msg.msg_flags & (MSG_TRUNC | MSG_CTRUNC)) || count > 1 ||
	    (m.type == SR_MSG_TAP) != (count == 1) || (m.type == SR_MSG_TAP && !ret_fd)) {
		if (passed >= 0)
			close(passed);
		return -EBADMSG;
	}
	m.text[sizeof(m.text) - 1] = '\0';
	*ret = m;
	if (ret_fd)
		*ret_fd = passed;
	return 1;
}

void sr_msg_send_error(int fd, const struct sr_error *err)
{
	struct sr_msg m = {
	    .type = SR_MSG_ERROR,
	    .code = err->code ? err->code : -EIO,
	    .status = err->status ? err->status : 125,
	};

	snprintf(m.text, sizeof(m.text), "%s", err->msg);
	(void)sr_msg_send(fd, &m);
}

void sr_msg_send_warning(int fd, const struct sr_error *err)
{
	struct sr_msg m = {.type = SR_MSG_WARNING, .code = err->code};

	snprintf(m.text, sizeof(m.text), "%s", err->msg);
	(void)sr_msg_send(fd, &m);
}
