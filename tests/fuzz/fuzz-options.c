/* SPDX-License-Identifier: MIT */
/*
 * The command line: sr_options_parse() with argv made of the input split
 * on NUL bytes (after argv[0] = "sandbox-run"). Parsing loads profiles
 * (-p NAME from $XDG_CONFIG_HOME or the built-in copies, -p PATH from
 * disk) and never writes: HOME, XDG_CONFIG_HOME and the current directory
 * are a private directory holding a few profiles, and inputs that could
 * name a device or a /proc or /sys file are skipped (fuzz-common.h).
 */
#include "fuzz-common.h"

#include "config.h"
#include "options.h"

#include <fcntl.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define ARGS_MAX  64
#define INPUT_MAX 4096

static void write_file(const char *name, const char *text)
{
	int fd = open(name, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);

	if (fd < 0 || write(fd, text, strlen(text)) != (ssize_t)strlen(text))
		abort();
	close(fd);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	const char *dir = fuzz_tmpdir("options");

	if (chdir(dir) < 0 || mkdir("sandbox-run", 0700) < 0 ||
	    mkdir("sandbox-run/profiles", 0700) < 0 || mkdir("agent", 0700) < 0)
		abort();
	write_file("sandbox-run/profiles/mine.ini",
		   "[profile]\ninherit = offline\n[limits]\nmemory = 1G\n[env]\nA = b\n");
	write_file("p.ini", "[profile]\ninherit = mine\n[network]\nmode = egress\nallow = "
			    "example.com:443\n[filesystem]\nro-bind = ~/agent:/data\n");
	write_file("env", "A=1\n");
	setenv("XDG_CONFIG_HOME", dir, 1);
	setenv("HOME", dir, 1);
	return 0;
}

static void check_parsed(const struct sr_config *c, enum sr_action action)
{
	struct sr_error err = {};
	char *text = NULL;
	size_t len = 0;
	FILE *f;

	FUZZ_CHECK(action < _SR_ACTION_MAX);
	if (action != SR_ACTION_RUN && action != SR_ACTION_PRINT_CONFIG)
		return;
	FUZZ_CHECK(c->profile && c->profile_path);
	FUZZ_CHECK(c->argc >= 0 && (c->argc > 0 || c->print_config));
	FUZZ_CHECK(sr_config_validate(c, &err) == 0);
	f = open_memstream(&text, &len);
	if (!f)
		abort();
	FUZZ_CHECK(sr_config_print(c, f) == 0);
	fclose(f);
	free(text);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *buf, *argv[ARGS_MAX + 2];
	enum sr_action action = _SR_ACTION_MAX;
	struct sr_error err = {};
	struct sr_config c;
	int argc = 0, r;

	if (size > INPUT_MAX || fuzz_unsafe_path_text((const char *)data, size))
		return -1;
	buf = fuzz_strndup(data, size);
	argv[argc++] = (char *)"sandbox-run";
	for (size_t i = 0; i < size && argc <= ARGS_MAX; i += strlen(buf + i) + 1)
		argv[argc++] = buf + i;
	argv[argc] = NULL;

	sr_config_init(&c);
	/* getopt's state is global: 0 (not 1) also resets glibc's internal scan position. */
	optind = 0;
	r = sr_options_parse(argc, argv, &c, &action, &err);
	if (r < 0)
		FUZZ_CHECK(err.code == r && err.msg[0] != '\0');
	else
		check_parsed(&c, action);
	sr_config_free(&c);
	free(buf);
	return 0;
}
