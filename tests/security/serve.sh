#!/usr/bin/env bash
# sandbox-run serve against hostile clients (the outside review of the
# API, issue 21): another user of the host, who has no token, and a
# client whose requests are built to confuse the server. As root and as
# an unprivileged user, each round with its own server and state.
. "$(dirname "$0")/../integration/libtest.sh"
. "$(dirname "$0")/../integration/libserve.sh"

# another CMD...: as a user who is neither the round's nor has its token.
another() {
	setpriv --reuid=nobody --regid=nogroup --clear-groups --inh-caps=-all -- "$@"
}

# preview HOST PATH: what another user gets through the API's port with that Host.
preview() {
	another curl -s -m 10 -H "Host: $1" "http://127.0.0.1:$PORT$2"
}

# own_preview HOST PATH: what the server's own user gets there.
own_preview() {
	as_user curl -s -m 10 -H "Host: $1" "http://127.0.0.1:$PORT$2"
}

# A server in the sandbox $1 on port $2, serving a file whose text is $3.
serve_inside() {
	api POST "/v1/sandboxes/$1/exec" "{\"cmd\": \"mkdir -p /tmp/www && echo $3 >/tmp/www/s.txt && cd /tmp/www && (python3 -m http.server $2 >/dev/null 2>&1 &) && sleep 1\"}"
}

# Previews need no token: only the server's own user reaches them (the
# kernel says whose a loopback connection is), and only what the server
# made, by its whole id, never a sandbox of its user made by the CLI (by a
# name, a prefix anyone can try, or even its id), nor one by a prefix of
# its id.
t_preview_scope() {
	local cli cli_id sb hp
	start_serve --listen 127.0.0.1:0 || return
	sr create --net none --timeout 120 --name cli-made
	cli_id=$out
	api POST "/v1/sandboxes/$cli_id/exec" '{"cmd": "mkdir -p /tmp/www && echo cli-secret >/tmp/www/s.txt && cd /tmp/www && (python3 -m http.server 8000 >/dev/null 2>&1 &) && sleep 1"}'
	api POST /v1/sandboxes '{"net": "none", "timeout": "2m"}'
	sb=$(jf 'j["id"]')
	serve_inside "$sb" 8001 api-made
	for cli in "cli-made" "${cli_id:0:4}" "$cli_id"; do
		out=$(preview "8000-$cli.localhost" /s.txt)
		assert_no_match "another user, no token, Host 8000-$cli: not the CLI's sandbox" 'cli-secret' "$out"
		out=$(own_preview "8000-$cli.localhost" /s.txt)
		assert_no_match "nor the server's user: a preview is of what the API made" 'cli-secret' "$out"
	done
	out=$(own_preview "8001-${sb:0:6}.localhost" /s.txt)
	assert_no_match "nor the API's sandbox by a prefix of its id" 'api-made' "$out"
	out=$(preview "8001-$sb.localhost" /s.txt)
	assert_no_match "another user, the API's sandbox by its whole id: refused" 'api-made' "$out"
	assert_match "saying whose previews are" "a preview is for its server's user \(uid $(as_user id -u)\) only" "$out"
	out=$(own_preview "8001-$sb.localhost" /s.txt)
	assert_eq "the server's user, by its whole id: previewed (E2B's getHost)" api-made "$out"
	# The port the keeper listens on for the preview is the preview's too.
	api GET "/v1/sandboxes/$sb"
	hp=$(jf '[p["host_port"] for p in j["ports"] if p["port"] == 8001][0]')
	check "the preview's port is published on the host ($hp), for it alone" test -n "$hp"
	out=$(another curl -s -m 10 "http://127.0.0.1:$hp/s.txt")
	assert_no_match "another user straight to it: refused" 'api-made' "$out"
	out=$(as_user curl -s -m 10 "http://127.0.0.1:$hp/s.txt")
	assert_eq "the server's user straight to it: served" api-made "$out"
	# Published by name, a port is open to the host, as \`sandbox-run port\`'s are.
	api POST "/v1/sandboxes/$sb/ports/8001"
	out=$(another curl -s -m 10 "http://127.0.0.1:$hp/s.txt")
	assert_eq "published through the API: open" api-made "$out"
	# (The 404 is the sandbox's server's: the request went there.)
	code=$(as_user curl -s -o /dev/null -w '%{http_code}' -H "Host: 8001-$sb.localhost" \
		"$URL/v1/health")
	assert_eq "a preview's Host never reaches the API" 404 "$code"
	# With the token, not the sandbox either: closed (t_preview_reuse).
	code=$(as_user curl -s -o /dev/null -w '%{http_code}' -H "Host: 8001-$sb.localhost" \
		-H "Authorization: Bearer $TOKEN" "$URL/v1/health")
	assert_eq "nor with the token, which never reaches the sandbox: closed" 000 "$code"
	sr rm -f "$cli_id"
	stop_serve
}

# A server in the sandbox $1 on port $2 that answers "app" and writes the
# head of every request it gets to /tmp/seen.txt.
serve_logging_inside() {
	local src='import http.server
class H(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    def do_GET(self):
        open("/tmp/seen.txt", "a").write(self.requestline + "\n" + str(self.headers))
        self.send_response(200); self.send_header("Content-Length", "4"); self.end_headers()
        self.wfile.write(b"app\n")
    def log_message(self, *a): pass
http.server.ThreadingHTTPServer(("127.0.0.1", int(__import__("sys").argv[1])), H).serve_forever()'
	api POST "/v1/sandboxes/$1/exec" "$(python3 -c 'import json,sys; print(json.dumps({"argv": ["sh", "-c", "cat >/tmp/s.py; (python3 /tmp/s.py " + sys.argv[2] + " >/dev/null 2>&1 &); sleep 1"], "stdin": sys.argv[1]}))' "$src" "$2")"
}

# preview_setup PORT: the round's server, a sandbox it made (its id in
# the caller's sb) and serve_logging_inside there on PORT, for a preview
# to reach. Fails only if the server did not start.
preview_setup() {
	start_serve --listen 127.0.0.1:0 || return
	api POST /v1/sandboxes '{"net": "none", "timeout": "2m"}'
	sb=$(jf 'j["id"]')
	serve_logging_inside "$sb" "$1"
	return 0
}

# An agent that never closes a connection kept every preview connection
# the user's clients ever made to it: a relay held the client's side until
# the sandbox closed its own, and relays counted against the 256
# connections that may wait for their request head, so that once 256 had
# come and gone, every connection to the TCP listener was closed at once,
# the API's with its token too (found by a security review). A relay with
# one side ended is over once it moves nothing for --client-timeout, and a
# relay counts for nothing there.
t_preview_held() {
	local sb holder base out
	start_serve --listen 127.0.0.1:0 --client-timeout 2 || return
	api POST /v1/sandboxes '{"net": "none", "timeout": "2m"}'
	sb=$(jf 'j["id"]')
	holder='import socket
s = socket.socket()
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("127.0.0.1", 8003))
s.listen(1024)
held = []
while True:
    held.append(s.accept()[0])'
	api POST "/v1/sandboxes/$sb/exec" "$(python3 -c 'import json,sys; print(json.dumps({"argv": ["sh", "-c", "cat >/tmp/h.py; (python3 /tmp/h.py >/dev/null 2>&1 &); sleep 1"], "stdin": sys.argv[1]}))' "$holder")"
	base=$(find "/proc/$SERVE_PID/fd" -mindepth 1 | wc -l)
	out=$(as_user python3 -c '
import socket, sys, time
port, host = int(sys.argv[1]), sys.argv[2]
cs = []
for i in range(300):
    try:
        c = socket.create_connection(("127.0.0.1", port), timeout=5)
        c.sendall(b"GET / HTTP/1.1\r\nHost: %s\r\n\r\n" % host.encode())
        cs.append(c)
    except OSError:
        pass
time.sleep(3)
for c in cs:
    c.close()
print(len(cs))' "$PORT" "8003-$sb.localhost")
	assert_eq "300 preview connections to an agent that never closes, then closed by their client" 300 "$out"
	out=$(as_user curl -s -m 5 -o /dev/null -w '%{http_code}' -H "Authorization: Bearer $TOKEN" "$URL/v1/health")
	assert_eq "the API on TCP answers at once (relays are not connections waiting for their head)" 200 "$out"
	check "their relays are gone within --client-timeout (2 s)" \
		until_ok 10 sh -c "[ \$(find /proc/$SERVE_PID/fd -mindepth 1 | wc -l) -le $((base + 8)) ]"
	api DELETE "/v1/sandboxes/$sb"
	stop_serve
}

# A preview is routed by its connection's first request, and relayed as
# bytes. An HTTP client that keeps connections by address (urllib3 and
# requests, Go's, Node's agents), pointed at 127.0.0.1:PORT with a
# preview's Host as docs/api.md says, sends its next request, an API
# call with the token, on the same connection: the sandbox got it, token
# and all, and answered it. So did a client that sends the token with
# every request (a session's headers) to a preview. The preview's
# connection is closed instead, before any of that request goes in.
t_preview_reuse() {
	local sb probe
	preview_setup 8002 || return
	probe='import http.client, sys
port, token, host = int(sys.argv[1]), sys.argv[2], sys.argv[3]
def get(c, path, headers):
    try:
        c.request("GET", path, headers=headers)
        return c.getresponse().read().decode().strip() or "(empty)"
    except (OSError, http.client.HTTPException) as e:
        return "closed"
c = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
print("preview:", get(c, "/a", {"Host": host}))
print("again:", get(c, "/b", {"Host": host}))
print("api:", get(c, "/v1/health", {"Authorization": "Bearer " + token}))
c = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
print("token to preview:", get(c, "/c", {"Host": host, "X-API-Key": token}))'
	out=$(as_user python3 -c "$probe" "$PORT" "$TOKEN" "8002-$sb.localhost")
	assert_match "a preview answers, kept alive" $'^preview: app
again: app$' "$(sed -n 1,2p <<<"$out")"
	assert_eq "an API call on the preview's connection: closed, not the sandbox's to answer" \
		"api: closed" "$(sed -n 3p <<<"$out")"
	assert_eq "the token sent to a preview: closed" "token to preview: closed" "$(sed -n 4p <<<"$out")"
	api POST "/v1/sandboxes/$sb/exec" '{"cmd": "cat /tmp/seen.txt"}'
	assert_no_match "the sandbox never saw the token" "$TOKEN" "$(jf 'j["stdout"]')"
	assert_no_match "nor the API's request" '/v1/health' "$(jf 'j["stdout"]')"
	assert_match "it saw the preview's requests" 'GET /b HTTP' "$(jf 'j["stdout"]')"
	api DELETE "/v1/sandboxes/$sb"
	stop_serve
}

# A preview whose first head came in two pieces: on_head, waiting for the
# rest, had the socket wake it only once more than the first piece was
# there (SO_RCVLOWAT), and the relay kept that. A later request, or a
# WebSocket's frame, shorter than the first piece was never relayed.
t_preview_split_head() {
	local sb probe
	preview_setup 8003 || return
	probe='import socket, sys, time
port, host = int(sys.argv[1]), sys.argv[2]
s = socket.create_connection(("127.0.0.1", port)); s.settimeout(5)
s.sendall(b"GET /a HTTP/1.1\r\nX-Pad: " + b"x" * 600 + b"\r\n")
time.sleep(0.5)
s.sendall(b"Host: " + host.encode() + b"\r\n\r\n")
def answer():
    got = b""
    try:
        while not got.endswith(b"app\n"):
            d = s.recv(4096)
            if not d: break
            got += d
    except OSError:
        pass
    return "app" if got.endswith(b"app\n") else "none"
print("first:", answer())
s.sendall(b"GET /b HTTP/1.1\r\nHost: " + host.encode() + b"\r\n\r\n")
print("second:", answer())'
	out=$(as_user python3 -c "$probe" "$PORT" "8003-$sb.localhost")
	assert_eq "a head in two pieces: answered" "first: app" "$(sed -n 1p <<<"$out")"
	assert_eq "and a shorter request after it on the connection too" "second: app" \
		"$(sed -n 2p <<<"$out")"
	api DELETE "/v1/sandboxes/$sb"
	stop_serve
}

# cpu_ticks PID: the process's user + system time, in clock ticks.
cpu_ticks() {
	awk '{print $14 + $15}' "/proc/$1/stat"
}

# Half a request head, then the client shuts its side (no token needed
# for this: every loopback connection is looked at for a preview first):
# dropped at once, not a loop woken again and again until the deadline.
# 16 of them: another user's connections past 16 at once are closed
# before their head is read, and the 17th's send could then find a reset
# (a flake in CI), which is not what this looks at.
t_half_head() {
	local before after
	start_serve --listen 127.0.0.1:0 || return
	before=$(cpu_ticks "$SERVE_PID")
	out=$(another /usr/bin/python3 - "$PORT" <<'EOF2'
import socket, sys, time
conns = []
for _ in range(16):
    s = socket.socket(); s.connect(("127.0.0.1", int(sys.argv[1]))); s.settimeout(1)
    s.sendall(b"GET / HTTP/1.1\r\nHo"); s.shutdown(socket.SHUT_WR)
    conns.append(s)
time.sleep(3)
closed = 0
for s in conns:
    try:
        closed += s.recv(100) == b""
    except ConnectionResetError:
        closed += 1
    except OSError:
        pass
print(closed)
EOF2
)
	after=$(cpu_ticks "$SERVE_PID")
	assert_eq "16 half heads, shut: each closed" 16 "$out"
	check "and the server idle meanwhile (used $((after - before)) ticks in 3 s)" test $((after - before)) -lt 50
	api GET /v1/health
	assert_eq "the server answers the next client" 200 "$code"
	stop_serve
}

# Out of file descriptors (RLIMIT_NOFILE, lowered to 48 here; in use, the
# connections and what requests hold, such as E2B's commands that run on):
# a connection that cannot be accepted stays in the backlog, and the
# listener readable. The server waits for an fd to come free, idle, and
# then takes the connections that waited. Before, it was woken again and
# again, a core spent the whole time.
t_out_of_fds() {
	local before after pid
	start_serve --listen 127.0.0.1:0 || return
	as_user prlimit --pid "$SERVE_PID" --nofile=48:48
	rm -f "$SR_OUT/fds-$SR_AS"
	as_user /usr/bin/python3 - "$PORT" <<'EOF2' >"$SR_OUT/fds-$SR_AS" &
import socket, sys, time
conns = []
for _ in range(80):
    s = socket.socket(); s.connect(("127.0.0.1", int(sys.argv[1]))); conns.append(s)
print("ready", flush=True)
time.sleep(4)
EOF2
	pid=$!
	SR_BG_PIDS="${SR_BG_PIDS:-} $pid"
	check "80 connections made" until_ok 10 test -s "$SR_OUT/fds-$SR_AS"
	sleep 0.5
	check "the server is out of fds (48 at most)" eval 'grep -Eq "^Max open files +48 " /proc/"$SERVE_PID"/limits &&
		test "$(ls /proc/"$SERVE_PID"/fd | wc -l)" -ge 47'
	before=$(cpu_ticks "$SERVE_PID")
	sleep 2
	after=$(cpu_ticks "$SERVE_PID")
	check "the server idle while out of fds (used $((after - before)) ticks in 2 s)" \
		test $((after - before)) -lt 50
	wait "$pid"
	check "and it answers once they are gone" until_ok 10 eval 'api GET /v1/health; test "$code" = 200'
	stop_serve
}

# A %00 in the request's target would end the decoded path or argument
# there: refused (400), neither the truncated file written nor the
# sandbox itself removed for a file's DELETE.
t_nul() {
	local sb
	start_serve --listen 127.0.0.1:0 || return
	api POST /v1/sandboxes '{"net": "none", "timeout": "2m"}'
	sb=$(jf 'j["id"]')
	api PUT "/v1/sandboxes/$sb/files?path=/tmp/run.sh%00.txt" 'echo pwned'
	assert_eq "PUT ?path=/tmp/run.sh%00.txt: 400" 400 "$code"
	api GET "/v1/sandboxes/$sb/files?path=/tmp/run.sh"
	assert_eq "and /tmp/run.sh not written" 404 "$code"
	api DELETE "/v1/sandboxes/$sb%00/files?path=/tmp/x"
	assert_eq "DELETE /v1/sandboxes/ID%00/files: 400" 400 "$code"
	api GET "/v1/sandboxes/$sb"
	assert_eq "and the sandbox still there" "200 running" "$code $(jf 'j["state"]')"
	api PUT "/v1/sandboxes/$sb/files?path=/tmp/a%2500b" 'x'
	assert_eq "a %25 followed by 00 is no NUL: written" "200 /tmp/a%00b" "$code $(jf 'j["path"]')"
	api DELETE "/v1/sandboxes/$sb"
	stop_serve
}

# A key said twice in a JSON body: jansson kept the last, so what read the
# body on its way (a proxy's policy: "net" is "none") saw another request
# than the server made (a sandbox with egress). Refused: 400, nothing made
# or run.
t_dup_keys() {
	local sb
	start_serve || return
	api POST /v1/sandboxes '{"net": "none", "timeout": "2m", "net": "egress"}'
	assert_eq "create with \"net\" twice: 400" 400 "$code"
	api GET /v1/sandboxes
	assert_eq "and no sandbox made" 0 "$(jf 'len(j["sandboxes"])')"
	api POST /v1/sandboxes '{"net": "none", "timeout": "2m"}'
	sb=$(jf 'j["id"]')
	api POST "/v1/sandboxes/$sb/exec" '{"argv": ["true"], "argv": ["touch", "/tmp/dup"]}'
	assert_eq "exec with \"argv\" twice: 400" 400 "$code"
	api POST "/v1/sandboxes/$sb/exec" '{"argv": ["ls", "/tmp/dup"]}'
	assert_eq "and nothing run" 2 "$(jf 'j["exit_code"]')"
	api DELETE "/v1/sandboxes/$sb"
	stop_serve
}

# E2B's create takes its deadline in seconds ("timeout", the SDK's
# timeoutMs): a sandbox made cold got the profile's (300 s for e2b's)
# whatever it asked, and lived on past the end its client expected.
api_gone() {
	api GET "/v1/sandboxes/$1"
	[ "$code" = 404 ]
}

t_e2b_timeout() {
	local sb
	start_serve || return
	api POST /v2/sandboxes '{"templateID": "default", "timeout": 3, "allow_internet_access": false}'
	sb=$(jf 'j["sandboxID"]')
	assert_eq "E2B create with timeout 3: made" 201 "$code"
	api GET "/v1/sandboxes/$sb"
	assert_eq "its deadline is 3 s" 3 "$(jf 'j["limits"]["timeout_s"]')"
	check "and it is gone at it, not at the profile's" until_ok 15 api_gone "$sb"
	t_e2b_keep_alive
	stop_serve
}

# E2B's refresh and connect keep a sandbox alive at least that long and
# never shorten it: connect() asks for the SDK's 300 s by default, and a
# sandbox made for an hour had its life cut to that (or to the 15 s of a
# bare refresh, or none at all with 0: no deadline, for good). And
# setTimeout(0) is the end now, as E2B expires it; it was no deadline.
# The unversioned GET /sandboxes, which older SDKs call and take whole
# (they read no X-Next-Token), lists every sandbox; /v2's pages are of
# 100. The paging that came to both (E2B's /v2) cut the old one at 100:
# a cleanup by list() then kill() left the rest running, unseen.
t_list_whole() {
	local ids=() i
	start_serve || return
	for i in $(seq 101); do
		sr create -q --net none --timeout 120
		ids+=("$out")
	done
	api GET /sandboxes
	assert_eq "GET /sandboxes with 101 sandboxes: all of them" 101 "$(jf 'len(j)')"
	api GET /v2/sandboxes
	assert_eq "GET /v2/sandboxes: a page of 100" 100 "$(jf 'len(j)')"
	sr rm -f "${ids[@]}"
	stop_serve
}

# ends_in ID: the seconds left until E2B's endAt of the sandbox.
ends_in() {
	api GET "/sandboxes/$1"
	jf 'round(__import__("datetime").datetime.fromisoformat(j["endAt"].replace("Z", "+00:00")).timestamp() - __import__("time").time())'
}

t_e2b_keep_alive() {
	local sb e
	api POST /v2/sandboxes '{"templateID": "default", "timeout": 3600, "allow_internet_access": false}'
	sb=$(jf 'j["sandboxID"]')
	for e in "v2/sandboxes/$sb/connect {\"timeout\": 20}" "sandboxes/$sb/refreshes {}" \
		"sandboxes/$sb/refreshes {\"duration\": 0}"; do
		api POST "/${e%% *}" "${e#* }"
		assert_match "POST ${e/$sb/ID}: done" '^20[04]$' "$code"
		assert_match "and a sandbox of an hour keeps its hour" '^3[0-9]{3}$' "$(ends_in "$sb")"
	done
	api POST "/sandboxes/$sb/refreshes" '{"duration": 7200}'
	assert_match "refreshes {duration: 7200}: extended to two hours" '^(7[01][0-9]{2}|7200)$' "$(ends_in "$sb")"
	api POST "/sandboxes/$sb/timeout" '{"timeout": 0}'
	assert_eq "setTimeout(0): 204" 204 "$code"
	check "and the sandbox is gone at once, not left without a deadline" until_ok 3 api_gone "$sb"
}

# POST .../timeout moved the deadline, but GET /v1/sandboxes/ID (and ls,
# inspect) went on saying the create's limits.timeout_s: 120 for a
# sandbox given 10 more minutes. It is the deadline in force now,
# counted from when it was set, through /v1's route and E2B's alike.
t_timeout_moved() {
	local sb
	start_serve || return
	api POST /v1/sandboxes '{"net": "none", "timeout": "2m"}'
	sb=$(jf 'j["id"]')
	api POST "/v1/sandboxes/$sb/timeout" '{"timeout": "10m"}'
	api GET "/v1/sandboxes/$sb"
	assert_eq "POST /v1/.../timeout 10m: GET says timeout_s 600" 600 "$(jf 'j["limits"]["timeout_s"]')"
	api POST "/sandboxes/$sb/timeout" '{"timeout": 900}'
	api GET "/v1/sandboxes/$sb"
	assert_eq "E2B's setTimeout(900 s): 900" 900 "$(jf 'j["limits"]["timeout_s"]')"
	assert_match "and its endAt 900 s from now" '^(8[89][0-9]|900)$' "$(ends_in "$sb")"
	api POST "/sandboxes/$sb/refreshes" '{"duration": 1200}'
	api GET "/v1/sandboxes/$sb"
	assert_eq "a refresh that extends it to 1200 s: 1200" 1200 "$(jf 'j["limits"]["timeout_s"]')"
	api DELETE "/v1/sandboxes/$sb"
	stop_serve
	# A warm one, taken with a timeout of its own: its create's answer
	# said the profile's 120 (its state when the pool held it), the
	# keeper's too once released.
	start_serve --warm offline=1 || return
	until_ok 20 eval 'api GET /v1/pools; [ "$(jf "j[\"pools\"][0][\"ready\"]")" = 1 ]'
	api POST /v1/sandboxes '{"profile": "offline", "timeout": "10m"}'
	sb=$(jf 'j["id"]')
	assert_eq "a warm sandbox taken with timeout 10m: the answer says 600, expiring in 600 s" \
		"201 600 True" "$code $(jf '"%s %s" % (j["limits"]["timeout_s"], 590 < j["expires_ms"] / 1000 - __import__("time").time() <= 601)')"
	api GET "/v1/sandboxes/$sb"
	assert_eq "and GET (its keeper) too" 600 "$(jf 'j["limits"]["timeout_s"]')"
	api DELETE "/v1/sandboxes/$sb"
	stop_serve
}

# A deadline under a millisecond, as a number of seconds (0.0004): it
# came out as 0 ms, which says "none". A client that meant to end its
# sandbox at once took its deadline away (expires: null), and an exec
# meant to be cut short ran to its end. Refused now: 400.
t_tiny_timeout() {
	local sb
	start_serve || return
	api POST /v1/sandboxes '{"net": "none", "timeout": "2m"}'
	sb=$(jf 'j["id"]')
	api POST "/v1/sandboxes/$sb/timeout" '{"timeout": 0.0004}'
	assert_eq "timeout 0.0004 s: 400" 400 "$code"
	api GET "/v1/sandboxes/$sb"
	assert_match "and the sandbox keeps its deadline" '^20' "$(jf 'j["expires"]')"
	api POST "/v1/sandboxes/$sb/exec" '{"cmd": "touch /tmp/ran", "timeout": 0.0004}'
	assert_eq "an exec with timeout 0.0004 s: 400" 400 "$code"
	api POST "/v1/sandboxes/$sb/exec" '{"argv": ["ls", "/tmp/ran"]}'
	assert_eq "and not run" 2 "$(jf 'j["exit_code"]')"
	api DELETE "/v1/sandboxes/$sb"
	stop_serve
}

# envd's Start takes Connect's deadline from Connect-Timeout-Ms: read with
# strtoull, "-1" was no deadline at all (and "5s" 5 ms). Refused now
# (invalid_argument), the command not started; 0 is still none, 1 is 1 ms.
t_connect_timeout() {
	local sb t out
	start_serve || return
	api POST /v1/sandboxes '{"net": "none", "timeout": "2m"}'
	sb=$(jf 'j["id"]')
	for t in -1 5s 1; do
		out=$(as_user curl -s -m 20 --unix-socket "$SOCK" -X POST -H "E2b-Sandbox-Id: $sb" \
			-H 'Content-Type: application/json' -H "Connect-Timeout-Ms: $t" \
			-d '{"process": {"cmd": "/bin/sh", "args": ["-c", "touch /tmp/ran; sleep 3"]}}' \
			http://sandbox-run/process.Process/Start | tr -c '[:print:]' ' ')
		api POST "/v1/sandboxes/$sb/exec" '{"cmd": "ls /tmp/ran && rm /tmp/ran"}'
		if [ "$t" = 1 ]; then
			assert_match "Connect-Timeout-Ms: 1: the command cut short" deadline_exceeded "$out"
		else
			assert_match "Connect-Timeout-Ms: $t: invalid_argument" invalid_argument "$out"
			assert_eq "and the command not run" 2 "$(jf 'j["exit_code"]')"
		fi
	done
	t_timeout_before_start "$sb"
	api DELETE "/v1/sandboxes/$sb"
	stop_serve
}

# A timeout of 1 ms often passes before PID 1 has started the process
# (one time in ten here): the keeper tells the exec's end (124) with no
# start before it, which the server took for a failure of its own (500
# "sandbox-run: failed", Connect's "internal"). Thirty of each, every one
# the command's timeout.
t_timeout_before_start() {
	local i bad=0 v1=0
	for i in $(seq 30); do
		out=$(as_user curl -s -m 20 --unix-socket "$SOCK" -X POST -H "E2b-Sandbox-Id: $1" \
			-H 'Content-Type: application/json' -H "Connect-Timeout-Ms: 1" \
			-d '{"process": {"cmd": "/bin/sleep", "args": ["3"]}}' \
			http://sandbox-run/process.Process/Start | tr -c '[:print:]' ' ')
		[[ $out == *deadline_exceeded* && $out != *internal* ]] || bad=$((bad + 1))
		api POST "/v1/sandboxes/$1/exec" '{"argv": ["/bin/sleep", "3"], "timeout": "1ms"}'
		[ "$code" = 200 ] && [ "$(jf 'j["status"]')" = timeout ] || v1=$((v1 + 1))
	done
	assert_eq "Connect-Timeout-Ms: 1, 30 times: deadline_exceeded every time" 0 "$bad"
	assert_eq "an exec with timeout 1ms, 30 times: 124, timeout, every time" 0 "$v1"
}

# What the agent makes of a path the client names: a FIFO, a device, a
# link to the host's root through /proc. Refused at once, each as the
# client's error (a FIFO written with no reader, /dev/tty with no terminal:
# 500 "internal", as if the server had failed), nothing read or written
# beyond the sandbox, and nothing waits.
t_special_files() {
	local sb p
	start_serve || return
	api POST /v1/sandboxes '{"net": "none", "timeout": "2m"}'
	sb=$(jf 'j["id"]')
	api POST "/v1/sandboxes/$sb/exec" '{"cmd": "mkfifo /tmp/fifo && ln -s /proc/1/root/etc/shadow /tmp/shadow"}'
	for p in /tmp/fifo /dev/zero /dev/tty /tmp/shadow; do
		code=$(as_user curl -s -m 10 -o /dev/null -w '%{http_code}' --unix-socket "$SOCK" \
			"http://sandbox-run/v1/sandboxes/$sb/files?path=$p")
		assert_match "GET $p: a 4xx, within seconds" '^4' "$code"
	done
	for p in /tmp/fifo /dev/null /dev/tty; do
		api PUT "/v1/sandboxes/$sb/files?path=$p" 'written'
		assert_match "PUT $p: a 4xx" '^4' "$code"
	done
	api DELETE "/v1/sandboxes/$sb"
	stop_serve
}

# Every user of the host can connect to the TCP listener, and a connection
# holds a slot until its head comes (or 10 s): another user opening
# hundreds took every one, and the server's own user, token in hand, was
# closed at once. Another user's connections: 16 at once, the rest closed;
# the own user's request goes through meanwhile; and once they are closed,
# another user's are taken again (the count goes down).
t_foreign_slots() {
	local f="$SR_OUT/sec-foreign-$SR_AS" pid n
	start_serve --listen 127.0.0.1:0 || return
	another /usr/bin/python3 - "$PORT" >"$f" <<'EOF2' &
import socket, sys, time
conns = []
for _ in range(300):
    s = socket.socket(); s.connect(("127.0.0.1", int(sys.argv[1])))
    conns.append(s)
time.sleep(1)
held = 0
for s in conns:
    try:
        held += s.recv(1, socket.MSG_PEEK | socket.MSG_DONTWAIT) != b""
    except BlockingIOError:
        held += 1
    except OSError:
        pass
print(held, flush=True)
time.sleep(4)
EOF2
	pid=$!
	until_ok 10 test -s "$f"
	n=$(cat "$f")
	check "300 connections of another user: at most 16 held ($n)" test "${n:-999}" -le 16
	code=$(as_user curl -s -m 5 -o /dev/null -w '%{http_code}' -H "Authorization: Bearer $TOKEN" \
		"http://127.0.0.1:$PORT/v1/health")
	assert_eq "meanwhile the server's user, with its token, is answered" 200 "$code"
	wait "$pid"
	out=$(another /usr/bin/python3 - "$PORT" <<'EOF2'
import socket, sys
conns = []
for _ in range(16):
    s = socket.socket(); s.connect(("127.0.0.1", int(sys.argv[1]))); s.settimeout(5)
    s.sendall(b"GET /v1/health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
    conns.append(s)
print(sum(s.recv(100).startswith(b"HTTP/1.1 401") for s in conns))
EOF2
)
	assert_eq "once they are closed, 16 more of its connections are answered (401: no token)" 16 "$out"
	stop_serve
}

# libmicrohttpd gives up on a connection it has taken (its STARTED told,
# then its epoll_ctl fails, as with a full fs.epoll.max_user_watches): it
# tells CLOSED inside MHD_add_connection(), which frees the connection's
# tag, and the server must not look at the tag after that. Under
# valgrind, with an LD_PRELOAD that fails libmicrohttpd's epoll_ctl (its
# are the only ones with EPOLLET | EPOLLPRI).
t_mhd_gives_up() {
	local d="$SR_TMP/gives-up-$SR_AS" real_sr=$SR code
	if ! command -v valgrind >/dev/null || ! command -v cc >/dev/null; then
		skip "libmicrohttpd giving up on a taken connection" "no valgrind or cc"
		return
	fi
	rm -rf "$d"
	mkdir -p "$d"
	cat >"$d/shim.c" <<'EOF2'
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <sys/epoll.h>

int epoll_ctl(int epfd, int op, int fd, struct epoll_event *ev)
{
	static int (*real)(int, int, int, struct epoll_event *);

	if (!real)
		real = (int (*)(int, int, int, struct epoll_event *))dlsym(RTLD_NEXT, "epoll_ctl");
	if (op == EPOLL_CTL_ADD && ev && (ev->events & EPOLLET) && (ev->events & EPOLLPRI)) {
		errno = ENOSPC;
		return -1;
	}
	return real(epfd, op, fd, ev);
}
EOF2
	cc -shared -fPIC -o "$d/shim.so" "$d/shim.c" -ldl || {
		not_ok "the epoll_ctl shim built"
		return
	}
	printf '#!/bin/sh\nLD_PRELOAD=%s exec valgrind -q --log-file=%s %s "$@"\n' \
		"$d/shim.so" "$d/vg.log" "$real_sr" >"$d/sr"
	chmod -R a+rX "$d"
	chmod a+x "$d/sr"
	chmod 1777 "$d"
	SR="$d/sr" start_serve --listen 127.0.0.1:0 || return
	for _ in 1 2 3; do
		code=$(as_user curl -s -m 10 -o /dev/null -w '%{http_code}' \
			-H "Authorization: Bearer $TOKEN" "http://127.0.0.1:$PORT/v1/health")
	done
	check "the connections it gave up on are closed ($code)" test "$code" = 000
	stop_serve
	assert_eq "nothing read or freed after libmicrohttpd freed it (valgrind)" "" \
		"$(grep -E 'Invalid (read|write|free)' "$d/vg.log")"
	rm -rf "$d"
}

# envd_start SB CMD: E2B's commands.run(CMD, {background: true}) as its
# SDK sends it, the stream read until its first event (the start, or the
# end that refuses it) and then left, as a background command's client
# goes; the answer's text in $body.
envd_start() {
	body=$(as_user /usr/bin/python3 - "$SOCK" "$1" "$2" <<'EOF2'
import json, socket, struct, sys
msg = json.dumps({"process": {"cmd": "/bin/sh", "args": ["-c", sys.argv[3]], "cwd": "/"}})
s = socket.socket(socket.AF_UNIX)
s.settimeout(10)
s.connect(sys.argv[1])
s.sendall(("POST /process.Process/Start HTTP/1.1\r\nHost: x\r\nE2b-Sandbox-Id: %s\r\n"
           "Content-Type: application/json\r\nContent-Length: %d\r\n\r\n%s"
           % (sys.argv[2], len(msg), msg)).encode())
f = s.makefile("rb")
head = []
while (line := f.readline()) not in (b"\r\n", b""):
    head.append(line.lower())
body = b""
while len(body) < 5 or len(body) < 5 + struct.unpack(">BI", body[:5])[1]:
    if b"transfer-encoding: chunked\r\n" in head:
        body += f.read(int(f.readline(), 16))
        f.readline()
    else:
        body += f.read(1)
print(body[5:].decode())
EOF2
	)
}

# running_sleeps SB: the processes `sleep 3600` in the sandbox.
sleeps='for f in /proc/[0-9]*; do [ "$(tr "\\0" " " <$f/cmdline 2>/dev/null)" = "sleep 3600 " ] && echo ${f#/proc/}; done'
running_sleeps() {
	sr exec "$1" -- sh -c "$sleeps | wc -l"
	echo "$out" | tr -d ' '
}

# E2B's background commands run on once their client has gone, each
# holding its pipes and its keeper's connection in the server: a client
# with the token could start them until the server had no fd left, and
# then nobody's connection was taken. At --max-processes running, a start
# is refused (envd: resource_exhausted; /v1: 429 too_many), the server's
# fds stay bounded, and once one ends another may start.
t_process_cap() {
	local sb fds i
	start_serve --max-processes 4 || return
	api POST /v1/sandboxes '{"net": "none", "timeout": "2m"}'
	sb=$(jf 'j["id"]')
	fds=$(ls /proc/"$SERVE_PID"/fd | wc -l)
	for i in $(seq 12); do envd_start "$sb" "exec sleep 3600"; done
	check "four background commands run, not twelve" until_ok 10 eval 'test "$(running_sleeps "$sb")" = 4'
	assert_match "the fifth is refused: resource_exhausted" '"code":"resource_exhausted".*--max-processes' "$body"
	api POST "/v1/sandboxes/$sb/exec" '{"cmd": "true"}'
	assert_eq "so is a /v1 exec: 429 too_many" "429 too_many" "$code $(jf 'j["code"]')"
	check "the server holds at most 16 fds more ($fds before, $(ls /proc/"$SERVE_PID"/fd | wc -l) now)" \
		test "$(ls /proc/"$SERVE_PID"/fd | wc -l)" -le $((fds + 16))
	api GET /v1/health
	assert_eq "and still answers" 200 "$code"
	sr exec "$sb" -- sh -c "kill \$($sleeps | head -1)"
	check "once one has ended, another starts" \
		until_ok 10 eval 'envd_start "$sb" "exec sleep 3600"; [[ $body == *'"'"'"start"'"'"'* ]]'
	api DELETE "/v1/sandboxes/$sb"
	stop_serve
}

# A warm sandbox's keeper stopped (SIGSTOP) between its "ok" and the
# pool's hold: the pool waited for the hold's answer in serve's loop, and
# the whole API with it, for as long as the keeper stayed stopped; then
# for a second, after which it let the sandbox go and made another (a
# keeper merely slow on a loaded host, churned). Now the answer is
# awaited beside the API, and a keeper that goes on is held. Made sure:
# the server is stopped while the refill's keeper makes its sandbox,
# that keeper once it answered, then the server goes on, and the keeper
# after two seconds.
t_keeper_stopped_at_hold() {
	local kp sb
	start_serve --warm offline=1 || return
	until_ok 20 eval 'api GET /v1/pools; [ "$(jf "j[\"pools\"][0][\"ready\"]")" = 1 ]'
	as_user /usr/bin/python3 - "$SOCK" "$(state_dir)" "$SERVE_PID" >"$SR_OUT/hold-$SR_AS" 2>&1 <<'PY'
import json, os, signal, subprocess, sys, time
sock, state, serve = sys.argv[1], sys.argv[2], int(sys.argv[3])

def ids():
    return {d for d in os.listdir(state) if len(d) == 32}

def curl(*args):
    r = subprocess.run(["curl", "-s", "-m", "5", "-o", "/dev/null", "-w", "%{http_code}",
                        "--unix-socket", sock, *args], capture_output=True)
    return r.stdout.decode()

known = ids()
curl("-X", "POST", "http://sandbox-run/v1/sandboxes", "--data-binary",
     '{"profile": "offline", "timeout": "2m"}')
deadline = time.monotonic() + 10
while not ids() - known and time.monotonic() < deadline:
    time.sleep(0.0005)
os.kill(serve, signal.SIGSTOP)
new = (ids() - known).pop()
while not os.path.exists(os.path.join(state, new, "ctl")) and time.monotonic() < deadline:
    time.sleep(0.01)
time.sleep(0.5)
st = json.load(open(os.path.join(state, new, "state.json")))
print("keeper", st["keeper_pid"], "state before the hold:", st["state"], flush=True)
os.kill(st["keeper_pid"], signal.SIGSTOP)
os.kill(serve, signal.SIGCONT)
print("pools:", curl("http://sandbox-run/v1/pools"), "within 5 s", flush=True)
time.sleep(2)
os.kill(st["keeper_pid"], signal.SIGCONT)
print("sandbox", new, flush=True)
PY
	kp=$(sed -n 's/^keeper \([0-9]*\) .*/\1/p' "$SR_OUT/hold-$SR_AS")
	sb=$(sed -n 's/^sandbox //p' "$SR_OUT/hold-$SR_AS")
	# Stopped while the server was (it sends the hold): before the hold, and warm from the start.
	assert_match "the refill's keeper stopped before it was held" "state before the hold: warm" \
		"$(cat "$SR_OUT/hold-$SR_AS")"
	assert_eq "the server answers beside it" "pools: 200 within 5 s" "$(grep pools: "$SR_OUT/hold-$SR_AS")"
	check "and once its keeper goes on, that sandbox is the pool's ready one" until_ok 10 eval \
		'api GET /v1/pools; [ "$(jf "[j[\"pools\"][0][k] for k in (\"ready\", \"failed\")]")" = "[1, 0]" ]'
	check "its keeper lives on (not let go, not made again)" kill -0 "${kp:-0}"
	check "nor asked to end: its state is there" test -d "$(state_dir)/${sb:-none}"
	stop_serve
	check "nothing is left" until_ok 10 eval '[ -z "$(ls "$(state_dir)" | grep "^[0-9a-f]\{32\}$")" ]'
}

# hwm PID: the process's peak memory so far, in MB.
hwm() {
	echo $(($(sed -n 's/^VmHWM:[[:space:]]*\([0-9]*\) kB/\1/p' /proc/"$1"/status) / 1024))
}

# The agent names the files a listing lists, 100,000 of them at no cost:
# parsed whole into one answer, a listing of 12 MB took the server 170 MB
# for the request (envd's, 240 MB), and as much again for each at once.
# Now each entry is written as it is read: the server's peak stays within
# a few times the listing.
t_listing_memory() {
	local sb size
	start_serve || return
	api POST /v1/sandboxes '{"net": "none", "timeout": "2m"}'
	sb=$(jf 'j["id"]')
	sr exec "$sb" -- sh -c 'mkdir /tmp/many && cd /tmp/many && seq 100000 | xargs touch'
	size=$(as_user curl -s --unix-socket "$SOCK" "http://x/v1/sandboxes/$sb/files?path=/tmp/many&list=1" |
		python3 -c 'import json,sys; print(len(json.load(sys.stdin)["entries"]))')
	assert_eq "a listing of 100,000 names" 100000 "$size"
	size=$(as_user curl -s --unix-socket "$SOCK" -H "E2b-Sandbox-Id: $sb" -H 'Content-Type: application/json' \
		--data-binary '{"path": "/tmp/many"}' http://x/filesystem.Filesystem/ListDir |
		python3 -c 'import json,sys; print(len(json.load(sys.stdin)["entries"]))')
	assert_eq "and as envd's ListDir" 100000 "$size"
	check "the server's peak: under 120 MB ($(hwm "$SERVE_PID") MB)" test "$(hwm "$SERVE_PID")" -lt 120
	api DELETE "/v1/sandboxes/$sb"
	stop_serve
}

# An unstreamed exec's output is kept up to --max-output (16 MiB each),
# but its answer is JSON: a NUL is 6 bytes there (\u0000). Dumped whole,
# the answer to a command that printed NULs on both outputs (the agent
# chooses what `cat` of its files prints) was 192 MB, held twice over and
# copied once more: the server peaked at 530 MB, for one exec. Now the
# outputs are escaped as they are sent.
t_output_memory() {
	local sb got
	start_serve || return
	api POST /v1/sandboxes '{"net": "none", "timeout": "2m"}'
	sb=$(jf 'j["id"]')
	got=$(as_user curl -s --unix-socket "$SOCK" -X POST "http://x/v1/sandboxes/$sb/exec" \
		-d '{"cmd": "head -c 20000000 /dev/zero; head -c 20000000 /dev/zero >&2"}' |
		python3 -c 'import json,sys; j=json.load(sys.stdin); print(len(j["stdout"]), len(j["stderr"]), set(j["stdout"] + j["stderr"]) == {"\0"}, j["stdout_truncated"], j["stderr_truncated"])')
	assert_eq "20 MB of NULs on each output: 16 MiB of each kept, whole JSON" \
		"16777216 16777216 True True True" "$got"
	check "the server's peak: under 150 MB ($(hwm "$SERVE_PID") MB)" test "$(hwm "$SERVE_PID")" -lt 150
	api DELETE "/v1/sandboxes/$sb"
	stop_serve
}

# yeses SB: how many `yes` run in the sandbox.
yeses() {
	sr exec "$1" -- sh -c 'n=0; for f in /proc/[0-9]*/comm; do [ "$(cat $f 2>/dev/null)" = yes ] && n=$((n + 1)); done; echo $n'
	echo "$out"
}

# A streamed exec ends when its process does; what the process wrote is
# in its pipes, a pipeful at most. The server read on until the pipes were
# empty: daemons the process left writing as fast as it read (four `yes`)
# had it queue 38 MB for a client that took nothing. Now it reads a
# pipeful and closes them (the daemons end by SIGPIPE).
t_daemon_output() {
	local sb
	start_serve || return
	api POST /v1/sandboxes '{"net": "none", "timeout": "2m"}'
	sb=$(jf 'j["id"]')
	as_user /usr/bin/python3 - "$SOCK" "$sb" <<'EOF2'
import json, socket, sys, time
body = json.dumps({"cmd": "(yes &); (yes &); (yes &); (yes >&2 &); sleep 0.5", "stream": True})
s = socket.socket(socket.AF_UNIX)
s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
s.connect(sys.argv[1])
s.sendall(("POST /v1/sandboxes/%s/exec HTTP/1.1\r\nHost: x\r\nContent-Length: %d\r\n\r\n%s"
           % (sys.argv[2], len(body), body)).encode())
time.sleep(3)
EOF2
	check "the server's peak: under 20 MB ($(hwm "$SERVE_PID") MB)" test "$(hwm "$SERVE_PID")" -lt 20
	check "and the daemons are gone" until_ok 10 eval 'test "$(yeses "$sb")" = 0'
	api DELETE "/v1/sandboxes/$sb"
	stop_serve
}

# cpu_ticks PID: the user and system time of PID so far, in clock ticks.
cpu_ticks() {
	awk '{print $14 + $15}' "/proc/$1/stat"
}

# An E2B background command runs on once its client has gone, its output
# read and dropped (a dev server's log must not fill its pipe and stop
# it). Read as fast as it came, a command that writes without pause
# (`yes`) kept the server busy for as long as it ran: a CPU of the host's,
# which the sandbox's --cpus bounds only for the writer. Now what nobody
# reads is taken at up to 1 MiB a second; past it the writer waits. The
# command runs on, and the server answers.
t_detached_flood() {
	local sb before after hz
	hz=$(getconf CLK_TCK)
	start_serve || return
	api POST /v1/sandboxes '{"net": "none", "timeout": "2m"}'
	sb=$(jf 'j["id"]')
	envd_start "$sb" "exec yes"
	assert_match "the background command started" '"pid"' "$body"
	sleep 1
	before=$(cpu_ticks "$SERVE_PID")
	sleep 3
	after=$(cpu_ticks "$SERVE_PID")
	check "the server's CPU over 3 s of it: under 0.3 s ($((after - before)) of $hz a second)" \
		test $(((after - before) * 10)) -lt $((hz * 3))
	check "and the command runs on" test "$(yeses "$sb")" = 1
	api GET /v1/health
	assert_eq "the server answers" 200 "$code"
	# More than pipefuls, at the rate: it goes on to its end, not stopped.
	envd_start "$sb" "head -c 3000000 /dev/zero; touch /tmp/written"
	check "a command writing 3 MB nobody reads gets to its end" \
		until_ok 15 sr exec "$sb" -- test -e /tmp/written
	api DELETE "/v1/sandboxes/$sb"
	stop_serve
}

# Each file an upload writes holds two of the server's fds (its pipe, its
# keeper's connection), 64 of them at once for one multipart request:
# a few uploads at once took every fd the server had, and those that found
# none failed (500, 503, 429). Files being written by every upload are
# bounded too (128): six uploads of 300 files each, at once, to a server
# of 512 fds, are all written.
t_uploads_at_once() {
	local sb k pids="" codes
	start_serve || return
	as_user prlimit --pid "$SERVE_PID" --nofile=512:512
	api POST /v1/sandboxes '{"net": "none", "timeout": "2m"}'
	sb=$(jf 'j["id"]')
	for k in 1 2 3 4 5 6; do
		python3 -c 'import sys
for i in range(300):
    sys.stdout.write("--sr-boundary\r\nContent-Disposition: form-data; name=\"file\"; filename=\"up%s/f%d\"\r\n\r\nx\r\n" % (sys.argv[1], i))
sys.stdout.write("--sr-boundary--\r\n")' "$k" >"$SR_TMP/parts-$SR_AS-$k"
		chmod a+r "$SR_TMP/parts-$SR_AS-$k"
	done
	for k in 1 2 3 4 5 6; do
		as_user curl -s -m 60 -o /dev/null -w '%{http_code}\n' --unix-socket "$SOCK" -X POST \
			-H "E2b-Sandbox-Id: $sb" -H 'Content-Type: multipart/form-data; boundary=sr-boundary' \
			--data-binary "@$SR_TMP/parts-$SR_AS-$k" http://x/files >"$SR_OUT/upload-$SR_AS-$k" &
		pids="$pids $!"
	done
	# shellcheck disable=SC2086
	wait $pids
	codes=$(cat "$SR_OUT"/upload-"$SR_AS"-* | sort | uniq -c | tr -s ' ')
	assert_eq "six uploads of 300 files at once: each 200" " 6 200" "$codes"
	sr exec "$sb" -- sh -c 'ls /home/user/up*/ | grep -c "^f"'
	assert_eq "and 1,800 files written" 1800 "$out"
	api DELETE "/v1/sandboxes/$sb"
	stop_serve
}

# Out of fds, a file of an upload whose pipe could not be made was freed
# with its keeper's connection's fd as calloc left it, 0: the server's
# stdin was closed, and at the next failure whatever had taken fd 0 since
# (another request's socket: libmicrohttpd aborted the server). Now the
# upload fails ("Too many open files"), and the server keeps its fds and
# serves on.
t_upload_out_of_fds() {
	local sb k pids="" stdin
	start_serve || return
	api POST /v1/sandboxes '{"net": "none", "timeout": "2m"}'
	sb=$(jf 'j["id"]')
	stdin=$(readlink /proc/"$SERVE_PID"/fd/0)
	as_user prlimit --pid "$SERVE_PID" --nofile=40:40
	rm -f "$SR_OUT"/oof-"$SR_AS"-*
	for k in 1 2 3 4; do
		python3 -c 'import sys
for i in range(300):
    sys.stdout.write("--sr-boundary\r\nContent-Disposition: form-data; name=\"file\"; filename=\"out%s/f%d\"\r\n\r\nx\r\n" % (sys.argv[1], i))
sys.stdout.write("--sr-boundary--\r\n")' "$k" >"$SR_TMP/oof-parts-$SR_AS-$k"
		chmod a+r "$SR_TMP/oof-parts-$SR_AS-$k"
		as_user curl -s -m 60 -o "$SR_OUT/oof-$SR_AS-$k" --unix-socket "$SOCK" -X POST \
			-H "E2b-Sandbox-Id: $sb" -H 'Content-Type: multipart/form-data; boundary=sr-boundary' \
			--data-binary "@$SR_TMP/oof-parts-$SR_AS-$k" http://x/files &
		pids="$pids $!"
	done
	# shellcheck disable=SC2086
	wait $pids
	assert_match "out of fds, an upload fails saying so" "Too many open files" \
		"$(cat "$SR_OUT"/oof-"$SR_AS"-*)"
	check "the server is alive" kill -0 "$SERVE_PID"
	assert_eq "and its stdin still open ($stdin)" "$stdin" "$(readlink /proc/"$SERVE_PID"/fd/0)"
	api GET /v1/health
	assert_eq "and it answers" 200 "$code"
	api DELETE "/v1/sandboxes/$sb"
	stop_serve
}

# localhost is also ::1 (curl, browsers and Node try it too, first where
# /etc/hosts says so): another user listening on [::1]:PORT got what the
# owner sent to localhost:PORT -- a preview's requests (PORT-ID.localhost),
# an API call and its token. The server holds [::1] at its port too, and
# refuses a port whose ::1 side another holds.
t_localhost_twin() {
	local sq port sb
	port=$(python3 -c 'import socket; s=socket.socket(socket.AF_INET6); s.bind(("::1", 0)); print(s.getsockname()[1])')
	another /usr/bin/python3 -c '
import socket, sys, time
s = socket.socket(socket.AF_INET6); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("::1", int(sys.argv[1]))); s.listen(8); print("listening", flush=True); time.sleep(30)' "$port" \
		>"$SR_OUT/squat-$SR_AS" 2>&1 &
	sq=$!
	SR_BG_PIDS="${SR_BG_PIDS:-} $sq"
	until_ok 5 grep -q listening "$SR_OUT/squat-$SR_AS"
	rc=0
	errout=$(as_user timeout -k 2 10 "$SR" serve --listen "127.0.0.1:$port" 2>&1 >/dev/null) || rc=$?
	assert_eq "serve --listen 127.0.0.1:PORT with [::1]:PORT another's: refused, 125" 125 "$rc"
	assert_match "saying so" "\[::1\]:$port, where localhost:$port also goes, is taken" "$errout"
	kill "$sq" 2>/dev/null
	wait "$sq" 2>/dev/null
	start_serve --listen 127.0.0.1:0 || return
	assert_match "a server's port is held on [::1] too" "\[::1\]:$PORT " \
		"$(ss -Hltn "sport = :$PORT" | awk '{print $4 " "}' | tr -d '\n')"
	api POST /v1/sandboxes '{"net": "none", "timeout": "2m"}'
	sb=$(jf 'j["id"]')
	serve_inside "$sb" 8002 twin-served
	out=$(as_user curl -s -m 10 -H "Host: 8002-$sb.localhost" "http://[::1]:$PORT/s.txt")
	assert_eq "the server's user, a preview through [::1]: served" twin-served "$out"
	out=$(another curl -s -m 10 -H "Host: 8002-$sb.localhost" "http://[::1]:$PORT/s.txt")
	assert_match "another user through [::1]: refused, as on 127.0.0.1" "a preview is for its server's user" "$out"
	code=$(as_user curl -s -o /dev/null -w '%{http_code}' -H "Authorization: Bearer $TOKEN" "http://[::1]:$PORT/v1/health")
	assert_eq "the API with its token through [::1]" 200 "$code"
	api DELETE "/v1/sandboxes/$sb"
	stop_serve
}

# start_warm_one: the round's server with a pool of one warm sandbox of
# the offline profile, its id (as the CLI's ls shows it) in the caller's wb.
start_warm_one() {
	start_serve --warm offline=1 || return
	until_ok 20 eval 'api GET /v1/pools; [ "$(jf "j[\"pools\"][0][\"ready\"]")" = 1 ]'
	sr ls --json
	wb=$(python3 -c 'import json,sys; print(" ".join(x["id"] for x in json.load(sys.stdin) if x["state"] == "warm"))' <<<"$out")
	assert_match "one warm sandbox" '^[0-9a-f]{32}$' "$wb"
}

# A warm sandbox (serve --warm) is nobody's until a request takes it, and
# the request it is handed to must find it as fresh as a new one
# (docs/security.md). Its id was enough, to whoever knew or guessed it,
# to read it, exec in it, write a file in it: the next create got a
# sandbox someone had already been in. Now the API answers it as an
# unknown id, on every route, and its keeper refuses the CLI.
t_warm_unreachable() {
	local wb no sb unknown first id req verb
	start_warm_one || return
	no=$(tr 0-9a-f a-f0-9 <<<"$wb")
	envd_start "$no" "touch /tmp/touched"
	unknown=${body//$no/ID}
	envd_start "$wb" "touch /tmp/touched"
	assert_eq "envd's Start: as an unknown id" "$unknown" "${body//$wb/ID}"
	for id in "$no" "$wb"; do
		code=$(as_user curl -s -o "$SR_OUT/.envd-$SR_AS" -w '%{http_code}' --unix-socket "$SOCK" -H "E2b-Sandbox-Id: $id" \
			-F "file=@/etc/hostname;filename=written" "http://sandbox-run/files?path=/tmp/written")
		unknown="$code $(sed "s/$no/ID/g; s/$wb/ID/g" "$SR_OUT/.envd-$SR_AS")"
		[ "$id" = "$no" ] && first=$unknown
	done
	assert_eq "envd's POST /files: as an unknown id" "$first" "$unknown"
	assert_match "which is a 404" "^404 " "$unknown"
	# Each route: the warm one's answer is an unknown id's, the id aside.
	for req in "GET /v1/sandboxes/ID" "POST /v1/sandboxes/ID/exec {\"argv\":[\"touch\",\"/tmp/touched\"]}" \
		"PUT /v1/sandboxes/ID/files?path=/tmp/written x" "GET /v1/sandboxes/ID/files?path=/etc/hostname" \
		"POST /v1/sandboxes/ID/timeout {\"timeout\":\"1h\"}" "GET /sandboxes/ID" \
		"POST /sandboxes/ID/connect {\"timeout\":60}" "POST /sandboxes/ID/timeout {\"timeout\":60}" \
		"DELETE /sandboxes/ID" "DELETE /v1/sandboxes/ID"; do
		set -- $req
		api "$1" "${2//ID/$no}" ${3+"$3"}
		unknown="$code ${body//$no/ID}"
		api "$1" "${2//ID/$wb}" ${3+"$3"}
		assert_eq "$1 ${2%%\?*}: a warm sandbox is an unknown id" "$unknown" "$code ${body//$wb/ID}"
	done
	# The CLI: its keeper refuses, with the reason.
	for verb in "exec $wb -- touch /tmp/touched" "inspect $wb" "cp /etc/hostname $wb:/tmp/written" "port $wb 8000"; do
		sr $verb
		assert_match "sandbox-run ${verb%% *}: refused, one line" "^sandbox-run: .*sandbox $wb is warm: its pool holds it" "$errout"
		assert_eq "sandbox-run ${verb%% *}: status 125, one line" "125 1" "$rc $(wc -l <<<"$errout")"
	done
	sr ls
	assert_eq "ls still shows it warm" 1 "$(grep -c " warm " <<<"$out")"
	# Taken, it is the taker's, and nothing was done in it.
	api POST /v1/sandboxes '{"profile": "offline", "timeout": "2m"}'
	sb=$(jf 'j["id"]')
	assert_eq "the create is handed the warm one" "201 $wb" "$code $sb"
	api POST "/v1/sandboxes/$sb/exec" '{"cmd": "ls /tmp; ls /workspace"}'
	assert_eq "which is the taker's, as fresh as a new one" "200 " "$code $(jf 'j["stdout"].strip()')"
	sr exec "$sb" -- true
	assert_eq "and the CLI's too once taken" 0 "$rc"
	api DELETE "/v1/sandboxes/$sb"
	stop_serve
}

# A pool's sandbox is nobody else's from its first moment, not only once
# its pool holds it: while it is made and answered, a client of the same
# user that connects as soon as its directory appears (which the API's
# clients could do too, reading the list) is refused as well, and no hold
# is taken but its pool's. It took requests until the hold came, and a
# hold from anyone: a create was once handed a sandbox another client had
# written to first.
t_warm_from_birth() {
	local out="$SR_OUT/racer-$SR_AS" racer sb i
	start_serve --warm offline=1 || return
	until_ok 20 eval 'api GET /v1/pools; [ "$(jf "j[\"pools\"][0][\"ready\"]")" = 1 ]'
	: >"$out"
	(as_user_exec /usr/bin/python3 - "$(state_dir)" >"$out" 2>&1 <<'PY') &
import json, os, re, socket, sys, time
top = sys.argv[1]
ids = lambda: {x for x in os.listdir(top) if re.fullmatch("[0-9a-f]{32}", x)}
seen = ids()
print("ready", flush=True)

def ask(s, op):
    s.send(json.dumps({"op": op}).encode())
    r = json.loads(s.recv(1 << 20).decode())
    return "refused" if "error" in r else "answered"

while True:
    for x in ids() - seen:
        seen.add(x)
        s, end = None, time.monotonic() + 5
        while time.monotonic() < end:
            try:
                s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
                s.connect(os.path.join(top, x, "ctl"))
                break
            except OSError:
                s.close()
                s = None
        if s is None:
            print(x, "unreached", flush=True)
            continue
        try:
            print(x, "inspect", ask(s, "inspect"), "hold", ask(s, "hold"), flush=True)
        except (OSError, ValueError) as e:
            print(x, "ended", type(e).__name__, flush=True)
        s.close()
    time.sleep(0.0002)
PY
	racer=$!
	SR_BG_PIDS="${SR_BG_PIDS:-} $racer"
	until_ok 10 grep -q ready "$out"
	# Each take makes the pool make another, which the racer goes for:
	# its answer is in before the next take, so it met a sandbox no one had.
	for i in 1 2 3 4; do
		api POST /v1/sandboxes '{"profile": "offline", "timeout": "2m"}'
		sb=$(jf 'j["id"]')
		until_ok 20 eval '[ "$(grep -c " inspect \| unreached\| ended" "$out")" -ge $i ]'
		api DELETE "/v1/sandboxes/$sb"
	done
	kill "$racer" 2>/dev/null
	wait "$racer" 2>/dev/null
	assert_eq "4 sandboxes of the pool met by a racing client as they were made" 4 \
		"$(grep -c " inspect " "$out")"
	assert_eq "each refused it, its hold too (inspect refused hold refused)" \
		"4 x inspect refused hold refused" \
		"$(grep " inspect " "$out" | cut -d' ' -f2- | sort | uniq -c | sed 's/^ *//; s/ / x /')"
	check "and the pool's last one is ready for a request" \
		until_ok 20 eval 'api GET /v1/pools; [ "$(jf "j[\"pools\"][0][\"ready\"]")" = 1 ]'
	assert_eq "none of them failed" 0 "$(jf 'j["pools"][0]["failed"]')"
	stop_serve
}

# The pool's word holds its sandbox once: taken, it is its taker's, even
# against a hold that carries the word (read here from the server's memory,
# as root can). Such a hold took a taken sandbox back for anyone who had
# it: the taker's next request was "warm", and the sandbox ended with the
# holder's connection.
t_word_holds_once() {
	local sb got
	start_serve --warm offline=1 || return
	until_ok 20 eval 'api GET /v1/pools; [ "$(jf "j[\"pools\"][0][\"ready\"]")" = 1 ]'
	api POST /v1/sandboxes '{"profile": "offline", "timeout": "2m"}'
	sb=$(jf 'j["id"]')
	assert_eq "a warm sandbox taken" 201 "$code"
	# The words: root reads the server's memory (the caller's own cannot: it is not dumpable).
	words_of word "$SERVE_PID" | cut -d' ' -f2 | grep -vxF -f <(ls "$(state_dir)") >"$SR_OUT/words-$SR_AS"
	cp "$SR_OUT/words-$SR_AS" "$SR_TMP/words-$SR_AS" && chmod 0644 "$SR_TMP/words-$SR_AS"
	got=$(as_user /usr/bin/python3 - "$(state_dir)/$sb/ctl" "$SR_TMP/words-$SR_AS" <<'PY'
import json, socket, sys
answers = []
for w in open(sys.argv[2]).read().split():
    s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    s.connect(sys.argv[1])
    s.send(json.dumps({"op": "hold", "token": w}).encode())
    answers.append("refused" if "error" in json.loads(s.recv(1 << 20)) else "held")
    s.close()
print(len(answers) > 0, "held" if "held" in answers else "refused")
PY
)
	assert_eq "a hold with each word in the server's memory: refused" "True refused" "$got"
	api POST "/v1/sandboxes/$sb/exec" '{"cmd": "true"}'
	assert_eq "the taker's still" 200 "$code"
	api DELETE "/v1/sandboxes/$sb"
	stop_serve
}

# A warm sandbox counts for nothing in what the API resolves, as it is
# listed nowhere: a prefix of a sandbox's id that also began a warm one's
# was "the start of 2 sandboxes' ids", which told that a hidden sandbox
# existed and failed a prefix valid for the client. The CLI, whose ls
# shows warm ones and whose rm takes them, still counts them. Ids are
# random: two share the 4 hex digits a prefix needs once in 65,536 pairs,
# so the warm sandbox sharing the prefix is made here as a keeper makes
# one, which is all the server goes by: a directory whose lock is held,
# its state "warm".
t_warm_counts_nothing() {
	local wb sb p fake dir locker req unknown
	start_warm_one || return
	api POST /v1/sandboxes "{\"profile\": \"offline\", \"name\": \"plain-$SR_AS\", \"timeout\": \"2m\"}"
	sb=$(jf 'j["id"]')
	assert_match "a sandbox made" '^201 [0-9a-f]{32}$' "$code $sb"
	api GET "/v1/sandboxes/$(tr 0-9a-f a-f0-9 <<<"${wb:0:4}")"
	unknown="$code ${body//$(tr 0-9a-f a-f0-9 <<<"${wb:0:4}")/P}"
	api GET "/v1/sandboxes/${wb:0:4}"
	assert_eq "a prefix of the warm one's id alone: an unknown one" "$unknown" "$code ${body//${wb:0:4}/P}"
	p=${sb:0:4}
	until fake=$p$(head -c 14 /dev/urandom | od -An -tx1 | tr -d ' \n') && [ "${fake:4:1}" != "${sb:4:1}" ]; do :; done
	dir="$(state_dir)/$fake"
	as_user mkdir -m 0700 "$dir"
	as_user sh -c 'printf "{\"id\": \"%s\", \"state\": \"warm\"}\n" "$1" >"$2/state.json"' sh "$fake" "$dir"
	# The lock's holder is the process killed at the end (flock(1) would
	# leave its sleep holding the lock, and this test's output, for 10 min).
	(as_user_exec sh -c 'exec 9>"$1/lock" && flock 9 && exec sleep 600' sh "$dir" \
		</dev/null >/dev/null 2>&1) &
	locker=$!
	SR_BG_PIDS="${SR_BG_PIDS:-} $locker"
	check "a warm one sharing the first 4 hex digits of its id" \
		until_ok 10 eval '[ -e "$dir/lock" ] && ! flock -n "$dir/lock" true'
	sr inspect "$p"
	assert_match "the CLI, which lists it, counts it" "'$p' is the start of 2 sandboxes' ids" "$errout"
	for req in "GET /v1/sandboxes/P" "POST /v1/sandboxes/P/exec {\"argv\":[\"true\"]}" \
		"GET /v1/sandboxes/P/files?path=/etc/hostname" "GET /sandboxes/P" \
		"POST /sandboxes/P/timeout {\"timeout\":120}"; do
		set -- $req
		api "$1" "${2//P/$p}" ${3+"$3"}
		assert_match "$1 ${2%%\?*}: the prefix is the sandbox's alone" '^20[04]$' "$code"
		[[ $code == 20[04] ]] || echo "# $code $body"
	done
	api GET "/v1/sandboxes/$p"
	assert_eq "and names it" "$sb" "$(jf 'j["id"]')"
	envd_start "$p" "true"
	assert_match "envd's Start: the prefix is the sandbox's" '"start"' "$body"
	kill "$locker" 2>/dev/null
	wait "$locker" 2>/dev/null
	rm -rf "$dir"
	api DELETE "/v1/sandboxes/$p"
	assert_eq "DELETE by the prefix: the sandbox's" 200 "$code"
	stop_serve
}

# words_of TAG PID...: "TAG WORD" for each 32-hex word in each process's
# writable memory, read as root can (/proc/PID/mem, the non-dumpable too).
words_of() {
	/usr/bin/python3 - "$@" <<'PY'
import re, sys
tag = sys.argv[1]
for pid in sys.argv[2:]:
    words = set()
    with open(f"/proc/{pid}/maps") as maps, open(f"/proc/{pid}/mem", "rb", 0) as mem:
        for line in maps:
            addr, perms = line.split()[:2]
            if not perms.startswith("rw"):
                continue
            lo, hi = (int(x, 16) for x in addr.split("-"))
            try:
                mem.seek(lo)
                words |= set(re.findall(rb"(?<![0-9a-f])[0-9a-f]{32}(?![0-9a-f])", mem.read(hi - lo)))
            except OSError:
                pass
    for w in sorted(words):
        print(tag, w.decode())
PY
}

# keeper_of MEMORY STATE: the keeper's pid of the sandbox of that memory limit (bytes) and state.
keeper_of() {
	local f
	for f in "$(state_dir)"/*/state.json; do
		python3 -c 'import json,sys
j=json.load(open(sys.argv[1]))
if j["limits"]["memory_bytes"]==int(sys.argv[2]) and j["state"]==sys.argv[3]: print(j["keeper_pid"])' "$f" "$1" "$2" 2>/dev/null
	done
}

# A pool's word is its keepers' and nobody else's, and a keeper's only
# until its hold: a keeper of one pool, caught before its pool holds it
# (the server stopped meanwhile), holds its own pool's word and no other's,
# and none once held; the other pool's, held, none; a sandbox made cold
# none. The words were in the server's ordinary memory, so every keeper
# it forked had all of them (any pool's, any deployment's), the hold that
# each one is worth (t_word_holds_once) wherever that keeper's memory was
# read; and a held keeper kept its own until it ended, though it holds
# once: the keeper of a sandbox taken, which runs what its taker asks
# beside the sandbox, had it. The words are what the server holds that no
# keeper made by the CLI holds (the host's: its cgroup's name, say), and
# that no sandbox is named by or its state says.
t_word_own_pool() {
	local b_ini="$SR_TMP/pool-b-$SR_AS.ini" w="$SR_OUT/words-pool-$SR_AS" caught="$SR_OUT/caught-$SR_AS"
	local sb cli a b cold got
	printf '[profile]\ninherit = offline\n[limits]\nmemory = 300M\n' >"$b_ini"
	chmod 0644 "$b_ini"
	start_serve --warm offline=1 --warm "$b_ini=1" || return
	until_ok 20 eval 'api GET /v1/pools; [ "$(jf "[p[\"ready\"] for p in j[\"pools\"]]")" = "[1, 1]" ]'
	api POST /v1/sandboxes '{"profile": "offline", "name": "cold", "memory": "400M", "timeout": "2m"}'
	assert_eq "a sandbox made cold" 201 "$code"
	sr create -q --net none --memory 500M --timeout 120
	cli=$out
	# A's warm one taken; its refill's keeper caught before the hold, the server stopped.
	as_user /usr/bin/python3 - "$SOCK" "$(state_dir)" "$SERVE_PID" >"$caught" 2>&1 <<'PY'
import json, os, signal, subprocess, sys, time
sock, state, serve = sys.argv[1], sys.argv[2], int(sys.argv[3])

def ids():
    return {d for d in os.listdir(state) if len(d) == 32}

known = ids()
r = subprocess.run(["curl", "-s", "-m", "5", "--unix-socket", sock, "-X", "POST",
                    "http://sandbox-run/v1/sandboxes", "--data-binary",
                    '{"profile": "offline", "timeout": "2m"}'], capture_output=True)
print("taken", json.loads(r.stdout)["id"], flush=True)
deadline = time.monotonic() + 10
while not ids() - known - {json.loads(r.stdout)["id"]} and time.monotonic() < deadline:
    time.sleep(0.0005)
os.kill(serve, signal.SIGSTOP)
new = (ids() - known - {json.loads(r.stdout)["id"]}).pop()
# Its sandbox made (state.json says so), however slowly under load: not a fixed wait.
st = {}
while "base_time_ns" not in st and time.monotonic() < deadline:
    time.sleep(0.01)
    try:
        st = json.load(open(os.path.join(state, new, "state.json")))
    except (OSError, ValueError):
        pass
print("keeper", st["keeper_pid"], st["state"], flush=True)
PY
	sb=$(sed -n 's/^taken //p' "$caught")
	a=$(sed -n 's/^keeper \([0-9]*\) warm$/\1/p' "$caught")
	b=$(keeper_of 314572800 warm)
	cold=$(keeper_of 419430400 running)
	assert_match "a keeper of A's before its hold, B's, the cold one's" '^[0-9]+ [0-9]+ [0-9]+$' "$a $b $cold"
	{
		words_of server "$SERVE_PID"
		words_of cli "$(keeper_of 524288000 running)"
		words_of a "$a"
		words_of b "$b"
		words_of cold "$cold"
	} >"$w"
	kill -CONT "$SERVE_PID"
	check "A's keeper held once the server goes on" \
		until_ok 20 eval 'api GET /v1/pools; [ "$(jf "[p[\"ready\"] for p in j[\"pools\"]]")" = "[1, 1]" ]'
	{
		words_of held "$a"
		cat "$(state_dir)"/*/state.json | grep -oE '[0-9a-f]{32}' | sed 's/^/named /'
		ls "$(state_dir)" | sed 's/^/named /'
	} >>"$w"
	got=$(python3 - "$w" <<'PY'
import collections, sys
had = collections.defaultdict(set)
for line in open(sys.argv[1]):
    tag, word = line.split()
    had[tag].add(word)
words = had["server"] - had["cli"] - had["named"]
a, b, cold, held = (had[t] & words for t in ("a", "b", "cold", "held"))
print(f"server {min(len(words), 2)}+ a {len(a)} held {len(held)} b {len(b)} cold {len(cold)}")
PY
)
	assert_eq "a keeper holds its own pool's word until its hold, then none; a held one none, the cold one none" \
		"server 2+ a 1 held 0 b 0 cold 0" "$got"
	[ "$got" = "server 2+ a 1 held 0 b 0 cold 0" ] || cat "$caught"
	api DELETE "/v1/sandboxes/$sb"
	api DELETE /v1/sandboxes/cold
	sr rm -f "$cli"
	stop_serve
}

# data_dir: the round's data directory (snapshots, deployments).
data_dir() {
	if [ "$SR_AS" = user ]; then echo "$SR_TMP/data-user"; else echo "$SANDBOX_RUN_DATA_DIR"; fi
}

# The server's own files are no client's to know. A profile of the
# server's that does not load (a bad key, a line that is no INI, one
# inheriting a profile that is nowhere), a snapshot's or a deployment's
# configuration that does not, were answered in the loader's words:
# "profile /home/.../bad.ini:2: unknown key ...", "inherit: profile
# 'gone' not found (looked for /home/..., /usr/...)". Each is said now of
# what the request named; the file, its line and where the server looked
# are in the server's log.
t_server_paths() {
	local xdg="$SR_TMP/xdg-$SR_AS" prof="$SR_TMP/xdg-$SR_AS/sandbox-run/profiles"
	local err="$SR_OUT/serve-$SR_AS.err" snaps agent p
	mkdir -p "$prof"
	printf '[limits]\nmemroy = 1G\n' >"$prof/badkey.ini"
	printf 'garbage\n' >"$prof/badsyntax.ini"
	printf '[profile]\ninherit = gone-%s\n' "$SR_AS" >"$prof/orphan.ini"
	own "$xdg"
	agent=$(make_agent "paths-$SR_AS" 'cat')
	sr -q deploy --name "paths-$SR_AS" "$agent"
	check "a deployment to invoke" [ "$rc" = 0 ]
	printf '[limits]\nmemroy = 1G\n' >>"$(data_dir)/deployments/paths-$SR_AS/versions/1/config.ini"
	snaps="$(data_dir)/snapshots"
	mkdir -p -m 0700 "$snaps/broken"
	printf 'garbage\n' >"$snaps/broken/config.ini"
	echo '{"name": "broken"}' >"$snaps/broken/meta.json"
	: >"$snaps/broken/files.tar.zst"
	own "$snaps"
	XDG_CONFIG_HOME="$xdg" start_serve || return
	for p in badkey badsyntax orphan; do
		api POST /v1/sandboxes "{\"profile\": \"$p\", \"net\": \"none\"}"
		assert_eq "a profile of the server's that does not load ($p): 500, naming it, no path" \
			"500 sandbox-run: create: profile: profile \"$p\" is broken on this server (its log says why)" \
			"$code $(jf 'j["message"]')"
		api POST /sandboxes "{\"templateID\": \"$p\"}"
		assert_eq "E2B: a template that does not load ($p): alike, said of templateID" \
			"500 sandbox-run: create: templateID: template \"$p\" is broken on this server (its log says why)" \
			"$code $(jf 'j["message"]')"
	done
	# A path is the client's own file, but what it inherits by name is
	# looked for where the server looks: 400, its words only.
	api POST /v1/sandboxes "{\"profile\": \"$prof/orphan.ini\", \"net\": \"none\"}"
	assert_eq "a profile the client gave as a path that does not load: 400, not where the server looked" \
		"400 sandbox-run: create: profile: profile \"$prof/orphan.ini\" is broken on this server (its log says why)" \
		"$code $(jf 'j["message"]')"
	api POST /v1/sandboxes '{"from": "broken", "net": "none"}'
	assert_eq "a snapshot whose configuration does not load: 500, naming it, no path" \
		'500 sandbox-run: create: from: snapshot "broken" is broken on this server (its log says why)' \
		"$code $(jf 'j["message"]')"
	api POST "/v1/deployments/paths-$SR_AS/invoke" 'hi'
	assert_eq "a deployment whose configuration does not load: 500, naming it, no path" \
		"500 sandbox-run: invoke: deployment \"paths-$SR_AS\" is broken on this server (its log says why)" \
		"$code $(jf 'j["message"]')"
	rm "$(data_dir)/deployments/paths-$SR_AS/versions/1/config.ini"
	api POST "/v1/deployments/paths-$SR_AS/invoke" 'hi'
	assert_eq "one whose configuration is gone: alike (it is listed: not \"no deployment\")" \
		"500 sandbox-run: invoke: deployment \"paths-$SR_AS\" is broken on this server (its log says why)" \
		"$code $(jf 'j["message"]')"
	api POST "/v1/deployments/paths-$SR_AS/invoke?arg=-p&arg=badkey" 'hi'
	assert_eq "an invoke's -p of a profile that does not load: alike, naming the profile" \
		'500 sandbox-run: invoke: profile "badkey" is broken on this server (its log says why)' \
		"$code $(jf 'j["message"]')"
	api POST "/v1/deployments/paths-$SR_AS/invoke?arg=-p&arg=nope" 'hi'
	assert_eq "an invoke's -p of a profile that is nowhere: 404, naming it, not where it looked" \
		'404 sandbox-run: invoke: no profile "nope" on this server' \
		"$code $(jf 'j["message"]')"
	api GET /v2/sandboxes
	assert_eq "and none of them made a sandbox" "200 0" "$code $(jf 'len(j)')"
	stop_serve
	check "the server's log names the file and line" \
		grep -qF "profile $prof/badkey.ini:2: unknown key 'memroy'" "$err"
	check "and where it looked for what a profile inherits" \
		grep -qF "inherit: profile 'gone-$SR_AS' not found (looked for $prof/gone-$SR_AS.ini" "$err"
	check "and the snapshot's file" grep -qF "profile $snaps/broken/config.ini:1: cannot parse 'garbage'" "$err"
	sr deployments rm "paths-$SR_AS"
	rm -rf "$prof" "$snaps/broken"
}

for_each_user t_preview_scope t_preview_reuse t_preview_held t_preview_split_head t_half_head t_nul t_foreign_slots t_mhd_gives_up t_out_of_fds \
	t_process_cap t_keeper_stopped_at_hold t_listing_memory t_daemon_output t_detached_flood t_uploads_at_once \
	t_upload_out_of_fds t_dup_keys t_e2b_timeout t_timeout_moved t_tiny_timeout \
	t_connect_timeout t_special_files t_output_memory t_localhost_twin t_list_whole t_warm_unreachable \
	t_warm_from_birth t_word_holds_once t_warm_counts_nothing t_word_own_pool t_server_paths
done_testing
