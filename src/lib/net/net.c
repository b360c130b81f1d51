/* SPDX-License-Identifier: MIT */
/*
 * The network helper's process on the host side (net.h): started after
 * clone (slirp4netns) or on the child's TAP (pasta), watched while the
 * sandbox lives, its end said, and ended with the network; the egress's
 * host side (egress.h) reached through it.
 */
#include "net-internal.h"
#include "spawn.h"
#include "util.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/epoll.h>
#include <sys/syscall.h>
#include <sys/wait.h>

/* fd moved to a number >= 10, so that the dup2()s onto 0-5 cannot collide with it. */
static int high_fd(int fd)
{
	return fcntl(fd, F_DUPFD_CLOEXEC, 10);
}

/*
 * The child's namespace, opened now: the helper starts while the child
 * sets up, and once the child is non-dumpable an unprivileged helper could
 * no longer open /proc/PID/ns/ itself. The helper gets the fds.
 */
static int open_ns(pid_t child, const char *name, struct sr_error *err)
{
	_cleanup_close_ int fd = -1;
	char path[64];
	int hi;

	snprintf(path, sizeof(path), "/proc/%d/ns/%s", (int)child, name);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return sr_error_errno(err, sr_negerrno(), "open %s", path);
	hi = high_fd(fd);
	if (hi < 0)
		return sr_error_errno(err, sr_negerrno(), "open %s: dup", path);
	return hi;
}

/*
 * fd3, fd4: high (>= 10), to become 3 and 4 (-1: closed); 5 is the
 * sandbox's network namespace. The helper's pid and a pidfd on it go in n,
 * and the namespaces are the helper's alone from here on.
 */
static int spawn_helper(struct sr_net *n, int fd3, int fd4, struct sr_error *err)
{
	const char *argv[32];
	struct sr_helper_exec x = {
	    .path = n->helper_path,
	    .argv = argv,
	    .parent = getpid(),
	    .show_stderr = sr_sink_enabled(n->sink, SR_LOG_DEBUG),
	    .ignore_sigpipe = !n->helper->ignores_sigpipe,
	    .caller_is_root = geteuid() == 0,
	    .userns = n->userns,
	    .fds = {fd3, fd4, n->netns},
	};
	size_t k = 0;
	pid_t pid;

	/*
	 * The arguments as run: IPv6's added where the host has it; with
	 * --allow-host, the gateway reaches the host's loopback, which the
	 * policy narrows to those ports.
	 */
	argv[k++] = n->helper->argv[0];
	for (size_t j = 0; n->ipv6 && n->helper->ipv6_args[j]; j++)
		argv[k++] = n->helper->ipv6_args[j];
	for (size_t i = 1; n->helper->argv[i] && k + 1 < SR_ARRAY_SIZE(argv); i++) {
		const char *a = n->helper->argv[i];

		if ((n->host_loopback && sr_streq(a, n->helper->no_host_loopback)) ||
		    (n->ipv6 && sr_streq(a, n->helper->ipv4_only)))
			continue;
		argv[k++] = a;
	}
	argv[k] = NULL;
	/* fork, not posix_spawn: the parent-death signal is set between fork and exec. */
	pid = fork();
	if (pid == 0)
		sr_helper_exec(&x);
	close(steal_fd(&n->userns));
	close(steal_fd(&n->netns));
	if (pid < 0)
		return sr_error_errno(err, sr_negerrno(), "start %s", n->helper->name);
	n->pid = pid;
	/* Only to tell the supervisor if it dies early: none before Linux 5.3. */
#ifdef SYS_pidfd_open
	n->pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
#endif
	if (n->pidfd >= 0 &&
	    epoll_ctl(n->epfd, EPOLL_CTL_ADD, n->pidfd,
		      &(struct epoll_event){.events = EPOLLIN, .data.fd = n->pidfd}) < 0)
		return sr_error_errno(err, sr_negerrno(), "watch %s", n->helper->name);
	return 0;
}

/* slirp4netns: started now, it opens the tap in the namespace itself. */
static int start_slirp4netns(struct sr_net *n, struct sr_error *err)
{
	_cleanup_close_ int ready_hi = -1, exit_hi = -1;
	int exitp[2], r;

	/*
	 * slirp4netns polls the read end and exits when it reads EOF, and
	 * deletes its tap on the way. Created after clone, so the sandbox
	 * never holds the write end.
	 */
	if (pipe2(exitp, O_CLOEXEC) < 0)
		return sr_error_errno(err, sr_negerrno(), "pipe");
	n->exit_w = exitp[1];
	ready_hi = high_fd(n->ready[1]);
	exit_hi = high_fd(exitp[0]);
	close(exitp[0]);
	if (ready_hi < 0 || exit_hi < 0)
		return sr_error_errno(err, sr_negerrno(), "start %s: dup", n->helper->name);
	r = spawn_helper(n, ready_hi, exit_hi, err);
	/* Only the helper (and the child, which closes its copy) may hold it now: EOF = helper
	 * died. */
	close(steal_fd(&n->ready[1]));
	close(steal_fd(&n->ready[0]));
	return r;
}

int sr_net_parent(struct sr_net *n, pid_t child, struct sr_error *err)
{
	if (n->mode != SR_NET_EGRESS)
		return 0;
	/* Now, for either helper: pasta starts later, on TAP (sr_net_start_helper). */
	n->userns = open_ns(child, "user", err);
	if (n->userns < 0)
		return n->userns;
	n->netns = open_ns(child, "net", err);
	if (n->netns < 0)
		return n->netns;
	return n->helper->takes_tap ? 0 : start_slirp4netns(n, err);
}

int sr_net_start_helper(struct sr_net *n, int tap, struct sr_error *err)
{
	_cleanup_close_ int tap_hi = -1;

	/* netns is gone once a helper was started: one tap, one pasta. */
	if (n->mode != SR_NET_EGRESS || !n->helper->takes_tap || n->netns < 0) {
		close(tap);
		return sr_error_msg(err, -EPROTO, "a tap nobody asked for");
	}
	tap_hi = high_fd(tap);
	close(tap);
	if (tap_hi < 0)
		return sr_error_errno(err, sr_negerrno(), "start %s: dup", n->helper->name);
	return spawn_helper(n, tap_hi, -1, err);
}

int sr_net_watch_fd(const struct sr_net *n)
{
	return n->epfd;
}

static void say_ended(struct sr_net *n)
{
	int st = n->ended_status;

	if (n->said)
		return;
	n->said = true;
	if (n->ended_w < 0)
		sr_warn(n->sink, "%s exited: the sandbox has no network from here on",
			n->helper->name);
	else if (WIFSIGNALED(st))
		sr_warn(n->sink,
			"%s was killed by signal %d: the sandbox has no network from here on",
			n->helper->name, WTERMSIG(st));
	else
		sr_warn(n->sink,
			"%s exited with status %d: the sandbox has no network from here on (run "
			"with -v to see why)",
			n->helper->name, WEXITSTATUS(st));
}

static void helper_exited(struct sr_net *n, bool during_run)
{
	pid_t w;
	int st = 0;

	if (n->pid <= 0)
		return;
	w = waitpid(n->pid, &st, WNOHANG);
	if (w == 0 || (w < 0 && errno == EINTR))
		return; /* not yet: the pidfd stays, readable again */
	/* Reaped, by us or (ECHILD) not: either way its pid is not ours to signal any more. */
	n->pid = 0;
	if (n->pidfd >= 0)
		epoll_ctl(n->epfd, EPOLL_CTL_DEL, n->pidfd, NULL);
	close(steal_fd(&n->pidfd));
	n->ended = true;
	n->ended_w = w;
	n->ended_status = st;
	if (during_run)
		say_ended(n);
}

void sr_net_dispatch(struct sr_net *n, bool during_run)
{
	/* Level-triggered: each party checks without blocking, and what is left stays readable. */
	helper_exited(n, during_run);
	sr_egress_dispatch(n->egress, during_run);
}

int sr_net_sockets(struct sr_net *n, int *fds, size_t n_fds, struct sr_error *err)
{
	int r, w;

	if (!n->egress) {
		for (size_t i = 0; i < n_fds; i++)
			sr_closep(&fds[i]);
		return sr_error_msg(err, -EPROTO, "network sockets nobody asked for");
	}
	r = sr_egress_sockets(n->egress, fds, n_fds, err);
	if (r < 0)
		return r;
	w = sr_egress_watch_fd(n->egress);
	if (w >= 0 &&
	    epoll_ctl(n->epfd, EPOLL_CTL_ADD, w,
		      &(struct epoll_event){.events = EPOLLIN, .data.fd = w}) < 0 &&
	    errno != EEXIST)
		return sr_error_errno(err, sr_negerrno(), "watch the resolver");
	return 0;
}

void sr_net_ended(struct sr_net *n)
{
	sr_egress_ended(n->egress);
}

void sr_net_record(struct sr_net *n, struct sr_result_network *ret)
{
	if (n->mode == SR_NET_EGRESS)
		sr_egress_record(n->egress, ret);
	else
		*ret = (struct sr_result_network){0};
}

void sr_net_agent_started(struct sr_net *n)
{
	sr_egress_dispatch(n->egress, true);
	/* Ready, then gone before the agent started: the agent runs without a network. */
	if (n->ended)
		say_ended(n);
}

void sr_net_free(struct sr_net *n)
{
	if (!n)
		return;
	/*
	 * Not waited for: slirp4netns exits on EOF and deletes its tap on its
	 * own time (15-35 ms), pasta is killed (its tap goes with the
	 * namespace), both off the invocation's path. The zombie keeps its
	 * pid from being reused until sandbox-run exits and it is reaped; a
	 * helper reaped already (helper_exited()) has pid 0.
	 */
	if (n->pid > 0 && n->helper->stop_signal) {
		/* Through the pidfd where there is one: it cannot name a reused pid. */
#ifdef SYS_pidfd_send_signal
		if (n->pidfd < 0 ||
		    syscall(SYS_pidfd_send_signal, n->pidfd, n->helper->stop_signal, NULL, 0) < 0)
#endif
			kill(n->pid, n->helper->stop_signal);
	}
	sr_egress_free(n->egress);
	sr_closep(&n->epfd);
	sr_closep(&n->pidfd);
	sr_closep(&n->userns);
	sr_closep(&n->netns);
	sr_closep(&n->exit_w);
	sr_closep(&n->ready[0]);
	sr_closep(&n->ready[1]);
	free(n->helper_path);
	free(n->ruleset);
	free(n);
}
