/* SPDX-License-Identifier: MIT */
#include "spawn.h"

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <sched.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

/*
 * In the forked child, so async-signal-safe calls only. The parent-death
 * signal ties the helper to sandbox-run however it dies (pasta has no
 * exit fd). It is set after the helper has joined the sandbox's outer user
 * namespace and taken its ids there (a root caller's host uid changes,
 * which clears it); it survives the exec (the helpers are not set-id) and
 * their dropping capabilities. The signal mask is the
 * supervisor's, which blocks the signals it forwards: not the helper's.
 */
_Noreturn void sr_helper_exec(const struct sr_helper_exec *sp)
{
	sigset_t none;
	int null;

	/*
	 * Into the sandbox's outer user namespace as its uid 0: the caller, or
	 * for a root caller the unprivileged id the sandbox maps (userns.h).
	 * The helper's capabilities then apply to the sandbox's namespaces
	 * only, never to the host's. Root's groups go; an unprivileged caller
	 * cannot drop its own (setgroups is denied there).
	 */
	if (setns(sp->userns, CLONE_NEWUSER) < 0 ||
	    (setgroups(0, NULL) < 0 && (sp->caller_is_root || errno != EPERM)) ||
	    setresgid(0, 0, 0) < 0 || setresuid(0, 0, 0) < 0)
		_exit(127);
	/* After the id change, which would clear it. */
	if (prctl(PR_SET_PDEATHSIG, SIGKILL) < 0 || getppid() != sp->parent)
		_exit(127);
	/*
	 * A process group of its own: a terminal's ^C, ^Z or hang-up goes to
	 * sandbox-run's group, and sandbox-run passes it on to the agent; it
	 * must not end the agent's network. The death signal above still ties
	 * the helper to sandbox-run.
	 */
	if (setpgid(0, 0) < 0)
		_exit(127);
	sigemptyset(&none);
	null = open("/dev/null", O_RDWR | O_CLOEXEC);
	if (null < 0 || sigprocmask(SIG_SETMASK, &none, NULL) < 0)
		_exit(127);
	/* Its chatter would land in the agent's stderr; -vv shows it. */
	if (dup2(null, 0) < 0 || dup2(null, 1) < 0 || (!sp->show_stderr && dup2(null, 2) < 0))
		_exit(127);
	/*
	 * Shown, its stderr may be the terminal, to which its own process
	 * group is in the background: with `stty tostop` its first write
	 * would stop it (SIGTTOU), the sandbox's network with it; or a pipe
	 * whose reader has gone (`2>&1 | head`), whose SIGPIPE would end it
	 * where the helper does not ignore it itself. Ignored, the signal is
	 * not sent (and stays ignored across the exec): the write goes
	 * through, or fails with EPIPE, and the helper goes on.
	 */
	if (sp->show_stderr &&
	    (sigaction(SIGTTOU, &(struct sigaction){.sa_handler = SIG_IGN}, NULL) < 0 ||
	     (sp->ignore_sigpipe &&
	      sigaction(SIGPIPE, &(struct sigaction){.sa_handler = SIG_IGN}, NULL) < 0)))
		_exit(127);
	for (int i = 0; i < 3; i++)
		if (sp->fds[i] >= 0 ? dup2(sp->fds[i], 3 + i) < 0
				    : close(3 + i) < 0 && errno != EBADF)
			_exit(127);
	if (syscall(SYS_close_range, 6, ~0U, 0) < 0)
		_exit(127);
	/*
	 * An empty environment: the caller's may hold credentials, and the
	 * helper parses the agent's packets. Neither helper needs one (pasta
	 * reads only $SHELL, to spawn a shell, which --netns never does).
	 */
	execve(sp->path, (char *const *)sp->argv, (char *const[]){NULL});
	_exit(127);
}
