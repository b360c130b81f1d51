#!/usr/bin/env bash
# docs/ci.md's recipes, run as written: the GitHub Actions workflow's and
# the GitLab CI job's YAML blocks are taken from the doc itself, and their
# shell steps run in a fresh Debian root (as GitHub's user with sudo, and
# as GitLab's root), with SANDBOX_RUN_GIT pointing at this checkout and
# tests/packaging/ci-project as the project under test. Then: the tests ran
# in a sandbox, their report came out through /artifacts with the run's
# record, and the checkout was not modified.
. "$(dirname "$0")/lib.sh"

DOC="$SR_SRCDIR/docs/ci.md"

# The recipes' shell, one script per CI: the steps in order, each with the
# environment its YAML gives it, `set -e` as both CIs run them.
python3 - "$DOC" "$tmp" <<'PY' >"$tmp/extract.log" 2>&1
import re, shlex, sys, yaml
doc, out = sys.argv[1], sys.argv[2]
blocks = [yaml.safe_load(b) for b in re.findall(r"```yaml\n(.*?)```", open(doc).read(), re.S)]
gh = [b for b in blocks if isinstance(b, dict) and "jobs" in b]
gl = [b for b in blocks if isinstance(b, dict) and "jobs" not in b]
assert len(gh) == 1 and len(gl) == 1, "one GitHub workflow and one GitLab job in docs/ci.md"

# Where sandbox-run comes from: this checkout, not the doc's placeholder.
here = {"SANDBOX_RUN_GIT": "file:///srv/sandbox-run"}

def export(env):
    return "".join("export %s=%s\n" % (k, shlex.quote(str(here.get(k, v))))
                   for k, v in (env or {}).items())

(job,) = gh[0]["jobs"].values()
sh = "set -e\n"
uses = []
for step in job["steps"]:
    if "uses" in step:
        uses.append(step["uses"].split("@")[0])
    if "run" in step:
        sh += "(\n" + export(job.get("env")) + export(step.get("env")) + "set -e\n" + step["run"] + ")\n"
open(out + "/github.sh", "w").write(sh)
open(out + "/github.uses", "w").write("\n".join(uses) + "\n")
open(out + "/github.runs-on", "w").write(job["runs-on"] + "\n")

((name, job),) = [(k, v) for k, v in gl[0].items() if isinstance(v, dict) and "script" in v]
sh = "set -e\n" + export(job.get("variables"))
for line in job.get("before_script", []) + job["script"]:
    sh += line + "\n"
open(out + "/gitlab.sh", "w").write(sh)
open(out + "/gitlab.artifacts", "w").write("\n".join(job["artifacts"]["paths"]) + "\n")
PY
rc=$?
check "docs/ci.md: one GitHub workflow and one GitLab job, valid YAML" test "$rc" = 0
[ "$rc" = 0 ] || { show "$tmp/extract.log"; finish; }
check "the workflow checks out the project, and uploads the artifacts" \
	grep -qxF actions/upload-artifact "$tmp/github.uses"
check "the GitLab job keeps artifacts/" grep -qxF artifacts/ "$tmp/gitlab.artifacts"
check "both install with tools/ci-sandbox install" \
	grep -q 'tools/ci-sandbox" install\|tools/ci-sandbox install' "$tmp/github.sh" "$tmp/gitlab.sh"

fresh_root
rc=$?
check "debootstrap makes a fresh $SUITE root" test "$rc" = 0
[ "$rc" = 0 ] || finish

# What the CI machines bring: git, sudo and a user "runner" with it on
# GitHub's; this checkout, as the repository SANDBOX_RUN_GIT names.
copy_source "$tmp/root/srv/sandbox-run"
in_root env DEBIAN_FRONTEND=noninteractive sh -c '
	apt-get update -qq && apt-get install -y -qq --no-install-recommends git ca-certificates sudo &&
	useradd -m -s /bin/bash runner && echo "runner ALL=(ALL) NOPASSWD:ALL" >/etc/sudoers.d/runner &&
	git config --system --add safe.directory "*" &&
	cd /srv/sandbox-run && git init -q && git add -A &&
	git -c user.name=ci -c user.email=ci@invalid commit -q -m "this checkout"' \
	>"$tmp/prepare.log" 2>&1
rc=$?
check "the runner: git, sudo, a user, this checkout as a repository" test "$rc" = 0
[ "$rc" = 0 ] || { show "$tmp/prepare.log"; finish; }
cp "$tmp/github.sh" "$tmp/gitlab.sh" "$tmp/root/srv/"

# project DIR: a checkout of the project under test (what actions/checkout
# and GitLab's clone make), owned by USER.
project() {
	mkdir -p "$tmp/root$1"
	cp -a "$SR_SRCDIR/tests/packaging/ci-project/." "$tmp/root$1"
	in_root chown -R "$2" "${1%/*}"
	(cd "$tmp/root$1" && find . -type f | sort | xargs sha256sum) >"$tmp/before-${1##*/}"
}

# After a recipe: the report came out, the record says the run exited 0,
# and the checkout is as it was (artifacts/ aside).
outcome() {
	local who=$1 dir=$2
	check "$who: the tests ran in a sandbox (uid 1000 in /workspace on sandbox)" \
		grep -q "^uid 1000 in /workspace on sandbox$" "$tmp/root$dir/artifacts/report.txt"
	check "$who: the report came out through /artifacts" \
		grep -q "^tests passed$" "$tmp/root$dir/artifacts/report.txt"
	check "$who: the record is there too, status exited 0" python3 -c '
import json, sys
r = json.load(open(sys.argv[1]))
assert r["status"] == "exited" and r["exit_code"] == 0, r' "$tmp/root$dir/artifacts/sandbox-run.json"
	(cd "$tmp/root$dir" && find . -path ./artifacts -prune -o -type f -print | sort | xargs sha256sum) \
		>"$tmp/after"
	check "$who: the checkout is not modified (the tests' writes stayed in the sandbox)" \
		cmp -s "$tmp/before-${dir##*/}" "$tmp/after"
}

# GitHub: the steps as the user runner (with sudo), in the checkout.
project /home/runner/work/project runner
in_root setpriv --reuid=runner --regid=runner --init-groups env HOME=/home/runner \
	RUNNER_TEMP=/home/runner/work/_temp GITHUB_WORKSPACE=/home/runner/work/project \
	CI=true GITHUB_ACTIONS=true \
	sh -c 'mkdir -p "$RUNNER_TEMP" && cd "$GITHUB_WORKSPACE" && exec bash -e /srv/github.sh' \
	>"$tmp/github.log" 2>&1
rc=$?
check "GitHub Actions: the workflow's steps pass, as the user runner" test "$rc" = 0
[ "$rc" = 0 ] || show "$tmp/github.log" 60
outcome "GitHub Actions" /home/runner/work/project

# GitLab: the job's lines as root, in the checkout.
project /builds/group/project root
in_root env CI=true GITLAB_CI=true CI_PROJECT_DIR=/builds/group/project \
	sh -c 'cd "$CI_PROJECT_DIR" && exec bash -e /srv/gitlab.sh' \
	>"$tmp/gitlab.log" 2>&1
rc=$?
check "GitLab CI: the job's lines pass, as root" test "$rc" = 0
[ "$rc" = 0 ] || show "$tmp/gitlab.log" 60
outcome "GitLab CI" /builds/group/project
finish
