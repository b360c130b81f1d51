/* SPDX-License-Identifier: MIT */
#include "userns.h"
#include "sandbox.h"
#include "util.h"

#include <fcntl.h>
#include <grp.h>
#include <stdio.h>
#include <sys/prctl.h>

/* Debian's overflow ("nobody") id: owns no files a sandbox could reach. */
#define SR_FALLBACK_HOST_ID 65534

static unsigned first_subid(const char *path, const char *user)
{
	_cleanup_fclose_ FILE *f = fopen(path, "re");
	char line[256];
	size_t ul = strlen(user);

	if (!f)
		return SR_FALLBACK_HOST_ID;
	while (fgets(line, sizeof(line), f)) {
		unsigned long start, count;

		if (strncmp(line, user, ul) != 0 || line[ul] != ':')
			continue;
		if (sscanf(line + ul + 1, "%lu:%lu", &start, &count) == 2 && count > 0 &&
		    start > 0 && start < 0xfffffffful)
			return (unsigned)start;
	}
	return SR_FALLBACK_HOST_ID;
}

void sr_userns_host_ids(uid_t caller_uid, gid_t caller_gid, uid_t *ret_uid, gid_t *ret_gid)
{
	if (caller_uid != 0) {
		*ret_uid = caller_uid;
		*ret_gid = caller_gid;
		return;
	}
	/*
	 * Never map host root: the agent would own every root-owned file it can
	 * reach. Root's first subordinate id is an id nothing else uses.
	 */
	*ret_uid = first_subid("/etc/subuid", "root");
	*ret_gid = first_subid("/etc/subgid", "root");
}

int sr_userns_map_text(unsigned inside, unsigned outside, char *buf, size_t len)
{
	int n = snprintf(buf, len, "%u %u 1\n", inside, outside);

	return n < 0 || (size_t)n >= len ? -ENOBUFS : n;
}

static int write_proc_file(pid_t pid, const char *name, const char *text, struct sr_error *err)
{
	char path[64];
	_cleanup_close_ int fd = -1;
	size_t len = strlen(text);

	snprintf(path, sizeof(path), "/proc/%d/%s", (int)pid, name);
	fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return sr_error_errno(err, sr_negerrno(), "open %s", path);
	/* The kernel takes a map in one write(2) or not at all. */
	if (SR_RETRY(write(fd, text, len)) != (ssize_t)len)
		return sr_error_errno(err, sr_negerrno(), "write %s", path);
	return 0;
}

int sr_userns_parent(pid_t child, uid_t host_uid, gid_t host_gid, struct sr_error *err)
{
	char map[64];
	int r;

	/*
	 * Without CAP_SETGID over the parent namespace, setgroups must be
	 * denied before gid_map can be written (CVE-2014-8989: dropping groups
	 * could grant access that a negative group ACL denied). Root keeps it
	 * allowed so the child can drop root's supplementary groups, which the
	 * kernel would otherwise still honour on host files.
	 */
	if (geteuid() != 0) {
		r = write_proc_file(child, "setgroups", "deny", err);
		if (r < 0)
			return r;
	}
	r = sr_userns_map_text(SR_SANDBOX_UID, host_uid, map, sizeof(map));
	if (r < 0)
		return sr_error_errno(err, r, "uid map");
	r = write_proc_file(child, "uid_map", map, err);
	if (r < 0)
		return r;
	r = sr_userns_map_text(SR_SANDBOX_GID, host_gid, map, sizeof(map));
	if (r < 0)
		return sr_error_errno(err, r, "gid map");
	return write_proc_file(child, "gid_map", map, err);
}

int sr_userns_child(bool drop_groups, struct sr_error *err)
{
	/*
	 * The namespace's capabilities survive these calls: capabilities are
	 * only cleared when a uid changes away from the namespace's uid 0, and
	 * uid 0 is not mapped here at all.
	 */
	/*
	 * A root caller's supplementary groups (0 among them) would still be
	 * honoured on host files: they must go. An unprivileged caller cannot
	 * drop its own (setgroups is denied) and they grant nothing new.
	 */
	if (drop_groups && setgroups(0, NULL) < 0)
		return sr_error_errno(err, sr_negerrno(), "setgroups");
	if (setresgid(SR_SANDBOX_GID, SR_SANDBOX_GID, SR_SANDBOX_GID) < 0)
		return sr_error_errno(err, sr_negerrno(), "setresgid %d", SR_SANDBOX_GID);
	if (setresuid(SR_SANDBOX_UID, SR_SANDBOX_UID, SR_SANDBOX_UID) < 0)
		return sr_error_errno(err, sr_negerrno(), "setresuid %d", SR_SANDBOX_UID);
	return 0;
}
