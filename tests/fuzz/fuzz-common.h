/* SPDX-License-Identifier: MIT */
/*
 * Shared by the libFuzzer harnesses (built with clang by build.sh) and by
 * their replay programs (built with the project's compiler for make check,
 * with replay.c as main()).
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* A property the code under test promises was broken: a finding, like a crash. */
#define FUZZ_CHECK(cond)                                      \
	do {                                                  \
		if (!(cond))                                  \
			fuzz_fail(__FILE__, __LINE__, #cond); \
	} while (0)

__attribute__((noreturn)) void fuzz_fail(const char *file, int line, const char *what);

/* The input as a heap C string of exactly size + 1 bytes (so ASan sees over-reads). */
char *fuzz_strndup(const uint8_t *data, size_t size);

/*
 * A fresh private directory for this process, under $FUZZ_TMPDIR, else
 * /dev/shm (tmpfs: extraction is much faster there), else /tmp. Removed at
 * exit. Returns its path (static storage); aborts on failure.
 */
const char *fuzz_tmpdir(const char *name);

/* Removes everything beneath dirfd (not dirfd itself), without following symlinks. */
int fuzz_empty_dir(int dirfd);

struct stat;
typedef void (*fuzz_visit_fn)(int dirfd, const char *name, const struct stat *st, void *ctx);

/*
 * fuzz_empty_dir() that first shows every entry to visit(), parents before
 * their contents, each entry just before it is removed (so a regular file's
 * st_nlink is 1 at its last name).
 */
int fuzz_walk_remove(int dirfd, fuzz_visit_fn visit, void *ctx);

/*
 * Whether text could name a file whose open() or read() has effects:
 * /dev/watchdog arms the watchdog, a tape rewinds on close, debugfs files
 * drain trace buffers. Those are reachable only through a name holding
 * "dev", "proc" (/proc/self/fd/N, /proc/self/root/dev/...) or "sys".
 * Harnesses whose input names files to read skip such inputs.
 */
bool fuzz_unsafe_path_text(const char *s, size_t len);
