/* SPDX-License-Identifier: MIT */
/* What the API's bodies are wrapped in: Connect's envelopes, base64, whole UTF-8 sequences. */
#include "wire.h"

#include <errno.h>
#include <stdint.h>
#include <string.h>

int sr_connect_unwrap(const char *buf, size_t len, const char **ret_msg, size_t *ret_len)
{
	const unsigned char *b = (const unsigned char *)buf;
	size_t n;

	if (len < 5 || (b[0] & 0x01))
		return -EINVAL;
	n = (size_t)b[1] << 24 | (size_t)b[2] << 16 | (size_t)b[3] << 8 | b[4];
	if (n > len - 5)
		return -EINVAL;
	*ret_msg = buf + 5;
	*ret_len = n;
	return 0;
}

void sr_connect_header(unsigned char flags, size_t len, unsigned char hdr[5])
{
	hdr[0] = flags;
	hdr[1] = (unsigned char)(len >> 24);
	hdr[2] = (unsigned char)(len >> 16);
	hdr[3] = (unsigned char)(len >> 8);
	hdr[4] = (unsigned char)len;
}

static const char b64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

size_t sr_base64_encode(const void *in, size_t len, char *out)
{
	const unsigned char *p = in;
	size_t o = 0;

	for (size_t i = 0; i < len; i += 3) {
		uint32_t v = (uint32_t)p[i] << 16;

		if (i + 1 < len)
			v |= (uint32_t)p[i + 1] << 8;
		if (i + 2 < len)
			v |= p[i + 2];
		out[o++] = b64[v >> 18 & 63];
		out[o++] = b64[v >> 12 & 63];
		out[o++] = i + 1 < len ? b64[v >> 6 & 63] : '=';
		out[o++] = i + 2 < len ? b64[v & 63] : '=';
	}
	out[o] = '\0';
	return o;
}

int sr_base64_decode(const char *in, size_t len, unsigned char *out, size_t *ret_len)
{
	uint32_t acc = 0;
	size_t o = 0, bits = 0;

	while (len > 0 && in[len - 1] == '=')
		len--;
	if (len % 4 == 1)
		return -EINVAL;
	for (size_t i = 0; i < len; i++) {
		const char *c = in[i] ? strchr(b64, in[i]) : NULL;

		if (!c)
			return -EINVAL;
		acc = acc << 6 | (uint32_t)(c - b64);
		bits += 6;
		if (bits >= 8) {
			bits -= 8;
			out[o++] = (unsigned char)(acc >> bits);
		}
	}
	*ret_len = o;
	return 0;
}

size_t sr_utf8_whole(const char *buf, size_t len)
{
	const unsigned char *b = (const unsigned char *)buf;
	size_t start = len, need;

	/* Back over at most three continuation bytes to the sequence's first byte. */
	while (start > 0 && len - start < 4 && (b[start - 1] & 0xC0) == 0x80)
		start--;
	if (start == 0)
		return len;
	start--;
	if (b[start] < 0x80)
		return len;
	need = b[start] >= 0xF0 ? 4 : b[start] >= 0xE0 ? 3 : b[start] >= 0xC0 ? 2 : 1;
	return len - start < need ? start : len;
}
