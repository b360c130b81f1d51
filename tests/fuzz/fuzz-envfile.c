/* SPDX-License-Identifier: MIT */
/*
 * The env file reader: sr_env_read_file() on the input written to a file
 * of mode 0600. What it returns is one "KEY=VALUE" per KEY, each KEY a
 * valid name, each entry a line of the input.
 */
#include "fuzz-common.h"

#include "config.h"
#include "env.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char path[PATH_MAX];
static int fd = -1;

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	snprintf(path, sizeof(path), "%s/env", fuzz_tmpdir("envfile"));
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (fd < 0)
		abort();
	return 0;
}

static void check_entries(const struct sr_strv *v, const uint8_t *data, size_t size)
{
	for (size_t i = 0; i < v->n; i++) {
		const char *kv = v->items[i];
		size_t kl = strcspn(kv, "=");

		FUZZ_CHECK(kv[kl] == '=' && sr_env_valid_name(kv, kl));
		FUZZ_CHECK(memmem(data, size, kv, strlen(kv)) != NULL);
		for (size_t j = 0; j < i; j++)
			FUZZ_CHECK(strncmp(v->items[j], kv, kl + 1) != 0);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct sr_strv v = {};
	struct sr_error err = {};
	int r;

	if (ftruncate(fd, 0) < 0 || pwrite(fd, data, size, 0) != (ssize_t)size)
		abort();
	r = sr_env_read_file(path, &v, &err);
	if (r < 0)
		FUZZ_CHECK(err.code == r && err.msg[0] != '\0');
	else
		check_entries(&v, data, size);
	sr_strv_free(&v);
	return 0;
}
