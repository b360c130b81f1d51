#!/usr/bin/env bash
# The caller's stdio is not the agent's to hold (security round 2,
# findings 9 and 10): a regular file given as stdin or stdout was the
# caller's inode, which the agent could reopen through /proc/self/fd and
# chmod (a set-uid program of the caller's) or rewrite; a terminal was the
# caller's terminal, from which a run in the background read what the user
# typed into the shell. Both are relayed now (src/cli/stdio-relay.h).
# A socket (round 4) was the caller's network namespace's: through it the
# agent of a --net none run listed the host's interfaces and squatted the
# host's abstract unix names; relayed too now. A pipe shared the caller's
# open file description: the O_NONBLOCK the agent set stayed on the
# caller's pipe for the next step of its pipeline; the agent gets the same
# pipe under a description of its own now.
. "$(dirname "$0")/../integration/libtest.sh"

# A shell on a terminal of its own, typing the given lines one by one.
cat >"$SR_TMP/typist.py" <<'EOF'
import os, pty, select, sys, time
pid, fd = pty.fork()
if pid == 0:
    os.execvp("bash", ["bash", "--norc", "--noprofile", "-i"])
def drain(t):
    end = time.time() + t
    while time.time() < end:
        if select.select([fd], [], [], 0.05)[0]:
            try:
                os.read(fd, 4096)
            except OSError:
                return
for line in sys.argv[1:]:
    os.write(fd, line.encode() + b"\n")
    drain(1.5)
os.write(fd, b"exit\n")
drain(1.0)
os.waitpid(pid, 0)
EOF
chmod a+r "$SR_TMP/typist.py"

# The caller's side of a run whose stdio is sockets (as Node's
# spawn(..., {stdio: 'pipe'}) gives) or pipes: python3 sockrun.py
# sock|bulk|merged|stuck|pipe[:USER] NAME SR ARGS... -- CMD...; prints
# what it saw, a line each.
cat >"$SR_TMP/sockrun.py" <<'EOF'
import fcntl, hashlib, os, socket, subprocess, sys, threading, time
mode, name, argv = sys.argv[1], sys.argv[2].encode(), sys.argv[3:]
def say(*a):
    print(*a, flush=True)
def read_all(sock):
    got = []
    while True:
        b = sock.recv(1 << 16)
        if not b:
            return b"".join(got)
        got.append(b)
if mode == "bulk":  # 20 MB in and out through the agent (cat)
    (i, its_i), (o, its_o) = socket.socketpair(), socket.socketpair()
    p = subprocess.Popen(argv, stdin=its_i, stdout=its_o)
    its_i.close(), its_o.close()
    data = os.urandom(20 << 20)
    def feed():
        i.sendall(data)
        i.shutdown(socket.SHUT_WR)
    threading.Thread(target=feed).start()
    back = read_all(o)
    say("bulk", "same" if back == data else "differs: %d bytes back" % len(back))
    say("status", p.wait())
elif mode == "merged":  # stdout and stderr one socket (2>&1, journald's)
    o, its = socket.socketpair()
    p = subprocess.Popen(argv, stdout=its, stderr=its)
    its.close()
    got = read_all(o).decode()
    want = "".join("%s %d\n" % ("out" if k % 2 == 0 else "err", k) for k in range(400))
    say("merged", "in order" if got == want else "out of order: " + got[:200])
    say("status", p.wait())
elif mode == "stuck":  # a reader that never reads
    o, its = socket.socketpair()
    t = time.monotonic()
    p = subprocess.Popen(argv, stdout=its)
    its.close()
    try:
        st = p.wait(60)
    except subprocess.TimeoutExpired:
        p.kill()
        st = "none in 60 s"
    say("status", st, "after", int(time.monotonic() - t), "s")
elif mode == "slow":  # a reader that takes 64 KiB every 200 ms
    o, its = socket.socketpair()
    p = subprocess.Popen(argv, stdout=its)
    its.close()
    got = 0
    while True:
        time.sleep(0.2)
        b = o.recv(1 << 16)
        if not b:
            break
        got += len(b)
    say("slow got", got)
    say("status", p.wait())
elif mode.startswith("late:"):  # a reader that starts late, signals sent meanwhile
    import signal
    o, its = socket.socketpair()
    its.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 4096)  # full at once
    p = subprocess.Popen(argv, stdout=its)
    its.close()
    time.sleep(2)  # the agent has written it all to the relay, and ended
    for n in mode.split(":")[1:]:
        p.send_signal(getattr(signal, n))
        time.sleep(0.3)
    say("late got", len(read_all(o)))
    say("status", p.wait())
elif mode.startswith("stalled"):  # a reader that takes nothing until sandbox-run has ended
    import re
    if mode == "stalled":
        o, its = socket.socketpair()
        its.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 4096)  # full at once
        take = lambda: len(read_all(o))
    else:  # stalled-pipe
        r, its = os.pipe()
        def take():
            n = 0
            while b := os.read(r, 1 << 16):
                n += len(b)
            return n
    p = subprocess.Popen(argv, stdout=its, stderr=subprocess.PIPE)
    os.close(its) if isinstance(its, int) else its.close()
    err = p.stderr.read().decode(errors="replace")
    say("status", p.wait())
    got = take()
    m = re.search(r"warning: (\d+) bytes of the \w+'s stdout not delivered: (.*)", err)
    said = int(m.group(1)) if m else 0
    wrote = re.search(r"agent wrote (\d+)", err)
    say("said", "%s: %s" % (m.group(1), m.group(2)) if m else "nothing: " + err[-300:])
    if wrote and said and got + said == int(wrote.group(1)):
        say("delivered and said: all the agent wrote")
    else:
        say("delivered", got, "said", said, "of", wrote.group(1) if wrote else "unknown")
elif mode == "listening":  # stdin a listening socket: nothing to read, ever
    l = socket.socket(socket.AF_UNIX)
    l.bind(b"\0" + name)
    l.listen()
    t = time.monotonic()
    st = subprocess.call(argv, stdin=l)
    say("status", st, "after", int(time.monotonic() - t), "s")
elif mode == "opath":  # stdout an O_PATH fd of a file: it writes nothing
    fd = os.open(sys.argv[0], os.O_PATH)
    say("status", subprocess.call(argv, stdout=fd))
elif mode == "sock":
    ends = [socket.socketpair() for _ in range(3)]
    p = subprocess.Popen(argv, stdin=ends[0][1], stdout=ends[1][1], stderr=ends[2][1])
    for mine, its in ends:
        its.close()
    ends[0][0].sendall(b"the prompt\n")
    out = ends[1][0].makefile("rb")
    say("agent:", out.readline().decode().strip())
    say("agent:", out.readline().decode().strip())
    # While the agent lives (it waits for the rest of its input).
    h = socket.socket(socket.AF_UNIX)
    try:
        h.bind(b"\0" + name)
        say("host bind: ok")
    except OSError as e:
        say("host bind: errno", e.errno)
    h.close()
    ends[0][0].shutdown(socket.SHUT_WR)
    ends[1][0].settimeout(60)
    try:
        say("agent:", out.read().decode().strip(), "(EOF)")
    except OSError as e:
        say("no EOF on stdout:", e)
    say("stderr:", ends[2][0].makefile("rb").read().decode().strip())
    say("status", p.wait())
else:
    user = mode.partition(":")[2] or None  # a user to run as, the pipes made by us
    (in_r, in_w), (out_r, out_w), (err_r, err_w) = os.pipe(), os.pipe(), os.pipe()
    os.set_blocking(err_w, False)  # the caller's own choice, which the agent sees
    os.write(in_w, b"the prompt\n")
    os.close(in_w)
    p = subprocess.Popen(argv, stdin=in_r, stdout=out_w, stderr=err_w,
                         user=user, group=user, extra_groups=[] if user else None)
    say("status", p.wait())
    say("pipe inode", os.fstat(out_w).st_ino)
    for what, fd in ("stdin", in_r), ("stdout", out_w), ("stderr", err_w):
        say("caller's", what, "nonblocking" if fcntl.fcntl(fd, fcntl.F_GETFL) & os.O_NONBLOCK else "blocking")
    os.close(out_w)
    os.close(err_w)
    say(os.read(out_r, 65536).decode().strip())
    say("stderr:", os.read(err_r, 65536).decode().strip())
EOF
chmod a+r "$SR_TMP/sockrun.py"

t_regular_files() {
	local d="$SR_OUT/stdio-$SR_AS"
	mkdir -p "$d" && chmod 0777 "$d"
	printf 'the prompt\n' >"$d/in" && chmod 0644 "$d/in" && own "$d/in"
	rm -f "$d/out" && as_user touch "$d/out" && chmod 0644 "$d/out"
	as_user "$SR" -q --net none -- sh -c 'cat; chmod 4755 /proc/self/fd/1 2>/dev/null;
		chmod 666 /proc/self/fd/0 2>/dev/null; echo rewritten 2>/dev/null >/proc/self/fd/0;
		true >/proc/self/fd/1 2>/dev/null; echo after' <"$d/in" >>"$d/out" 2>/dev/null
	assert_eq "the agent read its stdin file and wrote its stdout file" \
		"$(printf 'the prompt\nafter')" "$(cat "$d/out")"
	assert_eq "stdout file: no chmod through /proc/self/fd/1 (no set-uid bit)" 644 "$(stat -c %a "$d/out")"
	assert_eq "stdin file: neither chmod-ed nor rewritten through /proc/self/fd/0" \
		"644 the prompt" "$(stat -c %a "$d/in") $(cat "$d/in")"
	as_user "$SR" -q --net none -- sh -c 'readlink /proc/self/fd/0 /proc/self/fd/1' <"$d/in" >"$d/links"
	assert_match "both are pipes inside" "^pipe:.*
pipe:" "$(cat "$d/links")"
	# A big file both ways: nothing lost, in order.
	head -c 20000000 /dev/urandom >"$d/big" && chmod 0644 "$d/big"
	as_user "$SR" -q --net none -- cat <"$d/big" >"$d/big.out"
	check "20 MB through both relays, byte for byte" cmp -s "$d/big" "$d/big.out"
	rm -f "$d/big" "$d/big.out"
}

# A run in the background reads nothing the user types.
t_background_terminal() {
	local d="$SR_OUT/bgtty-$SR_AS"
	mkdir -p "$d" && chmod 0777 "$d" && rm -f "$d/captured" "$d/seen"
	as_user python3 "$SR_TMP/typist.py" \
		"set -m; $SR -q --net none --bind $d /out -- sh -c 'dd bs=1 count=64 of=/out/captured 2>/dev/null' &" \
		"echo typed-secret-one > $d/seen" \
		"echo typed-secret-two >> $d/seen" \
		"kill %1; wait" >/dev/null 2>&1
	assert_eq "the shell got what was typed" "$(printf 'typed-secret-one\ntyped-secret-two')" \
		"$(cat "$d/seen" 2>/dev/null)"
	assert_no_match "the agent in the background got none of it" "typed|secret|echo" \
		"$(cat "$d/captured" 2>/dev/null)"
}

# In the foreground the agent has its terminal: a pty of the sandbox's own, relayed.
t_foreground_terminal() {
	local said
	said=$(as_user script -qec "$SR -q --net none -- sh -c 'test -t 0 && test -t 1 && readlink /proc/self/fd/0 && stty size'" \
		/dev/null </dev/null 2>&1 | tr -d '\r')
	assert_match "a pty of the sandbox's own devpts, not the caller's" "/dev/pts/0" "$said"
	said=$(printf 'typed line\n' | as_user script -qec "$SR -q --net none -- sh -c 'read x; echo \"got: \$x\"'" \
		/dev/null 2>&1 | tr -d '\r')
	assert_match "what is typed reaches the agent through it" "got: typed line" "$said"
}

# diff --patch shows the agent's file to the reviewer: on a terminal its
# escape sequences (a line up and erased, an OSC title, a carriage return,
# a C1 CSI) could hide the lines asked to be approved, and are shown
# instead (^[, \x9b); to a file, for git apply, the bytes are exact.
t_diff_terminal() {
	local d="$SR_OUT/dt-$SR_AS" c="$SR_OUT/dt-$SR_AS.changes" shown
	local body='rm -rf ~\n\033[1A\033[2K\033]0;x\007echo hi\r\n\302\233x \303\251\n'
	rm -rf "$d" "$c" && mkdir -p "$d" && echo keep >"$d/f" && own "$d"
	sleep 0.05 # a tick before the sandbox's start (artifacts.sh make_checkout)
	sr -q --net none --workspace "$d" --changes "$c" -- sh -c "printf '$body' >f"
	assert_eq "the agent wrote its file" 0 "$rc"
	shown=$(as_user script -qec "$SR diff $c --patch" /dev/null </dev/null | tr -d '\r')
	assert_match "diff --patch on a terminal: the diff" '^diff --git a/f b/f' "$shown"
	assert_match "its lines, escape sequences shown" \
		$'\n''\+rm -rf ~'$'\n''\+\^\[\[1A\^\[\[2K\^\[\]0;x\^Gecho hi\^M'$'\n''\+\\xc2\\x9bx é$' "$shown"
	check "no control character reaches the terminal, C0 nor C1" \
		sh -c '! printf %s "$1" | tr -d "\n" | LC_ALL=C grep -q "[[:cntrl:]]\|$(printf "\302[\200-\237]")" -' \
		_ "$shown"
	as_user "$SR" diff "$c" --patch >"$SR_TMP/dt.patch"
	# shellcheck disable=SC2059
	check "diff --patch to a file: the agent's bytes, exact" \
		cmp -s <(printf "$body") <(sed -n '/^+++ /,$ s/^+//p' "$SR_TMP/dt.patch" | tail -n +2)
	rm -rf "$d" "$c"
}

# What the agent asks of its stdout as a socket: the interfaces of its
# network namespace (SIOCGIFCONF), an abstract name bound in it.
squat_agent='
import array, fcntl, os, socket, struct, sys
buf = array.array("B", bytes(4096))
try:
    got = fcntl.ioctl(1, 0x8912, struct.pack("iL", len(buf), buf.buffer_info()[0]))
    n = struct.unpack("iL", got)[0]
    print("interfaces:", " ".join(bytes(buf[i:i + 16]).split(b"\0")[0].decode() for i in range(0, n, 40)))
except OSError as e:
    print("interfaces: errno", e.errno)
try:
    socket.socket(fileno=os.dup(1)).bind(b"\0" + sys.argv[1].encode())
    print("bound")
except OSError as e:
    print("bind: errno", e.errno)
sys.stdout.flush()
print("read", len(sys.stdin.read()))
print("on stderr", file=sys.stderr)
sys.exit(7)'

# A socket as stdio (a Node caller's) is relayed: the agent of a --net none
# run neither sees the host's interfaces nor binds in its namespace.
t_socket_stdio() {
	local name="sr-stdio-squat-$$-$SR_AS" said ifs dev
	said=$(as_user python3 "$SR_TMP/sockrun.py" sock "$name" "$SR" -q --net none -- \
		/usr/bin/python3 -c "$squat_agent" "$name" 2>&1)
	ifs=$(ls /sys/class/net)
	for dev in $ifs; do
		[ "$dev" = lo ] && continue
		assert_no_match "SIOCGIFCONF on stdout: no host interface ($dev)" \
			"agent: interfaces:.*\\b$dev\\b" "$said"
	done
	dev=$(ip route show default 2>/dev/null | sed -n 's/.* dev \([^ ]*\).*/\1/p' | head -1)
	if [ -n "$dev" ]; then
		assert_no_match "... nor the default route's ($dev)" "\\b$dev\\b" "$said"
	fi
	assert_match "the agent binds no name through its stdout" "agent: bind: errno" "$said"
	assert_match "the host binds that name while the agent runs" "host bind: ok" "$said"
	assert_match "the agent's input ends at the caller's half-close" "agent: read 11 \\(EOF\\)" "$said"
	assert_match "its stderr arrives, and the caller sees its exit status" \
		"stderr: on stderr"$'\n'"status 7" "$said"
}

# The agent's side of t_pipe_flags: it sets O_NONBLOCK on stdin and
# stdout, clears the caller's on stderr.
flags_agent='
import fcntl, os, sys
fl = [fcntl.fcntl(fd, fcntl.F_GETFL) for fd in (0, 1, 2)]
print("read", len(sys.stdin.read()), os.readlink("/proc/self/fd/1"))
print("agent stderr", "nonblocking" if fl[2] & os.O_NONBLOCK else "blocking", file=sys.stderr)
for fd in 0, 1:
    fcntl.fcntl(fd, fcntl.F_SETFL, fl[fd] | os.O_NONBLOCK)
fcntl.fcntl(2, fcntl.F_SETFL, fl[2] & ~os.O_NONBLOCK)'

# flags_kept WHO SAID: the caller's pipes as they were after the run.
flags_kept() {
	assert_match "$1: the O_NONBLOCK the agent set stays off the caller's stdin and stdout" \
		"caller's stdin blocking"$'\n'"caller's stdout blocking" "$2"
	assert_match "$1: the caller's stderr, which the agent made blocking, stays non-blocking" \
		"caller's stderr nonblocking" "$2"
	assert_match "$1: the agent read its input" "read 11 pipe:" "$2"
	assert_match "$1: exit status" "^status 0" "$2"
}

# Relayed sockets move everything, keep 2>&1's order, and a reader that
# stops reading holds neither sandbox-run nor its timeout.
t_socket_relay() {
	local said
	said=$(as_user python3 "$SR_TMP/sockrun.py" bulk - "$SR" -q --net none -- cat 2>&1)
	assert_match "20 MB through both socket relays, byte for byte" "bulk same"$'\n'"status 0" "$said"
	said=$(as_user python3 "$SR_TMP/sockrun.py" merged - "$SR" -q --net none -- /usr/bin/python3 -c '
import os
for k in range(400):
    os.write(1 + k % 2, b"%s %d\n" % (b"out" if k % 2 == 0 else b"err", k))' 2>&1)
	assert_match "stdout and stderr one socket: the agent's order" "merged in order"$'\n'"status 0" "$said"
	said=$(as_user python3 "$SR_TMP/sockrun.py" stuck - "$SR" -q --net none --timeout 2s -- yes 2>&1)
	assert_match "a reader that stops: the timeout holds (124)" "status 124 after ([2-9]|1[0-9]) s" "$said"
}

# At the agent's end what it wrote is all delivered to a reader slower
# than it, as the agent would have waited writing to it (a review found
# the last of it dropped after 100 ms with nothing taken, status 0); a
# listening socket as stdin is an input at its end (the relay waited for
# a connection, to the timeout); an O_PATH stdout writes nothing, and the
# agent's own status stands (125 for the relay's EBADF).
t_socket_ends() {
	local said
	said=$(as_user python3 "$SR_TMP/sockrun.py" slow - "$SR" -q --net none -- head -c 2000000 /dev/zero 2>&1)
	assert_match "a slow reader gets it all" "slow got 2000000"$'\n'"status 0" "$said"
	said=$(as_user python3 "$SR_TMP/sockrun.py" late:SIGWINCH:SIGCONT - "$SR" -q --net none -- head -c 100000 /dev/zero 2>&1)
	assert_match "a resize or SIGCONT meanwhile: it all still comes" "late got 100000"$'\n'"status 0" "$said"
	# 50,000 bytes fit in the agent's pipe alone (64 KiB): it has ended when
	# the signal comes, whatever the relay's own room on a loaded host.
	said=$(as_user python3 "$SR_TMP/sockrun.py" late:SIGTERM - "$SR" -q --net none -- head -c 50000 /dev/zero 2>&1)
	assert_match "SIGTERM meanwhile: sandbox-run ends by it, as it would have" "status -15" "$said"
	said=$(as_user python3 "$SR_TMP/sockrun.py" listening "sr-listen-$SR_AS-$$" "$SR" -q --net none \
		--timeout 20s -- cat 2>&1)
	assert_match "a listening socket as stdin: EOF at once" "status 0 after [0-4] s" "$said"
	said=$(as_user python3 "$SR_TMP/sockrun.py" opath - "$SR" -q --net none -- \
		sh -c 'trap "" PIPE; echo lost; exit 0' 2>&1)
	assert_match "an O_PATH stdout: the agent's status (0), no relay error" "status 0" "$said"
}

# The agent of t_timeout_drops_said: 100 KB to stdout, more than a pipe
# holds, written as far as the relay takes it within a second (never
# blocked: what it wrote is known whatever the pipes' and the socket's
# room), said on stderr; then it waits for the timeout.
stalled_agent='
import os, sys, time
os.set_blocking(1, False)
n, end = 0, time.monotonic() + 1
while n < 100000 and time.monotonic() < end:
    try:
        n += os.write(1, bytes(min(8192, 100000 - n)))
    except BlockingIOError:
        time.sleep(0.02)
print("agent wrote", n, file=sys.stderr, flush=True)
time.sleep(60)'

# A timeout's end: what the agent wrote and its reader had not taken
# within 100 ms was dropped, and nothing said so (status 124, no line, no
# record field). Now a warning says how many bytes, and why, and so does
# the record; the status stays 124. The same for exec's relay of a pipe.
t_timeout_drops_said() {
	local said count rec="$SR_OUT/stalled-$SR_AS.json"
	rm -f "$rec"
	said=$(as_user python3 "$SR_TMP/sockrun.py" stalled - "$SR" --net none --timeout 4s \
		--result "$rec" -- /usr/bin/python3 -c "$stalled_agent" 2>&1)
	assert_match "a run timed out, its reader stalled: 124" "^status 124" "$said"
	assert_match "the warning says why" \
		"said [0-9]+: the reader took none for 100 ms after the timeout" "$said"
	assert_match "what was delivered and what it says not: all the agent wrote" \
		"delivered and said: all the agent wrote" "$said"
	count=$(sed -n 's/^said \([0-9]*\):.*/\1/p' <<<"$said")
	assert_eq "the record's output_dropped_bytes: the same count" \
		"${count:-none said}" "$(json_get "$rec" output_dropped_bytes 2>/dev/null)"
	rm -f "$rec"
	sr create --net none --timeout 60
	local sb=$out
	said=$(as_user python3 "$SR_TMP/sockrun.py" stalled-pipe - "$SR" exec --timeout 3s \
		--result "$rec" "$sb" -- /usr/bin/python3 -c "$stalled_agent" 2>&1)
	assert_match "exec timed out, a pipe's reader stalled: 124" "^status 124" "$said"
	assert_match "exec: the warning says why" \
		"said [0-9]+: the reader took none for 50 ms after the timeout" "$said"
	assert_match "exec: delivered and not: all the command wrote" \
		"delivered and said: all the agent wrote" "$said"
	count=$(sed -n 's/^said \([0-9]*\):.*/\1/p' <<<"$said")
	assert_eq "exec: the record's output_dropped_bytes" \
		"${count:-none said}" "$(json_get "$rec" output_dropped_bytes 2>/dev/null)"
	sr rm "$sb"
	rm -f "$rec"
}

# A pipe stays zero-copy (the caller's pipe itself), under a description
# of the agent's own: its O_NONBLOCK stays off the caller's. Another
# user's pipe (0600, its maker's: root's shell piping into a user's run),
# which cannot be reopened, is relayed.
t_pipe_flags() {
	local said
	said=$(as_user python3 "$SR_TMP/sockrun.py" pipe - "$SR" -q --net none -- \
		/usr/bin/python3 -c "$flags_agent" 2>&1)
	assert_match "the agent has the caller's stdout pipe itself" \
		"pipe:\\[$(sed -n 's/^pipe inode //p' <<<"$said")\\]" "$said"
	assert_match "the caller's O_NONBLOCK is the agent's too" "stderr: agent stderr nonblocking" "$said"
	flags_kept "its own pipes" "$said"
	[ "$SR_AS" = user ] || return 0
	said=$(python3 "$SR_TMP/sockrun.py" "pipe:$SR_TEST_USER" - env HOME="$SR_TMP/home-user" \
		"$SR" -q --net none -- /usr/bin/python3 -c "$flags_agent" 2>&1)
	flags_kept "root's pipes" "$said"
}

# A pipe whose reader is gone, and a named FIFO's (which cannot be
# reopened then: ENXIO): the agent's write fails as it would have.
t_pipe_no_reader() {
	local st fifo="$SR_OUT/fifo-$SR_AS"
	rm -f "$fifo"
	st=$(as_user python3 -c 'import os, subprocess, sys
r, w = os.pipe()
os.close(r)
st = [subprocess.call(sys.argv[2:], stdout=w)]
os.mkfifo(sys.argv[1])
r = os.open(sys.argv[1], os.O_RDONLY | os.O_NONBLOCK)
w = os.open(sys.argv[1], os.O_WRONLY)
os.close(r)
os.unlink(sys.argv[1])
st.append(subprocess.call(sys.argv[2:], stdout=w))
print(*st)' "$fifo" "$SR" -q --net none -- /usr/bin/python3 -c 'import os
try:
    os.write(1, b"x")
except BrokenPipeError:
    os._exit(9)')
	assert_eq "EPIPE for the agent, a pipe's and a named FIFO's" "9 9" "$st"
}

for_each_user t_regular_files t_background_terminal t_foreground_terminal t_diff_terminal \
	t_socket_stdio t_socket_relay t_socket_ends t_pipe_flags t_pipe_no_reader t_timeout_drops_said
done_testing
