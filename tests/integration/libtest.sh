# shellcheck shell=bash
# TAP helpers for sandbox-run's integration tests (style: bubblewrap's
# tests/libtest.sh). Source it, define test cases as shell functions, then:
#
#   for_each_user case_a case_b ...   # each case as root and as a user
#   done_testing
#
# Inside a case, `sr ARGS...` runs the real sandbox-run as the current
# user of the round (root, or an unprivileged user) with stdin from
# $SR_STDIN (default /dev/null), and sets $rc, $out (stdout) and $errout
# (stderr). Assertions print TAP lines named "[root] ..." / "[user] ...".
#
# Environment (set by the Makefile): SR_BIN, SR_PROBE, SR_SRCDIR.
set -u

: "${SR_BIN:?SR_BIN must point at the sandbox-run binary}"
: "${SR_SRCDIR:=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}"
: "${SR_PROBE:=}"

_tap_n=0
_tap_failed=0
SR_AS=root
SR_WHO=""

# A world-readable scratch directory: the unprivileged round and the
# sandbox user (a root caller maps to an unprivileged host uid) read from it.
SR_TMP=$(mktemp -d "${TMPDIR:-/tmp}/sr-test.XXXXXX")
chmod 0755 "$SR_TMP"
# Where either round may write (result records, logs).
SR_OUT="$SR_TMP/out"
mkdir -m 1777 "$SR_OUT"
_cleanup() {
	local pid
	for pid in ${SR_BG_PIDS:-}; do kill -9 "$pid" 2>/dev/null; wait "$pid" 2>/dev/null; done
	# Keepers of living sandboxes a failed case left (ours, by the pid they wrote).
	for pid in $(cat "$SR_TMP"/state-*/*/state.json 2>/dev/null |
		sed -n 's/.*"keeper_pid":\([0-9]*\).*/\1/p'); do
		kill -9 "$pid" 2>/dev/null
	done
	rm -rf "$SR_TMP"
}
trap _cleanup EXIT

# Copies of the binaries in the scratch dir: the build tree may be under a
# directory (e.g. /root) the unprivileged round cannot traverse.
install -m 0755 "$SR_BIN" "$SR_TMP/sandbox-run"
SR="$SR_TMP/sandbox-run"
if [ -n "$SR_PROBE" ] && [ -x "$SR_PROBE" ]; then
	install -m 0755 "$SR_PROBE" "$SR_TMP/sr-probe"
	PROBE_DIR="$SR_TMP/probe"
	mkdir -p "$PROBE_DIR"
	install -m 0755 "$SR_PROBE" "$PROBE_DIR/sr-probe"
fi
# A terminal for a command, steps typed at it (tests/helpers/pty-run.py).
install -m 0644 "$SR_SRCDIR/tests/helpers/pty-run.py" "$SR_TMP/pty-run.py"
PTY_RUN="$SR_TMP/pty-run.py"

# Each round's living sandboxes (sandbox-run create) and data in directories
# of its own: a test's `ls` sees its own sandboxes, never another run's.
export SANDBOX_RUN_STATE_DIR="$SR_TMP/state-$(id -u)" SANDBOX_RUN_DATA_DIR="$SR_TMP/data-$(id -u)"

# The unprivileged account used when the tests run as root.
SR_TEST_USER=${SR_TEST_USER:-sr-test}
_ensure_test_user() {
	if ! id -u "$SR_TEST_USER" >/dev/null 2>&1; then
		useradd --system --no-create-home --home-dir /nonexistent \
			--shell /usr/sbin/nologin "$SR_TEST_USER" >/dev/null 2>&1 || return 1
	fi
}

ok() {
	_tap_n=$((_tap_n + 1))
	echo "ok $_tap_n - ${SR_WHO}${SR_TAG:-}$*"
}

not_ok() {
	_tap_n=$((_tap_n + 1))
	_tap_failed=$((_tap_failed + 1))
	echo "not ok $_tap_n - ${SR_WHO}${SR_TAG:-}$*"
	if [ -n "${out+x}" ]; then
		echo "# rc=${rc:-?}"
		sed 's/^/# stdout: /' <<<"${out:-}" | head -20
		sed 's/^/# stderr: /' <<<"${errout:-}" | head -20
	fi
}

skip() {
	_tap_n=$((_tap_n + 1))
	echo "ok $_tap_n - ${SR_WHO}${SR_TAG:-}$1 # SKIP ${2:-}"
}

# check NAME COMMAND...: ok if COMMAND succeeds.
check() {
	local name=$1
	shift
	if "$@"; then ok "$name"; else not_ok "$name"; fi
}

# assert_eq NAME EXPECTED ACTUAL
assert_eq() {
	if [ "$2" = "$3" ]; then ok "$1"; else
		not_ok "$1"
		echo "# expected: $2"
		echo "# actual:   $3"
	fi
}

# assert_match NAME REGEX TEXT
assert_match() {
	if [[ $3 =~ $2 ]]; then ok "$1"; else
		not_ok "$1"
		echo "# expected to match: $2"
		echo "# actual: $(head -c 2000 <<<"$3")"
	fi
}

assert_no_match() {
	if [[ $3 =~ $2 ]]; then
		not_ok "$1"
		echo "# expected not to match: $2"
		echo "# actual: $(head -c 2000 <<<"$3")"
	else ok "$1"; fi
}

# The command prefix that runs something as the round's user.
as_user() {
	if [ "$SR_AS" = user ] && [ "$(id -u)" = 0 ]; then
		setpriv --reuid="$SR_TEST_USER" --regid="$SR_TEST_USER" --clear-groups \
			--inh-caps=-all -- env HOME="$SR_TMP/home-user" XDG_CONFIG_HOME="$SR_TMP/xdg-user" \
			SANDBOX_RUN_STATE_DIR="$SR_TMP/state-user" SANDBOX_RUN_DATA_DIR="$SR_TMP/data-user" "$@"
	else
		"$@"
	fi
}

# The same, replacing the calling (sub)shell: `(as_user_exec CMD...) &`
# makes $! the command's own pid.
as_user_exec() {
	if [ "$SR_AS" = user ] && [ "$(id -u)" = 0 ]; then
		exec setpriv --reuid="$SR_TEST_USER" --regid="$SR_TEST_USER" --clear-groups \
			--inh-caps=-all -- env HOME="$SR_TMP/home-user" XDG_CONFIG_HOME="$SR_TMP/xdg-user" \
			SANDBOX_RUN_STATE_DIR="$SR_TMP/state-user" SANDBOX_RUN_DATA_DIR="$SR_TMP/data-user" "$@"
	fi
	exec "$@"
}

# sr ARGS...: runs sandbox-run, capturing rc, out, errout.
sr() {
	local o="$SR_TMP/.out" e="$SR_TMP/.err"
	as_user "$SR" "$@" <"${SR_STDIN:-/dev/null}" >"$o" 2>"$e"
	rc=$?
	out=$(cat "$o")
	errout=$(cat "$e")
}

# need_probe: the whole script is skipped where the static probe is not
# built (its copy for the sandbox: $PROBE_DIR, bound at /probe).
need_probe() {
	if [ -z "$SR_PROBE" ] || [ ! -x "$SR_PROBE" ]; then
		echo "1..0 # SKIP the static probe (tests/helpers/sr-probe) is not built"
		exit 0
	fi
}

# Whether --net egress can run here: a helper, and a /dev/net/tun the test
# user can open (Debian ships it 0666; tools/bootstrap restores that).
have_egress() {
	{ command -v slirp4netns || command -v pasta; } >/dev/null 2>&1 || return 1
	[ "$(stat -c %a /dev/net/tun 2>/dev/null)" = 666 ] || { [ "$(id -u)" != 0 ] && [ -w /dev/net/tun ]; }
}

# descendant PID COMM: the first process named COMM beneath PID (any depth).
descendant() {
	local c
	for c in $(cat /proc/"$1"/task/*/children 2>/dev/null); do
		if [ "$(cat "/proc/$c/comm" 2>/dev/null)" = "$2" ]; then
			echo "$c"
			return 0
		fi
		descendant "$c" "$2" && return 0
	done
	return 1
}

# for_each_user CASE...: runs every case as root and as an unprivileged
# user (or, when not root, once as the calling user).
for_each_user() {
	local c user=no
	if [ "$(id -u)" = 0 ]; then
		mkdir -p "$SR_TMP/home-user" "$SR_TMP/xdg-user" "$SR_TMP/state-user" "$SR_TMP/data-user"
		chmod 0700 "$SR_TMP/state-user" "$SR_TMP/data-user"
		# Made first: root's cases give files to it too (chown, runuser).
		_ensure_test_user && user=yes
		SR_AS=root SR_WHO="[root] "
		for c in "$@"; do "$c"; done
		if [ "$user" = yes ]; then
			chown "$SR_TEST_USER" "$SR_TMP/home-user" "$SR_TMP/xdg-user" \
				"$SR_TMP/state-user" "$SR_TMP/data-user"
			SR_AS=user SR_WHO="[user] "
			for c in "$@"; do "$c"; done
		else
			not_ok "create the unprivileged test user $SR_TEST_USER"
		fi
	else
		SR_AS=self SR_WHO="[user] "
		for c in "$@"; do "$c"; done
	fi
	SR_WHO=""
}

# own DIR...: gives DIR to the round's user, as a checkout of theirs would be.
own() {
	if [ "$SR_AS" = user ]; then chown -R "$SR_TEST_USER:$SR_TEST_USER" "$@"; fi
}

# A directory agent in the scratch space: make_agent NAME SCRIPT-BODY
make_agent() {
	local d="$SR_TMP/agents/$1"
	mkdir -p "$d"
	printf '#!/bin/sh\n%s\n' "$2" >"$d/agent"
	chmod 0755 "$d" "$d/agent"
	own "$d"
	echo "$d"
}

# A deploy held inside its install step, so that a test can run something
# else while it holds its version: gate_open makes a FIFO that
# "${GATE_OPTS[@]}" (--ro-bind DIR /gate) puts in the install sandbox, and an
# install step that reads a line from it (`read l </gate/fifo`) waits there
# until gate_release writes that line. The FIFO is held open here (fd 8) from
# gate_open to gate_close, so the step's open never waits for a writer and a
# line written before the step reads it is not lost. The directory stays:
# the deployment's configuration keeps the bind.
gate_open() {
	GATE_DIR="$SR_TMP/gate-$SR_AS"
	rm -rf "$GATE_DIR"
	mkdir -m 0755 "$GATE_DIR"
	mkfifo -m 0666 "$GATE_DIR/fifo"
	exec 8<>"$GATE_DIR/fifo"
	GATE_OPTS=(--ro-bind "$GATE_DIR" /gate)
}

gate_release() {
	echo go >&8
}

gate_close() {
	exec 8>&-
}

# in_background NAME COMMAND...: runs COMMAND as the round's user in the
# background, its stdout and stderr in $SR_OUT/NAME, its status in
# $SR_OUT/NAME.rc once it ends; $! is the subshell's.
in_background() {
	local name=$1
	shift
	rm -f "$SR_OUT/$name" "$SR_OUT/$name.rc"
	(
		as_user "$@" </dev/null >"$SR_OUT/$name" 2>&1
		echo $? >"$SR_OUT/$name.rc"
	) &
}

# ended NAME: what in_background NAME started has ended; its status then.
ended() {
	[ -s "$SR_OUT/$1.rc" ]
}

# running MARKER: a process whose command line contains MARKER exists. The
# bracket keeps the pattern from matching the command line of whoever runs it.
running() {
	pgrep -f "[${1:0:1}]${1:1}" >/dev/null
}

not_running() {
	! running "$1"
}

# json_get FILE KEY[.SUBKEY]: one field of a JSON file, as python prints it.
# until_ok SECONDS COMMAND...: polls until COMMAND succeeds; fails after
# SECONDS. The kernel tears namespaces down asynchronously, and network
# helpers exit on their own time (15-35 ms).
until_ok() {
	local t=$(($1 * 20))
	shift
	until "$@"; do
		t=$((t - 1))
		[ "$t" -gt 0 ] || return 1
		sleep 0.05
	done
}

# until_gone SECONDS COMMAND...: polls until COMMAND fails.
until_gone() {
	local s=$1
	shift
	until_ok "$s" _fails "$@"
}
_fails() { ! "$@"; }

# state_dir: the round's state directory (sandboxes' state, serve's socket).
state_dir() {
	if [ "$SR_AS" = user ]; then echo "$SR_TMP/state-user"; else echo "$SANDBOX_RUN_STATE_DIR"; fi
}

# has_lines FILE N: FILE has at least N lines.
has_lines() {
	[ -f "$1" ] && [ "$(wc -l <"$1")" -ge "$2" ]
}

json_get() {
	python3 -c 'import json,sys
v=json.load(open(sys.argv[1]))
for k in sys.argv[2].split("."): v=v[k]
print(json.dumps(v) if not isinstance(v,str) else v)' "$1" "$2"
}

# nft_tables: the host's nftables tables (sandbox-run must never touch
# them: its policy lives in the sandbox's network namespace), through
# nft(8) when installed, else libnftables itself.
nft_tables() {
	if [ "$(id -u)" != 0 ]; then
		echo "not root"
	elif command -v nft >/dev/null; then
		nft list tables 2>&1
	else
		python3 -c 'import ctypes
lib = ctypes.CDLL("libnftables.so.1")
lib.nft_ctx_new.restype = ctypes.c_void_p
lib.nft_ctx_buffer_output.argtypes = [ctypes.c_void_p]
lib.nft_run_cmd_from_buffer.argtypes = [ctypes.c_void_p, ctypes.c_char_p]
lib.nft_ctx_get_output_buffer.restype = ctypes.c_char_p
lib.nft_ctx_get_output_buffer.argtypes = [ctypes.c_void_p]
ctx = lib.nft_ctx_new(0)
lib.nft_ctx_buffer_output(ctx)
rc = lib.nft_run_cmd_from_buffer(ctx, b"list tables")
print("rc", rc, lib.nft_ctx_get_output_buffer(ctx).decode(), end="")' 2>&1
	fi
}

# disk_backing_of RECORD: how the disk of a run with the default disk-backing
# (auto) is held, given how its memory was (docs/limits.md, "Disk"): a
# tmpfs where no cgroup counts its pages against --memory, else an ext4
# image (root) or a host directory, which nothing bounds (a user).
disk_backing_of() {
	case "$(json_get "$1" enforced.memory)" in
	cgroup1 | cgroup2)
		# A data directory in memory (the VM's /tmp) has no disk: the tmpfs.
		if [ "$(stat -f -c %T "$SR_TMP")" = tmpfs ]; then
			echo tmpfs
		elif [ "$SR_AS" = root ]; then
			echo ext4
		else
			echo none
		fi
		;;
	*) echo tmpfs ;;
	esac
}

done_testing() {
	echo "1..$_tap_n"
	[ "$_tap_failed" -eq 0 ]
}
