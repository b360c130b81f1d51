/* SPDX-License-Identifier: MIT */
/*
 * Extraction is done here with *at() syscalls rather than with
 * archive_write_disk(): every rule is then ours and visible in one file,
 * and no path is ever resolved by the kernel except beneath dest with
 * symlinks refused.
 *
 * What users can rely on:
 * - names: a leading "./" and "." or empty components are dropped; an
 *   absolute name, a ".." component, or a name longer than PATH_MAX is an
 *   error. The entry "./" itself (tar -C dir .) is skipped.
 * - directories: missing parents are created with 0755; a listed
 *   directory gets its archive mode with owner rwx added, so that
 *   extraction into it can continue. The umask applies throughout
 *   (keep_modes: not, and the sticky bit is kept).
 * - regular files: archive mode & 0777 (umask applies, as for tar(1) run
 *   by an ordinary user; keep_modes: not): never setuid, setgid or
 *   sticky. mtime is kept.
 *   Owners in the archive are ignored.
 * - a later entry of the same name replaces an earlier file, symlink or
 *   hard link (as tar(1) does) by unlinking it first: nothing is ever
 *   written through an existing name. A directory is never replaced.
 * - symlinks: the target must be relative, made of leading ".." only
 *   ("../../lib/x", not "a/../../x"), with no more ".." than the link's
 *   own depth. Every directory above a link is a real directory (we never
 *   create one through a symlink), so the kernel resolves those ".."
 *   exactly as counted, and no chain of such links can climb out. With
 *   links_within_top (cp) the depth is counted from the entry's first
 *   component, the copy's top: "top/a/l" may climb one level, "top/l"
 *   none, and "top" itself may not be a link. cp puts the copy beside
 *   the caller's own files (~/), where a link that climbs to its
 *   destination directory, or a top-level "report -> .ssh", points at
 *   them.
 * - hard links: to a regular file already extracted, named like any
 *   entry (so inside the tree).
 * - devices, FIFOs, sockets: refused, naming the entry.
 * - at most SR_ARCHIVE_MAX_ENTRIES entries and max_bytes of file data
 *   (holes in sparse files count: the extent is what later copies cost;
 *   with holes_free only the data written, a snapshot's restore).
 *   A file the bound or a failure cut short is removed, not left
 *   half-written under its name.
 */
#include "archive.h"
#include "archive-internal.h"
#include "util.h"

#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <linux/openat2.h>
#include <locale.h>
#include <sys/stat.h>
#include <sys/syscall.h>

#define SR_ARCHIVE_MAX_ENTRIES 100000
#define EXPECTED_FORMATS       "(expected tar, tar.gz, tar.xz, tar.zst, tar.bz2 or zip)"

#define RESOLVE_STRICT (RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS)

SR_DEFINE_CLEANUP(archive_freep, struct archive *, sr_la.read_free)

struct extract {
	struct archive *a;
	int dest;
	const struct sr_extract_opts *o;
	struct sr_la_stream *s; /* with an idle bound or a cancel: its stream, else NULL */
	uint64_t max_bytes;	/* 0: no bound of our own */
	uint64_t total;
	uint64_t names; /* the entries' own cost (charge_entry()) */
	size_t entries;
	mode_t umask; /* applied by hand where fchmod() bypasses it */
	/* The last parent directory opened: archives list a directory's files together. */
	char parent[PATH_MAX];
	int parent_fd;
	char shown[256]; /* the current entry's name, safe to print */
	/*
	 * The regular files this extraction made: a hard link's target must
	 * be one of them, never a file dest had before (a copy into an
	 * existing directory of the caller's).
	 */
	struct sr_inode_map made;
};

/*
 * "./a//b/./c/" -> "a/b/c". Refuses what could name anything outside
 * dest: absolute names and ".." components. "" means dest itself.
 */
static int clean_path(const char *in, char *out, size_t len, const char **ret_why)
{
	size_t n = 0;

	*ret_why = in ? NULL : "entry has no usable name";
	if (in && in[0] == '/')
		*ret_why = "absolute path";
	if (*ret_why)
		return -EINVAL;
	while (*in) {
		size_t l = strcspn(in, "/");

		if (l == 2 && in[0] == '.' && in[1] == '.') {
			*ret_why = "path contains '..'";
			return -EINVAL;
		}
		if (l > 0 && !(l == 1 && in[0] == '.')) {
			if (n + (n > 0) + l + 1 > len) {
				*ret_why = "path too long";
				return -ENAMETOOLONG;
			}
			if (n > 0)
				out[n++] = '/';
			memcpy(out + n, in, l);
			n += l;
		}
		in += l;
		in += strspn(in, "/");
	}
	out[n] = '\0';
	return 0;
}

/* Whether dest has a directory of that name (a link to one is not one). */
static bool dir_at(int dest, const char *name)
{
	struct stat st;

	return fstatat(dest, name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISDIR(st.st_mode);
}

/*
 * A clean name's first component, as the options want it: renamed (cp's
 * DST), or checked against the names allowed (a snapshot's parts). file:
 * the entry is a regular file (not a hard link), for file_into_dir.
 */
static int map_top(const struct extract *x, char *path, size_t len, bool file, const char **ret_why)
{
	size_t l = strcspn(path, "/");

	if (x->o->tops) {
		for (const char *const *t = x->o->tops; *t; t++)
			if (strlen(*t) == l && strncmp(path, *t, l) == 0)
				return 0;
		*ret_why = "not a part the archive may have";
		return -EINVAL;
	}
	if (x->o->rename_top) {
		const char *top = x->o->rename_top;
		size_t nl = strlen(top);
		/* The top itself, a file, onto a directory: "top/" goes before its own name. */
		bool into = file && x->o->file_into_dir && !path[l] && dir_at(x->dest, top);
		size_t cut = into ? 0 : l, add = into ? nl + 1 : nl;

		if (strlen(path) - cut + add + 1 > len) {
			*ret_why = "path too long";
			return -ENAMETOOLONG;
		}
		memmove(path + add, path + cut, strlen(path + cut) + 1);
		memcpy(path, top, nl);
		if (into)
			path[nl] = '/';
	}
	return 0;
}

/*
 * A directory or link just made (type: S_IFDIR, S_IFLNK) goes to the
 * owner asked for (sr_extract_opts.chown) through what was made, never by
 * its name: whoever may write the directory (its owner) may swap the
 * name for a hard link to a file of root's they may link (sr_open_made()).
 * -ESTALE: it was swapped.
 */
static int give(const struct sr_extract_opts *o, int dirfd, const char *leaf, mode_t type)
{
	_cleanup_close_ int fd = -1;

	if (!o || !o->chown)
		return 0;
	fd = sr_open_made(dirfd, leaf, type);
	if (fd < 0)
		return fd;
	return fchownat(fd, "", o->owner_uid, o->owner_gid, AT_EMPTY_PATH) < 0 ? sr_negerrno() : 0;
}

static int give_error(const struct extract *x, int k, struct sr_error *err)
{
	if (k == -ESTALE)
		return sr_error_msg(err, k,
				    "extract %s: replaced by something else as it was made: not "
				    "given to the directory's owner",
				    x->shown);
	return sr_error_errno(err, k, "extract %s: chown", x->shown);
}

/* Whether directories already there are checked (owned_as_made()). */
static bool checks_owner(const struct sr_extract_opts *o)
{
	return o && (o->chown || o->owned);
}

/*
 * With chown (or owned), a directory already at a name must be of that
 * owner, as what the extraction makes is: a root caller's export into a
 * user's tree would otherwise write into, and chmod, a directory of
 * root's that the user renamed to that name (a rename within one
 * directory needs no right to what is moved). -EPERM if not.
 */
static int owned_as_made(const struct sr_extract_opts *o, int fd)
{
	struct stat st;

	if (!checks_owner(o))
		return 0;
	if (fstat(fd, &st) < 0)
		return sr_negerrno();
	return st.st_uid == o->owner_uid ? 0 : -EPERM;
}

/*
 * Opens directory `path` (clean, relative) beneath dest, creating what is
 * missing if asked (o: whose it is then; NULL: not creating). With chown
 * or owned, one component at a time, each checked (owned_as_made()).
 */
static int open_dir(int dest, const char *path, const struct sr_extract_opts *o)
{
	bool create = o != NULL;
	_cleanup_close_ int cur = -1;
	char buf[PATH_MAX], *comp, *save = NULL;
	int fd;

	if (!checks_owner(o)) {
		fd = sr_openat2(dest, *path ? path : ".", O_RDONLY | O_DIRECTORY, RESOLVE_STRICT);
		if (fd >= 0 || fd != -ENOENT || !create)
			return fd;
	}

	/* One component at a time: mkdirat() cannot create beneath with RESOLVE_*. */
	cur = sr_openat2(dest, ".", O_RDONLY | O_DIRECTORY, RESOLVE_STRICT);
	if (cur < 0)
		return cur;
	snprintf(buf, sizeof(buf), "%s", path);
	for (comp = strtok_r(buf, "/", &save); comp; comp = strtok_r(NULL, "/", &save)) {
		if (mkdirat(cur, comp, 0755) == 0) {
			int k = give(o, cur, comp, S_IFDIR);

			if (k < 0)
				return k;
		} else if (errno != EEXIST) {
			return sr_negerrno();
		}
		fd = sr_openat2(cur, comp, O_RDONLY | O_DIRECTORY, RESOLVE_STRICT);
		if (fd < 0)
			return fd;
		close(cur);
		cur = fd;
		if ((fd = owned_as_made(o, cur)) < 0)
			return fd;
	}
	return steal_fd(&cur);
}

static const char *open_dir_why(int k)
{
	switch (k) {
	case -ELOOP:
	case -EXDEV:
		return "a parent directory is a symbolic link";
	case -ENOTDIR:
		return "a parent is not a directory";
	case -ESTALE:
		return "a parent directory was replaced by something else as it was made";
	case -EPERM:
		return "a parent directory is of another owner than the one it is written as";
	default:
		return NULL;
	}
}

/* The parent directory of `path` (borrowed fd) and its last component. */
static int parent_of(struct extract *x, char *path, const char **ret_leaf, struct sr_error *err)
{
	char *slash = strrchr(path, '/');
	const char *why, *parent;
	int fd;

	if (slash)
		*slash = '\0';
	parent = slash ? path : "";
	if (x->parent_fd < 0 || strcmp(x->parent, parent) != 0) {
		fd = open_dir(x->dest, parent, x->o);
		if (fd < 0) {
			why = open_dir_why(fd);
			if (slash)
				*slash = '/';
			return why ? sr_error_msg(err, fd, "extract %s: %s", x->shown, why)
				   : sr_error_errno(err, fd, "extract %s", x->shown);
		}
		if (x->parent_fd >= 0)
			close(x->parent_fd);
		x->parent_fd = fd;
		snprintf(x->parent, sizeof(x->parent), "%s", parent);
	}
	if (slash)
		*slash = '/';
	*ret_leaf = slash ? slash + 1 : path;
	return x->parent_fd;
}

/* A name is about to be reused: remove an earlier non-directory entry. */
static int make_room(int dirfd, const char *leaf)
{
	struct stat st;

	if (fstatat(dirfd, leaf, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return sr_negerrno();
	if (S_ISDIR(st.st_mode))
		return -EISDIR;
	return unlinkat(dirfd, leaf, 0) < 0 ? sr_negerrno() : 0;
}

static bool fits(const struct extract *x, uint64_t bytes)
{
	return !x->max_bytes || (bytes <= x->max_bytes && x->total <= x->max_bytes - bytes);
}

static int limit_error(const struct extract *x, struct sr_error *err)
{
	if (x->o->limit_what)
		return sr_error_msg(err, -EFBIG, "extract %s: more than %s", x->shown,
				    x->o->limit_what);
	return sr_error_msg(err, -ENOSPC,
			    "extract %s: archive exceeds the disk limit of %" PRIu64 " bytes",
			    x->shown, x->max_bytes);
}

/* A name cannot be reused (make_room() failed). */
static int replace_error(const struct extract *x, int k, struct sr_error *err)
{
	if (k == -EISDIR)
		return sr_error_msg(err, k, "extract %s: would replace a directory", x->shown);
	return sr_error_errno(err, k, "extract %s", x->shown);
}

static int charge(struct extract *x, uint64_t bytes, struct sr_error *err)
{
	if (!fits(x, bytes))
		return limit_error(x, err);
	x->total += bytes;
	return 0;
}

static int write_error(struct extract *x, int k, struct sr_error *err)
{
	if ((k == -ENOSPC || k == -EDQUOT) && !x->o->limit_what)
		return sr_error_msg(err, -ENOSPC, "extract %s: archive exceeds the disk limit (%s)",
				    x->shown, strerror(-k));
	return sr_error_errno(err, k, "extract %s", x->shown);
}

/*
 * Data blocks come with their offset: a gap is a hole, made with lseek so
 * that a sparse file stays sparse, and charged unless holes_free. The
 * bound is checked before each write, so a compression bomb stops within
 * one block of the limit.
 */
static int copy_data(struct extract *x, struct archive_entry *e, int fd, struct sr_error *err)
{
	uint64_t pos = 0;
	int k;

	for (;;) {
		const void *buf;
		size_t size;
		la_int64_t off;
		int r = sr_la.data_block(x->a, &buf, &size, &off);

		if (r == ARCHIVE_EOF)
			break;
		if (x->s && sr_la_cancelled(x->s))
			return sr_la_idle_error(x->s, err);
		if (r != ARCHIVE_OK && r != ARCHIVE_WARN)
			return sr_error_msg(err, -EIO, "extract %s: %s", x->shown,
					    sr_la.error_string(x->a) ?: "read error");
		if (off < 0 || (uint64_t)off < pos)
			return sr_error_msg(
			    err, -EIO, "extract %s: corrupt archive (data out of order)", x->shown);
		k = charge(x, x->o->holes_free ? size : (uint64_t)off + size - pos, err);
		if (k < 0)
			return k;
		if ((uint64_t)off > pos && lseek(fd, off, SEEK_SET) < 0)
			return sr_error_errno(err, sr_negerrno(), "extract %s: seek", x->shown);
		k = sr_write_all(fd, buf, size);
		if (k < 0)
			return write_error(x, k, err);
		pos = (uint64_t)off + size;
	}
	/* A file that ends in a hole. */
	if (sr_la.entry_size_is_set(e) && sr_la.entry_size(e) > 0 &&
	    (uint64_t)sr_la.entry_size(e) > pos) {
		k = x->o->holes_free ? 0 : charge(x, (uint64_t)sr_la.entry_size(e) - pos, err);
		if (k < 0)
			return k;
		if (ftruncate(fd, sr_la.entry_size(e)) < 0)
			return write_error(x, sr_negerrno(), err);
	}
	return 0;
}

static int make_file(struct extract *x, struct archive_entry *e, int dirfd, const char *leaf,
		     struct sr_error *err)
{
	_cleanup_close_ int fd = -1;
	mode_t mode = sr_la.entry_mode(e) & 0777;
	struct stat st;
	int k = 0;

	/*
	 * Fail before writing anything when the header already says it
	 * cannot fit (its size is its extent: with holes_free, the blocks
	 * say).
	 */
	if (!x->o->holes_free && sr_la.entry_size_is_set(e) && sr_la.entry_size(e) > 0 &&
	    !fits(x, (uint64_t)sr_la.entry_size(e)))
		return limit_error(x, err);

	/* O_EXCL: never open an existing name, so never write through a link. */
	fd = openat(dirfd, leaf, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode);
	if (fd < 0 && errno == EEXIST) {
		k = make_room(dirfd, leaf);
		if (k < 0)
			return replace_error(x, k, err);
		fd =
		    openat(dirfd, leaf, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode);
	}
	if (fd < 0)
		return write_error(x, sr_negerrno(), err);
	/* Made here: a later hard link may name it (make_hardlink()). */
	if (fstat(fd, &st) < 0 || (k = sr_inode_map_add(&x->made, st.st_dev, st.st_ino, "")) < 0) {
		k = sr_error_errno(err, k < 0 ? k : sr_negerrno(), "extract %s", x->shown);
		(void)unlinkat(dirfd, leaf, 0);
		return k;
	}
	if (x->o->chown && fchown(fd, x->o->owner_uid, x->o->owner_gid) < 0) {
		k = sr_error_errno(err, sr_negerrno(), "extract %s: chown", x->shown);
		(void)unlinkat(dirfd, leaf, 0);
		return k;
	}
	if (x->o->keep_modes && fchmod(fd, mode) < 0) {
		k = sr_error_errno(err, sr_negerrno(), "extract %s: chmod", x->shown);
		(void)unlinkat(dirfd, leaf, 0);
		return k;
	}
	k = copy_data(x, e, fd, err);
	if (k < 0) {
		/* Nothing half-written under the entry's name (a bound, a stream cut). */
		(void)unlinkat(dirfd, leaf, 0);
		return k;
	}
	if (sr_la.entry_mtime_is_set(e)) {
		struct timespec ts[2] = {
		    {.tv_sec = sr_la.entry_mtime(e), .tv_nsec = sr_la.entry_mtime_nsec(e)},
		    {.tv_sec = sr_la.entry_mtime(e), .tv_nsec = sr_la.entry_mtime_nsec(e)},
		};

		/* A bogus timestamp is not worth failing the extraction for. */
		(void)futimens(fd, ts);
	}
	if (close(steal_fd(&fd)) < 0) {
		k = write_error(x, sr_negerrno(), err);
		(void)unlinkat(dirfd, leaf, 0);
		return k;
	}
	return 0;
}

static int make_dir(struct extract *x, struct archive_entry *e, int dirfd, const char *leaf,
		    struct sr_error *err)
{
	_cleanup_close_ int fd = -1;
	bool keep = x->o->keep_modes;
	mode_t mode = (sr_la.entry_mode(e) & (keep ? 01777 : 0777)) | 0700;
	int k;

	if (mkdirat(dirfd, leaf, mode) == 0) {
		k = give(x->o, dirfd, leaf, S_IFDIR);
		if (k < 0)
			return give_error(x, k, err);
		if (!keep)
			return 0;
		/* Made less the umask: its mode whole below. */
	} else if (errno != EEXIST) {
		return sr_error_errno(err, sr_negerrno(), "extract %s", x->shown);
	}
	fd = sr_openat2(dirfd, leaf, O_RDONLY | O_DIRECTORY, RESOLVE_STRICT);
	if (fd < 0)
		return sr_error_msg(err, fd, "extract %s: exists and is not a directory", x->shown);
	k = owned_as_made(x->o, fd);
	if (k < 0)
		return sr_error_msg(err, k,
				    "extract %s: a directory of another owner than uid %u, whom it "
				    "is written as, is there: not changed",
				    x->shown, (unsigned)x->o->owner_uid);
	/* An earlier entry created it implicitly, with 0755 (or it is the sandbox's /tmp). */
	if (fchmod(fd, keep ? mode : mode & ~x->umask) < 0)
		return sr_error_errno(err, sr_negerrno(), "extract %s: chmod", x->shown);
	return 0;
}

/* Leading ".." only, no more of them than the link's depth: see the top of the file. */
bool sr_archive_symlink_ok(const char *target, size_t depth)
{
	size_t ups = 0;
	bool named = false;

	if (!target || !*target || target[0] == '/' || strlen(target) >= PATH_MAX)
		return false;
	while (*target) {
		size_t l = strcspn(target, "/");

		if (l == 2 && target[0] == '.' && target[1] == '.') {
			if (named || ++ups > depth)
				return false;
		} else if (l > 0 && !(l == 1 && target[0] == '.')) {
			named = true;
		}
		target += l;
		target += strspn(target, "/");
	}
	return true;
}

static int make_symlink(struct extract *x, struct archive_entry *e, const char *path, int dirfd,
			const char *leaf, struct sr_error *err)
{
	const char *target = sr_la.entry_symlink(e) ?: sr_la.entry_symlink_utf8(e);
	bool within_top = x->o->links_within_top;
	size_t depth = 0;
	char shown[256];
	int k;

	for (const char *p = path; *p; p++)
		depth += *p == '/';
	/* Below the top, one level less: "top/l -> .." would be dest. */
	if ((within_top && depth == 0) ||
	    !sr_archive_symlink_ok(target, within_top ? depth - 1 : depth)) {
		sr_printable(target ? target : "(no name)", shown, sizeof(shown));
		return sr_error_msg(err, -EPERM,
				    "extract %s: symbolic link to '%s' leaves the %s%s", x->shown,
				    shown, within_top ? "copied tree" : "archive's tree",
				    within_top && depth == 0
					? " (it is the copy itself: copy what it leads to instead)"
					: "");
	}
	if (symlinkat(target, dirfd, leaf) < 0) {
		if (errno != EEXIST)
			return sr_error_errno(err, sr_negerrno(), "extract %s", x->shown);
		k = make_room(dirfd, leaf);
		if (k < 0)
			return replace_error(x, k, err);
		if (symlinkat(target, dirfd, leaf) < 0)
			return sr_error_errno(err, sr_negerrno(), "extract %s", x->shown);
	}
	k = give(x->o, dirfd, leaf, S_IFLNK);
	return k < 0 ? give_error(x, k, err) : 0;
}

static int make_hardlink(struct extract *x, struct archive_entry *e, const char *path, int dirfd,
			 const char *leaf, struct sr_error *err)
{
	const char *raw = sr_la.entry_hardlink(e) ?: sr_la.entry_hardlink_utf8(e), *why = NULL,
		   *tleaf;
	_cleanup_close_ int tfd = -1;
	char target[PATH_MAX], *slash;
	struct stat st;
	int k;

	if (clean_path(raw, target, sizeof(target), &why) < 0 || !*target ||
	    map_top(x, target, sizeof(target), false, &why) < 0)
		return sr_error_msg(err, -EPERM, "extract %s: hard link target: %s", x->shown,
				    why ?: "empty name");
	if (strcmp(target, path) == 0)
		return sr_error_msg(err, -EINVAL, "extract %s: hard link to itself", x->shown);
	slash = strrchr(target, '/');
	if (slash)
		*slash = '\0';
	tleaf = slash ? slash + 1 : target;
	tfd = open_dir(x->dest, slash ? target : "", NULL);
	/* Regular files only: a hard link to a symlink or device is refused as the original is. */
	if (tfd < 0 || fstatat(tfd, tleaf, &st, AT_SYMLINK_NOFOLLOW) < 0 || !S_ISREG(st.st_mode) ||
	    !sr_inode_map_get(&x->made, st.st_dev, st.st_ino))
		return sr_error_msg(err, -EPERM,
				    "extract %s: hard link target is not a regular file extracted "
				    "earlier",
				    x->shown);
	if (linkat(tfd, tleaf, dirfd, leaf, 0) == 0)
		return 0;
	if (errno != EEXIST)
		return sr_error_errno(err, sr_negerrno(), "extract %s: hard link", x->shown);
	k = make_room(dirfd, leaf);
	if (k < 0)
		return replace_error(x, k, err);
	if (linkat(tfd, tleaf, dirfd, leaf, 0) < 0)
		return sr_error_errno(err, sr_negerrno(), "extract %s: hard link", x->shown);
	return 0;
}

/* An entry's own cost, with bound_entries: a header block and its names. */
static int charge_entry(struct extract *x, struct archive_entry *e, const char *path,
			struct sr_error *err)
{
	const char *link = sr_la.entry_symlink(e) ?: sr_la.entry_hardlink(e);
	uint64_t cost = 512 + strlen(path) + (link ? strlen(link) : 0);

	if (!x->o->bound_entries || !x->max_bytes)
		return 0;
	if (cost > x->max_bytes || x->names > x->max_bytes - cost)
		return sr_error_msg(err, -EFBIG,
				    "extract %s: more than %s, in entries (512 bytes and their "
				    "names each)",
				    x->shown, x->o->limit_what ?: "the disk limit");
	x->names += cost;
	return 0;
}

static int extract_entry(struct extract *x, struct archive_entry *e, struct sr_error *err)
{
	const char *raw = sr_la.entry_pathname(e) ?: sr_la.entry_pathname_utf8(e), *why,
		   *leaf = NULL;
	mode_t type = sr_la.entry_filetype(e);
	char path[PATH_MAX];
	int dirfd, k;

	/* Entry names end up in messages on the user's terminal. */
	sr_printable(raw ? raw : "(no name)", x->shown, sizeof(x->shown));
	k = clean_path(raw, path, sizeof(path), &why);
	if (k < 0)
		return sr_error_msg(err, k == -EINVAL ? -EPERM : k, "extract %s: %s", x->shown,
				    why);
	if (!*path) {
		if (type == AE_IFDIR)
			return 0;
		return sr_error_msg(err, -EINVAL, "extract %s: empty name", x->shown);
	}
	k = charge_entry(x, e, path, err);
	if (k < 0)
		return k;
	k = map_top(x, path, sizeof(path),
		    type == AE_IFREG && !sr_la.entry_hardlink(e) && !sr_la.entry_hardlink_utf8(e),
		    &why);
	if (k < 0)
		return sr_error_msg(err, k == -EINVAL ? -EPERM : k, "extract %s: %s", x->shown,
				    why);
	if (!sr_la.entry_hardlink(e) && !sr_la.entry_hardlink_utf8(e)) {
		switch (type) {
		case AE_IFREG:
		case AE_IFDIR:
		case AE_IFLNK:
			break;
		case AE_IFCHR:
		case AE_IFBLK:
			return sr_error_msg(err, -EPERM, "extract %s: device nodes are not allowed",
					    x->shown);
		case AE_IFIFO:
			return sr_error_msg(err, -EPERM, "extract %s: FIFOs are not allowed",
					    x->shown);
		case AE_IFSOCK:
			return sr_error_msg(err, -EPERM, "extract %s: sockets are not allowed",
					    x->shown);
		default:
			return sr_error_msg(err, -EPERM, "extract %s: unsupported entry type 0%o",
					    x->shown, (unsigned)type);
		}
	}

	dirfd = parent_of(x, path, &leaf, err);
	if (dirfd < 0)
		return dirfd;
	if (sr_la.entry_hardlink(e) || sr_la.entry_hardlink_utf8(e))
		return make_hardlink(x, e, path, dirfd, leaf, err);
	if (type == AE_IFDIR)
		return make_dir(x, e, dirfd, leaf, err);
	if (type == AE_IFLNK)
		return make_symlink(x, e, path, dirfd, leaf, err);
	return make_file(x, e, dirfd, leaf, err);
}

static int open_archive(int fd, struct sr_la_stream *s, struct archive **ret, struct sr_error *err)
{
	_cleanup_(archive_freep) struct archive *a = NULL;
	struct stat st;
	int r;

	a = sr_la.read_new();
	if (!a)
		return sr_error_errno(err, -ENOMEM, "read archive");
	/*
	 * Explicit filters rather than filter_all: the latter falls back to
	 * running external programs (lrzip, lz4, ...) for formats built
	 * without a library, which has no place in sandbox setup.
	 */
	if (sr_la.filter_gzip(a) < ARCHIVE_WARN || sr_la.filter_bzip2(a) < ARCHIVE_WARN ||
	    sr_la.filter_xz(a) < ARCHIVE_WARN || sr_la.filter_zstd(a) < ARCHIVE_WARN ||
	    sr_la.format_tar(a) != ARCHIVE_OK || sr_la.format_zip(a) != ARCHIVE_OK)
		return sr_error_msg(err, -EIO, "read archive: %s",
				    sr_la.error_string(a) ?: "cannot enable formats");
	/* A file is read as open_fd() reads it: seeking, which a zip's modes need
	 * (archive-internal.h). */
	if (s && fstat(fd, &st) == 0 && S_ISREG(st.st_mode) &&
	    sr_la.set_seek(a, sr_la_stream_seek) != ARCHIVE_OK)
		return sr_error_msg(err, -EIO, "read archive: %s",
				    sr_la.error_string(a) ?: "cannot seek");
	/* Opening reads the first block to detect the format: failing here is "not an archive". */
	r = s ? sr_la.read_open(a, s, NULL, sr_la_stream_read, NULL)
	      : sr_la.open_fd(a, fd, 64 * 1024);
	if (r != ARCHIVE_OK)
		return sr_error_msg(err, -EINVAL, "read archive: %s " EXPECTED_FORMATS,
				    sr_la.error_string(a) ?: "cannot open");
	*ret = steal_pointer(&a);
	return 0;
}

static int extract_all(int archive_fd, int dest_dirfd, const struct sr_extract_opts *o,
		       struct sr_error *err)
{
	_cleanup_(archive_freep) struct archive *a = NULL;
	_cleanup_free_ struct sr_la_stream *s = NULL;
	struct extract x = {.dest = dest_dirfd, .o = o, .max_bytes = o->max_bytes, .parent_fd = -1};
	int k;

	if (o->idle_ms > 0 || o->cancel_fd > 0) {
		s = calloc(1, sizeof(*s));
		if (!s)
			return sr_error_errno(err, -ENOMEM, "read archive");
		*s = (struct sr_la_stream){.fd = archive_fd,
					   .idle_ms = o->idle_ms,
					   .cancel_fd = o->cancel_fd > 0 ? o->cancel_fd : -1};
		if (sr_la_nonblocking(archive_fd) < 0)
			return sr_error_errno(err, sr_negerrno(), "read archive");
	}
	x.s = s;
	k = open_archive(archive_fd, s, &a, err);
	if (k < 0)
		return s && (s->timed_out || s->cancelled) ? sr_la_idle_error(s, err) : k;
	x.a = a;
	/* There is no way to read the umask without setting it; nothing else runs meanwhile. */
	x.umask = umask(022);
	umask(x.umask);
	for (;;) {
		struct archive_entry *e;
		int r = sr_la.next_header(a, &e);

		if (r == ARCHIVE_EOF)
			break;
		if (r != ARCHIVE_OK && r != ARCHIVE_WARN) {
			const char *why = sr_la.error_string(a) ?: "read error";

			k = x.entries == 0 ? sr_error_msg(err, -EINVAL,
							  "read archive: %s " EXPECTED_FORMATS, why)
					   : sr_error_msg(err, -EIO, "read archive: %s", why);
			break;
		}
		if (s && sr_la_cancelled(s)) {
			k = sr_la_idle_error(s, err);
			break;
		}
		if (++x.entries > (o->max_entries ? o->max_entries : SR_ARCHIVE_MAX_ENTRIES)) {
			k = sr_error_msg(err, -E2BIG, "read archive: more than %zu entries",
					 o->max_entries ? o->max_entries : SR_ARCHIVE_MAX_ENTRIES);
			break;
		}
		k = extract_entry(&x, e, err);
		if (k < 0)
			break;
	}
	if (x.parent_fd >= 0)
		close(x.parent_fd);
	sr_inode_map_free(&x.made);
	if (k < 0 && s && (s->timed_out || s->cancelled))
		return sr_la_idle_error(s, err);
	return k < 0 ? k : 0;
}

int sr_archive_extract(int archive_fd, int dest_dirfd, uint64_t max_bytes, struct sr_error *err)
{
	const struct sr_extract_opts o = {.max_bytes = max_bytes};

	return sr_archive_extract_opts(archive_fd, dest_dirfd, &o, err);
}

int sr_archive_extract_opts(int archive_fd, int dest_dirfd, const struct sr_extract_opts *o,
			    struct sr_error *err)
{
	locale_t old = (locale_t)0;
	int k;

	k = sr_la_load(err);
	if (k < 0)
		return k;
	/*
	 * libarchive converts names to the locale's charset, and in the C
	 * locale (ours: nothing calls setlocale) a UTF-8 name in a zip or pax
	 * header has no conversion and comes back as NULL. Names are bytes on
	 * Linux and UTF-8 by convention: extract in C.UTF-8, for this thread
	 * only.
	 */
	if (sr_la.utf8)
		old = uselocale(sr_la.utf8);
	k = extract_all(archive_fd, dest_dirfd, o, err);
	if (sr_la.utf8)
		uselocale(old);
	return k;
}
