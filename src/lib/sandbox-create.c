/* SPDX-License-Identifier: MIT */
/*
 * create (sandbox.h): the host side prepared (the agent, its environment,
 * the network, the cgroup, the disk, the binds; how each limit is held,
 * said), PID 1 cloned into the new namespaces, the parent-side steps [1]
 * and GO, then the wait for READY.
 */
#include "sandbox-internal.h"
#include "doctor.h"
#include "env.h"
#include "fault.h"
#include "hostpath.h"
#include "procview.h"
#include "units.h"
#include "userns.h"
#include "util.h"

#include <fcntl.h>
#include <linux/sched.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>

extern char **environ;

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

	/* The disk: disk.h says how (0: no limit asked); the network policy fails closed. */
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
 * directory is opened by the child itself (mounts-sources.c): overlayfs
 * takes no lower layer from another mount namespace.
 */
static int open_agent(struct sr_sandbox *sb, struct sr_error *err)
{
	const struct sr_agent *a = &sb->agent;

	if (a->kind != SR_AGENT_ARCHIVE)
		return 0;
	/*
	 * The agent's archive was resolved with no link left (hostpath.h):
	 * one there now was put there since, and is refused. A snapshot's is
	 * in the caller's own data directory.
	 */
	sb->plan.agent_fd =
	    a->snapshot ? open(a->archive_path, O_RDONLY | O_CLOEXEC | O_NOCTTY)
			: sr_openat2(AT_FDCWD, a->archive_path, O_RDONLY | O_CLOEXEC | O_NOCTTY,
				     RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS);
	if (sb->plan.agent_fd < 0)
		return sr_error_errno(err, a->snapshot ? sr_negerrno() : sb->plan.agent_fd,
				      "open %s", a->archive_path);
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
	/* A profile named by its path (a deployment's config.ini, -p FILE): the path once. */
	if (sr_streq(c->profile, c->profile_path))
		from[0] = '\0';
	sr_info(sink, "sandbox %s: profile %s%s%s%s; agent: %s; workspace: %s%s; runs: %s",
		r->sandbox_id, profile, from[0] ? " (" : "", from, from[0] ? ")" : "",
		kind[a->kind], a->archive_path ? "extracted from " : "", workspace, command);
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

/*
 * The workspace's owner and group are the sandbox user's inside (root's
 * checkout, or a user's run by root): without it the agent can read their
 * files but not change them. Opened with RESOLVE_NO_SYMLINKS, as the
 * sandbox opens it otherwise (mounts-sources.c): resolved with no link
 * left (hostpath.h), one there now was put since. Failing that, the
 * sandbox opens it itself and says why.
 */
static void idmap_workspace(struct sr_sandbox *sb, const struct sr_sink *sink)
{
	_cleanup_close_ int fd =
	    sr_openat2(AT_FDCWD, sb->agent.host_dir, O_PATH | O_DIRECTORY | O_CLOEXEC,
		       RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS);
	struct sr_error ierr = {0};
	struct stat st;

	if (fd < 0 || fstat(fd, &st) < 0)
		return;
	if (sr_hostpath_owner_held(fd, st.st_uid, "workspace", sb->agent.host_dir, &ierr) < 0)
		sr_warn(sink,
			"%s: not mapped to the agent, who may change none of the owner's files "
			"there and read only what others may",
			ierr.msg);
	else if (sr_userns_idmapped_tree(fd, "the workspace", st.st_uid, st.st_gid,
					 sb->plan.host_uid, sb->plan.host_gid, false,
					 &sb->plan.workspace_tree, &ierr) < 0)
		sr_warn(sink, "%s: %s: the workspace owner's files stay read-only to the agent",
			sb->agent.host_dir, ierr.msg);
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
	if ((e = sr_agent_resolve(c, sink, &sb->agent, err)) < 0 || (e = open_agent(sb, err)) < 0)
		return e;
	/* Test builds only (fault.h): the host's paths resolved, nothing made of them yet. */
	sr_fault_point("supervisor", "resolved");
	if ((e = sr_env_build(c, environ, &sb->plan.envp, err)) < 0 ||
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
	if (geteuid() == 0 && sb->agent.host_dir && sb->agent.kind != SR_AGENT_ARCHIVE)
		idmap_workspace(sb, sink);
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

			if (sandbox_read_message(sb, &m, &ex) == 1)
				sandbox_on_message(sb, &m, &ex);
		}
		if (fds[1].revents && sandbox_reap(sb, false))
			return sb->ready;
		if (sb->sock < 0 && !sb->ready)
			return sandbox_reap(sb, true), 0;
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
