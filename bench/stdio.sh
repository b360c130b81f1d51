#!/usr/bin/env bash
# What relaying regular-file stdio costs (src/cli/stdio-relay.h): a run with
# `< file > file` against the same run with /dev/null, side by side in one
# hyperfine run, and 50 MB through both relays against the host's own `cat`.
# Prints Markdown for docs/performance.md.
#
#   bench/stdio.sh [RUNS]
set -euo pipefail

. "$(dirname "$0")/lib.sh"
runs=${1:-300}
command -v hyperfine >/dev/null || { echo "bench: hyperfine is needed (tools/bootstrap installs it)" >&2; exit 1; }

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
echo "a prompt" >"$tmp/in"
head -c 50000000 /dev/urandom >"$tmp/big"
sr="$bin -q --net none --memory 0 --cpus 0 --pids 0"

hyperfine -N --warmup 20 --runs "$runs" --export-json "$tmp/h.json" \
	-n "stdio /dev/null" "sh -c '$sr -- cat </dev/null >/dev/null'" \
	-n "stdio regular files (relayed)" "sh -c '$sr -- cat <$tmp/in >$tmp/out'" \
	-n "50 MB, host cat" "sh -c 'cat <$tmp/big >$tmp/big.host'" \
	-n "50 MB, through the sandbox" "sh -c '$sr -- cat <$tmp/big >$tmp/big.out'" >&2
cmp -s "$tmp/big" "$tmp/big.out"

echo "$runs runs each, $(nproc) CPUs, load average $(cut -d' ' -f1-3 /proc/loadavg):"
echo
python3 - "$tmp/h.json" <<'PY'
import json, sys
print("| command | median | mean ± σ |")
print("|---|---|---|")
for x in json.load(open(sys.argv[1]))["results"]:
    print(f"| {x['command']} | {x['median']*1e3:.2f} ms | {x['mean']*1e3:.2f} ± {x['stddev']*1e3:.2f} ms |")
PY
