/* SPDX-License-Identifier: MIT */
/*
 * Removing the trees a deployment is made of (its versions, their app/,
 * its package cache; an export's bundle too): following no link, however
 * deep an agent made them, leaving whole what another mount put inside;
 * renamed out of sight first where nobody may see them half gone, and
 * what a removal killed midway left swept.
 */
#include "deploy-internal.h"
#include "util.h"

#include <dirent.h>
#include <sys/random.h>
#include <sys/stat.h>

/* A directory opened to be emptied: opened to its owner first if it is not (mode: lstat's). */
static int open_to_remove(int dir, const char *name, mode_t mode)
{
	int fd;

	/*
	 * A package may ship a 0555 directory, whose entries could not be
	 * unlinked otherwise; not through a link put in its place since.
	 */
	if ((mode & 0700) != 0700)
		(void)!fchmodat(dir, name, (mode & 07777) | 0700, AT_SYMLINK_NOFOLLOW);
	fd = openat(dir, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	return fd < 0 ? sr_negerrno() : fd;
}

/* The names in the directory at fd ("." and ".." aside), read whole before any goes. */
static int read_names(int fd, struct sr_strv *ret)
{
	int own = openat(fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	DIR *d = own >= 0 ? fdopendir(own) : NULL;
	struct dirent *de;
	int r = 0;

	if (!d) {
		r = sr_negerrno();
		if (own >= 0)
			close(own);
		return r;
	}
	while (r == 0 && (de = readdir(d)))
		if (!sr_streq(de->d_name, ".") && !sr_streq(de->d_name, ".."))
			r = sr_strv_push(ret, de->d_name);
	closedir(d);
	return r;
}

/*
 * statx of (at, name), not following a link (name "": at itself). The
 * mount's id with it where the kernel has one (5.8): what tells a bind
 * mount apart from the directory it is mounted on, on one file system.
 */
static int stat_node(int at, const char *name, struct statx *ret)
{
	int flags = AT_SYMLINK_NOFOLLOW | (*name ? 0 : AT_EMPTY_PATH);

	return statx(at, name, flags, STATX_BASIC_STATS | STATX_MNT_ID, ret) < 0 ? sr_negerrno()
										 : 0;
}

static bool same_node(const struct statx *a, const struct statx *b)
{
	return a->stx_dev_major == b->stx_dev_major && a->stx_dev_minor == b->stx_dev_minor &&
	       a->stx_ino == b->stx_ino;
}

/*
 * Empties the directory at *fd (self: its statx), one open directory at a
 * time however deep the tree: agents shape the trees removed here (an
 * archive agent's src/ may be some 2000 levels deep: PATH_MAX), and one
 * deeper than RLIMIT_NOFILE would otherwise stay for good.
 * Going down, the parent is closed; coming back, it is opened again as
 * the child's "..", and must be the very directory it was (else nothing
 * more is removed: -ESTALE, *fd -1). *fd is the directory's on return.
 * A directory of another mount (one placed inside by hand or by accident:
 * another file system, or a bind of this one) is not entered: -EXDEV, as
 * `rm --one-file-system` does.
 */
static int empty_tree(int *fd, const struct statx *self)
{
	struct sr_strv names = {0};
	int r = read_names(*fd, &names);

	for (size_t i = 0; *fd >= 0 && i < names.n; i++) {
		const char *name = names.items[i];
		struct statx st;
		int sub, e;

		if ((e = stat_node(*fd, name, &st)) < 0) {
			e = e == -ENOENT ? 0 : e;
		} else if (!S_ISDIR(st.stx_mode)) {
			e = unlinkat(*fd, name, 0) < 0 ? sr_negerrno() : 0;
		} else if (!sr_same_mount(&st, self)) {
			e = -EXDEV;
		} else if ((sub = open_to_remove(*fd, name, st.stx_mode)) < 0) {
			e = sub;
		} else if ((e = stat_node(sub, "", &st)) < 0 || !sr_same_mount(&st, self)) {
			/* A mount put there between the look and the open. */
			e = e < 0 ? e : -EXDEV;
			sr_closep(&sub);
		} else {
			sr_closep(fd);
			e = empty_tree(&sub, &st);
			*fd = sub >= 0 ? openat(sub, "..", O_RDONLY | O_DIRECTORY | O_CLOEXEC) : -1;
			sr_closep(&sub);
			if (*fd >= 0 && (stat_node(*fd, "", &st) < 0 || !same_node(&st, self)))
				sr_closep(fd);
			if (*fd < 0)
				e = -ESTALE;
			else if (unlinkat(*fd, name, AT_REMOVEDIR) < 0 && e == 0)
				e = sr_negerrno();
		}
		if (e < 0 && r == 0)
			r = e;
	}
	sr_strv_free(&names);
	return r;
}

/*
 * Removes (dirfd, name) and everything beneath it, following no link,
 * whatever its depth (empty_tree).
 */
int sr_deploy_remove_tree(int dir, const char *name)
{
	struct statx st;
	int fd, r;

	if ((r = stat_node(dir, name, &st)) < 0)
		return r == -ENOENT ? 0 : r;
	if (!S_ISDIR(st.stx_mode))
		return unlinkat(dir, name, 0) < 0 ? sr_negerrno() : 0;
	fd = open_to_remove(dir, name, st.stx_mode);
	if (fd < 0)
		return fd;
	if ((r = stat_node(fd, "", &st)) < 0) {
		close(fd);
		return r;
	}
	r = empty_tree(&fd, &st);
	if (fd >= 0)
		close(fd);
	/* Not empty (an entry failed, or the walk stopped) is refused here, harmlessly. */
	if (unlinkat(dir, name, AT_REMOVEDIR) < 0 && r == 0)
		r = sr_negerrno();
	return r;
}

int deploy_remove_hidden(int dirfd, const char *name)
{
	char gone[96];
	uint32_t rnd = 0;

	(void)!getrandom(&rnd, sizeof(rnd), 0);
	snprintf(gone, sizeof(gone), GONE_PREFIX "%.64s-%08x", name, rnd);
	if (renameat(dirfd, name, dirfd, gone) < 0)
		return sr_negerrno();
	return sr_deploy_remove_tree(dirfd, gone);
}

void deploy_sweep(int dir, const char *const *prefixes)
{
	int fd = openat(dir, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	struct dirent *de;
	DIR *d;

	if (fd < 0)
		return;
	d = fdopendir(fd);
	if (!d) {
		close(fd);
		return;
	}
	while ((de = readdir(d)))
		for (const char *const *p = prefixes; *p; p++)
			if (strncmp(de->d_name, *p, strlen(*p)) == 0) {
				(void)sr_deploy_remove_tree(dirfd(d), de->d_name);
				break;
			}
	closedir(d);
}
