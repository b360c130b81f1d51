/* SPDX-License-Identifier: MIT */
#include "deploy.h"
#include "profile.h"
#include "secrets.h"
#include "state.h"
#include "util.h"

#include <dirent.h>
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

/* dirfd's "lock" file, flock()ed with op; the fd, or -errno. */
static int take_lock(int dirfd, int op)
{
	int fd = openat(dirfd, "lock", O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);

	if (fd < 0)
		return sr_negerrno();
	if (SR_RETRY(flock(fd, op)) < 0) {
		int r = sr_negerrno();

		close(fd);
		return r;
	}
	return fd;
}

static int lock_dir(const char *dir, int op, struct sr_error *err)
{
	_cleanup_close_ int fd = open(dir, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	int lock;

	if (fd < 0)
		return sr_error_errno(err, sr_negerrno(), "%s", dir);
	lock = take_lock(fd, op);
	if (lock < 0)
		return sr_error_errno(err, lock, "lock %s", dir);
	return lock;
}

/*
 * Removes (dirfd, name) and everything beneath it, following no link.
 * Directories are opened to the owner first: a package may ship a 0555
 * one, whose entries could not be unlinked otherwise.
 */
int sr_deploy_remove_tree(int dir, const char *name)
{
	struct stat st;
	struct dirent *de;
	DIR *d;
	int fd, r = 0;

	if (fstatat(dir, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return errno == ENOENT ? 0 : sr_negerrno();
	if (!S_ISDIR(st.st_mode))
		return unlinkat(dir, name, 0) < 0 ? sr_negerrno() : 0;
	if ((st.st_mode & 0700) != 0700)
		(void)!fchmodat(dir, name, (st.st_mode & 07777) | 0700, 0);
	fd = openat(dir, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return sr_negerrno();
	d = fdopendir(fd);
	if (!d) {
		close(fd);
		return sr_negerrno();
	}
	while ((de = readdir(d))) {
		int e;

		if (sr_streq(de->d_name, ".") || sr_streq(de->d_name, ".."))
			continue;
		e = sr_deploy_remove_tree(dirfd(d), de->d_name);
		if (e < 0 && r == 0)
			r = e;
	}
	closedir(d);
	if (unlinkat(dir, name, AT_REMOVEDIR) < 0 && r == 0)
		r = sr_negerrno();
	return r;
}

/* Renames (dirfd, name) out of sight, then removes it: nobody sees it half gone. */
static int remove_hidden(int dirfd, const char *name)
{
	char gone[96];
	uint32_t rnd = 0;

	(void)!getrandom(&rnd, sizeof(rnd), 0);
	snprintf(gone, sizeof(gone), ".gone-%.64s-%08x", name, rnd);
	if (renameat(dirfd, name, dirfd, gone) < 0)
		return sr_negerrno();
	return sr_deploy_remove_tree(dirfd, gone);
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

/* The current version (readlink of current: "versions/N"); 0 when none. */
static unsigned read_current(int dirfd)
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

/* current -> versions/N, atomically: a new link renamed over the old one. */
static int set_current(int dirfd, unsigned version, struct sr_error *err)
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

struct version_entry {
	struct sr_version_state s;
	json_t *meta;
};

static int cmp_version(const void *a, const void *b)
{
	const struct version_entry *x = a, *y = b;

	return x->s.version < y->s.version ? -1 : x->s.version > y->s.version;
}

static void versions_free(struct version_entry *v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (v[i].meta)
			json_decref(v[i].meta);
	free(v);
}

/* Every version under versionsfd, oldest first, with its meta and whether it is busy. */
static int list_versions(int versionsfd, struct version_entry **ret, size_t *ret_n)
{
	struct version_entry *v = NULL;
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
		struct version_entry *grown;
		unsigned ver;

		if (!parse_version(de->d_name, &ver) || n >= VERSIONS_MAX)
			continue;
		grown = reallocarray(v, n + 1, sizeof(*v));
		if (!grown) {
			closedir(d);
			versions_free(v, n);
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

static int open_versions(const char *dir, struct sr_error *err)
{
	_cleanup_free_ char *p = NULL;
	int fd;

	if (asprintf(&p, "%s/versions", dir) < 0)
		return sr_error_errno(err, -ENOMEM, "deployment");
	if (mkdir(p, 0700) < 0 && errno != EEXIST)
		return sr_error_errno(err, sr_negerrno(), "create %s", p);
	fd = open(p, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return sr_error_errno(err, sr_negerrno(), "%s", p);
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

/* Prunes under the deployment's lock (held by the caller). */
static int prune_locked(int dirfd, int versionsfd, uint64_t keep, bool only_incomplete,
			unsigned *ret_removed)
{
	struct version_entry *v = NULL;
	_cleanup_free_ bool *remove = NULL;
	_cleanup_free_ struct sr_version_state *states = NULL;
	unsigned current = read_current(dirfd), removed = 0;
	size_t n = 0;
	int r = list_versions(versionsfd, &v, &n);

	if (r < 0)
		return r;
	remove = calloc(n ? n : 1, sizeof(*remove));
	states = calloc(n ? n : 1, sizeof(*states));
	if (!remove || !states) {
		versions_free(v, n);
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
	versions_free(v, n);
	if (ret_removed)
		*ret_removed = removed;
	return 0;
}

int sr_deploy_begin(const char *name, struct sr_deploy_new *ret, struct sr_error *err)
{
	struct sr_deploy_new v = {.vdirfd = -1, .lock = -1};
	_cleanup_close_ int dirfd = -1, versionsfd = -1, namelock = -1;
	struct version_entry *list = NULL;
	size_t n = 0;
	unsigned next;
	int r;

	r = name_dir(name, true, &v.dir, err);
	if (r < 0)
		return r;
	v.name = strdup(name);
	dirfd = open(v.dir, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (!v.name || dirfd < 0) {
		r = sr_error_errno(err, v.name ? sr_negerrno() : -ENOMEM, "%s", v.dir);
		goto fail;
	}
	versionsfd = open_versions(v.dir, err);
	if (versionsfd < 0) {
		r = versionsfd;
		goto fail;
	}
	namelock = lock_dir(v.dir, LOCK_EX, err);
	if (namelock < 0) {
		r = namelock;
		goto fail;
	}
	/* What a killed deploy left: nobody holds its lock. */
	(void)prune_locked(dirfd, versionsfd, 0, true, NULL);
	r = list_versions(versionsfd, &list, &n);
	if (r < 0) {
		r = sr_error_errno(err, r, "deployment '%s': versions", name);
		goto fail;
	}
	next = n ? list[n - 1].s.version + 1 : 1;
	versions_free(list, n);
	for (;; next++) {
		char vname[16];

		snprintf(vname, sizeof(vname), "%u", next);
		if (mkdirat(versionsfd, vname, 0700) == 0)
			break;
		if (errno != EEXIST) {
			r = sr_error_errno(err, sr_negerrno(), "deployment '%s': version %u", name,
					   next);
			goto fail;
		}
	}
	v.version = next;
	if (asprintf(&v.vdir, "%s/versions/%u", v.dir, next) < 0) {
		v.vdir = NULL;
		r = sr_error_errno(err, -ENOMEM, "deployment");
		goto fail;
	}
	v.vdirfd = open(v.vdir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	v.lock = v.vdirfd >= 0 ? take_lock(v.vdirfd, LOCK_EX) : -1;
	if (v.lock < 0) {
		r = sr_error_errno(err, v.vdirfd < 0 ? sr_negerrno() : v.lock, "%s", v.vdir);
		goto fail;
	}
	*ret = v;
	return 0;
fail:
	sr_deploy_new_free(&v);
	return r;
}

/* Writes text as (dirfd, name), whole or not at all. */
static int write_at(int dirfd, const char *name, const char *text, struct sr_error *err)
{
	char tmp[96];
	_cleanup_close_ int fd = -1;
	int r;

	snprintf(tmp, sizeof(tmp), ".%s.new", name);
	(void)unlinkat(dirfd, tmp, 0);
	fd = openat(dirfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0)
		return sr_error_errno(err, sr_negerrno(), "write %s", name);
	r = sr_write_all(fd, text, strlen(text));
	if (r == 0 && fsync(fd) < 0)
		r = sr_negerrno();
	if (r == 0 && renameat(dirfd, tmp, dirfd, name) < 0)
		r = sr_negerrno();
	if (r < 0) {
		(void)unlinkat(dirfd, tmp, 0);
		return sr_error_errno(err, r, "write %s", name);
	}
	return 0;
}

static int write_meta(struct sr_deploy_new *v, json_t *meta, const char *status,
		      struct sr_error *err)
{
	_cleanup_free_ char *text = NULL;
	json_t *m = json_deep_copy(meta);
	int r;

	if (!m || json_object_set_new(m, "status", json_string(status)) < 0 ||
	    json_object_set_new(m, "name", sr_json_string(v->name)) < 0 ||
	    json_object_set_new(m, "version", json_integer(v->version)) < 0 ||
	    sr_json_dump_line(m, &text) < 0) {
		if (m)
			json_decref(m);
		return sr_error_errno(err, -ENOMEM, "meta.json");
	}
	json_decref(m);
	r = write_at(v->vdirfd, "meta.json", text, err);
	return r < 0 ? sr_error_prefix(err, "deployment '%s' version %u", v->name, v->version) : 0;
}

int sr_deploy_publish(struct sr_deploy_new *v, const struct sr_config *c, json_t *meta,
		      struct sr_error *err)
{
	_cleanup_free_ char *text = NULL;
	_cleanup_close_ int dirfd = -1, namelock = -1;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	int r;

	if (!f)
		return sr_error_errno(err, -ENOMEM, "config.ini");
	r = sr_config_print(c, f);
	if (fclose(f) != 0 && r == 0)
		r = -ENOMEM;
	if (r < 0)
		return sr_error_errno(err, r, "config.ini");
	r = write_at(v->vdirfd, "config.ini", text, err);
	if (r < 0 || (r = write_meta(v, meta, "ready", err)) < 0)
		return r;
	/*
	 * Ready, so no longer ours alone: released before it becomes current,
	 * or an invocation that opens it would wait for us while holding the
	 * deployment's lock a prune of ours waits for.
	 */
	if (v->lock >= 0)
		close(steal_fd(&v->lock));
	dirfd = open(v->dir, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (dirfd < 0)
		return sr_error_errno(err, sr_negerrno(), "%s", v->dir);
	namelock = lock_dir(v->dir, LOCK_EX, err);
	if (namelock < 0)
		return namelock;
	return set_current(dirfd, v->version, err);
}

int sr_deploy_fail(struct sr_deploy_new *v, json_t *meta, struct sr_error *err)
{
	(void)sr_deploy_remove_tree(v->vdirfd, "app");
	(void)sr_deploy_remove_tree(v->vdirfd, "src");
	return write_meta(v, meta, "failed", err);
}

void sr_deploy_new_free(struct sr_deploy_new *v)
{
	sr_closep(&v->lock);
	sr_closep(&v->vdirfd);
	free(v->name);
	free(v->dir);
	free(v->vdir);
	*v = (struct sr_deploy_new){.vdirfd = -1, .lock = -1};
}

/*
 * Deployment NAME's directory and its versions' (O_PATH / read fds), with
 * its name lock held (*namelock): what prune and rollback change under.
 */
static int open_locked(const char *name, int *dirfd, int *versionsfd, int *namelock,
		       struct sr_error *err)
{
	_cleanup_free_ char *dir = NULL;
	int r = name_dir(name, false, &dir, err);

	if (r < 0)
		return r;
	*dirfd = open(dir, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (*dirfd < 0)
		return sr_error_errno(err, sr_negerrno(), "%s", dir);
	*versionsfd = open_versions(dir, err);
	if (*versionsfd < 0)
		return *versionsfd;
	*namelock = lock_dir(dir, LOCK_EX, err);
	return *namelock < 0 ? *namelock : 0;
}

int sr_deploy_prune(const char *name, uint64_t keep, unsigned *ret_removed, struct sr_error *err)
{
	_cleanup_close_ int dirfd = -1, versionsfd = -1, namelock = -1;
	int r = open_locked(name, &dirfd, &versionsfd, &namelock, err);

	if (r < 0)
		return r;
	r = prune_locked(dirfd, versionsfd, keep, false, ret_removed);
	if (r < 0)
		return sr_error_errno(err, r, "deployment '%s': prune", name);
	return 0;
}

int sr_deploy_rollback(const char *name, unsigned to, unsigned *ret_version, struct sr_error *err)
{
	_cleanup_close_ int dirfd = -1, versionsfd = -1, namelock = -1;
	struct version_entry *v = NULL;
	unsigned current, pick = 0;
	size_t n = 0;
	int r = open_locked(name, &dirfd, &versionsfd, &namelock, err);

	if (r < 0)
		return r;
	current = read_current(dirfd);
	r = list_versions(versionsfd, &v, &n);
	if (r < 0)
		return sr_error_errno(err, r, "deployment '%s': versions", name);
	for (size_t i = 0; i < n; i++) {
		if (v[i].s.status != SR_VERSION_READY)
			continue;
		if (to ? v[i].s.version == to : v[i].s.version < current)
			pick = v[i].s.version;
	}
	versions_free(v, n);
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
	r = set_current(dirfd, pick, err);
	if (r < 0)
		return r;
	*ret_version = pick;
	return 0;
}

int sr_deploy_remove(const char *name, struct sr_error *err)
{
	_cleanup_free_ char *dir = NULL, *top = NULL;
	_cleanup_close_ int versionsfd = -1, namelock = -1, topfd = -1;
	struct version_entry *v = NULL;
	size_t n = 0, busy = 0;
	int r = name_dir(name, false, &dir, err);

	if (r < 0)
		return r;
	r = sr_data_dir("deployments", &top, err);
	if (r < 0)
		return r;
	topfd = open(top, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	versionsfd = open_versions(dir, err);
	if (topfd < 0 || versionsfd < 0)
		return topfd < 0 ? sr_error_errno(err, sr_negerrno(), "%s", top) : versionsfd;
	namelock = lock_dir(dir, LOCK_EX, err);
	if (namelock < 0)
		return namelock;
	r = list_versions(versionsfd, &v, &n);
	if (r < 0)
		return sr_error_errno(err, r, "deployment '%s': versions", name);
	for (size_t i = 0; i < n; i++)
		busy += v[i].s.busy;
	versions_free(v, n);
	if (busy)
		return sr_error_msg(
		    err, -EBUSY,
		    "deployment '%s' is in use (%zu version%s held by an invocation "
		    "or a deploy): try again once they end",
		    name, busy, busy == 1 ? "" : "s");
	r = remove_hidden(topfd, name);
	if (r < 0)
		return sr_error_errno(err, r, "remove deployment '%s'", name);
	return sr_secret_remove_all(name, err);
}

unsigned sr_deploy_current(const char *name)
{
	_cleanup_free_ char *dir = NULL;
	_cleanup_close_ int dirfd = -1;
	struct sr_error err = {0};

	if (name_dir(name, false, &dir, &err) < 0)
		return 0;
	dirfd = open(dir, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	return dirfd < 0 ? 0 : read_current(dirfd);
}

static const char *status_word(const struct version_entry *e, unsigned current)
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
	struct version_entry *v = NULL;
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
	current = read_current(dirfd);
	r = list_versions(versionsfd, &v, &n);
	if (r < 0)
		return r;
	for (size_t i = 0; i < n; i++) {
		json_t *m = v[i].meta ? steal_pointer(&v[i].meta) : json_object();
		_cleanup_free_ char *log = NULL;

		if (!m || asprintf(&log, "%s/versions/%u/install.log", dir, v[i].s.version) < 0) {
			if (m)
				json_decref(m);
			versions_free(v, n);
			return -ENOMEM;
		}
		json_object_set_new(m, "name", sr_json_string(name));
		json_object_set_new(m, "version", json_integer(v[i].s.version));
		json_object_set_new(m, "status", json_string(status_word(&v[i], current)));
		json_object_set_new(m, "log", sr_json_string(log));
		json_array_append_new(all, m);
	}
	versions_free(v, n);
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

int sr_deploy_open(const char *name, struct sr_deployment **ret, struct sr_error *err)
{
	_cleanup_free_ char *dir = NULL;
	_cleanup_close_ int dirfd = -1, namelock = -1, vdirfd = -1;
	struct sr_deployment *d;
	char vname[32];
	struct stat st;
	unsigned current;
	int r = name_dir(name, false, &dir, err);

	if (r < 0)
		return r;
	dirfd = open(dir, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (dirfd < 0)
		return sr_error_errno(err, sr_negerrno(), "%s", dir);
	/* Shared: the current version cannot change, nor be pruned, until ours is locked too. */
	namelock = lock_dir(dir, LOCK_SH, err);
	if (namelock < 0)
		return namelock;
	current = read_current(dirfd);
	if (!current)
		return sr_error_msg(err, -ENOENT,
				    "deployment '%s' has no version ready (sandbox-run deploy "
				    "--name %s AGENT)",
				    name, name);
	snprintf(vname, sizeof(vname), "versions/%u", current);
	vdirfd = openat(dirfd, vname, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (vdirfd < 0 || fstatat(vdirfd, "app", &st, AT_SYMLINK_NOFOLLOW) < 0 ||
	    !S_ISDIR(st.st_mode))
		return sr_error_errno(err, sr_negerrno(), "deployment '%s': version %u", name,
				      current);
	d = calloc(1, sizeof(*d));
	if (!d)
		return sr_error_errno(err, -ENOMEM, "deployment");
	d->version = current;
	d->lock = take_lock(vdirfd, LOCK_SH);
	d->name = strdup(name);
	if (d->lock < 0 || !d->name ||
	    asprintf(&d->profile, "%s/versions/%u/config.ini", dir, current) < 0 ||
	    asprintf(&d->app, "%s/versions/%u/app", dir, current) < 0) {
		r = d->lock < 0 ? d->lock : -ENOMEM;
		sr_deployment_close(d);
		return sr_error_errno(err, r, "deployment '%s': version %u", name, current);
	}
	d->argv[0] = d->app;
	*ret = d;
	return 0;
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
