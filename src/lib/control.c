/* SPDX-License-Identifier: MIT */
#include "control.h"
#include "secmem.h"
#include "state.h"
#include "util.h"

#include <sys/socket.h>
#include <sys/un.h>

/* Linux 6.5's; older headers lack it, and older kernels refuse it (ENOPROTOOPT). */
#ifndef SO_PEERPIDFD
#define SO_PEERPIDFD 77
#endif

union fds_cmsg {
	char buf[CMSG_SPACE(sizeof(int) * SR_CTL_FDS_MAX)];
	struct cmsghdr align;
};

/*
 * A message's text, sent or received, is wiped when freed: a server's
 * carry what a request gave its sandbox (an exec's environment, argv,
 * cwd) and what a keeper answers, and what the server frees unwiped is
 * in every keeper it forks later (docs/security.md, "What a keeper holds").
 */
int sr_ctl_send(int fd, json_t *msg, const int *fds, size_t n_fds)
{
	_cleanup_free_wiped_ char *text = NULL;
	union fds_cmsg ctl = {0};
	struct iovec iov;
	struct msghdr m = {.msg_iov = &iov, .msg_iovlen = 1};
	int r = sr_json_dump_line(msg, &text);
	ssize_t n;

	if (r < 0)
		return r;
	if (strlen(text) > SR_CTL_MAX || n_fds > SR_CTL_FDS_MAX)
		return -EMSGSIZE;
	iov = (struct iovec){.iov_base = text, .iov_len = strlen(text)};
	sr_cmsg_put_fds(&m, ctl.buf, fds, n_fds);
	n = SR_RETRY(sendmsg(fd, &m, MSG_NOSIGNAL));
	if (n < 0)
		return sr_negerrno();
	return n == (ssize_t)iov.iov_len ? 0 : -EMSGSIZE;
}

int sr_ctl_recv(int fd, json_t **ret, int fds[SR_CTL_FDS_MAX], size_t *n_fds)
{
	union fds_cmsg ctl;
	_cleanup_free_wiped_ char *buf = NULL;
	struct iovec iov;
	struct msghdr m = {.msg_iov = &iov, .msg_iovlen = 1};
	ssize_t len, n;
	size_t count = 0, total;
	json_t *j = NULL;

	*n_fds = 0;
	/* The packet's length first (MSG_TRUNC with a peek: Linux >= 3.4 for unix sockets). */
	len = sr_recvmsg(fd, &(struct msghdr){0}, MSG_PEEK | MSG_TRUNC);
	if (len < 0)
		return sr_negerrno();
	if (len > SR_CTL_MAX)
		len = SR_CTL_MAX + 1; /* read, and refused below */
	buf = malloc((size_t)len + 1);
	if (!buf)
		return -ENOMEM;
	iov = (struct iovec){.iov_base = buf, .iov_len = (size_t)len + 1};
	m.msg_control = ctl.buf;
	m.msg_controllen = sizeof(ctl.buf);
	n = sr_recvmsg(fd, &m, MSG_CMSG_CLOEXEC);
	if (n < 0)
		return sr_negerrno();
	total = sr_cmsg_take_fds(&m, fds, SR_CTL_FDS_MAX, &count);
	if (n == 0 && total == 0)
		return 0;
	if (n > SR_CTL_MAX || total != count || (m.msg_flags & (MSG_TRUNC | MSG_CTRUNC)) ||
	    sr_json_parse(buf, (size_t)n, 0, 32, &j) < 0 || !json_is_object(j)) {
		if (j)
			json_decref(j);
		for (size_t i = 0; i < count; i++)
			close(fds[i]);
		return -EBADMSG;
	}
	*ret = j;
	*n_fds = count;
	return 1;
}

int sr_ctl_recv_nofds(int fd, json_t **ret)
{
	int fds[SR_CTL_FDS_MAX];
	size_t n_fds = 0;
	int r = sr_ctl_recv(fd, ret, fds, &n_fds);

	for (size_t i = 0; r > 0 && i < n_fds; i++)
		close(fds[i]);
	return r;
}

/*
 * How many PID namespaces a process is in, from its "NSpid:" line (the
 * pid it has in each, from ours down) in file: its /proc/PID/status, or
 * a pidfd's fdinfo, which says -1 once it has ended. 0 if gone, -errno
 * if the file cannot be read. Readable whoever the process's groups are, unlike
 * /proc/PID/ns/user, which takes ptrace's access: the same uid under
 * another gid (newgrp, a unit's Group=) has none.
 */
static int pid_depth(const char *file)
{
	_cleanup_fclose_ FILE *f = fopen(file, "re");
	char line[256], *p, *save = NULL;
	int n = 0;

	if (!f)
		return errno == ENOENT || errno == ESRCH ? 0 : sr_negerrno();
	while (fgets(line, sizeof(line), f)) {
		if (strncmp(line, "NSpid:", 6) != 0)
			continue;
		for (p = strtok_r(line + 6, " \t\n", &save); p;
		     p = strtok_r(NULL, " \t\n", &save)) {
			if (strtol(p, NULL, 10) <= 0)
				return 0;
			n++;
		}
		return n;
	}
	return 0;
}

/*
 * Whether the peer (pid, the kernel's at its connect(); 0 if it is in no
 * PID namespace we see) is in our own PID namespace. Every process of a
 * sandbox is in one of its own, below ours, where an unprivileged
 * caller's agent is the caller's uid all the same: given a --ro-bind of a
 * directory holding our sockets (the state directory is under /tmp or
 * $XDG_RUNTIME_DIR; a read-only mount does not stop a connect()), an
 * agent asked serve for a sandbox with a bind of the caller's home, and a
 * keeper for an exec. The peer's pidfd (SO_PEERPIDFD, Linux 6.5; refused
 * for a peer gone already) names the very process; without it (older
 * kernels: ENOPROTOOPT) its pid is read, and what took that pid if the
 * peer ended meanwhile would be judged instead: one of the caller's own
 * processes in our namespace, at worst.
 */
static int peer_in_our_pidns(int fd, pid_t pid)
{
	static int ours;
	_cleanup_close_ int pidfd = -1;
	socklen_t len = sizeof(pidfd);
	char path[64];
	int theirs;

	if (pid <= 0)
		return -EPERM;
	if (!ours) {
		int d = pid_depth("/proc/self/status");

		if (d <= 0)
			return d < 0 ? d : -EPERM;
		ours = d;
	}
	if (getsockopt(fd, SOL_SOCKET, SO_PEERPIDFD, &pidfd, &len) == 0)
		snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", pidfd);
	else if (errno == ENOPROTOOPT)
		snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	else /* gone already (EINVAL, ENODATA), or out of fds: no answer but that */
		return errno == EMFILE || errno == ENFILE || errno == ENOMEM ? sr_negerrno()
									     : -EPERM;
	theirs = pid_depth(path);
	if (theirs < 0)
		return theirs;
	return theirs == ours ? 0 : -EPERM;
}

int sr_ctl_peer_is_us(int fd)
{
	struct ucred cred;
	socklen_t len = sizeof(cred);

	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) < 0)
		return sr_negerrno();
	if (cred.uid != geteuid())
		return -EPERM;
	return peer_in_our_pidns(fd, cred.pid);
}

/* flags: SOCK_NONBLOCK or 0; a Unix socket's connect(2) then fails at once with EAGAIN. */
static int connect_ctl(const char *dir, int flags, int *ret, struct sr_error *err)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	_cleanup_close_ int fd = -1;
	int r;

	if (snprintf(sa.sun_path, sizeof(sa.sun_path), "%s/ctl", dir) >= (int)sizeof(sa.sun_path))
		return sr_error_msg(err, -ENAMETOOLONG, "%s/ctl: path too long for a socket", dir);
	fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC | flags, 0);
	if (fd < 0)
		return sr_error_errno(err, sr_negerrno(), "socket");
	if (SR_RETRY(connect(fd, (struct sockaddr *)&sa, sizeof(sa))) < 0) {
		r = sr_negerrno();
		if (r == -ECONNREFUSED || r == -ENOENT)
			return sr_error_msg(err, r, "the sandbox's keeper is gone (%s)",
					    strerror(-r));
		if (r == -EAGAIN)
			return sr_error_msg(err, r,
					    "the sandbox's keeper takes no more connections now "
					    "(stopped?)");
		return sr_error_errno(err, r, "connect to the sandbox's keeper");
	}
	r = sr_ctl_peer_is_us(fd);
	if (r == -EPERM)
		return sr_error_errno(err, r, "the sandbox's keeper is not yours");
	if (r < 0)
		return sr_error_errno(err, r, "connect to the sandbox's keeper");
	*ret = steal_fd(&fd);
	return 0;
}

int sr_ctl_connect(const char *dir, int *ret, struct sr_error *err)
{
	return connect_ctl(dir, 0, ret, err);
}

int sr_ctl_connect_nowait(const char *dir, int *ret, struct sr_error *err)
{
	return connect_ctl(dir, SOCK_NONBLOCK, ret, err);
}

int sr_ctl_ask_rm(const char *statedir, const char *id, bool nowait, int *ret_fd)
{
	_cleanup_(sr_json_decrefp) json_t *rm = json_pack("{sssb}", "op", "rm", "force", 1);
	_cleanup_free_ char *dir = NULL;
	_cleanup_close_ int fd = -1;
	struct sr_error err = {0};
	int r;

	if (!rm || asprintf(&dir, "%s/%s", statedir, id) < 0)
		return -ENOMEM;
	r = connect_ctl(dir, nowait ? SOCK_NONBLOCK : 0, &fd, &err);
	if (r < 0)
		return r;
	r = sr_ctl_send(fd, rm, NULL, 0);
	if (r < 0)
		return r;
	if (ret_fd)
		*ret_fd = steal_fd(&fd);
	return 0;
}

json_t *sr_ctl_error_reply(const struct sr_error *err)
{
	return json_pack("{sbsosisi}", "ok", 0, "error", sr_json_string(err->msg), "status",
			 err->status ? err->status : 125, "errno", err->code < 0 ? -err->code : 0);
}

int sr_ctl_reply_error(json_t *reply, struct sr_error *err)
{
	json_t *ok = json_object_get(reply, "ok");
	json_t *msg, *status, *code;

	if (json_is_true(ok))
		return 0;
	msg = json_object_get(reply, "error");
	status = json_object_get(reply, "status");
	code = json_object_get(reply, "errno");
	sr_error_msg(err,
		     json_is_integer(code) && json_integer_value(code) > 0 &&
			     json_integer_value(code) < 4096
			 ? -(int)json_integer_value(code)
			 : -EIO,
		     "%s", json_is_string(msg) ? json_string_value(msg) : "failed");
	err->status = json_is_integer(status) ? (int)json_integer_value(status) : 125;
	return err->code;
}

int sr_ctl_call(const char *dir, json_t *req, json_t **ret_reply, struct sr_error *err)
{
	_cleanup_close_ int fd = -1;
	json_t *reply = NULL;
	int r = sr_ctl_connect(dir, &fd, err);

	if (r < 0)
		return r;
	r = sr_ctl_send(fd, req, NULL, 0);
	if (r < 0)
		return sr_error_errno(err, r, "talk to the sandbox's keeper");
	r = sr_ctl_recv_nofds(fd, &reply);
	if (r <= 0)
		return sr_error_msg(err, r < 0 ? r : -ECONNRESET,
				    "the sandbox's keeper did not answer (%s)",
				    r < 0 ? strerror(-r) : "it hung up");
	r = sr_ctl_reply_error(reply, err);
	if (r < 0 || !ret_reply)
		json_decref(reply);
	else
		*ret_reply = reply;
	return r;
}

int sr_ctl_call_ref(const char *ref, json_t *req, json_t **ret_reply, struct sr_error *err)
{
	_cleanup_free_ char *statedir = NULL;
	struct sr_entry e = {0};
	int r = sr_state_dir(&statedir, err);

	if (r >= 0)
		r = sr_state_find(statedir, ref, &e, err);
	if (r >= 0)
		r = sr_ctl_call(e.dir, req, ret_reply, err);
	sr_entry_free(&e);
	return r;
}
