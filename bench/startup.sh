#!/usr/bin/env bash
# Cold start of a fresh sandbox against bubblewrap, measured side by side
# in the same run (hyperfine, medians), plus sandbox-run's own peak RSS.
# Prints Markdown for docs/performance.md.
#
#   bench/startup.sh [RUNS]          as an unprivileged user (root drops to one)
#   BENCH_AS=root bench/startup.sh   as root (cgroup v1/v2 limits where present)
#
# Every command runs /bin/true with every namespace new. bubblewrap's is the
# reference: --ro-bind / / --unshare-all --die-with-parent --proc /proc --dev /dev.
# The sandbox-run rows separate the costs: the bare sandbox (no limits, no
# network), the limits of the default profile, and the egress network.
set -euo pipefail

. "$(dirname "$0")/lib.sh"
runs=${1:-500}

need hyperfine bwrap python3 /usr/bin/time

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
chmod 755 "$tmp"
install -m 755 "$bin" "$tmp/sandbox-run"

run_as_user

sr="$tmp/sandbox-run -q"
bare="$sr --net none --memory 0 --cpus 0 --pids 0 -- /bin/true"
limits="$sr --net none -- /bin/true"
egress="$sr --memory 0 --cpus 0 --pids 0 --net egress -- /bin/true"
bw="bwrap --ro-bind / / --unshare-all --die-with-parent --proc /proc --dev /dev /bin/true"

"${as_user[@]}" hyperfine -N --warmup 30 --runs "$runs" --export-json "$tmp/h.json" \
	-n "sandbox-run --net none, no limits" "$bare" \
	-n "sandbox-run --net none, default limits" "$limits" \
	-n "sandbox-run --net egress, no limits" "$egress" \
	-n bubblewrap "$bw" >&2

echo "As $who, $runs runs each, $(nproc) CPUs, load average $(cut -d' ' -f1-3 /proc/loadavg):"
echo
bubblewrap_table "$tmp/h.json"

# Peak RSS, from GNU time: the largest of sandbox-run and what it reaped
# (its PID 1 is a fork of it; the agent is /bin/true), so an upper bound of
# sandbox-run's own.
echo
for name in sandbox-run bubblewrap; do
	cmd=$bare
	[ "$name" = bubblewrap ] && cmd=$bw
	# shellcheck disable=SC2086
	kib=$("${as_user[@]}" /usr/bin/time -f %M $cmd 2>&1 >/dev/null | tail -1)
	echo "peak RSS of $name: $kib KiB"
done
