/* SPDX-License-Identifier: MIT */
/*
 * main() for a harness built without libFuzzer (make check): runs every
 * file named on the command line, or found directly in a directory named
 * there, through LLVMFuzzerTestOneInput once. A finding aborts, as under
 * the fuzzer; otherwise prints how many inputs ran.
 */
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

static int run_file(int dirfd, const char *path, const char *name)
{
	int fd = openat(dirfd, name, O_RDONLY | O_CLOEXEC);
	uint8_t *buf = NULL;
	struct stat st;
	ssize_t n = 0;

	if (fd < 0 || fstat(fd, &st) < 0) {
		fprintf(stderr, "replay: %s: %s\n", path, strerror(errno));
		return -1;
	}
	/* One more byte than the data, never 0: malloc(0) may return NULL. */
	buf = malloc((size_t)st.st_size + 1);
	if (!buf)
		abort();
	while (n < st.st_size) {
		ssize_t r = read(fd, buf + n, (size_t)(st.st_size - n));

		if (r <= 0)
			break;
		n += r;
	}
	close(fd);
	if (n != st.st_size) {
		fprintf(stderr, "replay: %s: short read\n", path);
		free(buf);
		return -1;
	}
	LLVMFuzzerTestOneInput(buf, (size_t)n);
	free(buf);
	return 1;
}

static int run_dir(const char *path)
{
	struct dirent **names;
	int n, fd, ran = 0;

	fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	n = fd < 0 ? -1 : scandirat(fd, ".", &names, NULL, alphasort);
	if (n < 0) {
		fprintf(stderr, "replay: %s: %s\n", path, strerror(errno));
		if (fd >= 0)
			close(fd);
		return -1;
	}
	for (int i = 0; i < n; i++) {
		if (names[i]->d_name[0] != '.' && ran >= 0) {
			char full[PATH_MAX];
			int r;

			snprintf(full, sizeof(full), "%s/%s", path, names[i]->d_name);
			r = run_file(fd, full, names[i]->d_name);
			ran = r < 0 ? r : ran + r;
		}
		free(names[i]);
	}
	free(names);
	close(fd);
	return ran;
}

int main(int argc, char **argv)
{
	char **paths = calloc((size_t)argc + 1, sizeof(*paths));
	int total = 0, r = 0;

	if (!paths)
		abort();
	/* Absolute first: a harness's initialization may change directory. */
	for (int i = 1; i < argc; i++) {
		paths[i] = realpath(argv[i], NULL);
		if (!paths[i]) {
			fprintf(stderr, "replay: %s: %s\n", argv[i], strerror(errno));
			return 1;
		}
	}
	LLVMFuzzerInitialize(&argc, &argv);
	for (int i = 1; i < argc && r >= 0; i++) {
		struct stat st;

		r = stat(paths[i], &st);
		if (r == 0)
			r = S_ISDIR(st.st_mode) ? run_dir(paths[i])
						: run_file(AT_FDCWD, paths[i], paths[i]);
		else
			fprintf(stderr, "replay: %s: %s\n", paths[i], strerror(errno));
		total += r > 0 ? r : 0;
	}
	for (int i = 1; i < argc; i++)
		free(paths[i]);
	free(paths);
	if (r < 0)
		return 1;
	printf("%d inputs ran\n", total);
	return 0;
}
