/* SPDX-License-Identifier: MIT */
#include "procview-text.h"
#include "util.h"

#include <stdarg.h>

/* A growable text; a failed allocation sticks, and the end says -ENOMEM once. */
struct text {
	char *s;
	size_t len, cap;
	bool failed;
};

static void put(struct text *t, const char *p, size_t n)
{
	if (t->failed)
		return;
	if (SR_GROW(t->s, t->cap, t->len + n + 1, 4096) < 0) {
		t->failed = true;
		return;
	}
	memcpy(t->s + t->len, p, n);
	t->len += n;
	t->s[t->len] = '\0';
}

__attribute__((format(printf, 2, 3))) static void putf(struct text *t, const char *fmt, ...)
{
	char buf[256];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	if (n > 0)
		put(t, buf, (size_t)n < sizeof(buf) ? (size_t)n : sizeof(buf) - 1);
}

static ssize_t finish(struct text *t, char **ret)
{
	if (!t->failed && !t->s)
		put(t, "", 0);
	if (t->failed) {
		free(t->s);
		return -ENOMEM;
	}
	*ret = t->s;
	return (ssize_t)t->len;
}

/* The line at p, without its newline: its length; *next the line after. */
static size_t line_at(const char *p, const char **next)
{
	const char *end = strchrnul(p, '\n');

	*next = *end ? end + 1 : end;
	return (size_t)(end - p);
}

/* memory.stat */

static const struct {
	const char *v2, *v1;
} memstat_names[_SR_MEMSTAT_FIELD_MAX] = {
    [SR_MEMSTAT_ANON] = {"anon", "total_rss"},
    [SR_MEMSTAT_FILE] = {"file", "total_cache"},
    [SR_MEMSTAT_SHMEM] = {"shmem", "total_shmem"},
    [SR_MEMSTAT_FILE_MAPPED] = {"file_mapped", "total_mapped_file"},
    [SR_MEMSTAT_FILE_DIRTY] = {"file_dirty", "total_dirty"},
    [SR_MEMSTAT_FILE_WRITEBACK] = {"file_writeback", "total_writeback"},
    [SR_MEMSTAT_ACTIVE_ANON] = {"active_anon", "total_active_anon"},
    [SR_MEMSTAT_INACTIVE_ANON] = {"inactive_anon", "total_inactive_anon"},
    [SR_MEMSTAT_ACTIVE_FILE] = {"active_file", "total_active_file"},
    [SR_MEMSTAT_INACTIVE_FILE] = {"inactive_file", "total_inactive_file"},
    [SR_MEMSTAT_UNEVICTABLE] = {"unevictable", "total_unevictable"},
    [SR_MEMSTAT_SLAB_RECLAIMABLE] = {"slab_reclaimable", NULL},
    [SR_MEMSTAT_SLAB_UNRECLAIMABLE] = {"slab_unreclaimable", NULL},
    [SR_MEMSTAT_KERNEL_STACK] = {"kernel_stack", NULL},
    [SR_MEMSTAT_PAGETABLES] = {"pagetables", NULL},
    [SR_MEMSTAT_ANON_THP] = {"anon_thp", "total_rss_huge"},
    [SR_MEMSTAT_SHMEM_THP] = {"shmem_thp", NULL},
};

/*
 * v1's own counts (rss, cache, ...) are of the cgroup's own tasks; its
 * total_* ones, of the cgroup and every cgroup below it, are what v2's
 * plain names count: only the total_* names are read from a v1 text.
 */
void sr_procview_parse_memstat(const char *text, struct sr_memstat *ret)
{
	*ret = (struct sr_memstat){0};
	for (const char *p = text, *next; p && *p; p = next) {
		size_t n = line_at(p, &next);
		const char *sp = memchr(p, ' ', n);
		size_t kl = sp ? (size_t)(sp - p) : 0;

		if (!sp)
			continue;
		for (size_t f = 0; f < _SR_MEMSTAT_FIELD_MAX; f++) {
			const char *names[] = {memstat_names[f].v2, memstat_names[f].v1};

			for (size_t i = 0; i < 2; i++) {
				if (!names[i] || strlen(names[i]) != kl || memcmp(p, names[i], kl))
					continue;
				ret->v[f] = strtoull(sp + 1, NULL, 10);
				ret->have |= 1u << f;
			}
		}
	}
}

/* meminfo */

/* What a line of /proc/meminfo shows in the sandbox. */
enum how {
	HOST_CAPPED, /* the host's, capped at MemTotal: the default */
	HOST,	     /* the host's as it is: address-space sizes, swap */
	ZERO,
	MEM_TOTAL,
	MEM_FREE,
	MEM_AVAILABLE,
	SWAP, /* 0 where the cgroup holds swap at 0, else the host's */
	STAT, /* the sum of up to two memory.stat counts, where the cgroup has them */
};

#define RULE(key, how)                  \
	{                               \
		key, how, -1, -1, false \
	}
#define STAT1(key, f)                   \
	{                               \
		key, STAT, f, -1, false \
	}
#define STAT2(key, f1, f2)               \
	{                                \
		key, STAT, f1, f2, false \
	}

static const struct rule {
	const char *key;
	enum how how;
	int f1, f2;  /* STAT: the counts; -1 none */
	bool prefix; /* key is a prefix of the names it is for */
} rules[] = {
    RULE("MemTotal", MEM_TOTAL),
    RULE("MemFree", MEM_FREE),
    RULE("MemAvailable", MEM_AVAILABLE),
    RULE("Buffers", ZERO),
    STAT1("Cached", SR_MEMSTAT_FILE),
    RULE("SwapCached", ZERO),
    STAT2("Active", SR_MEMSTAT_ACTIVE_ANON, SR_MEMSTAT_ACTIVE_FILE),
    STAT2("Inactive", SR_MEMSTAT_INACTIVE_ANON, SR_MEMSTAT_INACTIVE_FILE),
    STAT1("Active(anon)", SR_MEMSTAT_ACTIVE_ANON),
    STAT1("Inactive(anon)", SR_MEMSTAT_INACTIVE_ANON),
    STAT1("Active(file)", SR_MEMSTAT_ACTIVE_FILE),
    STAT1("Inactive(file)", SR_MEMSTAT_INACTIVE_FILE),
    STAT1("Unevictable", SR_MEMSTAT_UNEVICTABLE),
    RULE("SwapTotal", SWAP),
    RULE("SwapFree", SWAP),
    STAT1("Dirty", SR_MEMSTAT_FILE_DIRTY),
    STAT1("Writeback", SR_MEMSTAT_FILE_WRITEBACK),
    STAT1("AnonPages", SR_MEMSTAT_ANON),
    STAT1("Mapped", SR_MEMSTAT_FILE_MAPPED),
    STAT1("Shmem", SR_MEMSTAT_SHMEM),
    STAT1("KReclaimable", SR_MEMSTAT_SLAB_RECLAIMABLE),
    STAT2("Slab", SR_MEMSTAT_SLAB_RECLAIMABLE, SR_MEMSTAT_SLAB_UNRECLAIMABLE),
    STAT1("SReclaimable", SR_MEMSTAT_SLAB_RECLAIMABLE),
    STAT1("SUnreclaim", SR_MEMSTAT_SLAB_UNRECLAIMABLE),
    STAT1("KernelStack", SR_MEMSTAT_KERNEL_STACK),
    STAT1("PageTables", SR_MEMSTAT_PAGETABLES),
    STAT1("AnonHugePages", SR_MEMSTAT_ANON_THP),
    STAT1("ShmemHugePages", SR_MEMSTAT_SHMEM_THP),
    /* Sizes of address space, not of memory: nothing to cap. */
    RULE("VmallocTotal", HOST),
    RULE("VmallocUsed", HOST),
    RULE("VmallocChunk", HOST),
    RULE("Hugepagesize", HOST),
    {"DirectMap", HOST, -1, -1, true}, /* DirectMap4k, 2M, 1G */
};

static const struct rule *rule_for(const char *key, size_t kl)
{
	static const struct rule fallback = {NULL, HOST_CAPPED, -1, -1, false};

	for (size_t i = 0; i < SR_ARRAY_SIZE(rules); i++) {
		size_t rl = strlen(rules[i].key);

		if ((rl == kl || (rules[i].prefix && rl < kl)) &&
		    memcmp(key, rules[i].key, rl) == 0)
			return &rules[i];
	}
	return &fallback;
}

/* One "Key:   N kB" line: its key's length and N; false for any other line. */
static bool parse_kb(const char *p, size_t n, size_t *ret_kl, uint64_t *ret_kb)
{
	const char *colon = memchr(p, ':', n), *q;
	char *end;
	unsigned long long v;

	if (!colon || n < 3 || memcmp(p + n - 3, " kB", 3) != 0)
		return false;
	for (q = colon + 1; *q == ' ' || *q == '\t'; q++)
		;
	if (*q < '0' || *q > '9')
		return false;
	v = strtoull(q, &end, 10);
	if (end != p + n - 3)
		return false;
	*ret_kl = (size_t)(colon - p);
	*ret_kb = v;
	return true;
}

/* The host's value of key, in kB, or 0. */
static uint64_t host_kb(const char *host, const char *key)
{
	size_t want = strlen(key);

	for (const char *p = host, *next; *p; p = next) {
		size_t n = line_at(p, &next), kl;
		uint64_t kb;

		if (parse_kb(p, n, &kl, &kb) && kl == want && memcmp(p, key, kl) == 0)
			return kb;
	}
	return 0;
}

static uint64_t min_u64(uint64_t a, uint64_t b)
{
	return a < b ? a : b;
}

struct mem_totals {
	uint64_t total, free, available; /* kB */
};

static struct mem_totals mem_totals(const char *host, const struct sr_procview_mem *m)
{
	static const enum sr_memstat_field reclaimable[] = {
	    SR_MEMSTAT_ACTIVE_FILE, SR_MEMSTAT_INACTIVE_FILE, SR_MEMSTAT_SLAB_RECLAIMABLE};
	struct mem_totals t;
	uint64_t back = 0;

	t.total = m->limit_bytes / 1024;
	if (host_kb(host, "MemTotal"))
		t.total = min_u64(t.total, host_kb(host, "MemTotal"));
	if (!m->cgroup) {
		t.free = min_u64(host_kb(host, "MemFree"), t.total);
		t.available = min_u64(host_kb(host, "MemAvailable"), t.total);
		return t;
	}
	t.free = t.total - min_u64(m->usage_bytes / 1024, t.total);
	/*
	 * What the kernel would give back under pressure: file pages (tmpfs
	 * and shared memory are on the anonymous lists, and there is no swap
	 * for them) and reclaimable slab.
	 */
	for (size_t i = 0; i < SR_ARRAY_SIZE(reclaimable); i++)
		if (m->stat.have & 1u << reclaimable[i])
			back += m->stat.v[reclaimable[i]] / 1024;
	t.available = min_u64(t.free + back, t.total);
	return t;
}

static uint64_t view_kb(const struct rule *r, uint64_t host, const struct mem_totals *t,
			const struct sr_procview_mem *m)
{
	const struct sr_memstat *s = &m->stat;

	switch (r->how) {
	case MEM_TOTAL:
		return t->total;
	case MEM_FREE:
		return t->free;
	case MEM_AVAILABLE:
		return t->available;
	case HOST:
		return host;
	case SWAP:
		return m->no_swap ? 0 : host;
	case ZERO:
		if (m->cgroup)
			return 0;
		break;
	case STAT:
		/*
		 * The sandbox's own count; one its cgroup does not keep (v1 has
		 * no slab, kernel stack or page tables) is 0, not the host's:
		 * free(1) would count the host's slab as the sandbox's cache.
		 */
		if (!m->cgroup)
			break;
		if ((s->have & 1u << r->f1) && (r->f2 < 0 || (s->have & 1u << r->f2)))
			return min_u64((s->v[r->f1] + (r->f2 < 0 ? 0 : s->v[r->f2])) / 1024,
				       t->total);
		return 0;
	case HOST_CAPPED:
		break;
	}
	return min_u64(host, t->total);
}

ssize_t sr_procview_meminfo(const char *host, const struct sr_procview_mem *m, char **ret)
{
	struct text out = {0};
	struct mem_totals t = mem_totals(host, m);

	for (const char *p = host, *next; *p; p = next) {
		size_t n = line_at(p, &next), kl;
		uint64_t kb;
		char label[64];

		if (!parse_kb(p, n, &kl, &kb) || kl + 3 > sizeof(label)) {
			put(&out, p, (size_t)(next - p));
			continue;
		}
		/* The kernel's show_val_kb(): "Key:" padded to 16, the number to 8. */
		snprintf(label, sizeof(label), "%.*s:", (int)kl, p);
		putf(&out, kl + 1 < 16 ? "%-16s%8llu kB\n" : "%s %8llu kB\n", label,
		     (unsigned long long)view_kb(rule_for(p, kl), kb, &t, m));
	}
	return finish(&out, ret);
}

/* stat */

/* "cpuN ..." at p (n bytes): N, or -1 for any other line (the aggregate "cpu " among them). */
static long cpu_line(const char *p, size_t n)
{
	char *end;
	long cpu;

	if (n < 4 || memcmp(p, "cpu", 3) != 0 || p[3] < '0' || p[3] > '9')
		return -1;
	cpu = strtol(p + 3, &end, 10);
	return *end == ' ' && cpu < CPU_SETSIZE ? cpu : -1;
}

#define STAT_FIELDS_MAX 16

ssize_t sr_procview_stat(const char *host, const cpu_set_t *cpus, char **ret)
{
	unsigned long long sum[STAT_FIELDS_MAX] = {0};
	size_t fields = 0, kept = 0;
	struct text out = {0};

	for (const char *p = host, *next; *p; p = next) {
		size_t n = line_at(p, &next), i = 0;
		long cpu = cpu_line(p, n);
		const char *q;

		if (cpu < 0 || !CPU_ISSET((size_t)cpu, cpus))
			continue;
		kept++;
		for (q = strchr(p, ' '); q && q < p + n && i < STAT_FIELDS_MAX; i++) {
			char *end;
			unsigned long long v = strtoull(q, &end, 10);

			if (end == q)
				break;
			sum[i] += v;
			q = end;
		}
		fields = i > fields ? i : fields;
	}
	if (!kept) {
		put(&out, host, strlen(host));
		return finish(&out, ret);
	}
	for (const char *p = host, *next; *p; p = next) {
		size_t n = line_at(p, &next);
		long cpu = cpu_line(p, n);

		if (n >= 4 && memcmp(p, "cpu ", 4) == 0) {
			/* The kernel's format: "cpu " and then " %llu" for each field. */
			put(&out, "cpu ", 4);
			for (size_t i = 0; i < fields; i++)
				putf(&out, " %llu", sum[i]);
			put(&out, "\n", 1);
		} else if (cpu < 0 || CPU_ISSET((size_t)cpu, cpus)) {
			put(&out, p, (size_t)(next - p));
		}
	}
	return finish(&out, ret);
}

/* cpuinfo */

/* The block at p starts "processor<blanks>: N": N, else -1. */
static long processor_of(const char *p)
{
	const char *q = p + strlen("processor");
	char *end;
	long cpu;

	if (strncmp(p, "processor", strlen("processor")) != 0)
		return -1;
	while (*q == ' ' || *q == '\t')
		q++;
	if (*q++ != ':')
		return -1;
	cpu = strtol(q, &end, 10);
	return end != q && cpu >= 0 && cpu < CPU_SETSIZE ? cpu : -1;
}

/* The end of the block at p: past its blank line, or the end of the text. */
static const char *block_end(const char *p)
{
	const char *blank = strstr(p, "\n\n");

	return blank ? blank + 2 : p + strlen(p);
}

ssize_t sr_procview_cpuinfo(const char *host, const cpu_set_t *cpus, char **ret)
{
	struct text out = {0};
	size_t kept = 0;

	for (const char *p = host, *end; *p; p = end) {
		long cpu = processor_of(p);

		end = block_end(p);
		if (cpu >= 0 && CPU_ISSET((size_t)cpu, cpus))
			kept++;
		if (cpu < 0 || CPU_ISSET((size_t)cpu, cpus))
			put(&out, p, (size_t)(end - p));
	}
	if (!kept) {
		out.len = 0;
		put(&out, host, strlen(host));
	}
	return finish(&out, ret);
}

unsigned sr_procview_pick_cpus(const cpu_set_t *allowed, unsigned want, unsigned start,
			       cpu_set_t *ret)
{
	unsigned n = (unsigned)CPU_COUNT(allowed), i = 0, taken = 0;

	if (want == 0 || want >= n) {
		*ret = *allowed;
		return n;
	}
	CPU_ZERO(ret);
	start %= n;
	/* Twice round at most: from the start-th allowed CPU to the end, then from the first. */
	for (unsigned pass = 0; pass < 2 && taken < want; pass++, i = 0)
		for (size_t cpu = 0; cpu < CPU_SETSIZE && taken < want; cpu++) {
			if (!CPU_ISSET(cpu, allowed))
				continue;
			if (pass == 0 && i++ < start)
				continue;
			if (!CPU_ISSET(cpu, ret)) {
				CPU_SET(cpu, ret);
				taken++;
			}
		}
	return n;
}
