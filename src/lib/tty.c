/* SPDX-License-Identifier: MIT */
#include "tty.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <unistd.h>

void sr_tty_save(struct sr_tty_state *s)
{
	for (int fd = 0; fd < 3; fd++) {
		int excl = 0;

		/* tcgetattr() is isatty()'s own test: ENOTTY on anything else. */
		s->fd[fd].saved = false;
		if (tcgetattr(fd, &s->fd[fd].tio) < 0)
			continue;
		s->fd[fd].flags = fcntl(fd, F_GETFL);
		if (s->fd[fd].flags < 0)
			continue;
#ifdef TIOCGEXCL
		(void)ioctl(fd, TIOCGEXCL, &excl);
#endif
		s->fd[fd].exclusive = excl != 0;
		if (ioctl(fd, TIOCGETD, &s->fd[fd].ldisc) < 0)
			s->fd[fd].ldisc = -1;
		s->fd[fd].saved = true;
	}
}

/*
 * Another line discipline on the caller's terminal outlives the run and
 * leaves it dead to the shell (N_NULL discards everything), or turns it
 * into a network or radio interface (SLIP, PPP, CAN, HCI) -- each loaded
 * as a kernel module on demand where dev.tty.ldisc_autoload is 1. The
 * filter refuses TIOCSETD to the agent (seccomp-rules.c); whatever else
 * changed it meanwhile, it is put back, foreground or not: no job of the
 * caller's shell changes a terminal's discipline (a serial line's
 * daemon does, on its own line). Setting it again also flushes what the
 * old one had buffered, so only a change is undone.
 */
static void restore_ldisc(int fd, int ldisc)
{
	int now;

	if (ldisc < 0 || ioctl(fd, TIOCGETD, &now) < 0 || now == ldisc)
		return;
	(void)ioctl(fd, TIOCSETD, &ldisc);
}

void sr_tty_restore(const struct sr_tty_state *s)
{
	sigset_t ttou, old;

	/* Where we are not in the foreground, tcsetattr() would stop us: blocked, it cannot. */
	sigemptyset(&ttou);
	sigaddset(&ttou, SIGTTOU);
	sigprocmask(SIG_BLOCK, &ttou, &old);
	for (int fd = 0; fd < 3; fd++) {
		pid_t fg;

		if (!s->fd[fd].saved)
			continue;
		(void)fcntl(fd, F_SETFL, s->fd[fd].flags);
		restore_ldisc(fd, s->fd[fd].ldisc);
		/*
		 * Put in the background meanwhile, the terminal is another job's
		 * now: its settings are that job's (an editor's raw mode), not
		 * ours to overwrite.
		 */
		fg = tcgetpgrp(fd);
		if (fg >= 0 && fg != getpgrp())
			continue;
		(void)tcsetattr(fd, TCSANOW, &s->fd[fd].tio);
		if (!s->fd[fd].exclusive)
			(void)ioctl(fd, TIOCNXCL);
	}
	sigprocmask(SIG_SETMASK, &old, NULL);
}
