#!/usr/bin/env bash
# Warm invocations (serve --warm N; docs/deploy.md "Warm"): invoke through
# a running server answers as a cold invoke does, a secret reaches the
# agent and nothing else, nothing of one request is seen by the next, a
# redeploy switches versions at once while an invocation under way
# finishes on its own, and with no server invoke starts cold. As root and
# as an unprivileged user, each round with its own server, state and data.
. "$(dirname "$0")/libtest.sh"

data_dir() {
	if [ "$SR_AS" = user ]; then echo "$SR_TMP/data-user"; else echo "$SANDBOX_RUN_DATA_DIR"; fi
}

# start_serve ARGS...: the round's user's server on its default socket (what invoke finds).
start_serve() {
	local out="$SR_OUT/serve-$SR_AS.out"
	rm -f "$out"
	(as_user_exec "$SR" -v serve "$@" >"$out" 2>"$SR_OUT/serve-$SR_AS.err") &
	SERVE_PID=$!
	until_ok 10 test -s "$out" || {
		not_ok "serve started"
		cat "$SR_OUT/serve-$SR_AS.err"
		return 1
	}
}

stop_serve() {
	kill -TERM "$SERVE_PID" 2>/dev/null
	wait "$SERVE_PID" 2>/dev/null
}

# pool_ready NAME N: the server holds N warm sandboxes of deployment NAME.
pool_ready() {
	local j
	j=$(as_user curl -s --unix-socket "$(state_dir)/serve.sock" http://sr/v1/pools) || return 1
	python3 -c 'import json,sys
j=json.loads(sys.argv[1])
sys.exit(0 if any(p["deployment"]==sys.argv[2] and not p["options"] and p["ready"]>=int(sys.argv[3]) for p in j["deployments"]) else 1)' "$j" "$1" "$2" 2>/dev/null
}

# The agent: what it answers depends on the prompt (one word).
make_agent() {
	local d=$1 version=$2
	rm -rf "$d"
	mkdir -p "$d"
	echo "$version" >"$d/VERSION"
	# What the process request 1 leaves is called on the host: this test's
	# alone (another's `sleep 300` failed it once).
	echo "$$" >"$d/MARK"
	cat >"$d/agent" <<'SH'
#!/bin/sh
p=$(cat)
case "$p" in
dep) cat /workspace/lib/dep.txt ;;
net) awk -F: 'NR > 2 { gsub(/ /, "", $1); print $1 }' /proc/net/dev | sort | tr '\n' ' '; echo ;;
secret) printf %s "$TOKEN" | sha256sum | cut -c1-16 ;;
leave)
	echo left >/tmp/left
	echo left >/workspace/left
	echo 'export LEFT=1' >>"$HOME/.profile"
	ipcmk -Q >/dev/null 2>&1
	setsid sleep "300.$(cat /workspace/MARK)" </dev/null >/dev/null 2>&1 &
	echo "left pid $$" ;;
look)
	[ -f "$HOME/.profile" ] && . "$HOME/.profile"
	found=""
	for f in /tmp/left /workspace/left "$HOME/left"; do [ -e "$f" ] && found="$found $f"; done
	pgrep -x sleep >/dev/null && found="$found sleep"
	[ "$(ipcs -q 2>/dev/null | grep -c '^0x')" = 0 ] || found="$found msgqueue"
	echo "pid $$ LEFT=${LEFT:-unset} found:${found:- nothing}" ;;
slow) sleep 2; cat /workspace/VERSION ;;
fail) echo "to stderr" >&2; exit 3 ;;
hang) sleep 30 ;;
*) cat /workspace/VERSION ;;
esac
SH
	chmod -R a+rX "$d"
	chmod a+x "$d/agent"
	own "$d"
}

# invoke PROMPT ARGS...: sandbox-run invoke ARGS with PROMPT on stdin ($rc, $out, $errout).
invoke() {
	local p="$SR_TMP/prompt-$SR_AS"
	printf '%s\n' "$1" >"$p"
	chmod a+r "$p"
	shift
	SR_STDIN="$p" sr invoke "$@"
}

t_like_cold() {
	local d="$SR_TMP/agents/$SR_AS-w" cold_rec="$SR_OUT/cold-$SR_AS.json" warm_rec="$SR_OUT/warm-$SR_AS.json"
	local cold_out cold_err
	make_agent "$d" v1
	sr -q deploy --name w --install 'mkdir -p lib && echo dep-1 >lib/dep.txt' "$d"
	check "deploy" [ "$rc" = 0 ]
	invoke dep -v w
	assert_eq "cold: the dependency the install step made" "dep-1" "$out"
	assert_match "cold: -v says why (no server)" "no server on .*: a cold start" "$errout"
	invoke fail --result "$cold_rec" w
	# The host's warnings (a limit it cannot enforce) are the server's to log for a warm one.
	cold_out=$out cold_err=$(grep -v '^sandbox-run: warning: ' <<<"$errout")
	assert_eq "cold: exit 3" 3 "$rc"
	start_serve --warm 2 || return
	until_ok 20 pool_ready w 2
	check "serve --warm 2: two warm sandboxes of the deployment" pool_ready w 2
	invoke dep -v w
	assert_eq "warm: the dependency" "dep-1" "$out"
	assert_match "warm: -v says it was warm" "warm sandbox [0-9a-f]+ of the server" "$errout"
	invoke fail --result "$warm_rec" w
	assert_eq "warm: the exit status of cold" 3 "$rc"
	assert_eq "warm: the same stdout and stderr" "$cold_out|$cold_err" "$out|$errout"
	assert_eq "warm: the record's status and exit code" \
		"$(json_get "$cold_rec" status) $(json_get "$cold_rec" exit_code)" \
		"$(json_get "$warm_rec" status) $(json_get "$warm_rec" exit_code)"
	assert_eq "warm: the record has the keys of cold's" \
		"$(python3 -c 'import json,sys; print(sorted(json.load(open(sys.argv[1]))))' "$cold_rec")" \
		"$(python3 -c 'import json,sys; print(sorted(json.load(open(sys.argv[1]))))' "$warm_rec")"
	invoke net -v --net none w
	assert_eq "warm --net none: only a loopback" "lo " "$out"
	assert_match "warm --net none: warm too (a pool of its own)" "warm sandbox" "$errout"
	invoke hang --timeout 1 w
	assert_eq "warm --timeout 1: 124, as cold" 124 "$rc"
	invoke dep --env-file /dev/null -v w
	assert_match "an option naming the caller's files: cold" "is the caller's to apply: a cold start" "$errout"
	stop_serve
}

t_secret() {
	local d="$SR_TMP/agents/$SR_AS-s" value="s3cr3t-$RANDOM-$RANDOM" rec="$SR_OUT/sec-$SR_AS.json" hdr="$SR_OUT/hdr-$SR_AS"
	make_agent "$d" v1
	sr -q deploy --name s "$d"
	printf %s "$value" >"$SR_TMP/secret-$SR_AS"
	chmod a+r "$SR_TMP/secret-$SR_AS"
	SR_STDIN="$SR_TMP/secret-$SR_AS" sr secrets set s TOKEN
	start_serve --warm 1 || return
	until_ok 20 pool_ready s 1
	invoke secret -v --result "$rec" s
	assert_eq "warm: the secret reaches the agent" \
		"$(printf %s "$value" | sha256sum | cut -c1-16)" "$out"
	assert_match "warm: it was warm" "warm sandbox" "$errout"
	as_user curl -s -D "$hdr" -o /dev/null --unix-socket "$(state_dir)/serve.sock" \
		-X POST --data-binary secret http://sr/v1/deployments/s/invoke
	check "API: answered with headers" grep -q '^Sandbox-Run-Exit-Code: 0' "$hdr"
	check "the secret is in no header" _fails grep -qF "$value" "$hdr"
	check "nor in the record" _fails grep -qF "$value" "$rec"
	check "nor in serve -v's output" _fails grep -qF "$value" "$SR_OUT/serve-$SR_AS.out" "$SR_OUT/serve-$SR_AS.err"
	check "nor in the keepers' logs and state" _fails grep -rqF "$value" "$(state_dir)"
	check "nor in the deployment's logs" _fails grep -rqF "$value" "$(data_dir)/deployments"
	# One passed with the request (--env): its pool lists the name, not the value.
	as_user curl -s -o /dev/null --unix-socket "$(state_dir)/serve.sock" -X POST --data-binary secret \
		"http://sr/v1/deployments/s/invoke?arg=--env&arg=KEY=$value&arg=--env=KEY2=$value"
	as_user curl -s -o "$SR_OUT/pools-$SR_AS" --unix-socket "$(state_dir)/serve.sock" http://sr/v1/pools
	check "/v1/pools: an --env value given with a request is not shown" \
		_fails grep -qF "$value" "$SR_OUT/pools-$SR_AS"
	check "/v1/pools: its name is" grep -qF '"KEY=(hidden)","--env=KEY2=(hidden)"' "$SR_OUT/pools-$SR_AS"
	# The pattern from a file: grep's own command line must not hold it.
	check "nor on a command line" _fails grep -qFf "$SR_TMP/secret-$SR_AS" /proc/[0-9]*/cmdline 2>/dev/null
	# secrets set: the next request sees the new value (its pool is made again).
	printf %s "$value-2" >"$SR_TMP/secret-$SR_AS"
	SR_STDIN="$SR_TMP/secret-$SR_AS" sr secrets set s TOKEN
	invoke secret -v s
	assert_eq "secrets set: the next invocation has the new value" \
		"$(printf %s "$value-2" | sha256sum | cut -c1-16)" "$out"
	# Another within the same tick of the kernel's clock leaves the
	# secrets directory's mtime as it was (here put back): the pool, made
	# again for value-2 and knowing a change by that mtime, kept serving it.
	touch -r "$(data_dir)/secrets/s" "$SR_TMP/mtime-$SR_AS"
	printf %s "$value-3" >"$SR_TMP/secret-$SR_AS"
	SR_STDIN="$SR_TMP/secret-$SR_AS" sr secrets set s TOKEN
	touch -m -r "$SR_TMP/mtime-$SR_AS" "$(data_dir)/secrets/s"
	invoke secret -v s
	assert_eq "a set within the same mtime as the pool's: the next invocation has its value" \
		"$(printf %s "$value-3" | sha256sum | cut -c1-16)" "$out"
	# So with a removal that leaves another secret (and the directory).
	SR_STDIN="$SR_TMP/secret-$SR_AS" sr secrets set s OTHER
	invoke secret s
	touch -r "$(data_dir)/secrets/s" "$SR_TMP/mtime-$SR_AS"
	sr secrets rm s TOKEN
	touch -m -r "$SR_TMP/mtime-$SR_AS" "$(data_dir)/secrets/s"
	invoke secret s
	assert_eq "a removal within the same mtime: the next invocation is without it" \
		"$(printf '' | sha256sum | cut -c1-16)" "$out"
	rm -f "$SR_TMP/mtime-$SR_AS"
	stop_serve
}

t_nothing_passes() {
	local d="$SR_TMP/agents/$SR_AS-n" first
	make_agent "$d" v1
	sr -q deploy --name n "$d"
	start_serve --warm 2 || return
	until_ok 20 pool_ready n 2
	invoke leave -v n
	first=$(grep -o 'warm sandbox [0-9a-f]*' <<<"$errout")
	assert_eq "request 1 leaves files, a process, a message queue, a profile" "left pid 2" "$out"
	check "the process it left is gone with its sandbox" until_gone 5 pgrep -f "^sleep 300\.$$\$"
	invoke look -v n
	assert_eq "request 2: a fresh PID namespace, nothing of request 1" \
		"pid 2 LEFT=unset found: nothing" "$out"
	assert_match "request 2: warm, another sandbox" "warm sandbox" "$errout"
	assert_no_match "request 2: not request 1's sandbox" "$first\$" "$errout"
	stop_serve
}

t_redeploy() {
	local d="$SR_TMP/agents/$SR_AS-r" slow_out="$SR_OUT/slow-$SR_AS" slow
	make_agent "$d" v1
	sr -q deploy --name r "$d"
	start_serve --warm 2 || return
	until_ok 20 pool_ready r 2
	invoke version r
	assert_eq "version 1 answers" v1 "$out"
	printf 'slow\n' >"$SR_TMP/slow-$SR_AS"
	chmod a+r "$SR_TMP/slow-$SR_AS"
	(as_user "$SR" invoke r <"$SR_TMP/slow-$SR_AS" >"$slow_out" 2>&1) &
	slow=$!
	sleep 0.5
	make_agent "$d" v2
	sr -q deploy --name r "$d"
	check "redeploy while an invocation runs" [ "$rc" = 0 ]
	invoke version -v r
	assert_eq "the next invocation: version 2 at once" v2 "$out"
	invoke version r
	assert_eq "and the one after" v2 "$out"
	wait "$slow"
	assert_eq "the invocation under way finished on version 1" v1 "$(cat "$slow_out")"
	until_ok 20 pool_ready r 2
	check "the pool is of version 2 again" pool_ready r 2
	sr deployments rollback r
	invoke version r
	assert_eq "rollback: version 1 at once" v1 "$out"
	stop_serve
}

has_warm() {
	as_user "$SR" ls 2>/dev/null | grep -q ' warm '
}

t_server_down() {
	local d="$SR_TMP/agents/$SR_AS-f"
	make_agent "$d" v1
	sr -q deploy --name f "$d"
	start_serve --warm 1 || return
	until_ok 20 pool_ready f 1
	kill -KILL "$SERVE_PID"
	wait "$SERVE_PID" 2>/dev/null
	check "serve killed: its warm sandbox goes with it" until_gone 10 has_warm
	invoke version -v f
	assert_eq "server down: invoke answers, cold" v1 "$out"
	assert_match "server down: -v says so" "no server on .*: a cold start" "$errout"
}

# An entry that cannot be exec'd fails warm as it fails cold: the parked
# process's exec is the one that fails there, after its prompt came.
# 126 for a file whose #! interpreter the sandbox lacks, 127 for a
# command not found, each with the same line.
t_exec_fails() {
	local d="$SR_TMP/agents/$SR_AS-x" name cold_err
	rm -rf "$d"
	mkdir -p "$d"
	printf '#!/nonexistent/interp\necho hi\n' >"$d/agent"
	chmod -R a+rX "$d"
	chmod a+x "$d/agent"
	own "$d"
	sr -q deploy --name x126 "$d"
	sr -q deploy --name x127 --entry nosuchcmd "$d"
	for name in x126 x127; do
		invoke hi "$name"
		# The host's warnings (a limit it cannot enforce) are the server's to log for a warm one.
		cold_err=$(grep -v '^sandbox-run: warning: ' <<<"$errout")
		assert_eq "$name cold: exit ${name#x}" "${name#x}" "$rc"
	done
	start_serve --warm 1 || return
	until_ok 20 pool_ready x126 1
	until_ok 20 pool_ready x127 1
	for name in x126 x127; do
		invoke hi -v "$name"
		assert_eq "$name warm: exit ${name#x}" "${name#x}" "$rc"
		assert_match "$name warm: warm" "warm sandbox [0-9a-f]+ of the server" "$errout"
	done
	invoke hi x126
	assert_eq "x126 warm: the line cold says" \
		"sandbox-run: /workspace/agent: No such file or directory (its #! interpreter, or the loader it names, is not in the sandbox)" "$errout"
	invoke hi x127
	assert_eq "x127 warm: the line cold says" "$cold_err" "$errout"
	stop_serve
}

# running_of: the id of the round's one running sandbox, if any.
running_of() {
	as_user "$SR" ls --json 2>/dev/null | python3 -c 'import json,sys
print(" ".join(e["id"] for e in json.load(sys.stdin) if e["state"] == "running"))'
}

has_running() {
	[ -n "$(running_of)" ]
}

t_profile_shown() {
	# ls and inspect said a deployment's sandbox's profile as the path of
	# its version's config.ini, deep in the data directory; ls now says
	# deployment:NAME@N, ls --json and inspect "deployment": {"name",
	# "version"} beside that path.
	local d="$SR_TMP/agents/$SR_AS-p" slow_out="$SR_OUT/pslow-$SR_AS" slow id=""
	local conf
	make_agent "$d" v1
	sr -q deploy --name p "$d"
	conf="$(data_dir)/deployments/p/versions/1/config.ini"
	start_serve --warm 1 || return
	until_ok 20 pool_ready p 1
	sr ls
	assert_match "ls: a warm sandbox of deployment p's version 1, so named" \
		"^[0-9a-f]{12} +- +warm .* deployment:p@1$" "$(grep -m1 ' deployment:p@1$' <<<"$out")"
	printf 'slow\n' >"$SR_TMP/pslow-$SR_AS"
	chmod a+r "$SR_TMP/pslow-$SR_AS"
	(as_user "$SR" invoke p <"$SR_TMP/pslow-$SR_AS" >"$slow_out" 2>&1) &
	slow=$!
	until_ok 10 has_running
	id=$(running_of)
	sr ls --json
	assert_eq "ls --json: the one taken, its deployment beside its profile's path" \
		"{'name': 'p', 'version': 1} $conf" \
		"$(python3 -c 'import json,sys
e=[e for e in json.load(sys.stdin) if e["id"] == sys.argv[1]][0]
print(e["deployment"], e["profile"])' "$id" <<<"$out")"
	sr inspect "$id"
	assert_eq "inspect: the same" "{'name': 'p', 'version': 1} $conf" \
		"$(python3 -c 'import json,sys; j=json.load(sys.stdin); print(j["deployment"], j["profile"])' <<<"$out")"
	sr ls
	assert_match "ls: the taken one too" "^${id:0:12} +- +running .* deployment:p@1$" "$(grep "^${id:0:12}" <<<"$out")"
	wait "$slow"
	assert_eq "the invocation answered" v1 "$(cat "$slow_out")"
	stop_serve
}

t_deployment_written() {
	# ls took a sandbox's deployment from where its profile lay: one made
	# with --profile on a deployment's config.ini (no app, no secrets: a
	# plain sandbox) was shown as deployment:q@1, and a server's warm one
	# as that file's path when ls had another data directory than the
	# server. Its keeper now says it, from what made it.
	local d="$SR_TMP/agents/$SR_AS-q" other="$SR_TMP/data-other-$SR_AS" conf id
	make_agent "$d" v1
	sr -q deploy --name q "$d"
	conf="$(data_dir)/deployments/q/versions/1/config.ini"
	sr create --profile "$conf"
	id=$out
	check "create --profile on a deployment's config.ini" [ "$rc" = 0 ]
	sr ls
	assert_eq "ls: that sandbox's profile is the file, not the deployment" "$conf" \
		"$(grep "^${id:0:12} " <<<"$out" | sed 's/.*  //')"
	sr ls --json
	assert_eq "ls --json: no deployment" "None $conf" "$(python3 -c 'import json,sys
e=[e for e in json.load(sys.stdin) if e["id"] == sys.argv[1]][0]
print(e["deployment"], e["profile"])' "$id" <<<"$out")"
	sr inspect "$id"
	assert_eq "inspect: no deployment" "None" \
		"$(python3 -c 'import json,sys; print(json.load(sys.stdin)["deployment"])' <<<"$out")"
	sr rm -f "$id"
	start_serve --warm 1 || return
	until_ok 20 pool_ready q 1
	mkdir -p "$other"
	chmod 0700 "$other"
	own "$other"
	out=$(as_user env SANDBOX_RUN_DATA_DIR="$other" "$SR" ls 2>&1)
	assert_match "ls with another data directory: the warm sandbox is deployment q's" \
		"^[0-9a-f]{12} +- +warm .* deployment:q@1$" "$(grep -m1 ' deployment:q@1$' <<<"$out")"
	stop_serve
	rm -rf "$other"
}

for_each_user t_like_cold t_secret t_nothing_passes t_redeploy t_server_down t_exec_fails t_profile_shown t_deployment_written
done_testing
