#!/usr/bin/env bash
# An --allow entry that is a host name opens what DNS says the name is,
# and DNS is not the caller: whoever answers for the name (its owner, a
# spoofed or compromised resolver, a rebinding attack) must not open the
# cloud's metadata service, a private or carrier-grade NAT network, or the
# host itself. Security round 2, finding 2 (medium): a name that resolved
# to 169.254.169.254 or to the host's own address was let through. The
# addresses now come from the sandbox's resolver, into the policy's sets,
# when the agent asks (docs/network.md): the sets come after the default
# refusals, so the same holds.
#
# The whole run happens in namespaces this script creates (libnet.sh): A,
# where sandbox-run and its helper run (their "host"), and B, a remote
# that holds the metadata, private, CGNAT and public addresses and the
# tests' own DNS server, which answers for the names below. Every
# listener answers with a marker naming itself, so a refusal is told apart
# from whatever else might answer.
. "$(dirname "$0")/../integration/libtest.sh"
. "$(dirname "$0")/../integration/libnet.sh"

net_need

PORT=8080
METADATA=169.254.169.254
PRIVATE=10.77.0.2
CGNAT=100.64.0.2
PUBLIC=198.51.100.2
LATE=198.51.100.77
LATE6=2001:db8:a::77
SHARED=198.51.100.3

setup_network() {
	net_up && net_addr "$METADATA" "$PRIVATE" "$CGNAT" "$PUBLIC" && net_dns &&
		net_listen "$PORT" || return 1
	net_zone "metadata.sr-test A $METADATA" "private.sr-test A $PRIVATE" \
		"cgnat.sr-test A $CGNAT" "public.sr-test A $PUBLIC" "host.sr-test A $NET_A_IP" \
		"loopback.sr-test A 127.0.0.1" "rebind.sr-test CNAME metadata.sr-test" \
		"late.sr-test A $LATE"
	cp "$NET_ZONE" "$SR_TMP/zone.saved"
}

# The sandbox's curl, body on stdout: refused connections fail at once (exit 7).
CURL='curl -sS -m 5'

# refused NAME ALLOW URL-HOST [ADDRESS]: with --allow ALLOW, the agent
# resolves URL-HOST (through the sandbox's resolver) and connects; the
# policy refuses it at once, and nothing answered. With ADDRESS, that
# address is dialled directly afterwards, and refused too.
refused() {
	sr_a --net egress --allow "$2" -- sh -c "$CURL http://$3:$PORT/; echo curl=\$?${4:+; $CURL http://$4:$PORT/; echo curl=\$?}"
	assert_match "$1: refused (curl exit 7)" "curl=7" "$out"
	assert_no_match "$1: no listener answered" "sr-marker" "$out"
	[ -n "${4:-}" ] && assert_no_match "$1: nor when dialled directly" "curl=0" "$out"
}

t_name_to_refused_ranges() {
	refused "--allow NAME resolving to the metadata address" metadata.sr-test metadata.sr-test "$METADATA"
	refused "--allow NAME:PORT resolving to the metadata address" "metadata.sr-test:$PORT" \
		metadata.sr-test "$METADATA"
	refused "--allow NAME resolving to a private address" private.sr-test private.sr-test "$PRIVATE"
	refused "--allow NAME resolving to a carrier-grade NAT address" cgnat.sr-test cgnat.sr-test "$CGNAT"
	refused "--allow NAME whose CNAME leads to the metadata address" rebind.sr-test rebind.sr-test
	refused "--allow '*.NAME' resolving to the metadata address" '*.sr-test' metadata.sr-test "$METADATA"
}

t_name_to_host() {
	refused "--allow NAME resolving to the host's own address" host.sr-test host.sr-test "$NET_A_IP"
	refused "--allow NAME resolving to loopback: the host's, through the helper's gateway" \
		loopback.sr-test loopback.sr-test 10.0.2.2
	sr_a --net egress --allow loopback.sr-test -- $CURL "http://loopback.sr-test:$PORT/"
	assert_no_match "--allow NAME resolving to 127.0.0.1: the sandbox's own, not the host's listener" \
		"sr-marker" "$out"
}

# gained ADDRESS/LEN SR-ARGS -- URL: the sandbox starts, then A, its host,
# gains ADDRESS (on lo; a new IPv6 temporary address, a DHCP lease, an
# interface brought up alike), and only then does the agent fetch URL.
# The agent says it runs through one FIFO, and waits on the other.
gained() {
	local addr=$1 url=$4 pid
	gate_open
	mkfifo -m 0666 "$GATE_DIR/up"
	exec 9<>"$GATE_DIR/up"
	(read -r -t 20 -u 9 _ && nsenter -t "$A_PID" -n ip addr add "$addr" dev lo && gate_release) &
	pid=$!
	sr_a --net egress "${GATE_OPTS[@]}" $2 -- sh -c \
		"echo up >/gate/up; read l </gate/fifo; $CURL $url; echo curl=\$?"
	wait "$pid"
	exec 9>&-
	gate_close
	nsenter -t "$A_PID" -n ip addr del "$addr" dev lo
}

# The host's own addresses are listed at start; one it gains while the
# sandbox runs is refused too, dialled directly and through an allowed
# name. Before, it reached the host's services on 0.0.0.0 (and [::]).
t_host_gains_address() {
	gained "$LATE/32" "" -- "http://$LATE:$PORT/"
	assert_match "default mode: an address the host gains during the run is refused" "curl=7" "$out"
	assert_no_match "and the host's listener did not answer" "sr-marker" "$out"
	gained "$LATE/32" "--allow late.sr-test" -- "http://late.sr-test:$PORT/"
	assert_match "--allow NAME resolving to an address the host gained: refused" "curl=7" "$out"
	assert_no_match "and nothing answered" "sr-marker" "$out"
	gained "$LATE/32" "--allow $LATE:$PORT" -- "http://$LATE:$PORT/"
	assert_match "--allow naming that address exactly: reached, as at start" \
		"sr-marker A $LATE" "$out"
	# A living sandbox, the one that runs long enough to see it: its keeper refuses it too.
	sr_a create --net egress --timeout 60s
	local id=$out
	nsenter -t "$A_PID" -n ip addr add "$LATE/32" dev lo
	sr_a exec "$id" -- sh -c "$CURL http://$LATE:$PORT/; echo curl=\$?"
	assert_match "a living sandbox: an address the host gains after create is refused" "curl=7" "$out"
	assert_no_match "and nothing answered" "sr-marker" "$out"
	sr_a rm "$id"
	nsenter -t "$A_PID" -n ip addr del "$LATE/32" dev lo
	if [ -n "$NET_V6" ]; then
		gained "$LATE6/128" "" -- "-g http://[$LATE6]:$PORT/"
		assert_match "IPv6: an address the host gains is refused" "curl=7" "$out"
		assert_no_match "and the host's listener did not answer" "sr-marker" "$out"
	fi
}

# What must still work: a public name, and addresses written as addresses.
t_controls() {
	sr_a --net egress --allow public.sr-test -- $CURL "http://public.sr-test:$PORT/"
	assert_eq "--allow NAME resolving to a public address: reached" "sr-marker B $PUBLIC" "$out"
	sr_a --net egress --allow "$METADATA" -- $CURL "http://$METADATA:$PORT/"
	assert_eq "--allow with the metadata address written out: reached (the caller meant it)" \
		"sr-marker B $METADATA" "$out"
	sr_a --net egress --allow "$PRIVATE/32:$PORT" -- $CURL "http://$PRIVATE:$PORT/"
	assert_eq "--allow with a private CIDR written out: reached" "sr-marker B $PRIVATE" "$out"
	sr_a --net egress --allow "$NET_A_IP:$PORT" -- $CURL "http://$NET_A_IP:$PORT/"
	assert_eq "--allow naming the host's own address exactly: reached" "sr-marker A $NET_A_IP" "$out"
	sr_a --net egress --allow public.sr-test --allow private.sr-test -- sh -c \
		"$CURL http://private.sr-test:$PORT/ 2>/dev/null; $CURL http://public.sr-test:$PORT/"
	assert_eq "a refused name beside a public one does not close the public one" \
		"sr-marker B $PUBLIC" "$out"
}

if ! setup_network; then
	not_ok "build the test network (namespaces A and B, the DNS server)"
	done_testing
	exit
fi
# An agent that fills the allow set (a wildcard whose names resolve to 64
# new addresses each, past the set's 4096): said once, in words, not a
# line for each query ("Too many open files in system" before).
t_set_full() {
	local zone
	zone=$(cat "$NET_ZONE")
	python3 -c '
for n in range(66):
    for a in range(64):
        print("n%d.fill.sr-test A 1.%d.%d.1 3600" % (n, n, a))' >>"$NET_ZONE"
	sr_a --net egress --allow '*.fill.sr-test' -- python3 -c '
import socket
for n in range(66):
    try:
        socket.getaddrinfo("n%d.fill.sr-test" % n, 80, socket.AF_INET)
    except OSError:
        print("n%d failed" % n)
socket.getaddrinfo("n0.fill.sr-test", 80, socket.AF_INET)
print("n0 again")'
	net_zone "$zone"
	assert_eq "the names past the set's 4096 addresses fail, those in it resolve again" \
		"$(printf 'n64 failed\nn65 failed\nn0 again')" "$out"
	assert_eq "a full set is said once" 1 "$(grep -c SERVFAIL <<<"$errout")"
	assert_match "in words" "allowed addresses are full \(4096 of each kind at a time, each kept for its TTL\): 'n64.fill.sr-test'" "$errout"
}

# An allow set's element, as the host's root sees it in the sandbox's
# network namespace (the namespace of PID): "ADDRESS timeout T".
set_element() {
	nsenter -t "$1" -n python3 -c '
import ctypes, re, sys
lib = ctypes.CDLL("libnftables.so.1")
lib.nft_ctx_new.restype = ctypes.c_void_p
lib.nft_ctx_buffer_output.argtypes = [ctypes.c_void_p]
lib.nft_ctx_get_output_buffer.restype = ctypes.c_char_p
lib.nft_ctx_get_output_buffer.argtypes = [ctypes.c_void_p]
lib.nft_run_cmd_from_buffer.argtypes = [ctypes.c_void_p, ctypes.c_char_p]
ctx = lib.nft_ctx_new(0)
lib.nft_ctx_buffer_output(ctx)
lib.nft_run_cmd_from_buffer(ctx, b"list set inet sandbox_run allow4")
m = re.search(re.escape(sys.argv[1]) + r" timeout [0-9hms]+", lib.nft_ctx_get_output_buffer(ctx).decode())
print(m.group(0) if m else "none")' "$2"
}

# Two names share an address (a CDN's), the second with a shorter TTL:
# the address stays open for the first's hour (it was cut to the
# second's minute, while the agent may keep the first's answer an hour).
t_shared_address() {
	local pid sleeper
	net_zone "long.sr-test A $SHARED 3600" "short.sr-test A $SHARED 1"
	: >"$SR_TMP/shared.out" # the last run's answer is not this one's
	(nsenter -t "$A_PID" -n -m -- "${SR_AS_PREFIX[@]}" "$SR" -q --net egress --allow long.sr-test \
		--allow short.sr-test -- sh -c 'getent hosts long.sr-test && getent hosts short.sr-test && exec sleep 30' \
		</dev/null >"$SR_TMP/shared.out" 2>&1) &
	pid=$!
	SR_BG_PIDS="${SR_BG_PIDS:-} $pid"
	until_ok 10 grep -q short "$SR_TMP/shared.out"
	sleeper=$(descendant "$pid" sleep)
	assert_match "an address two names share keeps the longer TTL's timeout (1 h, not 1 min)" \
		"^$SHARED timeout (1h|59m)" "$(set_element "${sleeper:-0}" "$SHARED")"
	kill -KILL "$pid" "$(descendant "$pid" sandbox-run)" 2>/dev/null
	wait "$pid" 2>/dev/null
	net_zone "$(cat "$SR_TMP/zone.saved")"
}

round_prefix() {
	SR_AS_PREFIX=()
	if [ "$SR_AS" = user ]; then
		SR_AS_PREFIX=(setpriv --reuid="$SR_TEST_USER" --regid="$SR_TEST_USER" --clear-groups
			--inh-caps=-all -- env HOME="$SR_TMP/home-user")
	fi
}
t_round_shared() {
	round_prefix
	t_shared_address
}

for_each_user t_name_to_refused_ranges t_name_to_host t_host_gains_address t_controls t_set_full \
	t_round_shared
done_testing
