#!/usr/bin/env bash
# Deploy and invoke (docs/deploy.md): an agent installed once in a sandbox
# that reaches the npm registry, invoked offline, with secrets that leak
# nowhere, a broken redeploy that changes nothing, rollback, an npm pack
# tarball, the package cache offline, an invocation in flight across a
# redeploy, and Python agents; as root and as an unprivileged user.
. "$(dirname "$0")/libtest.sh"

# The npm registry, asked through npm itself: an answer is a parsed
# packument with the version we ask for, not any TCP peer that accepts.
npm_reachable() {
	command -v npm >/dev/null && have_egress &&
		[ "$(timeout 60 npm view is-number@7.0.0 version 2>/dev/null)" = 7.0.0 ]
}
if npm_reachable; then NPM=yes; else NPM=""; fi

# PyPI: a TLS-verified HTTPS answer that is the simple index's page for pip.
pypi_reachable() {
	timeout 30 python3 - <<'PY' 2>/dev/null
import sys, urllib.request
with urllib.request.urlopen("https://pypi.org/simple/six/", timeout=20) as r:
    body = r.read(1 << 20).decode(errors="replace")
sys.exit(0 if r.status == 200 and "six-1." in body else 1)
PY
}

need_npm() {
	if [ -z "$NPM" ]; then
		skip "$1" "the npm registry is not reachable from here (npm view is-number), or no egress helper"
		return 1
	fi
}

data_dir() {
	if [ "$SR_AS" = user ]; then echo "$SR_TMP/data-user"; else echo "$SANDBOX_RUN_DATA_DIR"; fi
}

# node_agent DIR VERSION-OF-IS-NUMBER: a Node agent that answers with its dependency.
node_agent() {
	local d=$1
	rm -rf "$d"
	mkdir -p "$d"
	cat >"$d/package.json" <<JSON
{"name": "num-agent", "version": "1.0.0", "main": "index.js",
 "dependencies": {"is-number": "$2"},
 "scripts": {"postinstall": "hostname >built-on && id -u >>built-on"}}
JSON
	cat >"$d/index.js" <<'JS'
const isNumber = require('is-number');
let s = '';
process.stdin.on('data', (d) => (s += d)).on('end', () => {
  const p = s.trim();
  console.log(`${p}: ${isNumber(p) ? 'a number' : 'not a number'}` +
    (process.env.API_KEY ? ` key=${process.env.API_KEY}` : ''));
});
JS
	chmod -R a+rX "$d"
	own "$d"
}

t_deploy_npm() {
	local d="$SR_TMP/agents/$SR_AS-num" app
	need_npm "deploy a Node agent with an npm dependency" || return
	node_agent "$d" 7.0.0
	sr deploy --name num "$d"
	check "deploy: installs the dependency (npm install in a sandbox)" [ "$rc" = 0 ]
	assert_match "deploy: a summary" "deployed num version 1: .*1 dependency" "$errout"
	check "deploy: nothing installed on the host" [ ! -e "$d/node_modules" ] && [ ! -e "$d/built-on" ]
	app="$(data_dir)/deployments/num/versions/1/app"
	assert_eq "deploy: the install script ran inside the sandbox, as its user" \
		"$(printf 'sandbox\n1000')" "$(cat "$app/built-on" 2>/dev/null)"
	check "deploy: the version holds the package" [ -f "$app/node_modules/is-number/index.js" ]
	assert_no_match "deploy: plain lines when not a terminal" $'\r' "$errout"
	echo 42 >"$SR_TMP/prompt-$SR_AS"
	SR_STDIN="$SR_TMP/prompt-$SR_AS" sr invoke --net none num
	assert_eq "invoke --net none: answers with the dependency" "42: a number" "$out"
	echo hello >"$SR_TMP/prompt-$SR_AS"
	SR_STDIN="$SR_TMP/prompt-$SR_AS" sr invoke --result "$SR_OUT/inv-$SR_AS.json" num
	assert_eq "invoke: a second prompt, a fresh sandbox" "hello: not a number" "$out"
	assert_eq "invoke --result: the record of a run" "exited 0" \
		"$(json_get "$SR_OUT/inv-$SR_AS.json" status) $(json_get "$SR_OUT/inv-$SR_AS.json" exit_code)"
	sr deployments
	assert_match "deployments: name, version, created, size, status" \
		"num +1 +20[0-9-]+T[0-9:]+Z +[0-9]+ +1 +active" "$out"
	sr -q deploy --name num "$d"
	assert_eq "deploy -q: silent" "0:" "$rc:$errout"
}

t_cache_offline() {
	local d="$SR_TMP/agents/$SR_AS-num" lock
	need_npm "a redeploy with the same lock file needs no network" || return
	lock="$(data_dir)/deployments/num/versions/1/app/package-lock.json"
	cp "$lock" "$d/" && own "$d"
	sr deploy --name num --net none "$d"
	check "redeploy --net none, same lock file: npm ci from the package cache" [ "$rc" = 0 ]
	assert_match "redeploy: npm ci" "npm ci" "$errout"
	# The network was needed the first time: an empty cache offline fails.
	sr deploy --name num-cold --net none --install 'npm_config_cache=/tmp/empty npm_config_fetch_retries=0 npm ci' "$d"
	check "the same, with an empty cache offline: fails" [ "$rc" = 125 ]
	sr deployments rm num-cold
}

t_secrets() {
	local d="$SR_TMP/agents/$SR_AS-num" secret="s3cr3t-$SR_AS-$RANDOM$RANDOM" data
	need_npm "secrets" || return
	data=$(data_dir)
	printf '%s\n' "$secret" >"$SR_TMP/secret-$SR_AS"
	SR_STDIN="$SR_TMP/secret-$SR_AS" sr secrets set num API_KEY
	check "secrets set: value from stdin" [ "$rc" = 0 ]
	rm -f "$SR_TMP/secret-$SR_AS"
	sr secrets ls num
	assert_eq "secrets ls: names only" "API_KEY" "$out"
	check "secrets: 0600 in 0700" [ "$(stat -c %a "$data/secrets/num/API_KEY")" = 600 ] &&
		[ "$(stat -c %a "$data/secrets/num")" = 700 ] && [ "$(stat -c %a "$data/secrets")" = 700 ]
	echo 7 >"$SR_TMP/prompt-$SR_AS"
	SR_STDIN="$SR_TMP/prompt-$SR_AS" sr -v invoke --result "$SR_OUT/sec-$SR_AS.json" num
	assert_eq "invoke: the secret is an environment variable" "7: a number key=$secret" "$out"
	assert_no_match "invoke -v: no secret value in sandbox-run's messages" "$secret" "$errout"
	check "the result record holds no secret value" _fails grep -q "$secret" "$SR_OUT/sec-$SR_AS.json"
	sr invoke --print-config num
	assert_no_match "invoke --print-config: no secret" "$secret|API_KEY" "$out"
	check "nothing under the deployment (logs, config.ini, meta.json) holds the value" \
		_fails grep -rq "$secret" "$data/deployments"
	check "only the secret's own file holds it" \
		[ "$(grep -rl "$secret" "$data" | sed "s|^$data/||")" = secrets/num/API_KEY ]
	sr secrets set num API_KEY extra-value-on-the-command-line
	check "secrets set: never a value on the command line" [ "$rc" = 125 ]
	sr secrets rm num API_KEY
	SR_STDIN="$SR_TMP/prompt-$SR_AS" sr invoke num
	assert_eq "secrets rm: gone at the next invocation" "7: a number" "$out"
}

t_broken_redeploy() {
	local d="$SR_TMP/agents/$SR_AS-broken"
	need_npm "a broken redeploy" || return
	node_agent "$d" 999.999.999
	sr deploy --name num "$d"
	assert_eq "broken redeploy: status 125" 125 "$rc"
	assert_match "broken redeploy: the installer's last lines" "npm error.*(notarget|ETARGET)" "$errout"
	assert_match "broken redeploy: the active version stays" "stays the active one" "$errout"
	echo 9 >"$SR_TMP/prompt-$SR_AS"
	SR_STDIN="$SR_TMP/prompt-$SR_AS" sr invoke num
	assert_eq "the previous version still answers" "9: a number" "$out"
	sr deployments
	assert_match "deployments: the failed version" "num +[0-9]+ .* failed" "$out"
	sr deployments log num
	assert_match "deployments log: the whole install log" "notarget" "$out"
}

t_rollback() {
	local d="$SR_TMP/agents/$SR_AS-num2"
	need_npm "rollback" || return
	node_agent "$d" 7.0.0
	sed -i 's/a number/A NUMBER (v2)/' "$d/index.js"
	sr deploy -q --name num "$d"
	echo 1 >"$SR_TMP/prompt-$SR_AS"
	SR_STDIN="$SR_TMP/prompt-$SR_AS" sr invoke num
	assert_eq "redeploy: the new version answers" "1: A NUMBER (v2)" "$out"
	sr deployments rollback num
	check "deployments rollback" [ "$rc" = 0 ]
	SR_STDIN="$SR_TMP/prompt-$SR_AS" sr invoke num
	assert_eq "rollback: the previous version answers" "1: a number" "$out"
	sr deployments rollback num 999
	check "rollback to a version that is not there: 125" [ "$rc" = 125 ]
}

t_npm_pack() {
	local d="$SR_TMP/agents/$SR_AS-num" tgz="$SR_TMP/agents/$SR_AS-pack"
	need_npm "deploy an npm pack tarball" || return
	rm -rf "$tgz" && mkdir -p "$tgz"
	(cd "$d" && npm pack --silent --pack-destination "$tgz" >/dev/null)
	chmod -R a+rX "$tgz" && own "$tgz"
	sr deploy "$tgz/num-agent-1.0.0.tgz"
	assert_match "deploy an npm pack tarball (package/ entered), named after it" \
		"deployed num-agent version 1" "$errout"
	echo 5 >"$SR_TMP/prompt-$SR_AS"
	SR_STDIN="$SR_TMP/prompt-$SR_AS" sr invoke --net none num-agent
	assert_eq "invoke the tarball's deployment" "5: a number" "$out"
	sr deployments rm num-agent
	sr deployments --json
	assert_no_match "deployments rm: gone" "num-agent" "$out"
}

# An invocation in flight keeps its version through a redeploy and a prune.
t_in_flight() {
	local d fifo="$SR_TMP/fifo-$SR_AS"
	d=$(make_agent "$SR_AS-slow" 'read line; echo "v1 got $line"')
	sr deploy --net none --name slow "$d"
	check "deploy an agent with nothing to install" [ "$rc" = 0 ]
	rm -f "$fifo" && mkfifo -m 0666 "$fifo"
	(as_user_exec "$SR" invoke slow <"$fifo" >"$SR_OUT/slow-$SR_AS" 2>/dev/null) &
	exec 7>"$fifo"
	sleep 0.5
	printf '#!/bin/sh\nread line; echo "v2 got $line"\n' >"$d/agent"
	sr deploy --net none --keep 1 --name slow "$d"
	sr deploy --net none --keep 1 --name slow "$d"
	check "the version in use is not pruned" [ -d "$(data_dir)/deployments/slow/versions/1/app" ]
	echo ping >&7
	exec 7>&-
	wait $!
	assert_eq "the invocation in flight ends on its own version" "v1 got ping" \
		"$(cat "$SR_OUT/slow-$SR_AS")"
	echo pong >"$SR_TMP/prompt-$SR_AS"
	SR_STDIN="$SR_TMP/prompt-$SR_AS" sr -v invoke slow
	assert_eq "the next invocation gets the new version" "v2 got pong" "$out"
	# Its profile is the version's config.ini, which -v named twice, as the
	# profile and as where it was found: "profile P (P); agent: ...".
	assert_match "invoke -v names the version's config once" \
		"^sandbox-run: sandbox [0-9a-f]{32}: profile [^ ]*/deployments/slow/versions/[0-9]+/config\.ini; agent: a directory;" \
		"$(grep -m1 ": profile " <<<"$errout")"
	sr deploy --net none --keep 1 --name slow "$d"
	check "keep 1: the old versions go once free" [ ! -e "$(data_dir)/deployments/slow/versions/1" ]
	rm -f "$fifo"
	sr deployments rm slow
}

# Two deploys of one name at once take turns: the second waits, saying
# so, until the first's version is current, then makes the next one. Its
# version is the newer and ends current, whichever install is quicker
# (before, the slower first deploy finished last and made its older version
# current). Ctrl-C while waiting makes no version.
t_concurrent() {
	local d v pid
	d=$(make_agent "$SR_AS-twice" 'echo hi')
	v="$(data_dir)/deployments/twice/versions"
	gate_open
	in_background twice1-$SR_AS "$SR" deploy --net none --name twice "${GATE_OPTS[@]}" \
		--install 'read l </gate/fifo; echo first >who' "$d"
	until_ok 60 grep -sq "deploy twice v1: read the agent" "$SR_OUT/twice1-$SR_AS"
	in_background twice2-$SR_AS "$SR" deploy --net none --name twice --install 'echo second >who' "$d"
	until_ok 60 sh -c "grep -sq 'under way' '$SR_OUT/twice2-$SR_AS' || [ -s '$SR_OUT/twice2-$SR_AS.rc' ]"
	assert_match "a second deploy of the name meanwhile waits, saying so" \
		"sandbox-run: deploy twice: another deploy of twice is under way; waiting for it to end" \
		"$(cat "$SR_OUT/twice2-$SR_AS")"
	check "and makes no version while it waits" test ! -e "$v/2"
	gate_release
	until_ok 120 ended twice1-$SR_AS
	until_ok 120 ended twice2-$SR_AS
	wait
	gate_close
	assert_eq "both deploy" "0 0" "$(cat "$SR_OUT/twice1-$SR_AS.rc") $(cat "$SR_OUT/twice2-$SR_AS.rc")"
	assert_eq "versions numbered in the order the deploys began" "first second" \
		"$(cat "$v/1/app/who" "$v/2/app/who" 2>/dev/null | tr '\n' ' ' | sed 's/ $//')"
	assert_eq "the later deploy's version is current" versions/2 \
		"$(readlink "$(data_dir)/deployments/twice/current")"
	sr deployments
	assert_match "deployments: 1 ready, 2 active" "twice +1 .* ready.*twice +2 .* active" \
		"$(tr '\n' ' ' <<<"$out")"

	gate_open
	in_background twice3-$SR_AS "$SR" deploy --net none --name twice "${GATE_OPTS[@]}" \
		--install 'read l </gate/fifo' "$d"
	until_ok 60 grep -sEq "deploy twice v[0-9]+: read the agent" "$SR_OUT/twice3-$SR_AS"
	rm -f "$SR_OUT/twice4-$SR_AS"
	(as_user_exec "$SR" deploy --net none --name twice "$d" >"$SR_OUT/twice4-$SR_AS" 2>&1) &
	pid=$!
	until_ok 60 sh -c "grep -sq 'under way' '$SR_OUT/twice4-$SR_AS' || [ ! -e /proc/$pid ]"
	kill -INT "$pid"
	wait "$pid"
	assert_eq "Ctrl-C while waiting: 130" 130 "$?"
	assert_match "saying it stopped waiting" "deploy twice: stopped while waiting for another deploy" \
		"$(cat "$SR_OUT/twice4-$SR_AS")"
	gate_release
	until_ok 120 ended twice3-$SR_AS
	wait
	gate_close
	assert_eq "the deploy it waited for is not disturbed" 0 "$(cat "$SR_OUT/twice3-$SR_AS.rc")"
	check "no version of the stopped one" test ! -e "$v/4"
	sr deployments rm twice
}

# Earlier versions kept one package cache for all of a user's deployments,
# <data>/cache; each now has its own. The next deploy removes the old one,
# however npm left its modes, following no link, and says so once.
t_old_shared_cache() {
	local data d outside
	data=$(data_dir)
	outside="$SR_TMP/outside-$SR_AS"
	rm -rf "$outside" && mkdir -p "$outside/dir" && echo keep >"$outside/file"
	chmod -R a+rwX "$outside"
	as_user sh -c '
		c=$1/cache o=$2
		mkdir -p "$c/npm/_cacache/content-v2/sha512/ab" "$c/pip/http/ro" "$c/npm/closed/deep"
		head -c 1048576 /dev/zero >"$c/npm/_cacache/content-v2/sha512/ab/blob"
		echo x >"$c/pip/http/ro/entry"
		echo x >"$c/npm/closed/deep/entry"
		chmod 0444 "$c/pip/http/ro/entry"
		chmod 0555 "$c/pip/http/ro" "$c/pip/http"
		chmod 0000 "$c/npm/closed"
		ln -s "$o/dir" "$c/npm/link-dir"
		ln -s "$o/file" "$c/link-file"' _ "$data" "$outside"
	d=$(make_agent "$SR_AS-oldcache" 'echo hi')
	sr deploy --net none --name oldcache "$d"
	assert_eq "the next deploy works" 0 "$rc"
	assert_match "it says it removed the old shared cache" \
		"sandbox-run: removed $data/cache \(1\.0 MiB\): the package cache all deployments shared" "$errout"
	check "which is gone" test ! -e "$data/cache" -a ! -L "$data/cache"
	check "the links in it were not followed" \
		test "$(cat "$outside/file")" = keep -a -d "$outside/dir"
	sr deploy --net none --name oldcache "$d"
	assert_no_match "the deploy after says nothing of it" "removed" "$errout"
	# The old cache a link itself: the link goes, what it points to stays.
	rm -rf "$data/cache"
	as_user ln -s "$outside" "$data/cache"
	sr -q deploy --net none --name oldcache "$d"
	assert_eq "-q: removed without a word" "0:" "$rc:$errout"
	check "the link is gone, not what it pointed to" \
		test ! -L "$data/cache" -a "$(cat "$outside/file")" = keep
	sr deployments rm oldcache
}

t_python() {
	local d="$SR_TMP/agents/$SR_AS-py"
	rm -rf "$d" && mkdir -p "$d"
	printf 'import sys\nprint("py:", sys.stdin.read().strip()[::-1])\n' >"$d/main.py"
	chmod -R a+rX "$d" && own "$d"
	sr deploy --net none "$d"
	check "deploy a Python agent without requirements.txt" [ "$rc" = 0 ]
	echo abc >"$SR_TMP/prompt-$SR_AS"
	SR_STDIN="$SR_TMP/prompt-$SR_AS" sr invoke "$SR_AS-py"
	assert_eq "invoke the Python agent" "py: cba" "$out"
	sr deployments rm "$SR_AS-py"
}

t_python_requirements() {
	local d="$SR_TMP/agents/$SR_AS-pyreq"
	if ! have_egress || ! pypi_reachable; then
		skip "deploy a Python agent with requirements.txt" \
			"PyPI is not reachable from here (no verified HTTPS answer from pypi.org/simple/)"
		return
	fi
	rm -rf "$d" && mkdir -p "$d"
	echo 'six==1.16.0' >"$d/requirements.txt"
	printf 'import six, sys\nprint("six", six.__version__, sys.stdin.read().strip())\n' >"$d/main.py"
	chmod -R a+rX "$d" && own "$d"
	sr deploy --name pyreq "$d"
	check "deploy with requirements.txt: pip install --target in a sandbox" [ "$rc" = 0 ]
	echo x >"$SR_TMP/prompt-$SR_AS"
	SR_STDIN="$SR_TMP/prompt-$SR_AS" sr invoke --net none pyreq
	assert_eq "invoke: the package from requirements.txt" "six 1.16.0 x" "$out"
	sr deployments rm pyreq
}

t_refusals() {
	local d
	d=$(make_agent "$SR_AS-refuse" 'echo hi')
	sr deploy --name ../x "$d"
	assert_match "deploy --name ../x: refused" "bad name" "$errout"
	sr invoke nosuch
	assert_eq "invoke an unknown deployment: 125" 125 "$rc"
	assert_match "invoke an unknown deployment: says so" "no deployment 'nosuch'" "$errout"
	sr invoke ../../etc
	assert_match "invoke ../../etc: refused" "bad deployment name" "$errout"
	sr secrets set ../x KEY
	assert_match "secrets for ../x: refused" "bad deployment name" "$errout"
	sr deploy "$SR_TMP/nonexistent"
	assert_eq "deploy a missing agent: 125, saying it is not found, as a run does" \
		"125 sandbox-run: deploy: agent '$SR_TMP/nonexistent' not found (deploy takes a directory or an archive)" \
		"$rc $errout"
	rm -rf "$SR_TMP/agents/$SR_AS-noentry" && mkdir -p "$SR_TMP/agents/$SR_AS-noentry"
	echo data >"$SR_TMP/agents/$SR_AS-noentry/README"
	chmod -R a+rX "$SR_TMP/agents/$SR_AS-noentry" && own "$SR_TMP/agents/$SR_AS-noentry"
	sr deploy --net none "$SR_TMP/agents/$SR_AS-noentry"
	assert_match "deploy without an entry point: fails at deploy, saying what was looked for" \
		"no entry point|not found" "$errout"
	sr deployments log "$SR_AS-noentry"
	assert_match "and its install log, where the message points, says why (it was empty)" \
		"version 1 failed: .*no entry point in" "$out"
	check "deployment directories are 0700" \
		[ "$(stat -c %a "$(data_dir)/deployments")" = 700 ]
	sr deployments rm "$SR_AS-noentry" "$SR_AS-refuse"
}

# deploy and invoke take one word and pass nothing on: options after it are theirs.
t_options_after() {
	local d
	d=$(make_agent "$SR_AS-after" 'cat; echo " net=$(cat /proc/net/dev | grep -c :)"')
	sr deploy "$d" --name after --net none -q
	assert_eq "deploy AGENT --name N --net none -q: the options are deploy's" "0:" "$rc:$errout"
	echo hi >"$SR_TMP/after-$SR_AS"
	SR_STDIN="$SR_TMP/after-$SR_AS" sr invoke after --env X=1 --result "$SR_OUT/after-$SR_AS.json"
	assert_eq "invoke NAME --result FILE: the options are invoke's" "0 hi net=1 exited" \
		"$rc $(echo $out) $(json_get "$SR_OUT/after-$SR_AS.json" status 2>/dev/null)"
	sr invoke after --memroy 1G
	assert_eq "a misspelt option after NAME: named, with the suggestion" \
		"125 sandbox-run: invoke: unknown option '--memroy' (did you mean '--memory'?)" "$rc $errout"
	sr invoke after hello
	assert_match "a word after NAME is still refused: the prompt is on stdin" \
		"takes one NAME \('hello' follows it\): the prompt comes on standard input" "$errout"
	sr deployments rm after
}

# A data directory another user made first is not used.
t_foreign_data_dir() {
	local foreign="$SR_TMP/foreign-data" d
	[ "$SR_AS" = root ] || return 0
	_ensure_test_user || return 0
	mkdir -p "$foreign" && chown "$SR_TEST_USER" "$foreign" && chmod 0700 "$foreign"
	d=$(make_agent "foreign" 'echo hi')
	SANDBOX_RUN_DATA_DIR="$foreign" sr deploy --net none "$d"
	assert_match "deploy refuses a data directory of another user" "belongs to uid" "$errout"
}

# On a terminal: one live status line, then the summary.
t_terminal() {
	local d
	command -v python3 >/dev/null || return 0
	d=$(make_agent "$SR_AS-tty" 'echo hi')
	as_user python3 "$PTY_RUN" -- "$SR" deploy --net none --install 'echo step-one; sleep 0.3; echo step-two' --name tty "$d" >"$SR_OUT/tty-$SR_AS" 2>&1
	out=$(cat "$SR_OUT/tty-$SR_AS")
	assert_match "on a terminal: a live line redrawn in place, with the installer's last line" \
		$'\r\e\\[Ktty v1: echo step-one; sleep 0.3; echo step-two [0-9.]+s  step-two' "$out"
	assert_match "on a terminal: the summary" "deployed tty version 1" "$out"
	sr deployments rm tty "$SR_AS-tty"
}

# A deployment none of whose deploys has finished has no current version:
# rollback says that, not "no ready version older than 0".
t_rollback_none() {
	local d
	d=$(make_agent "never-$SR_AS" 'echo hi')
	sr deploy --name never --net none --install 'echo failing; exit 3' "$d"
	assert_eq "a first deploy whose install fails: 125" 125 "$rc"
	sr deployments rollback never
	assert_eq "rollback of it: 125, saying there is nothing current" \
		"125 sandbox-run: deployments rollback: deployment 'never' has no current version to roll back from (no deploy of it has finished; sandbox-run deployments lists them)" \
		"$rc $errout"
	sr secrets ls never
	assert_eq "secrets ls of it: a deployment (deployments lists it), no secrets" "0 |" \
		"$rc $out|$errout"
	sr deployments rm never
	# Secrets of a name never deployed: the last one removed takes its directory along.
	echo v >"$SR_TMP/ghost-$SR_AS"
	SR_STDIN="$SR_TMP/ghost-$SR_AS" sr secrets set ghost KEY
	sr secrets rm ghost KEY
	assert_eq "secrets rm of a never-deployed name's last key: nothing left of it" \
		"0 no" "$rc $([ -e "$(data_dir)/secrets/ghost" ] && echo yes || echo no)"
}

# `secrets ls` of a name neither deployed nor given a secret (a typo) listed nothing and exited
# 0, as for a deployment with no secrets.
t_secrets_ls_unknown() {
	local d msg="no deployment 'bear' and no secrets set for it (sandbox-run deployments lists them)"
	d=$(make_agent "bare-$SR_AS" 'echo hi')
	sr deploy -q --name bare --net none "$d"
	sr secrets ls bare
	assert_eq "secrets ls of a deployment with no secrets: nothing, 0" "0 |" "$rc $out|$errout"
	sr secrets ls bare --json
	assert_eq "and --json: []" "0 []" "$rc $out"
	sr secrets ls bear
	assert_eq "secrets ls of a name of neither: 125, saying so" \
		"125 |sandbox-run: secrets ls: $msg" "$rc $out|$errout"
	sr secrets ls bear --json
	assert_eq "and --json: alike, nothing on stdout" "125 |sandbox-run: secrets ls: $msg" \
		"$rc $out|$errout"
	echo v >"$SR_TMP/early-$SR_AS"
	SR_STDIN="$SR_TMP/early-$SR_AS" sr secrets set early KEY
	sr secrets ls early
	assert_eq "a secret set before the name's first deploy: listed" "0 KEY" "$rc $out"
	sr secrets rm early KEY
	sr deployments rm bare
	sr secrets ls bare
	assert_eq "a deployment removed: unknown again" 125 "$rc"
}

t_invoke_terminal() {
	# invoke on a terminal, the prompt not piped: the agent waited for it
	# in silence, as if hung. Now a line says where the prompt is read
	# from; with stdin no terminal, nothing is said.
	local d
	d=$(make_agent "typed-$SR_AS" 'read p; echo "got: $p"')
	sr deploy -q --name typed --net none "$d"
	out=$(as_user python3 "$PTY_RUN" 'text:^D' 'send:hello\n\x04' -- "$SR" invoke --net none typed 2>&1 |
		tr -d '\r')
	# (The terminal's echo of what was typed, ours and the sandbox's, varies with timing.)
	assert_eq "invoke on a terminal: said where the prompt comes from first, then the answer" \
		"$(printf '%s\n' 0 "sandbox-run: invoke typed: the prompt is read from this terminal: type it, then ^D at the start of a line (or pipe it: echo PROMPT | sandbox-run invoke typed)" 1)" \
		"$(sed -n 1,2p <<<"$out"; grep -c 'got: hello$' <<<"$out")"
	SR_STDIN="$d/agent" sr invoke --net none typed
	assert_no_match "with stdin no terminal: not said" "prompt is read" "$errout"
	sr deployments rm typed
}

t_rm_named_twice() {
	# `deployments rm a a` removed a, then said "no deployment 'a'" (125).
	local d
	d=$(make_agent "twice-$SR_AS" 'echo hi')
	sr deploy -q --name twice --net none "$d"
	sr deployments rm twice twice
	assert_eq "deployments rm of one named twice: 0, not a word" "0 " "$rc $errout"
	sr deployments
	assert_no_match "and it is gone" "^twice " "$out"
}

# An install step that leaves a file unreadable to its owner (chmod 0),
# or a directory unreadable or unsearchable: the sandbox's tar worker, the
# same user, could not copy it out, and the deploy failed ("archive
# workspace/a: Permission denied"). It reads them all the same, and the
# version has the modes the step left.
t_install_unreadable() {
	local d
	d=$(make_agent "$SR_AS-unreadable" 'stat -c "%a %s %n" a d/f')
	sr deploy -q --name unreadable --net none \
		--install 'echo x >a; chmod 0 a; mkdir d; echo yy >d/f; chmod 0 d/f; chmod 300 d' "$d"
	assert_eq "an install leaving a file mode 0 and a directory 0300: deployed" "0 " "$rc $errout"
	sr invoke --net none unreadable </dev/null
	assert_eq "their modes and sizes as the step left them" "0 2 a
0 3 d/f" "$out"
	sr deployments rm unreadable
}

# A file of the agent's that is another user's, unreadable to others (a
# root caller deploying a user's directory): nobody's in the sandbox,
# which cannot read it. The deploy fails, and says why: it said the
# install step had left it unreadable, which no step had done.
t_agent_others_file() {
	[ "$SR_AS" = root ] || return 0
	local d
	d=$(make_agent "$SR_AS-others" 'cat priv')
	echo private >"$d/priv"
	chown "$SR_TEST_USER:" "$d/priv"
	chmod 600 "$d/priv"
	sr deploy -q --name others --net none --install true "$d"
	assert_eq "an agent file of another user's, 0600: refused, 125" 125 "$rc"
	assert_match "and says whose it is and what to do" \
		"priv: Permission denied \(not the caller's, and unreadable to others.*readable to all\)" "$errout"
	sr deployments rm others
}

# A zip keeps its entries' modes and symlinks in its central directory, at
# its end: deploy read its archive from the front since ^C could stop it,
# and its agent came out not executable, its symlink a file.
t_deploy_zip() {
	local z="$SR_TMP/agents/zipped-$SR_AS.zip"
	mkdir -p "$SR_TMP/agents"
	python3 - "$z" <<'PY'
import sys, zipfile
with zipfile.ZipFile(sys.argv[1], "w") as z:
    for name, mode, data in (("agent", 0o100755, "#!/bin/sh\ncat link\n"),
                             ("data.txt", 0o100644, "zipped\n"), ("link", 0o120777, "data.txt")):
        i = zipfile.ZipInfo(name)
        i.create_system, i.external_attr = 3, mode << 16
        z.writestr(i, data)
PY
	own "$z"
	sr deploy -q --name zipped --net none "$z"
	assert_eq "deploy a zip: its agent executable" "0 " "$rc $errout"
	sr invoke --net none zipped
	assert_eq "and its symlink a symlink" "0 zipped" "$rc $out"
	sr deployments rm zipped
}

for_each_user t_install_unreadable t_agent_others_file t_deploy_npm t_cache_offline t_secrets t_broken_redeploy t_rollback t_npm_pack \
	t_in_flight t_concurrent t_old_shared_cache t_python t_python_requirements t_refusals t_options_after t_foreign_data_dir t_terminal t_rollback_none t_rm_named_twice t_invoke_terminal \
	t_secrets_ls_unknown t_deploy_zip
done_testing
