/* SPDX-License-Identifier: MIT */
/*
 * The child side. Runs as PID 1 of the new PID namespace, right after
 * clone3, with every capability in its new user namespace. The setup is
 * one ordered list; each step is one call that can fail, and a failure
 * travels to the supervisor as one message before the child exits.
 *
 * The order is the security argument:
 *  - sources first, with the caller's own rights: the workspace and the
 *    --bind paths are opened before the id switch and before any mount,
 *    /dev/fuse for the views of /proc (viewfs.h) in this user namespace;
 *  - then user ids: every file the setup creates is owned by "user";
 *  - mounts need CAP_SYS_ADMIN and the host's tree (sources), so they come
 *    before anything that drops either, and end with pivot_root; the views
 *    of /proc, last in /proc, are read by nothing after (PID 1 serves them,
 *    once the set-up is done);
 *  - network and hostname need CAP_NET_ADMIN / CAP_SYS_ADMIN in the new
 *    namespaces;
 *  - nested (--net egress, userns.h): everything above ran as 0 in the
 *    outer user namespace, which owns the mount, network, UTS and PID
 *    namespaces; now PID 1 moves to an inner one (with a new IPC
 *    namespace) as 1000, where the capabilities it drops below never
 *    applied to those namespaces;
 *  - limits (rlimits) after that, so that RLIMIT_NPROC counts the agent's
 *    namespace alone (the kernel checks each level up against the limit
 *    in force when the level below was made), and before the capability
 *    drop;
 *  - capabilities, then no_new_privs (set by the same step);
 *  - seccomp last: it would refuse mount(2) and friends to the setup, and
 *    it needs no_new_privs to be loadable without CAP_SYS_ADMIN.
 * PID 1 itself runs with all of this applied; the agent inherits it.
 */
#include "setup.h"
#include "caps.h"
#include "cgroup.h"
#include "fault.h"
#include "init.h"
#include "mounts.h"
#include "net.h"
#include "proc.h"
#include "protocol.h"
#include "seccomp.h"
#include "userns.h"
#include "util.h"
#include "viewfs.h"

#include <linux/close_range.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>

/*
 * Dies with the supervisor, even by SIGKILL: PID 1 dying takes the whole
 * namespace. The kernel clears the parent-death signal whenever our
 * credentials change, so it is armed again after the id switch -- and the
 * socket tells whether the supervisor died before it was.
 */
static int die_with_supervisor(int sock)
{
	struct pollfd pfd = {.fd = sock, .events = POLLRDHUP};

	if (prctl(PR_SET_PDEATHSIG, SIGKILL) < 0)
		return sr_negerrno();
	if (poll(&pfd, 1, 0) < 0)
		return sr_negerrno();
	return pfd.revents & (POLLHUP | POLLRDHUP | POLLERR) ? -EPIPE : 0;
}

static int step_sources(struct sr_plan *p, struct sr_error *err)
{
	int r = sr_mounts_open_sources(p, err);

	if (r >= 0)
		r = sr_viewfs_open(p, err);
	return r < 0 ? r : sr_net_child_open(p->net, &p->sources.tap, err);
}

/*
 * After every change of our ids. A change of host uid (a root caller's
 * PID 1 becoming the sandbox's unprivileged id) resets dumpable to
 * fs.suid_dumpable, which may be 1: PID 1 must stay non-dumpable. And the
 * parent-death signal is cleared by the same changes.
 */
static int after_id_change(struct sr_plan *p, struct sr_error *err)
{
	int r;

	if (prctl(PR_SET_DUMPABLE, 0) < 0)
		return sr_error_errno(err, sr_negerrno(), "not dumpable");
	r = die_with_supervisor(p->sock);
	if (r < 0)
		return sr_error_errno(err, r, "watch the supervisor");
	return 0;
}

static int step_user(struct sr_plan *p, struct sr_error *err)
{
	int r = sr_userns_child(p->drop_groups, p->nested_userns, err);

	return r < 0 ? r : after_id_change(p, err);
}

static int step_mounts(struct sr_plan *p, struct sr_error *err)
{
	return sr_mounts_setup(p, err);
}

static int step_network(struct sr_plan *p, struct sr_error *err)
{
	struct sr_error tuning = {0};
	int r = sr_net_child(p->net, p->sources.tap, p->sock, err);

	if (r < 0)
		return r;
	if (sr_net_child_tune(p->net, &tuning) < 0)
		sr_msg_send_warning(p->sock, &tuning);
	return 0;
}

static int step_hostname(struct sr_plan *p, struct sr_error *err)
{
	if (sethostname(SR_SANDBOX_HOSTNAME, strlen(SR_SANDBOX_HOSTNAME)) < 0)
		return sr_error_errno(err, sr_negerrno(), "sethostname");
	return 0;
}

/* The limit, soft and hard, at half the caller's soft one (none where it has none). */
static int halve_limit(int resource, const char *name, struct sr_error *err)
{
	struct rlimit rl;

	if (getrlimit(resource, &rl) < 0 || rl.rlim_cur == RLIM_INFINITY)
		return 0;
	rl.rlim_cur /= 2;
	rl.rlim_max = rl.rlim_cur;
	if (setrlimit(resource, &rl) < 0)
		return sr_error_errno(err, sr_negerrno(), "setrlimit %s", name);
	return 0;
}

static int step_limits(struct sr_plan *p, struct sr_error *err)
{
	/*
	 * No core dumps: in the workspace they would eat the disk limit, and
	 * a pipe core_pattern would be handed the agent's environment, its
	 * deployment's secrets (proc.h says how, and why 1 byte). Lowering it
	 * to 0 needs no privilege, so the seccomp filter skips the agent's
	 * setting of it, `ulimit -c 0` included (seccomp-rules.c: setrlimit,
	 * prlimit64): 0 returned, the limit kept.
	 */
	int r = sr_proc_no_core_dumps();

	if (r < 0)
		return sr_error_errno(err, r, "setrlimit RLIMIT_CORE");
	/*
	 * POSIX message queues' bytes, and signals queued (sigqueue(2),
	 * tgkill(2), timers: each timer_create(2) takes one), are counted
	 * per host uid and every user namespace on the way up, each level
	 * against its creator's limit, not the sandbox's: half of each for
	 * the sandbox, so that the caller (the same uid, unprivileged) keeps
	 * the other half: the whole of RLIMIT_SIGPENDING queued inside would
	 * leave the caller's processes none (no timer made, no signal queued).
	 * Shared memory locked with SHM_LOCK is charged the same way, against
	 * RLIMIT_MEMLOCK: all of it locked inside left the caller's shmctl(2)
	 * ENOMEM (a living sandbox's segments stay locked until it goes);
	 * pages pinned by MSG_ZEROCOPY sends, per host uid alone, too.
	 * RLIMIT_NOFILE, the bound of the uid's fds in flight, is halved for
	 * each process PID 1 starts (init-spawn.c), not for PID 1.
	 */
	if ((r = halve_limit(RLIMIT_MSGQUEUE, "RLIMIT_MSGQUEUE", err)) < 0 ||
	    (r = halve_limit(RLIMIT_SIGPENDING, "RLIMIT_SIGPENDING", err)) < 0 ||
	    (r = halve_limit(RLIMIT_MEMLOCK, "RLIMIT_MEMLOCK", err)) < 0)
		return r;
	return sr_cgroup_child(p->cgroup, err);
}

/* Nested only: the agent's own user (and IPC) namespace, owning none of the others. */
static int step_inner_user(struct sr_plan *p, struct sr_error *err)
{
	int r;

	if (!p->nested_userns)
		return 0;
	r = sr_userns_enter_inner(err);
	return r < 0 ? r : after_id_change(p, err);
}

static int step_caps(struct sr_plan *p, struct sr_error *err)
{
	return sr_caps_drop_all(err);
}

static int step_seccomp(struct sr_plan *p, struct sr_error *err)
{
	return sr_seccomp_apply(err);
}

static const struct {
	const char *name;
	int (*run)(struct sr_plan *p, struct sr_error *err);
} steps[] = {
    {"sources", step_sources}, {"user ids", step_user},	    {"filesystem", step_mounts},
    {"network", step_network}, {"hostname", step_hostname}, {"inner user ids", step_inner_user},
    {"limits", step_limits},   {"capabilities", step_caps}, {"seccomp", step_seccomp},
};

/*
 * Nothing of the caller's may leak in (CVE-2024-21626 was a leaked fd to
 * the host): close every fd but stdio and the few the setup needs.
 */
static int cmp_int(const void *a, const void *b)
{
	return *(const int *)a - *(const int *)b;
}

int sr_close_fds_except(int *keep, size_t n)
{
	unsigned int from = 3;

	qsort(keep, n, sizeof(*keep), cmp_int);
	for (size_t i = 0; i < n; i++) {
		if (keep[i] < (int)from)
			continue;
		if ((unsigned int)keep[i] > from &&
		    syscall(SYS_close_range, from, (unsigned int)keep[i] - 1, 0) < 0)
			return sr_negerrno();
		from = (unsigned int)keep[i] + 1;
	}
	return syscall(SYS_close_range, from, ~0U, 0) < 0 ? sr_negerrno() : 0;
}

/* The fds the set-up needs: the socket, what the host side prepared, the network's. */
static int *fds_to_keep(const struct sr_plan *p, size_t *ret_n)
{
	size_t n = 0;
	int *keep = calloc(7 + p->config->n_binds, sizeof(*keep));

	if (!keep)
		return NULL;
	keep[n++] = p->sock;
	keep[n++] = p->agent_fd;
	keep[n++] = p->workspace_tree;
	keep[n++] = sr_net_child_fd(p->net);
	keep[n++] = p->disk_tree;
	keep[n++] = p->view.usage_fd;
	keep[n++] = p->view.stat_fd;
	for (size_t i = 0; p->bind_trees && i < p->config->n_binds; i++)
		keep[n++] = p->bind_trees[i];
	*ret_n = n;
	return keep;
}

void sr_setup_child(struct sr_plan *p)
{
	size_t n_keep = 0;
	_cleanup_free_ int *keep = fds_to_keep(p, &n_keep);
	struct sr_error err = {0};
	struct sr_msg m;
	sigset_t ttou;
	int r;

	/*
	 * Out of the caller's process group first: what is sent to it is the
	 * supervisor's to forward. In a background group, a write to the
	 * terminal under `stty tostop` raises SIGTTOU, which the kernel drops
	 * for a namespace's init and restarts the write for ever: blocked,
	 * the write goes through (a sanitizer's report, a test build's line).
	 */
	sigemptyset(&ttou);
	sigaddset(&ttou, SIGTTOU);
	if (setpgid(0, 0) < 0 || sigprocmask(SIG_BLOCK, &ttou, NULL) < 0 ||
	    die_with_supervisor(p->sock) < 0)
		_exit(125);
	if (!keep || sr_close_fds_except(keep, n_keep) < 0)
		_exit(125);
	/* sr_fault_point(): test builds only, empty otherwise (fault.h). */
	sr_fault_point("child", "started");

	/* [1] The supervisor writes our id maps; EOF means it died meanwhile. */
	r = sr_msg_recv(p->sock, &m, NULL);
	if (r <= 0 || m.type != SR_MSG_GO)
		_exit(125);

	/*
	 * Non-dumpable from here on: /proc/1 is off limits to the agent, so it
	 * cannot ptrace PID 1 or open /proc/1/exe -- the sandbox-run binary on
	 * the host (CVE-2019-5736). Not before GO: a non-dumpable process's
	 * /proc files belong to root, and an unprivileged supervisor could not
	 * write our uid_map.
	 */
	if (prctl(PR_SET_DUMPABLE, 0) < 0)
		_exit(125);
	sr_fault_point("child", "go");

	/* [2] Setup, in order. */
	for (size_t i = 0; i < SR_ARRAY_SIZE(steps); i++) {
		sr_fault_step("before", steps[i].name);
		r = steps[i].run(p, &err);
		if (r < 0) {
			if (err.msg[0] == '\0')
				sr_error_errno(&err, r, "%s", steps[i].name);
			sr_msg_send_error(p->sock, &err);
			_exit(err.status ? err.status : 125);
		}
		sr_fault_step("after", steps[i].name);
	}
	/* PID 1 keeps no handle on the host: not the archive, not a source. */
	if (p->agent_fd >= 0)
		close(p->agent_fd);
	if (p->workspace_tree >= 0)
		close(p->workspace_tree);
	if (p->sources.workspace >= 0)
		close(p->sources.workspace);
	for (size_t i = 0; i < p->sources.n_binds; i++)
		close(p->sources.binds[i]);
	sr_closep(&p->disk_tree);
	sr_closep(&p->sources.disk_dir);
	for (size_t i = 0; p->bind_trees && i < p->config->n_binds; i++)
		sr_closep(&p->bind_trees[i]);

	/* [3] PID 1 serves the host: spawns, signals, exits, the end. */
	sr_init_run(p);
}
