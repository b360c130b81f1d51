/* SPDX-License-Identifier: MIT */
/*
 * A multipart/form-data body (RFC 7578), parsed as it comes: envd's
 * POST /files, one part per file. Each part's bytes are handed on as
 * slices of the input, never copied: the parser holds nothing of a
 * file's, only the part's headers (a name, a file name) while they come,
 * wiped once read. libmicrohttpd's own parser copied every byte through a
 * 64 KiB buffer it freed as it was, which every keeper forked later
 * copied (docs/security.md, "What a keeper holds").
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>

/* RFC 2046: a boundary is 1 to 70 characters. */
#define SR_MULTIPART_BOUNDARY_MAX 70
/* A part's headers, all of them (E2B's SDK and curl send one or two lines). */
#define SR_MULTIPART_HEAD_MAX 8192

struct sr_multipart_ops {
	/* A part begins: the name and file name its Content-Disposition gives (NULL: none). */
	void (*begin)(void *ctx, const char *name, const char *filename);
	/* The next bytes of the part begun last. */
	void (*data)(void *ctx, const char *p, size_t n);
};

struct sr_multipart {
	const struct sr_multipart_ops *ops;
	void *ctx;
	char delim[4 + SR_MULTIPART_BOUNDARY_MAX + 1]; /* "\r\n--" BOUNDARY */
	size_t delim_len;
	size_t matched; /* of delim, in the bytes just read */
	int state;
	char head[SR_MULTIPART_HEAD_MAX + 1];
	size_t head_len;
};

/*
 * Whether content_type is multipart/form-data with a boundary: 0, m ready
 * for the body; -ENOMSG when it is another type (the body is no form);
 * -EINVAL when it is multipart/form-data without a valid boundary.
 */
int sr_multipart_init(struct sr_multipart *m, const char *content_type,
		      const struct sr_multipart_ops *ops, void *ctx);
/* The next n bytes of the body: 0, or -EBADMSG when it is not the form it says. */
int sr_multipart_feed(struct sr_multipart *m, const char *p, size_t n);
/* The body is over: 0 when it ended with its closing boundary, else -EBADMSG. */
int sr_multipart_end(struct sr_multipart *m);
/* Wipes what it held of the parts' headers. */
void sr_multipart_free(struct sr_multipart *m);
