/* SPDX-License-Identifier: MIT */
/*
 * A deployment's install plan (install.h): the steps its files call for
 * (a lock file's `npm ci`, a package.json's `npm install`, a
 * requirements.txt's pip, or the user's own command), and what the
 * installed tree holds (its packages, its bytes). Pure reading of the
 * agent's files, through a directory fd, never following a link;
 * install.c runs the steps.
 */
#include "install.h"
#include "json.h"
#include "util.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>

#define PACKAGE_JSON_MAX (4 * 1024 * 1024)
/*
 * The nodes (values and keys) a JSON text of the agent's or of its install
 * may hold for the host to parse it: jansson builds the whole tree, at up
 * to some 250 bytes a node however short its text ("{}," is 3 bytes and an
 * object), so 64 MiB of it cost the deploying process 5 GiB. A real lock
 * file has some 20 a package: this is 20,000 packages, and at most ~60 MiB
 * of tree.
 */
#define JSON_NODES_MAX 500000

static int add_step(struct sr_install_plan *p, const char *what, const char *const *argv)
{
	struct sr_install_step *steps = reallocarray(p->steps, p->n + 1, sizeof(*steps));
	struct sr_install_step s = {0};
	size_t n = 0;

	if (!steps)
		return -ENOMEM;
	p->steps = steps;
	while (argv[n])
		n++;
	s.what = strdup(what);
	s.argv = calloc(n + 1, sizeof(*s.argv));
	for (size_t i = 0; s.argv && i < n; i++)
		if (!(s.argv[i] = strdup(argv[i])))
			n = 0;
	if (!s.what || !s.argv || (n == 0 && argv[0])) {
		for (size_t i = 0; s.argv && s.argv[i]; i++)
			free(s.argv[i]);
		free(s.argv);
		free(s.what);
		return -ENOMEM;
	}
	p->steps[p->n++] = s;
	return 0;
}

void sr_install_plan_free(struct sr_install_plan *p)
{
	for (size_t i = 0; i < p->n; i++) {
		for (char **a = p->steps[i].argv; a && *a; a++)
			free(*a);
		free(p->steps[i].argv);
		free(p->steps[i].what);
	}
	free(p->steps);
	*p = (struct sr_install_plan){0};
}

static bool has_file(int dirfd, const char *name)
{
	struct stat st;

	return fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(st.st_mode);
}

/* A small regular file of dirfd, whole (malloc'd); NULL when absent or too large. */
static char *read_small(int dirfd, const char *name, size_t max, size_t *ret_len)
{
	_cleanup_close_ int fd =
	    openat(dirfd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
	struct stat st;
	char *buf;
	size_t len = 0;
	ssize_t n = 0;

	if (fd < 0 || fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_size > (off_t)max)
		return NULL;
	buf = malloc((size_t)st.st_size + 1);
	if (!buf)
		return NULL;
	while (len < (size_t)st.st_size &&
	       (n = SR_RETRY(read(fd, buf + len, (size_t)st.st_size - len))) > 0)
		len += (size_t)n;
	buf[len] = '\0';
	*ret_len = len;
	return buf;
}

/* The nodes of a JSON text, at most: its openings and separators outside strings. */
static size_t json_nodes(const char *s, size_t len)
{
	size_t n = 1;
	bool str = false;

	for (size_t i = 0; i < len; i++) {
		if (str && s[i] == '\\')
			i++;
		else if (s[i] == '"')
			str = !str;
		else if (!str)
			n += s[i] == '{' || s[i] == '[' || s[i] == ',' || s[i] == ':';
	}
	return n;
}

bool sr_install_package_has_deps(const char *json, size_t len)
{
	static const char *const kinds[] = {"dependencies", "devDependencies",
					    "optionalDependencies"};
	json_t *j = NULL;
	bool any = false;

	if (json_nodes(json, len) > JSON_NODES_MAX || sr_json_parse(json, len, 0, 512, &j) < 0)
		return false;
	for (size_t i = 0; json_is_object(j) && i < SR_ARRAY_SIZE(kinds); i++) {
		json_t *d = json_object_get(j, kinds[i]);

		any |= json_is_object(d) && json_object_size(d) > 0;
	}
	json_decref(j);
	return any;
}

int sr_install_plan(int dirfd, const char *custom, struct sr_install_plan *ret,
		    struct sr_error *err)
{
	static const char *const npm_ci[] = {"npm", "ci", NULL};
	static const char *const npm_install[] = {"npm", "install", NULL};
	static const char *const pip[] = {
	    "python3",		"-m", "pip", "install", "--target", SR_INSTALL_PYTHON_DIR, "-r",
	    "requirements.txt", NULL};
	struct sr_install_plan p = {0};
	int r = 0;

	if (custom && *custom) {
		const char *const sh[] = {"/bin/sh", "-c", custom, NULL};

		r = add_step(&p, custom, sh);
	} else {
		_cleanup_free_ char *pkg = NULL;
		size_t len = 0;

		if (has_file(dirfd, "package.json")) {
			pkg = read_small(dirfd, "package.json", PACKAGE_JSON_MAX, &len);
			if (has_file(dirfd, "package-lock.json") ||
			    has_file(dirfd, "npm-shrinkwrap.json"))
				r = add_step(&p, "npm ci", npm_ci);
			else if (pkg && sr_install_package_has_deps(pkg, len))
				r = add_step(&p, "npm install", npm_install);
		}
		if (r == 0 && has_file(dirfd, "requirements.txt")) {
			r = add_step(&p, "pip install -r requirements.txt", pip);
			p.python = r == 0;
		}
	}
	if (r < 0) {
		sr_install_plan_free(&p);
		return sr_error_errno(err, r, "install plan");
	}
	*ret = p;
	return 0;
}

int sr_install_count_npm(const char *json, size_t len)
{
	json_t *j = NULL, *pkgs;
	const char *key;
	json_t *v;
	int n = 0;

	if (json_nodes(json, len) > JSON_NODES_MAX || sr_json_parse(json, len, 0, 64, &j) < 0)
		return -1;
	pkgs = json_object_get(j, "packages");
	if (!json_is_object(pkgs)) {
		json_decref(j);
		return -1;
	}
	/* "" is the project itself; links (workspaces) are not installed packages. */
	json_object_foreach (pkgs, key, v) {
		if (*key && !json_is_true(json_object_get(v, "link")))
			n++;
	}
	json_decref(j);
	return n;
}

int sr_install_count_packages(int dirfd)
{
	_cleanup_close_ int py = -1;
	_cleanup_free_ char *lock = NULL;
	size_t len = 0;
	int n = 0, npm;
	DIR *d;
	struct dirent *de;

	lock = read_small(dirfd, "node_modules/.package-lock.json", 64 * 1024 * 1024, &len);
	npm = lock ? sr_install_count_npm(lock, len) : -1;
	if (npm > 0)
		n += npm;
	py = openat(dirfd, SR_INSTALL_PYTHON_DIR, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	d = py >= 0 ? fdopendir(py) : NULL;
	if (d) {
		py = -1;
		while ((de = readdir(d))) {
			size_t l = strlen(de->d_name);

			n += l > 10 && strcmp(de->d_name + l - 10, ".dist-info") == 0;
		}
		closedir(d);
	}
	return n;
}

int64_t sr_install_tree_size(int dir)
{
	int fd = fcntl(dir, F_DUPFD_CLOEXEC, 3);
	DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
	struct dirent *de;
	int64_t total = 0;

	if (!d) {
		if (fd >= 0)
			close(fd);
		return 0;
	}
	rewinddir(d);
	while ((de = readdir(d))) {
		struct stat st;

		if (sr_streq(de->d_name, ".") || sr_streq(de->d_name, "..") ||
		    fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0)
			continue;
		if (S_ISDIR(st.st_mode)) {
			_cleanup_close_ int sub = openat(
			    dirfd(d), de->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);

			if (sub >= 0)
				total += sr_install_tree_size(sub);
		} else {
			total += st.st_size;
		}
	}
	closedir(d);
	return total;
}
