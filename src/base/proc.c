/* SPDX-License-Identifier: MIT */
#include "proc.h"
#include "util.h"

#include <sys/prctl.h>

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
