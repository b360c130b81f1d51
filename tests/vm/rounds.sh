#!/bin/bash
# Inside the VM (tests/vm/run-vm.sh), as root on a cgroup v2 host: the
# limits tests as root (cgroup v2, directly below the root cgroup); as an
# unprivileged user who owns a delegated cgroup, laid out the way
# systemd's Delegate=yes hands one out (the directory, cgroup.procs,
# cgroup.subtree_control and cgroup.threads owned by the user; the user's
# process inside it); and as the user under its own `systemd --user`,
# where sandbox-run gets its cgroup as a transient scope over D-Bus. Then
# a crash under a pipe core_pattern, which only a VM may set.
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
rmdir "$d" 2>/dev/null

echo "# round: $user under its own systemd (transient scope, Delegate=yes)"
# As on a desktop or a lingering account: the user's service manager runs
# in user@UID.service, which it owns; the tests run as one of its services
# (as a terminal's shell runs in one of its scopes). sandbox-run cannot use
# that cgroup (it holds processes) and must ask systemd for a scope.
# shellcheck source=tests/vm/user-manager.sh
. "$SR_SRCDIR/tests/vm/user-manager.sh"
if ! um_start "$user" "$copy/home" "$copy/systemd.log"; then
	echo "not ok - systemd --user did not start (with a session bus: dbus-user-session)"
	cat "$copy/systemd.log"
	status=1
else
	um_as_user systemd-run --user --quiet --wait --pipe --collect \
		-E HOME="$copy/home" -E SR_EXPECT_USER=cgroup2 -E SR_SRCDIR="$copy" \
		-E SR_BIN="$copy/sandbox-run" -E SR_PROBE="$copy/sr-probe" \
		bash "$copy/tests/integration/limits.sh" || status=1
	# Without a session bus, sandbox-run talks to the manager's private socket.
	out=$(um_as_user systemd-run --user --quiet --wait --pipe --collect \
		-E DBUS_SESSION_BUS_ADDRESS=unix:path=/nonexistent "$copy/sandbox-run" \
		--memory 256M --net none -q --result /dev/stdout -- true 2>&1)
	case $out in
	*'"memory":"cgroup2"'*) echo "ok - the manager's private socket when there is no session bus" ;;
	*)
		echo "not ok - the manager's private socket when there is no session bus: $out"
		status=1
		;;
	esac
	# Each run's scope is gone once its holder is: nothing for a next run to clean.
	sleep 0.5
	left=$(find "$um_mgr" -name 'sandbox-run-*' | head -5)
	if [ -n "$left" ]; then
		echo "not ok - sandbox-run scopes left behind: $left"
		status=1
	else
		echo "ok - no sandbox-run scope left behind"
	fi
fi
um_stop

echo "# round: living sandboxes on Debian 12's own kernel ($(uname -r))"
# Before Linux 6.5 there is no SO_PEERPIDFD: a keeper's and serve's check
# that a peer is in their own PID namespace (src/lib/control.c) reads the
# peer's /proc/PID/status instead, the path every stock Debian 12 host
# takes and the host running make check does not. Its users are answered
# (create, exec, inspect, rm, a killed keeper cleaned up after); a
# sandbox's process behind a --ro-bind of the state directory is not.
# Copies of the test files with only those cases, beside the libraries
# they source.
mkdir -p "$copy/tests/security"
cp "$SR_SRCDIR"/tests/integration/lib*.sh "$copy/tests/integration/"
vm_cases() { # FILE CASES...: FILE's copy running CASES alone
	local f=$1 c
	shift
	# Its list of cases (a for_each_user line and its continuations) replaced.
	sed '/^for_each_user t_/,/^done_testing$/d' "$SR_SRCDIR/tests/$f" >"$copy/tests/$f"
	printf 'for_each_user %s\ndone_testing\n' "$*" >>"$copy/tests/$f"
	for c in "$@"; do
		if ! grep -q "^$c() {" "$copy/tests/$f"; then
			echo "not ok - tests/$f has no case $c: update tests/vm/rounds.sh"
			return 1
		fi
	done
	bash "$copy/tests/$f"
}
vm_cases integration/living.sh t_create_exec t_keeper_killed || status=1
vm_cases security/escape-exec.sh t_sockets_behind_ro_bind || status=1

echo "# round: core dumps to a pipe core_pattern (this VM's own, not the host's)"
bash "$SR_SRCDIR/tests/vm/coredump.sh" || status=1
rm -rf "$copy"
exit $status
