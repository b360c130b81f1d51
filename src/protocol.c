/* SPDX-License-Identifier: MIT */
#include "protocol.h"
#include "util.h"

#include <string.h>
#include <sys/socket.h>

int sr_msg_send(int fd, const struct sr_msg *m)
{
	/* MSG_NOSIGNAL: a dead peer is an error to report, not a SIGPIPE. */
	ssize_t n = SR_RETRY(send(fd, m, sizeof(*m), MSG_NOSIGNAL));

	if (n < 0)
		return sr_negerrno();
	return n == (ssize_t)sizeof(*m) ? 0 : -EMSGSIZE;
}

int sr_msg_recv(int fd, struct sr_msg *ret)
{
	struct sr_msg m;
	ssize_t n = SR_RETRY(recv(fd, &m, sizeof(m), MSG_CMSG_CLOEXEC));

	if (n < 0)
		return sr_negerrno();
	if (n == 0)
		return 0;
	/* SOCK_SEQPACKET keeps boundaries: anything but one whole message is a bug. */
	if (n != (ssize_t)sizeof(m) || m.type == 0 || m.type >= _SR_MSG_TYPE_MAX)
		return -EBADMSG;
	m.text[sizeof(m.text) - 1] = '\0';
	*ret = m;
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
