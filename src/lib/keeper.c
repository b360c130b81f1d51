/* SPDX-License-Identifier: MIT */
/*
 * The keeper of a living sandbox: one process, one sandbox, one event
 * loop (poll over the sandbox's fds, the control socket and its
 * connections, a signalfd and the deadline's timerfd). It never enters
 * the sandbox; every request becomes a message to PID 1 (protocol.h).
 */
#include "keeper.h"
#include "keeper-internal.h"
#include "control.h"
#include "proc.h"
#include "secmem.h"
#include "state.h"
#include "util.h"

#include <poll.h>
#include <sys/signalfd.h>
#include <sys/timerfd.h>
#include <sys/un.h>
#include <dirent.h>
#include <sys/wait.h>

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
 * Tells the create command how it went; the socket is closed after an
 * error, and awaited for create's word after "ok ID" (on_ack). false:
 * nobody heard (the command was interrupted), and a sandbox whose id
 * nobody knows must not live on.
 *
 * A write that succeeds is not heard: it lies in the socket's buffer
 * until read, and a create interrupted (Ctrl-C) before it read and
 * printed the id left a sandbox nobody knew of. So the sandbox lives on
 * the byte create sends once the id is out (keeper.h), awaited in the
 * loop: a create stopped (Ctrl-Z) between the two would otherwise stop
 * the keeper too, its deadline and every client's request with it.
 */
static bool answer_create(struct keeper *k, int status, const struct sr_error *e)
{
	char line[SR_ERROR_MSG_MAX + 64];
	_cleanup_close_ int fd = steal_fd(&k->ready_fd);
	int n;

	if (fd < 0)
		return false;
	if (status == 0)
		n = snprintf(line, sizeof(line), "ok %s\n", k->id);
	else
		n = snprintf(line, sizeof(line), "error %d %d %s\n", status,
			     e->code < 0 ? -e->code : EIO, e->msg);
	if (write(fd, line, (size_t)n) != n)
		return false;
	if (status == 0)
		k->ack_fd = steal_fd(&fd);
	return true;
}

/* create's word that the id is out, or its end closed: nobody heard, and the loop ends. */
static void on_ack(struct keeper *k)
{
	char ack;
	ssize_t n = read(k->ack_fd, &ack, 1);

	if (n < 0 && (errno == EINTR || errno == EAGAIN))
		return;
	k->unheard = n != 1;
	sr_closep(&k->ack_fd);
}

/* What ps shows: the keeper and its sandbox, not the create command (its --env values). */
static void hide_cmdline(const char *id)
{
	char text[64];

	snprintf(text, sizeof(text), "sandbox-run-keeper %s", id);
	sr_proc_set_cmdline(text, "sr-keeper");
}

void keeper_begin_end(struct keeper *k, const char *reason)
{
	if (k->end_reason)
		return;
	k->end_reason = reason;
	json_object_set_new(k->state, "state", json_string("ending"));
	keeper_save_state_later(k);
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
void keeper_trim_when_idle(struct keeper *k)
{
	if (!busy(k))
		k->trim_at_ns = sr_monotonic_ns() + TRIM_IDLE_MS * 1000000LL;
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
			keeper_exec_ended(k, cl,
					  cl->exit_pending				? &cl->exit
					  : ends && cl->pid > 0 && cl->pid == ends->pid ? ends
											: NULL);
		cl->exit_pending = false;
		if (cl->work || cl->wait_kind)
			keeper_reply_error(cl, -ESRCH, 125, "the sandbox ended (%s)",
					   k->end_reason);
		if (cl->stat)
			keeper_reply(cl, keeper_inspect_json(k, NULL), NULL, 0);
		keeper_work_forget(k, cl);
		cl->pid = 0;
		cl->spawn = cl->stat = cl->work = 0;
	}
	k->done = true;
}

static const struct sr_sandbox_ops keeper_ops = {.exited = keeper_on_exited,
						 .ends_exited = keeper_on_ends_exited,
						 .ended = on_ended,
						 .worked = keeper_on_worked,
						 .connected = keeper_on_connected,
						 .spawned = keeper_on_spawned,
						 .stats = keeper_on_stats};

static void on_signal(struct keeper *k)
{
	struct signalfd_siginfo si;

	while (read(k->sigfd, &si, sizeof(si)) == (ssize_t)sizeof(si))
		keeper_begin_end(k, "signal");
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
 * being served: then once they have gone, keeper_trim_when_idle); then the loop's
 * wait: ms (-1: none), or shorter for what is due next.
 */
static int poll_timeout(struct keeper *k, int ms)
{
	int64_t now = sr_monotonic_ns();

	if (k->save_at_ns && k->save_at_ns <= now)
		keeper_save_state(k);
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
	SLOT_ACK,
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
	return 6 + SR_SANDBOX_POLL_FDS + SR_ARTIFACTS_POLL_FDS + 2 * k->n_clients + 2 * k->n_ports +
	       2 * k->n_conns;
}

static void fill_poll_set(struct keeper *k, struct poll_set *ps, bool accepting)
{
	int sbfds[SR_SANDBOX_POLL_FDS], afds[SR_ARTIFACTS_POLL_FDS] = {-1, -1};
	/* Published ports' connections wait for room on PID 1's socket too (keeper-ports.c). */
	bool room = k->n_ports == 0 || sr_sandbox_has_room(k->sb);

	/* While the artifacts come out, inspect is answered and rm waits for the end. */
	if (accepting && (!k->end_reason || k->artifacts))
		add(ps, k->listen_fd, POLLIN, SLOT_LISTEN, NULL, 0);
	add(ps, k->sigfd, POLLIN, SLOT_SIGNAL, NULL, 0);
	add(ps, k->deadline_fd, POLLIN, SLOT_DEADLINE, NULL, 0);
	add(ps, k->ack_fd, POLLIN, SLOT_ACK, NULL, 0);
	sr_sandbox_poll_fds(k->sb, sbfds);
	for (size_t i = 0; i < SR_SANDBOX_POLL_FDS; i++)
		add(ps, sbfds[i], POLLIN, SLOT_SANDBOX, NULL, 0);
	/* A CANCEL or a kill waiting for room on PID 1's socket. */
	add(ps, sr_sandbox_poll_out_fd(k->sb), POLLOUT, SLOT_SANDBOX, NULL, 0);
	/*
	 * Workers' requests waiting for room there (keeper_work_next(), after
	 * the round), or connections to published ports (left in their
	 * listening sockets' backlog meanwhile).
	 */
	if ((k->n_waiting > 0 && !k->end_reason) || !room)
		add(ps, sr_sandbox_room_fd(k->sb), POLLOUT, SLOT_SANDBOX, NULL, 0);
	if (k->artifacts)
		sr_artifacts_poll_fds(k->artifacts, afds);
	for (size_t i = 0; i < SR_ARTIFACTS_POLL_FDS; i++)
		add(ps, afds[i], POLLIN, SLOT_ARTIFACTS, NULL, 0);
	for (size_t i = 0; i < k->n_clients; i++) {
		add(ps, k->clients[i]->fd, POLLIN, SLOT_CLIENT, k->clients[i], 0);
		add(ps, k->clients[i]->timerfd, POLLIN, SLOT_TIMER, k->clients[i], 0);
	}
	/* A port's two sockets, 127.0.0.1's and ::1's, as 2i and 2i + 1. */
	for (size_t i = 0; accepting && room && i < k->n_ports; i++) {
		add(ps, k->ports[i].listen_fd, POLLIN, SLOT_PORT, NULL, 2 * i);
		add(ps, k->ports[i].listen_fd6, POLLIN, SLOT_PORT, NULL, 2 * i + 1);
	}
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
			keeper_drop_conn(k, i);
}

static void on_deadline(struct keeper *k)
{
	uint64_t x;

	(void)!read(k->deadline_fd, &x, sizeof(x));
	keeper_begin_end(k, "timeout");
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
			keeper_on_connection(k);
			break;
		case SLOT_SIGNAL:
			on_signal(k);
			break;
		case SLOT_DEADLINE:
			on_deadline(k);
			break;
		case SLOT_ACK:
			on_ack(k);
			break;
		case SLOT_SANDBOX:
			sandbox = true;
			break;
		case SLOT_CLIENT:
			if (cl->fd >= 0)
				keeper_on_request(k, cl);
			break;
		case SLOT_TIMER:
			if (cl->timerfd >= 0)
				keeper_on_client_timer(k, cl);
			break;
		case SLOT_PORT: {
			struct port *p = &k->ports[ps->slots[i].index / 2];

			keeper_on_port_connection(
			    k, p, ps->slots[i].index % 2 ? p->listen_fd6 : p->listen_fd);
			break;
		}
		case SLOT_RELAY_HOST:
		case SLOT_RELAY_SANDBOX:
		case SLOT_ARTIFACTS: /* collect() reads them, every round */
			break;
		}
	}
	return sandbox;
}

static void loop(struct keeper *k)
{
	/* Artifacts still coming out of a sandbox that ended meanwhile: their takers finish. */
	while ((!k->done || k->artifacts) && !k->unheard) {
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
		keeper_end_clients(k);
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
	int r;

	if (k->config->timeout_ms > SR_DEADLINE_MAX_MS)
		return sr_error_msg(err, -EINVAL, "--timeout: at most %d days for a living sandbox",
				    SR_DEADLINE_MAX_DAYS);
	sr_sandbox_new_id(k->id);
	{
		struct timespec t;

		clock_gettime(CLOCK_REALTIME_COARSE, &t);
		k->t0_ns = (int64_t)t.tv_sec * 1000000000 + t.tv_nsec;
	}
	k->state = keeper_initial_state(k);
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
	keeper_state_made(k);
	/* The deadline counts from now, the sandbox ready: 0 is none (profile ci). */
	if (keeper_set_deadline(k, k->config->timeout_ms, false) < 0)
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
		keeper_drop_conn(k, k->n_conns - 1);
	free(k->conns);
	for (size_t i = 0; i < k->n_ports; i++) {
		sr_closep(&k->ports[i].listen_fd);
		sr_closep(&k->ports[i].listen_fd6);
	}
	free(k->ports);
	/* The helper, reaped. */
	reap_children();
	if (k->dir)
		sr_state_remove(k->dir, NULL);
	/* rm is told whether the artifacts came out: the sandbox is gone either way. */
	for (size_t i = 0; i < k->n_clients; i++)
		if (k->clients[i]->waits_end)
			keeper_reply(k->clients[i],
				     k->artifacts_err.code
					 ? sr_ctl_error_reply(&k->artifacts_err)
					 : json_pack("{sbss}", "ok", 1, "id", k->id),
				     NULL, 0);
	while (k->n_clients)
		keeper_drop_client(k, k->n_clients - 1);
	free(k->clients);
	free(k->dir);
	if (k->state)
		json_decref(k->state);
	sr_closep(&k->lock);
	sr_closep(&k->listen_fd);
	sr_closep(&k->sigfd);
	sr_closep(&k->deadline_fd);
	sr_closep(&k->ack_fd);
	sr_closep(&k->log_fd);
}

int sr_keeper_main(const struct sr_config *c, enum sr_log_level level, int ready_fd)
{
	struct sr_strv caller_fds = {0};
	/* The word is the keeper's own (k.pool_token), for it to drop: not in its config. */
	struct sr_config own = *c;
	struct keeper k = {
	    .config = &own,
	    .pool_token = (char *)c->pool_token,
	    .ready_fd = ready_fd,
	    .ack_fd = -1,
	    .log_fd = -1,
	    .lock = -1,
	    .listen_fd = -1,
	    .sigfd = -1,
	    .deadline_fd = -1,
	    .reserved = c->pool_token != NULL,
	};
	struct sr_error err = {0};
	int status = 0, r;

	own.pool_token = NULL;
	k.sink = (struct sr_sink){.level = level, .write = keeper_write, .ctx = &k};
	sr_result_init(&k.record);
	inherited_fds(ready_fd, &caller_fds);
	r = start(&k, &err);
	/* Nor the caller's working directory (a relative agent path was resolved by now). */
	close_inherited(&caller_fds);
	if (chdir("/") < 0 && r >= 0)
		r = sr_error_errno(&err, sr_negerrno(), "chdir /");
	sr_proc_raise_fd_limit();
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
	sr_secmem_free(k.pool_token);
	return status;
}
