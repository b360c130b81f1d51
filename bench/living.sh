#!/usr/bin/env bash
# Living sandboxes against cold starts, side by side in one run (hyperfine,
# medians): `sandbox-run exec ID -- /bin/true` into a sandbox made once,
# a cold `sandbox-run -- /bin/true`, and bubblewrap's cold start. Then the
# keeper's memory (RSS, and PSS: what it costs beside the other
# processes sharing libc), right after the execs and idle a moment later.
# Prints Markdown for docs/performance.md.
#
#   bench/living.sh [RUNS]          as an unprivileged user (root drops to one)
#   BENCH_AS=root bench/living.sh   as root
#
# Target (issue 19): exec p50 <= 0.3 x bubblewrap's cold start; keeper RSS
# <= 2 MiB.
set -euo pipefail

. "$(dirname "$0")/lib.sh"
runs=${1:-500}

need hyperfine bwrap python3

tmp=$(mktemp -d)
chmod 755 "$tmp"
install -m 755 "$bin" "$tmp/sandbox-run"
export SANDBOX_RUN_STATE_DIR="$tmp/state"

run_as_user

sr="$tmp/sandbox-run -q"
id=$("${as_user[@]}" SANDBOX_RUN_STATE_DIR="$SANDBOX_RUN_STATE_DIR" $sr create --net none --timeout 0)
trap '"${as_user[@]}" SANDBOX_RUN_STATE_DIR="$SANDBOX_RUN_STATE_DIR" $sr rm "$id" >/dev/null 2>&1; rm -rf "$tmp"' EXIT

"${as_user[@]}" SANDBOX_RUN_STATE_DIR="$SANDBOX_RUN_STATE_DIR" \
	hyperfine -N --warmup 30 --runs "$runs" --export-json "$tmp/h.json" \
	-n "sandbox-run exec (a living sandbox)" "$sr exec $id -- /bin/true" \
	-n "sandbox-run --net none -- /bin/true (cold)" "$sr --net none -- /bin/true" \
	-n bubblewrap "bwrap --ro-bind / / --unshare-all --die-with-parent --proc /proc --dev /dev /bin/true" >&2

echo "As $who, $runs runs each, $(nproc) CPUs, load average $(cut -d' ' -f1-3 /proc/loadavg):"
echo
bubblewrap_table "$tmp/h.json"

# The same exec from a client that stays (what an API server does): the
# keeper's and the sandbox's part alone, without a process to start for
# each. Over the control socket's own protocol (docs/architecture.md).
"${as_user[@]}" python3 - "$SANDBOX_RUN_STATE_DIR/$id/ctl" "$runs" <<'EOF'
import json, os, socket, statistics, sys, time
ctl, runs = sys.argv[1], int(sys.argv[2])
null = os.open("/dev/null", os.O_RDWR)
req = json.dumps({"op": "exec", "argv": ["/bin/true"], "env": [], "tty": False}).encode()
times = []
for i in range(runs + 30):
    t0 = time.perf_counter()
    s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    s.connect(ctl)
    socket.send_fds(s, [req], [null, null, null])
    ok = json.loads(s.recv(65536))
    ev = json.loads(s.recv(65536))
    s.close()
    assert ok["ok"] and ev["exit_code"] == 0, (ok, ev)
    if i >= 30:
        times.append(time.perf_counter() - t0)
print()
print(f"exec from a client that stays (the control socket, {runs} runs): "
      f"median {statistics.median(times)*1e3:.2f} ms, mean {statistics.mean(times)*1e3:.2f} ms")
EOF

keeper=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["keeper_pid"])' \
	"$SANDBOX_RUN_STATE_DIR/$id/state.json")
memory() {
	awk -v when="$1" '/^Rss:/ {rss += $2} /^Pss:/ {pss += $2} /^Private_(Clean|Dirty):/ {uss += $2}
		END {printf "keeper memory %s: RSS %d KiB, PSS %d KiB, private (USS) %d KiB\n", when, rss, pss, uss}' \
		/proc/"$keeper"/smaps
}
echo
memory "right after the execs"
# Idle a second after its last client, a keeper drops its code's pages again.
sleep 1.5
memory "idle (1.5 s later)"
