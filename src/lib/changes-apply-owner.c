/* SPDX-License-Identifier: MIT */
/*
 * A root caller's apply to another user's tree (changes-apply.c), made
 * by a child that is that user, from the fds root opened: every check
 * and change has their rights, and the kernel refuses what they may not
 * do whatever they swap in the tree meanwhile (root checked a directory
 * was theirs, then wrote in it by name: a directory of root's renamed
 * there took root's file and mode). What is made is theirs, as when they
 * apply it themselves.
 *
 * The child is theirs to signal, as any process of their uid: they can
 * stop it (root's apply waits until it goes on) or lower its limits (it
 * fails). Their own tree either way (docs/security.md). It is not
 * dumpable: they cannot ptrace it, nor open its fds through /proc (the
 * private copy of the changes file root checked, changes-file.c).
 */
#include "apply.h"
#include "changes.h"
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
static int become(uid_t uid, gid_t dir_gid, struct sr_error *err)
{
	const struct passwd *pw = getpwuid(uid);
	const char *what = pw ? "initgroups" : "setgroups";
	gid_t gid = pw ? pw->pw_gid : dir_gid ? dir_gid : (gid_t)sr_proc_overflow_gid();

	if ((pw ? initgroups(pw->pw_name, gid) : setgroups(0, NULL)) < 0 ||
	    (what = "setresgid", setresgid(gid, gid, gid) < 0) ||
	    (what = "setresuid", setresuid(uid, uid, uid) < 0))
		return sr_error_errno(err, sr_negerrno(),
				      "apply: cannot become uid %u, the tree's owner: %s",
				      (unsigned)uid, what);
	/* The kernel's default after the change; whatever fs.suid_dumpable says. */
	if (prctl(PR_SET_DUMPABLE, 0) < 0)
		return sr_error_errno(err, sr_negerrno(), "apply: as uid %u: prctl", (unsigned)uid);
	/* Capabilities kept through the change (SECBIT_NO_SETUID_FIXUP) would be root still. */
	if (setuid(0) == 0)
		return sr_error_msg(err, -EPERM,
				    "apply: uid %u, the tree's owner, could become root again: "
				    "nothing changed",
				    (unsigned)uid);
	return 0;
}

struct outcome {
	int k;
	struct sr_apply_report report;
	struct sr_error err;
};

int sr_changes_as_owner(uid_t uid, gid_t dir_gid, const char *dir,
			int (*fn)(void *arg, struct sr_apply_report *ret, struct sr_error *err),
			void *arg, struct sr_apply_report *ret, struct sr_error *err)
{
	struct outcome *o =
	    mmap(NULL, sizeof(*o), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	int status = 0, k;
	pid_t pid;

	if (o == MAP_FAILED)
		return sr_error_errno(err, sr_negerrno(), "apply: %s", dir);
	*o = (struct outcome){.k = -ECHILD};
	fflush(NULL);
	pid = fork();
	if (pid < 0) {
		k = sr_error_errno(err, sr_negerrno(), "apply: %s: fork", dir);
		goto out;
	}
	if (pid == 0) {
		k = become(uid, dir_gid, &o->err);
		if (k >= 0)
			k = fn(arg, &o->report, &o->err);
		o->k = k < 0 ? k : 0;
		_exit(0);
	}
	if (SR_RETRY(waitpid(pid, &status, 0)) < 0)
		k = sr_error_errno(err, sr_negerrno(), "apply: %s: wait", dir);
	else if (o->k == -ECHILD)
		k = sr_error_msg(err, -ECHILD,
				 "apply: %s: the process applying as its owner (uid %u) was killed "
				 "(signal %d): what came before may be made",
				 dir, (unsigned)uid, WIFSIGNALED(status) ? WTERMSIG(status) : 0);
	else if ((k = o->k) < 0)
		*err = o->err;
	*ret = o->report;
out:
	munmap(o, sizeof(*o));
	return k;
}
