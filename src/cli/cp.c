/* SPDX-License-Identifier: MIT */
/*
 * `sandbox-run cp SRC DST`, one of them ID:PATH: files in or out of a
 * living sandbox as a tar stream on a pipe. Inside, a worker of PID 1
 * (work.h) reads or writes the stream with the agent's own rights; here,
 * this command does, with the caller's. Either side's extraction follows
 * the rules of archive agents (archive.h): nothing outside the
 * destination, no device, no set-id bit, no link leaving the tree.
 *
 * As cp(1) and docker cp: DST an existing directory gets SRC inside it
 * under SRC's name; otherwise DST is the copy's name (its parent must
 * exist). A relative PATH in the sandbox is relative to /workspace.
 */
#include "archive.h"
#include "control.h"
#include "options.h"
#include "state.h"
#include "util.h"
#include "verbs.h"

#include <sys/stat.h>

/* cp moves whole trees (node_modules): bounded by the disks on either side, not by a count. */
#define CP_MAX_ENTRIES (10 * 1000 * 1000)

/* "ID:PATH" (ID with no slash): the sandbox's part in *ret_ref and *ret_path. */
static bool sandbox_side(const char *arg, char **ret_ref, const char **ret_path)
{
	const char *colon = strchr(arg, ':');

	if (!colon || colon == arg || memchr(arg, '/', (size_t)(colon - arg)))
		return false;
	*ret_ref = strndup(arg, (size_t)(colon - arg));
	*ret_path = colon + 1;
	return *ret_ref != NULL;
}

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

static int copy_out(int ctl, const char *path, const char *dst, struct sr_error *err)
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

static int copy_in(int ctl, const char *src, const char *path, struct sr_error *err)
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

int sr_verb_cp(const struct sr_verb_args *a)
{
	_cleanup_free_ char *statedir = NULL, *src_ref = NULL, *dst_ref = NULL;
	_cleanup_close_ int ctl = -1;
	const char *src_path = NULL, *dst_path = NULL;
	struct sr_entry e = {0};
	struct sr_error err = {0};
	struct sr_sink sink;
	bool out, in;
	int r;

	sr_sink_stderr(&sink, sr_options_log_level(a->verbosity));
	if (a->argc == 2 && (strcmp(a->argv[1], "-h") == 0 || strcmp(a->argv[1], "--help") == 0)) {
		fputs("Usage: sandbox-run cp ID:PATH HOSTPATH\n"
		      "       sandbox-run cp HOSTPATH ID:PATH\n"
		      "Copy a file or a tree out of or into a living sandbox (a relative PATH is\n"
		      "relative to /workspace). An existing directory as the destination gets the\n"
		      "copy inside it; anything else is the copy's name. Modes, mtimes and\n"
		      "symbolic links are kept; owners, devices, FIFOs, sockets and set-id bits\n"
		      "are not, and nothing is written outside the destination.\n",
		      stdout);
		return sr_cli_stdout_status("--help");
	}
	if (a->argc != 3) {
		sr_sink_log(&sink, SR_LOG_ERROR,
			    "cp: usage: sandbox-run cp SRC DST (one is ID:PATH)");
		return SR_EXIT_FAILURE;
	}
	out = sandbox_side(a->argv[1], &src_ref, &src_path);
	in = sandbox_side(a->argv[2], &dst_ref, &dst_path);
	if (out == in) {
		sr_sink_log(&sink, SR_LOG_ERROR,
			    "cp: one of SRC and DST must be ID:PATH, the other a host path (write "
			    "./a:b for a host path with a colon)");
		return SR_EXIT_FAILURE;
	}
	r = sr_state_dir(&statedir, &err);
	if (r >= 0)
		r = sr_state_find(statedir, out ? src_ref : dst_ref, &e, &err);
	if (r >= 0)
		r = sr_ctl_connect(e.dir, &ctl, &err);
	if (r >= 0)
		r = out ? copy_out(ctl, src_path, a->argv[2], &err)
			: copy_in(ctl, a->argv[1], dst_path, &err);
	sr_entry_free(&e);
	if (r < 0) {
		sr_sink_log(&sink, SR_LOG_ERROR, "%s", err.msg);
		return SR_EXIT_FAILURE;
	}
	return 0;
}
