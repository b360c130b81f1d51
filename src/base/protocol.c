/* SPDX-License-Identifier: MIT */
#include "protocol.h"
#include "util.h"

#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

/* Control data with room for the most fds a message carries, aligned as a cmsghdr. */
union fds_cmsg {
	char buf[CMSG_SPACE(sizeof(int) * SR_MSG_FDS_MAX)];
	struct cmsghdr align;
};

int sr_msg_send(int fd, const struct sr_msg *m)
{
	return sr_msg_send_full(fd, m, NULL, 0, NULL, 0);
}

int sr_msg_send_fd(int fd, const struct sr_msg *m, int passed_fd)
{
	return sr_msg_send_full(fd, m, NULL, 0, &passed_fd, passed_fd >= 0 ? 1 : 0);
}

int sr_msg_send_full(int fd, const struct sr_msg *m, const void *payload, size_t len,
		     const int *fds, size_t n_fds)
{
	union fds_cmsg ctl = {0};
	struct iovec iov[2] = {
	    {.iov_base = (void *)m, .iov_len = sizeof(*m)},
	    {.iov_base = (void *)payload, .iov_len = len},
	};
	struct msghdr msg = {.msg_iov = iov, .msg_iovlen = len ? 2 : 1};
	ssize_t n;

	if (len > SR_MSG_PAYLOAD_MAX || n_fds > SR_MSG_FDS_MAX)
		return -EMSGSIZE;
	sr_cmsg_put_fds(&msg, ctl.buf, fds, n_fds);
	/* MSG_NOSIGNAL: a dead peer is an error to report, not a SIGPIPE. */
	n = SR_RETRY(sendmsg(fd, &msg, MSG_NOSIGNAL));
	if (n < 0)
		return sr_negerrno();
	return n == (ssize_t)(sizeof(*m) + len) ? 0 : -EMSGSIZE;
}

int sr_msg_queue_flush(struct sr_msg_queue *q, int fd)
{
	size_t sent = 0;
	int r = 0;

	while (sent < q->n && (r = sr_msg_send(fd, &q->v[sent])) == 0)
		sent++;
	if (r < 0 && r != -EAGAIN && r != -EWOULDBLOCK) {
		q->n = 0; /* the peer is gone: nobody to tell */
		return r;
	}
	/* Nothing sent, nothing to move; an empty queue's v may be NULL, which memmove() must not
	 * get. */
	if (sent)
		memmove(q->v, q->v + sent, (q->n - sent) * sizeof(*q->v));
	q->n -= sent;
	return q->n ? -EAGAIN : 0;
}

int sr_msg_queue_send(struct sr_msg_queue *q, int fd, const struct sr_msg *m)
{
	int r = sr_msg_queue_flush(q, fd);

	if (r == 0)
		r = sr_msg_send(fd, m);
	if (r != -EAGAIN && r != -EWOULDBLOCK)
		return r;
	if (q->n >= SR_MSG_QUEUE_MAX)
		return -ENOBUFS;
	if (SR_GROW(q->v, q->cap, q->n + 1, 8) < 0)
		return -ENOMEM;
	q->v[q->n++] = *m;
	return 0;
}

void sr_msg_queue_free(struct sr_msg_queue *q)
{
	free(q->v);
	*q = (struct sr_msg_queue){0};
}

void sr_msg_extra_close(struct sr_msg_extra *ex)
{
	for (size_t i = 0; i < ex->n_fds; i++)
		sr_closep(&ex->fds[i]);
	ex->n_fds = 0;
}

size_t sr_msg_fds_allowed(const struct sr_msg *m)
{
	switch (m->type) {
	case SR_MSG_SPAWN:
		return 3 - (size_t)__builtin_popcount((unsigned)m->flags & SR_SPAWN_PTY);
	case SR_MSG_SPAWNED:
		return m->flags & SR_SPAWN_PTY ? 1 : 0;
	case SR_MSG_TAP:
	case SR_MSG_WORK:
	case SR_MSG_CONNECTED:
	case SR_MSG_READY:
		return 1;
	case SR_MSG_NET:
		return 3;
	default:
		return 0;
	}
}

static int recv_msg(int fd, int flags, struct sr_msg *ret, struct sr_msg_extra *ex)
{
	union fds_cmsg ctl;
	struct sr_msg m;
	struct sr_msg_extra got = {0};
	bool room = ex && ex->payload && ex->cap > 1;
	/* The payload's room plus one byte: a datagram longer than that shows as MSG_TRUNC. */
	struct iovec iov[2] = {
	    {.iov_base = &m, .iov_len = sizeof(m)},
	    {.iov_base = room ? ex->payload : NULL, .iov_len = room ? ex->cap - 1 : 0},
	};
	struct msghdr msg = {
	    .msg_iov = iov,
	    .msg_iovlen = room ? 2 : 1,
	    .msg_control = ctl.buf,
	    .msg_controllen = sizeof(ctl.buf),
	};
	ssize_t n = sr_recvmsg(fd, &msg, MSG_CMSG_CLOEXEC | flags);
	size_t count;

	if (n < 0)
		return sr_negerrno();
	count = sr_cmsg_take_fds(&msg, got.fds, SR_MSG_FDS_MAX, &got.n_fds);
	if (n == 0 && count == 0)
		return 0;
	/* SOCK_SEQPACKET keeps boundaries: anything but one whole message is a bug. */
	if (n < (ssize_t)sizeof(m) || m.type == 0 || m.type >= _SR_MSG_TYPE_MAX ||
	    (msg.msg_flags & (MSG_TRUNC | MSG_CTRUNC)) || count != got.n_fds ||
	    got.n_fds > sr_msg_fds_allowed(&m) || (!ex && got.n_fds)) {
		sr_msg_extra_close(&got);
		/* A whole header of a known type: the receiver may answer it (a request it drops).
		 */
		if (n >= (ssize_t)sizeof(m) && m.type > 0 && m.type < _SR_MSG_TYPE_MAX) {
			m.text[sizeof(m.text) - 1] = '\0';
			*ret = m;
		}
		return -EBADMSG;
	}
	m.text[sizeof(m.text) - 1] = '\0';
	*ret = m;
	if (ex) {
		memcpy(ex->fds, got.fds, sizeof(got.fds));
		ex->n_fds = got.n_fds;
		ex->len = (size_t)n - sizeof(m);
		if (room)
			ex->payload[ex->len] = '\0';
	}
	return 1;
}

int sr_msg_recv_full(int fd, struct sr_msg *ret, struct sr_msg_extra *ex)
{
	return recv_msg(fd, 0, ret, ex);
}

int sr_msg_recv_nowait(int fd, struct sr_msg *ret, struct sr_msg_extra *ex)
{
	return recv_msg(fd, MSG_DONTWAIT, ret, ex);
}

int sr_msg_recv(int fd, struct sr_msg *ret, int *ret_fd)
{
	struct sr_msg_extra ex = {0};
	int r;

	if (ret_fd)
		*ret_fd = -1;
	r = sr_msg_recv_full(fd, ret, ret_fd ? &ex : NULL);
	if (r <= 0)
		return r;
	if (ret->type == SR_MSG_TAP && ex.n_fds == 0)
		return -EBADMSG; /* a TAP without its tap */
	if (ret_fd && ex.n_fds == 1)
		*ret_fd = steal_fd(&ex.fds[0]);
	sr_msg_extra_close(&ex);
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

/* Appends each of v (NULL-terminated; NULL: none) and the empty string that ends the list. */
static size_t put_list(char *out, char *const *v)
{
	size_t n = 0;

	for (size_t i = 0; v && v[i]; i++) {
		size_t l = strlen(v[i]) + 1;

		if (out)
			memcpy(out + n, v[i], l);
		n += l;
	}
	if (out)
		out[n] = '\0';
	return n + 1;
}

int sr_spawn_encode(char *const *argv, char *const *envp, const char *cwd, char **ret,
		    size_t *ret_len)
{
	size_t len, cwd_len = cwd ? strlen(cwd) + 1 : 1;
	char *buf;

	if (!argv || !argv[0] || !*argv[0])
		return -EINVAL;
	for (size_t i = 0; envp && envp[i]; i++)
		if (!*envp[i])
			return -EINVAL;
	len = put_list(NULL, argv) + put_list(NULL, envp) + cwd_len;
	if (len > SR_MSG_PAYLOAD_MAX)
		return -E2BIG;
	buf = malloc(len);
	if (!buf)
		return -ENOMEM;
	{
		size_t n = put_list(buf, argv);

		n += put_list(buf + n, envp);
		memcpy(buf + n, cwd ? cwd : "", cwd_len);
	}
	*ret = buf;
	*ret_len = len;
	return 0;
}

/* The list at *p (ending at an empty string) as a NULL-terminated array; advances *p. */
static int take_list(char **p, const char *end, char ***ret)
{
	size_t n = 0, cap = 0;
	char **v = NULL;

	for (;;) {
		size_t l;

		if (*p >= end)
			goto bad;
		l = strnlen(*p, (size_t)(end - *p));
		if (*p + l >= end)
			goto bad;
		if (l == 0) {
			(*p)++;
			break;
		}
		if (SR_GROW(v, cap, n + 2, 16) < 0) {
			free(v);
			return -ENOMEM;
		}
		v[n++] = *p;
		*p += l + 1;
	}
	if (!v && !(v = calloc(1, sizeof(*v))))
		return -ENOMEM;
	v[n] = NULL;
	*ret = v;
	return 0;
bad:
	free(v);
	return -EBADMSG;
}

int sr_spawn_decode(char *payload, size_t len, struct sr_spawn_spec *ret)
{
	struct sr_spawn_spec s = {0};
	const char *end = payload + len;
	char *p = payload;
	int r;

	if (!payload)
		return -EBADMSG;
	if ((r = take_list(&p, end, &s.argv)) < 0 || (r = take_list(&p, end, &s.envp)) < 0)
		goto fail;
	/* The working directory: one string, then nothing. */
	if (p >= end || strnlen(p, (size_t)(end - p)) + 1 != (size_t)(end - p) || !s.argv[0]) {
		r = -EBADMSG;
		goto fail;
	}
	s.cwd = *p ? p : NULL;
	*ret = s;
	return 0;
fail:
	sr_spawn_spec_free(&s);
	return r;
}

void sr_spawn_spec_free(struct sr_spawn_spec *s)
{
	free(s->argv);
	free(s->envp);
	*s = (struct sr_spawn_spec){0};
}
