/* SPDX-License-Identifier: MIT */
/*
 * libarchive as archive.c (extraction), archive-write.c (writing) and
 * archive-read.c (entries one by one) use it (archive-internal.h): its
 * functions, dlopen()ed on first use, the reading half apart from the
 * writing half; the streams read and written through its callbacks, so
 * that a peer that stops cannot make them wait forever; and the files
 * known by (dev, inode), which the writer and the extraction both keep.
 */
#include "archive.h"
#include "archive-internal.h"
#include "dl.h"
#include "units.h"
#include "util.h"

#include <fcntl.h>
#include <locale.h>
#include <poll.h>

struct sr_la sr_la;

#define LA_SYM(field, name)                  \
	{                                    \
#name, (void **)&sr_la.field \
	}

int sr_la_load(struct sr_error *err)
{
	static const struct sr_dl_sym syms[] = {
	    LA_SYM(read_new, archive_read_new),
	    LA_SYM(read_free, archive_read_free),
	    LA_SYM(filter_gzip, archive_read_support_filter_gzip),
	    LA_SYM(filter_bzip2, archive_read_support_filter_bzip2),
	    LA_SYM(filter_xz, archive_read_support_filter_xz),
	    LA_SYM(filter_zstd, archive_read_support_filter_zstd),
	    LA_SYM(format_tar, archive_read_support_format_tar),
	    LA_SYM(format_zip, archive_read_support_format_zip),
	    LA_SYM(open_fd, archive_read_open_fd),
	    LA_SYM(read_open, archive_read_open),
	    LA_SYM(set_seek, archive_read_set_seek_callback),
	    LA_SYM(next_header, archive_read_next_header),
	    LA_SYM(data_block, archive_read_data_block),
	    LA_SYM(error_string, archive_error_string),
	    LA_SYM(entry_pathname, archive_entry_pathname),
	    LA_SYM(entry_pathname_utf8, archive_entry_pathname_utf8),
	    LA_SYM(entry_symlink, archive_entry_symlink),
	    LA_SYM(entry_symlink_utf8, archive_entry_symlink_utf8),
	    LA_SYM(entry_hardlink, archive_entry_hardlink),
	    LA_SYM(entry_hardlink_utf8, archive_entry_hardlink_utf8),
	    LA_SYM(entry_filetype, archive_entry_filetype),
	    LA_SYM(entry_mode, archive_entry_mode),
	    LA_SYM(entry_size, archive_entry_size),
	    LA_SYM(entry_size_is_set, archive_entry_size_is_set),
	    LA_SYM(entry_mtime, archive_entry_mtime),
	    LA_SYM(entry_mtime_nsec, archive_entry_mtime_nsec),
	    LA_SYM(entry_mtime_is_set, archive_entry_mtime_is_set),
	};
	int k;

	if (sr_la.loaded)
		return 0;
	k = sr_dl_load(SR_LIBARCHIVE_SONAME, syms, SR_ARRAY_SIZE(syms), err);
	if (k < 0)
		return k;
	sr_la.utf8 = newlocale(LC_CTYPE_MASK, "C.UTF-8", (locale_t)0);
	sr_la.loaded = true;
	return 0;
}

int sr_archive_load(struct sr_error *err)
{
	return sr_la_load(err);
}

/* The writing half, loaded only by what writes (cp, snapshots): extraction never needs it. */
int sr_la_load_writer(struct sr_error *err)
{
	static const struct sr_dl_sym syms[] = {
	    LA_SYM(write_new, archive_write_new),
	    LA_SYM(write_free, archive_write_free),
	    LA_SYM(write_format_pax, archive_write_set_format_pax_restricted),
	    LA_SYM(write_filter_zstd, archive_write_add_filter_zstd),
	    LA_SYM(write_last_block, archive_write_set_bytes_in_last_block),
	    LA_SYM(write_open_fd, archive_write_open_fd),
	    LA_SYM(write_open, archive_write_open),
	    LA_SYM(write_header, archive_write_header),
	    LA_SYM(write_data, archive_write_data),
	    LA_SYM(write_close, archive_write_close),
	    LA_SYM(archive_errno, archive_errno),
	    LA_SYM(entry_new, archive_entry_new),
	    LA_SYM(entry_free, archive_entry_free),
	    LA_SYM(entry_clear, archive_entry_clear),
	    LA_SYM(entry_set_pathname, archive_entry_set_pathname),
	    LA_SYM(entry_set_filetype, archive_entry_set_filetype),
	    LA_SYM(entry_set_perm, archive_entry_set_perm),
	    LA_SYM(entry_set_size, archive_entry_set_size),
	    LA_SYM(entry_set_mtime, archive_entry_set_mtime),
	    LA_SYM(entry_set_symlink, archive_entry_set_symlink),
	    LA_SYM(entry_set_hardlink, archive_entry_set_hardlink),
	    LA_SYM(entry_sparse_add_entry, archive_entry_sparse_add_entry),
	};
	int k = sr_la_load(err);

	if (k < 0 || sr_la.writer_loaded)
		return k;
	k = sr_dl_load(SR_LIBARCHIVE_SONAME, syms, SR_ARRAY_SIZE(syms), err);
	if (k < 0)
		return k;
	sr_la.writer_loaded = true;
	return 0;
}

static size_t inode_slot(const struct sr_inode_slot *v, size_t cap, dev_t dev, ino_t ino)
{
	size_t i = (size_t)(((uint64_t)ino ^ ((uint64_t)dev << 32)) * 0x9e3779b97f4a7c15ULL >> 17) &
		   (cap - 1);

	while (v[i].value && (v[i].dev != dev || v[i].ino != ino))
		i = (i + 1) & (cap - 1);
	return i;
}

const char *sr_inode_map_get(const struct sr_inode_map *m, dev_t dev, ino_t ino)
{
	return m->cap ? m->v[inode_slot(m->v, m->cap, dev, ino)].value : NULL;
}

int sr_inode_map_add(struct sr_inode_map *m, dev_t dev, ino_t ino, const char *value)
{
	size_t i;

	if (sr_inode_map_get(m, dev, ino))
		return 0;
	if ((m->n + 1) * 2 > m->cap) {
		size_t cap = m->cap ? m->cap * 2 : 64;
		struct sr_inode_slot *v = calloc(cap, sizeof(*v));

		if (!v)
			return -ENOMEM;
		for (size_t k = 0; k < m->cap; k++)
			if (m->v[k].value)
				v[inode_slot(v, cap, m->v[k].dev, m->v[k].ino)] = m->v[k];
		free(m->v);
		m->v = v;
		m->cap = cap;
	}
	i = inode_slot(m->v, m->cap, dev, ino);
	m->v[i] = (struct sr_inode_slot){.dev = dev, .ino = ino, .value = strdup(value)};
	if (!m->v[i].value)
		return -ENOMEM;
	m->n++;
	return 0;
}

void sr_inode_map_free(struct sr_inode_map *m)
{
	for (size_t i = 0; i < m->cap; i++)
		free(m->v[i].value);
	free(m->v);
	*m = (struct sr_inode_map){0};
}

int sr_la_wait(struct sr_la_stream *s, short events)
{
	struct pollfd p[2] = {{.fd = s->fd, .events = events},
			      {.fd = s->cancel_fd, .events = POLLIN}};
	int n;

	do
		n = poll(p, s->cancel_fd >= 0 ? 2 : 1, s->idle_ms > 0 ? s->idle_ms : -1);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		return sr_negerrno();
	if (s->cancel_fd >= 0 && p[1].revents) {
		s->cancelled = true;
		return -ECANCELED;
	}
	if (n == 0) {
		s->timed_out = true;
		return -ETIMEDOUT;
	}
	return 0;
}

int sr_la_nonblocking(int fd)
{
	int fl = fcntl(fd, F_GETFL);

	return fl < 0 || fcntl(fd, F_SETFL, fl | O_NONBLOCK) < 0 ? sr_negerrno() : 0;
}

int sr_la_idle_error(const struct sr_la_stream *s, struct sr_error *err)
{
	char d[SR_UNITS_BUF_MAX];

	if (s->cancelled)
		return sr_error_msg(err, -ECANCELED, "interrupted");
	sr_format_duration((uint64_t)s->idle_ms, d, sizeof(d));
	return sr_error_msg(err, -ETIMEDOUT, "nothing moved on the stream for %s", d);
}

bool sr_la_cancelled(struct sr_la_stream *s)
{
	struct pollfd p = {.fd = s->cancel_fd, .events = POLLIN};

	if (s->cancel_fd >= 0 && !s->cancelled && poll(&p, 1, 0) > 0)
		s->cancelled = true;
	return s->cancelled;
}

la_ssize_t sr_la_stream_read(struct archive *a, void *ctx, const void **ret_buf)
{
	struct sr_la_stream *s = ctx;

	(void)a;
	for (;;) {
		ssize_t n;
		int k;

		if (sr_la_cancelled(s)) {
			errno = ECANCELED;
			return -1;
		}
		n = read(s->fd, s->buf, sizeof(s->buf));
		if (n >= 0) {
			*ret_buf = s->buf;
			return n;
		}
		if (errno != EAGAIN && errno != EINTR)
			return -1;
		k = sr_la_wait(s, POLLIN);
		if (k < 0) {
			errno = -k;
			return -1;
		}
	}
}

la_int64_t sr_la_stream_seek(struct archive *a, void *ctx, la_int64_t offset, int whence)
{
	struct sr_la_stream *s = ctx;
	off_t r = lseek(s->fd, (off_t)offset, whence);

	(void)a;
	return r < 0 ? ARCHIVE_FATAL : (la_int64_t)r;
}
