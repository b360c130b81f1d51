#!/bin/bash
# Inside the VM (tests/vm/run-vm.sh), as root on a cgroup v2 host: the
# limits tests as root (cgroup v2, directly below the root cgroup), then as
# an unprivileged user who owns a delegated cgroup, laid out the way
# systemd's Delegate=yes hands one out (the directory, cgroup.procs,
# cgroup.subtree_control and cgroup.threads owned by the user; the user's
# process inside it).
set -u
: "${SR_SRCDIR:?}"
limits=$SR_SRCDIR/tests/integration/limits.sh
status=0

# /etc is the host's, read-only here: run-vm.sh made sure it has the account.
user=${SR_TEST_USER:-sr-test}
export SR_TEST_USER=$user

echo "# round: root, cgroup v2 (and $user without a cgroup of its own: rlimit)"
SR_EXPECT_ROOT=cgroup2 SR_EXPECT_USER=rlimit bash "$limits" || status=1

echo "# round: $user in a delegated cgroup"
d=/sys/fs/cgroup/delegated
mkdir -p "$d"
echo "+memory +cpu +pids" >/sys/fs/cgroup/cgroup.subtree_control
chown "$user" "$d" "$d/cgroup.procs" "$d/cgroup.subtree_control" "$d/cgroup.threads"
# sandbox-run is then one of the processes of the delegated cgroup, which
# cgroup v2 forbids from handing controllers to children: without moving
# itself (it does not, see docs/limits.md) it falls back to rlimits, and
# says so. This round checks that the fallback is honest.
# This round runs as the user from start to end: the tests and binaries
# are copied where it can read them (the checkout may sit under a private
# directory, as a mktemp -d one does).
copy=$(mktemp -d /tmp/sr-vm-round.XXXXXX)
mkdir -p "$copy/tests/integration"
install -m 0755 "$SR_SRCDIR/tests/integration/limits.sh" "$SR_SRCDIR/tests/integration/libtest.sh" \
	"$copy/tests/integration/"
install -m 0755 "$SR_BIN" "$copy/sandbox-run"
install -m 0755 "$SR_PROBE" "$copy/sr-probe"
chmod 0755 "$copy"
(
	echo $BASHPID >"$d/cgroup.procs"
	exec setpriv --reuid="$user" --regid="$user" --clear-groups --inh-caps=-all -- \
		env HOME=/tmp SR_EXPECT_USER=rlimit SR_SRCDIR="$copy" SR_BIN="$copy/sandbox-run" \
		SR_PROBE="$copy/sr-probe" bash "$copy/tests/integration/limits.sh"
) || status=1
rm -rf "$copy"
rmdir "$d" 2>/dev/null
exit $status
