/* SPDX-License-Identifier: MIT */
/*
 * The profile parser: sr_profile_load_string() on a fresh configuration.
 * When the text loads, --print-config's promise is checked too: the printed
 * profile loads back to the same configuration (compared as printed text),
 * unless the printer said a value cannot be represented.
 */
#include "fuzz-common.h"

#include "config.h"
#include "profile.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* inih reads lines of at most 200 bytes; 64 KiB is hundreds of them. */
#define INPUT_MAX (64 * 1024)

static const char user_profile[] = "[profile]\ninherit = default\n[limits]\nmemory = 1G\n";

static void write_file(int dirfd, const char *name, const char *text)
{
	int fd = openat(dirfd, name, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);

	if (fd < 0 || write(fd, text, strlen(text)) != (ssize_t)strlen(text))
		abort();
	close(fd);
}

/*
 * `inherit = NAME` looks in $XDG_CONFIG_HOME, then the data directory,
 * then the built-in profiles; a relative path is relative to the current
 * directory. All of them point into a private directory with one user
 * profile ("mine") and one file reached by relative path ("rel/p.ini").
 */
int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	const char *dir = fuzz_tmpdir("profile");
	int fd;

	if (chdir(dir) < 0 || mkdir("sandbox-run", 0700) < 0 ||
	    mkdir("sandbox-run/profiles", 0700) < 0 || mkdir("rel", 0700) < 0)
		abort();
	fd = open(".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		abort();
	write_file(fd, "sandbox-run/profiles/mine.ini", user_profile);
	write_file(fd, "rel/p.ini", "[profile]\ninherit = ../rel/q.ini\n[network]\nmode = none\n");
	write_file(fd, "rel/q.ini", "[limits]\ncpus = 0.5\n");
	close(fd);
	setenv("XDG_CONFIG_HOME", dir, 1);
	setenv("HOME", dir, 1);
	return 0;
}

static char *print_config(const struct sr_config *c)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);

	if (!f)
		abort();
	FUZZ_CHECK(sr_config_print(c, f) == 0);
	fclose(f);
	return text;
}

static void check_print_round_trip(const struct sr_config *c)
{
	char *first = print_config(c), *second;
	struct sr_error err = {};
	struct sr_config back;

	if (strstr(first, "not representable")) {
		free(first);
		return;
	}
	sr_config_init(&back);
	if (sr_profile_load_string(&back, first, "printed.ini", &err) < 0) {
		fprintf(stderr, "printed:\n%s\nreload: %s\n", first, err.msg);
		FUZZ_CHECK(!"a printed configuration loads back");
	}
	second = print_config(&back);
	if (strcmp(first, second) != 0) {
		fprintf(stderr, "printed:\n%s\nreprinted:\n%s\n", first, second);
		FUZZ_CHECK(!"a printed configuration loads back to the same one");
	}
	free(first);
	free(second);
	sr_config_free(&back);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct sr_error err = {};
	struct sr_config c;
	char *text;
	int r;

	if (size > INPUT_MAX || fuzz_unsafe_path_text((const char *)data, size))
		return -1;
	text = fuzz_strndup(data, size);
	sr_config_init(&c);
	r = sr_profile_load_string(&c, text, "fuzz.ini", &err);
	if (r < 0) {
		FUZZ_CHECK(err.code == r && err.msg[0] != '\0');
		FUZZ_CHECK(strlen(err.msg) < sizeof(err.msg));
	} else {
		FUZZ_CHECK(sr_config_validate(&c, &err) == 0 || err.msg[0] != '\0');
		check_print_round_trip(&c);
	}
	sr_config_free(&c);
	free(text);
	return 0;
}
