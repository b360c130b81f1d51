/* SPDX-License-Identifier: MIT */
/*
 * Whose a root caller's files written on the host are (artifacts.h,
 * docs/artifacts.md "Ownership"): --export's and cp out's alike. Root
 * writes them as their directory's owner, its own in a tree of root's
 * all the way up, and only where nobody but root and that owner could
 * have put something else at the directory's name.
 */
#include "archive.h"
#include "artifacts.h"
#include "hostpath.h"
#include "util.h"

#include <sys/stat.h>

int sr_artifacts_held(int dirfd, const char *what, const char *path, struct sr_error *err)
{
	uid_t uid;
	gid_t gid;
	int k;

	if (geteuid() != 0)
		return 0;
	k = sr_hostpath_tree_owner(dirfd, &uid, &gid);
	if (k < 0)
		return sr_error_errno(err, k, "%s %s: the directories above it", what, path);
	return sr_hostpath_owner_held(dirfd, uid, what, path, err);
}

/*
 * A directory of root's is one only in a tree of root's all the way up
 * (sr_hostpath_tree_owner(), as apply judges it). A user may rename any
 * directory of root's in theirs to the name root writes to: root would
 * have written the agent's files into it as root. Such a directory is
 * refused, as one of another owner than the user whose files they are
 * (archive.c refuses those on the way).
 */
int sr_artifacts_owner(int dirfd, const char *what, const char *path, struct sr_extract_opts *o,
		       struct sr_error *err)
{
	struct stat st;
	uid_t uid;
	gid_t gid;
	int k;

	if (geteuid() != 0)
		return 0;
	if (fstat(dirfd, &st) < 0)
		return sr_error_errno(err, sr_negerrno(), "%s %s", what, path);
	if (st.st_uid == 0) {
		k = sr_hostpath_tree_owner(dirfd, &uid, &gid);
		if (k < 0)
			return sr_error_errno(err, k, "%s %s", what, path);
		if (uid != 0)
			return sr_error_msg(
			    err, -EPERM,
			    "%s %s: a directory of root's in a tree of uid %u's, who could have "
			    "put it there: not written (give it to uid %u, or write elsewhere)",
			    what, path, (unsigned)uid, (unsigned)uid);
	}
	o->chown = st.st_uid != 0;
	o->owned = true;
	o->owner_uid = st.st_uid;
	o->owner_gid = st.st_gid;
	return 0;
}
