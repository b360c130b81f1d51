/* SPDX-License-Identifier: MIT */
/*
 * Writing tar streams (archive.h): a tree walked with *at() calls, never
 * following a link, as pax for cp, snapshots, exports and changes; or
 * single entries (changes files).
 *
 * A file with holes is stored sparse (GNU sparse 1.0 in pax, which
 * libarchive and GNU tar read): its data extents from SEEK_DATA /
 * SEEK_HOLE, the holes not stored at all. `truncate -s 100T` in a
 * sandbox of 50 MB is a few hundred bytes of stream, not 100 TB of zeros
 * through the pipe and onto the host's disk (the outside review of cp,
 * finding C); extraction seeks over the holes (archive.c), so the copy
 * is sparse too.
 */
#include "archive.h"
#include "archive-internal.h"
#include "util.h"

#include <dirent.h>
#include <inttypes.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <sys/mman.h>
#include <sys/stat.h>

/* How deep a tree is walked: deeper is refused, not a stack overflow. */
#define WRITE_MAX_DEPTH 256
/* A hole shorter than this is stored as zeros: a map entry and a seek cost more. */
#define SPARSE_MIN_HOLE (64u << 10)
/*
 * At most this many data extents per file, so that the map (its text in
 * the stream, libarchive's list on either side) stays small whatever
 * the agent made; past them, the rest of the file is one extent.
 */
#define SPARSE_MAX_EXTENTS 4096
/*
 * libarchive takes a sparse file's holes as zeros written through
 * archive_write_data() and stores none of them; they come from a
 * read-only mapping of this size that no page of memory ever backs, so
 * a hole of 100 TB costs 400,000 calls, not 100 TB of memset.
 */
#define ZEROS_SIZE ((size_t)256 << 20)
/* A tar header block: what an entry costs the stream before its names and data. */
#define TAR_BLOCK 512

struct extent {
	uint64_t off, len;
};

struct sr_archive_writer {
	struct archive *a;
	struct archive_entry *e;
	uint64_t entries, skipped;
	bool hardlinks, read_own;
	struct sr_inode_map linked; /* o->hardlinks: where each file of several names was written */
	uint64_t data, max_bytes;   /* file data written so far, and its bound (0: none) */
	uint64_t names;		    /* what the entries cost besides their data (count_entry()) */
	const char *limit_what;
	locale_t old;
	struct sr_la_stream *s; /* with an idle bound, else NULL */
	const void *zeros;	/* ZEROS_SIZE bytes, mapped on first use */
	struct extent ext[SPARSE_MAX_EXTENTS];
	char buf[65536];
};

SR_DEFINE_CLEANUP(writer_freep, struct sr_archive_writer *, sr_archive_writer_free)

void sr_archive_writer_free(struct sr_archive_writer *w)
{
	if (!w)
		return;
	if (w->e)
		sr_la.entry_free(w->e);
	if (w->a)
		sr_la.write_free(w->a);
	if (w->zeros)
		munmap((void *)w->zeros, ZEROS_SIZE);
	free(w->s);
	sr_inode_map_free(&w->linked);
	if (sr_la.utf8)
		uselocale(w->old);
	free(w);
}

/* The stream's writer with an idle bound (archive-internal.h). */
static la_ssize_t stream_write(struct archive *a, void *ctx, const void *buf, size_t len)
{
	struct sr_la_stream *s = ctx;

	(void)a;
	for (;;) {
		ssize_t n = write(s->fd, buf, len);
		int k;

		if (n >= 0)
			return n;
		if (errno != EAGAIN && errno != EINTR)
			return -1;
		k = sr_la_wait(s, POLLOUT);
		if (k < 0) {
			errno = -k;
			return -1;
		}
	}
}

static int open_stream(struct sr_archive_writer *w, int out_fd, int idle_ms)
{
	if (idle_ms <= 0)
		return sr_la.write_open_fd(w->a, out_fd) == ARCHIVE_OK ? 0 : -EIO;
	w->s = calloc(1, sizeof(*w->s));
	if (!w->s)
		return -ENOMEM;
	*w->s = (struct sr_la_stream){.fd = out_fd, .idle_ms = idle_ms, .cancel_fd = -1};
	if (sr_la_nonblocking(out_fd) < 0)
		return sr_negerrno();
	return sr_la.write_open(w->a, w->s, NULL, stream_write, NULL) == ARCHIVE_OK ? 0 : -EIO;
}

int sr_archive_writer_new(int out_fd, const struct sr_write_opts *o, struct sr_archive_writer **ret,
			  struct sr_error *err)
{
	_cleanup_(writer_freep) struct sr_archive_writer *w = NULL;
	int k = sr_la_load_writer(err);

	if (k < 0)
		return k;
	w = calloc(1, sizeof(*w));
	if (!w)
		return sr_error_errno(err, -ENOMEM, "write archive");
	/* Names are bytes, UTF-8 by convention: as for extraction (archive.c). */
	if (sr_la.utf8)
		w->old = uselocale(sr_la.utf8);
	w->a = sr_la.write_new();
	w->e = sr_la.entry_new();
	if (!w->a || !w->e)
		return sr_error_errno(err, -ENOMEM, "write archive");
	/* pax restricted: ustar where it can, pax headers for long names and big files. */
	if (sr_la.write_format_pax(w->a) != ARCHIVE_OK ||
	    (o->compress && sr_la.write_filter_zstd(w->a) != ARCHIVE_OK) ||
	    sr_la.write_last_block(w->a, 1) != ARCHIVE_OK)
		return sr_error_msg(err, -EIO, "write archive: %s",
				    sr_la.error_string(w->a) ?: "cannot start");
	w->max_bytes = o->max_bytes;
	w->limit_what = o->limit_what;
	w->hardlinks = o->hardlinks;
	w->read_own = o->read_own;
	k = open_stream(w, out_fd, o->idle_ms);
	if (k < 0)
		return k == -EIO ? sr_error_msg(err, k, "write archive: %s",
						sr_la.error_string(w->a) ?: "cannot start")
				 : sr_error_errno(err, k, "write archive");
	*ret = steal_pointer(&w);
	return 0;
}

/*
 * What went wrong writing, for path's entry (or the stream's end): the
 * system's word for a full or failing disk ("No space left on device",
 * not libarchive's "Write error"), libarchive's for the rest.
 */
static int write_failed(struct sr_archive_writer *w, const char *path, struct sr_error *err)
{
	int e = sr_la.archive_errno(w->a);
	char shown[256];

	if (w->s && w->s->timed_out)
		return sr_la_idle_error(w->s, err);
	sr_printable(path, shown, sizeof(shown));
	if (e == ENOSPC || e == EDQUOT || e == EFBIG || e == EIO || e == EROFS)
		return sr_error_errno(err, -e, "archive %s", shown);
	return sr_error_msg(err, -EIO, "archive %s: %s", shown,
			    sr_la.error_string(w->a) ?: "write error");
}

static int write_node(struct sr_archive_writer *w, int dirfd, const char *name, char *path,
		      size_t depth, bool recurse, struct sr_error *err);

static int write_dir(struct sr_archive_writer *w, int fd, char *path, size_t depth,
		     struct sr_error *err)
{
	DIR *d = fdopendir(fd);
	struct dirent *de;
	size_t len = strlen(path);
	int k = 0;

	if (!d) {
		close(fd);
		return sr_error_errno(err, sr_negerrno(), "archive %s", path);
	}
	while (k >= 0 && (errno = 0, de = readdir(d))) {
		if (sr_streq(de->d_name, ".") || sr_streq(de->d_name, ".."))
			continue;
		if (len + 1 + strlen(de->d_name) >= PATH_MAX) {
			k = sr_error_msg(err, -ENAMETOOLONG, "archive %s/...: path too long", path);
			break;
		}
		path[len] = '/';
		strcpy(path + len + 1, de->d_name);
		k = write_node(w, dirfd(d), de->d_name, path, depth + 1, true, err);
		path[len] = '\0';
	}
	if (k >= 0 && !de && errno)
		k = sr_error_errno(err, sr_negerrno(), "archive %s", path);
	closedir(d);
	return k;
}

static int write_file_data(struct sr_archive_writer *w, int fd, uint64_t size, const char *path,
			   struct sr_error *err)
{
	uint64_t done = 0;

	/* What it had when its header was written: a file growing meanwhile is cut there. */
	while (done < size) {
		ssize_t n = SR_RETRY(pread(fd, w->buf, sizeof(w->buf), (off_t)done));

		if (n < 0)
			return sr_error_errno(err, sr_negerrno(), "archive %s", path);
		if (n == 0)
			break; /* shrank: libarchive pads the entry with zeros */
		if ((uint64_t)n > size - done)
			n = (ssize_t)(size - done);
		if (sr_la.write_data(w->a, w->buf, (size_t)n) != n)
			return write_failed(w, path, err);
		done += (uint64_t)n;
	}
	return 0;
}

/*
 * The data extents of fd's first size bytes (SEEK_DATA, SEEK_HOLE) into
 * w->ext, holes shorter than SPARSE_MIN_HOLE counted as data: how many,
 * or 0 when the file is better stored whole (no such hole, or a file
 * system that cannot say). A file of holes alone has one extent of
 * length 0 at its end, which libarchive stores as "all hole".
 */
static size_t find_extents(struct sr_archive_writer *w, int fd, uint64_t size)
{
	uint64_t pos = 0;
	size_t n = 0;

	while (pos < size) {
		off_t data = lseek(fd, (off_t)pos, SEEK_DATA), hole;

		if (data < 0 && errno == ENXIO)
			break; /* a hole to the end */
		if (data < 0 || (hole = lseek(fd, data, SEEK_HOLE)) < 0)
			return 0;
		if ((uint64_t)data >= size)
			break;
		if ((uint64_t)hole > size)
			hole = (off_t)size;
		if (n > 0 &&
		    (uint64_t)data - (w->ext[n - 1].off + w->ext[n - 1].len) < SPARSE_MIN_HOLE) {
			w->ext[n - 1].len = (uint64_t)hole - w->ext[n - 1].off;
		} else if (n == SPARSE_MAX_EXTENTS) {
			w->ext[n - 1].len = size - w->ext[n - 1].off;
			break;
		} else {
			w->ext[n++] = (struct extent){(uint64_t)data, (uint64_t)(hole - data)};
		}
		pos = (uint64_t)hole;
	}
	if (n == 0) {
		w->ext[n++] = (struct extent){size, 0};
		return size > 0 ? n : 0;
	}
	if (w->ext[0].off < SPARSE_MIN_HOLE) {
		w->ext[0].len += w->ext[0].off;
		w->ext[0].off = 0;
	}
	if (size - (w->ext[n - 1].off + w->ext[n - 1].len) < SPARSE_MIN_HOLE)
		w->ext[n - 1].len = size - w->ext[n - 1].off;
	return n == 1 && w->ext[0].off == 0 && w->ext[0].len == size ? 0 : n;
}

/* len bytes of hole: zeros libarchive skips (ZEROS_SIZE). */
static int write_hole(struct sr_archive_writer *w, uint64_t len, const char *path,
		      struct sr_error *err)
{
	if (!w->zeros) {
		void *z = mmap(NULL, ZEROS_SIZE, PROT_READ,
			       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);

		if (z == MAP_FAILED)
			return sr_error_errno(err, sr_negerrno(), "archive %s", path);
		w->zeros = z;
	}
	while (len > 0) {
		size_t n = len < ZEROS_SIZE ? (size_t)len : ZEROS_SIZE;

		if (sr_la.write_data(w->a, w->zeros, n) != (la_ssize_t)n)
			return write_failed(w, path, err);
		len -= n;
	}
	return 0;
}

/*
 * A sparse file's data, extent by extent, holes in between. libarchive
 * wants each extent whole: one that shrank meanwhile is padded with
 * zeros.
 */
static int write_sparse_data(struct sr_archive_writer *w, int fd, uint64_t size, size_t n_ext,
			     const char *path, struct sr_error *err)
{
	uint64_t pos = 0;
	int k;

	for (size_t i = 0; i < n_ext; i++) {
		const struct extent *x = &w->ext[i];
		uint64_t done = 0;

		k = write_hole(w, x->off - pos, path, err);
		while (k >= 0 && done < x->len) {
			size_t want = x->len - done < sizeof(w->buf) ? (size_t)(x->len - done)
								     : sizeof(w->buf);
			ssize_t n = SR_RETRY(pread(fd, w->buf, want, (off_t)(x->off + done)));

			if (n < 0)
				return sr_error_errno(err, sr_negerrno(), "archive %s", path);
			if (n == 0) {
				k = write_hole(w, x->len - done, path, err);
				break;
			}
			if (sr_la.write_data(w->a, w->buf, (size_t)n) != n)
				return write_failed(w, path, err);
			done += (uint64_t)n;
		}
		if (k < 0)
			return k;
		pos = x->off + x->len;
	}
	return write_hole(w, size - pos, path, err);
}

/*
 * The entry set up in w->e, as path's, counted against w->max_bytes as
 * data is, in a budget of its own: a header block and its names each.
 * A walk of the agent's tree can meet names it never holds at once, and
 * they cost no data: a directory of 20,000 links of one empty file,
 * moved into a directory the walk has yet to open each time the walk
 * opens it, was walked 877 times, a snapshot of 91 MB (26 GB of tar)
 * from a 50 MB disk that held next to nothing.
 */
static int count_entry(struct sr_archive_writer *w, const char *path, struct sr_error *err)
{
	const char *link = sr_la.entry_symlink(w->e) ?: sr_la.entry_hardlink(w->e);
	uint64_t cost = TAR_BLOCK + strlen(path) + (link ? strlen(link) : 0);
	char shown[256];

	if (w->max_bytes && (cost > w->max_bytes || w->names > w->max_bytes - cost)) {
		sr_printable(path, shown, sizeof(shown));
		return sr_error_msg(err, -EFBIG,
				    "archive %s: more than %" PRIu64
				    " bytes of entries (a %d-byte header and its names each)%s%s",
				    shown, w->max_bytes, TAR_BLOCK, w->limit_what ? ", " : "",
				    w->limit_what ? w->limit_what : "");
	}
	w->names += cost;
	return 0;
}

/* The entry set up in w->e, as path's: written, and counted. */
static int write_header(struct sr_archive_writer *w, const char *path, struct sr_error *err)
{
	int k = count_entry(w, path, err);

	if (k < 0)
		return k;
	/*
	 * ARCHIVE_WARN: written, a name (or link target) that is not UTF-8
	 * kept as its bytes (pax's hdrcharset=BINARY), as tar keeps it. Taken
	 * for a failure, one such name the agent made ended the whole stream:
	 * no diff, apply, cp or snapshot of the sandbox at all.
	 */
	if (sr_la.write_header(w->a, w->e) < ARCHIVE_WARN)
		return write_failed(w, path, err);
	w->entries++;
	return 0;
}

static int write_link(struct sr_archive_writer *w, int dirfd, const char *name, const char *path,
		      struct sr_error *err)
{
	char target[PATH_MAX];
	ssize_t n = readlinkat(dirfd, name, target, sizeof(target) - 1);

	if (n < 0)
		return sr_error_errno(err, sr_negerrno(), "archive %s", path);
	target[n] = '\0';
	sr_la.entry_set_filetype(w->e, AE_IFLNK);
	sr_la.entry_set_symlink(w->e, target);
	return write_header(w, path, err);
}

/*
 * A file of several names (w->hardlinks): 1 when another of them was
 * written already, this one then written as a link to it; 0 when it is
 * the first, noted for the rest.
 */
static int write_hardlink(struct sr_archive_writer *w, const struct stat *st, const char *path,
			  struct sr_error *err)
{
	const char *first = sr_inode_map_get(&w->linked, st->st_dev, st->st_ino);
	int k = first ? 0 : sr_inode_map_add(&w->linked, st->st_dev, st->st_ino, path);

	if (k < 0)
		return sr_error_errno(err, k, "archive %s", path);
	if (!first)
		return 0;
	/* Its data is in the stream already: a name more, no byte more. */
	sr_la.entry_set_hardlink(w->e, first);
	sr_la.entry_set_size(w->e, 0);
	k = write_header(w, path, err);
	return k < 0 ? k : 1;
}

/* A regular file's data (n_ext extents of w->ext, or whole), counted against w->max_bytes. */
static int count_data(struct sr_archive_writer *w, uint64_t size, size_t n_ext, const char *path,
		      struct sr_error *err)
{
	uint64_t stored = n_ext ? 0 : size;

	for (size_t i = 0; i < n_ext; i++)
		stored += w->ext[i].len;
	if (w->max_bytes && (stored > w->max_bytes || w->data > w->max_bytes - stored)) {
		char shown[256];

		sr_printable(path, shown, sizeof(shown));
		return sr_error_msg(
		    err, -EFBIG, "archive %s: more than %" PRIu64 " bytes of files%s%s", shown,
		    w->max_bytes, w->limit_what ? ", " : "", w->limit_what ? w->limit_what : "");
	}
	w->data += stored;
	return 0;
}

/* A regular file, opened as fd: its entry, then its data. */
static int write_file(struct sr_archive_writer *w, int fd, const struct stat *st, const char *path,
		      struct sr_error *err)
{
	size_t n_ext;
	int k;

	if (st->st_nlink > 1 && w->hardlinks) {
		k = write_hardlink(w, st, path, err);
		if (k != 0)
			return k < 0 ? k : 0;
	}
	/* The size first: libarchive refuses extents past it. */
	sr_la.entry_set_size(w->e, st->st_size);
	n_ext = find_extents(w, fd, (uint64_t)st->st_size);
	for (size_t i = 0; i < n_ext; i++)
		sr_la.entry_sparse_add_entry(w->e, (la_int64_t)w->ext[i].off,
					     (la_int64_t)w->ext[i].len);
	if ((k = count_data(w, (uint64_t)st->st_size, n_ext, path, err)) < 0 ||
	    (k = write_header(w, path, err)) < 0)
		return k;
	if (n_ext > 0)
		return write_sparse_data(w, fd, (uint64_t)st->st_size, n_ext, path, err);
	return write_file_data(w, fd, (uint64_t)st->st_size, path, err);
}

/*
 * A regular file or a directory, opened (st: what fstatat() found, then
 * what was opened): 1 for a directory not recursed into, else 0 or -errno.
 */
static int write_opened(struct sr_archive_writer *w, int dirfd, const char *name, char *path,
			struct stat *st, size_t depth, bool recurse, struct sr_error *err)
{
	_cleanup_close_ int fd = -1;
	mode_t need = S_ISDIR(st->st_mode) ? 0500 : 0400;
	int k;

	/* The mode is in the entry already (write_node()): the one found, not this. */
	if (w->read_own && (st->st_mode & need) != need && st->st_uid == geteuid() &&
	    fchmodat(dirfd, name, (st->st_mode | need) & 07777, 0) < 0)
		return sr_error_errno(err, sr_negerrno(), "archive %s: make it readable", path);
	/* O_NOFOLLOW and O_NONBLOCK: never through a link swapped in, never wait on a FIFO. */
	fd = openat(dirfd, name,
		    (S_ISDIR(st->st_mode) ? O_DIRECTORY : O_NONBLOCK) | O_RDONLY | O_NOFOLLOW |
			O_CLOEXEC);
	if (fd < 0 || fstat(fd, st) < 0)
		return sr_error_errno(err, sr_negerrno(), "archive %s", path);
	if (!S_ISREG(st->st_mode) && !S_ISDIR(st->st_mode)) {
		w->skipped++;
		return 0;
	}
	sr_la.entry_set_filetype(w->e, S_ISDIR(st->st_mode) ? AE_IFDIR : AE_IFREG);
	if (S_ISREG(st->st_mode))
		return write_file(w, fd, st, path, err);
	if ((k = write_header(w, path, err)) < 0)
		return k;
	return recurse ? write_dir(w, steal_fd(&fd), path, depth, err) : 1;
}

/* 1 for a directory not recursed into, else 0 or -errno. */
static int write_node(struct sr_archive_writer *w, int dirfd, const char *name, char *path,
		      size_t depth, bool recurse, struct sr_error *err)
{
	struct stat st;

	if (depth > WRITE_MAX_DEPTH)
		return sr_error_msg(err, -ELOOP, "archive %s: deeper than %d levels", path,
				    WRITE_MAX_DEPTH);
	if (fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return errno == ENOENT ? 0 : sr_error_errno(err, sr_negerrno(), "archive %s", path);
	if (!S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode) && !S_ISLNK(st.st_mode)) {
		w->skipped++;
		return 0;
	}
	sr_la.entry_clear(w->e);
	sr_la.entry_set_pathname(w->e, path);
	sr_la.entry_set_perm(w->e, st.st_mode & 07777);
	sr_la.entry_set_mtime(w->e, st.st_mtim.tv_sec, st.st_mtim.tv_nsec);
	if (S_ISLNK(st.st_mode))
		return write_link(w, dirfd, name, path, err);
	return write_opened(w, dirfd, name, path, &st, depth, recurse, err);
}

int sr_archive_write_tree(struct sr_archive_writer *w, int dirfd, const char *name, const char *as,
			  struct sr_error *err)
{
	char path[PATH_MAX];

	snprintf(path, sizeof(path), "%s", as ? as : name);
	return write_node(w, dirfd, name, path, 0, true, err);
}

int sr_archive_write_one(struct sr_archive_writer *w, int dirfd, const char *name, const char *as,
			 struct sr_error *err)
{
	char path[PATH_MAX];

	if (snprintf(path, sizeof(path), "%s", as) >= (int)sizeof(path))
		return sr_error_msg(err, -ENAMETOOLONG, "archive: path too long");
	return write_node(w, dirfd, name, path, 0, false, err);
}

int sr_archive_write_entry(struct sr_archive_writer *w, const struct sr_archive_entry *e,
			   struct sr_error *err)
{
	if (!S_ISREG(e->type) && !S_ISDIR(e->type) && !S_ISLNK(e->type))
		return sr_error_msg(err, -EINVAL, "archive %s: not a file, directory or link",
				    e->path);
	sr_la.entry_clear(w->e);
	sr_la.entry_set_pathname(w->e, e->path);
	sr_la.entry_set_perm(w->e, e->perm & 07777);
	sr_la.entry_set_mtime(w->e, e->mtime, e->mtime_ns);
	sr_la.entry_set_filetype(w->e, S_ISDIR(e->type)	  ? AE_IFDIR
				       : S_ISLNK(e->type) ? AE_IFLNK
							  : AE_IFREG);
	if (S_ISLNK(e->type))
		sr_la.entry_set_symlink(w->e, e->link ? e->link : "");
	if (S_ISREG(e->type))
		sr_la.entry_set_size(w->e, e->size > 0 ? e->size : 0);
	return write_header(w, e->path, err);
}

int sr_archive_write_data(struct sr_archive_writer *w, const void *buf, size_t len,
			  struct sr_error *err)
{
	if (len && sr_la.write_data(w->a, buf, len) != (la_ssize_t)len)
		return write_failed(w, "data", err);
	return 0;
}

int sr_archive_writer_end(struct sr_archive_writer *w, uint64_t *ret_entries, uint64_t *ret_skipped,
			  struct sr_error *err)
{
	if (sr_la.write_close(w->a) != ARCHIVE_OK)
		return write_failed(w, "(its end)", err);
	if (ret_entries)
		*ret_entries = w->entries;
	if (ret_skipped)
		*ret_skipped = w->skipped;
	return 0;
}
