/* SPDX-License-Identifier: MIT */
/*
 * The caller's terminal, as it was before the run.
 *
 * The agent's stdin, stdout and stderr are the caller's own descriptors:
 * when one is a terminal, what the agent changes on it outlives the run --
 * its settings (raw mode, no echo), the flags of the open file description
 * it shares with the caller's shell (O_NONBLOCK, which a Node.js agent
 * leaves on and which breaks the shell's next read), exclusive mode, the
 * line discipline. The supervisor saves them before the sandbox starts and
 * puts them back once it is gone.
 */
#pragma once

#include <stdbool.h>
#include <termios.h>

struct sr_tty_state {
	struct {
		bool saved;
		bool exclusive;
		int flags;
		int ldisc; /* TIOCGETD's; -1 unknown */
		struct termios tio;
	} fd[3];
};

/* Saves what fds 0-2 that are terminals have; the others are left alone. */
void sr_tty_save(struct sr_tty_state *s);
/*
 * Puts back what sr_tty_save() saw, best effort and never stopped by
 * SIGTTOU: the file flags and the line discipline always, the settings
 * and exclusive mode only where we are still in the terminal's foreground.
 */
void sr_tty_restore(const struct sr_tty_state *s);
