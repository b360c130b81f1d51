/* SPDX-License-Identifier: MIT */
/*
 * cgroup v2 through systemd, where our own cgroup cannot hand controllers
 * to a child: that is every cgroup that holds processes, so almost every
 * unprivileged caller (a login shell's session scope, a terminal's app
 * scope, a CI job's service). As crun and podman do, we ask the caller's
 * service manager (the user's, or PID 1 for root) over D-Bus for a
 * transient scope with Delegate=yes, and build the direct strategy's
 * layout inside it:
 *
 *   .../sandbox-run-<id>.scope/      delegated to us by systemd
 *       holder/                       the holder process
 *       sandbox-run-<id>/             the limits; the sandbox is cloned into it
 *
 * A scope is made around processes that exist, and systemd stops it (and
 * removes its cgroups) as soon as it is empty. We never move ourselves, so
 * the scope is made around a holder: a child that only waits for us to go.
 * It leaves the scope's top cgroup for holder/, so that the scope holds no
 * process of its own and may hand its controllers down (cgroup v2's "no
 * internal processes" rule). When we are done we close the holder's pipe;
 * when we are killed, PDEATHSIG ends it. Either way the scope empties and
 * systemd removes it with whatever a killed run left inside: nothing here
 * needs cleaning by the next run.
 *
 * The cost is a fork and one D-Bus round trip to the manager (the job
 * that starts the scope): docs/performance.md. libsystemd is dlopen()ed,
 * and only when this strategy is tried.
 */
#include "cgroup-internal.h"
#include "dl.h"
#include "util.h"

#include <fcntl.h>
#include <limits.h>
#include <sys/stat.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <systemd/sd-bus.h>
#include <time.h>
#include <unistd.h>

/* How long the manager may take to start the scope. */
#define SCOPE_TIMEOUT_US (5 * 1000 * 1000ULL)

static struct {
	__typeof__(sd_bus_open_user) *open_user;
	__typeof__(sd_bus_open_system) *open_system;
	__typeof__(sd_bus_new) *new_bus;
	__typeof__(sd_bus_set_address) *set_address;
	__typeof__(sd_bus_start) *start;
	__typeof__(sd_bus_flush_close_unref) *close_unref;
	__typeof__(sd_bus_message_new_method_call) *new_call;
	__typeof__(sd_bus_message_append) *append;
	__typeof__(sd_bus_message_open_container) *open_container;
	__typeof__(sd_bus_message_close_container) *close_container;
	__typeof__(sd_bus_message_read) *read;
	__typeof__(sd_bus_message_unref) *message_unref;
	__typeof__(sd_bus_send) *send;
	__typeof__(sd_bus_call) *call;
	__typeof__(sd_bus_match_signal_async) *match_signal_async;
	__typeof__(sd_bus_slot_unref) *slot_unref;
	__typeof__(sd_bus_process) *process;
	__typeof__(sd_bus_wait) *wait;
	__typeof__(sd_bus_error_free) *error_free;
	bool loaded;
} sd;

#define SD_SYM(field, name)               \
	{                                 \
#name, (void **)&sd.field \
	}

static int load_libsystemd(struct sr_error *err)
{
	static const struct sr_dl_sym syms[] = {
	    SD_SYM(open_user, sd_bus_open_user),
	    SD_SYM(open_system, sd_bus_open_system),
	    SD_SYM(new_bus, sd_bus_new),
	    SD_SYM(set_address, sd_bus_set_address),
	    SD_SYM(start, sd_bus_start),
	    SD_SYM(close_unref, sd_bus_flush_close_unref),
	    SD_SYM(new_call, sd_bus_message_new_method_call),
	    SD_SYM(append, sd_bus_message_append),
	    SD_SYM(open_container, sd_bus_message_open_container),
	    SD_SYM(close_container, sd_bus_message_close_container),
	    SD_SYM(read, sd_bus_message_read),
	    SD_SYM(message_unref, sd_bus_message_unref),
	    SD_SYM(send, sd_bus_send),
	    SD_SYM(call, sd_bus_call),
	    SD_SYM(match_signal_async, sd_bus_match_signal_async),
	    SD_SYM(slot_unref, sd_bus_slot_unref),
	    SD_SYM(process, sd_bus_process),
	    SD_SYM(wait, sd_bus_wait),
	    SD_SYM(error_free, sd_bus_error_free),
	};
	int k;

	if (sd.loaded)
		return 0;
	k = sr_dl_load(SR_LIBSYSTEMD_SONAME, syms, SR_ARRAY_SIZE(syms), err);
	if (k < 0)
		return k;
	sd.loaded = true;
	return 0;
}

SR_DEFINE_CLEANUP(message_unrefp, sd_bus_message *, sd.message_unref)
SR_DEFINE_CLEANUP(slot_unrefp, sd_bus_slot *, sd.slot_unref)

/*
 * The manager that owns our processes: PID 1 for root, else the user's
 * (its bus, or -- with no dbus session bus, as under a bare
 * `systemd --user` -- its private socket, as crun falls back to).
 */
static int connect_manager(sd_bus **ret, struct sr_error *err)
{
	const char *rt = getenv("XDG_RUNTIME_DIR");
	_cleanup_free_ char *addr = NULL;
	sd_bus *bus = NULL;
	int r;

	if (geteuid() == 0) {
		r = sd.open_system(&bus);
		if (r < 0)
			return sr_error_errno(err, r, "connect to the system bus");
		*ret = bus;
		return 0;
	}
	r = sd.open_user(&bus);
	if (r >= 0) {
		*ret = bus;
		return 0;
	}
	if (!rt || rt[0] != '/')
		return sr_error_errno(err, r, "no user bus ($XDG_RUNTIME_DIR is not set)");
	if (asprintf(&addr, "unix:path=%s/systemd/private", rt) < 0)
		return sr_error_errno(err, -ENOMEM, "systemd");
	r = sd.new_bus(&bus);
	if (r >= 0)
		r = sd.set_address(bus, addr);
	if (r >= 0)
		r = sd.start(bus);
	if (r < 0) {
		if (bus)
			sd.close_unref(bus);
		return sr_error_errno(
		    err, r, "connect to the user's systemd (%s/bus, %s/systemd/private)", rt, rt);
	}
	*ret = bus;
	return 0;
}

/*
 * The holder: out of our process group and session (a terminal's ^C is
 * for the sandbox, which we forward it to), holding none of our
 * descriptors but its pipe, it waits for EOF on the pipe and exits.
 */
static int start_holder(struct cg_scope *s, struct sr_error *err)
{
	pid_t parent = getpid();
	int p[2];
	pid_t pid;

	if (pipe2(p, O_CLOEXEC) < 0)
		return sr_error_errno(err, sr_negerrno(), "pipe");
	pid = fork();
	if (pid < 0) {
		int e = sr_negerrno();

		close(p[0]);
		close(p[1]);
		return sr_error_errno(err, e, "fork the scope's holder");
	}
	if (pid == 0) {
		/* Above 2 first: with a standard descriptor closed, the pipe may be 0..2. */
		int in = fcntl(p[0], F_DUPFD, 3), null = open("/dev/null", O_RDWR);
		sigset_t none;
		char c;

		/* Not the signals sandbox-run blocks to forward: a SIGTERM from systemd ends it. */
		sigemptyset(&none);
		(void)sigprocmask(SIG_SETMASK, &none, NULL);

		(void)prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (getppid() != parent || in < 0 || null < 0)
			_exit(1);
		(void)setsid();
		(void)prctl(PR_SET_NAME, "sr-scope-holder");
		if (dup2(null, 0) < 0 || dup2(null, 1) < 0 || dup2(null, 2) < 0 ||
		    dup2(in, 3) < 0 || syscall(SYS_close_range, 4, ~0U, 0) < 0)
			_exit(1);
		while (read(3, &c, 1) < 0 && errno == EINTR)
			;
		_exit(0);
	}
	close(p[0]);
	s->holder = pid;
	s->holder_fd = p[1];
	return 0;
}

static void stop_holder(struct cg_scope *s)
{
	if (s->holder <= 0)
		return;
	sr_closep(&s->holder_fd);
	s->holder_fd = -1;
	/* EOF ends it; SIGKILL too, should anything have stopped it. */
	kill(s->holder, SIGKILL);
	while (waitpid(s->holder, NULL, 0) < 0 && errno == EINTR)
		;
	s->holder = 0;
}

struct job_wait {
	const char *unit;
	char job[256];	 /* the job's object path, from StartTransientUnit's reply */
	char result[32]; /* "" until the job ends */
};

/* JobRemoved(u id, o job, s unit, s result): the job that starts our scope ended. */
static int on_job_removed(sd_bus_message *m, void *userdata, sd_bus_error *ret_error)
{
	struct job_wait *w = userdata;
	const char *job, *unit, *result;
	uint32_t id;

	(void)ret_error;
	if (sd.read(m, "uoss", &id, &job, &unit, &result) < 0 || strcmp(unit, w->unit) != 0 ||
	    strcmp(job, w->job) != 0)
		return 0;
	snprintf(w->result, sizeof(w->result), "%s", result);
	return 0;
}

static uint64_t now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000ULL + (uint64_t)ts.tv_nsec / 1000;
}

static int append_properties(sd_bus_message *m, const struct cg_scope *s)
{
	int r;

	r = sd.append(m, "ss", s->unit, "fail");
	if (r >= 0)
		r = sd.open_container(m, 'a', "(sv)");
	if (r >= 0)
		r = sd.append(m, "(sv)(sv)(sv)(sv)", "Description", "s", "sandbox-run sandbox",
			      "PIDs", "au", 1, (uint32_t)s->holder, "Delegate", "b", 1,
			      /* A failed scope does not linger either. */
			      "CollectMode", "s", "inactive-or-failed");
	if (r >= 0)
		r = sd.close_container(m);
	/* No auxiliary units. */
	if (r >= 0)
		r = sd.append(m, "a(sa(sv))", 0);
	return r;
}

/* StartTransientUnit, then waits for its job: the holder is in the scope when it returns. */
static int start_scope(sd_bus *bus, struct cg_scope *s, struct sr_error *err)
{
	_cleanup_(message_unrefp) sd_bus_message *sub = NULL, *m = NULL, *reply = NULL;
	_cleanup_(slot_unrefp) sd_bus_slot *slot = NULL;
	sd_bus_error e = SD_BUS_ERROR_NULL;
	struct job_wait w = {.unit = s->unit};
	uint64_t deadline = now_us() + SCOPE_TIMEOUT_US;
	int r;

	/*
	 * The manager sends JobRemoved on its bus only to subscribers. The
	 * match, Subscribe and the call go out in order and are handled in
	 * order, so neither needs its own round trip.
	 */
	r = sd.match_signal_async(bus, &slot, NULL, "/org/freedesktop/systemd1",
				  "org.freedesktop.systemd1.Manager", "JobRemoved", on_job_removed,
				  NULL, &w);
	if (r >= 0)
		r = sd.new_call(bus, &sub, "org.freedesktop.systemd1", "/org/freedesktop/systemd1",
				"org.freedesktop.systemd1.Manager", "Subscribe");
	if (r >= 0)
		r = sd.send(bus, sub, NULL);
	if (r >= 0)
		r = sd.new_call(bus, &m, "org.freedesktop.systemd1", "/org/freedesktop/systemd1",
				"org.freedesktop.systemd1.Manager", "StartTransientUnit");
	if (r >= 0)
		r = append_properties(m, s);
	if (r < 0)
		return sr_error_errno(err, r, "D-Bus");
	r = sd.call(bus, m, SCOPE_TIMEOUT_US, &e, &reply);
	if (r < 0) {
		sr_error_msg(err, r, "StartTransientUnit %s: %s", s->unit,
			     e.message ? e.message : strerror(-r));
		sd.error_free(&e);
		return r;
	}
	/* Queued signals are matched only from here on: the job is known first. */
	{
		const char *job;

		r = sd.read(reply, "o", &job);
		if (r < 0)
			return sr_error_errno(err, r, "StartTransientUnit %s: reply", s->unit);
		snprintf(w.job, sizeof(w.job), "%s", job);
	}
	while (!w.result[0]) {
		uint64_t now = now_us();

		if (now >= deadline)
			return sr_error_msg(err, -ETIMEDOUT,
					    "systemd did not start %s within %llu s", s->unit,
					    (unsigned long long)(SCOPE_TIMEOUT_US / 1000000ULL));
		r = sd.process(bus, NULL);
		if (r < 0)
			return sr_error_errno(err, r, "D-Bus");
		if (r == 0) {
			r = sd.wait(bus, deadline - now);
			if (r < 0)
				return sr_error_errno(err, r, "D-Bus");
		}
	}
	if (strcmp(w.result, "done") != 0)
		return sr_error_msg(err, -EIO, "systemd could not start %s (job %s)", s->unit,
				    w.result);
	return 0;
}

/* The scope's directory: where systemd put the holder. */
static int scope_dir(const struct cg_scope *s, const struct cg_host *host, char **ret_path,
		     char **ret, struct sr_error *err)
{
	_cleanup_free_ char *text = NULL, *path = NULL;
	const char *leaf;
	char proc[64];
	int r;

	snprintf(proc, sizeof(proc), "/proc/%d/cgroup", (int)s->holder);
	r = cg_read_proc(proc, &text);
	if (r < 0)
		return sr_error_errno(err, r, "read %s", proc);
	if (cg_parse_self(text, NULL, &path) < 0)
		return sr_error_msg(err, -ENOENT, "%s: no cgroup v2 line", proc);
	leaf = strrchr(path, '/');
	if (!leaf || strcmp(leaf + 1, s->unit) != 0)
		return sr_error_msg(err, -EIO, "systemd put the scope's holder in %s, not in %s",
				    path, s->unit);
	if (cg_parse_mountinfo(host->mountinfo, NULL, path, ret) < 0)
		return sr_error_msg(err, -ENOENT, "%s is not reachable through a cgroup2 mount",
				    path);
	*ret_path = steal_pointer(&path);
	return 0;
}

/*
 * clone3(CLONE_INTO_CGROUP) (and a move into cgroup.procs) needs write
 * access to cgroup.procs of the nearest cgroup holding both ours and the
 * target. Under the user's manager (a terminal's scope, a user service)
 * that is the manager's own, the user's; from a login session's scope it
 * is user-UID.slice, root's: systemd moved the holder (its manager asks
 * PID 1), but we could not place the sandbox there.
 */
static int check_clone_into(const struct cg_host *host, const char *scope_path,
			    struct sr_error *err)
{
	_cleanup_free_ char *ours = NULL, *common = NULL, *dir = NULL, *procs = NULL;
	size_t n = 0;

	if (cg_parse_self(host->self_cgroup, NULL, &ours) < 0)
		return sr_error_msg(err, -ENOENT, "not in a cgroup v2 hierarchy");
	/* The longest common prefix that ends at a component boundary of both. */
	for (size_t i = 0;; i++) {
		bool end_a = ours[i] == '\0' || ours[i] == '/';
		bool end_b = scope_path[i] == '\0' || scope_path[i] == '/';

		if (end_a && end_b)
			n = i;
		if (ours[i] != scope_path[i] || ours[i] == '\0')
			break;
	}
	common = strndup(ours, n ? n : 1);
	if (!common)
		return sr_error_errno(err, -ENOMEM, "cgroup");
	if (cg_parse_mountinfo(host->mountinfo, NULL, common, &dir) < 0)
		return sr_error_msg(err, -ENOENT, "%s is not reachable through a cgroup2 mount",
				    common);
	if (asprintf(&procs, "%s/cgroup.procs", dir) < 0)
		return sr_error_errno(err, -ENOMEM, "cgroup");
	if (faccessat(AT_FDCWD, procs, W_OK, AT_EACCESS) < 0)
		return sr_error_msg(
		    err, -EACCES,
		    "the sandbox cannot be started in %s: that needs write access to "
		    "%s (run sandbox-run in a scope of your own: "
		    "systemd-run --user --scope sandbox-run ...)",
		    scope_path, procs);
	return 0;
}

/* Moves the holder into scope/holder: the scope itself then holds no process. */
static int park_holder(const struct cg_scope *s, const char *dir, struct sr_error *err)
{
	_cleanup_close_ int sfd = -1, hfd = -1;
	int r;

	sfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (sfd < 0)
		return sr_error_errno(err, sr_negerrno(), "open %s", dir);
	if (mkdirat(sfd, "holder", 0755) < 0 && errno != EEXIST)
		return sr_error_errno(err, sr_negerrno(), "create %s/holder", dir);
	hfd = openat(sfd, "holder", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (hfd < 0)
		return sr_error_errno(err, sr_negerrno(), "open %s/holder", dir);
	r = cg_write_u64(hfd, "cgroup.procs", (uint64_t)s->holder);
	if (r < 0)
		return sr_error_errno(err, r, "move the holder into %s/holder", dir);
	return 0;
}

/* Whether the cgroup2 hierarchy has the controllers at all (not on hybrid hosts). */
static bool v2_has_controllers(const struct cg_host *host)
{
	_cleanup_free_ char *root = NULL;
	_cleanup_close_ int fd = -1;
	char buf[256];

	if (cg_parse_mountinfo(host->mountinfo, NULL, "/", &root) < 0)
		return false;
	fd = open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	return fd >= 0 && cg_read(fd, "cgroup.controllers", buf, sizeof(buf)) > 0 &&
	       cg_word_in(buf, "memory");
}

/*
 * Whether a manager could answer, before paying for loading libsystemd
 * (~1 ms): a bus address in the environment, or one of the sockets.
 */
static bool manager_reachable(void)
{
	const char *rt = getenv("XDG_RUNTIME_DIR");
	char path[PATH_MAX];

	if (geteuid() == 0)
		return getenv("DBUS_SYSTEM_BUS_ADDRESS") ||
		       access("/run/dbus/system_bus_socket", F_OK) == 0;
	if (getenv("DBUS_SESSION_BUS_ADDRESS"))
		return true;
	if (!rt || rt[0] != '/')
		return false;
	snprintf(path, sizeof(path), "%s/bus", rt);
	if (access(path, F_OK) == 0)
		return true;
	snprintf(path, sizeof(path), "%s/systemd/private", rt);
	return access(path, F_OK) == 0;
}

static void scope_destroy(struct sr_cgroup *cg)
{
	cg_dir_remove(&cg->v2, cg->name, true);
	/* The scope empties: systemd stops it and removes its cgroups. */
	stop_holder(&cg->scope);
}

static int scope_create(struct sr_cgroup *cg, const struct cg_host *host, const struct sr_config *c,
			enum sr_enforce enforced[], struct sr_error *err)
{
	struct cg_scope *s = &cg->scope;
	_cleanup_free_ char *dir = NULL, *path = NULL;
	sd_bus *bus = NULL;
	int r;

	if (!v2_has_controllers(host))
		return sr_error_msg(err, -ENOENT, "the cgroup2 hierarchy has no controllers");
	if (!manager_reachable())
		return sr_error_msg(err, -ENOENT, "no %s to ask for a scope",
				    geteuid() == 0 ? "system bus" : "user bus or user manager");
	r = load_libsystemd(err);
	if (r >= 0)
		r = connect_manager(&bus, err);
	if (r < 0)
		return r;
	snprintf(s->unit, sizeof(s->unit), "%s.scope", cg->name);
	r = start_holder(s, err);
	if (r >= 0)
		r = start_scope(bus, s, err);
	/* The scope does not depend on the connection: no signals for the rest of the run. */
	sd.close_unref(bus);
	if (r >= 0)
		r = scope_dir(s, host, &path, &dir, err);
	if (r >= 0)
		r = check_clone_into(host, path, err);
	if (r >= 0)
		r = park_holder(s, dir, err);
	if (r >= 0)
		r = cg_v2_create_in(cg, dir, c, enforced, err);
	if (r < 0) {
		scope_destroy(cg);
		return r;
	}
	return 0;
}

const struct cg_manager cg_manager_systemd = {
    .name = "cgroup2 (systemd scope)",
    .create = scope_create,
    .attach = cg_v2_attach,
    .kill = cg_v2_kill,
    .stats = cg_v2_stats,
    .destroy = scope_destroy,
};
