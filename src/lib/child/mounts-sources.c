/* SPDX-License-Identifier: MIT */
/*
 * The sandbox's sources (mounts.h: sr_mounts_open_sources()): the host
 * paths its filesystem is built from, each opened once, as the caller,
 * before the first mount: the disk's directory, an executable-file agent,
 * every --bind source and the workspace (or the host side's idmapped
 * clone, attached). An agent's file or a bind source with a symbolic link
 * put on its way since the supervisor resolved it is refused, not
 * followed; mounts.c then builds from these descriptors.
 */
#include "mounts.h"
#include "disk.h"
#include "util.h"

#include <fcntl.h>
#include <linux/openat2.h>
#include <sys/mount.h>

/*
 * A directory of the host's disk for the sandbox's (disk.h), made by
 * the host side in the caller's own data directory: opened here to be
 * bound, and with O_PATH, for a root caller's is its sandbox user's.
 */
static int open_disk_dir(struct sr_plan *p, struct sr_error *err)
{
	struct sr_sources *s = &p->sources;

	if (p->disk_kind != SR_DISK_DIR)
		return 0;
	s->disk_dir = open(p->disk_dir, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (s->disk_dir < 0)
		return sr_error_errno(err, sr_negerrno(), "disk %s", p->disk_dir);
	return 0;
}

static int open_agent_file(struct sr_plan *p, struct sr_error *err)
{
	struct sr_sources *s = &p->sources;

	if (!p->agent->file_path)
		return 0;
	/*
	 * realpath() named it, so a symbolic link here means the path
	 * changed since: refused, not followed. Non-blocking, and then
	 * it must be a regular file: a FIFO put in its place would
	 * otherwise hold the set-up for ever.
	 */
	s->agent_file =
	    sr_openat2(AT_FDCWD, p->agent->file_path, O_RDONLY | O_NOCTTY | O_NONBLOCK | O_CLOEXEC,
		       RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS);
	if (s->agent_file < 0) {
		int e = sr_negerrno();

		return sr_error_errno(err, e, "agent %s%s", p->agent->file_path,
				      e == -ELOOP ? " (a symbolic link was put on its way "
						    "while the sandbox started)"
						  : "");
	}
	return 0;
}

/* One O_PATH fd per --bind source; s->n_binds counts those opened. */
static int open_bind_sources(struct sr_plan *p, struct sr_error *err)
{
	const struct sr_config *c = p->config;
	struct sr_sources *s = &p->sources;

	s->n_binds = 0;
	s->binds = calloc(c->n_binds + 1, sizeof(*s->binds));
	if (!s->binds)
		return sr_error_errno(err, -ENOMEM, "open sources");
	if (p->agent->bind_sources.n != c->n_binds)
		return sr_error_msg(err, -EINVAL, "bind sources not resolved");
	/*
	 * Resolved by the supervisor with no link left but root's own
	 * (hostpath.c): a link that is there now was put there since, and is
	 * refused rather than followed.
	 */
	for (; s->n_binds < c->n_binds; s->n_binds++) {
		int fd =
		    sr_openat2(AT_FDCWD, p->agent->bind_sources.items[s->n_binds],
			       O_PATH | O_CLOEXEC, RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS);

		if (fd < 0) {
			int e = sr_negerrno();

			return sr_error_errno(err, e, "bind %s%s", c->binds[s->n_binds].src,
					      e == -ELOOP ? " (a symbolic link was put on its way "
							    "while the sandbox started)"
							  : "");
		}
		s->binds[s->n_binds] = fd;
	}
	return 0;
}

static int open_workspace(struct sr_plan *p, struct sr_error *err)
{
	struct sr_sources *s = &p->sources;

	if (p->workspace_tree >= 0) {
		/*
		 * The supervisor's idmapped clone is a detached mount: attach it
		 * in our namespace (on /tmp, about to be covered by the new root)
		 * so that overlayfs accepts it as a lower layer.
		 */
		if (move_mount(p->workspace_tree, "", AT_FDCWD, "/tmp", MOVE_MOUNT_F_EMPTY_PATH) <
		    0)
			return sr_error_errno(err, sr_negerrno(), "attach the idmapped workspace");
		s->workspace = fcntl(p->workspace_tree, F_DUPFD_CLOEXEC, 3);
		if (s->workspace < 0)
			return sr_error_errno(err, sr_negerrno(), "attach the idmapped workspace");
	} else if (p->agent->host_dir && p->agent->kind != SR_AGENT_ARCHIVE) {
		/* Resolved with no link left, as a bind source: one there now is refused. */
		int fd = sr_openat2(AT_FDCWD, p->agent->host_dir, O_PATH | O_DIRECTORY | O_CLOEXEC,
				    RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS);

		if (fd < 0)
			return sr_error_errno(err, fd, "open %s%s", p->agent->host_dir,
					      fd == -ELOOP ? " (a symbolic link was put on its way "
							     "while the sandbox started)"
							   : "");
		s->workspace = fd;
	}
	return 0;
}

/*
 * Host paths the sandbox is built from, opened in our own mount namespace
 * (overlayfs and open_tree refuse mounts of another namespace), with the
 * caller's own rights (before the id switch: a root caller may bind what
 * only root can reach), and before anything covers the host's /tmp.
 */
int sr_mounts_open_sources(struct sr_plan *p, struct sr_error *err)
{
	struct sr_sources *s = &p->sources;
	int r;

	/*
	 * Nothing we mount may propagate back to the host (or to other
	 * sandboxes sharing a peer group), and nothing of the host's later
	 * mounts should appear inside.
	 */
	if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0)
		return sr_error_errno(err, sr_negerrno(), "make mounts private");
	s->workspace = -1;
	s->agent_file = -1;
	s->upper = -1;
	s->disk = -1;
	s->disk_dir = -1;
	if ((r = open_disk_dir(p, err)) < 0 || (r = open_agent_file(p, err)) < 0 ||
	    (r = open_bind_sources(p, err)) < 0)
		return r;
	return open_workspace(p, err);
}
