#!/usr/bin/env bash
# Warm invocations (serve --warm N) against cold starts, side by side in
# one run (issue 20):
#
#   invoke, warm (CLI)   sandbox-run invoke NAME, a server running
#   invoke, warm (API)   POST /v1/deployments/NAME/invoke from a client that
#                        keeps its connection (an agent backend): a lean one
#                        (bench/rawhttp.py), which times the server
#   invoke, warm (API, http.client)   the same through Python's http.client,
#                        for what that client adds on its side
#   invoke, cold         sandbox-run invoke NAME, no server
#   run, cold            sandbox-run --net none -- /bin/true
#   bubblewrap           bwrap's cold start of /bin/true
#
# The deployment is a /bin/true-like agent (a copy of /bin/true as its
# `agent`), deployed --net none, as bubblewrap's reference has no network.
#
# 1. Latency: p50 over RUNS invocations each, interleaved round after
#    round so that every column sees the same load, each after a pause of
#    BENCH_PAUSE_MS (20) in which the last one's aftermath is over, and
#    once the pool is full again (a backend's requests come with idle time
#    between them; a refill, 50 ms after a take, must not overlap whatever
#    is timed then, bubblewrap included). Commands are started as hyperfine -N
#    starts them (posix_spawn, no shell), and timed until reaped.
# 2. Throughput: TOTAL invocations (2,000), 4 at a time, back to back: the
#    warm ones wait for the pool's refill when it runs dry (that is the
#    point), against bubblewrap's and a cold run's runs per second at the
#    same parallelism.
#
#   bench/invoke.sh [RUNS] [TOTAL]     as an unprivileged user (root drops to one)
#   BENCH_AS=root bench/invoke.sh      as root
#   BENCH_WARM=N                       the pool's size (default 4)
#
# Targets (issue 20): warm p50 <= 0.35 x bubblewrap's cold start;
# invocations per second at 4 in parallel >= 2 x bubblewrap's.
# Prints Markdown for docs/performance.md.
set -euo pipefail

. "$(dirname "$0")/lib.sh"
runs=${1:-1000}
total=${2:-2000}
warm=${BENCH_WARM:-4}

need bwrap python3

tmp=$(mktemp -d)
chmod 755 "$tmp"
install -m 755 "$bin" "$tmp/sandbox-run"
deploy_truth
"${as_user[@]}" "$tmp/sandbox-run" -q serve --warm "$warm" >"$tmp/serve.out" &
serve=$!
trap 'kill -TERM $serve 2>/dev/null; wait $serve 2>/dev/null; rm -rf "$tmp"' EXIT
for _ in $(seq 100); do [ -s "$tmp/serve.out" ] && break; sleep 0.05; done

"${as_user[@]}" env BENCH_PAUSE_MS="${BENCH_PAUSE_MS:-20}" BENCH_COLD_STATE="$tmp/cold-state" \
	python3 - "$tmp/state/serve.sock" "$runs" "$total" "$tmp/sandbox-run" "$warm" "$here/bench" <<'EOF'
import http.client, json, os, socket, statistics, sys, threading, time

sock, runs, total, sr, warm = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4], int(sys.argv[5])
sys.path.insert(0, sys.argv[6])
import rawhttp
null = os.open("/dev/null", os.O_RDWR)
pause = float(os.environ["BENCH_PAUSE_MS"]) / 1000
env_warm = dict(os.environ)
env_cold = dict(os.environ, SANDBOX_RUN_STATE_DIR=os.environ["BENCH_COLD_STATE"])

class Conn(http.client.HTTPConnection):
    def __init__(self):
        super().__init__("sr", timeout=120)
    def connect(self):
        self.sock = socket.socket(socket.AF_UNIX)
        self.sock.connect(sock)

ctl = Conn()

def pools():
    ctl.request("GET", "/v1/pools")
    return json.loads(ctl.getresponse().read())["deployments"]

def pool_full():
    return any(p["deployment"] == "truth" and p["ready"] >= warm for p in pools())

def wait_full():
    for _ in range(4000):
        if pool_full():
            return
        time.sleep(0.002)

failed = []

# c: a lean client (rawhttp.Conn) or Python's http.client.
def api(c):
    t = time.perf_counter()
    if isinstance(c, rawhttp.Conn):
        status, headers, body = c.request("POST", "/v1/deployments/truth/invoke", b"")
    else:
        c.request("POST", "/v1/deployments/truth/invoke", body=b"")
        r = c.getresponse()
        body = r.read()
        status, headers = r.status, {k.lower(): v for k, v in r.getheaders()}
    elapsed = time.perf_counter() - t
    # Counted and reported, not fatal: one lost among thousands says more in the table.
    if status != 200 or headers.get("sandbox-run-exit-code") != "0":
        failed.append((status, headers.get("sandbox-run-exit-code"),
                       headers.get("sandbox-run-error") or body[:200]))
    return elapsed

# As hyperfine -N starts a command: posix_spawn, no shell, timed until reaped.
def spawn(argv, env):
    t = time.perf_counter()
    pid = os.posix_spawn(argv[0], argv, env, file_actions=[(os.POSIX_SPAWN_DUP2, null, 0),
                                                           (os.POSIX_SPAWN_DUP2, null, 1)])
    _, st = os.waitpid(pid, 0)
    assert st == 0, (argv, st)
    return time.perf_counter() - t

bwrap = ["/usr/bin/bwrap", "--ro-bind", "/", "/", "--unshare-all", "--die-with-parent",
         "--proc", "/proc", "--dev", "/dev", "/bin/true"]
run_cold = [sr, "-q", "--net", "none", "--", "/bin/true"]
invoke = [sr, "-q", "invoke", "truth"]

cols = ["invoke, warm (CLI)", "invoke, warm (API)", "invoke, warm (API, http.client)",
        "invoke, cold", "run, cold", "bubblewrap"]
rows = {k: [] for k in cols}
c = rawhttp.Conn(sock)
hc = Conn()

def settled(f, *a):
    wait_full()
    time.sleep(pause)
    return f(*a)

for i in range(runs + 20):
    res = [settled(spawn, invoke, env_warm), settled(api, c), settled(api, hc),
           settled(spawn, invoke, env_cold), settled(spawn, run_cold, env_cold),
           settled(spawn, bwrap, env_cold)]
    if i >= 20:
        for k, v in zip(cols, res):
            rows[k].append(v)
taken = sum(p["taken"] for p in pools() if p["deployment"] == "truth")
bw = statistics.median(rows["bubblewrap"])
print("| p50 over %d | median | p90 | / bubblewrap |" % runs)
print("|---|---|---|---|")
for k in cols:
    v = sorted(rows[k])
    print("| %s | %.2f ms | %.2f ms | **%.2f** |" % (k, statistics.median(v) * 1e3,
                                                    v[int(len(v) * 0.9)] * 1e3,
                                                    statistics.median(v) / bw))
print()
print("(%d rounds, interleaved, %g ms apart; %d warm invocations served by the pool.)"
      % (runs, pause * 1000, taken))

# Throughput: `total` each, 4 at a time, back to back.
def parallel(one, n=4):
    left = [total]
    lock = threading.Lock()
    def worker():
        cc = rawhttp.Conn(sock)
        while True:
            with lock:
                if left[0] == 0:
                    return
                left[0] -= 1
            one(cc)
    t0 = time.perf_counter()
    ths = [threading.Thread(target=worker) for _ in range(n)]
    for t in ths: t.start()
    for t in ths: t.join()
    return total / (time.perf_counter() - t0)

wait_full()
tp = {}
tp["invoke, warm (CLI)"] = parallel(lambda cc: spawn(invoke, env_warm))
wait_full()
tp["invoke, warm (API)"] = parallel(api)
tp["run, cold"] = parallel(lambda cc: spawn(run_cold, env_cold))
tp["bubblewrap"] = parallel(lambda cc: spawn(bwrap, env_cold))
print()
print("| %d invocations, 4 at a time | per second | / bubblewrap |" % total)
print("|---|---|---|")
for k, v in tp.items():
    print("| %s | %.0f | **%.2f** |" % (k, v, v / tp["bubblewrap"]))
if failed:
    print()
    print("%d warm API invocations failed, e.g. %s" % (len(failed), failed[0]))
EOF
echo
echo "As $who, $(nproc) CPUs, serve --warm $warm, load average $(cut -d' ' -f1-3 /proc/loadavg)."
