#!/usr/bin/env bash
# What a warm sandbox holds in memory (docs/security.md, "What a keeper
# holds"): each keeper of serve --warm, and the sandbox's PID 1 beneath
# it, is a fork of the server, which holds every deployment's secrets and
# the API's bearer token. A sandbox of deployment A holds A's secrets (its
# agent's environment) and nothing of B's, nor the token: not before a
# request, nor when it was made while B's invocation and a client with the
# token were being served, nor after an answer that carried the token
# (E2B's create). Read as root through /proc/PID/mem (which
# reaches the non-dumpable PID 1 too), in the root round and the user's.
. "$(dirname "$0")/../integration/libtest.sh"
. "$(dirname "$0")/../integration/libserve.sh"

SCAN="$(dirname "$0")/memscan.py"

# pool_ready NAME N: a warm sandbox of deployment NAME is ready, and its pool has made N in all.
pool_ready() {
	api GET /v1/pools
	python3 -c 'import json,sys
j=json.loads(sys.argv[1])
sys.exit(0 if any(p["deployment"]==sys.argv[2] and not p["options"] and p["ready"]>=1
		and p["made"]>=int(sys.argv[3]) for p in j["deployments"]) else 1)' "$body" "$1" "$2" 2>/dev/null
}

# tree PID: PID and every process beneath it.
tree() {
	local c
	echo "$1"
	for c in $(cat /proc/"$1"/task/*/children 2>/dev/null); do tree "$c"; done
}

# keepers MEMORY: the warm sandboxes' keepers whose memory limit is MEMORY (bytes).
keepers() {
	local f
	for f in "$(state_dir)"/*/state.json; do
		python3 -c 'import json,sys
j=json.load(open(sys.argv[1]))
if j["limits"]["memory_bytes"]==int(sys.argv[2]): print(j["keeper_pid"])' "$f" "$1" 2>/dev/null
	done
}

# held MEMORY TAG: each process of the warm sandboxes of that memory limit
# (the keeper and everything beneath it: PID 1, its parked agent) and the
# needles found in its memory, "PID COMM: NAME..." ("-": none).
held() {
	local mem=$1 own=$2 pids="" k p
	for k in $(keepers "$mem"); do pids="$pids $(tree "$k" | tr '\n' ' ')"; done
	[ -n "$pids" ] || return
	# shellcheck disable=SC2086
	python3 "$SCAN" "$SR_TMP/needles" $pids >"$SR_OUT/scan-$SR_AS-$own"
	while read -r p found; do
		[ "$found" = gone ] && continue
		echo "$p $(cat /proc/"$p"/comm 2>/dev/null): $found"
	done <"$SR_OUT/scan-$SR_AS-$own"
}

# others NAME: the lines of held's that name NAME or the token.
others() {
	grep -E ": (.* )?($1|token)( |\$)"
}

t_warm_memory() {
	local a b secret_a secret_b prompt_b n curl_pid e2b_id
	secret_a="sec-A-$RANDOM$RANDOM$RANDOM"
	secret_b="sec-B-$RANDOM$RANDOM$RANDOM"
	prompt_b="prompt-B-$RANDOM$RANDOM$RANDOM"
	# shellcheck disable=SC2016
	a=$(make_agent "mem-a-$SR_AS" 'cat >/dev/null; echo "a:${KEY%%-*}"')
	# shellcheck disable=SC2016
	b=$(make_agent "mem-b-$SR_AS" 'p=$(cat); sleep 3; echo "b:${KEY%%-*}:${#p}"')
	sr deploy --name mem-a --net none --memory 200M "$a"
	assert_eq "deploy A" 0 "$rc"
	sr deploy --name mem-b --net none --memory 300M "$b"
	assert_eq "deploy B" 0 "$rc"
	printf %s "$secret_a" >"$SR_TMP/secret-a-$SR_AS"
	printf %s "$secret_b" >"$SR_TMP/secret-b-$SR_AS"
	chmod a+r "$SR_TMP/secret-a-$SR_AS" "$SR_TMP/secret-b-$SR_AS"
	SR_STDIN="$SR_TMP/secret-a-$SR_AS" sr secrets set mem-a KEY
	SR_STDIN="$SR_TMP/secret-b-$SR_AS" sr secrets set mem-b KEY
	start_serve --warm 1 --listen 127.0.0.1:0 || return
	check "serve: a TCP listener with a token" test -n "$TOKEN"
	check "A's pool is warm" until_ok 30 pool_ready mem-a 1
	check "B's pool is warm" until_ok 30 pool_ready mem-b 1
	printf 'a %s\nb %s\ntoken %s\n' "$secret_a" "$secret_b" "$TOKEN" >"$SR_TMP/needles"

	# Made before any request: each holds its own secret, and only that.
	held 209715200 a >"$SR_OUT/held-a-$SR_AS"
	held 314572800 b >"$SR_OUT/held-b-$SR_AS"
	sed 's/^/# A: /' "$SR_OUT/held-a-$SR_AS"
	sed 's/^/# B: /' "$SR_OUT/held-b-$SR_AS"
	n=$(grep -cE ': (.* )?a( |$)' "$SR_OUT/held-a-$SR_AS")
	check "A's sandbox holds A's secret (its environment: the scan works)" test "$n" -ge 2
	assert_eq "nothing of A's sandbox holds B's secret or the token" "" \
		"$(others b <"$SR_OUT/held-a-$SR_AS")"
	assert_eq "nothing of B's sandbox holds A's secret or the token" "" \
		"$(others a <"$SR_OUT/held-b-$SR_AS")"

	# The token in an answer too: E2B's create gives it as envdAccessToken.
	body=$(as_user curl -s -m 30 -H "X-API-Key: $TOKEN" \
		--data-binary '{"templateID": "default", "allow_internet_access": false}' "$URL/v2/sandboxes")
	assert_eq "an E2B create over TCP answers with the token" "$TOKEN" "$(jf 'j["envdAccessToken"]')"
	e2b_id=$(jf 'j["sandboxID"]')
	assert_eq "and the sandbox is killed" 204 "$(as_user curl -s -m 30 -o /dev/null -w '%{http_code}' \
		-H "X-API-Key: $TOKEN" -X DELETE "$URL/sandboxes/$e2b_id")"

	# B invoked over TCP with the token, its prompt in the body; while it
	# runs (3 s), A is invoked and its pool makes another sandbox.
	as_user curl -s -m 20 -o "$SR_OUT/b-answer-$SR_AS" -H "Authorization: Bearer $TOKEN" \
		--data-binary "$prompt_b" "$URL/v1/deployments/mem-b/invoke" &
	curl_pid=$!
	SR_BG_PIDS="${SR_BG_PIDS:-} $curl_pid"
	sleep 0.5
	assert_eq "A invoked over TCP, with the token" "a:sec" \
		"$(as_user curl -s -m 20 -H "Authorization: Bearer $TOKEN" --data-binary x \
			"$URL/v1/deployments/mem-a/invoke")"
	check "A's pool made another" until_ok 20 pool_ready mem-a 2
	held 209715200 a >"$SR_OUT/held-a-$SR_AS"
	sed 's/^/# A: /' "$SR_OUT/held-a-$SR_AS"
	assert_eq "the one made while B's request was served holds neither B's secret nor the token" "" \
		"$(others b <"$SR_OUT/held-a-$SR_AS")"
	wait "$curl_pid"
	assert_eq "B answered" "b:sec:${#prompt_b}" "$(cat "$SR_OUT/b-answer-$SR_AS")"
	check "B's pool made another" until_ok 20 pool_ready mem-b 2
	held 314572800 b >"$SR_OUT/held-b-$SR_AS"
	sed 's/^/# B: /' "$SR_OUT/held-b-$SR_AS"
	assert_eq "B's new sandbox holds neither A's secret nor the token" "" \
		"$(others a <"$SR_OUT/held-b-$SR_AS")"
	stop_serve
	sr deployments rm mem-a mem-b
}

# What a request gave its sandbox, or the sandbox gave back, is not left in
# the server's memory once the request is over: every keeper forked later
# (a pool's refill) would copy it. An exec's environment and stdin, its
# output, a file written and read back, a listing's names, a preview's
# request and page, an upload's multipart body; the server's whole memory
# is read once they have all been answered. A create's environment too
# (its values may be secrets).
t_request_memory() {
	local id out env="env-$RANDOM$RANDOM$RANDOM" in="in-$RANDOM$RANDOM$RANDOM"
	local file="file-$RANDOM$RANDOM$RANDOM" name="name-$RANDOM$RANDOM$RANDOM" read
	local header="header-$RANDOM$RANDOM$RANDOM" page e2b
	local made="made-$RANDOM$RANDOM$RANDOM" e2b_env="e2b-env-$RANDOM$RANDOM$RANDOM"
	local pad part="part-$RANDOM$RANDOM$RANDOM"
	pad=$(head -c 3000 /dev/zero | tr '\0' p)
	start_serve --listen 127.0.0.1:0 || return
	# Long values: freed, a small block is soon reused, a large one stays as it was.
	api POST /v1/sandboxes "{\"net\": \"none\", \"env\": {\"MADE\": \"$pad$made\"}}"
	assert_eq "a sandbox made" 201 "$code"
	id=$(jf 'j["id"]')
	api POST /sandboxes "{\"templateID\": \"base\", \"allow_internet_access\": false, \"envVars\": {\"MADE\": \"$pad$e2b_env\"}}"
	assert_eq "and one through E2B's API" 201 "$code"
	e2b=$(jf 'j["sandboxID"]')
	printf 'create-env %s\ne2b-create-env %s\n' "$made" "$e2b_env" >"$SR_TMP/needles"
	assert_eq "the server holds neither create's environment once answered" "$SERVE_PID -" \
		"$(python3 "$SCAN" "$SR_TMP/needles" "$SERVE_PID")"
	# shellcheck disable=SC2016
	api POST "/v1/sandboxes/$id/exec" "$(python3 -c 'import json,sys
print(json.dumps({"argv": ["sh", "-c", "echo ${#L} $(wc -c); echo out-$(od -An -N8 -tx8 /dev/urandom | tr -d \" \")"],
	"env": {"L": sys.argv[1]}, "stdin": sys.argv[2]}))' "$env" "$in")"
	assert_eq "the exec had its environment and stdin" "${#env} ${#in}" "$(jf 'j["stdout"].split("\n")[0]')"
	out=$(jf 'j["stdout"].split()[-1]')
	printf %s "$file" >"$SR_TMP/up-$SR_AS"
	chmod a+r "$SR_TMP/up-$SR_AS"
	code=$(as_user curl -s -o /dev/null -w '%{http_code}' --unix-socket "$SOCK" -X PUT \
		--data-binary @"$SR_TMP/up-$SR_AS" "http://sandbox-run/v1/sandboxes/$id/files?path=up.txt")
	assert_eq "a file written" 200 "$code"
	api GET "/v1/sandboxes/$id/files?path=up.txt"
	assert_eq "and read back" "$file" "$body"
	# shellcheck disable=SC2016
	api POST "/v1/sandboxes/$id/exec" '{"argv": ["sh", "-c", "od -An -N8 -tx8 /dev/urandom | tr -d \" \" >rd.txt"]}'
	api GET "/v1/sandboxes/$id/files?path=rd.txt"
	read="$body"
	check "a file the sandbox wrote read" test -n "$read"
	api POST "/v1/sandboxes/$id/exec" "{\"argv\": [\"mkdir\", \"$name\"]}"
	api GET "/v1/sandboxes/$id/files?path=.&list=1"
	check "a listing has the name" grep -q "$name" <<<"$body"
	# A preview: a request through the relay to a server in the sandbox, and its answer.
	# shellcheck disable=SC2016
	api POST "/v1/sandboxes/$id/exec" '{"cmd": "mkdir -p /tmp/www && od -An -N8 -tx8 /dev/urandom | tr -d \" \" >/tmp/www/p.txt && cd /tmp/www && (python3 -m http.server 8000 >/dev/null 2>&1 &) && sleep 1"}'
	page=$(as_user curl -s -m 10 -H "Host: 8000-$id.localhost" -H "X-Note: $header" \
		"http://127.0.0.1:$PORT/p.txt")
	check "a preview's page read" test -n "$page"
	# envd's upload, as E2B's SDK sends it (multipart): 200 KB, the needle all through it.
	for _ in $(seq 400); do printf '%0500d%s\n' 0 "$part"; done >"$SR_TMP/part-$SR_AS"
	chmod a+r "$SR_TMP/part-$SR_AS"
	code=$(as_user curl -s -o /dev/null -w '%{http_code}' --unix-socket "$SOCK" \
		-H "E2b-Sandbox-Id: $id" -F "file=@$SR_TMP/part-$SR_AS;filename=/tmp/part.txt" \
		"http://sandbox-run/files")
	assert_eq "a multipart upload written" 200 "$code"
	printf 'env %s\nstdin %s\noutput %s\nfile %s\nread %s\nlisting %s\npreview-request %s\npreview-page %s\nmultipart %s\n' \
		"$env" "$in" "$out" "$file" "$read" "$name" "$header" "$page" "$part" >"$SR_TMP/needles"
	python3 "$SCAN" "$SR_TMP/needles" "$SERVE_PID" >"$SR_OUT/request-memory-$SR_AS"
	sed 's/^/# server: /' "$SR_OUT/request-memory-$SR_AS"
	assert_eq "the server holds none of them once answered" "$SERVE_PID -" \
		"$(cat "$SR_OUT/request-memory-$SR_AS")"
	api DELETE "/v1/sandboxes/$id"
	api DELETE "/v1/sandboxes/$e2b"
	stop_serve
}

if [ "$(id -u)" != 0 ]; then
	skip "reading another process's memory needs root"
	done_testing
	exit 0
fi
for_each_user t_warm_memory t_request_memory
done_testing
