/* SPDX-License-Identifier: MIT */
#include "stdio-relay.h"
#include "protocol.h"
#include "util.h"

#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#define SPLICE_CHUNK (64 * 1024)

static void close_fd(int *fd)
{
	if (*fd >= 0)
		close(*fd);
	*fd = -1;
}

static void nonblock(int fd)
{
	int fl = fcntl(fd, F_GETFL);

	if (fl >= 0)
		(void)fcntl(fd, F_SETFL, fl | O_NONBLOCK);
}

/* How the process gets one of the caller's fds (stdio-relay.h). */
enum way {
	WAY_PASS,   /* the fd itself */
	WAY_REOPEN, /* a pipe: the same pipe, a new open file description */
	WAY_RELAY,  /* a pipe of ours, relayed */
	WAY_ENDED,  /* a pipe of ours, ended: EOF to read, EPIPE to write */
	WAY_MAX,
};

static bool listening(int fd)
{
	int on = 0;
	socklen_t len = sizeof(on);

	return getsockopt(fd, SOL_SOCKET, SO_ACCEPTCONN, &on, &len) == 0 && on;
}

static enum way way_of(int fd, const struct stat *st, unsigned flags)
{
	int fl = fcntl(fd, F_GETFL);

	/*
	 * An O_PATH fd reads and writes nothing, but names its file (a
	 * socket's path, /proc/self/fd/N, connects to it past the sandbox's
	 * mounts); a listening socket has nothing to read until someone
	 * connects, and in the process's hands would take the host's
	 * connections.
	 */
	if ((fl >= 0 && (fl & O_PATH)) || (S_ISSOCK(st->st_mode) && listening(fd)))
		return WAY_ENDED;
	if (S_ISREG(st->st_mode) || S_ISSOCK(st->st_mode))
		return WAY_RELAY;
	/* /dev/null: nothing to keep, nothing to read. */
	if (flags & SR_STDIO_RELAY_ALL)
		return S_ISCHR(st->st_mode) && st->st_rdev == makedev(1, 3) ? WAY_PASS : WAY_RELAY;
	return S_ISFIFO(st->st_mode) ? WAY_REOPEN : WAY_PASS;
}

/*
 * The caller's pipe under an open file description of its own, with the
 * caller's access mode and status flags: the flags the process sets
 * (O_NONBLOCK) are a description's, and on the caller's they would stay
 * for the next step of its pipeline, which then meets EAGAIN. O_NONBLOCK
 * for the open itself: a FIFO's write side opened blocking waits for a
 * reader. The new fd, or -errno: -ENXIO for a write side with no reader
 * left, -EACCES for another user's pipe (a pipe's inode is its maker's,
 * 0600).
 */
static int reopen_pipe(int fd)
{
	char path[sizeof("/proc/self/fd/") + 3 * sizeof(int)];
	int fl = fcntl(fd, F_GETFL), r;

	if (fl < 0)
		return sr_negerrno();
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	r = open(path, (fl & O_ACCMODE) | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	if (r < 0)
		return sr_negerrno();
	if (fcntl(r, F_SETFL, fl) < 0) {
		int e = sr_negerrno();

		close(r);
		return e;
	}
	return r;
}

static int relay(struct sr_stdio *s, int i, int fd, enum way way, const struct stat *st,
		 struct sr_error *err)
{
	struct sr_stdio_file *f = &s->files[i];
	int p[2];

	if (pipe2(p, O_CLOEXEC) < 0)
		return sr_error_errno(err, sr_negerrno(), "stdio: pipe");
	/* For stdin we write the file into the pipe; for stdout/stderr we read the pipe out. */
	s->pass[i] = i == 0 ? p[0] : p[1];
	s->own[i] = true;
	if (way == WAY_ENDED) {
		close(i == 0 ? p[1] : p[0]);
		return 0;
	}
	f->pipe = i == 0 ? p[1] : p[0];
	f->caller = fd;
	f->open = true;
	f->splice = true;
	nonblock(f->pipe);
	/* A socket is written and read by us with MSG_DONTWAIT, through buf (move_socket()). */
	f->socket = S_ISSOCK(st->st_mode);
	if (f->socket && !(f->buf = malloc(SPLICE_CHUNK)))
		return sr_error_errno(err, -ENOMEM, "stdio");
	return 0;
}

/* Each fd that is no terminal: as it is, reopened, or relayed (way_of()). */
static int pass_or_relay(struct sr_stdio *s, const int fds[3], unsigned flags, struct sr_error *err)
{
	struct stat st[3];

	for (int i = 0; i < 3; i++) {
		enum way way;
		int r;

		if ((s->pty_mask & (SR_SPAWN_PTY_STDIN << i)) || fstat(fds[i], &st[i]) < 0)
			continue; /* a pty's, or not open: the process gets a closed fd too */
		/*
		 * 2>&1: stderr gets what stdout got, so that one socket's
		 * lines (journald's, a service's) keep their order and stay
		 * whole; one pipe keeps its one description.
		 */
		if (i == 2 && s->own[1] && st[2].st_dev == st[1].st_dev &&
		    st[2].st_ino == st[1].st_ino && !S_ISREG(st[2].st_mode)) {
			s->pass[2] = s->pass[1];
			continue;
		}
		way = way_of(fds[i], &st[i], flags);
		if (way == WAY_REOPEN) {
			r = reopen_pipe(fds[i]);
			if (r >= 0) {
				s->pass[i] = r;
				s->own[i] = true;
				continue;
			}
			/* A FIFO with no reader left: its writes fail as they would (EPIPE). */
			if (r == -ENXIO)
				continue;
			way = WAY_RELAY;
		}
		if (way != WAY_PASS && (r = relay(s, i, fds[i], way, &st[i], err)) < 0)
			return r;
	}
	return 0;
}

int sr_stdio_prepare(struct sr_stdio *s, const int fds[3], unsigned flags, struct sr_error *err)
{
	static const unsigned bit[3] = {SR_SPAWN_PTY_STDIN, SR_SPAWN_PTY_STDOUT,
					SR_SPAWN_PTY_STDERR};
	bool tty[3];
	int r;

	*s = (struct sr_stdio){.master = -1,
			       .term_in = -1,
			       .term_out = -1,
			       .keep_signals = flags & SR_STDIO_KEEP_SIGNALS};
	for (int i = 0; i < 3; i++) {
		s->pass[i] = fds[i];
		s->files[i].pipe = -1;
		tty[i] = isatty(fds[i]);
		if ((flags & SR_STDIO_FORCE_PTY) || tty[i])
			s->pty_mask |= bit[i];
	}
	if ((r = pass_or_relay(s, fds, flags, err)) < 0)
		return r;
	if (!s->pty_mask)
		return 0;
	if ((flags & SR_STDIO_INPUT) && (s->pty_mask & SR_SPAWN_PTY_STDIN))
		s->term_in = fds[0];
	for (int i = 1; i < 4 && s->term_out < 0; i++)
		if (s->pty_mask & bit[i % 3])
			s->term_out = fds[i % 3];
	for (int i = 0; i < 3; i++) {
		struct winsize ws;

		if (tty[i] && ioctl(fds[i], TIOCGWINSZ, &ws) == 0 && ws.ws_row && ws.ws_col) {
			s->rows = ws.ws_row;
			s->cols = ws.ws_col;
			break;
		}
	}
	return 0;
}

static bool in_foreground(int fd)
{
	return tcgetpgrp(fd) == getpgrp();
}

/*
 * Raw while the pty has the terminal: its line discipline (inside) edits,
 * echoes and turns ^C into signals -- unless the caller's job control
 * keeps ^C, ^Z, ^\ here (keep_signals), to reach the process through us.
 */
static void set_raw(struct sr_stdio *s)
{
	struct termios t;

	if (s->raw || s->term_in < 0 || !isatty(s->term_in) || !in_foreground(s->term_in) ||
	    tcgetattr(s->term_in, &s->saved) < 0)
		return;
	t = s->saved;
	cfmakeraw(&t);
	if (s->keep_signals)
		t.c_lflag |= ISIG;
	if (tcsetattr(s->term_in, TCSADRAIN, &t) == 0)
		s->raw = true;
}

static void unset_raw(struct sr_stdio *s)
{
	if (s->raw)
		(void)tcsetattr(s->term_in, TCSADRAIN, &s->saved);
	s->raw = false;
}

/* Our copies of what the process was given. */
static void close_passed(struct sr_stdio *s)
{
	for (int i = 0; i < 3; i++)
		if (s->own[i])
			close_fd(&s->pass[i]);
	memset(s->own, 0, sizeof(s->own));
}

void sr_stdio_started(struct sr_stdio *s, int master)
{
	close_passed(s);
	s->master = master;
	if (master < 0)
		return;
	nonblock(master);
	s->master_open = true;
	s->term_in_open = s->term_in >= 0;
	set_raw(s);
}

void sr_stdio_foreground(struct sr_stdio *s, bool fg)
{
	if (fg)
		set_raw(s);
	else
		unset_raw(s);
}

bool sr_stdio_winch(struct sr_stdio *s)
{
	struct winsize ws;
	int from = s->term_out >= 0 ? s->term_out : s->term_in;

	if (s->master < 0)
		return false;
	if (from >= 0 && ioctl(from, TIOCGWINSZ, &ws) == 0)
		(void)ioctl(s->master, TIOCSWINSZ, &ws);
	return true;
}

size_t sr_stdio_poll_fds(struct sr_stdio *s, struct pollfd *fds)
{
	size_t n = 0;

	/* The terminal is read only in the foreground, as any job reads it. */
	if (s->term_in_open && s->in_len == 0 && (!isatty(s->term_in) || in_foreground(s->term_in)))
		fds[n++] = (struct pollfd){.fd = s->term_in, .events = POLLIN};
	if (s->master_open)
		fds[n++] = (struct pollfd){
		    .fd = s->master,
		    .events = (short)((s->out_len == 0 ? POLLIN : 0) | (s->in_len ? POLLOUT : 0))};
	if (s->out_len && s->term_out >= 0)
		fds[n++] = (struct pollfd){.fd = s->term_out, .events = POLLOUT};
	/*
	 * A relay waits for its source to have something, or, when the last
	 * move found the destination full, for the destination to take more
	 * (the caller's pipe may be full as well as ours).
	 */
	for (int i = 0; i < 3; i++) {
		int src = i == 0 ? s->files[i].caller : s->files[i].pipe;
		int dst = i == 0 ? s->files[i].pipe : s->files[i].caller;

		if (s->files[i].open)
			fds[n++] = s->files[i].full ? (struct pollfd){.fd = dst, .events = POLLOUT}
						    : (struct pollfd){.fd = src, .events = POLLIN};
	}
	return n;
}

/* Whether a write's errno says its reader has gone (a pipe's, a socket's peer). */
static bool reader_gone(int e)
{
	return e == EPIPE || e == ECONNRESET || e == ENOTCONN || e == ESHUTDOWN;
}

/* A relay is over (n: its last move's, 0 for its source's end; errno). */
static void relay_ended(struct sr_stdio *s, int i, ssize_t n)
{
	/* Out, a failure is the caller's file's: our pipe gives EOF, not errors. */
	if (n < 0 && i > 0 && !reader_gone(errno) && !s->files[i].error)
		s->files[i].error = errno;
	s->files[i].open = false;
	close_fd(&s->files[i].pipe);
}

/*
 * One move of a socket's relay. The caller's socket never makes us wait:
 * each call says MSG_DONTWAIT, its O_NONBLOCK being the caller's to set
 * (splice(2) into a socket waits for room whatever SPLICE_F_NONBLOCK
 * says, and a reader that stops would hold this loop, the timeout and the
 * signals with it). What the destination did not take stays in buf, and
 * the relay waits for its room (full).
 */
static bool move_socket(struct sr_stdio *s, int i)
{
	struct sr_stdio_file *f = &s->files[i];
	ssize_t n;

	if (f->len == 0) {
		n = i == 0 ? recv(f->caller, f->buf, SPLICE_CHUNK, MSG_DONTWAIT)
			   : read(f->pipe, f->buf, SPLICE_CHUNK);
		if (n < 0 && (errno == EAGAIN || errno == EINTR))
			return true;
		if (n <= 0) {
			relay_ended(s, i, n);
			return false;
		}
		f->len = (size_t)n;
	}
	n = i == 0 ? write(f->pipe, f->buf, f->len)
		   : send(f->caller, f->buf, f->len, MSG_DONTWAIT | MSG_NOSIGNAL);
	if (n < 0 && errno != EAGAIN && errno != EINTR) {
		relay_ended(s, i, n);
		return false;
	}
	if (n > 0) {
		memmove(f->buf, f->buf + n, f->len - (size_t)n);
		f->len -= (size_t)n;
	}
	f->full = f->len > 0;
	return true;
}

/* One chunk of a file relay; false once that relay is over. */
static bool move_file(struct sr_stdio *s, int i)
{
	int src = i == 0 ? s->files[i].caller : s->files[i].pipe;
	int dst = i == 0 ? s->files[i].pipe : s->files[i].caller;
	ssize_t n = -1;

	if (s->files[i].socket)
		return move_socket(s, i);
	if (s->files[i].full) {
		s->files[i].full = false; /* it has room again (polled for POLLOUT) */
		return true;
	}
	if (s->files[i].splice) {
		n = splice(src, NULL, dst, NULL, SPLICE_CHUNK, SPLICE_F_MOVE | SPLICE_F_NONBLOCK);
		/* EINVAL: an O_APPEND file, which splice(2) does not write. */
		if (n < 0 && errno == EINVAL)
			s->files[i].splice = false;
		/* Polled readable, so the destination (a pipe) is the one that is full. */
		if (n < 0 && errno == EAGAIN)
			s->files[i].full = true;
	}
	if (!s->files[i].splice) {
		char buf[SPLICE_CHUNK];

		n = read(src, buf, sizeof(buf));
		if (n > 0 && sr_write_all(dst, buf, (size_t)n) < 0)
			n = -1;
	}
	if (n > 0 || (n < 0 && (errno == EAGAIN || errno == EINTR)))
		return true;
	relay_ended(s, i, n);
	return false;
}

int sr_stdio_write_error(const struct sr_stdio *s, int *ret_fd)
{
	for (int i = 1; i < 3; i++)
		if (s->files[i].error) {
			*ret_fd = i;
			return s->files[i].error;
		}
	return 0;
}

/*
 * Whether c, the last byte typed, leaves the pty's line open (not ended by
 * it). A raw pty's reader (readline) takes a carriage return, what a
 * terminal's Enter sends, for the line's end.
 */
static bool line_open(char c, const struct termios *t)
{
	const cc_t ends[] = {t->c_cc[VEOL], t->c_cc[VEOL2], t->c_cc[VEOF]};
	bool cr_ends = !(t->c_lflag & ICANON) || ((t->c_iflag & ICRNL) && !(t->c_iflag & IGNCR));

	if (c == 0 || c == '\n' || (c == '\r' && cr_ends))
		return false;
	for (size_t i = 0; i < SR_ARRAY_SIZE(ends); i++)
		if (ends[i] != _POSIX_VDISABLE && (cc_t)c == ends[i])
			return false;
	return true;
}

/*
 * The pty's EOF character, into in_buf (empty), for the mode the pty is
 * in now. A raw pty's reader ignores it after a line not ended (readline
 * takes ^D there for delete-char): input with no last newline would then
 * never end. That line is ended first with an Enter, once, as a reader of
 * the same input from a pipe would take its last line.
 */
static void type_eof(struct sr_stdio *s, const struct termios *t)
{
	if (!(t->c_lflag & ICANON) && s->eof_line_open) {
		s->in_buf[s->in_len++] = '\r';
		s->eof_line_open = false;
	}
	s->in_buf[s->in_len++] = (char)t->c_cc[VEOF];
	s->eof_canonical = t->c_lflag & ICANON;
}

static void from_terminal(struct sr_stdio *s)
{
	ssize_t n = read(s->term_in, s->in_buf, sizeof(s->in_buf));
	struct termios t;

	if (n > 0) {
		s->in_len = (size_t)n;
		s->typed_last = s->in_buf[n - 1];
		return;
	}
	if (n < 0 && (errno == EAGAIN || errno == EINTR || errno == EIO))
		return;
	s->term_in_open = false; /* EOF: nothing more to type in */
	/*
	 * A file or a pipe that exec -t gives a pty (a script's, CI's): its
	 * end is typed as the pty's EOF character, as script(1) does, so that
	 * what reads the pty (a shell, cat) sees it end; else it would wait
	 * for input that never comes, until the sandbox's deadline. A
	 * terminal's own ^D comes as a byte, never as this end.
	 */
	if (n == 0 && !isatty(s->term_in) && s->master >= 0 && tcgetattr(s->master, &t) == 0 &&
	    t.c_cc[VEOF] != _POSIX_VDISABLE) {
		s->eof_line_open = line_open(s->typed_last, &t);
		s->in_len = 0;
		type_eof(s, &t);
		/*
		 * A canonical pty's EOF character after a line not ended (input
		 * with no last newline) only hands that line to the reader, as a
		 * first ^D does at a terminal: the second ends the input.
		 */
		if ((t.c_lflag & ICANON) && s->eof_line_open)
			s->in_buf[s->in_len++] = (char)t.c_cc[VEOF];
		s->eof_typed = true;
	}
}

/*
 * The EOF character typed while the pty was canonical and not yet read
 * stays in its line discipline as a 0 byte once a program switches it to
 * raw: bash's readline, which sets the pty raw only when it first reads,
 * then reads a ^@ and waits on. So when the program has switched the
 * pty's mode since, and says something (readline its prompt, after the
 * switch), the EOF character is typed again, in the new mode (after an
 * Enter for a line not ended: type_eof()): a byte
 * that readline takes for ^D. A few times at most, for a program that
 * keeps switching.
 */
#define EOF_RETYPES 4

static void retype_eof(struct sr_stdio *s)
{
	struct termios t;

	if (!s->eof_typed || s->in_len || s->eof_retyped >= EOF_RETYPES ||
	    tcgetattr(s->master, &t) < 0 || (bool)(t.c_lflag & ICANON) == s->eof_canonical ||
	    t.c_cc[VEOF] == _POSIX_VDISABLE)
		return;
	type_eof(s, &t);
	s->eof_retyped++;
}

static void to_pty(struct sr_stdio *s)
{
	ssize_t n = write(s->master, s->in_buf, s->in_len);

	if (n > 0) {
		memmove(s->in_buf, s->in_buf + n, s->in_len - (size_t)n);
		s->in_len -= (size_t)n;
	}
}

/* EIO from the master: every holder of the slave has closed it. */
static void from_pty(struct sr_stdio *s)
{
	ssize_t n = read(s->master, s->buf, sizeof(s->buf));

	if (n > 0) {
		s->out_len = (size_t)n;
		retype_eof(s);
	} else if (n == 0 || (errno != EAGAIN && errno != EINTR))
		s->master_open = false;
}

static void to_terminal(struct sr_stdio *s)
{
	if (s->term_out < 0 || sr_write_all(s->term_out, s->buf, s->out_len) < 0) {
		s->out_len = 0;
		return;
	}
	s->out_len = 0;
}

void sr_stdio_dispatch(struct sr_stdio *s, const struct pollfd *fds, size_t n)
{
	for (size_t k = 0; k < n; k++) {
		if (!fds[k].revents)
			continue;
		if (fds[k].fd == s->term_in && s->term_in_open && s->in_len == 0)
			from_terminal(s);
		if (fds[k].fd == s->master && s->master_open) {
			if ((fds[k].revents & (POLLIN | POLLHUP | POLLERR)) && s->out_len == 0)
				from_pty(s);
			if ((fds[k].revents & POLLOUT) && s->in_len)
				to_pty(s);
		}
		for (int i = 0; i < 3; i++)
			if (s->files[i].open &&
			    (fds[k].fd == s->files[i].pipe || fds[k].fd == s->files[i].caller))
				move_file(s, i);
	}
	/* A terminal takes what the pty said at once (it is written whole, blocking). */
	if (s->out_len)
		to_terminal(s);
	if (s->in_len && s->master_open)
		to_pty(s);
}

/* Whether output was read that its destination has not taken yet (it waits for room). */
static bool output_waits(const struct sr_stdio *s)
{
	return (s->files[1].open && s->files[1].full) || (s->files[2].open && s->files[2].full);
}

/*
 * Whether a signal that ends a process (^C, SIGTERM, a hang-up, ^\) is
 * pending: it is left so, for the caller to be ended by once its mask is
 * restored, as it would have been with the process still writing. Others
 * on sigfd (a signalfd: SIGCHLD, a resize, SIGCONT) are read and the wait
 * goes on.
 */
static bool signalled(int sigfd)
{
	static const int ending[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT};
	struct signalfd_siginfo si;
	sigset_t pending;

	if (sigpending(&pending) == 0)
		for (size_t k = 0; k < SR_ARRAY_SIZE(ending); k++)
			if (sigismember(&pending, ending[k]) == 1)
				return true;
	while (read(sigfd, &si, sizeof(si)) == (ssize_t)sizeof(si))
		;
	return false;
}

/*
 * What was read from the process and not delivered when the relays give
 * up (why): a socket's buffer and what is still in our pipe.
 */
static void count_dropped(struct sr_stdio *s, enum sr_stdio_cut why, int wait_ms)
{
	for (int i = 1; i < 3; i++) {
		struct sr_stdio_file *f = &s->files[i];
		int queued = 0;

		if (!f->open)
			continue;
		if (ioctl(f->pipe, FIONREAD, &queued) < 0 || queued < 0)
			queued = 0;
		f->dropped += f->len + (size_t)queued;
	}
	if (sr_stdio_dropped(s) && s->cut == SR_STDIO_CUT_NONE) {
		s->cut = why;
		s->idle_ms = wait_ms;
	}
}

void sr_stdio_finish(struct sr_stdio *s, int wait_ms, int timer, int sigfd)
{
	enum sr_stdio_cut why = SR_STDIO_CUT_IDLE;

	/* Nobody reads stdin any more. */
	s->files[0].open = false;
	close_fd(&s->files[0].pipe);
	s->term_in_open = false;
	for (;;) {
		struct pollfd fds[SR_STDIO_POLL_FDS + 2];
		size_t n = sr_stdio_poll_fds(s, fds), m = n;
		bool waits = output_waits(s) && (timer >= 0 || sigfd >= 0);
		int r;

		if (n == 0)
			break;
		if (waits && timer >= 0)
			fds[m++] = (struct pollfd){.fd = timer, .events = POLLIN};
		if (waits && sigfd >= 0)
			fds[m++] = (struct pollfd){.fd = sigfd, .events = POLLIN};
		r = poll(fds, m, waits ? -1 : wait_ms);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		if (waits && timer >= 0 && fds[n].revents) {
			why = SR_STDIO_CUT_DEADLINE;
			break;
		}
		if (waits && sigfd >= 0 && fds[m - 1].revents && signalled(sigfd)) {
			why = SR_STDIO_CUT_SIGNAL;
			break;
		}
		sr_stdio_dispatch(s, fds, n);
	}
	count_dropped(s, why, wait_ms);
	unset_raw(s);
	close_passed(s);
	for (int i = 0; i < 3; i++) {
		close_fd(&s->files[i].pipe);
		s->files[i].open = false;
		free(s->files[i].buf);
		s->files[i].buf = NULL;
		s->files[i].len = 0;
	}
	close_fd(&s->master);
	s->master_open = false;
}

uint64_t sr_stdio_dropped(const struct sr_stdio *s)
{
	return (uint64_t)s->files[1].dropped + s->files[2].dropped;
}

bool sr_stdio_dropped_text(const struct sr_stdio *s, const char *who, char *buf, size_t len)
{
	const struct sr_stdio_file *out = &s->files[1], *err = &s->files[2];
	char why[80];
	int n;

	buf[0] = '\0';
	if (!sr_stdio_dropped(s))
		return false;
	switch (s->cut) {
	case SR_STDIO_CUT_DEADLINE:
		snprintf(why, sizeof(why), "the deadline came before the reader took them");
		break;
	case SR_STDIO_CUT_SIGNAL:
		snprintf(why, sizeof(why), "a signal ended the wait for the reader");
		break;
	default:
		snprintf(why, sizeof(why), "the reader took none for %d ms after the timeout",
			 s->idle_ms);
		break;
	}
	if (out->dropped && err->dropped)
		n = snprintf(buf, len, "%zu bytes of the %s's stdout and %zu of its stderr",
			     out->dropped, who, err->dropped);
	else
		n = snprintf(buf, len, "%zu bytes of the %s's %s", out->dropped + err->dropped, who,
			     out->dropped ? "stdout" : "stderr");
	if (n > 0 && (size_t)n < len)
		snprintf(buf + n, len - (size_t)n, " not delivered: %s", why);
	return true;
}

void sr_stdio_stop_as(struct sr_stdio *s, int sig)
{
	sigset_t one;

	/* The terminal as the shell expects it while we are stopped, ours again after. */
	unset_raw(s);
	sigemptyset(&one);
	sigaddset(&one, sig);
	raise(sig);
	sigprocmask(SIG_UNBLOCK, &one, NULL);
	sigprocmask(SIG_BLOCK, &one, NULL);
	set_raw(s);
}
