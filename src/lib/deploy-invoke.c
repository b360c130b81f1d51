/* SPDX-License-Identifier: MIT */
/*
 * An invocation's hold on a deployment's current version (deploy.h,
 * sr_deploy_open): the version's lock held shared for the invocation's
 * life, and the config it starts from (its config.ini, its app/, the
 * deployment's secrets).
 */
#include "deploy-internal.h"
#include "profile.h"
#include "secrets.h"
#include "util.h"

#include <sys/file.h>
#include <sys/stat.h>

struct sr_deployment {
	char *name;
	unsigned version;
	char *profile;
	char *app;
	char *argv[2];
	int lock; /* versions/N/lock, shared */
};

/* The held deployment's current version, opened and held (shared) for an invocation. */
static int open_current(const char *name, const struct deploy_held *h, struct sr_deployment **ret,
			struct sr_error *err)
{
	_cleanup_close_ int vdirfd = -1;
	struct sr_deployment *d;
	char vname[32], *real;
	struct stat st;
	unsigned current = deploy_read_current(h->dirfd);
	int r;

	if (!current)
		return sr_error_msg(err, -ENOENT,
				    "deployment '%s' has no version ready (sandbox-run deploy "
				    "--name %s AGENT)",
				    name, name);
	snprintf(vname, sizeof(vname), "versions/%u", current);
	vdirfd = openat(h->dirfd, vname, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (vdirfd < 0 || fstatat(vdirfd, "app", &st, AT_SYMLINK_NOFOLLOW) < 0 ||
	    !S_ISDIR(st.st_mode))
		return sr_error_errno(err, sr_negerrno(), "deployment '%s': version %u", name,
				      current);
	d = calloc(1, sizeof(*d));
	if (!d)
		return sr_error_errno(err, -ENOMEM, "deployment");
	d->version = current;
	d->lock = deploy_take_lock(vdirfd, "lock", LOCK_SH);
	d->name = strdup(name);
	if (d->lock < 0 || !d->name ||
	    asprintf(&d->profile, "%s/versions/%u/config.ini", h->dir, current) < 0 ||
	    asprintf(&d->app, "%s/versions/%u/app", h->dir, current) < 0) {
		r = d->lock < 0 ? d->lock : -ENOMEM;
		sr_deployment_close(d);
		return sr_error_errno(err, r, "deployment '%s': version %u", name, current);
	}
	/*
	 * Run as an agent is, resolved with no link but root's (hostpath.h):
	 * the data directory is the caller's own, a link of theirs on its way
	 * theirs to follow.
	 */
	real = realpath(d->app, NULL);
	if (!real) {
		r = sr_negerrno();
		sr_deployment_close(d);
		return sr_error_errno(err, r, "deployment '%s': version %u", name, current);
	}
	free(d->app);
	d->app = real;
	d->argv[0] = d->app;
	*ret = d;
	return 0;
}

int sr_deploy_open(const char *name, struct sr_deployment **ret, struct sr_error *err)
{
	struct deploy_held h;
	/* Shared: the current version cannot change, nor be pruned, until ours is locked too. */
	int r = deploy_hold(name, false, LOCK_SH, NULL, &h, err);

	if (r < 0)
		return r;
	r = open_current(name, &h, ret, err);
	deploy_release(&h);
	return r;
}

const char *sr_deployment_name(const struct sr_deployment *d)
{
	return d->name;
}

unsigned sr_deployment_version(const struct sr_deployment *d)
{
	return d->version;
}

const char *sr_deployment_profile(const struct sr_deployment *d)
{
	return d->profile;
}

const char *sr_deployment_app(const struct sr_deployment *d)
{
	return d->app;
}

int sr_deploy_apply(const struct sr_deployment *d, struct sr_config *c, struct sr_error *err)
{
	int r;

	free(c->deployment);
	if (!(c->deployment = strdup(d->name)))
		return sr_error_errno(err, -ENOMEM, "deployment '%s'", d->name);
	c->deployment_version = d->version;
	c->argv = (char **)d->argv;
	c->argc = 1;
	c->command_mode = false;
	r = sr_secret_load(d->name, &c->secrets, err);
	return r < 0 ? sr_error_prefix(err, "deployment '%s'", d->name) : 0;
}

int sr_deploy_config(const struct sr_deployment *d, struct sr_config *c, struct sr_error *err)
{
	int r = sr_profile_load(c, d->profile, err);

	if (r < 0 || (r = sr_deploy_apply(d, c, err)) < 0)
		return r;
	return sr_config_validate(c, err);
}

void sr_deployment_close(struct sr_deployment *d)
{
	if (!d)
		return;
	sr_closep(&d->lock);
	free(d->name);
	free(d->profile);
	free(d->app);
	free(d);
}
