/* SPDX-License-Identifier: MIT */
/*
 * The sandbox object, host side. Its owner (sandbox-run for a run, a
 * keeper for a sandbox that lives) never enters the sandbox: create clones
 * PID 1 into the new namespaces and does what only the parent can (id
 * maps, cgroup, network helper); from then on PID 1 does the work inside,
 * on request (protocol.h), and this side reads its reports.
 */
#include "sandbox.h"
#include "agent.h"
#include "cgroup.h"
#include "doctor.h"
#include "disk.h"
#include "env.h"
#include "fault.h"
#include "net.h"
#include "procview.h"
#include "protocol.h"
#include "setup.h"
#include "units.h"
#include "userns.h"
#include "util.h"

#include <fcntl.h>
#include <linux/sched.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <sys/random.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/timerfd.h>
#include <sys/wait.h>
#include <time.h>

extern char **environ;

struct sr_sandbox {
	const struct sr_config *config;
	struct sr_sandbox_opts opts;
	char id[33];
	struct sr_agent agent;
	struct sr_plan plan;
	struct sr_net *net;
	struct sr_cgroup *cgroup;
	struct sr_disk *disk;
	int clone_fd; /* the sandbox's cgroup for CLONE_INTO_CGROUP (owned by cgroup), or -1 */
	int sock;     /* our end of the protocol socket */
	int pidfd;    /* PID 1 */
	int endfd;    /* timerfd: the grace of an END, -1 when none is running */
	int uid_lock; /* root callers: the lock on the host uid this sandbox has (userns.h) */
	pid_t pid;    /* PID 1, as we see it */
	uint32_t next_id;
	bool ready, reaped, end_sent;
	bool halt_sent, held; /* HALT asked; every process gone, the files held (protocol.h) */
	bool ends_holds;      /* the process that ends the sandbox was spawned with SR_SPAWN_HOLD */
	bool ends_seen;	      /* the EXIT of the process that ends the sandbox */
	struct sr_exit ends;  /* which */
	uint32_t ends_spawn;  /* the SPAWN of sr_sandbox_spawn_start() that ends it, 0 for none */
	int init_status;      /* wait status of PID 1, once reaped */
	struct rusage ru;     /* of PID 1 and all it reaped */
	int64_t disk_used;    /* as last reported */
	struct sr_error error;	 /* PID 1's ERROR, if it sent one */
	struct sr_msg_queue out; /* CANCELs, kills waiting for room on sock (sr_sandbox_cancel()) */
};

void sr_sandbox_new_id(char id[33])
{
	unsigned char raw[16] = {0};

	if (getrandom(raw, sizeof(raw), GRND_NONBLOCK) != (ssize_t)sizeof(raw)) {
		struct timespec t;

		clock_gettime(CLOCK_REALTIME, &t);
		snprintf((char *)raw, sizeof(raw), "%lx%x", (long)t.tv_nsec, (unsigned)getpid());
	}
	for (size_t i = 0; i < sizeof(raw); i++)
		snprintf(id + 2 * i, 3, "%02x", raw[i]);
}

/*
 * How each limit is applied here, said honestly; a requested limit that
 * nothing enforces is a warning, or with --strict a refusal to start.
 * memory, cpus and pids were filled in by sr_cgroup_prepare().
 */
static int check_enforcement(struct sr_sandbox *sb, struct sr_result *r, struct sr_error *err)
{
	const struct sr_config *c = sb->config;
	const struct sr_sink *sink = sb->opts.sink;
	char limits[1024];
	int n;

	/* The disk: disk.h says how (0: no limit asked); the network policy fails closed (net.c).
	 */
	r->enforced[SR_LIMIT_DISK] = sr_disk_enforced(sb->disk);
	r->enforced[SR_LIMIT_NET] = sr_net_enforced(sb->net);
	if (c->disk_bytes && r->enforced[SR_LIMIT_DISK] == SR_ENFORCE_NONE) {
		char disk[SR_ERROR_MSG_MAX + 256];

		snprintf(disk, sizeof(disk),
			 "disk limit not enforced: the sandbox's files are on the host's disk "
			 "and nothing here bounds them (%s); --disk-backing memory has a tmpfs "
			 "hold the limit, its pages counted as memory; see docs/limits.md",
			 sr_disk_reason(sb->disk));
		if (c->strict)
			return sr_error_msg(err, -EOPNOTSUPP, "--strict: %s", disk);
		sr_warn(sink, "%s (--strict refuses)", disk);
	}
	n = sr_cgroup_describe(
	    c, r->enforced,
	    c->strict || sr_sink_enabled(sink, SR_LOG_INFO) ? sr_cgroup_reason(sb->cgroup) : NULL,
	    limits, sizeof(limits));
	if (c->strict && n > 0)
		return sr_error_msg(err, -EOPNOTSUPP, "--strict: %s", limits);
	if (*limits)
		sr_warn(sink, "%s%s", limits, n > 0 ? " (--strict refuses)" : "");
	if (sr_cgroup_swap_unbounded(sb->cgroup)) {
		static const char swap[] =
		    "the memory limit holds RAM only: this host swaps and accounts no swap to "
		    "cgroups (swapaccount=0), so the sandbox can swap past it; see docs/limits.md";

		if (c->strict)
			return sr_error_msg(err, -EOPNOTSUPP, "--strict: %s", swap);
		sr_warn(sink, "%s (--strict refuses)", swap);
	}
	return 0;
}

/*
 * An archive is opened here, as the caller, and read by the child. A
 * directory is opened by the child itself (mounts.c): overlayfs takes no
 * lower layer from another mount namespace.
 */
static int open_agent(struct sr_sandbox *sb, struct sr_error *err)
{
	const struct sr_agent *a = &sb->agent;

	if (a->kind != SR_AGENT_ARCHIVE)
		return 0;
	sb->plan.agent_fd = open(a->archive_path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
	if (sb->plan.agent_fd < 0)
		return sr_error_errno(err, sr_negerrno(), "open %s", a->archive_path);
	return 0;
}

/* Appends t to buf (len bytes, *n used), as much as fits. */
static void append(char *buf, size_t len, size_t *n, const char *t)
{
	while (*t && *n + 1 < len)
		buf[(*n)++] = *t++;
	buf[*n] = '\0';
}

/* One word of a command, quoted as a shell would need it where it has a blank or a quote. */
static void append_word(char *buf, size_t len, size_t *n, const char *w)
{
	if (*n > 0)
		append(buf, len, n, " ");
	if (*w && !strpbrk(w, " \t'")) {
		append(buf, len, n, w);
		return;
	}
	append(buf, len, n, "'");
	for (; *w; w++)
		append(buf, len, n, *w == '\'' ? "'\\''" : (const char[]){*w, '\0'});
	append(buf, len, n, "'");
}

/* -v: what this sandbox is, and how each limit is held on this host. */
static void log_start(const struct sr_sandbox *sb, const struct sr_result *r)
{
	const struct sr_config *c = sb->config;
	const struct sr_sink *sink = sb->opts.sink;
	char mem[SR_UNITS_BUF_MAX], cpus[SR_UNITS_BUF_MAX], disk[SR_UNITS_BUF_MAX],
	    timeout[SR_UNITS_BUF_MAX];
	static const char *const kind[_SR_AGENT_KIND_MAX] = {
	    [SR_AGENT_DIR] = "a directory",
	    [SR_AGENT_FILE] = "a file",
	    [SR_AGENT_ARCHIVE] = "an archive",
	    [SR_AGENT_COMMAND] = "a command",
	};
	const struct sr_agent *a = &sb->agent;
	/* What the caller passed, on one line and with no escape sequence (sr_printable). */
	char raw[1024] = "", profile[512], from[512], workspace[512], command[512];
	size_t n = 0;

	if (!sr_sink_enabled(sink, SR_LOG_INFO))
		return;
	sr_format_size(c->memory_bytes, mem, sizeof(mem));
	sr_format_cpus(c->cpus_milli, cpus, sizeof(cpus));
	sr_format_size(c->disk_bytes, disk, sizeof(disk));
	sr_format_duration(c->timeout_ms, timeout, sizeof(timeout));
	sr_printable(c->profile ? c->profile : "-", profile, sizeof(profile));
	sr_printable(c->profile_path ? c->profile_path : "-", from, sizeof(from));
	sr_printable(a->archive_path ? a->archive_path
		     : a->host_dir   ? a->host_dir
				     : "empty",
		     workspace, sizeof(workspace));
	for (size_t i = 0; i < a->argv.n; i++)
		append_word(raw, sizeof(raw), &n, a->argv.items[i]);
	/* An archive's entry is found once it is extracted, in the sandbox. */
	sr_printable(a->argv.n	   ? raw
		     : c->no_entry ? "nothing yet (it lives until its deadline or rm)"
				   : "its entry, once extracted",
		     command, sizeof(command));
	sr_info(sink, "sandbox %s: profile %s (%s); agent: %s; workspace: %s%s; runs: %s",
		r->sandbox_id, profile, from, kind[a->kind],
		a->archive_path ? "extracted from " : "", workspace, command);
	sr_info(sink,
		"sandbox %s: memory %s (%s), cpus %s (%s), pids %llu (%s), disk %s (%s), "
		"timeout %s, net %s (%s%s%s)",
		r->sandbox_id, mem, sr_enforce_to_string(r->enforced[SR_LIMIT_MEMORY]), cpus,
		sr_enforce_to_string(r->enforced[SR_LIMIT_CPUS]), (unsigned long long)c->pids,
		sr_enforce_to_string(r->enforced[SR_LIMIT_PIDS]), disk,
		sr_enforce_to_string(r->enforced[SR_LIMIT_DISK]), timeout,
		sr_net_mode_to_string(c->net), sr_enforce_to_string(r->enforced[SR_LIMIT_NET]),
		sr_net_helper_path(sb->net) ? ", through " : "",
		sr_net_helper_path(sb->net) ? sr_net_helper_path(sb->net) : "");
	sr_info(
	    sink, "sandbox %s: its user (uid %d inside) is host uid %u, gid %u; its disk: %s%s%s%s",
	    r->sandbox_id, SR_SANDBOX_UID, (unsigned)sb->plan.host_uid, (unsigned)sb->plan.host_gid,
	    sr_disk_kind_to_string(sr_disk_kind(sb->disk)), sr_disk_dir(sb->disk) ? " (" : "",
	    sr_disk_dir(sb->disk) ? sr_disk_dir(sb->disk) : "", sr_disk_dir(sb->disk) ? ")" : "");
	if (*sr_disk_reason(sb->disk))
		sr_info(sink, "sandbox %s: disk: %s", r->sandbox_id, sr_disk_reason(sb->disk));
}

/*
 * The disk (disk.h): tmpfs pages count against --memory where a cgroup
 * holds it, which is when the host's disk is worth its cost.
 */
static int prepare_disk(struct sr_sandbox *sb, const struct sr_result *r, struct sr_error *err)
{
	const struct sr_config *c = sb->config;
	enum sr_enforce mem = r->enforced[SR_LIMIT_MEMORY];
	bool counted = c->memory_bytes && (mem == SR_ENFORCE_CGROUP2 || mem == SR_ENFORCE_CGROUP1);
	int k = sr_disk_prepare(c, sb->id, sb->plan.host_uid, sb->plan.host_gid, counted, &sb->disk,
				err);

	if (k < 0)
		return k;
	sb->plan.disk_kind = sr_disk_kind(sb->disk);
	sb->plan.disk_tree = sr_disk_tree(sb->disk);
	sb->plan.disk_dir = (char *)sr_disk_dir(sb->disk);
	sb->plan.disk_counts = sb->plan.disk_kind != SR_DISK_DIR;
	return 0;
}

/* A root caller's writable binds, idmapped (userns.h); none for an unprivileged caller. */
static int prepare_binds(struct sr_sandbox *sb, struct sr_error *err)
{
	if (geteuid() != 0 || sb->config->n_binds == 0)
		return 0;
	return sr_userns_bind_trees(sb->config, &sb->agent.bind_sources, sb->plan.host_uid,
				    sb->plan.host_gid, &sb->plan.bind_trees, err);
}

/* Half the value of a sysctl of the host's (at least 1), 0 if it cannot be read. */
static uint64_t half_of(const char *path)
{
	_cleanup_fclose_ FILE *f = fopen(path, "re");
	unsigned long long v = 0;

	if (!f || fscanf(f, "%llu", &v) != 1 || v == 0)
		return 0;
	return v / 2 ? v / 2 : 1;
}

static int prepare(struct sr_sandbox *sb, struct sr_result *r, struct sr_error *err)
{
	const struct sr_config *c = sb->config;
	const struct sr_sink *sink = sb->opts.sink;
	int e;

	/* Whom "user" is on the host: the network helper runs with these ids too. */
	sr_userns_host_ids(getuid(), getgid(), &sb->plan.host_uid, &sb->plan.host_gid,
			   &sb->uid_lock);
	sb->plan.max_inotify_instances = half_of("/proc/sys/fs/inotify/max_user_instances");
	sb->plan.max_inotify_watches = half_of("/proc/sys/fs/inotify/max_user_watches");
	if ((e = sr_agent_resolve(c, sink, &sb->agent, err)) < 0 || (e = open_agent(sb, err)) < 0 ||
	    (e = sr_env_build(c, environ, &sb->plan.envp, err)) < 0 ||
	    (e = sr_net_prepare(c, sink, sb->plan.host_uid, sb->plan.host_gid, &sb->net, err)) <
		0 ||
	    (e = sr_cgroup_prepare(c, sb->id, &sb->cgroup, &sb->clone_fd, r->enforced, err)) < 0 ||
	    (e = prepare_disk(sb, r, err)) < 0 || (e = check_enforcement(sb, r, err)) < 0 ||
	    (e = prepare_binds(sb, err)) < 0)
		return e;
	sr_procview_prepare(c, sb->cgroup, &sb->plan.view);
	log_start(sb, r);
	sb->plan.config = c;
	sb->plan.cgroup = sb->cgroup;
	sb->plan.agent = &sb->agent;
	sb->plan.net = sb->net;
	sb->plan.drop_groups = geteuid() == 0;
	sb->plan.nested_userns = sr_net_nested_userns(sb->net);
	if (geteuid() == 0 && sb->agent.host_dir && sb->agent.kind != SR_AGENT_ARCHIVE) {
		struct sr_error ierr = {0};
		struct stat st;

		/*
		 * The workspace's owner and group are the sandbox user's
		 * inside (root's checkout, or a user's run by root): without
		 * it the agent can read their files but not change them.
		 */
		if (stat(sb->agent.host_dir, &st) < 0 ||
		    sr_userns_idmapped_tree(sb->agent.host_dir, st.st_uid, st.st_gid,
					    sb->plan.host_uid, sb->plan.host_gid, false,
					    &sb->plan.workspace_tree, &ierr) < 0)
			sr_warn(sink, "%s: the workspace owner's files stay read-only to the agent",
				ierr.msg[0] ? ierr.msg : strerror(errno));
	}
	/* Test builds only, empty otherwise (fault.h): every host resource exists, no child yet. */
	sr_fault_point("supervisor", "prepared");
	return 0;
}

static int clone_sandbox(struct sr_sandbox *sb, struct sr_error *err)
{
	int pidfd = -1;
	struct clone_args args = {
	    .flags = CLONE_NEWUSER | CLONE_NEWPID | CLONE_NEWNS | CLONE_NEWIPC | CLONE_NEWUTS |
		     CLONE_NEWCGROUP | CLONE_NEWNET | CLONE_PIDFD,
	    .pidfd = (uint64_t)(uintptr_t)&pidfd,
	    .exit_signal = SIGCHLD,
	};
	int sv[2];
	long pid;

	/* Born in its cgroup: no task of the sandbox ever runs unlimited. */
	if (sb->clone_fd >= 0) {
		args.flags |= CLONE_INTO_CGROUP;
		args.cgroup = (uint64_t)sb->clone_fd;
	}
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0)
		return sr_error_errno(err, sr_negerrno(), "socketpair");
	sb->sock = sv[0];
	sb->plan.sock = sv[1];
	/*
	 * Our end never blocks: the agent can keep PID 1 from reading (it
	 * can stop a process PID 1 waits for), and a full queue of requests
	 * must then fail them, not freeze whoever serves the sandbox.
	 */
	if (fcntl(sb->sock, F_SETFL, O_NONBLOCK) < 0) {
		int e = sr_negerrno();

		close(steal_fd(&sb->plan.sock));
		return sr_error_errno(err, e, "socketpair");
	}

	/* A fork(): no CLONE_VM, so the child has its own copy of everything. */
	pid = syscall(SYS_clone3, &args, sizeof(args));
	/*
	 * ENOSYS: a seccomp filter that predates clone3 (container runtimes'
	 * default profiles, valgrind) refuses it so that callers fall back to
	 * clone(), as our own filter does. clone() cannot place the child in
	 * its cgroup: sr_cgroup_attach() moves it there while it waits for GO;
	 * its pidfd comes from pidfd_open() then (the pid is ours until we
	 * reap it). A NULL stack: the child runs on its copy of ours, as after
	 * fork().
	 */
	if (pid < 0 && errno == ENOSYS)
		pid = syscall(
		    SYS_clone,
		    (unsigned long)(args.flags & ~(uint64_t)(CLONE_INTO_CGROUP | CLONE_PIDFD)) |
			SIGCHLD,
		    NULL, NULL, NULL, NULL);
	if (pid < 0) {
		int e = sr_negerrno();

		close(steal_fd(&sb->plan.sock));
		if (e == -EPERM || e == -ENOSPC || e == -EUSERS)
			return sr_error_errno(err, e,
					      "create namespaces (sandbox-run doctor checks this "
					      "host)");
		return sr_error_errno(err, e, "create namespaces");
	}
	if (pid == 0)
		sr_setup_child(&sb->plan);
	/*
	 * PID 1 in a process group of its own (it does the same itself, for
	 * whichever of us comes first): a terminal's ^C or a kill of our group
	 * reaches only us, and we pass it on once.
	 */
	(void)setpgid((pid_t)pid, (pid_t)pid);
	close(steal_fd(&sb->plan.sock));
	sr_procview_plan_close(&sb->plan.view); /* PID 1's, not ours */
	sb->pid = (pid_t)pid;
	if (pidfd < 0)
		pidfd = (int)syscall(SYS_pidfd_open, (pid_t)pid, 0);
	if (pidfd < 0)
		return sr_error_errno(err, sr_negerrno(), "pidfd_open");
	sb->pidfd = pidfd;
	return 0;
}

/* [1] The parent-side steps, then GO. */
static int parent_steps(struct sr_sandbox *sb, struct sr_error *err)
{
	struct sr_msg go = {.type = SR_MSG_GO};
	int r;

	/* sr_fault_point(): test builds only, empty otherwise (fault.h). */
	sr_fault_point("supervisor", "cloned");
	r = sr_userns_parent(sb->pid, sb->plan.nested_userns, sb->plan.host_uid, sb->plan.host_gid,
			     err);
	if (r < 0)
		return sr_error_prefix(err, "user namespace");
	sr_fault_point("supervisor", "id maps");
	r = sr_cgroup_attach(sb->cgroup, sb->pid, err);
	if (r < 0)
		return sr_error_prefix(err, "cgroup");
	sr_fault_point("supervisor", "cgroup");
	/* The CPUs the sandbox sees (procview.h): a view the agent may widen again. */
	r = sr_procview_parent(&sb->plan.view, sb->pid, err);
	if (r < 0)
		return r;
	r = sr_net_parent(sb->net, sb->pid, err);
	if (r < 0)
		return sr_error_prefix(err, "network");
	sr_fault_point("supervisor", "network helper");
	r = sr_msg_send(sb->sock, &go);
	if (r < 0)
		return sr_error_errno(err, r, "start the sandbox");
	sr_fault_point("supervisor", "go");
	return 0;
}

static double us_to_ms(int64_t us)
{
	return (double)us / 1e3;
}

/* READY (+ the disk's fd): the set-up [2] is done. */
static void on_ready(struct sr_sandbox *sb, const struct sr_msg *m, struct sr_msg_extra *ex)
{
	sb->ready = true;
	if (m->flags & SR_READY_VIEWS_FROZEN)
		sr_info(sb->opts.sink,
			"sandbox %s: /proc/meminfo%s show%s the sandbox as it was at its "
			"start, not live (%s; see docs/limits.md)",
			sb->id, sb->plan.view.cpu_views ? ", stat and cpuinfo" : "",
			sb->plan.view.cpu_views ? "" : "s", m->text);
	sr_net_agent_started(sb->net);
	/* The disk's root: its use counted here, PID 1 alive or not (disk.h). */
	if (ex->n_fds == 1)
		sr_disk_set_root(sb->disk, steal_fd(&ex->fds[0]));
}

static void on_net(struct sr_sandbox *sb, struct sr_msg_extra *ex)
{
	struct sr_error err = {0};

	/* The set-up waits on nothing here; without its resolver the sandbox does not start. */
	if (sr_net_sockets(sb->net, ex->fds, ex->n_fds, &err) < 0 && !sb->error.code) {
		sb->error = err;
		sr_sandbox_kill(sb);
	}
}

static void on_tap(struct sr_sandbox *sb, struct sr_msg_extra *ex)
{
	struct sr_error err = {0};

	/* The policy is in; the sandbox goes on without waiting for the helper. */
	if (sb->reaped || ex->n_fds != 1)
		return; /* read after PID 1 ended: too late */
	if (sr_net_start_helper(sb->net, steal_fd(&ex->fds[0]), &err) < 0)
		sr_warn(sb->opts.sink, "%s: the sandbox has no network", err.msg);
}

static void on_exited(struct sr_sandbox *sb, const struct sr_msg *m)
{
	struct sr_exit e = {
	    .pid = m->pid,
	    .status = m->status,
	    .user_ms = us_to_ms(m->user_us),
	    .sys_ms = us_to_ms(m->sys_us),
	    .disk_used = m->value,
	    .peak_rss = m->peak_rss,
	};

	sb->disk_used = m->value;
	if (sb->ends.pid == m->pid) {
		sb->ends = e;
		sb->ends_seen = true;
		sb->held = sb->ends_holds;
		if (sb->opts.ops && sb->opts.ops->ends_exited)
			sb->opts.ops->ends_exited(sb->opts.ctx, sb, &e);
	} else if (sb->opts.ops && sb->opts.ops->exited) {
		sb->opts.ops->exited(sb->opts.ctx, sb, &e);
	}
}

/* CONNECTED or CONNECT_FAILED. */
static void on_connected(struct sr_sandbox *sb, const struct sr_msg *m, struct sr_msg_extra *ex)
{
	struct sr_error cerr = {0};
	int fd = -1;

	if (!sb->opts.ops || !sb->opts.ops->connected)
		return;
	if (m->type == SR_MSG_CONNECTED && ex->n_fds == 1)
		fd = steal_fd(&ex->fds[0]);
	else
		sr_error_errno(&cerr, m->code ? m->code : -EPROTO, "connect");
	sb->opts.ops->connected(sb->opts.ctx, sb, m->id, fd, &cerr);
}

/* SPAWNED or SPAWN_FAILED, for sr_sandbox_spawn_start(). */
static void on_spawned(struct sr_sandbox *sb, const struct sr_msg *m, struct sr_msg_extra *ex)
{
	struct sr_error serr = {0};
	int pty = -1;

	if (!sb->opts.ops || !sb->opts.ops->spawned)
		return;
	if (m->type == SR_MSG_SPAWN_FAILED) {
		serr.status = m->status;
		sr_error_msg(&serr, m->code < 0 ? m->code : -EIO, "%s", m->text);
	} else if (ex->n_fds == 1) {
		pty = steal_fd(&ex->fds[0]);
	}
	if (m->type == SR_MSG_SPAWNED && sb->ends_spawn && m->id == sb->ends_spawn)
		sb->ends.pid = m->pid;
	sb->opts.ops->spawned(sb->opts.ctx, sb, m->id, m->type == SR_MSG_SPAWNED ? m->pid : 0, pty,
			      &serr);
}

static void on_stats(struct sr_sandbox *sb, const struct sr_msg *m)
{
	const struct sr_usage u = {
	    .processes = m->pid,
	    .user_ms = us_to_ms(m->user_us),
	    .sys_ms = us_to_ms(m->sys_us),
	    .disk_used = m->value,
	    .peak_rss = m->peak_rss,
	};

	sb->disk_used = m->value;
	if (sb->opts.ops && sb->opts.ops->stats)
		sb->opts.ops->stats(sb->opts.ctx, sb, m->id, &u);
}

static void on_worked(struct sr_sandbox *sb, const struct sr_msg *m)
{
	struct sr_error werr = {0};

	if (!sb->opts.ops || !sb->opts.ops->worked)
		return;
	if (m->code)
		sr_error_msg(&werr, m->code, "%s", m->text);
	sb->opts.ops->worked(sb->opts.ctx, sb, m->id, &werr);
}

/* One message from PID 1 (but the reply wait_reply() waits for). */
static void on_message(struct sr_sandbox *sb, const struct sr_msg *m, struct sr_msg_extra *ex)
{
	switch (m->type) {
	case SR_MSG_READY:
		on_ready(sb, m, ex);
		break;
	case SR_MSG_ERROR:
		sb->error = (struct sr_error){.status = m->status};
		sr_error_msg(&sb->error, m->code, "%s", m->text);
		break;
	case SR_MSG_WARNING:
		sr_warn(sb->opts.sink, "%s", m->text);
		break;
	case SR_MSG_NET:
		on_net(sb, ex);
		break;
	case SR_MSG_TAP:
		on_tap(sb, ex);
		break;
	case SR_MSG_EXIT:
		on_exited(sb, m);
		break;
	case SR_MSG_ENDED:
		sb->disk_used = m->value;
		break;
	case SR_MSG_HALTED:
		sb->disk_used = m->value;
		sb->held = true;
		sr_closep(&sb->endfd); /* answered within its grace */
		break;
	case SR_MSG_CONNECTED:
	case SR_MSG_CONNECT_FAILED:
		on_connected(sb, m, ex);
		break;
	case SR_MSG_SPAWNED:
	case SR_MSG_SPAWN_FAILED:
		on_spawned(sb, m, ex);
		break;
	case SR_MSG_STATS:
		on_stats(sb, m);
		break;
	case SR_MSG_WORKED:
		on_worked(sb, m);
		break;
	default:
		break;
	}
	sr_msg_extra_close(ex);
}

/* Reads one message; 1, 0 at EOF (the socket is closed then), or -EAGAIN. */
static int read_message(struct sr_sandbox *sb, struct sr_msg *m, struct sr_msg_extra *ex)
{
	int r;

	*ex = (struct sr_msg_extra){0};
	if (sb->sock < 0)
		return 0;
	r = sr_msg_recv_nowait(sb->sock, m, ex);
	if (r == -EAGAIN || r == -EWOULDBLOCK)
		return -EAGAIN;
	if (r <= 0) {
		/* EOF (PID 1 gone) or garbage: nothing more to read either way. */
		close(steal_fd(&sb->sock));
		return 0;
	}
	return 1;
}

/* Everything PID 1 has said so far. */
static void drain(struct sr_sandbox *sb)
{
	struct sr_msg m;
	struct sr_msg_extra ex;

	while (read_message(sb, &m, &ex) == 1)
		on_message(sb, &m, &ex);
}

/* PID 1 reaped, if it has ended: its rusage is that of the whole tree. */
static bool reap(struct sr_sandbox *sb, bool block)
{
	if (sb->reaped || sb->pid <= 0)
		return sb->reaped;
	if (wait4(sb->pid, &sb->init_status, block ? 0 : WNOHANG, &sb->ru) != sb->pid)
		return false;
	sb->reaped = true;
	/* Whatever PID 1 said before it went (EXIT, ENDED) is still queued. */
	drain(sb);
	sr_net_ended(sb->net);
	sr_closep(&sb->endfd);
	return true;
}

/*
 * Waits for READY (create) until the deadline: 1 when it came, 0 when PID
 * 1 ended first (its ERROR in sb->error, if it sent one), -ETIME.
 */
static int wait_ready(struct sr_sandbox *sb)
{
	while (!sb->ready) {
		struct pollfd fds[2] = {
		    {.fd = sb->sock, .events = POLLIN},
		    {.fd = sb->pidfd, .events = POLLIN},
		};
		int timeout = -1;

		if (sb->opts.deadline_ns) {
			int64_t left = sb->opts.deadline_ns - sr_monotonic_ns();

			if (left <= 0)
				return -ETIME;
			timeout = (int)(left / 1000000) + 1;
		}
		if (poll(fds, 2, timeout) < 0 && errno != EINTR)
			return sr_negerrno();
		if (fds[0].revents) {
			struct sr_msg m;
			struct sr_msg_extra ex;

			if (read_message(sb, &m, &ex) == 1)
				on_message(sb, &m, &ex);
		}
		if (fds[1].revents && reap(sb, false))
			return sb->ready;
		if (sb->sock < 0 && !sb->ready)
			return reap(sb, true), 0;
	}
	return 1;
}

int sr_sandbox_create(const struct sr_config *c, const struct sr_sandbox_opts *o,
		      struct sr_result *r, struct sr_sandbox **ret, struct sr_error *err)
{
	struct sr_sandbox *sb = calloc(1, sizeof(*sb));
	int e;

	if (!sb)
		return sr_error_errno(err, -ENOMEM, "sandbox");
	*sb = (struct sr_sandbox){
	    .config = c,
	    .opts = *o,
	    .clone_fd = -1,
	    .sock = -1,
	    .pidfd = -1,
	    .endfd = -1,
	    .uid_lock = -1,
	    .init_status = -1,
	    .disk_used = -1,
	    .ends = {.pid = -1},
	};
	sb->plan.agent_fd = -1;
	sb->plan.workspace_tree = -1;
	sr_procview_plan_init(&sb->plan.view);
	sb->plan.disk_tree = -1;
	sb->plan.sources.workspace = -1;
	sb->plan.sources.tap = -1;
	sb->plan.sources.upper = -1;
	sb->plan.sources.disk = -1;
	sb->plan.sources.disk_dir = -1;
	sb->plan.sock = -1;
	if (o->id)
		snprintf(sb->id, sizeof(sb->id), "%s", o->id);
	else
		sr_sandbox_new_id(sb->id);
	memcpy(r->sandbox_id, sb->id, sizeof(sb->id));

	if ((e = sr_fault_validate(err)) < 0 || (e = prepare(sb, r, err)) < 0 ||
	    (e = clone_sandbox(sb, err)) < 0 || (e = parent_steps(sb, err)) < 0)
		goto fail;
	e = wait_ready(sb);
	if (e == -ETIME) {
		sr_error_msg(err, -ETIME, "the set-up did not finish before the timeout");
		goto fail;
	}
	if (e < 0) {
		sr_error_errno(err, e, "wait for the sandbox");
		goto fail;
	}
	if (e == 0) {
		if (sb->error.code)
			*err = sb->error;
		else
			sr_error_msg(err, -EPROTO, "the sandbox ended during its set-up");
		e = err->code;
		goto fail;
	}
	*ret = sb;
	return 0;
fail:
	/* A sysctl or AppArmor behind it: doctor's own diagnosis, in the same words. */
	sr_doctor_explain(err);
	sr_sandbox_free(sb);
	return e;
}

/*
 * How long a request waits for room on PID 1's socket. The queue fills
 * only while PID 1 does not read it -- when the agent keeps it waiting
 * (it can stop a process PID 1 is starting) -- and the request fails
 * then rather than hold up whoever serves the sandbox.
 */
#define SEND_WAIT_MS 1000

/* PID 1's socket has room within SEND_WAIT_MS: 0, else -EAGAIN. */
static int wait_room(struct sr_sandbox *sb)
{
	struct pollfd p = {.fd = sb->sock, .events = POLLOUT};

	return SR_RETRY(poll(&p, 1, SEND_WAIT_MS)) == 1 ? 0 : -EAGAIN;
}

static int send_request(struct sr_sandbox *sb, struct sr_msg *m, const void *payload, size_t len,
			const int *fds, size_t n_fds)
{
	bool waited = false;
	int r;

	if (sb->sock < 0 || sb->reaped)
		return -ESRCH;
	/* Behind what waits for room (a CANCEL, a kill), never ahead of it; one wait in all. */
	r = sr_msg_queue_flush(&sb->out, sb->sock);
	if (r == -EAGAIN) {
		waited = true;
		if (wait_room(sb) == 0)
			r = sr_msg_queue_flush(&sb->out, sb->sock);
	}
	if (r < 0)
		return r;
	m->id = ++sb->next_id;
	r = sr_msg_send_full(sb->sock, m, payload, len, fds, n_fds);
	if (r == -EAGAIN && !waited && wait_room(sb) == 0)
		r = sr_msg_send_full(sb->sock, m, payload, len, fds, n_fds);
	return r;
}

/* The error of a request that could not be sent. */
static int request_failed(int r, const char *what, struct sr_error *err)
{
	if (r == -ESRCH)
		return sr_error_msg(err, r, "the sandbox has ended");
	if (r == -EAGAIN)
		return sr_error_msg(err, r,
				    "%s: the sandbox takes no requests (its PID 1 is kept busy "
				    "from inside)",
				    what);
	return sr_error_errno(err, r, "%s", what);
}

/* Reads until the reply to request id (answering everything else that comes meanwhile). */
static int wait_reply(struct sr_sandbox *sb, uint32_t id, struct sr_msg *ret,
		      struct sr_msg_extra *ret_ex)
{
	for (;;) {
		struct pollfd p = {.fd = sb->sock, .events = POLLIN};
		int r = read_message(sb, ret, ret_ex);

		if (r == 0)
			return -ESRCH;
		if (r == -EAGAIN) {
			if (SR_RETRY(poll(&p, 1, -1)) < 0)
				return sr_negerrno();
			continue;
		}
		if (ret->id == id &&
		    (ret->type == SR_MSG_SPAWNED || ret->type == SR_MSG_SPAWN_FAILED))
			return 0;
		on_message(sb, ret, ret_ex);
	}
}

/* SPAWN's message for s: its payload (argv, envp, cwd) and the fds it passes. */
static int spawn_message(const struct sr_spawn *s, struct sr_msg *m, char **ret_payload,
			 size_t *ret_len, int fds[3], size_t *ret_n_fds, struct sr_error *err)
{
	*m = (struct sr_msg){.type = SR_MSG_SPAWN,
			     .flags = (int32_t)s->flags,
			     .value = (int64_t)s->rows << 16 | s->cols};
	*ret_payload = NULL;
	*ret_len = 0;
	*ret_n_fds = 0;
	if (!(s->flags & SR_SPAWN_AGENT)) {
		int r = sr_spawn_encode(s->argv, s->envp, s->cwd, ret_payload, ret_len);

		if (r == -E2BIG)
			return sr_error_msg(err, r,
					    "the command's arguments, environment and working "
					    "directory exceed %d KiB together",
					    SR_MSG_PAYLOAD_MAX / 1024);
		if (r < 0)
			return sr_error_errno(err, r, "spawn");
	}
	for (int i = 0; i < 3; i++)
		if (!(s->flags & (SR_SPAWN_PTY_STDIN << i)))
			fds[(*ret_n_fds)++] = s->stdio[i];
	return 0;
}

int sr_sandbox_spawn_start(struct sr_sandbox *sb, const struct sr_spawn *s, uint32_t *ret_id,
			   struct sr_error *err)
{
	_cleanup_free_ char *payload = NULL;
	struct sr_msg m;
	size_t len, n_fds;
	int fds[3];
	int r;

	/* One process ends the sandbox: its EXIT is the ended callback's. */
	if ((s->flags & SR_SPAWN_ENDS_SANDBOX) && (sb->ends_spawn || sb->ends.pid > 0))
		return sr_error_msg(err, -EBUSY, "spawn: a process ends this sandbox already");
	if ((r = spawn_message(s, &m, &payload, &len, fds, &n_fds, err)) < 0)
		return r;
	r = send_request(sb, &m, payload, len, fds, n_fds);
	if (r < 0)
		return request_failed(r, "spawn", err);
	if (s->flags & SR_SPAWN_ENDS_SANDBOX)
		sb->ends_spawn = m.id;
	*ret_id = m.id;
	return 0;
}

int sr_sandbox_spawn(struct sr_sandbox *sb, const struct sr_spawn *s, pid_t *ret_pid, int *ret_pty,
		     struct sr_error *err)
{
	_cleanup_free_ char *payload = NULL;
	struct sr_msg m, reply;
	struct sr_msg_extra ex = {0};
	bool pty = s->flags & SR_SPAWN_PTY;
	size_t len, n_fds;
	int fds[3];
	int r;

	if (ret_pty)
		*ret_pty = -1;
	if ((r = spawn_message(s, &m, &payload, &len, fds, &n_fds, err)) < 0)
		return r;
	r = send_request(sb, &m, payload, len, fds, n_fds);
	if (r == 0)
		r = wait_reply(sb, m.id, &reply, &ex);
	if (r < 0)
		return request_failed(r, "spawn", err);
	if (reply.type == SR_MSG_SPAWN_FAILED) {
		sr_msg_extra_close(&ex);
		err->status = reply.status;
		return sr_error_msg(err, reply.code < 0 ? reply.code : -EIO, "%s", reply.text);
	}
	if (s->flags & SR_SPAWN_ENDS_SANDBOX) {
		sb->ends.pid = reply.pid;
		sb->ends_holds = s->flags & SR_SPAWN_HOLD;
	}
	if (pty && ret_pty && ex.n_fds == 1)
		*ret_pty = steal_fd(&ex.fds[0]);
	sr_msg_extra_close(&ex);
	*ret_pid = reply.pid;
	return 0;
}

int sr_sandbox_stat_start(struct sr_sandbox *sb, uint32_t *ret_id)
{
	struct sr_msg m = {.type = SR_MSG_STAT};
	int r = send_request(sb, &m, NULL, 0, NULL, 0);

	if (r < 0)
		return r;
	*ret_id = m.id;
	return 0;
}

int sr_sandbox_work(struct sr_sandbox *sb, int kind, const char *path, int fd, int64_t limit_ms,
		    uint32_t *ret_id)
{
	struct sr_msg m = {.type = SR_MSG_WORK, .flags = kind, .value = limit_ms};
	int r = send_request(sb, &m, path, path ? strlen(path) + 1 : 0, &fd, 1);

	if (r < 0)
		return r;
	*ret_id = m.id;
	return 0;
}

/*
 * m queued for PID 1 (send_later's callers). One that has left
 * SR_MSG_QUEUE_MAX of them unread reads nothing any more (stuck, or made
 * to stop): what they were to end, the sandbox's end ends.
 */
static int send_later(struct sr_sandbox *sb, const struct sr_msg *m)
{
	int r;

	if (sb->sock < 0 || sb->reaped)
		return -ESRCH;
	r = sr_msg_queue_send(&sb->out, sb->sock, m);
	if (r == -ENOBUFS)
		sr_sandbox_kill(sb);
	return r;
}

/*
 * Not a request that may fail after SEND_WAIT_MS: a worker whose client
 * went must end (the agent may keep it stopped, and PID 1 kills it only
 * when told), so a CANCEL finding PID 1's socket full waits in sb->out
 * for room, sent by sr_sandbox_dispatch() (sr_sandbox_poll_out_fd()).
 */
int sr_sandbox_cancel(struct sr_sandbox *sb, uint32_t id)
{
	return send_later(sb, &(struct sr_msg){.type = SR_MSG_CANCEL, .id = id});
}

int sr_sandbox_halt(struct sr_sandbox *sb, int grace_ms)
{
	const struct itimerspec grace = {.it_value = sr_timespec_ms((uint64_t)grace_ms)};
	struct sr_msg halt = {.type = SR_MSG_HALT};

	if (sb->reaped || sb->held || sb->halt_sent || sb->end_sent)
		return 0;
	halt.id = ++sb->next_id;
	if (sb->ready && sr_msg_send(sb->sock, &halt) == 0) {
		sb->halt_sent = true;
		sb->endfd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
		if (sb->endfd >= 0 && timerfd_settime(sb->endfd, 0, &grace, NULL) == 0)
			return 0;
	}
	sr_sandbox_kill(sb);
	return 0;
}

bool sr_sandbox_held(const struct sr_sandbox *sb)
{
	return sb->held && !sb->reaped;
}

int sr_sandbox_connect(struct sr_sandbox *sb, int port, uint32_t *ret_id)
{
	struct sr_msg m = {.type = SR_MSG_CONNECT, .flags = port};
	int r = send_request(sb, &m, NULL, 0, NULL, 0);

	if (r < 0)
		return r;
	*ret_id = m.id;
	return 0;
}

int sr_sandbox_signal(struct sr_sandbox *sb, pid_t pid, int sig)
{
	struct sr_msg m = {.type = SR_MSG_SIGNAL, .pid = pid, .flags = sig};

	return send_request(sb, &m, NULL, 0, NULL, 0);
}

/* As sr_sandbox_cancel(): a kill that must not be lost waits for room. */
int sr_sandbox_kill_process(struct sr_sandbox *sb, pid_t pid)
{
	return send_later(sb,
			  &(struct sr_msg){.type = SR_MSG_SIGNAL, .pid = pid, .flags = SIGKILL});
}

void sr_sandbox_kill(struct sr_sandbox *sb)
{
	if (sb->reaped)
		return;
	if (sb->cgroup)
		sr_cgroup_kill(sb->cgroup);
	if (sb->pidfd >= 0)
		syscall(SYS_pidfd_send_signal, sb->pidfd, SIGKILL, NULL, 0);
	else if (sb->pid > 0)
		kill(sb->pid, SIGKILL);
	sr_closep(&sb->endfd);
}

int sr_sandbox_end(struct sr_sandbox *sb, int grace_ms)
{
	const struct itimerspec grace = {.it_value = sr_timespec_ms((uint64_t)grace_ms)};
	const struct sr_msg end = {.type = SR_MSG_END};

	if (sb->reaped)
		return 0;
	if (sb->end_sent)
		return 0; /* the grace runs already */
	/*
	 * PID 1 kills and reaps every other process itself, so that their
	 * CPU time reaches its rusage where no cgroup counts it. Should it
	 * not be gone by the end of the grace (or not be listening yet),
	 * everything is killed.
	 */
	if (sb->ready && grace_ms > 0 && sr_msg_send(sb->sock, &end) == 0) {
		sb->end_sent = true;
		sr_closep(&sb->endfd); /* a HALT's grace, if one was running */
		sb->endfd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
		if (sb->endfd >= 0 && timerfd_settime(sb->endfd, 0, &grace, NULL) == 0)
			return 0;
	}
	sr_sandbox_kill(sb);
	return 0;
}

void sr_sandbox_poll_fds(const struct sr_sandbox *sb, int fds[SR_SANDBOX_POLL_FDS])
{
	fds[0] = sb->reaped ? -1 : sb->sock;
	fds[1] = sb->reaped ? -1 : sb->pidfd;
	fds[2] = sb->endfd;
	fds[3] = sr_net_watch_fd(sb->net);
}

int sr_sandbox_poll_out_fd(const struct sr_sandbox *sb)
{
	return !sb->reaped && sr_msg_queue_pending(&sb->out) ? sb->sock : -1;
}

bool sr_sandbox_has_room(const struct sr_sandbox *sb)
{
	struct pollfd p = {.fd = sb->sock, .events = POLLOUT};

	if (sb->sock < 0 || sb->reaped)
		return true; /* a request fails at once (ESRCH), waits for nothing */
	return !sr_msg_queue_pending(&sb->out) && poll(&p, 1, 0) == 1;
}

int sr_sandbox_room_fd(const struct sr_sandbox *sb)
{
	return sb->reaped ? -1 : sb->sock;
}

void sr_sandbox_dispatch(struct sr_sandbox *sb)
{
	struct pollfd fds[SR_SANDBOX_POLL_FDS];
	int raw[SR_SANDBOX_POLL_FDS];

	if (sr_sandbox_poll_out_fd(sb) >= 0)
		(void)sr_msg_queue_flush(&sb->out, sb->sock);

	sr_sandbox_poll_fds(sb, raw);
	for (size_t i = 0; i < SR_ARRAY_SIZE(fds); i++)
		fds[i] = (struct pollfd){.fd = raw[i], .events = POLLIN};
	if (poll(fds, SR_ARRAY_SIZE(fds), 0) <= 0)
		return;
	if (fds[0].revents)
		drain(sb);
	if (fds[2].revents & POLLIN)
		sr_sandbox_kill(sb); /* the END's grace is over */
	/*
	 * The helper, gone before the sandbox: said while it is ready. Before
	 * that, slirp4netns's end is the child's error to report.
	 */
	if (fds[3].revents)
		sr_net_dispatch(sb->net, sb->ready && !sb->reaped);
	if ((fds[1].revents || sb->sock < 0) && reap(sb, fds[1].revents == 0) && sb->opts.ops &&
	    sb->opts.ops->ended)
		sb->opts.ops->ended(sb->opts.ctx, sb, sb->ends_seen ? &sb->ends : NULL);
}

bool sr_sandbox_ended(const struct sr_sandbox *sb)
{
	return sb->reaped;
}

void sr_sandbox_usage(struct sr_sandbox *sb, struct sr_result *r)
{
	struct sr_cgroup_stats cs;
	int64_t used;

	r->user_ms = (double)sb->ru.ru_utime.tv_sec * 1e3 + (double)sb->ru.ru_utime.tv_usec / 1e3;
	r->sys_ms = (double)sb->ru.ru_stime.tv_sec * 1e3 + (double)sb->ru.ru_stime.tv_usec / 1e3;
	r->disk_used_bytes = sb->disk_used;
	/* Counted on the host: also when PID 1 is gone (an OOM kill), or cannot count (a
	 * directory). */
	used = sr_disk_used(sb->disk);
	if (used >= 0)
		r->disk_used_bytes = used;
	r->peak_memory_bytes = -1;
	sr_net_record(sb->net, &r->network);
	r->peak_memory_scope = SR_PEAK_NONE;
	/*
	 * Without a cgroup's count, the largest process's peak: ru_maxrss of
	 * PID 1's rusage is the largest of it and everything it reaped.
	 */
	if (sb->reaped && sb->ru.ru_maxrss > 0)
		r->peak_memory_bytes = (int64_t)sb->ru.ru_maxrss * 1024;
	if (sb->ends_seen && sb->ends.peak_rss > r->peak_memory_bytes)
		r->peak_memory_bytes = sb->ends.peak_rss;
	if (r->peak_memory_bytes >= 0)
		r->peak_memory_scope = SR_PEAK_PROCESS;
	if (!sb->cgroup)
		return;
	sr_cgroup_stats(sb->cgroup, &cs);
	if (cs.peak_memory_bytes >= 0) {
		r->peak_memory_bytes = cs.peak_memory_bytes;
		r->peak_memory_scope = SR_PEAK_SANDBOX;
	}
	if (cs.user_ms >= 0)
		r->user_ms = cs.user_ms;
	if (cs.sys_ms >= 0)
		r->sys_ms = cs.sys_ms;
}

bool sr_sandbox_oom_killed(struct sr_sandbox *sb)
{
	struct sr_cgroup_stats cs;

	if (!sb->cgroup)
		return false;
	sr_cgroup_stats(sb->cgroup, &cs);
	return cs.oom_killed;
}

int sr_sandbox_init_status(const struct sr_sandbox *sb)
{
	return sb->reaped ? sb->init_status : -1;
}

const struct sr_error *sr_sandbox_error(const struct sr_sandbox *sb)
{
	return &sb->error;
}

const char *sr_sandbox_id(const struct sr_sandbox *sb)
{
	return sb->id;
}

const struct sr_config *sr_sandbox_config(const struct sr_sandbox *sb)
{
	return sb->config;
}

char *const *sr_sandbox_env(const struct sr_sandbox *sb)
{
	return sb->plan.envp.items;
}

struct sr_cgroup *sr_sandbox_cgroup(const struct sr_sandbox *sb)
{
	return sb->cgroup;
}

const char *sr_sandbox_workspace(const struct sr_sandbox *sb)
{
	return sb->agent.archive_path ? sb->agent.archive_path : sb->agent.host_dir;
}

const char *sr_sandbox_workspace_dir(const struct sr_sandbox *sb)
{
	return sb->agent.kind == SR_AGENT_ARCHIVE ? NULL : sb->agent.host_dir;
}

void sr_sandbox_free(struct sr_sandbox *sb)
{
	if (!sb)
		return;
	if (sb->pid > 0 && !sb->reaped) {
		sr_sandbox_kill(sb);
		reap(sb, true);
	}
	/* After PID 1 is reaped: its namespace's tasks are gone, the cgroup can go. */
	sr_cgroup_free(sb->cgroup);
	sr_net_free(sb->net);
	/* After PID 1 too: nothing writes to the disk any more when it goes. */
	sr_disk_free(sb->disk);
	for (size_t i = 0; sb->plan.bind_trees && i < sb->config->n_binds; i++)
		sr_closep(&sb->plan.bind_trees[i]);
	free(sb->plan.bind_trees);
	sr_closep(&sb->sock);
	sr_msg_queue_free(&sb->out);
	sr_closep(&sb->pidfd);
	sr_closep(&sb->endfd);
	sr_closep(&sb->uid_lock);
	sr_closep(&sb->plan.agent_fd);
	sr_closep(&sb->plan.workspace_tree);
	sr_procview_plan_close(&sb->plan.view);
	sr_strv_free(&sb->plan.envp);
	sr_agent_free(&sb->agent);
	free(sb);
}
