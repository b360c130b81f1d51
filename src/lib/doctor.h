/* SPDX-License-Identifier: MIT */
/*
 * Can this host run sandboxes, and how well (`sandbox-run doctor`).
 *
 * Two halves, so that the judgement is testable without the host: the
 * facts are read from the host (sysctls under a /proc/sys root, the
 * kernel, cgroups, helpers, libraries, and a trial sandbox made with this
 * library), then each check is computed from the facts alone by
 * sr_doctor_evaluate(), which is pure. Nothing here prints: the verb
 * prints the checks, as text or JSON.
 *
 * A run that fails for a reason of the host (a sysctl, AppArmor) gives the
 * same diagnosis as the check that names it: sr_doctor_explain().
 */
#pragma once

#include "log.h"
#include "result.h"

#include <stdbool.h>
#include <stddef.h>

enum sr_verdict {
	SR_VERDICT_OK,	     /* nothing to do */
	SR_VERDICT_DEGRADED, /* sandboxes run, but something is weaker or missing */
	SR_VERDICT_FAILS,    /* sandboxes cannot run */
	_SR_VERDICT_MAX,
};

#define SR_DOCTOR_TEXT_MAX 768
#define SR_DOCTOR_CHECKS   13
/* A sysctl that does not exist on this kernel. */
#define SR_SYSCTL_ABSENT (-1L)

/* One check: what was found and, unless ok, the exact fix. */
struct sr_check {
	const char *name; /* "kernel", "user_namespaces", ...: stable, for --json */
	enum sr_verdict verdict;
	char found[SR_DOCTOR_TEXT_MAX];
	char fix[SR_DOCTOR_TEXT_MAX]; /* "" when there is nothing to do */
};

/* A trial sandbox: `--net none -- true`, or with --net egress. */
struct sr_doctor_trial {
	bool tried;
	bool ok;
	enum sr_enforce net; /* how --net was enforced (egress: nftables or none) */
	char error[SR_ERROR_MSG_MAX];
};

struct sr_host_facts {
	bool root; /* uid 0: the user-namespace sysctls and AppArmor do not restrict it */
	char release[65];
	unsigned kernel_major, kernel_minor;
	bool has_mount_setattr; /* idmapped mounts, mount attributes (5.12) */
	bool has_clone3;	/* into a cgroup at birth (5.7); a container may filter it */

	/* The user-namespace sysctls, or SR_SYSCTL_ABSENT. */
	long userns_clone;	  /* kernel.unprivileged_userns_clone (Debian's old patch) */
	long max_userns;	  /* user.max_user_namespaces */
	long apparmor_restrict;	  /* kernel.apparmor_restrict_unprivileged_userns (Ubuntu 23.10+) */
	char apparmor_label[128]; /* this process's AppArmor label; "" without AppArmor */
	bool apparmor_profile;	  /* the shipped profile is installed (SR_APPARMOR_PROFILE) */
	char exe[256];		  /* this binary */

	int overlay;	    /* 1 in /proc/filesystems, 2 a module to load, 0 neither */
	char container[32]; /* "" none; docker, podman, lxc, kubernetes, ... */
	char container_sign[64];

	int cgroup_layout; /* 2 unified (v2), 1 hybrid, 0 v1 only, -1 none mounted */
	char cgroup_strategy[32];
	char cgroup_reason[512];
	enum sr_enforce cgroup_enforced[3]; /* memory, cpus, pids */
	bool user_manager;		    /* a systemd --user manager runs for the caller */
	bool subuid;			    /* root: /etc/subuid gives root a range */

	char slirp4netns[96], pasta[96]; /* first line of --version; "" not installed */
	int tun;			 /* 1 usable, 0 missing, -1 not usable by the caller */
	int nf_tables;			 /* 1 loaded or built in, 2 a module, 0 not seen */
	char libarchive_error[256];	 /* "" when it loads */
	char libnftables_error[256];

	struct sr_doctor_trial trial;  /* --net none */
	struct sr_doctor_trial egress; /* --net egress, when a helper is installed */
};

/*
 * Reads the user-namespace sysctls under procsys (normally "/proc/sys"),
 * this process's AppArmor label, and whether the caller is root.
 */
void sr_doctor_read_userns(const char *procsys, struct sr_host_facts *f);

/*
 * Every fact, trial sandboxes included (a few hundred ms). Warnings of the
 * trials go to sink. Never fails: what cannot be read is a fact too.
 */
void sr_doctor_gather(const char *procsys, const struct sr_sink *sink, struct sr_host_facts *f);

/* The checks from the facts alone (pure); returns how many (SR_DOCTOR_CHECKS). */
size_t sr_doctor_evaluate(const struct sr_host_facts *f, struct sr_check out[SR_DOCTOR_CHECKS]);

/* The worst verdict of n checks. */
enum sr_verdict sr_doctor_verdict(const struct sr_check *checks, size_t n);
/* 0 full strength, 1 degraded, 2 sandboxes cannot run. */
int sr_doctor_exit_status(enum sr_verdict v);
const char *sr_verdict_to_string(enum sr_verdict v);

/* "FOUND; fix: FIX" (or FOUND alone): the one line a failed run prints. */
void sr_check_line(const struct sr_check *c, char *buf, size_t len);

/*
 * For a set-up failure with err->code EPERM, EACCES, ENOSPC or EUSERS:
 * when a user-namespace sysctl or AppArmor explains it, appends "; " and
 * that check's line (the one doctor prints) to err's message.
 */
void sr_doctor_explain(struct sr_error *err);
