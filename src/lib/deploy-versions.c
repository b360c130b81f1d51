/* SPDX-License-Identifier: MIT */
/*
 * A deployment's versions (deploy.h): which one is current (the link,
 * read and replaced), each read with its meta.json's status and whether
 * it is busy, and which of them a prune removes.
 */
#include "deploy-internal.h"
#include "util.h"

#include <dirent.h>
#include <sys/file.h>
#include <sys/random.h>
#include <sys/stat.h>

#define META_MAX     (64 * 1024)
#define VERSIONS_MAX 100000

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
		if (deploy_remove_hidden(versionsfd, vname) == 0)
			removed++;
	}
	deploy_versions_free(v, n);
	if (ret_removed)
		*ret_removed = removed;
	return 0;
}
