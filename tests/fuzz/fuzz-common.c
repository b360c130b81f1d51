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
#include <sys/syscall.h>
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

/*
 * getdents64() into a small buffer on the stack rather than opendir():
 * a tree can be PATH_MAX/2 levels deep, and opendir() costs a dup, fcntls,
 * a 32 KiB allocation and a seek per level, four times the syscalls of the
 * walk itself. Entries already read may be removed while reading on.
 */
struct linux_dirent64 {
	uint64_t d_ino;
	int64_t d_off;
	unsigned short d_reclen;
	unsigned char d_type;
	char d_name[];
};

/* dirfd is at its start. */
static int walk_remove(int dirfd, fuzz_visit_fn visit, void *ctx)
{
	char buf[1024] __attribute__((aligned(8)));
	int r = 0;
	long n;

	while ((n = syscall(SYS_getdents64, dirfd, buf, sizeof(buf))) > 0) {
		for (long off = 0; off < n;) {
			struct linux_dirent64 *de = (struct linux_dirent64 *)(buf + off);
			const char *name = de->d_name;
			bool is_dir = de->d_type == DT_DIR;
			struct stat st;
			int sub;

			off += de->d_reclen;
			if (strcmp(name, ".") == 0 || strcmp(name, "..") == 0)
				continue;
			if (visit || de->d_type == DT_UNKNOWN) {
				if (fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0) {
					r = -errno;
					continue;
				}
				is_dir = S_ISDIR(st.st_mode);
				if (visit)
					visit(dirfd, name, &st, ctx);
			}
			if (is_dir) {
				sub = openat(dirfd, name,
					     O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
				if (sub < 0) {
					r = -errno;
					continue;
				}
				if (walk_remove(sub, visit, ctx) < 0)
					r = -EIO;
				close(sub);
			}
			if (remove_entry(dirfd, name, is_dir) < 0)
				r = -EIO;
		}
	}
	return n < 0 ? -errno : r;
}

int fuzz_walk_remove(int dirfd, fuzz_visit_fn visit, void *ctx)
{
	/* An earlier walk of the same fd (or a dup of it) left it at the end. */
	if (lseek(dirfd, 0, SEEK_SET) < 0)
		return -errno;
	return walk_remove(dirfd, visit, ctx);
}

int fuzz_empty_dir(int dirfd)
{
	return fuzz_walk_remove(dirfd, NULL, NULL);
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
