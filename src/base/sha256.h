/* SPDX-License-Identifier: MIT */
/*
 * SHA-256 (FIPS 180-4), for the content of changes files (changes.h):
 * what a file held when the sandbox's changes were taken, and what its
 * new content is, so that apply can tell whether the host copy changed
 * since and whether a changes file's contents are the ones it lists.
 */
#pragma once

#include <stddef.h>
#include <stdint.h>

struct sr_sha256 {
	uint32_t h[8];
	uint64_t bytes;
	unsigned char buf[64];
	size_t used;
};

#define SR_SHA256_HEX_LEN 64

void sr_sha256_init(struct sr_sha256 *s);
void sr_sha256_update(struct sr_sha256 *s, const void *data, size_t len);
/* Lower-case hex, NUL-terminated: hex has SR_SHA256_HEX_LEN + 1 bytes. */
void sr_sha256_hex(struct sr_sha256 *s, char hex[SR_SHA256_HEX_LEN + 1]);
