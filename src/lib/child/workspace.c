/* SPDX-License-Identifier: MIT */
/*
 * /workspace, in the child: an overlay over the agent's directory, an
 * archive extracted by a confined process, or an empty directory, with an
 * executable-file agent copied in.
 */
#include "workspace.h"
#include "archive.h"
#include "caps.h"
#include "mounts.h"
#include "seccomp.h"
#include "util.h"
#include "wscopy.h"

#include <fcntl.h>
#include <limits.h>
#include <linux/sched.h>
#include <sched.h>
#include <sys/mount.h>
#include <sys/sendfile.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#define NEWROOT SR_NEWROOT
#define DATA	SR_DATA_DIR

/* The extracting process: confine, extract, report. Never returns. */
static _Noreturn void extract_worker(int archive_fd, int ws, const struct sr_extract_opts *o,
				     int report)
{
	struct sr_error e = {0};
	int keep[] = {archive_fd, ws, report};
	int r;

	/*
	 * A session of its own first: in the caller's process group, kill(0,
	 * sig) would reach the caller's shell and its jobs, in no namespace of
	 * ours. The workspace is all it sees; no fd of PID 1's but these three
	 * stays.
	 */
	if (setsid() < 0)
		r = sr_error_errno(&e, sr_negerrno(), "confine the extraction: setsid");
	else if (fchdir(ws) < 0 || chroot(".") < 0)
		r = sr_error_errno(&e, sr_negerrno(), "confine the extraction: chroot");
	else if (sr_close_fds_except(keep, SR_ARRAY_SIZE(keep)) < 0)
		r = sr_error_errno(&e, sr_negerrno(), "confine the extraction: close fds");
	else if ((r = sr_caps_drop_all(&e)) >= 0 && (r = sr_seccomp_apply(&e)) >= 0)
		r = sr_archive_extract_opts(archive_fd, ws, o, &e);
	if (r < 0)
		(void)!sr_write_all(report, &e, sizeof(e));
	_exit(r < 0 ? 1 : 0);
}

/*
 * The archive is the agent's, and libarchive's decoders (tar, zip,
 * gzip, bzip2, xz, zstd) parse it: in a process confined as the agent
 * will be -- chrooted into the workspace, every other fd closed, no
 * capabilities, no_new_privs, the agent's syscall filter -- and more:
 * network and PID namespaces of its own. The sandbox's network may be up
 * here before its policy is (slirp4netns configures the tap while PID 1
 * mounts); the worker's has only lo, down. As PID 1 of its PID namespace,
 * whatever it starts dies with it. A decoder bug is then code of the
 * agent's in its own workspace, not PID 1 with every capability over the
 * sandbox's namespaces and the host's tree in view. The files it creates
 * are PID 1's uid's, as before. libarchive and the locale are loaded
 * first: nothing can be opened in the chroot.
 */
static int extract_confined(int archive_fd, int ws, const struct sr_extract_opts *o,
			    struct sr_error *err)
{
	struct clone_args args = {
	    .flags = CLONE_NEWNET | CLONE_NEWPID,
	    .exit_signal = SIGCHLD,
	};
	struct sr_error e = {0};
	int pipefd[2], status, r;
	ssize_t n;
	long pid;

	r = sr_archive_load(err);
	if (r < 0)
		return r;
	if (pipe2(pipefd, O_CLOEXEC) < 0)
		return sr_error_errno(err, sr_negerrno(), "extract: pipe");
	/* A fork() into new namespaces: one process, as many as a plain fork (--pids). */
	pid = syscall(SYS_clone3, &args, sizeof(args));
	if (pid < 0 && errno == ENOSYS)
		pid =
		    syscall(SYS_clone, (unsigned long)args.flags | SIGCHLD, NULL, NULL, NULL, NULL);
	if (pid < 0) {
		r = sr_error_errno(err, sr_negerrno(), "extract: start a confined process");
		close(pipefd[0]);
		close(pipefd[1]);
		return r;
	}
	if (pid == 0) {
		close(pipefd[0]);
		extract_worker(archive_fd, ws, o, pipefd[1]);
	}
	close(pipefd[1]);
	/* One report, or EOF once the worker (and all it started) is gone. */
	n = SR_RETRY(read(pipefd[0], &e, sizeof(e)));
	close(pipefd[0]);
	if (SR_RETRY(waitpid((pid_t)pid, &status, 0)) < 0)
		return sr_error_errno(err, sr_negerrno(), "extract: wait");
	/*
	 * The worker ran the decoders: of its report only the text is taken,
	 * as text (sr_log shows it printable), and a negative errno as the
	 * kernel has them (MAX_ERRNO 4095); never an exit status.
	 */
	if (n == (ssize_t)sizeof(e)) {
		e.msg[sizeof(e.msg) - 1] = '\0';
		return sr_error_msg(err, e.code < 0 && e.code >= -4095 ? e.code : -EIO, "%s",
				    e.msg);
	}
	if (WIFSIGNALED(status))
		return sr_error_msg(err, -EIO, "extract: killed by signal %d (a bad archive?)",
				    WTERMSIG(status));
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
		return sr_error_msg(err, -EIO, "extract: failed without a word (status %d)",
				    WIFEXITED(status) ? WEXITSTATUS(status) : -1);
	return 0;
}

/* A snapshot's parts (work.c writes them): each restored where it was. */
static const char *const snapshot_parts[] = {"workspace", "home", "tmp", NULL};

static int extract_archive(const struct sr_plan *p, int data, struct sr_error *err)
{
	const struct sr_config *c = p->config;
	struct sr_extract_opts o = {.max_bytes = c->disk_bytes};
	_cleanup_close_ int ws = -1;
	int r;

	/*
	 * A snapshot is the sandbox's disk as it was: extracted at the disk's
	 * root, into its three parts only, bounded by the disk (as many
	 * files as it holds: no count of the agents' archives), by the data
	 * it holds, as the snapshot was: a sparse file's holes cost the disk
	 * nothing, and were no bar to taking the snapshot.
	 */
	if (p->agent->snapshot) {
		o.tops = snapshot_parts;
		o.max_entries = SIZE_MAX;
		o.holes_free = true;
		o.keep_modes = true;
		ws = openat(data, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	} else {
		ws = openat(data, "workspace", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	}
	if (ws < 0)
		return sr_error_errno(err, sr_negerrno(), "open workspace");
	r = extract_confined(p->agent_fd, ws, &o, err);
	if (r < 0)
		return sr_error_prefix(err, "%s %s",
				       p->agent->snapshot ? "snapshot" : "agent archive",
				       p->agent->archive_path);
	if (c->no_entry)
		return 0;
	return sr_agent_detect_entry_in(ws, c->argv[0], c->entry, c->argv + 1, c->argc - 1,
					&p->agent->argv, err);
}

/*
 * An executable-file agent, copied in as /workspace/NAME: the sandbox
 * user's own file, on the sandbox's disk (within its limit), with no
 * set-id bit. A copy, not a bind of the host file: the agent may change it
 * as it could a file of a directory agent's (overlay), and no host path of
 * the caller's appears in the sandbox's mount table. DIR is empty, or the
 * agent's own layer (agent_file_layer).
 */
static int copy_agent_file(const struct sr_plan *p, int src, int dir, struct sr_error *err)
{
	const char *name = strrchr(p->agent->file_path, '/') + 1;
	_cleanup_close_ int out = -1;
	struct stat st;
	ssize_t n;

	if (fstat(src, &st) < 0)
		return sr_error_errno(err, sr_negerrno(), "agent %s", p->agent->file_path);
	if (!S_ISREG(st.st_mode))
		return sr_error_msg(err, -EINVAL, "agent %s: not a regular file any more",
				    p->agent->file_path);
	out = openat(dir, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0700);
	if (out < 0 || fchmod(out, 0755) < 0)
		return sr_error_errno(err, sr_negerrno(), "agent %s: copy into " SR_WORKSPACE,
				      p->agent->file_path);
	do
		n = sendfile(out, src, NULL, 1 << 30);
	while (n > 0 || (n < 0 && errno == EINTR));
	if (n < 0) {
		int e = sr_negerrno();

		return sr_error_errno(err, e, "agent %s: copy into " SR_WORKSPACE "%s",
				      p->agent->file_path,
				      e == -ENOSPC ? " (past the disk limit, --disk)" : "");
	}
	return 0;
}

/*
 * The layer of an executable-file agent over a --workspace DIR: a
 * directory of the sandbox's disk holding the copy alone. Never over a
 * file DIR has, which the layer would hide.
 */
static int agent_file_layer(const struct sr_plan *p, int file, int ws, int data, int *ret_dir,
			    struct sr_error *err)
{
	const char *name = strrchr(p->agent->file_path, '/') + 1;
	struct stat st;
	int dir, r;

	if (fstatat(ws, name, &st, AT_SYMLINK_NOFOLLOW) == 0)
		return sr_error_msg(err, -EEXIST,
				    "agent %s: the workspace already has a %s (run that one, or "
				    "rename one of them)",
				    p->agent->file_path, name);
	if (mkdirat(data, "agent-file", 0755) < 0 || fchmodat(data, "agent-file", 0755, 0) < 0)
		return sr_error_errno(err, sr_negerrno(), "mkdir agent-file");
	dir = openat(data, "agent-file", O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (dir < 0)
		return sr_error_errno(err, sr_negerrno(), "open agent-file");
	r = copy_agent_file(p, file, dir, err);
	if (r < 0) {
		close(dir);
		return r;
	}
	*ret_dir = dir;
	return 0;
}

/*
 * /workspace: an overlay whose lower layer is the agent's directory (never
 * written: the host tree stays as it was) and whose upper layer lives on
 * the disk tmpfs; an archive's extracted tree or an empty directory is
 * bound as it is, being ours already. An executable-file agent is a
 * lower layer of its own above the directory's (agent_file_layer), made
 * before the overlay is mounted: not a change of the workspace's for
 * --changes, diff and apply.
 */
int sr_workspace_mount(struct sr_plan *p, int ws, int root, int data, struct sr_error *err)
{
	_cleanup_close_ int file = steal_fd(&p->sources.agent_file);
	_cleanup_close_ int dir = -1, copy = -1, agent_dir = -1;
	char opts[256], lower[32] = "";
	int r;

	if (ws < 0) {
		if (p->agent->kind == SR_AGENT_ARCHIVE) {
			r = extract_archive(p, data, err);
			if (r < 0)
				return r;
		}
		r = sr_mounts_bind_tree(data, "workspace", root, "workspace",
					MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV, "/workspace", err);
		if (r < 0 || file < 0)
			return r;
		dir = openat(data, "workspace", O_PATH | O_DIRECTORY | O_CLOEXEC);
		if (dir < 0)
			return sr_error_errno(err, sr_negerrno(), "open " SR_WORKSPACE);
		return copy_agent_file(p, file, dir, err);
	}
	/*
	 * An owner or group overlayfs could not copy up (wscopy.h): the
	 * lower layer is a copy of the sandbox user's own, on its disk.
	 */
	if (!p->drop_groups && sr_wscopy_needed(ws)) {
		r = sr_wscopy(ws, data, "lower", p->agent->host_dir, err);
		if (r < 0)
			return r;
		copy = openat(data, "lower", O_PATH | O_DIRECTORY | O_CLOEXEC);
		if (copy < 0)
			return sr_error_errno(err, sr_negerrno(), "workspace copy");
		ws = copy;
	}
	/*
	 * An executable-file agent is a lower layer of its own, above the
	 * directory's: in the upper layer it would be a file the agent added,
	 * in --changes, diff and apply, and apply would write the agent into
	 * the caller's checkout.
	 */
	if (file >= 0) {
		r = agent_file_layer(p, file, ws, data, &agent_dir, err);
		if (r < 0)
			return r;
		snprintf(lower, sizeof(lower), "/proc/self/fd/%d:", agent_dir);
	}
	/*
	 * lowerdir through /proc/self/fd: the directory opened before any
	 * mount, not whatever its path names now, and no escaping of ',' or ':' in
	 * user paths. userxattr: overlay in a user namespace keeps its
	 * whiteouts and opaque markers in user.* xattrs (tmpfs has them).
	 */
	snprintf(opts, sizeof(opts),
		 "lowerdir=%s/proc/self/fd/%d,upperdir=" NEWROOT "/" DATA "/upper,workdir=" NEWROOT
		 "/" DATA "/work,userxattr",
		 lower, ws);
	if (mount("overlay", NEWROOT "/workspace", "overlay", MS_NOSUID | MS_NODEV, opts) < 0) {
		int e = sr_negerrno();

		if (e == -EACCES || e == -EPERM)
			return sr_error_msg(err, e,
					    "mount overlay on /workspace: %s: the sandbox user "
					    "cannot read %s%s",
					    strerror(-e), p->agent->host_dir,
					    p->drop_groups /* the caller is root */
						? " (when run as root, make it readable by "
						  "others: chmod -R o+rX)"
						: "");
		return sr_error_errno(err, e, "mount overlay on /workspace");
	}
	/* What changed is the upper layer: PID 1 keeps it, out of the agent's reach (work.h). */
	p->sources.upper = openat(data, "upper", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (p->sources.upper < 0)
		return sr_error_errno(err, sr_negerrno(), "open the workspace's upper layer");
	return 0;
}
