/* SPDX-License-Identifier: MIT */
/*
 * The package.json reader: sr_agent_package_main() on the input as is (not
 * NUL-terminated: the reader takes a length), that is jansson's parser and
 * our checks around it (depth, "main"). A "main" it returns is a C string
 * without NUL bytes, as its header promises. jansson is linked as
 * installed, not instrumented: coverage guides the fuzzer through our
 * code only (jansson has harnesses of its own in OSS-Fuzz).
 */
#include "fuzz-common.h"

#include "agent.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	/* A copy of exactly size bytes, so that ASan catches a read past the end. */
	char *json = malloc(size ? size : 1), *main_js = (char *)"untouched";
	int r;

	if (!json)
		abort();
	if (size > 0)
		memcpy(json, data, size);
	r = sr_agent_package_main(json, size, &main_js);
	FUZZ_CHECK(r == 0 || r == -ENOENT || r == -EINVAL || r == -ENOMEM);
	if (r == 0) {
		FUZZ_CHECK(main_js != NULL);
		/* Decoded JSON never grows: every escape is longer than what it stands for. */
		FUZZ_CHECK(strlen(main_js) < size);
		free(main_js);
	} else {
		FUZZ_CHECK(strcmp(main_js, "untouched") == 0);
	}
	free(json);
	return 0;
}
