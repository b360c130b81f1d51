#!/usr/bin/env bash
# What the /proc views cost a cold start (docs/limits.md, "What the agent
# sees"): a binary from before them (SR_BEFORE) against this one, with the
# default limits (here: /proc/meminfo) and with --cpus 1 (pinned:
# meminfo, stat and cpuinfo), and bubblewrap. Round-robin: each round runs
# every command once, in turn, so that the load of a shared machine falls
# on all of them alike (hyperfine runs one command after the other).
# Medians; prints Markdown for docs/performance.md.
#
#   SR_BEFORE=/path/to/old/sandbox-run bench/views.sh [ROUNDS]
#
# As an unprivileged user (root drops to one): root's cgroup v1 attach
# waits on RCU grace periods that drown the difference.
set -euo pipefail

. "$(dirname "$0")/lib.sh"
rounds=${1:-500}
before=${SR_BEFORE:?SR_BEFORE must name a sandbox-run built without the views}

need bwrap python3

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
chmod 755 "$tmp"
install -m 755 "$bin" "$tmp/after"
install -m 755 "$before" "$tmp/before"

run_as_user

echo "$rounds rounds, $(nproc) CPUs, /dev/fuse $(stat -c %a /dev/fuse 2>/dev/null || echo missing), load average $(cut -d' ' -f1-3 /proc/loadavg):"
echo
"${as_user[@]}" python3 - "$tmp" "$rounds" <<'EOF'
import os, statistics, sys, time
tmp, rounds = sys.argv[1], int(sys.argv[2])
run = ["-q", "--net", "none"]
cmds = [
    ("before, default limits", [f"{tmp}/before", *run, "--", "/bin/true"]),
    ("after, default limits", [f"{tmp}/after", *run, "--", "/bin/true"]),
    ("before, --cpus 1", [f"{tmp}/before", *run, "--cpus", "1", "--", "/bin/true"]),
    ("after, --cpus 1", [f"{tmp}/after", *run, "--cpus", "1", "--", "/bin/true"]),
    ("bubblewrap", ["/usr/bin/bwrap", "--ro-bind", "/", "/", "--unshare-all", "--die-with-parent",
                    "--proc", "/proc", "--dev", "/dev", "/bin/true"]),
]
null = os.open(os.devnull, os.O_RDWR)
fa = [(os.POSIX_SPAWN_DUP2, null, fd) for fd in (0, 1, 2)]
times = {name: [] for name, _ in cmds}
for r in range(rounds + 10):
    for name, argv in cmds:
        t = time.perf_counter()
        os.waitpid(os.posix_spawn(argv[0], argv, os.environ, file_actions=fa), 0)
        if r >= 10:  # warm-up
            times[name].append(time.perf_counter() - t)
bw = statistics.median(times["bubblewrap"])
print("| command | median | quartiles | ratio to bubblewrap |")
print("|---|---|---|---|")
for name, _ in cmds:
    q = statistics.quantiles(times[name], n=4)
    m = statistics.median(times[name])
    print(f"| {name} | {m * 1e3:.2f} ms | {q[0] * 1e3:.2f}–{q[2] * 1e3:.2f} ms | {m / bw:.2f} |")
EOF
