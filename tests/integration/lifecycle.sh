#!/usr/bin/env bash
# The agent contract and the sandbox's lifetime: stdin/stdout, exit
# statuses, signals, the timeout, sandbox-run's own death, the result record.
. "$(dirname "$0")/libtest.sh"

# The examples live in the source tree, which the unprivileged round may
# not reach: use copies.
mkdir -p "$SR_TMP/examples"
cp -r "$SR_SRCDIR/examples/." "$SR_TMP/examples/"
chmod -R a+rX "$SR_TMP/examples"
ECHO_AGENT="$SR_TMP/examples/echo-agent"

# on_a_pty [STEP...] -- COMMAND...: the last line COMMAND shows on a
# terminal of its own, the steps typed at it (tests/helpers/pty-run.py).
on_a_pty() {
	as_user python3 "$PTY_RUN" "$@" 2>&1 | tr -d '\r' | sed '/^[[:space:]]*$/d' | tail -n 1
}

# An agent that counts the SIGINTs it receives. Python runs a handler once
# for signals that come close together; its wakeup fd gets a byte for each.
COUNT_SIGINT='import signal, socket, time
r, w = socket.socketpair()
w.setblocking(False)
r.setblocking(False)
signal.signal(signal.SIGINT, lambda s, f: None)
signal.set_wakeup_fd(w.fileno())
print("ready", flush=True)
time.sleep(1.5)
print("saw", len(r.recv(64)), "done", flush=True)'

t_prompt_response() {
	echo "hello sandbox" >"$SR_TMP/prompt"
	SR_STDIN="$SR_TMP/prompt" sr --net none "$ECHO_AGENT"
	assert_eq "prompt on stdin, response on stdout (echo agent)" "You said: hello sandbox" "$out"
	assert_eq "exit status 0" 0 "$rc"
}

t_node_python_agents() {
	echo "one two three" >"$SR_TMP/prompt"
	SR_STDIN="$SR_TMP/prompt" sr --net none "$SR_TMP/examples/node-agent"
	assert_match "the Node.js agent answers (package.json main)" '"answer":"I read 3 word\(s\). Reversed: three two one"' "$out"
	SR_STDIN="$SR_TMP/prompt" sr --net none "$SR_TMP/examples/python-agent"
	assert_match "the Python agent answers (main.py) and can write its workspace" '"answer": "ONE TWO THREE"' "$out"
}

t_exit_status() {
	sr --net none -- sh -c 'exit 3'
	assert_eq "the agent's exit status is sandbox-run's" 3 "$rc"
	sr --net none --result "$SR_OUT/sig-$SR_AS.json" -- sh -c 'kill -TERM $$'
	assert_eq "killed by SIGTERM: 143" 143 "$rc"
	assert_eq "result: status signaled" signaled "$(json_get "$SR_OUT/sig-$SR_AS.json" status)"
	assert_eq "result: signal 15" 15 "$(json_get "$SR_OUT/sig-$SR_AS.json" signal)"
}

t_exec_errors() {
	sr -q --net none -- no-such-command-here
	assert_eq "command not found: 127" 127 "$rc"
	assert_match "with one clear line" "^sandbox-run: no-such-command-here: No such file or directory" "$errout"
	sr --net none -- /etc/passwd
	assert_eq "not executable: 126" 126 "$rc"
}

t_timeout() {
	local d marker="daemon-$SR_AS-marker"
	d=$(make_agent "timeout-$SR_AS" "setsid sh /workspace/$marker.sh </dev/null >/dev/null 2>&1 &
sh /workspace/$marker.sh")
	# sh stays in the process list under the marker's name while sleep runs.
	printf 'sleep 1000\necho done\n' >"$d/$marker.sh"
	chmod a+r "$d/$marker.sh"
	local t0=$SECONDS
	sr --net none --timeout 1 --result "$SR_OUT/to-$SR_AS.json" "$d"
	local took=$((SECONDS - t0))
	assert_eq "timeout: status 124" 124 "$rc"
	assert_eq "result: status timeout" timeout "$(json_get "$SR_OUT/to-$SR_AS.json" status)"
	check "the timeout ends the run promptly ($took s)" test "$took" -le 5
	sleep 0.2
	check "daemonized grandchildren died with the sandbox" not_running "$marker"
}

# CPU time counts the processes killed at the sandbox's end (the timeout,
# or left running by the agent): where no cgroup counts it, PID 1 kills and
# reaps them itself before it exits. (Children of an agent that ignores
# SIGCHLD are reaped uncounted, as rusage has it.) Uncounted is 0: a
# second of busy loop counts 1000 ms on an idle machine, and at least a
# few hundred when the machine's two CPUs are shared with other runs.
t_cpu_time_counted() {
	local f="$SR_OUT/cpu-$SR_AS.json" ms
	sr --net none --timeout 1 --result "$f" -- sh -c 'head -c 1048576 /dev/zero >/tmp/f
while :; do :; done'
	ms=$(json_get "$f" user_ms)
	check "a busy agent ended by the timeout: its CPU time is counted ($ms ms)" \
		python3 -c 'import sys; sys.exit(float(sys.argv[1]) < 200)' "$ms"
	# What was written, and on an ext4 disk its metadata (a few blocks).
	check "and the disk use at the timeout" test "$(json_get "$f" disk_used_bytes)" -ge 1048576 \
		-a "$(json_get "$f" disk_used_bytes)" -le $((1048576 + 262144))
	sr --net none --result "$f" -- sh -c 'sh -c "while :; do :; done" & sleep 1'
	ms=$(json_get "$f" user_ms)
	check "a busy process the agent left behind: its CPU time is counted ($ms ms)" \
		python3 -c 'import sys; sys.exit(float(sys.argv[1]) < 200)' "$ms"
}

t_kill_supervisor() {
	local d
	d=$(make_agent "kill-$SR_AS" "exec sh /workspace/kill-$SR_AS-marker.sh")
	printf '#!/bin/sh\nsleep 1000 &\nwait\n' >"$d/kill-$SR_AS-marker.sh"
	chmod a+r "$d/kill-$SR_AS-marker.sh"
	(as_user_exec "$SR" --net none "$d" </dev/null >/dev/null 2>&1) &
	local pid=$! i
	SR_BG_PIDS="${SR_BG_PIDS:-} $pid"
	for i in $(seq 50); do running "kill-$SR_AS-marker" && break; sleep 0.1; done
	check "the agent is running" running "kill-$SR_AS-marker"
	kill -9 "$pid"
	wait "$pid" 2>/dev/null
	for i in $(seq 30); do running "kill-$SR_AS-marker" || break; sleep 0.1; done
	check "kill -9 of sandbox-run kills the whole sandbox" not_running "kill-$SR_AS-marker"
}

t_signal_forwarding() {
	local d
	d=$(make_agent "sigfwd-$SR_AS" 'trap "echo got-term; exit 7" TERM
echo ready
while :; do sleep 0.05; done')
	(as_user_exec "$SR" --net none "$d" </dev/null >"$SR_TMP/sigfwd-$SR_AS.out" 2>&1) &
	local pid=$! i
	SR_BG_PIDS="${SR_BG_PIDS:-} $pid"
	for i in $(seq 50); do grep -q ready "$SR_TMP/sigfwd-$SR_AS.out" && break; sleep 0.1; done
	kill -TERM "$pid"
	wait "$pid"
	local st=$?
	assert_eq "SIGTERM to sandbox-run reaches the agent" "got-term" "$(grep got-term "$SR_TMP/sigfwd-$SR_AS.out")"
	assert_eq "and its exit status comes back" 7 "$st"
}

# Signals that would end sandbox-run by default are the agent's too, not
# sandbox-run's death (which left no record, and its cgroup behind).
t_signal_forwarding_rest() {
	local d pid st rt
	d=$(make_agent "sigalrm-$SR_AS" 'trap "echo got-alrm; exit 7" ALRM
echo ready
while :; do sleep 0.05; done')
	(as_user_exec "$SR" --net none "$d" </dev/null >"$SR_TMP/sigalrm-$SR_AS.out" 2>&1) &
	pid=$!
	SR_BG_PIDS="${SR_BG_PIDS:-} $pid"
	until_ok 5 grep -q ready "$SR_TMP/sigalrm-$SR_AS.out"
	kill -ALRM "$pid"
	wait "$pid"
	st=$?
	assert_eq "SIGALRM to sandbox-run reaches the agent" "got-alrm" "$(grep got-alrm "$SR_TMP/sigalrm-$SR_AS.out")"
	assert_eq "and its exit status comes back" 7 "$st"
	# A caller's alarm() survives its exec of sandbox-run: the kernel sends that SIGALRM.
	local said
	said=$(as_user perl -e 'alarm 1; exec @ARGV or exit 126' "$SR" --net none --timeout 20 -- \
		sh -c 'trap "echo got-alrm; exit 7" ALRM; while :; do sleep 0.05; done' </dev/null 2>&1)
	st=$?
	# (Its sleep, in the same process group, dies of it: sh may say "Alarm clock".)
	assert_match "SIGALRM from an alarm() set before exec reaches the agent" "got-alrm 7$" "$said $st"
	rt=$(kill -l RTMIN+2)
	(as_user_exec "$SR" --net none --result "$SR_OUT/sigrt-$SR_AS.json" -- sleep 30 </dev/null >/dev/null 2>&1) &
	pid=$!
	SR_BG_PIDS="${SR_BG_PIDS:-} $pid"
	until_ok 5 descendant "$pid" sleep >/dev/null
	kill -s RTMIN+2 "$pid"
	wait "$pid"
	st=$?
	assert_eq "a real-time signal ends the agent, not sandbox-run: 128+$rt" $((128 + rt)) "$st"
	assert_eq "and the record says so" "signaled $rt" \
		"$(json_get "$SR_OUT/sigrt-$SR_AS.json" status) $(json_get "$SR_OUT/sigrt-$SR_AS.json" signal)"
}

# A terminal's ^C reaches sandbox-run's process group (which PID 1 left):
# the agent must see it once.
t_terminal_ctrl_c() {
	local said
	said=$(on_a_pty text:ready 'send:\x03' -- "$SR" -q --net none -- python3 -c "$COUNT_SIGINT")
	assert_match "one ^C on the terminal reaches the agent once" "saw 1 done" "$said"
}

# The agent's changes to the caller's terminal do not outlive the run:
# settings (no echo), flags of the shared file description (O_NONBLOCK,
# which breaks the shell's next read), exclusive mode.
t_terminal_restored() {
	local said
	said=$(on_a_pty -- sh -c '"$0" -q --net none -- python3 -c "
import fcntl, os, termios
fcntl.fcntl(0, fcntl.F_SETFL, fcntl.fcntl(0, fcntl.F_GETFL) | os.O_NONBLOCK)
t = termios.tcgetattr(0)
t[3] &= ~termios.ECHO
termios.tcsetattr(0, termios.TCSANOW, t)
fcntl.ioctl(0, termios.TIOCEXCL)
"; python3 -c "
import fcntl, os, struct, termios
excl = struct.unpack(\"i\", fcntl.ioctl(0, 0x80045440, bytes(4)))[0]  # TIOCGEXCL
print(\"nonblock\", bool(fcntl.fcntl(0, fcntl.F_GETFL) & os.O_NONBLOCK),
      \"echo\", bool(termios.tcgetattr(0)[3] & termios.ECHO), \"exclusive\", excl)"' "$SR")
	assert_eq "the agent's changes to the caller's terminal are undone" \
		"nonblock False echo True exclusive 0" "$said"
	# A run in the background: the foreground job's settings are its own.
	said=$(on_a_pty -- bash --norc -c 'set -m
"$0" -q --net none -- sleep 1 & sleep 0.3; stty -echo; wait
stty -a | tr " " "\n" | grep -x -- "-\?echo"' "$SR")
	assert_eq "a run that ends in the background leaves the terminal's settings alone" -echo "$said"
}

# A signal sent to sandbox-run's whole process group (kill -INT -- -PGID,
# timeout(1) with a group) reaches the agent once: PID 1 is not in it.
t_group_signal() {
	local pid said
	(as_user_exec setsid "$SR" -q --net none -- python3 -c "$COUNT_SIGINT" \
		</dev/null >"$SR_TMP/group-$SR_AS.out" 2>&1) &
	pid=$!
	SR_BG_PIDS="${SR_BG_PIDS:-} $pid"
	until_ok 10 grep -q ready "$SR_TMP/group-$SR_AS.out"
	kill -INT -- "-$pid"
	wait "$pid"
	said=$(tail -n 1 "$SR_TMP/group-$SR_AS.out")
	assert_eq "a SIGINT to sandbox-run's process group reaches the agent once" "saw 1 done" "$said"
}

# The timeout's request to PID 1 comes on the protocol socket: a signal the
# agent queues to PID 1, whatever its siginfo, is only ever forwarded.
t_end_request_unforgeable() {
	if [ "$(uname -m)" != x86_64 ]; then
		skip "the agent cannot end its sandbox by a forged signal" "rt_sigqueueinfo's number is x86_64's here"
		return
	fi
	sr --net none --result "$SR_OUT/forged-$SR_AS.json" -- python3 -c 'import ctypes, signal, struct, time
signal.signal(signal.SIGTERM, signal.SIG_IGN)
info = ctypes.create_string_buffer(128)
struct.pack_into("iii", info, 0, signal.SIGTERM, 0, -1)  # SI_QUEUE
struct.pack_into("iIq", info, 16, 0, 0, 0x53522D45)    # si_pid 0, and a value
ctypes.CDLL(None, use_errno=True).syscall(129, 1, signal.SIGTERM, info)  # rt_sigqueueinfo
time.sleep(0.5)
print("alive")'
	assert_eq "a signal queued to PID 1 with any siginfo does not end the sandbox" "0 exited alive" \
		"$rc $(json_get "$SR_OUT/forged-$SR_AS.json" status) $out"
}

# Job control: PID 1 has a process group of its own, so a terminal's ^Z
# and the shell's fg reach the agent only through sandbox-run.
t_job_control() {
	local pid d="$SR_OUT/jobs-$SR_AS"
	# What the agent writes reaches the file through sandbox-run (stdio-relay.h), which
	# is stopped with its job: the agent writes into a bind instead.
	mkdir -p "$d" && chmod 0777 "$d" && rm -f "$d/said"
	(as_user_exec "$SR" -q --net none --bind "$d" /out -- python3 -c 'import signal, sys, time
out = open("/out/said", "a", buffering=1)
for s in (signal.SIGTSTP, signal.SIGCONT):
    signal.signal(s, lambda n, f: print("got", signal.Signals(n).name, file=out))
print("ready", file=out)
time.sleep(2)' </dev/null >/dev/null 2>&1) &
	pid=$!
	SR_BG_PIDS="${SR_BG_PIDS:-} $pid"
	until_ok 10 grep -q ready "$d/said"
	kill -TSTP "$pid"
	until_ok 5 grep -q "got SIGTSTP" "$d/said"
	kill -CONT "$pid"
	wait "$pid"
	assert_eq "SIGTSTP and SIGCONT to sandbox-run reach the agent" "got SIGTSTP got SIGCONT" \
		"$(grep '^got' "$d/said" | tr '\n' ' ' | sed 's/ $//')"
}

# cgroup_left RECORD: the run's cgroup directories still on the host.
cgroup_left() {
	find /sys/fs/cgroup -name "sandbox-run-$(json_get "$1" sandbox_id)" 2>/dev/null
}

# A closed pipe is a failed write, never sandbox-run's death by SIGPIPE.
t_closed_pipes() {
	local f="$SR_OUT/pipe-$SR_AS.json" st
	as_user "$SR" --net none --result /dev/stdout -- true </dev/null 2>"$SR_TMP/pipe.err" | true
	st=${PIPESTATUS[0]}
	assert_eq "--result /dev/stdout to a closed pipe: the record is lost, so 125" 125 "$st"
	assert_eq "and says why" "sandbox-run: result /dev/stdout: Broken pipe" "$(tail -n 1 "$SR_TMP/pipe.err")"
	# stderr closed before the timeout's message (and, unprivileged, the start-up warnings).
	as_user "$SR" --net none --timeout 1 --result "$f" -- sleep 30 </dev/null 2>&1 >/dev/null | true
	st=${PIPESTATUS[0]}
	assert_eq "stderr a closed pipe: the timeout still ends the run with 124" 124 "$st"
	assert_eq "and a record" timeout "$(json_get "$f" status)"
	assert_eq "and no cgroup is left" "" "$(cgroup_left "$f")"
}

t_result_record() {
	local f="$SR_OUT/result-$SR_AS.json"
	sr --net none --memory 512M --pids 100 --disk 64M --timeout 30 --result "$f" -- sh -c 'head -c 1048576 /dev/zero > /tmp/f; exit 5'
	assert_eq "exit 5" 5 "$rc"
	check "the record is valid JSON" python3 -c 'import json,sys; json.load(open(sys.argv[1]))' "$f"
	assert_eq "version" 1 "$(json_get "$f" version)"
	assert_eq "status exited" exited "$(json_get "$f" status)"
	assert_eq "exit_code" 5 "$(json_get "$f" exit_code)"
	assert_eq "signal null" null "$(json_get "$f" signal)"
	assert_eq "limits.memory_bytes" 536870912 "$(json_get "$f" limits.memory_bytes)"
	assert_eq "limits.disk_bytes" 67108864 "$(json_get "$f" limits.disk_bytes)"
	assert_eq "limits.timeout_s" 30 "$(json_get "$f" limits.timeout_s)"
	assert_eq "limits.net" none "$(json_get "$f" limits.net)"
	assert_eq "enforced.disk" "$(disk_backing_of "$f")" "$(json_get "$f" enforced.disk)"
	assert_eq "profile" default "$(json_get "$f" profile)"
	local used
	used=$(json_get "$f" disk_used_bytes)
	check "disk_used_bytes counts what was written ($used)" test "$used" -ge 1048576 -a "$used" -lt 4194304
	check "sandbox_id is 32 hex digits" bash -c "[[ \$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))[\"sandbox_id\"])' '$f') =~ ^[0-9a-f]{32}$ ]]"
	check "no temporary file is left beside it" bash -c "[ \$(ls '$SR_OUT' | grep -c 'result-$SR_AS') = 1 ]"
}

t_result_through_links() {
	# The caller's links, there before the run, are followed: --result /dev/stdout as root
	# must not swap the host's /dev/stdout link for a file.
	local d="$SR_OUT/links-$SR_AS"
	mkdir -p "$d" && chmod 1777 "$d"
	ln -sfn /proc/self/fd/1 "$d/stdout"
	ln -sfn target.json "$d/link.json"
	sr --net none --result "$d/stdout" -- true
	assert_match "--result through a link to stdout writes the record there" '^\{"version":1,' "$out"
	check "the stdout link is still a link" test -L "$d/stdout"
	sr --net none --result "$d/link.json" -- true
	check "a link to a file: the link stays" test -L "$d/link.json"
	assert_eq "and its target holds the record" exited "$(json_get "$d/target.json" status)"
}

# The agent may write the record's directory (a bind of it): a link it
# plants at the name must not make sandbox-run, as the caller, overwrite
# another file once the run is over. The name is replaced instead.
t_result_link_planted_by_agent() {
	local d="$SR_OUT/planted-$SR_AS"
	mkdir -p "$d/out" && chmod 1777 "$d/out"
	echo precious >"$d/victim" && chmod 0666 "$d/victim"
	sr --net none --bind "$d/out" /out --result "$d/out/result.json" -- \
		ln -s "$d/victim" /out/result.json
	assert_eq "the agent planted its link" 0 "$rc"
	assert_eq "the file it points at is untouched" precious "$(cat "$d/victim")"
	check "the link was replaced by the record" test -f "$d/out/result.json" -a ! -L "$d/out/result.json"
	assert_eq "which is the run's" exited "$(json_get "$d/out/result.json" status)"
	# A "clean" step that removes the record's directory and makes it again.
	mkdir -p "$d/out2/build" && chmod 0777 "$d/out2" "$d/out2/build"
	sr --net none --bind "$d/out2" /out --result "$d/out2/build/result.json" -- \
		sh -c 'rm -rf /out/build && mkdir /out/build'
	assert_eq "a directory the agent made again gets the record" exited \
		"$(json_get "$d/out2/build/result.json" status)"
	# The directory replaced with a link: refused, nothing written through it.
	sr --net none --bind "$d/out2" /out --result "$d/out2/build/result.json" -- \
		sh -c "rm -rf /out/build && ln -s $d /out/build"
	assert_match "a link in place of its directory: not followed, said" \
		"symbolic link took the place of a directory" "$errout"
	check "nothing written where it points" test ! -e "$d/result.json"
}

# A cwd inside a tree the caller cannot search above it (sudo, setpriv):
# a relative --result is still written there.
t_result_unsearchable_parent() {
	[ "$SR_AS" = user ] || return 0
	local d="$SR_TMP/locked-$SR_AS" r
	mkdir -p "$d/inner" && chmod 0777 "$d/inner" && chmod 0700 "$d"
	r=$(cd "$d/inner" && as_user "$SR" -q --net none --result out.json -- true </dev/null 2>&1)
	assert_eq "a relative --result below a directory the caller cannot search" "" "$r"
	assert_eq "is written" exited "$(json_get "$d/inner/out.json" status)"
}

t_disk_limit() {
	sr --net none --disk 8M -- sh -c 'head -c 16777216 /dev/zero > /tmp/big; echo rc=$?'
	assert_match "writing past --disk fails with ENOSPC" "No space left on device" "$errout$out"
	# Files too, as mke2fs sizes ext4: an inode per 4 KiB below 512M, per 16 KiB above.
	sr --net none --disk 16M -- sh -c 'stat -f -c %c /tmp; cd /tmp; i=0
while [ $i -lt 5000 ]; do true >f$i || { echo "stopped at $i"; exit 9; }; i=$((i + 1)); done'
	assert_eq "--disk 16M holds 4096 files" 4096 "$(head -n 1 <<<"$out")"
	assert_eq "and the next one fails with ENOSPC, not the run" "9 yes" \
		"$rc $(grep -q 'No space left on device' <<<"$errout" && echo yes)"
	sr --net none -- stat -f -c %c /tmp
	assert_eq "the default 10G disk holds 655360 files" 655360 "$out"
	sr --net none --disk 0 --result "$SR_OUT/disk0-$SR_AS.json" -- true
	assert_eq "--disk 0: no limit, and enforced.disk says none" none "$(json_get "$SR_OUT/disk0-$SR_AS.json" enforced.disk)"
}

# Started with SIGCHLD ignored (inherited across exec): the kernel would
# reap PID 1 behind sandbox-run's back, which then waited for ever.
t_sigchld_ignored() {
	local rc
	as_user timeout -k 5 20 perl -e '$SIG{CHLD} = "IGNORE"; exec @ARGV or exit 126' \
		"$SR" --net none -- sh -c 'exit 7' </dev/null >/dev/null 2>&1
	rc=$?
	assert_eq "started with SIGCHLD ignored: the agent's status, not a hang" 7 "$rc"
}

for_each_user t_prompt_response t_node_python_agents t_exit_status t_exec_errors t_timeout t_cpu_time_counted \
	t_kill_supervisor t_signal_forwarding t_signal_forwarding_rest t_terminal_ctrl_c t_job_control t_group_signal t_end_request_unforgeable t_terminal_restored \
	t_closed_pipes t_result_record t_result_through_links \
	t_result_link_planted_by_agent t_result_unsearchable_parent t_disk_limit t_sigchld_ignored
done_testing
