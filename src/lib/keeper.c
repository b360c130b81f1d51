/* SPDX-License-Identifier: MIT */
/*
 * The keeper of a living sandbox: one process, one sandbox, one event
 * loop (poll over the sandbox's fds, the control socket and its
 * connections, a signalfd and the deadline's timerfd). It never enters
 * the sandbox; every request becomes a message to PID 1 (protocol.h).
 */
#include "keeper.h"
#include "artifacts.h"
#include "control.h"
#include "env.h"
#include "proc.h"
#include "protocol.h"
#include "relay.h"
#include "peeruid.h"
#include "result.h"
#include "snapshot.h"
#include "sandbox.h"
#include "state.h"
#include "cgroup.h"
#include "units.h"
#include "util.h"

#include <poll.h>
#include <signal.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/timerfd.h>
#include <sys/un.h>
#include <arpa/inet.h>
#include <dirent.h>
#include <limits.h>
#include <netinet/in.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>

/* How much later a release's state.json is written (save_state_later). */
#define SAVE_LATER_MS 5
/* An END's grace, as a run's timeout has it: PID 1 ends the sandbox itself, or is killed. */
#define END_GRACE_MS 1000
/*
 * A keeper drops its pages of code (sr_proc_drop_clean_pages) this long
 * after the sandbox is ready (the set-up's: option parsing, the profile,
 * the network's), and again this long after its last client has gone (an
 * exec faults in the relay's and the protocol's code, in 64 KiB blocks
 * around each page, the kernel's fault-around), so that they do not stay
 * in its RSS while it waits. A sandbox used at once (a warm pool's, taken
 * for one request and ended) never pays for reading smaps and faulting
 * back what its requests use.
 */
#define TRIM_IDLE_MS 1000
/* keeper.log stops growing here: a flapping helper must not fill the disk. */
#define LOG_MAX (1 << 20)
/*
 * Connections at once: each is an fd and a little memory. Past this an
 * idle one (connected, asking nothing) makes room for a new one, so that
 * the user's idle connections cannot keep out an rm; past the reserve,
 * refused.
 */
#define CLIENTS_MAX	512
#define CLIENTS_RESERVE 32
/* inspect's wait for PID 1's count; without it, the keeper's own numbers. */
#define STAT_WAIT_MS 1000
/* A living sandbox's deadline, at most: a year and a day. */
#define DEADLINE_MAX_MS (366ULL * 24 * 3600 * 1000)
/* After accept(2) ran out of fds: the listeners rest this long (not a busy loop). */
#define ACCEPT_PAUSE_MS 100
/* Relayed connections to published ports at once: 128 KiB of buffers each. */
#define CONNS_MAX 256
#define PORTS_MAX 64
/*
 * Workers (cp, files, changes, snapshot) started and not yet ended; the
 * requests past this wait here, oldest first. A request to PID 1 is one
 * message on its socket, whose send buffer (208 KiB) holds about 90 of
 * them: a burst of more (serve writes up to 128 files at once) filled it,
 * PID 1 forking workers as fast as a loaded machine let it, and the
 * requests that found no room within SEND_WAIT_MS (sandbox.c) failed as
 * though the agent kept PID 1 busy (EAGAIN).
 */
#define WORKERS_MAX 32
/*
 * A snapshot's worker writes the file here itself, as the agent's uid: the
 * agent can stop it (SIGSTOP), and the snapshot would wait for ever. One
 * whose file has not grown for this long is given up (its request may say
 * another time, 0: wait), as cp gives up on a stream that does not move.
 */
#define SNAPSHOT_IDLE_MS (60 * 1000)

struct client {
	int fd;
	pid_t pid;		     /* the process it exec'd, 0 before (or none) */
	uint32_t spawn;		     /* its exec's SPAWN, until PID 1 answers; 0 for none */
	uint32_t stat;		     /* its inspect's STAT, until PID 1 answers; 0 for none */
	uint32_t work;		     /* the worker it waits for (cp, snapshot), 0 for none */
	int wait_kind;		     /* a worker's request waiting its turn (WORKERS_MAX); 0 */
	char *wait_path;	     /* its path (NULL: none) */
	int wait_fd;		     /* its stream, -1 */
	uint64_t wait_seq;	     /* the order they came in */
	int64_t since_ns;	     /* connected */
	struct sr_snapshot_new snap; /* a snapshot being made for it (name set) */
	int snap_fd;		     /* its file, watched for growth (SNAPSHOT_IDLE_MS); -1 */
	off_t snap_size;	     /* its size at the last look */
	int64_t snap_idle_ms;
	int64_t start_ns;
	int timerfd; /* its --timeout, -1 for none */
	bool timed_out;
	bool waits_end; /* rm: answered once the sandbox is gone */
	bool holds;	/* hold: the sandbox ends when this client hangs up (a warm pool's) */
	bool hung_up;	/* gone: its process is killed, nobody is told */
	bool killed;	/* that kill is sent */
	int cancel_sig; /* the signal that ended its exec before PID 1 started it; 0 */
	/* A warm invocation's exit, seen before its release: told once that is read. */
	bool exit_pending;
	struct sr_exit exit;
	int64_t exit_ns;
};

/* A published port: 127.0.0.1:host_port on the host, port on the sandbox's loopback. */
struct port {
	int port, host_port;
	int listen_fd;
	bool owner_only; /* a preview's (serve): the keeper's own user's connections only */
};

/* One connection to a published port: waiting for the sandbox's side, then relayed. */
struct conn {
	int host_fd;
	int sandbox_fd; /* -1 until PID 1 has connected */
	uint32_t id;	/* the CONNECT's, while waiting */
	struct sr_relay relay;
};

struct keeper {
	const struct sr_config *config;
	struct sr_sink sink;
	int ready_fd; /* the create command's pipe, until the sandbox is ready */
	int log_fd;
	size_t logged;
	char id[33];
	char *dir;
	int lock;
	json_t *state;
	int64_t save_at_ns;	 /* state.json to write then (save_state_later), 0: nothing */
	int64_t trim_at_ns;	 /* its code's pages to drop then (TRIM_IDLE_MS), 0: nothing */
	struct sr_result record; /* enforced, as create found it */
	struct sr_sandbox *sb;
	int listen_fd;
	int sigfd;
	int deadline_fd;
	struct client **clients;
	size_t n_clients;
	size_t n_workers;  /* the clients' workers started, not ended (WORKERS_MAX) */
	size_t n_waiting;  /* the clients' worker requests waiting their turn */
	uint64_t work_seq; /* worker requests come in so far */
	struct port *ports;
	size_t n_ports;
	struct conn **conns;
	size_t n_conns;
	const char *end_reason;	  /* NULL until the sandbox is ending */
	int64_t accept_paused_ns; /* CLOCK_MONOTONIC until which nothing is accepted */
	bool done;
	int64_t t0_ns;	/* CLOCK_REALTIME_COARSE before the sandbox: the changes' base */
	bool collected; /* create --export/--changes taken out (artifacts.h) */
	struct sr_artifacts *artifacts; /* while they are */
	struct sr_error artifacts_err;	/* the first that failed, told to rm */
};

static json_t *inspect_json(struct keeper *k, const struct sr_usage *u);
static void work_next(struct keeper *k);

static int64_t wall_ms(void)
{
	struct timespec t;

	clock_gettime(CLOCK_REALTIME, &t);
	return (int64_t)t.tv_sec * 1000 + t.tv_nsec / 1000000;
}

/* "2026-11-26T12:34:56Z" */
static json_t *iso_time(int64_t ms)
{
	time_t s = (time_t)(ms / 1000);
	struct tm tm;
	char buf[32];

	gmtime_r(&s, &tm);
	strftime(buf, sizeof(buf), "%Y-%m-%dT%H:%M:%SZ", &tm);
	return json_string(buf);
}

/*
 * Messages: to the create command while it waits (it prints them as its
 * own), then to keeper.log, bounded.
 */
static void keeper_write(void *ctx, enum sr_log_level level, const char *text)
{
	struct keeper *k = ctx;
	char line[2200];
	int n;

	if (k->ready_fd >= 0) {
		n = snprintf(line, sizeof(line), "msg %d %s\n", (int)level, text);
		(void)!write(k->ready_fd, line, (size_t)n);
		return;
	}
	if (k->log_fd < 0 || k->logged > LOG_MAX)
		return;
	n = snprintf(line, sizeof(line), "sandbox-run: %s%s\n",
		     level == SR_LOG_WARNING ? "warning: " : "", text);
	if (write(k->log_fd, line, (size_t)n) == n)
		k->logged += (size_t)n;
}

/*
 * Tells the create command how it went; the socket is closed after the
 * first answer. false: nobody heard (the command was interrupted), and a
 * sandbox whose id nobody knows must not live on.
 *
 * A write that succeeds is not heard: it lies in the socket's buffer
 * until read, and a create interrupted (Ctrl-C) before it read and
 * printed the id left a sandbox nobody knew of. So "ok ID" waits for the
 * byte create sends once the id is out (keeper.h); its end of the socket
 * closed instead (create gone) is nobody heard.
 */
static bool answer_create(struct keeper *k, int status, const struct sr_error *e)
{
	char line[SR_ERROR_MSG_MAX + 64], ack;
	bool heard;
	int n;

	if (k->ready_fd < 0)
		return false;
	if (status == 0)
		n = snprintf(line, sizeof(line), "ok %s\n", k->id);
	else
		n = snprintf(line, sizeof(line), "error %d %d %s\n", status,
			     e->code < 0 ? -e->code : EIO, e->msg);
	heard = write(k->ready_fd, line, (size_t)n) == n &&
		(status != 0 || SR_RETRY(read(k->ready_fd, &ack, 1)) == 1);
	close(steal_fd(&k->ready_fd));
	return heard;
}

/* What ps shows: the keeper and its sandbox, not the create command (its --env values). */
static void hide_cmdline(const char *id)
{
	char text[64];

	snprintf(text, sizeof(text), "sandbox-run-keeper %s", id);
	sr_proc_set_cmdline(text, "sr-keeper");
}

/* Thousandths as the record writes them: 2, 0.5 (an integer when whole). */
static json_t *milli_json(uint64_t milli)
{
	if (milli == 0)
		return json_null();
	if (milli % 1000 == 0)
		return json_integer((json_int_t)(milli / 1000));
	return json_real((double)milli / 1000.0);
}

static json_t *limits_json(const struct sr_config *c)
{
	json_t *l = json_object();

	json_object_set_new(l, "memory_bytes",
			    c->memory_bytes ? json_integer((json_int_t)c->memory_bytes)
					    : json_null());
	json_object_set_new(l, "cpus", milli_json(c->cpus_milli));
	json_object_set_new(l, "pids", c->pids ? json_integer((json_int_t)c->pids) : json_null());
	json_object_set_new(l, "timeout_s", milli_json(c->timeout_ms));
	json_object_set_new(l, "disk_bytes",
			    c->disk_bytes ? json_integer((json_int_t)c->disk_bytes) : json_null());
	json_object_set_new(l, "net", json_string(sr_net_mode_to_string(c->net)));
	return l;
}

static json_t *enforced_json(const struct sr_result *r)
{
	json_t *e = json_object();

	for (size_t i = 0; i < _SR_LIMIT_MAX; i++)
		json_object_set_new(e, sr_limit_to_string(i),
				    json_string(sr_enforce_to_string(r->enforced[i])));
	return e;
}

static json_t *initial_state(struct keeper *k)
{
	const struct sr_config *c = k->config;
	struct timespec now;

	clock_gettime(CLOCK_REALTIME, &now);
	return json_pack("{sssosssIsosisosososo}", "id", k->id, "name",
			 c->name ? json_string(c->name) : json_null(), "state", "creating",
			 "created_ns", (json_int_t)now.tv_sec * 1000000000 + now.tv_nsec, "created",
			 iso_time(wall_ms()), "keeper_pid", (int)getpid(), "profile",
			 sr_json_string(c->profile), "from",
			 c->from ? sr_json_string(c->from) : json_null(), "limits", limits_json(c),
			 "expires", json_null());
}

static void save_state(struct keeper *k)
{
	struct sr_error err = {0};

	k->save_at_ns = 0;
	if (sr_state_write(k->dir, k->state, &err) < 0)
		sr_warn(&k->sink, "%s", err.msg);
}

/*
 * state.json a moment later (SAVE_LATER_MS), for the changes at the end
 * of a warm sandbox's short life: its release and its end. Its taker's
 * next request (an exec, at once) is read meanwhile, not kept waiting
 * behind the write, and what changes within the moment is written once,
 * or not at all when the sandbox is gone by then (an invocation over as
 * it is released, the usual case). Each write is a file made and one
 * removed in the state directory, which costs most on a disk (this VM's
 * /run: ext4 without a journal looks past every inode freed in the last
 * 30 s for a new one). ls says what it said a moment longer; serve's
 * answers say what the release made of it already (srv_made_state).
 */
static void save_state_later(struct keeper *k)
{
	if (!k->save_at_ns)
		k->save_at_ns = sr_monotonic_ns() + SAVE_LATER_MS * 1000000LL;
}

/* The deadline, ms from now (0: none), in the timerfd and in state.json (now, or later). */
static int set_deadline(struct keeper *k, uint64_t ms, bool later)
{
	struct itimerspec its = {.it_value = sr_timespec_ms(ms)};

	if (timerfd_settime(k->deadline_fd, 0, &its, NULL) < 0)
		return sr_negerrno();
	json_object_set_new(k->state, "expires",
			    ms ? iso_time(wall_ms() + (int64_t)ms) : json_null());
	json_object_set_new(k->state, "expires_ms",
			    ms ? json_integer((json_int_t)(wall_ms() + (int64_t)ms)) : json_null());
	if (later)
		save_state_later(k);
	else
		save_state(k);
	return 0;
}

static void begin_end(struct keeper *k, const char *reason)
{
	if (k->end_reason)
		return;
	k->end_reason = reason;
	json_object_set_new(k->state, "state", json_string("ending"));
	save_state_later(k);
	/* create --export, --changes: its processes go, its files stay until they are out. */
	if (sr_artifacts_wanted(k->config))
		sr_sandbox_halt(k->sb, END_GRACE_MS);
	else
		sr_sandbox_end(k->sb, END_GRACE_MS);
}

/*
 * Held at its end: the artifacts taken out, then the end itself. The
 * loop goes on meanwhile (artifacts.h: nothing there waits): inspect is
 * answered, rm waits for the end, anything else is refused as ending.
 */
static void collect(struct keeper *k)
{
	struct sr_error err = {0};

	if (k->end_reason && !k->collected && sr_sandbox_held(k->sb)) {
		k->collected = true;
		if (sr_artifacts_start(k->sb, k->config, k->t0_ns, &k->sink, &k->artifacts, &err) <
		    0) {
			sr_sink_log(&k->sink, SR_LOG_ERROR, "%s", err.msg);
			k->artifacts_err = err;
			sr_sandbox_end(k->sb, END_GRACE_MS);
			return;
		}
	}
	if (!k->artifacts)
		return;
	sr_artifacts_dispatch(k->artifacts);
	if (!sr_artifacts_done(k->artifacts))
		return;
	if (sr_artifacts_failed(k->artifacts, &err) > 0)
		k->artifacts_err = err;
	sr_artifacts_free(steal_pointer(&k->artifacts));
	sr_sandbox_end(k->sb, END_GRACE_MS);
}

/* Someone is being served: an exec, a cp, a published port's connection (a pool's hold is not). */
static bool busy(const struct keeper *k)
{
	if (k->n_conns)
		return true;
	for (size_t i = 0; i < k->n_clients; i++)
		if (!k->clients[i]->holds)
			return true;
	return false;
}

/* Nobody being served any more: its pages of code to drop a while later (TRIM_IDLE_MS). */
static void trim_when_idle(struct keeper *k)
{
	if (!busy(k))
		k->trim_at_ns = sr_monotonic_ns() + TRIM_IDLE_MS * 1000000LL;
}

static struct client *client_of_pid(struct keeper *k, pid_t pid)
{
	for (size_t i = 0; i < k->n_clients; i++)
		if (k->clients[i]->pid == pid)
			return k->clients[i];
	return NULL;
}

/* The client's worker has ended, or is given up: another may start. */
static void work_ended(struct keeper *k, struct client *cl)
{
	if (cl->work && k->n_workers > 0)
		k->n_workers--;
	cl->work = 0;
}

/* The client's waiting request is dropped (it hung up, the sandbox ended), or taken. */
static void work_forget(struct keeper *k, struct client *cl)
{
	if (cl->wait_kind && k->n_waiting > 0)
		k->n_waiting--;
	cl->wait_kind = 0;
	free(steal_pointer(&cl->wait_path));
	sr_closep(&cl->wait_fd);
}

static void drop_client(struct keeper *k, size_t i)
{
	struct client *cl = k->clients[i];

	work_forget(k, cl);
	sr_snapshot_abort(&cl->snap);
	sr_closep(&cl->snap_fd);
	sr_closep(&cl->fd);
	sr_closep(&cl->timerfd);
	free(cl);
	k->clients[i] = k->clients[--k->n_clients];
	trim_when_idle(k);
}

/*
 * The client has gone, or reads nothing (its socket is full): it is done
 * with, and its exec's process is killed (the loop sends that).
 */
static void hang_up(struct client *cl)
{
	sr_closep(&cl->fd);
	cl->hung_up = true;
}

/*
 * Client sockets never block the keeper: a client that does not read its
 * answers is hung up on rather than waited for -- the deadline, rm and
 * every other client depend on this loop.
 */
static void reply(struct client *cl, json_t *msg, const int *fds, size_t n_fds)
{
	if (msg && cl->fd >= 0 && sr_ctl_send(cl->fd, msg, fds, n_fds) < 0)
		hang_up(cl);
	if (msg)
		json_decref(msg);
}

static void reply_error(struct client *cl, int code, int status, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static void reply_error(struct client *cl, int code, int status, const char *fmt, ...)
{
	struct sr_error err = {.status = status};
	char msg[SR_ERROR_MSG_MAX];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	sr_error_msg(&err, code, "%s", msg);
	reply(cl, sr_ctl_error_reply(&err), NULL, 0);
}

/*
 * An exec's end, told to its client as a run's record has it (status,
 * exit_code, timings, the sandbox's limits and how they are held), with
 * the same exit statuses: 124 for its --timeout or the sandbox's
 * deadline, 128+N for a signal (137 when rm killed it).
 */
static void exec_ended(struct keeper *k, struct client *cl, const struct sr_exit *e)
{
	struct sr_result r;
	json_t *record = NULL;

	sr_result_init(&r);
	memcpy(r.enforced, k->record.enforced, sizeof(r.enforced));
	memcpy(r.sandbox_id, k->id, sizeof(r.sandbox_id));
	sr_sandbox_usage(k->sb, &r);
	r.wall_ms =
	    (double)((cl->exit_pending ? cl->exit_ns : sr_monotonic_ns()) - cl->start_ns) / 1e6;
	if (e) {
		r.user_ms = e->user_ms;
		r.sys_ms = e->sys_ms;
		r.disk_used_bytes = e->disk_used;
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
	} else {
		r.status = SR_STATUS_EXITED;
		r.exit_code = WEXITSTATUS(e->status);
	}
	record = sr_result_json(&r, k->config);
	reply(cl,
	      json_pack("{sssisoso}", "event", "exit", "exit_code", r.exit_code, "ended_by",
			!e && k->end_reason ? json_string(k->end_reason) : json_null(), "record",
			record ? record : json_null()),
	      NULL, 0);
}

static void on_exited(void *ctx, struct sr_sandbox *sb, const struct sr_exit *e)
{
	struct keeper *k = ctx;
	struct client *cl = client_of_pid(k, e->pid);

	(void)sb;
	if (!cl)
		return;
	exec_ended(k, cl, e);
	/* Done with: dropped at the end of this round of the loop. */
	cl->pid = 0;
	hang_up(cl);
}

/*
 * A warm invocation's process ended, and with it everything else in the
 * sandbox but PID 1 (SR_SPAWN_ENDS_SANDBOX): its client hears it now, not
 * after PID 1's exit has torn the namespaces down.
 */
static void on_ends_exited(void *ctx, struct sr_sandbox *sb, const struct sr_exit *e)
{
	struct keeper *k = ctx;
	struct client *cl = client_of_pid(k, e->pid);

	(void)sb;
	if (!cl || cl->hung_up)
		return;
	/*
	 * Its taker writes the prompt, which starts it, then sends the
	 * release with the time of its taking: a process quicker than that
	 * has its exit told once the release is read (do_hold), or at the
	 * sandbox's end (on_ended), so that its time counts from the taking,
	 * not from the park.
	 */
	if (cl->holds) {
		cl->exit_pending = true;
		cl->exit = *e;
		cl->exit_ns = sr_monotonic_ns();
		cl->killed = true; /* gone already: nothing to kill if its taker hangs up */
		return;
	}
	exec_ended(k, cl, e);
	cl->pid = 0;
	hang_up(cl);
}

static void on_ended(void *ctx, struct sr_sandbox *sb, const struct sr_exit *ends)
{
	struct keeper *k = ctx;

	(void)sb;
	if (!k->end_reason)
		k->end_reason = sr_sandbox_error(k->sb)->code ? "error" : "end";
	for (size_t i = 0; i < k->n_clients; i++) {
		struct client *cl = k->clients[i];

		/* The process that ended the sandbox (a warm invocation's) ended as it did. */
		if ((cl->pid > 0 || cl->spawn) && !cl->hung_up)
			exec_ended(k, cl,
				   cl->exit_pending				 ? &cl->exit
				   : ends && cl->pid > 0 && cl->pid == ends->pid ? ends
										 : NULL);
		cl->exit_pending = false;
		if (cl->work || cl->wait_kind)
			reply_error(cl, -ESRCH, 125, "the sandbox ended (%s)", k->end_reason);
		if (cl->stat)
			reply(cl, inspect_json(k, NULL), NULL, 0);
		work_ended(k, cl);
		work_forget(k, cl);
		cl->pid = 0;
		cl->spawn = cl->stat = 0;
	}
	k->done = true;
}

/*
 * An exec's process has started (or could not). Its client may have hung
 * up, or timed out, meanwhile: the process is killed then, and its exit
 * awaited before the client is dropped.
 */
static void on_spawned(void *ctx, struct sr_sandbox *sb, uint32_t id, pid_t pid, int pty,
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
		reply(cl, sr_ctl_error_reply(err), NULL, 0);
		sr_closep(&cl->timerfd);
		hang_up(cl);
	} else {
		cl->pid = pid;
		if (!cl->hung_up)
			reply(cl, json_pack("{sbsi}", "ok", 1, "pid", (int)pid),
			      pty >= 0 ? &pty : NULL, pty >= 0 ? 1 : 0);
	}
	sr_closep(&pty);
}

static void on_stats(void *ctx, struct sr_sandbox *sb, uint32_t id, const struct sr_usage *u)
{
	struct keeper *k = ctx;

	(void)sb;
	for (size_t i = 0; i < k->n_clients; i++) {
		struct client *cl = k->clients[i];

		if (cl->stat != id)
			continue;
		cl->stat = 0;
		sr_closep(&cl->timerfd);
		reply(cl, inspect_json(k, u), NULL, 0);
		return;
	}
}

static void on_worked(void *ctx, struct sr_sandbox *sb, uint32_t id, const struct sr_error *err)
{
	struct keeper *k = ctx;

	(void)sb;
	if (sr_artifacts_worked(k->artifacts, id, err))
		return;
	for (size_t i = 0; i < k->n_clients; i++) {
		struct client *cl = k->clients[i];
		struct sr_error cerr = {0};
		json_t *meta = NULL;

		if (cl->work != id)
			continue;
		work_ended(k, cl);
		cl->hung_up = true;
		sr_closep(&cl->snap_fd);
		sr_closep(&cl->timerfd);
		if (!cl->snap.name) {
			reply(cl, err->code ? sr_ctl_error_reply(err) : json_pack("{sb}", "ok", 1),
			      NULL, 0);
			continue;
		}
		/* A snapshot's files are written: its configuration beside them, then its name. */
		if (err->code ||
		    sr_snapshot_commit(&cl->snap, k->config, k->id, &meta, &cerr) < 0) {
			reply(cl, sr_ctl_error_reply(err->code ? err : &cerr), NULL, 0);
		} else {
			json_object_set_new(meta, "ok", json_true());
			reply(cl, meta, NULL, 0);
		}
		sr_snapshot_abort(&cl->snap);
	}
}

static void drop_conn(struct keeper *k, size_t i)
{
	struct conn *c = k->conns[i];

	sr_closep(&c->host_fd);
	sr_closep(&c->sandbox_fd);
	free(c);
	k->conns[i] = k->conns[--k->n_conns];
	trim_when_idle(k);
}

static void on_connected(void *ctx, struct sr_sandbox *sb, uint32_t id, int fd,
			 const struct sr_error *err)
{
	struct keeper *k = ctx;

	(void)sb;
	(void)err;
	for (size_t i = 0; i < k->n_conns; i++) {
		struct conn *c = k->conns[i];

		if (c->sandbox_fd >= 0 || c->id != id)
			continue;
		/* Nothing listens on the port inside: the host's connection is refused, as it would
		 * be. */
		if (fd < 0) {
			drop_conn(k, i);
			return;
		}
		c->sandbox_fd = fd;
		sr_relay_init(&c->relay, c->host_fd, c->sandbox_fd);
		return;
	}
	sr_closep(&fd);
}

static const struct sr_sandbox_ops keeper_ops = {.exited = on_exited,
						 .ends_exited = on_ends_exited,
						 .ended = on_ended,
						 .worked = on_worked,
						 .connected = on_connected,
						 .spawned = on_spawned,
						 .stats = on_stats};

/* 127.0.0.1:port, or the kernel's choice of port when that one is taken (or privileged). */
static int listen_loopback(int port, int *ret_port)
{
	for (int attempt = 0; attempt < 2; attempt++) {
		struct sockaddr_in sa = {.sin_family = AF_INET,
					 .sin_port = htons((uint16_t)(attempt ? 0 : port)),
					 .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
		socklen_t len = sizeof(sa);
		int one = 1, fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);

		if (fd < 0)
			return sr_negerrno();
		setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
		if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) == 0 && listen(fd, 128) == 0 &&
		    getsockname(fd, (struct sockaddr *)&sa, &len) == 0) {
			*ret_port = ntohs(sa.sin_port);
			return fd;
		}
		close(fd);
		if (errno != EADDRINUSE && errno != EACCES)
			return sr_negerrno();
	}
	return -EADDRINUSE;
}

static json_t *port_json(const struct port *p)
{
	char url[64];

	snprintf(url, sizeof(url), "http://127.0.0.1:%d", p->host_port);
	return json_pack("{sisisssb}", "port", p->port, "host_port", p->host_port, "url", url,
			 "owner_only", p->owner_only);
}

static void save_ports(struct keeper *k)
{
	json_t *ports = json_array();

	for (size_t i = 0; i < k->n_ports; i++)
		json_array_append_new(ports, port_json(&k->ports[i]));
	json_object_set_new(k->state, "ports", ports);
	save_state(k);
}

/*
 * `port ID PORT`: the sandbox's PORT on the host's 127.0.0.1 only. Each
 * connection accepted there is relayed to one PID 1 makes inside (on_connect
 * in init.c): the keeper never enters the sandbox's network namespace, and
 * nothing reaches the sandbox but through this relay.
 */
static void do_port(struct keeper *k, struct client *cl, json_t *req)
{
	json_t *port = json_object_get(req, "port");
	bool owner_only = json_is_true(json_object_get(req, "owner_only"));
	struct port *np;
	int p, fd, host_port = 0;

	if (!json_is_integer(port) || json_integer_value(port) < 1 ||
	    json_integer_value(port) > 65535)
		return reply_error(cl, -EINVAL, 125, "port: a port is 1-65535");
	p = (int)json_integer_value(port);
	for (size_t i = 0; i < k->n_ports; i++) {
		if (k->ports[i].port != p)
			continue;
		/* Published by name (`port`, the API's /ports), it is open from then on. */
		if (!owner_only && k->ports[i].owner_only) {
			k->ports[i].owner_only = false;
			save_ports(k);
		}
		return reply(cl, json_pack("{sbso}", "ok", 1, "port", port_json(&k->ports[i])),
			     NULL, 0);
	}
	if (k->n_ports >= PORTS_MAX)
		return reply_error(cl, -ENOSPC, 125, "port: %d ports are published already",
				   PORTS_MAX);
	fd = listen_loopback(p, &host_port);
	if (fd < 0)
		return reply_error(cl, fd, 125, "port: listen on 127.0.0.1: %s", strerror(-fd));
	np = realloc(k->ports, sizeof(*np) * (k->n_ports + 1));
	if (!np) {
		close(fd);
		return reply_error(cl, -ENOMEM, 125, "port: out of memory");
	}
	k->ports = np;
	k->ports[k->n_ports++] = (struct port){
	    .port = p, .host_port = host_port, .listen_fd = fd, .owner_only = owner_only};
	save_ports(k);
	reply(cl, json_pack("{sbso}", "ok", 1, "port", port_json(&k->ports[k->n_ports - 1])), NULL,
	      0);
}

/*
 * Whether the client's connection has a request under way (an exec, an
 * inspect, a worker's): the next waits until it is answered. They share
 * the connection's one timer (an exec's timeout, inspect's wait, a
 * snapshot's watch) and its answers, which one request at a time keeps
 * apart.
 */
static bool under_way(const struct client *cl)
{
	return cl->pid > 0 || cl->spawn || cl->stat || cl->work || cl->wait_kind;
}

/* Why a request is refused while another is under way, or the sandbox ends. */
static const char *busy_text(const struct keeper *k)
{
	return k->end_reason ? "the sandbox is ending" : "this connection has a request under way";
}

/* Whether a client only holds its connection: nothing asked, nothing under way. */
static bool idle(const struct client *cl)
{
	return cl->fd >= 0 && !cl->hung_up && !under_way(cl) && !cl->waits_end && !cl->holds;
}

/* Hangs up on the longest-idle client; false if none is idle. */
static bool evict_idle(struct keeper *k)
{
	struct client *oldest = NULL;

	for (size_t i = 0; i < k->n_clients; i++)
		if (idle(k->clients[i]) && (!oldest || k->clients[i]->since_ns < oldest->since_ns))
			oldest = k->clients[i];
	if (oldest)
		hang_up(oldest);
	return oldest != NULL;
}

/* accept(2) found no fd to give: room is made, or the listeners rest a while. */
static void out_of_fds(struct keeper *k)
{
	if (!evict_idle(k))
		k->accept_paused_ns = sr_monotonic_ns() + ACCEPT_PAUSE_MS * 1000000LL;
}

static void on_port_connection(struct keeper *k, struct port *p)
{
	struct conn **nv, *c;
	uid_t uid;
	int fd = accept4(p->listen_fd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);

	if (fd < 0) {
		if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM)
			out_of_fds(k);
		return;
	}
	if (k->end_reason || k->n_conns >= CONNS_MAX) {
		close(fd);
		return;
	}
	/* A preview's port: its relay (serve) is ours; another user's connection is not. */
	if (p->owner_only && (sr_tcp_peer_uid(fd, &uid) < 0 || !sr_uid_is_us(uid))) {
		close(fd);
		return;
	}
	c = calloc(1, sizeof(*c));
	nv = c ? realloc(k->conns, sizeof(*nv) * (k->n_conns + 1)) : NULL;
	if (!nv || sr_sandbox_connect(k->sb, p->port, &c->id) < 0) {
		if (nv)
			k->conns = nv;
		free(c);
		close(fd);
		return;
	}
	k->conns = nv;
	c->host_fd = fd;
	c->sandbox_fd = -1;
	k->conns[k->n_conns++] = c;
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

/* The client's timer: ms from now, and every ms after with repeat; none for ms <= 0. */
static int arm_client_timer(struct client *cl, int64_t ms, bool repeat)
{
	struct itimerspec its = {.it_value = sr_timespec_ms(ms > 0 ? (uint64_t)ms : 0)};

	if (ms <= 0)
		return 0;
	if (repeat)
		its.it_interval = its.it_value;
	cl->timerfd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
	if (cl->timerfd < 0 || timerfd_settime(cl->timerfd, 0, &its, NULL) < 0)
		return sr_negerrno();
	return 0;
}

/*
 * A warm invocation (serve --warm): the agent the sandbox was made for,
 * with its environment (the deployment's secrets among it), parked
 * before its exec until its stdin has the prompt (SR_SPAWN_PARK), and
 * ending the sandbox when it exits: one sandbox, one request. Answered
 * {"ok", "pid"} once parked; its exit is the sandbox's end (on_ended).
 */
static void do_invoke(struct keeper *k, struct client *cl, int *fds, size_t n_fds)
{
	struct sr_spawn s = {.flags = SR_SPAWN_AGENT | SR_SPAWN_ENDS_SANDBOX | SR_SPAWN_PARK};
	struct sr_error err = {0};

	if (n_fds != 3)
		return reply_error(cl, -EINVAL, 125, "exec: a malformed request");
	for (int i = 0; i < 3; i++)
		s.stdio[i] = fds[i];
	cl->start_ns = sr_monotonic_ns();
	if (sr_sandbox_spawn_start(k->sb, &s, &cl->spawn, &err) < 0) {
		cl->spawn = 0;
		return reply(cl, sr_ctl_error_reply(&err), NULL, 0);
	}
}

/*
 * A pty's "rows" or "cols": absent, or what a struct winsize holds (0:
 * unknown). The socket is the user's API, not only the CLI's: a size out
 * of range is refused, not cut to 16 bits into some other size.
 */
static bool pty_size_ok(json_t *v)
{
	return !v || (json_is_integer(v) && json_integer_value(v) >= 0 &&
		      json_integer_value(v) <= USHRT_MAX);
}

static void do_exec(struct keeper *k, struct client *cl, json_t *req, int *fds, size_t n_fds)
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

	if (k->end_reason || under_way(cl))
		return reply_error(cl, -EBUSY, 125, "exec: %s", busy_text(k));
	if (invoke)
		return do_invoke(k, cl, fds, n_fds);
	/* Those of its stdio not on a pty come as fds, in order (protocol.h). */
	if (n == 0 || (mask & ~(unsigned)SR_SPAWN_PTY) ||
	    n_fds != 3 - (size_t)__builtin_popcount(mask) ||
	    (cwd && !json_is_null(cwd) && !json_is_string(cwd)) ||
	    (timeout && !json_is_integer(timeout)) || !pty_size_ok(rows) || !pty_size_ok(cols))
		return reply_error(cl, -EINVAL, 125, "exec: a malformed request");
	argv = calloc(n + 1, sizeof(*argv));
	if (!argv)
		return reply_error(cl, -ENOMEM, 125, "exec: out of memory");
	for (size_t i = 0; i < n; i++) {
		argv[i] = (char *)json_string_value(json_array_get(argv_j, i));
		if (!argv[i] || !*argv[i])
			return reply_error(cl, -EINVAL, 125,
					   "exec: an empty or non-string argument");
	}
	if (exec_env(k, json_object_get(req, "env"), &env, &err) < 0)
		return reply(cl, sr_ctl_error_reply(&err), NULL, 0);
	s.argv = argv;
	s.envp = env.items;
	s.cwd = json_is_string(cwd) ? json_string_value(cwd) : NULL;
	if (json_is_integer(rows) && json_is_integer(cols)) {
		s.rows = (unsigned short)json_integer_value(rows);
		s.cols = (unsigned short)json_integer_value(cols);
	}
	for (int i = 0, next = 0; i < 3; i++)
		s.stdio[i] = mask & (SR_SPAWN_PTY_STDIN << i) ? -1 : fds[next++];
	cl->start_ns = sr_monotonic_ns();
	/* Answered when PID 1 has started it (on_spawned): the loop does not wait for that. */
	if (arm_client_timer(cl, timeout ? json_integer_value(timeout) : 0, false) < 0 ||
	    sr_sandbox_spawn_start(k->sb, &s, &cl->spawn, &err) < 0) {
		sr_strv_free(&env);
		if (!err.code)
			sr_error_errno(&err, sr_negerrno(), "exec: timer");
		cl->spawn = 0;
		sr_closep(&cl->timerfd);
		return reply(cl, sr_ctl_error_reply(&err), NULL, 0);
	}
	sr_strv_free(&env);
}

/* state.json with the usage: the cgroup's and ours, and PID 1's count u where it answered. */
static json_t *inspect_json(struct keeper *k, const struct sr_usage *u)
{
	json_t *j = json_deep_copy(k->state), *usage = json_object();
	struct sr_result r;
	size_t running = 0;

	sr_result_init(&r);
	sr_sandbox_usage(k->sb, &r);
	json_object_set_new(usage, "processes", u ? json_integer(u->processes) : json_null());
	if (u) {
		/* A cgroup counts CPU time better (the kernel's own); PID 1's count otherwise. */
		if (!sr_sandbox_cgroup(k->sb) || r.user_ms <= 0) {
			r.user_ms = u->user_ms;
			r.sys_ms = u->sys_ms;
		}
		r.disk_used_bytes = u->disk_used;
		if (r.peak_memory_scope != SR_PEAK_SANDBOX && u->peak_rss >= 0) {
			r.peak_memory_bytes = u->peak_rss;
			r.peak_memory_scope = SR_PEAK_PROCESS;
		}
	}
	for (size_t i = 0; i < k->n_clients; i++)
		running += k->clients[i]->pid > 0;
	json_object_set_new(usage, "user_ms", json_real(r.user_ms));
	json_object_set_new(usage, "sys_ms", json_real(r.sys_ms));
	json_object_set_new(usage, "peak_memory_bytes",
			    r.peak_memory_bytes >= 0 ? json_integer(r.peak_memory_bytes)
						     : json_null());
	json_object_set_new(usage, "peak_memory_scope",
			    sr_json_string(r.peak_memory_bytes >= 0
					       ? sr_peak_scope_to_string(r.peak_memory_scope)
					       : NULL));
	json_object_set_new(usage, "disk_used_bytes",
			    r.disk_used_bytes >= 0 ? json_integer(r.disk_used_bytes) : json_null());
	json_object_set_new(usage, "execs_running", json_integer((json_int_t)running));
	json_object_set_new(j, "usage", usage);
	json_object_set_new(j, "ok", json_true());
	return j;
}

/* The requests served by a worker in the sandbox (work.h), on the stream fd the client passes. */
static const struct {
	const char *op;
	int kind;
} work_ops[] = {
    {"cp_out", SR_WORK_TAR_OUT},      {"cp_in", SR_WORK_TAR_IN},
    {"file_read", SR_WORK_FILE_READ}, {"file_write", SR_WORK_FILE_WRITE},
    {"file_list", SR_WORK_LIST},      {"file_stat", SR_WORK_STAT},
    {"file_remove", SR_WORK_REMOVE},  {"file_mkdir", SR_WORK_MKDIR},
};

static int work_kind(const char *op)
{
	for (size_t i = 0; op && i < SR_ARRAY_SIZE(work_ops); i++)
		if (strcmp(op, work_ops[i].op) == 0)
			return work_ops[i].kind;
	return -1;
}

/* The verb a worker of this kind serves, for its messages. */
static const char *work_verb(const struct client *cl, int kind)
{
	return cl->snap.name ? "snapshot" : kind == SR_WORK_CHANGES ? "changes" : "cp";
}

/*
 * The client's waiting request to PID 1: its worker starts. A snapshot's
 * file is watched from then on (its wait for room is not idleness).
 */
static void work_send(struct keeper *k, struct client *cl)
{
	int kind = cl->wait_kind;
	const char *verb = work_verb(cl, kind);
	_cleanup_free_ char *path = steal_pointer(&cl->wait_path);
	_cleanup_close_ int fd = steal_fd(&cl->wait_fd);
	int r;

	work_forget(k, cl);
	r = sr_sandbox_work(k->sb, kind, path, fd, 0, &cl->work);
	if (r < 0) {
		cl->work = 0;
		sr_snapshot_abort(&cl->snap);
		return reply_error(cl, r, 125, "%s: %s", verb, strerror(-r));
	}
	k->n_workers++;
	if (kind == SR_WORK_SNAPSHOT && cl->snap_idle_ms > 0) {
		if (arm_client_timer(cl, cl->snap_idle_ms, true) < 0)
			sr_closep(&cl->timerfd); /* no watch: as before, it waits */
		cl->snap_fd = steal_fd(&fd);
	}
}

/* Workers start while fewer than WORKERS_MAX run: the request that came first. */
static void work_next(struct keeper *k)
{
	while (k->n_waiting > 0 && k->n_workers < WORKERS_MAX && !k->end_reason) {
		struct client *first = NULL;

		for (size_t i = 0; i < k->n_clients; i++) {
			struct client *cl = k->clients[i];

			if (cl->wait_kind && !cl->hung_up &&
			    (!first || cl->wait_seq < first->wait_seq))
				first = cl;
		}
		if (!first)
			return;
		work_send(k, first);
	}
}

/*
 * A worker for the client, in its turn (work_next(), and at the end of
 * each round): kind, on the stream *fd (taken), at path (NULL: none).
 */
static void work_queue(struct keeper *k, struct client *cl, int kind, const char *path, int *fd)
{
	const char *verb = work_verb(cl, kind);

	if (path && !(cl->wait_path = strdup(path))) {
		sr_snapshot_abort(&cl->snap);
		return reply_error(cl, -ENOMEM, 125, "%s: %s", verb, strerror(ENOMEM));
	}
	cl->wait_kind = kind;
	cl->wait_fd = steal_fd(fd);
	cl->wait_seq = ++k->work_seq;
	k->n_waiting++;
	work_next(k);
}

/* cp, files: a worker in the sandbox writes or reads the stream on the client's pipe. */
static void do_copy(struct keeper *k, struct client *cl, json_t *req, int kind, int *fds,
		    size_t n_fds)
{
	const char *path = json_string_value(json_object_get(req, "path"));

	if (!path || !*path || n_fds != 1)
		return reply_error(cl, -EINVAL, 125, "cp: a malformed request");
	if (k->end_reason || under_way(cl))
		return reply_error(cl, -EBUSY, 125, "cp: %s", busy_text(k));
	work_queue(k, cl, kind, path, &fds[0]);
}

/* diff ID, apply ID: a worker writes the workspace's changes, raw (changes.h), on the client's
 * pipe. */
static void do_changes(struct keeper *k, struct client *cl, int *fds, size_t n_fds)
{
	if (n_fds != 1)
		return reply_error(cl, -EINVAL, 125, "changes: a malformed request");
	if (k->end_reason || under_way(cl))
		return reply_error(cl, -EBUSY, 125, "changes: %s", busy_text(k));
	work_queue(k, cl, SR_WORK_CHANGES, NULL, &fds[0]);
}

/*
 * snapshot NAME: the sandbox's files, written by a worker inside (work.c)
 * into a file of the user's data directory opened here, then the
 * configuration beside it (snapshot.h).
 */
static void do_snapshot(struct keeper *k, struct client *cl, json_t *req)
{
	const char *name = json_string_value(json_object_get(req, "name"));
	json_t *idle = json_object_get(req, "idle_ms");
	struct sr_error err = {0};
	_cleanup_close_ int fd = -1;

	if (!name || (idle && (!json_is_integer(idle) || json_integer_value(idle) < 0 ||
			       json_integer_value(idle) > INT_MAX)))
		return reply_error(cl, -EINVAL, 125, "snapshot: a malformed request");
	if (k->end_reason || under_way(cl))
		return reply_error(cl, -EBUSY, 125, "snapshot: %s", busy_text(k));
	if (sr_snapshot_begin(name, &cl->snap, &fd, &err) < 0)
		return reply(cl, sr_ctl_error_reply(&err), NULL, 0);
	cl->snap_idle_ms = idle ? json_integer_value(idle) : SNAPSHOT_IDLE_MS;
	work_queue(k, cl, SR_WORK_SNAPSHOT, NULL, &fd);
}

/*
 * A snapshot's watch: its file grew since the last look, or it is given
 * up (the client told why, its worker cancelled, its files removed).
 */
static void on_snapshot_timer(struct client *cl)
{
	char took[32];
	struct stat st;

	if (fstat(cl->snap_fd, &st) == 0 && st.st_size != cl->snap_size) {
		cl->snap_size = st.st_size;
		return;
	}
	sr_closep(&cl->timerfd);
	sr_format_duration((uint64_t)cl->snap_idle_ms, took, sizeof(took));
	reply_error(cl, -ETIMEDOUT, 125,
		    "snapshot: nothing was written for %s (its worker in the sandbox stopped?)",
		    took);
	hang_up(cl);
}

static void do_timeout(struct keeper *k, struct client *cl, json_t *req)
{
	json_t *ms = json_object_get(req, "ms");

	if (!json_is_integer(ms) || json_integer_value(ms) < 0)
		return reply_error(cl, -EINVAL, 125, "timeout: a malformed request");
	if ((uint64_t)json_integer_value(ms) > DEADLINE_MAX_MS)
		return reply_error(cl, -EINVAL, 125, "timeout: at most 366 days");
	if (set_deadline(k, (uint64_t)json_integer_value(ms), false) < 0)
		return reply_error(cl, sr_negerrno(), 125, "timeout: %s", strerror(errno));
	reply(cl, json_pack("{sbsO}", "ok", 1, "expires", json_object_get(k->state, "expires")),
	      NULL, 0);
}

/* Answered with PID 1's count (on_stats), or without it once STAT_WAIT_MS have passed. */
static void do_inspect(struct keeper *k, struct client *cl)
{
	if (under_way(cl))
		return reply_error(cl, -EBUSY, 125, "inspect: %s", busy_text(k));
	if (sr_sandbox_stat_start(k->sb, &cl->stat) < 0 ||
	    arm_client_timer(cl, STAT_WAIT_MS, false) < 0) {
		cl->stat = 0;
		sr_closep(&cl->timerfd);
		reply(cl, inspect_json(k, NULL), NULL, 0);
	}
}

/*
 * A signal for an exec whose process PID 1 has not started (and may
 * never, if the agent keeps it busy): one that would end the process
 * ends the exec now, as its process would have (128+N); the process is
 * killed if it starts after all.
 */
static void cancel_spawn(struct keeper *k, struct client *cl, int sig)
{
	if (sig == SIGCONT || sig == SIGWINCH || sig == SIGCHLD || sig == SIGURG ||
	    sig == SIGSTOP || sig == SIGTSTP || sig == SIGTTIN || sig == SIGTTOU || sig <= 0 ||
	    sig >= NSIG)
		return;
	cl->cancel_sig = sig;
	exec_ended(k, cl, NULL);
	hang_up(cl);
}

/*
 * hold: a warm sandbox (pool.h), made ahead and waiting for its user. It
 * has no deadline, and ends when the holder hangs up, even killed: a
 * pool's sandboxes never outlive their pool. release hands it over, with
 * the deadline it gets from now.
 */
static void do_hold(struct keeper *k, struct client *cl, bool hold, json_t *req)
{
	json_t *ms = json_object_get(req, "ms"), *taken = json_object_get(req, "taken_ns");

	if (!hold && !cl->holds)
		return reply_error(cl, -EINVAL, 125, "release: not held on this connection");
	if (!hold && ms && (!json_is_integer(ms) || json_integer_value(ms) < 0))
		return reply_error(cl, -EINVAL, 125, "release: a malformed request");
	if (!hold && ms && (uint64_t)json_integer_value(ms) > DEADLINE_MAX_MS)
		return reply_error(cl, -EINVAL, 125, "release: at most 366 days");
	cl->holds = hold;
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
		reply(cl, json_pack("{sb}", "ok", 1), NULL, 0);
		exec_ended(k, cl, &cl->exit);
		cl->exit_pending = false;
		cl->pid = 0;
		hang_up(cl);
		return;
	}
	json_object_set_new(k->state, "state", json_string(hold ? "warm" : "running"));
	if (set_deadline(k,
			 hold ? 0
			 : ms ? (uint64_t)json_integer_value(ms)
			      : k->config->timeout_ms,
			 !hold) < 0)
		return reply_error(cl, sr_negerrno(), 125, "timeout: %s", strerror(errno));
	/* A hold's answer carries what ls shows: its taker answers with it, no file read. */
	reply(cl,
	      hold ? json_pack("{sbsO}", "ok", 1, "state", k->state)
		   : json_pack("{sbsO}", "ok", 1, "expires", json_object_get(k->state, "expires")),
	      NULL, 0);
}

static void on_request(struct keeper *k, struct client *cl)
{
	json_t *req = NULL;
	int fds[SR_CTL_FDS_MAX];
	size_t n_fds = 0;
	const char *op;
	int r = sr_ctl_recv(cl->fd, &req, fds, &n_fds);

	if (r <= 0) {
		/*
		 * Hung up (or garbage): an exec of its is killed, and a cp's or
		 * snapshot's worker (one the agent stopped would never see its
		 * pipe's end); nothing of a client outlives it.
		 */
		hang_up(cl);
		return;
	}
	op = json_string_value(json_object_get(req, "op"));
	if (sr_streq(op, "exec")) {
		do_exec(k, cl, req, fds, n_fds);
	} else if (sr_streq(op, "signal")) {
		json_t *sig = json_object_get(req, "sig");

		if (cl->pid > 0 && json_is_integer(sig))
			sr_sandbox_signal(k->sb, cl->pid, (int)json_integer_value(sig));
		else if (cl->spawn && json_is_integer(sig))
			cancel_spawn(k, cl, (int)json_integer_value(sig));
	} else if (work_kind(op) > 0) {
		do_copy(k, cl, req, work_kind(op), fds, n_fds);
	} else if (sr_streq(op, "hold") || sr_streq(op, "release")) {
		do_hold(k, cl, sr_streq(op, "hold"), req);
	} else if (sr_streq(op, "snapshot")) {
		do_snapshot(k, cl, req);
	} else if (sr_streq(op, "changes")) {
		do_changes(k, cl, fds, n_fds);
	} else if (sr_streq(op, "port")) {
		do_port(k, cl, req);
	} else if (sr_streq(op, "inspect")) {
		do_inspect(k, cl);
	} else if (sr_streq(op, "timeout")) {
		do_timeout(k, cl, req);
	} else if (sr_streq(op, "rm")) {
		cl->waits_end = true;
		begin_end(k, "rm");
		if (json_is_true(json_object_get(req, "force")))
			sr_sandbox_kill(k->sb);
	} else {
		reply_error(cl, -EINVAL, 125, "unknown request '%s'", op ? op : "?");
	}
	for (size_t i = 0; i < n_fds; i++)
		sr_closep(&fds[i]); /* a worker's request that waits took its stream */
	json_decref(req);
}

static void on_connection(struct keeper *k)
{
	struct client **nv, *cl;
	int fd = accept4(k->listen_fd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);

	if (fd < 0) {
		if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM)
			out_of_fds(k);
		return;
	}
	/* The state directory is the user's own already; the peer's uid is checked all the same. */
	if (sr_ctl_peer_is_us(fd) < 0 || (k->n_clients >= CLIENTS_MAX && !evict_idle(k) &&
					  k->n_clients >= CLIENTS_MAX + CLIENTS_RESERVE)) {
		close(fd);
		return;
	}
	cl = calloc(1, sizeof(*cl));
	nv = cl ? realloc(k->clients, sizeof(*nv) * (k->n_clients + 1)) : NULL;
	if (!nv) {
		free(cl);
		close(fd);
		return;
	}
	/* Non-blocking, for good: see reply(). */
	*cl = (struct client){
	    .fd = fd, .timerfd = -1, .snap_fd = -1, .wait_fd = -1, .since_ns = sr_monotonic_ns()};
	k->clients = nv;
	k->clients[k->n_clients++] = cl;
}

static void on_signal(struct keeper *k)
{
	struct signalfd_siginfo si;

	while (read(k->sigfd, &si, sizeof(si)) == (ssize_t)sizeof(si))
		begin_end(k, "signal");
}

/*
 * A client's timer: its inspect has waited long enough for PID 1, or its
 * exec's --timeout is over -- also when PID 1 has not started the
 * process yet (it is killed once it has): the client hears 124 now.
 */
static void on_client_timer(struct keeper *k, struct client *cl)
{
	uint64_t x;

	(void)!read(cl->timerfd, &x, sizeof(x));
	if (cl->work && cl->snap_fd >= 0)
		return on_snapshot_timer(cl);
	sr_closep(&cl->timerfd);
	if (cl->stat) {
		cl->stat = 0;
		reply(cl, inspect_json(k, NULL), NULL, 0);
		return;
	}
	if (cl->pid <= 0 && !cl->spawn)
		return;
	cl->timed_out = true;
	if (cl->pid > 0) {
		sr_sandbox_kill_process(k->sb, cl->pid);
		return;
	}
	exec_ended(k, cl, NULL);
	hang_up(cl);
}

/* ns from now until at (a CLOCK_MONOTONIC time, 0: none), as a poll timeout in ms; -1 for none. */
static int ms_until(int64_t at, int64_t now)
{
	if (!at)
		return -1;
	return at <= now ? 0 : (int)((at - now) / 1000000 + 1);
}

static int earlier(int a, int b)
{
	return a < 0 || (b >= 0 && b < a) ? b : a;
}

/*
 * What is due now (state.json to write, pages to drop unless someone is
 * being served: then once they have gone, trim_when_idle); then the loop's
 * wait: ms (-1: none), or shorter for what is due next.
 */
static int poll_timeout(struct keeper *k, int ms)
{
	int64_t now = sr_monotonic_ns();

	if (k->save_at_ns && k->save_at_ns <= now)
		save_state(k);
	if (k->trim_at_ns && k->trim_at_ns <= now) {
		k->trim_at_ns = 0;
		if (!busy(k))
			sr_proc_drop_clean_pages();
	}
	return earlier(earlier(ms, ms_until(k->save_at_ns, now)), ms_until(k->trim_at_ns, now));
}

enum slot_kind {
	SLOT_LISTEN,
	SLOT_SIGNAL,
	SLOT_DEADLINE,
	SLOT_SANDBOX,
	SLOT_CLIENT,
	SLOT_TIMER,
	SLOT_PORT,
	SLOT_RELAY_HOST,
	SLOT_RELAY_SANDBOX,
	SLOT_ARTIFACTS,
};

/* What an entry of a round's poll is. */
struct slot {
	enum slot_kind kind;
	struct client *cl;
	size_t index; /* a port's or a relayed connection's */
};

/* What one round of the loop polls: fds[i] is what slots[i] says. */
struct poll_set {
	struct pollfd *fds;
	struct slot *slots;
	size_t n;
};

/*
 * An fd of -1 takes no entry: poll(2) counts every entry against
 * RLIMIT_NOFILE (EINVAL past it), holes included, and most clients' timers
 * are -1. Without them the entries are fds the keeper holds, which its
 * limit bounds already.
 */
static void add(struct poll_set *ps, int fd, short events, enum slot_kind kind, struct client *cl,
		size_t index)
{
	if (fd < 0)
		return;
	ps->fds[ps->n] = (struct pollfd){.fd = fd, .events = events};
	ps->slots[ps->n++] = (struct slot){.kind = kind, .cl = cl, .index = index};
}

/* The most entries fill_poll_set() makes: one per fd it may add. */
static size_t poll_set_cap(const struct keeper *k)
{
	return 4 + SR_SANDBOX_POLL_FDS + SR_ARTIFACTS_POLL_FDS + 2 * k->n_clients + k->n_ports +
	       2 * k->n_conns;
}

static void fill_poll_set(struct keeper *k, struct poll_set *ps, bool accepting)
{
	int sbfds[SR_SANDBOX_POLL_FDS], afds[SR_ARTIFACTS_POLL_FDS] = {-1, -1};

	/* While the artifacts come out, inspect is answered and rm waits for the end. */
	if (accepting && (!k->end_reason || k->artifacts))
		add(ps, k->listen_fd, POLLIN, SLOT_LISTEN, NULL, 0);
	add(ps, k->sigfd, POLLIN, SLOT_SIGNAL, NULL, 0);
	add(ps, k->deadline_fd, POLLIN, SLOT_DEADLINE, NULL, 0);
	sr_sandbox_poll_fds(k->sb, sbfds);
	for (size_t i = 0; i < SR_SANDBOX_POLL_FDS; i++)
		add(ps, sbfds[i], POLLIN, SLOT_SANDBOX, NULL, 0);
	/* A CANCEL or a kill waiting for room on PID 1's socket. */
	add(ps, sr_sandbox_poll_out_fd(k->sb), POLLOUT, SLOT_SANDBOX, NULL, 0);
	if (k->artifacts)
		sr_artifacts_poll_fds(k->artifacts, afds);
	for (size_t i = 0; i < SR_ARTIFACTS_POLL_FDS; i++)
		add(ps, afds[i], POLLIN, SLOT_ARTIFACTS, NULL, 0);
	for (size_t i = 0; i < k->n_clients; i++) {
		add(ps, k->clients[i]->fd, POLLIN, SLOT_CLIENT, k->clients[i], 0);
		add(ps, k->clients[i]->timerfd, POLLIN, SLOT_TIMER, k->clients[i], 0);
	}
	for (size_t i = 0; accepting && i < k->n_ports; i++)
		add(ps, k->ports[i].listen_fd, POLLIN, SLOT_PORT, NULL, i);
	/* A relayed connection's two sides side by side: step_relays() takes them as a pair. */
	for (size_t i = 0; i < k->n_conns; i++) {
		struct conn *c = k->conns[i];

		if (c->sandbox_fd < 0)
			continue;
		add(ps, c->host_fd, sr_relay_events(&c->relay, 0), SLOT_RELAY_HOST, NULL, i);
		add(ps, c->sandbox_fd, sr_relay_events(&c->relay, 1), SLOT_RELAY_SANDBOX, NULL, i);
	}
}

/*
 * Each relayed connection stepped with this round's events (its slots
 * name it by index: this comes before anything can change k->conns),
 * then those that failed dropped.
 */
static void step_relays(struct keeper *k, struct poll_set *ps)
{
	for (size_t i = 0; i + 1 < ps->n; i++) {
		struct sr_relay *relay;

		if (ps->slots[i].kind != SLOT_RELAY_HOST)
			continue;
		relay = &k->conns[ps->slots[i].index]->relay;
		relay->failed |= !sr_relay_step(relay, ps->fds[i].revents, ps->fds[i + 1].revents);
		ps->fds[i].revents = ps->fds[i + 1].revents = 0;
	}
	for (size_t i = k->n_conns; i-- > 0;)
		if (k->conns[i]->sandbox_fd >= 0 && k->conns[i]->relay.failed)
			drop_conn(k, i);
}

static void on_deadline(struct keeper *k)
{
	uint64_t x;

	(void)!read(k->deadline_fd, &x, sizeof(x));
	begin_end(k, "timeout");
}

/* Each ready fd to its handler; true if the sandbox's own are ready (for sr_sandbox_dispatch()). */
static bool on_ready(struct keeper *k, const struct poll_set *ps)
{
	bool sandbox = false;

	for (size_t i = 0; i < ps->n; i++) {
		struct client *cl = ps->slots[i].cl;

		if (!ps->fds[i].revents)
			continue;
		switch (ps->slots[i].kind) {
		case SLOT_LISTEN:
			on_connection(k);
			break;
		case SLOT_SIGNAL:
			on_signal(k);
			break;
		case SLOT_DEADLINE:
			on_deadline(k);
			break;
		case SLOT_SANDBOX:
			sandbox = true;
			break;
		case SLOT_CLIENT:
			if (cl->fd >= 0)
				on_request(k, cl);
			break;
		case SLOT_TIMER:
			if (cl->timerfd >= 0)
				on_client_timer(k, cl);
			break;
		case SLOT_PORT:
			on_port_connection(k, &k->ports[ps->slots[i].index]);
			break;
		case SLOT_RELAY_HOST:
		case SLOT_RELAY_SANDBOX:
		case SLOT_ARTIFACTS: /* collect() reads them, every round */
			break;
		}
	}
	return sandbox;
}

/*
 * Clients done with: hung up (or answered), their exec's process killed
 * and gone, their worker killed, PID 1 no longer to answer them.
 */
static void end_clients(struct keeper *k)
{
	for (size_t i = k->n_clients; i-- > 0;) {
		struct client *cl = k->clients[i];

		if (!cl->hung_up)
			continue;
		/* However the holder went (hung up, evicted, unread): its warm sandbox ends. */
		if (cl->holds) {
			cl->holds = false;
			begin_end(k, "released");
		}
		if (cl->pid > 0 && !cl->killed) {
			sr_sandbox_kill_process(k->sb, cl->pid);
			cl->killed = true;
		}
		if (cl->work) {
			sr_sandbox_cancel(k->sb, cl->work);
			work_ended(k, cl);
		}
		work_forget(k, cl);
		if (cl->pid <= 0 && !cl->spawn && !cl->stat)
			drop_client(k, i);
	}
	/* Workers that ended (or were given up) this round: those waiting start. */
	work_next(k);
}

static void loop(struct keeper *k)
{
	/* Artifacts still coming out of a sandbox that ended meanwhile: their takers finish. */
	while (!k->done || k->artifacts) {
		size_t cap = poll_set_cap(k);
		_cleanup_free_ struct pollfd *fds = calloc(cap, sizeof(*fds));
		_cleanup_free_ struct slot *slots = calloc(cap, sizeof(*slots));
		struct poll_set ps = {.fds = fds, .slots = slots};
		int64_t pause = k->accept_paused_ns - sr_monotonic_ns();
		bool accepting = pause <= 0;

		if (!fds || !slots) {
			sr_sandbox_kill(k->sb);
			return;
		}
		fill_poll_set(k, &ps, accepting);
		if (poll(fds, ps.n, poll_timeout(k, accepting ? -1 : (int)(pause / 1000000) + 1)) <
		    0) {
			if (errno == EINTR)
				continue;
			/* Not round again: a poll that fails for good would spin, blind. */
			sr_sandbox_kill(k->sb);
			return;
		}
		step_relays(k, &ps);
		if (on_ready(k, &ps))
			sr_sandbox_dispatch(k->sb);
		collect(k);
		end_clients(k);
	}
}

static int listen_ctl(struct keeper *k, struct sr_error *err)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	int fd;

	if (snprintf(sa.sun_path, sizeof(sa.sun_path), "%s/ctl", k->dir) >=
	    (int)sizeof(sa.sun_path))
		return sr_error_msg(err, -ENAMETOOLONG, "%s/ctl: path too long for a socket",
				    k->dir);
	fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0)
		return sr_error_errno(err, sr_negerrno(), "socket");
	/*
	 * A queue for as many connections as the keeper serves: serve does not
	 * wait for room in it (sr_ctl_connect_nowait()), and a burst of its
	 * requests (an upload's files, each a worker) outruns the loop, which
	 * takes one connection a round.
	 */
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 || listen(fd, CLIENTS_MAX) < 0) {
		int e = sr_negerrno();

		close(fd);
		return sr_error_errno(err, e, "listen on %s", sa.sun_path);
	}
	k->listen_fd = fd;
	return 0;
}

/*
 * Every child reaped (the network's helper, which ends within milliseconds
 * of the sandbox's network): looked at again after 0.5 ms, then twice as
 * long each time, up to 10 ms a wait and 2 s in all.
 */
static void reap_children(void)
{
	useconds_t us = 500, waited = 0;

	for (;;) {
		pid_t pid = waitpid(-1, NULL, WNOHANG);

		if (pid < 0 || (pid == 0 && waited >= 2000000))
			return;
		if (pid > 0)
			continue;
		usleep(us);
		waited += us;
		us = us < 5000 ? us * 2 : 10000;
	}
}

static int setup_signals(struct keeper *k, struct sr_error *err)
{
	static const int ends[] = {SIGTERM, SIGINT, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2, SIGALRM};
	sigset_t set;

	sigemptyset(&set);
	for (size_t i = 0; i < SR_ARRAY_SIZE(ends); i++)
		sigaddset(&set, ends[i]);
	if (sigprocmask(SIG_BLOCK, &set, NULL) < 0)
		return sr_error_errno(err, sr_negerrno(), "block signals");
	k->sigfd = signalfd(-1, &set, SFD_CLOEXEC | SFD_NONBLOCK);
	if (k->sigfd < 0)
		return sr_error_errno(err, sr_negerrno(), "signalfd");
	return 0;
}

/* stdin and stdout to /dev/null, stderr to the log: the create command's are not ours to hold. */
static int detach_stdio(struct keeper *k, struct sr_error *err)
{
	_cleanup_close_ int null = open("/dev/null", O_RDWR | O_CLOEXEC);
	_cleanup_free_ char *log = NULL;

	if (asprintf(&log, "%s/keeper.log", k->dir) < 0)
		return sr_error_errno(err, -ENOMEM, "keeper.log");
	k->log_fd = open(log, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (null < 0 || k->log_fd < 0 || dup2(null, 0) < 0 || dup2(null, 1) < 0 ||
	    dup2(k->log_fd, 2) < 0)
		return sr_error_errno(err, sr_negerrno(), "keeper: stdio");
	return 0;
}

static int start(struct keeper *k, struct sr_error *err)
{
	struct sr_sandbox_opts o = {.sink = &k->sink, .ops = &keeper_ops, .ctx = k, .id = k->id};
	_cleanup_free_ char *statedir = NULL;
	struct sr_strv cgroups = {0};
	json_t *cg;
	int r;

	if (k->config->timeout_ms > DEADLINE_MAX_MS)
		return sr_error_msg(err, -EINVAL,
				    "--timeout: at most 366 days for a living sandbox");
	sr_sandbox_new_id(k->id);
	{
		struct timespec t;

		clock_gettime(CLOCK_REALTIME_COARSE, &t);
		k->t0_ns = (int64_t)t.tv_sec * 1000000000 + t.tv_nsec;
	}
	k->state = initial_state(k);
	if (!k->state)
		return sr_error_errno(err, -ENOMEM, "state");
	if ((r = setup_signals(k, err)) < 0 || (r = sr_state_dir(&statedir, err)) < 0 ||
	    (r = sr_state_reserve(statedir, k->id, k->config->name, k->state, &k->dir, &k->lock,
				  err)) < 0 ||
	    (r = detach_stdio(k, err)) < 0)
		return r;
	k->deadline_fd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
	if (k->deadline_fd < 0)
		return sr_error_errno(err, sr_negerrno(), "timer");
	r = sr_sandbox_create(k->config, &o, &k->record, &k->sb, err);
	if (r < 0)
		return r;
	if ((r = listen_ctl(k, err)) < 0)
		return r;
	cg = json_array();
	if (sr_sandbox_cgroup(k->sb) && sr_cgroup_paths(sr_sandbox_cgroup(k->sb), &cgroups) >= 0)
		for (size_t i = 0; i < cgroups.n; i++)
			json_array_append_new(cg, json_string(cgroups.items[i]));
	sr_strv_free(&cgroups);
	json_object_set_new(k->state, "cgroups", cg);
	json_object_set_new(k->state, "enforced", enforced_json(&k->record));
	json_object_set_new(k->state, "workspace", sr_json_string(sr_sandbox_workspace(k->sb)));
	json_object_set_new(k->state, "workspace_dir",
			    sr_json_string(sr_sandbox_workspace_dir(k->sb)));
	json_object_set_new(k->state, "base_time_ns", json_integer(k->t0_ns));
	json_object_set_new(k->state, "state", json_string("running"));
	/* The deadline counts from now, the sandbox ready: 0 is none (profile ci). */
	if (set_deadline(k, k->config->timeout_ms, false) < 0)
		return sr_error_errno(err, sr_negerrno(), "timer");
	return 0;
}

/*
 * What the create command had open above stdio, but the pipe to it: not
 * the keeper's to hold for the sandbox's life (a `create 3>&1 | cat`
 * would wait for rm). Taken once the sandbox is made -- its agent may be
 * one of them (/dev/fd/N) -- and closed then.
 */
static void inherited_fds(int ready_fd, struct sr_strv *ret)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *de;

	if (!d)
		return;
	while ((de = readdir(d))) {
		int fd = atoi(de->d_name);

		if (de->d_name[0] != '.' && fd > 2 && fd != ready_fd && fd != dirfd(d))
			(void)sr_strv_push(ret, de->d_name);
	}
	closedir(d);
}

static void close_inherited(struct sr_strv *fds)
{
	for (size_t i = 0; i < fds->n; i++)
		close(atoi(fds->items[i]));
	sr_strv_free(fds);
}

/*
 * Clients, their timers and published ports' connections take fds: the
 * soft limit up to the hard one (after the sandbox is made: its
 * processes keep the caller's).
 */
static void raise_fd_limit(void)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		(void)setrlimit(RLIMIT_NOFILE, &rl);
	}
}

/*
 * The sandbox gone (or never made): everything of it let go, rm told, the
 * state directory removed, in that order -- nothing of the sandbox is left
 * once rm has its answer.
 */
static void tear_down(struct keeper *k)
{
	/* A loop that could not go on leaves what was being taken out unfinished. */
	if (k->artifacts) {
		sr_artifacts_free(steal_pointer(&k->artifacts));
		sr_error_msg(&k->artifacts_err, -EIO,
			     "the sandbox's artifacts were left unfinished");
	}
	sr_sandbox_free(k->sb);
	/* Published ports close with the sandbox, before anyone hears it is gone. */
	while (k->n_conns)
		drop_conn(k, k->n_conns - 1);
	free(k->conns);
	for (size_t i = 0; i < k->n_ports; i++)
		sr_closep(&k->ports[i].listen_fd);
	free(k->ports);
	/* The helper, reaped. */
	reap_children();
	if (k->dir)
		sr_state_remove(k->dir, NULL);
	/* rm is told whether the artifacts came out: the sandbox is gone either way. */
	for (size_t i = 0; i < k->n_clients; i++)
		if (k->clients[i]->waits_end)
			reply(k->clients[i],
			      k->artifacts_err.code ? sr_ctl_error_reply(&k->artifacts_err)
						    : json_pack("{sbss}", "ok", 1, "id", k->id),
			      NULL, 0);
	while (k->n_clients)
		drop_client(k, k->n_clients - 1);
	free(k->clients);
	free(k->dir);
	if (k->state)
		json_decref(k->state);
	sr_closep(&k->lock);
	sr_closep(&k->listen_fd);
	sr_closep(&k->sigfd);
	sr_closep(&k->deadline_fd);
	sr_closep(&k->log_fd);
}

int sr_keeper_main(const struct sr_config *c, enum sr_log_level level, int ready_fd)
{
	struct sr_strv caller_fds = {0};
	struct keeper k = {
	    .config = c,
	    .ready_fd = ready_fd,
	    .log_fd = -1,
	    .lock = -1,
	    .listen_fd = -1,
	    .sigfd = -1,
	    .deadline_fd = -1,
	};
	struct sr_error err = {0};
	int status = 0, r;

	k.sink = (struct sr_sink){.level = level, .write = keeper_write, .ctx = &k};
	sr_result_init(&k.record);
	inherited_fds(ready_fd, &caller_fds);
	r = start(&k, &err);
	/* Nor the caller's working directory (a relative agent path was resolved by now). */
	close_inherited(&caller_fds);
	if (chdir("/") < 0 && r >= 0)
		r = sr_error_errno(&err, sr_negerrno(), "chdir /");
	raise_fd_limit();
	if (r < 0) {
		status = err.status ? err.status : 125;
		answer_create(&k, status, &err);
	} else {
		hide_cmdline(k.id);
		/*
		 * It lives as long as its sandbox and mostly waits: the code only
		 * the set-up ran (option parsing, the profile, the network's) is
		 * no longer its to keep resident, once it has waited a while.
		 */
		k.trim_at_ns = sr_monotonic_ns() + TRIM_IDLE_MS * 1000000LL;
		if (answer_create(&k, 0, NULL))
			loop(&k);
	}
	tear_down(&k);
	return status;
}
