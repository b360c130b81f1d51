/* SPDX-License-Identifier: MIT */
/*
 * A deploy's new version (deploy.h): the name checked, the version
 * numbered and its source recorded under the deployment's lock, after
 * every other deploy of the name has ended; then published (made
 * current, the name checked again) or failed.
 */
#include "deploy-internal.h"
#include "install.h"
#include "secrets.h"
#include "util.h"

#include <sys/file.h>
#include <sys/stat.h>

static int taken(const char *name, const char *from, const char *source, struct sr_error *err)
{
	return sr_error_msg(err, -EEXIST,
			    "deployment '%s' is deployed from %s, not from %s, which names itself "
			    "'%s': --name %s replaces it, --name OTHER deploys it apart",
			    name, from, source, name, name);
}

/*
 * A name the agent chose (sr_deploy_begin_opts) may make a version of the
 * deployment, checked under its lock: versions v[] (self, the version
 * being published, left out: 0 at begin) and the current one. At begin
 * (ret_secrets given) with no version from any source, no secrets may
 * wait for the name; their hold is handed out, to be kept until the
 * version says where it comes from.
 */
static int check_claim(const char *name, const char *source, const struct deploy_version *v,
		       size_t n, unsigned current, unsigned self, int *ret_secrets,
		       struct sr_error *err)
{
	const char *newest = NULL, *cur = NULL;
	_cleanup_close_ int hold = -1;
	struct sr_strv keys = {0};
	size_t waiting;
	int r;

	if (!source)
		source = "an unknown source";
	for (size_t i = 0; i < n; i++) {
		const char *from = json_string_value(json_object_get(v[i].meta, "source"));

		if (!from || v[i].s.version == self)
			continue;
		newest = from;
		if (v[i].s.version == current)
			cur = from;
	}
	if (cur && !sr_streq(cur, source))
		return taken(name, cur, source, err);
	if (newest && !sr_streq(newest, source))
		return taken(name, newest, source, err);
	if (newest || !ret_secrets)
		return 0;
	r = sr_secret_hold(&hold, err);
	if (r < 0 || (r = sr_secret_list(name, &keys, err)) < 0)
		return r;
	waiting = keys.n;
	sr_strv_free(&keys);
	if (waiting)
		return sr_error_msg(
		    err, -EEXIST,
		    "secrets are set for '%s', which is not deployed yet, and %s "
		    "names itself '%s': --name %s deploys it with them, --name OTHER "
		    "apart",
		    name, source, name, name);
	*ret_secrets = steal_fd(&hold);
	return 0;
}

/* Writes text as (dirfd, name), whole or not at all. */
static int write_at(int dirfd, const char *name, const char *text, struct sr_error *err)
{
	char tmp[96];
	_cleanup_close_ int fd = -1;
	int r;

	snprintf(tmp, sizeof(tmp), ".%s.new", name);
	(void)unlinkat(dirfd, tmp, 0);
	fd = openat(dirfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0)
		return sr_error_errno(err, sr_negerrno(), "write %s", name);
	r = sr_write_all(fd, text, strlen(text));
	if (r == 0 && fsync(fd) < 0)
		r = sr_negerrno();
	if (r == 0 && renameat(dirfd, tmp, dirfd, name) < 0)
		r = sr_negerrno();
	if (r < 0) {
		(void)unlinkat(dirfd, tmp, 0);
		return sr_error_errno(err, r, "write %s", name);
	}
	return 0;
}

static int write_meta(struct sr_deploy_new *v, json_t *meta, const char *status,
		      struct sr_error *err)
{
	_cleanup_free_ char *text = NULL;
	json_t *m = json_deep_copy(meta);
	int r;

	if (!m || json_object_set_new(m, "status", json_string(status)) < 0 ||
	    json_object_set_new(m, "name", sr_json_string(v->name)) < 0 ||
	    json_object_set_new(m, "version", json_integer(v->version)) < 0 ||
	    (v->source && json_object_set_new(m, "source", sr_json_string(v->source)) < 0) ||
	    sr_json_dump_line(m, &text) < 0) {
		if (m)
			json_decref(m);
		return sr_error_errno(err, -ENOMEM, "meta.json");
	}
	json_decref(m);
	r = write_at(v->vdirfd, "meta.json", text, err);
	return r < 0 ? sr_error_prefix(err, "deployment '%s' version %u", v->name, v->version) : 0;
}

/* versions/N made, the first free N above every version's, and its lock taken. */
static int new_version(struct sr_deploy_new *v, int versionsfd, unsigned next, struct sr_error *err)
{
	for (;; next++) {
		char vname[16];

		snprintf(vname, sizeof(vname), "%u", next);
		if (mkdirat(versionsfd, vname, 0700) == 0)
			break;
		if (errno != EEXIST)
			return sr_error_errno(err, sr_negerrno(), "deployment '%s': version %u",
					      v->name, next);
	}
	v->version = next;
	if (asprintf(&v->vdir, "%s/versions/%u", v->dir, next) < 0) {
		v->vdir = NULL;
		return sr_error_errno(err, -ENOMEM, "deployment");
	}
	v->vdirfd = open(v->vdir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	v->lock = v->vdirfd >= 0 ? deploy_take_lock(v->vdirfd, "lock", LOCK_EX) : -1;
	if (v->lock < 0)
		return sr_error_errno(err, v->vdirfd < 0 ? sr_negerrno() : v->lock, "%s", v->vdir);
	return 0;
}

int sr_deploy_begin(const char *name, const struct sr_deploy_begin_opts *o,
		    struct sr_deploy_new *ret, struct sr_error *err)
{
	static const struct sr_deploy_begin_opts none = {.cancel_fd = -1};
	struct sr_deploy_new v = {.dirfd = -1, .vdirfd = -1, .lock = -1, .deploying = -1};
	struct deploy_held h = {.dirfd = -1, .deploying = -1, .lock = -1};
	_cleanup_close_ int versionsfd = -1, secrets = -1;
	struct deploy_version *list = NULL;
	json_t *meta = NULL;
	size_t n = 0;
	int r;

	if (!o)
		o = &none;
	v.name = strdup(name);
	v.source = o->source ? strdup(o->source) : NULL;
	v.name_chosen = o->name_chosen;
	if (!v.name || (o->source && !v.source)) {
		r = sr_error_errno(err, -ENOMEM, "deployment");
		goto fail;
	}
	r = deploy_hold(name, true, LOCK_EX, o, &h, err);
	if (r < 0)
		goto fail;
	versionsfd = deploy_open_versions(&h, err);
	if (versionsfd < 0) {
		r = versionsfd;
		goto fail;
	}
	/* What a killed deploy left: nobody holds its lock. */
	(void)deploy_prune_locked(h.dirfd, versionsfd, 0, true, NULL);
	/* And a package cache it was saving: deploy.lock keeps out every other install of it. */
	deploy_sweep(h.dirfd,
		     (const char *const[]){SR_INSTALL_CACHE_NEW, SR_INSTALL_CACHE_OLD, NULL});
	r = deploy_list_versions(versionsfd, &list, &n);
	if (r < 0) {
		r = sr_error_errno(err, r, "deployment '%s': versions", name);
		goto fail;
	}
	if (o->name_chosen)
		r = check_claim(name, o->source, list, n, deploy_read_current(h.dirfd), 0, &secrets,
				err);
	v.dir = steal_pointer(&h.dir);
	v.dirfd = steal_fd(&h.dirfd);
	v.deploying = steal_fd(&h.deploying);
	if (r == 0)
		r = new_version(&v, versionsfd, n ? list[n - 1].s.version + 1 : 1, err);
	deploy_versions_free(list, n);
	if (r < 0)
		goto fail;
	/* Where it comes from, for the next deploy's check, before the name's lock is let go. */
	meta = o->meta ? json_deep_copy(o->meta) : json_object();
	if (!meta) {
		r = sr_error_errno(err, -ENOMEM, "meta.json");
		goto fail;
	}
	r = write_meta(&v, meta, "installing", err);
	json_decref(meta);
	if (r < 0)
		goto fail;
	deploy_release(&h);
	*ret = v;
	return 0;
fail:
	deploy_release(&h);
	sr_deploy_new_free(&v);
	return r;
}

int sr_deploy_publish(struct sr_deploy_new *v, const struct sr_config *c, json_t *meta,
		      struct sr_error *err)
{
	_cleanup_free_ char *text = NULL;
	_cleanup_close_ int namelock = -1, versionsfd = -1;
	struct deploy_version *list = NULL;
	size_t len = 0, n = 0;
	FILE *f = open_memstream(&text, &len);
	int r;

	if (!f)
		return sr_error_errno(err, -ENOMEM, "config.ini");
	r = sr_config_print(c, f);
	if (fclose(f) != 0 && r == 0)
		r = -ENOMEM;
	if (r < 0)
		return sr_error_errno(err, r, "config.ini");
	/*
	 * Our version's lock is held while we wait for the name's: nobody who
	 * holds that one waits for ours (an invocation waits only for the
	 * current version's, and ours is neither current nor ready).
	 */
	namelock = deploy_take_lock(v->dirfd, "lock", LOCK_EX);
	if (namelock < 0)
		return sr_error_errno(err, namelock, "lock %s", v->dir);
	if (v->name_chosen) {
		versionsfd =
		    openat(v->dirfd, "versions", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (versionsfd < 0 || (r = deploy_list_versions(versionsfd, &list, &n)) < 0)
			return sr_error_errno(err, versionsfd < 0 ? sr_negerrno() : r,
					      "deployment '%s': versions", v->name);
		r = check_claim(v->name, v->source, list, n, deploy_read_current(v->dirfd),
				v->version, NULL, err);
		deploy_versions_free(list, n);
		if (r < 0)
			return r;
	}
	r = write_at(v->vdirfd, "config.ini", text, err);
	if (r < 0 || (r = write_meta(v, meta, "ready", err)) < 0 ||
	    (r = deploy_set_current(v->dirfd, v->version, err)) < 0)
		return r;
	/* Current and ready, so no longer ours alone: released before the name's lock. */
	sr_closep(&v->lock);
	return 0;
}

int sr_deploy_fail(struct sr_deploy_new *v, json_t *meta, struct sr_error *err)
{
	(void)sr_deploy_remove_tree(v->vdirfd, "app");
	(void)sr_deploy_remove_tree(v->vdirfd, "src");
	return write_meta(v, meta, "failed", err);
}

void sr_deploy_new_free(struct sr_deploy_new *v)
{
	sr_closep(&v->lock);
	sr_closep(&v->vdirfd);
	sr_closep(&v->dirfd);
	sr_closep(&v->deploying);
	free(v->name);
	free(v->dir);
	free(v->vdir);
	free(v->source);
	*v = (struct sr_deploy_new){.dirfd = -1, .vdirfd = -1, .lock = -1, .deploying = -1};
}
