#!/usr/bin/env bash
# The cost of --net egress, per helper and caller, each against a peer
# measured in the same run. Prints Markdown for docs/performance.md.
#
#   sudo bench/net.sh [RUNS]        (root: it builds the test host)
#
# - Start-up: sandbox-run --net egress against --net none (hyperfine
#   medians, /bin/true, no limits), and bubblewrap's reference command.
# - Agent starts: from launching sandbox-run until the agent runs (it
#   prints the time: date +%s%N), --net egress against --net none,
#   interleaved, medians: what the start-up target is about.
# - One connection: the same with an agent that opens one TCP connection
#   to the test host as it starts (bash's /dev/tcp), against --net none
#   running /bin/true: what an agent that calls out at once waits for
#   (pasta is not waited for at start, its start-up is paid here).
# - slirp4netns alone, from its start until the network is up, with
#   nothing else running (bench/helper-ready.py): the floor under its
#   extra on this machine (pasta is not waited for: no floor).
# - Throughput: one TCP stream of 1 MiB send()s for SECONDS (default 3)
#   from the sandbox to a test host (upload), and one the other way
#   (download: the test host sends, the sandbox reads), each against the
#   same transfer from the host, interleaved, three of each; medians. The
#   test host is a network namespace behind a veth pair with private
#   addresses, made here and removed on exit; no traffic goes anywhere
#   else.
#
# Each helper installed is measured (slirp4netns, pasta) with
# --net-helper. Callers: root, and an unprivileged user (BENCH_USER,
# default sr-test).
#
# BOTTLENECK=RATE (e.g. 500mbit) puts a token bucket of that rate with up
# to 80 ms of queue on the host's side of the veth: a slower path whose
# round trip grows under load, as on the internet (tc's netem, for a
# fixed delay, is not in every kernel).
set -euo pipefail

. "$(dirname "$0")/lib.sh"
runs=${1:-300}
secs=${SECONDS_PER_RUN:-3}

if [ "$(id -u)" != 0 ]; then
	echo "bench: run as root (it builds a test host in a network namespace)" >&2
	exit 1
fi
need hyperfine bwrap python3 ip nsenter unshare
id -u "$user" >/dev/null 2>&1 ||
	useradd --system --no-create-home --home-dir /nonexistent --shell /usr/sbin/nologin "$user"

tmp=$(mktemp -d)
chmod 755 "$tmp"
install -m 755 "$bin" "$tmp/sandbox-run"
install -m 644 "$here/bench/helper-ready.py" "$tmp/helper-ready.py"
n=$(($$ % 200 + 20))
host_if="srbh$n"
remote_ip="10.203.$n.2"
pids=()
tun_mode=$(stat -c %a /dev/net/tun)
cleanup() {
	local p
	for p in "${pids[@]}"; do kill -9 "$p" 2>/dev/null || true; wait "$p" 2>/dev/null || true; done
	ip link del "$host_if" 2>/dev/null || true
	chmod "$tun_mode" /dev/net/tun
	rm -rf "$tmp"
}
trap cleanup EXIT
# The helpers open the tap as the caller (Debian ships /dev/net/tun 0666).
chmod 666 /dev/net/tun

# The test host: a namespace held by a process (gone with it), a veth pair.
unshare --net sleep infinity </dev/null >/dev/null 2>&1 &
remote=$!
pids+=("$remote")
for _ in $(seq 100); do
	[ "$(readlink /proc/$remote/ns/net)" != "$(readlink /proc/self/ns/net)" ] && break
	sleep 0.01
done
ip link add "$host_if" type veth peer name "srbr$n" netns "$remote"
ip addr add "10.203.$n.1/24" dev "$host_if"
ip link set "$host_if" up
nsenter -t "$remote" -n sh -c "ip link set lo up && ip addr add $remote_ip/24 dev srbr$n && ip link set srbr$n up"
if [ -n "${BOTTLENECK:-}" ]; then
	tc qdisc add dev "$host_if" root tbf rate "$BOTTLENECK" burst 256kb latency 80ms
fi

# The test host's servers: port 9000 drains what it is sent, 9001 sends
# until the reader goes away.
cat >"$tmp/servers.py" <<'EOF'
import socket, sys, threading
def serve(port, work):
    s = socket.socket()
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind((sys.argv[1], port))
    s.listen(16)
    while True:
        c, _ = s.accept()
        threading.Thread(target=work, args=(c,), daemon=True).start()
def drain(c):
    buf = bytearray(1 << 20)
    while c.recv_into(buf):
        pass
    c.close()
def pump(c):
    buf = b"\0" * (1 << 20)
    try:
        while True:
            c.sendall(buf)
    except OSError:
        c.close()
threading.Thread(target=serve, args=(9001, pump), daemon=True).start()
serve(9000, drain)
EOF
# The sender prints Gbit/s; passed inline, so that it needs no file in the sandbox.
send='import socket, sys, time
s = socket.create_connection((sys.argv[1], int(sys.argv[2])))
buf = b"\0" * (1 << 20); n = 0; t0 = time.monotonic()
while time.monotonic() - t0 < float(sys.argv[3]): n += s.send(buf)
print(f"{n * 8 / (time.monotonic() - t0) / 1e9:.2f}")'
recv='import socket, sys, time
s = socket.create_connection((sys.argv[1], int(sys.argv[2])))
buf = bytearray(1 << 20); n = 0; t0 = time.monotonic()
while time.monotonic() - t0 < float(sys.argv[3]): n += s.recv_into(buf)
print(f"{n * 8 / (time.monotonic() - t0) / 1e9:.2f}")'
nsenter -t "$remote" -n python3 "$tmp/servers.py" "$remote_ip" </dev/null >/dev/null 2>&1 &
pids+=("$!")
for _ in $(seq 50); do
	python3 -c "import socket; socket.create_connection(('$remote_ip', 9000), 1); socket.create_connection(('$remote_ip', 9001), 1)" 2>/dev/null && break
	sleep 0.1
done

helpers=()
for h in slirp4netns pasta; do
	command -v "$h" >/dev/null && helpers+=("$h")
done
[ ${#helpers[@]} -gt 0 ] || { echo "bench: neither slirp4netns nor pasta is installed" >&2; exit 1; }

as() {
	if [ "$1" = root ]; then
		shift
		"$@"
	else
		shift
		setpriv --reuid="$user" --regid="$user" --clear-groups -- env HOME="$tmp" "$@"
	fi
}
sr() { # sr CALLER HELPER ARGS...
	local who=$1 h=$2
	shift 2
	as "$who" "$tmp/sandbox-run" -q --memory 0 --cpus 0 --pids 0 --net-helper "$h" "$@"
}
median() { tr ' ' '\n' | grep . | sort -g | awk '{a[NR] = $1} END {print a[int((NR + 1) / 2)]}'; }
# agent-start.py RUNS CMD...: the median ms from launching CMD -- date +%s%N until date runs.
cat >"$tmp/agent-start.py" <<'EOF'
import statistics, subprocess, sys, time
runs, cmd = int(sys.argv[1]), sys.argv[2:]
d = []
for _ in range(runs):
    t0 = time.time_ns()
    out = subprocess.run(cmd + ["--", "date", "+%s%N"], capture_output=True, text=True).stdout
    d.append((int(out) - t0) / 1e6)
print(f"{statistics.median(d):.2f}")
EOF

# Each helper alone, as sandbox-run starts it (uid 0 of a user namespace of
# the unprivileged user's), nothing else running: the floor under the extra.
declare -A alone
for h in "${helpers[@]}"; do
	alone[$h]=0
	[ "$h" = slirp4netns ] &&
		alone[$h]=$(as user unshare --user --map-root-user python3 "$tmp/helper-ready.py" "$h" "$((runs / 4 + 1))")
done

echo "$(date -u +%F), $(uname -r), $(nproc) CPUs, $runs start-up runs, ${secs} s transfers${BOTTLENECK:+, through a $BOTTLENECK token bucket}."
echo
echo "| caller | helper | start-up: none | egress | extra | agent starts: extra | one connection: extra | helper alone | egress / bubblewrap | upload: host | sandbox | share | download: host | sandbox | share |"
echo "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"
for who in root user; do
	for h in "${helpers[@]}"; do
		none_base="$tmp/sandbox-run -q --memory 0 --cpus 0 --pids 0 --net none"
		egress_base="$tmp/sandbox-run -q --memory 0 --cpus 0 --pids 0 --net-helper $h --net egress"
		none="$none_base -- /bin/true"
		egress="$egress_base -- /bin/true"
		connect="$egress_base --allow $remote_ip -- bash -c 'exec 3<>/dev/tcp/$remote_ip/9000'"
		bw="bwrap --ro-bind / / --unshare-all --die-with-parent --proc /proc --dev /dev /bin/true"
		rm -f "$tmp/h.json"
		pre=()
		if [ "$who" = user ]; then
			pre=(setpriv --reuid="$user" --regid="$user" --clear-groups -- env HOME="$tmp")
			chown "$user" "$tmp"
		fi
		"${pre[@]}" hyperfine -N --warmup 20 --runs "$runs" --export-json "$tmp/h.json" \
			-n none "$none" -n egress "$egress" -n connect "$connect" -n bwrap "$bw" >/dev/null 2>&1
		read -r t_none t_egress t_connect t_bw < <(python3 -c 'import json, sys
r = {x["command"]: x["median"] * 1e3 for x in json.load(open(sys.argv[1]))["results"]}
print(r["none"], r["egress"], r["connect"], r["bwrap"])' "$tmp/h.json")
		# Interleaved rounds, so that drift hits both alike.
		start_none="" start_egress=""
		for _ in 1 2 3 4 5; do
			start_none+=" $(as "$who" python3 "$tmp/agent-start.py" "$((runs / 5 + 1))" $none_base)"
			start_egress+=" $(as "$who" python3 "$tmp/agent-start.py" "$((runs / 5 + 1))" $egress_base)"
		done
		up_host="" up_sandbox="" down_host="" down_sandbox=""
		for _ in 1 2 3; do
			up_host+=" $(python3 -c "$send" "$remote_ip" 9000 "$secs")"
			up_sandbox+=" $(sr "$who" "$h" --net egress --allow "$remote_ip" -- python3 -c "$send" "$remote_ip" 9000 "$secs")"
			down_host+=" $(python3 -c "$recv" "$remote_ip" 9001 "$secs")"
			down_sandbox+=" $(sr "$who" "$h" --net egress --allow "$remote_ip" -- python3 -c "$recv" "$remote_ip" 9001 "$secs")"
		done
		python3 -c 'import sys
who, h = sys.argv[1:3]
n, e, sn, se, c, a, b, uh, us, dh, ds = [float(x) for x in sys.argv[3:]]
alone = f"{a:.2f} ms" if a else "not waited for"
print(f"| {who} | {h} | {n:.2f} ms | {e:.2f} ms | +{e - n:.2f} ms | +{se - sn:.2f} ms | +{c - n:.2f} ms | {alone} | {e / b:.2f} "
      f"| {uh:.1f} Gbit/s | {us:.2f} Gbit/s | {100 * us / uh:.0f} % "
      f"| {dh:.1f} Gbit/s | {ds:.2f} Gbit/s | {100 * ds / dh:.0f} % |")' \
			"$who" "$h" "$t_none" "$t_egress" "$(median <<<"$start_none")" "$(median <<<"$start_egress")" \
			"$t_connect" "${alone[$h]}" "$t_bw" "$(median <<<"$up_host")" \
			"$(median <<<"$up_sandbox")" "$(median <<<"$down_host")" "$(median <<<"$down_sandbox")"
		echo "  ($who, $h: agent starts none$start_none, egress$start_egress ms)" >&2
		echo "  ($who, $h: upload host$up_host, sandbox$up_sandbox; download host$down_host, sandbox$down_sandbox Gbit/s)" >&2
	done
done
