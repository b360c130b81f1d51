/* SPDX-License-Identifier: MIT */
/*
 * The views as FUSE files, served by PID 1 without libfuse: the kernel's
 * protocol (<linux/fuse.h>) is small for a file system of one read-only
 * file. Each view is a FUSE mount of its own, mounted on the /proc file
 * itself with a regular file as its root (rootmode), so that no lookup is
 * ever asked: the requests are INIT, GETATTR, OPEN, READ, FLUSH, RELEASE
 * and STATFS, and ENOSYS answers the rest.
 *
 * A read at offset 0 makes the text anew, as a seq_file does: `free` and
 * top keep /proc/meminfo open and read it again from the start.
 */
#include "viewfs.h"
#include "procview-text.h"
#include "util.h"

#include <linux/fuse.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/uio.h>

/* Open views at once, across all three: past it, ENFILE. */
#define HANDLES_MAX 256
/* Nothing is ever written; the kernel wants a read buffer of 8 KiB at least. */
#define MAX_WRITE 4096
#define REQ_BYTES (FUSE_MIN_READ_BUFFER + MAX_WRITE)
/* Requests taken from one connection in a row: then the host's get their turn. */
#define REQS_IN_A_ROW 32
/* A /proc file larger than this is not a view's source. */
#define SOURCE_MAX (16 << 20)
/* The attributes never change: cached for an hour. */
#define ATTR_VALID_S 3600
/*
 * The files' owner: an id no user namespace maps (a map cannot reach
 * (u32)-1), so that it shows as nobody, as the real /proc files (host
 * root's) do -- with --net egress uid 0 of the mount's namespace is the
 * agent's own host id.
 */
#define UNMAPPED_ID UINT32_MAX

struct view {
	int fuse;   /* /dev/fuse, the mount's connection; -1 */
	int source; /* the real /proc file, opened before it was covered; -1 */
};

/* An open view: its text, made at its first read and at every read at offset 0. */
struct handle {
	bool used;
	enum sr_view view;
	char *text;
	size_t len;
};

struct sr_viewfs {
	const struct sr_procview_plan *plan;
	struct view views[_SR_VIEW_MAX];
	struct handle handles[HANDLES_MAX];
	char *req;
	uint64_t mounted_at;
	char frozen[160];
};

static const char *const names[_SR_VIEW_MAX] = {
    [SR_VIEW_MEMINFO] = "meminfo",
    [SR_VIEW_STAT] = "stat",
    [SR_VIEW_CPUINFO] = "cpuinfo",
};

const char *sr_viewfs_name(enum sr_view v)
{
	return names[v];
}

static bool wanted(const struct sr_procview_plan *plan, enum sr_view v)
{
	return v == SR_VIEW_MEMINFO ? plan->memory_bytes > 0 : plan->cpu_views;
}

static void set_frozen(struct sr_viewfs *vf, int e, const char *what)
{
	if (!vf->frozen[0])
		snprintf(vf->frozen, sizeof(vf->frozen), "%s: %s", what, strerror(-e));
}

int sr_viewfs_open(struct sr_plan *p, struct sr_error *err)
{
	struct sr_viewfs *vf = calloc(1, sizeof(*vf));

	if (!vf)
		return sr_error_errno(err, -ENOMEM, "views of /proc");
	vf->plan = &p->view;
	for (size_t v = 0; v < _SR_VIEW_MAX; v++) {
		vf->views[v] = (struct view){.fuse = -1, .source = -1};
		if (!wanted(vf->plan, v) || vf->frozen[0])
			continue;
		vf->views[v].fuse = open("/dev/fuse", O_RDWR | O_NONBLOCK | O_CLOEXEC);
		if (vf->views[v].fuse < 0)
			set_frozen(vf, sr_negerrno(), "/dev/fuse");
	}
	p->views = vf;
	return 0;
}

/* The whole of a /proc or cgroup file, from offset 0 (a seq_file made anew), NUL-terminated. */
static ssize_t read_whole(int fd, char **ret)
{
	for (size_t cap = 8192; cap <= SOURCE_MAX; cap *= 4) {
		_cleanup_free_ char *buf = malloc(cap);
		size_t len = 0;
		ssize_t n = 0;

		if (!buf)
			return -ENOMEM;
		while (len + 1 < cap &&
		       (n = SR_RETRY(pread(fd, buf + len, cap - 1 - len, (off_t)len))) > 0)
			len += (size_t)n;
		if (n < 0)
			return sr_negerrno();
		/* Filled: again from the start with more room, for one consistent text. */
		if (len + 1 == cap)
			continue;
		buf[len] = '\0';
		*ret = steal_pointer(&buf);
		return (ssize_t)len;
	}
	return -EFBIG;
}

static void read_memory(const struct sr_procview_plan *plan, struct sr_procview_mem *m)
{
	_cleanup_free_ char *usage = NULL, *stat = NULL;

	*m = (struct sr_procview_mem){.limit_bytes = plan->memory_bytes, .no_swap = plan->no_swap};
	if (plan->usage_fd < 0 || read_whole(plan->usage_fd, &usage) < 0 ||
	    read_whole(plan->stat_fd, &stat) < 0)
		return;
	m->cgroup = true;
	m->usage_bytes = strtoull(usage, NULL, 10);
	sr_procview_parse_memstat(stat, &m->stat);
}

/* The view's text now, from the host's file (source) and the sandbox's cgroup. */
static ssize_t make_text(const struct sr_procview_plan *plan, enum sr_view v, int source,
			 char **ret)
{
	_cleanup_free_ char *host = NULL;
	struct sr_procview_mem m;
	ssize_t r = read_whole(source, &host);

	if (r < 0)
		return r;
	switch (v) {
	case SR_VIEW_MEMINFO:
		read_memory(plan, &m);
		return sr_procview_meminfo(host, &m, ret);
	case SR_VIEW_STAT:
		return sr_procview_stat(host, &plan->cpus, ret);
	case SR_VIEW_CPUINFO:
		return sr_procview_cpuinfo(host, &plan->cpus, ret);
	default:
		return -EINVAL;
	}
}

/*
 * Read-only, no set-id, devices or exec; default_permissions: the kernel
 * checks the mode (0444) itself. Without allow_other, only processes whose
 * ids are all user_id/group_id may use the file: the sandbox's user,
 * which is PID 1's now (the outer namespace's 0 with --net egress, the
 * same host id as the agent's 1000 in the inner one), and not host root
 * nor any other user entering the namespace from outside.
 */
static int mount_fuse(int fuse, const char *path)
{
	char opts[160];

	snprintf(opts, sizeof(opts), "fd=%d,rootmode=%o,user_id=%u,group_id=%u,default_permissions",
		 fuse, (unsigned)(S_IFREG | 0444), (unsigned)geteuid(), (unsigned)getegid());
	if (mount("sandbox-run", path, "fuse.sandbox-run",
		  MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC, opts) < 0)
		return sr_negerrno();
	return 0;
}

int sr_viewfs_mount(struct sr_plan *p, enum sr_view v, int proc, const char *dir, char **ret_text,
		    struct sr_error *err)
{
	struct sr_viewfs *vf = p->views;
	struct view *view = &vf->views[v];
	_cleanup_close_ int source = -1;
	char path[64];
	ssize_t r;

	if (!wanted(&p->view, v))
		return 0;
	source = openat(proc, names[v], O_RDONLY | O_CLOEXEC);
	if (source < 0 && errno == ENOENT) {
		sr_closep(&view->fuse);
		view->fuse = -1;
		return 0;
	}
	if (source < 0)
		return sr_error_errno(err, sr_negerrno(), "open /proc/%s", names[v]);
	if (view->fuse >= 0) {
		snprintf(path, sizeof(path), "%s/%s", dir, names[v]);
		r = mount_fuse(view->fuse, path);
		if (r == 0) {
			view->source = steal_fd(&source);
			vf->mounted_at = (uint64_t)time(NULL);
			return 0;
		}
		snprintf(path, sizeof(path), "mount fuse.sandbox-run on /proc/%s", names[v]);
		set_frozen(vf, (int)r, path);
		sr_closep(&view->fuse);
		view->fuse = -1;
	}
	r = make_text(&p->view, v, source, ret_text);
	if (r < 0)
		return sr_error_errno(err, (int)r, "the sandbox's /proc/%s", names[v]);
	return 1;
}

/* Serving. */

static void reply(int fd, uint64_t unique, int error, const void *data, size_t len)
{
	struct fuse_out_header h = {
	    .len = (uint32_t)(sizeof(h) + (error ? 0 : len)), .error = error, .unique = unique};
	struct iovec iov[2] = {{&h, sizeof(h)}, {(void *)data, len}};

	/*
	 * ENOENT: the request was interrupted or the connection aborted
	 * meanwhile. Nothing to do about that, nor about any other failure.
	 */
	(void)!writev(fd, iov, error || !len ? 1 : 2);
}

static void on_init(int fd, const struct fuse_in_header *h, const void *in, size_t len)
{
	const struct fuse_init_in *ii = in;
	struct fuse_init_out out = {
	    .major = FUSE_KERNEL_VERSION,
	    .max_background = 16,
	    .congestion_threshold = 12,
	    .max_write = MAX_WRITE,
	    .time_gran = 1,
	};

	/* Older kernels send less (no flags2): major, minor, readahead and flags are all we read.
	 */
	if (len < offsetof(struct fuse_init_in, flags2) || ii->major != FUSE_KERNEL_VERSION) {
		reply(fd, h->unique, -EPROTO, NULL, 0);
		return;
	}
	out.minor = ii->minor < FUSE_KERNEL_MINOR_VERSION ? ii->minor : FUSE_KERNEL_MINOR_VERSION;
	out.max_readahead = ii->max_readahead;
	reply(fd, h->unique, 0, &out, sizeof(out));
}

/*
 * As the real /proc file: a read-only regular file of size 0, owned by an
 * id the sandbox does not map. A direct-I/O read is not bounded by the
 * size, so the reader reads to the end.
 */
static void on_getattr(const struct sr_viewfs *vf, int fd, const struct fuse_in_header *h)
{
	struct fuse_attr_out out = {
	    .attr_valid = ATTR_VALID_S,
	    .attr = {.ino = FUSE_ROOT_ID,
		     .mode = S_IFREG | 0444,
		     .nlink = 1,
		     .uid = UNMAPPED_ID,
		     .gid = UNMAPPED_ID,
		     .blksize = 4096,
		     .atime = vf->mounted_at,
		     .mtime = vf->mounted_at,
		     .ctime = vf->mounted_at},
	};

	reply(fd, h->unique, 0, &out, sizeof(out));
}

static void on_open(struct sr_viewfs *vf, enum sr_view v, int fd, const struct fuse_in_header *h,
		    const void *in, size_t len)
{
	const struct fuse_open_in *oi = in;
	struct fuse_open_out out = {.open_flags = FOPEN_DIRECT_IO};

	if (len < sizeof(*oi)) {
		reply(fd, h->unique, -EINVAL, NULL, 0);
		return;
	}
	if ((oi->flags & O_ACCMODE) != O_RDONLY) {
		reply(fd, h->unique, -EACCES, NULL, 0);
		return;
	}
	/* Bounded: each open view may hold its text, in PID 1's memory. */
	for (size_t i = 0; i < HANDLES_MAX; i++) {
		if (vf->handles[i].used)
			continue;
		vf->handles[i] = (struct handle){.used = true, .view = v};
		out.fh = i;
		reply(fd, h->unique, 0, &out, sizeof(out));
		return;
	}
	reply(fd, h->unique, -ENFILE, NULL, 0);
}

static struct handle *handle_of(struct sr_viewfs *vf, enum sr_view v, uint64_t fh)
{
	return fh < HANDLES_MAX && vf->handles[fh].used && vf->handles[fh].view == v
		   ? &vf->handles[fh]
		   : NULL;
}

static void on_read(struct sr_viewfs *vf, enum sr_view v, int fd, const struct fuse_in_header *h,
		    const void *in, size_t len)
{
	const struct fuse_read_in *ri = in;
	struct handle *hd = len >= sizeof(*ri) ? handle_of(vf, v, ri->fh) : NULL;

	if (!hd) {
		reply(fd, h->unique, -EBADF, NULL, 0);
		return;
	}
	if (ri->offset == 0 || !hd->text) {
		char *text = NULL;
		ssize_t n = make_text(vf->plan, v, vf->views[v].source, &text);

		if (n < 0) {
			reply(fd, h->unique, -EIO, NULL, 0);
			return;
		}
		free(hd->text);
		hd->text = text;
		hd->len = (size_t)n;
	}
	if (ri->offset >= hd->len) {
		reply(fd, h->unique, 0, NULL, 0);
		return;
	}
	reply(fd, h->unique, 0, hd->text + ri->offset,
	      hd->len - ri->offset < ri->size ? hd->len - ri->offset : ri->size);
}

static void on_release(struct sr_viewfs *vf, enum sr_view v, int fd, const struct fuse_in_header *h,
		       const void *in, size_t len)
{
	const struct fuse_release_in *ri = in;
	struct handle *hd = len >= sizeof(*ri) ? handle_of(vf, v, ri->fh) : NULL;

	if (hd) {
		free(hd->text);
		*hd = (struct handle){0};
	}
	reply(fd, h->unique, 0, NULL, 0);
}

static void on_statfs(int fd, const struct fuse_in_header *h)
{
	struct fuse_statfs_out out = {.st = {.bsize = 4096, .frsize = 4096, .namelen = 255}};

	reply(fd, h->unique, 0, &out, sizeof(out));
}

static void dispatch(struct sr_viewfs *vf, enum sr_view v, const struct fuse_in_header *h,
		     const void *in, size_t len)
{
	int fd = vf->views[v].fuse;

	switch (h->opcode) {
	case FUSE_INIT:
		on_init(fd, h, in, len);
		break;
	case FUSE_GETATTR:
		on_getattr(vf, fd, h);
		break;
	case FUSE_OPEN:
		on_open(vf, v, fd, h, in, len);
		break;
	case FUSE_READ:
		on_read(vf, v, fd, h, in, len);
		break;
	case FUSE_RELEASE:
		on_release(vf, v, fd, h, in, len);
		break;
	case FUSE_FLUSH:
		reply(fd, h->unique, 0, NULL, 0);
		break;
	case FUSE_STATFS:
		on_statfs(fd, h);
		break;
	case FUSE_FORGET:
	case FUSE_BATCH_FORGET:
	case FUSE_INTERRUPT:
		/*
		 * No reply, by the protocol. An interrupted READ needs none
		 * either: each request is answered before the next is read.
		 */
		break;
	default:
		reply(fd, h->unique, -ENOSYS, NULL, 0);
		break;
	}
}

static void serve_view(struct sr_viewfs *vf, enum sr_view v)
{
	struct view *view = &vf->views[v];

	if (!vf->req && !(vf->req = malloc(REQ_BYTES)))
		return;
	for (int i = 0; i < REQS_IN_A_ROW && view->fuse >= 0; i++) {
		const struct fuse_in_header *h = (const void *)vf->req;
		ssize_t n = read(view->fuse, vf->req, REQ_BYTES);

		if (n < 0 && errno == EINTR)
			continue;
		/* ENODEV: the file system is gone (unmounted, or the connection aborted). */
		if (n < 0 && errno == ENODEV) {
			sr_closep(&view->fuse);
			view->fuse = -1;
		}
		if (n < (ssize_t)sizeof(*h) || h->len != (uint32_t)n)
			return; /* EAGAIN: nothing more now */
		dispatch(vf, v, h, vf->req + sizeof(*h), (size_t)n - sizeof(*h));
	}
}

size_t sr_viewfs_pollfds(const struct sr_viewfs *vf, struct pollfd *fds)
{
	size_t n = 0;

	for (size_t v = 0; vf && v < _SR_VIEW_MAX; v++)
		if (vf->views[v].fuse >= 0 && vf->views[v].source >= 0)
			fds[n++] = (struct pollfd){.fd = vf->views[v].fuse, .events = POLLIN};
	return n;
}

void sr_viewfs_serve(struct sr_viewfs *vf, const struct pollfd *fds, size_t n)
{
	for (size_t i = 0; vf && i < n; i++)
		for (size_t v = 0; fds[i].revents && v < _SR_VIEW_MAX; v++)
			if (vf->views[v].fuse == fds[i].fd)
				serve_view(vf, v);
}

const char *sr_viewfs_frozen(const struct sr_viewfs *vf)
{
	return vf ? vf->frozen : "";
}
