/* SPDX-License-Identifier: MIT */
#include "work.h"
#include "archive.h"
#include "protocol.h"
#include "util.h"

#include <limits.h>
#include <sys/stat.h>

/* cp and snapshots move whole trees: node_modules has tens of thousands of files. */
#define WORK_MAX_ENTRIES (10 * 1000 * 1000)

/* path, without trailing slashes, as parent directory + last part; "/" and "" name nothing. */
static int split(const char *path, char *parent, size_t plen, char *base, size_t blen)
{
	char buf[PATH_MAX];
	size_t n;
	char *slash;

	if (snprintf(buf, sizeof(buf), "%s", path) >= (int)sizeof(buf))
		return -ENAMETOOLONG;
	n = strlen(buf);
	while (n > 1 && buf[n - 1] == '/')
		buf[--n] = '\0';
	slash = strrchr(buf, '/');
	snprintf(base, blen, "%s", slash ? slash + 1 : buf);
	if (!*base || sr_streq(base, ".") || sr_streq(base, ".."))
		return -EINVAL;
	if (!slash)
		snprintf(parent, plen, ".");
	else if (slash == buf)
		snprintf(parent, plen, "/");
	else
		snprintf(parent, plen, "%.*s", (int)(slash - buf), buf);
	return 0;
}

static int tar_out(const char *path, int fd, struct sr_error *err)
{
	char parent[PATH_MAX], base[NAME_MAX + 1];
	struct sr_archive_writer *w = NULL;
	_cleanup_close_ int dir = -1;
	struct stat st;
	int r = split(path, parent, sizeof(parent), base, sizeof(base));

	if (r < 0)
		return sr_error_msg(err, r, "%s: name a file or directory", path);
	dir = open(parent, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dir < 0 || fstatat(dir, base, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return sr_error_errno(err, sr_negerrno(), "%s", path);
	if ((r = sr_archive_writer_new(fd, &(struct sr_write_opts){0}, &w, err)) < 0 ||
	    (r = sr_archive_write_tree(w, dir, base, NULL, err)) < 0 ||
	    (r = sr_archive_writer_end(w, NULL, NULL, err)) < 0) {
		sr_archive_writer_free(w);
		return r;
	}
	sr_archive_writer_free(w);
	return 0;
}

static int tar_in(const struct sr_plan *p, const char *path, int fd, struct sr_error *err)
{
	char parent[PATH_MAX], base[NAME_MAX + 1];
	struct sr_extract_opts o = {.max_bytes = p->config->disk_bytes,
				    .max_entries = WORK_MAX_ENTRIES,
				    .links_within_top = true};
	_cleanup_close_ int dir = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	int r;

	/* Into an existing directory; else as path, in its parent. */
	if (dir < 0) {
		if (errno != ENOENT && errno != ENOTDIR)
			return sr_error_errno(err, sr_negerrno(), "%s", path);
		r = split(path, parent, sizeof(parent), base, sizeof(base));
		if (r < 0)
			return sr_error_msg(err, r, "%s: name a file or directory", path);
		dir = open(parent, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (dir < 0)
			return sr_error_errno(err, sr_negerrno(), "%s", parent);
		o.rename_top = base;
	}
	return sr_archive_extract_opts(fd, dir, &o, err);
}

/* The sandbox's writable parts, each under its own name: what create --from restores. */
static int snapshot(int fd, struct sr_error *err)
{
	static const struct {
		const char *path, *as;
	} parts[] = {{"/workspace", "workspace"}, {"/home/user", "home"}, {"/tmp", "tmp"}};
	struct sr_archive_writer *w = NULL;
	_cleanup_close_ int root = open("/", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	int r = root < 0 ? sr_error_errno(err, sr_negerrno(), "/") : 0;

	if (r >= 0)
		r = sr_archive_writer_new(fd, &(struct sr_write_opts){.compress = true}, &w, err);
	for (size_t i = 0; r >= 0 && i < SR_ARRAY_SIZE(parts); i++)
		r = sr_archive_write_tree(w, root, parts[i].path + 1, parts[i].as, err);
	if (r >= 0)
		r = sr_archive_writer_end(w, NULL, NULL, err);
	sr_archive_writer_free(w);
	return r;
}

static __attribute__((noreturn)) void worker(const struct sr_plan *p, int kind, const char *path,
					     int fd, int report)
{
	struct sr_error e = {0};
	int keep[] = {fd, report};
	int r;

	/*
	 * A session of its own: a kill(0, sig) of libarchive's reaches nobody
	 * of PID 1's group. Of PID 1's fds only these two stay: not its
	 * protocol socket, nor the FUSE connections of the /proc views it
	 * serves (viewfs.h), which a worker holding would keep alive.
	 */
	if (setsid() < 0)
		r = sr_error_errno(&e, sr_negerrno(), "worker: setsid");
	else if (sr_close_fds_except(keep, SR_ARRAY_SIZE(keep)) < 0)
		r = sr_error_errno(&e, sr_negerrno(), "worker: close fds");
	else if (kind == SR_WORK_TAR_OUT)
		r = tar_out(path, fd, &e);
	else if (kind == SR_WORK_TAR_IN)
		r = tar_in(p, path, fd, &e);
	else
		r = snapshot(fd, &e);
	if (r < 0)
		(void)!sr_write_all(report, &e, sizeof(e));
	_exit(r < 0 ? 1 : 0);
}

pid_t sr_work_start(const struct sr_plan *p, int kind, const char *path, int fd, int *ret_report,
		    struct sr_error *err)
{
	int pipefd[2];
	pid_t pid;

	if ((kind == SR_WORK_TAR_OUT || kind == SR_WORK_TAR_IN) && (!path || !*path))
		return sr_error_msg(err, -EINVAL, "no path");
	if (kind < SR_WORK_TAR_OUT || kind > SR_WORK_SNAPSHOT || fd < 0)
		return sr_error_msg(err, -EINVAL, "a malformed request");
	if (pipe2(pipefd, O_CLOEXEC) < 0)
		return sr_error_errno(err, sr_negerrno(), "worker: pipe");
	/* A fork, not PID 1's vfork: the worker runs libarchive, which allocates. */
	pid = fork();
	if (pid < 0) {
		close(pipefd[0]);
		close(pipefd[1]);
		return sr_error_errno(err, sr_negerrno(), "worker: fork");
	}
	if (pid == 0) {
		close(pipefd[0]);
		worker(p, kind, path, fd, pipefd[1]);
	}
	close(pipefd[1]);
	*ret_report = pipefd[0];
	return pid;
}
