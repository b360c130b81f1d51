/* SPDX-License-Identifier: MIT */
/*
 * `sandbox-run deploy [OPTIONS] [--name NAME] AGENT`: a new version of a
 * deployment (deploy.h). The code (a directory, or an archive extracted
 * here; one whose entries all sit under one folder, as `npm pack` makes,
 * is entered), the install step in a sandbox with the deployment's limits
 * and network (install.h), the installed tree kept as the version's
 * read-only layer, then made current and old versions pruned. Progress:
 * one live line on a terminal, plain lines elsewhere, nothing with -q; a
 * failed install shows its output's last lines and leaves the current
 * version as it was. A deploy of a name another deploy is making waits for
 * it, saying so; the name's checks are the library's, under its lock.
 */
#include "agent.h"
#include "archive.h"
#include "deploy.h"
#include "disk.h"
#include "hostpath.h"
#include "install.h"
#include "options.h"
#include "proc.h"
#include "secrets.h"
#include "util.h"
#include "verbs.h"

#include <dirent.h>
#include <libgen.h>
#include <limits.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <time.h>

#define TAIL_LINES  20
#define MAX_ENTRIES (10 * 1000 * 1000)
/* A line of the installer's as shown (the log has it whole). */
#define LINE_SHOWN_MAX 4096

static void usage(FILE *f)
{
	fputs("Usage: sandbox-run deploy [OPTIONS] [--name NAME] [--install CMD] AGENT\n"
	      "Install AGENT (a directory or an archive) once, in a sandbox, as a new version\n"
	      "of the deployment NAME; `sandbox-run invoke NAME` then runs it, a fresh sandbox\n"
	      "per prompt. The install step reaches the network (--net egress) and never\n"
	      "runs on the host: `npm ci` with a lock file, else `npm install` when\n"
	      "package.json has dependencies; `pip install -r requirements.txt`; or yours.\n"
	      "\n"
	      "  --name NAME             the deployment (default: a directory's package.json\n"
	      "                          name, else AGENT's file name less .tgz, -1.2.3)\n"
	      "  --install CMD           the install step instead, run by /bin/sh -c in\n"
	      "                          /workspace ([deploy] install)\n"
	      "  --install-timeout D     how long it may take (default 10m; [deploy])\n"
	      "  --keep N                versions kept (default 3, 0: all; [deploy] keep)\n"
	      "  -q, --quiet             nothing but errors\n"
	      "  -v, --verbose           the install step's output as it comes\n"
	      "  -h, --help              print this help and exit\n"
	      "\n"
	      "Every option of `sandbox-run run` applies (-p, --memory, --cpus, --timeout,\n"
	      "--net, --allow, --env, ...) but --result: the install runs with them, and the\n"
	      "deployment keeps them for its invocations, whose own options go over them.\n"
	      "Secrets are set apart: sandbox-run secrets set NAME KEY. Options may also\n"
	      "follow AGENT.\n"
	      "\n"
	      "A deploy of a name another deploy is making waits for it to end.\n"
	      "\n"
	      "Exit status: 0 deployed; 125 failed (the current version stays current).\n",
	      f);
}

struct progress {
	enum sr_log_level level;
	bool tty;
	const char *name;
	unsigned version;
	char step[256];
	char last[512];
	int64_t start_ns, step_ns;
	int64_t shown_tenths;
	bool drawn;
};

static int term_width(void)
{
	struct winsize ws;

	if (ioctl(STDERR_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 20)
		return ws.ws_col;
	return 80;
}

/* The live line, redrawn in place: step, elapsed time, the step's last line. */
static void draw(struct progress *p)
{
	char line[1024];
	int w = term_width(), n;
	double secs = (double)(sr_monotonic_ns() - p->start_ns) / 1e9;

	n = snprintf(line, sizeof(line), "\r\033[K%s v%u: %s %.1fs%s%s", p->name, p->version,
		     p->step, secs, *p->last ? "  " : "", p->last);
	if (n < 0)
		return;
	/* One terminal row, or the next redraw would leave the rest behind. */
	if (n > w + 4)
		n = w + 4;
	for (int i = 4; i < n; i++)
		if ((unsigned char)line[i] < ' ')
			line[i] = ' ';
	(void)!write(STDERR_FILENO, line, (size_t)n);
	p->drawn = true;
}

static void clear_line(struct progress *p)
{
	if (p->drawn)
		(void)!write(STDERR_FILENO, "\r\033[K", 4);
	p->drawn = false;
}

static void on_step(void *ctx, const char *what)
{
	struct progress *p = ctx;

	snprintf(p->step, sizeof(p->step), "%s", what);
	p->last[0] = '\0';
	p->step_ns = sr_monotonic_ns();
	if (p->level < SR_LOG_WARNING)
		return;
	if (p->tty)
		draw(p);
	else
		fprintf(stderr, "sandbox-run: deploy %s v%u: %s\n", p->name, p->version, what);
}

/*
 * A line the installer printed, on the deployer's terminal: the install
 * script's bytes, so its escape sequences (a title, OSC 52's clipboard, a
 * line erased and forged) are shown as '?'. The log keeps them.
 */
static void show_line(const char *line)
{
	char shown[LINE_SHOWN_MAX];

	sr_printable(line, shown, sizeof(shown));
	fprintf(stderr, "  | %s\n", shown);
}

static void on_line(void *ctx, const char *line)
{
	struct progress *p = ctx;

	if (!*line)
		return;
	sr_printable(line, p->last, sizeof(p->last));
	if (p->level >= SR_LOG_INFO) {
		clear_line(p);
		show_line(line);
	}
	if (p->tty && p->level >= SR_LOG_WARNING)
		draw(p);
}

static void on_tick(void *ctx)
{
	struct progress *p = ctx;
	int64_t tenths = (sr_monotonic_ns() - p->start_ns) / 100000000;

	if (!p->tty || p->level < SR_LOG_WARNING || tenths == p->shown_tenths)
		return;
	p->shown_tenths = tenths;
	draw(p);
}

static const struct sr_install_ops progress_ops = {
    .step = on_step, .line = on_line, .tick = on_tick};

static void human_size(int64_t bytes, char *buf, size_t len)
{
	static const char *const units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
	double v = (double)bytes;
	size_t u = 0;

	while (v >= 1024 && u + 1 < SR_ARRAY_SIZE(units)) {
		v /= 1024;
		u++;
	}
	snprintf(buf, len, u ? "%.1f %s" : "%.0f %s", v, units[u]);
}

/* "my-agent-1.2.0.tgz" -> "my-agent": npm pack's names end in -VERSION. */
static void strip_version(char *s)
{
	for (char *dash = strrchr(s, '-'); dash; dash = NULL) {
		const char *v = dash + 1;
		int dots = 0;

		if (*v < '0' || *v > '9')
			return;
		for (; *v; v++) {
			if (*v == '.')
				dots++;
			else if ((*v < '0' || *v > '9') && dots < 2)
				return;
		}
		if (dots >= 2)
			*dash = '\0';
	}
}

/*
 * The deployment's name when --name is not given: package.json's "name"
 * (a scoped one's last part), else the directory's or archive's name,
 * less its extension and npm pack's version.
 */
static int default_name(const char *agent, bool archive, char **ret, struct sr_error *err)
{
	static const char *const exts[] = {".tar.gz", ".tar.xz", ".tar.zst", ".tar.bz2", ".tgz",
					   ".txz",    ".tzst",	 ".tar",     ".zip"};
	_cleanup_free_ char *copy = strdup(agent), *name = NULL;
	char *base;

	if (!copy)
		return sr_error_errno(err, -ENOMEM, "deploy");
	if (!archive) {
		_cleanup_close_ int fd = -1;
		_cleanup_free_ char *pkg = NULL, *path = NULL;

		if (asprintf(&path, "%s/package.json", agent) >= 0)
			fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
		if (fd >= 0 && (pkg = calloc(1, 256 * 1024))) {
			ssize_t n = SR_RETRY(read(fd, pkg, 256 * 1024 - 1));
			json_t *j = NULL;

			if (n > 0 && sr_json_parse(pkg, (size_t)n, 0, 64, &j) == 0) {
				const char *s = json_string_value(json_object_get(j, "name"));
				const char *slash = s ? strrchr(s, '/') : NULL;

				if (s && sr_deploy_valid_name(slash ? slash + 1 : s))
					name = strdup(slash ? slash + 1 : s);
				json_decref(j);
			}
		}
	}
	if (!name) {
		size_t n = strlen(copy);

		while (n > 1 && copy[n - 1] == '/')
			copy[--n] = '\0';
		base = basename(copy);
		for (size_t i = 0; archive && i < SR_ARRAY_SIZE(exts); i++) {
			size_t l = strlen(base), e = strlen(exts[i]);

			if (l > e && strcmp(base + l - e, exts[i]) == 0) {
				base[l - e] = '\0';
				strip_version(base);
				break;
			}
		}
		name = strdup(base);
	}
	if (!name)
		return sr_error_errno(err, -ENOMEM, "deploy");
	if (!sr_deploy_valid_name(name))
		return sr_error_msg(err, -EINVAL,
				    "'%s' is no deployment name (1-64 of letters, digits, '_', "
				    "'.', '-'): name it with --name NAME",
				    name);
	*ret = steal_pointer(&name);
	return 0;
}

/*
 * The code to install: a directory as it is; an archive extracted into
 * the version's src/ and, when all its entries sit under one folder (npm
 * pack's package/), that folder.
 */
static int prepare_code(const char *agent, const char *source, bool archive, int cancel,
			struct sr_deploy_new *v, const struct sr_config *c, char **ret,
			struct sr_error *err)
{
	/*
	 * Extracted on the host, into the data directory: bounded as the
	 * sandbox's disk bounds what it holds, in bytes and in inodes, or a
	 * small archive of empty files would spend the host file system's.
	 */
	uint64_t inodes = sr_disk_inodes(c->disk_bytes);
	struct sr_extract_opts x = {.max_bytes = c->disk_bytes,
				    .max_entries = inodes && inodes < MAX_ENTRIES ? (size_t)inodes
										  : MAX_ENTRIES,
				    /* ^C: a small archive may expand to all of --disk. */
				    .cancel_fd = cancel > 0 ? cancel : 0};
	_cleanup_close_ int fd = -1, src = -1;
	_cleanup_free_ char *path = NULL, *top = NULL, *real = NULL;
	struct dirent *de;
	DIR *d;
	int entries = 0, r;

	if (!archive) {
		path = strdup(source);
		if (!path)
			return sr_error_errno(err, -ENOMEM, "%s", agent);
		*ret = steal_pointer(&path);
		return 0;
	}
	/* Resolved with no link left (deploy()): one there now was put there since. */
	fd = sr_openat2(AT_FDCWD, source, O_RDONLY | O_CLOEXEC | O_NOCTTY,
			RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS);
	if (fd < 0)
		return sr_error_errno(err, fd, "%s", agent);
	if (mkdirat(v->vdirfd, "src", 0700) < 0 ||
	    (src = openat(v->vdirfd, "src", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) < 0)
		return sr_error_errno(err, sr_negerrno(), "%s/src", v->vdir);
	r = sr_archive_extract_opts(fd, src, &x, err);
	if (r < 0)
		return sr_error_prefix(err, "%s", agent);
	d = fdopendir(fcntl(src, F_DUPFD_CLOEXEC, 3));
	if (!d)
		return sr_error_errno(err, sr_negerrno(), "%s/src", v->vdir);
	while ((de = readdir(d))) {
		struct stat st;

		if (sr_streq(de->d_name, ".") || sr_streq(de->d_name, ".."))
			continue;
		entries++;
		free(top);
		top = fstatat(src, de->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISDIR(st.st_mode)
			  ? strdup(de->d_name)
			  : NULL;
	}
	closedir(d);
	if (entries == 0)
		return sr_error_msg(err, -ENOENT, "%s: an empty archive", agent);
	if (asprintf(&path, "%s/src%s%s", v->vdir, entries == 1 && top ? "/" : "",
		     entries == 1 && top ? top : "") < 0)
		return sr_error_errno(err, -ENOMEM, "deploy");
	/*
	 * The install's workspace (install.c), resolved as any is: the data
	 * directory is the caller's own, a link of theirs on its way theirs to
	 * follow.
	 */
	real = realpath(path, NULL);
	if (!real)
		return sr_error_errno(err, sr_negerrno(), "%s", path);
	*ret = steal_pointer(&real);
	return 0;
}

static bool is_archive(const char *agent, bool *ret, struct sr_error *err)
{
	struct stat st;

	if (stat(agent, &st) < 0) {
		if (errno == ENOENT || errno == ENOTDIR)
			sr_error_msg(
			    err, -ENOENT,
			    "agent '%s' not found (deploy takes a directory or an archive)", agent);
		else
			sr_error_errno(err, sr_negerrno(), "agent '%s'", agent);
		return false;
	}
	/*
	 * One we may not read is said now, as one not there is: found while
	 * reading it, it left a failed version (and a deployment of that
	 * name) whose log said no more than this.
	 */
	if (access(agent, S_ISDIR(st.st_mode) ? R_OK | X_OK : R_OK) < 0) {
		sr_error_errno(err, sr_negerrno(), "agent '%s'", agent);
		return false;
	}
	if (S_ISDIR(st.st_mode)) {
		*ret = false;
		return true;
	}
	if (S_ISREG(st.st_mode) && sr_agent_is_archive_name(agent)) {
		*ret = true;
		return true;
	}
	sr_error_msg(err, -EINVAL,
		     "%s: deploy takes a directory or an archive (.tar, .tar.gz, .tgz, .tar.xz, "
		     ".tar.zst, .zip)",
		     agent);
	return false;
}

/* The signals that end a deploy: its install is stopped, the version failed. */
static int cancel_fd(sigset_t *saved)
{
	sigset_t set;

	sigemptyset(&set);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGHUP);
	sigaddset(&set, SIGQUIT);
	if (sigprocmask(SIG_BLOCK, &set, saved) < 0)
		return -1;
	return signalfd(-1, &set, SFD_CLOEXEC | SFD_NONBLOCK);
}

/* meta.json as the deploy begins: when, and the install steps (none known yet). */
static json_t *meta_new(void)
{
	char when[32];
	time_t t = time(NULL);
	struct timespec ts;
	struct tm tm;

	clock_gettime(CLOCK_REALTIME, &ts);
	gmtime_r(&t, &tm);
	strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%SZ", &tm);
	return json_pack("{sssIso}", "created", when, "created_ms",
			 (json_int_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000, "install",
			 json_array());
}

/* What a failed install printed last, indented under the error. */
static void show_tail(const struct sr_deploy_new *v, const struct sr_sink *sink)
{
	_cleanup_free_ char *log = NULL, *tail = NULL;
	struct sr_error err = {0};

	if (asprintf(&log, "%s/install.log", v->vdir) < 0 ||
	    sr_deploy_tail(log, TAIL_LINES, &tail, &err) < 0 || !*tail)
		return;
	sr_sink_log(sink, SR_LOG_ERROR, "deploy %s: the install's last lines:", v->name);
	for (char *l = tail, *nl; l; l = nl) {
		nl = strchr(l, '\n');
		if (nl)
			*nl++ = '\0';
		show_line(l);
	}
}

struct deploy {
	struct sr_config *c;
	const char *agent;
	const char *source; /* agent, resolved with no link but root's (hostpath.h) */
	bool archive;
	struct sr_sink sink;
	struct progress prog;
	struct sr_deploy_new v;
	struct sr_install_plan plan;
	int cancel;
	int64_t install_ms;
};

/* Install and keep: 0, or err (the version failed). */
static int make_version(struct deploy *dp, json_t *meta, struct sr_error *err)
{
	struct sr_config *c = dp->c;
	_cleanup_free_ char *code = NULL;
	_cleanup_close_ int log = -1, codefd = -1, app = -1, namefd = -1;
	struct sr_strv argv = {0};
	struct sr_install_opts o = {
	    .sink = &dp->sink,
	    .ops = &progress_ops,
	    .ctx = &dp->prog,
	    .dest_dirfd = dp->v.vdirfd,
	    .cancel_fd = dp->cancel,
	    .cache_dirfd = -1,
	};
	int64_t t0;
	int r;

	log = openat(dp->v.vdirfd, "install.log",
		     O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC | O_APPEND, 0600);
	if (log < 0)
		return sr_error_errno(err, sr_negerrno(), "%s/install.log", dp->v.vdir);
	on_step(&dp->prog, dp->archive ? "extract the archive" : "read the agent");
	if ((r = prepare_code(dp->agent, dp->source, dp->archive, dp->cancel, &dp->v, c, &code,
			      err)) < 0)
		return r;
	codefd = open(code, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (codefd < 0)
		return sr_error_errno(err, sr_negerrno(), "%s", code);
	if ((r = sr_install_plan(codefd, c->install, &dp->plan, err)) < 0)
		return r;
	json_object_set_new(meta, "install", json_array());
	for (size_t i = 0; i < dp->plan.n; i++)
		json_array_append_new(json_object_get(meta, "install"),
				      sr_json_string(dp->plan.steps[i].what));
	o.code_dir = code;
	o.log_fd = log;
	/* Its own cache, in its directory: another deployment's install scripts never write it. */
	namefd = open(dp->v.dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (namefd < 0)
		return sr_error_errno(err, sr_negerrno(), "%s", dp->v.dir);
	o.cache_dirfd = namefd;
	t0 = sr_monotonic_ns();
	r = sr_install_run(c, &dp->plan, &o, err);
	dp->install_ms = (sr_monotonic_ns() - t0) / 1000000;
	if (r < 0)
		return r;
	(void)sr_deploy_remove_tree(dp->v.vdirfd, "src");
	app = openat(dp->v.vdirfd, "app", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (app < 0)
		return sr_error_errno(err, sr_negerrno(), "%s/app", dp->v.vdir);
	/* An entry point now, not at the first invocation. */
	r = sr_agent_detect_entry_in(app, dp->agent, c->entry, NULL, 0, &argv, err);
	sr_strv_free(&argv);
	if (r < 0)
		return r;
	if (dp->plan.python &&
	    faccessat(app, SR_INSTALL_PYTHON_DIR, F_OK, AT_SYMLINK_NOFOLLOW) == 0) {
		bool set = false;

		for (size_t i = 0; i < c->env.n; i++)
			set |= strncmp(c->env.items[i], "PYTHONPATH=", 11) == 0;
		if (!set && sr_config_set_env(c, "PYTHONPATH", "/workspace/" SR_INSTALL_PYTHON_DIR,
					      err) < 0)
			return err->code;
	}
	json_object_set_new(meta, "size_bytes", json_integer(sr_install_tree_size(app)));
	json_object_set_new(meta, "dependencies", json_integer(sr_install_count_packages(app)));
	json_object_set_new(meta, "install_ms", json_integer(dp->install_ms));
	return 0;
}

/*
 * Why a version failed, at the end of its install log, which the failure's
 * message points at: a failure that was not the installer's (no entry
 * point, the tree's copy) left it empty, and `deployments log` said nothing.
 */
static void log_failure(const struct sr_deploy_new *v, const struct sr_error *err)
{
	_cleanup_close_ int fd = openat(
	    v->vdirfd, "install.log", O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);

	if (fd >= 0)
		(void)!dprintf(fd, "sandbox-run: deploy %s: version %u failed: %s\n", v->name,
			       v->version, err->msg);
}

static void summary(struct deploy *dp, json_t *meta, unsigned pruned)
{
	char size[32];
	json_int_t deps = json_integer_value(json_object_get(meta, "dependencies"));
	double secs = (double)(sr_monotonic_ns() - dp->prog.start_ns) / 1e9;

	clear_line(&dp->prog);
	if (dp->prog.level < SR_LOG_WARNING)
		return;
	human_size(json_integer_value(json_object_get(meta, "size_bytes")), size, sizeof(size));
	fprintf(stderr,
		"sandbox-run: deployed %s version %u: %s, %lld dependenc%s, %.1f s (install %.1f "
		"s)%s\n",
		dp->v.name, dp->v.version, size, (long long)deps, deps == 1 ? "y" : "ies", secs,
		(double)dp->install_ms / 1e3, dp->plan.n ? "" : ", nothing to install");
	if (pruned)
		fprintf(stderr, "sandbox-run: %s: %u old version%s pruned\n", dp->v.name, pruned,
			pruned == 1 ? "" : "s");
	fprintf(stderr, "sandbox-run: invoke it: echo PROMPT | sandbox-run invoke %s\n",
		dp->v.name);
}

/* Another deploy of the name is under way: this one waits its turn (sr_deploy_begin). */
static void on_waiting(void *ctx)
{
	struct deploy *dp = ctx;

	clear_line(&dp->prog);
	if (dp->prog.level >= SR_LOG_WARNING)
		fprintf(stderr,
			"sandbox-run: deploy %s: another deploy of %s is under way; waiting for it "
			"to end\n",
			dp->prog.name, dp->prog.name);
}

/*
 * The package cache all deployments shared before each had its own
 * (sr_install_remove_shared_cache), removed at the first deploy since;
 * said once, for it frees what may be hundreds of MB.
 */
static void remove_shared_cache(struct deploy *dp)
{
	_cleanup_free_ char *path = NULL;
	struct sr_error err = {0};
	int64_t bytes = 0;
	char size[32];

	if (sr_install_remove_shared_cache(&path, &bytes, &err) < 0) {
		sr_warn(&dp->sink,
			"%s (the package cache deployments shared before each had its own: remove "
			"it by hand)",
			err.msg);
		return;
	}
	if (!path || dp->prog.level < SR_LOG_WARNING)
		return;
	human_size(bytes, size, sizeof(size));
	fprintf(
	    stderr,
	    "sandbox-run: removed %s (%s): the package cache all deployments shared before each "
	    "had its own, unused since\n",
	    path, size);
}

static int deploy(struct deploy *dp)
{
	struct sr_error err = {0}, ferr = {0};
	_cleanup_free_ char *name = NULL, *source = NULL;
	struct sr_deploy_begin_opts o = {
	    .name_chosen = !dp->c->name,
	    .cancel_fd = dp->cancel,
	    .waiting = on_waiting,
	    .ctx = dp,
	};
	json_t *meta = NULL;
	unsigned pruned = 0, current;
	int r;

	if (!is_archive(dp->agent, &dp->archive, &err))
		goto fail_early;
	if (dp->c->name)
		name = strdup(dp->c->name);
	else if (default_name(dp->agent, dp->archive, &name, &err) < 0)
		goto fail_early;
	/*
	 * As a run's agent (agent.c): a link another user put on its way
	 * would have a root caller deploy, and install as a deployment of
	 * root's, the directory it points to.
	 */
	if (sr_hostpath_resolve_arg("agent", dp->agent, &source, &err) < 0)
		goto fail_early;
	dp->source = source;
	meta = meta_new();
	if (!name || !meta) {
		sr_error_errno(&err, -ENOMEM, "deploy %s", dp->agent);
		goto fail_early;
	}
	remove_shared_cache(dp);
	dp->prog.name = name;
	o.source = source;
	o.meta = meta;
	if (sr_deploy_begin(name, &o, &dp->v, &err) < 0) {
		if (err.code != -ECANCELED)
			goto fail_early;
		sr_sink_log(&dp->sink, SR_LOG_ERROR, "deploy %s: %s", name, err.msg);
		json_decref(meta);
		return 128 + SIGINT;
	}
	dp->prog.name = dp->v.name;
	dp->prog.version = dp->v.version;
	r = make_version(dp, meta, &err);
	if (r == 0 && sr_deploy_publish(&dp->v, dp->c, meta, &err) == 0) {
		struct sr_error perr = {0};

		if (sr_deploy_prune(dp->v.name, dp->c->keep_versions, &pruned, &perr) < 0)
			sr_warn(&dp->sink, "%s", perr.msg);
		summary(dp, meta, pruned);
		json_decref(meta);
		return 0;
	}
	clear_line(&dp->prog);
	sr_sink_log(&dp->sink, SR_LOG_ERROR, "deploy %s: %s", dp->v.name, err.msg);
	if (err.code == -ECHILD || err.code == -ETIME)
		show_tail(&dp->v, &dp->sink);
	json_object_set_new(meta, "error", sr_json_string(err.msg));
	log_failure(&dp->v, &err);
	if (sr_deploy_fail(&dp->v, meta, &ferr) < 0)
		sr_warn(&dp->sink, "%s", ferr.msg);
	json_decref(meta);
	current = sr_deploy_current(dp->v.name);
	if (current)
		sr_sink_log(&dp->sink, SR_LOG_ERROR,
			    "deploy %s: version %u failed; version %u stays the active one (full "
			    "log: %s/install.log)",
			    dp->v.name, dp->v.version, current, dp->v.vdir);
	else
		sr_sink_log(&dp->sink, SR_LOG_ERROR,
			    "deploy %s: version %u failed (full log: %s/install.log)", dp->v.name,
			    dp->v.version, dp->v.vdir);
	return err.code == -ECANCELED ? 128 + SIGINT : SR_EXIT_FAILURE;
fail_early:
	sr_sink_log(&dp->sink, SR_LOG_ERROR, "deploy: %s", err.msg);
	if (meta)
		json_decref(meta);
	return SR_EXIT_FAILURE;
}

int sr_verb_deploy(const struct sr_verb_args *a)
{
	struct sr_config c;
	struct sr_error err = {0};
	enum sr_action action = SR_ACTION_RUN;
	struct deploy dp = {.c = &c, .cancel = -1};
	sigset_t saved;
	int status;

	sr_config_init(&c);
	sr_sink_stderr(&dp.sink, SR_LOG_WARNING);
	sr_options_words_last(a->argc, a->argv); /* `deploy ./agent -q` */
	if (sr_options_parse_verb(a->argc, a->argv, SR_OPTIONS_DEPLOY, &c, &action, &err) < 0) {
		sr_cli_verb_error(&dp.sink, "deploy", err.msg);
		sr_config_free(&c);
		return SR_EXIT_FAILURE;
	}
	if (action == SR_ACTION_HELP || action == SR_ACTION_VERSION) {
		usage(stdout);
		sr_config_free(&c);
		return sr_cli_stdout_status("--help");
	}
	if (action == SR_ACTION_PRINT_CONFIG) {
		status = sr_cli_print_config(&c);
		sr_config_free(&c);
		return status;
	}
	c.log_level = sr_options_log_level((int)c.log_level - SR_LOG_WARNING + a->verbosity);
	dp.sink.level = c.log_level;
	dp.agent = c.argv[0];
	dp.prog.level = c.log_level;
	dp.prog.tty = isatty(STDERR_FILENO);
	dp.prog.start_ns = sr_monotonic_ns();
	dp.prog.name = "?";
	dp.cancel = cancel_fd(&saved);
	/* The install steps' stdio and the copy-out's pipe are passed to PID 1. */
	sr_proc_raise_fd_limit();
	status = deploy(&dp);
	sr_install_plan_free(&dp.plan);
	sr_deploy_new_free(&dp.v);
	sr_closep(&dp.cancel);
	sigprocmask(SIG_SETMASK, &saved, NULL);
	sr_config_free(&c);
	return status;
}
