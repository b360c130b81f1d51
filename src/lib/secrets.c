/* SPDX-License-Identifier: MIT */
#include "secrets.h"
#include "env.h"
#include "proc.h"
#include "secmem.h"
#include "state.h"
#include "util.h"

#include <dirent.h>
#include <sys/file.h>
#include <sys/random.h>
#include <sys/resource.h>
#include <sys/stat.h>

/*
 * The process that holds a secret dumps no core: a crash of it (the
 * invoking CLI, a server and its keepers, forked from it) or a SIGQUIT
 * would write every secret it holds to ./core or a core dump store,
 * outside this 0600 one (proc.h: how, and why a limit of 1 byte). The
 * hard limit too, so that nothing it runs later raises it again. Not
 * PR_SET_DUMPABLE: that makes the process's /proc files root's, and its
 * children's, whose id maps an unprivileged supervisor writes.
 */
static int no_core_dumps(struct sr_error *err)
{
	int r = sr_proc_no_core_dumps();

	return r < 0 ? sr_error_errno(err, r, "secrets: setrlimit RLIMIT_CORE") : 0;
}

int sr_secret_check_names(const char *name, const char *key, struct sr_error *err)
{
	if (!sr_state_valid_name(name))
		return sr_error_msg(err, -EINVAL,
				    "bad deployment name '%s' (1-64 of letters, digits, '_', '.', "
				    "'-', starting with a letter or digit)",
				    name);
	if (key && !sr_env_valid_name(key, strlen(key)))
		return sr_error_msg(err, -EINVAL,
				    "bad secret name '%s' (an environment variable's: letters, "
				    "digits and '_', not starting with a digit)",
				    key);
	return 0;
}

/* The secrets directory flock()ed with op (sr_secret_hold): the fd, or -errno. */
static int lock_secrets(int op, struct sr_error *err)
{
	_cleanup_free_ char *top = NULL;
	int fd, r = sr_data_dir("secrets", &top, err);

	if (r < 0)
		return r;
	fd = open(top, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return sr_error_errno(err, sr_negerrno(), "secrets: %s", top);
	if (SR_RETRY(flock(fd, op)) < 0) {
		r = sr_negerrno();
		close(fd);
		return sr_error_errno(err, r, "secrets: lock %s", top);
	}
	return fd;
}

int sr_secret_hold(int *ret_fd, struct sr_error *err)
{
	int fd = lock_secrets(LOCK_SH, err);

	if (fd < 0)
		return fd;
	*ret_fd = fd;
	return 0;
}

/* <data>/secrets/NAME, made (0700) when create, else -ENOENT when missing. */
static int secrets_dir(const char *name, bool create, char **ret, struct sr_error *err)
{
	_cleanup_free_ char *top = NULL, *dir = NULL;
	struct stat st;
	int r = sr_data_dir("secrets", &top, err);

	if (r < 0)
		return r;
	if (asprintf(&dir, "%s/%s", top, name) < 0)
		return sr_error_errno(err, -ENOMEM, "secrets");
	if (!create && lstat(dir, &st) < 0 && errno == ENOENT)
		return -ENOENT;
	r = sr_private_dir(dir, err);
	if (r < 0)
		return r;
	*ret = steal_pointer(&dir);
	return 0;
}

/* Whether n is a value being written: .KEY.new-XXXXXXXX (sr_secret_set). */
static bool is_temp(const char *n)
{
	size_t len = strlen(n);

	return n[0] == '.' && len > 14 && strncmp(n + len - 13, ".new-", 5) == 0 &&
	       strspn(n + len - 8, "0123456789abcdef") == 8;
}

/*
 * Removes from dir the temp files of `secrets set`s killed before their
 * rename (SIGKILL, a crash, the power): each holds a value, and kept the
 * name's directory from being removed with its last secret. Called with
 * the secrets locked: a writer holds the lock, exclusively, for as long
 * as its temp file exists, so one seen under the lock has no writer left.
 */
static int remove_stale(const char *dir, struct sr_error *err)
{
	_cleanup_close_ int fd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	struct dirent *de;
	DIR *d = fd >= 0 ? fdopendir(fd) : NULL;

	if (!d)
		return sr_error_errno(err, sr_negerrno(), "secrets: %s", dir);
	fd = -1;
	while ((de = readdir(d)))
		if (is_temp(de->d_name) && unlinkat(dirfd(d), de->d_name, 0) < 0 &&
		    errno != ENOENT) {
			int r = sr_negerrno();

			closedir(d);
			return sr_error_errno(err, r, "secrets: remove %s/%s", dir, de->d_name);
		}
	closedir(d);
	return 0;
}

/*
 * After a change of dir's secrets, under the lock: a new random token in
 * dir/.stamp (sr_secret_stamp). Written over the old one in place, so
 * that the file is never missing: a reader that catches the write half
 * done reads a mix of the two tokens, which is neither, and so at worst
 * makes a warm pool again once more than needed.
 */
static int new_stamp(const char *dir, struct sr_error *err)
{
	_cleanup_free_ char *path = NULL;
	_cleanup_close_ int fd = -1;
	uint64_t token;
	ssize_t n;

	if (asprintf(&path, "%s/.stamp", dir) < 0)
		return sr_error_errno(err, -ENOMEM, "secrets");
	if (getrandom(&token, sizeof(token), 0) != sizeof(token))
		return sr_error_errno(err, sr_negerrno(), "secrets: getrandom");
	fd = open(path, O_WRONLY | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0)
		return sr_error_errno(err, sr_negerrno(), "secrets: create %s", path);
	n = SR_RETRY(pwrite(fd, &token, sizeof(token), 0));
	if (n != sizeof(token))
		return sr_error_errno(err, n < 0 ? sr_negerrno() : -EIO, "secrets: write %s", path);
	return 0;
}

int sr_secret_set(const char *name, const char *key, const char *value, size_t len,
		  struct sr_error *err)
{
	_cleanup_free_ char *dir = NULL, *tmp = NULL, *path = NULL;
	_cleanup_close_ int fd = -1, lock = -1;
	uint32_t rnd = 0;
	int r = sr_secret_check_names(name, key, err);

	if (r < 0)
		return r;
	/* The messages name the key, never the value. */
	if (len == 0)
		return sr_error_msg(err, -EINVAL,
				    "secret %s: empty value (sandbox-run secrets rm %s %s removes "
				    "it)",
				    key, name, key);
	if (memchr(value, '\0', len))
		return sr_error_msg(err, -EINVAL,
				    "secret %s: the value holds a NUL byte, which no environment "
				    "variable can",
				    key);
	if (len > SR_SECRET_MAX)
		return sr_error_msg(err, -EFBIG, "secret %s: the value is larger than %d KiB", key,
				    SR_SECRET_MAX / 1024);
	lock = lock_secrets(LOCK_EX, err);
	if (lock < 0)
		return lock;
	r = secrets_dir(name, true, &dir, err);
	if (r >= 0)
		r = remove_stale(dir, err);
	if (r < 0)
		return r;
	(void)!getrandom(&rnd, sizeof(rnd), 0);
	if (asprintf(&tmp, "%s/.%s.new-%08x", dir, key, rnd) < 0 ||
	    asprintf(&path, "%s/%s", dir, key) < 0)
		return sr_error_errno(err, -ENOMEM, "secret %s", key);
	/* 0600 whatever the umask: created so, and fchmod'ed in case the umask took more. */
	fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0)
		return sr_error_errno(err, sr_negerrno(), "secret %s: create %s", key, tmp);
	r = fchmod(fd, 0600) < 0 ? sr_negerrno() : 0;
	if (r == 0)
		r = sr_write_all(fd, value, len);
	if (r == 0 && fsync(fd) < 0)
		r = sr_negerrno();
	if (r == 0 && rename(tmp, path) < 0)
		r = sr_negerrno();
	if (r < 0) {
		(void)unlink(tmp);
		return sr_error_errno(err, r, "secret %s: write %s", key, path);
	}
	r = new_stamp(dir, err);
	return r < 0 ? sr_error_prefix(err, "secret %s set, but its change not marked", key) : 0;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

int sr_secret_list(const char *name, struct sr_strv *ret, struct sr_error *err)
{
	_cleanup_free_ char *dir = NULL;
	struct sr_strv keys = {0};
	struct dirent *de;
	DIR *d;
	int r = sr_secret_check_names(name, NULL, err);

	if (r < 0)
		return r;
	r = secrets_dir(name, false, &dir, err);
	if (r == -ENOENT) {
		*ret = keys;
		return 0;
	}
	if (r < 0)
		return r;
	d = opendir(dir);
	if (!d)
		return sr_error_errno(err, sr_negerrno(), "secrets: %s", dir);
	while ((de = readdir(d))) {
		/* Hidden names are values being written (.KEY.new-XXXXXXXX). */
		if (!sr_env_valid_name(de->d_name, strlen(de->d_name)))
			continue;
		if (sr_strv_push(&keys, de->d_name) < 0) {
			closedir(d);
			sr_strv_free(&keys);
			return sr_error_errno(err, -ENOMEM, "secrets");
		}
	}
	closedir(d);
	if (keys.n > 1)
		qsort(keys.items, keys.n, sizeof(*keys.items), cmp_str);
	*ret = keys;
	return 0;
}

/*
 * For a removal: the names checked, the secrets locked (LOCK_EX) in
 * *ret_lock, and NAME's directory; -ENOENT, said by the caller, where it
 * has none.
 */
static int lock_for_removal(const char *name, const char *key, int *ret_lock, char **ret_dir,
			    struct sr_error *err)
{
	_cleanup_close_ int lock = -1;
	_cleanup_free_ char *dir = NULL;
	int r = sr_secret_check_names(name, key, err);

	if (r < 0)
		return r;
	lock = lock_secrets(LOCK_EX, err);
	if (lock < 0)
		return lock;
	r = secrets_dir(name, false, &dir, err);
	if (r >= 0)
		r = remove_stale(dir, err);
	if (r < 0)
		return r;
	*ret_dir = steal_pointer(&dir);
	*ret_lock = steal_fd(&lock);
	return 0;
}

/* Whether dir holds a secret (a name sr_secret_list lists); true where it cannot tell. */
static bool holds_keys(const char *dir)
{
	struct dirent *de;
	DIR *d = opendir(dir);
	bool any = !d;

	while (d && !any && (de = readdir(d)))
		any = sr_env_valid_name(de->d_name, strlen(de->d_name));
	if (d)
		closedir(d);
	return any;
}

int sr_secret_remove(const char *name, const char *key, struct sr_error *err)
{
	_cleanup_free_ char *dir = NULL, *path = NULL, *stamp = NULL;
	_cleanup_close_ int lock = -1;
	int r = lock_for_removal(name, key, &lock, &dir, err);

	if (r == -ENOENT)
		return sr_error_msg(err, r, "no secret %s for '%s' (sandbox-run secrets ls %s)",
				    key, name, name);
	if (r < 0)
		return r;
	if (asprintf(&path, "%s/%s", dir, key) < 0 || asprintf(&stamp, "%s/.stamp", dir) < 0)
		return sr_error_errno(err, -ENOMEM, "secret %s", key);
	r = unlink(path) < 0 ? sr_negerrno() : 0;
	if (r < 0 && r != -ENOENT)
		return sr_error_errno(err, r, "secret %s: remove %s", key, path);
	if (holds_keys(dir)) {
		if (r == 0 && new_stamp(dir, err) < 0)
			return sr_error_prefix(err, "secret %s removed, but its change not marked",
					       key);
	} else {
		/*
		 * None left (the last one gone, or only a killed set's temp
		 * file there): its name's directory goes too (a name never
		 * deployed has no other), with its stamp, so that the name is
		 * as before its first secret.
		 */
		(void)unlink(stamp);
		(void)rmdir(dir);
	}
	if (r == -ENOENT)
		return sr_error_msg(err, r, "no secret %s for '%s' (sandbox-run secrets ls %s)",
				    key, name, name);
	return 0;
}

int sr_secret_remove_all(const char *name, struct sr_error *err)
{
	_cleanup_free_ char *dir = NULL;
	_cleanup_close_ int fd = -1, lock = -1;
	struct dirent *de;
	DIR *d;
	int r = lock_for_removal(name, NULL, &lock, &dir, err);

	if (r == -ENOENT)
		return 0;
	if (r < 0)
		return r;
	fd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	d = fd >= 0 ? fdopendir(fd) : NULL;
	if (!d)
		return sr_error_errno(err, sr_negerrno(), "secrets: %s", dir);
	fd = -1;
	while ((de = readdir(d)))
		if (!sr_streq(de->d_name, ".") && !sr_streq(de->d_name, ".."))
			(void)unlinkat(dirfd(d), de->d_name, 0);
	closedir(d);
	if (rmdir(dir) < 0)
		return sr_error_errno(err, sr_negerrno(), "secrets: remove %s", dir);
	return 0;
}

/* One secret's "KEY=VALUE", read from the open directory. */
static int load_one(int dirfd, const char *key, struct sr_strv *out, struct sr_error *err)
{
	_cleanup_close_ int fd = openat(dirfd, key, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
	_cleanup_free_ char *buf = NULL;
	size_t klen = strlen(key), len = 0;
	struct stat st;
	ssize_t n = 0;
	int r;

	if (fd < 0 || fstat(fd, &st) < 0)
		return sr_error_errno(err, sr_negerrno(), "secret %s", key);
	/* Checked on the opened file, so it cannot be swapped after the check. */
	if (!S_ISREG(st.st_mode) || st.st_uid != geteuid() || (st.st_mode & 077))
		return sr_error_msg(err, -EPERM,
				    "secret %s: not a regular file of yours closed to group and "
				    "others (set it again: sandbox-run secrets set)",
				    key);
	if (st.st_size > SR_SECRET_MAX)
		return sr_error_msg(err, -EFBIG, "secret %s: larger than %d KiB", key,
				    SR_SECRET_MAX / 1024);
	buf = malloc(klen + 1 + (size_t)st.st_size + 1);
	if (!buf)
		return sr_error_errno(err, -ENOMEM, "secret %s", key);
	memcpy(buf, key, klen);
	buf[klen] = '=';
	while (len < (size_t)st.st_size &&
	       (n = SR_RETRY(read(fd, buf + klen + 1 + len, (size_t)st.st_size - len))) > 0)
		len += (size_t)n;
	if (n < 0) {
		r = sr_negerrno();
		explicit_bzero(buf, klen + 1 + len);
		return sr_error_errno(err, r, "secret %s", key);
	}
	buf[klen + 1 + len] = '\0';
	r = memchr(buf + klen + 1, '\0', len) ? -EINVAL : sr_strv_push(out, buf);
	explicit_bzero(buf, klen + 1 + len);
	if (r == -EINVAL)
		return sr_error_msg(err, r, "secret %s: holds a NUL byte", key);
	if (r < 0)
		return sr_error_errno(err, r, "secret %s", key);
	return 0;
}

char **sr_secrets_pack(char *const *secrets, void *(*alloc)(size_t), size_t *ret_size)
{
	size_t n = 0, size = sizeof(char *);
	char **v, *p;

	for (; secrets && secrets[n]; n++)
		size += sizeof(char *) + strlen(secrets[n]) + 1;
	v = alloc(size);
	if (!v)
		return NULL;
	p = (char *)(v + n + 1);
	for (size_t i = 0; i < n; i++) {
		size_t len = strlen(secrets[i]) + 1;

		v[i] = memcpy(p, secrets[i], len);
		p += len;
	}
	v[n] = NULL;
	if (ret_size)
		*ret_size = size;
	return v;
}

int sr_secret_load(const char *name, char ***ret, struct sr_error *err)
{
	_cleanup_free_ char *dir = NULL;
	_cleanup_close_ int fd = -1;
	struct sr_strv keys = {0}, v = {0};
	int r = sr_secret_list(name, &keys, err);

	if (r < 0 || keys.n == 0)
		return r;
	r = no_core_dumps(err);
	if (r >= 0)
		r = secrets_dir(name, false, &dir, err);
	if (r >= 0) {
		fd = open(dir, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (fd < 0)
			r = sr_error_errno(err, sr_negerrno(), "secrets: %s", dir);
	}
	for (size_t i = 0; r >= 0 && i < keys.n; i++)
		r = load_one(fd, keys.items[i], &v, err);
	sr_strv_free(&keys);
	/*
	 * Read into ordinary memory, then moved whole into memory of its own
	 * that no child inherits: a server's keepers are forks of it. Nothing
	 * forks between the two (the caller's one thread is here).
	 */
	if (r >= 0 && !(*ret = sr_secrets_pack(v.items, sr_secmem_alloc, NULL)))
		r = sr_error_errno(err, sr_negerrno(), "secrets of '%s'", name);
	sr_strv_wipe(&v);
	return r < 0 ? r : 0;
}

void sr_secret_stamp(const char *name, struct sr_secret_stamp *ret)
{
	_cleanup_free_ char *top = NULL, *stamp = NULL;
	_cleanup_close_ int fd = -1, sfd = -1;
	struct sr_error err = {0};
	struct stat st;

	*ret = (struct sr_secret_stamp){0};
	if (sr_data_dir("secrets", &top, &err) < 0 || asprintf(&stamp, "%s/.stamp", name) < 0)
		return;
	fd = open(top, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0 || fstatat(fd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return;
	*ret = (struct sr_secret_stamp){
	    .dev = st.st_dev, .ino = st.st_ino, .mtime = st.st_mtim, .present = true};
	/* None (a directory set before stamps, or its last secret being removed): token 0. */
	sfd = openat(fd, stamp, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	if (sfd >= 0)
		(void)!SR_RETRY(read(sfd, &ret->token, sizeof(ret->token)));
}

bool sr_secret_stamp_eq(const struct sr_secret_stamp *a, const struct sr_secret_stamp *b)
{
	return a->present == b->present && a->dev == b->dev && a->ino == b->ino &&
	       a->mtime.tv_sec == b->mtime.tv_sec && a->mtime.tv_nsec == b->mtime.tv_nsec &&
	       a->token == b->token;
}
