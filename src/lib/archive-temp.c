/* SPDX-License-Identifier: MIT */
/*
 * A copy made whole under a hidden name beside its destination, then
 * renamed (cp's copy out, a staged extraction: child/stage.c): the name,
 * and the removal of a copy cut short, which follows no link.
 */
#include "archive.h"
#include "util.h"

#include <dirent.h>
#include <fcntl.h>
#include <inttypes.h>
#include <sys/random.h>
#include <sys/stat.h>

int sr_archive_temp_name(char *buf, size_t len)
{
	uint64_t rnd;

	if (getrandom(&rnd, sizeof(rnd), 0) != (ssize_t)sizeof(rnd))
		return -EIO;
	snprintf(buf, len, ".sandbox-run-cp.%016" PRIx64, rnd);
	return 0;
}

/* Deeper than extraction makes (PATH_MAX): whatever is below is left, not a stack overflow. */
#define REMOVE_MAX_DEPTH 4096

static void remove_tree(int at, const char *name, unsigned depth)
{
	struct stat st;

	if (fstatat(at, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return;
	if (S_ISDIR(st.st_mode) && depth < REMOVE_MAX_DEPTH) {
		int fd = openat(at, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		DIR *dir = fd >= 0 ? fdopendir(fd) : NULL;
		struct dirent *de;

		if (!dir && fd >= 0)
			close(fd);
		while (dir && (de = readdir(dir)))
			if (!sr_streq(de->d_name, ".") && !sr_streq(de->d_name, ".."))
				remove_tree(dirfd(dir), de->d_name, depth + 1);
		if (dir)
			closedir(dir);
	}
	(void)unlinkat(at, name, S_ISDIR(st.st_mode) ? AT_REMOVEDIR : 0);
}

void sr_archive_remove_tree(int dirfd, const char *name)
{
	remove_tree(dirfd, name, 0);
}
