/* SPDX-License-Identifier: MIT */
#include "cgroup-internal.h"
#include "util.h"

#include <dirent.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>

/* Pure parsers. */

int cg_parse_self(const char *text, const char *controller, char **ret_path)
{
	for (const char *line = text; line && *line;) {
		const char *end = strchrnul(line, '\n');
		const char *c1 = memchr(line, ':', (size_t)(end - line));
		const char *c2 = c1 ? memchr(c1 + 1, ':', (size_t)(end - c1 - 1)) : NULL;
		bool match = false;

		if (c2 && !controller) {
			match = c1 - line == 1 && line[0] == '0' && c2 == c1 + 1;
		} else if (c2) {
			size_t n = strlen(controller);

			/* "2:cpu,cpuacct:/a": one hierarchy may carry several controllers. */
			for (const char *p = c1 + 1; p < c2;) {
				const char *comma = memchr(p, ',', (size_t)(c2 - p));
				const char *tok_end = comma ? comma : c2;

				if ((size_t)(tok_end - p) == n && memcmp(p, controller, n) == 0)
					match = true;
				p = tok_end + 1;
			}
		}
		if (match) {
			char *path = strndup(c2 + 1, (size_t)(end - c2 - 1));

			if (!path)
				return -ENOMEM;
			*ret_path = path;
			return 0;
		}
		line = *end ? end + 1 : end;
	}
	return -ENOENT;
}

/* mountinfo escapes blanks and backslashes in paths as \ooo. */
static void unescape_octal(char *s)
{
	char *w = s;

	for (char *r = s; *r;) {
		if (r[0] == '\\' && r[1] >= '0' && r[1] <= '3' && r[2] >= '0' && r[2] <= '7' &&
		    r[3] >= '0' && r[3] <= '7') {
			*w++ = (char)((r[1] - '0') * 64 + (r[2] - '0') * 8 + (r[3] - '0'));
			r += 4;
		} else {
			*w++ = *r++;
		}
	}
	*w = '\0';
}

static bool list_has(const char *list, char sep, const char *word)
{
	size_t n = strlen(word);

	for (const char *p = list; *p;) {
		const char *e = strchrnul(p, sep);

		if ((size_t)(e - p) == n && memcmp(p, word, n) == 0)
			return true;
		p = *e ? e + 1 : e;
	}
	return false;
}

/* Joins mount point and the part of path below the mount's root, or -ENOENT. */
static int mount_join(const char *root, const char *mnt, const char *path, char **ret)
{
	size_t rl = strcmp(root, "/") == 0 ? 0 : strlen(root);
	const char *rest;

	/*
	 * A mount of a sub-cgroup (containers) shows only what is below its
	 * root; our cgroup must be inside it to be reachable there.
	 */
	if (strncmp(path, root, rl) != 0 || (path[rl] != '/' && path[rl] != '\0'))
		return -ENOENT;
	rest = path + rl;
	if (strcmp(rest, "/") == 0)
		rest = "";
	if (asprintf(ret, "%s%s", mnt, rest) < 0)
		return -ENOMEM;
	return 0;
}

int cg_parse_mountinfo(const char *text, const char *controller, const char *path, char **ret_dir)
{
	_cleanup_free_ char *copy = strdup(text);
	char *save = NULL;

	if (!copy)
		return -ENOMEM;
	for (char *line = strtok_r(copy, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char *f[6], *sep = strstr(line, " - "), *fstype, *superopts, *s2 = NULL;
		size_t nf = 0;
		int r;

		if (!sep)
			continue;
		*sep = '\0';
		for (char *t = strtok_r(line, " ", &s2); t && nf < SR_ARRAY_SIZE(f);
		     t = strtok_r(NULL, " ", &s2))
			f[nf++] = t;
		fstype = strtok_r(sep + 3, " ", &s2);
		if (nf < 5 || !fstype || !strtok_r(NULL, " ", &s2))
			continue;
		superopts = strtok_r(NULL, " ", &s2);
		if (controller ? !(strcmp(fstype, "cgroup") == 0 && superopts &&
				   list_has(superopts, ',', controller))
			       : strcmp(fstype, "cgroup2") != 0)
			continue;
		unescape_octal(f[3]);
		unescape_octal(f[4]);
		r = mount_join(f[3], f[4], path, ret_dir);
		if (r != -ENOENT)
			return r;
	}
	return -ENOENT;
}

int cg_parse_keyed(const char *text, const char *key, uint64_t *ret)
{
	size_t n = strlen(key);

	for (const char *line = text; line && *line;) {
		const char *end = strchrnul(line, '\n');

		if (strncmp(line, key, n) == 0 && line[n] == ' ') {
			char *e;
			unsigned long long v;

			errno = 0;
			v = strtoull(line + n + 1, &e, 10);
			if (errno || e == line + n + 1)
				return -EINVAL;
			*ret = v;
			return 0;
		}
		line = *end ? end + 1 : end;
	}
	return -ENOENT;
}

bool cg_word_in(const char *list, const char *word)
{
	_cleanup_free_ char *copy = strdup(list);
	char *save = NULL;

	if (!copy)
		return false;
	for (char *t = strtok_r(copy, " \t\n", &save); t; t = strtok_r(NULL, " \t\n", &save))
		if (strcmp(t, word) == 0)
			return true;
	return false;
}

uint64_t cg_cpu_quota_us(uint32_t cpus_milli)
{
	uint64_t q = (uint64_t)cpus_milli * CG_CPU_PERIOD_US / 1000;

	if (cpus_milli == 0)
		return 0;
	/* The kernel refuses quotas below 1 ms (cpu.max and cfs_quota_us alike). */
	return q < 1000 ? 1000 : q;
}

/* Files of a cgroup directory. */

ssize_t cg_read(int dfd, const char *name, char *buf, size_t len)
{
	_cleanup_close_ int fd = openat(dfd, name, O_RDONLY | O_CLOEXEC);
	size_t off = 0;

	if (fd < 0)
		return sr_negerrno();
	while (off + 1 < len) {
		ssize_t n = SR_RETRY(read(fd, buf + off, len - 1 - off));

		if (n < 0)
			return sr_negerrno();
		if (n == 0)
			break;
		off += (size_t)n;
	}
	buf[off] = '\0';
	return (ssize_t)off;
}

int cg_read_u64(int dfd, const char *name, uint64_t *ret)
{
	char buf[64], *e;
	unsigned long long v;
	ssize_t n = cg_read(dfd, name, buf, sizeof(buf));

	if (n < 0)
		return (int)n;
	errno = 0;
	v = strtoull(buf, &e, 10);
	if (errno || e == buf)
		return -EINVAL;
	*ret = v;
	return 0;
}

int cg_write(int dfd, const char *name, const char *value)
{
	_cleanup_close_ int fd = openat(dfd, name, O_WRONLY | O_CLOEXEC);
	size_t len = strlen(value);
	ssize_t n;

	if (fd < 0)
		return sr_negerrno();
	/* cgroupfs takes each write(2) as one whole value: never split it. */
	n = SR_RETRY(write(fd, value, len));
	if (n < 0)
		return sr_negerrno();
	return (size_t)n == len ? 0 : -EIO;
}

int cg_write_u64(int dfd, const char *name, uint64_t value)
{
	char buf[32];

	snprintf(buf, sizeof(buf), "%" PRIu64, value);
	return cg_write(dfd, name, buf);
}

/* Creating and removing the sandbox's directory. */

static void sleep_ms(long ms)
{
	struct timespec ts = {.tv_sec = 0, .tv_nsec = ms * 1000000L};

	nanosleep(&ts, NULL);
}

/*
 * Every live run holds an exclusive flock() on its cgroup directory, so a
 * sandbox-run-* directory nobody has locked belongs to a run that was
 * killed. rmdir(2) of a cgroup only succeeds when it has no processes and
 * no children, so it can never take a cgroup that is still in use -- but
 * a new one is empty until its run moves PID 1 in, and the lock is all
 * that keeps it.
 *
 * The lock is on the directory fd opened, the rmdir on its name, and the
 * name can be made again in between: cg_dir_create() makes it anew when a
 * remover took the first one before its run locked it. A second remover
 * that opened the first one, then got its lock once the first remover
 * was done, would remove the new one, locked by its run, by name (the
 * check-load failure "move pid N into the memory cgroup ...: No such file
 * or directory"). So the directory is removed only while the name still
 * names the one whose lock is held: the name cannot change again then,
 * as only a holder of that lock removes it.
 */
int cg_remove_if_stale(int parent_fd, const char *name, int fd, bool wait)
{
	struct stat held, named;

	if (flock(fd, LOCK_EX | LOCK_NB) < 0 || fstat(fd, &held) < 0)
		return sr_negerrno();
	if (fstatat(parent_fd, name, &named, AT_SYMLINK_NOFOLLOW) < 0)
		return sr_negerrno();
	if (held.st_dev != named.st_dev || held.st_ino != named.st_ino)
		return -ESTALE;
	for (int i = 0; i < 200; i++) {
		if (unlinkat(parent_fd, name, AT_REMOVEDIR) == 0)
			return 0;
		if (errno != EBUSY || !wait)
			break;
		sleep_ms(1);
	}
	return sr_negerrno();
}

static void remove_stale(int parent_fd)
{
	_cleanup_close_ int dfd = fcntl(parent_fd, F_DUPFD_CLOEXEC, 3);
	DIR *dir = dfd >= 0 ? fdopendir(dfd) : NULL;
	struct dirent *de;

	if (!dir)
		return;
	dfd = -1;
	while ((de = readdir(dir))) {
		_cleanup_close_ int fd = -1;

		if (de->d_type != DT_DIR ||
		    strncmp(de->d_name, CG_NAME_PREFIX, strlen(CG_NAME_PREFIX)) != 0)
			continue;
		fd = openat(parent_fd, de->d_name, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (fd >= 0)
			(void)cg_remove_if_stale(parent_fd, de->d_name, fd, false);
	}
	closedir(dir);
}

int cg_dir_open_parent(struct cg_dir *d, const char *dir, struct sr_error *err)
{
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

	if (fd < 0)
		return sr_error_errno(err, sr_negerrno(), "open %s", dir);
	d->parent_fd = fd;
	return 0;
}

int cg_dir_create(struct cg_dir *d, const char *dir, const char *name, struct sr_error *err)
{
	remove_stale(d->parent_fd);
	/*
	 * Between our mkdir and our flock another run's remove_stale() may
	 * take the still-unlocked directory: retry until the directory we
	 * hold locked is still linked (its files still resolve).
	 */
	for (int attempt = 0; attempt < 5; attempt++) {
		_cleanup_close_ int fd = -1;

		if (mkdirat(d->parent_fd, name, 0755) < 0 && errno != EEXIST)
			return sr_error_errno(err, sr_negerrno(), "create %s/%s", dir, name);
		fd = openat(d->parent_fd, name, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (fd >= 0 && flock(fd, LOCK_EX | LOCK_NB) == 0 &&
		    faccessat(fd, "cgroup.procs", F_OK, 0) == 0) {
			d->fd = steal_fd(&fd);
			d->created = true;
			return 0;
		}
		sleep_ms(1);
	}
	return sr_error_msg(err, -EBUSY, "create %s/%s: removed repeatedly by concurrent runs", dir,
			    name);
}

void cg_dir_remove(struct cg_dir *d, const char *name, bool wait)
{
	/*
	 * The supervisor removes the cgroup right after reaping PID 1; the
	 * kernel may still be tearing down the other tasks of the PID
	 * namespace, and rmdir fails with EBUSY until they are gone. A
	 * directory still busy after 200 ms is left to the next run.
	 */
	for (int i = 0; d->created && i < 200; i++) {
		if (unlinkat(d->parent_fd, name, AT_REMOVEDIR) == 0 || errno != EBUSY || !wait)
			break;
		sleep_ms(1);
	}
	sr_closep(&d->fd);
	sr_closep(&d->parent_fd);
	d->fd = d->parent_fd = -1;
	d->created = false;
}

/* The module's interface. */

static const struct cg_manager *const managers[] = {
    &cg_manager_v2,
    &cg_manager_systemd,
    &cg_manager_v1,
};

int cg_read_proc(const char *path, char **ret)
{
	_cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC);
	_cleanup_free_ char *buf = NULL;
	size_t len = 0, cap = 0;

	if (fd < 0)
		return sr_negerrno();
	for (;;) {
		ssize_t n;

		if (cap - len < 4096) {
			char *b = realloc(buf, cap + 16384);

			if (!b)
				return -ENOMEM;
			buf = b;
			cap += 16384;
		}
		n = SR_RETRY(read(fd, buf + len, cap - len - 1));
		if (n < 0)
			return sr_negerrno();
		if (n == 0)
			break;
		len += (size_t)n;
	}
	buf[len] = '\0';
	*ret = steal_pointer(&buf);
	return 0;
}

bool cg_parse_swaps(const char *text)
{
	const char *nl = strchr(text, '\n');

	/* "Filename Type Size Used Priority", then one line per area. */
	return nl && nl[1] != '\0' && nl[1] != '\n';
}

void cg_check_swap(struct sr_cgroup *cg, int dfd, const char *name)
{
	_cleanup_free_ char *swaps = NULL;

	if (faccessat(dfd, name, F_OK, 0) == 0 || errno != ENOENT)
		return;
	if (cg_read_proc("/proc/swaps", &swaps) >= 0 && cg_parse_swaps(swaps))
		cg->swap_unbounded = true;
}

bool sr_cgroup_swap_unbounded(const struct sr_cgroup *cg)
{
	return cg->swap_unbounded;
}

void cg_append_reason(struct sr_cgroup *cg, const char *what, const char *why)
{
	size_t n = strlen(cg->reason);

	snprintf(cg->reason + n, sizeof(cg->reason) - n, "%s%s: %s", n ? "; " : "", what, why);
}

static void cgroup_init(struct sr_cgroup *cg, const char *sandbox_id)
{
	snprintf(cg->name, sizeof(cg->name), CG_NAME_PREFIX "%s", sandbox_id);
	cg->v2.fd = cg->v2.parent_fd = -1;
	cg->scope.holder_fd = -1;
	for (size_t i = 0; i < SR_ARRAY_SIZE(cg->v1); i++)
		cg->v1[i].fd = cg->v1[i].parent_fd = -1;
}

int sr_cgroup_prepare(const struct sr_config *c, const char *sandbox_id, struct sr_cgroup **ret,
		      int *ret_clone_fd, enum sr_enforce enforced[], struct sr_error *err)
{
	_cleanup_free_ struct sr_cgroup *cg = calloc(1, sizeof(*cg));
	struct cg_host host = {0};
	int r;

	if (!cg)
		return sr_error_errno(err, -ENOMEM, "cgroup");
	cgroup_init(cg, sandbox_id);
	enforced[SR_LIMIT_MEMORY] = enforced[SR_LIMIT_CPUS] = enforced[SR_LIMIT_PIDS] =
	    SR_ENFORCE_NONE;

	r = cg_read_proc("/proc/self/cgroup", &host.self_cgroup);
	if (r >= 0)
		r = cg_read_proc("/proc/self/mountinfo", &host.mountinfo);
	if (r < 0) {
		cg_append_reason(cg, "cgroups", strerror(-r));
	} else {
		for (size_t i = 0; i < SR_ARRAY_SIZE(managers) && !cg->mgr; i++) {
			struct sr_error e = {0};

			if (managers[i]->create(cg, &host, c, enforced, &e) >= 0)
				cg->mgr = managers[i];
			else
				cg_append_reason(cg, managers[i]->name, e.msg);
		}
	}
	free(host.self_cgroup);
	free(host.mountinfo);
	if (!cg->mgr)
		cg->mgr = &cg_manager_rlimit;
	/* Whatever the cgroup strategy left unenforced, rlimits cover where they can. */
	cg_manager_rlimit.create(cg, NULL, c, enforced, err);

	/* -1 unless a cgroup v2 strategy (direct or systemd) made it. */
	*ret_clone_fd = cg->v2.fd;
	*ret = steal_pointer(&cg);
	return 0;
}

int sr_cgroup_attach(struct sr_cgroup *cg, pid_t pid, struct sr_error *err)
{
	return cg->mgr->attach(cg, pid, err);
}

int sr_cgroup_child(const struct sr_cgroup *cg, struct sr_error *err)
{
	return cg_rlimit_apply(cg, err);
}

int sr_cgroup_kill(struct sr_cgroup *cg)
{
	return cg->mgr->kill(cg);
}

int sr_cgroup_stats(struct sr_cgroup *cg, struct sr_cgroup_stats *ret)
{
	struct sr_cgroup_stats s = {
	    .peak_memory_bytes = -1, .user_ms = -1, .sys_ms = -1, .oom_kills = -1};
	int r = cg->mgr->stats(cg, &s);

	*ret = s;
	return r;
}

int sr_cgroup_memory_files(const struct sr_cgroup *cg, int *ret_usage, int *ret_stat)
{
	bool v2 = cg->v2.fd >= 0;
	int dfd = v2 ? cg->v2.fd : cg->v1[CG_V1_MEMORY].fd;
	_cleanup_close_ int usage = -1, stat = -1;

	/* Files, never the directory: with v2 delegation its files are the caller's to write. */
	if (dfd < 0)
		return -ENOENT;
	usage = openat(dfd, v2 ? "memory.current" : "memory.usage_in_bytes", O_RDONLY | O_CLOEXEC);
	stat = openat(dfd, "memory.stat", O_RDONLY | O_CLOEXEC);
	if (usage < 0 || stat < 0)
		return sr_negerrno();
	*ret_usage = steal_fd(&usage);
	*ret_stat = steal_fd(&stat);
	return 0;
}

void sr_cgroup_free(struct sr_cgroup *cg)
{
	if (!cg)
		return;
	cg->mgr->destroy(cg);
	free(cg);
}

static int push_path(const struct cg_dir *d, struct sr_strv *ret)
{
	char path[PATH_MAX];
	int r;

	if (!d->created || d->fd < 0)
		return 0;
	r = sr_fd_path(d->fd, path, sizeof(path));
	return r < 0 ? r : sr_strv_push(ret, path);
}

int sr_cgroup_paths(const struct sr_cgroup *cg, struct sr_strv *ret)
{
	int r = push_path(&cg->v2, ret);

	for (size_t i = 0; r >= 0 && i < SR_ARRAY_SIZE(cg->v1); i++)
		r = push_path(&cg->v1[i], ret);
	return r;
}

void sr_cgroup_remove_stale(const char *path)
{
	const char *base = strrchr(path, '/');
	_cleanup_free_ char *parent = NULL;
	_cleanup_close_ int parent_fd = -1, fd = -1;

	if (!base || strncmp(base + 1, CG_NAME_PREFIX, strlen(CG_NAME_PREFIX)) != 0 ||
	    !(parent = strndup(path, base > path ? (size_t)(base - path) : 1)))
		return;
	parent_fd = open(parent, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	fd = parent_fd < 0
		 ? -1
		 : openat(parent_fd, base + 1, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
	if (fd >= 0)
		(void)cg_remove_if_stale(parent_fd, base + 1, fd, true);
}

const char *sr_cgroup_strategy(const struct sr_cgroup *cg)
{
	return cg->mgr->name;
}

const char *sr_cgroup_reason(const struct sr_cgroup *cg)
{
	return cg->reason;
}

static bool requested(const struct sr_config *c, enum sr_limit l)
{
	switch (l) {
	case SR_LIMIT_MEMORY:
		return c->memory_bytes > 0;
	case SR_LIMIT_CPUS:
		return c->cpus_milli > 0;
	case SR_LIMIT_PIDS:
		return c->pids > 0;
	default:
		return false;
	}
}

void cg_join_words(const char *const *words, size_t n, char *buf, size_t len)
{
	size_t off = 0;

	buf[0] = '\0';
	for (size_t i = 0; i < n && off < len; i++)
		off += (size_t)snprintf(buf + off, len - off, "%s%s",
					i == 0	     ? ""
					: i + 1 == n ? " and "
						     : ", ",
					words[i]);
}

/* "memory", "memory and pids", "memory, cpus and pids" */
static size_t join_limits(const struct sr_config *c, const enum sr_enforce enforced[],
			  enum sr_enforce how, char *buf, size_t len)
{
	static const enum sr_limit limits[] = {SR_LIMIT_MEMORY, SR_LIMIT_CPUS, SR_LIMIT_PIDS};
	static const char *const limit_names[] = {"memory", "cpus", "pids"};
	const char *names[SR_ARRAY_SIZE(limits)];
	size_t n = 0;

	for (size_t i = 0; i < SR_ARRAY_SIZE(limits); i++)
		if (requested(c, limits[i]) && enforced[limits[i]] == how)
			names[n++] = limit_names[i];
	cg_join_words(names, n, buf, len);
	return n;
}

int sr_cgroup_describe(const struct sr_config *c, const enum sr_enforce enforced[],
		       const char *reason, char *buf, size_t len)
{
	char none[64], approx[64], why[512];
	size_t n_none = join_limits(c, enforced, SR_ENFORCE_NONE, none, sizeof(none));
	size_t n_approx = join_limits(c, enforced, SR_ENFORCE_RLIMIT, approx, sizeof(approx));
	/*
	 * RLIMIT_DATA bounds each process's private memory, not shared memory
	 * (memfd, MAP_SHARED, SysV): one process can pass it, so --strict
	 * takes it for no memory limit. RLIMIT_NPROC counts the sandbox's
	 * tasks exactly, as pids.max does (docs/limits.md).
	 */
	int refused = (int)n_none + (requested(c, SR_LIMIT_MEMORY) &&
				     enforced[SR_LIMIT_MEMORY] == SR_ENFORCE_RLIMIT);

	if (len == 0)
		return refused;
	/* NULL reason: the short form, for every run's stderr; -v gives the reason. */
	if (reason)
		snprintf(why, sizeof(why), " (%s); see docs/limits.md",
			 *reason ? reason : "no cgroup available");
	else
		snprintf(why, sizeof(why), "; see docs/limits.md, -v says why");
	buf[0] = '\0';
	if (n_none && n_approx)
		snprintf(buf, len,
			 "%s limit%s not enforced and %s only per process (rlimit) on this host%s",
			 none, n_none > 1 ? "s" : "", approx, why);
	else if (n_none)
		snprintf(buf, len, "%s limit%s not enforced on this host%s", none,
			 n_none > 1 ? "s" : "", why);
	else if (n_approx)
		snprintf(buf, len, "%s limited only per process (rlimit) on this host%s", approx,
			 why);
	return refused;
}
