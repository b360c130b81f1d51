/* SPDX-License-Identifier: MIT */
/*
 * envd's Process service on the processes started through the server:
 * the end of a Connect stream (process.Process/Start's), its keep-alives,
 * and SendSignal and List, which find them by sandbox and pid.
 */
#include "exec-internal.h"
#include "util.h"

#include <signal.h>

/* envd's keep-alive: a stream silent this long gets an empty event (the SDK asks 50 s). */
#define KEEPALIVE_NS (20ll * 1000000000)

static void emit_end_stream(struct exec_job *x, json_t *error)
{
	_cleanup_free_ char *text = NULL;
	json_t *end = error ? json_pack("{so}", "error", error) : json_object();
	unsigned char hdr[5];

	if (end && sr_json_dump_line(end, &text) == 0) {
		sr_connect_header(SR_CONNECT_END_STREAM, strlen(text) - 1, hdr);
		if (fbuf_add(&x->stream, hdr, 5) == 0)
			fbuf_add(&x->stream, text, strlen(text) - 1);
	}
	if (end)
		json_decref(end);
}

/*
 * Go's names of signals 1-31 (its syscall package's table), which
 * ProcessState.String() says ("signal: killed"); any other is "signal
 * N". glibc's strsignal() capitalises them, and says "real-time signal 6".
 */
static const char *const go_signal_names[] = {
    [1] = "hangup",
    [2] = "interrupt",
    [3] = "quit",
    [4] = "illegal instruction",
    [5] = "trace/breakpoint trap",
    [6] = "aborted",
    [7] = "bus error",
    [8] = "floating point exception",
    [9] = "killed",
    [10] = "user defined signal 1",
    [11] = "segmentation fault",
    [12] = "user defined signal 2",
    [13] = "broken pipe",
    [14] = "alarm clock",
    [15] = "terminated",
    [16] = "stack fault",
    [17] = "child exited",
    [18] = "continued",
    [19] = "stopped (signal)",
    [20] = "stopped",
    [21] = "stopped (tty input)",
    [22] = "stopped (tty output)",
    [23] = "urgent I/O condition",
    [24] = "CPU time limit exceeded",
    [25] = "file size limit exceeded",
    [26] = "virtual timer expired",
    [27] = "profiling timer expired",
    [28] = "window changed",
    [29] = "I/O possible",
    [30] = "power failure",
    [31] = "bad system call",
};

/*
 * envd's end event: exitCode, exited, status as Go's ProcessState says it,
 * and error, which its cmd.Wait() gives whenever the process did not exit
 * 0: the same text ("exit status 7", "signal: killed"). The SDK's
 * CommandExitError takes it for its message.
 */
void exec_emit_connect_end(struct exec_job *x, json_t *ev, const char *error)
{
	json_t *record = json_object_get(ev, "record"), *sig = json_object_get(record, "signal");
	const char *status = json_string_value(json_object_get(record, "status"));
	int code = (int)json_integer_value(json_object_get(ev, "exit_code"));
	bool exited = status && strcmp(status, "exited") == 0;
	char text[64];
	json_t *end;

	if (sr_streq(status, "timeout")) {
		emit_end_stream(
		    x, json_pack("{ssss}", "code", "deadline_exceeded", "message",
				 "sandbox-run: the command's timeout passed: it was killed"));
		x->finished = true;
		return;
	}
	if (exited) {
		snprintf(text, sizeof(text), "exit status %d", code);
	} else if (json_is_integer(sig)) {
		json_int_t n = json_integer_value(sig);

		if (n > 0 && n < (json_int_t)SR_ARRAY_SIZE(go_signal_names))
			snprintf(text, sizeof(text), "signal: %s", go_signal_names[n]);
		else
			snprintf(text, sizeof(text), "signal: signal %lld", (long long)n);
	} else {
		snprintf(text, sizeof(text), "%s", error ? "error" : status ? status : "ended");
	}
	end =
	    json_pack("{sisbss}", "exitCode", exited ? code : -1, "exited", exited, "status", text);
	if (end && (error || !exited || code != 0))
		json_object_set_new(end, "error", sr_json_string(error ? error : text));
	exec_emit(x, json_pack("{s{so}}", "event", "end", end));
	emit_end_stream(x, NULL);
	x->finished = true;
}

void sr_exec_tick(struct srv *s)
{
	int64_t now = sr_monotonic_ns();

	for (struct exec_job *x = srv_lists(s)->execs; x; x = x->next) {
		if (x->mode == MODE_CONNECT && x->job.r && x->started && !x->finished &&
		    now - x->sent_ns > KEEPALIVE_NS)
			exec_emit(x, json_pack("{s{s{}}}", "event", "keepalive"));
		/* Its client gone: the next second's share of what nobody reads. */
		if (x->mode == MODE_CONNECT && !x->job.r) {
			x->dropped = 0;
			exec_pause_output(x, false);
		}
	}
}

/* envd: the running process pid of sandbox id, started through this server. */
static struct exec_job *find(struct srv *s, const char *id, pid_t pid)
{
	for (struct exec_job *x = srv_lists(s)->execs; x; x = x->next)
		if (x->started && !x->exited && x->pid == pid && strcmp(x->k.id, id) == 0)
			return x;
	return NULL;
}

void sr_api_envd_signal(struct req *r, json_t *msg)
{
	json_t *pid =
	    json_object_get(json_object_get(json_object_get(msg, "process"), "selector"), "pid");
	json_t *sig = json_object_get(msg, "signal");
	struct exec_job *x;
	json_t *m;
	int signo = SIGKILL;

	if (!pid)
		pid = json_object_get(json_object_get(msg, "process"), "pid");
	x = json_is_integer(pid) ? find(r->s, r->m.id, (pid_t)json_integer_value(pid)) : NULL;
	if (!x)
		return srv_answer_error(r, -ENOENT, "no process %lld started through serve",
					json_is_integer(pid) ? (long long)json_integer_value(pid)
							     : -1ll);
	if (sr_streq(json_string_value(sig), "SIGNAL_SIGTERM") ||
	    (json_is_integer(sig) && json_integer_value(sig) == 15))
		signo = SIGTERM;
	m = json_pack("{sssi}", "op", "signal", "sig", signo);
	if (m) {
		(void)sr_ctl_send(x->k.fd, m, NULL, 0);
		json_decref(m);
	}
	srv_answer_json(r, MHD_HTTP_OK, json_object());
}

void sr_api_envd_list(struct req *r)
{
	json_t *procs = json_array();

	for (struct exec_job *x = srv_lists(r->s)->execs; x; x = x->next) {
		json_t *envs = json_object(), *args = json_array(), *e;
		size_t i;

		if (!x->started || x->exited || strcmp(x->k.id, r->m.id) != 0)
			continue;
		json_array_foreach (x->env, i, e) {
			const char *kv = json_string_value(e), *eq = kv ? strchr(kv, '=') : NULL;

			if (eq) {
				_cleanup_free_ char *k = strndup(kv, (size_t)(eq - kv));

				if (k)
					json_object_set_new(envs, k, json_string(eq + 1));
			}
		}
		for (i = 1; i < json_array_size(x->argv); i++)
			json_array_append(args, json_array_get(x->argv, i));
		json_array_append_new(procs, json_pack("{s{sOsososo}si}", "config", "cmd",
						       json_array_get(x->argv, 0), "args", args,
						       "envs", envs, "cwd",
						       x->cwd ? json_incref(x->cwd) : json_null(),
						       "pid", (int)x->pid));
	}
	srv_answer_json(r, MHD_HTTP_OK, json_pack("{so}", "processes", procs));
}
