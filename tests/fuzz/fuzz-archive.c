/* SPDX-License-Identifier: MIT */
/*
 * Archive import: sr_archive_extract() of the input (from a memfd) into a
 * fresh directory, with a 1 MiB bound. Whatever the archive, success or
 * not, afterwards: nothing exists beside the destination, and inside it
 * only directories, regular files and relative symlinks, no setuid,
 * setgid or sticky bit, and no more file data than the bound.
 *
 * libarchive is not instrumented, and a mutated tar header almost always
 * fails its checksum: raw archives reach the extraction rules only
 * through their seeds. So an input starting with "SRTAR\n" describes a
 * tar instead, which the harness writes with valid headers: one entry a
 * line, "TYPE MODE NAME[>LINK][=DATA]" without the blanks. TYPE: f file,
 * d dir, l symlink, h hard link, c/b device, p FIFO, anything else is
 * the raw tar type byte. MODE: a digit choosing from modes[]. DATA
 * "*N" is N zero bytes (compression bombs, the bound).
 */
#include "fuzz-common.h"

#include "archive.h"
#include "log.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#define MAX_BYTES (1024 * 1024)

static int base_fd = -1, memfd = -1;
/* FUZZ_VERBOSE=1: say how each extraction ended (reading a finding, writing seeds). */
static bool verbose;

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	struct rlimit rl;

	base_fd = open(fuzz_tmpdir("archive"), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	memfd = memfd_create("fuzz-archive", MFD_CLOEXEC);
	if (base_fd < 0 || memfd < 0)
		abort();
	/* Walking a tree PATH_MAX deep holds two fds per level. */
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		(void)setrlimit(RLIMIT_NOFILE, &rl);
	}
	umask(022);
	verbose = getenv("FUZZ_VERBOSE") != NULL;
	return 0;
}

static void check_symlink(int dirfd, const char *name)
{
	char target[PATH_MAX + 1];
	ssize_t n = readlinkat(dirfd, name, target, sizeof(target) - 1);

	FUZZ_CHECK(n > 0 && n < PATH_MAX);
	target[n] = '\0';
	FUZZ_CHECK(target[0] != '/');
}

/*
 * One entry of the extracted tree, just before it is removed: only
 * directories, regular files and relative symlinks, none set-id or
 * sticky. A file's data counts at its last name (st_nlink 1 by then), so
 * hard links count once.
 */
static void check_entry(int dirfd, const char *name, const struct stat *st, void *ctx)
{
	double *bytes = ctx;

	FUZZ_CHECK(S_ISDIR(st->st_mode) || S_ISREG(st->st_mode) || S_ISLNK(st->st_mode));
	FUZZ_CHECK((st->st_mode & (S_ISUID | S_ISGID | S_ISVTX)) == 0);
	if (S_ISREG(st->st_mode) && st->st_nlink == 1)
		*bytes += (double)st->st_size;
	if (S_ISLNK(st->st_mode))
		check_symlink(dirfd, name);
}

/* The base directory holds the destination "d" and nothing else. */
static void check_nothing_beside(void)
{
	int fd = dup(base_fd);
	struct dirent *de;
	DIR *d;

	FUZZ_CHECK(fd >= 0);
	d = fdopendir(fd);
	FUZZ_CHECK(d != NULL);
	rewinddir(d);
	while ((de = readdir(d))) {
		if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
			continue;
		if (strcmp(de->d_name, "d") != 0)
			fprintf(stderr, "escaped the destination: %s\n", de->d_name);
		FUZZ_CHECK(strcmp(de->d_name, "d") == 0);
	}
	closedir(d);
}

#define TAR_MAGIC "SRTAR\n"
#define ZEROS_MAX (MAX_BYTES + 64 * 1024)
#define BLOCK	  512

static const unsigned modes[] = {0644, 0755, 04755, 02755, 01777, 0, 0777, 0600, 0444, 0111};

/* width - 1 octal digits and a NUL, as tar writes them. */
static void put_octal(char *field, size_t width, uint64_t v)
{
	field[width - 1] = '\0';
	for (size_t i = width - 1; i-- > 0; v >>= 3)
		field[i] = (char)('0' + (v & 7));
}

static void put_header(FILE *f, char type, const char *name, size_t name_len, unsigned mode,
		       uint64_t size, const char *link, size_t link_len)
{
	char h[BLOCK] = {0};
	unsigned sum = 0;

	memcpy(h, name, name_len < 100 ? name_len : 100);
	put_octal(h + 100, 8, mode);
	put_octal(h + 108, 8, 1000);
	put_octal(h + 116, 8, 1000);
	put_octal(h + 124, 12, size);
	put_octal(h + 136, 12, 1700000000);
	h[156] = type;
	memcpy(h + 157, link, link_len < 100 ? link_len : 100);
	memcpy(h + 257, "ustar", 6);
	memcpy(h + 263, "00", 2);
	memset(h + 148, ' ', 8);
	for (size_t i = 0; i < BLOCK; i++)
		sum += (unsigned char)h[i];
	put_octal(h + 148, 7, sum);
	h[155] = ' ';
	fwrite(h, 1, BLOCK, f);
}

static void put_data(FILE *f, const char *p, size_t n, uint64_t zeros)
{
	static const char pad[BLOCK];
	uint64_t total = p ? n : zeros;

	if (p)
		fwrite(p, 1, n, f);
	for (; zeros > 0; zeros -= zeros > BLOCK ? BLOCK : zeros)
		fwrite(pad, 1, zeros > BLOCK ? BLOCK : (size_t)zeros, f);
	if (total % BLOCK)
		fwrite(pad, 1, BLOCK - total % BLOCK, f);
}

/* A name or link too long for the header goes first in a GNU long-name entry. */
static void put_long(FILE *f, char type, const char *s, size_t n)
{
	char *z;

	if (n < 100)
		return;
	z = fuzz_strndup((const uint8_t *)s, n);
	put_header(f, type, "././@LongLink", 13, 0644, n + 1, "", 0);
	put_data(f, z, n + 1, 0);
	free(z);
}

static void put_entry(FILE *f, const char *line, size_t len)
{
	static const char types[] = "f0d5l2h1c3b4p6";
	const char *end = line + len, *name = line + 2, *link = NULL, *data = NULL, *t;
	size_t name_len, link_len = 0, data_len = 0;
	uint64_t zeros = 0;
	char type;

	if (len < 3)
		return;
	t = memchr(types, line[0], sizeof(types) - 1);
	type = t && (t - types) % 2 == 0 ? t[1] : line[0];
	data = memchr(name, '=', (size_t)(end - name));
	if (data) {
		data_len = (size_t)(end - data - 1);
		end = data++;
	}
	link = memchr(name, '>', (size_t)(end - name));
	if (link) {
		link_len = (size_t)(end - link - 1);
		end = link++;
	}
	name_len = (size_t)(end - name);
	if (data && data_len > 0 && data[0] == '*') {
		/* Not strtoull(): the input is not NUL-terminated. */
		for (size_t i = 1; i < data_len && data[i] >= '0' && data[i] <= '9'; i++)
			zeros = (zeros * 10 + (uint64_t)(data[i] - '0')) % (ZEROS_MAX + 1);
		data = NULL;
	}
	if (type != '0') {
		data = NULL;
		data_len = 0;
		zeros = 0;
	}
	put_long(f, 'L', name, name_len);
	if (link)
		put_long(f, 'K', link, link_len);
	put_header(f, type, name, name_len,
		   modes[(unsigned char)line[1] % (sizeof(modes) / sizeof(modes[0]))],
		   data ? data_len : zeros, link ? link : "", link_len);
	if (data || zeros)
		put_data(f, data, data_len, zeros);
}

/* The tar an "SRTAR" description describes (see the top of the file). */
static void write_tar(int fd, const uint8_t *desc, size_t size)
{
	const char *p = (const char *)desc + strlen(TAR_MAGIC), *end = (const char *)desc + size;
	FILE *f = fdopen(dup(fd), "w");

	if (!f)
		abort();
	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t len = nl ? (size_t)(nl - p) : (size_t)(end - p);

		put_entry(f, p, len);
		p += len + 1;
	}
	put_data(f, NULL, 0, 2 * BLOCK);
	if (fclose(f) != 0)
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct sr_error err = {};
	double bytes = 0;
	int dest, r;

	if (ftruncate(memfd, 0) < 0 || lseek(memfd, 0, SEEK_SET) != 0)
		abort();
	if (size >= strlen(TAR_MAGIC) && memcmp(data, TAR_MAGIC, strlen(TAR_MAGIC)) == 0)
		write_tar(memfd, data, size);
	else if (pwrite(memfd, data, size, 0) != (ssize_t)size)
		abort();
	if (lseek(memfd, 0, SEEK_SET) != 0)
		abort();
	if (mkdirat(base_fd, "d", 0700) < 0)
		abort();
	dest = openat(base_fd, "d", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dest < 0)
		abort();

	r = sr_archive_extract(memfd, dest, MAX_BYTES, &err);
	if (verbose)
		fprintf(stderr, "extract: %d %s\n", r, r < 0 ? err.msg : "");
	if (r < 0)
		FUZZ_CHECK(err.code == r && err.msg[0] != '\0');
	else
		FUZZ_CHECK(r == 0);
	check_nothing_beside();
	r = fuzz_walk_remove(dest, check_entry, &bytes);
	FUZZ_CHECK(bytes <= MAX_BYTES);
	if (r < 0 || unlinkat(base_fd, "d", AT_REMOVEDIR) < 0) {
		fprintf(stderr, "fuzz: cannot empty the destination: %s\n",
			strerror(r < 0 ? -r : errno));
		abort();
	}
	close(dest);
	return 0;
}
