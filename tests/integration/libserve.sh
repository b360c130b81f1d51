# shellcheck shell=bash
# Helpers for the suites that drive `sandbox-run serve` (integration and
# security): source after libtest.sh.

# start_serve ARGS...: a server of the round's user on $SOCK (and what ARGS
# add); its pid in $SERVE_PID; given a TCP listener (ARGS: --listen
# ADDR:PORT), its URL, port and token in $URL, $PORT and $TOKEN.
start_serve() {
	local out="$SR_OUT/serve-$SR_AS.out" lines=1 a
	for a in "$@"; do [[ $a == [0-9]*:[0-9]* ]] && lines=2; done
	rm -f "$out"
	SOCK="$(state_dir)/api.sock"
	(as_user_exec "$SR" serve --listen "unix:$SOCK" "$@" >"$out" 2>"$SR_OUT/serve-$SR_AS.err") &
	SERVE_PID=$!
	SR_BG_PIDS="${SR_BG_PIDS:-} $SERVE_PID"
	until_ok 10 has_lines "$out" "$lines" || {
		not_ok "serve started"
		cat "$SR_OUT/serve-$SR_AS.err"
		return 1
	}
	URL="" TOKEN="" PORT=""
	if [ "$lines" = 2 ]; then
		read -r URL TOKEN_FILE < <(sed -n 2p "$out")
		TOKEN=$(cat "$TOKEN_FILE")
		PORT=${URL##*:}
	fi
}

# stop_serve: SIGTERM, its exit status in $serve_rc; no longer the cleanup's to kill.
stop_serve() {
	local p keep=""
	kill -TERM "$SERVE_PID" 2>/dev/null
	wait "$SERVE_PID"
	serve_rc=$?
	for p in ${SR_BG_PIDS:-}; do [ "$p" = "$SERVE_PID" ] || keep="$keep $p"; done
	SR_BG_PIDS=$keep
}

# api METHOD PATH [BODY]: over the Unix socket as the round's user; $code, $body.
api() {
	local o="$SR_OUT/.api-$SR_AS"
	rm -f "$o"
	code=$(as_user curl -s -o "$o" -w '%{http_code}' --unix-socket "$SOCK" -X "$1" \
		"http://sandbox-run$2" ${3+--data-binary "$3"})
	body=$(cat "$o" 2>/dev/null)
}

# jf EXPR: a field of $body (python: j is the JSON).
jf() {
	python3 -c 'import json,sys
j=json.loads(sys.argv[1])
v=eval(sys.argv[2])
print(json.dumps(v) if not isinstance(v,str) else v)' "$body" "$1" 2>/dev/null
}
