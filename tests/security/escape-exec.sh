#!/usr/bin/env bash
# The escape battery against living sandboxes: what a process started by
# `exec` (a second one, a later one) could try against the keeper, PID 1,
# another sandbox, the caller and the host, as root and as a user.
. "$(dirname "$0")/../integration/libtest.sh"
. "$(dirname "$0")/../integration/libserve.sh"

need_probe

P=/probe/sr-probe
SECRET="hunter2-$$"

# new_sandbox ARGS...: one with the probe inside, its id in $sb.
new_sandbox() {
	sr create --net none --ro-bind "$PROBE_DIR" /probe --env "API_KEY=$SECRET" --timeout 120 "$@"
	sb=$out
}

# state_of ID: the sandbox's state directory.
state_of() {
	if [ "$SR_AS" = user ]; then echo "$SR_TMP/state-user/$1"; else echo "$SANDBOX_RUN_STATE_DIR/$1"; fi
}

keeper_of() {
	json_get "$(state_of "$1")/state.json" keeper_pid
}

t_keeper_out_of_reach() {
	local kp
	new_sandbox
	kp=$(keeper_of "$sb")
	sr exec "$sb" -- sh -c "ls /proc | grep -c '^[0-9]'; $P ptrace 1; $P open-exe 1; $P kill 1 KILL; $P kill $kp TERM"
	# PID 1, the exec's sh, its ls/grep, the probe: the keeper is not among them.
	assert_match "only the sandbox's own processes are in its /proc" "^[0-9]$" "$(sed -n 1p <<<"$out")"
	assert_eq "ptrace(PID 1): EPERM (non-dumpable)" "ptrace 1: EPERM" "$(sed -n 2p <<<"$out")"
	assert_match "/proc/1/exe (the runner on the host): EACCES, even O_PATH" \
		"open-exe 1 O_WRONLY: EACCES.open-exe 1 O_PATH: EACCES" "$(tr '\n' . <<<"$out")"
	assert_match "kill(1, SIGKILL): dropped by the kernel" "kill 1 KILL: ok" "$out"
	assert_match "the keeper's pid names nothing inside" "kill $kp TERM: ESRCH" "$out"
	sr exec "$sb" -- true
	assert_eq "and the sandbox lives on" 0 "$rc"
	check "the keeper too" kill -0 "$kp"
	sr exec "$sb" -- sh -c "test -e '$(dirname "$SANDBOX_RUN_STATE_DIR")' && echo visible; $P fds"
	assert_eq "the state directory is not there; no fd above 2 is open" "fds: none" "$out"
	sr rm "$sb"
}

t_no_secret_in_cmdlines() {
	local kp
	new_sandbox
	kp=$(keeper_of "$sb")
	sr exec "$sb" -- sh -c "tr -d '\\0' </proc/1/cmdline"
	assert_eq "PID 1's command line: its name, not the create command's" "sandbox-run-init" \
		"$(tr -d '\0' <<<"$out")"
	assert_no_match "the keeper's command line on the host shows no --env value" "$SECRET" \
		"$(tr '\0' ' ' </proc/"$kp"/cmdline)"
	sr exec "$sb" -- sh -c 'echo "$API_KEY"'
	assert_eq "while the exec's environment has it" "$SECRET" "$out"
	sr rm "$sb"
}

t_other_sandbox() {
	local a b
	new_sandbox
	a=$sb
	new_sandbox
	b=$sb
	sr exec "$a" -- sh -c 'echo a-secret > /workspace/s; echo a-secret > /tmp/s; echo a-secret > ~/s'
	sr exec "$b" -- sh -c 'cat /workspace/s /tmp/s ~/s 2>&1; grep -rl a-secret /workspace /tmp /home /dev/shm 2>/dev/null; ls /proc | grep -c "^[0-9]"'
	assert_match "another sandbox's files are not there" "No such file" "$out"
	assert_no_match "nowhere" "^/" "$out"
	sr exec "$b" -- "$P" connect-abstract "sr-$a"
	assert_match "no abstract socket of the other's (network namespaces apart)" "ECONNREFUSED" "$out"
	sr rm "$a" "$b"
}

# Nothing an exec starts outlives rm: a daemon, a double fork, a new session.
t_nothing_outlives_rm() {
	local marker="srex$$$SR_AS"
	new_sandbox
	sr exec "$sb" -- sh -c "(setsid sh -c 'trap \"\" HUP TERM; sleep 1000; :' $marker &) ; nohup sh -c 'sleep 1000; :' ${marker}b >/dev/null 2>&1 &"
	until_ok 5 running "$marker"
	check "the exec's daemons run" running "${marker}b"
	sr rm "$sb"
	assert_eq "rm: status 0" 0 "$rc"
	check "none of them outlives rm" not_running "$marker"
}

# An exec whose client goes away takes its process with it.
t_client_gone() {
	local pid marker="srcl$$$SR_AS"
	new_sandbox
	(as_user_exec "$SR" exec "$sb" -- sh -c 'sleep 1000; :' "$marker" </dev/null >/dev/null 2>&1) &
	pid=$!
	until_ok 10 as_user "$SR" exec "$sb" -- sh -c "ps -eo args | grep -q '[s]leep 1000'"
	kill -9 "$pid"
	wait "$pid" 2>/dev/null
	until_ok 10 _fails as_user "$SR" exec "$sb" -- sh -c "ps -eo args | grep -q '[s]leep 1000'"
	sr exec "$sb" -- sh -c "ps -eo args | grep -c '[s]leep 1000'"
	assert_eq "kill -9 of exec: its process is killed in the sandbox" 0 "$out"
	sr rm "$sb"
}

# An exec request sent, then hung up on before the keeper read it (a
# client killed at once; here the keeper is stopped meanwhile, so that it
# surely comes to read the request after the hang-up): the process was
# started for nobody, ran until the keeper saw the hang-up, and was killed
# then -- having done whatever it could. Now it is not started. Each
# process started inside takes the next pid of the sandbox's namespace:
# two execs around the five hung-up ones tell how many started.
t_exec_hung_up() {
	local kp first last
	new_sandbox
	kp=$(keeper_of "$sb")
	sr exec "$sb" -- sh -c 'echo $$'
	first=$out
	as_user kill -STOP "$kp"
	as_user /usr/bin/python3 - "$(state_of "$sb")/ctl" >"$SR_OUT/hung-up" 2>&1 <<'PY'
import array, json, os, socket, sys
null = os.open("/dev/null", os.O_RDWR)
for i in range(5):
    c = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    c.connect(sys.argv[1])
    req = {"op": "exec", "argv": ["sh", "-c", "touch /tmp/started-%d" % i]}
    c.sendmsg([json.dumps(req).encode()],
              [(socket.SOL_SOCKET, socket.SCM_RIGHTS, array.array("i", [null] * 3))])
    c.close()
print("sent")
PY
	as_user kill -CONT "$kp"
	assert_eq "five exec requests sent and hung up on, the keeper stopped" "sent" "$(cat "$SR_OUT/hung-up")"
	sr exec "$sb" -- sh -c 'echo $$; ls /tmp'
	last=$(head -1 <<<"$out")
	assert_eq "none of them started: the next exec's pid follows the one before" \
		"$((first + 1))" "$last"
	assert_eq "nothing of them ran" "" "$(sed 1d <<<"$out")"
	sr rm "$sb"
}

# The pty of exec -t is the sandbox's: TIOCSTI is refused, the caller's terminal untouched.
t_tty_contained() {
	new_sandbox
	said=$(as_user script -qec "$SR exec -t $sb -- $P tiocsti" /dev/null </dev/null)
	assert_match "TIOCSTI on exec -t's terminal (fd 0, /dev/tty): EPERM" "TIOCSTI fd 0: EPERM.*TIOCSTI /dev/tty: EPERM" "$(tr "\\r\\n" ".." <<<"$said")"
	sr rm "$sb"
}

# Nothing of the caller's stays in the sandbox once exec returns: its
# pipes are relayed, not passed, so what the process leaves running (or
# another exec's process, with pidfd_getfd) cannot keep writing to the
# caller's pipeline or reading its input.
t_stdio_not_kept() {
	local fifo="$SR_TMP/exec-in" wpid got
	new_sandbox
	got=$(as_user "$SR" exec "$sb" -- sh -c '(sleep 1; echo LATE) & echo early' </dev/null 2>/dev/null | cat)
	assert_eq "exec's stdout, a pipe: only what came before the process ended" early "$got"
	rm -f "$fifo" && mkfifo -m 0666 "$fifo"
	(
		exec 3>"$fifo"
		echo one >&3
		sleep 1.5
		echo two >&3
	) 2>/dev/null &
	wpid=$!
	as_user "$SR" exec -i "$sb" -- sh -c 'exec 3<&0; cat <&3 >/tmp/got & sleep 0.5' <"$fifo" >/dev/null 2>&1
	wait "$wpid" 2>/dev/null
	sr exec "$sb" -- cat /tmp/got
	assert_eq "exec -i from a pipe: what it left running got only what came meanwhile" one "$out"
	rm -f "$fifo"
	sr rm "$sb"
}

# pid1_of SB: the host's pid of the sandbox's PID 1, its keeper's only child.
pid1_of() {
	local kp
	kp=$(keeper_of "$1")
	cut -d" " -f1 "/proc/$kp/task/$kp/children"
}

# new_sandbox_pid1_stopped: new_sandbox, its PID 1 stopped (SIGSTOP) and
# its pid in pid1 (the caller's local), for the kill -CONT that resumes it.
new_sandbox_pid1_stopped() {
	new_sandbox
	pid1=$(pid1_of "$sb")
	as_user kill -STOP "$pid1"
}

# stopped_before_exec KEEPER: a child of PID 1 stopped before its exec
# (still PID 1's image), so that PID 1 waits in its vfork.
stopped_before_exec() {
	local init c
	init=$(cut -d' ' -f1 /proc/"$1"/task/*/children 2>/dev/null | head -1)
	[ -n "$init" ] || return 1
	for c in $(cat /proc/"$init"/task/*/children 2>/dev/null); do
		[ "$(awk '/^State:/ {print $2}' /proc/"$c"/status 2>/dev/null)" = T ] &&
			[ "$(cat /proc/"$c"/comm)" = "$(cat /proc/"$init"/comm)" ] && return 0
	done
	return 1
}

# The agent can keep PID 1 from answering: it may stop a process PID 1 is
# starting (every process inside is the same uid), and PID 1 then waits
# for its exec for ever. Whatever it does, the keeper answers, a waiting
# exec ends on its --timeout or a signal, and rm and the deadline end the
# sandbox (an outside review found the keeper frozen, past its deadline).
t_keeper_not_frozen() {
	local d="$SR_OUT/frozen" kp stopper path rc try
	path=$(printf '/nonexistent/%d:' $(seq 300))/usr/bin
	# The catch is a race the agent wins most of the time, not always (a
	# loaded host may run the victim to its exec first): a few tries.
	for try in 1 2 3 4 5; do
		rm -rf "$d" && mkdir -p "$d" && chmod 0777 "$d"
		new_sandbox --bind "$d" /out
		kp=$(keeper_of "$sb")
		(as_user_exec "$SR" exec "$sb" -- $P stop-next /out/ready </dev/null >"$d/stopper" 2>&1) &
		stopper=$!
		until_ok 10 test -e "$d/ready"
		# The next process made inside is the victim: a long PATH keeps it
		# before its exec a little longer.
		as_user timeout -s KILL 3 "$SR" exec --env "PATH=$path" "$sb" -- true </dev/null >/dev/null 2>&1
		until_ok 5 grep -q stopped "$d/stopper"
		stopped_before_exec "$kp" && break
		sr rm -f "$sb"
		wait "$stopper" 2>/dev/null
	done
	if ! stopped_before_exec "$kp"; then
		skip "the keeper while PID 1 waits for ever" "5 tries did not stop a process before its exec"
		return
	fi
	ok "the agent stopped a process PID 1 was starting, before its exec (try $try)"
	as_user timeout -s KILL 20 "$SR" exec --timeout 1 "$sb" -- true </dev/null >/dev/null 2>&1
	assert_eq "exec --timeout 1 meanwhile: 124, though PID 1 never started it" 124 "$?"
	as_user timeout -s TERM 3 "$SR" exec "$sb" -- true </dev/null >/dev/null 2>&1
	assert_eq "an exec that waits ends on SIGTERM (timeout(1)'s 124, not a kill)" 124 "$?"
	as_user timeout -s KILL 20 "$SR" inspect "$sb" </dev/null >"$d/inspect" 2>/dev/null
	rc=$?
	assert_eq "inspect answers, without PID 1's count" "0 null" "$rc $(json_get "$d/inspect" usage.processes)"
	as_user timeout -s KILL 20 "$SR" rm "$sb" </dev/null >/dev/null 2>&1
	assert_eq "rm ends the sandbox" 0 "$?"
	check "its keeper and every process with it" until_ok 10 _fails kill -0 "$kp"
	wait "$stopper" 2>/dev/null
	rm -rf "$d"
}

# Clients of the user's own cannot block the keeper: one that floods it
# with requests and reads no answer, hundreds that connect and say
# nothing. The keeper drops the one and makes room among the others.
t_keeper_clients() {
	local log="$SR_OUT/clients" holder
	new_sandbox
	: >"$log" # the last run's "ready" is not this one's
	as_user /usr/bin/python3 - "$(state_of "$sb")/ctl" >"$log" 2>&1 <<'PY' &
import socket, sys, time
path = sys.argv[1]
flood = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
flood.connect(path)
flood.setblocking(False)
sent = 0
try:
    for _ in range(5000):
        flood.send(b'{"op":"inspect"}')
        sent += 1
except OSError:
    pass
idle = []
for _ in range(600):
    c = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    c.connect(path)
    idle.append(c)
print("ready", sent, len(idle), flush=True)
time.sleep(60)
PY
	holder=$!
	until_ok 20 grep -q ready "$log"
	as_user timeout -s KILL 10 "$SR" timeout "$sb" 10m </dev/null >/dev/null 2>&1
	assert_eq "timeout answers beside a client that reads nothing ($(cat "$log"))" 0 "$?"
	as_user timeout -s KILL 10 "$SR" inspect "$sb" </dev/null >/dev/null 2>&1
	assert_eq "inspect answers beside 600 idle connections" 0 "$?"
	as_user timeout -s KILL 10 "$SR" exec "$sb" -- true </dev/null >/dev/null 2>&1
	assert_eq "and exec" 0 "$?"
	kill "$holder" 2>/dev/null
	wait "$holder" 2>/dev/null
	sr rm "$sb"
}

# Requests under way kept their slot among the keeper's clients (512, and
# a reserve of 32 for when none is idle): 544 execs of the user's filled
# both, and every connection after them was closed unread -- rm's too, so
# the owner could not end the sandbox (nor inspect it) until some ended.
# Now the 513th exec is refused (EAGAIN), and rm and inspect get through.
t_keeper_clients_busy() {
	local log="$SR_OUT/clients-busy" holder kp
	new_sandbox
	: >"$log"
	kp=$(keeper_of "$sb")
	(as_user_exec /usr/bin/python3 - "$(state_of "$sb")/ctl" >"$log" 2>&1 <<'PY') &
import array, json, os, socket, sys, time
null = os.open("/dev/null", os.O_RDWR)
held, said = [], {}
for _ in range(560):
    c = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    try:
        c.connect(sys.argv[1])
        c.sendmsg([b'{"op": "exec", "argv": ["sleep", "1000"]}'],
                  [(socket.SOL_SOCKET, socket.SCM_RIGHTS, array.array("i", [null] * 3))])
        c.settimeout(10)
        j = json.loads(c.recv(65536) or b'{"hung up": 1}')
        what = "started" if j.get("ok") else "errno %s" % j.get("errno", "?")
    except OSError as e:
        what = "closed (%s)" % e.strerror
    said[what] = said.get(what, 0) + 1
    if what == "started":
        held.append(c)
print("ready", ", ".join("%s %d" % kv for kv in sorted(said.items())), flush=True)
time.sleep(60)
PY
	holder=$!
	until_ok 30 grep -q ready "$log"
	assert_eq "560 execs at once: 512 started, the rest refused (EAGAIN), none closed unread" \
		"ready errno 11 48, started 512" "$(cat "$log")"
	as_user timeout -s KILL 10 "$SR" inspect "$sb" </dev/null >/dev/null 2>&1
	assert_eq "inspect answers beside them" 0 "$?"
	as_user timeout -s KILL 10 "$SR" rm "$sb" </dev/null >/dev/null 2>&1
	assert_eq "and rm ends the sandbox" 0 "$?"
	check "its keeper and every process with it" until_ok 10 _fails kill -0 "$kp"
	kill "$holder" 2>/dev/null
	wait "$holder" 2>/dev/null
}

# Under a low limit on fds (ulimit -n 256, which the keeper inherits as its
# hard limit), idle clients are served all the same: poll(2) refuses more
# entries than RLIMIT_NOFILE, and the keeper once gave every client two,
# its timer's -1 among them: 130 idle connections had it fail every poll,
# kill the sandbox and spin.
t_keeper_clients_fd_limit() {
	local log="$SR_OUT/clients-limit" holder kp
	sb=$(ulimit -n 256 && as_user "$SR" create --net none --timeout 120 </dev/null 2>/dev/null)
	kp=$(keeper_of "$sb")
	: >"$log" # the last run's "ready" is not this one's
	(as_user_exec /usr/bin/python3 - "$(state_of "$sb")/ctl" >"$log" 2>&1 <<'PY') &
import socket, sys, time
idle = []
for _ in range(200):
    c = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    c.connect(sys.argv[1])
    idle.append(c)
print("ready", len(idle), flush=True)
time.sleep(30)
PY
	holder=$!
	check "200 connections taken by a keeper of 256 fds at most" until_ok 20 grep -q ready "$log"
	as_user timeout -s KILL 10 "$SR" exec "$sb" -- true </dev/null >/dev/null 2>&1
	assert_eq "exec answers beside them" 0 "$?"
	kill "$holder" 2>/dev/null
	wait "$holder" 2>/dev/null
	as_user timeout -s KILL 10 "$SR" rm "$sb" </dev/null >/dev/null 2>&1
	assert_eq "rm too" 0 "$?"
	check "the keeper ends with its sandbox" until_ok 10 _fails kill -0 "$kp"
}

# One request at a time on a keeper's connection: an exec asked there
# while an inspect waits for PID 1's count is refused. Taken, it once
# shared the connection's one timer with the inspect, whose answer closed
# it: the exec's --timeout was gone and the process ran on.
t_keeper_one_request() {
	local pid1
	# PID 1 stopped, the inspect waits for its count (a second) whatever
	# the keeper reads first: the exec surely comes while it is under way.
	new_sandbox_pid1_stopped
	as_user /usr/bin/python3 - "$(state_of "$sb")/ctl" >"$SR_OUT/one-request" 2>&1 <<'PY'
import array, json, os, socket, sys, time
c = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
c.connect(sys.argv[1])
null = os.open("/dev/null", os.O_RDWR)
c.send(b'{"op": "inspect"}')
exec_req = {"op": "exec", "argv": ["sleep", "5"], "timeout_ms": 500}
c.sendmsg([json.dumps(exec_req).encode()],
          [(socket.SOL_SOCKET, socket.SCM_RIGHTS, array.array("i", [null] * 3))])
c.settimeout(10)
t0 = time.monotonic()
while True:
    try:
        m = c.recv(1 << 20)
    except socket.timeout:
        print("no answer")
        break
    if not m:
        print("hung up")
        break
    j = json.loads(m)
    if j.get("ok") is False:
        print("refused", j.get("errno"))
        break
    if j.get("event") == "exit":
        print("exit", j["exit_code"], "after %.1f s" % (time.monotonic() - t0))
        break
PY
	as_user kill -CONT "$pid1"
	assert_eq "exec while an inspect waits on the connection: refused (EBUSY)" "refused 16" \
		"$(tail -1 "$SR_OUT/one-request")"
	sr exec "$sb" -- true
	assert_eq "the sandbox serves on" 0 "$rc"
	sr rm "$sb"
}

# The control socket is the user's API, not only the CLI's: a terminal
# size a struct winsize cannot hold, or half a size, is refused (EINVAL),
# as any other malformed request. It was cut to 16 bits: 65536 rows were 0 (unknown),
# -1 were 65535.
t_keeper_pty_size() {
	new_sandbox
	as_user /usr/bin/python3 - "$(state_of "$sb")/ctl" >"$SR_OUT/pty-size" 2>&1 <<'PY'
import json, socket, sys
for rows, cols in ((65536, 80), (-1, 80), (24, 1 << 40), ("24", 80), (24, None), (None, 80),
                   (None, None), (24, 80)):
    c = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    c.connect(sys.argv[1])
    c.settimeout(10)
    # pty 28: stdin, stdout and stderr on a terminal (SR_SPAWN_PTY), no fds passed.
    # None: the key left out.
    req = {"op": "exec", "argv": ["true"], "pty": 28}
    req.update({k: v for k, v in (("rows", rows), ("cols", cols)) if v is not None})
    c.send(json.dumps(req).encode())
    j = json.loads(c.recv(1 << 16))
    print("%r,%r:" % (rows, cols), "ok" if j.get("ok") else "refused %s" % j.get("errno"))
    # An exec that started: its end, before the next.
    while j.get("ok") and j.get("event") != "exit":
        j = json.loads(c.recv(1 << 16))
    c.close()
PY
	assert_eq "rows or cols beyond 0..65535, not a number, or one without the other: refused; 24x80 and neither run" \
		"65536,80: refused 22|-1,80: refused 22|24,1099511627776: refused 22|'24',80: refused 22|24,None: refused 22|None,80: refused 22|None,None: ok|24,80: ok" \
		"$(paste -sd'|' "$SR_OUT/pty-size")"
	sr exec "$sb" -- true
	assert_eq "the sandbox serves on" 0 "$rc"
	sr rm "$sb"
}

# A request to PID 1 is a message on its socket, which holds about 90:
# a burst of workers (serve writes 128 files at once) filled it while PID
# 1 forked them, and a request that found no room within a second failed
# as if the agent kept PID 1 busy ("cp: Resource temporarily unavailable",
# 429 through serve). The keeper sends them only while that socket has room,
# the rest waiting their turn. PID 1 stopped a while makes the burst sure.
t_keeper_worker_burst() {
	local pid1
	new_sandbox_pid1_stopped
	as_user /usr/bin/python3 - "$(state_of "$sb")/ctl" "$pid1" >"$SR_OUT/burst" 2>&1 <<'PY'
import array, json, os, signal, socket, sys, time
conns = []
for i in range(120):
    c = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    c.connect(sys.argv[1])
    r, w = os.pipe()
    os.write(w, b"x")
    os.close(w)
    req = {"op": "file_write", "path": "/tmp/burst/f%d" % i}
    c.sendmsg([json.dumps(req).encode()],
              [(socket.SOL_SOCKET, socket.SCM_RIGHTS, array.array("i", [r]))])
    os.close(r)
    conns.append(c)
time.sleep(2.5)
os.kill(int(sys.argv[2]), signal.SIGCONT)
answers = {}
for c in conns:
    c.settimeout(30)
    try:
        j = json.loads(c.recv(1 << 16))
        a = "ok" if j.get("ok") else "errno %s" % j.get("errno")
    except socket.timeout:
        a = "no answer"
    answers[a] = answers.get(a, 0) + 1
print(" ".join("%s:%d" % kv for kv in sorted(answers.items())))
PY
	as_user kill -CONT "$pid1"
	assert_eq "120 files written at once, PID 1 stopped meanwhile: each ok" "ok:120" \
		"$(tail -1 "$SR_OUT/burst")"
	sr exec "$sb" -- sh -c 'ls /tmp/burst | wc -l'
	assert_eq "and 120 files there" 120 "$out"
	sr rm "$sb"
}

# data_dir: where the round's snapshots are kept.
data_dir() {
	if [ "$SR_AS" = user ]; then echo "$SR_TMP/data-user"; else echo "$SANDBOX_RUN_DATA_DIR"; fi
}

# A snapshot's worker writes straight into a file in the host's data
# directory: one 8 MB file under 13 names was 13 copies, and more links
# filled the host's disk from a sandbox of 50 MB. Hard links are links in
# a snapshot now, stored once; and the file's data is bounded by the
# disk limit whatever else makes the walk meet data twice (the bound:
# test-archive.c test_write_bound).
t_snapshot_bounded() {
	local d f
	d=$(data_dir)
	new_sandbox --disk 50M
	sr exec "$sb" -- sh -c 'head -c 8M /dev/urandom >/tmp/f && mkdir /tmp/l &&
		for i in 1 2 3 4 5 6 7 8 9 10 11 12; do ln /tmp/f /tmp/l/$i || exit 1; done'
	assert_eq "the agent links one 8 MB file 12 times (8 MB of its disk)" 0 "$rc"
	sr snapshot "$sb" "links-$SR_AS"
	assert_eq "snapshot: made" 0 "$rc"
	f=$(find "$d/snapshots/links-$SR_AS" -name 'files.tar*' 2>/dev/null | head -1)
	check "holding the file once (under 12 MB, not 104)" test "$(stat -c %s "$f" 2>/dev/null || echo 999999999)" -lt 12000000
	sr rm "$sb"
	new_sandbox --from "links-$SR_AS"
	sr exec "$sb" -- stat -c %h /tmp/f
	assert_eq "restored: one file of 13 names" 13 "$out"
	sr rm "$sb"
	sr snapshots rm "links-$SR_AS"
	check "nothing of it left in the data directory" until_ok 5 \
		test -z "$(find "$d/snapshots" -mindepth 1 -maxdepth 1 2>/dev/null)"
}

# start_mover N_NAMES N_DIRS: in $sb, /tmp/x/T holds N_NAMES names of one
# empty file (no inode, no disk), beside 2 * N_DIRS empty directories; each
# time a walk opens T, T moves into a directory the walk has not opened
# yet (inotify says when, and the file system's order which), to be
# walked again. Its pid in $mover; it ends once /tmp/x is removed.
start_mover() {
	cat >"$SR_TMP/mover.py" <<'PY'
import ctypes, os, signal, struct, sys, time
base, n_names, n_dirs = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
# Directories made before T and after it: whichever order the file
# system lists them in (tmpfs: the newest first), n_dirs come after T.
os.makedirs(base)
for i in range(n_dirs):
    os.mkdir(base + "/E%05d" % i)
os.mkdir(base + "/T")
for i in range(n_dirs, 2 * n_dirs):
    os.mkdir(base + "/E%05d" % i)
# ext4 (root's disk here) lists in the order of a hash of each name,
# seeded per file system: T could come last, or next to last, with no
# directory after it to be moved into (so the walk met it once, both
# tests of a run alike). Renamed, T takes another place: until n_dirs
# come after it.
t = "T"
def after(name):
    names = os.listdir(base)
    return len(names) - 1 - names.index(name)
for k in range(100):
    if after(t) >= n_dirs:
        break
    os.rename(base + "/" + t, base + "/T%d" % k)
    t = "T%d" % k
else:
    sys.exit("T never came before %d directories" % n_dirs)
open(base + "/" + t + "/f", "w").close()
for i in range(n_names):
    os.link(base + "/" + t + "/f", base + "/%s/%s%06d" % (t, "n" * 200, i))
libc = ctypes.CDLL(None, use_errno=True)
fd = libc.inotify_init()
if fd < 0:
    sys.exit("inotify_init: " + os.strerror(ctypes.get_errno()))
IN_OPEN, IN_ONLYDIR = 0x20, 0x01000000
t_wd = libc.inotify_add_watch(fd, (base + "/" + t).encode(), IN_OPEN | IN_ONLYDIR)
unopened = {}
for n in os.listdir(base):
    if n.startswith("E"):
        unopened[libc.inotify_add_watch(fd, (base + "/" + n).encode(), IN_OPEN | IN_ONLYDIR)] = n
# The walk opens directories in this order (the file system's).
order = [n for n in os.listdir(base) if n.startswith("E")]

def events(block):
    """The opens told so far (None: none yet); True if T's is among them."""
    os.set_blocking(fd, block)
    try:
        buf = os.read(fd, 65536)
    except BlockingIOError:
        return None
    off, t_opened = 0, False
    while off < len(buf):
        wd, mask, cookie, ln = struct.unpack_from("iIII", buf, off)
        off += 16 + ln
        if ln == 0 and wd == t_wd:
            t_opened |= bool(mask & IN_OPEN)
        elif ln == 0:
            unopened.pop(wd, None)
    return t_opened

def others_stopped():
    """Every process here but PID 1 and this one is stopped (or gone)."""
    for pid in filter(str.isdigit, os.listdir("/proc")):
        if int(pid) in (1, os.getpid()):
            continue
        try:
            with open("/proc/%s/stat" % pid) as f:
                if f.read().rsplit(")", 1)[1].split()[0] not in "tTZX":
                    return False
        except OSError:
            pass
    return True

print("ready", flush=True)
where = base + "/" + t
while unopened:
    if not events(True):
        continue
    # The agent holds the walk still (it may stop its worker: the same
    # uid; kill(-1) is every process here but PID 1 and itself) while it
    # reads what the walk opened meanwhile and moves T: on a loaded host
    # the walk was otherwise quicker than this, and met T once (a flake).
    os.kill(-1, signal.SIGSTOP)
    while not others_stopped():
        time.sleep(0.001)
        os.kill(-1, signal.SIGSTOP)  # and those started meanwhile
    try:
        while events(False) is not None:
            pass
        if unopened:
            nxt = "%s/%s/%s" % (base, next(n for n in order if n in set(unopened.values())), t)
            os.rename(where, nxt)
            where = nxt
    except OSError:
        break  # the tree is being removed: done
    finally:
        os.kill(-1, signal.SIGCONT)
PY
	chmod 0644 "$SR_TMP/mover.py"
	sr cp "$SR_TMP/mover.py" "$sb:/tmp/mover.py"
	: >"$SR_OUT/mover-$SR_AS" # not the last one's "ready"
	(as_user_exec "$SR" exec "$sb" -- python3 /tmp/mover.py /tmp/x "$1" "$2" </dev/null \
		>"$SR_OUT/mover-$SR_AS" 2>&1) &
	mover=$!
	check "the agent's mover is ready" until_ok 30 grep -q ready "$SR_OUT/mover-$SR_AS"
}

# stop_mover: /tmp/x removed, the mover ends.
stop_mover() {
	sr exec "$sb" -- rm -r /tmp/x
	check "the mover ends" until_ok 10 sh -c "! kill -0 $mover 2>/dev/null"
	kill -9 "$mover" 2>/dev/null
	wait "$mover" 2>/dev/null
}

# The snapshot's names cost no data, and the agent can make the walk meet
# as many as it likes: a directory of 2,000 names of one empty file (no
# inode, no disk), moved into a directory the walk has not opened yet
# each time the walk opens it (inotify says when), was walked once for
# each of 60 such directories, 120,000 entries into the host's data
# directory from a sandbox of 4 MB that held 2,120 names (877 walks of
# 20,000, 91 MB of snapshot from a 50 MB disk, had it more directories).
# The entries are bounded as the data is, each at 512 bytes and its
# names' length.
t_snapshot_names_bounded() {
	local d mover
	d=$(data_dir)
	new_sandbox --disk 4M
	start_mover 2000 60
	sr snapshot "$sb" "names-$SR_AS"
	assert_eq "snapshot of a tree moved ahead of its walk: refused (125)" 125 "$rc"
	assert_match "saying why" \
		"^sandbox-run: snapshot: archive tmp/x/E[0-9]+/T[0-9]*/n+[0-9]+: more than 4194304 bytes of entries \(a 512-byte header and its names each\), the sandbox's disk limit$" \
		"$errout"
	check "nothing left in the data directory" until_ok 5 \
		test -z "$(find "$d/snapshots" -mindepth 1 -maxdepth 1 2>/dev/null)"
	stop_mover
	sr exec "$sb" -- sh -c 'mkdir /tmp/l && touch /tmp/l/f &&
		for i in $(seq 2000); do ln /tmp/l/f /tmp/l/$i || exit 1; done'
	sr snapshot "$sb" "names-$SR_AS"
	assert_eq "the same 2,001 names, unmoved: a snapshot" 0 "$rc"
	sr snapshots rm "names-$SR_AS"
	sr rm "$sb"
}

# The same against cp out: the host made a name for each entry the walk
# met, up to 10 million, whatever the sandbox's disk limit: from a
# sandbox of 4 MB that held 2,050 names, tens of thousands of links on
# the host, until its file system's link limit ("Too many links"); empty
# files or directories moved so are a host inode (and a block) each. The
# entries are bounded on the host as the data is.
t_cp_names_bounded() {
	local dst="$SR_OUT/names-$SR_AS" mover
	rm -rf "$dst"
	mkdir -p "$dst"
	own "$dst"
	new_sandbox --disk 4M
	start_mover 2000 25
	sr cp "$sb:/tmp/x" "$dst/x"
	assert_eq "cp out of a tree moved ahead of its walk: refused (125)" 125 "$rc"
	assert_match "saying why" \
		"^sandbox-run: cp: extract x/E[0-9]+/T[0-9]*/n+[0-9]+: more than 4M, the sandbox's disk limit \(--max-size raises it\), in entries \(512 bytes and their names each\)$" \
		"$errout"
	assert_eq "nothing left at the destination" "" "$(ls -A "$dst")"
	stop_mover
	sr exec "$sb" -- sh -c 'mkdir /tmp/l && touch /tmp/l/f &&
		for i in $(seq 2000); do ln /tmp/l/f /tmp/l/$i || exit 1; done'
	sr cp "$sb:/tmp/l" "$dst/l"
	assert_eq "the same 2,001 names, unmoved: copied" "0 2001" "$rc $(stat -c %h "$dst/l/f")"
	sr rm "$sb"
	rm -rf "$dst"
}

# Workers that do not end -- a file_read whose reader takes nothing (a
# download through serve, paused on a slow client, has no idle timeout),
# a worker the agent stopped -- hold none of the sandbox's other requests:
# only room on PID 1's socket is waited for, never a worker's end (32
# workers at a time, as the keeper once started, let 32 such reads stall
# every other file request of the sandbox for as long as they lasted).
t_keeper_workers_held() {
	new_sandbox
	sr exec "$sb" -- sh -c 'head -c 1048576 /dev/zero >/tmp/big'
	as_user /usr/bin/python3 - "$(state_of "$sb")/ctl" >"$SR_OUT/held" 2>&1 <<'PY'
import array, json, os, socket, sys, time
def work(op, path, fd):
    c = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    c.connect(sys.argv[1])
    c.sendmsg([json.dumps({"op": op, "path": path}).encode()],
              [(socket.SOL_SOCKET, socket.SCM_RIGHTS, array.array("i", [fd]))])
    os.close(fd)
    return c
held = []
for i in range(40):
    r, w = os.pipe()
    held.append((work("file_read", "/tmp/big", w), r))
time.sleep(1)
r, w = os.pipe()
os.write(w, b"x")
os.close(w)
c = work("file_write", "/tmp/after", r)
c.settimeout(10)
try:
    j = json.loads(c.recv(1 << 16))
    print("ok" if j.get("ok") else "errno %s" % j.get("errno"))
except socket.timeout:
    print("no answer")
PY
	assert_eq "40 reads that nobody reads on: a write beside them is answered" "ok" \
		"$(tail -1 "$SR_OUT/held")"
	sr exec "$sb" -- cat /tmp/after
	assert_eq "and done" x "$out"
	sr rm "$sb"
}

# A snapshot that waits for room on PID 1's socket (PID 1 kept from
# reading: stopped here; the agent can stop a process PID 1 starts) gives
# up after its --idle-timeout as a snapshot whose worker writes nothing:
# waiting for its turn, it once waited for ever.
t_snapshot_waits_bounded() {
	local pid1
	new_sandbox_pid1_stopped
	as_user /usr/bin/python3 - "$(state_of "$sb")/ctl" >"$SR_OUT/snap-waits" 2>&1 <<'PY'
import array, json, os, socket, sys, time
conns = []
for i in range(120):
    c = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    c.connect(sys.argv[1])
    r, w = os.pipe()
    os.close(w)
    c.sendmsg([json.dumps({"op": "file_write", "path": "/tmp/f%d" % i}).encode()],
              [(socket.SOL_SOCKET, socket.SCM_RIGHTS, array.array("i", [r]))])
    os.close(r)
    conns.append(c)
time.sleep(0.5)
c = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
c.connect(sys.argv[1])
c.send(json.dumps({"op": "snapshot", "name": "waits", "idle_ms": 1500}).encode())
c.settimeout(10)
t0 = time.monotonic()
try:
    j = json.loads(c.recv(1 << 16))
    print("errno %s after %d s: %s" % (j.get("errno"), round(time.monotonic() - t0), j.get("error")))
except socket.timeout:
    print("no answer")
PY
	as_user kill -CONT "$pid1"
	assert_match "a snapshot waiting for PID 1: ETIMEDOUT after its idle timeout" \
		"^errno 110 after [123] s: snapshot: PID 1 took no request for 1500ms" \
		"$(tail -1 "$SR_OUT/snap-waits")"
	check "its files removed" \
		test -z "$(find "$(data_dir)/snapshots" -mindepth 1 -maxdepth 1 -name 'waits*' 2>/dev/null)"
	sr rm "$sb"
}

# A connection to a published port is a request to PID 1 (CONNECT), and
# anyone on the host may make one. While PID 1's socket had no room (PID 1
# kept from reading: stopped here; the agent can stop a process PID 1
# starts), each accepted connection held the keeper's loop for up to a
# second waiting for some (SEND_WAIT_MS): every other client, rm among
# them, waited behind a stream of connections. They now wait in the
# listening socket's backlog until PID 1 reads again.
t_port_waits_for_room() {
	local pid1 port
	port=$((22000 + ($$ % 5000) * 2)) && [ "$SR_AS" = root ] || port=$((port + 1))
	new_sandbox
	sr port "$sb" "$port"
	pid1=$(pid1_of "$sb")
	as_user kill -STOP "$pid1"
	as_user /usr/bin/python3 - "$(state_of "$sb")/ctl" "${out##*:}" >"$SR_OUT/port-room" 2>&1 <<'PY'
import json, socket, sys, time
conns = []
for i in range(160):
    s = socket.socket()
    s.setblocking(False)
    try:
        s.connect(("127.0.0.1", int(sys.argv[2])))
    except BlockingIOError:
        pass
    conns.append(s)
time.sleep(0.5)
worst = 0
for i in range(5):
    c = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    c.connect(sys.argv[1])
    t0 = time.monotonic()
    c.send(json.dumps({"op": "timeout", "ms": 100000}).encode())
    c.settimeout(30)
    c.recv(1 << 16)
    worst = max(worst, time.monotonic() - t0)
    c.close()
print("answered within %s" % ("0.5 s" if worst < 0.5 else "%.1f s" % worst))
PY
	as_user kill -CONT "$pid1"
	assert_eq "160 connections to a port while PID 1 reads nothing: the keeper answers at once" \
		"answered within 0.5 s" "$(tail -1 "$SR_OUT/port-room")"
	sr exec "$sb" -- true
	assert_eq "PID 1 reading again, the sandbox is served" 0 "$rc"
	sr rm "$sb"
	assert_eq "and removed" 0 "$rc"
}

# 256 connections of another user to a published port (open to every
# user): the owner's still come in, into a reserve of their own.
t_port_owner_reserve() {
	local port url
	port=$((24000 + ($$ % 5000) * 2)) && [ "$SR_AS" = root ] || port=$((port + 1))
	new_sandbox
	sr exec "$sb" -- sh -c "setsid python3 -c '
import socket
s = socket.socket()
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind((\"127.0.0.1\", $port))
s.listen(1024)
held = []
while True:
    c, _ = s.accept()
    c.sendall(b\"reached\\n\")
    held.append(c)
' >/dev/null 2>&1 &"
	until_ok 10 as_user "$SR_BIN" exec "$sb" -- sh -c "grep -qi ':$(printf %04X "$port") 00000000:0000 0A' /proc/net/tcp"
	sr port "$sb" "$port"
	url=$out
	# The other user: sr-test in root's round, root in the user's.
	: >"$SR_OUT/port-others" # the last round's answer is not this one's
	if [ "$SR_AS" = root ]; then
		setpriv --reuid="$SR_TEST_USER" --regid="$SR_TEST_USER" --clear-groups --inh-caps=-all \
			/usr/bin/python3 - "${url##*:}" >"$SR_OUT/port-others" 2>&1 &
	else
		/usr/bin/python3 - "${url##*:}" >"$SR_OUT/port-others" 2>&1 &
	fi <<'PY'
import socket, sys, time
port = int(sys.argv[1])
held, reached = [], 0
for i in range(256):
    s = socket.create_connection(("127.0.0.1", port), timeout=10)
    if s.makefile().readline() == "reached\n":
        reached += 1
    held.append(s)
s = socket.create_connection(("127.0.0.1", port), timeout=10)
print("relayed %d, one more: %r" % (reached, s.makefile().readline()), flush=True)
time.sleep(30)
PY
	local others=$!
	until_ok 30 grep -q '^relayed' "$SR_OUT/port-others"
	assert_eq "another user's 256 connections relayed, the next closed" \
		"relayed 256, one more: ''" "$(cat "$SR_OUT/port-others")"
	assert_eq "the owner's connection comes in all the same" "reached" \
		"$(as_user /usr/bin/python3 -c 'import socket, sys
s = socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=10)
print(s.makefile().readline().strip())' "${url##*:}" 2>&1)"
	kill "$others"
	wait "$others" 2>/dev/null
	sr rm "$sb"
	assert_eq "and removed" 0 "$rc"
}

# fds in flight (passed with SCM_RIGHTS, not yet received) are counted per
# host uid, which every sandbox of an unprivileged caller shares with it
# (and of root without a subordinate range), and none may be passed while
# the count is past the sender's soft RLIMIT_NOFILE (ETOOMANYREFS). An
# agent that fills it (one fd sent over and over into sockets nobody
# reads, up to its own limit raised to its hard one) made the next pty of
# `exec -t`, the next connection to a published port and the next
# sandbox's disk fail in another sandbox, whose PID 1 (a soft limit of 256
# here, as create had it) passes them to the keeper. The sandbox's
# processes now get half the caller's hard limit (their soft one the
# caller's, at most that), and PID 1, the keeper and exec pass with the
# whole hard limit as their soft one: the agent cannot reach it.
t_fds_in_flight() {
	local a b url filler said caller half
	caller=$(ulimit -Sn 1024 && as_user sh -c 'echo $(ulimit -Sn) $(ulimit -Hn)')
	half=$((${caller#* } / 2))
	a=$(ulimit -Sn 1024 && as_user "$SR" create --net none --timeout 120 2>/dev/null)
	sr exec "$a" -- sh -c 'echo $(ulimit -Sn) $(ulimit -Hn)'
	assert_eq "inside, RLIMIT_NOFILE: the caller's soft limit, half its hard one ($caller)" \
		"$((${caller% *} < half ? ${caller% *} : half)) $half" "$out"
	b=$(ulimit -Sn 256 && as_user "$SR" create --net none --timeout 120 2>/dev/null)
	sr exec "$b" -- sh -c "setsid python3 -c '
import socket
s = socket.socket()
s.bind((\"127.0.0.1\", 8000))
s.listen(16)
while True:
    c, _ = s.accept()
    c.sendall(b\"reached\\n\")
    c.close()
' >/dev/null 2>&1 &"
	until_ok 10 as_user "$SR_BIN" exec "$b" -- sh -c "grep -qi ':1F40 00000000:0000 0A' /proc/net/tcp"
	sr port "$b" 8000
	url=$out
	cat >"$SR_TMP/in-flight.py" <<'PY'
import os, resource, socket, time
hard = resource.getrlimit(resource.RLIMIT_NOFILE)[1]
resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
fd, held, sent = os.open("/dev/null", os.O_RDONLY), [], 0
try:
    while True:
        a, b = socket.socketpair(socket.AF_UNIX, socket.SOCK_DGRAM)
        a.setblocking(False)
        held.append((a, b))
        try:
            while True:
                socket.send_fds(a, [b"x"], [fd] * 253)
                sent += 253
        except BlockingIOError:
            pass
except OSError as e:
    print("in flight:", sent, os.strerror(e.errno), "limit", hard, flush=True)
time.sleep(60)
PY
	(as_user_exec "$SR" exec -i "$a" -- python3 - <"$SR_TMP/in-flight.py" >"$SR_OUT/in-flight-$SR_AS" 2>&1) &
	filler=$!
	until_ok 30 grep -q '^in flight' "$SR_OUT/in-flight-$SR_AS"
	assert_match "the agent filled its uid's fds in flight, to half the caller's hard limit" \
		"in flight: [0-9]+ Too many references.* limit $half\$" "$(cat "$SR_OUT/in-flight-$SR_AS")"
	said=$(as_user script -qec "$SR exec -t $b -- echo started" /dev/null </dev/null)
	assert_match "meanwhile exec -t in the other sandbox runs, its pty passed" "started" "$said"
	said=$(ulimit -Sn 256 && as_user "$SR" create --net none 2>"$SR_OUT/in-flight-create")
	assert_match "and a sandbox made then is" "^[0-9a-f]+\$" "$said$(grep -v warning "$SR_OUT/in-flight-create")"
	sr rm "$said"
	/usr/bin/python3 - "${url##*:}" >"$SR_OUT/in-flight-conn" 2>&1 <<'PY'
import socket, sys
s = socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=10)
print(s.makefile().readline().strip() or "closed")
PY
	assert_eq "and a connection to its published port is relayed" "reached" \
		"$(cat "$SR_OUT/in-flight-conn")"
	sr cp "$SR_TMP/in-flight.py" "$b:/tmp/in-flight.py"
	assert_eq "and cp passes its pipe" 0 "$rc"
	kill -9 "$filler"
	wait "$filler" 2>/dev/null
	sr exec "$b" -- echo alive
	assert_eq "the other sandbox lives on" "alive" "$out"
	sr rm "$a" "$b"
	assert_eq "both removed" 0 "$rc"
}

# Signals queued (sigqueue, tgkill, a timer's: timer_create takes one) are
# counted per host uid, and for each user namespace on the way up against
# its creator's RLIMIT_SIGPENDING: an agent that queues to its own limit
# (RT signals to itself, blocked) takes them from the caller, of the same
# uid unprivileged. It gets half the caller's limit, as message queues do;
# before, it took the whole, and the caller's processes could queue none.
t_sigpending_half() {
	local theirs ours filler
	new_sandbox
	cat >"$SR_TMP/sigpending.py" <<'PY'
import ctypes, os, resource, signal, sys, time
libc = ctypes.CDLL(None, use_errno=True)
sig, n = signal.SIGRTMIN, 0
signal.pthread_sigmask(signal.SIG_BLOCK, [sig])
while libc.sigqueue(os.getpid(), sig, ctypes.c_void_p(0)) == 0:
    n += 1
print("queued %d of %d" % (n, resource.getrlimit(resource.RLIMIT_SIGPENDING)[0]), flush=True)
time.sleep(float(sys.argv[1]))
PY
	(as_user_exec "$SR" exec -i "$sb" -- python3 - 60 <"$SR_TMP/sigpending.py" >"$SR_OUT/sigpending-$SR_AS" 2>&1) &
	filler=$!
	until_ok 30 grep -q '^queued' "$SR_OUT/sigpending-$SR_AS"
	theirs=$(cat "$SR_OUT/sigpending-$SR_AS")
	ours=$(as_user /usr/bin/python3 "$SR_TMP/sigpending.py" 0)
	kill -9 "$filler"
	wait "$filler" 2>/dev/null
	assert_eq "the agent may queue half the caller's signals, and queued them all" \
		"queued $((${ours##* } / 2)) of $((${ours##* } / 2))" "$theirs"
	assert_match "meanwhile the caller queues signals still" "^queued [1-9][0-9]* of" "$ours"
	sr rm "$sb"
}

# A --ro-bind of the directory holding our sockets (the state directory
# is under /tmp or $XDG_RUNTIME_DIR): a read-only mount does not stop a
# connect(), and an unprivileged caller's agent is the caller's uid. It
# asked serve for a sandbox with a bind of the caller's home, and a keeper
# for an exec (agent's-eye attack, session 19). Both answer only peers in
# their own user namespace (control.c, sr_ctl_peer_is_us).
t_sockets_behind_ro_bind() {
	local st py="$SR_TMP/peer-$SR_AS.py"
	new_sandbox
	st=$(state_dir)
	start_serve || return
	cat >"$py" <<'EOF'
import socket, sys
def ask(kind, path, data):
    s = socket.socket(socket.AF_UNIX, kind)
    s.settimeout(5)
    try:
        s.connect(path)
        s.send(data)
        r = s.recv(65536)
        return r.decode(errors="replace").replace("\n", " ")[:60] or "closed"
    except OSError as e:
        return "refused " + type(e).__name__
print("keeper", ask(socket.SOCK_SEQPACKET, sys.argv[1], b'{"op":"inspect"}\n'))
print("serve", ask(socket.SOCK_STREAM, sys.argv[2], b"GET /v1/sandboxes HTTP/1.0\r\nHost: x\r\n\r\n"))
EOF
	chmod a+r "$py"
	sr --net none --ro-bind "$st" /st --ro-bind "$py" /peer.py -- /usr/bin/python3 /peer.py "/st/$sb/ctl" /st/api.sock
	assert_match "a keeper answers no process of a sandbox" "^keeper (closed|refused)" "$out"
	assert_match "nor does serve" "serve (closed|refused)" "$out"
	api GET /v1/sandboxes
	assert_eq "serve still answers its user on the host" 200 "$code"
	sr inspect "$sb"
	assert_eq "and so does the keeper" 0 "$rc"
	if [ "$SR_AS" = user ]; then
		# The same user under another group (newgrp, a unit's Group=) may not
		# read /proc/PID/ns of its own processes: it is answered all the same.
		rc=0
		out=$(setpriv --reuid="$SR_TEST_USER" --regid=100 --clear-groups -- env \
			SANDBOX_RUN_STATE_DIR="$SR_TMP/state-user" SANDBOX_RUN_DATA_DIR="$SR_TMP/data-user" \
			"$SR" exec "$sb" -- echo answered 2>&1) || rc=$?
		assert_eq "the keeper answers its user under another gid" "0 answered" "$rc $out"
	fi
	stop_serve
	sr rm "$sb"
}

for_each_user t_fds_in_flight t_sigpending_half t_stdio_not_kept t_keeper_not_frozen t_keeper_clients t_keeper_clients_busy t_keeper_clients_fd_limit t_keeper_one_request t_keeper_pty_size t_keeper_worker_burst t_keeper_out_of_reach t_no_secret_in_cmdlines t_other_sandbox t_nothing_outlives_rm \
	t_client_gone t_tty_contained t_snapshot_bounded t_snapshot_names_bounded t_cp_names_bounded t_keeper_workers_held t_snapshot_waits_bounded \
	t_exec_hung_up t_port_waits_for_room t_port_owner_reserve t_sockets_behind_ro_bind
done_testing
