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
#include <sys/types.h>

int sr_archive_extract(int archive_fd, int dest_dirfd, uint64_t max_bytes, struct sr_error *err);

struct sr_extract_opts {
	uint64_t max_bytes;	/* 0: no bound of its own */
	const char *rename_top; /* every entry's first component becomes this (cp's DST) */
	/*
	 * With rename_top: a top that is a regular file, where rename_top is
	 * an existing directory in dest, goes into it under its own name, as
	 * `cp FILE DIR` puts it (an export's HOSTDIR); a directory top is
	 * merged into it all the same.
	 */
	bool file_into_dir;
	const char *const *tops; /* NULL-terminated: the only first components allowed */
	size_t max_entries;	 /* 0: the default for agents' archives (100,000) */
	/*
	 * max_bytes counts the data written only, not a sparse file's holes
	 * seeked over: a snapshot's restore onto the sandbox's own disk,
	 * where a hole costs nothing (its file system bounds the rest), as
	 * the snapshot counted them. Elsewhere the holes count: the extent
	 * is what a later copy of the file costs.
	 */
	bool holes_free;
	/*
	 * cp: the tree is each entry's first component (the copy), not
	 * dest. A symbolic link climbs at most to that top, never beside
	 * it, and the top is no link at all: its target would be resolved
	 * in dest, outside what was copied.
	 */
	bool links_within_top;
	/*
	 * The entries too are bounded by max_bytes, a bound of their own, at
	 * 512 bytes and their names each (cp out: the sandbox's walk can be
	 * made to meet names without end, which cost no data, each a name,
	 * an inode or a directory's block on the host).
	 */
	bool bound_entries;
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
	/*
	 * > 0: an fd (a signalfd) whose becoming readable ends the
	 * extraction with -ECANCELED, "interrupted" (0: none; never stdin).
	 * archive_fd is made non-blocking then too.
	 */
	int cancel_fd;
	/*
	 * With chown: everything made is given to owner_uid:owner_gid (a root
	 * caller's export into a user's directory is that user's), through
	 * what was made, never by its name; a name swapped meanwhile fails
	 * the extraction (-ESTALE).
	 */
	bool chown;
	/*
	 * A directory already at a name the extraction writes in must be
	 * owner_uid's (implied by chown): a root caller's export into root's
	 * own tree (only root and that user may change the directories above
	 * it, hostpath.h) would otherwise write root's files into, and chmod,
	 * a directory of another user's found there.
	 */
	bool owned;
	uid_t owner_uid;
	gid_t owner_gid;
	/*
	 * Modes as the archive has them, the umask not applied, and a
	 * directory's sticky bit kept (a set-id bit never; a directory still
	 * gets its owner's rwx): into a sandbox (cp in, a snapshot's
	 * restore), whose user is the only one there. Onto the host the
	 * caller's umask applies, as for tar(1) run by a user: an agent does
	 * not choose which of the caller's files others may write.
	 */
	bool keep_modes;
};
int sr_archive_extract_opts(int archive_fd, int dest_dirfd, const struct sr_extract_opts *o,
			    struct sr_error *err);
/*
 * A name beside a copy's, hidden and not guessable (".sandbox-run-cp.
 * <random>"), to make the copy under and rename once it is whole: a copy
 * cut short never appears under its own name. 0 or -EIO.
 */
#define SR_ARCHIVE_TEMP_NAME_MAX 64
int sr_archive_temp_name(char *buf, size_t len);
/*
 * Removes name beneath dirfd and everything in it, a copy cut short,
 * following no link: it lies where an agent may write, and what is found
 * there is removed, never what a link points to. Best effort.
 */
void sr_archive_remove_tree(int dirfd, const char *name);

/*
 * Whether a symbolic link at depth (its number of parent directories
 * within the tree) with this target stays in the tree: relative, leading
 * ".." only, no more of them than depth.
 */
bool sr_archive_symlink_ok(const char *target, size_t depth);

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
	/*
	 * At most this many bytes of file data (what is stored: a sparse
	 * file's extents, not its holes) in the whole stream: past it,
	 * -EFBIG before the file's header (0: no bound). The tree walked may
	 * be the agent's, which can make one file's data many times over (a
	 * directory renamed ahead of the walk is walked again; a hard link
	 * is written whole at each of its names unless hardlinks is set).
	 * The entries themselves, at 512 bytes and their names' length
	 * each, have a bound of max_bytes too, of their own: walked so, the
	 * agent's names cost no data, and it can make the walk meet as many
	 * as it likes.
	 */
	uint64_t max_bytes;
	const char *limit_what; /* what max_bytes is, for its error ("the sandbox's disk limit") */
	/*
	 * A regular file met under more than one name is written whole once,
	 * at the first, and its other names as hard links to that one (as
	 * tar(1) does): extracted, they are one file again (the extraction
	 * links them: archive.c), not a copy each -- 65,000 names of one
	 * empty file are not 65,000 of the host's inodes.
	 */
	bool hardlinks;
	/*
	 * A file the writer's own but not readable by it (chmod 0), or a
	 * directory not readable or searchable, is given u+r (u+rx) before
	 * it is read, its mode recorded as it was: for a tree the writer's
	 * user made and nobody keeps (an install's, copied out of its
	 * sandbox), whose modes are to come out as they were left.
	 */
	bool read_own;
};
int sr_archive_writer_new(int out_fd, const struct sr_write_opts *o, struct sr_archive_writer **ret,
			  struct sr_error *err);
int sr_archive_write_tree(struct sr_archive_writer *w, int dirfd, const char *name, const char *as,
			  struct sr_error *err);
/*
 * One node of the tree at (dirfd, name), named as, without descending
 * into a directory: 1 for a directory, 0 for anything else written or
 * left out, -errno.
 */
int sr_archive_write_one(struct sr_archive_writer *w, int dirfd, const char *name, const char *as,
			 struct sr_error *err);

/* An entry as written or read: a regular file, a directory, a symbolic link (or, read, other). */
struct sr_archive_entry {
	const char *path;
	mode_t type; /* S_IFREG, S_IFDIR, S_IFLNK; read: also S_IFCHR, S_IFBLK, S_IFIFO, S_IFSOCK */
	mode_t perm; /* mode & 07777 */
	int64_t size;
	const char *link; /* a symbolic link's target */
	bool hardlink;	  /* read: a hard link (to link) */
	int64_t mtime;
	long mtime_ns;
};
/* A header; a regular file's size bytes follow with sr_archive_write_data(). */
int sr_archive_write_entry(struct sr_archive_writer *w, const struct sr_archive_entry *e,
			   struct sr_error *err);
int sr_archive_write_data(struct sr_archive_writer *w, const void *buf, size_t len,
			  struct sr_error *err);
/* Closes the archive (its end blocks written); the counts of what went in. */
int sr_archive_writer_end(struct sr_archive_writer *w, uint64_t *ret_entries, uint64_t *ret_skipped,
			  struct sr_error *err);
void sr_archive_writer_free(struct sr_archive_writer *w);

/*
 * Reading a tar (plain, or compressed as an agent archive may be) entry
 * by entry, for callers with rules of their own (changes.h). Nothing is
 * written anywhere: names are as stored, for the caller to check.
 */
struct sr_archive_reader;
/*
 * idle_ms > 0: nothing read from fd for that long ends the reading with
 * -ETIMEDOUT ("nothing moved on the stream for 60s"), and fd is made
 * non-blocking (a worker's pipe, which the agent can stop); 0: no bound.
 */
int sr_archive_reader_open(int fd, int idle_ms, struct sr_archive_reader **ret,
			   struct sr_error *err);
/* 1 with *ret (valid until the next call), 0 at the end, -errno. */
int sr_archive_reader_next(struct sr_archive_reader *r, struct sr_archive_entry *ret,
			   struct sr_error *err);
/* The current entry's data: bytes read, 0 at its end, -errno. */
ssize_t sr_archive_reader_data(struct sr_archive_reader *r, void *buf, size_t len,
			       struct sr_error *err);
void sr_archive_reader_free(struct sr_archive_reader *r);

/*
 * Loads libarchive now (sr_archive_extract does it too): for a caller
 * that will extract where no library can be opened any more (chrooted).
 */
int sr_archive_load(struct sr_error *err);
