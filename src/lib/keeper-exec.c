/* SPDX-License-Identifier: MIT */
/*
 * exec: a process PID 1 starts for a client, with its stdio or a pty,
 * its end told as a run's record; warm invocations (serve --warm), hold
 * and release.
 */
#include "keeper-internal.h"
#include "control.h"
#include "env.h"
#include "protocol.h"
#include "secmem.h"
#include "util.h"

#include <limits.h>
#include <signal.h>
#include <sys/wait.h>

static struct client *client_of_pid(struct keeper *k, pid_t pid)
{
	for (size_t i = 0; i < k->n_clients; i++)
		if (k->clients[i]->pid == pid)
			return k->clients[i];
	return NULL;
}

/*
 * An exec's end, told to its client as a run's record has it (status,
 * exit_code, timings, the sandbox's limits and how they are held, as
 * inspect says them now), with the same exit statuses: 124 for its
 * --timeout or the sandbox's deadline, 128+N for a signal (137 when rm
 * killed it).
 *
 * Its usage is the exec's own, not the sandbox's so far (inspect has
 * that): the CPU time of its process and of what that waited for, and
 * the largest of their peaks (scope "process"), from the rusage PID 1
 * reaped it with -- or, cut short by a signal (its --timeout, the
 * caller's ^C, the sandbox's end), its process group's up to then, if
 * more: the children killed with it were never waited for. The cgroup's
 * peak is the whole sandbox's since it was made, every earlier exec's
 * with it. None, null and not 0, for one that never started or whose
 * end PID 1 never told, the sandbox's coming first (its count went with
 * PID 1). The disk is one for every exec: what it held when this one
 * ended.
 */
void keeper_exec_ended(struct keeper *k, struct client *cl, const struct sr_exit *e)
{
	struct sr_result r;
	json_t *record = NULL;

	sr_result_init(&r);
	sr_sandbox_usage(k->sb, true, &r);
	r.wall_ms =
	    (double)((cl->exit_pending ? cl->exit_ns : sr_monotonic_ns()) - cl->start_ns) / 1e6;
	r.user_ms = r.sys_ms = 0;
	r.cpu_unknown = !e;
	r.peak_memory_bytes = -1;
	r.peak_memory_scope = SR_PEAK_NONE;
	if (e) {
		r.user_ms = e->ru.user_ms;
		r.sys_ms = e->ru.sys_ms;
		if (e->ru.peak_rss > 0) {
			r.peak_memory_bytes = e->ru.peak_rss;
			r.peak_memory_scope = SR_PEAK_PROCESS;
		}
		/* PID 1 cannot count a directory of the host's (-1): the host's count stays. */
		if (e->ru.disk_used >= 0)
			r.disk_used_bytes = e->ru.disk_used;
	}
	/*
	 * The sandbox's deadline ends every process in it, as a run's timeout
	 * does: 124, whether the process's own end (killed by PID 1, or
	 * exiting on its SIGTERM) is told before the sandbox's or with it.
	 */
	if (cl->timed_out || sr_streq(k->end_reason, "timeout")) {
		r.status = SR_STATUS_TIMEOUT;
		r.exit_code = 124;
	} else if (!e || WIFSIGNALED(e->status)) {
		/* The sandbox ended under it (rm, a signal to the keeper): killed, as kill -9. */
		r.status = SR_STATUS_SIGNALED;
		r.signal = e ? WTERMSIG(e->status) : cl->cancel_sig ? cl->cancel_sig : SIGKILL;
		r.exit_code = 128 + r.signal;
		/*
		 * A SIGKILL while the cgroup counted an OOM kill: the kernel's, as
		 * a run says it (oom, 137). Another exec's process killed in the
		 * same moment for memory would be taken for this one's: the count
		 * is the sandbox's, as a run's is.
		 */
		if (e && r.signal == SIGKILL && cl->oom_before >= 0 &&
		    sr_sandbox_oom_kills(k->sb) > cl->oom_before)
			r.status = SR_STATUS_OOM;
	} else {
		r.status = SR_STATUS_EXITED;
		r.exit_code = WEXITSTATUS(e->status);
	}
	record = sr_result_json_state(&r, k->state);
	/* timed_out: whose timeout ended it, for the client to say (the command's, the sandbox's).
	 */
	keeper_reply(
	    cl,
	    json_pack("{sssisososo}", "event", "exit", "exit_code", r.exit_code, "ended_by",
		      !e && k->end_reason ? json_string(k->end_reason) : json_null(), "timed_out",
		      r.status != SR_STATUS_TIMEOUT ? json_null()
		      : cl->timed_out		    ? json_string("exec")
						    : json_string("sandbox"),
		      "record", record ? record : json_null()),
	    NULL, 0);
}

void keeper_on_exited(void *ctx, struct sr_sandbox *sb, const struct sr_exit *e)
{
	struct keeper *k = ctx;
	struct client *cl = client_of_pid(k, e->pid);

	(void)sb;
	if (!cl)
		return;
	keeper_exec_ended(k, cl, e);
	/* Done with: dropped at the end of this round of the loop. */
	cl->pid = 0;
	keeper_hang_up(cl);
}

/*
 * A warm invocation's process ended, and with it everything else in the
 * sandbox but PID 1 (SR_SPAWN_ENDS_SANDBOX): its client hears it now, not
 * after PID 1's exit has torn the namespaces down.
 */
void keeper_on_ends_exited(void *ctx, struct sr_sandbox *sb, const struct sr_exit *e)
{
	struct keeper *k = ctx;
	struct client *cl = client_of_pid(k, e->pid);

	(void)sb;
	if (!cl || cl->hung_up)
		return;
	/*
	 * Its taker writes the prompt, which starts it, then sends the
	 * release with the time of its taking: a process quicker than that
	 * has its exit told once the release is read (keeper_do_hold), or
	 * at the sandbox's end (on_ended, keeper.c), so that its time counts
	 * from the taking, not from the park.
	 */
	if (cl->holds) {
		cl->exit_pending = true;
		cl->exit = *e;
		cl->exit_ns = sr_monotonic_ns();
		cl->killed = true; /* gone already: nothing to kill if its taker hangs up */
		return;
	}
	keeper_exec_ended(k, cl, e);
	cl->pid = 0;
	keeper_hang_up(cl);
}

/*
 * An exec's process has started (or could not). Its client may have hung
 * up, or timed out, meanwhile: the process is killed then, and its exit
 * awaited before the client is dropped.
 */
void keeper_on_spawned(void *ctx, struct sr_sandbox *sb, uint32_t id, pid_t pid, int pty,
		       const struct sr_error *err)
{
	struct keeper *k = ctx;
	struct client *cl = NULL;

	for (size_t i = 0; i < k->n_clients && !cl; i++)
		if (k->clients[i]->spawn == id)
			cl = k->clients[i];
	if (!cl) {
		if (pid > 0)
			sr_sandbox_kill_process(sb, pid);
		sr_closep(&pty);
		return;
	}
	cl->spawn = 0;
	if (pid <= 0) {
		keeper_reply(cl, sr_ctl_error_reply(err), NULL, 0);
		sr_closep(&cl->timerfd);
		keeper_hang_up(cl);
	} else {
		cl->pid = pid;
		if (!cl->hung_up)
			keeper_reply(cl, json_pack("{sbsi}", "ok", 1, "pid", (int)pid),
				     pty >= 0 ? &pty : NULL, pty >= 0 ? 1 : 0);
	}
	sr_closep(&pty);
}

/* The sandbox's environment with the exec's KEY=VALUE pairs over it (a later one wins). */
static int exec_env(struct keeper *k, json_t *env, struct sr_strv *ret, struct sr_error *err)
{
	char *const *base = sr_sandbox_env(k->sb);
	struct sr_strv v = {0};
	size_t i;
	json_t *e;

	for (size_t b = 0; base && base[b]; b++)
		if (sr_strv_push(&v, base[b]) < 0)
			goto oom;
	json_array_foreach (env, i, e) {
		const char *kv = json_string_value(e), *eq = kv ? strchr(kv, '=') : NULL;

		if (!eq || !sr_env_valid_name(kv, (size_t)(eq - kv))) {
			sr_strv_free(&v);
			return sr_error_msg(err, -EINVAL, "--env: expected KEY=VALUE, got '%s'",
					    kv ? kv : "?");
		}
		for (size_t j = 0; j < v.n; j++)
			if (strncmp(v.items[j], kv, (size_t)(eq - kv) + 1) == 0) {
				free(v.items[j]);
				v.items[j] = v.items[--v.n];
				v.items[v.n] = NULL;
				break;
			}
		if (sr_strv_push(&v, kv) < 0)
			goto oom;
	}
	*ret = v;
	return 0;
oom:
	sr_strv_free(&v);
	return sr_error_errno(err, -ENOMEM, "exec");
}

/*
 * A warm invocation (serve --warm): the agent the sandbox was made for,
 * with its environment (the deployment's secrets among it), parked
 * before its exec until its stdin has the prompt (SR_SPAWN_PARK), and
 * ending the sandbox when it exits: one sandbox, one request. Answered
 * {"ok", "pid"} once parked; its exit is the sandbox's end (on_ended, keeper.c).
 */
static void do_invoke(struct keeper *k, struct client *cl, int *fds, size_t n_fds)
{
	struct sr_spawn s = {.flags = SR_SPAWN_AGENT | SR_SPAWN_ENDS_SANDBOX | SR_SPAWN_PARK};
	struct sr_error err = {0};

	if (n_fds != 3)
		return keeper_reply_error(cl, -EINVAL, 125, "exec: a malformed request");
	for (int i = 0; i < 3; i++)
		s.stdio[i] = fds[i];
	cl->start_ns = sr_monotonic_ns();
	if (sr_sandbox_spawn_start(k->sb, &s, &cl->spawn, &err) < 0) {
		cl->spawn = 0;
		return keeper_reply(cl, sr_ctl_error_reply(&err), NULL, 0);
	}
}

/*
 * A pty's "rows" or "cols": absent, or what a struct winsize holds (0:
 * unknown); both or neither. The socket is the user's API, not only the
 * CLI's: a size out of range is refused, not cut to 16 bits into some
 * other size, and half a size is refused, not dropped.
 */
static bool pty_size_ok(json_t *v)
{
	return !v || (json_is_integer(v) && json_integer_value(v) >= 0 &&
		      json_integer_value(v) <= USHRT_MAX);
}

void keeper_do_exec(struct keeper *k, struct client *cl, json_t *req, int *fds, size_t n_fds)
{
	json_t *argv_j = json_object_get(req, "argv"), *cwd = json_object_get(req, "cwd");
	json_t *timeout = json_object_get(req, "timeout_ms");
	json_t *mask_j = json_object_get(req, "pty");
	unsigned mask = json_is_integer(mask_j) ? (unsigned)json_integer_value(mask_j) : 0;
	_cleanup_free_ char **argv = NULL;
	struct sr_strv env = {0};
	struct sr_error err = {0};
	json_t *rows = json_object_get(req, "rows"), *cols = json_object_get(req, "cols");
	struct sr_spawn s = {.flags = mask & SR_SPAWN_PTY};
	bool invoke = json_is_true(json_object_get(req, "invoke"));
	size_t n = json_array_size(argv_j);

	if (k->end_reason || keeper_under_way(cl))
		return keeper_reply_error(cl, -EBUSY, 125, "exec: %s", keeper_busy_text(k));
	/*
	 * Sent, then hung up on (a killed exec, a script's client): started,
	 * the process would run until the hang-up was seen, killed then --
	 * having done, half done, whatever it could meanwhile. Not started.
	 */
	if (keeper_client_gone(cl))
		return keeper_hang_up(cl);
	if (invoke)
		return do_invoke(k, cl, fds, n_fds);
	/* Those of its stdio not on a pty come as fds, in order (protocol.h). */
	if (n == 0 || (mask & ~(unsigned)SR_SPAWN_PTY) ||
	    n_fds != 3 - (size_t)__builtin_popcount(mask) ||
	    (cwd && !json_is_null(cwd) && !json_is_string(cwd)) ||
	    (timeout && !json_is_integer(timeout)) || !pty_size_ok(rows) || !pty_size_ok(cols) ||
	    !rows != !cols)
		return keeper_reply_error(cl, -EINVAL, 125, "exec: a malformed request");
	argv = calloc(n + 1, sizeof(*argv));
	if (!argv)
		return keeper_reply_error(cl, -ENOMEM, 125, "exec: out of memory");
	for (size_t i = 0; i < n; i++) {
		argv[i] = (char *)json_string_value(json_array_get(argv_j, i));
		if (!argv[i] || !*argv[i])
			return keeper_reply_error(cl, -EINVAL, 125,
						  "exec: an empty or non-string argument");
	}
	if (exec_env(k, json_object_get(req, "env"), &env, &err) < 0)
		return keeper_reply(cl, sr_ctl_error_reply(&err), NULL, 0);
	s.argv = argv;
	s.envp = env.items;
	s.cwd = json_is_string(cwd) ? json_string_value(cwd) : NULL;
	if (rows) {
		s.rows = (unsigned short)json_integer_value(rows);
		s.cols = (unsigned short)json_integer_value(cols);
	}
	for (int i = 0, next = 0; i < 3; i++)
		s.stdio[i] = mask & (SR_SPAWN_PTY_STDIN << i) ? -1 : fds[next++];
	cl->oom_before = sr_sandbox_oom_kills(k->sb);
	cl->start_ns = sr_monotonic_ns();
	/* Answered when PID 1 has started it (keeper_on_spawned): the loop does not wait. */
	if (keeper_arm_client_timer(cl, timeout ? json_integer_value(timeout) : 0, false) < 0 ||
	    sr_sandbox_spawn_start(k->sb, &s, &cl->spawn, &err) < 0) {
		sr_strv_free(&env);
		if (!err.code)
			sr_error_errno(&err, sr_negerrno(), "exec: timer");
		cl->spawn = 0;
		sr_closep(&cl->timerfd);
		return keeper_reply(cl, sr_ctl_error_reply(&err), NULL, 0);
	}
	sr_strv_free(&env);
}

/*
 * A signal for an exec whose process PID 1 has not started (and may
 * never, if the agent keeps it busy): one that would end the process
 * ends the exec now, as its process would have (128+N); the process is
 * killed if it starts after all.
 */
void keeper_cancel_spawn(struct keeper *k, struct client *cl, int sig)
{
	if (sig == SIGCONT || sig == SIGWINCH || sig == SIGCHLD || sig == SIGURG ||
	    sig == SIGSTOP || sig == SIGTSTP || sig == SIGTTIN || sig == SIGTTOU || sig <= 0 ||
	    sig >= NSIG)
		return;
	cl->cancel_sig = sig;
	keeper_exec_ended(k, cl, NULL);
	keeper_hang_up(cl);
}

/* The pool's word (config.h pool_token), compared in a time that does not tell how much matched. */
static bool pool_word(const struct keeper *k, json_t *token)
{
	const char *want = k->pool_token, *got = json_string_value(token);
	unsigned char diff = 0;
	size_t n;

	if (!want || !got || (n = strlen(want)) != strlen(got) || n == 0)
		return false;
	for (size_t i = 0; i < n; i++)
		diff |= (unsigned char)(want[i] ^ got[i]);
	return diff == 0;
}

/*
 * hold: a warm sandbox (pool.h), made ahead and waiting for its user. It
 * has no deadline, and ends when the holder hangs up, even killed: a
 * pool's sandboxes never outlive their pool. release hands it over, with
 * the deadline it gets from now. Only its pool holds it: the hold
 * carries the pool's word.
 */
void keeper_do_hold(struct keeper *k, struct client *cl, bool hold, json_t *req)
{
	json_t *ms = json_object_get(req, "ms"), *taken = json_object_get(req, "taken_ns");

	/* Once: a taken sandbox is its taker's, whoever knows the word. */
	if (hold && (!k->reserved || !pool_word(k, json_object_get(req, "token"))))
		return keeper_reply_error(
		    cl, -EPERM, 125, "hold: only the pool that made sandbox %s holds it", k->id);
	if (!hold && !cl->holds)
		return keeper_reply_error(cl, -EINVAL, 125, "release: not held on this connection");
	if (!hold && ms && (!json_is_integer(ms) || json_integer_value(ms) < 0))
		return keeper_reply_error(cl, -EINVAL, 125, "release: a malformed request");
	if (!hold && ms && (uint64_t)json_integer_value(ms) > SR_DEADLINE_MAX_MS)
		return keeper_reply_error(cl, -EINVAL, 125, "release: at most %d days",
					  SR_DEADLINE_MAX_DAYS);
	cl->holds = hold;
	/* Held now, then the taker's: held_by_another() keeps others out until the release. */
	k->reserved = false;
	/* Its word's work is done (it holds once): not kept for whoever takes the sandbox. */
	sr_secmem_free(k->pool_token);
	k->pool_token = NULL;
	/*
	 * A parked invocation on this connection: its time counts from its
	 * taking, which its taker says (taken_ns, CLOCK_MONOTONIC's, ours too):
	 * it sends the release after the prompt, once the process runs.
	 */
	if (!hold && cl->pid > 0) {
		int64_t now = cl->exit_pending ? cl->exit_ns : sr_monotonic_ns();

		cl->start_ns = json_is_integer(taken) &&
				       json_integer_value(taken) >= cl->start_ns &&
				       json_integer_value(taken) <= now
				   ? (int64_t)json_integer_value(taken)
				   : now;
	}
	/* Over already, its sandbox ending: no deadline to set, its exit to tell. */
	if (!hold && cl->exit_pending) {
		keeper_reply(cl, json_pack("{sb}", "ok", 1), NULL, 0);
		keeper_exec_ended(k, cl, &cl->exit);
		cl->exit_pending = false;
		cl->pid = 0;
		keeper_hang_up(cl);
		return;
	}
	json_object_set_new(k->state, "state", json_string(hold ? "warm" : "running"));
	if (keeper_set_deadline(k,
				hold ? 0
				: ms ? (uint64_t)json_integer_value(ms)
				     : k->config->timeout_ms,
				!hold) < 0)
		return keeper_reply_error(cl, sr_negerrno(), 125, "timeout: %s", strerror(errno));
	/* A hold's answer carries what ls shows: its taker answers with it, no file read. */
	keeper_reply(
	    cl,
	    hold ? json_pack("{sbsO}", "ok", 1, "state", k->state)
		 : json_pack("{sbsO}", "ok", 1, "expires", json_object_get(k->state, "expires")),
	    NULL, 0);
}
