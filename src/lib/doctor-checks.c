/* SPDX-License-Identifier: MIT */
/*
 * doctor's checks, computed from the host's facts alone (doctor.h): pure,
 * so that a unit test can show them any host. Each says what it found
 * and, unless all is well, the one thing to do about it.
 */
#include "doctor.h"
#include "fault.h"
#include "util.h"

#define FOUND(c, ...) snprintf((c)->found, sizeof((c)->found), __VA_ARGS__)
#define FIX(c, ...)   snprintf((c)->fix, sizeof((c)->fix), __VA_ARGS__)
/* Where a sysctl set by a fix is kept across reboots. */
#define SYSCTL_CONF "/etc/sysctl.d/60-sandbox-run.conf"

static void check_kernel(const struct sr_host_facts *f, struct sr_check *c)
{
	bool old = f->kernel_major < 5 || (f->kernel_major == 5 && f->kernel_minor < 12);

	c->name = "kernel";
	if (old || !f->has_mount_setattr) {
		c->verdict = SR_VERDICT_FAILS;
		FOUND(c,
		      "Linux %s has no mount_setattr (5.12), which sandbox-run needs for its "
		      "read-only mounts and idmapped workspaces",
		      f->release);
		FIX(c, "boot a kernel >= 5.12 (Debian 12's 6.1, Ubuntu 22.04's 5.15 and later "
		       "all have it)");
	} else if (!f->has_clone3) {
		c->verdict = SR_VERDICT_DEGRADED;
		FOUND(c,
		      "Linux %s, but clone3 is refused (ENOSYS: a seccomp filter, as old "
		      "container runtimes have): a sandbox is moved into its cgroup just after "
		      "birth instead of born in it",
		      f->release);
		FIX(c, "allow clone3 in the seccomp profile of whatever starts sandbox-run "
		       "(Docker >= 20.10 and podman allow it)");
	} else {
		FOUND(c, "Linux %s: mount_setattr, idmapped mounts, clone3 into a cgroup%s",
		      f->release, f->kernel_major < 6 ? " (6.x recommended)" : "");
	}
}

static void check_userns(const struct sr_host_facts *f, struct sr_check *c)
{
	c->name = "user_namespaces";
	if (f->max_userns == 0) {
		c->verdict = SR_VERDICT_FAILS;
		FOUND(c, "user.max_user_namespaces is 0: no user namespace can be created");
		FIX(c, "sudo sysctl -w user.max_user_namespaces=15000, and the line "
		       "user.max_user_namespaces=15000 in " SYSCTL_CONF " to keep it");
	} else if (f->userns_clone == 0 && !f->root) {
		c->verdict = SR_VERDICT_FAILS;
		FOUND(c, "kernel.unprivileged_userns_clone is 0: only root may create user "
			 "namespaces");
		FIX(c, "sudo sysctl -w kernel.unprivileged_userns_clone=1, and the line "
		       "kernel.unprivileged_userns_clone=1 in " SYSCTL_CONF " to keep it");
	} else if (f->max_userns == SR_SYSCTL_ABSENT) {
		FOUND(c, "enabled (no user.max_user_namespaces to read)");
	} else {
		FOUND(c, "enabled: user.max_user_namespaces=%ld%s", f->max_userns,
		      f->userns_clone == 0 ? " (kernel.unprivileged_userns_clone=0 restricts "
					     "users other than root)"
					   : "");
	}
}

/* Confined by a profile (which, being loaded for us, allows user namespaces). */
static bool apparmor_confined(const char *label)
{
	return *label && strcmp(label, "unconfined") != 0;
}

static void check_apparmor(const struct sr_host_facts *f, struct sr_check *c)
{
	c->name = "apparmor";
	if (f->apparmor_restrict == SR_SYSCTL_ABSENT) {
		FOUND(c, "no AppArmor restriction of user namespaces on this kernel");
	} else if (f->apparmor_restrict == 0) {
		FOUND(c, "kernel.apparmor_restrict_unprivileged_userns is 0");
	} else if (f->root) {
		FOUND(c, "kernel.apparmor_restrict_unprivileged_userns is 1; it does not "
			 "restrict root");
	} else if (apparmor_confined(f->apparmor_label)) {
		FOUND(c,
		      "kernel.apparmor_restrict_unprivileged_userns is 1; sandbox-run runs "
		      "under the AppArmor profile '%s'",
		      f->apparmor_label);
	} else {
		c->verdict = SR_VERDICT_FAILS;
		FOUND(c, "kernel.apparmor_restrict_unprivileged_userns is 1 (Ubuntu 23.10+) and "
			 "sandbox-run runs unconfined: its user namespaces get no capabilities");
		if (f->apparmor_profile)
			FIX(c,
			    "load the profile shipped with sandbox-run, which allows user "
			    "namespaces to " SR_BINDIR "/sandbox-run only: sudo apparmor_parser -r "
			    "%s%s%s%s",
			    SR_APPARMOR_PROFILE,
			    *f->exe && strcmp(f->exe, SR_BINDIR "/sandbox-run") != 0
				? " (it does not cover this binary, "
				: "",
			    *f->exe && strcmp(f->exe, SR_BINDIR "/sandbox-run") != 0 ? f->exe : "",
			    *f->exe && strcmp(f->exe, SR_BINDIR "/sandbox-run") != 0 ? ")" : "");
		else
			FIX(c,
			    "install and load the profile shipped with sandbox-run (make install "
			    "or the package installs it; it allows user namespaces to " SR_BINDIR
			    "/sandbox-run only): sudo install -m 0644 apparmor/sandbox-run %s && "
			    "sudo apparmor_parser -r %s",
			    SR_APPARMOR_PROFILE, SR_APPARMOR_PROFILE);
	}
}

static void check_overlay(const struct sr_host_facts *f, struct sr_check *c)
{
	c->name = "overlayfs";
	if (f->overlay == 1 || (f->trial.tried && f->trial.ok)) {
		FOUND(c, "overlayfs: the workspace's writable layer");
	} else if (f->overlay == 2) {
		FOUND(c, "overlayfs, a module loaded on first use");
	} else {
		c->verdict = SR_VERDICT_FAILS;
		FOUND(c, "no overlayfs in this kernel: the workspace is an overlay");
		FIX(c, "sudo modprobe overlay (a kernel built without CONFIG_OVERLAY_FS cannot "
		       "run sandboxes)");
	}
}

/* done: the checks before this one; a failure of theirs explains a failed trial. */
static void check_container(const struct sr_host_facts *f, const struct sr_check *done, size_t n,
			    struct sr_check *c)
{
	c->name = "container";
	if (!*f->container) {
		FOUND(c, "not in a container");
		return;
	}
	if (!f->trial.tried || f->trial.ok || sr_doctor_verdict(done, n) == SR_VERDICT_FAILS) {
		FOUND(c, "in a container (%s, seen by %s)%s", f->container, f->container_sign,
		      f->trial.ok ? "; sandboxes run inside it" : "");
		return;
	}
	c->verdict = SR_VERDICT_FAILS;
	FOUND(c,
	      "in a container (%s, seen by %s), whose defaults forbid what a sandbox needs: "
	      "user namespaces, mounting a fresh /proc",
	      f->container, f->container_sign);
	if (strcmp(f->container, "docker") == 0)
		FIX(c, "start the container with --security-opt seccomp=unconfined "
		       "--security-opt apparmor=unconfined --security-opt systempaths=unconfined, "
		       "or run sandbox-run on the host");
	else if (strcmp(f->container, "podman") == 0)
		FIX(c, "start the container with --security-opt seccomp=unconfined "
		       "--security-opt unmask=ALL, or run sandbox-run on the host");
	else
		FIX(c, "allow the container user namespaces and an unmasked /proc (Kubernetes: "
		       "hostUsers: false with securityContext.procMount: Unmasked and an "
		       "Unconfined seccomp profile), or run sandbox-run on the host");
}

static const char *const limit_names[] = {"memory", "cpus", "pids"};

static void check_cgroup(const struct sr_host_facts *f, struct sr_check *c)
{
	const char *weak[3];
	char list[64];
	size_t n = 0;

	c->name = "cgroup";
	for (size_t i = 0; i < 3; i++)
		if (f->cgroup_enforced[i] != SR_ENFORCE_CGROUP2 &&
		    f->cgroup_enforced[i] != SR_ENFORCE_CGROUP1)
			weak[n++] = limit_names[i];
	if (n == 0) {
		FOUND(c, "%s holds the memory, cpus and pids limits (cgroup %s)",
		      f->cgroup_strategy,
		      f->cgroup_layout == 2   ? "v2"
		      : f->cgroup_layout == 1 ? "hybrid"
					      : "v1");
		return;
	}
	snprintf(list, sizeof(list), "%s%s%s%s%s", weak[0],
		 n == 3	  ? ", "
		 : n == 2 ? " and "
			  : "",
		 n > 1 ? weak[1] : "", n == 3 ? " and " : "", n == 3 ? weak[2] : "");
	c->verdict = SR_VERDICT_DEGRADED;
	FOUND(c, "%s limit%s only per process (rlimit) or not at all (strategy %s%s%s)", list,
	      n > 1 ? "s" : "", f->cgroup_strategy, *f->cgroup_reason ? ": " : "",
	      f->cgroup_reason);
	if (f->cgroup_layout == -1)
		FIX(c, "mount cgroup v2: sudo mount -t cgroup2 none /sys/fs/cgroup");
	else if (f->cgroup_layout < 2 && !f->root)
		FIX(c, "cgroup v1 is root's alone: boot with systemd.unified_cgroup_hierarchy=1 on "
		       "the kernel command line (a user then gets a delegated cgroup v2), or run "
		       "as root");
	else if (f->cgroup_layout < 2)
		FIX(c, "mount the cgroup v1 memory, cpu and pids controllers, or boot with "
		       "systemd.unified_cgroup_hierarchy=1 on the kernel command line");
	else if (*f->container)
		FIX(c, "give the container a cgroup of its own to delegate: docker run "
		       "--cgroupns=private (podman does by default)");
	else if (!f->root && !f->user_manager)
		FIX(c, "start your systemd user manager, which delegates a cgroup to you: sudo "
		       "loginctl enable-linger $USER (or log in through a PAM session)");
	else if (!f->root)
		FIX(c, "run it in a delegated scope: systemd-run --user --scope -p Delegate=yes "
		       "sandbox-run ...");
	else
		FIX(c, "enable the controllers below the root cgroup: echo '+memory +cpu +pids' | "
		       "sudo tee /sys/fs/cgroup/cgroup.subtree_control");
}

static void check_subuid(const struct sr_host_facts *f, struct sr_check *c)
{
	c->name = "subuid";
	if (!f->root) {
		FOUND(c, "not needed: your sandboxes run as your own uid");
	} else if (f->subuid) {
		FOUND(c, "root's sandboxes run as the first id of root's /etc/subuid range");
	} else {
		c->verdict = SR_VERDICT_DEGRADED;
		FOUND(c, "root has no range in /etc/subuid and /etc/subgid: root's sandboxes run "
			 "as uid 65534 (nobody), which other programs share");
		FIX(c, "sudo usermod --add-subuids 100000-165535 --add-subgids 100000-165535 root");
	}
}

static void check_helpers(const struct sr_host_facts *f, struct sr_check *c)
{
	c->name = "network_helper";
	if (!*f->slirp4netns && !*f->pasta) {
		c->verdict = SR_VERDICT_DEGRADED;
		FOUND(c, "neither slirp4netns nor pasta is installed: --net egress (the default "
			 "profile's) cannot run, --net none can");
		FIX(c, "sudo apt-get install slirp4netns (or passt, for pasta)");
		return;
	}
	FOUND(c, "slirp4netns: %s; pasta: %s", *f->slirp4netns ? f->slirp4netns : "not installed",
	      *f->pasta ? f->pasta : "not installed");
}

static void check_tun(const struct sr_host_facts *f, struct sr_check *c)
{
	c->name = "tun";
	if (f->tun == 1) {
		FOUND(c, "/dev/net/tun is usable");
	} else if (f->tun == 0) {
		c->verdict = SR_VERDICT_DEGRADED;
		FOUND(c, "no /dev/net/tun: the egress helpers need it");
		FIX(c, "sudo modprobe tun (in a container: docker run --device /dev/net/tun)");
	} else {
		c->verdict = SR_VERDICT_DEGRADED;
		FOUND(c, "/dev/net/tun cannot be opened by you: the egress helpers open it as "
			 "the caller");
		FIX(c, "sudo chmod 0666 /dev/net/tun (Debian's default mode; making an interface "
		       "still needs CAP_NET_ADMIN in a namespace)");
	}
}

static void check_nftables(const struct sr_host_facts *f, struct sr_check *c)
{
	c->name = "nf_tables";
	if (f->egress.tried && f->egress.ok && f->egress.net == SR_ENFORCE_NFTABLES) {
		FOUND(c, "nf_tables holds the egress policy (the egress trial used it)");
	} else if (f->egress.tried && f->egress.ok) {
		c->verdict = SR_VERDICT_DEGRADED;
		FOUND(c, "the egress trial ran without an nftables policy");
		FIX(c, "sudo modprobe nf_tables");
	} else if (f->nf_tables) {
		FOUND(c, "nf_tables is %s (not tried)",
		      f->nf_tables == 1 ? "built in or loaded" : "a module, loaded on demand");
	} else {
		c->verdict = SR_VERDICT_DEGRADED;
		FOUND(c, "nf_tables not seen (not loaded, built in or a module file) and not "
			 "tried: --net egress needs it for its policy");
		FIX(c, "sudo modprobe nf_tables");
	}
}

static void check_libraries(const struct sr_host_facts *f, struct sr_check *c)
{
	c->name = "libraries";
	if (!*f->libarchive_error && !*f->libnftables_error) {
		FOUND(c, "libarchive and libnftables load");
		return;
	}
	c->verdict = SR_VERDICT_DEGRADED;
	FOUND(c, "%s%s%s%s%s", f->libarchive_error,
	      *f->libarchive_error ? " (archive agents cannot run)" : "",
	      *f->libarchive_error && *f->libnftables_error ? "; " : "", f->libnftables_error,
	      *f->libnftables_error ? " (--net egress cannot run)" : "");
	FIX(c, "sudo apt-get install%s%s", *f->libarchive_error ? " libarchive13" : "",
	    *f->libnftables_error ? " libnftables1" : "");
}

static void check_trial(const struct sr_host_facts *f, const struct sr_check *done, size_t n,
			struct sr_check *c)
{
	bool explained = sr_doctor_verdict(done, n) == SR_VERDICT_FAILS;

	c->name = "sandbox";
	if (f->trial.tried && f->trial.ok) {
		FOUND(c, "a sandbox ran `true` (--net none)");
		return;
	}
	c->verdict = SR_VERDICT_FAILS;
	FOUND(c, "a sandbox could not run `true` (--net none): %.600s",
	      f->trial.tried ? f->trial.error : "not tried");
	if (explained)
		FIX(c, "the failing checks above say what to change");
	else
		FIX(c, "sandbox-run -vv --net none -- true shows each step; please report what it "
		       "prints");
}

static void check_egress(const struct sr_host_facts *f, struct sr_check *c)
{
	c->name = "sandbox_egress";
	if (f->egress.tried && f->egress.ok) {
		FOUND(c, "a sandbox ran `true` with --net egress");
		return;
	}
	c->verdict = SR_VERDICT_DEGRADED;
	if (!f->egress.tried && !f->trial.ok) {
		FOUND(c, "not tried: no sandbox runs here yet");
		FIX(c, "see the sandbox check above");
	} else if (!f->egress.tried) {
		FOUND(c, "not tried: it needs a network helper, /dev/net/tun and libnftables");
		FIX(c, "see the network_helper, tun and libraries checks above");
	} else {
		FOUND(c, "a sandbox could not run `true` with --net egress: %.600s",
		      f->egress.error);
		FIX(c, "sandbox-run -vv -- true shows each step; --net none works meanwhile");
	}
}

size_t sr_doctor_evaluate(const struct sr_host_facts *f, struct sr_check out[SR_DOCTOR_CHECKS])
{
	size_t n = 0;

	for (size_t i = 0; i < SR_DOCTOR_CHECKS; i++)
		out[i] = (struct sr_check){.verdict = SR_VERDICT_OK};
	check_kernel(f, &out[n++]);
	check_userns(f, &out[n++]);
	check_apparmor(f, &out[n++]);
	check_overlay(f, &out[n++]);
	check_container(f, out, n, &out[n]);
	n++;
	check_cgroup(f, &out[n++]);
	check_subuid(f, &out[n++]);
	check_helpers(f, &out[n++]);
	check_tun(f, &out[n++]);
	check_nftables(f, &out[n++]);
	check_libraries(f, &out[n++]);
	check_trial(f, out, n, &out[n]);
	n++;
	check_egress(f, &out[n++]);
	return n;
}

enum sr_verdict sr_doctor_verdict(const struct sr_check *checks, size_t n)
{
	enum sr_verdict worst = SR_VERDICT_OK;

	for (size_t i = 0; i < n; i++)
		if (checks[i].verdict > worst)
			worst = checks[i].verdict;
	return worst;
}

int sr_doctor_exit_status(enum sr_verdict v)
{
	return v == SR_VERDICT_OK ? 0 : v == SR_VERDICT_DEGRADED ? 1 : 2;
}

const char *sr_verdict_to_string(enum sr_verdict v)
{
	static const char *const names[] = {"ok", "degraded", "fails"};

	return v < _SR_VERDICT_MAX ? names[v] : "fails";
}

void sr_check_line(const struct sr_check *c, char *buf, size_t len)
{
	if (*c->fix)
		snprintf(buf, len, "%s; fix: %s", c->found, c->fix);
	else
		snprintf(buf, len, "%s", c->found);
}

void sr_doctor_explain(struct sr_error *err)
{
	struct sr_host_facts f = {0};
	struct sr_check c[2] = {{0}, {0}};
	char line[2 * SR_DOCTOR_TEXT_MAX];

	if (err->code != -EPERM && err->code != -EACCES && err->code != -ENOSPC &&
	    err->code != -EUSERS)
		return;
	sr_doctor_read_userns(sr_fault_proc_sys(), &f);
	check_userns(&f, &c[0]);
	check_apparmor(&f, &c[1]);
	for (size_t i = 0; i < SR_ARRAY_SIZE(c); i++) {
		size_t used = strlen(err->msg);

		if (c[i].verdict == SR_VERDICT_OK)
			continue;
		sr_check_line(&c[i], line, sizeof(line));
		snprintf(err->msg + used, sizeof(err->msg) - used, "; %s", line);
		return;
	}
}
