/* SPDX-License-Identifier: MIT */
/*
 * Safe extraction of agent archives with libarchive (dlopen()ed on first
 * use). Every path is resolved beneath dest with openat2(RESOLVE_BENEATH |
 * RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS): no absolute paths, no "..",
 * no symlink or hard link leaving the tree, no device nodes, FIFOs or
 * sockets, no setuid/setgid/sticky bits. Extraction stops with -ENOSPC once
 * max_bytes (0 = no bound of its own) have been written, so a compression
 * bomb ends at the disk limit.
 */
#pragma once

#include "log.h"

#include <stdbool.h>
#include <stdint.h>

int sr_archive_extract(int archive_fd, int dest_dirfd, uint64_t max_bytes, struct sr_error *err);

struct sr_extract_opts {
	uint64_t max_bytes;	 /* 0: no bound of its own */
	const char *rename_top;	 /* every entry's first component becomes this (cp's DST) */
	const char *const *tops; /* NULL-terminated: the only first components allowed */
	size_t max_entries;	 /* 0: the default for agents' archives (100,000) */
	/*
	 * cp: the tree is each entry's first component (the copy), not
	 * dest. A symbolic link climbs at most to that top, never beside
	 * it, and the top is no link at all: its target would be resolved
	 * in dest, outside what was copied.
	 */
	bool links_within_top;
	/*
	 * What max_bytes is, for the error past it ("extract f: more than
	 * LIMIT_WHAT", -EFBIG); NULL: the disk limit (-ENOSPC), as an
	 * agent's archive has it.
	 */
	const char *limit_what;
	/*
	 * Nothing read from archive_fd for this long: -ETIMEDOUT (0: wait as
	 * long as it takes). archive_fd is made non-blocking then.
	 */
	int idle_ms;
};
int sr_archive_extract_opts(int archive_fd, int dest_dirfd, const struct sr_extract_opts *o,
			    struct sr_error *err);

/*
 * Writes a tar (pax, uncompressed; zstd with compress) of the tree at
 * (dirfd, name) to out_fd, its entries named "as/..." (as: name when
 * NULL), never following a symbolic link: links are stored as links,
 * regular files and directories with their modes and mtimes; devices,
 * FIFOs and sockets are left out (*ret_skipped counts them). With
 * finish false the archive stays open for another tree: call again,
 * then sr_archive_write_end().
 */
struct sr_archive_writer;
struct sr_write_opts {
	bool compress; /* zstd */
	/*
	 * out_fd takes nothing for this long: -ETIMEDOUT (0: wait as long as
	 * it takes). out_fd is made non-blocking then.
	 */
	int idle_ms;
};
int sr_archive_writer_new(int out_fd, const struct sr_write_opts *o, struct sr_archive_writer **ret,
			  struct sr_error *err);
int sr_archive_write_tree(struct sr_archive_writer *w, int dirfd, const char *name, const char *as,
			  struct sr_error *err);
/* Closes the archive (its end blocks written); the counts of what went in. */
int sr_archive_writer_end(struct sr_archive_writer *w, uint64_t *ret_entries, uint64_t *ret_skipped,
			  struct sr_error *err);
void sr_archive_writer_free(struct sr_archive_writer *w);

/*
 * Loads libarchive now (sr_archive_extract does it too): for a caller
 * that will extract where no library can be opened any more (chrooted).
 */
int sr_archive_load(struct sr_error *err);
