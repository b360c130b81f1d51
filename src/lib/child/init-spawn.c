/* SPDX-License-Identifier: MIT */
/*
 * How PID 1 starts a process it is asked for (init.c: on_spawn()): a
 * clone that shares its memory until the exec, as posix_spawn() does, or
 * for a parked process a fork that waits for its stdin before the exec.
 * Either way the process is a new session with its stdio in place, and
 * an exec that fails says why.
 */
#include "init-internal.h"
#include "util.h"

#include <fcntl.h>
#include <linux/close_range.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#ifdef SR_SANITIZERS
#include <sanitizer/asan_interface.h>
#endif

/* The code of the spawned child (init_spawn()). */
#if defined(__has_attribute)
#if __has_attribute(no_sanitize_address)
#define SR_SPAWNED __attribute__((no_sanitize_address))
#endif
#endif
#ifndef SR_SPAWNED
#define SR_SPAWNED
#endif

#define SR_DEFAULT_PATH "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

struct exec_failure {
	int code;
	int status;
	char text[512];
};

static const char *env_get(char *const *envp, const char *key)
{
	size_t kl = strlen(key);

	for (size_t i = 0; envp[i]; i++)
		if (strncmp(envp[i], key, kl) == 0 && envp[i][kl] == '=')
			return envp[i] + kl + 1;
	return NULL;
}

/*
 * ENOENT from execve() of a file that is there: its #! interpreter (or
 * an ELF's loader) is not. Found, it cannot be executed: 126, as a
 * shell's "bad interpreter", not 127's "not found".
 */
SR_SPAWNED static int exec_one(const char *file, char *const *argv, char *const *envp, bool *found)
{
	execve(file, argv, envp);
	if (errno == ENOENT && access(file, F_OK) == 0) {
		*found = true;
		errno = ENOENT;
	}
	return errno;
}

/*
 * execvpe() searches the PATH of the caller's environment, not of the one
 * it is given: search the sandbox's PATH ourselves. The error kept is the
 * most telling one, as a shell does: "cannot execute" beats "not found".
 * *found: a file was there whose interpreter is not (exec_one()).
 */
SR_SPAWNED static int exec_path(char *const *argv, char *const *envp, bool *found)
{
	const char *path = env_get(envp, "PATH");
	char buf[4096];
	int saved = ENOENT;

	if (strchr(argv[0], '/'))
		return -exec_one(argv[0], argv, envp, found);
	if (!path)
		path = SR_DEFAULT_PATH;
	while (*path) {
		const char *end = strchrnul(path, ':');
		size_t dl = (size_t)(end - path);

		if (dl == 0)
			dl = 1, path = "."; /* an empty entry is the cwd */
		if (dl + 1 + strlen(argv[0]) < sizeof(buf)) {
			int e;

			memcpy(buf, path, dl);
			buf[dl] = '/';
			strcpy(buf + dl + 1, argv[0]);
			e = exec_one(buf, argv, envp, found);
			if (*found) {
				saved =
				    ENOENT; /* the file to tell of: its interpreter is missing */
				break;
			}
			if (e != ENOENT && e != ENOTDIR)
				saved = e;
		}
		path = *end ? end + 1 : end;
	}
	return -saved;
}

/*
 * The exec of s's command, as spawned and parked processes both make it;
 * back only if it failed: -errno, and *status 127 where the command was
 * not found (126, as it came, where it was found but cannot run).
 */
SR_SPAWNED static int exec_command(const struct spawn *s, int *status)
{
	bool found = false;
	int r = exec_path(s->argv, s->envp, &found);

	if ((r == -ENOENT && !found) || r == -ENOTDIR)
		*status = 127;
	return r;
}

/*
 * How a spawned child that could not exec says why: "what: why", and
 * where a command was not found, where it was looked for. A working
 * directory it could not enter (status 125) is said to be one: as a bare
 * path, "/srv: No such file or directory" read as the command's own.
 */
SR_SPAWNED static void failure_text(char *buf, size_t len, const char *what, int status, int r)
{
	snprintf(buf, len, "%s%s: %s%s", status == 125 ? "working directory " : "", what,
		 strerror(-r),
		 status == 127 ? " (not found on the sandbox's PATH or in the workspace)"
		 : status == 126 && r == -ENOENT
		     ? " (its #! interpreter, or the loader it names, is not in the sandbox)"
		     : "");
}

/*
 * fds in flight (passed with SCM_RIGHTS, not yet received) are counted
 * per host uid, which the sandbox shares with its caller (unprivileged)
 * and the caller's other sandboxes, and the kernel refuses a pass
 * (ETOOMANYREFS) while the count is past the sender's soft RLIMIT_NOFILE.
 * The sandbox's processes get half the caller's hard limit, their soft
 * one the caller's at most that: an agent fills the count to it and 253
 * more (one message's fds, counted after the check) and no further, while
 * PID 1 (init.c: pass_fd()), the keeper and the verbs that pass fds take
 * the whole hard limit as their soft one, and still pass. PID 1 keeps the
 * caller's limits: each process it starts takes its share from them here.
 */
SR_SPAWNED static int limit_files(void)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl) < 0)
		return -errno;
	rl.rlim_max /= 2;
	if (rl.rlim_cur > rl.rlim_max)
		rl.rlim_cur = rl.rlim_max;
	return setrlimit(RLIMIT_NOFILE, &rl) < 0 ? -errno : 0;
}

/*
 * A new session, with the pty (if any) as its controlling terminal, the
 * stdio fds in place, the sandbox's fd limit and the working directory
 * entered; -errno, and what failed and the status it exits with (125)
 * when it was the working directory.
 */
SR_SPAWNED static int enter_session(const struct spawn *s, const char **what, int *status)
{
	int r;

	/*
	 * A new session: the process has no controlling terminal (or the
	 * sandbox's own pty, below), so even a TIOCSTI that got past seccomp
	 * could not push input into the caller's shell (CVE-2017-5226).
	 */
	if (setsid() < 0)
		return -errno;
	if (s->pty >= 0 && ioctl(s->pty, TIOCSCTTY, 0) < 0)
		return -errno;
	for (int i = 0; i < 3; i++)
		if (dup2(s->stdio[i], i) < 0)
			return -errno;
	r = limit_files();
	if (r < 0)
		return r;
	if (s->cwd && chdir(s->cwd) < 0) {
		*what = s->cwd;
		*status = 125;
		return -errno;
	}
	return 0;
}

SR_SPAWNED __attribute__((noreturn)) static void spawned_child(const struct spawn *s)
{
	struct exec_failure f = {.status = 126};
	const char *what = s->argv[0];
	sigset_t none;
	int r = enter_session(s, &what, &f.status);

	if (r < 0)
		goto fail;
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	/* The report pipe is O_CLOEXEC: a successful exec closes it, which is the signal. */
	syscall(SYS_close_range, 3, ~0U, CLOSE_RANGE_CLOEXEC);
	r = exec_command(s, &f.status);
fail:
	f.code = r;
	failure_text(f.text, sizeof(f.text), what, f.status, r);
	(void)!write(s->report_fd, &f, sizeof(f));
	_exit(f.status);
}

SR_SPAWNED static int spawn_entry(void *arg)
{
	spawned_child(arg);
}

/*
 * A parked process (SR_SPAWN_PARK), in a fork of PID 1's: everything a
 * spawned child does before its exec, then a wait for its stdin. Of PID
 * 1's fds it keeps none (the protocol socket, the /proc views' FUSE
 * connections), as a worker keeps none. Signals stay blocked while it
 * waits: only the SIGKILL of the sandbox's end reaches it.
 */
static __attribute__((noreturn)) void parked_child(const struct spawn *s)
{
	struct pollfd in = {.fd = 0, .events = POLLIN};
	struct exec_failure f = {.status = 126};
	const char *what = s->argv[0];
	sigset_t none;
	int r = enter_session(s, &what, &f.status);

	if (r == 0 && syscall(SYS_close_range, 3, ~0U, 0) < 0)
		r = -errno;
	/* POLLHUP too: an empty prompt is a closed stdin. */
	while (r == 0 && poll(&in, 1, -1) < 0)
		if (errno != EINTR)
			r = -errno;
	if (r == 0) {
		sigemptyset(&none);
		sigprocmask(SIG_SETMASK, &none, NULL);
		r = exec_command(s, &f.status);
	}
	failure_text(f.text, sizeof(f.text), what, f.status, r);
	dprintf(2, "sandbox-run: %s\n", f.text);
	_exit(f.status);
}

pid_t init_spawn_parked(struct spawn *s, struct sr_error *err)
{
	pid_t pid = fork();

	if (pid < 0)
		return sr_error_errno(err, sr_negerrno(), "start %s", s->argv[0]);
	if (pid == 0)
		parked_child(s);
	return pid;
}

/*
 * A process is spawned as posix_spawn() does it: clone(CLONE_VM |
 * CLONE_VFORK), the child on a stack of its own in PID 1's memory, PID 1
 * suspended until the child has exec'd or exited. fork() would copy PID
 * 1's page tables and write-protect its memory only for the exec to throw
 * the copy away: 1 ms of every run's start-up on the VM measured
 * (docs/performance.md).
 *
 * What the child shares with PID 1 and must not disturb: it writes its
 * own stack, fd table (no CLONE_FILES) and signal mask, and, through the
 * thread-local storage it shares, PID 1's errno, which PID 1 does not
 * read after a clone() that succeeded. It allocates nothing. No signal
 * reaches it before its exec: PID 1 blocks them all and has no handler
 * that could run in it, bar a sanitizer build's for faults.
 *
 * The stack is an array in this frame, as musl's posix_spawn() has it.
 * It has no guard page: PID 1's live frames lie next to it, so the child
 * must stay within it, and does by a wide margin. spawned_child() and
 * what it calls do not recurse and allocate no variable-length arrays;
 * the deepest need, a failed exec reported with snprintf(), measured
 * 7 KiB (exec_path()'s 4 KiB path buffer among it; under 10 KiB in a
 * sanitizer build), against 64 KiB here.
 *
 * The functions the child runs (SR_SPAWNED) are built without
 * AddressSanitizer where it is on: their frames would leave its poison in
 * the shadow of that array when the exec ends them, and its no-return
 * hook would unpoison PID 1's live frames.
 */
#define SPAWN_STACK_BYTES (64 * 1024)
/* clone() takes the end the stack grows from: the top but on hppa, as in glibc's posix_spawn. */
#ifdef __hppa__
#define SPAWN_STACK_START(a) ((void *)(a))
#else
#define SPAWN_STACK_START(a) ((void *)((a) + sizeof(a)))
#endif

/* The child's pid, or -errno with err filled (err->status: 126/127/125, and why). */
pid_t init_spawn(struct spawn *s, struct sr_error *err)
{
	_Alignas(16) char stack[SPAWN_STACK_BYTES];
	struct exec_failure f;
	int pipefd[2];
	pid_t pid;
	ssize_t n;

	if (pipe2(pipefd, O_CLOEXEC) < 0)
		return sr_error_errno(err, sr_negerrno(), "start %s", s->argv[0]);
	s->report_fd = pipefd[1];
	pid = clone(spawn_entry, SPAWN_STACK_START(stack), CLONE_VM | CLONE_VFORK | SIGCHLD, s);
	if (pid < 0) {
		int e = sr_negerrno();

		close(pipefd[0]);
		close(pipefd[1]);
		return sr_error_errno(err, e, "start %s", s->argv[0]);
	}
#ifdef SR_SANITIZERS
	/* Sanitizer builds check SR_SPAWNED at every run: stale poison here would fault later. */
	if (__asan_region_is_poisoned(stack, sizeof(stack))) {
		fprintf(stderr, "sandbox-run: a spawn left poison on PID 1's stack\n");
		abort();
	}
#endif
	close(pipefd[1]);
	n = SR_RETRY(read(pipefd[0], &f, sizeof(f)));
	close(pipefd[0]);
	if (n == (ssize_t)sizeof(f)) {
		waitpid(pid, NULL, 0);
		f.text[sizeof(f.text) - 1] = '\0';
		err->status = f.status;
		return sr_error_msg(err, f.code < 0 ? f.code : -EIO, "%s", f.text);
	}
	return pid;
}
