#!/usr/bin/env bash
# What cgroup v2 set-up costs a cold start, directly and through a systemd
# scope. These hosts have no cgroup v2 controllers, so this boots the test
# VM (tests/vm/run-vm.sh: Debian's kernel under qemu, TCG) and measures
# there, each strategy against the same run without a cgroup (rlimits):
#
#   root, cgroup2 directly      root in the root cgroup
#   root, rlimit                root in a cgroup that holds processes, no bus
#   user, cgroup2 by systemd    a service of the user's systemd --user
#   user, rlimit                the same, with no bus or manager to ask
#
# TCG emulates every instruction, so the milliseconds are the emulator's:
# the end of the output scales each difference by how much slower the same
# rlimit run is in the VM than on this host, an estimate of the native cost.
#
#   bench/cgroup-vm.sh [RUNS]     from the top of a built tree, as root
set -euo pipefail

. "$(dirname "$0")/lib.sh"
runs=${1:-100}

if [ "${1:-}" != --in-vm ]; then
	[ "$(id -u)" = 0 ] || { echo "bench: run as root (it boots a VM)" >&2; exit 1; }
	id -u "$user" >/dev/null 2>&1 ||
		useradd --system --no-create-home --home-dir /nonexistent --shell /usr/sbin/nologin "$user"
	cache=${SR_VM_CACHE:-$here/tests/vm/cache}
	mkdir -p "$cache"
	# Where the VM sees it (read-only): not under /tmp, which is the VM's own.
	tmp=$(mktemp -d "$(cd "$cache" && pwd)/bench.XXXXXX")
	trap 'rm -rf "$tmp"' EXIT
	chmod 755 "$tmp"
	install -m 755 "$bin" "$tmp/sandbox-run"
	chown "$user" "$tmp"
	cmd="$tmp/sandbox-run -q --net none -- /bin/true"
	# The host's reference: the same rlimit run, as the user.
	setpriv --reuid="$user" --regid="$user" --clear-groups -- env HOME="$tmp" \
		hyperfine -N --style basic --warmup 20 --runs "$((runs * 5))" --export-json "$tmp/host.json" \
		-n "host: user, rlimit" "$cmd" >&2
	SR_VM_CACHE=$cache SR_VM_MEMORY=2048 \
		bash "$here/tests/vm/run-vm.sh" -- env SR_SRCDIR="$here" \
		bash "$here/bench/cgroup-vm.sh" --in-vm "$runs" "$tmp"
	exit
fi

# Inside the VM, as root: the host's tree is read-only here, results go to
# the VM's own /tmp.
runs=$2 host=$3
tmp=$(mktemp -d)
chmod 755 "$tmp"
mkdir "$tmp/user"
chown "$user" "$tmp/user"
cp "$host/host.json" "$tmp/"
cmd="$host/sandbox-run -q --net none -- /bin/true"
hf=(hyperfine -N --style basic --warmup 10 --runs "$runs")

"${hf[@]}" --export-json "$tmp/root-v2.json" -n "VM: root, cgroup2 directly" "$cmd" >&2
mkdir /sys/fs/cgroup/bench
(
	echo $BASHPID >/sys/fs/cgroup/bench/cgroup.procs
	"${hf[@]}" --export-json "$tmp/root-rlimit.json" -n "VM: root, rlimit" "$cmd" >&2
)
rmdir /sys/fs/cgroup/bench

# shellcheck source=tests/vm/user-manager.sh
. "$SR_SRCDIR/tests/vm/user-manager.sh"
um_start "$user" "$tmp/user/home" "$tmp/systemd.log" || { cat "$tmp/systemd.log" >&2; exit 1; }
um_as_user systemd-run --user --quiet --wait --pipe --collect -E HOME="$tmp/user/home" \
	"${hf[@]}" --export-json "$tmp/user/user-scope.json" -n "VM: user, cgroup2 by systemd" \
	"$cmd" >&2
um_as_user systemd-run --user --quiet --wait --pipe --collect -E HOME="$tmp/user/home" \
	env -u XDG_RUNTIME_DIR -u DBUS_SESSION_BUS_ADDRESS \
	"${hf[@]}" --export-json "$tmp/user/user-rlimit.json" -n "VM: user, rlimit" "$cmd" >&2
um_stop

python3 - "$tmp" <<'PY'
import json, sys, os
d = sys.argv[1]
def med(name):
    for sub in ("", "user"):
        p = os.path.join(d, sub, name + ".json")
        if os.path.exists(p):
            return json.load(open(p))["results"][0]["median"] * 1e3
    raise SystemExit(f"bench: no {name}.json")
host = med("host")
rows = {n: med(n) for n in ("root-v2", "root-rlimit", "user-scope", "user-rlimit")}
scale = rows["user-rlimit"] / host
print("| run | median in the VM (TCG) |")
print("|---|---|")
for n, v in rows.items():
    print(f"| {n} | {v:.2f} ms |")
print(f"| host: user, rlimit | {host:.2f} ms |")
print()
print(f"TCG slowdown (user, rlimit: VM / host): {scale:.1f}x")
for what, a, b in (("cgroup2 directly (root)", "root-v2", "root-rlimit"),
                   ("cgroup2 by a systemd scope (user)", "user-scope", "user-rlimit")):
    diff = rows[a] - rows[b]
    print(f"- {what}: +{diff:.2f} ms in the VM, ~{diff / scale:.2f} ms native (estimate)")
PY
