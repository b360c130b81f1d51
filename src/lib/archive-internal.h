/* SPDX-License-Identifier: MIT */
/*
 * What archive.c (reading, extraction), archive-write.c (writing) and
 * archive-read.c (entries one by one: the changes files, changes.h)
 * share, kept in archive-lib.c: libarchive's functions. libarchive is
 * dlopen()ed (see dl.h): this table is filled once per process and never
 * changes afterwards.
 */
#pragma once

#include "log.h"

#include <archive.h>
#include <archive_entry.h>
#include <locale.h>
#include <stdbool.h>
#include <sys/types.h>

struct sr_la {
	__typeof__(archive_read_new) *read_new;
	__typeof__(archive_read_free) *read_free;
	__typeof__(archive_read_support_filter_gzip) *filter_gzip;
	__typeof__(archive_read_support_filter_bzip2) *filter_bzip2;
	__typeof__(archive_read_support_filter_xz) *filter_xz;
	__typeof__(archive_read_support_filter_zstd) *filter_zstd;
	__typeof__(archive_read_support_format_tar) *format_tar;
	__typeof__(archive_read_support_format_zip) *format_zip;
	__typeof__(archive_read_open_fd) *open_fd;
	__typeof__(archive_read_open) *read_open;
	__typeof__(archive_read_set_seek_callback) *set_seek;
	__typeof__(archive_read_next_header) *next_header;
	__typeof__(archive_read_data_block) *data_block;
	__typeof__(archive_read_data) *read_data; /* archive-read.c's alone: loaded by it */
	__typeof__(archive_error_string) *error_string;
	__typeof__(archive_entry_pathname) *entry_pathname;
	__typeof__(archive_entry_pathname_utf8) *entry_pathname_utf8;
	__typeof__(archive_entry_symlink) *entry_symlink;
	__typeof__(archive_entry_symlink_utf8) *entry_symlink_utf8;
	__typeof__(archive_entry_hardlink) *entry_hardlink;
	__typeof__(archive_entry_hardlink_utf8) *entry_hardlink_utf8;
	__typeof__(archive_entry_filetype) *entry_filetype;
	__typeof__(archive_entry_mode) *entry_mode;
	__typeof__(archive_entry_size) *entry_size;
	__typeof__(archive_entry_size_is_set) *entry_size_is_set;
	__typeof__(archive_entry_mtime) *entry_mtime;
	__typeof__(archive_entry_mtime_nsec) *entry_mtime_nsec;
	__typeof__(archive_entry_mtime_is_set) *entry_mtime_is_set;
	/* Writing (cp, snapshots). */
	__typeof__(archive_write_new) *write_new;
	__typeof__(archive_write_free) *write_free;
	__typeof__(archive_write_set_format_pax_restricted) *write_format_pax;
	__typeof__(archive_write_add_filter_zstd) *write_filter_zstd;
	__typeof__(archive_write_set_bytes_in_last_block) *write_last_block;
	__typeof__(archive_write_open_fd) *write_open_fd;
	__typeof__(archive_write_open) *write_open;
	__typeof__(archive_write_header) *write_header;
	__typeof__(archive_write_data) *write_data;
	__typeof__(archive_write_close) *write_close;
	__typeof__(archive_errno) *archive_errno; /* the writer's: the reader says why in words */
	__typeof__(archive_entry_new) *entry_new;
	__typeof__(archive_entry_free) *entry_free;
	__typeof__(archive_entry_clear) *entry_clear;
	__typeof__(archive_entry_set_pathname) *entry_set_pathname;
	__typeof__(archive_entry_set_filetype) *entry_set_filetype;
	__typeof__(archive_entry_set_perm) *entry_set_perm;
	__typeof__(archive_entry_set_size) *entry_set_size;
	__typeof__(archive_entry_set_mtime) *entry_set_mtime;
	__typeof__(archive_entry_set_symlink) *entry_set_symlink;
	__typeof__(archive_entry_set_hardlink) *entry_set_hardlink;
	__typeof__(archive_entry_sparse_add_entry) *entry_sparse_add_entry;
	bool loaded, writer_loaded;
	/*
	 * C.UTF-8, made once with the library: newlocale() reads locale
	 * files, which an extraction confined to the workspace cannot open
	 * (workspace.c). NULL where the system has none.
	 */
	locale_t utf8;
};

extern struct sr_la sr_la;

/* The reading half (and the locale); the writing half too, for what writes (cp, snapshots). */
int sr_la_load(struct sr_error *err);
int sr_la_load_writer(struct sr_error *err);

/*
 * A stream read or written through libarchive's callbacks rather than
 * its own fd functions, so that a peer that stops (a worker the agent
 * stopped: cp) cannot make it wait forever: nothing in or out for
 * idle_ms ends it with -ETIMEDOUT (0: waits as long as it takes), and
 * cancel_fd becoming readable (a signalfd: cp's ^C) with -ECANCELED.
 */
struct sr_la_stream {
	int fd; /* made non-blocking (sr_la_nonblocking) */
	int idle_ms;
	int cancel_fd; /* -1: none */
	bool timed_out, cancelled;
	char buf[64 * 1024]; /* what was read */
};

int sr_la_nonblocking(int fd);
/*
 * libarchive's read callback for a stream s (the ctx): libarchive's own
 * (open_fd) would wait on a pipe forever for a worker stopped or gone.
 */
la_ssize_t sr_la_stream_read(struct archive *a, void *ctx, const void **ret_buf);
/*
 * Its seek callback, for a stream of a regular file (a deploy's archive):
 * a zip's entries' modes and symlinks are in its central directory, at its
 * end, which libarchive reads only where it can seek; read from the front,
 * every entry is a plain file of mode 0777 & ~umask (or 0644).
 */
la_int64_t sr_la_stream_seek(struct archive *a, void *ctx, la_int64_t offset, int whence);
/*
 * poll() on s->fd for events, at most s->idle_ms (0: no bound): 0,
 * -ETIMEDOUT, -ECANCELED (s->cancel_fd readable), or -errno.
 */
int sr_la_wait(struct sr_la_stream *s, short events);
/*
 * Whether s->cancel_fd is readable now (s->cancelled set), without
 * waiting: a file is always readable, and a small compressed one expands
 * to gigabytes between two reads, so a reader and an extraction look for
 * a cancel as they go, not only while they wait.
 */
bool sr_la_cancelled(struct sr_la_stream *s);
/*
 * The error of a stream that timed out ("nothing moved on the stream for
 * 2s") or was cancelled ("interrupted").
 */
int sr_la_idle_error(const struct sr_la_stream *s, struct sr_error *err);

/*
 * Files by (dev, inode), each with a string of its own (archive-lib.c):
 * the writer's files of several names (where each was written whole),
 * the extraction's files made (a hard link may name only one of them).
 * Open addressing, at most half full.
 */
struct sr_inode_slot {
	dev_t dev;
	ino_t ino;
	char *value; /* NULL: a free slot */
};
struct sr_inode_map {
	struct sr_inode_slot *v;
	size_t n, cap; /* cap: 0 or a power of 2 */
};
/* The value of (dev, ino), NULL if none. */
const char *sr_inode_map_get(const struct sr_inode_map *m, dev_t dev, ino_t ino);
/* (dev, ino) with a copy of value, unless it is there already: 0, or -ENOMEM. */
int sr_inode_map_add(struct sr_inode_map *m, dev_t dev, ino_t ino, const char *value);
void sr_inode_map_free(struct sr_inode_map *m);
