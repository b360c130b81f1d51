/* SPDX-License-Identifier: MIT */
/*
 * A byte queue: appended at len, taken from off. What it carries is a
 * sandbox's (a file, an upload, a process's output): wiped when it grows,
 * when its taken bytes make room, and when it is freed, as the server's
 * other buffers are, so that it is not left in memory that a keeper
 * forked later copies (docs/security.md, "What a keeper holds").
 *
 * Its block is sized by what is queued, not by what went through it: the
 * callers bound the queue (a file read or a process's output stops being
 * read past a high-water mark), and a queue that never runs empty (a
 * client reading steadily, a little slower than the sandbox writes) must
 * not grow with every byte it ever carried.
 */
#pragma once

#include <errno.h>
#include <stdlib.h>
#include <string.h>

struct fbuf {
	char *p;
	size_t len, cap, off;
};

/* What is queued and not taken yet. */
static inline size_t fbuf_queued(const struct fbuf *b)
{
	return b->len - b->off;
}

static inline int fbuf_add(struct fbuf *b, const void *p, size_t n)
{
	if (b->off && b->len + n > b->cap) {
		/* The taken bytes make room first; their copies beyond the queue are wiped. */
		size_t q = fbuf_queued(b);

		memmove(b->p, b->p + b->off, q);
		explicit_bzero(b->p + q, b->len - q);
		b->len = q;
		b->off = 0;
	}
	if (b->len + n > b->cap) {
		size_t cap = b->cap ? b->cap : 4096;
		char *np;

		while (cap < b->len + n)
			cap *= 2;
		/* Not realloc: it would free the old block as it was. */
		np = malloc(cap);
		if (!np)
			return -ENOMEM;
		if (b->p) {
			memcpy(np, b->p, b->len);
			explicit_bzero(b->p, b->cap);
			free(b->p);
		}
		b->p = np;
		b->cap = cap;
	}
	memcpy(b->p + b->len, p, n);
	b->len += n;
	return 0;
}

/* Up to max bytes from the front into buf: how many. Emptied, it starts again at 0. */
static inline size_t fbuf_take(struct fbuf *b, char *buf, size_t max)
{
	size_t n = fbuf_queued(b) < max ? fbuf_queued(b) : max;

	memcpy(buf, b->p + b->off, n);
	b->off += n;
	if (b->off == b->len)
		b->len = b->off = 0;
	return n;
}

static inline void fbuf_free(struct fbuf *b)
{
	if (b->p)
		explicit_bzero(b->p, b->cap);
	free(b->p);
	*b = (struct fbuf){0};
}
