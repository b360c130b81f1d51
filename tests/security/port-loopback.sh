#!/usr/bin/env bash
# A published port (`sandbox-run port`) against another user of the host:
# its host side is the loopback's, 127.0.0.1 and ::1 alike, so that no one
# else can listen where the owner's "localhost:PORT" goes (::1 first for
# browsers, Python, Node where /etc/hosts says so), before the port is
# published or after, as root and as a user.
. "$(dirname "$0")/../integration/libtest.sh"

if ! python3 -c 'import socket; s = socket.socket(socket.AF_INET6); s.bind(("::1", 0))' 2>/dev/null; then
	echo "1..0 # SKIP the host has no IPv6 loopback (::1)"
	exit 0
fi

# other CMD... &: CMD as the other user (sr-test in root's round, root in
# the user's), replacing the background subshell: $! is its pid.
other() {
	if [ "$SR_AS" = root ]; then
		exec setpriv --reuid="$SR_TEST_USER" --regid="$SR_TEST_USER" --clear-groups \
			--inh-caps=-all "$@"
	fi
	exec "$@"
}

# Listens on [::1]:PORT and answers "impostor" (its stdout: "listening", or why not).
IMPOSTOR='
import socket, sys
s = socket.socket(socket.AF_INET6)
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
try:
    s.bind(("::1", int(sys.argv[1])))
    s.listen(16)
except OSError as e:
    print("bind: " + type(e).__name__, flush=True)
    sys.exit(0)
print("listening", flush=True)
while True:
    c, _ = s.accept()
    c.sendall(b"impostor\n")
    c.close()
'

# What ADDR:PORT answers first ("refused" if nothing listens).
reach() {
	/usr/bin/python3 -c '
import socket, sys
try:
    s = socket.create_connection((sys.argv[1], int(sys.argv[2])), 5)
    print(s.makefile().readline().strip() or "nothing")
except OSError as e:
    print(type(e).__name__)' "$1" "$2"
}

t_squatted_v6() {
	local port url host_port imp
	port=$((34000 + ($$ % 5000) * 2)) && [ "$SR_AS" = root ] || port=$((port + 1))
	sr create --net none --timeout 120
	local sb=$out
	sr exec "$sb" -- sh -c "setsid python3 -c '
import socket
s = socket.socket()
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind((\"127.0.0.1\", $port))
s.listen(16)
while True:
    c, _ = s.accept()
    c.sendall(b\"sandbox\\n\")
    c.close()
' >/dev/null 2>&1 &"
	until_ok 10 as_user "$SR_BIN" exec "$sb" -- sh -c "grep -qi ':$(printf %04X "$port") 00000000:0000 0A' /proc/net/tcp"
	# The other user is there first, on ::1 only.
	: >"$SR_OUT/impostor1" # the last round's answer is not this one's
	other /usr/bin/python3 -c "$IMPOSTOR" "$port" >"$SR_OUT/impostor1" 2>&1 &
	imp=$!
	SR_BG_PIDS="${SR_BG_PIDS:-} $imp"
	until_ok 5 grep -q . "$SR_OUT/impostor1"
	assert_eq "the other user listens on [::1]:$port first" listening "$(cat "$SR_OUT/impostor1")"
	sr port "$sb" "$port"
	url=$out
	host_port=${url##*:}
	assert_eq "published: 127.0.0.1:$host_port reaches the sandbox" sandbox "$(reach 127.0.0.1 "$host_port")"
	assert_eq "and so does [::1]:$host_port, never the other user's listener (it did before)" \
		sandbox "$(reach ::1 "$host_port")"
	kill "$imp" 2>/dev/null
	wait "$imp" 2>/dev/null
	# Once published, no one else gets ::1's side of it.
	: >"$SR_OUT/impostor2"
	other /usr/bin/python3 -c "$IMPOSTOR" "$host_port" >"$SR_OUT/impostor2" 2>&1 &
	imp=$!
	SR_BG_PIDS="${SR_BG_PIDS:-} $imp"
	until_ok 5 grep -q . "$SR_OUT/impostor2"
	assert_eq "the other user cannot listen on [::1]:$host_port after" "bind: OSError" \
		"$(cat "$SR_OUT/impostor2")"
	assert_eq "which reaches the sandbox still" sandbox "$(reach ::1 "$host_port")"
	kill "$imp" 2>/dev/null
	wait "$imp" 2>/dev/null
	sr rm "$sb"
	assert_eq "rm: the port is closed on both" "ConnectionRefusedError ConnectionRefusedError" \
		"$(reach 127.0.0.1 "$host_port") $(reach ::1 "$host_port")"
}

for_each_user t_squatted_v6
done_testing
