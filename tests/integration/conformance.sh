#!/usr/bin/env bash
# The contract users see (the design's command line, exit statuses and
# result record), checked as a new user reads it: each case one promise
# the binary broke.
. "$(dirname "$0")/libtest.sh"

# rec_fields FILE: the fields of a record that say which sandbox it was.
rec_fields() {
	python3 -c 'import json,sys
d=json.load(open(sys.argv[1]))
print(json.dumps([d["limits"],d["enforced"],d["profile"],d["sandbox_id"]],sort_keys=True))' "$1"
}

t_exec_error_record() {
	# exec --result of a command that never ran in a living sandbox (not
	# found, not executable, a bad --workdir): the man page says its
	# limits and enforced are the sandbox's. They were the default
	# profile's (2G whatever the sandbox had), held by "none", with no
	# profile and no sandbox_id, as if no sandbox were there.
	local ok_rec="$SR_OUT/exec-ok-$SR_AS.json" rec="$SR_OUT/exec-err-$SR_AS.json" id
	sr create -q --memory 100M --timeout 5m
	id=$out
	sr exec --result "$ok_rec" "$id" -- true
	assert_eq "exec of a command that runs: 0, the sandbox's 100M in its record" \
		"0 104857600" "$rc $(json_get "$ok_rec" limits.memory_bytes)"
	rm -f "$rec"
	sr exec --result "$rec" "$id" -- no-such-command
	assert_eq "exec of a command not found: 127, a record of status error" \
		"127 error 127" "$rc $(json_get "$rec" status) $(json_get "$rec" exit_code)"
	assert_eq "whose limits, enforced, profile and sandbox_id are the sandbox's" \
		"$(rec_fields "$ok_rec")" "$(rec_fields "$rec")"
	assert_eq "its id among them" "$id" "$(json_get "$rec" sandbox_id)"
	rm -f "$rec"
	sr exec --result "$rec" "$id" -- /etc/passwd
	assert_eq "exec of a file that cannot be executed: 126, the sandbox's in its record" \
		"126 error $(rec_fields "$ok_rec")" "$rc $(json_get "$rec" status) $(rec_fields "$rec")"
	rm -f "$rec"
	sr exec --result "$rec" --workdir /no/such/dir "$id" -- true
	assert_eq "exec in a working directory that is not there: 125, the sandbox's in its record" \
		"125 error $(rec_fields "$ok_rec")" "$rc $(json_get "$rec" status) $(rec_fields "$rec")"
	sr rm -f "$id"
	rm -f "$rec" "$ok_rec"
}

# same_as_inspect REC INSPECT: the fields of an exec's record that are the
# sandbox's (limits, enforced, profile, sandbox_id) beside inspect's, one
# line each that differs; nothing when all agree.
same_as_inspect() {
	python3 -c 'import json,sys
r=json.load(open(sys.argv[1])); i=json.loads(sys.argv[2])
for k,v in (("limits",i["limits"]),("enforced",i["enforced"]),("profile",i["profile"]),("sandbox_id",i["id"])):
    if r[k]!=v: print(k, json.dumps(r[k], sort_keys=True), "inspect:", json.dumps(v, sort_keys=True))' "$1" "$2"
}

t_exec_error_record_state() {
	# exec --result of a command that never ran built its record from
	# the default profile, then copied the sandbox's fields over it: of
	# no sandbox at all (a gone or mistyped ID), the record said the
	# default's 2G, 2 CPUs, 120 s and profile "default", held by "none",
	# limits no sandbox had. Every field now is the sandbox's state's,
	# as inspect says it (after a `timeout` too), or null.
	local prof="$SR_TMP/conf-prof-$SR_AS.ini" rec="$SR_OUT/exec-state-$SR_AS.json" id c
	printf '[profile]\ninherit = default\n[limits]\ndisk = 1G\n' >"$prof"
	chmod a+r "$prof"
	sr create -q -p "$prof" --memory 512M --cpus 1 --pids 64 --timeout 90 --net none
	id=$out
	sr timeout "$id" 5m
	for c in "-- no-such-command" "-- /etc/passwd" "--workdir /no/such/dir -- true" "-- true"; do
		rm -f "$rec"
		# shellcheck disable=SC2086 # $c: the options and command, in words
		sr exec --result "$rec" "$id" $c
		sr inspect "$id"
		assert_eq "exec --result ID $c ($(json_get "$rec" exit_code)): limits, enforced, profile, id as inspect's" \
			"" "$(same_as_inspect "$rec" "$out")"
	done
	sr rm -f "$id"
	rm -f "$rec"
	sr exec --result "$rec" "no-such-sandbox-$SR_AS" -- true
	assert_eq "exec --result of no sandbox: 125, limits, enforced, profile and sandbox_id null" \
		"125 error None None None None" \
		"$rc $(python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(d["status"], *(d[k] for k in ("limits","enforced","profile","sandbox_id")))' "$rec")"
	rm -f "$rec" "$prof"
}

t_exec_usage() {
	# An exec's record gave the sandbox's peak memory so far (the
	# cgroup's, since it was made) as the exec's: a trivial command after
	# a hungry one said the hungry one's peak; under rlimits, none at all.
	# Each exec's usage is its own now (docs/limits.md).
	local a="$SR_OUT/usage-a-$SR_AS.json" b="$SR_OUT/usage-b-$SR_AS.json" id
	sr create -q --net none --memory 512M --timeout 5m
	id=$out
	sr exec --result "$a" "$id" -- sh -c \
		'x=$(head -c 40000000 /dev/zero | tr "\0" a); i=0; while [ $i -lt 500000 ]; do i=$((i+1)); done'
	sr exec --result "$b" "$id" -- true
	python3 -c 'import json,sys
a=json.load(open(sys.argv[1])); b=json.load(open(sys.argv[2]))
print("#", {k: (a[k], b[k]) for k in ("user_ms","sys_ms","peak_memory_bytes","peak_memory_scope","disk_used_bytes")})' "$a" "$b"
	check "a CPU-burning exec: its CPU time counted" \
		python3 -c 'import json,sys; a=json.load(open(sys.argv[1])); sys.exit(a["user_ms"]+a["sys_ms"] < 100)' "$a"
	check "the trivial one after it: not the first's time too" \
		python3 -c 'import json,sys; a,b=(json.load(open(f)) for f in sys.argv[1:]); sys.exit(b["user_ms"]+b["sys_ms"] >= (a["user_ms"]+a["sys_ms"])/4)' "$a" "$b"
	assert_eq "each exec's peak memory is its own processes' (scope process)" "process process" \
		"$(json_get "$a" peak_memory_scope) $(json_get "$b" peak_memory_scope)"
	check "the first's at least its 40 MB" \
		python3 -c 'import json,sys; sys.exit(json.load(open(sys.argv[1]))["peak_memory_bytes"] < 40e6)' "$a"
	check "the trivial one's not the first's" \
		python3 -c 'import json,sys; sys.exit(json.load(open(sys.argv[1]))["peak_memory_bytes"] >= 20e6)' "$b"
	sr rm -f "$id"
	rm -f "$a" "$b"
}

# ops JSON: "path op" of each change, sorted, from diff --json's object.
ops() {
	python3 -c 'import json,sys
d=json.loads(sys.argv[1])
assert d["kind"]=="sandbox-run-changes", d
print(" ".join(sorted(c["path"]+":"+c["op"] for c in d["changes"])))' "$1"
}

t_diff_json() {
	# "--json wherever a person would otherwise parse a table": diff's
	# lines (A/M/D/R, then a line of counts on the same stdout) were the
	# only way to read a sandbox's changes, short of unpacking the
	# changes file; --json was an unknown option.
	local ws="$SR_TMP/diff-ws-$SR_AS" ch="$SR_OUT/diff-$SR_AS.changes" id
	rm -rf "$ws" && mkdir -p "$ws" && echo a >"$ws/a.txt" && echo b >"$ws/b.txt"
	chmod -R a+rX "$ws" && own "$ws"
	sr create -q --workspace "$ws"
	id=$out
	sr exec "$id" -- sh -c 'echo more >>a.txt; rm b.txt; echo c >c.txt'
	sr diff --json "$id"
	assert_eq "diff --json ID: 0, one line" "0 1" "$rc $(wc -l <<<"$out")"
	assert_eq "the manifest's changes, each with its path and op" \
		"a.txt:modified b.txt:deleted c.txt:added" "$(ops "$out")"
	sr diff --json --stat "$id"
	assert_eq "diff --json --stat: 125, one line saying to give one" \
		"125 sandbox-run: diff: --json is the changes as JSON, --stat is text: give one of them" \
		"$rc $errout"
	sr rm -f "$id"
	rm -f "$ch"
	sr --net none --workspace "$ws" --changes "$ch" -- sh -c 'echo d >d.txt'
	sr diff --json "$ch"
	assert_eq "diff --json FILE: a changes file's too" "0 d.txt:added" "$rc $(ops "$out")"
	rm -rf "$ws" "$ch"
}

t_empty_command() {
	# `sandbox-run -- "$CMD"` with CMD unset: the PATH search for an
	# empty name tried each directory itself, and said
	# "sandbox-run: : Permission denied" (126, an entry point found but
	# not executable); exec said "an empty or non-string argument", and
	# export wrote a bundle that could run nothing (0).
	local rec="$SR_OUT/empty-$SR_AS.json" id
	rm -f "$rec"
	sr --net none --result "$rec" -- '' arg
	assert_eq "run -- '': 125, one line naming the empty COMMAND" \
		"125 sandbox-run: COMMAND after '--' is an empty word: name a command (see --help)" \
		"$rc $errout"
	assert_eq "its record: status error, 125" "error 125" \
		"$(json_get "$rec" status) $(json_get "$rec" exit_code)"
	sr export --oci "$SR_OUT/empty-bundle-$SR_AS" -- ''
	assert_eq "export -- '': 125, no bundle" "125 no" \
		"$rc $([ -e "$SR_OUT/empty-bundle-$SR_AS" ] && echo yes || echo no)"
	sr create -q --net none
	id=$out
	sr exec "$id" -- ''
	assert_eq "exec ID -- '': 125, one line naming the empty COMMAND" \
		"125 sandbox-run: exec: COMMAND is an empty word: name a command (sandbox-run exec ID -- COMMAND)" \
		"$rc $errout"
	sr rm -f "$id"
	rm -rf "$rec" "$SR_OUT/empty-bundle-$SR_AS"
}

# A script whose #! interpreter is not in the sandbox was found and cannot
# be executed: 126, as a shell's "bad interpreter" and as design.md has
# it. execve()'s ENOENT was taken for the script's own: 127, "not found
# on the sandbox's PATH", of a file that was there.
t_bad_interpreter() {
	local ws="$SR_OUT/interp-$SR_AS" id
	rm -rf "$ws"
	mkdir -p "$ws"
	printf '#!/nonexistent/sh\necho ran\n' >"$ws/s.sh"
	chmod 0755 "$ws/s.sh"
	own "$ws"
	sr -q --net none --workspace "$ws" -- ./s.sh
	assert_eq "run of a script whose #! interpreter is not there: 126, saying so" \
		"126 sandbox-run: ./s.sh: No such file or directory (its #! interpreter, or the loader it names, is not in the sandbox)" \
		"$rc $errout"
	sr create -q --net none --workspace "$ws"
	id=$out
	sr exec "$id" -- ./s.sh
	assert_eq "exec of it: 126 too" 126 "$rc"
	sr exec "$id" -- ./nothing.sh
	assert_eq "a script that is not there: still 127" 127 "$rc"
	sr rm -f "$id"
	rm -rf "$ws"
}

# An exec the kernel's OOM killer ends is said as a run's agent is: status
# oom (137), and a warning naming the limit. It said "signaled", with no
# word of memory, so a living sandbox's memory hog looked like a kill -9.
# Under rlimits the allocation fails inside instead (limits.sh case_oom).
t_exec_oom() {
	local rec="$SR_OUT/oom-$SR_AS.json" id
	sr create -q --net none --memory 128M
	id=$out
	sr inspect "$id"
	if [[ $(python3 -c 'import json,sys; print(json.load(sys.stdin)["enforced"]["memory"])' <<<"$out") != cgroup* ]]; then
		skip "exec killed for memory: status oom" "the memory limit is an rlimit here: no OOM kill"
	else
		sr exec --result "$rec" "$id" -- python3 -c 'x = b"x" * (512 << 20); print("survived")'
		assert_eq "exec of a memory hog: 137, status oom, as a run's" "137 oom 9" \
			"$rc $(json_get "$rec" status) $(json_get "$rec" signal)"
		assert_eq "and a warning says so" \
			"sandbox-run: warning: out of memory: the command was killed at the sandbox's 128M memory limit" \
			"$errout"
		sr exec --result "$rec" "$id" -- sh -c 'kill -9 $$'
		assert_eq "a kill -9 after it: signaled, not oom" "137 signaled" \
			"$rc $(json_get "$rec" status)"
	fi
	sr rm -f "$id"
	rm -f "$rec"
}

# An exec a timeout ends says so, as a run does ("timed out after 1s"):
# it exited 124 without a word, --timeout's or the sandbox's deadline's.
t_exec_timeout_said() {
	local id
	sr create -q --net none --timeout 60
	id=$out
	sr exec --timeout 1s "$id" -- sleep 5
	assert_eq "exec --timeout 1s of sleep 5: 124, and a warning says why" \
		"124 sandbox-run: warning: timed out after 1s: the command was killed" "$rc $errout"
	sr -q exec --timeout 1s "$id" -- sleep 5
	assert_eq "not with -q" "124 " "$rc $errout"
	sr timeout "$id" 2
	sr exec "$id" -- sleep 5
	assert_eq "ended by the sandbox's deadline: 124, said so" \
		"124 sandbox-run: warning: the sandbox's deadline came: the command was killed" "$rc $errout"
	sr rm -f "$id"
}

for_each_user t_exec_error_record t_exec_error_record_state t_exec_usage t_diff_json t_empty_command t_bad_interpreter t_exec_oom t_exec_timeout_said
done_testing
