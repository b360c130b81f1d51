/* SPDX-License-Identifier: MIT */
/*
 * Host paths a caller names, and what may be trusted on their way: which
 * symbolic links they may pass through (below), whose tree a directory is
 * in (sr_hostpath_tree_owner), and whether anyone but root and that owner
 * could have moved something else to its name (sr_hostpath_held, above
 * it).
 *
 * Which symbolic links a --bind source may pass through.
 *
 * A bind source is a path the caller wrote, but not every directory on it
 * is the caller's to vouch for: the agent writes its --bind directories,
 * and the agent's own files are whatever its author put there.
 * `agentdir/out -> ~` plus `--bind agentdir/out /out` handed the agent the
 * caller's home, ~/.bashrc to append to (security round 2, finding 6);
 * `agentdir/data -> ~` plus `--bind agentdir/data/cache` does the same one
 * level down. The kernel's fs.protected_symlinks stops neither: it applies
 * in sticky world-writable directories only, and an unprivileged caller's
 * agent runs as the caller, so its links are the caller's own.
 *
 * The rule: a link is followed only where root owns both the link and the
 * directory that holds it, and that directory is not in the agent's own
 * tree. That leaves the system's layout (/bin -> usr/bin, /var/run ->
 * /run, /home -> var/home): the agent is never host root, so it can plant
 * no such link, nor move one of root's (the directory is root's too), nor
 * with fs.protected_hardlinks (the default) hard-link one; another user
 * cannot either. The agent's tree (its directory, an executable file's
 * directory, --workspace DIR) is excluded whoever owns it: there a link is
 * its author's choice, even where a root caller's checkout made it root's.
 * Any other link, the caller's own included, is refused with what it
 * points to: the caller names that path instead, and so says which
 * directory is meant.
 *
 * The agent's own path and --workspace DIR are resolved the same way: a
 * root caller's `--workspace /tmp/u/link`, a link another user made in a
 * directory of theirs, gave the agent the root-only directory it pointed
 * to. So is deploy's AGENT.
 *
 * The walk is the kernel's, one component at a time (openat() with
 * O_NOFOLLOW from the previous component's fd), so each link is judged
 * where it is, and ".." is the kernel's too. It runs in the supervisor,
 * as the caller, where uids are the host's; the sandbox then opens the
 * resulting path, which holds no link, with RESOLVE_NO_SYMLINKS
 * (mounts-sources.c): a link swapped in between is refused, never followed.
 */
#include "hostpath.h"
#include "util.h"

#include <fcntl.h>
#include <grp.h>
#include <limits.h>
#include <pwd.h>
#include <sys/stat.h>
#include <sys/xattr.h>

/* The kernel's own limit on links in one lookup (MAXSYMLINKS). */
#define MAX_LINKS 40

/*
 * O_DIRECTORY first: an O_PATH open without it does not trigger an
 * automount (autofs home directories), and every component but the last
 * is a directory. ENOTDIR: a file or a link, opened as itself.
 */
static int open_component(int dir, const char *name)
{
	int fd = openat(dir, name, O_PATH | O_NOFOLLOW | O_DIRECTORY | O_CLOEXEC);

	if (fd < 0 && errno == ENOTDIR)
		fd = openat(dir, name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
	return fd < 0 ? sr_negerrno() : fd;
}

/* Whether path ("" is "/") is dir or lies beneath it. */
static bool beneath(const char *path, const char *dir)
{
	size_t n = strcmp(dir, "/") == 0 ? 0 : strlen(dir);

	return strncmp(path, dir, n) == 0 && (path[n] == '\0' || path[n] == '/');
}

static const char *in_tree(const char *path, const char *const *trees)
{
	for (size_t i = 0; trees && trees[i]; i++)
		if (beneath(path, trees[i]))
			return trees[i];
	return NULL;
}

struct link {
	const char *path; /* where the walk met it, no link before it */
	const char *target;
	const struct stat *st, *dir;
	const char *tree; /* the agent's tree it lies in, or NULL */
};

static int refuse(const char *what, const char *path, const struct link *l, struct sr_error *err)
{
	_cleanup_free_ char *real = realpath(path, NULL);
	char why[256], instead[PATH_MAX + 32] = "";

	if (l->tree)
		snprintf(why, sizeof(why),
			 "in the agent's own files (%s), where its author chose the target",
			 l->tree);
	else
		snprintf(
		    why, sizeof(why),
		    "owned by uid %u (its directory: uid %u), where an agent or another user "
		    "may have planted it; only root's links in root's directories are followed",
		    (unsigned)l->st->st_uid, (unsigned)l->dir->st_uid);
	if (real)
		snprintf(instead, sizeof(instead), " (%s)", real);
	return sr_error_msg(err, -ELOOP,
			    "%s %s: %s is a symbolic link to %s %s: name the path it leads to "
			    "instead%s",
			    what, path, l->path, l->target, why, instead);
}

/*
 * seen: the path walked so far, with no link in it ("/" is ""). Its
 * ".." is the kernel's: the component before is a directory (a mount's
 * root climbs to where it is mounted, which is that too).
 */
static int seen_push(char *seen, size_t size, const char *name)
{
	size_t n = strlen(seen);
	char *slash;

	if (strcmp(name, "..") == 0) {
		slash = strrchr(seen, '/');
		if (slash)
			*slash = '\0';
		return 0;
	}
	return snprintf(seen + n, size - n, "/%s", name) >= (int)(size - n) ? -ENAMETOOLONG : 0;
}

static int open_root(int *cur, struct stat *st, char *seen)
{
	sr_closep(cur);
	*cur = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (*cur < 0 || fstat(*cur, st) < 0)
		return sr_negerrno();
	seen[0] = '\0';
	return 0;
}

int sr_hostpath_resolve(const char *what, const char *path, const char *const *agent_trees,
			char **ret_path, struct sr_error *err)
{
	char rest[PATH_MAX], seen[PATH_MAX], target[PATH_MAX], name[NAME_MAX + 1];
	_cleanup_close_ int cur = -1;
	struct stat dir;
	const char *p = rest;
	int links = 0, r;

	if (path[0] != '/')
		return sr_error_msg(err, -EINVAL, "%s %s: not an absolute path", what, path);
	if (snprintf(rest, sizeof(rest), "%s", path) >= (int)sizeof(rest))
		return sr_error_errno(err, -ENAMETOOLONG, "%s %s", what, path);
	r = open_root(&cur, &dir, seen);
	if (r < 0)
		return sr_error_errno(err, r, "%s %s: open /", what, path);
	for (;;) {
		_cleanup_close_ int fd = -1;
		char at[PATH_MAX], spliced[PATH_MAX];
		struct link l;
		struct stat st;
		size_t len;
		ssize_t n;

		p += strspn(p, "/");
		if (!*p)
			break;
		len = strcspn(p, "/");
		if (len > NAME_MAX)
			return sr_error_errno(err, -ENAMETOOLONG, "%s %s", what, path);
		memcpy(name, p, len);
		name[len] = '\0';
		p += len;
		if (strcmp(name, ".") == 0)
			continue;
		fd = open_component(cur, name);
		if (fd < 0)
			return sr_error_errno(err, fd, "%s %s", what, path);
		if (fstat(fd, &st) < 0)
			return sr_error_errno(err, sr_negerrno(), "%s %s", what, path);
		if (!S_ISLNK(st.st_mode)) {
			if (*p && !S_ISDIR(st.st_mode))
				return sr_error_errno(err, -ENOTDIR, "%s %s", what, path);
			if (seen_push(seen, sizeof(seen), name) < 0)
				return sr_error_errno(err, -ENAMETOOLONG, "%s %s", what, path);
			sr_closep(&cur);
			cur = steal_fd(&fd);
			dir = st;
			continue;
		}
		n = readlinkat(fd, "", target, sizeof(target) - 1);
		if (n <= 0)
			return sr_error_errno(err, n < 0 ? sr_negerrno() : -ENOENT, "%s %s", what,
					      path);
		target[n] = '\0';
		if (snprintf(at, sizeof(at), "%s/%s", seen, name) >= (int)sizeof(at))
			return sr_error_errno(err, -ENAMETOOLONG, "%s %s", what, path);
		l = (struct link){at, target, &st, &dir, in_tree(seen, agent_trees)};
		if (l.tree || st.st_uid != 0 || dir.st_uid != 0)
			return refuse(what, path, &l, err);
		if (++links > MAX_LINKS)
			return sr_error_errno(err, -ELOOP, "%s %s", what, path);
		/* The rest of the path now starts with the link's target. */
		if (snprintf(spliced, sizeof(spliced), "%s%s", target, p) >= (int)sizeof(spliced))
			return sr_error_errno(err, -ENAMETOOLONG, "%s %s", what, path);
		memcpy(rest, spliced, sizeof(rest));
		p = rest;
		if (target[0] == '/' && (r = open_root(&cur, &dir, seen)) < 0)
			return sr_error_errno(err, r, "%s %s: open /", what, path);
	}
	*ret_path = strdup(seen[0] ? seen : "/");
	if (!*ret_path)
		return sr_error_errno(err, -ENOMEM, "%s %s", what, path);
	return 0;
}

char *sr_hostpath_absolute(const char *path)
{
	_cleanup_free_ char *cwd = NULL;
	char *abs;

	if (path[0] == '/')
		return strdup(path);
	cwd = getcwd(NULL, 0);
	if (!cwd || asprintf(&abs, "%s/%s", cwd, path) < 0)
		return NULL;
	return abs;
}

int sr_hostpath_resolve_arg(const char *what, const char *path, char **ret_path,
			    struct sr_error *err)
{
	_cleanup_free_ char *abs = sr_hostpath_absolute(path);

	if (!abs && path[0] != '/')
		return sr_error_errno(err, errno ? sr_negerrno() : -ENOMEM,
				      "%s '%s' is relative and the current directory is unknown",
				      what, path);
	if (!abs)
		return sr_error_errno(err, -ENOMEM, "%s %s", what, path);
	return sr_hostpath_resolve(what, abs, NULL, ret_path, err);
}

int sr_hostpath_tree_owner(int dir, uid_t *ret_uid, gid_t *ret_gid)
{
	_cleanup_close_ int cur = -1;
	struct stat st, up;

	if (fstat(dir, &st) < 0)
		return sr_negerrno();
	while (st.st_uid == 0) {
		int fd = openat(cur >= 0 ? cur : dir, "..", O_PATH | O_DIRECTORY | O_CLOEXEC);

		if (fd < 0)
			return sr_negerrno();
		sr_closep(&cur);
		cur = fd;
		if (fstat(cur, &up) < 0)
			return sr_negerrno();
		if (up.st_dev == st.st_dev && up.st_ino == st.st_ino)
			break; /* "/" */
		st = up;
	}
	*ret_uid = st.st_uid;
	*ret_gid = st.st_gid;
	return 0;
}

/*
 * Whether group gid is owner's own: the group of owner's name and primary
 * gid (Debian and Ubuntu make one per user, and a umask of 002 then makes
 * their directories group-writable), with no other member listed and no
 * other user's primary group. Debian's OpenSSH judges StrictModes so. A
 * directory service that lists no users (sssd's default) hides the
 * latter, which is why the name must match too.
 */
static bool own_group(gid_t gid, uid_t owner)
{
	const struct group *gr = getgrgid(gid);
	_cleanup_free_ char *group = gr ? strdup(gr->gr_name) : NULL;
	const struct passwd *pw = getpwuid(owner);
	bool own;

	if (!group || !pw || pw->pw_gid != gid || !sr_streq(pw->pw_name, group))
		return false;
	own = true;
	for (char **m = gr->gr_mem; own && *m; m++)
		own = sr_streq(*m, group);
	setpwent();
	while (own && (pw = getpwent()))
		own = pw->pw_gid != gid || pw->pw_uid == owner;
	endpwent();
	return own;
}

/*
 * Whether the directory opened as fd has an access ACL (named users or
 * groups); one that cannot be read is taken for one, but where its
 * filesystem has none (EOPNOTSUPP).
 */
static bool has_acl(int fd)
{
	char proc[64];

	snprintf(proc, sizeof(proc), "/proc/self/fd/%d", fd);
	return getxattr(proc, "system.posix_acl_access", NULL, 0) >= 0 ||
	       (errno != ENODATA && errno != EOPNOTSUPP);
}

/*
 * Whether only root and owner may change the names in directory fd (st):
 * it is one of theirs, and nobody else may write it, but where it is
 * sticky (then only an entry's owner renames it, and a directory moved in
 * from elsewhere needs the right to write it: allowed when sticky_ok) or
 * its group, owner's own, may (a group-writable mode with an ACL is a mask
 * over whoever the ACL names: not).
 */
static bool held_by(int fd, const struct stat *st, uid_t owner, bool sticky_ok)
{
	if (st->st_uid != 0 && st->st_uid != owner)
		return false;
	if (!(st->st_mode & (S_IWGRP | S_IWOTH)) || (sticky_ok && (st->st_mode & S_ISVTX)))
		return true;
	return !(st->st_mode & S_IWOTH) && own_group(st->st_gid, owner) && !has_acl(fd);
}

/*
 * The directory holding fd, a file (not a directory: no ".." of its own)
 * opened by path, absolute: path's directory opened with no link on its
 * way, and fd still at its name there. An fd, -ESTALE if not, or -errno.
 */
static int holder(const struct stat *st, const char *path)
{
	_cleanup_free_ char *dir = strdup(path);
	const char *leaf = strrchr(path, '/');
	_cleanup_close_ int d = -1;
	struct stat at;

	if (!dir)
		return -ENOMEM;
	if (!leaf || !leaf[1])
		return -EINVAL;
	dir[leaf == path ? 1 : leaf - path] = '\0';
	d = sr_openat2(AT_FDCWD, dir, O_PATH | O_DIRECTORY,
		       RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS);
	if (d < 0)
		return d;
	if (fstatat(d, leaf + 1, &at, AT_SYMLINK_NOFOLLOW) < 0)
		return sr_negerrno() == -ENOENT ? -ESTALE : sr_negerrno();
	if (at.st_dev != st->st_dev || at.st_ino != st->st_ino)
		return -ESTALE;
	return steal_fd(&d);
}

/* The directory above the directory dir: an fd, or -errno. */
static int parent_of(int dir)
{
	int fd = openat(dir, "..", O_PATH | O_DIRECTORY | O_CLOEXEC);

	return fd < 0 ? sr_negerrno() : fd;
}

static int refuse_above(int dir, const struct stat *st, uid_t owner, const char *what,
			const char *path, struct sr_error *err)
{
	char above[PATH_MAX], who[48] = "root", group[64];
	const struct group *gr = getgrgid(st->st_gid);

	if (sr_fd_path(dir, above, sizeof(above)) < 0)
		snprintf(above, sizeof(above), "a directory");
	if (owner != 0)
		snprintf(who, sizeof(who), "root and uid %u", (unsigned)owner);
	if (gr)
		snprintf(group, sizeof(group), "%s", gr->gr_name);
	else
		snprintf(group, sizeof(group), "%u", (unsigned)st->st_gid);
	return sr_error_msg(err, -EPERM,
			    "%s %s: %s, above it, lets users other than %s rename what it holds "
			    "(owner uid %u, group %s, mode %04o%s), so one of them could have "
			    "swapped in something of their choice; give a path whose directories "
			    "only %s can write",
			    what, path, above, who, (unsigned)st->st_uid, group,
			    (unsigned)(st->st_mode & 07777), has_acl(dir) ? ", an ACL" : "", who);
}

int sr_hostpath_held(int fd, uid_t owner, const char *what, const char *path, struct sr_error *err)
{
	_cleanup_close_ int cur = -1;
	struct stat st, up;
	bool dir;

	if (fstat(fd, &st) < 0)
		return sr_error_errno(err, sr_negerrno(), "%s %s", what, path);
	/* A file moves between directories with no right on it: sticky is no guard there. */
	dir = S_ISDIR(st.st_mode);
	cur = dir ? parent_of(fd) : holder(&st, path);
	for (;;) {
		if (cur == -ESTALE)
			return sr_error_msg(err, -ESTALE, "%s %s: replaced as it was checked", what,
					    path);
		if (cur < 0)
			return sr_error_errno(err, cur, "%s %s: the directories above it", what,
					      path);
		if (fstat(cur, &up) < 0)
			return sr_error_errno(err, sr_negerrno(), "%s %s: the directories above it",
					      what, path);
		if (up.st_dev == st.st_dev && up.st_ino == st.st_ino)
			return 0; /* "/" */
		if (!held_by(cur, &up, owner, dir))
			return refuse_above(cur, &up, owner, what, path, err);
		dir = true;
		st = up;
		fd = parent_of(cur);
		sr_closep(&cur);
		cur = fd;
	}
}

int sr_hostpath_entry_held(int dir, const char *name, uid_t owner, const char *what,
			   const char *path, struct sr_error *err)
{
	struct stat st, ent;

	if (fstat(dir, &st) < 0 || fstatat(dir, name, &ent, AT_SYMLINK_NOFOLLOW) < 0)
		return sr_error_errno(err, sr_negerrno(), "%s %s", what, path);
	/* A directory moves in from elsewhere only with the right to write it: sticky holds it. */
	if (!held_by(dir, &st, owner, S_ISDIR(ent.st_mode)))
		return refuse_above(dir, &st, owner, what, path, err);
	return sr_hostpath_held(dir, owner, what, path, err);
}

int sr_hostpath_owner_held(int fd, uid_t owner, const char *what, const char *path,
			   struct sr_error *err)
{
	return owner == 0 ? 0 : sr_hostpath_held(fd, owner, what, path, err);
}

int sr_hostpath_open_dir(const char *what, const char *path, struct sr_error *err)
{
	_cleanup_free_ char *resolved = NULL;
	int fd = sr_hostpath_resolve_arg(what, path, &resolved, err);

	if (fd < 0)
		return fd;
	fd = sr_openat2(AT_FDCWD, resolved, O_RDONLY | O_DIRECTORY,
			RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS);
	if (fd == -ELOOP)
		return sr_error_msg(err, -ELOOP,
				    "%s %s: a symbolic link was put on its way (%s) since it was "
				    "resolved: not followed",
				    what, path, resolved);
	return fd < 0 ? sr_error_errno(err, fd, "%s %s", what, path) : fd;
}
