/* SPDX-License-Identifier: MIT */
/*
 * config.json of an exported bundle (oci.h): runtime-spec 1.0.2, what
 * crun 1.8 (Debian 12) and later and runc read. Pure: every host fact is
 * in the spec.
 */
#include "oci.h"
#include "json.h"
#include "layout.h"
#include "oci-init.h"
#include "seccomp.h"
#include "setup.h"
#include "units.h"
#include "util.h"

#include <inttypes.h>

/* Where the bundle's boot id is bound (spec.boot_id). */
#define SR_OCI_BOOT_ID "/proc/sys/kernel/random/boot_id"

/* Adds a mount: destination, type, source, then the options, NULL-terminated. */
static int add_mount(json_t *mounts, const char *dst, const char *type, const char *src, ...)
{
	json_t *opts = json_array(), *m;
	va_list ap;

	if (!opts)
		return -ENOMEM;
	va_start(ap, src);
	for (const char *o; (o = va_arg(ap, const char *));)
		if (json_array_append_new(opts, sr_json_string(o)) < 0) {
			va_end(ap);
			json_decref(opts);
			return -ENOMEM;
		}
	va_end(ap);
	m = json_pack("{s:o, s:s, s:o, s:o}", "destination", sr_json_string(dst), "type", type,
		      "source", sr_json_string(src), "options", opts);
	return m && json_array_append_new(mounts, m) == 0 ? 0 : -ENOMEM;
}

/*
 * Where the agent writes: a tmpfs each, sized by the disk limit (a run
 * has one tmpfs for all of them: an OCI runtime mounts each on its own).
 */
static int add_disk(json_t *mounts, const char *dst, const char *size, const char *mode,
		    bool copyup)
{
	const char *owner = strcmp(dst, "/dev/shm") == 0 ? NULL : "uid=" SR_LAYOUT_UID;

	/* uid= and gid= are read in the container's user namespace: its 1000. */
	if (copyup)
		return add_mount(mounts, dst, "tmpfs", "tmpfs", "tmpcopyup", "nosuid", "nodev",
				 mode, owner, "gid=" SR_LAYOUT_GID, size, NULL);
	if (!owner)
		return add_mount(mounts, dst, "tmpfs", "tmpfs", "nosuid", "nodev", mode, size,
				 NULL);
	return add_mount(mounts, dst, "tmpfs", "tmpfs", "nosuid", "nodev", mode, owner,
			 "gid=" SR_LAYOUT_GID, size, NULL);
}

static int add_mounts(const struct sr_oci_spec *s, json_t *mounts)
{
	const struct sr_config *c = s->config;
	char size[64] = "size=0";
	int r = 0;

	/* tmpfs's size=0 is no limit, as a run's --disk 0. */
	if (c->disk_bytes)
		snprintf(size, sizeof(size), "size=%" PRIu64, c->disk_bytes);
	r = add_mount(mounts, "/proc", "proc", "proc", "nosuid", "nodev", "noexec", NULL);
	/*
	 * A small /dev: the runtime binds the host's null, zero, full, random,
	 * urandom, tty. Read-only, as a run's: the agent replaced /dev/ptmx
	 * with a link of its own, or made files there. A runtime mounts a
	 * "ro" /dev rw, makes its devices and links, then remounts it
	 * read-only (crun 1.8, runc's finalizeRootfs); /dev/pts and /dev/shm
	 * are mounts of their own and stay writable.
	 */
	if (r >= 0)
		r = add_mount(mounts, "/dev", "tmpfs", "tmpfs", "ro", "nosuid", "noexec",
			      "mode=0755", "size=64k", "nr_inodes=64", NULL);
	if (r >= 0)
		r = add_mount(mounts, "/dev/pts", "devpts", "devpts", "nosuid", "noexec",
			      "newinstance", "ptmxmode=0666", "mode=0620",
			      "max=" SR_LAYOUT_PTYS_MAX, NULL);
	if (r >= 0)
		r = add_disk(mounts, "/dev/shm", size, "mode=1777", false);
	for (size_t i = 0; r >= 0 && s->mirrored && i < s->mirrored->n; i++)
		r = add_mount(mounts, s->mirrored->items[i], "bind", s->mirrored->items[i], "rbind",
			      "rro", "nosuid", "nodev", NULL);
	if (r >= 0)
		r = add_disk(mounts, SR_WORKSPACE, size, "mode=0755", true);
	if (r >= 0)
		r = add_disk(mounts, "/tmp", size, "mode=1777", false);
	if (r >= 0)
		r = add_disk(mounts, SR_SANDBOX_HOME, size, "mode=0755", false);
	if (r >= 0 && s->boot_id)
		r = add_mount(mounts, SR_OCI_BOOT_ID, "bind", s->boot_id, "bind", "ro", "nosuid",
			      "nodev", "noexec", NULL);
	if (r >= 0 && s->init)
		r = add_mount(mounts, SR_OCI_INIT, "bind", s->init, "bind", "ro", "nosuid", "nodev",
			      NULL);
	/* The caller's binds last, over the workspace too, as a run mounts them. */
	for (size_t i = 0; r >= 0 && i < c->n_binds; i++) {
		const char *src = s->bind_sources && i < s->bind_sources->n
				      ? s->bind_sources->items[i]
				      : c->binds[i].src;

		/*
		 * A file holds no mounts: "ro" is all of it, and crun (1.8) opens
		 * an "rro" target as a directory ("open mount target: Not a
		 * directory"), so a read-only file bind never started.
		 */
		bool file = s->bind_files && s->bind_files[i];

		r = add_mount(mounts, c->binds[i].dst, "bind", src, "rbind",
			      c->binds[i].writable ? "rw"
			      : file		   ? "ro"
						   : "rro",
			      "nosuid", "nodev", NULL);
	}
	return r;
}

/* a with v's strings appended (a stolen); NULL when out of memory. */
static json_t *strv_json(json_t *a, char *const *v)
{
	for (; a && v && *v; v++)
		if (json_array_append_new(a, sr_json_string(*v)) < 0)
			return json_decref(a), NULL;
	return a;
}

/* The agent's command, after the init's arguments (oci-init.h) where it is PID 1. */
static json_t *args(const struct sr_oci_spec *s)
{
	char nproc[32];
	json_t *a;

	snprintf(nproc, sizeof(nproc), "%" PRIu64, s->nproc);
	if (!s->init)
		a = json_array();
	else if (s->nproc)
		a = json_pack("[s, s, s, s]", SR_OCI_INIT, "--nproc", nproc, "--");
	else
		a = json_pack("[s, s]", SR_OCI_INIT, "--");
	return strv_json(a, s->argv);
}

/*
 * The process: uid 1000 with no other group, every capability set empty,
 * no_new_privs, no core dumps (a limit of 1: not even to a pipe
 * core_pattern, child/setup.c), half the creator's message-queue bytes,
 * queued signals and locked memory (as a run: child/setup.c), half its hard fd limit (as a
 * run's processes: child/init-spawn.c), the agent's command, environment
 * and cwd.
 *
 * And --memory and --pids as the rlimits a run falls back to where no
 * cgroup is its to use (cgroup-rlimit.c): RLIMIT_DATA here, per process;
 * RLIMIT_NPROC set by the init (args()). Whether the runtime has a
 * cgroup is decided when it runs (rootless crun with none it may write
 * drops linux.resources without a word), so every bundle has them. Under
 * a cgroup they bound no more than it does, but for RLIMIT_DATA, which a
 * run under a cgroup does not set: a process's writable private mappings
 * beyond --memory fail even untouched.
 *
 * RLIMIT_NPROC counts the tasks of one host uid in one user namespace
 * (ucounts, Linux >= 5.14; before, all of that uid's, in a run too), and
 * holds each namespace up the chain to the RLIMIT_NPROC its creator had.
 * The container's user is the 1000 of a namespace of its own, whatever
 * host id it maps to (the exporter's, or root's subordinate one): set
 * inside it, the limit counts the container's tasks, PID 1 included, as
 * pids.max does, and none of that host uid's other processes. Set here
 * it would not be: crun applies process.rlimits before it creates the
 * user namespace, which then holds all of the runtime's user's tasks on
 * the host to --pids (child/oci-init.c).
 */
static int add_rlimit(json_t *rlimits, const char *type, uint64_t soft, uint64_t hard)
{
	return hard ? json_array_append_new(rlimits,
					    json_pack("{s:s, s:I, s:I}", "type", type, "hard",
						      (json_int_t)hard, "soft", (json_int_t)soft))
		    : 0;
}

static json_t *process(const struct sr_oci_spec *s)
{
	json_t *rlimits =
	    json_pack("[{s:s, s:i, s:i}]", "type", "RLIMIT_CORE", "hard", 1, "soft", 1);

	if (rlimits &&
	    (add_rlimit(rlimits, "RLIMIT_MSGQUEUE", s->msgqueue, s->msgqueue) < 0 ||
	     add_rlimit(rlimits, "RLIMIT_SIGPENDING", s->sigpending, s->sigpending) < 0 ||
	     add_rlimit(rlimits, "RLIMIT_MEMLOCK", s->memlock, s->memlock) < 0 ||
	     add_rlimit(rlimits, "RLIMIT_NOFILE", s->files_soft, s->files) < 0 ||
	     add_rlimit(rlimits, "RLIMIT_DATA", s->data, s->data) < 0))
		return json_decref(rlimits), NULL;
	return json_pack(
	    "{s:b, s:{s:i, s:i, s:[]}, s:o, s:o, s:s, s:{s:[], s:[], s:[], s:[], s:[]},"
	    " s:o, s:b}",
	    "terminal", false, "user", "uid", SR_SANDBOX_UID, "gid", SR_SANDBOX_GID,
	    "additionalGids", "args", args(s), "env", strv_json(json_array(), s->envp), "cwd",
	    SR_WORKSPACE, "capabilities", "bounding", "effective", "inheritable", "permitted",
	    "ambient", "rlimits", rlimits, "noNewPrivileges", true);
}

/*
 * linux.resources: memory (swap no further: memsw at the same value),
 * cpus as a quota per 100 ms, pids. A limit of 0 is none, as in a run.
 */
static json_t *resources(const struct sr_config *c)
{
	json_t *r = json_object();

	if (!r)
		return NULL;
	if (c->memory_bytes &&
	    json_object_set_new(r, "memory",
				json_pack("{s:I, s:I}", "limit", (json_int_t)c->memory_bytes,
					  "swap", (json_int_t)c->memory_bytes)) < 0)
		goto fail;
	if (c->cpus_milli &&
	    json_object_set_new(r, "cpu",
				json_pack("{s:I, s:I}", "quota", (json_int_t)c->cpus_milli * 100,
					  "period", (json_int_t)100000)) < 0)
		goto fail;
	if (c->pids &&
	    json_object_set_new(r, "pids", json_pack("{s:I}", "limit", (json_int_t)c->pids)) < 0)
		goto fail;
	return r;
fail:
	json_decref(r);
	return NULL;
}

static json_t *proc_paths(const char *const *names, size_t n)
{
	json_t *a = json_array();

	for (size_t i = 0; a && i < n; i++) {
		char path[64];

		snprintf(path, sizeof(path), "/proc/%s", names[i]);
		if (json_array_append_new(a, json_string(path)) < 0)
			return json_decref(a), NULL;
	}
	return a;
}

static json_t *id_map(unsigned host)
{
	return json_pack("[{s:i, s:I, s:i}]", "containerID", SR_SANDBOX_UID, "hostID",
			 (json_int_t)host, "size", 1);
}

/*
 * The /proc entries a run hides: files and directories masked (a runtime
 * covers a file with /dev/null and a directory with an empty read-only
 * tmpfs, as a run does), /proc/cmdline too (a run shows an empty line);
 * sys, bus, fs, irq read-only.
 *
 * And the bound boot id once more, after /proc/sys: a runtime makes a
 * read-only path read-only by binding it over itself, and crun (1.8)
 * does that to /proc/sys with the mounts beneath it, whose copies come
 * out writable: the boot id's "ro" was lost, and the agent, whose file
 * it is where the exporter is the container's user, chmod'ed it and
 * grew the bundle's file on the host past any disk limit. Bound over
 * itself read-only last, it is read-only on top (EROFS).
 */
static json_t *linux_section(const struct sr_oci_spec *s, json_t *seccomp)
{
	json_t *masked = proc_paths(sr_layout_proc_hidden_files, sr_layout_n_proc_hidden_files);
	json_t *dirs = proc_paths(sr_layout_proc_hidden_dirs, sr_layout_n_proc_hidden_dirs);
	json_t *readonly = proc_paths(sr_layout_proc_readonly, sr_layout_n_proc_readonly);

	if (!masked || !dirs || !readonly || json_array_extend(masked, dirs) < 0 ||
	    json_array_append_new(masked, json_string("/proc/cmdline")) < 0 ||
	    (s->boot_id && json_array_append_new(readonly, json_string(SR_OCI_BOOT_ID)) < 0)) {
		json_decref(masked);
		json_decref(dirs);
		json_decref(readonly);
		json_decref(seccomp);
		return NULL;
	}
	json_decref(dirs);
	return json_pack("{s:[{s:s},{s:s},{s:s},{s:s},{s:s},{s:s},{s:s}], s:o, s:o, s:o, s:o, s:o, "
			 "s:o}",
			 "namespaces", "type", "user", "type", "pid", "type", "mount", "type",
			 "ipc", "type", "uts", "type", "network", "type", "cgroup", "uidMappings",
			 id_map(s->host_uid), "gidMappings", id_map(s->host_gid), "resources",
			 resources(s->config), "seccomp", seccomp, "maskedPaths", masked,
			 "readonlyPaths", readonly);
}

/*
 * What the runtime cannot hold, said where a wrapper can read it: the
 * timeout (`timeout 120 crun run` is the caller's to add).
 */
static json_t *annotations(const struct sr_config *c)
{
	char timeout[SR_UNITS_BUF_MAX];

	sr_format_duration(c->timeout_ms, timeout, sizeof(timeout));
	return json_pack("{s:s, s:o, s:s}", "sandbox-run.version", PACKAGE_VERSION,
			 "sandbox-run.profile", sr_json_string(c->profile ? c->profile : ""),
			 "sandbox-run.timeout", timeout);
}

int sr_oci_config(const struct sr_oci_spec *s, json_t **ret, struct sr_error *err)
{
	_cleanup_(sr_json_decrefp) json_t *mounts = json_array();
	json_t *seccomp = NULL, *config;
	int r;

	if (!mounts)
		return sr_error_errno(err, -ENOMEM, "config.json");
	r = add_mounts(s, mounts);
	if (r < 0)
		return sr_error_errno(err, r, "config.json: mounts");
	r = sr_seccomp_oci_profile(&seccomp, err);
	if (r < 0)
		return r;
	config =
	    json_pack("{s:s, s:o, s:{s:s, s:b}, s:s, s:O, s:o, s:o}", "ociVersion", SR_OCI_VERSION,
		      "process", process(s), "root", "path", "rootfs", "readonly", true, "hostname",
		      SR_SANDBOX_HOSTNAME, "mounts", mounts, "linux", linux_section(s, seccomp),
		      "annotations", annotations(s->config));
	if (!config)
		return sr_error_errno(err, -ENOMEM, "config.json");
	*ret = config;
	return 0;
}
