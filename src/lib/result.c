/* SPDX-License-Identifier: MIT */
#include "result.h"
#include "json.h"
#include "util.h"

#include <fcntl.h>
#include <linux/openat2.h>
#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/syscall.h>

void sr_result_init(struct sr_result *r)
{
	/*
	 * Until the supervisor learns otherwise, the run failed in
	 * sandbox-run itself: a record written on an early error path is
	 * then honest without further work.
	 */
	*r = (struct sr_result){
	    .status = SR_STATUS_ERROR,
	    .exit_code = 125,
	    .peak_memory_bytes = -1,
	    .disk_used_bytes = -1,
	};
	for (size_t i = 0; i < _SR_LIMIT_MAX; i++)
		r->enforced[i] = SR_ENFORCE_NONE;
}

const char *sr_status_to_string(enum sr_status s)
{
	static const char *const names[_SR_STATUS_MAX] = {
	    [SR_STATUS_EXITED] = "exited",   [SR_STATUS_SIGNALED] = "signaled",
	    [SR_STATUS_TIMEOUT] = "timeout", [SR_STATUS_OOM] = "oom",
	    [SR_STATUS_ERROR] = "error",
	};

	return (unsigned)s < _SR_STATUS_MAX ? names[s] : NULL;
}

const char *sr_enforce_to_string(enum sr_enforce e)
{
	static const char *const names[_SR_ENFORCE_MAX] = {
	    [SR_ENFORCE_NONE] = "none",	      [SR_ENFORCE_CGROUP2] = "cgroup2",
	    [SR_ENFORCE_CGROUP1] = "cgroup1", [SR_ENFORCE_RLIMIT] = "rlimit",
	    [SR_ENFORCE_TMPFS] = "tmpfs",     [SR_ENFORCE_NFTABLES] = "nftables",
	    [SR_ENFORCE_NETNS] = "netns",     [SR_ENFORCE_EXT4] = "ext4",
	};

	return (unsigned)e < _SR_ENFORCE_MAX ? names[e] : NULL;
}

const char *sr_peak_scope_to_string(enum sr_peak_scope s)
{
	static const char *const names[_SR_PEAK_SCOPE_MAX] = {
	    [SR_PEAK_SANDBOX] = "sandbox",
	    [SR_PEAK_PROCESS] = "process",
	};

	return (unsigned)s < _SR_PEAK_SCOPE_MAX ? names[s] : NULL;
}

const char *sr_limit_to_string(enum sr_limit l)
{
	static const char *const names[_SR_LIMIT_MAX] = {
	    [SR_LIMIT_MEMORY] = "memory", [SR_LIMIT_CPUS] = "cpus", [SR_LIMIT_PIDS] = "pids",
	    [SR_LIMIT_DISK] = "disk",	  [SR_LIMIT_NET] = "net",
	};

	return (unsigned)l < _SR_LIMIT_MAX ? names[l] : NULL;
}

/*
 * Milliseconds with 1 to 3 decimals (12.3, 4.0, 0.125): rounded to whole
 * microseconds, then a real, which jansson writes with a '.' whatever the
 * locale and with ".0" on a whole value (src/base/json.h). Capped at 15
 * digits, just under 1e12 ms (31 years): up to there every microsecond
 * prints exactly, at most 15 significant digits being what the record's
 * reals carry (JSON_REAL_PRECISION(15)).
 */
#define US_MAX 999999999999999LL

static json_t *ms_value(double ms)
{
	double exact;
	long long us;

	if (!isfinite(ms) || ms < 0)
		ms = 0;
	if (ms >= US_MAX / 1000.0)
		return json_real((double)US_MAX / 1000.0);
	/*
	 * Half away from zero, as llround() but without libm: a keeper writes
	 * an exit's record after each exec, and libm's code is one more block
	 * of pages in its resident set (docs/performance.md, "Living
	 * sandboxes"). exact - us is exact below 2^52.
	 */
	exact = ms * 1000.0;
	us = (long long)exact;
	if (exact - (double)us >= 0.5)
		us++;
	return json_real((double)us / 1000.0);
}

/* A limit: 0 means unlimited and is written as null, not as a misleading 0. */
static json_t *limit_value(uint64_t v)
{
	if (v == 0)
		return json_null();
	/* jansson's integers are signed: above 8 EiB (no host has it), a real. */
	if (v > INT64_MAX)
		return json_real((double)v);
	return json_integer((json_int_t)v);
}

/* A limit in thousandths (cpus, timeout), up to 3 decimals: 2000 as 2, 1500 as 1.5. */
static json_t *limit_milli(uint64_t milli)
{
	if (milli == 0)
		return json_null();
	if (milli % 1000 == 0)
		return json_integer((json_int_t)(milli / 1000));
	return json_real((double)milli / 1000.0);
}

static json_t *nullable_i64(int64_t v)
{
	return v < 0 ? json_null() : json_integer(v);
}

json_t *sr_result_timeout_json(uint64_t ms)
{
	return limit_milli(ms);
}

/*
 * json_object_set_new() takes the value, frees it on failure, and fails
 * on a NULL object or value (a constructor out of memory): failures are
 * collected and checked once at the end.
 */
json_t *sr_result_limits_json(const struct sr_config *c)
{
	_cleanup_(sr_json_decrefp) json_t *limits = json_object();
	int fail = 0;

	fail |= json_object_set_new(limits, "memory_bytes", limit_value(c->memory_bytes));
	fail |= json_object_set_new(limits, "cpus", limit_milli(c->cpus_milli));
	fail |= json_object_set_new(limits, "pids", limit_value(c->pids));
	fail |= json_object_set_new(limits, "timeout_s", sr_result_timeout_json(c->timeout_ms));
	fail |= json_object_set_new(limits, "disk_bytes", limit_value(c->disk_bytes));
	fail |= json_object_set_new(limits, "net", sr_json_string(sr_net_mode_to_string(c->net)));
	return fail ? NULL : steal_pointer(&limits);
}

json_t *sr_result_enforced_json(const struct sr_result *r)
{
	_cleanup_(sr_json_decrefp) json_t *enforced = json_object();
	int fail = 0;

	for (size_t i = 0; i < _SR_LIMIT_MAX; i++) {
		const char *e = sr_enforce_to_string(r->enforced[i]);

		fail |= json_object_set_new(enforced, sr_limit_to_string(i),
					    json_string(e ? e : "none"));
	}
	return fail ? NULL : steal_pointer(&enforced);
}

static int add_network(json_t *rec, const struct sr_result_network *n)
{
	_cleanup_(sr_json_decrefp) json_t *net = json_object(), *names = json_array(),
					  *refused = json_array();
	int fail = !net || !names || !refused;

	for (size_t i = 0; !fail && i < n->n_allowed; i++)
		fail |= json_array_append_new(names, sr_json_string(n->allowed[i]));
	for (size_t i = 0; !fail && i < n->n_refused; i++) {
		const struct sr_result_refused *f = &n->refused[i];
		json_t *o = json_object();

		if (!o)
			return -1;
		if (f->dest[0]) {
			fail |= json_object_set_new(o, "dest", sr_json_string(f->dest));
			fail |= json_object_set_new(o, "proto", sr_json_string(f->proto));
		} else {
			fail |= json_object_set_new(o, "name", sr_json_string(f->name));
		}
		fail |= json_object_set_new(o, "count", json_integer((json_int_t)f->count));
		fail |= json_array_append_new(refused, o);
	}
	if (fail)
		return -1;
	fail |= json_object_set(net, "allowed_names", names);
	fail |= json_object_set(net, "refused", refused);
	fail |= json_object_set_new(net, "truncated", json_boolean(n->truncated));
	fail |= json_object_set(rec, "network", net);
	return fail;
}

/*
 * The record, with the sandbox's own parts as given (limits, enforced:
 * taken; NULL is null, as is a NULL profile or id).
 */
static json_t *record_json(const struct sr_result *r, json_t *limits, json_t *enforced,
			   const char *profile, const char *id)
{
	_cleanup_(sr_json_decrefp) json_t *rec = NULL;
	const char *status = sr_status_to_string(r->status);
	int fail = 0;

	if (!status) {
		json_decref(limits);
		json_decref(enforced);
		return NULL;
	}
	/* Keys in this order: jansson writes them in the order they are added. */
	rec = json_object();
	fail |= json_object_set_new(rec, "version", json_integer(1));
	fail |= json_object_set_new(rec, "status", json_string(status));
	fail |= json_object_set_new(rec, "exit_code", json_integer(r->exit_code));
	fail |= json_object_set_new(rec, "signal",
				    r->signal > 0 ? json_integer(r->signal) : json_null());
	fail |= json_object_set_new(rec, "error", sr_json_string(r->error[0] ? r->error : NULL));
	fail |= json_object_set_new(rec, "wall_ms", ms_value(r->wall_ms));
	fail |= json_object_set_new(rec, "user_ms",
				    r->cpu_unknown ? json_null() : ms_value(r->user_ms));
	fail |=
	    json_object_set_new(rec, "sys_ms", r->cpu_unknown ? json_null() : ms_value(r->sys_ms));
	fail |= json_object_set_new(rec, "peak_memory_bytes", nullable_i64(r->peak_memory_bytes));
	fail |= json_object_set_new(
	    rec, "peak_memory_scope",
	    sr_json_string(r->peak_memory_bytes >= 0 ? sr_peak_scope_to_string(r->peak_memory_scope)
						     : NULL));
	fail |= json_object_set_new(rec, "disk_used_bytes", nullable_i64(r->disk_used_bytes));
	fail |= json_object_set_new(rec, "limits", limits ? limits : json_null());
	fail |= json_object_set_new(rec, "enforced", enforced ? enforced : json_null());
	fail |= json_object_set_new(rec, "profile", sr_json_string(profile));
	fail |= json_object_set_new(rec, "sandbox_id", sr_json_string(id));
	if (r->network.recorded)
		fail |= add_network(rec, &r->network);
	if (r->output_dropped_bytes)
		fail |= json_object_set_new(rec, "output_dropped_bytes",
					    json_integer((json_int_t)r->output_dropped_bytes));
	return fail ? NULL : steal_pointer(&rec);
}

json_t *sr_result_json(const struct sr_result *r, const struct sr_config *c)
{
	json_t *limits = sr_result_limits_json(c), *enforced = sr_result_enforced_json(r);

	if (!limits || !enforced) {
		json_decref(limits);
		json_decref(enforced);
		return NULL;
	}
	return record_json(r, limits, enforced, c->profile,
			   r->sandbox_id[0] ? r->sandbox_id : NULL);
}

json_t *sr_result_json_state(const struct sr_result *r, json_t *state)
{
	json_t *limits = json_object_get(state, "limits"),
	       *enforced = json_object_get(state, "enforced");
	json_t *l = json_is_object(limits) ? json_deep_copy(limits) : NULL,
	       *e = json_is_object(enforced) ? json_deep_copy(enforced) : NULL;

	/* A copy out of memory fails the record: null would say the sandbox has none. */
	if ((json_is_object(limits) && !l) || (json_is_object(enforced) && !e)) {
		json_decref(l);
		json_decref(e);
		return NULL;
	}
	return record_json(r, l, e, json_string_value(json_object_get(state, "profile")),
			   json_string_value(json_object_get(state, "id")));
}

int sr_result_format(const struct sr_result *r, const struct sr_config *c, char **ret_json)
{
	_cleanup_(sr_json_decrefp) json_t *rec = sr_result_json(r, c);

	if (!rec)
		return sr_status_to_string(r->status) ? -ENOMEM : -EINVAL;
	return sr_json_dump_line(rec, ret_json);
}

/* A fresh, unguessable name next to the target: "." + base + ".XXXXXXXX". */
static int open_temp(int dirfd, const char *base, char *name, size_t len)
{
	for (int tries = 0; tries < 16; tries++) {
		uint32_t rnd;
		int fd;

		if (getrandom(&rnd, sizeof(rnd), 0) != sizeof(rnd))
			return sr_negerrno();
		snprintf(name, len, ".%.200s.%08x", base, rnd);
		/* 0644 through open(), so the caller's umask applies as for any file. */
		fd =
		    openat(dirfd, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
		if (fd >= 0 || errno != EEXIST)
			return fd >= 0 ? fd : sr_negerrno();
	}
	return -EEXIST;
}

/* The descriptor a path names, as a shell sees /dev/stdout: N, or -1. */
static int std_fd_of(const char *path)
{
	char own[64];
	const char *const prefixes[] = {"/dev/fd/", "/proc/self/fd/", "/proc/thread-self/fd/", own};
	char *end;
	long n;

	if (sr_streq(path, "/dev/stdout"))
		return 1;
	if (sr_streq(path, "/dev/stderr"))
		return 2;
	snprintf(own, sizeof(own), "/proc/%d/fd/", (int)getpid());
	for (size_t i = 0; i < SR_ARRAY_SIZE(prefixes); i++) {
		size_t l = strlen(prefixes[i]);

		if (strncmp(path, prefixes[i], l) != 0)
			continue;
		errno = 0;
		n = strtol(path + l, &end, 10);
		if (!errno && end != path + l && !*end && n >= 0 && n < INT_MAX)
			return (int)n;
	}
	return -1;
}

/* As the kernel's MAXSYMLINKS. */
#define MAX_LINKS 40

/* path's last component, or NULL where it names no file ("dir/", ".", ".."). */
static const char *file_name(const char *path)
{
	const char *slash = strrchr(path, '/');
	const char *b = slash ? slash + 1 : path;

	return !*b || sr_streq(b, ".") || sr_streq(b, "..") ? NULL : b;
}

/* "dir/base" split; dir is "." without a slash and "/" for "/base". */
static int split_path(const char *path, char **ret_dir, char **ret_base)
{
	const char *slash = strrchr(path, '/');
	_cleanup_free_ char *dir = !slash	   ? strdup(".")
				   : slash == path ? strdup("/")
						   : strndup(path, (size_t)(slash - path));
	char *base = strdup(slash ? slash + 1 : path);

	if (!dir || !base) {
		free(base);
		return -ENOMEM;
	}
	*ret_dir = steal_pointer(&dir);
	*ret_base = base;
	return 0;
}

/*
 * The kernel's own rule for following a link in a sticky directory
 * (fs.protected_symlinks, may_follow_link()), applied in every directory:
 * a link is followed only when it is the caller's or the directory
 * owner's. Anyone else's link could point the record, written with the
 * caller's rights, at any of the caller's files.
 */
static bool link_trusted(const struct stat *link, const struct stat *dir)
{
	return link->st_uid == geteuid() || link->st_uid == dir->st_uid;
}

/* The caller's stdout or stderr, if st is the same file: 1, 2, or -1. */
static int caller_stdio(const struct stat *st)
{
	for (int fd = 1; fd <= 2; fd++) {
		struct stat s;

		if (fstat(fd, &s) == 0 && s.st_dev == st->st_dev && s.st_ino == st->st_ino)
			return fd;
	}
	return -1;
}

/*
 * The record's final name, resolved by the kernel rather than by hand
 * (by hand, fs.protected_symlinks never applied): *dirfd is the directory
 * the caller's path names, opened by the kernel (no magic link on the
 * way); base is looked at there. A link at base is followed only when
 * trusted (link_trusted()), only to the caller's own stdout or stderr or
 * to a file beneath the link's directory (RESOLVE_BENEATH: never out of
 * the tree the caller named, so a link an agent left in a --bind cannot
 * aim the next run's record at ~/.bashrc), and a link at a time. What is
 * at the end must be a regular file or nothing; anything else (a FIFO,
 * which would block the write for ever, a device) only when it is the
 * caller's own stdout or stderr. *ret_fd: that descriptor, else -1 and
 * *dirfd and *base name the file.
 */
static int resolve_final(const char *given, int *dirfd, char **base, int *ret_fd,
			 struct sr_error *err)
{
	*ret_fd = -1;
	for (int links = 0;; links++) {
		_cleanup_free_ char *target = NULL, *tdir = NULL, *tbase = NULL;
		struct stat st, dst;
		ssize_t n;
		int fd;

		if (fstatat(*dirfd, *base, &st, AT_SYMLINK_NOFOLLOW) < 0) {
			if (errno == ENOENT)
				return 0;
			return sr_error_errno(err, sr_negerrno(), "result %s", given);
		}
		if (S_ISREG(st.st_mode))
			return 0;
		if (S_ISDIR(st.st_mode))
			return sr_error_errno(err, -EISDIR, "result %s", given);
		if (!S_ISLNK(st.st_mode)) {
			*ret_fd = caller_stdio(&st);
			if (*ret_fd >= 0)
				return 0;
			return sr_error_msg(err, -EINVAL,
					    "result %s: not a regular file (a FIFO, socket or "
					    "device): name a file, /dev/stdout or /dev/stderr",
					    given);
		}
		if (links == MAX_LINKS)
			return sr_error_errno(err, -ELOOP, "result %s", given);
		if (fstat(*dirfd, &dst) < 0)
			return sr_error_errno(err, sr_negerrno(), "result %s", given);
		if (!link_trusted(&st, &dst))
			return sr_error_msg(err, -EPERM,
					    "result %s: a symbolic link owned by uid %u, neither "
					    "yours nor its directory owner's: not followed",
					    given, (unsigned)st.st_uid);
		target = calloc(1, PATH_MAX);
		if (!target)
			return sr_error_errno(err, -ENOMEM, "result %s", given);
		n = readlinkat(*dirfd, *base, target, PATH_MAX - 1);
		if (n < 0)
			return sr_error_errno(err, sr_negerrno(), "result %s", given);
		fd = std_fd_of(target);
		if (fd >= 0) {
			*ret_fd = fd;
			return 0;
		}
		if (!file_name(target) || split_path(target, &tdir, &tbase) < 0)
			return sr_error_msg(err, -EINVAL, "result %s: links to %s: not a file name",
					    given, target);
		fd = sr_openat2(*dirfd, tdir, O_PATH | O_DIRECTORY,
				RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS);
		if (fd == -EXDEV)
			return sr_error_msg(err, fd,
					    "result %s: a symbolic link out of its directory (to "
					    "%s): not followed; name the file itself",
					    given, target);
		if (fd < 0)
			return sr_error_errno(err, fd, "result %s: links to %s", given, target);
		close(*dirfd);
		*dirfd = fd;
		free(*base);
		*base = steal_pointer(&tbase);
	}
}

/*
 * The directory's path, as the kernel resolved it (d_path): reopened by
 * it at the end, so that a directory the agent removed and made again is
 * found, and one it replaced with a link is not.
 */
static int dir_path(int dirfd, char **ret)
{
	char *buf = malloc(PATH_MAX);
	int r;

	if (!buf)
		return -ENOMEM;
	r = sr_fd_path(dirfd, buf, PATH_MAX);
	if (r < 0) {
		free(buf);
		return r;
	}
	*ret = buf;
	return 0;
}

int sr_result_target_open(const char *given, struct sr_result_target *ret, struct sr_error *err)
{
	_cleanup_free_ char *dir = NULL, *base = NULL, *shown = NULL;
	struct sr_result_target t = SR_RESULT_TARGET_INIT;
	_cleanup_close_ int dirfd = -1;
	int r;

	if (!file_name(given))
		return sr_error_msg(err, -EINVAL, "result %s: not a file name", given);
	shown = strdup(given);
	if (!shown)
		return sr_error_errno(err, -ENOMEM, "result %s", given);
	t.fd = std_fd_of(given);
	if (t.fd >= 0) {
		t.shown = steal_pointer(&shown);
		*ret = t;
		return 0;
	}
	if (split_path(given, &dir, &base) < 0)
		return sr_error_errno(err, -ENOMEM, "result %s", given);
	/*
	 * The directory by the kernel's resolution, fs.protected_symlinks and
	 * all; no /proc magic link (another process's cwd or fd) on the way.
	 */
	dirfd = sr_openat2(AT_FDCWD, dir, O_PATH | O_DIRECTORY, RESOLVE_NO_MAGICLINKS);
	if (dirfd < 0)
		return sr_error_errno(err, dirfd, "result %s: directory %s", given, dir);
	r = resolve_final(given, &dirfd, &base, &t.fd, err);
	if (r < 0)
		return r;
	if (t.fd < 0) {
		r = dir_path(dirfd, &t.dir);
		if (r < 0)
			return sr_error_errno(err, r, "result %s: directory %s", given, dir);
		t.dirfd = steal_fd(&dirfd);
		t.base = steal_pointer(&base);
	}
	t.shown = steal_pointer(&shown);
	*ret = t;
	return 0;
}

void sr_result_target_close(struct sr_result_target *t)
{
	free(t->dir);
	free(t->base);
	free(t->shown);
	sr_closep(&t->dirfd);
	*t = (struct sr_result_target)SR_RESULT_TARGET_INIT;
}

/*
 * The record's directory at the end: by the path it had at the start,
 * with no symbolic link anywhere on it (ELOOP), so that a directory the
 * agent removed and made again (a "clean" step) is found and one it
 * replaced with a link is not. Where that path cannot be searched (a cwd
 * inside someone else's 0700 tree, under sudo or setpriv), the directory
 * held since the start. Opened for reading, to fsync it, where the caller
 * may; else O_PATH.
 */
static int open_dir(const struct sr_result_target *t)
{
	const uint64_t res = RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS;
	int fd = sr_openat2(AT_FDCWD, t->dir, O_RDONLY | O_DIRECTORY, res);

	if (fd == -EACCES)
		fd = sr_openat2(AT_FDCWD, t->dir, O_PATH | O_DIRECTORY, res);
	if (fd == -EACCES) {
		fd = sr_openat2(t->dirfd, ".", O_RDONLY | O_DIRECTORY, 0);
		if (fd == -EACCES)
			fd = sr_openat2(t->dirfd, ".", O_PATH | O_DIRECTORY, 0);
	}
	return fd;
}

/*
 * The record's own file when its directory takes no new one: never
 * through a link, without waiting on a FIFO (O_NONBLOCK), and only if it
 * is still a regular file.
 */
static int write_in_place(int dirfd, const char *base, const char *json)
{
	_cleanup_close_ int fd = openat(
	    dirfd, base, O_WRONLY | O_NOFOLLOW | O_NOCTTY | O_NONBLOCK | O_CLOEXEC | O_TRUNC);
	struct stat st;

	if (fd < 0)
		return sr_negerrno();
	if (fstat(fd, &st) < 0)
		return sr_negerrno();
	if (!S_ISREG(st.st_mode))
		return -EINVAL;
	return sr_write_all(fd, json, strlen(json));
}

int sr_result_target_write(const struct sr_result_target *t, const struct sr_result *r,
			   const struct sr_config *c, struct sr_error *err)
{
	_cleanup_free_ char *json = NULL;
	int k = sr_result_format(r, c, &json);

	if (k < 0)
		return sr_error_errno(err, k, "result %s: format", t->shown);
	return sr_result_target_write_text(t, json, err);
}

int sr_result_target_write_text(const struct sr_result_target *t, const char *json,
				struct sr_error *err)
{
	_cleanup_close_ int fd = -1, dirfd = -1;
	char tmp[256];
	struct stat st;
	bool exists;
	int k;

	if (t->fd >= 0) {
		k = sr_write_all(t->fd, json, strlen(json));
		return k < 0 ? sr_error_errno(err, k, "result %s", t->shown) : 0;
	}

	dirfd = open_dir(t);
	if (dirfd == -ELOOP)
		return sr_error_msg(err, dirfd,
				    "result %s: a symbolic link took the place of a directory of "
				    "%s during the run: not followed",
				    t->shown, t->dir);
	if (dirfd < 0)
		return sr_error_errno(err, dirfd, "result %s: directory %s", t->shown, t->dir);
	exists = fstatat(dirfd, t->base, &st, AT_SYMLINK_NOFOLLOW) == 0;
	if (exists && S_ISDIR(st.st_mode))
		return sr_error_errno(err, -EISDIR, "result %s", t->shown);

	fd = open_temp(dirfd, t->base, tmp, sizeof(tmp));
	if ((fd == -EACCES || fd == -EPERM || fd == -EROFS) && exists && S_ISREG(st.st_mode)) {
		/*
		 * The directory takes no new file but the record's file may be
		 * written (e.g. stdout redirected into someone else's directory):
		 * in place, not atomically.
		 */
		k = write_in_place(dirfd, t->base, json);
		if (k != -EACCES)
			return k < 0 ? sr_error_errno(err, k, "result %s", t->shown) : 0;
		/* Neither can be written: the directory's refusal is the one to report. */
	}
	if (fd < 0)
		return sr_error_errno(err, fd, "result %s: create temporary file", t->shown);

	/*
	 * fsync before rename: otherwise a crash can leave the new name
	 * pointing at an empty file, which a reader of a result record
	 * cannot tell from a run that wrote nothing. The rename replaces
	 * whatever is at the name, a link or FIFO the agent put there
	 * included, and opens none of them.
	 */
	k = sr_write_all(fd, json, strlen(json));
	if (k >= 0 && fsync(fd) < 0)
		k = sr_negerrno();
	if (k >= 0 && close(steal_fd(&fd)) < 0)
		k = sr_negerrno();
	if (k >= 0 && renameat(dirfd, tmp, dirfd, t->base) < 0)
		k = sr_negerrno();
	if (k < 0) {
		unlinkat(dirfd, tmp, 0);
		return sr_error_errno(err, k, "result %s", t->shown);
	}
	/* The rename itself is durable only once the directory is synced (not an O_PATH one). */
	(void)fsync(dirfd);
	return 0;
}

int sr_result_write(const struct sr_result *r, const struct sr_config *c, const char *path,
		    struct sr_error *err)
{
	struct sr_result_target t;
	int k = sr_result_target_open(path, &t, err);

	if (k < 0)
		return k;
	k = sr_result_target_write(&t, r, c, err);
	sr_result_target_close(&t);
	return k;
}
