/* SPDX-License-Identifier: MIT */
/*
 * Applying a changes file to a host directory (changes.h, apply.h).
 *
 * The file may be crafted, the directory may have moved on: everything
 * is checked before anything is changed. First the file -- a private
 * copy of it, which is what is written too (changes-file.c): its manifest
 * (changes-file.c), then every entry -- only files/PATH and base/PATH of
 * paths it lists, of the type it lists, with the content its digest
 * says; no device, FIFO or socket, no set-uid or set-gid bit, no path
 * through a link or a file the changes make, a directory before what it
 * holds. A link may point anywhere: it is data, made, never followed.
 * Then the directory: every path the changes touch is compared with what
 * the sandbox saw (a conflict is named, and refused without --force),
 * and the caller must be able to make each change (write in its
 * directory; a root caller in another user's tree: that user's entries
 * only). A root caller's apply to another user's tree is made by a child
 * that is that user (as-owner.c). Only then are the changes
 * made, each beneath the directory's fd with RESOLVE_BENEATH |
 * RESOLVE_NO_SYMLINKS: no link is followed, on the way or at the end, and
 * a file is replaced by a rename of a complete new one, never written
 * through. A directory is made with its owner's rwx and given its own
 * mode once what it holds is in, deepest first (as tar does): a 0555
 * directory of the agent's takes its files.
 */
#include "apply.h"
#include "as-owner.h"
#include "changes.h"
#include "fault.h"
#include "hostpath.h"
#include "util.h"

#include <dirent.h>
#include <limits.h>
#include <sys/random.h>
#include <sys/stat.h>

#define BUF_SIZE 65536
/* Conflicts named in the message; the rest are counted. */
#define SHOWN_MAX    10
#define RESOLVE_HERE (RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS)

struct apply {
	struct sr_changes c;
	int file;	   /* the private copy of the changes file: what is checked is written */
	const char *where; /* the directory, as the caller named it */
	int dir;
	bool force;
	const struct sr_sink *sink;
	bool *skip;  /* per change: already as it should be */
	bool *seen;  /* per change: its files/ entry was met */
	bool *fresh; /* per change: a directory apply makes (the host has none there) */
	bool *late;  /* per change: a directory whose mode is set at the end */
	/* A root caller's apply to another user's tree: made as them, of their entries only. */
	bool owner_only;
	uid_t owner;
	gid_t owner_gid; /* the group of the directory owner was found at */
	char conflicts[SR_ERROR_MSG_MAX];
	size_t n_conflicts;
	struct sr_apply_report report;
	char buf[BUF_SIZE];
};

static int open_reader(int fd, struct sr_archive_reader **r, struct sr_changes *c,
		       struct sr_error *err)
{
	int k;

	if (lseek(fd, 0, SEEK_SET) < 0)
		return sr_error_errno(err, sr_negerrno(), "changes file");
	k = sr_archive_reader_open(fd, 0, r, err);
	if (k >= 0)
		k = sr_changes_read(*r, c, err);
	return k;
}

/* The change of path's directory: NULL for one at the top or one the changes leave. */
static const struct sr_change *parent_change(const struct apply *a, const char *path)
{
	const char *slash = strrchr(path, '/');
	char dir[PATH_MAX];

	if (!slash)
		return NULL;
	snprintf(dir, sizeof(dir), "%.*s", (int)(slash - path), path);
	return sr_changes_find(&a->c, dir);
}

/*
 * No path through a link or a file the changes make (applied, it would
 * fail with ELOOP or ENOTDIR, after what came before it), none in a
 * directory they delete, and a directory listed before what it holds.
 */
static int check_paths(struct apply *a, struct sr_error *err)
{
	for (size_t i = 0; i < a->c.n; i++) {
		const struct sr_change *ch = &a->c.v[i], *p = parent_change(a, ch->path);

		if (ch->op == SR_CHANGE_DELETED || !p)
			continue;
		if (p->op == SR_CHANGE_DELETED)
			return sr_error_msg(err, -EPERM,
					    "changes: %s is in %s, which they delete: refused (a "
					    "crafted file?)",
					    ch->path, p->path);
		if (p->node.type != SR_CHANGE_DIR)
			return sr_error_msg(
			    err, -EPERM,
			    "changes: %s goes through %s, a %s they make: refused (a "
			    "crafted file?)",
			    ch->path, p->path,
			    p->node.type == SR_CHANGE_LINK ? "symbolic link" : "file");
		if (p > ch)
			return sr_error_msg(err, -EPERM,
					    "changes: %s is listed before its directory (a crafted "
					    "file?)",
					    ch->path);
	}
	return 0;
}

/* "files/PATH" or "base/PATH" of a listed path, with what it must be. */
static int check_entry(struct apply *a, struct sr_archive_reader *r,
		       const struct sr_archive_entry *e, struct sr_error *err)
{
	bool files = strncmp(e->path, "files/", 6) == 0, base = strncmp(e->path, "base/", 5) == 0;
	const char *path = e->path + (files ? 6 : 5);
	struct sr_change *ch = (files || base) ? sr_changes_find(&a->c, path) : NULL;
	const struct sr_change_node *want;
	char shown[256], sha[SR_SHA256_HEX_LEN + 1];
	struct sr_sha256 h;
	int64_t size = 0;
	ssize_t n;

	sr_printable(e->path, shown, sizeof(shown));
	if (e->hardlink)
		return sr_error_msg(err, -EPERM, "changes: %s is a hard link: refused", shown);
	if (!S_ISREG(e->type) && !S_ISDIR(e->type) && !S_ISLNK(e->type))
		return sr_error_msg(err, -EPERM,
				    "changes: %s is a device, FIFO or socket: refused (a crafted "
				    "file?)",
				    shown);
	if (!ch || (files && ch->op == SR_CHANGE_DELETED) ||
	    (base && (ch->op == SR_CHANGE_ADDED || ch->base.type != SR_CHANGE_FILE)))
		return sr_error_msg(err, -EPERM, "changes: %s is not in its manifest: refused",
				    shown);
	want = files ? &ch->node : &ch->base;
	if ((want->type == SR_CHANGE_FILE && !S_ISREG(e->type)) ||
	    (want->type == SR_CHANGE_DIR && !S_ISDIR(e->type)) ||
	    (want->type == SR_CHANGE_LINK &&
	     (!S_ISLNK(e->type) || !sr_streq(e->link, want->target))))
		return sr_error_msg(err, -EPERM, "changes: %s is not what its manifest says",
				    shown);
	if (files && (e->perm & 06000))
		return sr_error_msg(err, -EPERM,
				    "changes: %s has a set-uid or set-gid bit: refused (a crafted "
				    "file?)",
				    shown);
	if (files) {
		const struct sr_change *p = parent_change(a, path);

		if (a->seen[ch - a->c.v])
			return sr_error_msg(err, -EPERM, "changes: %s is there twice", shown);
		/* Applied in this order: a directory made before what goes in it. */
		if (p && !a->seen[p - a->c.v])
			return sr_error_msg(
			    err, -EPERM, "changes: %s comes before its directory (a crafted file?)",
			    shown);
		a->seen[ch - a->c.v] = true;
	}
	if (want->type != SR_CHANGE_FILE)
		return 0;
	sr_sha256_init(&h);
	while ((n = sr_archive_reader_data(r, a->buf, sizeof(a->buf), err)) > 0) {
		sr_sha256_update(&h, a->buf, (size_t)n);
		size += n;
	}
	if (n < 0)
		return (int)n;
	sr_sha256_hex(&h, sha);
	if (size != want->size || strcmp(sha, want->sha256) != 0)
		return sr_error_msg(err, -EBADMSG,
				    "changes: %s: its content is not the one its manifest lists "
				    "(damaged or crafted)",
				    shown);
	return 0;
}

/* The whole file, before the directory is looked at. */
static int check_file(struct apply *a, int fd, struct sr_error *err)
{
	struct sr_archive_reader *r = NULL;
	struct sr_archive_entry e;
	int k = open_reader(fd, &r, &a->c, err);

	if (k >= 0) {
		a->skip = calloc(a->c.n + 1, sizeof(*a->skip));
		a->seen = calloc(a->c.n + 1, sizeof(*a->seen));
		a->fresh = calloc(a->c.n + 1, sizeof(*a->fresh));
		a->late = calloc(a->c.n + 1, sizeof(*a->late));
		if (!a->skip || !a->seen || !a->fresh || !a->late)
			k = sr_error_errno(err, -ENOMEM, "changes");
		else
			k = check_paths(a, err);
	}
	for (size_t i = 0; k >= 0 && i < a->c.n; i++)
		if (a->c.v[i].op != SR_CHANGE_DELETED && (a->c.v[i].node.mode & 06000))
			k = sr_error_msg(err, -EPERM,
					 "changes: %s has a set-uid or set-gid bit: refused (a "
					 "crafted file?)",
					 a->c.v[i].path);
	while (k >= 0 && (k = sr_archive_reader_next(r, &e, err)) > 0)
		k = check_entry(a, r, &e, err);
	for (size_t i = 0; k >= 0 && i < a->c.n; i++)
		if (a->c.v[i].op != SR_CHANGE_DELETED && !a->seen[i])
			k = sr_error_msg(err, -EBADMSG, "changes: %s has no content in the file",
					 a->c.v[i].path);
	sr_archive_reader_free(r);
	return k < 0 ? k : 0;
}

/* The parent of path in the directory (-ELOOP: a link on the way), and its last part. */
static int open_parent(struct apply *a, const char *path, const char **ret_leaf)
{
	const char *slash = strrchr(path, '/');
	char dir[PATH_MAX];

	*ret_leaf = slash ? slash + 1 : path;
	if (!slash)
		return sr_openat2(a->dir, ".", O_RDONLY | O_DIRECTORY, RESOLVE_HERE);
	snprintf(dir, sizeof(dir), "%.*s", (int)(slash - path), path);
	return sr_openat2(a->dir, dir, O_RDONLY | O_DIRECTORY, RESOLVE_HERE);
}

/* What the directory parent has at leaf: 1 with *ret, 0 none. */
static int host_node(struct apply *a, int parent, const char *leaf, struct sr_change_node *ret,
		     struct stat *ret_st)
{
	_cleanup_close_ int fd = -1;
	struct sr_sha256 h;
	ssize_t n;

	if (fstatat(parent, leaf, ret_st, AT_SYMLINK_NOFOLLOW) < 0)
		return errno == ENOENT ? 0 : sr_negerrno();
	*ret = (struct sr_change_node){.mode = ret_st->st_mode & 07777, .size = ret_st->st_size};
	if (S_ISDIR(ret_st->st_mode)) {
		ret->type = SR_CHANGE_DIR;
		return 1;
	}
	if (S_ISLNK(ret_st->st_mode)) {
		char target[PATH_MAX];

		n = readlinkat(parent, leaf, target, sizeof(target) - 1);
		if (n < 0)
			return sr_negerrno();
		target[n] = '\0';
		ret->type = SR_CHANGE_LINK;
		ret->target = strdup(target);
		return ret->target ? 1 : -ENOMEM;
	}
	if (!S_ISREG(ret_st->st_mode)) {
		ret->type = _SR_CHANGE_TYPE_MAX; /* something else: never what is expected */
		return 1;
	}
	ret->type = SR_CHANGE_FILE;
	fd = openat(parent, leaf, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		return sr_negerrno();
	sr_sha256_init(&h);
	while ((n = SR_RETRY(read(fd, a->buf, sizeof(a->buf)))) > 0)
		sr_sha256_update(&h, a->buf, (size_t)n);
	if (n < 0)
		return sr_negerrno();
	sr_sha256_hex(&h, ret->sha256);
	return 1;
}

static bool node_is(const struct sr_change_node *host, const struct sr_change_node *want)
{
	if (host->type != want->type)
		return false;
	if (want->type == SR_CHANGE_LINK)
		return sr_streq(host->target, want->target);
	if ((host->mode & 0777) != (want->mode & 0777))
		return false;
	return want->type == SR_CHANGE_DIR || strcmp(host->sha256, want->sha256) == 0;
}

static void conflict(struct apply *a, const char *path, const char *why)
{
	size_t n = strlen(a->conflicts);

	if (a->n_conflicts++ < SHOWN_MAX)
		snprintf(a->conflicts + n, sizeof(a->conflicts) - n, "%s%s (%s)", n ? "; " : "",
			 path, why);
}

/*
 * A directory the sandbox deleted, or made a file or a link: whatever is
 * in it on the host must be deleted by it too.
 */
static bool holds_unknown(struct apply *a, const char *path)
{
	_cleanup_close_ int fd = sr_openat2(a->dir, path, O_RDONLY | O_DIRECTORY, RESOLVE_HERE);
	DIR *d = fd >= 0 ? fdopendir(steal_fd(&fd)) : NULL;
	struct dirent *de;
	bool unknown = false;

	while (d && !unknown && (de = readdir(d))) {
		char child[PATH_MAX];
		const struct sr_change *ch;

		if (sr_streq(de->d_name, ".") || sr_streq(de->d_name, ".."))
			continue;
		snprintf(child, sizeof(child), "%s/%s", path, de->d_name);
		ch = sr_changes_find(&a->c, child);
		unknown = !ch || (ch->op != SR_CHANGE_DELETED && ch->base.type != SR_CHANGE_DIR);
	}
	if (d)
		closedir(d);
	return unknown;
}

/*
 * Whether the caller can make the change, known now rather than halfway:
 * write in its directory parent (one whose mode apply sets is made
 * writable first, and must be the caller's), and, a sticky one, own what
 * it replaces or deletes. A root caller's apply to another user's tree
 * is made as that user (as-owner.c), whose rights the kernel
 * enforces; a directory it writes in and an entry it changes must be
 * theirs, said here, before anything is changed, naming it (a directory
 * of root's, or a third user's, that the user moved into the tree).
 */
static int may_change(struct apply *a, const struct sr_change *ch, int parent,
		      const struct stat *st, struct sr_error *err)
{
	const struct sr_change *p = parent_change(a, ch->path);
	/* A directory of the host's whose mode changes: made writable first (make_changes). */
	bool set_first = p && p->op != SR_CHANGE_DELETED && p->node.type == SR_CHANGE_DIR &&
			 !a->skip[p - a->c.v] && !a->fresh[p - a->c.v];
	uid_t me = geteuid();
	struct stat dir;
	char proc[64];

	if (fstat(parent, &dir) < 0)
		return sr_error_errno(err, sr_negerrno(), "apply: %s", ch->path);
	if (a->owner_only && (dir.st_uid != a->owner || (st && st->st_uid != a->owner))) {
		bool its_dir = dir.st_uid != a->owner;

		return sr_error_msg(err, -EPERM,
				    "apply: %s: %s uid %u's, not the tree's owner's (uid %u), as "
				    "whom root applies: nothing changed",
				    ch->path, its_dir ? "its directory is" : "it is",
				    (unsigned)(its_dir ? dir.st_uid : st->st_uid),
				    (unsigned)a->owner);
	}
	/* Root's too: a read-only mount, NFS's root_squash, an immutable directory. */
	snprintf(proc, sizeof(proc), "/proc/self/fd/%d", parent);
	if (!set_first && access(proc, W_OK | X_OK) < 0)
		return sr_error_errno(err, sr_negerrno(),
				      "apply: nothing changed: %s: its directory", ch->path);
	if (me == 0)
		return 0;
	if (st && (dir.st_mode & S_ISVTX) && st->st_uid != me && dir.st_uid != me)
		return sr_error_errno(err, -EPERM,
				      "apply: nothing changed: %s: another user's, in a sticky "
				      "directory",
				      ch->path);
	if (st && S_ISDIR(st->st_mode) && ch->op != SR_CHANGE_DELETED &&
	    ch->node.type == SR_CHANGE_DIR && st->st_uid != me)
		return sr_error_msg(err, -EPERM,
				    "apply: %s: its mode is to change, and it is not yours "
				    "(nothing changed)",
				    ch->path);
	return 0;
}

/* A change against the directory as it is now. -ELOOP: a link on the way (never followed). */
static int check_one(struct apply *a, size_t i, struct sr_error *err)
{
	struct sr_change *ch = &a->c.v[i];
	const struct sr_change *p = parent_change(a, ch->path);
	/* In a directory apply makes: nothing of the host's there, nothing to check. */
	bool in_fresh = p && p->op != SR_CHANGE_DELETED && a->fresh[p - a->c.v];
	_cleanup_close_ int parent = -1;
	struct sr_change_node host = {0};
	const char *leaf;
	struct stat st;
	int k = 0;

	if (!in_fresh) {
		parent = open_parent(a, ch->path, &leaf);
		if (parent == -ELOOP || parent == -EXDEV)
			return sr_error_msg(
			    err, -ELOOP,
			    "apply: a directory on the way to %s is a symbolic link "
			    "on the host: not followed, nothing changed",
			    ch->path);
		if ((parent == -ENOENT || parent == -ENOTDIR) && ch->op == SR_CHANGE_DELETED) {
			a->skip[i] = true; /* already gone */
			return 0;
		}
		if (parent == -ENOENT || parent == -ENOTDIR)
			return sr_error_msg(err, -ENOENT,
					    "apply: %s: its directory is not on the host "
					    "(nothing changed)",
					    ch->path);
		if (parent < 0)
			return sr_error_errno(err, parent, "apply: %s", ch->path);
		k = host_node(a, parent, leaf, &host, &st);
	}
	if (k < 0) {
		free(host.target);
		return sr_error_errno(err, k, "apply: %s", ch->path);
	}
	if (ch->op != SR_CHANGE_DELETED && ch->node.type == SR_CHANGE_DIR)
		a->fresh[i] = k == 0 || host.type != SR_CHANGE_DIR;
	if (ch->op == SR_CHANGE_ADDED) {
		if (k > 0 && node_is(&host, &ch->node))
			a->skip[i] = true; /* already there */
		else if (k > 0)
			conflict(a, ch->path, "exists on the host");
	} else if (ch->op == SR_CHANGE_DELETED && k == 0) {
		a->skip[i] = true; /* already gone */
	} else if (ch->op == SR_CHANGE_MODIFIED && k > 0 && node_is(&host, &ch->node)) {
		a->skip[i] = true;
	} else if (k == 0) {
		conflict(a, ch->path, "gone from the host");
	} else if (!node_is(&host, &ch->base)) {
		conflict(a, ch->path, "changed on the host since");
	} else if (ch->host_changed) {
		conflict(a, ch->path, "changed on the host while the sandbox ran");
	} else if (ch->base.type == SR_CHANGE_DIR &&
		   (ch->op == SR_CHANGE_DELETED || ch->node.type != SR_CHANGE_DIR) &&
		   holds_unknown(a, ch->path)) {
		conflict(a, ch->path, "holds files the sandbox never saw");
	}
	free(host.target);
	if (!in_fresh && !a->skip[i])
		return may_change(a, ch, parent, k > 0 ? &st : NULL, err);
	return 0;
}

/*
 * Every change: what is made first (a directory before what it holds:
 * what is in one apply makes is not the host's), then the deletions, which
 * are made first but in directories whose mode is set before them.
 */
static int check_dir(struct apply *a, struct sr_error *err)
{
	int k = 0;

	for (size_t i = 0; k >= 0 && i < a->c.n; i++)
		if (a->c.v[i].op != SR_CHANGE_DELETED)
			k = check_one(a, i, err);
	for (size_t i = 0; k >= 0 && i < a->c.n; i++)
		if (a->c.v[i].op == SR_CHANGE_DELETED)
			k = check_one(a, i, err);
	return k < 0 ? k : 0;
}

/*
 * The mode of the directory (parent, leaf) itself. Never by its name: a
 * chmod by name follows a link, and whoever else may write the directory
 * can swap one in between our look at leaf and the chmod (a root
 * caller's chmod of /etc/shadow). The directory is opened without a link
 * (O_PATH: one of mode 0 too) and changed through /proc's link to exactly
 * that inode.
 */
static int chmod_dir(int parent, const char *leaf, mode_t mode)
{
	_cleanup_close_ int fd = sr_openat2(parent, leaf, O_PATH | O_DIRECTORY, RESOLVE_HERE);
	char proc[64];

	if (fd < 0)
		return fd;
	snprintf(proc, sizeof(proc), "/proc/self/fd/%d", fd);
	return chmod(proc, mode) < 0 ? sr_negerrno() : 0;
}

/*
 * The mode of change i's directory: first its own with the owner's rwx,
 * so that what goes in it can (a 0555 directory of the agent's, as tar
 * does it), then, final, its own, once what it holds is in.
 */
static int dir_mode(struct apply *a, size_t i, bool final, struct sr_error *err)
{
	const struct sr_change *ch = &a->c.v[i];
	mode_t mode = ch->node.mode & 0777;
	_cleanup_close_ int parent = -1;
	const char *leaf;
	int k;

	if (!final) {
		a->late[i] = (mode | 0700) != mode;
		mode |= 0700;
	}
	parent = open_parent(a, ch->path, &leaf);
	k = parent < 0 ? parent : chmod_dir(parent, leaf, mode);
	return k < 0 ? sr_error_errno(err, k, "apply: chmod %s", ch->path) : 0;
}

static int do_delete(struct apply *a, const struct sr_change *ch, struct sr_error *err)
{
	_cleanup_close_ int parent = -1;
	const char *leaf;

	parent = open_parent(a, ch->path, &leaf);
	if (parent < 0)
		return sr_error_errno(err, parent, "apply: delete %s", ch->path);
	if (unlinkat(parent, leaf, ch->base.type == SR_CHANGE_DIR ? AT_REMOVEDIR : 0) == 0 ||
	    errno == ENOENT) {
		a->report.deleted++;
		return 0;
	}
	/* --force keeps a directory holding what the sandbox never saw. */
	if (errno == ENOTEMPTY || errno == EEXIST) {
		sr_warn(a->sink, "apply: %s kept: it holds files the sandbox never saw", ch->path);
		return 0;
	}
	return sr_error_errno(err, sr_negerrno(), "apply: delete %s", ch->path);
}

/*
 * Writes a new file or link next to its place, then renames it over:
 * never through a name. 1: not made, a directory holding what the sandbox
 * never saw kept there (--force).
 */
static int do_put(struct apply *a, struct sr_archive_reader *r, const struct sr_change *ch,
		  struct sr_error *err)
{
	_cleanup_close_ int parent = -1, fd = -1;
	struct stat old;
	bool had;
	const char *leaf;
	char tmp[NAME_MAX + 1];
	uint32_t rnd = 0;
	int k = 0;

	parent = open_parent(a, ch->path, &leaf);
	if (parent < 0)
		return sr_error_errno(err, parent, "apply: %s", ch->path);
	had = fstatat(parent, leaf, &old, AT_SYMLINK_NOFOLLOW) == 0;
	if (ch->node.type == SR_CHANGE_DIR) {
		size_t i = (size_t)(ch - a->c.v);

		/* The host's directory: its mode set before the deletions (make_changes). */
		if (had && S_ISDIR(old.st_mode))
			return a->fresh[i] ? dir_mode(a, i, false, err) : 0;
		if (had && unlinkat(parent, leaf, 0) < 0)
			return sr_error_errno(err, sr_negerrno(), "apply: %s", ch->path);
		if (mkdirat(parent, leaf, 0700) < 0)
			return sr_error_errno(err, sr_negerrno(), "apply: mkdir %s", ch->path);
		return dir_mode(a, i, false, err);
	}
	(void)!getrandom(&rnd, sizeof(rnd), 0);
	snprintf(tmp, sizeof(tmp), ".sr-apply.%08x", rnd);
	if (ch->node.type == SR_CHANGE_LINK) {
		if (symlinkat(ch->node.target, parent, tmp) < 0)
			return sr_error_errno(err, sr_negerrno(), "apply: %s", ch->path);
	} else {
		ssize_t n;

		fd =
		    openat(parent, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
		if (fd < 0)
			return sr_error_errno(err, sr_negerrno(), "apply: %s", ch->path);
		while (k >= 0 && (n = sr_archive_reader_data(r, a->buf, sizeof(a->buf), err)) != 0)
			k = n < 0 ? (int)n : sr_write_all(fd, a->buf, (size_t)n);
		/* Its mode exactly (no umask), never a set-id bit. */
		if (k >= 0 && fchmod(fd, ch->node.mode & 0777) < 0)
			k = sr_negerrno();
		if (k >= 0 && close(steal_fd(&fd)) < 0)
			k = sr_negerrno();
	}
	/* A directory replaced by a file: it was emptied by the deletions before. */
	if (k >= 0 && had && S_ISDIR(old.st_mode) && unlinkat(parent, leaf, AT_REMOVEDIR) < 0)
		k = sr_negerrno();
	if (k >= 0 && renameat(parent, tmp, parent, leaf) < 0)
		k = sr_negerrno();
	if ((k == -ENOTEMPTY || k == -EEXIST) && a->force) {
		(void)unlinkat(parent, tmp, 0);
		sr_warn(a->sink,
			"apply: %s kept: it holds files the sandbox never saw (not made a %s)",
			ch->path, ch->node.type == SR_CHANGE_LINK ? "symbolic link" : "file");
		return 1;
	}
	if (k < 0) {
		(void)unlinkat(parent, tmp, 0);
		return err->code ? k : sr_error_errno(err, k, "apply: %s", ch->path);
	}
	return 0;
}

static int make_changes(struct apply *a, int fd, struct sr_error *err)
{
	struct sr_archive_reader *r = NULL;
	struct sr_changes again = {0};
	struct sr_archive_entry e;
	int k = 0;

	/* The host's directories whose mode changes, writable first: what goes in or out can. */
	for (size_t i = 0; k >= 0 && i < a->c.n; i++)
		if (a->c.v[i].op != SR_CHANGE_DELETED && a->c.v[i].node.type == SR_CHANGE_DIR &&
		    !a->skip[i] && !a->fresh[i])
			k = dir_mode(a, i, false, err);
	for (size_t i = 0; k >= 0 && i < a->c.n; i++)
		if (a->c.v[i].op == SR_CHANGE_DELETED && !a->skip[i])
			k = do_delete(a, &a->c.v[i], err);
	if (k >= 0)
		k = open_reader(fd, &r, &again, err);
	sr_changes_free(&again);
	while (k >= 0 && (k = sr_archive_reader_next(r, &e, err)) > 0) {
		struct sr_change *ch;

		if (strncmp(e.path, "files/", 6) != 0)
			continue;
		ch = sr_changes_find(&a->c, e.path + 6);
		if (!ch || a->skip[ch - a->c.v])
			continue;
		k = do_put(a, r, ch, err);
		if (k == 0 && ch->op == SR_CHANGE_ADDED)
			a->report.added++;
		else if (k == 0)
			a->report.modified++;
	}
	sr_archive_reader_free(r);
	/*
	 * Deepest first (by path, backwards): a directory's own mode once what
	 * it holds is in. After a failure too, as far as it goes: a directory
	 * left with its owner's rwx is more open than the agent made it.
	 */
	for (size_t j = a->c.n; j-- > 0;)
		if (a->late[a->c.by_path[j]]) {
			struct sr_error ignored = {0};
			int m = dir_mode(a, a->c.by_path[j], true, k < 0 ? &ignored : err);

			k = k < 0 ? k : m;
		}
	return k < 0 ? k : 0;
}

/* The checks, then the changes, as whoever this process is. */
static int apply_here(struct apply *a, struct sr_error *err)
{
	int k = check_dir(a, err);

	if (k < 0)
		return k;
	if (a->n_conflicts && !a->force)
		return sr_error_msg(
		    err, -EEXIST,
		    "apply: %zu conflict%s with %s, nothing changed: %s%s (review with "
		    "sandbox-run diff; --force applies them over the host's)",
		    a->n_conflicts, a->n_conflicts == 1 ? "" : "s", a->where, a->conflicts,
		    a->n_conflicts > SHOWN_MAX ? "; ..." : "");
	a->report.conflicts = a->n_conflicts;
	/* Test builds only (fault.h): a test rewrites the changes file here. */
	sr_fault_point("apply", "checked");
	k = make_changes(a, a->file, err);
	for (size_t i = 0; i < a->c.n; i++)
		a->report.unchanged += a->skip[i];
	return k;
}

/*
 * The directory, and who applies to it. A root caller's is resolved as
 * --workspace is (hostpath.h) and opened with RESOLVE_NO_SYMLINKS: a
 * plain open() followed what the directory's owner had put at its name
 * since (mv proj x; ln -s /etc proj), and root wrote the agent's
 * cron.d/x in /etc. An unprivileged caller's is opened as ever: what it
 * reaches, it may write anyway.
 */
static int open_target(struct apply *a, const char *dir, struct sr_error *err)
{
	int k;

	if (geteuid() != 0) {
		a->dir = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		return a->dir < 0 ? sr_error_errno(err, sr_negerrno(), "apply: %s", dir) : 0;
	}
	a->dir = sr_hostpath_open_dir("apply to", dir, err);
	if (a->dir < 0)
		return a->dir;
	k = sr_hostpath_tree_owner(a->dir, &a->owner, &a->owner_gid);
	if (k < 0)
		return sr_error_errno(err, k, "apply: %s: the directories above it", dir);
	a->owner_only = a->owner != 0;
	return sr_hostpath_owner_held(a->dir, a->owner, "apply to", dir, err);
}

/* The child that is the tree's owner (sr_as_owner()): the checks and changes. */
static int apply_in_child(void *arg, void *out, struct sr_error *err)
{
	struct apply *a = arg;
	int k = apply_here(a, err);

	memcpy(out, &a->report, sizeof(a->report));
	return k;
}

int sr_changes_apply(int fd, const char *dir, bool force, const struct sr_sink *sink,
		     struct sr_apply_report *ret, struct sr_error *err)
{
	struct apply *a = calloc(1, sizeof(*a));
	int k;

	if (!a)
		return sr_error_errno(err, -ENOMEM, "apply");
	a->force = force;
	a->sink = sink;
	a->file = a->dir = -1;
	/*
	 * One copy, read for the checks and again for the writes: the file
	 * itself, read twice, could be rewritten in between by whoever may
	 * write it (a root run's --changes FILE is its directory owner's),
	 * with content no digest vouched for, or entries reordered to fail
	 * half-way. Made here, before the child that may become the tree's
	 * owner, which reads it through the fd it inherits.
	 */
	k = sr_changes_copy(fd, &a->file, err);
	if (k >= 0)
		k = check_file(a, a->file, err);
	if (k < 0)
		goto out;
	if (!dir)
		dir = a->c.workspace;
	if (!dir) {
		k = sr_error_msg(
		    err, -EINVAL,
		    "apply: the sandbox had no host directory: say where with --to DIR");
		goto out;
	}
	a->where = dir;
	k = open_target(a, dir, err);
	if (k >= 0 && a->owner_only)
		k = sr_as_owner(a->owner, a->owner_gid, "apply", dir, apply_in_child, a, &a->report,
				sizeof(a->report), err);
	else if (k >= 0)
		k = apply_here(a, err);
	*ret = a->report;
out:
	sr_closep(&a->file);
	sr_closep(&a->dir);
	sr_changes_free(&a->c);
	free(a->skip);
	free(a->seen);
	free(a->fresh);
	free(a->late);
	free(a);
	return k;
}
