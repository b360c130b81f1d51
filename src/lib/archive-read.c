/* SPDX-License-Identifier: MIT */
/*
 * Reading a tar entry by entry: libarchive parses, the caller decides.
 * Used for changes files (changes.h), whose rules are not an extraction's.
 */
#include "archive.h"
#include "archive-internal.h"
#include "dl.h"
#include "util.h"

#include <limits.h>
#include <sys/stat.h>

struct sr_archive_reader {
	struct archive *a;
	locale_t old;
	struct sr_la_stream *s; /* with an idle bound, else NULL (libarchive reads fd) */
	char path[PATH_MAX];	/* the current entry's name, without a trailing '/' */
};

void sr_archive_reader_free(struct sr_archive_reader *r)
{
	if (!r)
		return;
	if (r->a)
		sr_la.read_free(r->a);
	if (sr_la.utf8)
		uselocale(r->old);
	free(r->s);
	free(r);
}

/* libarchive's error, or the stream's when it is why (nothing moved for idle_ms). */
static int read_error(struct sr_archive_reader *r, int code, const char *what, struct sr_error *err)
{
	if (r->s && r->s->timed_out)
		return sr_la_idle_error(r->s, err);
	return sr_error_msg(err, code, "read archive: %s", sr_la.error_string(r->a) ?: what);
}

SR_DEFINE_CLEANUP(reader_freep, struct sr_archive_reader *, sr_archive_reader_free)

/* What entry-by-entry reading needs beyond extraction's, loaded only by it. */
static int load_entry_reader(struct sr_error *err)
{
	static const struct sr_dl_sym syms[] = {
	    {"archive_read_data", (void **)&sr_la.read_data},
	};
	static bool loaded;
	int k = sr_la_load(err);

	if (k < 0 || loaded)
		return k;
	k = sr_dl_load(SR_LIBARCHIVE_SONAME, syms, SR_ARRAY_SIZE(syms), err);
	loaded = k >= 0;
	return k;
}

int sr_archive_reader_open(int fd, int idle_ms, struct sr_archive_reader **ret,
			   struct sr_error *err)
{
	_cleanup_(reader_freep) struct sr_archive_reader *r = NULL;
	int k = load_entry_reader(err);

	if (k < 0)
		return k;
	r = calloc(1, sizeof(*r));
	if (!r)
		return sr_error_errno(err, -ENOMEM, "read archive");
	if (idle_ms > 0) {
		r->s = calloc(1, sizeof(*r->s));
		if (!r->s)
			return sr_error_errno(err, -ENOMEM, "read archive");
		*r->s = (struct sr_la_stream){.fd = fd, .idle_ms = idle_ms, .cancel_fd = -1};
		if (sr_la_nonblocking(fd) < 0)
			return sr_error_errno(err, sr_negerrno(), "read archive");
	}
	/* Names are bytes, UTF-8 by convention (archive.c says why). */
	if (sr_la.utf8)
		r->old = uselocale(sr_la.utf8);
	r->a = sr_la.read_new();
	if (!r->a)
		return sr_error_errno(err, -ENOMEM, "read archive");
	/* As for extraction: named filters, never an external program. */
	if (sr_la.filter_gzip(r->a) < ARCHIVE_WARN || sr_la.filter_xz(r->a) < ARCHIVE_WARN ||
	    sr_la.filter_zstd(r->a) < ARCHIVE_WARN || sr_la.format_tar(r->a) != ARCHIVE_OK)
		return sr_error_msg(err, -EIO, "read archive: %s",
				    sr_la.error_string(r->a) ?: "cannot enable formats");
	k = r->s ? sr_la.read_open(r->a, r->s, NULL, sr_la_stream_read, NULL)
		 : sr_la.open_fd(r->a, fd, 64 * 1024);
	if (k != ARCHIVE_OK) {
		if (r->s && r->s->timed_out)
			return sr_la_idle_error(r->s, err);
		return sr_error_msg(err, -EINVAL, "read archive: %s (expected a tar)",
				    sr_la.error_string(r->a) ?: "cannot open");
	}
	*ret = steal_pointer(&r);
	return 0;
}

int sr_archive_reader_next(struct sr_archive_reader *r, struct sr_archive_entry *ret,
			   struct sr_error *err)
{
	struct archive_entry *e;
	int k = sr_la.next_header(r->a, &e);
	const char *hard;

	if (k == ARCHIVE_EOF)
		return 0;
	if (k != ARCHIVE_OK && k != ARCHIVE_WARN)
		return read_error(r, -EIO, "read error", err);
	hard = sr_la.entry_hardlink(e) ?: sr_la.entry_hardlink_utf8(e);
	*ret = (struct sr_archive_entry){
	    .path = sr_la.entry_pathname(e) ?: sr_la.entry_pathname_utf8(e),
	    .type = sr_la.entry_filetype(e),
	    .perm = sr_la.entry_mode(e) & 07777,
	    .size = sr_la.entry_size_is_set(e) ? sr_la.entry_size(e) : 0,
	    .link = hard ?: sr_la.entry_symlink(e) ?: sr_la.entry_symlink_utf8(e),
	    .hardlink = hard != NULL,
	    .mtime = sr_la.entry_mtime_is_set(e) ? sr_la.entry_mtime(e) : 0,
	    .mtime_ns = sr_la.entry_mtime_is_set(e) ? sr_la.entry_mtime_nsec(e) : 0,
	};
	if (!ret->path)
		return sr_error_msg(err, -EINVAL, "read archive: an entry has no usable name");
	/* tar writes a directory as "name/": the name is "name". */
	if (snprintf(r->path, sizeof(r->path), "%s", ret->path) >= (int)sizeof(r->path))
		return sr_error_msg(err, -ENAMETOOLONG, "read archive: a name too long");
	for (size_t n = strlen(r->path); n > 1 && r->path[n - 1] == '/'; n--)
		r->path[n - 1] = '\0';
	ret->path = r->path;
	return 1;
}

ssize_t sr_archive_reader_data(struct sr_archive_reader *r, void *buf, size_t len,
			       struct sr_error *err)
{
	la_ssize_t n = sr_la.read_data(r->a, buf, len);

	if (n < 0)
		return read_error(r, -EIO, "read error", err);
	return (ssize_t)n;
}
