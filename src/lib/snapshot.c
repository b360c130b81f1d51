/* SPDX-License-Identifier: MIT */
#include "snapshot.h"
#include "state.h"
#include "util.h"

#include <dirent.h>
#include <ini.h>
#include <sys/file.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>

#define META_MAX (64 * 1024)

static const char *const files[] = {"files.tar.zst", "config.ini", "meta.json"};

/* The directory of a snapshot being made, or one whose maker died (sr_snapshot_new). */
#define TEMP_MARK ".new-"

static int snapshot_dir(const char *name, char **ret, struct sr_error *err)
{
	_cleanup_free_ char *data = NULL;
	int r;

	if (!sr_state_valid_name(name))
		return sr_error_msg(
		    err, -EINVAL,
		    "bad snapshot name '%s' (1-64 of letters, digits, '_', '.', '-', "
		    "starting with a letter or digit)",
		    name);
	/* The name of a snapshot being made: never listed, restored or made, and swept once nobody
	 * makes it. */
	if (strstr(name, TEMP_MARK))
		return sr_error_msg(err, -EINVAL,
				    "bad snapshot name '%s' ('" TEMP_MARK
				    "' marks one being made: choose another name)",
				    name);
	r = sr_data_dir("snapshots", &data, err);
	if (r < 0)
		return r;
	if (asprintf(ret, "%s/%s", data, name) < 0)
		return sr_error_errno(err, -ENOMEM, "snapshot");
	return 0;
}

/* FILE in the snapshot NAME's directory. */
static int snapshot_path(const char *name, const char *file, char **ret, struct sr_error *err)
{
	_cleanup_free_ char *dir = NULL;
	int r = snapshot_dir(name, &dir, err);

	if (r < 0)
		return r;
	if (asprintf(ret, "%s/%s", dir, file) < 0)
		return sr_error_errno(err, -ENOMEM, "snapshot");
	return 0;
}

int sr_snapshot_files(const char *name, char **ret, struct sr_error *err)
{
	int r = snapshot_path(name, "files.tar.zst", ret, err);

	if (r < 0)
		return r;
	if (access(*ret, R_OK) < 0) {
		r = sr_negerrno();
		free(steal_pointer(ret));
		if (r == -ENOENT)
			return sr_error_msg(
			    err, r, "no snapshot '%s' (sandbox-run snapshots lists them)", name);
		return sr_error_errno(err, r, "snapshot '%s'", name);
	}
	return 0;
}

int sr_snapshot_config_path(const char *name, char **ret, struct sr_error *err)
{
	return snapshot_path(name, "config.ini", ret, err);
}

/* Removes dir's snapshot files and dir itself. */
static void remove_dir(const char *dir)
{
	_cleanup_close_ int fd = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);

	if (fd < 0)
		return;
	for (size_t i = 0; i < SR_ARRAY_SIZE(files); i++)
		(void)unlinkat(fd, files[i], 0);
	(void)rmdir(dir);
}

/*
 * The snapshots directory itself, flock()ed as how says: held shared by a
 * snapshot being begun until it holds its own directory's lock,
 * exclusively by a sweep. -1 where it cannot be (no sweep then).
 */
static int lock_snapshots(const char *data, int how)
{
	_cleanup_close_ int fd = open(data, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

	if (fd < 0 || SR_RETRY(flock(fd, how)) < 0)
		return -1;
	return steal_fd(&fd);
}

/*
 * Removes the directories of snapshots whose maker died (a keeper killed
 * mid-snapshot: its files, up to the sandbox's disk limit, stayed in the
 * data directory for good, listed nowhere). A maker holds a flock() on
 * its directory from the moment it is made (the sweep's lock keeps it
 * from being seen before), so one whose lock can be had is nobody's.
 */
/* NAME.new-XXXXXXXX, NAME a snapshot's (up to 64 characters: the whole is longer). */
static bool is_temp(const char *entry)
{
	const char *mark = strstr(entry, TEMP_MARK);
	char name[65];

	if (!mark || (size_t)(mark - entry) >= sizeof(name) ||
	    strlen(mark) != strlen(TEMP_MARK) + 8)
		return false;
	memcpy(name, entry, (size_t)(mark - entry));
	name[mark - entry] = '\0';
	return sr_state_valid_name(name) &&
	       strspn(mark + strlen(TEMP_MARK), "0123456789abcdef") == 8;
}

static void sweep(const char *data)
{
	_cleanup_close_ int lock = lock_snapshots(data, LOCK_EX);
	struct dirent *de;
	DIR *d;

	if (lock < 0 || !(d = opendir(data)))
		return;
	while ((de = readdir(d))) {
		_cleanup_close_ int fd = -1;

		if (!is_temp(de->d_name))
			continue;
		fd = openat(dirfd(d), de->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (fd < 0 || flock(fd, LOCK_EX | LOCK_NB) < 0)
			continue;
		for (size_t i = 0; i < SR_ARRAY_SIZE(files); i++)
			(void)unlinkat(fd, files[i], 0);
		(void)unlinkat(dirfd(d), de->d_name, AT_REMOVEDIR);
	}
	closedir(d);
}

/* tmp_dir made, and locked (s->lock) before any sweep may look at it. */
static int make_temp(struct sr_snapshot_new *s, const char *data, struct sr_error *err)
{
	_cleanup_close_ int held = -1;
	int r;

	sweep(data);
	/* Unlocked, it would be anyone's to sweep while it is written. */
	held = lock_snapshots(data, LOCK_SH);
	if (held < 0)
		return sr_error_errno(err, -ENOLCK, "snapshot: lock %s", data);
	if (mkdir(s->tmp_dir, 0700) < 0) {
		r = sr_error_errno(err, sr_negerrno(), "snapshot: create %s", s->tmp_dir);
		free(steal_pointer(&s->tmp_dir));
		return r;
	}
	s->lock = open(s->tmp_dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (s->lock < 0 || flock(s->lock, LOCK_EX | LOCK_NB) < 0) {
		r = sr_error_errno(err, s->lock < 0 ? sr_negerrno() : -ENOLCK, "snapshot: lock %s",
				   s->tmp_dir);
		sr_closep(&s->lock);
		return r; /* the caller's abort removes tmp_dir */
	}
	return 0;
}

int sr_snapshot_begin(const char *name, struct sr_snapshot_new *ret, int *ret_fd,
		      struct sr_error *err)
{
	struct sr_snapshot_new s = {.lock = -1};
	_cleanup_free_ char *path = NULL, *data = NULL;
	uint32_t rnd = 0;
	int fd, r;

	r = snapshot_dir(name, &s.final_dir, err);
	if (r < 0)
		return r;
	r = sr_data_dir("snapshots", &data, err);
	if (r < 0) {
		sr_snapshot_abort(&s);
		return r;
	}
	if (access(s.final_dir, F_OK) == 0) {
		sr_snapshot_abort(&s);
		return sr_error_msg(
		    err, -EEXIST,
		    "a snapshot is named '%s' already (sandbox-run snapshots rm %s, "
		    "or choose another name)",
		    name, name);
	}
	(void)!getrandom(&rnd, sizeof(rnd), 0);
	s.name = strdup(name);
	if (!s.name || asprintf(&s.tmp_dir, "%s" TEMP_MARK "%08x", s.final_dir, rnd) < 0 ||
	    asprintf(&path, "%s" TEMP_MARK "%08x/files.tar.zst", s.final_dir, rnd) < 0) {
		s.tmp_dir = NULL;
		sr_snapshot_abort(&s);
		return sr_error_errno(err, -ENOMEM, "snapshot");
	}
	r = make_temp(&s, data, err);
	if (r < 0) {
		sr_snapshot_abort(&s);
		return r;
	}
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (fd < 0) {
		r = sr_error_errno(err, sr_negerrno(), "snapshot: create %s", path);
		sr_snapshot_abort(&s);
		return r;
	}
	*ret = s;
	*ret_fd = fd;
	return 0;
}

/*
 * The configuration as a profile (config.ini), whole: one whose value a
 * profile cannot hold (config-print.c comments it out: a newline, ' ;',
 * blanks at an end, longer than inih's line) would be lost, silently, by
 * every sandbox made from the snapshot -- a read-only bind of a long path
 * over a writable one among them, and the new sandbox could write what
 * the first could only read.
 */
#define NOT_REPRESENTABLE ": value not representable in a profile"

/* The key of the first value config-print.c left out ("# KEY: value not ..."), or NULL. */
static const char *left_out(const char *text, int *ret_len)
{
	for (const char *line = text; line;
	     line = strchr(line, '\n') ? strchr(line, '\n') + 1 : NULL) {
		size_t k;

		if (strncmp(line, "# ", 2) != 0)
			continue;
		k = strcspn(line + 2, ": \n");
		if (k > 0 &&
		    strncmp(line + 2 + k, NOT_REPRESENTABLE, strlen(NOT_REPRESENTABLE)) == 0) {
			*ret_len = (int)k;
			return line + 2;
		}
	}
	return NULL;
}

static int config_text(const struct sr_config *c, char **ret, struct sr_error *err)
{
	_cleanup_free_ char *text = NULL;
	const char *key;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	int r, n;

	if (!f)
		return sr_error_errno(err, -ENOMEM, "snapshot");
	r = sr_config_print(c, f);
	if (fclose(f) != 0 || r < 0)
		return sr_error_errno(err, r < 0 ? r : -ENOMEM, "snapshot: its configuration");
	key = left_out(text, &n);
	if (key)
		return sr_error_msg(
		    err, -EINVAL,
		    "snapshot: the sandbox's configuration cannot be kept whole: "
		    "its %.*s has a value a profile cannot hold (a newline, ' ;', "
		    "blanks at an end, or a line of more than %d characters), which "
		    "every sandbox made from it would lack; nothing kept",
		    n, key, INI_MAX_LINE - 2);
	*ret = steal_pointer(&text);
	return 0;
}

static int64_t now_ms(void)
{
	struct timespec t;

	clock_gettime(CLOCK_REALTIME, &t);
	return (int64_t)t.tv_sec * 1000 + t.tv_nsec / 1000000;
}

int sr_snapshot_commit(struct sr_snapshot_new *s, const struct sr_config *c, const char *sandbox_id,
		       json_t **ret_meta, struct sr_error *err)
{
	_cleanup_free_ char *cfg = NULL, *meta_path = NULL, *files_path = NULL, *text = NULL;
	_cleanup_free_ char *cfg_text = NULL;
	_cleanup_fclose_ FILE *f = NULL;
	char when[32];
	time_t t = time(NULL);
	struct tm tm;
	struct stat st;
	json_t *meta;
	int r;

	if (asprintf(&cfg, "%s/config.ini", s->tmp_dir) < 0 ||
	    asprintf(&meta_path, "%s/meta.json", s->tmp_dir) < 0 ||
	    asprintf(&files_path, "%s/files.tar.zst", s->tmp_dir) < 0)
		return sr_error_errno(err, -ENOMEM, "snapshot");
	r = config_text(c, &cfg_text, err);
	if (r < 0)
		return r;
	f = fopen(cfg, "wxe");
	if (!f)
		return sr_error_errno(err, sr_negerrno(), "snapshot: %s", cfg);
	if (fputs(cfg_text, f) < 0 || fclose(steal_pointer(&f)) != 0)
		return sr_error_errno(err, sr_negerrno(), "snapshot: write %s", cfg);
	gmtime_r(&t, &tm);
	strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%SZ", &tm);
	meta = json_pack("{sosssssIsIsoso}", "name", sr_json_string(s->name), "created", when,
			 "sandbox_id", sandbox_id, "created_ms", (json_int_t)now_ms(), "size_bytes",
			 (json_int_t)(stat(files_path, &st) == 0 ? st.st_size : 0), "profile",
			 sr_json_string(c->profile), "holds",
			 json_pack("[sss]", "/workspace", "/home/user", "/tmp"));
	if (!meta || sr_json_dump_line(meta, &text) < 0) {
		if (meta)
			json_decref(meta);
		return sr_error_errno(err, -ENOMEM, "snapshot");
	}
	f = fopen(meta_path, "wxe");
	if (!f || fputs(text, f) < 0 || fclose(steal_pointer(&f)) != 0) {
		json_decref(meta);
		return sr_error_errno(err, sr_negerrno(), "snapshot: write %s", meta_path);
	}
	/* Whole, then named: rename(2) of a directory onto a name nobody has. */
	if (rename(s->tmp_dir, s->final_dir) < 0) {
		r = sr_negerrno();
		json_decref(meta);
		if (r == -EEXIST || r == -ENOTEMPTY)
			return sr_error_msg(err, -EEXIST, "a snapshot is named '%s' already",
					    s->name);
		return sr_error_errno(err, r, "snapshot: rename to %s", s->final_dir);
	}
	free(steal_pointer(&s->tmp_dir));
	*ret_meta = meta;
	return 0;
}

void sr_snapshot_abort(struct sr_snapshot_new *s)
{
	if (s->tmp_dir)
		remove_dir(s->tmp_dir);
	/* name: begun (a client's that never made one has lock 0, not its own). */
	if (s->name && s->lock >= 0)
		close(s->lock);
	free(s->name);
	free(s->final_dir);
	free(s->tmp_dir);
	*s = (struct sr_snapshot_new){.lock = -1};
}

static json_t *read_meta(int dirfd, const char *name)
{
	char path[300];

	snprintf(path, sizeof(path), "%s/meta.json", name);
	return sr_json_read_object_at(dirfd, path, META_MAX, 8);
}

int sr_snapshot_list(json_t **ret, struct sr_error *err)
{
	_cleanup_free_ char *data = NULL;
	json_t *all = json_array();
	struct dirent *de;
	DIR *d;
	int r = sr_data_dir("snapshots", &data, err);

	if (r < 0 || !all) {
		if (all)
			json_decref(all);
		return r < 0 ? r : sr_error_errno(err, -ENOMEM, "snapshots");
	}
	sweep(data);
	d = opendir(data);
	if (!d) {
		json_decref(all);
		return sr_error_errno(err, sr_negerrno(), "%s", data);
	}
	while ((de = readdir(d))) {
		json_t *meta;

		/* Being made (NAME.new-XXXXXXXX) or not ours: not a snapshot yet. */
		if (!sr_state_valid_name(de->d_name) || strstr(de->d_name, TEMP_MARK))
			continue;
		meta = read_meta(dirfd(d), de->d_name);
		if (meta)
			json_array_append_new(all, meta);
	}
	closedir(d);
	*ret = all;
	return 0;
}

int sr_snapshot_remove(const char *name, struct sr_error *err)
{
	_cleanup_free_ char *dir = NULL;
	int r = snapshot_dir(name, &dir, err);

	if (r < 0)
		return r;
	if (access(dir, F_OK) < 0)
		return sr_error_msg(err, -ENOENT,
				    "no snapshot '%s' (sandbox-run snapshots lists them)", name);
	remove_dir(dir);
	if (access(dir, F_OK) == 0)
		return sr_error_errno(err, -ENOTEMPTY, "snapshot '%s': remove %s", name, dir);
	return 0;
}
