/* SPDX-License-Identifier: MIT */
#include "deploy.h"
#include "deploy-internal.h"
#include "profile.h"
#include "secrets.h"
#include "state.h"
#include "util.h"

#include <dirent.h>
#include <poll.h>
#include <sys/file.h>
#include <sys/random.h>
#include <sys/stat.h>

#define META_MAX     (64 * 1024)
#define VERSIONS_MAX 100000

struct sr_deployment {
	char *name;
	unsigned version;
	char *profile;
	char *app;
	char *argv[2];
	int lock; /* versions/N/lock, shared */
};

bool sr_deploy_valid_name(const char *name)
{
	return sr_state_valid_name(name);
}

static int bad_name(const char *name, struct sr_error *err)
{
	return sr_error_msg(err, -EINVAL,
			    "bad deployment name '%s' (1-64 of letters, digits, '_', '.', '-', "
			    "starting with a letter or digit)",
			    name);
}

static int no_deployment(const char *name, struct sr_error *err)
{
	return sr_error_msg(err, -ENOENT, "no deployment '%s' (sandbox-run deployments lists them)",
			    name);
}

/* <data>/deployments/NAME; made (0700) when create, else -ENOENT when missing. */
static int name_dir(const char *name, bool create, char **ret, struct sr_error *err)
{
	_cleanup_free_ char *top = NULL, *dir = NULL;
	struct stat st;
	int r;

	if (!sr_deploy_valid_name(name))
		return bad_name(name, err);
	r = sr_data_dir("deployments", &top, err);
	if (r < 0)
		return r;
	if (asprintf(&dir, "%s/%s", top, name) < 0)
		return sr_error_errno(err, -ENOMEM, "deployment");
	if (!create && lstat(dir, &st) < 0 && errno == ENOENT)
		return no_deployment(name, err);
	r = sr_private_dir(dir, err);
	if (r < 0)
		return r;
	*ret = steal_pointer(&dir);
	return 0;
}

int deploy_take_lock(int dirfd, const char *file, int op)
{
	int fd = openat(dirfd, file, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);

	if (fd < 0)
		return sr_negerrno();
	if (SR_RETRY(flock(fd, op)) < 0) {
		int r = sr_negerrno();

		close(fd);
		return r;
	}
	return fd;
}

/*
 * deploy.lock, waited for in 0.1 s steps: flock(2) cannot be polled, and
 * the signals that end a deploy come through o->cancel_fd, blocked
 * otherwise. The fd, or -errno (-ECANCELED: cancel_fd became readable).
 */
static int take_deploy_lock(int dirfd, const struct sr_deploy_begin_opts *o)
{
	_cleanup_close_ int fd =
	    openat(dirfd, "deploy.lock", O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
	bool told = false;

	if (fd < 0)
		return sr_negerrno();
	while (flock(fd, LOCK_EX | LOCK_NB) < 0) {
		struct pollfd p = {.fd = o->cancel_fd, .events = POLLIN};

		if (errno != EWOULDBLOCK && errno != EINTR)
			return sr_negerrno();
		if (!told && o->waiting)
			o->waiting(o->ctx);
		told = true;
		if (poll(&p, o->cancel_fd >= 0, 100) > 0)
			return -ECANCELED;
	}
	return steal_fd(&fd);
}

void deploy_release(struct deploy_held *h)
{
	sr_closep(&h->lock);
	sr_closep(&h->deploying);
	sr_closep(&h->dirfd);
	free(h->dir);
	*h = (struct deploy_held){.dirfd = -1, .deploying = -1, .lock = -1};
}

/*
 * Whether the locked directory is still the one at its path, its lock
 * file still in it: `deployments rm` renames the directory away while it
 * holds its lock, and removes it; who waited for that lock gets a lock
 * nobody else will take again.
 */
static bool still_there(const struct deploy_held *h)
{
	struct stat a, b, l;

	return lstat(h->dir, &a) == 0 && fstat(h->dirfd, &b) == 0 && a.st_dev == b.st_dev &&
	       a.st_ino == b.st_ino && fstat(h->lock, &l) == 0 && l.st_nlink > 0;
}

int deploy_hold(const char *name, bool create, int op, const struct sr_deploy_begin_opts *o,
		struct deploy_held *ret, struct sr_error *err)
{
	struct deploy_held h = {.dirfd = -1, .deploying = -1, .lock = -1};
	int r;

	for (int tries = 0; tries < 100; tries++) {
		r = name_dir(name, create, &h.dir, err);
		if (r < 0)
			return r;
		h.dirfd = open(h.dir, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (h.dirfd < 0) {
			r = sr_negerrno();
			if (r == -ENOENT)
				goto again;
			r = sr_error_errno(err, r, "%s", h.dir);
			goto fail;
		}
		if (o && (h.deploying = take_deploy_lock(h.dirfd, o)) < 0) {
			r = h.deploying;
			if (r == -ECANCELED)
				r = sr_error_msg(err, r,
						 "stopped while waiting for another deploy of '%s'",
						 name);
			else
				r = sr_error_errno(err, r, "lock %s/deploy.lock", h.dir);
			goto fail;
		}
		h.lock = deploy_take_lock(h.dirfd, "lock", op);
		if (h.lock < 0) {
			r = h.lock;
			if (r == -ENOENT)
				goto again;
			r = sr_error_errno(err, r, "lock %s", h.dir);
			goto fail;
		}
		if (still_there(&h)) {
			*ret = h;
			return 0;
		}
	again:
		deploy_release(&h);
	}
	return sr_error_msg(err, -EAGAIN, "deployment '%s' keeps being removed and made again",
			    name);
fail:
	deploy_release(&h);
	return r;
}

/* A directory opened to be emptied: opened to its owner first if it is not (mode: lstat's). */
static int open_to_remove(int dir, const char *name, mode_t mode)
{
	int fd;

	/*
	 * A package may ship a 0555 directory, whose entries could not be
	 * unlinked otherwise; not through a link put in its place since.
	 */
	if ((mode & 0700) != 0700)
		(void)!fchmodat(dir, name, (mode & 07777) | 0700, AT_SYMLINK_NOFOLLOW);
	fd = openat(dir, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	return fd < 0 ? sr_negerrno() : fd;
}

/* The names in the directory at fd ("." and ".." aside), read whole before any goes. */
static int read_names(int fd, struct sr_strv *ret)
{
	int own = openat(fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	DIR *d = own >= 0 ? fdopendir(own) : NULL;
	struct dirent *de;
	int r = 0;

	if (!d) {
		r = sr_negerrno();
		if (own >= 0)
			close(own);
		return r;
	}
	while (r == 0 && (de = readdir(d)))
		if (!sr_streq(de->d_name, ".") && !sr_streq(de->d_name, ".."))
			r = sr_strv_push(ret, de->d_name);
	closedir(d);
	return r;
}

/*
 * statx of (at, name), not following a link (name "": at itself). The
 * mount's id with it where the kernel has one (5.8): what tells a bind
 * mount apart from the directory it is mounted on, on one file system.
 */
static int stat_node(int at, const char *name, struct statx *ret)
{
	int flags = AT_SYMLINK_NOFOLLOW | (*name ? 0 : AT_EMPTY_PATH);

	return statx(at, name, flags, STATX_BASIC_STATS | STATX_MNT_ID, ret) < 0 ? sr_negerrno()
										 : 0;
}

static bool same_node(const struct statx *a, const struct statx *b)
{
	return a->stx_dev_major == b->stx_dev_major && a->stx_dev_minor == b->stx_dev_minor &&
	       a->stx_ino == b->stx_ino;
}

/*
 * Empties the directory at *fd (self: its statx), one open directory at a
 * time however deep the tree: agents shape the trees removed here (an
 * archive agent's src/ may be some 2000 levels deep: PATH_MAX), and one
 * deeper than RLIMIT_NOFILE would otherwise stay for good.
 * Going down, the parent is closed; coming back, it is opened again as
 * the child's "..", and must be the very directory it was (else nothing
 * more is removed: -ESTALE, *fd -1). *fd is the directory's on return.
 * A directory of another mount (one placed inside by hand or by accident:
 * another file system, or a bind of this one) is not entered: -EXDEV, as
 * `rm --one-file-system` does.
 */
static int empty_tree(int *fd, const struct statx *self)
{
	struct sr_strv names = {0};
	int r = read_names(*fd, &names);

	for (size_t i = 0; *fd >= 0 && i < names.n; i++) {
		const char *name = names.items[i];
		struct statx st;
		int sub, e;

		if ((e = stat_node(*fd, name, &st)) < 0) {
			e = e == -ENOENT ? 0 : e;
		} else if (!S_ISDIR(st.stx_mode)) {
			e = unlinkat(*fd, name, 0) < 0 ? sr_negerrno() : 0;
		} else if (!sr_same_mount(&st, self)) {
			e = -EXDEV;
		} else if ((sub = open_to_remove(*fd, name, st.stx_mode)) < 0) {
			e = sub;
		} else if ((e = stat_node(sub, "", &st)) < 0 || !sr_same_mount(&st, self)) {
			/* A mount put there between the look and the open. */
			e = e < 0 ? e : -EXDEV;
			sr_closep(&sub);
		} else {
			sr_closep(fd);
			e = empty_tree(&sub, &st);
			*fd = sub >= 0 ? openat(sub, "..", O_RDONLY | O_DIRECTORY | O_CLOEXEC) : -1;
			sr_closep(&sub);
			if (*fd >= 0 && (stat_node(*fd, "", &st) < 0 || !same_node(&st, self)))
				sr_closep(fd);
			if (*fd < 0)
				e = -ESTALE;
			else if (unlinkat(*fd, name, AT_REMOVEDIR) < 0 && e == 0)
				e = sr_negerrno();
		}
		if (e < 0 && r == 0)
			r = e;
	}
	sr_strv_free(&names);
	return r;
}

/*
 * Removes (dirfd, name) and everything beneath it, following no link,
 * whatever its depth (empty_tree).
 */
int sr_deploy_remove_tree(int dir, const char *name)
{
	struct statx st;
	int fd, r;

	if ((r = stat_node(dir, name, &st)) < 0)
		return r == -ENOENT ? 0 : r;
	if (!S_ISDIR(st.stx_mode))
		return unlinkat(dir, name, 0) < 0 ? sr_negerrno() : 0;
	fd = open_to_remove(dir, name, st.stx_mode);
	if (fd < 0)
		return fd;
	if ((r = stat_node(fd, "", &st)) < 0) {
		close(fd);
		return r;
	}
	r = empty_tree(&fd, &st);
	if (fd >= 0)
		close(fd);
	/* Not empty (an entry failed, or the walk stopped) is refused here, harmlessly. */
	if (unlinkat(dir, name, AT_REMOVEDIR) < 0 && r == 0)
		r = sr_negerrno();
	return r;
}

/*
 * Renames (dirfd, name) out of sight, then removes it: nobody sees it half
 * gone. One left by a removal cut short (killed) is swept by the next of
 * its kind: a version's by the next prune under the same lock
 * (deploy_prune_locked), a deployment's by the next removal
 * (remove_deployment).
 */
#define GONE_PREFIX ".gone-"
static int remove_hidden(int dirfd, const char *name)
{
	char gone[96];
	uint32_t rnd = 0;

	(void)!getrandom(&rnd, sizeof(rnd), 0);
	snprintf(gone, sizeof(gone), GONE_PREFIX "%.64s-%08x", name, rnd);
	if (renameat(dirfd, name, dirfd, gone) < 0)
		return sr_negerrno();
	return sr_deploy_remove_tree(dirfd, gone);
}

void deploy_sweep(int dir, const char *const *prefixes)
{
	int fd = openat(dir, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	struct dirent *de;
	DIR *d;

	if (fd < 0)
		return;
	d = fdopendir(fd);
	if (!d) {
		close(fd);
		return;
	}
	while ((de = readdir(d)))
		for (const char *const *p = prefixes; *p; p++)
			if (strncmp(de->d_name, *p, strlen(*p)) == 0) {
				(void)sr_deploy_remove_tree(dirfd(d), de->d_name);
				break;
			}
	closedir(d);
}

static bool parse_version(const char *s, unsigned *ret)
{
	unsigned v = 0;

	if (!*s || *s == '0' || strlen(s) > 6)
		return false;
	for (; *s; s++) {
		if (*s < '0' || *s > '9')
			return false;
		v = v * 10 + (unsigned)(*s - '0');
	}
	*ret = v;
	return true;
}

unsigned deploy_read_current(int dirfd)
{
	char buf[64];
	ssize_t n = readlinkat(dirfd, "current", buf, sizeof(buf) - 1);
	unsigned v;

	if (n <= 0)
		return 0;
	buf[n] = '\0';
	if (strncmp(buf, "versions/", 9) != 0 || !parse_version(buf + 9, &v))
		return 0;
	return v;
}

int deploy_set_current(int dirfd, unsigned version, struct sr_error *err)
{
	char target[32], tmp[48];
	uint32_t rnd = 0;

	(void)!getrandom(&rnd, sizeof(rnd), 0);
	snprintf(target, sizeof(target), "versions/%u", version);
	snprintf(tmp, sizeof(tmp), ".current.new-%08x", rnd);
	if (symlinkat(target, dirfd, tmp) < 0)
		return sr_error_errno(err, sr_negerrno(), "make version %u current", version);
	if (renameat(dirfd, tmp, dirfd, "current") < 0) {
		int r = sr_negerrno();

		(void)unlinkat(dirfd, tmp, 0);
		return sr_error_errno(err, r, "make version %u current", version);
	}
	return 0;
}

static json_t *read_meta_at(int dirfd, const char *vname)
{
	char path[300];

	snprintf(path, sizeof(path), "%s/meta.json", vname);
	return sr_json_read_object_at(dirfd, path, META_MAX, 8);
}

static enum sr_version_status meta_status(json_t *meta)
{
	const char *s = meta ? json_string_value(json_object_get(meta, "status")) : NULL;

	if (sr_streq(s, "ready"))
		return SR_VERSION_READY;
	if (sr_streq(s, "failed"))
		return SR_VERSION_FAILED;
	return SR_VERSION_INCOMPLETE;
}

/* Whether someone holds the version's lock (an invocation, its deploy); never waits. */
static bool version_busy(int versionsfd, const char *vname)
{
	char path[300];
	_cleanup_close_ int fd = -1;

	snprintf(path, sizeof(path), "%s/lock", vname);
	fd = openat(versionsfd, path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return false;
	return flock(fd, LOCK_EX | LOCK_NB) < 0 && errno == EWOULDBLOCK;
}

static int cmp_version(const void *a, const void *b)
{
	const struct deploy_version *x = a, *y = b;

	return x->s.version < y->s.version ? -1 : x->s.version > y->s.version;
}

void deploy_versions_free(struct deploy_version *v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (v[i].meta)
			json_decref(v[i].meta);
	free(v);
}

int deploy_list_versions(int versionsfd, struct deploy_version **ret, size_t *ret_n)
{
	struct deploy_version *v = NULL;
	size_t n = 0;
	struct dirent *de;
	int fd = fcntl(versionsfd, F_DUPFD_CLOEXEC, 3);
	DIR *d = fd >= 0 ? fdopendir(fd) : NULL;

	if (!d) {
		if (fd >= 0)
			close(fd);
		return sr_negerrno();
	}
	rewinddir(d);
	while ((de = readdir(d))) {
		struct deploy_version *grown;
		unsigned ver;

		if (!parse_version(de->d_name, &ver) || n >= VERSIONS_MAX)
			continue;
		grown = reallocarray(v, n + 1, sizeof(*v));
		if (!grown) {
			closedir(d);
			deploy_versions_free(v, n);
			return -ENOMEM;
		}
		v = grown;
		v[n].meta = read_meta_at(versionsfd, de->d_name);
		v[n].s = (struct sr_version_state){
		    .version = ver,
		    .status = meta_status(v[n].meta),
		    .busy = version_busy(versionsfd, de->d_name),
		};
		n++;
	}
	closedir(d);
	if (n > 1)
		qsort(v, n, sizeof(*v), cmp_version);
	*ret = v;
	*ret_n = n;
	return 0;
}

int deploy_open_versions(const struct deploy_held *h, struct sr_error *err)
{
	int fd;

	if (mkdirat(h->dirfd, "versions", 0700) < 0 && errno != EEXIST)
		return sr_error_errno(err, sr_negerrno(), "create %s/versions", h->dir);
	fd = openat(h->dirfd, "versions", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return sr_error_errno(err, sr_negerrno(), "%s/versions", h->dir);
	return fd;
}

void sr_deploy_prune_pick(const struct sr_version_state *v, size_t n, unsigned current,
			  uint64_t keep, bool *remove)
{
	for (size_t i = 0; i < n; i++) {
		uint64_t newer = 0;

		remove[i] = false;
		if (v[i].version == current || v[i].busy)
			continue;
		if (v[i].status == SR_VERSION_INCOMPLETE) {
			remove[i] = true;
			continue;
		}
		if (keep == 0)
			continue;
		/* Kept: among the keep newest of its status. */
		for (size_t j = 0; j < n; j++)
			newer += v[j].status == v[i].status && v[j].version > v[i].version;
		remove[i] = newer >= keep;
	}
}

int deploy_prune_locked(int dirfd, int versionsfd, uint64_t keep, bool only_incomplete,
			unsigned *ret_removed)
{
	struct deploy_version *v = NULL;
	_cleanup_free_ bool *remove = NULL;
	_cleanup_free_ struct sr_version_state *states = NULL;
	unsigned current = deploy_read_current(dirfd), removed = 0;
	size_t n = 0;
	int r;

	/* Versions a prune or a removal killed midway had renamed away: no one else prunes now. */
	deploy_sweep(versionsfd, (const char *const[]){GONE_PREFIX, NULL});
	r = deploy_list_versions(versionsfd, &v, &n);
	if (r < 0)
		return r;
	remove = calloc(n ? n : 1, sizeof(*remove));
	states = calloc(n ? n : 1, sizeof(*states));
	if (!remove || !states) {
		deploy_versions_free(v, n);
		return -ENOMEM;
	}
	for (size_t i = 0; i < n; i++)
		states[i] = v[i].s;
	sr_deploy_prune_pick(states, n, current, only_incomplete ? 0 : keep, remove);
	for (size_t i = 0; i < n; i++) {
		char vname[16], lp[32];
		_cleanup_close_ int lock = -1;

		if (!remove[i])
			continue;
		snprintf(vname, sizeof(vname), "%u", v[i].s.version);
		snprintf(lp, sizeof(lp), "%u/lock", v[i].s.version);
		/* Taken and held while it goes: one that became busy since is kept. */
		lock = openat(versionsfd, lp, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
		if (lock >= 0 && flock(lock, LOCK_EX | LOCK_NB) < 0)
			continue;
		if (remove_hidden(versionsfd, vname) == 0)
			removed++;
	}
	deploy_versions_free(v, n);
	if (ret_removed)
		*ret_removed = removed;
	return 0;
}

/* Deployment NAME held under its lock, and its versions/: what prune and rollback change under. */
static int open_locked(const char *name, struct deploy_held *h, int *versionsfd,
		       struct sr_error *err)
{
	int r = deploy_hold(name, false, LOCK_EX, NULL, h, err);

	if (r < 0)
		return r;
	*versionsfd = deploy_open_versions(h, err);
	if (*versionsfd < 0) {
		deploy_release(h);
		return *versionsfd;
	}
	return 0;
}

int sr_deploy_prune(const char *name, uint64_t keep, unsigned *ret_removed, struct sr_error *err)
{
	struct deploy_held h;
	_cleanup_close_ int versionsfd = -1;
	int r = open_locked(name, &h, &versionsfd, err);

	if (r < 0)
		return r;
	r = deploy_prune_locked(h.dirfd, versionsfd, keep, false, ret_removed);
	deploy_release(&h);
	if (r < 0)
		return sr_error_errno(err, r, "deployment '%s': prune", name);
	return 0;
}

/* The version rollback makes current (0: none); under the deployment's lock. */
static int pick_rollback(const char *name, int versionsfd, unsigned current, unsigned to,
			 unsigned *ret, struct sr_error *err)
{
	struct deploy_version *v = NULL;
	unsigned pick = 0;
	size_t n = 0;
	int r = deploy_list_versions(versionsfd, &v, &n);

	if (r < 0)
		return sr_error_errno(err, r, "deployment '%s': versions", name);
	for (size_t i = 0; i < n; i++) {
		if (v[i].s.status != SR_VERSION_READY)
			continue;
		if (to ? v[i].s.version == to : v[i].s.version < current)
			pick = v[i].s.version;
	}
	deploy_versions_free(v, n);
	if (!pick && to)
		return sr_error_msg(err, -ENOENT,
				    "deployment '%s' has no ready version %u (sandbox-run "
				    "deployments lists them)",
				    name, to);
	if (!pick && !current)
		return sr_error_msg(
		    err, -ENOENT,
		    "deployment '%s' has no current version to roll back from (no "
		    "deploy of it has finished; sandbox-run deployments lists them)",
		    name);
	if (!pick)
		return sr_error_msg(err, -ENOENT,
				    "deployment '%s' has no ready version older than %u to roll "
				    "back to",
				    name, current);
	*ret = pick;
	return 0;
}

int sr_deploy_rollback(const char *name, unsigned to, unsigned *ret_version, struct sr_error *err)
{
	struct deploy_held h;
	_cleanup_close_ int versionsfd = -1;
	unsigned pick = 0;
	int r = open_locked(name, &h, &versionsfd, err);

	if (r < 0)
		return r;
	r = pick_rollback(name, versionsfd, deploy_read_current(h.dirfd), to, &pick, err);
	if (r == 0)
		r = deploy_set_current(h.dirfd, pick, err);
	deploy_release(&h);
	if (r < 0)
		return r;
	*ret_version = pick;
	return 0;
}

/*
 * deployments/NAME renamed away and removed (remove_hidden), then what
 * removals killed midway left there (deployments/.gone-*). Each removal
 * holds deployments/ shared (flock) while it removes its own; the sweep
 * takes it exclusively, never waiting: a removal under way is not swept
 * from under its remover (both would fail on what the other removed).
 */
static int remove_deployment(int topfd, const char *name)
{
	int r;

	if (SR_RETRY(flock(topfd, LOCK_SH)) < 0)
		return sr_negerrno();
	r = remove_hidden(topfd, name);
	(void)flock(topfd, LOCK_UN);
	if (flock(topfd, LOCK_EX | LOCK_NB) == 0) {
		deploy_sweep(topfd, (const char *const[]){GONE_PREFIX, NULL});
		(void)flock(topfd, LOCK_UN);
	}
	return r;
}

int sr_deploy_remove(const char *name, struct sr_error *err)
{
	_cleanup_free_ char *top = NULL;
	_cleanup_close_ int versionsfd = -1, topfd = -1;
	struct deploy_version *v = NULL;
	size_t n = 0, busy = 0;
	struct deploy_held h;
	int r = sr_data_dir("deployments", &top, err);

	if (r < 0)
		return r;
	topfd = open(top, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (topfd < 0)
		return sr_error_errno(err, sr_negerrno(), "%s", top);
	r = open_locked(name, &h, &versionsfd, err);
	if (r < 0)
		return r;
	r = deploy_list_versions(versionsfd, &v, &n);
	if (r < 0) {
		deploy_release(&h);
		return sr_error_errno(err, r, "deployment '%s': versions", name);
	}
	for (size_t i = 0; i < n; i++)
		busy += v[i].s.busy;
	deploy_versions_free(v, n);
	if (busy) {
		deploy_release(&h);
		return sr_error_msg(
		    err, -EBUSY,
		    "deployment '%s' is in use (%zu version%s held by an invocation "
		    "or a deploy): try again once they end",
		    name, busy, busy == 1 ? "" : "s");
	}
	/*
	 * The secrets first, under the lock a deploy checks them under: once
	 * the directory is gone, a deploy of the name may make it again, and
	 * secrets set for that one are not these.
	 */
	r = sr_secret_remove_all(name, err);
	if (r == 0 && (r = remove_deployment(topfd, name)) < 0)
		r = sr_error_errno(err, r, "remove deployment '%s'", name);
	deploy_release(&h);
	return r;
}

unsigned sr_deploy_current(const char *name)
{
	_cleanup_free_ char *dir = NULL;
	_cleanup_close_ int dirfd = -1;
	struct sr_error err = {0};

	if (name_dir(name, false, &dir, &err) < 0)
		return 0;
	dirfd = open(dir, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	return dirfd < 0 ? 0 : deploy_read_current(dirfd);
}

static const char *status_word(const struct deploy_version *e, unsigned current)
{
	if (e->s.version == current && e->s.status == SR_VERSION_READY)
		return "active";
	switch (e->s.status) {
	case SR_VERSION_READY:
		return "ready";
	case SR_VERSION_FAILED:
		return "failed";
	default:
		return e->s.busy ? "installing" : "incomplete";
	}
}

static int list_one(const char *top, const char *name, json_t *all)
{
	_cleanup_free_ char *dir = NULL;
	_cleanup_close_ int dirfd = -1, versionsfd = -1;
	struct deploy_version *v = NULL;
	unsigned current;
	size_t n = 0;
	int r;

	if (asprintf(&dir, "%s/%s", top, name) < 0)
		return -ENOMEM;
	dirfd = open(dir, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (dirfd < 0)
		return 0;
	versionsfd = openat(dirfd, "versions", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (versionsfd < 0)
		return 0;
	current = deploy_read_current(dirfd);
	r = deploy_list_versions(versionsfd, &v, &n);
	if (r < 0)
		return r;
	for (size_t i = 0; i < n; i++) {
		json_t *m = v[i].meta ? steal_pointer(&v[i].meta) : json_object();
		_cleanup_free_ char *log = NULL;

		if (!m || asprintf(&log, "%s/versions/%u/install.log", dir, v[i].s.version) < 0) {
			if (m)
				json_decref(m);
			deploy_versions_free(v, n);
			return -ENOMEM;
		}
		json_object_set_new(m, "name", sr_json_string(name));
		json_object_set_new(m, "version", json_integer(v[i].s.version));
		json_object_set_new(m, "status", json_string(status_word(&v[i], current)));
		json_object_set_new(m, "log", sr_json_string(log));
		json_array_append_new(all, m);
	}
	deploy_versions_free(v, n);
	return 0;
}

static int cmp_name(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

int sr_deploy_list(json_t **ret, struct sr_error *err)
{
	_cleanup_free_ char *top = NULL;
	struct sr_strv names = {0};
	json_t *all;
	struct dirent *de;
	DIR *d;
	int r = sr_data_dir("deployments", &top, err);

	if (r < 0)
		return r;
	d = opendir(top);
	if (!d)
		return sr_error_errno(err, sr_negerrno(), "%s", top);
	while ((de = readdir(d)))
		if (sr_deploy_valid_name(de->d_name) && sr_strv_push(&names, de->d_name) < 0)
			r = -ENOMEM;
	closedir(d);
	if (names.n > 1)
		qsort(names.items, names.n, sizeof(*names.items), cmp_name);
	all = json_array();
	for (size_t i = 0; r == 0 && all && i < names.n; i++)
		r = list_one(top, names.items[i], all);
	sr_strv_free(&names);
	if (!all || r < 0) {
		if (all)
			json_decref(all);
		return sr_error_errno(err, r < 0 ? r : -ENOMEM, "deployments");
	}
	*ret = all;
	return 0;
}

/* The held deployment's current version, opened and held (shared) for an invocation. */
static int open_current(const char *name, const struct deploy_held *h, struct sr_deployment **ret,
			struct sr_error *err)
{
	_cleanup_close_ int vdirfd = -1;
	struct sr_deployment *d;
	char vname[32];
	struct stat st;
	unsigned current = deploy_read_current(h->dirfd);
	int r;

	if (!current)
		return sr_error_msg(err, -ENOENT,
				    "deployment '%s' has no version ready (sandbox-run deploy "
				    "--name %s AGENT)",
				    name, name);
	snprintf(vname, sizeof(vname), "versions/%u", current);
	vdirfd = openat(h->dirfd, vname, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (vdirfd < 0 || fstatat(vdirfd, "app", &st, AT_SYMLINK_NOFOLLOW) < 0 ||
	    !S_ISDIR(st.st_mode))
		return sr_error_errno(err, sr_negerrno(), "deployment '%s': version %u", name,
				      current);
	d = calloc(1, sizeof(*d));
	if (!d)
		return sr_error_errno(err, -ENOMEM, "deployment");
	d->version = current;
	d->lock = deploy_take_lock(vdirfd, "lock", LOCK_SH);
	d->name = strdup(name);
	if (d->lock < 0 || !d->name ||
	    asprintf(&d->profile, "%s/versions/%u/config.ini", h->dir, current) < 0 ||
	    asprintf(&d->app, "%s/versions/%u/app", h->dir, current) < 0) {
		r = d->lock < 0 ? d->lock : -ENOMEM;
		sr_deployment_close(d);
		return sr_error_errno(err, r, "deployment '%s': version %u", name, current);
	}
	d->argv[0] = d->app;
	*ret = d;
	return 0;
}

int sr_deploy_open(const char *name, struct sr_deployment **ret, struct sr_error *err)
{
	struct deploy_held h;
	/* Shared: the current version cannot change, nor be pruned, until ours is locked too. */
	int r = deploy_hold(name, false, LOCK_SH, NULL, &h, err);

	if (r < 0)
		return r;
	r = open_current(name, &h, ret, err);
	deploy_release(&h);
	return r;
}

const char *sr_deployment_name(const struct sr_deployment *d)
{
	return d->name;
}

unsigned sr_deployment_version(const struct sr_deployment *d)
{
	return d->version;
}

const char *sr_deployment_profile(const struct sr_deployment *d)
{
	return d->profile;
}

const char *sr_deployment_app(const struct sr_deployment *d)
{
	return d->app;
}

int sr_deploy_apply(const struct sr_deployment *d, struct sr_config *c, struct sr_error *err)
{
	int r;

	c->argv = (char **)d->argv;
	c->argc = 1;
	c->command_mode = false;
	r = sr_secret_load(d->name, &c->secrets, err);
	return r < 0 ? sr_error_prefix(err, "deployment '%s'", d->name) : 0;
}

int sr_deploy_config(const struct sr_deployment *d, struct sr_config *c, struct sr_error *err)
{
	int r = sr_profile_load(c, d->profile, err);

	if (r < 0 || (r = sr_deploy_apply(d, c, err)) < 0)
		return r;
	return sr_config_validate(c, err);
}

void sr_deployment_close(struct sr_deployment *d)
{
	if (!d)
		return;
	sr_closep(&d->lock);
	free(d->name);
	free(d->profile);
	free(d->app);
	free(d);
}

int sr_deploy_tail(const char *path, size_t n, char **ret, struct sr_error *err)
{
	_cleanup_close_ int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	_cleanup_free_ char *buf = NULL;
	const size_t window = 64 * 1024;
	struct stat st;
	off_t from;
	ssize_t got;
	size_t len, lines = 0;
	char *start;

	if (fd < 0 || fstat(fd, &st) < 0)
		return sr_error_errno(err, sr_negerrno(), "%s", path);
	from = st.st_size > (off_t)window ? st.st_size - (off_t)window : 0;
	buf = malloc(window + 1);
	if (!buf)
		return sr_error_errno(err, -ENOMEM, "%s", path);
	got = SR_RETRY(pread(fd, buf, window, from));
	if (got < 0)
		return sr_error_errno(err, sr_negerrno(), "%s", path);
	len = (size_t)got;
	while (len > 0 && buf[len - 1] == '\n')
		len--;
	buf[len] = '\0';
	start = buf + len;
	while (start > buf) {
		if (start[-1] == '\n' && ++lines == n)
			break;
		start--;
	}
	*ret = strdup(start);
	if (!*ret)
		return sr_error_errno(err, -ENOMEM, "%s", path);
	return 0;
}
