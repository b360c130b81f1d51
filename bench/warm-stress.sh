#!/usr/bin/env bash
# Warm invocations under load, counted: TOTAL invocations of a /bin/true
# deployment through the API (POST /v1/deployments/NAME/invoke), PARALLEL
# at a time, against serve --warm N; every answer that is not 200 with
# exit code 0 is a failure, counted and printed (the first few in full).
# Exits 1 if any failed. A stress test of the hand-over between the
# taker, the keeper and the sandbox's end (docs/performance.md, "Warm
# invocations"): a race there shows up about once in a few thousand.
#
#   bench/warm-stress.sh [TOTAL] [PARALLEL]   as an unprivileged user (root drops to one)
#   BENCH_AS=root bench/warm-stress.sh        as root
#   BENCH_WARM=N                              the pool's size (default 4)
set -euo pipefail

. "$(dirname "$0")/lib.sh"
total=${1:-10000}
parallel=${2:-4}
warm=${BENCH_WARM:-4}

need python3

tmp=$(mktemp -d)
chmod 755 "$tmp"
install -m 755 "$bin" "$tmp/sandbox-run"
mkdir -p "$tmp/agent" "$tmp/state" "$tmp/data"
cp /bin/true "$tmp/agent/agent"
chmod -R a+rX "$tmp/agent"
chmod 700 "$tmp/state" "$tmp/data"

run_as_user -R
as_user+=(SANDBOX_RUN_STATE_DIR="$tmp/state" SANDBOX_RUN_DATA_DIR="$tmp/data")

"${as_user[@]}" "$tmp/sandbox-run" -q deploy --net none --name truth "$tmp/agent"
"${as_user[@]}" "$tmp/sandbox-run" -q serve --warm "$warm" >"$tmp/serve.out" &
serve=$!
trap 'kill -TERM $serve 2>/dev/null; wait $serve 2>/dev/null; rm -rf "$tmp"' EXIT
for _ in $(seq 100); do [ -s "$tmp/serve.out" ] && break; sleep 0.05; done

"${as_user[@]}" python3 - "$tmp/state/serve.sock" "$total" "$parallel" <<'PY'
import http.client, socket, sys, threading, time

sock, total, parallel = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])

class Conn(http.client.HTTPConnection):
    def __init__(self):
        super().__init__("sr", timeout=120)
    def connect(self):
        self.sock = socket.socket(socket.AF_UNIX)
        self.sock.connect(sock)

failed, left, lock = [], [total], threading.Lock()

def worker():
    c = Conn()
    while True:
        with lock:
            if left[0] == 0:
                return
            left[0] -= 1
        c.request("POST", "/v1/deployments/truth/invoke", body=b"")
        r = c.getresponse()
        body = r.read()
        if r.status != 200 or r.getheader("Sandbox-Run-Exit-Code") != "0":
            failed.append((r.status, r.getheader("Sandbox-Run-Exit-Code"),
                           r.getheader("Sandbox-Run-Error") or body[:200]))

t0 = time.perf_counter()
ths = [threading.Thread(target=worker) for _ in range(parallel)]
for t in ths: t.start()
for t in ths: t.join()
dt = time.perf_counter() - t0
print("%d warm invocations, %d at a time, in %.1f s (%.0f/s): %d failed"
      % (total, parallel, dt, total / dt, len(failed)))
for f in failed[:5]:
    print("  failed:", f)
sys.exit(1 if failed else 0)
PY
