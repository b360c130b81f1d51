#!/usr/bin/env bash
# The API's round trip against cold starts, side by side in one run:
#
#   API, warm    POST /v1/sandboxes (a warm pool's) -> exec /bin/true -> DELETE
#   API, cold    the same with a sandbox made for the request
#   API, warm, http.client   the warm one through Python's http.client
#   CLI, cold    sandbox-run --net none -- /bin/true
#   bubblewrap   bwrap's cold start of /bin/true
#
# p50s, from a client that keeps its connection (as an agent backend
# does), over serve's Unix socket; every sandbox is --net none. The API
# rows are timed with a lean client (bench/rawhttp.py: a request in one
# send, the answer read by its Content-Length), so that they time the
# server; the same warm round through http.client shows what that
# client adds on its side (0.15-0.25 ms a request here). The five
# are measured in turn, round after round, so that each sees the same
# load (the cold commands started as hyperfine -N starts them:
# posix_spawn, no shell), each after a pause of 20 ms in which the
# aftermath of the one before (a sandbox's end) is over. Each round
# starts once the pool is full again (a refill is not timed: it runs
# while a backend waits for its next request, and it must not slow down
# whatever is timed next, bubblewrap included). Then 200 concurrent exec requests across 20 sandboxes (20
# clients at once), none may be lost.
# Prints Markdown for docs/performance.md.
#
#   bench/serve.sh [RUNS]          as an unprivileged user (root drops to one)
#   BENCH_AS=root bench/serve.sh   as root
#   BENCH_PAUSE_MS=0 bench/serve.sh   back to back: no idle time between rounds
#
# Target (issue 21): a warm create + exec <= 0.5 x bubblewrap's cold start.
set -euo pipefail

. "$(dirname "$0")/lib.sh"
runs=${1:-300}

need bwrap python3

tmp=$(mktemp -d)
chmod 755 "$tmp"
install -m 755 "$bin" "$tmp/sandbox-run"
export SANDBOX_RUN_STATE_DIR="$tmp/state"

run_as_user

sock="$tmp/serve.sock"
"${as_user[@]}" SANDBOX_RUN_STATE_DIR="$SANDBOX_RUN_STATE_DIR" "$tmp/sandbox-run" -q serve \
	--listen "unix:$sock" --warm offline=4 --max-sandboxes 64 >"$tmp/serve.out" &
serve=$!
trap 'kill -TERM $serve 2>/dev/null; wait $serve 2>/dev/null; rm -rf "$tmp"' EXIT
for _ in $(seq 100); do [ -s "$tmp/serve.out" ] && break; sleep 0.05; done

"${as_user[@]}" env BENCH_PAUSE_MS="${BENCH_PAUSE_MS:-20}" python3 - "$sock" "$runs" "$tmp/sandbox-run" "$here/bench" <<'EOF'
import http.client, json, os, socket, statistics, sys, threading, time

sock, runs, sr = sys.argv[1], int(sys.argv[2]), sys.argv[3]
sys.path.insert(0, sys.argv[4])
import rawhttp
null = os.open("/dev/null", os.O_RDWR)

class Conn(http.client.HTTPConnection):
    def __init__(self):
        super().__init__("sr", timeout=120)
    def connect(self):
        self.sock = socket.socket(socket.AF_UNIX)
        self.sock.connect(sock)

# c: a lean client (rawhttp.Conn) or Python's http.client.
def call(c, method, path, body=None):
    if isinstance(c, rawhttp.Conn):
        status, _, data = c.request(method, path, body)
    else:
        c.request(method, path, body=json.dumps(body) if body is not None else None)
        r = c.getresponse()
        status, data = r.status, r.read()
    if status >= 300:
        raise RuntimeError("%s %s: %d %s" % (method, path, status, data[:200]))
    return json.loads(data) if data else None

c = rawhttp.Conn(sock)
hc = Conn()

def pool_full():
    p = call(c, "GET", "/v1/pools")["pools"][0]
    return p["ready"] == p["size"]

def wait_pool():
    for _ in range(2000):
        if pool_full():
            return
        time.sleep(0.005)

def round_trip(body, c=c):
    t0 = time.perf_counter()
    sb = call(c, "POST", "/v1/sandboxes", body)["id"]
    t1 = time.perf_counter()
    r = call(c, "POST", "/v1/sandboxes/%s/exec" % sb, {"argv": ["/bin/true"]})
    t2 = time.perf_counter()
    call(c, "DELETE", "/v1/sandboxes/%s" % sb)
    t3 = time.perf_counter()
    assert r["exit_code"] == 0, r
    return t1 - t0, t2 - t1, t3 - t2, t2 - t0, t3 - t0

# A command started as hyperfine -N starts it (posix_spawn, no shell), until it has been reaped.
def cold(argv):
    t = time.perf_counter()
    pid = os.posix_spawn(argv[0], argv, {}, file_actions=[(os.POSIX_SPAWN_DUP2, null, 0),
                                                          (os.POSIX_SPAWN_DUP2, null, 1)])
    _, st = os.waitpid(pid, 0)
    assert st == 0, (argv, st)
    return time.perf_counter() - t

bwrap = ["/usr/bin/bwrap", "--ro-bind", "/", "/", "--unshare-all", "--die-with-parent",
         "--proc", "/proc", "--dev", "/dev", "/bin/true"]
cli = [sr, "-q", "--net", "none", "--", "/bin/true"]
# Interleaved, round after round, so that every column sees the same load;
# each once the pool is full again (a warm take's refill starts 50 ms after
# it, src/lib/pool.c: it must not overlap whatever is timed then, ours or
# bubblewrap's), then after a pause in which the last one's aftermath (a
# sandbox's end) is over, so that none pays for another.
pause = float(os.environ.get("BENCH_PAUSE_MS", "20")) / 1000

def settled(f, *a):
    wait_pool()
    time.sleep(pause)
    return f(*a)

rows = {"API, warm": [], "API, cold": [], "API, warm, http.client": [], "cli": [], "bwrap": []}
for i in range(runs + 20):
    w = settled(round_trip, {"profile": "offline"})
    k = settled(round_trip, {"net": "none"})
    h = settled(round_trip, {"profile": "offline"}, hc)
    b = settled(cold, bwrap)
    s = settled(cold, cli)
    if i >= 20:
        rows["API, warm"].append(w)
        rows["API, cold"].append(k)
        rows["API, warm, http.client"].append(h)
        rows["bwrap"].append(b)
        rows["cli"].append(s)
taken = call(c, "GET", "/v1/pools")["pools"][0]["taken"]
bw = statistics.median(rows["bwrap"]) * 1e3
cl = statistics.median(rows["cli"]) * 1e3

print("| p50 | create | exec /bin/true | delete | create + exec | create + exec + delete | create + exec / bubblewrap |")
print("|---|---|---|---|---|---|---|")
for name in ("API, warm", "API, cold", "API, warm, http.client"):
    cr, ex, rm, ce, all_ = (statistics.median(col) * 1e3 for col in zip(*rows[name]))
    print("| %s | %.2f ms | %.2f ms | %.2f ms | %.2f ms | %.2f ms | **%.2f** |" % (name, cr, ex, rm, ce, all_, ce / bw))
print("| `sandbox-run --net none -- /bin/true` (cold, CLI) | | | | %.2f ms | | %.2f |" % (cl, cl / bw))
print("| bubblewrap (cold) | | | | %.2f ms | | 1.00 |" % bw)
print()
print("(%d rounds each, interleaved, %g ms apart; %d of the warm creates served by the pool.)"
      % (runs, pause * 1000, taken))

# 200 concurrent exec requests across 20 sandboxes.
sbs = [call(c, "POST", "/v1/sandboxes", {"net": "none"})["id"] for _ in range(20)]
lat, bad = [], []
lock = threading.Lock()

def client(k):
    cc = Conn()
    for i in range(10):
        n = k * 10 + i
        t = time.perf_counter()
        try:
            r = call(cc, "POST", "/v1/sandboxes/%s/exec" % sbs[n % 20], {"argv": ["echo", str(n)]})
            ok = r["exit_code"] == 0 and r["stdout"] == "%d\n" % n
        except Exception as e:
            ok, r = False, repr(e)
        with lock:
            lat.append(time.perf_counter() - t)
            if not ok:
                bad.append((n, r))

t0 = time.perf_counter()
threads = [threading.Thread(target=client, args=(k,)) for k in range(20)]
for t in threads: t.start()
for t in threads: t.join()
wall = time.perf_counter() - t0
for sb in sbs:
    call(c, "DELETE", "/v1/sandboxes/%s" % sb)
lat.sort()
print()
print("200 exec requests across 20 sandboxes, 20 clients at once: %d answered right, %d lost or wrong; "
      "%.0f ms in all (%.0f requests/s), latency p50 %.1f ms, p99 %.1f ms."
      % (len(lat) - len(bad), len(bad), wall * 1e3, len(lat) / wall, lat[len(lat) // 2] * 1e3,
         lat[int(len(lat) * 0.99)] * 1e3))
if bad:
    print("lost:", bad[:5])
    sys.exit(1)
EOF
echo
echo "As $who, $runs rounds each, $(nproc) CPUs, load average $(cut -d' ' -f1-3 /proc/loadavg)."
