/* SPDX-License-Identifier: MIT */
/*
 * Deployments (deploy.h): a deployment's directory held under its locks,
 * and what is done with a deployment once made: prune, rollback, removal,
 * its current version, the list of every version, an install log's tail.
 * A deploy's new version is deploy-new.c's, the versions themselves
 * deploy-versions.c's, the removal of trees deploy-tree.c's, an
 * invocation's hold deploy-invoke.c's.
 */
#include "deploy.h"
#include "deploy-internal.h"
#include "secrets.h"
#include "state.h"
#include "util.h"

#include <dirent.h>
#include <poll.h>
#include <sys/file.h>
#include <sys/stat.h>

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
 * deployments/NAME renamed away and removed (deploy_remove_hidden), then what
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
	r = deploy_remove_hidden(topfd, name);
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
