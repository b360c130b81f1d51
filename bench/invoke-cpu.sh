#!/usr/bin/env bash
# The CPU time one warm invocation costs the host, against one cold run
# and one bubblewrap run: what bounds bench/invoke.sh's throughput on a
# saturated host.
#
# Every process counts: the server, each keeper, PID 1 and the agent,
# and the keepers' and middle processes of the double fork, which are
# reparented to this script's Python (a child subreaper, PR_SET_CHILD_SUBREAPER)
# and reaped by it: getrusage(RUSAGE_CHILDREN) after all of them are
# gone. A server that makes its pool and stops is run first and its CPU
# taken off (the pool's making, the refill after the last invocation).
# Kernel threads (writeback, a namespace's cleanup) are not counted.
#
#   bench/invoke-cpu.sh [N]        N warm invocations (POST .../invoke, one at a
#                                  time, 500), then N cold runs and N bubblewrap runs
#   SR_BIN_BEFORE=PATH             also a warm round with that binary, first
#
# Prints Markdown.
set -euo pipefail

. "$(dirname "$0")/lib.sh"
n=${1:-500}

need bwrap python3

tmp=$(mktemp -d)
chmod 755 "$tmp"
trap 'rm -rf "$tmp"' EXIT
install -m 755 "$bin" "$tmp/sandbox-run"
[ -z "${SR_BIN_BEFORE:-}" ] || install -m 755 "$SR_BIN_BEFORE" "$tmp/sandbox-run-before"
deploy_truth
"${as_user[@]}" env BENCH_COLD_STATE="$tmp/cold-state" \
	python3 - "$tmp" "$n" "$here/bench" <<'EOF'
import ctypes, json, os, resource, signal, sys, time

tmp, n = sys.argv[1], int(sys.argv[2])
sys.path.insert(0, sys.argv[3])
import rawhttp

PR_SET_CHILD_SUBREAPER = 36
ctypes.CDLL(None).prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
sock = tmp + "/state/serve.sock"
null = os.open("/dev/null", os.O_RDWR)
env_cold = dict(os.environ, SANDBOX_RUN_STATE_DIR=os.environ["BENCH_COLD_STATE"])


def reap_all():
    while True:
        try:
            os.waitpid(-1, 0)
        except ChildProcessError:
            return


def cpu():
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def served(sr, count):
    """CPU of a server over its whole life, `count` invocations in it."""
    c0 = cpu()
    out = os.open(tmp + "/serve.out", os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
    pid = os.posix_spawn(sr, [sr, "-q", "serve", "--warm", "4"], dict(os.environ),
                         file_actions=[(os.POSIX_SPAWN_DUP2, out, 1)])
    os.close(out)
    for _ in range(400):
        if os.path.exists(sock) and os.path.getsize(tmp + "/serve.out"):
            break
        time.sleep(0.025)
    c = rawhttp.Conn(sock)

    def full():
        for _ in range(5000):
            _, _, b = c.request("GET", "/v1/pools")
            if any(p["deployment"] == "truth" and p["ready"] >= 4
                   for p in json.loads(b)["deployments"]):
                return
            time.sleep(0.005)

    # The pool is made at the first request for the deployment.
    c.request("POST", "/v1/deployments/truth/invoke", b"")
    full()
    for _ in range(count):
        status, headers, _ = c.request("POST", "/v1/deployments/truth/invoke", b"")
        assert status == 200 and headers.get("sandbox-run-exit-code") == "0", (status, headers)
    full()
    os.kill(pid, signal.SIGTERM)
    reap_all()
    return cpu() - c0


def spawned(argv, count):
    c0 = cpu()
    for _ in range(count):
        p = os.posix_spawn(argv[0], argv, env_cold, file_actions=[
            (os.POSIX_SPAWN_DUP2, null, 0), (os.POSIX_SPAWN_DUP2, null, 1)])
        os.waitpid(p, 0)
    reap_all()
    return (cpu() - c0) / count


rows = []
for label, sr in (("invoke, warm (API), before", tmp + "/sandbox-run-before"),
                  ("invoke, warm (API)", tmp + "/sandbox-run")):
    if os.path.exists(sr):
        rows.append((label, (served(sr, n) - served(sr, 0)) / n))
sr = tmp + "/sandbox-run"
rows.append(("run, cold", spawned([sr, "-q", "--net", "none", "--", "/bin/true"], n)))
bw = spawned(["/usr/bin/bwrap", "--ro-bind", "/", "/", "--unshare-all", "--die-with-parent",
              "--proc", "/proc", "--dev", "/dev", "/bin/true"], n)
rows.append(("bubblewrap", bw))
print("| CPU per invocation (%d each) | user + sys | / bubblewrap |" % n)
print("|---|---|---|")
for label, v in rows:
    print("| %s | %.2f ms | **%.2f** |" % (label, v * 1e3, v / bw))
EOF
echo
echo "As $who, $(nproc) CPUs, load average $(cut -d' ' -f1-3 /proc/loadavg)."
