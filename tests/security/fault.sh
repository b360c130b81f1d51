#!/usr/bin/env bash
# Fault injection: sandbox-run is SIGKILLed at every point of its set-up
# (SANDBOX_RUN_TEST_STOP_AT, src/base/fault.h), as root and as an unprivileged
# caller, and nothing may be left: no process, no mount, no cgroup, no
# network helper, no nftables table on the host, no scratch file.
#
# Needs a build configured with --enable-fault-injection; in a normal
# build it checks that the knob does not exist, and skips the rest.
. "$(dirname "$0")/../integration/libtest.sh"

ENV=SANDBOX_RUN_TEST_STOP_AT

# Ask the binary itself: a fault-injection build refuses an unknown point.
SANDBOX_RUN_TEST_STOP_AT=no-such-point "$SR" --net none -- true >/dev/null 2>"$SR_TMP/.probe-err"
probe_rc=$?
if ! grep -q "no fault point 'no-such-point'" "$SR_TMP/.probe-err"; then
	assert_eq "a normal build ignores $ENV" 0 "$probe_rc"
	check "a normal build does not even contain the name $ENV" \
		bash -c "! grep -q -a '$ENV' '$SR'"
	check "nor SANDBOX_RUN_TEST_FAIL" bash -c "! grep -q -a SANDBOX_RUN_TEST_FAIL '$SR'"
	skip "SIGKILL at every set-up step" "needs a build with configure --enable-fault-injection"
	done_testing
	exit
fi
assert_eq "an unknown fault point is refused (125)" 125 "$probe_rc"

# How many points there are: the refusal says "a number 1-N".
N_POINTS=$(sed -n 's/.*a number 1-\([0-9]*\) or a name.*/\1/p' "$SR_TMP/.probe-err")

MOUNTS_BEFORE=$(cut -d' ' -f4- /proc/self/mountinfo)
NFT_BEFORE=$(nft_tables)

pid_exists() {
	[ -d "/proc/$1" ] && [ "$(awk '{print $3}' "/proc/$1/stat" 2>/dev/null)" != Z ]
}

any_pid_exists() {
	local p
	for p in "$@"; do pid_exists "$p" && return 0; done
	return 1
}

# any_proc_entry PID...: one of them is still in /proc, even as a zombie.
any_proc_entry() {
	local p
	for p in "$@"; do [ -d "/proc/$p" ] && return 0; done
	return 1
}

# descendants PID: its children, theirs, and so on.
descendants() {
	local c
	for c in $(pgrep -P "$1"); do
		echo "$c"
		descendants "$c"
	done
}

any_dir_exists() {
	local d
	for d in "$@"; do [ -d "$d" ] && return 0; done
	return 1
}

# kill_at N NET: one run stopped at point N, SIGKILLed, then inspected.
kill_at() {
	local n=$1 net=$2 mark="sr-fault-$$-$1-$2-$SR_AS"
	local scratch="$SR_TMP/scratch-$SR_AS-$n-$net" e="$SR_OUT/fault-$SR_AS-$n-$net.err"
	local sup name helpers cgroups procs t extra
	mkdir -m 1777 -p "$scratch"
	(
		export SANDBOX_RUN_TEST_STOP_AT=$n TMPDIR="$scratch"
		# egress: with the sandbox's resolver's sockets (a name denied turns it on).
		extra=()
		[ "$net" = egress ] && extra=(--deny '*.sr-fault.invalid')
		as_user_exec "$SR" --net "$net" "${extra[@]}" --result "$scratch/result.json" -- \
			sh -c 'sleep 1000' "$mark"
	) </dev/null >/dev/null 2>"$e" &
	sup=$!
	for t in $(seq 200); do
		grep -q "fault injection: stopped at $n " "$e" && break
		pid_exists "$sup" || break
		sleep 0.05
	done
	name=$(sed -n "s/^sandbox-run: fault injection: stopped at $n (\(.*\))$/\1/p" "$e")
	if [ -z "$name" ]; then
		not_ok "point $n ($net): reached"
		sed 's/^/# /' "$e"
		kill -9 "$sup" 2>/dev/null
		wait "$sup" 2>/dev/null
		return
	fi
	# What this run holds on the host, seen from outside (the resolver starts on
	# the agent's first query: not here).
	helpers=$(ps -o pid=,comm= --ppid "$sup" | awk '$2 ~ /^(slirp4netns|pasta|passt|sr-resolver)/ {print $1}')
	cgroups=$(for f in /proc/"$sup"/fd/*; do readlink "$f"; done 2>/dev/null | grep '/sandbox-run-[0-9a-f]*$' | sort -u)
	procs=$(descendants "$sup")
	kill -9 "$sup"
	wait "$sup" 2>/dev/null
	local what="SIGKILL at $n ($name, --net $net)"
	check "$what: no process of the run is left" until_gone 3 running "$mark"
	# From its start on (GO implies it), the helper must have been there to check
	# (pasta runs as passt or passt.avx2).
	case "$net:$name" in
	"egress:supervisor network helper" | "egress:supervisor go" | "egress:child "[!s]*)
		check "$what: the run had started its network helper" test -n "$helpers"
		;;
	esac
	if [ -n "$helpers" ]; then
		check "$what: the network helper (slirp4netns or pasta) and the resolver exited" \
			until_gone 3 any_pid_exists $helpers
	fi
	assert_eq "$what: no mount appeared on the host" "$MOUNTS_BEFORE" "$(cut -d' ' -f4- /proc/self/mountinfo)"
	assert_eq "$what: no scratch file, no result file" "" "$(ls -A "$scratch")"
	if [ -n "$cgroups" ]; then
		# A SIGKILLed run cannot rmdir its own cgroup: the next run takes
		# every unlocked sandbox-run-* directory (src/lib/cgroup.c remove_stale).
		# Not before the host's init has reaped the run's processes (here
		# it takes 1.5 s): a zombie keeps a cgroup v1 directory busy.
		until_gone 10 any_proc_entry $procs
		sr --net none -- true
		check "$what: its cgroup is removed by the next run ($(echo $cgroups | wc -w) dirs)" \
			until_gone 2 any_dir_exists $cgroups
	fi
}

t_kill_everywhere() {
	local n
	for n in $(seq "$N_POINTS"); do
		kill_at "$n" none
	done
	# With the network helper and the nftables policy in play.
	for n in $(seq "$N_POINTS"); do
		kill_at "$n" egress
	done
	assert_eq "the host's nftables tables are unchanged" "$NFT_BEFORE" "$(nft_tables)"
}

# The one step whose failure is not fatal (docs/network.md): the helper
# link's TCP tuning. The run goes on, untuned, and says so once.
t_tuning_failure_warns() {
	if ! have_egress; then
		skip "a failed TCP tuning is a warning" "no egress helper or /dev/net/tun here"
		return
	fi
	# No limits: as a user here they are rlimits, which is a warning of its own.
	SANDBOX_RUN_TEST_FAIL="network tuning" sr --memory 0 --cpus 0 --pids 0 --net egress -- \
		ip -4 route show default
	assert_eq "a failed TCP tuning: the run goes on (status 0)" 0 "$rc"
	assert_eq "one warning line saying so" \
		"sandbox-run: warning: TCP through the network helper is not tuned: tune the default route: injected failure" \
		"$errout"
	assert_match "and the route is the helper's, untuned" "^default via 10\.0\.2\.2 dev eth0 *$" "$out"
	SANDBOX_RUN_TEST_FAIL="network tuning" sr -q --net egress -- true
	assert_eq "-q silences it" "0:" "$rc:$errout"
	SANDBOX_RUN_TEST_FAIL="nothing" sr --net none -- true
	assert_eq "an unknown step to fail is refused (125)" 125 "$rc"
}

check "the binary lists its fault points ($N_POINTS)" test "${N_POINTS:-0}" -ge 20
for_each_user t_tuning_failure_warns
for_each_user t_kill_everywhere
done_testing
