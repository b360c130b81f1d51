#!/usr/bin/env bash
# Getting work out, measured (docs/performance.md, "Disk and artifacts"):
#
#   1. cold start with each disk backing (tmpfs, the host's disk) against
#      bubblewrap, side by side in one hyperfine run;
#   2. --export of a tree of 10,000 small files against cp -a of the same
#      tree: the export's cost is the run with it less the same run without.
#
#   bench/artifacts.sh [RUNS]          as an unprivileged user (root drops to one)
#   BENCH_AS=root bench/artifacts.sh   as root (the disk is then an ext4 image)
#   BENCH_PARTS=start (or export)      one part only
#
# Prints Markdown. Medians: a shared 2-CPU VM moves by +-20 % minute to minute.
set -euo pipefail

. "$(dirname "$0")/lib.sh"
runs=${1:-200}
files=${BENCH_FILES:-10000}

need hyperfine bwrap python3

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
chmod 755 "$tmp"
install -m 755 "$bin" "$tmp/sandbox-run"
mkdir -m 700 "$tmp/data" "$tmp/state"

run_as_user -R
env=(env SANDBOX_RUN_DATA_DIR="$tmp/data" SANDBOX_RUN_STATE_DIR="$tmp/state")

# A tree of small files, as a test suite's output or a node_modules has them.
tree="$tmp/ws/tree"
python3 - "$tree" "$files" <<'EOF'
import os, sys
root, n = sys.argv[1], int(sys.argv[2])
for i in range(n):
    d = os.path.join(root, f"d{i // 100:03d}")
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, f"f{i % 100:02d}.txt"), "w") as f:
        f.write(f"file {i}\n" * 8)
EOF
[ "$who" = "$(id -un)" ] || chown -R "$user:$(id -gn "$user")" "$tmp/ws"

sr="${env[*]} $tmp/sandbox-run -q --net none"
# Warm the template of the ext4 image (made once per size, then kept).
"${as_user[@]}" "${env[@]}" "$tmp/sandbox-run" -q --net none --disk-backing disk -- true 2>/dev/null || true

parts=${BENCH_PARTS:-start export}
if [[ " $parts " == *" start "* ]]; then
echo "### Cold start by disk backing, as $who ($runs runs each, $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg))"
echo
"${as_user[@]}" hyperfine -N --warmup 20 --runs "$runs" --export-json "$tmp/start.json" \
	-n "tmpfs (--disk-backing memory)" "$sr --disk-backing memory -- /bin/true" \
	-n "host's disk (--disk-backing disk)" "$sr --disk-backing disk -- /bin/true" \
	-n "default (--disk-backing auto)" "$sr -- /bin/true" \
	-n bubblewrap "bwrap --ro-bind / / --unshare-all --die-with-parent --proc /proc --dev /dev /bin/true" >&2 \
	2> >(grep -v 'warning: disk limit not enforced' >&2)
python3 - "$tmp/start.json" <<'EOF'
import json, sys
res = json.load(open(sys.argv[1]))["results"]
ref = res[0]["median"]
bw = next(x for x in res if x["command"] == "bubblewrap")["median"]
print("| command | median | mean ± σ | to tmpfs | to bubblewrap |")
print("|---|---|---|---|---|")
for x in res:
    print(f"| {x['command']} | {x['median']*1e3:.2f} ms | {x['mean']*1e3:.2f} ± {x['stddev']*1e3:.2f} ms "
          f"| {x['median']/ref:.2f} | {x['median']/bw:.2f} |")
EOF
fi
if [[ " $parts " == *" export "* ]]; then
echo
echo "### --export of $files small files against cp -a, as $who"
echo
out="$tmp/out"
"${as_user[@]}" hyperfine -N --warmup 3 --runs "${BENCH_EXPORT_RUNS:-20}" --export-json "$tmp/export.json" \
	--prepare "rm -rf $out" \
	-n "run with --export tree" "$sr --disk-backing memory --workspace $tmp/ws --export tree:$out -- /bin/true" \
	-n "the same run without" "$sr --disk-backing memory --workspace $tmp/ws -- /bin/true" \
	-n "cp -a" "cp -a $tree $out" >&2
python3 - "$tmp/export.json" "$files" <<'EOF'
import json, sys
res = {x["command"]: x["median"] for x in json.load(open(sys.argv[1]))["results"]}
with_, without, cp = res["run with --export tree"], res["the same run without"], res["cp -a"]
export = with_ - without
print("| | median |")
print("|---|---|")
print(f"| run with --export | {with_*1e3:.1f} ms |")
print(f"| the same run without | {without*1e3:.1f} ms |")
print(f"| **the export** (difference) | **{export*1e3:.1f} ms** |")
print(f"| cp -a of the same tree | {cp*1e3:.1f} ms |")
print(f"| export / cp -a | **{export/cp:.2f}** |")
EOF
fi
