/* SPDX-License-Identifier: MIT */
/*
 * Writing tar streams (archive.h): a tree walked with *at() calls, never
 * following a link, as pax for cp and snapshots.
 */
#include "archive.h"
#include "archive-internal.h"
#include "util.h"

#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <sys/stat.h>

/* How deep a tree is walked: deeper is refused, not a stack overflow. */
#define WRITE_MAX_DEPTH 256

struct sr_archive_writer {
	struct archive *a;
	struct archive_entry *e;
	uint64_t entries, skipped;
	locale_t old;
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
	if (sr_la.utf8)
		uselocale(w->old);
	free(w);
}

int sr_archive_writer_new(int out_fd, bool compress, struct sr_archive_writer **ret,
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
	    (compress && sr_la.write_filter_zstd(w->a) != ARCHIVE_OK) ||
	    sr_la.write_last_block(w->a, 1) != ARCHIVE_OK ||
	    sr_la.write_open_fd(w->a, out_fd) != ARCHIVE_OK)
		return sr_error_msg(err, -EIO, "write archive: %s",
				    sr_la.error_string(w->a) ?: "cannot start");
	*ret = steal_pointer(&w);
	return 0;
}

static int write_failed(struct sr_archive_writer *w, const char *path, struct sr_error *err)
{
	char shown[256];

	sr_printable(path, shown, sizeof(shown));
	return sr_error_msg(err, -EIO, "archive %s: %s", shown,
			    sr_la.error_string(w->a) ?: "write error");
}

static int write_node(struct sr_archive_writer *w, int dirfd, const char *name, char *path,
		      size_t depth, struct sr_error *err);

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
		k = write_node(w, dirfd(d), de->d_name, path, depth + 1, err);
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
		ssize_t n = SR_RETRY(read(fd, w->buf, sizeof(w->buf)));

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

static int write_node(struct sr_archive_writer *w, int dirfd, const char *name, char *path,
		      size_t depth, struct sr_error *err)
{
	_cleanup_close_ int fd = -1;
	char target[PATH_MAX];
	struct stat st;
	ssize_t n;

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
	if (S_ISLNK(st.st_mode)) {
		n = readlinkat(dirfd, name, target, sizeof(target) - 1);
		if (n < 0)
			return sr_error_errno(err, sr_negerrno(), "archive %s", path);
		target[n] = '\0';
		sr_la.entry_set_filetype(w->e, AE_IFLNK);
		sr_la.entry_set_symlink(w->e, target);
	} else {
		/* O_NOFOLLOW and O_NONBLOCK: never through a link swapped in, never wait on a FIFO.
		 */
		fd = openat(dirfd, name,
			    (S_ISDIR(st.st_mode) ? O_DIRECTORY : O_NONBLOCK) | O_RDONLY |
				O_NOFOLLOW | O_CLOEXEC);
		if (fd < 0 || fstat(fd, &st) < 0)
			return sr_error_errno(err, sr_negerrno(), "archive %s", path);
		if (!S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode)) {
			w->skipped++;
			return 0;
		}
		sr_la.entry_set_filetype(w->e, S_ISDIR(st.st_mode) ? AE_IFDIR : AE_IFREG);
		if (S_ISREG(st.st_mode))
			sr_la.entry_set_size(w->e, st.st_size);
	}
	if (sr_la.write_header(w->a, w->e) != ARCHIVE_OK)
		return write_failed(w, path, err);
	w->entries++;
	if (S_ISDIR(st.st_mode))
		return write_dir(w, steal_fd(&fd), path, depth, err);
	if (S_ISREG(st.st_mode))
		return write_file_data(w, fd, (uint64_t)st.st_size, path, err);
	return 0;
}

int sr_archive_write_tree(struct sr_archive_writer *w, int dirfd, const char *name, const char *as,
			  struct sr_error *err)
{
	char path[PATH_MAX];

	snprintf(path, sizeof(path), "%s", as ? as : name);
	return write_node(w, dirfd, name, path, 0, err);
}

int sr_archive_writer_end(struct sr_archive_writer *w, uint64_t *ret_entries, uint64_t *ret_skipped,
			  struct sr_error *err)
{
	if (sr_la.write_close(w->a) != ARCHIVE_OK)
		return sr_error_msg(err, -EIO, "write archive: %s",
				    sr_la.error_string(w->a) ?: "cannot finish");
	if (ret_entries)
		*ret_entries = w->entries;
	if (ret_skipped)
		*ret_skipped = w->skipped;
	return 0;
}
