/* SPDX-License-Identifier: MIT */
#include "secmem.h"
#include "util.h"

#include <malloc.h>
#include <sys/mman.h>

/* Each block starts with the size of its mapping, then the caller's bytes (aligned as malloc's). */
#define HEADER 16

void *sr_secmem_alloc(size_t n)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	size_t size;
	void *p;

	if (n > SIZE_MAX - HEADER - page) {
		errno = ENOMEM;
		return NULL;
	}
	size = (n + HEADER + page - 1) / page * page;
	p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		return NULL;
	/* Without DONTFORK it would be ordinary memory: refused, not given as if it were not. */
	if (madvise(p, size, MADV_DONTFORK) < 0) {
		int e = errno;

		munmap(p, size);
		errno = e;
		return NULL;
	}
	(void)madvise(p, size, MADV_DONTDUMP);
	*(size_t *)p = size;
	return (char *)p + HEADER;
}

void sr_secmem_free(void *p)
{
	char *base;
	size_t size;

	if (!p)
		return;
	base = (char *)p - HEADER;
	size = *(size_t *)base;
	/* Wiped first: the kernel zeroes pages unmapped only when it hands them out again. */
	explicit_bzero(base, size);
	munmap(base, size);
}

void sr_free_wiped(void *p)
{
	if (!p)
		return;
	explicit_bzero(p, malloc_usable_size(p));
	free(p);
}
