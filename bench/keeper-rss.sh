#!/usr/bin/env bash
# A keeper's resident memory (VmRSS) through a burst of activity: at rest,
# then sampled every 50 ms while EXECS `sandbox-run exec ID -- /bin/true`,
# three cp (in and out) and three inspect run, and for 2 s after, with
# --net none and --net egress. Prints Markdown for docs/performance.md.
#
#   bench/keeper-rss.sh [EXECS]          as an unprivileged user (root drops to one)
#   BENCH_AS=root bench/keeper-rss.sh    as root
#
# Target (issue 19): keeper RSS <= 2 MiB, at rest and through the burst.
set -euo pipefail

. "$(dirname "$0")/lib.sh"
execs=${1:-600}

need python3

tmp=$(mktemp -d)
chmod 755 "$tmp"
install -m 755 "$bin" "$tmp/sandbox-run"
export SANDBOX_RUN_STATE_DIR="$tmp/state"
run_as_user
sr=("${as_user[@]}" SANDBOX_RUN_STATE_DIR="$SANDBOX_RUN_STATE_DIR" "$tmp/sandbox-run" -q)
id=
sampler=
cleanup() {
	[ -z "$sampler" ] || kill "$sampler" 2>/dev/null || true
	[ -z "$id" ] || "${sr[@]}" rm "$id" >/dev/null 2>&1 || true
	rm -rf "$tmp"
}
trap cleanup EXIT
head -c 65536 /dev/urandom >"$tmp/file"
chmod 644 "$tmp/file"

rss() { awk '/^VmRSS:/ {print $2}' /proc/"$1"/status; }
# Its CPU time (user + system, in clock ticks) and minor faults so far.
cpu() { sed 's/.*) //' /proc/"$1"/stat | awk '{print $12 + $13}'; }
faults() { sed 's/.*) //' /proc/"$1"/stat | awk '{print $8}'; }
# The largest sample of a phase.
peak() { awk -v p="$1" '$1 == p && $2 > m {m = $2} END {print m + 0}' "$tmp/samples"; }

echo "As $who, $execs execs, 3 cp and 3 inspect per sandbox, $(nproc) CPUs, load average $(cut -d' ' -f1-3 /proc/loadavg):"
echo
echo "| keeper | RSS at rest | peak during the burst | peak in the 2 s after | idle, 2 s after | keeper CPU, burst | its minor faults |"
echo "|---|---|---|---|---|---|---|"
for net in none egress; do
	id=$("${sr[@]}" create --net "$net" --timeout 0)
	keeper=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["keeper_pid"])' \
		"$SANDBOX_RUN_STATE_DIR/$id/state.json")
	# A keeper drops its set-up's pages a second after it is ready.
	sleep 1.5
	rest=$(rss "$keeper")
	# VmRSS every 50 ms, tagged with the phase the marker file names.
	echo burst >"$tmp/phase"
	python3 - "$keeper" "$tmp/phase" >"$tmp/samples" <<'PY' &
import sys, time
pid, phase = sys.argv[1], sys.argv[2]
while True:
    with open(f"/proc/{pid}/status") as f:
        kib = next(int(l.split()[1]) for l in f if l.startswith("VmRSS:"))
    with open(phase) as f:
        print(f.read().strip(), kib, flush=True)
    time.sleep(0.05)
PY
	sampler=$!
	cpu0=$(cpu "$keeper") faults0=$(faults "$keeper")
	for _ in $(seq "$execs"); do "${sr[@]}" exec "$id" -- /bin/true; done
	for i in 1 2 3; do
		"${sr[@]}" cp "$tmp/file" "$id:f$i"
		"${sr[@]}" cp "$id:f$i" "$tmp/out$i"
		"${sr[@]}" inspect "$id" >/dev/null
	done
	echo after >"$tmp/phase"
	cpu_ms=$((($(cpu "$keeper") - cpu0) * 1000 / $(getconf CLK_TCK)))
	faults=$(($(faults "$keeper") - faults0))
	sleep 2
	kill "$sampler"
	wait "$sampler" 2>/dev/null || true
	sampler=
	idle=$(rss "$keeper")
	echo "| \`--net $net\`, $who | $rest KiB | $(peak burst) KiB | $(peak after) KiB | $idle KiB | $cpu_ms ms | $faults |"
	"${sr[@]}" rm "$id" >/dev/null
	id=
done
