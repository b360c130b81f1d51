# shellcheck shell=bash
# Test networks of the tests' own, for the egress policy's tests: source
# after libtest.sh. sandbox-run runs in namespace A (network and mount:
# its "host"); B is "the internet", joined to A by a veth pair, holding
# the test hosts' addresses, HTTP listeners that answer with a marker
# naming the address they were reached at, and a DNS server of the tests'
# own (dnsd.py) that A's /etc/resolv.conf names (bound over it in A's
# mount namespace only: the host's is never touched). Every interface
# and address lives in these namespaces, so concurrent runs need no lock,
# and no packet leaves them. Everything dies with the script.
#
#   net_need          skips the whole script (TAP's 1..0) unless it can build
#                     them (root) and sandbox-run can reach B (egress helper)
#   net_up            A and B, IPv4 (and IPv6 where the kernel has it: NET_V6)
#   net_addr ADDR...  more addresses of B (a test host's)
#   net_dns           the DNS server on $NET_DNS, answering from $NET_ZONE
#   net_listen PORT   the marker listener on every address of B, and of A
#   sr_a ARGS...      sr, with sandbox-run in A (as the round's user)

NET_A_IP=192.0.2.1
NET_B_IP=192.0.2.2
NET_A_IP6=2001:db8:a::1
NET_B_IP6=2001:db8:a::2
NET_DNS=198.51.100.53
NET_ZONE="$SR_TMP/zone"
NET_DNS_LOG="$SR_TMP/dns.log"
NET_V6=""
A_PID="" B_PID=""

net_cleanup() {
	local pid
	for pid in ${NS_PIDS:-}; do kill -9 "$pid" 2>/dev/null; wait "$pid" 2>/dev/null; done
	_cleanup
}
trap net_cleanup EXIT

net_need() {
	if [ "$(id -u)" != 0 ]; then
		echo "1..0 # SKIP building the test network needs root"
		exit 0
	fi
	if ! have_egress; then
		echo "1..0 # SKIP --net egress needs slirp4netns or pasta and /dev/net/tun"
		exit 0
	fi
}

# net_hold UNSHARE-ARGS...: a process holding new namespaces, in $HELD.
net_hold() {
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

net_bg() {
	"$@" </dev/null >/dev/null 2>&1 &
	NS_PIDS="${NS_PIDS:-} $!"
}

net_up() {
	net_hold --net --mount --propagation private || return 1
	A_PID=$HELD
	net_hold --net || return 1
	B_PID=$HELD
	nsenter -t "$A_PID" -n sh -c "
		ip link set lo up &&
		ip link add a0 type veth peer name b0 netns $B_PID &&
		ip addr add $NET_A_IP/24 dev a0 && ip link set a0 up &&
		ip route add default via $NET_B_IP" || return 1
	nsenter -t "$B_PID" -n sh -c "
		ip link set lo up &&
		ip addr add $NET_B_IP/24 dev b0 && ip link set b0 up &&
		ip route add default via $NET_A_IP" || return 1
	# IPv6 where the kernel has it (nodad: usable at once).
	if nsenter -t "$A_PID" -n sh -c "ip -6 addr add $NET_A_IP6/64 dev a0 nodad &&
		ip -6 route add default via $NET_B_IP6" 2>/dev/null &&
		nsenter -t "$B_PID" -n sh -c "ip -6 addr add $NET_B_IP6/64 dev b0 nodad &&
		ip -6 route add default via $NET_A_IP6" 2>/dev/null; then
		NET_V6=1
	fi
	net_addr "$NET_DNS"
}

net_addr() {
	local a
	for a in "$@"; do
		case $a in
		*:*) nsenter -t "$B_PID" -n ip -6 addr add "$a/128" dev b0 nodad || return 1 ;;
		*) nsenter -t "$B_PID" -n ip addr add "$a/32" dev b0 || return 1 ;;
		esac
	done
}

net_dns() {
	: >"$NET_ZONE"
	: >"$NET_DNS_LOG"
	chmod 0644 "$NET_ZONE" "$NET_DNS_LOG"
	echo "nameserver $NET_DNS" >"$SR_TMP/resolv.conf"
	chmod 0644 "$SR_TMP/resolv.conf"
	nsenter -t "$A_PID" -m mount --bind "$SR_TMP/resolv.conf" /etc/resolv.conf || return 1
	net_bg nsenter -t "$B_PID" -n python3 "$SR_SRCDIR/tests/integration/dnsd.py" "$NET_DNS" \
		"$NET_ZONE" "$NET_DNS_LOG"
	local i
	for i in $(seq 50); do
		nsenter -t "$A_PID" -n python3 -c "
import socket, sys
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); s.settimeout(0.2)
s.sendto(bytes.fromhex('12340100000100000000000005726561647900000100 01'.replace(' ', '')), ('$NET_DNS', 53))
s.recv(512)" 2>/dev/null && return 0
		sleep 0.1
	done
	return 1
}

# net_zone LINE...: the DNS server's whole zone, now.
net_zone() {
	printf '%s\n' "$@" >"$NET_ZONE.new" && mv "$NET_ZONE.new" "$NET_ZONE"
}

# net_asked NAME: whether the DNS server was asked about NAME (any type).
net_asked() {
	grep -q "^$1 " "$NET_DNS_LOG"
}

# The marker listener: "sr-marker TAG ADDRESS" over HTTP, on every
# address of the namespace, IPv4 and IPv6.
net_listen_in() {
	net_bg nsenter -t "$1" -n python3 -c '
import socket, sys, threading
tag, port = sys.argv[1], int(sys.argv[2])
def serve(s):
    while True:
        c, _ = s.accept()
        try:
            c.settimeout(2)
            c.recv(4096)
            body = ("sr-marker %s %s\n" % (tag, c.getsockname()[0])).encode()
            c.sendall(b"HTTP/1.0 200 OK\r\nContent-Length: %d\r\n\r\n" % len(body) + body)
        except OSError:
            pass
        c.close()
socks = []
for fam, addr in ((socket.AF_INET, "0.0.0.0"), (socket.AF_INET6, "::")):
    try:
        s = socket.socket(fam)
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        if fam == socket.AF_INET6:
            s.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 1)
        s.bind((addr, port))
        s.listen(16)
        socks.append(s)
    except OSError:
        pass
for s in socks[1:]:
    threading.Thread(target=serve, args=(s,), daemon=True).start()
serve(socks[0])' "$2" "$3"
}

net_listen() {
	net_listen_in "$B_PID" B "$1"
	net_listen_in "$A_PID" A "$1"
	local i
	for i in $(seq 50); do
		nsenter -t "$A_PID" -n curl -s -m 1 "http://$NET_B_IP:$1/" | grep -q "sr-marker B" &&
			nsenter -t "$A_PID" -n curl -s -m 1 "http://$NET_A_IP:$1/" | grep -q "sr-marker A" &&
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
			--inh-caps=-all -- env HOME="$SR_TMP/home-user" XDG_CONFIG_HOME="$SR_TMP/xdg-user"
			SANDBOX_RUN_STATE_DIR="$SR_TMP/state-user" SANDBOX_RUN_DATA_DIR="$SR_TMP/data-user")
	fi
	nsenter -t "$A_PID" -n -m -- "${as[@]}" "$SR" "$@" <"${SR_STDIN:-/dev/null}" >"$o" 2>"$e"
	rc=$?
	out=$(cat "$o")
	errout=$(cat "$e")
}
