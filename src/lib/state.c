/* SPDX-License-Identifier: MIT */
#include "state.h"
#include "cgroup.h"
#include "util.h"

#include <ctype.h>
#include <dirent.h>
#include <limits.h>
#include <pwd.h>
#include <strings.h>
#include <sys/file.h>
#include <sys/stat.h>

#define STATE_JSON_MAX (256 * 1024)

/*
 * path made if missing (0700) and checked: a directory (not a link to
 * one), ours, and open to nobody else. One that is ours but open to
 * others is closed (a umask of 0 made it so); one that is someone else's
 * is refused: /tmp/sandbox-run-UID could have been made by anyone first.
 */
static int private_dir(const char *path, struct sr_error *err)
{
	struct stat st;

	if (mkdir(path, 0700) < 0 && errno != EEXIST)
		return sr_error_errno(err, sr_negerrno(), "create %s", path);
	if (lstat(path, &st) < 0)
		return sr_error_errno(err, sr_negerrno(), "%s", path);
	if (!S_ISDIR(st.st_mode))
		return sr_error_msg(err, -ENOTDIR,
				    "%s: not a directory, where sandbox-run keeps its own (move "
				    "what is there aside)",
				    path);
	if (st.st_uid != geteuid())
		return sr_error_msg(err, -EPERM,
				    "%s belongs to uid %u, not to you: refusing to keep sandboxes "
				    "there",
				    path, (unsigned)st.st_uid);
	if ((st.st_mode & 077) && chmod(path, 0700) < 0)
		return sr_error_errno(err, sr_negerrno(), "chmod 0700 %s", path);
	return 0;
}

int sr_private_dir(const char *path, struct sr_error *err)
{
	return private_dir(path, err);
}

/* mkdir -p of the parents of path (0755 as mkdir(1) would, less the umask), not path itself. */
static int make_parents(const char *path, struct sr_error *err)
{
	_cleanup_free_ char *p = strdup(path);

	if (!p)
		return sr_error_errno(err, -ENOMEM, "%s", path);
	for (char *s = strchr(p + 1, '/'); s; s = strchr(s + 1, '/')) {
		*s = '\0';
		if (mkdir(p, 0755) < 0 && errno != EEXIST)
			return sr_error_errno(err, sr_negerrno(), "create %s", p);
		*s = '/';
	}
	return 0;
}

static const char *home_dir(void)
{
	const char *home = getenv("HOME");
	struct passwd *pw;

	if (home && home[0] == '/')
		return home;
	pw = getpwuid(geteuid());
	return pw && pw->pw_dir && pw->pw_dir[0] == '/' ? pw->pw_dir : NULL;
}

/*
 * Without a runtime directory: /tmp/sandbox-run-UID. Anyone may make that
 * name first (sticky /tmp: its owner alone can remove it again), which
 * would keep the user from living sandboxes altogether; the user's own
 * state directory in the home directory serves then, for as long as the
 * squatter's is there.
 */
static int tmp_state_dir(char **ret, struct sr_error *err)
{
	const char *xdg = getenv("XDG_STATE_HOME"), *home = home_dir();
	_cleanup_free_ char *tmp = NULL, *own = NULL;
	struct sr_error squat = {0};
	int r;

	if (asprintf(&tmp, "/tmp/sandbox-run-%u", (unsigned)geteuid()) < 0)
		return sr_error_errno(err, -ENOMEM, "state directory");
	r = private_dir(tmp, &squat);
	if (r >= 0) {
		*ret = steal_pointer(&tmp);
		return 0;
	}
	if (r != -EPERM && r != -ENOTDIR) {
		*err = squat;
		return r;
	}
	if (xdg && xdg[0] == '/')
		r = asprintf(&own, "%s/sandbox-run/run", xdg);
	else if (home)
		r = asprintf(&own, "%s/.local/state/sandbox-run/run", home);
	else
		return sr_error_msg(err, r, "%s (set %s, or XDG_RUNTIME_DIR)", squat.msg,
				    SR_STATE_DIR_ENV);
	if (r < 0)
		return sr_error_errno(err, -ENOMEM, "state directory");
	if ((r = make_parents(own, err)) < 0 || (r = private_dir(own, err)) < 0)
		return r;
	*ret = steal_pointer(&own);
	return 0;
}

/*
 * SANDBOX_RUN_STATE_DIR or SANDBOX_RUN_DATA_DIR: an absolute path, or
 * unset (empty is unset, as XDG's variables are). A relative one is an
 * error, not a fall back to the user's own directories: the set of
 * sandboxes meant to be apart (a CI job's) would be mixed with the
 * user's others, for the next `rm` to reach.
 */
static int override(const char *env, const char **ret, struct sr_error *err)
{
	const char *v = getenv(env);

	*ret = v && v[0] ? v : NULL;
	if (*ret && (*ret)[0] != '/')
		return sr_error_msg(err, -EINVAL,
				    "%s='%s' is not an absolute path (give one, or unset it)", env,
				    *ret);
	return 0;
}

/* A directory the user named (env=over) that will not do: said as theirs to change, not ours. */
static int overridden(int r, const char *env, const char *over, struct sr_error *err)
{
	if (!over || r != -ENOTDIR)
		return r;
	return sr_error_msg(err, r, "%s=%s: not a directory (name a directory, or unset it)", env,
			    over);
}

int sr_state_dir(char **ret, struct sr_error *err)
{
	const char *xdg = getenv("XDG_RUNTIME_DIR"), *over;
	_cleanup_free_ char *path = NULL;
	int r;

	r = override(SR_STATE_DIR_ENV, &over, err);
	if (r < 0)
		return r;
	if (over)
		path = strdup(over);
	else if (geteuid() == 0)
		path = strdup("/run/sandbox-run");
	else if (xdg && xdg[0] == '/' && access(xdg, W_OK | X_OK) == 0)
		r = asprintf(&path, "%s/sandbox-run", xdg) < 0 ? -ENOMEM : 0;
	else
		return tmp_state_dir(ret, err);
	if (!path)
		return sr_error_errno(err, -ENOMEM, "state directory");
	r = private_dir(path, err);
	if (r < 0)
		return overridden(r, SR_STATE_DIR_ENV, over, err);
	*ret = steal_pointer(&path);
	return 0;
}

int sr_data_dir(const char *sub, char **ret, struct sr_error *err)
{
	const char *xdg = getenv("XDG_DATA_HOME"), *home = home_dir();
	const char *over;
	_cleanup_free_ char *path = NULL, *full = NULL;
	int r;

	r = override(SR_DATA_DIR_ENV, &over, err);
	if (r < 0)
		return r;
	if (over)
		path = strdup(over);
	else if (geteuid() == 0)
		path = strdup("/var/lib/sandbox-run");
	else if (xdg && xdg[0] == '/')
		r = asprintf(&path, "%s/sandbox-run", xdg) < 0 ? -ENOMEM : 0;
	else if (home)
		r = asprintf(&path, "%s/.local/share/sandbox-run", home) < 0 ? -ENOMEM : 0;
	else
		return sr_error_msg(err, -ENOENT, "no data directory: set XDG_DATA_HOME or HOME");
	if (!path)
		return sr_error_errno(err, -ENOMEM, "data directory");
	if ((r = make_parents(path, err)) < 0 || (r = private_dir(path, err)) < 0)
		return overridden(r, SR_DATA_DIR_ENV, over, err);
	if (sub) {
		if (asprintf(&full, "%s/%s", path, sub) < 0)
			return sr_error_errno(err, -ENOMEM, "data directory");
		r = private_dir(full, err);
		if (r < 0)
			return r;
		free(path);
		path = steal_pointer(&full);
	}
	*ret = steal_pointer(&path);
	return 0;
}

bool sr_state_valid_name(const char *name)
{
	size_t n = strlen(name);

	if (n == 0 || n > 64 || !isalnum((unsigned char)name[0]))
		return false;
	for (size_t i = 0; i < n; i++)
		if (!isalnum((unsigned char)name[i]) && !strchr("_.-", name[i]))
			return false;
	return true;
}

bool sr_state_deployment(json_t *state, const char **ret_name, unsigned *ret_version)
{
	json_t *d = json_object_get(state, "deployment");
	json_t *name = json_object_get(d, "name"), *version = json_object_get(d, "version");

	if (!json_is_string(name) || !sr_state_valid_name(json_string_value(name)) ||
	    !json_is_integer(version) || json_integer_value(version) < 1 ||
	    json_integer_value(version) > UINT_MAX)
		return false;
	*ret_name = json_string_value(name);
	*ret_version = (unsigned)json_integer_value(version);
	return true;
}

void sr_state_add_deployment(json_t *state)
{
	const char *name;
	unsigned version;
	json_t *d;

	if (!json_object_get(state, "profile"))
		return;
	d = sr_state_deployment(state, &name, &version)
		? json_pack("{sssI}", "name", name, "version", (json_int_t)version)
		: json_null();
	/* Last, as it always came: after the keeper's keys, whichever wrote it. */
	json_object_del(state, "deployment");
	json_object_set_new(state, "deployment", d);
}

static bool valid_id(const char *s)
{
	if (strlen(s) != 32)
		return false;
	for (; *s; s++)
		if (!isxdigit((unsigned char)*s) || isupper((unsigned char)*s))
			return false;
	return true;
}

void sr_entry_free(struct sr_entry *e)
{
	free(e->dir);
	if (e->state)
		json_decref(e->state);
	*e = (struct sr_entry){0};
}

void sr_entries_free(struct sr_entry *v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		sr_entry_free(&v[i]);
	free(v);
}

static json_t *read_state(int dirfd)
{
	_cleanup_close_ int fd = openat(dirfd, "state.json", O_RDONLY | O_CLOEXEC | O_NOFOLLOW);

	if (fd < 0)
		return NULL;
	/*
	 * The keeper rewrites it in place under an exclusive lock (write_at):
	 * shared, the text is whole. Held for microseconds; a keeper stopped
	 * holding it is not waited for (its text is whole too: rewritten by
	 * one pwrite, padded to the old length).
	 */
	for (int i = 0; i < 100 && flock(fd, LOCK_SH | LOCK_NB) < 0 && errno == EWOULDBLOCK; i++)
		usleep(100);
	return sr_json_read_object_fd(fd, STATE_JSON_MAX, 16);
}

/*
 * The cgroups a dead keeper left: each removed once empty (its processes
 * go with PID 1's namespace, asynchronously: a busy one is retried for a
 * while, as cgroup.c does), and only if no live run holds its lock.
 */
static void remove_cgroups(json_t *state)
{
	json_t *cgroups = state ? json_object_get(state, "cgroups") : NULL;
	size_t i;
	json_t *v;

	json_array_foreach (cgroups, i, v) {
		if (json_is_string(v))
			sr_cgroup_remove_stale(json_string_value(v));
	}
}

void sr_state_remove(const char *dir, json_t *state)
{
	_cleanup_close_ int fd = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
	/*
	 * The temporary state file after state.json: a write cut short leaves
	 * it; api.json, what serve keeps of its create (src/api/keepers.c).
	 */
	static const char *const files[] = {"ctl",	  "state.json", ".state.json.tmp",
					    "keeper.log", "api.json",	"lock"};

	remove_cgroups(state);
	if (fd < 0)
		return;
	for (size_t i = 0; i < SR_ARRAY_SIZE(files); i++)
		(void)unlinkat(fd, files[i], 0);
	(void)rmdir(dir);
}

/*
 * Whether the entry's keeper lives: it holds the lock. A lock we can
 * take means it died; the entry is removed then, under the lock, so that
 * two cleaners do not trip over each other.
 */
static bool live_or_remove(int statefd, const char *statedir, const char *id)
{
	_cleanup_close_ int dirfd =
	    openat(statefd, id, O_PATH | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
	_cleanup_close_ int lock = -1;
	_cleanup_free_ char *dir = NULL;
	json_t *state;

	if (dirfd < 0)
		return false;
	lock = openat(dirfd, "lock", O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	/* No lock file yet: an entry being made (the keeper creates it first, under the dir lock).
	 */
	if (lock < 0)
		return false;
	/* Held: live, unless it is being removed (state.json goes first): skipped then. */
	if (flock(lock, LOCK_EX | LOCK_NB) < 0)
		return errno == EWOULDBLOCK && faccessat(dirfd, "state.json", F_OK, 0) == 0;
	if (asprintf(&dir, "%s/%s", statedir, id) < 0)
		return false;
	state = read_state(dirfd);
	sr_state_remove(dir, state);
	if (state)
		json_decref(state);
	return false;
}

static int cmp_created(const void *a, const void *b)
{
	const struct sr_entry *x = a, *y = b;
	json_t *cx = x->state ? json_object_get(x->state, "created_ns") : NULL;
	json_t *cy = y->state ? json_object_get(y->state, "created_ns") : NULL;
	json_int_t ix = json_is_integer(cx) ? json_integer_value(cx) : 0;
	json_int_t iy = json_is_integer(cy) ? json_integer_value(cy) : 0;

	return ix < iy ? -1 : ix > iy ? 1 : strcmp(x->id, y->id);
}

int sr_state_list(const char *statedir, struct sr_entry **ret, size_t *ret_n, struct sr_error *err)
{
	_cleanup_close_ int fd = open(statedir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	struct sr_entry *v = NULL;
	size_t n = 0, cap = 0;
	struct dirent *de;
	DIR *d;
	int dup;

	if (fd < 0)
		return sr_error_errno(err, sr_negerrno(), "%s", statedir);
	dup = fcntl(fd, F_DUPFD_CLOEXEC, 3);
	d = dup < 0 ? NULL : fdopendir(dup);
	if (!d) {
		int e = sr_negerrno();

		if (dup >= 0)
			close(dup);
		return sr_error_errno(err, e, "%s", statedir);
	}
	while ((de = readdir(d))) {
		_cleanup_close_ int dirfd = -1;

		if (!valid_id(de->d_name) || !live_or_remove(fd, statedir, de->d_name))
			continue;
		if (SR_GROW(v, cap, n + 1, 16) < 0) {
			closedir(d);
			sr_entries_free(v, n);
			return sr_error_errno(err, -ENOMEM, "list sandboxes");
		}
		v[n] = (struct sr_entry){0};
		memcpy(v[n].id, de->d_name, 33);
		if (asprintf(&v[n].dir, "%s/%s", statedir, de->d_name) < 0) {
			closedir(d);
			sr_entries_free(v, n);
			return sr_error_errno(err, -ENOMEM, "list sandboxes");
		}
		dirfd = openat(fd, de->d_name, O_PATH | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
		v[n].state = dirfd >= 0 ? read_state(dirfd) : NULL;
		n++;
	}
	closedir(d);
	if (n > 1)
		qsort(v, n, sizeof(*v), cmp_created);
	*ret = v;
	*ret_n = n;
	return 0;
}

static const char *entry_name(const struct sr_entry *e)
{
	json_t *name = e->state ? json_object_get(e->state, "name") : NULL;

	return json_is_string(name) ? json_string_value(name) : NULL;
}

static bool hex_prefix(const char *s)
{
	if (strlen(s) < 4 || strlen(s) > 32)
		return false;
	for (; *s; s++)
		if (!isxdigit((unsigned char)*s))
			return false;
	return true;
}

/* Whether the last call failed for want of fds: not an answer about a sandbox. */
static bool out_of_fds(void)
{
	return errno == EMFILE || errno == ENFILE;
}

/*
 * A whole id: its own entry, without reading every other one (a whole id
 * comes first anyway). What the API does for each request, and most
 * verbs: the cost no longer grows with the number of sandboxes. 1, 0 for
 * none, or -EMFILE/-ENFILE: out of fds, it cannot say (a server at its
 * limit answered "no sandbox").
 */
static int find_id(const char *statedir, const char *id, struct sr_entry *ret)
{
	_cleanup_close_ int fd = open(statedir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	_cleanup_close_ int dirfd = -1;

	errno = 0;
	if (fd < 0 || !live_or_remove(fd, statedir, id))
		return out_of_fds() ? -errno : 0;
	dirfd = openat(fd, id, O_PATH | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
	if (dirfd < 0)
		return out_of_fds() ? -errno : 0;
	*ret = (struct sr_entry){0};
	memcpy(ret->id, id, 33);
	if (asprintf(&ret->dir, "%s/%s", statedir, id) < 0) {
		ret->dir = NULL;
		return -ENOMEM;
	}
	ret->state = read_state(dirfd);
	return 1;
}

int sr_state_find_if(const char *statedir, const char *ref, sr_state_hidden_fn hidden, void *ctx,
		     struct sr_entry *ret, struct sr_error *err)
{
	struct sr_entry *v = NULL, e = {0};
	size_t n = 0, k = 0, match = SIZE_MAX, matches = 0;
	int r;

	r = valid_id(ref) ? find_id(statedir, ref, &e) : 0;
	if (r < 0)
		return sr_error_errno(err, r, "%s", statedir);
	if (r > 0) {
		if (!hidden || !hidden(ctx, &e)) {
			*ret = e;
			return 0;
		}
		sr_entry_free(&e);
	}
	r = sr_state_list(statedir, &v, &n, err);

	if (r < 0)
		return r;
	/* A hidden entry is as if it were not there: it takes no id, name or prefix from another.
	 */
	for (size_t i = 0; i < n; i++)
		if (hidden && hidden(ctx, &v[i]))
			sr_entry_free(&v[i]);
		else
			v[k++] = v[i];
	n = k;
	/* The whole id, then a name, then a prefix: a name never hides an id, nor a prefix a name.
	 */
	for (size_t i = 0; i < n && match == SIZE_MAX; i++)
		if (strcmp(v[i].id, ref) == 0)
			match = i;
	for (size_t i = 0; i < n && match == SIZE_MAX; i++)
		if (sr_streq(entry_name(&v[i]), ref))
			match = i;
	if (match == SIZE_MAX && hex_prefix(ref)) {
		for (size_t i = 0; i < n; i++)
			if (strncasecmp(v[i].id, ref, strlen(ref)) == 0) {
				match = i;
				matches++;
			}
		if (matches > 1) {
			sr_entries_free(v, n);
			return sr_error_msg(
			    err, -EINVAL,
			    "'%s' is the start of %zu sandboxes' ids: give more of it", ref,
			    matches);
		}
	}
	if (match == SIZE_MAX) {
		sr_entries_free(v, n);
		/* Most often `id=$(sandbox-run create ...)` that failed, or a name misspelt. */
		if (!ref[0])
			return sr_error_msg(
			    err, -ENOENT,
			    "no sandbox '' (an empty ID: is the variable that should "
			    "hold it set? sandbox-run ls lists them)");
		return sr_error_msg(err, -ENOENT, "no sandbox '%s' (sandbox-run ls lists them)",
				    ref);
	}
	*ret = v[match];
	v[match] = (struct sr_entry){0};
	sr_entries_free(v, n);
	return 0;
}

int sr_state_find(const char *statedir, const char *ref, struct sr_entry *ret, struct sr_error *err)
{
	return sr_state_find_if(statedir, ref, NULL, NULL, ret, err);
}

/*
 * state.json rewritten where it is, under an exclusive flock(2) that every
 * reader takes shared (read_state): no file made or removed. This VM's
 * /run is ext4 without a journal, where each new inode is looked for past
 * every one freed in the last 30 s: with a warm pool's keepers coming and
 * going that search was a quarter of the host's CPU (perf). Only what fits
 * the first page: a pwrite(2) of one page is copied whole or not at all
 * (ENOSPC refuses it first), so no failure leaves half a file. A reader
 * that holds its lock, or any failure before the write, sends the caller
 * to the exchange below, which never touches the file a reader has open.
 */
static int rewrite_in_place(int dirfd, const char *text, size_t len)
{
	_cleanup_close_ int fd = -1;
	char page[4096];
	size_t out = len;
	struct stat st;
	ssize_t n;

	if (len > sizeof(page))
		return -EFBIG;
	fd = openat(dirfd, "state.json", O_WRONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0)
		return sr_negerrno();
	if (flock(fd, LOCK_EX | LOCK_NB) < 0 || fstat(fd, &st) < 0)
		return sr_negerrno();
	if (st.st_size > (off_t)sizeof(page))
		return -EFBIG;
	/*
	 * Padded with spaces (JSON's whitespace) over the old text's tail, so
	 * that the one write leaves a whole text: a keeper killed before the
	 * truncation below leaves spaces, not the old text's end.
	 */
	memcpy(page, text, len);
	if ((off_t)len < st.st_size) {
		out = (size_t)st.st_size;
		memset(page + len, ' ', out - len);
	}
	n = pwrite(fd, page, out, 0);
	if (n < 0)
		return sr_negerrno();
	/* Not written whole (no room): written again, below. */
	if ((size_t)n != out || ftruncate(fd, (off_t)len) < 0)
		return -EIO;
	return 0;
}

static int write_at(int dirfd, json_t *state, struct sr_error *err)
{
	_cleanup_free_ char *text = NULL;
	_cleanup_close_ int fd = -1;
	int r = sr_json_dump_line(state, &text);

	if (r < 0)
		return sr_error_errno(err, r, "state.json");
	if (rewrite_in_place(dirfd, text, strlen(text)) == 0)
		return 0;
	fd = openat(dirfd, ".state.json.tmp", O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW,
		    0600);
	if (fd < 0)
		return sr_error_errno(err, sr_negerrno(), "write state.json");
	r = sr_write_all(fd, text, strlen(text));
	if (r < 0)
		return sr_error_errno(err, r, "write state.json");
	/*
	 * Exchanged with the old file, which is then unlinked, rather than
	 * renamed over it: ext4 writes a file renamed over another out to
	 * the disk at once (auto_da_alloc) and frees the old one's blocks (a
	 * discard, mounted so). A reader sees the old file or the new one,
	 * whole either way (the old one stays readable through its
	 * descriptor). The first write has nothing to exchange with; a
	 * filesystem without the exchange renames.
	 */
	if (renameat2(dirfd, ".state.json.tmp", dirfd, "state.json", RENAME_EXCHANGE) == 0) {
		(void)unlinkat(dirfd, ".state.json.tmp", 0);
		return 0;
	}
	if (errno != ENOENT && errno != EINVAL)
		return sr_error_errno(err, sr_negerrno(), "write state.json");
	if (renameat(dirfd, ".state.json.tmp", dirfd, "state.json") < 0)
		return sr_error_errno(err, sr_negerrno(), "write state.json");
	return 0;
}

int sr_state_write(const char *dir, json_t *state, struct sr_error *err)
{
	_cleanup_close_ int fd = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);

	if (fd < 0)
		return sr_error_errno(err, sr_negerrno(), "%s", dir);
	return write_at(fd, state, err);
}

/* 0 if no living sandbox is named name; -EEXIST (said so) if one is. */
static int name_free(const char *statedir, const char *name, struct sr_error *err)
{
	struct sr_entry *v = NULL;
	size_t n = 0;
	int r = sr_state_list(statedir, &v, &n, err);

	for (size_t i = 0; r >= 0 && i < n; i++)
		if (sr_streq(entry_name(&v[i]), name))
			r = sr_error_msg(err, -EEXIST,
					 "a sandbox is named '%s' already (sandbox-run rm %s, or "
					 "choose another --name)",
					 name, name);
	sr_entries_free(v, n);
	return r < 0 ? r : 0;
}

int sr_state_reserve(const char *statedir, const char *id, const char *name, json_t *state,
		     char **ret_dir, int *ret_lock, struct sr_error *err)
{
	_cleanup_close_ int statefd = open(statedir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	_cleanup_close_ int dirfd = -1, lock = -1;
	_cleanup_free_ char *dir = NULL;
	int r;

	if (statefd < 0)
		return sr_error_errno(err, sr_negerrno(), "%s", statedir);
	/* The directory's own lock: one reservation at a time, so a name is taken once. */
	if (SR_RETRY(flock(statefd, LOCK_EX)) < 0)
		return sr_error_errno(err, sr_negerrno(), "lock %s", statedir);
	if (name && (r = name_free(statedir, name, err)) < 0)
		return r;
	if (asprintf(&dir, "%s/%s", statedir, id) < 0)
		return sr_error_errno(err, -ENOMEM, "state");
	if (mkdirat(statefd, id, 0700) < 0)
		return sr_error_errno(err, sr_negerrno(), "create %s", dir);
	/*
	 * state.json first, then the lock, which appears already held (made
	 * under another name, locked, renamed): whoever lists sees an entry
	 * with no lock (being made: skipped), or a live one with its state,
	 * never a lock it could take from a keeper that has not locked it yet.
	 */
	dirfd = openat(statefd, id, O_PATH | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
	if (dirfd < 0) {
		r = sr_error_errno(err, sr_negerrno(), "%s", dir);
		goto fail;
	}
	r = write_at(dirfd, state, err);
	if (r < 0)
		goto fail;
	lock =
	    openat(dirfd, "lock.new", O_RDONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (lock < 0 || flock(lock, LOCK_EX | LOCK_NB) < 0 ||
	    renameat(dirfd, "lock.new", dirfd, "lock") < 0) {
		r = sr_error_errno(err, sr_negerrno(), "lock %s", dir);
		(void)unlinkat(dirfd, "lock.new", 0);
		goto fail;
	}
	*ret_dir = steal_pointer(&dir);
	*ret_lock = steal_fd(&lock);
	return 0;
fail:
	sr_state_remove(dir, NULL);
	return r;
}
