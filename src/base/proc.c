/* SPDX-License-Identifier: MIT */
#include "proc.h"
#include "util.h"

#include <stdbool.h>

#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>

void sr_proc_set_cmdline(const char *text, const char *comm)
{
	_cleanup_close_ int fd = open("/proc/self/cmdline", O_RDONLY | O_CLOEXEC);
	char *start = program_invocation_name, buf[4096];
	size_t len = 0;
	ssize_t n;

	if (comm)
		prctl(PR_SET_NAME, comm, 0, 0, 0);
	if (!start || fd < 0)
		return;
	while ((n = SR_RETRY(read(fd, buf, sizeof(buf)))) > 0)
		len += (size_t)n;
	/* The area is contiguous and at most what the kernel's ARG_MAX allows; be sure of both. */
	if (len == 0 || len > 1 << 22 || strlen(start) >= len)
		return;
	memset(start, 0, len);
	snprintf(start, len, "%s", text);
}

/* A mapping to drop: private, not writable, file-backed, and none of its pages its own copy. */
struct mapping {
	unsigned long start, end;
	bool candidate;
};

static void drop(const struct mapping *m, unsigned long anon_kib)
{
	/*
	 * Anonymous pages in a private file mapping are copies we wrote to
	 * (relocations in a RELRO segment, made read-only after): dropping
	 * them would bring back the file's unrelocated bytes. Only mappings
	 * with none are dropped.
	 */
	if (m->candidate && anon_kib == 0)
		(void)madvise((void *)m->start, m->end - m->start, MADV_DONTNEED);
}

void sr_proc_drop_clean_pages(void)
{
	_cleanup_fclose_ FILE *f = fopen("/proc/self/smaps", "re");
	struct mapping m = {0};
	char line[512];

	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		unsigned long start, end, kib;
		char perms[5];
		int path = 0;

		if (sscanf(line, "%lx-%lx %4s %*s %*s %*s %n", &start, &end, perms, &path) == 3) {
			m = (struct mapping){
			    .start = start,
			    .end = end,
			    .candidate =
				perms[1] != 'w' && perms[3] == 'p' && path > 0 && line[path] == '/',
			};
			continue;
		}
		/* The last field that matters comes after Rss; it closes the mapping's block. */
		if (sscanf(line, "Anonymous: %lu kB", &kib) == 1) {
			drop(&m, kib);
			m.candidate = false;
		}
	}
}

void sr_proc_raise_fd_limit(void)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		(void)setrlimit(RLIMIT_NOFILE, &rl);
	}
}

int sr_proc_no_core_dumps(void)
{
	const struct rlimit one = {1, 1}, none = {0, 0};

	if (setrlimit(RLIMIT_CORE, &one) == 0)
		return 0;
	if (errno == EPERM && setrlimit(RLIMIT_CORE, &none) == 0)
		return 0;
	return sr_negerrno();
}

static unsigned overflow_id(const char *path)
{
	_cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC);
	char buf[16] = "";
	ssize_t n = fd >= 0 ? read(fd, buf, sizeof(buf) - 1) : -1;

	return n > 0 ? (unsigned)strtoul(buf, NULL, 10) : 65534;
}

unsigned sr_proc_overflow_uid(void)
{
	return overflow_id("/proc/sys/kernel/overflowuid");
}

unsigned sr_proc_overflow_gid(void)
{
	return overflow_id("/proc/sys/kernel/overflowgid");
}

uint64_t sr_proc_within_hard(int resource, uint64_t value)
{
	struct rlimit rl;

	if (value && getrlimit(resource, &rl) == 0 && rl.rlim_max != RLIM_INFINITY &&
	    rl.rlim_max < value)
		return rl.rlim_max;
	return value;
}

int sr_proc_lower_rlimit(int resource, uint64_t value)
{
	struct rlimit rl;

	rl.rlim_cur = rl.rlim_max = sr_proc_within_hard(resource, value);
	return setrlimit(resource, &rl) < 0 ? sr_negerrno() : 0;
}
