/* SPDX-License-Identifier: MIT */
/*
 * The caller's stdio, as a process in a sandbox gets it (run, exec).
 *
 * A pipe, /dev/null and other devices: passed to a run (PID 1 gets the
 * fd; nothing is copied), whose every process ends with it. A pipe goes
 * under an open file description of its own, the same pipe reopened
 * through /proc/self/fd with the caller's access mode and status flags:
 * the flags the process sets (O_NONBLOCK) are a description's, and on
 * the caller's they would stay after the run, for the next step of its
 * pipeline to meet EAGAIN. One that cannot be reopened so (another
 * user's: its inode is its maker's, 0600) is relayed; one with no reader
 * left (ENXIO) is passed as it is, its writes failing (EPIPE) as they
 * would. A living sandbox's process (SR_STDIO_RELAY_ALL, exec) gets only
 * /dev/null so: one left running there -- a background child, or another
 * exec's, which can take any fd of the same uid's processes with
 * pidfd_getfd(2) -- would keep writing to the caller's pipeline or
 * reading its input after the exec returned. There everything else is
 * relayed through a pipe of ours, which is closed when the exec ends.
 * Three kinds are never passed, since the process could use them against
 * the caller:
 *
 * - a regular file: the process could reopen it through /proc/self/fd,
 *   an inode of the caller's (unprivileged, its own uid), and chmod it
 *   (make it a set-uid program of the caller's), truncate it, rewrite it.
 *   It gets a pipe instead, and this side moves the bytes (splice(2):
 *   no copy through user space where the kernel can do it);
 * - a socket (a Unix socketpair from Node's spawn(), a journald stream):
 *   it is of the caller's network namespace, and the process would work
 *   there through it -- list the host's interfaces, addresses and MACs
 *   (SIOCGIFCONF, SIOCGIFHWADDR) where --net none has only lo, bind it to
 *   an abstract name and so take that name in the host's namespace. It
 *   gets a pipe, as a file does, moved with MSG_DONTWAIT (splice(2) into
 *   a socket waits for room whatever its flags, and a reader that stops
 *   would hold the timeout); the caller's end of input (a half-close)
 *   ends the process's, and its reader sees EOF once we are gone, as
 *   before. Stdout and stderr one socket (2>&1) get one pipe, so that
 *   their lines keep their order and stay whole. A listening socket (and
 *   an O_PATH fd, which names its file) is not relayed but ended: EOF to
 *   read, EPIPE to write. A relay's reader slower than the process is
 *   waited for at the end, as the process would have waited writing to
 *   it (sr_stdio_finish()); what it was not given time to take (the
 *   deadline, a signal, a timeout) is counted, for the caller to say;
 * - a terminal: the process would hold the caller's terminal, and read
 *   what the user types into the shell once the run is in the background
 *   (it has no controlling terminal, so no SIGTTIN stops it). It gets a
 *   new pty of the sandbox's own instead, sized as the terminal, and this
 *   side relays it -- reading the terminal only while in the foreground,
 *   as any job does. The terminal is set raw while we are in the
 *   foreground, but for its signals when keep_signals: ^C and ^Z stay
 *   the caller's job control (run), else they go to the pty (exec -t).
 */
#pragma once

#include "log.h"

#include <poll.h>
#include <stdbool.h>
#include <stdint.h>
#include <termios.h>

/* Why sr_stdio_finish() gave up on output it had not delivered. */
enum sr_stdio_cut {
	SR_STDIO_CUT_NONE,
	SR_STDIO_CUT_DEADLINE, /* the timer (the run's deadline) came first */
	SR_STDIO_CUT_SIGNAL,   /* a signal that ends a process came first */
	SR_STDIO_CUT_IDLE,     /* the reader took nothing for wait_ms (after a timeout) */
	_SR_STDIO_CUT_MAX,
};

struct sr_stdio {
	unsigned pty_mask;	   /* SR_SPAWN_PTY_* of the fds that get the pty */
	int pass[3];		   /* what the process gets for the others */
	bool own[3];		   /* pass[i] is ours: closed once the process has it */
	unsigned short rows, cols; /* the terminal's size, for the pty */
	int master;		   /* the pty's master, once spawned; -1 */
	int term_in;		   /* the caller's terminal to read, when stdin is one; -1 */
	int term_out;		   /* the caller's terminal the pty's output goes to; -1 */
	bool keep_signals;
	bool raw;
	bool master_open, term_in_open;
	struct termios saved;
	struct sr_stdio_file {
		int pipe;   /* our end: the writer for stdin, the reader for stdout/stderr */
		int caller; /* the caller's file */
		bool open;
		bool splice; /* false once splice(2) refused the file (O_APPEND) */
		bool socket; /* moved by recv/send through buf (move_socket()) */
		/* What was read has not all been taken: the destination is full, wait for room. */
		bool full;
		int error;	/* stdout, stderr: errno of a failed write to the caller's file */
		size_t dropped; /* stdout, stderr: bytes read from the process, never delivered */
		char *buf;	/* a socket's: what the destination has not taken yet, len bytes */
		size_t len;
	} files[3];
	char buf[16384]; /* the pty's relay */
	size_t in_len, out_len;
	char in_buf[4096];
	/*
	 * The end of a stdin that is no terminal, typed into the pty as its
	 * EOF character: whether the pty was canonical then, and how many
	 * times it was typed again since (from_pty()); whether it ended in a
	 * line that no reader of a raw pty has been given an Enter for.
	 */
	bool eof_typed, eof_canonical, eof_line_open;
	unsigned eof_retyped;
	char typed_last;       /* the last byte of it typed in; 0: none yet */
	enum sr_stdio_cut cut; /* why the relays gave up with bytes undelivered (dropped) */
	int idle_ms;	       /* for SR_STDIO_CUT_IDLE: how long the reader took none */
};

enum {
	SR_STDIO_INPUT = 1 << 0,	/* the pty's input comes from fds[0] */
	SR_STDIO_FORCE_PTY = 1 << 1,	/* all three get the pty, as exec -t has it */
	SR_STDIO_KEEP_SIGNALS = 1 << 2, /* ^C, ^Z, ^\ stay the caller's job control */
	SR_STDIO_RELAY_ALL = 1 << 3,	/* relay pipes and devices too (a living sandbox) */
};

/*
 * Looks at the process's stdin, stdout, stderr to be (fds): terminals get
 * the pty, regular files and sockets (and with SR_STDIO_RELAY_ALL
 * everything but /dev/null) a pipe, pipes a description of their own.
 * flags: SR_STDIO_*. 0 or -errno (err).
 */
int sr_stdio_prepare(struct sr_stdio *s, const int fds[3], unsigned flags, struct sr_error *err);
/* After the spawn: the pty's master (-1 if none); our copies of what was passed go. */
void sr_stdio_started(struct sr_stdio *s, int master);
/* Adds what to poll (at most SR_STDIO_POLL_FDS entries at fds); returns how many. */
#define SR_STDIO_POLL_FDS 6
size_t sr_stdio_poll_fds(struct sr_stdio *s, struct pollfd *fds);
/* Moves what is there, after poll (fds as sr_stdio_poll_fds filled them, n of them). */
void sr_stdio_dispatch(struct sr_stdio *s, const struct pollfd *fds, size_t n);
/*
 * What the process wrote that could not be written to the caller's
 * stdout or stderr (a full disk, an I/O error), whose relay then ended:
 * its errno, and which fd in *ret_fd; 0 if none. A reader that went away
 * (EPIPE) is none: the process gets its SIGPIPE, as in any pipeline.
 */
int sr_stdio_write_error(const struct sr_stdio *s, int *ret_fd);
/* SIGWINCH: the terminal's size to the pty (true if there is a pty to take it). */
bool sr_stdio_winch(struct sr_stdio *s);
/*
 * A stop signal, once passed on: we stop too, as its default action
 * would have stopped us, so that the shell sees its job stopped (sig is
 * blocked: raised, it is taken when unblocked; SIGCONT resumes us there),
 * the terminal put back meanwhile.
 */
void sr_stdio_stop_as(struct sr_stdio *s, int sig);
/* Stopped (false) or continued (true): the terminal's settings follow. */
void sr_stdio_foreground(struct sr_stdio *s, bool fg);
/*
 * The process has ended: what it wrote is moved out (until its end, or
 * wait_ms without anything new where something else may still hold it),
 * the terminal restored, everything closed. A caller's reader that is
 * slow is waited for, as the process itself would have waited writing
 * to it, until timer (a timerfd: the run's deadline) is readable or
 * sigfd (a signalfd) has a signal that ends a process, which is left
 * pending; -1 for none (with neither, wait_ms). Output then left untaken
 * (read from the process, in our pipe or buffer) is counted in each
 * file's dropped, and why in cut: sr_stdio_dropped_text() says it.
 */
void sr_stdio_finish(struct sr_stdio *s, int wait_ms, int timer, int sigfd);
/* The bytes of stdout and stderr sr_stdio_finish() gave up on (0: all delivered). */
uint64_t sr_stdio_dropped(const struct sr_stdio *s);
/*
 * One line for the caller to warn with, into buf: "65536 bytes of the
 * agent's stdout not delivered: the reader took none for 100 ms after the
 * timeout" (who: "agent", "command"). false (buf empty) if none were.
 */
bool sr_stdio_dropped_text(const struct sr_stdio *s, const char *who, char *buf, size_t len);
