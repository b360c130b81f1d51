#!/usr/bin/env bash
# An --allow entry that is a host name opens what DNS says the name is,
# and DNS is not the caller: whoever answers for the name (its owner, a
# spoofed or compromised resolver, a rebinding attack) must not open the
# cloud's metadata service, a private or carrier-grade NAT network, or the
# host itself. Security round 2, finding 2 (medium): a name that resolved
# to 169.254.169.254 or to the host's own address was let through.
#
# The whole run happens in two network namespaces this script creates: A,
# where sandbox-run and its helper run (their "host"), and B, a remote
# that holds the metadata, private, CGNAT and public addresses, joined by
# a veth pair. Names are resolved on A's side from a hosts file bound over
# /etc/hosts in a mount namespace of A's own: the host's /etc/hosts is
# never touched, and no packet leaves the two namespaces. Every listener
# answers with a marker naming itself, so a refusal is told apart from
# whatever else might answer.
. "$(dirname "$0")/../integration/libtest.sh"

if [ "$(id -u)" != 0 ]; then
	echo "1..0 # SKIP building the test network needs root"
	exit 0
fi
if ! have_egress; then
	echo "1..0 # SKIP --net egress needs slirp4netns or pasta and /dev/net/tun"
	exit 0
fi

PORT=8080
HOST_A=192.0.2.1 # A's own address (the "host's")
PEER_B=192.0.2.2
METADATA=169.254.169.254
PRIVATE=10.77.0.2
CGNAT=100.64.0.2
PUBLIC=198.51.100.2
A_PID="" B_PID=""

ns_cleanup() {
	local pid
	for pid in ${NS_PIDS:-}; do kill -9 "$pid" 2>/dev/null; wait "$pid" 2>/dev/null; done
	_cleanup
}
trap ns_cleanup EXIT

# hold NAME UNSHARE-ARGS...: a process holding new namespaces; prints its pid.
hold() {
	unshare "$@" sleep infinity </dev/null >/dev/null 2>&1 &
	NS_PIDS="${NS_PIDS:-} $!"
	HELD=$!
	# Until unshare has run, the pid is still in our namespaces.
	local i
	for i in $(seq 100); do
		[ "$(readlink "/proc/$HELD/ns/net")" != "$(readlink /proc/self/ns/net)" ] && return 0
		sleep 0.01
	done
	return 1
}

# A listener on every address of its namespace, answering HTTP with
# "sr-marker TAG ADDRESS-IT-WAS-REACHED-AT".
listen_in() {
	nsenter -t "$1" -n python3 -c '
import socket, sys
tag, port = sys.argv[1], int(sys.argv[2])
s = socket.socket()
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("0.0.0.0", port))
s.listen(16)
while True:
    c, _ = s.accept()
    try:
        c.settimeout(2)
        c.recv(4096)
        body = ("sr-marker %s %s\n" % (tag, c.getsockname()[0])).encode()
        c.sendall(b"HTTP/1.0 200 OK\r\nContent-Length: %d\r\n\r\n" % len(body) + body)
    except OSError:
        pass
    c.close()' "$2" "$PORT" </dev/null >/dev/null 2>&1 &
	NS_PIDS="${NS_PIDS:-} $!"
}

setup_network() {
	hold --net --mount --propagation private || return 1
	A_PID=$HELD
	hold --net || return 1
	B_PID=$HELD
	nsenter -t "$A_PID" -n sh -c "
		ip link set lo up &&
		ip link add a0 type veth peer name b0 netns $B_PID &&
		ip addr add $HOST_A/24 dev a0 && ip link set a0 up &&
		ip route add default via $PEER_B" || return 1
	nsenter -t "$B_PID" -n sh -c "
		ip link set lo up &&
		ip addr add $PEER_B/24 dev b0 && ip link set b0 up &&
		ip addr add $METADATA/32 dev b0 && ip addr add $PRIVATE/32 dev b0 &&
		ip addr add $CGNAT/32 dev b0 && ip addr add $PUBLIC/32 dev b0" || return 1
	cat >"$SR_TMP/hosts" <<-EOF
		127.0.0.1 localhost
		::1 localhost
		$METADATA metadata.sr-test
		$PRIVATE private.sr-test
		$CGNAT cgnat.sr-test
		$PUBLIC public.sr-test
		$HOST_A host.sr-test
	EOF
	chmod 0644 "$SR_TMP/hosts"
	nsenter -t "$A_PID" -m mount --bind "$SR_TMP/hosts" /etc/hosts || return 1
	listen_in "$A_PID" A
	listen_in "$B_PID" B
	local i
	for i in $(seq 50); do
		nsenter -t "$A_PID" -n curl -s -m 1 "http://$PUBLIC:$PORT/" | grep -q "sr-marker B" &&
			nsenter -t "$A_PID" -n curl -s -m 1 "http://$HOST_A:$PORT/" | grep -q "sr-marker A" &&
			return 0
		sleep 0.1
	done
	return 1
}

# sr_a ARGS...: sr, but sandbox-run runs in A (network and mount
# namespaces), as the round's user.
sr_a() {
	local o="$SR_TMP/.out" e="$SR_TMP/.err" as=()

	if [ "$SR_AS" = user ]; then
		as=(setpriv --reuid="$SR_TEST_USER" --regid="$SR_TEST_USER" --clear-groups
			--inh-caps=-all -- env HOME="$SR_TMP/home-user" XDG_CONFIG_HOME="$SR_TMP/xdg-user")
	fi
	nsenter -t "$A_PID" -n -m -- "${as[@]}" "$SR" "$@" </dev/null >"$o" 2>"$e"
	rc=$?
	out=$(cat "$o")
	errout=$(cat "$e")
}

# The sandbox's curl, body on stdout: refused connections fail at once (exit 7).
CURL='curl -sS -m 5'

# refused NAME ALLOW ADDRESS: with --allow ALLOW, the agent's connection
# to ADDRESS is refused by the policy, at once, and nothing answered.
refused() {
	sr_a --net egress --allow "$2" -- $CURL "http://$3:$PORT/"
	assert_eq "$1: refused (curl exit 7)" 7 "$rc"
	assert_no_match "$1: no listener answered" "sr-marker" "$out"
}

t_name_to_refused_ranges() {
	refused "--allow NAME resolving to the metadata address" metadata.sr-test "$METADATA"
	refused "--allow NAME:PORT resolving to the metadata address" "metadata.sr-test:$PORT" "$METADATA"
	refused "--allow NAME resolving to a private address" private.sr-test "$PRIVATE"
	refused "--allow NAME resolving to a carrier-grade NAT address" cgnat.sr-test "$CGNAT"
}

t_name_to_host() {
	refused "--allow NAME resolving to the host's own address" host.sr-test "$HOST_A"
	refused "--allow localhost: the host's loopback through the helper's gateway" localhost 10.0.2.2
	sr_a --net egress --allow localhost -- $CURL "http://127.0.0.1:$PORT/"
	assert_no_match "--allow localhost: 127.0.0.1 is the sandbox's own, not the host's listener" \
		"sr-marker" "$out"
}

# What must still work: a public name, and addresses written as addresses.
t_controls() {
	sr_a --net egress --allow public.sr-test -- $CURL "http://$PUBLIC:$PORT/"
	assert_eq "--allow NAME resolving to a public address: reached" "sr-marker B $PUBLIC" "$out"
	sr_a --net egress --allow "$METADATA" -- $CURL "http://$METADATA:$PORT/"
	assert_eq "--allow with the metadata address written out: reached (the caller meant it)" \
		"sr-marker B $METADATA" "$out"
	sr_a --net egress --allow "$PRIVATE/32:$PORT" -- $CURL "http://$PRIVATE:$PORT/"
	assert_eq "--allow with a private CIDR written out: reached" "sr-marker B $PRIVATE" "$out"
	sr_a --net egress --allow "$HOST_A:$PORT" -- $CURL "http://$HOST_A:$PORT/"
	assert_eq "--allow naming the host's own address exactly: reached" "sr-marker A $HOST_A" "$out"
	sr_a --net egress --allow public.sr-test --allow private.sr-test -- $CURL "http://$PUBLIC:$PORT/"
	assert_eq "a refused name beside a public one does not close the public one" \
		"sr-marker B $PUBLIC" "$out"
}

if ! setup_network; then
	not_ok "build the test network (namespaces A and B)"
	done_testing
	exit
fi
for_each_user t_name_to_refused_ranges t_name_to_host t_controls
done_testing
