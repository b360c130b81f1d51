/* SPDX-License-Identifier: MIT */
/*
 * The texts of the sandbox's view of its machine (procview.h): the host's
 * /proc/meminfo, /proc/stat and /proc/cpuinfo rewritten for the sandbox's
 * memory limit and the CPUs it may run on, from the host's own text and
 * its memory cgroup's counts. Pure: each function reads only its
 * arguments (unit-tested with recorded host texts, tests/unit/procview/).
 */
#pragma once

#include <sched.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

/* memory.stat's counts (bytes), by their cgroup v2 names; v1's total_* fill the same. */
enum sr_memstat_field {
	SR_MEMSTAT_ANON,
	SR_MEMSTAT_FILE,
	SR_MEMSTAT_SHMEM,
	SR_MEMSTAT_FILE_MAPPED,
	SR_MEMSTAT_FILE_DIRTY,
	SR_MEMSTAT_FILE_WRITEBACK,
	SR_MEMSTAT_ACTIVE_ANON,
	SR_MEMSTAT_INACTIVE_ANON,
	SR_MEMSTAT_ACTIVE_FILE,
	SR_MEMSTAT_INACTIVE_FILE,
	SR_MEMSTAT_UNEVICTABLE,
	SR_MEMSTAT_SLAB_RECLAIMABLE,
	SR_MEMSTAT_SLAB_UNRECLAIMABLE,
	SR_MEMSTAT_KERNEL_STACK,
	SR_MEMSTAT_PAGETABLES,
	SR_MEMSTAT_ANON_THP,
	SR_MEMSTAT_SHMEM_THP,
	_SR_MEMSTAT_FIELD_MAX,
};

struct sr_memstat {
	uint64_t v[_SR_MEMSTAT_FIELD_MAX];
	uint32_t have; /* 1 << field for each one the text had */
};

/* The counts of a memory.stat text, v2 ("anon 123") or v1 ("total_rss 123"). */
void sr_procview_parse_memstat(const char *text, struct sr_memstat *ret);

/* What /proc/meminfo shows of the sandbox's memory. */
struct sr_procview_mem {
	uint64_t limit_bytes; /* MemTotal, capped at the host's */
	bool cgroup;	      /* usage and stat are the sandbox's memory cgroup's */
	uint64_t usage_bytes; /* memory.current (v2), memory.usage_in_bytes (v1) */
	struct sr_memstat stat;
	bool no_swap; /* the cgroup holds the sandbox's swap at 0 */
};

/*
 * /proc/meminfo for the sandbox: MemTotal the limit (capped at the
 * host's); with a cgroup, MemFree the limit less its usage, MemAvailable
 * that plus its reclaimable file cache and slab, the page counts from its
 * memory.stat, Buffers and SwapCached 0, and the swap 0 where the cgroup
 * holds it at 0. Every other size is the host's, capped at MemTotal,
 * except address-space sizes (Vmalloc*, DirectMap*, Hugepagesize) and the
 * swap, which are the host's as they are. Lines the kernel prints as
 * "%-16s%8lu kB" are printed so; lines without "kB" (HugePages_*) are
 * copied. Returns the length of *ret (malloc'ed, NUL-terminated) or
 * -ENOMEM.
 */
ssize_t sr_procview_meminfo(const char *host, const struct sr_procview_mem *m, char **ret);

/*
 * /proc/stat for a sandbox that runs on cpus: the cpuN lines of those CPUs
 * alone (their real numbers and counts), the aggregate "cpu" line summed
 * over them, every other line the host's. Where the text has none of
 * them, it is returned as it is. Length of *ret or -ENOMEM.
 */
ssize_t sr_procview_stat(const char *host, const cpu_set_t *cpus, char **ret);

/*
 * /proc/cpuinfo for a sandbox that runs on cpus: the blocks of those CPUs
 * ("processor : N", x86 and arm64 alike) and any block that names no
 * processor (arm's trailing "Hardware" block); as it is where no block of
 * theirs is found. Length of *ret or -ENOMEM.
 */
ssize_t sr_procview_cpuinfo(const char *host, const cpu_set_t *cpus, char **ret);

/*
 * The CPUs to pin a sandbox to: want of those in allowed, consecutive from
 * the start-th (modulo their count), wrapping around; all of allowed when
 * want is 0 or not fewer. Returns how many allowed has.
 */
unsigned sr_procview_pick_cpus(const cpu_set_t *allowed, unsigned want, unsigned start,
			       cpu_set_t *ret);
