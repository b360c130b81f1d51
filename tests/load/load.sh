#!/usr/bin/env bash
# Load and leaks (make check-load): 1,000 sequential invocations of a
# mixed workload, then 8-way parallel ones, then nothing may have leaked
# on the host: processes, network helpers, mounts, cgroups, nftables
# tables, scratch files, fds. Runs as the caller (root in CI); prints
# the measured wall times as TAP comments.
#
#   LOAD_SEQ=1000 LOAD_PAR=400 LOAD_JOBS=8   (the defaults)
. "$(dirname "$0")/../integration/libtest.sh"

LOAD_SEQ=${LOAD_SEQ:-1000}
LOAD_PAR=${LOAD_PAR:-400}
LOAD_JOBS=${LOAD_JOBS:-8}
MARK="sr-load-$$"
ERRS="$SR_TMP/errs"
SCRATCH="$SR_TMP/scratch"
RESULTS="$SR_OUT/results"
mkdir -m 1777 -p "$SCRATCH" "$RESULTS" "$ERRS"
AGENT=$(make_agent echo 'read -r line; echo "echo: $line"')

# Egress needs a helper and a /dev/net/tun the helper can open (libtest.sh).
HAVE_EGRESS=yes
have_egress || HAVE_EGRESS=no

# One invocation of kind (i % 20); prints "KIND RC WANT I". What a run
# wrote to stderr is kept in $ERRS/I only when its status was wrong.
#  0-11 echo agent (directory agent, prompt on stdin)   -> 0
#  12-13 timeout (--timeout 0.1s, sleep 10)             -> 124
#  14 memory hog (--memory 64M, 256 MiB)                 -> 137 (oom) or 1 (rlimit: MemoryError)
#  15-17 --net none with a result record                 -> 0
#  18-19 --net egress                                    -> 0
run_one() {
	local i=$1 k=$(($1 % 20)) rc err="$ERRS/$1"
	case $k in
	1[2-3])
		"$SR" -q --net none --timeout 0.1s -- sh -c 'sleep 10' "$MARK" </dev/null >/dev/null 2>"$err"
		echo "timeout $? 124"
		;;
	14)
		"$SR" -q --net none --memory 64M -- python3 -c 'b = bytearray(256 << 20)' "$MARK" \
			</dev/null >/dev/null 2>"$err"
		rc=$?
		echo "oom $rc $([ "$rc" = 1 ] && echo 1 || echo 137)"
		;;
	1[5-7])
		"$SR" -q --net none --result "$RESULTS/$i.json" -- sh -c 'echo "$1" >/dev/null' "$MARK" \
			</dev/null >/dev/null 2>"$err"
		echo "none $? 0"
		;;
	1[8-9])
		if [ "$HAVE_EGRESS" = yes ]; then
			"$SR" -q --net egress -- sh -c 'test -s /etc/resolv.conf' "$MARK" </dev/null >/dev/null 2>"$err"
			echo "egress $? 0"
		else
			echo "egress-unavailable 0 0"
		fi
		;;
	*)
		rc=$(echo "prompt $i" | "$SR" -q --net none "$AGENT" 2>"$err")
		[ "$rc" = "echo: prompt $i" ]
		echo "echo $? 0"
		;;
	esac | {
		read -r kind rc want
		[ "$rc" = "$want" ] && rm -f "$err"
		echo "$kind $rc $want $i"
	}
}
export -f run_one
export SR MARK RESULTS AGENT HAVE_EGRESS ERRS

# The host's state, to compare with afterwards.
cgroup_dirs() {
	# Our own cgroup in every hierarchy: where sandbox-run makes its own.
	local line path ctrl base
	while IFS= read -r line; do
		path=${line#*:*:}
		ctrl=${line#*:}
		ctrl=${ctrl%%:*}
		ctrl=${ctrl#name=}
		for base in "/sys/fs/cgroup/${ctrl:-unified}" /sys/fs/cgroup; do
			[ -d "$base$path" ] || continue
			find "$base$path" -maxdepth 1 -type d -name 'sandbox-run-*' 2>/dev/null
		done
	done </proc/self/cgroup | sort -u
}
helpers() {
	ps -e -o pid=,comm= | awk '$2 ~ /^(slirp4netns|pasta|passt)/ {print $1}' | sort
}
MOUNTS_BEFORE=$(cut -d' ' -f4- /proc/self/mountinfo)
CGROUPS_BEFORE=$(cgroup_dirs)
HELPERS_BEFORE=$(helpers)
NFT_BEFORE=$(nft_tables)
FDS_BEFORE=$(ls /proc/$$/fd | wc -l)

# tally FILE NAME: one TAP line per kind, from "KIND RC WANT" lines.
tally() {
	local file=$1 name=$2 kind
	for kind in $(awk '{print $1}' "$file" | sort -u); do
		local total bad
		total=$(awk -v k="$kind" '$1 == k' "$file" | wc -l)
		bad=$(awk -v k="$kind" '$1 == k && $2 != $3' "$file" | wc -l)
		if [ "$kind" = egress-unavailable ]; then
			not_ok "$name: egress runs ($total): no helper, or a /dev/net/tun it cannot open"
		elif [ "$bad" -eq 0 ]; then
			ok "$name: $kind x$total, every one as expected"
		else
			not_ok "$name: $kind: $bad of $total wrong"
			awk -v k="$kind" '$1 == k && $2 != $3 {print "# rc " $2 ", wanted " $3}' "$file" |
				sort | uniq -c | head -5
			awk -v k="$kind" '$1 == k && $2 != $3 {print $4}' "$file" | head -3 |
				while read -r i; do
					echo "# run $i said: $(head -c 300 "$ERRS/$i" 2>/dev/null)"
				done
		fi
	done
}

export TMPDIR="$SCRATCH"
t0=$(date +%s.%N)
for i in $(seq 0 $((LOAD_SEQ - 1))); do
	run_one "$i"
done >"$SR_TMP/seq.txt"
t1=$(date +%s.%N)
seq "$LOAD_SEQ" $((LOAD_SEQ + LOAD_PAR - 1)) |
	xargs -P "$LOAD_JOBS" -n 1 bash -c 'run_one "$1"' _ >"$SR_TMP/par.txt"
t2=$(date +%s.%N)

seq_s=$(echo "$t1 - $t0" | bc)
par_s=$(echo "$t2 - $t1" | bc)
echo "# $LOAD_SEQ sequential invocations: ${seq_s}s ($(echo "scale=1; $seq_s * 1000 / $LOAD_SEQ" | bc) ms each)"
echo "# $LOAD_PAR invocations, $LOAD_JOBS at a time: ${par_s}s ($(echo "scale=1; $par_s * 1000 / $LOAD_PAR" | bc) ms each, wall)"
assert_eq "all $LOAD_SEQ sequential invocations reported" "$LOAD_SEQ" "$(wc -l <"$SR_TMP/seq.txt")"
tally "$SR_TMP/seq.txt" sequential
assert_eq "all $LOAD_PAR parallel invocations reported" "$LOAD_PAR" "$(wc -l <"$SR_TMP/par.txt")"
tally "$SR_TMP/par.txt" "parallel x$LOAD_JOBS"

# No helper that was not there before: others' (a concurrent test run's)
# may have ended meanwhile.
same_helpers() {
	local pid
	for pid in $(helpers); do
		grep -qx "$pid" <<<"$HELPERS_BEFORE" || return 1
	done
}
# A SIGKILLed run's cgroup is removed by the next run: none were killed here,
# but a timeout's cgroup can be busy for a moment; one more run sweeps.
"$SR" -q --net none -- true
same_cgroups() {
	local d
	for d in $(cgroup_dirs); do
		grep -qxF "$d" <<<"$CGROUPS_BEFORE" || return 1
	done
}

check "no process of the load is left" until_ok 5 not_running "$MARK"
if until_ok 5 same_helpers; then ok "no network helper is left"; else
	not_ok "no network helper is left (helpers before: '$(echo $HELPERS_BEFORE)', now: '$(echo $(helpers))')"
fi
assert_eq "no mount appeared on the host" "$MOUNTS_BEFORE" "$(cut -d' ' -f4- /proc/self/mountinfo)"
if until_ok 5 same_cgroups; then ok "no sandbox-run cgroup is left"; else
	not_ok "no sandbox-run cgroup is left"
	diff <(echo "$CGROUPS_BEFORE") <(cgroup_dirs) | sed 's/^/# /'
fi
assert_eq "the host's nftables tables are unchanged" "$NFT_BEFORE" "$(nft_tables)"
assert_eq "no scratch file in TMPDIR" "" "$(ls -A "$SCRATCH")"
assert_eq "the result directory holds the records only (no temp files)" "" \
	"$(ls -A "$RESULTS" | grep -v '^[0-9]*\.json$')"
check "every result record is complete JSON" \
	python3 -c 'import json, sys, glob
for f in glob.glob(sys.argv[1] + "/*.json"):
    assert json.load(open(f))["status"] == "exited", f' "$RESULTS"
assert_eq "the test's own fds are as before" "$FDS_BEFORE" "$(ls /proc/$$/fd | wc -l)"
# And nothing of the caller's reaches a sandbox after all this.
if [ -n "${PROBE_DIR:-}" ]; then
	sr --net none --ro-bind "$PROBE_DIR" /probe -- /probe/sr-probe fds
	assert_eq "a sandbox after the load still inherits no fd" "fds: none" "$out"
fi
done_testing
