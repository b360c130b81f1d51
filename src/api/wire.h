/* SPDX-License-Identifier: MIT */
/* What the API's bodies are wrapped in (wire.c): Connect's envelopes, base64, UTF-8. */
#pragma once

#include <stddef.h>

/*
 * Connect's envelopes (streaming RPCs): a flags byte, a 32-bit big-endian
 * length, the message. The first message of buf: -EINVAL if it is not one
 * whole envelope (or is compressed, flag 1).
 */
int sr_connect_unwrap(const char *buf, size_t len, const char **ret_msg, size_t *ret_len);
/* The 5-byte header of a message of len bytes. */
void sr_connect_header(unsigned char flags, size_t len, unsigned char hdr[5]);
#define SR_CONNECT_END_STREAM 0x02

/* Base64 (RFC 4648, padded): out needs sr_base64_len(len) bytes; returns the length written. */
#define sr_base64_len(n) (((n) + 2) / 3 * 4 + 1)
size_t sr_base64_encode(const void *in, size_t len, char *out);
/* Decodes in (padded or not; no whitespace) into out (len * 3 / 4 bytes suffice); -EINVAL. */
int sr_base64_decode(const char *in, size_t len, unsigned char *out, size_t *ret_len);

/* The length of buf's longest prefix that does not end in the middle of a UTF-8 sequence. */
size_t sr_utf8_whole(const char *buf, size_t len);
