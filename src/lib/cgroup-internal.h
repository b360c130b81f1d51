/* SPDX-License-Identifier: MIT */
/*
 * Inside the cgroup module: the strategy table (after crun's
 * libcrun_cgroup_manager in cgroup-internal.h) and the helpers the
 * strategies share. The pure parsers are here so the unit tests reach them.
 */
#pragma once

#include "cgroup.h"

#include <stdint.h>

#define CG_NAME_PREFIX "sandbox-run-"
#define CG_NAME_MAX    64
#define CG_REASON_MAX  512
/* cpu.max / cpu.cfs_period_us: the kernel's default period, 100 ms. */
#define CG_CPU_PERIOD_US 100000

enum cg_v1_ctrl {
	CG_V1_MEMORY,
	CG_V1_CPU,
	CG_V1_CPUACCT,
	CG_V1_PIDS,
	_CG_V1_CTRL_MAX,
};

/* One sandbox cgroup directory and the directory it was made in. */
struct cg_dir {
	int parent_fd; /* our own cgroup in that hierarchy; -1: unused */
	int fd;	       /* the sandbox's cgroup, flock()ed while we live */
	bool created;
};

struct sr_cgroup {
	const struct cg_manager *mgr;
	char name[CG_NAME_MAX]; /* sandbox-run-<id> */
	struct cg_dir v2;
	struct cg_dir v1[_CG_V1_CTRL_MAX];
	/* Applied by the child where no cgroup enforces the limit; 0: none. */
	uint64_t rlimit_data;
	uint64_t rlimit_nproc;
	/* The memory limit holds RAM only: the host swaps, and accounts no swap to cgroups. */
	bool swap_unbounded;
	/* The systemd strategy's transient scope (cgroup-systemd.c). */
	struct cg_scope {
		pid_t holder;  /* the process that keeps the scope alive; 0: none */
		int holder_fd; /* its pipe: closing it ends the holder */
		char unit[CG_NAME_MAX + 8];
	} scope;
	/* Why the cgroup strategies that were tried could not be used. */
	char reason[CG_REASON_MAX];
};

/* The facts prepare() reads once: /proc/self/cgroup and /proc/self/mountinfo. */
struct cg_host {
	char *self_cgroup;
	char *mountinfo;
};

struct cg_manager {
	const char *name;
	/*
	 * Creates the sandbox's cgroup(s) and sets what this strategy can
	 * enforce, marking it in enforced[]. A negative return says the
	 * strategy does not apply here; err says why (it becomes part of the
	 * reason shown to the user) and nothing is left behind.
	 */
	int (*create)(struct sr_cgroup *cg, const struct cg_host *host, const struct sr_config *c,
		      enum sr_enforce enforced[], struct sr_error *err);
	int (*attach)(struct sr_cgroup *cg, pid_t pid, struct sr_error *err);
	int (*kill)(struct sr_cgroup *cg);
	int (*stats)(struct sr_cgroup *cg, struct sr_cgroup_stats *ret);
	void (*destroy)(struct sr_cgroup *cg);
};

/* In the order prepare() tries them; rlimit also fills what a cgroup left unenforced. */
extern const struct cg_manager cg_manager_v2;
extern const struct cg_manager cg_manager_systemd;
extern const struct cg_manager cg_manager_v1;
extern const struct cg_manager cg_manager_rlimit;

/*
 * cgroup v2 below dir (our own cgroup, or a scope systemd delegated to
 * us): enables the controllers there, creates the sandbox's cgroup as
 * cg->v2 and sets the limits. The systemd strategy shares the rest.
 */
int cg_v2_create_in(struct sr_cgroup *cg, const char *dir, const struct sr_config *c,
		    enum sr_enforce enforced[], struct sr_error *err);
/*
 * Enables the requested controllers for dfd's children (dir: for
 * messages). Those dir lacks: bit 1 << SR_LIMIT_* of their limits in
 * ret_absent.
 */
int cg_v2_enable_controllers(int dfd, const char *dir, const struct sr_config *c,
			     unsigned *ret_absent, struct sr_error *err);
/* The controllers of the limits in absent: "cpu", "memory and pids". */
void cg_v2_absent_names(unsigned absent, char *buf, size_t len);
/* Writes the limits into the cgroup fd, but those in absent, and marks them in enforced[]. */
int cg_v2_set_limits(int fd, const struct sr_config *c, unsigned absent,
		     enum sr_enforce enforced[]);
int cg_v2_attach(struct sr_cgroup *cg, pid_t pid, struct sr_error *err);
int cg_v2_kill(struct sr_cgroup *cg);
int cg_v2_stats(struct sr_cgroup *cg, struct sr_cgroup_stats *ret);

/*
 * Whether /proc/swaps text lists an active swap area (a line beyond the
 * header). Pure: unit-tested.
 */
bool cg_parse_swaps(const char *text);
/*
 * After a cgroup took the memory limit: if its swap file (name, under dfd)
 * is missing -- no swap accounting -- and the host swaps, marks
 * cg->swap_unbounded.
 */
void cg_check_swap(struct sr_cgroup *cg, int dfd, const char *name);

/* words joined as "a", "a and b", "a, b and c" into buf. */
void cg_join_words(const char *const *words, size_t n, char *buf, size_t len);
/* Adds "what: why" to the reason -v gives for limits a cgroup does not hold. */
void cg_append_reason(struct sr_cgroup *cg, const char *what, const char *why);

/* Child side of the rlimit strategy. */
int cg_rlimit_apply(const struct sr_cgroup *cg, struct sr_error *err);

/* Pure parsers (unit-tested). */

/* The path of controller's cgroup (NULL: the v2 "0::" line) in /proc/self/cgroup text. */
int cg_parse_self(const char *text, const char *controller, char **ret_path);
/*
 * The directory holding controller's hierarchy (NULL: cgroup2) in
 * /proc/self/mountinfo text, joined with path (a /proc/self/cgroup path,
 * made relative to the mount's root).
 */
int cg_parse_mountinfo(const char *text, const char *controller, const char *path, char **ret_dir);
/* The value of "key N" in a keyed file (cpu.stat, memory.events, memory.oom_control). */
int cg_parse_keyed(const char *text, const char *key, uint64_t *ret);
/* Is word in a blank-separated list (cgroup.controllers, cgroup.subtree_control)? */
bool cg_word_in(const char *list, const char *word);
/* cpu.max quota for CG_CPU_PERIOD_US; 0 when cpus_milli is 0 (no limit). */
uint64_t cg_cpu_quota_us(uint32_t cpus_milli);

/* Files of a cgroup directory. */

/* Reads name under dfd into buf (NUL-terminated, trailing newline kept); bytes read or -errno. */
ssize_t cg_read(int dfd, const char *name, char *buf, size_t len);
int cg_read_u64(int dfd, const char *name, uint64_t *ret);
int cg_write(int dfd, const char *name, const char *value);
int cg_write_u64(int dfd, const char *name, uint64_t value);

/* The whole of a /proc file (any length), NUL-terminated, in *ret (malloc'ed). */
int cg_read_proc(const char *path, char **ret);

/* Opens dir, our own cgroup in one hierarchy, as d->parent_fd. */
int cg_dir_open_parent(struct cg_dir *d, const char *dir, struct sr_error *err);
/*
 * Below d->parent_fd (dir, for messages): removes the sandbox-run-*
 * cgroups left by killed runs, then creates ours and locks it.
 */
int cg_dir_create(struct cg_dir *d, const char *dir, const char *name, struct sr_error *err);
/*
 * Removes parent_fd's directory name, opened as fd, if fd's lock can be
 * taken and name still names fd's directory (with wait, retrying for up
 * to 200 ms while it is busy): 0, -ESTALE if the name is another's now,
 * -errno.
 */
int cg_remove_if_stale(int parent_fd, const char *name, int fd, bool wait);
/* rmdir (with wait, retrying for up to 200 ms while the last tasks exit), closes the fds. */
void cg_dir_remove(struct cg_dir *d, const char *name, bool wait);
