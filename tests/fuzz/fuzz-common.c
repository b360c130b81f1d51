/* SPDX-License-Identifier: MIT */
#include "fuzz-common.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static char tmp_path[PATH_MAX];

void fuzz_fail(const char *file, int line, const char *what)
{
	fprintf(stderr, "%s:%d: property broken: %s\n", file, line, what);
	abort();
}

char *fuzz_strndup(const uint8_t *data, size_t size)
{
	char *s = malloc(size + 1);

	if (!s)
		abort();
	if (size > 0)
		memcpy(s, data, size);
	s[size] = '\0';
	return s;
}

static int remove_entry(int dirfd, const char *name, bool is_dir)
{
	int r = unlinkat(dirfd, name, is_dir ? AT_REMOVEDIR : 0);

	/* An archive may list a directory without owner write permission. */
	if (r < 0 && errno == EACCES && fchmod(dirfd, 0700) == 0)
		r = unlinkat(dirfd, name, is_dir ? AT_REMOVEDIR : 0);
	return r < 0 ? -errno : 0;
}

int fuzz_empty_dir(int dirfd)
{
	int fd = dup(dirfd), r = 0;
	struct dirent *de;
	DIR *d;

	if (fd < 0)
		return -errno;
	d = fdopendir(fd);
	if (!d) {
		close(fd);
		return -errno;
	}
	/* A dup() shares the directory offset: an earlier walk left it at the end. */
	rewinddir(d);
	/* Entries already read may be removed while the stream is open. */
	while ((de = readdir(d))) {
		unsigned char type = de->d_type;
		struct stat st;
		int sub;

		if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
			continue;
		if (type == DT_UNKNOWN) {
			if (fstatat(dirfd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0) {
				r = -errno;
				continue;
			}
			type = S_ISDIR(st.st_mode) ? DT_DIR : DT_REG;
		}
		if (type == DT_DIR) {
			sub = openat(dirfd, de->d_name,
				     O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
			if (sub < 0) {
				r = -errno;
				continue;
			}
			if (fuzz_empty_dir(sub) < 0)
				r = -EIO;
			close(sub);
		}
		if (remove_entry(dirfd, de->d_name, type == DT_DIR) < 0)
			r = -EIO;
	}
	closedir(d);
	return r;
}

static void remove_tmpdir(void)
{
	int fd = open(tmp_path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);

	if (fd >= 0) {
		(void)fuzz_empty_dir(fd);
		close(fd);
	}
	(void)rmdir(tmp_path);
}

const char *fuzz_tmpdir(const char *name)
{
	const char *root = getenv("FUZZ_TMPDIR");
	struct stat st;

	if (tmp_path[0])
		return tmp_path;
	if (!root || root[0] != '/')
		root = stat("/dev/shm", &st) == 0 && S_ISDIR(st.st_mode) &&
			       access("/dev/shm", W_OK) == 0
			   ? "/dev/shm"
			   : "/tmp";
	snprintf(tmp_path, sizeof(tmp_path), "%s/sr-fuzz-%s.XXXXXX", root, name);
	if (!mkdtemp(tmp_path)) {
		fprintf(stderr, "fuzz: mkdtemp %s: %s\n", tmp_path, strerror(errno));
		abort();
	}
	atexit(remove_tmpdir);
	return tmp_path;
}

bool fuzz_unsafe_path_text(const char *s, size_t len)
{
	static const char *const words[] = {"dev", "proc", "sys"};

	for (size_t i = 0; i < sizeof(words) / sizeof(words[0]); i++)
		if (memmem(s, len, words[i], strlen(words[i])))
			return true;
	return false;
}
