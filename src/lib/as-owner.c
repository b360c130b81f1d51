/* SPDX-License-Identifier: MIT */
/*
 * What a root caller does in another user's tree, done by a child that
 * is that user, from the fds root opened: apply's checks and changes
 * (changes-apply.c), cp's reading of what it copies in (copy.c). Every
 * step has their rights, and the kernel refuses what they may not do
 * whatever they swap in the tree meanwhile (root checked a directory was
 * theirs, then wrote in it by name: a directory of root's renamed there
 * took root's file and mode; root read a file of a third user's moved
 * into their tree). What is made is theirs, as when they do it
 * themselves.
 *
 * The child is theirs to signal, as any process of their uid: they can
 * stop it (root waits until it goes on) or lower its limits (it fails).
 * Their own tree either way (docs/security.md). It is not dumpable:
 * they cannot ptrace it, nor open its fds through /proc (the private
 * copy of the changes file root checked, changes-file.c; the stream to
 * the sandbox).
 */
#include "as-owner.h"
#include "proc.h"
#include "util.h"

#include <grp.h>
#include <pwd.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>

/* The group a gid this kernel cannot map reads as (65534 unless set otherwise). */
/*
 * This process becomes uid, wholly (its groups as login gives them;
 * root's capabilities go with uid 0): no way back to root. A uid with no
 * user has no groups but the directory's -- never root's group: a
 * directory `chown 4242` alone keeps gid 0, and a process of gid 0 may
 * write what root's group may (the overflow group instead, "nogroup").
 */
static int become(uid_t uid, gid_t dir_gid, const char *what_for, struct sr_error *err)
{
	const struct passwd *pw = getpwuid(uid);
	const char *what = pw ? "initgroups" : "setgroups";
	gid_t gid = pw ? pw->pw_gid : dir_gid ? dir_gid : (gid_t)sr_proc_overflow_gid();

	if ((pw ? initgroups(pw->pw_name, gid) : setgroups(0, NULL)) < 0 ||
	    (what = "setresgid", setresgid(gid, gid, gid) < 0) ||
	    (what = "setresuid", setresuid(uid, uid, uid) < 0))
		return sr_error_errno(err, sr_negerrno(),
				      "%s: cannot become uid %u, the tree's owner: %s", what_for,
				      (unsigned)uid, what);
	/* The kernel's default after the change; whatever fs.suid_dumpable says. */
	if (prctl(PR_SET_DUMPABLE, 0) < 0)
		return sr_error_errno(err, sr_negerrno(), "%s: as uid %u: prctl", what_for,
				      (unsigned)uid);
	/* Capabilities kept through the change (SECBIT_NO_SETUID_FIXUP) would be root still. */
	if (setuid(0) == 0)
		return sr_error_msg(err, -EPERM,
				    "%s: uid %u, the tree's owner, could become root again: "
				    "nothing done",
				    what_for, (unsigned)uid);
	return 0;
}

/* What the child tells: its status, its error, what fn put in out (out_len bytes). */
struct outcome {
	int k;
	struct sr_error err;
	unsigned char out[];
};

int sr_as_owner(uid_t uid, gid_t dir_gid, const char *what, const char *where,
		int (*fn)(void *arg, void *out, struct sr_error *err), void *arg, void *out,
		size_t out_len, struct sr_error *err)
{
	size_t size = sizeof(struct outcome) + out_len;
	struct outcome *o =
	    mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	int status = 0, k;
	pid_t pid;

	if (o == MAP_FAILED)
		return sr_error_errno(err, sr_negerrno(), "%s: %s", what, where);
	o->k = -ECHILD;
	fflush(NULL);
	pid = fork();
	if (pid < 0) {
		k = sr_error_errno(err, sr_negerrno(), "%s: %s: fork", what, where);
		goto out;
	}
	if (pid == 0) {
		k = become(uid, dir_gid, what, &o->err);
		if (k >= 0)
			k = fn(arg, out_len ? o->out : NULL, &o->err);
		o->k = k < 0 ? k : 0;
		_exit(0);
	}
	if (SR_RETRY(waitpid(pid, &status, 0)) < 0)
		k = sr_error_errno(err, sr_negerrno(), "%s: %s: wait", what, where);
	else if (o->k == -ECHILD)
		k = sr_error_msg(err, -ECHILD,
				 "%s: %s: the process working as its owner (uid %u) was killed "
				 "(signal %d): what came before may be done",
				 what, where, (unsigned)uid,
				 WIFSIGNALED(status) ? WTERMSIG(status) : 0);
	else if ((k = o->k) < 0)
		*err = o->err;
	if (out_len)
		memcpy(out, o->out, out_len);
out:
	munmap(o, size);
	return k;
}
