/* SPDX-License-Identifier: MIT */
/*
 * Memory that no child process inherits, for secrets held by a process
 * that forks others: a server's warm pools, whose keepers and sandboxes
 * are forks of it (launch.h), must each hold their own deployment's
 * secrets and not another's, nor the API's token.
 *
 * Each block is a mapping of its own, marked MADV_DONTFORK: a fork()
 * leaves it out of the child altogether (a child that reads it faults,
 * rather than reading a secret or an empty one), which also holds for a
 * fork of a CLONE_VM child that shares ours. MADV_DONTDUMP keeps it out
 * of a core dump too. A page or more per block, three system calls to make
 * one and one to free it: for what is made once and kept (a deployment's
 * secrets, the token), not for each request.
 */
#pragma once

#include <stddef.h>

/* n bytes, zeroed; NULL and errno when it cannot be had. */
void *sr_secmem_alloc(size_t n);
/* Wipes and unmaps what sr_secmem_alloc() gave; NULL is fine. */
void sr_secmem_free(void *p);

/*
 * free() of a block of malloc's that wipes it first (malloc_usable_size's
 * bytes): a library's free where its blocks may hold a secret (the
 * server's JSON, its answers' bytes). NULL is fine.
 */
void sr_free_wiped(void *p);

static inline void sr_free_wipedp(void *p)
{
	sr_free_wiped(*(void **)p);
}
/* As _cleanup_free_ (util.h), wiped: for a block that may hold what a fork must not copy. */
#define _cleanup_free_wiped_ __attribute__((cleanup(sr_free_wipedp)))
