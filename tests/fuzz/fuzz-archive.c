/* SPDX-License-Identifier: MIT */
/*
 * Archive import: sr_archive_extract() of the input (from a memfd) into a
 * fresh directory, with a 1 MiB bound. Whatever the archive, success or
 * not, afterwards: nothing exists beside the destination, and inside it
 * only directories, regular files and relative symlinks, no setuid,
 * setgid or sticky bit, and no more file data than the bound.
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

/* Returns the file data in the tree, each hard-linked file counted once. */
static double check_tree(int dirfd)
{
	int fd = dup(dirfd);
	double bytes = 0;
	struct dirent *de;
	DIR *d;

	FUZZ_CHECK(fd >= 0);
	d = fdopendir(fd);
	FUZZ_CHECK(d != NULL);
	/* A dup() shares the directory offset with dirfd. */
	rewinddir(d);
	while ((de = readdir(d))) {
		struct stat st;

		if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
			continue;
		FUZZ_CHECK(fstatat(dirfd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0);
		FUZZ_CHECK(S_ISDIR(st.st_mode) || S_ISREG(st.st_mode) || S_ISLNK(st.st_mode));
		FUZZ_CHECK((st.st_mode & (S_ISUID | S_ISGID | S_ISVTX)) == 0);
		if (S_ISREG(st.st_mode))
			bytes += (double)st.st_size / (double)st.st_nlink;
		if (S_ISLNK(st.st_mode))
			check_symlink(dirfd, de->d_name);
		if (S_ISDIR(st.st_mode)) {
			int sub = openat(dirfd, de->d_name,
					 O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);

			FUZZ_CHECK(sub >= 0);
			bytes += check_tree(sub);
			close(sub);
		}
	}
	closedir(d);
	return bytes;
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

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct sr_error err = {};
	int dest, r;

	if (ftruncate(memfd, 0) < 0 || pwrite(memfd, data, size, 0) != (ssize_t)size ||
	    lseek(memfd, 0, SEEK_SET) != 0)
		abort();
	if (mkdirat(base_fd, "d", 0700) < 0)
		abort();
	dest = openat(base_fd, "d", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dest < 0)
		abort();

	r = sr_archive_extract(memfd, dest, MAX_BYTES, &err);
	if (r < 0)
		FUZZ_CHECK(err.code == r && err.msg[0] != '\0');
	else
		FUZZ_CHECK(r == 0);
	check_nothing_beside();
	FUZZ_CHECK(check_tree(dest) <= MAX_BYTES + 1.0);

	r = fuzz_empty_dir(dest);
	if (r < 0 || unlinkat(base_fd, "d", AT_REMOVEDIR) < 0) {
		fprintf(stderr, "fuzz: cannot empty the destination: %s\n", strerror(r < 0 ? -r : errno));
		abort();
	}
	close(dest);
	return 0;
}
