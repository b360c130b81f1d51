/* SPDX-License-Identifier: MIT */
/*
 * The host side of `sandbox-run cp` (copy.h): the stream's pipe handed
 * to the keeper, libarchive on this end, the keeper's answer.
 */
#include "copy.h"
#include "archive.h"
#include "control.h"
#include "util.h"

#include <sys/stat.h>

/* cp moves whole trees (node_modules): bounded by the disks on either side, not by a count. */
#define CP_MAX_ENTRIES (10 * 1000 * 1000)

/* The host destination: the directory to extract into, and the name SRC takes there (or NULL). */
static int host_dest(const char *dst, int *ret_dirfd, char **ret_name, struct sr_error *err)
{
	_cleanup_free_ char *copy = strdup(dst);
	char *slash, *name;
	int fd = open(dst, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

	if (fd >= 0) {
		*ret_dirfd = fd;
		*ret_name = NULL;
		return 0;
	}
	if (!copy)
		return sr_error_errno(err, -ENOMEM, "cp");
	if (errno != ENOENT)
		return sr_error_errno(err, sr_negerrno(), "cp: %s", dst);
	while (strlen(copy) > 1 && copy[strlen(copy) - 1] == '/')
		copy[strlen(copy) - 1] = '\0';
	slash = strrchr(copy, '/');
	name = slash ? slash + 1 : copy;
	if (!*name || sr_streq(name, ".") || sr_streq(name, ".."))
		return sr_error_msg(err, -EINVAL, "cp: %s: name a file or directory", dst);
	if (slash)
		*slash = '\0';
	fd = open(slash ? (*copy ? copy : "/") : ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return sr_error_errno(err, sr_negerrno(), "cp: %s", slash ? copy : ".");
	*ret_name = strdup(name);
	if (!*ret_name) {
		close(fd);
		return sr_error_errno(err, -ENOMEM, "cp");
	}
	*ret_dirfd = fd;
	return 0;
}

/* The keeper's answer: how the worker in the sandbox did. */
static int keeper_answer(int ctl, struct sr_error *err)
{
	json_t *reply = NULL;
	int fds[SR_CTL_FDS_MAX];
	size_t n = 0;
	int r = sr_ctl_recv(ctl, &reply, fds, &n);

	for (size_t i = 0; r > 0 && i < n; i++)
		close(fds[i]);
	if (r <= 0)
		return sr_error_msg(err, -ECONNRESET, "cp: the sandbox's keeper hung up");
	r = sr_ctl_reply_error(reply, err);
	json_decref(reply);
	return r < 0 ? sr_error_prefix(err, "cp") : 0;
}

int sr_copy_out(int ctl, const char *path, const char *dst, struct sr_error *err)
{
	_cleanup_close_ int dirfd = -1;
	_cleanup_free_ char *name = NULL;
	struct sr_extract_opts o = {.max_entries = CP_MAX_ENTRIES, .links_within_top = true};
	struct sr_error xerr = {0};
	json_t *req;
	int p[2], r, k;

	r = host_dest(dst, &dirfd, &name, err);
	if (r < 0)
		return r;
	if (pipe2(p, O_CLOEXEC) < 0)
		return sr_error_errno(err, sr_negerrno(), "cp: pipe");
	req = json_pack("{ssso}", "op", "cp_out", "path", sr_json_string(path));
	r = req ? sr_ctl_send(ctl, req, &p[1], 1) : -ENOMEM;
	json_decref(req);
	close(p[1]);
	if (r < 0) {
		close(p[0]);
		return sr_error_errno(err, r, "cp: talk to the sandbox's keeper");
	}
	o.rename_top = name;
	k = sr_archive_extract_opts(p[0], dirfd, &o, &xerr);
	/* Closed before the answer: a worker still writing (we stopped) gets EPIPE and ends. */
	close(p[0]);
	r = keeper_answer(ctl, err);
	if (r < 0)
		return r;
	if (k < 0) {
		*err = xerr;
		return sr_error_prefix(err, "cp");
	}
	return 0;
}

int sr_copy_in(int ctl, const char *src, const char *path, struct sr_error *err)
{
	_cleanup_free_ char *copy = strdup(src);
	struct sr_archive_writer *w = NULL;
	_cleanup_close_ int dir = -1;
	struct sr_error werr = {0};
	char *slash, *name;
	struct stat st;
	json_t *req;
	int p[2], r, k;

	if (!copy)
		return sr_error_errno(err, -ENOMEM, "cp");
	while (strlen(copy) > 1 && copy[strlen(copy) - 1] == '/')
		copy[strlen(copy) - 1] = '\0';
	slash = strrchr(copy, '/');
	name = slash ? slash + 1 : copy;
	if (slash)
		*slash = '\0';
	dir = open(slash ? (*copy ? copy : "/") : ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dir < 0 || fstatat(dir, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return sr_error_errno(err, sr_negerrno(), "cp: %s", src);
	if (!*name || sr_streq(name, ".") || sr_streq(name, ".."))
		return sr_error_msg(err, -EINVAL, "cp: %s: name a file or directory", src);
	if (pipe2(p, O_CLOEXEC) < 0)
		return sr_error_errno(err, sr_negerrno(), "cp: pipe");
	req = json_pack("{ssso}", "op", "cp_in", "path", sr_json_string(path));
	r = req ? sr_ctl_send(ctl, req, &p[0], 1) : -ENOMEM;
	json_decref(req);
	close(p[0]);
	if (r < 0) {
		close(p[1]);
		return sr_error_errno(err, r, "cp: talk to the sandbox's keeper");
	}
	k = sr_archive_writer_new(p[1], false, &w, &werr);
	if (k >= 0)
		k = sr_archive_write_tree(w, dir, name, NULL, &werr);
	if (k >= 0)
		k = sr_archive_writer_end(w, NULL, NULL, &werr);
	sr_archive_writer_free(w);
	close(p[1]);
	r = keeper_answer(ctl, err);
	if (r < 0)
		return r;
	if (k < 0) {
		*err = werr;
		return sr_error_prefix(err, "cp");
	}
	return 0;
}
