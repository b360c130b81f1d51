/* SPDX-License-Identifier: MIT */
#include "launch.h"
#include "keeper.h"
#include "secmem.h"
#include "secrets.h"
#include "setup.h"
#include "util.h"

#include <sched.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>

/*
 * The grandchild: the keeper, as create's is (a session of its own), with
 * none of our fds. A pool's word (c->pool_token, the copy made for the
 * fork) goes into memory of its own that no child inherits, and the copy
 * is wiped: the keeper forks its sandbox's PID 1, which runs beside what
 * the sandbox runs, and the word has no business there.
 */
static __attribute__((noreturn)) void keeper(const struct sr_config *c, enum sr_log_level level,
					     int ready)
{
	int keep[] = {0, 1, 2, ready};
	struct sr_config own = *c;
	sigset_t mask;

	if (c->pool_token) {
		/* Ours to wipe: this process's copy of sr_launch_start()'s. */
		char *copy = (char *)c->pool_token, *word;
		size_t n = strlen(copy);

		word = sr_secmem_alloc(n + 1);
		if (word)
			memcpy(word, copy, n);
		explicit_bzero(copy, n);
		/* No answer: its caller is told that it died before it was ready. */
		if (!word)
			_exit(125);
		own.pool_token = word;
	}
	setsid();
	/* The mask main() gives every verb: SIGPIPE blocked, nothing else (the caller's signalfd).
	 */
	sigemptyset(&mask);
	sigaddset(&mask, SIGPIPE);
	sigprocmask(SIG_SETMASK, &mask, NULL);
	if (sr_close_fds_except(keep, SR_ARRAY_SIZE(keep)) < 0)
		_exit(125);
	_exit(sr_keeper_main(&own, level, ready));
}

/*
 * The middle of the double fork shares the caller's memory (CLONE_VM |
 * CLONE_VFORK, the caller suspended until it exits), as posix_spawn()'s
 * child does: it only forks the keeper and exits. A fork() of its own
 * copied the caller's page tables (a server's: the HTTP stack's ten
 * libraries mapped) for a process that lived a few microseconds, and tore
 * them down again: ~0.2 ms of CPU for each sandbox a warm pool makes
 * (perf: dup_mmap in the server, exit_mmap in the middle).
 *
 * It runs on an array in the caller's frame; the caller is suspended
 * meanwhile, so the locks fork() takes and releases, and errno, are as if
 * it had forked itself. The middle needs a few KiB of the array (fork()
 * and its handlers). The keeper goes on from there in its own copy of
 * the memory, never returning to the caller's frames: the main stack
 * below it is its to grow into. Built without AddressSanitizer where it
 * is on, as init-spawn.c's spawned child is: its frames would leave
 * poison in the shadow of the caller's stack.
 */
#define MIDDLE_STACK_BYTES (64 * 1024)
#ifdef __hppa__
#define MIDDLE_STACK_START(a) ((void *)(a))
#else
#define MIDDLE_STACK_START(a) ((void *)((a) + sizeof(a)))
#endif
#if defined(__has_attribute)
#if __has_attribute(no_sanitize_address)
#define SR_MIDDLE __attribute__((no_sanitize_address))
#endif
#endif
#ifndef SR_MIDDLE
#define SR_MIDDLE
#endif

struct middle {
	const struct sr_config *c;
	enum sr_log_level level;
	int ready, ours; /* the answer's socket: the keeper's end, the caller's (closed here) */
};

SR_MIDDLE static int middle(void *arg)
{
	const struct middle *m = arg;

	/* Its own fd table (no CLONE_FILES): the caller keeps its end. */
	close(m->ours);
	if (fork() == 0)
		keeper(m->c, m->level, m->ready);
	_exit(0);
}

static int start_keeper(const struct sr_config *c, enum sr_log_level level, struct sr_launch *l,
			struct sr_error *err)
{
	_Alignas(16) char stack[MIDDLE_STACK_BYTES];
	struct middle m = {.c = c, .level = level};
	int ready[2], status;
	pid_t pid;

	/* Both ways: the keeper's answer, then our word that its id was taken (keeper.h). */
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, ready) < 0)
		return sr_error_errno(err, sr_negerrno(), "create: socketpair");
	m.ready = ready[1];
	m.ours = ready[0];
	pid = clone(middle, MIDDLE_STACK_START(stack), CLONE_VM | CLONE_VFORK | SIGCHLD, &m);
	if (pid < 0) {
		int e = sr_negerrno();

		close(ready[0]);
		close(ready[1]);
		return sr_error_errno(err, e, "create: fork");
	}
	close(ready[1]);
	/* The middle process exits at once: reaped here, the keeper is init's (or a subreaper's).
	 */
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	fcntl(ready[0], F_SETFL, O_NONBLOCK);
	l->fd = ready[0];
	return 0;
}

/*
 * The keeper is a copy of the caller: of a server, with every
 * deployment's secrets in its pools' configurations, every pool's word
 * and the API's token. Those are in memory that no child inherits
 * (secmem.h): the keeper gets none of them but its own configuration's
 * secrets and pool's word, copied into ordinary memory for its fork and
 * wiped here once it has its copy: a malloc and a copy of their size, no
 * system call.
 */
int sr_launch_start(const struct sr_config *c, enum sr_log_level level, const struct sr_sink *sink,
		    struct sr_launch *l, struct sr_error *err)
{
	struct sr_config own = *c;
	char *word = NULL;
	size_t size = 0;
	int r;

	*l = (struct sr_launch){.fd = -1, .sink = sink};
	if (c->secrets && !(own.secrets = sr_secrets_pack(c->secrets, malloc, &size)))
		return sr_error_errno(err, -ENOMEM, "create");
	if (c->pool_token && !(own.pool_token = word = strdup(c->pool_token)))
		r = sr_error_errno(err, -ENOMEM, "create");
	else
		r = start_keeper(&own, level, l, err);
	if (own.secrets != c->secrets) {
		explicit_bzero(own.secrets, size);
		free(own.secrets);
	}
	if (word) {
		explicit_bzero(word, strlen(word));
		free(word);
	}
	return r;
}

/*
 * The id is the caller's now: the keeper, which waits for this word
 * (keeper.h), keeps its sandbox; cancelled before it, the sandbox is
 * ended. One byte into an empty socket buffer: it never waits.
 */
static void take_id(struct sr_launch *l, const char *id)
{
	l->done = true;
	if (send(l->fd, "\n", 1, MSG_NOSIGNAL | MSG_DONTWAIT) != 1) {
		sr_error_msg(&l->err, -EIO,
			     "create: the sandbox's keeper died before it was ready");
		l->err.status = 125;
		return;
	}
	snprintf(l->id, sizeof(l->id), "%s", id);
}

/* One line of the keeper's: a message, or its answer (done then). */
static void line(struct sr_launch *l, char *text)
{
	char *rest;
	long n, code;

	if (strncmp(text, "ok ", 3) == 0) {
		take_id(l, text + 3);
		return;
	}
	if (strncmp(text, "msg ", 4) != 0 && strncmp(text, "error ", 6) != 0)
		return;
	n = strtol(strchr(text, ' ') + 1, &rest, 10);
	rest += *rest == ' ';
	if (text[0] == 'e') {
		/* Its errno, so that a name taken is a conflict (409), not a failure of ours. */
		code = strtol(rest, &rest, 10);
		rest += *rest == ' ';
		sr_error_msg(&l->err, code > 0 && code < 4096 ? (int)-code : -EIO, "%s", rest);
		l->err.status = n > 0 && n < 256 ? (int)n : 125;
		l->done = true;
	} else if (n >= SR_LOG_ERROR && n < _SR_LOG_LEVEL_MAX) {
		sr_sink_log(l->sink, (enum sr_log_level)n, "%s", rest);
	}
}

bool sr_launch_read(struct sr_launch *l)
{
	while (!l->done && l->fd >= 0) {
		ssize_t n = read(l->fd, l->buf + l->len, sizeof(l->buf) - 1 - l->len);
		char *nl;

		if (n < 0 && (errno == EAGAIN || errno == EINTR))
			return false;
		if (n <= 0) {
			sr_error_msg(&l->err, -EIO,
				     "create: the sandbox's keeper died before it was ready");
			l->err.status = 125;
			l->done = true;
			break;
		}
		l->len += (size_t)n;
		l->buf[l->len] = '\0';
		while (!l->done && (nl = strchr(l->buf, '\n'))) {
			*nl = '\0';
			line(l, l->buf);
			l->len -= (size_t)(nl + 1 - l->buf);
			memmove(l->buf, nl + 1, l->len + 1);
		}
		/* A line longer than the buffer (a keeper's lines are shorter): dropped. */
		if (l->len == sizeof(l->buf) - 1)
			l->len = 0;
	}
	return l->done;
}

void sr_launch_cancel(struct sr_launch *l)
{
	sr_closep(&l->fd);
	l->fd = -1;
}
