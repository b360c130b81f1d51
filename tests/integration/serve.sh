#!/usr/bin/env bash
# sandbox-run serve: the curl walkthrough of docs/api.md, errors, auth,
# warm pools, and what a hostile or careless client can do to the server
# (nothing), as root and as an unprivileged user, each round with its own
# server and state.
. "$(dirname "$0")/libtest.sh"
. "$(dirname "$0")/libserve.sh"
. "$(dirname "$0")/libworker.sh"

# sleeping N: a process of exactly that command line (a sandbox's, not the client asking for it).
sleeping() {
	pgrep -fx "sleep $1" >/dev/null
}

# The walkthrough of docs/api.md, step by step.
t_walkthrough() {
	local sb ndjson snap
	start_serve || return
	api GET /v1/health
	assert_eq "health: 200" 200 "$code"
	api POST /v1/sandboxes '{"net": "none", "timeout": "5m"}'
	assert_eq "create: 201" 201 "$code"
	sb=$(jf 'j["id"]')
	assert_match "create: the id" '^[0-9a-f]{32}$' "$sb"
	assert_eq "create: running, its limits" "running 300" "$(jf 'j["state"]') $(jf 'j["limits"]["timeout_s"]')"
	api POST "/v1/sandboxes/$sb/exec" '{"cmd": "echo hello; echo oops >&2; exit 3"}'
	assert_eq "exec: 200" 200 "$code"
	assert_eq "exec: exit_code, stdout, stderr" "3 'hello\\n' 'oops\\n'" "$(jf '" ".join(repr(x) for x in (j["exit_code"], j["stdout"], j["stderr"]))')"
	api POST "/v1/sandboxes/$sb/exec" '{"argv": ["sh", "-c", "tr a-z A-Z; id -u; pwd"], "stdin": "shout", "env": {"X": "1"}, "cwd": "/tmp"}'
	assert_eq "exec: argv, stdin, cwd, as the sandbox's user" "SHOUT1000
/tmp" "$(jf 'j["stdout"].strip()')"
	api POST "/v1/sandboxes/$sb/exec" '{"cmd": "for i in 1 2 3; do echo $i; sleep 0.1; done", "stream": true}'
	ndjson=$(python3 -c 'import json,sys
ev=[json.loads(l) for l in sys.stdin.read().splitlines()]
print(" ".join(e["type"]+("="+e["data"].strip() if "data" in e else "")+("="+str(e["exit_code"]) if e["type"]=="exit" else "") for e in ev))' <<<"$body")
	assert_eq "exec, streamed: NDJSON events as they come" "start stdout=1 stdout=2 stdout=3 exit=0" "$ndjson"
	# A NUL in the output is text like any other byte (\u0000): it ended
	# the text there, and the rest was lost, in the answer and in an event.
	api POST "/v1/sandboxes/$sb/exec" '{"argv": ["printf", "a\\000b\\377c"]}'
	assert_eq "exec: output past a NUL kept, a byte no UTF-8 as U+FFFD" "true" \
		"$(jf 'j["stdout"] == "a\x00b\ufffdc"')"
	api POST "/v1/sandboxes/$sb/exec" '{"argv": ["printf", "a\\000b\\377c"], "stream": true}'
	assert_eq "exec, streamed: the same" "True" "$(python3 -c 'import json,sys
ev=[json.loads(l) for l in sys.stdin.read().splitlines()]
print("".join(e["data"] for e in ev if e["type"]=="stdout") == "a\x00b\ufffdc")' <<<"$body")"
	api PUT "/v1/sandboxes/$sb/files?path=notes/plan.txt" 'write the docs'
	assert_eq "files PUT: 200, made with its directory" "200 notes/plan.txt 14" "$code $(jf 'j["path"]') $(jf 'j["size"]')"
	api GET "/v1/sandboxes/$sb/files?path=notes/plan.txt"
	assert_eq "files GET: the bytes" "200 write the docs" "$code $body"
	# HTTP/1.0 ends an answer of no stated length by closing the connection,
	# as a download the worker cut short ends: such a client would take a
	# truncated file for a whole one (curl -0 exited 0 with 11 of 300 MB).
	code=$(as_user curl -s -0 -o "$SR_OUT/.api-$SR_AS" -w '%{http_code}' --unix-socket "$SOCK" \
		"http://sandbox-run/v1/sandboxes/$sb/files?path=notes/plan.txt")
	body=$(cat "$SR_OUT/.api-$SR_AS")
	assert_eq "files GET over HTTP/1.0: 505, saying why" "505 http_version 1" \
		"$code $(jf 'j["code"]') $(jf '1 if "HTTP/1.1" in j["message"] else 0')"
	api GET "/v1/sandboxes/$sb/files?path=notes&list=1"
	assert_eq "files list: name, type, size, mode" "plan.txt file 14 420" \
		"$(jf '" ".join(str(j["entries"][0][k]) for k in ("name","type","size","mode"))')"
	api DELETE "/v1/sandboxes/$sb/files?path=notes"
	assert_eq "files DELETE: 200" 200 "$code"
	api GET "/v1/sandboxes/$sb/files?path=notes/plan.txt"
	assert_eq "and it is gone: 404" "404 not_found" "$code $(jf 'j["code"]')"
	api POST "/v1/sandboxes/$sb/timeout" '{"timeout": "10m"}'
	assert_eq "timeout: 200 and the new deadline" "200 1" "$code $(jf '1 if j["expires"] else 0')"
	api POST "/v1/sandboxes/$sb/exec" '{"cmd": "echo snap > /workspace/f"}'
	snap="api-$SR_AS-$$"
	api POST "/v1/sandboxes/$sb/snapshots" "{\"name\": \"$snap\"}"
	assert_eq "snapshot: 201" "201 $snap" "$code $(jf 'j["name"]')"
	# The API is a front for the same lifecycle: the CLI sees and drives what it made.
	sr ls
	assert_match "sandbox-run ls shows it" "${sb:0:12} +- +running" "$out"
	sr exec "$sb" -- cat /workspace/f
	assert_eq "sandbox-run exec runs in it" "snap" "$out"
	sr exec --workdir /nowhere "$sb" -- true
	api POST "/v1/sandboxes/$sb/exec" '{"argv": ["true"], "cwd": "/nowhere"}'
	assert_eq "an exec the keeper refuses: 404, in the CLI's line" \
		"404 sandbox-run: exec: working directory /nowhere: No such file or directory" \
		"$code $(jf 'j["message"]')"
	assert_eq "the very line" "$errout" "$(jf 'j["message"]')"
	api DELETE "/v1/sandboxes/$sb"
	assert_eq "DELETE: 200" 200 "$code"
	api GET "/v1/sandboxes/$sb"
	assert_eq "then it is gone: 404" 404 "$code"
	sr ls --json
	assert_eq "ls: nothing left" "[]" "$out"
	api POST /v1/sandboxes "{\"from\": \"$snap\", \"net\": \"none\"}"
	sb=$(jf 'j["id"]')
	api POST "/v1/sandboxes/$sb/exec" '{"argv": ["cat", "/workspace/f"]}'
	assert_eq "create from the snapshot: its files" "snap" "$(jf 'j["stdout"].strip()')"
	api DELETE "/v1/snapshots/$snap"
	assert_eq "snapshots DELETE: 200" 200 "$code"
	stop_serve
	assert_eq "SIGTERM: the server exits 0" 0 "$serve_rc"
	assert_eq "and takes down the sandboxes it made" "" "$(ls "$(state_dir)" | grep -v '\.token$')"
	check "its socket is removed" test ! -e "$SOCK"
}

# A bad duration or size in a body was said as create's option's, with
# neither the field nor the value ("option --timeout: bad duration (use
# e.g. ...)", "option --memory: bad size 'lots'"): now as the request
# named them. A server is serving.
t_bad_values() {
	api POST /v1/sandboxes '{"memory": "lots"}'
	assert_eq "a bad size: 400, naming the field and the value" \
		"400 sandbox-run: create: memory: 'lots' is not a size (e.g. 512M, 2G, or a number of bytes; 0: unlimited)" \
		"$code $(jf 'j["message"]')"
	api POST /v1/sandboxes '{"timeout": "5x", "net": "none"}'
	assert_eq "a bad duration: alike" \
		"400 sandbox-run: create: timeout: '5x' is not a duration (e.g. 90s, 5m, 1h, or a number of seconds; 0: none)" \
		"$code $(jf 'j["message"]')"
	api POST /v1/sandboxes '{"timeout": -5}'
	assert_eq "a negative number of seconds: alike" \
		"400 sandbox-run: create: timeout: -5 is not a duration (a number of seconds from 0 to 10 years, or a string: 90s, 5m, 1h)" \
		"$code $(jf 'j["message"]')"
	api POST /v1/sandboxes '{"timeout": "9000h"}'
	assert_eq "a deadline past a living sandbox's longest: alike" \
		"400 sandbox-run: create: timeout: '9000h' is more than 366 days, the longest a living sandbox lives (0: no end)" \
		"$code $(jf 'j["message"]')"
	api POST /v1/sandboxes '{"memory": "1K"}'
	assert_eq "a size create's parser refuses: its words, of the field" \
		"400 sandbox-run: create: memory: size '1K' is below 1M (use e.g. 512M, 2G, or 0 for unlimited)" \
		"$code $(jf 'j["message"]')"
	api POST /v1/sandboxes '{"net": "bogus"}'
	assert_eq "any value it refuses: alike" \
		"400 sandbox-run: create: net: bad network mode 'bogus' (use none or egress)" \
		"$code $(jf 'j["message"]')"
	api POST /v1/sandboxes/nope/exec '{"argv": ["true"], "timeout": "5x"}'
	assert_eq "an exec's bad timeout: 400, naming it" \
		"400 sandbox-run: exec: timeout: '5x' is not a duration (e.g. 90s, 5m, 1h, or a number of seconds; 0: none)" \
		"$code $(jf 'j["message"]')"
	api POST /v1/sandboxes/nope/timeout '{"timeout": "5x"}'
	assert_eq "a bad new deadline: alike" \
		"400 sandbox-run: timeout: '5x' is not a duration (e.g. 90s, 5m, 1h, or a number of seconds; 0: none)" \
		"$code $(jf 'j["message"]')"
	# E2B's create said these as create's options ("option --env: bad
	# variable name", "--timeout: at most 366 days"), which its client never
	# sent: now as the E2B fields it did.
	api POST /sandboxes '{"envVars": {"A B": "1"}}'
	assert_eq "E2B: a bad variable's name: 400, said of envVars" \
		"400 sandbox-run: create: envVars: bad variable name 'A B' (use letters, digits and '_', not starting with a digit)" \
		"$code $(jf 'j["message"]')"
	api POST /sandboxes '{"envVars": {"file": "1"}}'
	assert_eq "E2B: a name create keeps for itself: alike" \
		"400 sandbox-run: create: envVars: variable name 'file' is reserved: [env] file is a setting" \
		"$code $(jf 'j["message"]')"
	api POST /sandboxes '{"timeout": 31622401}'
	assert_eq "E2B: a timeout past a living sandbox's longest: said of timeout" \
		"400 sandbox-run: create: timeout: 31622401 is more than 366 days (31622400 seconds), the longest a living sandbox lives" \
		"$code $(jf 'j["message"]')"
	# A value of the wrong type was taken for none: envVars "x" or [1] set
	# no variable, allow_internet_access "false" left the network on, and
	# a templateID could be a path to any profile file. Refused, naming
	# the field.
	api POST /sandboxes '{"envVars": "x"}'
	assert_eq "E2B: envVars not an object: 400, said of envVars" \
		'400 sandbox-run: create: "envVars": expected an object of strings, {"KEY": "VALUE"}' \
		"$code $(jf 'j["message"]')"
	api POST /sandboxes '{"envVars": [1]}'
	assert_eq "E2B: envVars an array: alike" \
		'400 sandbox-run: create: "envVars": expected an object of strings, {"KEY": "VALUE"}' \
		"$code $(jf 'j["message"]')"
	api POST /sandboxes '{"allow_internet_access": "false"}'
	assert_eq "E2B: allow_internet_access a string: 400, not the network" \
		"400 sandbox-run: create: allow_internet_access: 'false' is not true or false" \
		"$code $(jf 'j["message"]')"
	api POST /sandboxes '{"templateID": "../x"}'
	assert_eq "E2B: a templateID that is a path: 400, said of templateID" \
		"400 sandbox-run: create: templateID: '../x' is not a template (a profile's name: letters, digits, '-', '_' and '.'; base for the server's)" \
		"$code $(jf 'j["message"]')"
	# "builtin:e2b" loaded the built-in copy, past an operator's e2b.ini.
	api POST /sandboxes '{"templateID": "builtin:e2b"}'
	assert_eq "E2B: a templateID naming a built-in copy: 400, said of templateID" \
		"400 sandbox-run: create: templateID: 'builtin:e2b' is not a template (a profile's name: letters, digits, '-', '_' and '.'; base for the server's)" \
		"$code $(jf 'j["message"]')"
	# A file's name, as -p refuses it, passed this check and was refused
	# further in, in -p's words ("looks like a file: write ./foo.ini").
	api POST /sandboxes '{"templateID": "foo.ini"}'
	assert_eq "E2B: a templateID that is a file's name: 400, said of templateID" \
		"400 sandbox-run: create: templateID: 'foo.ini' is not a template (a profile's name: letters, digits, '-', '_' and '.'; base for the server's)" \
		"$code $(jf 'j["message"]')"
	# A template that is nowhere was answered with where the server looked
	# for it ("not found (looked for /home/.../nope.ini, /usr/...)"): its
	# files, no client's to know. Its log (-v) keeps them.
	api POST /sandboxes '{"templateID": "nope"}'
	assert_eq "E2B: a template that is nowhere: 404, naming it, no path of the server's" \
		'404 sandbox-run: create: templateID: no template "nope" on this server' \
		"$code $(jf 'j["message"]')"
	api POST /v1/sandboxes '{"profile": "nope"}'
	assert_eq "a profile that is nowhere: alike, said of profile" \
		'404 sandbox-run: create: profile: no profile "nope" on this server' \
		"$code $(jf 'j["message"]')"
	api GET /v2/sandboxes
	assert_eq "and none of them made a sandbox" "200 0" "$code $(jf 'len(j)')"
}

# Errors: a JSON body with a code and the message the CLI prints.
t_errors() {
	start_serve || return
	sr exec nope -- true
	api POST /v1/sandboxes/nope/exec '{"argv": ["true"]}'
	assert_eq "no such sandbox: 404 not_found" "404 not_found" "$code $(jf 'j["code"]')"
	assert_eq "with the CLI's own line, exec's name too (as create's errors say create)" \
		"$errout" "$(jf 'j["message"]')"
	t_bad_values
	# A name taken is the keeper's to find (under its lock): still a conflict, not ours.
	sr create --net none --name taken
	api POST /v1/sandboxes '{"name": "taken", "net": "none"}'
	assert_eq "a name taken: 409 conflict" "409 conflict" "$code $(jf 'j["code"]')"
	# The keeper's own line names no verb: it was answered without create's.
	sr create --net none --name taken
	assert_eq "in create's words, the CLI's very line" "$errout" "$(jf 'j["message"]')"
	sr rm -f taken
	sr create --net none --workspace "/nonexistent-$$"
	api POST /v1/sandboxes "{\"workspace\": \"/nonexistent-$$\", \"net\": \"none\"}"
	assert_eq "a workspace the keeper cannot find: 404, the CLI's very line, create's once" \
		"404 $errout" "$code $(jf 'j["message"]')"
	api POST /v1/sandboxes '{"memroy": "1G"}'
	assert_match "an unknown key: 400 naming it" '^400 .*unknown key "memroy"' "$code $(jf 'j["message"]')"
	api POST /v1/sandboxes '{"net": '
	assert_eq "JSON that is not: 400" "400 bad_request" "$code $(jf 'j["code"]')"
	api POST /v1/sandboxes "$(python3 -c 'print("["*100 + "]"*100)')"
	assert_eq "JSON nested too deep: 400" 400 "$code"
	api PATCH /v1/sandboxes
	assert_eq "a method the resource has not: 405" "405 method_not_allowed" "$code $(jf 'j["code"]')"
	api GET /v1/nothing
	assert_eq "no such resource: 404" 404 "$code"
	api POST /v1/deployments/x/invoke '{}'
	assert_eq "invoke of no deployment: 404 not_found" "404 not_found" "$code $(jf 'j["code"]')"
	api POST /v1/deployments/x/rollback '{}'
	assert_eq "deploy's other verbs: 501 not_supported" "501 not_supported" "$code $(jf 'j["code"]')"
	api POST /v1/sandboxes/nope/exec '{"argv": []}'
	assert_eq "exec with an empty argv: 400" 400 "$code"
	# A second server on the same socket took it over: the first served
	# on, unreachable, and the path was gone once the second ended.
	rc=0
	errout=$(as_user timeout 5 "$SR" serve --listen "unix:$SOCK" 2>&1 >/dev/null) || rc=$?
	assert_eq "a second serve on a socket a server listens on: 125" 125 "$rc"
	assert_eq "in one line" \
		"sandbox-run: serve: --listen unix:$SOCK: a server is listening there already (stop it, or --listen another)" \
		"$errout"
	api GET /v1/sandboxes
	assert_eq "and the first one still answers there" 200 "$code"
	# An --e2b-profile that loads nothing was taken, and E2B's creates failed later.
	rc=0
	errout=$(as_user timeout 5 "$SR" serve --e2b-profile nosuch --listen "unix:$SOCK.2" 2>&1 >/dev/null) || rc=$?
	assert_match "serve --e2b-profile nosuch: refused at start (125), in one line" \
		"^125 sandbox-run: serve: --e2b-profile: profile 'nosuch' not found" "$rc $errout"
	check "no socket left" test ! -e "$SOCK.2"
	# A bad count written as one word is named as the option, not the word before it.
	rc=0
	errout=$(as_user timeout 5 "$SR" serve --max-processes=0 --listen "unix:$SOCK.2" 2>&1 >/dev/null) || rc=$?
	assert_eq "serve --max-processes=0: refused, the option named" \
		"125 sandbox-run: serve: --max-processes 0: expected a number of 1 to 100000" "$rc $errout"
	stop_serve
	# One that died (SIGKILL) left its socket: the next one takes its place.
	start_serve || return
	kill -KILL "$SERVE_PID"
	wait "$SERVE_PID" 2>/dev/null
	check "a killed server leaves its socket" test -S "$SOCK"
	start_serve || return
	api GET /v1/sandboxes
	assert_eq "the next serve replaces it" 200 "$code"
	stop_serve
}

# TCP: a bearer token from a 0600 file; the Unix socket: the server's own user only.
t_auth() {
	local other
	start_serve --listen 127.0.0.1:0 || return
	assert_eq "the token's file: 0600, the user's" "600 $(as_user id -u)" "$(stat -c '%a %u' "$TOKEN_FILE")"
	assert_match "a token of 64 hex digits" '^[0-9a-f]{64}$' "$TOKEN"
	code=$(curl -s -o /dev/null -w '%{http_code}' "$URL/v1/health")
	assert_eq "TCP without the token: 401" 401 "$code"
	code=$(curl -s -o /dev/null -w '%{http_code}' -H "Authorization: Bearer ${TOKEN:0:63}x" "$URL/v1/health")
	assert_eq "with a wrong one: 401" 401 "$code"
	code=$(curl -s -o /dev/null -w '%{http_code}' -H "Authorization: Bearer $TOKEN" "$URL/v1/health")
	assert_eq "with it: 200" 200 "$code"
	code=$(curl -s -o /dev/null -w '%{http_code}' -H "X-API-Key: $TOKEN" "$URL/v1/sandboxes")
	assert_eq "as E2B's X-API-Key too" 200 "$code"
	# Another user on the Unix socket: refused at accept, whatever the socket's mode.
	if [ "$SR_AS" = user ]; then other=root; else other=nobody; fi
	chmod 0711 "$(state_dir)"
	chmod 0666 "$SOCK"
	if [ "$other" = root ]; then
		out=$(curl -s -m 5 --unix-socket "$SOCK" http://x/v1/health)
	else
		out=$(setpriv --reuid=nobody --regid=nogroup --clear-groups -- curl -s -m 5 --unix-socket "$SOCK" http://x/v1/health)
	fi
	rc=$?
	chmod 0600 "$SOCK"
	chmod 0700 "$(state_dir)"
	# curl says "could not connect", "empty reply" or "reset", by how soon it is cut off.
	assert_match "another user ($other) on the Unix socket: cut off, nothing answered" '^(7|52|56) $' "$rc $out"
	api GET /v1/health
	assert_eq "the server goes on for its own user" 200 "$code"
	stop_serve
	check "its token file is removed at the end" test ! -e "$TOKEN_FILE"
}

# A TCP listener alone keeps the default Unix socket (README, design.md): invoke finds it.
t_tcp_keeps_socket() {
	local out="$SR_OUT/serve-tcp-$SR_AS.out" sock
	sock="$(state_dir)/serve.sock"
	rm -f "$out"
	(as_user_exec "$SR" serve --listen 127.0.0.1:0 >"$out" 2>"$SR_OUT/serve-tcp-$SR_AS.err") &
	SERVE_PID=$!
	SR_BG_PIDS="${SR_BG_PIDS:-} $SERVE_PID"
	until_ok 10 has_lines "$out" 2 || {
		not_ok "serve --listen 127.0.0.1:0 prints its URL and the default socket"
		cat "$SR_OUT/serve-tcp-$SR_AS.err"
		stop_serve
		return
	}
	assert_match "the URL first, as before" '^http://127\.0\.0\.1:[0-9]+ ' "$(sed -n 1p "$out")"
	assert_eq "then the default socket" "unix:$sock" "$(sed -n 2p "$out")"
	code=$(as_user curl -s -o /dev/null -w '%{http_code}' --unix-socket "$sock" http://x/v1/health)
	assert_eq "which answers the server's user" 200 "$code"
	stop_serve
	check "and is removed at the end" test ! -e "$sock"
}

# A start that fails once its listeners are open (a warm pool of a
# profile that does not exist) takes back what it made: the socket and the
# token's file stayed, a socket nobody listens on and a token to nothing.
t_failed_start_leaves_nothing() {
	local dir
	dir="$(state_dir)"
	sr serve --listen 127.0.0.1:0 --warm no-such-profile=2
	assert_eq "serve with a bad --warm: 125" 125 "$rc"
	assert_eq "and leaves no socket or token file behind" "" \
		"$(cd "$dir" 2>/dev/null && ls -d serve.sock serve-*.token 2>/dev/null)"
}

# Warm pools: creates answered from sandboxes made ahead, each used once, refilled.
t_warm() {
	local sb n
	start_serve --warm offline=2 || return
	until_ok 20 eval 'api GET /v1/pools; [ "$(jf "j[\"pools\"][0][\"ready\"]")" = 2 ]'
	assert_eq "two warm sandboxes ready" 2 "$(jf 'j["pools"][0]["ready"]')"
	sr ls
	assert_eq "ls shows them warm" 2 "$(grep -c ' warm ' <<<"$out")"
	api POST /v1/sandboxes '{"profile": "offline", "timeout": "2m"}'
	sb=$(jf 'j["id"]')
	assert_eq "a create of the pool's profile: one of them, running, with its deadline" \
		"201 running 1" "$code $(jf 'j["state"]') $(jf '1 if j["expires"] else 0')"
	assert_eq "and the rest of what ls shows of it (from its keeper, no file read)" \
		"$sb 0 1" "$(jf 'j["id"]') $(jf '0 if j["limits"]["net"] == "none" else 1') $(jf '1 if j["created"] else 0')"
	api GET "/v1/sandboxes/$sb"
	assert_eq "its keeper says so too: running, a deadline 2 minutes away" "running 1" \
		"$(jf 'j["state"]') $(jf '1 if 100000 < j["expires_ms"] - __import__("time").time() * 1000 <= 120000 else 0')"
	api GET /v1/pools
	assert_eq "taken from the pool" 1 "$(jf 'j["pools"][0]["taken"]')"
	until_ok 20 eval 'api GET /v1/pools; [ "$(jf "j[\"pools\"][0][\"ready\"]")" = 2 ]'
	assert_eq "and made up for in the background" 2 "$(jf 'j["pools"][0]["ready"]')"
	api POST /v1/sandboxes '{"profile": "offline", "memory": "256M"}'
	api GET /v1/pools
	assert_eq "another configuration is made cold: the pool untouched" 1 "$(jf 'j["pools"][0]["taken"]')"
	stop_serve
	n=$(ls "$(state_dir)" | grep -vc '\.token$')
	assert_eq "SIGTERM: warm ones and made ones all gone" 0 "$n"
	# Killed: its warm sandboxes go with it (held), the ones it made live on until rm.
	start_serve --warm offline=1 || return
	until_ok 20 eval 'api GET /v1/pools; [ "$(jf "j[\"pools\"][0][\"ready\"]")" = 1 ]'
	api POST /v1/sandboxes '{"net": "none"}'
	sb=$(jf 'j["id"]')
	kill -9 "$SERVE_PID"
	wait "$SERVE_PID" 2>/dev/null
	until_ok 10 eval '[ "$(ls "$(state_dir)" | grep -c "^[0-9a-f]\{32\}$")" = 1 ]'
	sr ls --json
	assert_eq "killed: its warm one is gone, the one it made lives" "$sb" \
		"$(python3 -c 'import json,sys; print(" ".join(x["id"] for x in json.load(sys.stdin)))' <<<"$out")"
	sr rm "$sb"
}

# A pool's keepers warn as a run would (a limit this host cannot enforce), once per pool, not
# once per sandbox it makes and remakes.
t_warm_warns_once() {
	local err="$SR_OUT/serve-$SR_AS.err" warnings w sb
	sr -p offline -- true
	warnings=$(grep '^sandbox-run: warning: ' <<<"$errout")
	start_serve --warm offline=3 || return
	until_ok 20 eval 'api GET /v1/pools; [ "$(jf "j[\"pools\"][0][\"ready\"]")" = 3 ]'
	api POST /v1/sandboxes '{"profile": "offline"}'
	sb=$(jf 'j["id"]')
	api GET /v1/pools
	assert_eq "one taken from the pool" 1 "$(jf 'j["pools"][0]["taken"]')"
	until_ok 20 eval 'api GET /v1/pools; [ "$(jf "j[\"pools\"][0][\"made\"]")" = 4 ]'
	api DELETE "/v1/sandboxes/$sb"
	stop_serve
	assert_eq "four warm sandboxes made, one after a take: no warning said twice" "" \
		"$(grep '^sandbox-run: warning: ' "$err" | sort | uniq -d)"
	# None where the host enforces all that the profile asks for this user (cgroups).
	while IFS= read -r w; do
		[ -n "$w" ] || continue
		assert_eq "said once, as a run says it: ${w:0:60}..." 1 "$(grep -cxF -- "$w" "$err")"
	done <<<"$warnings"
}

# What a client can do to the server: nothing but its own requests.
t_hostile() {
	local sb pid i pids
	start_serve --max-sandboxes 2 --max-body 64K --client-timeout 2s || return
	# Malformed HTTP, binary garbage, a request line of 100 KiB: answered or cut off.
	as_user python3 - "$SOCK" <<'EOF'
import os, socket, sys
for data in [b"GARBAGE\r\n\r\n", os.urandom(4096), b"GET /" + b"a" * 100000 + b" HTTP/1.1\r\n\r\n",
             b"GET /v1/health HTTP/1.1\r\nHost: x\r\nContent-Length: -5\r\n\r\n",
             b"POST /v1/sandboxes HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\nZZZ\r\n"]:
    s = socket.socket(socket.AF_UNIX); s.connect(sys.argv[1]); s.settimeout(5)
    try:
        s.sendall(data); s.recv(4096)
    except OSError:
        pass
    s.close()
EOF
	api GET /v1/health
	assert_eq "malformed HTTP and garbage: the server answers the next client" 200 "$code"
	head -c 10000000 /dev/zero >"$SR_OUT/big-$SR_AS"
	code=$(as_user curl -s -o /dev/null -w '%{http_code}' --unix-socket "$SOCK" -X POST \
		--data-binary @"$SR_OUT/big-$SR_AS" http://x/v1/sandboxes)
	assert_eq "a body over --max-body: 413 at once" 413 "$code"
	# A client that writes its whole body before it reads its answer, as
	# Python's http.client does: the 413 reaches it, not a reset.
	out=$(as_user python3 - "$SOCK" <<'EOF'
import http.client, json, socket, sys
class Unix(http.client.HTTPConnection):
    def connect(self):
        self.sock = socket.socket(socket.AF_UNIX)
        self.sock.connect(sys.argv[1])
c = Unix("sandbox-run")
try:
    c.request("POST", "/v1/sandboxes", body=b"x" * (4 << 20))
    r = c.getresponse()
    print(r.status, json.loads(r.read())["code"])
except OSError as e:
    print("no answer:", e)
EOF
)
	assert_eq "a body over --max-body, sent whole before the answer is read: 413 too_large" \
		"413 too_large" "$out"
	code=$(as_user curl -s -o /dev/null -w '%{http_code}' --unix-socket "$SOCK" -X POST -H 'Transfer-Encoding: chunked' \
		--data-binary @"$SR_OUT/big-$SR_AS" http://x/v1/sandboxes)
	rc=$?
	assert_match "chunked, with no length said: cut off once past it" '^(52|55|56) (000|100)$' "$rc $code"
	rm -f "$SR_OUT/big-$SR_AS"
	# A slow client: dropped after --client-timeout of silence.
	out=$(as_user python3 - "$SOCK" <<'EOF'
import socket, sys, time
s = socket.socket(socket.AF_UNIX); s.connect(sys.argv[1]); s.settimeout(10)
s.sendall(b"GET /v1/health HTTP/1.1\r\nHo")
t = time.time()
print("closed" if s.recv(100) == b"" else "answered", round(time.time() - t))
EOF
)
	assert_match "a client silent for the timeout: cut off" "^closed [234]$" "$out"
	# Mid-stream: the client goes, its process is killed, the server goes on.
	api POST /v1/sandboxes '{"net": "none"}'
	sb=$(jf 'j["id"]')
	(as_user_exec curl -s -N --unix-socket "$SOCK" -X POST -d '{"cmd": "echo started; exec sleep 3600", "stream": true}' \
		"http://x/v1/sandboxes/$sb/exec" >"$SR_OUT/stream-$SR_AS") &
	pid=$!
	until_ok 10 grep -q started "$SR_OUT/stream-$SR_AS"
	check "the streamed command runs" sleeping 3600
	kill "$pid"
	wait "$pid" 2>/dev/null
	until_gone 10 sleeping 3600
	check "the client hung up mid-stream: its process is killed" _fails sleeping 3600
	api POST "/v1/sandboxes/$sb/exec" '{"argv": ["true"]}'
	assert_eq "and the sandbox serves the next exec" "200 0" "$code $(jf 'j["exit_code"]')"
	# The same while the answer is not streamed: the server notices the hang-up too.
	(as_user_exec curl -s --unix-socket "$SOCK" -X POST -d '{"cmd": "exec sleep 3601"}' \
		"http://x/v1/sandboxes/$sb/exec" >/dev/null) &
	pid=$!
	until_ok 10 sleeping 3601
	kill "$pid"
	wait "$pid" 2>/dev/null
	until_gone 10 sleeping 3601
	check "a buffered exec whose client hung up: killed too" _fails sleeping 3601
	# The cap on live sandboxes made through the server.
	api POST /v1/sandboxes '{"net": "none"}'
	assert_eq "a second sandbox: made" 201 "$code"
	api POST /v1/sandboxes '{"net": "none"}'
	assert_eq "past --max-sandboxes: 429 too_many" "429 too_many" "$code $(jf 'j["code"]')"
	api DELETE "/v1/sandboxes/$sb"
	api POST /v1/sandboxes '{"net": "none"}'
	assert_eq "room again once one is removed" 201 "$code"
	# Many clients at once, each answered.
	pids=()
	for i in $(seq 20); do
		as_user curl -s -o /dev/null -w '%{http_code}\n' --unix-socket "$SOCK" http://x/v1/sandboxes &
		pids+=($!)
	done >"$SR_OUT/many-$SR_AS"
	wait "${pids[@]}"
	assert_eq "20 clients at once: 20 answers" "20" "$(grep -c '^200$' "$SR_OUT/many-$SR_AS")"
	stop_serve
	assert_eq "SIGTERM: 0, nothing left" "0 " "$serve_rc $(ls "$(state_dir)" | grep -v '\.token$')"
}

# An unstreamed exec's output past --max-output: kept up to it, and not
# read any more. The server read `yes` and dropped it for as long as it
# ran, a core of its own, until the exec's timeout (forever without one).
# jbig EXPR: jf for a body too large for an argument (over 128 KiB).
jbig() {
	python3 -c 'import json,sys
j=json.load(open(sys.argv[1]))
v=eval(sys.argv[2])
print(json.dumps(v) if not isinstance(v,str) else v)' "$SR_OUT/.api-$SR_AS" "$1" 2>/dev/null
}

t_max_output() {
	local sb t0 took
	start_serve --max-output 1M || return
	api POST /v1/sandboxes '{"net": "none"}'
	sb=$(jbig 'j["id"]')
	t0=$(date +%s%N)
	api POST "/v1/sandboxes/$sb/exec" '{"argv": ["yes"], "timeout": "20s"}'
	took=$((($(date +%s%N) - t0) / 1000000))
	assert_eq "yes past --max-output 1M: 200, 1 MiB of it kept, stdout_truncated" \
		"200 1048576 true y" \
		"$code $(jbig 'len(j["stdout"])') $(jbig 'j.get("stdout_truncated")') $(jbig 'j["stdout"][:1]')"
	assert_eq "its pipe closed, as | head -c would: it ends by SIGPIPE, not its timeout" \
		"signaled 13" "$(jbig 'j["status"]') $(jbig 'j["signal"]')"
	check "within seconds ($took ms), not the timeout's 20 s" test "$took" -lt 10000
	api POST "/v1/sandboxes/$sb/exec" '{"cmd": "trap \"\" PIPE; head -c 3000000 /dev/zero | tr \"\\\\0\" a; echo after >&2", "timeout": "20s"}'
	assert_eq "a command that goes on: it does, stderr whole" "200 1048576 true after" \
		"$code $(jbig 'len(j["stdout"])') $(jbig 'j.get("stdout_truncated")') $(jbig 'j["stderr"].strip().splitlines()[-1]')"
	api POST "/v1/sandboxes/$sb/exec" '{"cmd": "head -c 1048576 /dev/zero | tr \"\\\\0\" b"}'
	assert_eq "exactly --max-output: whole, not truncated" "200 1048576 null 0" \
		"$code $(jbig 'len(j["stdout"])') $(jbig 'j.get("stdout_truncated")') $(jbig 'j["exit_code"]')"
	sr rm "$sb"
	stop_serve
}

# timed_get PATH: GET, bounded from outside (a hang fails the case, not the
# suite): $code, $body, $curl_rc and $took in ms.
timed_get() {
	local t0 o="$SR_OUT/.get-$SR_AS"
	t0=$(date +%s%N)
	code=$(as_user curl -s -m 40 -o "$o" -w '%{http_code}' --unix-socket "$SOCK" "http://x$1")
	curl_rc=$?
	took=$((($(date +%s%N) - t0) / 1000000))
	body=$(head -c 2000 "$o" | tr -d "\\0")
}

# A file read or listing whose worker the agent stopped (it runs as the
# agent's uid): it hung the request, and its connection, for good. Now
# --idle-timeout answers 504 (or, once the body has begun, cuts it off),
# and the worker is killed.
t_stopped_worker() {
	local sb
	start_serve --idle-timeout 2s || return
	api POST /v1/sandboxes '{"net": "none"}'
	sb=$(jf 'j["id"]')
	sr cp "$SR_TMP/stopper.py" "$sb:/tmp/stopper.py"
	sr exec "$sb" -- sh -c 'mkdir many && cd many && seq 30000 | xargs touch &&
		head -c 50000000 /dev/zero >/workspace/big'
	assert_eq "a directory of 30,000 files, a file of 50 MB" 0 "$rc"
	stopper stop
	timed_get "/v1/sandboxes/$sb/files?path=many&list=1"
	stopper_done
	assert_eq "the agent stops the listing's worker" "stopped a worker" "$stopper_did"
	assert_eq "a listing whose worker is stopped: 504 timeout, not hanging" "504 timeout" \
		"$code $(jf 'j["code"]')"
	assert_match "saying why" "nothing came from the sandbox for 2s: its worker is stopped or gone" \
		"$(jf 'j["message"]')"
	check "within seconds of --idle-timeout ($took ms)" test "$took" -lt 15000
	check "and the stopped worker is killed" until_ok 10 _no_workers
	stopper stop
	timed_get "/v1/sandboxes/$sb/files?path=big"
	stopper_done
	assert_eq "the agent stops the read's worker" "stopped a worker" "$stopper_did"
	# Stopped before its first byte: 504; after it, the 200's body is cut
	# off (curl: 18, the transfer closed with the rest outstanding).
	assert_match "a read whose worker is stopped: 504, or its body cut off" \
		"^(504 0 timeout|200 18 .*)$" "$code $curl_rc $(jf 'j["code"]' || echo cut)"
	check "within seconds of --idle-timeout ($took ms)" test "$took" -lt 15000
	check "and that worker is killed too" until_ok 10 _no_workers
	api GET "/v1/sandboxes/$sb/files?path=many&stat=1"
	assert_eq "the sandbox serves the next one" "200 dir" "$code $(jf 'j["type"]')"
	timed_get "/v1/sandboxes/$sb/files?path=big"
	assert_eq "a read nobody stops: whole" "200 0 50000000" \
		"$code $curl_rc $(stat -c %s "$SR_OUT/.get-$SR_AS")"
	sr rm "$sb"
	stop_serve
}

# A file read whose client takes nothing of its body: the worker fills the
# server's queue and waits (paused: --idle-timeout does not run while the
# client is what it waits for). The connection, sending nothing, is
# dropped after --client-timeout, and with it the request and its worker:
# neither held until the sandbox ends.
t_read_not_taken() {
	local sb t0 took
	start_serve --client-timeout 4s || return
	api POST /v1/sandboxes '{"net": "none", "timeout": "10m"}'
	sb=$(jf 'j["id"]')
	sr exec "$sb" -- sh -c 'head -c 200000000 /dev/zero >/workspace/big'
	rm -f "$SR_OUT/.take-$SR_AS"
	as_user python3 - "$SOCK" "$sb" "$SR_OUT/.take-$SR_AS" >"$SR_OUT/.lazy-$SR_AS" 2>&1 <<'PY' &
import os, socket, sys, time
sock, sb, go = sys.argv[1:]
s = socket.socket(socket.AF_UNIX)
s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
s.connect(sock)
s.sendall(b"GET /v1/sandboxes/%s/files?path=big HTTP/1.1\r\nHost: x\r\n\r\n" % sb.encode())
end = time.time() + 60
while not os.path.exists(go) and time.time() < end:
    time.sleep(0.1)
# Then all that came, to its end if the server closed the connection.
s.settimeout(5)
data, n = b"", 0
try:
    while True:
        d = s.recv(1 << 20)
        if not d:
            break
        data, n = data or d, n + len(d)
    print(data.split(b"\r\n")[0].decode(), "closed", n < 200000000)
except socket.timeout:
    print(data.split(b"\r\n")[0].decode(), "open")
PY
	local lazy=$!
	SR_BG_PIDS="${SR_BG_PIDS:-} $lazy"
	check "the read's worker runs" until_ok 3 _fails _no_workers
	t0=$(date +%s%N)
	until _no_workers || [ $((($(date +%s%N) - t0) / 1000000000)) -ge 30 ]; do sleep 0.5; done
	took=$((($(date +%s%N) - t0) / 1000000))
	check "its worker is gone within seconds of --client-timeout 4s ($took ms)" _no_workers
	touch "$SR_OUT/.take-$SR_AS"
	wait "$lazy"
	assert_eq "the client: its 200's body cut off, the connection closed" \
		"HTTP/1.1 200 OK closed True" "$(cat "$SR_OUT/.lazy-$SR_AS")"
	api GET "/v1/sandboxes/$sb/files?path=big&stat=1"
	assert_eq "the sandbox serves the next one" "200 200000000" "$code $(jf 'j["size"]')"
	sr rm "$sb"
	stop_serve
}

# timed_req METHOD PATH [CURL ARGS...]: as timed_get, any method and body.
timed_req() {
	local t0 o="$SR_OUT/.req-$SR_AS" m=$1 p=$2
	shift 2
	t0=$(date +%s%N)
	code=$(as_user curl -s -m 40 -o "$o" -w '%{http_code}' --unix-socket "$SOCK" -X "$m" \
		"$@" "http://x$p")
	curl_rc=$?
	took=$((($(date +%s%N) - t0) / 1000000))
	body=$(head -c 2000 "$o" | tr -d "\\0")
}

# A write, a remove, a mkdir or a snapshot whose worker the agent stopped
# held the request, its connection and its worker (and for envd's upload
# one of its 64 slots) for good. Now each is given up after --idle-timeout:
# 504 (envd's RPCs: deadline_exceeded), the worker killed. A remove that
# goes on, however slowly, is not cut.
t_stopped_writer() {
	local sb deep big="$SR_TMP/big-$SR_AS" snap="stuck-api-$SR_AS-$$"
	start_serve --idle-timeout 2s || return
	api POST /v1/sandboxes '{"net": "none", "timeout": "10m"}'
	sb=$(jf 'j["id"]')
	sr cp "$SR_TMP/stopper.py" "$sb:/tmp/stopper.py"
	head -c 20000000 /dev/zero >"$big"
	chmod 0644 "$big"
	# Sent at 10 MB/s: the worker lives two seconds, however fast the host.
	stopper stop
	timed_req PUT "/v1/sandboxes/$sb/files?path=put" --limit-rate 10M --data-binary "@$big"
	stopper_done
	assert_eq "the agent stops the write's worker" "stopped a worker" "$stopper_did"
	assert_eq "a write whose worker is stopped: 504 timeout, not hanging" "504 timeout" \
		"$code $(jf 'j["code"]')"
	assert_match "saying why" "the sandbox took nothing for 2s: its worker is stopped or gone" \
		"$(jf 'j["message"]')"
	check "within seconds of --idle-timeout ($took ms)" test "$took" -lt 15000
	check "and the stopped worker is killed" until_ok 10 _no_workers
	stopper stop
	timed_req POST /files -H "E2b-Sandbox-Id: $sb" --limit-rate 10M -F "file=@$big;filename=up/post"
	stopper_done
	assert_eq "the agent stops the upload's worker" "stopped a worker" "$stopper_did"
	assert_eq "envd's multipart upload whose worker is stopped: 504" "504 504" \
		"$code $(jf 'j["code"]')"
	check "within seconds of --idle-timeout ($took ms)" test "$took" -lt 15000
	check "and that worker is killed too" until_ok 10 _no_workers
	timed_req PUT "/v1/sandboxes/$sb/files?path=put" --data-binary "@$big"
	assert_eq "a write nobody stops: whole" "200 20000000" "$code $(jf 'j["size"]')"
	# A remove: its worker stopped, then one slowed down but going on.
	sr exec "$sb" -- sh -c 'for d in a b; do mkdir $d && (cd $d && seq 60000 | xargs touch); done'
	assert_eq "two directories of 60,000 files" 0 "$rc"
	stopper stop
	timed_req DELETE "/v1/sandboxes/$sb/files?path=a"
	stopper_done
	assert_eq "the agent stops the remove's worker" "stopped a worker" "$stopper_did"
	assert_eq "a remove whose worker is stopped: 504" "504 timeout" "$code $(jf 'j["code"]')"
	check "within seconds of --idle-timeout ($took ms)" test "$took" -lt 15000
	check "and the stopped worker is killed" until_ok 10 _no_workers
	stopper throttle
	timed_req POST /filesystem.Filesystem/Remove -H "E2b-Sandbox-Id: $sb" \
		-H 'Content-Type: application/json' --data-binary '{"path": "/workspace/b"}'
	stopper_done
	assert_match "envd's Remove slowed down past --idle-timeout, but going on: done" \
		"^200 \{\} throttled a worker" "$code $body $stopper_did"
	check_took_pauses --idle-timeout
	# envd's MakeDir, its worker stopped as it starts: 1,000 levels to make,
	# so that it lives long enough for the stopper's loop to meet it.
	deep=/workspace/made$(printf '/d%.0s' $(seq 1000))
	stopper all
	timed_req POST /filesystem.Filesystem/MakeDir -H "E2b-Sandbox-Id: $sb" \
		-H 'Content-Type: application/json' --data-binary "{\"path\": \"$deep\"}"
	stopper_done
	assert_eq "envd's MakeDir whose worker is stopped: 504 deadline_exceeded" \
		"504 deadline_exceeded" "$code $(jf 'j["code"]')"
	check "within seconds of --idle-timeout ($took ms)" test "$took" -lt 15000
	check "and its worker is killed" until_ok 10 _no_workers
	# A snapshot: the keeper watches its file grow for the server's --idle-timeout.
	sr exec "$sb" -- sh -c 'head -c 64M /dev/urandom >/workspace/bulk'
	stopper stop
	timed_req POST "/v1/sandboxes/$sb/snapshots" --data-binary "{\"name\": \"$snap\"}"
	stopper_done
	assert_eq "the agent stops the snapshot's worker" "stopped a worker" "$stopper_did"
	assert_eq "a snapshot whose worker is stopped: 504" "504 timeout" "$code $(jf 'j["code"]')"
	check "within seconds of --idle-timeout ($took ms)" test "$took" -lt 15000
	check "and its worker is killed" until_ok 10 _no_workers
	api GET "/v1/sandboxes/$sb/files?path=put&stat=1"
	assert_eq "the sandbox serves the next request" "200 20000000" "$code $(jf 'j["size"]')"
	sr rm "$sb"
	rm -f "$big"
	stop_serve
}

# envd's multipart POST /files: at most 64 files being written at once
# (upload.c), within one chunk of the body too. A body of 300 tiny parts
# came in one read, and every part's worker was started at once.
t_upload_bound() {
	local sb up="$SR_OUT/.upload-$SR_AS" curl_pid n
	start_serve || return
	api POST /v1/sandboxes '{"net": "none"}'
	sb=$(jf 'j["id"]')
	sr cp "$SR_TMP/stopper.py" "$sb:/tmp/stopper.py"
	python3 -c 'import sys
for i in range(300):
    sys.stdout.write("--sr-boundary\r\nContent-Disposition: form-data; name=\"file\"; filename=\"up/f%d\"\r\n\r\nx\r\n" % i)
sys.stdout.write("--sr-boundary--\r\n")' >"$SR_TMP/parts"
	chmod 0644 "$SR_TMP/parts"
	stopper all
	(as_user curl -s -m 60 -o "$up" -w '%{http_code}' --unix-socket "$SOCK" \
		-H "E2b-Sandbox-Id: $sb" -H 'Content-Type: multipart/form-data; boundary=sr-boundary' \
		--data-binary "@$SR_TMP/parts" "http://x/files" >"$up.code") &
	curl_pid=$!
	SR_BG_PIDS="${SR_BG_PIDS:-} $curl_pid"
	stopper_done
	wait "$curl_pid"
	n=$(sed -n 's/^stopped \([0-9]*\) workers$/\1/p' <<<"$stopper_did")
	check "300 parts in one body: at most 64 files written at once, and a few more ($stopper_did)" \
		test "${n:-999}" -le 80
	body=$(cat "$up")
	assert_eq "then all written" "200 300" "$(cat "$up.code") $(jf 'len(j)')"
	sr exec "$sb" -- sh -c 'ls /home/user/up | wc -l'
	assert_eq "and all there" 300 "$(tr -d ' \n' <<<"$out")"
	# A part's data split between two reads (as the slices above split
	# them): libmicrohttpd may say it at offset 0 twice. It was two files
	# of one name, written by two workers at once (the empty one's
	# truncation could come last), and answered twice.
	out=$(as_user python3 - "$SOCK" "$sb" <<'EOF'
import socket, sys, time
s = socket.socket(socket.AF_UNIX)
s.connect(sys.argv[1])
b1 = '--sr-boundary\r\nContent-Disposition: form-data; name="file"; filename="split/a"\r\n\r\na'
b2 = 'bc\r\n--sr-boundary--\r\n'
s.sendall(('POST /files HTTP/1.1\r\nHost: x\r\nConnection: close\r\nE2b-Sandbox-Id: %s\r\n'
           'Content-Type: multipart/form-data; boundary=sr-boundary\r\nContent-Length: %d\r\n\r\n'
           % (sys.argv[2], len(b1) + len(b2)) + b1).encode())
time.sleep(0.5)
s.sendall(b2.encode())
got = b''
while True:
    d = s.recv(65536)
    if not d:
        break
    got += d
print(got.split(b' ')[1].decode(), got.count(b'"path"'))
EOF
	)
	assert_eq "a part split in its data: one file" "200 1" "$out"
	sr exec "$sb" -- cat /home/user/split/a
	assert_eq "with its data" abc "$out"
	sr rm "$sb"
	stop_serve
}

# What a sandbox reaches of the API: nothing. Not the socket (another mount
# namespace; the state directory is not in it), not the TCP listener (its
# loopback is its own; with --net egress the host's addresses are refused,
# slirp4netns' 10.0.2.2 too). Whatever answers a connection from inside
# (this host's upstream takes any), it is never the API.
t_from_inside() {
	local sb net probe
	start_serve --listen 127.0.0.1:0 || return
	probe='import socket, sys, os
port, token, sock = int(sys.argv[1]), sys.argv[2], sys.argv[3]
print("socket:", "visible" if os.path.exists(sock) else "absent")
hosts = ["127.0.0.1", "10.0.2.2"] + sys.argv[4:]
for h in hosts:
    s = socket.socket(); s.settimeout(3)
    try:
        s.connect((h, port))
        s.sendall(b"GET /v1/health HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer " + token.encode() + b"\r\nConnection: close\r\n\r\n")
        got = s.recv(4096)
        print(h, "API" if b"\"api\":\"v1\"" in got else "not the API")
    except OSError as e:
        print(h, "refused" if isinstance(e, ConnectionRefusedError) else "failed")
    s.close()'
	for net in none egress; do
		if [ "$net" = egress ] && ! have_egress; then
			skip "from a --net egress sandbox" "no egress helper or /dev/net/tun here"
			continue
		fi
		api POST /v1/sandboxes "{\"net\": \"$net\"}"
		sb=$(jf 'j["id"]')
		api POST "/v1/sandboxes/$sb/exec" "$(python3 -c 'import json,sys; print(json.dumps({"argv": ["python3", "-c"] + sys.argv[1:]}))' \
			"$probe" "${URL##*:}" "$TOKEN" "$SOCK" $(hostname -I 2>/dev/null))"
		assert_eq "--net $net: the socket is not in the sandbox" "socket: absent" "$(jf 'j["stdout"].splitlines()[0]')"
		assert_eq "--net $net: no connection from inside reaches the API" "" "$(jf '"\n".join(l for l in j["stdout"].splitlines()[1:] if l.endswith(" API"))')"
		assert_match "--net $net: the sandbox's own 127.0.0.1 refuses" "^127.0.0.1 refused$" "$(jf 'j["stdout"].splitlines()[1]')"
		api DELETE "/v1/sandboxes/$sb"
	done
	stop_serve
}

# keeper_ready ID: its keeper has made the sandbox (it names itself so just
# before it answers the server).
keeper_ready() {
	local kp
	kp=$(json_get "$(state_dir)/$1/state.json" keeper_pid 2>/dev/null) &&
		tr '\0' ' ' <"/proc/$kp/cmdline" 2>/dev/null | grep -q "^sandbox-run-keeper $1"
}

# A create whose client hangs up while its keeper answers: the sandbox is
# removed, not left to live known to nobody. The keeper is stopped as soon
# as it appears, the server once it waits again; then the client goes, the
# keeper is let go and says it is ready, and the server, let go last,
# reads the hang-up first. It once closed the keeper's pipe with that
# answer unread, and the sandbox lived on to its deadline.
t_create_client_gone() {
	local sb
	start_serve || return
	sb=$(as_user python3 - "$SOCK" "$(state_dir)" "$SERVE_PID" <<'PY'
import json, os, re, signal, socket, sys, time
sock, state, server = sys.argv[1], sys.argv[2], int(sys.argv[3])
ids = lambda: {e for e in os.listdir(state) if re.fullmatch("[0-9a-f]{32}", e)}
def until(f):
    end = time.monotonic() + 20
    while time.monotonic() < end:
        v = f()
        if v:
            return v
        time.sleep(0.0005)
    sys.exit("timed out")
def keeper():
    for e in ids() - before:
        try:
            return json.load(open(f"{state}/{e}/state.json"))["keeper_pid"], e
        except (OSError, ValueError):
            pass
def server_waits():
    return open(f"/proc/{server}/wchan").read() in ("do_epoll_wait", "ep_poll")
before = ids()
body = b'{"net": "none", "timeout": "10m"}'
c = socket.socket(socket.AF_UNIX)
c.connect(sock)
c.sendall(b"POST /v1/sandboxes HTTP/1.1\r\nHost: x\r\nContent-Length: %d\r\n\r\n%s" % (len(body), body))
kp, sb = until(keeper)
os.kill(kp, signal.SIGSTOP)
until(server_waits)
os.kill(server, signal.SIGSTOP)
c.close()
os.kill(kp, signal.SIGCONT)
print(sb)
PY
)
	check "create: its keeper started, then the server stopped" test -n "$sb"
	check "the keeper made the sandbox meanwhile" until_ok 20 keeper_ready "$sb"
	sleep 0.2
	kill -CONT "$SERVE_PID"
	check "the client gone, the sandbox is removed" until_ok 10 test ! -e "$(state_dir)/$sb"
	[ -z "$sb" ] || sr rm -f "$sb"
	stop_serve
}

# A keeper that takes no connections (stopped, its queue of them full)
# does not hold the server: a request for its sandbox is answered at once
# (429), and every other request is served. The server once waited in
# connect(2) for room in that queue, its whole loop with it.
t_stopped_keeper() {
	local sb kp filler out="$SR_OUT/filler-$SR_AS"
	start_serve || return
	api POST /v1/sandboxes '{"net": "none", "timeout": "5m"}'
	sb=$(jf 'j["id"]')
	kp=$(json_get "$(state_dir)/$sb/state.json" keeper_pid)
	kill -STOP "$kp"
	# Emptied before the filler starts: the background subshell truncates it
	# only once it runs, and a "full" left by the last run sent the request
	# while the queue had room (the keeper stopped: no answer, no 429).
	: >"$out"
	(as_user_exec python3 - "$(state_dir)/$sb/ctl" >"$out" 2>&1 <<'PY') &
import socket, sys, time
held = []
while True:
    c = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    c.setblocking(False)
    try:
        c.connect(sys.argv[1])
    except BlockingIOError:
        break
    held.append(c)
print("full", len(held), flush=True)
time.sleep(60)
PY
	filler=$!
	check "its queue of connections filled" until_ok 20 grep -q full "$out"
	code=$(as_user curl -s -m 5 -o /dev/null -w '%{http_code}' --unix-socket "$SOCK" \
		"http://sandbox-run/v1/sandboxes/$sb")
	assert_eq "a request for its sandbox: 429 at once" 429 "$code"
	code=$(as_user curl -s -m 5 -o /dev/null -w '%{http_code}' --unix-socket "$SOCK" \
		http://sandbox-run/v1/health)
	assert_eq "and the server answers others" 200 "$code"
	kill "$filler"
	wait "$filler" 2>/dev/null
	kill -CONT "$kp"
	api DELETE "/v1/sandboxes/$sb"
	assert_eq "the keeper let go, its sandbox is served again" 200 "$code"
	stop_serve
}

# E2B's metadata lived in the server's memory alone: the sandboxes outlive
# a server killed or restarted, and the next one listed them with none,
# so Sandbox.list({metadata}) found none of them. Now it is kept beside
# the sandbox's state (0600), and bounded.
t_metadata_kept() {
	local sb big
	start_serve || return
	api POST /sandboxes '{"templateID": "base", "metadata": {"suite": "serve.sh", "run": "kept"}, "timeout": 120}'
	sb=$(jf 'j["sandboxID"]')
	assert_eq "E2B's create with metadata: 201" 201 "$code"
	assert_eq "kept beside its state, 0600" 600 "$(stat -c %a "$(state_dir)/$sb/api.json" 2>&1)"
	kill -9 "$SERVE_PID"
	wait "$SERVE_PID" 2>/dev/null
	start_serve || return
	api GET "/sandboxes?metadata=run%3Dkept"
	assert_eq "a server started again lists it by its metadata" "200 [\"$sb\"]" "$code $(jf '[x["sandboxID"] for x in j]')"
	api GET "/sandboxes/$sb"
	assert_eq "and its detail has it, and its template" '[[["run", "kept"], ["suite", "serve.sh"]], "base"]' \
		"$(jf '[sorted(j["metadata"].items()), j["templateID"]]')"
	big=$(printf '%09000d' 0)
	api POST /sandboxes "{\"templateID\": \"base\", \"metadata\": {\"big\": \"$big\"}}"
	assert_match "metadata of more than 8 KiB: 400, saying why" "^400 .*at most 8192" "$code $body"
	api POST /sandboxes '{"templateID": "base", "metadata": {"n": 1}}'
	assert_match "metadata not a string: 400" "^400 .*'n': expected a string" "$code $body"
	api DELETE "/sandboxes/$sb"
	assert_eq "E2B's kill: 204" 204 "$code"
	check "and its state is gone, what was kept with it too" until_ok 10 test ! -e "$(state_dir)/$sb"
	stop_serve
}

for_each_user t_walkthrough t_errors t_auth t_tcp_keeps_socket t_failed_start_leaves_nothing t_warm t_warm_warns_once t_hostile \
	t_max_output t_stopped_worker t_stopped_writer \
	t_upload_bound t_from_inside t_create_client_gone t_stopped_keeper t_read_not_taken t_metadata_kept
done_testing
