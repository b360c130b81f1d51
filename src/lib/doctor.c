/* SPDX-License-Identifier: MIT */
/*
 * doctor: the host's facts (below, impure) and the checks computed from
 * them (sr_doctor_evaluate(), pure). See doctor.h.
 */
#include "doctor.h"
#include "cgroup.h"
#include "config.h"
#include "dl.h"
#include "fault.h"
#include "protocol.h"
#include "sandbox.h"
#include "userns.h"
#include "util.h"

#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/utsname.h>
#include <sys/wait.h>

#ifndef CGROUP2_SUPER_MAGIC
#define CGROUP2_SUPER_MAGIC 0x63677270
#endif

/* A trial sandbox's set-up and run, at most. */
#define TRIAL_TIMEOUT_MS 10000
/* A helper's --version, at most. */
#define VERSION_TIMEOUT_MS 2000

/* The facts. */

/* src cut to fit dst (an array): facts are for reading, not for exactness. */
#define COPY(dst, src) snprintf((dst), sizeof(dst), "%.*s", (int)sizeof(dst) - 1, (src))

/* The first line of a small file, without its newline; -errno. */
static int read_line(const char *path, char *buf, size_t len)
{
	_cleanup_fclose_ FILE *f = fopen(path, "re");

	if (!f)
		return sr_negerrno();
	if (!fgets(buf, (int)len, f))
		return ferror(f) ? -EIO : -ENODATA;
	buf[strcspn(buf, "\n")] = '\0';
	return 0;
}

static long read_sysctl(const char *procsys, const char *name)
{
	char path[PATH_MAX], buf[64], *end;
	long v;

	snprintf(path, sizeof(path), "%s/%s", procsys, name);
	if (read_line(path, buf, sizeof(buf)) < 0)
		return SR_SYSCTL_ABSENT;
	errno = 0;
	v = strtol(buf, &end, 10);
	if (errno || end == buf || v < 0)
		return SR_SYSCTL_ABSENT;
	return v;
}

void sr_doctor_read_userns(const char *procsys, struct sr_host_facts *f)
{
	ssize_t n;

	f->root = geteuid() == 0;
	f->userns_clone = read_sysctl(procsys, "kernel/unprivileged_userns_clone");
	f->max_userns = read_sysctl(procsys, "user/max_user_namespaces");
	f->apparmor_restrict = read_sysctl(procsys, "kernel/apparmor_restrict_unprivileged_userns");
	/* AppArmor's own file (5.8+): /proc/self/attr/current may be another LSM's. */
	if (read_line("/proc/self/attr/apparmor/current", f->apparmor_label,
		      sizeof(f->apparmor_label)) < 0)
		f->apparmor_label[0] = '\0';
	f->apparmor_profile = access(SR_APPARMOR_PROFILE, F_OK) == 0;
	n = readlink("/proc/self/exe", f->exe, sizeof(f->exe) - 1);
	f->exe[n > 0 ? n : 0] = '\0';
}

static void read_kernel(struct sr_host_facts *f)
{
	struct utsname u;

	if (uname(&u) == 0) {
		snprintf(f->release, sizeof(f->release), "%s", u.release);
		if (sscanf(u.release, "%u.%u", &f->kernel_major, &f->kernel_minor) != 2)
			f->kernel_major = f->kernel_minor = 0;
	}
	/* Probes that make nothing: a bad fd, a NULL argument; only ENOSYS says "absent". */
	f->has_mount_setattr =
	    syscall(SYS_mount_setattr, -1, "", 0, NULL, (size_t)0) == 0 || errno != ENOSYS;
	f->has_clone3 = syscall(SYS_clone3, NULL, (size_t)0) == 0 || errno != ENOSYS;
}

static bool file_has_word(const char *path, const char *word)
{
	_cleanup_free_ char *text = NULL;
	_cleanup_fclose_ FILE *f = fopen(path, "re");
	char line[512];

	if (!f)
		return false;
	while (fgets(line, sizeof(line), f))
		for (char *save = NULL, *t = strtok_r(line, " \t\n", &save); t;
		     t = strtok_r(NULL, " \t\n", &save))
			if (strcmp(t, word) == 0)
				return true;
	return false;
}

/* A module of the running kernel: 1 built in, 2 a file to load, 0 neither. */
static int kernel_module(const char *release, const char *dir, const char *name)
{
	char path[PATH_MAX];
	struct stat st;
	static const char *const exts[] = {".ko", ".ko.xz", ".ko.zst", ".ko.gz"};

	snprintf(path, sizeof(path), "/sys/module/%s", name);
	if (stat(path, &st) == 0)
		return 1;
	snprintf(path, sizeof(path), "/lib/modules/%s/modules.builtin", release);
	{
		char want[128];

		snprintf(want, sizeof(want), "kernel/%s/%s.ko", dir, name);
		if (file_has_word(path, want))
			return 1;
	}
	for (size_t i = 0; i < SR_ARRAY_SIZE(exts); i++) {
		snprintf(path, sizeof(path), "/lib/modules/%s/kernel/%s/%s%s", release, dir, name,
			 exts[i]);
		if (stat(path, &st) == 0)
			return 2;
	}
	return 0;
}

/*
 * The usual signs a container runtime leaves: its marker files, systemd's
 * record of the container manager, Kubernetes' variables, and a cgroup
 * path of theirs.
 */
static void read_container(struct sr_host_facts *f)
{
	char line[128], cg[4096];
	static const struct {
		const char *needle, *name;
	} paths[] = {
	    {"/kubepods", "kubernetes"}, {"/docker/", "docker"}, {"/docker-", "docker"},
	    {"/libpod-", "podman"},	 {"/lxc/", "lxc"},	 {"/lxc.payload", "lxc"},
	};
	int fd;
	ssize_t n;

	if (access("/.dockerenv", F_OK) == 0) {
		snprintf(f->container, sizeof(f->container), "docker");
		snprintf(f->container_sign, sizeof(f->container_sign), "/.dockerenv");
		return;
	}
	if (access("/run/.containerenv", F_OK) == 0) {
		snprintf(f->container, sizeof(f->container), "podman");
		snprintf(f->container_sign, sizeof(f->container_sign), "/run/.containerenv");
		return;
	}
	if (read_line("/run/systemd/container", line, sizeof(line)) == 0 && *line) {
		COPY(f->container, line);
		snprintf(f->container_sign, sizeof(f->container_sign), "/run/systemd/container");
		return;
	}
	if (getenv("KUBERNETES_SERVICE_HOST")) {
		snprintf(f->container, sizeof(f->container), "kubernetes");
		snprintf(f->container_sign, sizeof(f->container_sign), "$KUBERNETES_SERVICE_HOST");
		return;
	}
	fd = open("/proc/self/cgroup", O_RDONLY | O_CLOEXEC);
	n = fd >= 0 ? read(fd, cg, sizeof(cg) - 1) : -1;
	if (fd >= 0)
		close(fd);
	cg[n > 0 ? n : 0] = '\0';
	for (size_t i = 0; i < SR_ARRAY_SIZE(paths); i++) {
		if (strstr(cg, paths[i].needle)) {
			snprintf(f->container, sizeof(f->container), "%s", paths[i].name);
			snprintf(f->container_sign, sizeof(f->container_sign), "/proc/self/cgroup");
			return;
		}
	}
}

static bool is_cgroup2(const char *path)
{
	struct statfs s;

	return statfs(path, &s) == 0 && (unsigned long)s.f_type == CGROUP2_SUPER_MAGIC;
}

static void read_cgroup(struct sr_host_facts *f)
{
	struct sr_config c;
	struct sr_cgroup *cg = NULL;
	struct sr_error err = {0};
	enum sr_enforce enforced[_SR_LIMIT_MAX] = {0};
	const char *rt = getenv("XDG_RUNTIME_DIR");
	char id[33], path[PATH_MAX];
	int clone_fd;
	struct stat st;

	if (is_cgroup2("/sys/fs/cgroup"))
		f->cgroup_layout = 2;
	else if (is_cgroup2("/sys/fs/cgroup/unified"))
		f->cgroup_layout = 1;
	else if (stat("/sys/fs/cgroup/memory", &st) == 0)
		f->cgroup_layout = 0;
	else
		f->cgroup_layout = -1;

	/* What a run would get: the strategy table itself, with the default profile's limits. */
	sr_config_init(&c);
	sr_sandbox_new_id(id);
	if (sr_cgroup_prepare(&c, id, &cg, &clone_fd, enforced, &err) == 0) {
		snprintf(f->cgroup_strategy, sizeof(f->cgroup_strategy), "%s",
			 sr_cgroup_strategy(cg));
		COPY(f->cgroup_reason, sr_cgroup_reason(cg));
		f->cgroup_enforced[0] = enforced[SR_LIMIT_MEMORY];
		f->cgroup_enforced[1] = enforced[SR_LIMIT_CPUS];
		f->cgroup_enforced[2] = enforced[SR_LIMIT_PIDS];
		sr_cgroup_free(cg);
	} else {
		snprintf(f->cgroup_strategy, sizeof(f->cgroup_strategy), "rlimit");
		COPY(f->cgroup_reason, err.msg);
	}
	sr_config_free(&c);

	if (rt && *rt)
		snprintf(path, sizeof(path), "%s/systemd/private", rt);
	else
		snprintf(path, sizeof(path), "/run/user/%u/systemd/private", (unsigned)getuid());
	f->user_manager = access(path, F_OK) == 0;
}

/* The helper's path on $PATH (as the network module looks it up), or false. */
static bool on_path(const char *name, char *buf, size_t len)
{
	const char *path = getenv("PATH");
	_cleanup_free_ char *copy = strdup(path && *path ? path : "/usr/local/bin:/usr/bin:/bin");
	char *save = NULL;

	if (!copy)
		return false;
	for (char *d = strtok_r(copy, ":", &save); d; d = strtok_r(NULL, ":", &save)) {
		snprintf(buf, len, "%s/%s", d, name);
		if (access(buf, X_OK) == 0)
			return true;
	}
	return false;
}

/* Runs PATH --version; the first line it prints (at most 2 s), or "installed". */
static void helper_version(const char *name, char *buf, size_t len)
{
	char path[PATH_MAX], out[256] = "";
	int pipefd[2];
	size_t off = 0;
	pid_t pid;

	buf[0] = '\0';
	if (!on_path(name, path, sizeof(path)))
		return;
	snprintf(buf, len, "%.*s (version unknown)", (int)(len > 20 ? len - 20 : 0), path);
	if (pipe2(pipefd, O_CLOEXEC) < 0)
		return;
	pid = fork();
	if (pid == 0) {
		int null = open("/dev/null", O_RDWR);

		if (null < 0 || dup2(null, 0) < 0 || dup2(pipefd[1], 1) < 0 || dup2(null, 2) < 0)
			_exit(127);
		execl(path, name, "--version", (char *)NULL);
		_exit(127);
	}
	close(pipefd[1]);
	if (pid < 0) {
		close(pipefd[0]);
		return;
	}
	for (int64_t end = sr_monotonic_ns() + VERSION_TIMEOUT_MS * 1000000LL;
	     off + 1 < sizeof(out);) {
		struct pollfd p = {.fd = pipefd[0], .events = POLLIN};
		int64_t left = end - sr_monotonic_ns();
		ssize_t n;

		if (left <= 0 || poll(&p, 1, (int)(left / 1000000) + 1) <= 0)
			break;
		n = SR_RETRY(read(pipefd[0], out + off, sizeof(out) - 1 - off));
		if (n <= 0)
			break;
		off += (size_t)n;
	}
	out[off] = '\0';
	close(pipefd[0]);
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	out[strcspn(out, "\n")] = '\0';
	if (*out)
		snprintf(buf, len, "%s", out);
}

static void read_network(struct sr_host_facts *f)
{
	struct stat st;

	helper_version("slirp4netns", f->slirp4netns, sizeof(f->slirp4netns));
	helper_version("pasta", f->pasta, sizeof(f->pasta));
	/* The helpers open it as the caller (docs/network.md). */
	if (stat("/dev/net/tun", &st) < 0 || !S_ISCHR(st.st_mode))
		f->tun = 0;
	else
		f->tun = access("/dev/net/tun", R_OK | W_OK) == 0 ? 1 : -1;
	f->nf_tables = kernel_module(f->release, "net/netfilter", "nf_tables");
}

static void read_libraries(struct sr_host_facts *f)
{
	struct sr_error err = {0};

	/* Loading, not using: no symbol asked for. */
	if (sr_dl_load(SR_LIBARCHIVE_SONAME, NULL, 0, &err) < 0)
		COPY(f->libarchive_error, err.msg);
	sr_error_clear(&err);
	if (sr_dl_load(SR_LIBNFTABLES_SONAME, NULL, 0, &err) < 0)
		COPY(f->libnftables_error, err.msg);
}

/* The trial's end, through the library's callbacks. */
struct trial_wait {
	bool seen;
	struct sr_exit exit;
};

static void trial_ended(void *ctx, struct sr_sandbox *sb, const struct sr_exit *ends)
{
	struct trial_wait *w = ctx;

	(void)sb;
	if (ends) {
		w->exit = *ends;
		w->seen = true;
	}
}

static const struct sr_sandbox_ops trial_ops = {.ended = trial_ended};

/* Waits for the sandbox to end by the deadline; kills it past that. */
static void trial_wait(struct sr_sandbox *sb, int64_t deadline_ns)
{
	while (!sr_sandbox_ended(sb)) {
		struct pollfd p[SR_SANDBOX_POLL_FDS];
		int fds[SR_SANDBOX_POLL_FDS];
		int64_t left = deadline_ns - sr_monotonic_ns();

		if (left <= 0) {
			sr_sandbox_kill(sb);
			left = 1000000000;
			deadline_ns = sr_monotonic_ns() + left;
		}
		sr_sandbox_poll_fds(sb, fds);
		for (size_t i = 0; i < SR_SANDBOX_POLL_FDS; i++)
			p[i] = (struct pollfd){.fd = fds[i], .events = POLLIN};
		if (poll(p, SR_SANDBOX_POLL_FDS, (int)(left / 1000000) + 1) < 0 && errno != EINTR) {
			sr_sandbox_kill(sb);
			return;
		}
		sr_sandbox_dispatch(sb);
	}
}

/*
 * A real sandbox, made as a run makes it (the library's create and spawn,
 * the default profile's limits), running `true`: what no reading of
 * sysctls can promise. In-process rather than a child sandbox-run: the
 * error is the library's own struct, with the code the diagnosis needs,
 * and the verb need not find and trust its own binary.
 */
static void trial(enum sr_net_mode net, const struct sr_sink *sink, struct sr_doctor_trial *t)
{
	static char *const argv[] = {"true", NULL};
	struct sr_config c;
	struct sr_result r;
	struct sr_error err = {0};
	struct sr_sandbox *sb = NULL;
	struct trial_wait w = {0};
	int64_t deadline = sr_monotonic_ns() + TRIAL_TIMEOUT_MS * 1000000LL;
	struct sr_sandbox_opts o = {
	    .sink = sink, .ops = &trial_ops, .ctx = &w, .deadline_ns = deadline};
	_cleanup_close_ int null = open("/dev/null", O_RDWR | O_CLOEXEC);
	struct sr_spawn s = {
	    .flags = SR_SPAWN_AGENT | SR_SPAWN_ENDS_SANDBOX,
	    .stdio = {null, null, null},
	};
	pid_t pid;
	int e;

	t->tried = true;
	sr_config_init(&c);
	sr_result_init(&r);
	c.net = net;
	c.command_mode = true;
	c.argv = (char **)argv;
	c.argc = 1;
	c.timeout_ms = TRIAL_TIMEOUT_MS;
	c.log_level = sink ? sink->level : SR_LOG_ERROR;
	e = null < 0 ? sr_error_errno(&err, sr_negerrno(), "open /dev/null") : 0;
	if (e == 0)
		e = sr_sandbox_create(&c, &o, &r, &sb, &err);
	if (e == 0)
		e = sr_sandbox_spawn(sb, &s, &pid, NULL, &err);
	if (e == 0) {
		trial_wait(sb, deadline);
		if (!w.seen || !WIFEXITED(w.exit.status) || WEXITSTATUS(w.exit.status) != 0) {
			const struct sr_error *se = sr_sandbox_error(sb);

			if (se && se->code)
				err = *se;
			else if (w.seen)
				sr_error_msg(
				    &err, -EPROTO, "`true` in the sandbox ended with status %d",
				    WIFEXITED(w.exit.status) ? WEXITSTATUS(w.exit.status)
							     : 128 + WTERMSIG(w.exit.status));
			else
				sr_error_msg(&err, -EPROTO, "the sandbox ended before `true` did");
			e = err.code;
		}
	}
	sr_sandbox_free(sb);
	t->ok = e == 0;
	t->net = r.enforced[SR_LIMIT_NET];
	if (!t->ok)
		snprintf(t->error, sizeof(t->error), "%s", err.msg);
	sr_config_free(&c);
}

void sr_doctor_gather(const char *procsys, const struct sr_sink *sink, struct sr_host_facts *f)
{
	*f = (struct sr_host_facts){0};
	read_kernel(f);
	sr_doctor_read_userns(procsys, f);
	f->overlay = file_has_word("/proc/filesystems", "overlay")
			 ? 1
			 : kernel_module(f->release, "fs/overlayfs", "overlay");
	read_container(f);
	read_cgroup(f);
	if (f->root) {
		uid_t uid;
		gid_t gid;
		int lock;

		sr_userns_host_ids(0, 0, &uid, &gid, &lock);
		sr_closep(&lock);
		f->subuid = uid != 65534;
	}
	read_network(f);
	read_libraries(f);
	trial(SR_NET_NONE, sink, &f->trial);
	/* Worth trying only where --net none runs and a helper can start; else the checks say why.
	 */
	if (f->trial.ok && (*f->slirp4netns || *f->pasta) && f->tun != 0 && !*f->libnftables_error)
		trial(SR_NET_EGRESS, sink, &f->egress);
}
