#!/usr/bin/env bash
# The network policy, end to end: a "remote" test host in a network
# namespace this script creates, joined to the host by a veth pair with
# private addresses, reached from the sandbox through the egress helper
# (slirp4netns, and pasta where slirp4netns is missing). Traffic
# goes only to loopback and to that namespace; everything is removed on exit.
. "$(dirname "$0")/libtest.sh"

if [ "$(id -u)" != 0 ]; then
	# Building the test host needs CAP_NET_ADMIN on the host.
	echo "1..0 # SKIP building the test network needs root"
	exit 0
fi

# Per-run names and subnet, so concurrent runs do not collide.
N=$(($$ % 200 + 20))
HOST_IF="srnh$N"
REMOTE_IF="srnr$N"
HOST_IP="10.201.$N.1"
REMOTE="10.201.$N.2"
# A non-private address of the host itself: only the host-address rule refuses it.
HOST_PUBLIC="203.0.113.$N"
# One on the host's lo, as an anycast service address would be.
LO_PUBLIC="198.51.100.$N"
PORT=8000
OTHER_PORT=8001
LOOP_PORT=$((18000 + N))
REMOTE_PID=""

net_cleanup() {
	local pid
	for pid in ${NET_PIDS:-}; do kill -9 "$pid" 2>/dev/null; wait "$pid" 2>/dev/null; done
	# The namespace dies with its holder; the veth pair with it.
	ip link del "$HOST_IF" 2>/dev/null
	ip addr del "$LO_PUBLIC/32" dev lo 2>/dev/null
	_cleanup
}
trap net_cleanup EXIT

bg() {
	"$@" >/dev/null 2>&1 </dev/null &
	NET_PIDS="${NET_PIDS:-} $!"
}

# The namespace is held by a process, not by a name in /run/netns: nothing
# can unmount it behind our back, and nothing outlives the script.
setup_network() {
	mkdir -p "$SR_TMP/www"
	echo hello-remote >"$SR_TMP/www/index.html"
	chmod -R a+rX "$SR_TMP/www"
	unshare --net sleep infinity </dev/null >/dev/null 2>&1 &
	REMOTE_PID=$!
	NET_PIDS="${NET_PIDS:-} $REMOTE_PID"
	# Until unshare has run, the pid is still in our namespace, and the
	# veth peer would land there.
	local i
	for i in $(seq 100); do
		[ "$(readlink "/proc/$REMOTE_PID/ns/net")" != "$(readlink /proc/self/ns/net)" ] && break
		sleep 0.01
	done
	ip link add "$HOST_IF" type veth peer name "$REMOTE_IF" netns "$REMOTE_PID" || return 1
	ip addr add "$HOST_IP/24" dev "$HOST_IF" || return 1
	ip addr add "$HOST_PUBLIC/32" dev "$HOST_IF" || return 1
	ip link set "$HOST_IF" up || return 1
	ip addr add "$LO_PUBLIC/32" dev lo || return 1
	nsenter -t "$REMOTE_PID" -n sh -c "ip link set lo up && ip addr add $REMOTE/24 dev $REMOTE_IF && ip link set $REMOTE_IF up" || return 1
	bg nsenter -t "$REMOTE_PID" -n python3 -m http.server "$PORT" --bind "$REMOTE" --directory "$SR_TMP/www"
	bg nsenter -t "$REMOTE_PID" -n python3 -m http.server "$OTHER_PORT" --bind "$REMOTE" --directory "$SR_TMP/www"
	bg python3 -m http.server "$LOOP_PORT" --bind 127.0.0.1 --directory "$SR_TMP/www"
	# The "host's resolver": answers every datagram on port 53.
	bg nsenter -t "$REMOTE_PID" -n python3 -c "
import socket
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.bind(('$REMOTE', 53))
while True:
    d, a = s.recvfrom(512)
    s.sendto(b'answer:' + d, a)"
	bg python3 -m http.server "$LOOP_PORT" --bind "$HOST_PUBLIC" --directory "$SR_TMP/www"
	bg python3 -m http.server "$LOOP_PORT" --bind "$LO_PUBLIC" --directory "$SR_TMP/www"
	for i in $(seq 50); do
		curl -s -m 1 "http://$REMOTE:$PORT/" >/dev/null && curl -s -m 1 "http://$REMOTE:$OTHER_PORT/" >/dev/null &&
			curl -s -m 1 "http://127.0.0.1:$LOOP_PORT/" >/dev/null &&
			curl -s -m 1 "http://$HOST_PUBLIC:$LOOP_PORT/" >/dev/null &&
			curl -s -m 1 "http://$LO_PUBLIC:$LOOP_PORT/" >/dev/null && return 0
		sleep 0.1
	done
	return 1
}

# The sandbox's curl: refused connections fail at once (exit 7), never time out (28).
CURL='curl -sS -m 5 -o /dev/null -w %{http_code}:%{time_total}'

# expect_refused NAME ARGS...: the sandbox's curl is refused, fast.
expect_refused() {
	local name=$1
	shift
	sr "$@"
	if [ "$rc" = 7 ] && [[ $out =~ ^000:0\.[0-4] ]]; then ok "$name"; else not_ok "$name (curl exit $rc, $out)"; fi
}

t_allow() {
	sr --net egress --allow "$REMOTE" -- curl -sS -m 5 "http://$REMOTE:$PORT/"
	assert_eq "HTTP to an allowed test host works" hello-remote "$out"
	sr --net egress --allow "$REMOTE:$PORT" -- $CURL "http://$REMOTE:$PORT/"
	assert_match "--allow IP:PORT opens that port" "^200:" "$out"
	expect_refused "--allow IP:PORT refuses the host's other ports" \
		--net egress --allow "$REMOTE:$PORT" -- $CURL "http://$REMOTE:$OTHER_PORT/"
	sr --net egress --allow "10.201.$N.0/24" -- $CURL "http://$REMOTE:$PORT/"
	assert_match "--allow CIDR opens the range" "^200:" "$out"
	expect_refused "--deny wins over --allow" \
		--net egress --allow "10.201.$N.0/24" --deny "$REMOTE" -- $CURL "http://$REMOTE:$PORT/"
}

t_allowlist_refuses_others() {
	expect_refused "the allowlist refuses an address not on it" \
		--net egress --allow "$REMOTE:$PORT" -- $CURL "http://$HOST_PUBLIC:$LOOP_PORT/"
	sr --net egress --allow "$REMOTE" -- python3 -c "
import socket
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.settimeout(2)
try:
    s.connect(('$HOST_IP', 9))
    s.send(b'x')
    s.recv(1)
except OSError as e:
    print(type(e).__name__)"
	assert_match "UDP outside the allowlist is refused, not dropped" "PermissionError|ConnectionRefusedError" "$out"
}

t_private_default() {
	expect_refused "a private test host is refused by default" --net egress -- $CURL "http://$REMOTE:$PORT/"
}

t_metadata() {
	expect_refused "the metadata address is refused in well under a second" \
		--net egress -- $CURL "http://169.254.169.254/latest/meta-data/"
	expect_refused "the IPv6 metadata address too" --net egress -- $CURL "http://[fd00:ec2::254]/"
}

t_host() {
	expect_refused "the host's loopback (via the helper's 10.0.2.2) is unreachable" \
		--net egress -- $CURL "http://10.0.2.2:$LOOP_PORT/"
	expect_refused "even when 10.0.2.0/24 is allowed" \
		--net egress --allow 10.0.2.0/24 -- $CURL "http://10.0.2.2:$LOOP_PORT/"
	expect_refused "the host's own addresses are refused by default" \
		--net egress -- $CURL "http://$HOST_PUBLIC:$LOOP_PORT/"
	expect_refused "an address on the host's lo too (not only 127/8)" \
		--net egress -- $CURL "http://$LO_PUBLIC:$LOOP_PORT/"
	expect_refused "an --allow range that covers the host's address does not open it" \
		--net egress --allow 203.0.113.0/24 -- $CURL "http://$HOST_PUBLIC:$LOOP_PORT/"
	expect_refused "nor does one for every address on its port" \
		--net egress --allow "0.0.0.0/0:$LOOP_PORT" -- $CURL "http://$HOST_PUBLIC:$LOOP_PORT/"
	sr --net egress --allow "$HOST_PUBLIC:$LOOP_PORT" -- $CURL "http://$HOST_PUBLIC:$LOOP_PORT/"
	assert_match "naming it exactly opens it" "^200:" "$out"
}

t_inbound() {
	local port=$((19000 + N)) pid i
	(as_user_exec "$SR" --net egress -- python3 -m http.server "$port" </dev/null >/dev/null 2>&1) &
	pid=$!
	SR_BG_PIDS="${SR_BG_PIDS:-} $pid"
	sleep 1.5
	check "a server in the sandbox is unreachable from the host" \
		bash -c "! curl -s -m 2 http://127.0.0.1:$port/ >/dev/null"
	check "and from a test host" \
		bash -c "! nsenter -t $REMOTE_PID -n curl -s -m 2 http://$HOST_IP:$port/ >/dev/null"
	kill -TERM "$pid" 2>/dev/null
	wait "$pid" 2>/dev/null
}

# The helper: slirp4netns, or pasta (which runs as passt.avx2 or passt) without it.
helper_of() {
	local c
	for c in $(cat "/proc/$1/task/$1/children" 2>/dev/null); do
		case "$(cat "/proc/$c/comm" 2>/dev/null)" in
		slirp4netns | pasta | passt*) echo "$c" ;;
		esac
	done
}

# init_of PID: the sandbox's PID 1 under sandbox-run PID, once it has a
# child of its own (the agent).
init_of() {
	local c
	for c in $(cat "/proc/$1/task/$1/children" 2>/dev/null); do
		[ -n "$(cat "/proc/$c/task/$c/children" 2>/dev/null)" ] &&
			[ "$(cat "/proc/$c/comm" 2>/dev/null)" = sandbox-run ] && echo "$c"
	done
}

# Conditions to wait for with until_ok, on sandbox-run PID (or a helper's pid).
has_helper() { [ -n "$(helper_of "$1")" ]; }
has_init() { [ -n "$(init_of "$1")" ]; }
# Both helpers' last step of confining themselves is their syscall filter.
helper_confined() {
	local h
	h=$(helper_of "$1")
	[ -n "$h" ] && [ "$(awk '/^Seccomp:/ {print $2}' "/proc/$h/status" 2>/dev/null)" = 2 ]
}
dead_or_zombie() { ! kill -0 "$1" 2>/dev/null || [ "$(ps -o stat= -p "$1" | cut -c1)" = Z ]; }

t_helper_dies_with_sandbox_run() {
	local pid helper
	(as_user_exec "$SR" -q --net egress -- sleep 30 </dev/null >/dev/null 2>&1) &
	pid=$!
	SR_BG_PIDS="${SR_BG_PIDS:-} $pid"
	until_ok 2 has_helper "$pid"
	helper=$(helper_of "$pid")
	if [ -z "$helper" ]; then
		not_ok "the egress helper is started (no helper under sandbox-run $pid)"
		return
	fi
	kill -KILL "$pid"
	wait "$pid" 2>/dev/null
	check "the egress helper dies with sandbox-run (SIGKILL)" until_ok 1 dead_or_zombie "$helper"
}

# The helper parses the agent's packets: it must hold nothing on the host.
# Each installed helper, by --net-helper.
confined() {
	local name=$1 pid helper want_uid host_ns comm
	(SR_TEST_SECRET=hunter2 as_user_exec "$SR" -q --net egress --net-helper "$name" -- sleep 30 </dev/null >/dev/null 2>&1) &
	pid=$!
	SR_BG_PIDS="${SR_BG_PIDS:-} $pid"
	until_ok 4 helper_confined "$pid"
	helper=$(helper_of "$pid")
	comm=$(cat "/proc/$helper/comm" 2>/dev/null)
	[ "$name" = pasta ] && [ "${comm#passt}" != "$comm" ] && comm=pasta
	assert_eq "$name: the helper is $name" "$name" "$comm"
	# A user: the caller's own uid. Root: the sandbox's unprivileged host id, never 0:
	# one of root's subordinate range, that sandbox's own (userns.h), or 65534 without one.
	local uid lo=65534 hi=65534
	uid=$(awk '/^Uid:/ {print $3}' "/proc/$helper/status")
	if [ "$SR_AS" = root ]; then
		read -r lo hi < <(awk -F: '$1 == "root" {print $2, $2 + $3 - 1; exit}' /etc/subuid 2>/dev/null)
		: "${lo:=65534}" "${hi:=65534}"
	else
		lo=$(as_user id -u) hi=$lo
	fi
	check "$name runs as the sandbox's host uid ($uid, in $lo-$hi; never 0)" \
		test "$uid" -ge "$lo" -a "$uid" -le "$hi" -a "$uid" != 0
	host_ns=$(readlink /proc/self/ns/user)
	check "$name is in a user namespace of its own (its capabilities apply there only)" \
		test "$(readlink "/proc/$helper/ns/user")" != "$host_ns"
	check "$name is in a mount namespace of its own" \
		test "$(readlink "/proc/$helper/ns/mnt")" != "$(readlink /proc/self/ns/mnt)"
	assert_eq "$name has a syscall filter and no_new_privs" "1 2" \
		"$(awk '/^NoNewPrivs:/ {n=$2} /^Seccomp:/ {s=$2} END {print n, s}' "/proc/$helper/status")"
	# sandbox-run itself had SR_TEST_SECRET. An unreadable file fails too.
	assert_eq "$name gets none of the caller's environment" 0 \
		"$({ tr -cd '\0' <"/proc/${helper:-0}/environ" | wc -c; } 2>&1)"
	kill -KILL "$pid" 2>/dev/null
	wait "$pid" 2>/dev/null
}

t_helper_confined() {
	local name
	for name in pasta slirp4netns; do
		if command -v "$name" >/dev/null; then
			confined "$name"
		else
			skip "$name is confined" "$name is not installed"
		fi
	done
}

# pasta is handed a tap PID 1 made and starts once the agent runs
# (src/lib/net/net.c, net-child.c): what the agent sends first waits for it and is not lost,
# and neither PID 1 nor the agent keeps the tap.
t_tap_handover() {
	local pid init
	if ! command -v pasta >/dev/null; then
		skip "pasta: the agent's first packets wait for it" "pasta is not installed"
		return
	fi
	# Sent before pasta reads the tap: a lost SYN would be sent again after 1 s.
	sr --net egress --net-helper pasta --allow "$REMOTE" -- python3 -c "
import socket, struct
s = socket.create_connection(('$REMOTE', $PORT), 5)
print('retransmits', struct.unpack_from('I', s.getsockopt(socket.IPPROTO_TCP, socket.TCP_INFO, 104), 100)[0])"
	assert_eq "pasta: the agent's first connection is not lost while pasta starts" "retransmits 0" "$out"
	sr --net egress --net-helper pasta -- sh -c 'ls -l /proc/self/fd/ | grep -c /dev/net/tun'
	assert_eq "pasta: the agent holds no tap" 0 "$out"
	(as_user_exec "$SR" -q --net egress --net-helper pasta -- sleep 30 </dev/null >/dev/null 2>&1) &
	pid=$!
	SR_BG_PIDS="${SR_BG_PIDS:-} $pid"
	until_ok 4 has_init "$pid"
	until_ok 4 has_helper "$pid"
	init=$(init_of "$pid")
	assert_eq "pasta: PID 1 holds no tap once pasta has it" "0" \
		"$({ ls -l "/proc/${init:-0}/fd/" | grep -c /dev/net/tun; } 2>&1)"
	kill -KILL "$pid" 2>/dev/null
	wait "$pid" 2>/dev/null
	# Nothing waits for pasta, so its death is said: a stand-in that exits.
	mkdir -p "$SR_TMP/dead-pasta"
	printf '#!/bin/sh\nexit 3\n' >"$SR_TMP/dead-pasta/pasta"
	chmod 755 "$SR_TMP/dead-pasta" "$SR_TMP/dead-pasta/pasta"
	with_path "$SR_TMP/dead-pasta" sr --net egress --net-helper pasta -- sleep 1
	assert_eq "pasta exits early: the agent still runs to its end" 0 "$rc"
	assert_match "and sandbox-run says the sandbox lost its network" \
		"pasta exited with status 3: the sandbox has no network from here on" "$errout"
}

# PID 1 populates ~1 MiB of heap for libnftables (src/lib/net/nft.c) and gives it
# back 100 ms into the agent's run (src/lib/child/init.c): it must not count against
# the sandbox's memory for the rest of it. (Built without glibc's mallopt
# or MADV_POPULATE_WRITE there is no such heap, and this passes anyway.)
t_init_gives_back_heap() {
	local pid init rss
	if ldd "$SR" 2>/dev/null | grep -q libasan; then
		skip "PID 1 gives back libnftables' heap" "an ASan build: ASan's allocator takes neither the thresholds nor the trim"
		return
	fi
	(as_user_exec "$SR" -q --net egress -- sleep 30 </dev/null >/dev/null 2>&1) &
	pid=$!
	SR_BG_PIDS="${SR_BG_PIDS:-} $pid"
	until_ok 4 has_init "$pid"
	init=$(init_of "$pid")
	sleep 0.3
	rss=$(awk '/^RssAnon:/ {print $2}' "/proc/${init:-0}/status" 2>/dev/null)
	check "PID 1 gives back libnftables' heap while the agent runs (RssAnon ${rss:-unread} kB < 1024)" \
		test "${rss:-1048576}" -lt 1024
	kill -KILL "$pid" 2>/dev/null
	wait "$pid" 2>/dev/null
}

# with_path DIR CASE...: the cases run sandbox-run with $PATH = DIR only.
with_path() {
	local dir=$1 real=$SR
	shift
	printf '#!/bin/sh\nPATH=%s exec %s "$@"\n' "$dir" "$real" >"$SR_TMP/sr-path"
	chmod 755 "$SR_TMP/sr-path"
	SR="$SR_TMP/sr-path"
	"$@"
	SR=$real
}

# Without slirp4netns on $PATH, pasta does the same job; without either, a clear error.
t_pasta_fallback() {
	local bin="$SR_TMP/pasta-only"
	if ! command -v pasta >/dev/null; then
		skip "pasta stands in for a missing slirp4netns" "pasta is not installed"
		return
	fi
	mkdir -p "$bin"
	ln -sf "$(command -v pasta)" "$bin/pasta"
	with_path "$bin" sr --net egress --allow "$REMOTE" -- $CURL "http://$REMOTE:$PORT/"
	assert_match "without slirp4netns, pasta carries HTTP to an allowed host" "^200:" "$out"
	with_path "$bin" expect_refused "pasta: private ranges are refused by default" \
		--net egress -- $CURL "http://$REMOTE:$PORT/"
	with_path /nonexistent sr --net egress -- true
	assert_eq "neither helper installed: --net egress refuses to start" 125 "$rc"
	assert_match "and says which to install" "needs slirp4netns or pasta" "$errout"
}

# The policy tests above ran through slirp4netns (auto); the same, through pasta.
t_policy_through_pasta() {
	local bin="$SR_TMP/pasta-only" SR_TAG="pasta: "
	if ! command -v pasta >/dev/null; then
		skip "the policy through pasta" "pasta is not installed"
		return
	fi
	mkdir -p "$bin"
	ln -sf "$(command -v pasta)" "$bin/pasta"
	with_path "$bin" t_allowlist_refuses_others
	with_path "$bin" t_metadata
	with_path "$bin" t_host
	with_path "$bin" t_inbound
}

# A terminal's ^C goes to sandbox-run's process group: passed on to the
# agent, it must not end the agent's network too (the helper has its own).
t_helper_survives_ctrl_c() {
	local name pid
	for name in slirp4netns pasta; do
		if ! command -v "$name" >/dev/null; then
			skip "$name survives a ^C for the agent" "$name is not installed"
			continue
		fi
		# The ^C once the agent ignores it and the helper runs (pasta starts after the agent).
		: >"$SR_TMP/ctrl-c.err" # the last run's "armed" is not this one's
		(as_user_exec setsid "$SR" -q --net egress --net-helper "$name" --allow "$REMOTE" -- \
			sh -c "trap '' INT; echo armed >&2; sleep 1; $CURL http://$REMOTE:$PORT/" \
			</dev/null >"$SR_TMP/ctrl-c.out" 2>"$SR_TMP/ctrl-c.err") &
		pid=$!
		SR_BG_PIDS="${SR_BG_PIDS:-} $pid"
		until_ok 5 grep -q armed "$SR_TMP/ctrl-c.err"
		until_ok 5 has_helper "$pid"
		kill -INT -- "-$pid" 2>/dev/null
		wait "$pid" 2>/dev/null
		assert_match "$name survives a ^C the agent ignores: its next request goes through" \
			"^200:" "$(cat "$SR_TMP/ctrl-c.out")"
		# -vv shows its stderr on the terminal, where its group is in the background.
		out=$(as_user timeout -k 5 30 script -qec "stty tostop; $SR -vv --net egress \
			--net-helper $name --allow $REMOTE -- $CURL http://$REMOTE:$PORT/" /dev/null 2>&1)
		assert_match "$name, -vv on a terminal with tostop: not stopped by SIGTTOU" "200:" "$out"
		# -vv with its stderr a pipe whose reader has gone (`2>&1 | head`):
		# the helper's first write killed it (SIGPIPE), and the run failed.
		out=$(as_user timeout -k 5 30 bash -c "$SR -vv --net egress --net-helper $name \
			--allow $REMOTE -- $CURL -w '' http://$REMOTE:$PORT/ 2>&1 | true; echo \${PIPESTATUS[0]}")
		assert_eq "$name, -vv into a pipe read no more: the run goes on" 0 "$out"
	done
}

# --net-helper picks one of the two where both are installed; one that is
# missing is an error naming what to install, never a silent switch.
t_helper_choice() {
	local bin="$SR_TMP/both-helpers"
	if ! command -v pasta >/dev/null || ! command -v slirp4netns >/dev/null; then
		skip "--net-helper chooses between the two" "needs slirp4netns and pasta"
		return
	fi
	mkdir -p "$bin"
	ln -sf "$(command -v pasta)" "$bin/pasta"
	ln -sf "$(command -v slirp4netns)" "$bin/slirp4netns"
	with_path "$bin" sr -v --net egress --allow "$REMOTE" -- $CURL "http://$REMOTE:$PORT/"
	assert_match "auto prefers slirp4netns" "through $bin/slirp4netns\)" "$errout"
	with_path "$bin" sr -v --net-helper pasta --net egress --allow "$REMOTE" -- \
		$CURL "http://$REMOTE:$PORT/"
	assert_match "--net-helper pasta: pasta carries HTTP to an allowed host" "^200:" "$out"
	assert_match "and -v says so" "through $bin/pasta\)" "$errout"
	rm "$bin/slirp4netns"
	with_path "$bin" sr --net-helper slirp4netns --net egress -- true
	assert_eq "--net-helper slirp4netns without it: refused (125)" 125 "$rc"
	assert_match "saying what to install" \
		"slirp4netns is not in \\\$PATH \(install slirp4netns, or use auto\)" "$errout"
}

# A root caller's helper runs as the sandbox's unprivileged id: what it
# cannot reach is refused up front, not by a helper dying in the dark.
t_helper_out_of_reach() {
	local dir="$SR_TMP/root-only"
	if [ "$SR_AS" != root ] || ! command -v slirp4netns >/dev/null; then
		skip "a helper the unprivileged id cannot run is refused up front" "root and slirp4netns only"
		return
	fi
	mkdir -p "$dir"
	chmod 0700 "$dir"
	ln -sf "$(command -v slirp4netns)" "$dir/slirp4netns"
	with_path "$dir" sr --net egress -- true
	assert_eq "a helper in a 0700 directory of root's: refused (125)" 125 "$rc"
	assert_match "saying the helper runs unprivileged" \
		"slirp4netns \(the network helper runs unprivileged\): Permission denied" "$errout"
}

# The default route through the helper carries the link's TCP tuning
# (src/lib/net/link.c), whichever helper made it, and it is the only default
# route; the agent cannot change it.
t_helper_route() {
	local want
	want='default via 10.0.2.2 dev eth0 rto_min lock 5ms congctl reno '
	sr --net egress -- sh -c 'ip -4 route show default; ip route replace default via 10.0.2.2 dev eth0 2>&1; ip -4 route show default'
	assert_eq "one default route via the helper: rto_min 5 ms (locked), reno" "$want" \
		"$(sed -n 1p <<<"$out")"
	assert_match "the agent may not replace it" "Operation not permitted" "$(sed -n 2p <<<"$out")"
	assert_eq "and it is unchanged after the attempt" "$want" "$(sed -n '3,$p' <<<"$out")"
	# What a connection through it gets: reno, and a timeout far below 200 ms.
	# The second connection: with pasta, the first one's handshake may have
	# waited for pasta to start (t_tap_handover), which its RTT sample counts.
	sr --net egress --allow "$REMOTE" -- python3 -c "
import socket, struct
socket.create_connection(('$REMOTE', $PORT), 5).close()
s = socket.create_connection(('$REMOTE', $PORT), 5)
s.sendall(b'GET / HTTP/1.0\r\n\r\n')
while s.recv(65536):
    pass
cc = s.getsockopt(socket.IPPROTO_TCP, socket.TCP_CONGESTION, 16).rstrip(b'\0').decode()
rto = struct.unpack_from('I', s.getsockopt(socket.IPPROTO_TCP, socket.TCP_INFO, 104), 8)[0]
print(cc, 'rto<100ms' if rto < 100000 else 'rto=%dus' % rto)"
	assert_eq "a connection through the helper uses reno, retransmits within 100 ms" \
		"reno rto<100ms" "$out"
	if ! command -v pasta >/dev/null; then
		skip "the same with pasta" "pasta is not installed"
		return
	fi
	sr --net egress --net-helper pasta -- ip -4 route show default
	assert_eq "the same with pasta" "$want" "$out"
}

t_none() {
	sr --net none -- sh -c 'tail -n +2 /proc/net/route | wc -l; tail -n +3 /proc/net/dev | cut -d: -f1 | tr -d " "'
	assert_eq "--net none: lo only, no route" "$(printf '0\nlo')" "$out"
	sr --net none -- $CURL "http://$REMOTE:$PORT/"
	assert_match "--net none: connecting fails" "^000:" "$out"
}

t_dns_and_result() {
	local f="$SR_OUT/net-result-$SR_AS.json"
	sr --net egress --result "$f" -- cat /etc/resolv.conf
	assert_match "resolv.conf points at the helper's resolver" "nameserver 10.0.2.3" "$out"
	assert_eq "the result record says nftables" nftables "$(json_get "$f" enforced.net)"
}

# sr_with_resolver IP ARGS...: sr, with the host's /etc/resolv.conf naming
# IP: bind-mounted (as root) in a mount namespace of its own, which the
# round's user then inherits.
sr_with_resolver() {
	local conf="$SR_TMP/resolv.conf" o="$SR_TMP/.out" e="$SR_TMP/.err"
	echo "nameserver $1" >"$conf"
	chmod 0644 "$conf"
	shift
	SR_AS=$SR_AS SR_TEST_USER=$SR_TEST_USER SR_TMP=$SR_TMP unshare -m bash -c \
		"$(declare -f as_user)"'; mount --bind "$0" /etc/resolv.conf && as_user "$@"' \
		"$conf" "$SR" "$@" <"${SR_STDIN:-/dev/null}" >"$o" 2>"$e"
	rc=$?
	out=$(cat "$o")
	errout=$(cat "$e")
}

t_dns_forwarding() {
	sr_with_resolver "$REMOTE" --net egress -- python3 -c "
import socket
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.settimeout(3)
s.sendto(b'query', ('10.0.2.3', 53))
print(s.recvfrom(100)[0].decode())"
	assert_eq "DNS to 10.0.2.3 reaches the host's resolver" "answer:query" "$out"
}

t_fail_closed() {
	sr --net egress --allow 10.0.2.2:$LOOP_PORT -- true
	assert_eq "--allow 10.0.2.2:PORT, which stays refused, refuses to start" 125 "$rc"
	assert_match "with one line pointing at --allow-host" \
		"^sandbox-run: --allow 10.0.2.2:$LOOP_PORT: .* use --allow-host $LOOP_PORT" "$errout"
	expect_refused "the agent cannot lift the policy (no CAP_NET_ADMIN)" \
		--net egress -- sh -c "nft flush ruleset 2>/dev/null; ip link set lo down 2>/dev/null; $CURL http://$REMOTE:$PORT/"
	# A slirp4netns that says it is ready, then ends before the agent starts.
	mkdir -p "$SR_TMP/gone-slirp"
	printf '#!/bin/sh
printf 1 >&3
exit 3
' >"$SR_TMP/gone-slirp/slirp4netns"
	chmod 755 "$SR_TMP/gone-slirp" "$SR_TMP/gone-slirp/slirp4netns"
	with_path "$SR_TMP/gone-slirp" sr --net egress --net-helper slirp4netns -- sh -c 'sleep 0.3'
	assert_match "slirp4netns gone between ready and the agent's start: said" \
		"slirp4netns exited with status 3: the sandbox has no network from here on" "$errout"
}

if ! command -v curl >/dev/null; then
	echo "1..0 # SKIP curl is not installed"
	exit 0
fi
if ! setup_network; then
	not_ok "build the test network"
	done_testing
	exit 1
fi
for_each_user t_allow t_allowlist_refuses_others t_private_default t_metadata t_host t_inbound \
	t_helper_dies_with_sandbox_run t_helper_confined t_tap_handover t_init_gives_back_heap \
	t_pasta_fallback t_policy_through_pasta t_helper_survives_ctrl_c t_helper_choice \
	t_helper_out_of_reach t_helper_route t_none t_dns_and_result t_dns_forwarding t_fail_closed
done_testing
