#!/usr/bin/env bash
# The sandbox's resolver and the policy's sets (docs/security.md, "DNS
# controls an allowed name"; docs/network.md, "Names") against the agent:
# it cannot change the sets, take the resolver's address, reach the
# resolver other than by DNS, or stop it answering with what it sends;
# the resolver holds nothing on the host (ids, namespaces, filter,
# environment) and dies with sandbox-run; when it dies, names stop
# resolving and nothing opens.
#
# In namespaces of its own (libnet.sh): sandbox-run in A, the test hosts
# and the tests' own DNS server in B.
. "$(dirname "$0")/../integration/libtest.sh"
. "$(dirname "$0")/../integration/libnet.sh"

net_need

PORT=8080
API=198.51.100.10
EVIL=203.0.113.5
WS="$SR_TMP/ws"
CURL='curl -sS -m 5'

setup_network() {
	net_up && net_addr "$API" "$EVIL" && net_dns && net_listen "$PORT" || return 1
	net_zone "api.sr-test A $API" "evil.sr-test A $EVIL" "later.sr-test A $EVIL" \
		"slow.sr-test DROP -" "huge.sr-test TXT $(head -c 6000 /dev/zero | tr '\0' x)" \
		"huge.sr-test WHOLE -"
	mkdir -p "$WS"
	cp "$SR_SRCDIR/tests/integration/dnsq.py" "$WS/"
	# The agent's nftables client: libnftables itself, as nft(8) would use it.
	cat >"$WS/nft.py" <<-'EOF'
		import ctypes, sys
		lib = ctypes.CDLL("libnftables.so.1")
		lib.nft_ctx_new.restype = ctypes.c_void_p
		lib.nft_ctx_buffer_error.argtypes = [ctypes.c_void_p]
		lib.nft_ctx_get_error_buffer.restype = ctypes.c_char_p
		lib.nft_ctx_get_error_buffer.argtypes = [ctypes.c_void_p]
		lib.nft_run_cmd_from_buffer.argtypes = [ctypes.c_void_p, ctypes.c_char_p]
		ctx = lib.nft_ctx_new(0)
		lib.nft_ctx_buffer_error(ctx)
		rc = lib.nft_run_cmd_from_buffer(ctx, sys.argv[1].encode())
		print("rc=%d %s" % (rc, lib.nft_ctx_get_error_buffer(ctx).decode().splitlines()[0:1]))
	EOF
	# Hostile datagrams at the resolver: garbage, a response (a forged
	# answer), a compression loop, an oversized one, a truncated header,
	# a query with 65535 additional records; then an honest query.
	cat >"$WS/flood.py" <<-'EOF'
		import os, socket, struct, sys
		s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
		dst = ("127.0.0.53", 53)
		forged = struct.pack(">HHHHHH", 1, 0x8180, 1, 1, 0, 0) + b"\x03api\x07sr-test\x00\x00\x01\x00\x01" + \
		    b"\xc0\x0c\x00\x01\x00\x01\x00\x00\x0e\x10\x00\x04" + socket.inet_aton(sys.argv[1])
		loop = struct.pack(">HHHHHH", 2, 0x0100, 1, 0, 0, 0) + b"\xc0\x0c\x00\x01\x00\x01"
		many = struct.pack(">HHHHHH", 3, 0x0100, 1, 0, 0, 0xffff) + b"\x03api\x07sr-test\x00\x00\x01\x00\x01"
		for i in range(2000):
		    for d in (os.urandom(i % 600), forged, loop, many, b"\x00" * 5, os.urandom(4000)):
		        try:
		            s.sendto(d, dst)
		        except OSError:
		            pass
		t = socket.create_connection(dst, 3)
		t.sendall(b"\xff\xff" + os.urandom(100))
		t.close()
	EOF
	cat >"$WS/bind53.py" <<-'EOF'
		import socket
		try:
		    socket.socket(socket.AF_INET, socket.SOCK_DGRAM).bind(("127.0.0.53", 53))
		    print("bind=ok")
		except OSError as e:
		    print("bind=" + type(e).__name__)
	EOF
	# TCP clients that ask for a name the upstream never answers, then
	# reset their connections (SO_LINGER 0) while the queries wait.
	cat >"$WS/reset.py" <<-'EOF'
		import socket, struct, time
		q = struct.pack(">HHHHHH", 0x4242, 0x0100, 1, 0, 0, 0) + b"\x04slow\x07sr-test\x00\x00\x01\x00\x01"
		socks = []
		for i in range(16):
		    s = socket.create_connection(("127.0.0.53", 53), 3)
		    s.sendall(struct.pack(">H", len(q)) + q)
		    socks.append(s)
		time.sleep(0.2)
		for s in socks:
		    s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
		    s.close()
		print("reset", flush=True)
		time.sleep(4)
	EOF
	chmod -R a+rX "$WS"
}

# The resolver of sandbox-run PID: sr-resolver beneath it.
resolver_of() {
	ps -o pid=,comm= --ppid "$1" | awk '$2 == "sr-resolver" {print $1}'
}
has_resolver() { [ -n "$(resolver_of "$1")" ]; }

t_sets_out_of_reach() {
	sr_a --net egress --allow api.sr-test --workspace "$WS" -- sh -c \
		"python3 nft.py 'add element inet sandbox_run allow4 { $EVIL timeout 1h }'; python3 nft.py 'flush table inet sandbox_run'; python3 nft.py 'list ruleset'; $CURL http://$EVIL:$PORT/; echo curl=\$?"
	assert_match "the agent cannot add to the allow set" "^rc=-1 .*Operation not permitted" \
		"$(sed -n 1p <<<"$out")"
	assert_match "nor flush the table" "^rc=-1 .*Operation not permitted" "$(sed -n 2p <<<"$out")"
	assert_match "nor even list it" "^rc=-1 .*Operation not permitted" "$(sed -n 3p <<<"$out")"
	assert_match "and the address stays refused" "curl=7" "$out"
}

t_address_out_of_reach() {
	sr_a --net egress --allow api.sr-test -- python3 -c "
import socket
for typ in (socket.SOCK_DGRAM, socket.SOCK_STREAM):
    for reuse in (False, True):
        s = socket.socket(socket.AF_INET, typ)
        if reuse:
            s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
            s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            s.bind(('127.0.0.53', 53))
            print('bound')
        except OSError as e:
            print(type(e).__name__)
print('procs', sum(1 for p in __import__('os').listdir('/proc') if p.isdigit() and 'resolver' in open('/proc/%s/comm' % p).read()))"
	assert_eq "the agent cannot take the resolver's address (UDP, TCP, with SO_REUSEPORT)" \
		"$(printf 'PermissionError\nPermissionError\nPermissionError\nPermissionError\nprocs 0')" "$out"
}

t_hostile_queries() {
	sr_a --net egress --allow api.sr-test --workspace "$WS" -- sh -c \
		"python3 flood.py $EVIL; $CURL http://$EVIL:$PORT/; echo curl=\$?; python3 dnsq.py 127.0.0.53 api.sr-test 1; $CURL http://api.sr-test:$PORT/"
	assert_match "a forged answer in the flood opens nothing" "curl=7" "$out"
	assert_match "after 12,000 hostile datagrams the resolver still answers" \
		"rcode=0 an=1 tc=0 $API" "$out"
	assert_match "and the answer's address connects" "sr-marker B $API" "$out"
}

t_resolver_confined() {
	local pid res want_uid host_ns
	# It starts on the agent's first query.
	(SR_TEST_SECRET=hunter2 nsenter -t "$A_PID" -n -m -- "${SR_AS_PREFIX[@]}" "$SR" -q --net egress \
		--allow api.sr-test -- sh -c 'getent hosts api.sr-test; sleep 30' </dev/null >/dev/null 2>&1) &
	pid=$!
	SR_BG_PIDS="${SR_BG_PIDS:-} $pid"
	until_ok 5 has_resolver_below "$pid"
	res=$(resolver_below "$pid")
	if [ -z "$res" ]; then
		not_ok "the resolver runs (no sr-resolver beneath sandbox-run $pid)"
		return
	fi
	want_uid=$(as_user id -u)
	[ "$SR_AS" = root ] && want_uid=$(awk -F: '$1 == "root" {print $2; exit}' /etc/subuid 2>/dev/null)
	assert_eq "the resolver runs as ${want_uid:-65534} on the host (never 0)" "${want_uid:-65534}" \
		"$(awk '/^Uid:/ {print $3}' "/proc/$res/status")"
	host_ns=$(readlink /proc/self/ns/user)
	check "in a user namespace of its own" test "$(readlink "/proc/$res/ns/user")" != "$host_ns"
	check "not the sandbox's" test "$(readlink "/proc/$res/ns/user")" != \
		"$(readlink "/proc/$(helper_below "$pid")/ns/user" 2>/dev/null)"
	assert_eq "with a syscall filter and no_new_privs" "1 2" \
		"$(awk '/^NoNewPrivs:/ {n=$2} /^Seccomp:/ {s=$2} END {print n, s}' "/proc/$res/status")"
	assert_eq "non-dumpable: its /proc files are root's" 0 "$(stat -c %u "/proc/$res/fd")"
	assert_eq "none of the caller's environment is left in it" 0 \
		"$({ tr -d '\0' <"/proc/$res/environ" | wc -c; } 2>&1)"
	assert_eq "it holds sockets and /dev/null only, no file" "" \
		"$(for f in /proc/"$res"/fd/*; do readlink "$f"; done | grep -v -e '^socket:' -e '^/dev/null$')"
	kill -KILL "$res"
	until_ok 3 dead_pid "$res"
	kill -KILL "$pid" 2>/dev/null
	wait "$pid" 2>/dev/null
}

# resolver_below PID: sr-resolver beneath PID (nsenter, setpriv, sandbox-run).
resolver_below() { descendant "$1" sr-resolver; }
has_resolver_below() { [ -n "$(resolver_below "$1")" ]; }
helper_below() { descendant "$1" slirp4netns || descendant "$1" passt.avx2 || descendant "$1" passt; }
dead_pid() { ! kill -0 "$1" 2>/dev/null || [ "$(ps -o stat= -p "$1" | cut -c1)" = Z ]; }

# Killed, the resolver answers no more: nothing new opens; sandbox-run says so.
t_resolver_killed() {
	local pid res
	(nsenter -t "$A_PID" -n -m -- "${SR_AS_PREFIX[@]}" "$SR" --net egress --allow api.sr-test \
		--allow later.sr-test --workspace "$WS" -- sh -c "getent hosts api.sr-test >/dev/null; sleep 1; python3 dnsq.py 127.0.0.53 later.sr-test 1; $CURL http://$EVIL:$PORT/; echo curl=\$?; python3 bind53.py" \
		</dev/null >"$SR_TMP/killed.out" 2>"$SR_TMP/killed.err") &
	pid=$!
	SR_BG_PIDS="${SR_BG_PIDS:-} $pid"
	until_ok 5 has_resolver_below "$pid"
	res=$(resolver_below "$pid")
	kill -KILL "$res"
	wait "$pid" 2>/dev/null
	out=$(cat "$SR_TMP/killed.out")
	errout=$(cat "$SR_TMP/killed.err")
	assert_match "with its resolver killed, an allowed name is not answered" "^error=" "$out"
	assert_match "and its address does not open" "curl=7" "$out"
	assert_match "nor can the agent take its address over" "bind=PermissionError" "$out"
	assert_match "sandbox-run says so" "the sandbox's resolver was killed by signal 9: names no longer resolve" "$errout"
}

t_resolver_dies_with_sandbox_run() {
	local pid res
	(nsenter -t "$A_PID" -n -m -- "${SR_AS_PREFIX[@]}" "$SR" -q --net egress --allow api.sr-test \
		-- sh -c 'getent hosts api.sr-test; sleep 30' </dev/null >/dev/null 2>&1) &
	pid=$!
	SR_BG_PIDS="${SR_BG_PIDS:-} $pid"
	until_ok 5 has_resolver_below "$pid"
	res=$(resolver_below "$pid")
	kill -KILL "$(descendant "$pid" sandbox-run)"
	check "the resolver dies with sandbox-run (SIGKILL)" until_ok 2 dead_pid "${res:-0}"
	kill -KILL "$pid" 2>/dev/null
	wait "$pid" 2>/dev/null
}

# CPU time (clock ticks) PID has used.
cpu_ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }

# Clients that reset their connections while their queries wait do not
# keep the resolver busy: it runs outside the sandbox's cgroup.
t_reset_clients() {
	local pid res t0 t1
	: >"$SR_TMP/reset.out" # the last run's "reset" is not this one's
	(nsenter -t "$A_PID" -n -m -- "${SR_AS_PREFIX[@]}" "$SR" -q --net egress --allow slow.sr-test \
		--allow api.sr-test --workspace "$WS" -- sh -c \
		"python3 reset.py; python3 dnsq.py 127.0.0.53 api.sr-test 1" </dev/null \
		>"$SR_TMP/reset.out" 2>&1) &
	pid=$!
	SR_BG_PIDS="${SR_BG_PIDS:-} $pid"
	until_ok 5 has_resolver_below "$pid"
	res=$(resolver_below "$pid")
	until_ok 5 grep -q reset "$SR_TMP/reset.out"
	t0=$(cpu_ticks "${res:-0}" 2>/dev/null)
	sleep 3
	t1=$(cpu_ticks "${res:-0}" 2>/dev/null)
	wait "$pid" 2>/dev/null
	out=$(cat "$SR_TMP/reset.out")
	check "the resolver runs (sr-resolver beneath sandbox-run)" test -n "$res"
	check "16 clients reset while their queries wait: the resolver idles meanwhile ($((${t1:-0} - ${t0:-0})) ticks of CPU in 3 s; it spun before)" \
		test -n "$t0" -a -n "$t1" -a "$((${t1:-0} - ${t0:-0}))" -lt 30
	assert_match "and answers on" "rcode=0 an=1 tc=0 $API" "$out"
}

# An upstream that sends an answer larger than the resolver asked for
# (and reads) over UDP: the agent is told it was truncated, at once, and
# gets it whole over TCP.
t_oversized_udp() {
	sr_a --net egress --allow huge.sr-test --workspace "$WS" -- sh -c \
		'start=$(date +%s%N); python3 dnsq.py 127.0.0.53 huge.sr-test 16; echo ms=$((($(date +%s%N) - start) / 1000000)); python3 dnsq.py --tcp 127.0.0.53 huge.sr-test 16'
	assert_match "a UDP answer of 6 KB: the agent's is truncated" "^rcode=0 an=0 tc=1" \
		"$(sed -n 1p <<<"$out")"
	check "at once ($(sed -n 's/^ms=//p' <<<"$out") ms; no answer within 3 s before)" \
		test "$(sed -n 's/^ms=//p' <<<"$out")" -lt 1000
	assert_match "over TCP, whole" "^rcode=0 an=1 tc=0" "$(sed -n 3p <<<"$out")"
}

round_prefix() {
	SR_AS_PREFIX=()
	if [ "$SR_AS" = user ]; then
		SR_AS_PREFIX=(setpriv --reuid="$SR_TEST_USER" --regid="$SR_TEST_USER" --clear-groups
			--inh-caps=-all -- env HOME="$SR_TMP/home-user")
	fi
}
t_round() {
	round_prefix
	t_sets_out_of_reach
	t_address_out_of_reach
	t_hostile_queries
	t_resolver_confined
	t_resolver_killed
	t_resolver_dies_with_sandbox_run
	t_reset_clients
	t_oversized_udp
}

if ! setup_network; then
	not_ok "build the test network (namespaces A and B, the DNS server)"
	done_testing
	exit 1
fi
for_each_user t_round
done_testing
