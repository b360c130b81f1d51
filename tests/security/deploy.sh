#!/usr/bin/env bash
# Deployments against a hostile agent (the outside review of deploy,
# invoke and secrets): the code deployed, its install scripts and what
# they print are the attacker's; another deployment of the same user, with
# its own secrets, is the target. As root and as an unprivileged user.
. "$(dirname "$0")/../integration/libtest.sh"
. "$(dirname "$0")/../integration/libserve.sh"

data_dir() {
	if [ "$SR_AS" = user ]; then echo "$SR_TMP/data-user"; else echo "$SANDBOX_RUN_DATA_DIR"; fi
}

# An install script of one deployment (a malicious package's postinstall)
# writes into the package cache; another deployment's install takes it
# from there (npm install without a lock file, pip's HTTP and wheel
# caches trust what they find), and that deployment's invocations run it
# with their own secrets. Each deployment has a cache of its own.
t_cache_per_deployment() {
	local d
	d=$(make_agent "cache-$SR_AS" 'echo hi')
	sr deploy --name evil --net none \
		--install 'mkdir -p /home/user/.cache/pip && echo POISON >/home/user/.cache/pip/planted' "$d"
	assert_eq "the attacker's deploy works" 0 "$rc"
	sr deploy --name victim --net none \
		--install 'cat /home/user/.cache/pip/planted 2>/dev/null >found; true' "$d"
	assert_eq "the victim's deploy works" 0 "$rc"
	assert_eq "the victim's install does not see what another deployment's install cached" "" \
		"$(cat "$(data_dir)/deployments/victim/versions/1/app/found" 2>/dev/null)"
	sr deploy --name evil --net none \
		--install 'cat /home/user/.cache/pip/planted >found' "$d"
	assert_eq "a redeploy of the same deployment finds its own cache" POISON \
		"$(cat "$(data_dir)/deployments/evil/versions/2/app/found" 2>/dev/null)"
	sr deployments rm evil victim
	check "deployments rm takes the deployment's cache along" \
		test ! -e "$(data_dir)/deployments/evil"
}

# What an install step prints is the attacker's; deploy shows it on the
# deployer's terminal (-v: every line; a failure: the last lines). Escape
# sequences there would retitle the terminal, set the clipboard (OSC 52)
# or forge the lines above: they are shown as '?', the log keeps them.
t_install_output_escapes() {
	local d
	d=$(make_agent "esc-$SR_AS" 'echo hi')
	sr deploy -v --name esc --net none \
		--install "printf 'a\\033]52;c;cm0gLXJmIH4K\\007b\\233Kc\\n'" "$d"
	assert_eq "deploy -v works" 0 "$rc"
	assert_match "-v: the line is shown" 'a\?\]52;c;cm0gLXJmIH4K\?b\?Kc' "$errout"
	check "-v: no escape character reaches the terminal" \
		sh -c '! printf %s "$1" | LC_ALL=C grep -q "[[:cntrl:]]" -' _ "$(tr -d '\n' <<<"$errout")"
	sr deploy --name esc --net none \
		--install "printf '\\033]0;owned\\007x\\r\\033[2Ksandbox-run: deployed\\n'; exit 3" "$d"
	assert_eq "a failing install: 125" 125 "$rc"
	assert_match "its last lines are shown" '\?\]0;owned\?x\?\?\[2Ksandbox-run: deployed' "$errout"
	check "no escape character, no carriage return reaches the terminal" \
		sh -c '! printf %s "$1" | LC_ALL=C grep -q "[[:cntrl:]]" -' _ "$(tr -d '\n' <<<"$errout")"
	assert_match "the log keeps the bytes" $'\e\\]0;owned' \
		"$(cat "$(data_dir)/deployments/esc/versions/2/install.log")"
	sr deployments log esc 2
	assert_match "deployments log, redirected: the log's bytes" $'\e\\]0;owned' "$out"
	local shown
	shown=$(as_user script -qec "$SR deployments log esc 2" /dev/null </dev/null | tr -d '\r')
	assert_match "deployments log on a terminal: the lines" '\?\]0;owned\?x\?\?\[2Ksandbox-run: deployed' "$shown"
	check "deployments log on a terminal: no escape character" \
		sh -c '! printf %s "$1" | LC_ALL=C grep -q "[[:cntrl:]]" -' _ "$(tr -d '\n' <<<"$shown")"
	sr deployments rm esc
}

# no_core PID: the process dumps no core (soft and hard RLIMIT_CORE 1: 0
# would not stop a pipe core_pattern, tests/vm/coredump.sh).
no_core() {
	[ "$(awk '/^Max core file size/ {print $5 " " $6}' "/proc/$1/limits")" = "1 1" ]
}

# The host processes that hold a deployment's secrets (the invoking CLI,
# the server with its warm pools, their keepers) write no core dump: a
# crash of theirs, or a SIGQUIT, would put every secret they hold into a
# file (./core, systemd-coredump's store) outside the 0600 secrets store.
t_no_core_with_secrets() {
	local d pid k id
	d=$(make_agent "core-$SR_AS" 'sleep 3; echo done')
	sr deploy --name core --net none "$d"
	echo s3cret >"$SR_TMP/core-secret-$SR_AS"
	SR_STDIN="$SR_TMP/core-secret-$SR_AS" sr secrets set core KEY
	(
		ulimit -c unlimited
		as_user_exec "$SR" invoke core </dev/null >/dev/null 2>&1
	) &
	pid=$!
	until_ok 10 test -e "/proc/$pid/limits"
	sleep 1
	check "a cold invoke (the CLI holding the secrets) dumps no core" no_core "$pid"
	wait "$pid"
	ulimit -S -c unlimited
	start_serve --warm 1
	ulimit -S -c 0
	[ -n "$SERVE_PID" ] || return
	until_ok 20 sh -c "ls '$(state_dir)' | grep -q '^[0-9a-f]\{32\}\$'"
	sleep 1
	check "the server holding warm sandboxes' secrets dumps no core" no_core "$SERVE_PID"
	id=$(ls "$(state_dir)" | grep '^[0-9a-f]\{32\}$' | head -1)
	k=$(pgrep -f "[s]andbox-run-keeper $id" | head -1)
	check "a warm sandbox's keeper is there" test -n "$k"
	[ -z "$k" ] || check "nor does a warm sandbox's keeper" no_core "$k"
	stop_serve
	sr deployments rm core
}

# A deployment's name, when --name does not give it, is package.json's:
# the agent's author's. One that names another deployment of the user's
# would become its next version, and its invocations would get that
# deployment's secrets. A name not given is refused when it is a
# deployment made from another source; its own source redeploys.
t_name_taken() {
	local mine theirs
	mine=$(make_agent "mine-$SR_AS" 'echo mine')
	theirs=$(make_agent "theirs-$SR_AS" 'echo theirs; echo "key=$KEY"')
	echo '{"name": "billing", "version": "1.0.0"}' >"$mine/package.json"
	echo '{"name": "billing", "version": "6.6.6"}' >"$theirs/package.json"
	own "$mine" "$theirs"
	sr deploy --net none "$mine"
	assert_eq "a deploy named by its package.json" "0" "$rc"
	echo billing-key >"$SR_TMP/billing-key-$SR_AS"
	SR_STDIN="$SR_TMP/billing-key-$SR_AS" sr secrets set billing KEY
	sr deploy --net none "$mine"
	assert_eq "its own source redeploys under that name" "0" "$rc"
	sr deploy --net none "$theirs"
	assert_eq "another source whose package.json names it: refused (125)" 125 "$rc"
	assert_match "saying why and what to do" \
		"deploy: deployment 'billing' is deployed from .*mine-$SR_AS.*--name billing" "$errout"
	sr invoke --net none billing
	assert_eq "the deployment stays its own, its secret unseen by the other" mine "$out"
	sr deploy --net none --name billing "$theirs"
	assert_eq "--name says it is meant: replaced" "0" "$rc"
	sr deployments rm billing
	# Secrets set before a first deploy are for the agent the user means.
	SR_STDIN="$SR_TMP/billing-key-$SR_AS" sr secrets set billing KEY
	sr deploy --net none "$theirs"
	assert_eq "secrets waiting for 'billing', a package.json naming it: refused (125)" 125 "$rc"
	assert_match "saying why and what to do" \
		"deploy: secrets are set for 'billing', which is not deployed yet, .*--name billing" "$errout"
	sr deploy --net none --name billing "$theirs"
	assert_eq "--name billing: deployed with them" "0" "$rc"
	sr invoke --net none billing
	assert_match "and they reach it" "key=billing-key" "$out"
	sr deployments rm billing
}

# The name check and what it lets through happen under one lock, in the
# deploy that makes the version. Before, a deploy checked the name, then
# made its version: a deploy from another source whose package.json named a
# deployment whose first version was still installing (no source recorded
# yet) passed the check and made its code that deployment's next version;
# a rollback to another source's version while an agent that names itself
# so was installing was undone when that install finished.
t_name_race() {
	local mine theirs v
	mine=$(make_agent "rmine-$SR_AS" 'echo mine')
	theirs=$(make_agent "rtheirs-$SR_AS" 'echo theirs')
	echo '{"name": "payroll"}' >"$mine/package.json"
	echo '{"name": "payroll"}' >"$theirs/package.json"
	own "$mine" "$theirs"
	v="$(data_dir)/deployments/payroll/versions"
	gate_open
	in_background race-mine-$SR_AS "$SR" deploy --net none "${GATE_OPTS[@]}" \
		--install 'read l </gate/fifo' "$mine"
	until_ok 60 grep -sq "deploy payroll v1: read the agent" "$SR_OUT/race-mine-$SR_AS"
	in_background race-theirs-$SR_AS "$SR" deploy --net none "$theirs"
	until_ok 60 sh -c "grep -sq 'under way' '$SR_OUT/race-theirs-$SR_AS' || [ -s '$SR_OUT/race-theirs-$SR_AS.rc' ]"
	check "another source naming itself so, meanwhile: no version of its made" test ! -e "$v/2"
	gate_release
	until_ok 120 ended race-mine-$SR_AS
	until_ok 120 ended race-theirs-$SR_AS
	wait
	gate_close
	assert_eq "the first deploy of the name, held in its install: deployed" 0 \
		"$(cat "$SR_OUT/race-mine-$SR_AS.rc")"
	assert_eq "the other source: refused (125) once the first is done" 125 \
		"$(cat "$SR_OUT/race-theirs-$SR_AS.rc")"
	assert_match "it waited for the first, saying so" \
		"deploy payroll: another deploy of payroll is under way" "$(cat "$SR_OUT/race-theirs-$SR_AS")"
	assert_match "then was told whose the name is" \
		"deployment 'payroll' is deployed from .*rmine-$SR_AS" "$(cat "$SR_OUT/race-theirs-$SR_AS")"
	sr invoke --net none payroll
	assert_eq "the deployment answers with the first source's code" mine "$out"
	check "and holds no version of the other's" test ! -e "$v/2"

	# The user gives the name to the other source on purpose (version 2),
	# which redeploys itself by its package.json (version 3); the user rolls
	# back to their own version 1 while that install runs.
	sr deploy --net none --name payroll "$theirs"
	assert_eq "--name payroll: the other source's, version 2" 0 "$rc"
	sr invoke --net none payroll
	assert_eq "it answers" theirs "$out"
	gate_open
	in_background race-again-$SR_AS "$SR" deploy --net none "${GATE_OPTS[@]}" \
		--install 'read l </gate/fifo' "$theirs"
	until_ok 60 grep -sEq "deploy payroll v[0-9]+: read the agent" "$SR_OUT/race-again-$SR_AS"
	sr deployments rollback payroll 1
	assert_eq "a rollback to version 1 while version 3 installs" 0 "$rc"
	gate_release
	until_ok 120 ended race-again-$SR_AS
	wait
	gate_close
	assert_eq "the self-named redeploy, finished after the rollback: fails (125)" 125 \
		"$(cat "$SR_OUT/race-again-$SR_AS.rc")"
	assert_match "saying the deployment is now another source's" \
		"deployment 'payroll' is deployed from .*rmine-$SR_AS" "$(cat "$SR_OUT/race-again-$SR_AS")"
	sr invoke --net none payroll
	assert_eq "the rollback holds: the user's version answers" mine "$out"
	sr deployments rm payroll
}

# The install log is on the host's disk, which the sandbox's --disk does
# not bound: an install step printing for its whole timeout (10 minutes
# at pipe speed) filled it. The log keeps its first 16 MiB and its last
# 64 KiB, saying how much it left out between them.
t_install_log_bounded() {
	local d log size
	d=$(make_agent "log-$SR_AS" 'echo hi')
	sr deploy --name logbomb --net none --disk 64M \
		--install 'yes aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa | head -c 200000000; echo the-end; exit 3' "$d"
	assert_eq "the install fails" 125 "$rc"
	log="$(data_dir)/deployments/logbomb/versions/1/install.log"
	size=$(stat -c %s "$log")
	check "200 MB of output: the log is bounded ($size bytes)" test "$size" -le $((17 << 20))
	assert_match "it says what it left out" "sandbox-run: [0-9]+ bytes of the install's output not logged" "$(tail -c 70000 "$log")"
	assert_eq "and keeps the end" the-end "$(tail -n 2 "$log" | head -n 1)"
	assert_match "then why the version failed" "^sandbox-run: deploy logbomb: version 1 failed: install step .* exit status 3$" \
		"$(tail -n 1 "$log")"
	assert_match "the failure shows the real last lines" "\| the-end" "$errout"
	sr deployments rm logbomb
}

# An archive deployed is extracted on the host, into the data directory:
# its bytes were bounded by --disk, its entries only by ten million, so a
# small .tar.gz of empty files spent the host file system's inodes. They
# are bounded as the sandbox's disk bounds them (its inode count).
t_archive_entries_bounded() {
	local dir="$SR_TMP/inodes-$SR_AS"
	rm -rf "$dir"
	mkdir -p "$dir/pkg/many"
	printf '#!/bin/sh\necho hi\n' >"$dir/pkg/agent"
	chmod 0755 "$dir/pkg/agent"
	(cd "$dir/pkg/many" && seq 1 6000 | xargs touch)
	tar -C "$dir" -czf "$dir/inodes.tgz" pkg
	rm -rf "$dir/pkg"
	own "$dir"
	sr deploy --net none --disk 16M "$dir/inodes.tgz"
	assert_eq "6000 entries with --disk 16M (4096 inodes): refused" 125 "$rc"
	assert_match "saying so" "more than 4096 entries" "$errout"
	sr deploy --net none --disk 64M "$dir/inodes.tgz"
	assert_eq "with --disk 64M (16384 inodes): deployed" 0 "$rc"
	sr deployments rm inodes
}

# The installed tree (and the package cache) comes out of the install
# sandbox as a tar stream, which the host read to its end without looking
# at the install's clock or at the signals that stop a deploy. The tar
# worker is a process of the steps' own user in the sandbox: one a step
# left running stopped it (SIGSTOP), and the deploy waited for the copy's
# idle bound (a minute), past --install-timeout and ^C; let go on a little
# before each minute was up, it waited for as long as the script liked,
# holding deploy.lock. The timeout and ^C end the copy too.
t_copy_out_stalled() {
	local d pid start
	d=$(make_agent "stall-$SR_AS" 'echo hi')
	cat >"$d/stall.sh" <<'SH'
head -c 64M /dev/zero >big
step=$$
(
	exec >/dev/null 2>&1 </dev/null
	while [ -d /proc/$step ]; do sleep 0.01; done
	while :; do
		for p in /proc/[0-9]*; do
			n=${p#/proc/}
			[ "$n" = 1 ] && continue
			read -r c <"$p/comm" || continue
			[ "$c" = sandbox-run ] && kill -STOP "$n" && exit 0
		done
	done
) &
SH
	own "$d"
	start=$SECONDS
	sr deploy --name stall --net none --install-timeout 3s --install 'sh stall.sh' "$d"
	assert_eq "a step's process stops the copy's worker: the deploy fails (125)" 125 "$rc"
	assert_match "at its timeout" "copy the installed tree out: the install did not end within its timeout" "$errout"
	check "within it, not after the copy's idle minute ($((SECONDS - start)) s)" \
		test $((SECONDS - start)) -lt 30

	(as_user_exec "$SR" deploy --name stall --net none --install 'sh stall.sh' "$d" \
		</dev/null >"$SR_OUT/stall-$SR_AS" 2>&1) &
	pid=$!
	until_ok 60 grep -sq "copy the installed tree" "$SR_OUT/stall-$SR_AS"
	sleep 1
	kill -INT "$pid"
	start=$SECONDS
	wait "$pid"
	assert_eq "^C while the copy is stopped: the deploy ends, interrupted (130)" 130 "$?"
	check "at once, not after the copy's idle minute ($((SECONDS - start)) s)" \
		test $((SECONDS - start)) -lt 20
	sr deployments rm stall
}

# An archive agent is extracted on the host, bounded by --disk: a small
# compressed one (a few hundred KiB of zstd) expands to gigabytes of
# zeros. ^C (and the signals that end a deploy) stop the extraction; it
# went on to the end, writing all of it, before the deploy looked.
t_archive_interrupted() {
	local bomb="$SR_TMP/bomb.tar.zst" pid t0 ms rc
	if [ ! -s "$bomb" ]; then
		(cd "$SR_TMP" && truncate -s 6G zeros && tar -cf - zeros | zstd -1 -q -T0 >"$bomb"
			rm -f zeros)
		chmod 0644 "$bomb"
	fi
	(as_user_exec "$SR" deploy --name bomb --net none --disk 8G "$bomb" \
		</dev/null >"$SR_OUT/bomb-$SR_AS" 2>&1) &
	pid=$!
	until_ok 30 grep -sq "extract the archive" "$SR_OUT/bomb-$SR_AS"
	sleep 0.5
	kill -INT "$pid"
	t0=$(date +%s%N)
	rc=0
	wait "$pid" || rc=$?
	ms=$((($(date +%s%N) - t0) / 1000000))
	assert_eq "^C while an archive agent is extracted: the deploy ends, interrupted (130)" 130 "$rc"
	check "at once, not once all of it is written (${ms} ms)" test "$ms" -lt 1000
	assert_match "saying so" "interrupted" "$(cat "$SR_OUT/bomb-$SR_AS")"
	sr deployments rm bomb
}

# npm's hidden lock file (node_modules/.package-lock.json), which the
# install writes, is read on the host to count the dependencies. jansson
# builds a whole tree of it, at up to ~250 bytes a value however short its
# text: 20 MB of "{}," cost the deploying process 1.2 GB of the host's
# memory (64 MiB, the most read: 5 GB), outside every limit of the
# sandbox. A text of more values than a real lock file holds is not parsed.
t_lock_file_memory() {
	local d got rc mb
	d=$(make_agent "lock-$SR_AS" 'echo hi')
	cat >"$d/lock.sh" <<'SH'
mkdir -p node_modules
{ printf '{"packages":['; yes '{},' | head -n 5000000; printf '{}]}'; } >node_modules/.package-lock.json
SH
	own "$d"
	got=$(as_user python3 -c 'import resource, subprocess, sys
rc = subprocess.run(sys.argv[1:], stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                    stderr=subprocess.DEVNULL).returncode
print(rc, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss // 1024)' \
		"$SR" deploy --name lockbomb --net none --install 'sh lock.sh' "$d")
	read -r rc mb <<<"$got"
	assert_eq "an install leaving 20 MB of '{},' as npm's lock file: deployed" 0 "$rc"
	check "the deploy's peak memory stays bounded (${mb} MB)" test "${mb:-9999}" -lt 256
	sr deployments rm lockbomb
}

# stale FILE: what a `secrets set` killed between its temp file and the
# rename (SIGKILL, a crash) leaves: the value, 0600, under a hidden name.
stale() {
	as_user sh -c 'umask 077; printf stale-value-%s "$2" >"$1"' _ "$1" "$SR_AS"
}

# Such a file stayed in the name's secrets directory for good, holding
# the value, and `secrets rm` of the name's last key could not remove the
# directory. The next set or rm of that name removes it: its writer is
# gone (a live one would hold the secrets' lock).
t_secret_killed_set() {
	local dir
	dir="$(data_dir)/secrets/killed"
	echo first >"$SR_TMP/killed-$SR_AS"
	SR_STDIN="$SR_TMP/killed-$SR_AS" sr secrets set killed KEY
	stale "$dir/.KEY.new-0badc0de"
	SR_STDIN="$SR_TMP/killed-$SR_AS" sr secrets set killed OTHER
	assert_eq "secrets set of the name: works, and the killed set's file is gone" "0 no" \
		"$rc $([ -e "$dir/.KEY.new-0badc0de" ] && echo yes || echo no)"
	stale "$dir/.OTHER.new-00c0ffee"
	sr secrets rm killed OTHER
	sr secrets ls killed
	assert_eq "secrets rm of another key: alike, and ls lists what is left" "0 KEY no" \
		"$rc $out $([ -e "$dir/.OTHER.new-00c0ffee" ] && echo yes || echo no)"
	stale "$dir/.KEY.new-deadbeef"
	sr secrets rm killed KEY
	assert_eq "secrets rm of the last key: the name's directory goes, the value with it" \
		"0 no" "$rc $([ -e "$dir" ] && echo yes || echo no)"
	check "no file of the data directory holds the value" \
		_fails grep -rq "stale-value-$SR_AS" "$(data_dir)"
	# A set killed before any secret of the name was kept: rm says there is none, and tidies.
	as_user mkdir -m 700 "$dir"
	stale "$dir/.KEY.new-feedface"
	sr secrets rm killed KEY
	assert_eq "secrets rm of a key never kept: 125, and nothing left of the name" "125 no" \
		"$rc $([ -e "$dir" ] && echo yes || echo no)"
	rm -f "$SR_TMP/killed-$SR_AS"
}

for_each_user t_secret_killed_set t_cache_per_deployment t_install_output_escapes t_no_core_with_secrets t_name_taken \
	t_name_race t_install_log_bounded t_archive_entries_bounded t_copy_out_stalled \
	t_lock_file_memory t_archive_interrupted
done_testing
