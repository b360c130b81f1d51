#!/usr/bin/env bash
# Cold start of a fresh sandbox against bubblewrap, measured side by side
# in the same run (hyperfine, medians), as an unprivileged user; plus
# sandbox-run's own peak RSS. Prints a Markdown table for docs/performance.md.
#
#   bench/startup.sh [RUNS]        (as root it drops to an unprivileged user)
#
# Both run /bin/true with every namespace new. bubblewrap's command is the
# reference one: --ro-bind / / --unshare-all --die-with-parent --proc /proc --dev /dev.
set -euo pipefail

here=$(cd "$(dirname "$0")/.." && pwd)
runs=${1:-500}
bin=${SR_BIN:-$here/src/sandbox-run}
user=${BENCH_USER:-sr-test}

for tool in hyperfine bwrap python3 /usr/bin/time; do
	command -v "$tool" >/dev/null || { echo "bench: $tool is needed (tools/bootstrap installs it)" >&2; exit 1; }
done

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
chmod 755 "$tmp"
install -m 755 "$bin" "$tmp/sandbox-run"

as_user=()
if [ "$(id -u)" = 0 ]; then
	id -u "$user" >/dev/null 2>&1 || useradd --system --no-create-home --home-dir /nonexistent --shell /usr/sbin/nologin "$user"
	chown "$user" "$tmp"
	as_user=(setpriv --reuid="$user" --regid="$user" --clear-groups -- env HOME="$tmp")
fi

sr_cmd="$tmp/sandbox-run -q --net none -- /bin/true"
sr_full="$tmp/sandbox-run -q -p offline -- /bin/true"
bw_cmd="bwrap --ro-bind / / --unshare-all --die-with-parent --proc /proc --dev /dev /bin/true"

"${as_user[@]}" hyperfine -N --warmup 50 --runs "$runs" --export-json "$tmp/h.json" \
	-n sandbox-run "$sr_cmd" -n "sandbox-run -p offline" "$sr_full" -n bubblewrap "$bw_cmd" >&2

python3 - "$tmp/h.json" <<'EOF'
import json, sys
r = {x["command"]: x for x in json.load(open(sys.argv[1]))["results"]}
bw = r["bubblewrap"]["median"]
print("| command | median | mean ± σ | ratio to bubblewrap (median) |")
print("|---|---|---|---|")
for name in ("sandbox-run", "sandbox-run -p offline", "bubblewrap"):
    x = r[name]
    print(f"| {name} | {x['median']*1e3:.2f} ms | {x['mean']*1e3:.2f} ± {x['stddev']*1e3:.2f} ms | {x['median']/bw:.2f} |")
EOF

# Peak RSS, from GNU time: the largest of sandbox-run and what it reaped
# (its PID 1 is a fork of it; the agent is /bin/true), so an upper bound of
# sandbox-run's own.
for name in sandbox-run bubblewrap; do
	cmd=$sr_cmd
	[ "$name" = bubblewrap ] && cmd=$bw_cmd
	# shellcheck disable=SC2086
	kib=$("${as_user[@]}" /usr/bin/time -f %M $cmd 2>&1 >/dev/null | tail -1)
	echo "peak RSS of $name: $kib KiB"
done
