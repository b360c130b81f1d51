#!/usr/bin/env bash
# The cost of egress by name (docs/network.md, "Names"), each number
# against a peer measured in the same run. Prints Markdown.
#
#   sudo bench/names.sh [RUNS] [QUERIES]     (root: it builds the test network)
#
# - Start-up: `sandbox-run -q --net egress --allow NAME x 20 -- /bin/true`
#   against `sandbox-run -q --net egress -- /bin/true`, interleaved,
#   RUNS (default 300) of each, wall time from fork to exit; medians and
#   the median of the paired differences. BASE_BIN=OTHER-BINARY adds the
#   same plain egress start-up of another build (before the resolver and
#   the record existed) to the interleaving.
# - DNS answer latency: QUERIES (default 500) A queries for an allowed
#   name, one at a time, from inside a sandbox to its resolver (which asks
#   the upstream, then has the answer's address put into the policy's set
#   before it answers), against the same queries to the upstream itself:
#   from the host, and from a plain egress sandbox through the helper's
#   DNS forwarder (10.0.2.3). Medians and 90th percentiles. And a refused
#   name, which goes nowhere. And the first answer of a run, which also
#   starts the resolver (it starts on the agent's first query): 30 runs,
#   against the second answer of each.
#
# Everything runs in two network namespaces made here (A: sandbox-run's
# "host", B: the upstream DNS server, the tests' own dnsd.py), removed on
# exit: no packet leaves them.
set -euo pipefail

. "$(dirname "$0")/lib.sh"
runs=${1:-300}
queries=${2:-500}
base=${BASE_BIN:-}

if [ "$(id -u)" != 0 ]; then
	echo "bench: run as root (it builds the test network in network namespaces)" >&2
	exit 1
fi
for tool in python3 ip nsenter unshare; do
	command -v "$tool" >/dev/null || { echo "bench: $tool is needed" >&2; exit 1; }
done

tmp=$(mktemp -d)
chmod 755 "$tmp"
install -m 755 "$bin" "$tmp/sandbox-run"
[ -n "$base" ] && install -m 755 "$base" "$tmp/sandbox-run-base"
pids=()
cleanup() {
	local p
	for p in "${pids[@]}"; do kill -9 "$p" 2>/dev/null || true; done
	wait 2>/dev/null || true
	rm -rf "$tmp"
}
trap cleanup EXIT

hold() {
	unshare "$@" sleep infinity </dev/null >/dev/null 2>&1 &
	pids+=($!)
	held=$!
	local i
	for i in $(seq 100); do
		[ "$(readlink "/proc/$held/ns/net")" != "$(readlink /proc/self/ns/net)" ] && return 0
		sleep 0.01
	done
	return 1
}

hold --net --mount --propagation private
a=$held
hold --net
b=$held
nsenter -t "$a" -n sh -c "ip link set lo up && ip link add a0 type veth peer name b0 netns $b &&
	ip addr add 192.0.2.1/24 dev a0 && ip link set a0 up && ip route add default via 192.0.2.2 &&
	ip -6 addr add 2001:db8:a::1/64 dev a0 nodad && ip -6 route add default via 2001:db8:a::2"
nsenter -t "$b" -n sh -c "ip link set lo up && ip addr add 192.0.2.2/24 dev b0 && ip link set b0 up &&
	ip addr add 198.51.100.53/32 dev b0 && ip route add default via 192.0.2.1 &&
	ip -6 addr add 2001:db8:a::2/64 dev b0 nodad"
echo "nameserver 198.51.100.53" >"$tmp/resolv.conf"
chmod 644 "$tmp/resolv.conf"
nsenter -t "$a" -m mount --bind "$tmp/resolv.conf" /etc/resolv.conf
echo "api.bench A 198.51.100.10 60" >"$tmp/zone"
nsenter -t "$b" -n python3 "$here/tests/integration/dnsd.py" 198.51.100.53 "$tmp/zone" /dev/null \
	</dev/null >/dev/null 2>&1 &
pids+=($!)
sleep 0.5

allow=()
for i in $(seq 20); do allow+=(--allow "name$i.bench.example"); done

# Start-up, interleaved.
nsenter -t "$a" -n -m python3 - "$tmp" "$runs" "${allow[@]}" <<'EOF'
import os, statistics, subprocess, sys, time
tmp, runs, allow = sys.argv[1], int(sys.argv[2]), sys.argv[3:]
sr = tmp + "/sandbox-run"
cmds = {"plain": [sr, "-q", "--net", "egress", "--", "/bin/true"],
        "names": [sr, "-q", "--net", "egress"] + allow + ["--", "/bin/true"]}
if os.path.exists(tmp + "/sandbox-run-base"):
    cmds["base"] = [tmp + "/sandbox-run-base", "-q", "--net", "egress", "--", "/bin/true"]
t = {k: [] for k in cmds}
for c in cmds.values():  # warm-up
    subprocess.run(c, check=True)
for i in range(runs):
    for k, c in cmds.items():
        s = time.perf_counter_ns()
        subprocess.run(c, check=True)
        t[k].append((time.perf_counter_ns() - s) / 1e6)
med = {k: statistics.median(v) for k, v in t.items()}
diff = statistics.median([n - p for n, p in zip(t["names"], t["plain"])])
print("| start-up (%d runs each, interleaved) | median |" % runs)
print("|---|---|")
print("| `--net egress` | %.2f ms |" % med["plain"])
print("| `--net egress` + 20 `--allow NAME` | %.2f ms |" % med["names"])
print("| extra (median of paired differences) | **%+.2f ms** |" % diff)
if "base" in t:
    print("| `--net egress`, base build | %.2f ms (this build %+.2f ms) |" %
          (med["base"], statistics.median([p - b for p, b in zip(t["plain"], t["base"])])))
print()
EOF

# DNS latency: the same client, three paths.
cat >"$tmp/lat.py" <<'EOF'
import socket, statistics, struct, sys, time
server, name, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
q = struct.pack('>HHHHHH', 0x4242, 0x0100, 1, 0, 0, 0)
for label in name.split('.'):
    q += bytes([len(label)]) + label.encode()
q += b'\0' + struct.pack('>HH', 1, 1)
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.settimeout(3)
s.connect((server, 53))
t = []
for i in range(n + 20):
    st = time.perf_counter_ns()
    s.send(q)
    s.recv(4096)
    if i >= 20:
        t.append((time.perf_counter_ns() - st) / 1e3)
t.sort()
print("%.0f %.0f" % (statistics.median(t), t[int(len(t) * 0.9)]))
EOF
chmod 644 "$tmp/lat.py"
cat >"$tmp/first.py" <<'EOF'
import socket, struct, sys, time
def ask(name):
    q = struct.pack('>HHHHHH', 0x4242, 0x0100, 1, 0, 0, 0)
    for label in name.split('.'):
        q += bytes([len(label)]) + label.encode()
    q += b'\0' + struct.pack('>HH', 1, 1)
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.settimeout(3)
    st = time.perf_counter_ns()
    s.sendto(q, ('127.0.0.53', 53))
    s.recv(4096)
    return (time.perf_counter_ns() - st) / 1e3
print("%.0f %.0f" % (ask('api.bench'), ask('api.bench')))
EOF
mkdir -p "$tmp/ws"
cp "$tmp/lat.py" "$tmp/first.py" "$tmp/ws/"
chmod -R a+rX "$tmp/ws"
direct=$(nsenter -t "$a" -n -m python3 "$tmp/lat.py" 198.51.100.53 api.bench "$queries")
helper=$(nsenter -t "$a" -n -m "$tmp/sandbox-run" -q --net egress --workspace "$tmp/ws" -- \
	python3 lat.py 10.0.2.3 api.bench "$queries")
resolver=$(nsenter -t "$a" -n -m "$tmp/sandbox-run" -q --net egress --allow api.bench \
	--workspace "$tmp/ws" -- python3 lat.py 127.0.0.53 api.bench "$queries")
refused=$(nsenter -t "$a" -n -m "$tmp/sandbox-run" -q --net egress --allow api.bench \
	--workspace "$tmp/ws" -- python3 lat.py 127.0.0.53 other.bench "$queries")
firsts=()
seconds=()
for i in $(seq 30); do
	f=$(nsenter -t "$a" -n -m "$tmp/sandbox-run" -q --net egress --allow api.bench \
		--workspace "$tmp/ws" -- python3 first.py)
	firsts+=("${f% *}")
	seconds+=("${f#* }")
done
first=$(printf '%s\n' "${firsts[@]}" | sort -n | sed -n 15p)
second=$(printf '%s\n' "${seconds[@]}" | sort -n | sed -n 15p)
echo "| DNS answer ($queries queries, one at a time) | median | 90th percentile |"
echo "|---|---|---|"
echo "| the upstream, asked from the host | ${direct% *} µs | ${direct#* } µs |"
echo "| the upstream, from a plain egress sandbox (helper's forwarder) | ${helper% *} µs | ${helper#* } µs |"
echo "| the sandbox's resolver, allowed name (upstream, then the set) | ${resolver% *} µs | ${resolver#* } µs |"
echo "| the sandbox's resolver, refused name | ${refused% *} µs | ${refused#* } µs |"
echo "| resolver over the upstream from the host | **$((${resolver% *} - ${direct% *})) µs** | |"
echo "| a run's first answer (the resolver starts), 30 runs | $first µs | |"
echo "| the same runs' second answer | $second µs | |"
