#!/usr/bin/env bash
# The caller's stdio is not the agent's to hold (security round 2,
# findings 9 and 10): a regular file given as stdin or stdout was the
# caller's inode, which the agent could reopen through /proc/self/fd and
# chmod (a set-uid program of the caller's) or rewrite; a terminal was the
# caller's terminal, from which a run in the background read what the user
# typed into the shell. Both are relayed now (src/cli/stdio-relay.h).
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

for_each_user t_regular_files t_background_terminal t_foreground_terminal t_diff_terminal
done_testing
