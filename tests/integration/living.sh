#!/usr/bin/env bash
# Sandboxes that live: create, exec, ls, inspect, cp, timeout, rm, and what
# is left afterwards (nothing), as root and as an unprivileged user.
. "$(dirname "$0")/libtest.sh"

# A pty for `exec -t`: types the given lines one by one (each after a pause
# for output; "\n" in the argument separates them, \x1a is ^Z), and prints
# everything the terminal showed.
cat >"$SR_TMP/pty-session.py" <<'EOF'
import fcntl, os, pty, select, struct, sys, termios, time
lines = sys.argv[1].split("\\n")
argv = sys.argv[2:]
pid, fd = pty.fork()
if pid == 0:
    fcntl.ioctl(0, termios.TIOCSWINSZ, struct.pack("HHHH", 33, 101, 0, 0))
    os.execvp(argv[0], argv)
out = b""
def read_for(t):
    global out
    end = time.time() + t
    while time.time() < end:
        if select.select([fd], [], [], 0.05)[0]:
            try:
                data = os.read(fd, 4096)
            except OSError:
                return False
            if not data:
                return False
            out += data
    return True
read_for(1.0)
for line in lines:
    os.write(fd, line.encode().decode("unicode_escape").encode() + b"\n")
    if not read_for(1.0):
        break
_, st = os.waitpid(pid, 0)
sys.stdout.write(out.decode(errors="replace"))
print("\nexit=%d" % os.waitstatus_to_exitcode(st))
EOF
chmod a+r "$SR_TMP/pty-session.py"

# new_sandbox ARGS...: creates one (as the round's user), its id in $sb.
new_sandbox() {
	sr create --net none "$@"
	sb=$out
}

# state_dir: where the round's sandboxes are kept (libtest.sh sets it).
# keeper_of ID: the keeper's pid, from its state file.
keeper_of() {
	json_get "$(state_dir)/$1/state.json" keeper_pid
}

# left_of ID: what a sandbox left on the host: its state, its cgroups.
left_of() {
	ls -d "$(state_dir)/$1" 2>/dev/null
	find /sys/fs/cgroup -maxdepth 6 -name "sandbox-run-$1" 2>/dev/null
}

nothing_left() {
	test -z "$(left_of "$1")"
}

t_create_exec() {
	new_sandbox --timeout 60
	assert_eq "create: status 0" 0 "$rc"
	assert_match "create prints the id: 32 hex digits" '^[0-9a-f]{32}$' "$sb"
	sr exec "$sb" -- sh -c 'echo made > /workspace/f; echo to-stderr >&2'
	assert_eq "exec: its stdout" "" "$out"
	assert_eq "exec: its stderr, as it is" "to-stderr" "$errout"
	sr exec "$sb" -- cat /workspace/f
	assert_eq "a file one exec wrote, the next reads" "made" "$out"
	sr exec "$sb" -- sh -c 'exit 7'
	assert_eq "exec: the command's status" 7 "$rc"
	sr exec "$sb" -- no-such-command
	assert_eq "exec: not found, 127" 127 "$rc"
	assert_match "and says so" "no-such-command: No such file or directory" "$errout"
	sr exec "$sb" -- sh -c 'kill -TERM $$'
	assert_eq "exec: killed by a signal, 128+N" 143 "$rc"
	sr exec --env A=1 --env B=two --workdir /tmp "$sb" -- sh -c 'echo "$A $B $(pwd) $(id -u)"'
	assert_eq "exec: --env, --workdir, uid 1000" "1 two /tmp 1000" "$out"
	sr exec "$sb" --env A=3 --workdir /tmp -- sh -c 'echo "$A $(pwd)"'
	assert_eq "exec ID OPTIONS -- COMMAND: the options after ID, up to --" "3 /tmp 0" "$out $rc"
	sr exec "$sb" --workdir /tmp true
	assert_eq "exec ID -OPTION without --: refused, 125" 125 "$rc"
	assert_match "and says how to give it" \
		"COMMAND '--workdir' looks like an option: give options before ID, or end them with --" "$errout"
	sr exec "$sb" --env NOEQ -- true
	assert_match "exec ID --env without =, after ID: the option's own error" "--env: expected KEY=VALUE, got 'NOEQ'" "$errout"
	sr exec "$sb" -- printf '%s\n' --workdir
	assert_eq "exec ID -- COMMAND: words after -- are the command's, options or not" "--workdir" "$out"
	sr exec "$sb" -- sh -c 'echo ${SECRET_X:-unset}; cat'
	assert_eq "without -i, stdin is /dev/null" "unset" "$out"
	out=$(echo piped | as_user "$SR" exec -i "$sb" -- cat)
	assert_eq "-i passes stdin" "piped" "$out"
	sr exec --timeout 1 "$sb" -- sleep 10
	assert_eq "exec --timeout: 124" 124 "$rc"
	sr exec --result "$SR_OUT/exec-$SR_AS.json" "$sb" -- sh -c 'exit 3'
	assert_eq "exec --result: the record's status" "exited 3 $sb" \
		"$(json_get "$SR_OUT/exec-$SR_AS.json" status) $(json_get "$SR_OUT/exec-$SR_AS.json" exit_code) $(json_get "$SR_OUT/exec-$SR_AS.json" sandbox_id)"
	sr ls
	assert_match "ls lists it" "^${sb:0:12} " "$(sed -n 2p <<<"$out")"
	sr ls --json
	assert_eq "ls --json: its state" "running" "$(python3 -c 'import json,sys; print(json.load(sys.stdin)[0]["state"])' <<<"$out")"
	assert_eq "ls --json: its ports, none published yet" "[]" "$(python3 -c 'import json,sys; print(json.load(sys.stdin)[0]["ports"])' <<<"$out")"
	sr inspect "${sb:0:6}"
	assert_eq "inspect by a prefix: the id" "$sb" "$(python3 -c 'import json,sys; print(json.load(sys.stdin)["id"])' <<<"$out")"
	assert_match "inspect: usage so far" '"usage":\{"processes":0,' "$out"
	assert_match "inspect: ports, an empty list before any is published" '"ports":\[\]' "$out"
	sr rm "$sb"
	assert_eq "rm: status 0" 0 "$rc"
	assert_eq "and nothing of it is left (state, cgroups)" "" "$(left_of "$sb")"
	sr ls --json
	assert_eq "ls: empty again" "[]" "$out"
	sr exec "$sb" -- true
	assert_eq "exec of a sandbox that is gone: 125" 125 "$rc"
	assert_match "with a clear line" "no sandbox '$sb' \(sandbox-run ls lists them\)" "$errout"
	# id=$(sandbox-run create ...) that failed leaves "$id" empty.
	sr exec "" -- true
	assert_eq "exec of an empty ID: 125, saying it is empty" \
		"125 sandbox-run: exec: no sandbox '' (an empty ID: is the variable that should hold it set? sandbox-run ls lists them)" \
		"$rc $errout"
}

t_names() {
	new_sandbox --name "web-$SR_AS" --timeout 60
	sr exec "web-$SR_AS" -- echo by-name
	assert_eq "exec by --name" "by-name" "$out"
	sr create --net none --name "web-$SR_AS"
	assert_eq "a name in use: refused (125)" 125 "$rc"
	assert_match "saying so, as create's (its keeper's words were said without create's name)" \
		"^sandbox-run: create: a sandbox is named 'web-$SR_AS' already" "$errout"
	sr create --name "bad/name"
	assert_eq "a bad name: refused" 125 "$rc"
	# A whole id is an id before it is a name: another sandbox's id as a
	# --name was taken, and `rm` of that name then ended the other one.
	local web_id
	web_id=$(json_get "$(state_dir)/$(ls "$(state_dir)" | head -1)/state.json" id)
	sr create --net none --timeout 60 --name "$web_id"
	assert_eq "a name of 32 hex digits (here another sandbox's id): refused, 125" \
		"125 sandbox-run: create: option --name: bad name '$web_id': 32 hex digits are a sandbox's id, not a name (choose another)" \
		"$rc $errout"
	sr ls --json
	assert_eq "and nothing made" 1 "$(python3 -c 'import json,sys; print(len(json.loads(sys.argv[1])))' "$out")"
	sr rm "web-$SR_AS"
	assert_eq "rm by name" 0 "$rc"
	sr create --net none -- true
	assert_eq "create -- COMMAND: refused" 125 "$rc"
	assert_match "pointing at exec" "sandbox-run exec ID -- COMMAND" "$errout"
}

t_workspace() {
	local d="$SR_TMP/ws-$SR_AS"
	mkdir -p "$d" && echo host-file >"$d/h.txt" && own "$d"
	new_sandbox --workspace "$d" --timeout 60
	sr exec "$sb" -- sh -c 'cat h.txt; echo changed > h.txt; cat h.txt'
	assert_eq "--workspace: the host's files, writable inside" "$(printf 'host-file\nchanged')" "$out"
	assert_eq "and the host copy untouched" "host-file" "$(cat "$d/h.txt")"
	sr rm "$sb"
	new_sandbox --timeout 60 "$ECHO_AGENT"
	sr exec "$sb" -- ls /workspace
	assert_eq "create AGENT: its files are the workspace, nothing runs" "agent" "$out"
	sr rm "$sb"
	# AGENT passes nothing on (nothing runs), so options may follow it.
	sr create "$ECHO_AGENT" --net none --name "after-$SR_AS" --timeout 60
	sb=$out
	sr exec "after-$SR_AS" -- ls /workspace
	assert_eq "create AGENT --name N ...: the options are create's" "0 agent" "$rc $out"
	sr rm "$sb"
}

t_tty_job_control() {
	new_sandbox --timeout 60
	said=$(as_user python3 "$SR_TMP/pty-session.py" \
		'tty; stty size\nsleep 100\n\x1a\njobs; echo jobs-listed\nkill -9 %1; sleep 0.2; exit 4' \
		"$SR" exec -it "$sb" -- bash --norc --noprofile -i)
	assert_match "exec -t: a pty of the sandbox's own" "/dev/pts/[0-9]+" "$said"
	assert_match "of the caller's size" "33 101" "$said"
	assert_match "^Z stops the job (job control)" "Stopped +sleep 100" "$said"
	assert_match "jobs lists it" "jobs-listed" "$said"
	assert_match "the shell's exit status comes back" "exit=4" "$said"
	# -t with no terminal on stdin (a script, CI): the pty is given all the
	# same, and the end of the input is its EOF character, as script(1)
	# sends it, or an interactive shell would wait for the deadline.
	sr rm "$sb"
	new_sandbox --timeout 120
	rc=0
	out=$(printf 'echo typed-in\n' | as_user timeout 20 "$SR" exec -it "$sb" -- sh -i 2>&1) || rc=$?
	assert_eq "exec -it with piped input: the shell ends at its end (not at a timeout)" 0 "$rc"
	assert_match "having run what came" "typed-in" "$out"
	rc=0
	out=$(as_user timeout 20 "$SR" exec -it "$sb" -- sh -c 'cat; echo cat-ended' </dev/null 2>&1) || rc=$?
	assert_eq "exec -it with stdin at its end at once: cat reads EOF" "0" "$rc"
	assert_match "and the command goes on" "cat-ended" "$out"
	# Input with no last newline: a canonical pty's ^D after a line not
	# ended hands the line over, and only a second one ends the input (as
	# at a terminal); cat waited for the deadline.
	rc=0
	out=$(printf 'no-newline' | as_user timeout -k 5 20 "$SR" exec -it "$sb" -- \
		sh -c 'cat; echo; echo cat-ended' 2>&1) || rc=$?
	assert_eq "exec -it with piped input not ending in a newline: cat reads EOF" "0" "$rc"
	assert_match "and the command after cat runs" "cat-ended" "$out"
	# bash's readline sets the pty raw only as it first reads: an end
	# typed before that reached it as a ^@, and bash waited for the
	# deadline (timeout's SIGTERM is passed on, and bash ignores it).
	rc=0
	out=$(as_user timeout -k 5 20 "$SR" exec -it "$sb" -- bash --norc --noprofile -i \
		</dev/null 2>&1) || rc=$?
	assert_eq "exec -it bash with stdin at its end at once: bash ends" "0" "$rc"
	rc=0
	out=$(printf 'echo typed-in\n' | as_user timeout -k 5 20 "$SR" exec -it "$sb" -- \
		bash --norc --noprofile -i 2>&1) || rc=$?
	assert_eq "exec -it bash with piped input: bash ends at its end" "0" "$rc"
	assert_match "having run what came" "typed-in" "$out"
	# Its last line not ended: readline, reading the pty raw, takes ^D
	# after text for delete-char, and bash waited for the deadline. The
	# line gets an Enter first, as from a pipe bash would run it: typed
	# before readline sets the pty raw (the ^D retyped after its switch),
	# and after (the end typed raw).
	rc=0
	out=$(printf 'echo "un""ended"' | as_user timeout -k 5 20 "$SR" exec -it "$sb" -- \
		bash --norc --noprofile -i 2>&1) || rc=$?
	assert_eq "exec -it bash, piped input with no last newline: bash ends" "0" "$rc"
	assert_match "having run its last line" "unended" "$out"
	rc=0
	out=$( (sleep 1; printf 'echo "la""te"') | as_user timeout -k 5 20 "$SR" exec -it "$sb" -- \
		bash --norc --noprofile -i 2>&1) || rc=$?
	assert_eq "exec -it bash, the same typed once readline reads raw: bash ends" "0" "$rc"
	assert_match "having run its last line" "late" "$out"
	sr rm "$sb"
}

t_cp() {
	local src="$SR_TMP/cp-src-$SR_AS" back="$SR_OUT/cp-back-$SR_AS"
	rm -rf "$src" "$back"
	mkdir -p "$src/sub/deeper"
	echo one >"$src/a.txt" && chmod 0751 "$src/a.txt"
	echo two >"$src/sub/deeper/b" && chmod 0600 "$src/sub/deeper/b"
	ln -s a.txt "$src/link" && ln -s ../a.txt "$src/sub/up"
	chmod 0710 "$src/sub"
	own "$src"
	new_sandbox --timeout 60
	sr cp "$src" "$sb:/workspace/in"
	assert_eq "cp in: status 0" 0 "$rc"
	sr exec "$sb" -- sh -c 'cat in/link; stat -c "%a %U" in/a.txt in/sub'
	assert_eq "inside: links, modes, the sandbox user's" "$(printf 'one\n751 user\n710 user')" "$out"
	sr cp "$sb:in" "$back"
	assert_eq "cp out: status 0" 0 "$rc"
	assert_eq "the round trip keeps the tree: names, types, modes, links" \
		"$(cd "$src" && find . -printf '%p %y %m %l\n' | sort)" \
		"$(cd "$back" && find . -printf '%p %y %m %l\n' | sort)"
	assert_eq "and contents" "two" "$(cat "$back/sub/deeper/b")"
	assert_eq "as the caller's own files" "$(as_user id -u)" "$(stat -c %u "$back/a.txt")"
	sr cp "$sb:in/a.txt" "$SR_OUT/"
	assert_eq "a file into an existing directory keeps its name" "one" "$(cat "$SR_OUT/a.txt")"
	rm -f "$SR_OUT/a.txt"
	# Modes whole into the sandbox, whose only user is the sandbox's: a
	# file 0666, a directory 1777 (the umask took 0022 of them, and the
	# sticky bit); out, less the caller's umask, as tar(1) run by a user
	# extracts: an agent does not choose which of the caller's files
	# others may write.
	local modes="$SR_TMP/cp-modes-$SR_AS" mask
	rm -rf "$modes" "$SR_OUT/modes-$SR_AS"
	mkdir -p "$modes/open" && echo s >"$modes/shared"
	chmod 0666 "$modes/shared" && chmod 1777 "$modes/open" && own "$modes"
	sr cp "$modes" "$sb:/workspace/modes"
	sr exec "$sb" -- stat -c '%a %n' modes/shared modes/open
	assert_eq "cp in: modes whole (0666, 1777)" "$(printf '666 modes/shared\n1777 modes/open')" "$out"
	sr cp "$sb:modes" "$SR_OUT/modes-$SR_AS"
	mask=$(as_user sh -c umask)
	assert_eq "cp out: modes less the caller's umask ($mask)" \
		"$(printf '%o %o' $((0666 & ~mask)) $((0777 & ~mask)))" \
		"$(stat -c '%a' "$SR_OUT/modes-$SR_AS/shared" "$SR_OUT/modes-$SR_AS/open" | paste -sd' ')"
	rm -rf "$modes" "$SR_OUT/modes-$SR_AS"
	# The sandbox's files may aim out: a link to /, to ../../..: refused, nothing written.
	sr exec "$sb" -- sh -c 'mkdir evil; ln -s / evil/root; ln -s ../../../../../.. evil/up'
	sr cp "$sb:evil" "$SR_OUT/evil-$SR_AS"
	assert_eq "cp out of links that leave the tree: refused (125)" 125 "$rc"
	assert_match "naming the link" "symbolic link to '(/|\.\./\.\./\.\./\.\./\.\./\.\.)' leaves" "$errout"
	check "nothing of it followed on the host" test ! -e "$SR_OUT/evil-$SR_AS/root/etc"
	# The same the other way: a host link out of the tree is not made inside.
	mkdir -p "$SR_TMP/cp-evil-$SR_AS" && ln -sfn /etc "$SR_TMP/cp-evil-$SR_AS/etc" && own "$SR_TMP/cp-evil-$SR_AS"
	sr cp "$SR_TMP/cp-evil-$SR_AS" "$sb:/workspace/evil-in"
	assert_eq "cp in of a link that leaves the tree: refused" 125 "$rc"
	sr cp "$sb:/no/such" "$SR_OUT/x"
	assert_match "cp of a missing path: says so" "/no/such: No such file or directory" "$errout"
	sr cp "$SR_OUT/x" "$SR_OUT/y"
	assert_eq "cp with no ID:PATH side: 125" 125 "$rc"
	sr rm "$sb"
}

# A deadline, without anyone calling rm: the sandbox and everything in it go.
t_deadline() {
	local t0 marker="srlive$$$SR_AS"
	new_sandbox --timeout 3
	t0=$(date +%s%N)
	sr exec "$sb" -- sh -c "setsid sh -c 'sleep 1000; :' $marker </dev/null >/dev/null 2>&1 & echo started"
	assert_eq "a daemon started by an exec" "started" "$out"
	until_ok 5 running "$marker"
	check "it runs" running "$marker"
	until_ok 10 nothing_left "$sb"
	local ms=$((($(date +%s%N) - t0) / 1000000))
	check "gone by itself within a second of its deadline (${ms} ms)" test "$ms" -lt 4200
	check "its processes with it" not_running "$marker"
	sr ls --json
	assert_eq "ls no longer shows it" "[]" "$out"
	# An exec the deadline ends: 124, as a run's timeout (it was 137, its
	# process's SIGKILL from PID 1, told before the sandbox's end).
	local rec="$SR_OUT/deadline-exec-$SR_AS.json"
	new_sandbox --timeout 2
	sr exec --result "$rec" "$sb" -- sleep 30
	assert_eq "an exec the sandbox's deadline ends: 124" 124 "$rc"
	assert_eq "its record: status timeout" "timeout 124" \
		"$(json_get "$rec" status) $(json_get "$rec" exit_code)"
	new_sandbox --timeout 600
	(as_user_exec "$SR" exec "$sb" -- sh -c "sleep 30; : ${marker}dl" >/dev/null 2>&1) &
	local pid=$!
	until_ok 10 running "${marker}dl"
	sr timeout "$sb" 1
	wait "$pid"
	assert_eq "and one a new deadline (the timeout verb) ends: 124" 124 "$?"
	rm -f "$rec"
}

t_timeout_verb() {
	new_sandbox --timeout 2
	sr timeout "$sb" 60
	assert_eq "timeout: status 0" 0 "$rc"
	assert_match "prints the new deadline" '^20[0-9]{2}-[0-9]{2}-[0-9]{2}T' "$out"
	sleep 3
	sr exec "$sb" -- echo alive
	assert_eq "a moved deadline: alive past the old one" "alive" "$out"
	sr timeout "$sb" 1
	sleep 2.5
	sr exec "$sb" -- true
	assert_eq "and gone past a new, nearer one" 125 "$rc"
	sr timeout "$sb" soon
	assert_eq "a bad duration: 125" 125 "$rc"
}

# timeout_of: "limits.timeout_s, seconds from now to expires" of the
# sandbox as the JSON on stdin says it (inspect's, or ls --json's first);
# the seconds left, when within 10 of timeout_s (this much time passes
# between the timeout and this), said as timeout_s.
timeout_of() {
	python3 -c 'import json,sys,time
d=json.load(sys.stdin)
d=d[0] if isinstance(d,list) else d
t,e=d["limits"]["timeout_s"],d["expires_ms"]
left=None if e is None else e/1000-time.time()
print(t, t if left is not None and t is not None and t-10<left<=t+1 else left)'
}

t_timeout_shown() {
	# `timeout ID D` moved the deadline, but inspect, ls --json and each
	# exec's record went on saying the create's limits.timeout_s: a
	# sandbox that would live 5 more minutes said 90 s. timeout_s is the
	# deadline in force, counted from when it was set (expires).
	local rec="$SR_OUT/timeout-shown-$SR_AS.json"
	new_sandbox --timeout 90
	sr inspect "$sb"
	assert_eq "create --timeout 90: inspect's timeout_s and expires" "90 90" "$(timeout_of <<<"$out")"
	sr timeout "$sb" 5m
	sr inspect "$sb"
	assert_eq "timeout ID 5m: inspect says 300, expiring in 300 s" "300 300" "$(timeout_of <<<"$out")"
	sr ls --json
	assert_eq "and ls --json" "300 300" "$(timeout_of <<<"$out")"
	sr exec --result "$rec" "$sb" -- true
	assert_eq "and an exec's record" 300 "$(json_get "$rec" limits.timeout_s)"
	sr timeout "$sb" 0
	sr inspect "$sb"
	assert_eq "timeout ID 0: none, null as a create's 0" "None None" "$(timeout_of <<<"$out")"
	sr rm "$sb"
	rm -f "$rec"
}

# Durations past any sensible deadline are refused, not overflowed; a
# deadline the keeper has not acted on yet shows as overdue, not as time
# left.
t_deadline_bounds() {
	local kp
	new_sandbox --timeout 2
	sr timeout "$sb" 9223372036854775807ms
	assert_eq "timeout of 2^63-1 ms: refused, 125" 125 "$rc"
	assert_match "and says why" "at most 366 days" "$errout"
	sr create --net none --timeout 400d
	assert_eq "create --timeout 400d: refused, 125" 125 "$rc"
	kp=$(keeper_of "$sb")
	kill -STOP "$kp"
	sleep 2.5
	sr ls
	kill -CONT "$kp"
	assert_match "ls: a deadline passed shows as overdue" "overdue" "$(grep "${sb:0:12}" <<<"$out")"
	until_ok 10 nothing_left "$sb"
}

# The keeper lives on after create returns: it keeps none of the create
# command's descriptors (a pipeline on them would never end) nor its
# working directory.
t_keeper_holds_nothing() {
	local kp id
	mkdir -p "$SR_TMP/keeper-cwd" && chmod 0777 "$SR_TMP/keeper-cwd"
	id=$(cd "$SR_TMP/keeper-cwd" && as_user timeout -s KILL 20 bash -c \
		'exec 7>/dev/null; "$0" create --net none --timeout 60 3>&1 </dev/null | cat' "$SR")
	check "create 3>&1 | cat returns (the keeper holds no copy of the pipe)" test -n "$id"
	sb=$id
	kp=$(keeper_of "$sb")
	assert_eq "the keeper's working directory is /" / "$(readlink /proc/"$kp"/cwd)"
	check "it holds the create command's fd 7 no longer" _fails test -e /proc/"$kp"/fd/7 -a \
		"$(readlink /proc/"$kp"/fd/7 2>/dev/null)" = /dev/null
	sr rm "$sb"
}

# Without XDG_RUNTIME_DIR the state is in /tmp/sandbox-run-UID, which
# another user can make first: the user's own state directory serves
# then, and living sandboxes work as before.
t_state_dir_squatted() {
	local uid squat id restore=0
	[ "$SR_AS" = user ] || return 0
	uid=$(id -u "$SR_TEST_USER")
	squat=/tmp/sandbox-run-$uid
	# The user's own, empty (an earlier run's): put back afterwards.
	if [ -d "$squat" ] && [ "$(stat -c %U "$squat")" = "$SR_TEST_USER" ] && rmdir "$squat" 2>/dev/null; then
		restore=1
	fi
	if [ -e "$squat" ]; then
		skip "a squatted /tmp/sandbox-run-UID" "$squat exists already"
		return
	fi
	mkdir -m 0755 "$squat" # root's: another user's
	id=$(as_user env -u SANDBOX_RUN_STATE_DIR -u XDG_RUNTIME_DIR "$SR" create --net none --timeout 60 </dev/null 2>"$SR_TMP/squat.err")
	check "create works though another user made $squat ($(cat "$SR_TMP/squat.err"))" test -n "$id"
	check "its state is in the user's own state directory" \
		test -d "$SR_TMP/home-user/.local/state/sandbox-run/run/$id"
	assert_match "ls finds it there" "${id:0:12}" \
		"$(as_user env -u SANDBOX_RUN_STATE_DIR -u XDG_RUNTIME_DIR "$SR" ls 2>&1)"
	as_user env -u SANDBOX_RUN_STATE_DIR -u XDG_RUNTIME_DIR "$SR" rm "$id" >/dev/null 2>&1
	assert_eq "and rm" 0 "$?"
	rmdir "$squat"
	rm -rf "$SR_TMP/home-user/.local/state"
	if [ "$restore" = 1 ]; then
		mkdir -m 0700 "$squat" && chown "$SR_TEST_USER:" "$squat"
	fi
}

# kill -9 of the keeper in the middle of an exec: nothing is left.
t_keeper_killed() {
	local marker="srkill$$$SR_AS" kp pid
	new_sandbox --timeout 60
	kp=$(keeper_of "$sb")
	(as_user_exec "$SR" exec "$sb" -- sh -c 'touch /tmp/ready; sleep 1000; :' "$marker" \
		</dev/null >/dev/null 2>"$SR_TMP/killed.err") &
	pid=$!
	# Its command line has the marker too: the sandbox says when the exec runs.
	until_ok 10 as_user "$SR" exec "$sb" -- test -e /tmp/ready
	kill -9 "$kp"
	wait "$pid"
	assert_eq "the exec ends with 125" 125 "$?"
	assert_match "saying why" "keeper hung up" "$(cat "$SR_TMP/killed.err")"
	until_gone 10 running "$marker"
	check "the sandbox's processes are gone" not_running "$marker"
	sr ls --json
	assert_eq "the next ls removes what was left" "[]" "$out"
	until_ok 5 nothing_left "$sb"
	assert_eq "state and cgroups: nothing" "" "$(left_of "$sb")"
}

# no_sandboxes: the round's ls lists none.
no_sandboxes() {
	sr ls --json
	[ "$out" = "[]" ]
}

# A create interrupted (Ctrl-C: SIGINT to it alone, its keeper is in a
# session of its own) either printed the id of a sandbox that lives, or
# left nothing. The keeper's answer once lay unread in a pipe when the
# SIGINT came: the sandbox lived on and nobody was told its id. Made sure
# first (create stopped until the keeper has answered), then at delays
# across the whole of a create.
t_create_interrupted() {
	local id
	as_user /usr/bin/python3 - "$SR" "$(state_dir)" >"$SR_OUT/interrupted" 2>&1 <<'PY'
import glob, os, signal, subprocess, sys, time
sr, state = sys.argv[1], sys.argv[2]

def create():
    return subprocess.Popen([sr, "create", "--net", "none", "--timeout", "60"],
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)

def interrupted(p):
    p.send_signal(signal.SIGINT)
    p.send_signal(signal.SIGCONT)
    out = p.stdout.read().decode().strip()
    p.wait()
    if out:
        print("printed", out, flush=True)
    return out

# Stopped once its keeper is forked, interrupted once that answered.
p = create()
deadline = time.monotonic() + 10
while not open("/proc/%d/task/%d/children" % (p.pid, p.pid)).read().split():
    if time.monotonic() > deadline:
        sys.exit("create forked no keeper")
p.send_signal(signal.SIGSTOP)
while not glob.glob(state + "/*/ctl") and time.monotonic() < deadline:
    time.sleep(0.01)
time.sleep(0.3)
print("stopped:", "printed" if interrupted(p) else "nothing printed", flush=True)
# Then at 0 to 30 ms: a create takes 10 to 30 here.
for ms in range(0, 31):
    p = create()
    time.sleep(ms / 1000)
    interrupted(p)
print("done", flush=True)
PY
	assert_eq "create interrupted after its keeper answered: nothing printed" "stopped: nothing printed" \
		"$(grep stopped: "$SR_OUT/interrupted")"
	check "and 31 interrupted at 0 to 30 ms ($(grep -c '^printed ' "$SR_OUT/interrupted") printed an id)" \
		grep -qx done "$SR_OUT/interrupted"
	rc=0
	for id in $(sed -n 's/^printed //p' "$SR_OUT/interrupted"); do
		sr rm "$id"
		[ "$rc" = 0 ] || break
	done
	assert_eq "each id printed names a living sandbox: rm removes it" 0 "$rc"
	check "and none is left but those" until_ok 30 no_sandboxes
}

# A create stopped (Ctrl-Z) after its keeper answered does not stop the
# keeper: it awaited create's word that the id was printed before its
# loop, and meanwhile kept no deadline and answered no rm. Let go on
# after its sandbox ended, create was killed by SIGPIPE, saying nothing.
t_create_stopped() {
	as_user /usr/bin/python3 - "$SR" "$(state_dir)" >"$SR_OUT/stopped" 2>&1 <<'PY'
import glob, os, signal, subprocess, sys, time
sr, state = sys.argv[1], sys.argv[2]

def stopped_create(timeout):
    p = subprocess.Popen([sr, "create", "--net", "none", "--timeout", timeout],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 10
    while not open("/proc/%d/task/%d/children" % (p.pid, p.pid)).read().split():
        if time.monotonic() > deadline:
            sys.exit("create forked no keeper")
    p.send_signal(signal.SIGSTOP)
    while not glob.glob(state + "/*/ctl"):
        if time.monotonic() > deadline:
            sys.exit("no sandbox made")
        time.sleep(0.01)
    return p, os.path.basename(os.path.dirname(glob.glob(state + "/*/ctl")[0]))

def gone(p):
    p.kill()
    p.wait()

p, _ = stopped_create("2")
deadline = time.monotonic() + 15
while glob.glob(state + "/*/ctl") and time.monotonic() < deadline:
    time.sleep(0.1)
print("deadline:", "kept" if not glob.glob(state + "/*/ctl") else "not kept", flush=True)
# Let go on once its keeper is gone, create prints an id whose sandbox ended, and says so.
time.sleep(0.5)
p.send_signal(signal.SIGCONT)
try:
    out, err = p.communicate(timeout=10)
    said = [l for l in err.decode().splitlines() if "create:" in l]
    print("went on:", p.returncode, said[-1] if said else "", flush=True)
except subprocess.TimeoutExpired:
    gone(p)
p, sb = stopped_create("60")
try:
    rc = subprocess.run([sr, "rm", sb], capture_output=True, timeout=10).returncode
    print("rm:", rc, flush=True)
except subprocess.TimeoutExpired:
    print("rm: timed out", flush=True)
gone(p)
PY
	assert_eq "a sandbox whose create is stopped ends at its deadline" "deadline: kept" \
		"$(grep deadline: "$SR_OUT/stopped")"
	assert_eq "create, let go on then, says its sandbox ended (not killed by SIGPIPE)" \
		"went on: 125 sandbox-run: create: the sandbox's keeper ended before it heard the id was printed" \
		"$(grep "went on:" "$SR_OUT/stopped")"
	assert_eq "and rm removes one at once" "rm: 0" "$(grep rm: "$SR_OUT/stopped")"
	check "and none is left" until_ok 30 no_sandboxes
}

# 50 at once on two cores, each with an idle process; rm of all leaves nothing.
t_fifty() {
	local ids=() i n
	for i in $(seq 50); do
		new_sandbox --timeout 300 --memory 64M
		ids+=("$sb")
		as_user "$SR" exec "$sb" -- sh -c 'setsid sleep 1000 </dev/null >/dev/null 2>&1 &' </dev/null
	done
	sr ls
	n=$(($(wc -l <<<"$out") - 1))
	assert_eq "50 live sandboxes listed" 50 "$n"
	sr rm "${ids[@]}"
	assert_eq "rm of all 50: status 0" 0 "$rc"
	n=0
	for i in "${ids[@]}"; do [ -z "$(left_of "$i")" ] || n=$((n + 1)); done
	assert_eq "nothing of any of them is left" 0 "$n"
	sr ls --json
	assert_eq "ls: empty" "[]" "$out"
}

# Another user's sandboxes are not there for us: not listed, not reachable.
t_other_user() {
	[ "$SR_AS" = root ] || return 0
	new_sandbox --timeout 60
	out=$(setpriv --reuid="$SR_TEST_USER" --regid="$SR_TEST_USER" --clear-groups -- \
		env SANDBOX_RUN_STATE_DIR="$SANDBOX_RUN_STATE_DIR" "$SR" exec "$sb" -- true 2>&1)
	assert_match "another user named root's state directory: refused" "belongs to uid 0, not to you" "$out"
	out=$(setpriv --reuid="$SR_TEST_USER" --regid="$SR_TEST_USER" --clear-groups -- \
		env -u SANDBOX_RUN_STATE_DIR HOME=/nonexistent "$SR" exec "${sb:0:8}" -- true 2>&1)
	assert_match "in its own: no such sandbox" "no sandbox '${sb:0:8}'" "$out"
	check "root's state directory is 0700" test "$(stat -c %a "$SANDBOX_RUN_STATE_DIR")" = 700
	sr rm "$sb"
}

# listening ID PORT: something listens on PORT of the sandbox's loopback.
listening() {
	as_user "$SR" exec "$1" -- python3 -c "import socket; socket.create_connection(('127.0.0.1', $2))" \
		</dev/null >/dev/null 2>&1
}

# port: a server inside, reached from the host at the printed URL only.
t_port() {
	local port url st
	port=$((20000 + ($$ % 5000) * 2)) && [ "$SR_AS" = root ] || port=$((port + 1))
	new_sandbox --timeout 60
	sr exec "$sb" -- sh -c "mkdir -p /tmp/www && echo served-from-$SR_AS > /tmp/www/index.html &&
		cd /tmp/www && setsid python3 -m http.server $port --bind 127.0.0.1 >/dev/null 2>&1 &"
	until_ok 10 listening "$sb" "$port"
	sr port "$sb" "$port"
	url=$out
	assert_match "port prints a 127.0.0.1 URL" '^http://127\.0\.0\.1:[0-9]+$' "$url"
	assert_eq "the server inside answers there (its own page)" "served-from-$SR_AS" "$(curl -s -m 5 "$url/index.html")"
	assert_eq "on the host's loopback only" "" \
		"$(ss -Hltn "sport = :${url##*:}" | awk '{print $4}' | grep -v -e '^127\.0\.0\.1:' -e '^\[::1\]:')"
	sr port "$sb" "$port"
	assert_eq "publishing it again: the same URL" "$url" "$out"
	sr inspect "$sb"
	assert_match "inspect lists it" "\"ports\":\[\{\"port\":$port," "$out"
	sr rm "$sb"
	curl -s -m 5 "$url/" >/dev/null
	st=$?
	assert_eq "after rm nothing listens there (connection refused)" 7 "$st"
	sr port nosuch 80
	assert_eq "port of no sandbox: 125" 125 "$rc"
}

t_snapshot() {
	local a b
	new_sandbox --timeout 60 --memory 512M
	sr exec "$sb" -- sh -c 'echo ws > w.txt; ln -s w.txt l; echo home > ~/h; mkdir /tmp/t; echo tmp > /tmp/t/x
		mkdir open; chmod 1777 open; echo s > shared; chmod 0666 shared'
	sr snapshot "$sb" "snap-$SR_AS"
	assert_eq "snapshot: status 0" 0 "$rc"
	sr snapshots --json
	assert_eq "snapshots lists it, with its sandbox" "snap-$SR_AS $sb" \
		"$(python3 -c 'import json,sys; m=json.load(sys.stdin)[0]; print(m["name"], m["sandbox_id"])' <<<"$out")"
	sr snapshot "$sb" "snap-$SR_AS"
	assert_eq "a name in use: refused" 125 "$rc"
	sr rm "$sb"
	new_sandbox --from "snap-$SR_AS"
	a=$sb
	new_sandbox --from "snap-$SR_AS" --timeout 30
	b=$sb
	sr exec "$a" -- sh -c 'cat w.txt ~/h /tmp/t/x; readlink l; echo changed > w.txt'
	assert_eq "create --from: the snapshot's files, all three parts, links too" \
		"$(printf 'ws\nhome\ntmp\nw.txt')" "$out"
	# Modes as they were: the umask took 0022 of them, and the sticky bit
	# (/tmp was 0755).
	sr exec "$a" -- stat -c '%a %n' /tmp open shared
	assert_eq "their modes whole: /tmp's, a directory 1777, a file 0666" \
		"$(printf '1777 /tmp\n1777 open\n666 shared')" "$out"
	sr exec "$b" -- cat w.txt
	assert_eq "a second one from it: independent of the first" "ws" "$out"
	sr inspect "$a"
	assert_match "its configuration came with it (--memory 512M)" '"memory_bytes":536870912' "$out"
	assert_match "and says where it came from" "\"from\":\"snap-$SR_AS\"" "$out"
	sr ls
	assert_match "ls: its profile is the snapshot it came from" \
		"^${a:0:12} .* snapshot:snap-$SR_AS\$" "$(grep "^${a:0:12} " <<<"$out")"
	sr inspect "$b"
	assert_match "options over the snapshot's configuration (--timeout 30)" '"timeout_s":30' "$out"
	sr rm "$a" "$b"
	sr snapshots rm "snap-$SR_AS"
	assert_eq "snapshots rm: status 0" 0 "$rc"
	sr create --from "snap-$SR_AS"
	assert_eq "create --from a snapshot that is gone: 125" 125 "$rc"
	assert_match "saying so" "no snapshot 'snap-$SR_AS'" "$errout"
}

t_snapshot_sparse() {
	# A sparse file costs the sandbox's disk its data only: `snapshot`
	# took one larger than the disk (its holes are not stored), and create
	# --from refused it, counting the holes against the disk limit: a
	# snapshot that could not be restored. The restore counts the data
	# written, as the snapshot did; the holes stay holes.
	local a
	new_sandbox --timeout 120 --disk 50M
	sr exec "$sb" -- sh -c 'truncate -s 100M big && printf x | dd of=big bs=1 seek=52428800 conv=notrunc status=none'
	sr snapshot "$sb" "sparse-$SR_AS"
	assert_eq "snapshot of a 100M sparse file in a 50M sandbox: taken" 0 "$rc"
	sr rm "$sb"
	new_sandbox --from "sparse-$SR_AS"
	a=$sb
	assert_eq "create --from it: restored" 0 "$rc"
	sr exec "$a" -- sh -c 'stat -c %s big; [ "$(du -k big | cut -f1)" -lt 1024 ] && echo sparse; dd if=big bs=1 skip=52428800 count=1 status=none'
	assert_eq "the file at its size, still sparse, its data where it was" \
		"$(printf '104857600\nsparse\nx')" "$out"
	sr rm "$a"
	# Its data still counts: more than the new sandbox's disk is refused.
	new_sandbox --timeout 120 --disk 50M
	sr exec "$sb" -- sh -c 'head -c 30M /dev/zero >data'
	sr snapshot "$sb" "data-$SR_AS"
	assert_eq "snapshot of 30M of data: taken" 0 "$rc"
	sr rm "$sb"
	sr create --net none --from "data-$SR_AS" --disk 20M
	assert_eq "create --from it with --disk 20M: refused (125)" 125 "$rc"
	assert_match "saying why" "snapshot .*: extract workspace/data: archive exceeds the disk limit" "$errout"
	sr snapshots rm "sparse-$SR_AS" "data-$SR_AS"
}

t_cp_host_denied() {
	# A host path the caller may not write (out) or read (in) was said as
	# the archive named it: "cp: extract f.txt: Permission denied",
	# "cp: archive secret: Permission denied". Root may write and read
	# them all: the case is an unprivileged user's.
	[ "$SR_AS" = user ] || return 0
	local d="$SR_TMP/denied"
	mkdir -p "$d" && chmod 0755 "$d"
	echo hidden >"$d/secret" && chmod 0600 "$d/secret"
	new_sandbox --timeout 60
	sr exec "$sb" -- sh -c 'echo hi >f.txt'
	sr cp "$sb:f.txt" "$d/out.txt"
	assert_eq "cp out into a directory not the caller's to write: 125, naming the HOSTPATH" \
		"125 sandbox-run: cp: $d/out.txt: Permission denied" "$rc $errout"
	sr cp "$sb:f.txt" "$d"
	assert_eq "into it as the directory to copy in: alike" \
		"125 sandbox-run: cp: $d/f.txt: Permission denied" "$rc $errout"
	sr cp "$d/secret" "$sb:secret"
	assert_eq "cp in of a file not the caller's to read: 125, naming it" \
		"125 sandbox-run: cp: $d/secret: Permission denied" "$rc $errout"
	sr exec "$sb" -- ls
	assert_eq "nothing of it came in" "f.txt" "$out"
	sr rm "$sb"
	rm -rf "$d"
}

t_exec_workdir_missing() {
	# exec --workdir DIR that is not there said "/srv: No such file or
	# directory", the words a missing command gets.
	new_sandbox --timeout 60
	sr exec --workdir /no/such/dir "$sb" -- true
	assert_eq "exec --workdir of no directory: 125, saying it is the working directory" \
		"125 sandbox-run: exec: working directory /no/such/dir: No such file or directory" "$rc $errout"
	sr exec "$sb" -- /no/such/dir
	assert_eq "a missing command: as before" \
		"127 sandbox-run: exec: /no/such/dir: No such file or directory (not found on the sandbox's PATH or in the workspace)" \
		"$rc $errout"
	sr rm "$sb"
}

t_create_id_nowhere() {
	# `create >&-`: main() put /dev/null on the closed fd 1, the id went
	# there and the sandbox lived on unseen until its deadline. An id that
	# reaches nobody leaves no sandbox, closed stdout or failing write.
	local e rc before
	sr ls --json
	before=$out
	e=$(as_user "$SR" create -q --net none --timeout 60 2>&1 >&-) && rc=0 || rc=$?
	assert_eq "create with stdout closed: 125, one line saying so" \
		"125 sandbox-run: create: standard output is closed: nowhere to print the new sandbox's id" "$rc $e"
	e=$(as_user "$SR" create -q --net none --timeout 60 2>&1 >/dev/full) && rc=0 || rc=$?
	assert_eq "create >/dev/full: 125, one line saying so" \
		"125 sandbox-run: create: write standard output: No space left on device" "$rc $e"
	sr ls --json
	assert_eq "ls: neither left a sandbox" "$before" "$out"
}

t_rm_named_twice() {
	# `rm box box` ended box, then said "no sandbox 'box'" and exited 125;
	# a name and a prefix of its id alike. Named twice, ended once.
	local sb
	sr create -q --net none --timeout 60 --name "twice-$SR_AS"
	sb=$out
	sr rm "twice-$SR_AS" "twice-$SR_AS" "${sb:0:8}"
	assert_eq "rm of one sandbox named thrice: 0, not a word" "0 " "$rc $errout"
	check "and it is gone" test ! -e "$(state_dir)/$sb"
	sr rm "twice-$SR_AS"
	assert_eq "rm of one that is gone: 125, saying so" \
		"125 sandbox-run: rm: no sandbox 'twice-$SR_AS' (sandbox-run ls lists them)" "$rc $errout"
	# -f, as rm -f: a cleanup step that runs after the deadline ended it.
	sr create -q --net none --timeout 60
	sb=$out
	sr rm -f "twice-$SR_AS" "$sb"
	assert_eq "rm -f of one gone and one there: 0, not a word" "0 " "$rc $errout"
	check "and the one there is gone" test ! -e "$(state_dir)/$sb"
	sr create -q --net none --timeout 60
	sb=$out
	sr snapshot "$sb" "twice-$SR_AS"
	sr rm "$sb"
	sr snapshots rm "twice-$SR_AS" "twice-$SR_AS"
	assert_eq "snapshots rm of one named twice: 0, not a word" "0 " "$rc $errout"
	sr snapshots
	assert_no_match "and it is gone" "twice-$SR_AS" "$out"
}

t_cp_dest_named() {
	# A destination the copy cannot be made in was said as the step that
	# failed, in the sandbox ("cp: extract: where the copy goes: Read-only
	# file system") or on the host ("cp: extract hostname: No such file or
	# directory", for root, whom access(2) lets into /proc): named now as
	# the user named it.
	new_sandbox --timeout 60
	sr cp /etc/hostname "$sb:/usr/x"
	assert_eq "cp in to a read-only path of the sandbox: 125, naming it" \
		"125 sandbox-run: cp: /usr/x: Read-only file system" "$rc $errout"
	sr cp /etc/hostname "$sb:/usr"
	assert_eq "into a read-only directory of it: alike" \
		"125 sandbox-run: cp: /usr: Read-only file system" "$rc $errout"
	sr cp /etc/hostname "$sb:/proc/x"
	assert_eq "to where nothing can be made (its /proc): 125, naming it" \
		"125 sandbox-run: cp: /proc/x: No such file or directory" "$rc $errout"
	sr cp "$sb:/etc/hostname" /proc/x
	if [ "$SR_AS" = root ]; then
		assert_eq "cp out to where nothing can be made (the host's /proc): 125, naming it" \
			"125 sandbox-run: cp: /proc/x: No such file or directory" "$rc $errout"
	else
		assert_eq "cp out to where nothing can be made (the host's /proc): 125, naming it" \
			"125 sandbox-run: cp: /proc/x: Permission denied" "$rc $errout"
	fi
	sr rm "$sb"
}

t_verb_named() {
	# exec, cp and snapshot said "sandbox-run: no sandbox 'x' ...", where
	# port, timeout, inspect and rm said "sandbox-run: port: no sandbox
	# 'x' ...": each verb that takes an ID names itself in its errors.
	local x="nosuch-$SR_AS" v
	for v in "exec $x -- true" "cp $x:/a $SR_OUT/a" "cp /etc/hostname $x:/a" "snapshot $x n" \
		"port $x 80" "timeout $x 5" "inspect $x" "rm $x"; do
		# shellcheck disable=SC2086
		sr $v
		assert_eq "${v%% *} of no sandbox: 125, naming the verb" \
			"125 sandbox-run: ${v%% *}: no sandbox '$x' (sandbox-run ls lists them)" "$rc $errout"
	done
	new_sandbox --timeout 60
	sr exec "$sb" -- no-such-command
	assert_match "exec of a command not found: the keeper's words, named as exec's" \
		"^sandbox-run: exec: no-such-command: No such file or directory" "$errout"
	sr snapshot "$sb" bad/name
	assert_match "snapshot of a bad name: the keeper's words, named as snapshot's" \
		"^sandbox-run: snapshot: bad snapshot name 'bad/name'" "$errout"
	sr exec --result /no/such/dir/r.json "$sb" -- true
	assert_match "exec --result where no file can be made: named as exec's" \
		"^sandbox-run: exec: result /no/such/dir/r.json: " "$errout"
	sr rm "$sb"
}

# cpu_of RECORD: user_ms + sys_ms, or "null" where the record has no count.
cpu_of() {
	python3 -c 'import json,sys
r=json.load(open(sys.argv[1]))
print("null" if r["user_ms"] is None else int(r["user_ms"] + r["sys_ms"]))' "$1"
}

# counted MS: at least 100 ms (the busy loops below run a second or
# more; before, a few ms were said), on a loaded host too.
counted() {
	[ "$1" -ge 100 ] 2>/dev/null
}

# counted_or_null MS: null, or counted.
counted_or_null() {
	[ "$1" = null ] || counted "$1"
}

# An exec cut short (its --timeout, the sandbox's deadline) said 0 ms of
# CPU where its process had burnt a second: the rusage PID 1 reaped it
# with lacks the children killed with it, which it never waited for; and
# one whose end the sandbox's came before had no count at all, said as 0.
t_exec_cut_usage() {
	local rec="$SR_OUT/cut-$SR_AS.json" ms
	new_sandbox --timeout 60
	rm -f "$rec"
	sr exec --timeout 1 --result "$rec" "$sb" -- sh -c 'sh -c "while :; do :; done"; :'
	ms=$(cpu_of "$rec")
	assert_eq "exec --timeout 1 of a busy child: 124" 124 "$rc"
	check "its record counts the CPU its tree burnt (>= 100 ms; PID 1 saw its end): $ms" \
		counted "$ms"
	sr rm "$sb"
	new_sandbox --timeout 2
	rm -f "$rec"
	sr exec --result "$rec" "$sb" -- sh -c 'sh -c "while :; do :; done"; :'
	ms=$(cpu_of "$rec")
	assert_eq "an exec the sandbox's deadline ends: 124" 124 "$rc"
	check "its record counts its CPU (>= 100 ms), or says null, not 0: $ms" \
		counted_or_null "$ms"
	sr rm "$sb"
	rm -f "$rec"
}

mkdir -p "$SR_TMP/examples" && cp -r "$SR_SRCDIR/examples/echo-agent" "$SR_TMP/examples/"
chmod -R a+rX "$SR_TMP/examples"
ECHO_AGENT="$SR_TMP/examples/echo-agent"

for_each_user t_deadline_bounds t_keeper_holds_nothing t_state_dir_squatted t_create_exec t_names t_workspace t_tty_job_control t_cp t_deadline t_timeout_verb \
	t_keeper_killed t_create_interrupted t_create_stopped t_fifty t_other_user t_port t_timeout_shown t_snapshot t_snapshot_sparse t_rm_named_twice t_cp_host_denied t_exec_workdir_missing \
	t_create_id_nowhere t_verb_named t_cp_dest_named t_exec_cut_usage
done_testing
