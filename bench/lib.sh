# shellcheck shell=bash
# What the bench scripts share; each sources it first:
#
#   here, bin, user    the source tree, the binary ($SR_BIN, else the
#                      build's), the unprivileged account ($BENCH_USER,
#                      else sr-test)
#   need TOOL...       each on PATH, or one line saying which is not, and exit 1
#   run_as_user [-R]   as root, unless BENCH_AS=root, the runs are $user's
#                      (made if missing): $tmp becomes its (-R: with all in
#                      it), as_user is the command prefix that runs as it
#                      and who its name; otherwise as_user=(env), who ours
#   deploy_truth       in $tmp: a /bin/true-like agent deployed --net none
#                      as "truth" by $tmp/sandbox-run, with state, data and
#                      a cold run's state directories; as_user runs there
#   bubblewrap_table FILE  hyperfine's --export-json FILE as a Markdown
#                      table: each command's median and mean, and its median
#                      against the one named "bubblewrap"
here=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
bin=${SR_BIN:-$here/src/sandbox-run}
user=${BENCH_USER:-sr-test}

need() {
	local tool
	for tool in "$@"; do
		command -v "$tool" >/dev/null || {
			echo "bench: $tool is needed (tools/bootstrap installs it)" >&2
			exit 1
		}
	done
}

run_as_user() {
	as_user=(env)
	who=$(id -un)
	[ "$(id -u)" = 0 ] && [ "${BENCH_AS:-user}" != root ] || return 0
	id -u "$user" >/dev/null 2>&1 ||
		useradd --system --no-create-home --home-dir /nonexistent --shell /usr/sbin/nologin "$user"
	chown ${1:+"$1"} "$user:$(id -gn "$user")" "$tmp"
	as_user=(setpriv --reuid="$user" --regid="$user" --clear-groups -- env HOME="$tmp")
	who=$user
}

deploy_truth() {
	mkdir -p "$tmp/agent" "$tmp/state" "$tmp/cold-state" "$tmp/data"
	cp /bin/true "$tmp/agent/agent"
	chmod -R a+rX "$tmp/agent"
	chmod 700 "$tmp/state" "$tmp/cold-state" "$tmp/data"
	run_as_user -R
	as_user+=(SANDBOX_RUN_STATE_DIR="$tmp/state" SANDBOX_RUN_DATA_DIR="$tmp/data")
	"${as_user[@]}" "$tmp/sandbox-run" -q deploy --net none --name truth "$tmp/agent"
}

bubblewrap_table() {
	python3 - "$1" <<'EOF'
import json, sys
res = json.load(open(sys.argv[1]))["results"]
bw = next(x for x in res if x["command"] == "bubblewrap")["median"]
print("| command | median | mean ± σ | ratio to bubblewrap (median) |")
print("|---|---|---|---|")
for x in res:
    print(f"| {x['command']} | {x['median']*1e3:.2f} ms | {x['mean']*1e3:.2f} ± {x['stddev']*1e3:.2f} ms | {x['median']/bw:.2f} |")
EOF
}
