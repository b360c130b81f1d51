#!/usr/bin/env bash
# sandbox-run cp against a hostile sandbox (the outside review of cp). The
# agent controls every name, link and byte of what is copied out, and what
# it may write on the host (a --bind); cp runs as the caller, beside the
# caller's own files. Each case plants what the review planted and checks
# that the "home" (a directory of this test's, never a real one) is intact.
. "$(dirname "$0")/../integration/libtest.sh"
. "$(dirname "$0")/../integration/libworker.sh"

# new_sandbox ARGS...: creates one (as the round's user), its id in $sb.
new_sandbox() {
	sr create --net none --timeout 120 "$@"
	sb=$out
}

# victim_home NAME: a home of the round's user, with ~/.ssh/authorized_keys.
victim_home() {
	local h="$SR_TMP/home-$1-$SR_AS"
	rm -rf "$h"
	mkdir -p "$h/.ssh"
	printf 'precious\n' >"$h/.ssh/authorized_keys"
	own "$h"
	echo "$h"
}

intact() {
	assert_eq "$1" precious "$(cat "$2/.ssh/authorized_keys")"
}

# Finding B: a link at the copy's top, or one that climbs to the
# destination directory, lands beside the caller's files pointing at them.
t_links_leave_copy() {
	local h
	h=$(victim_home links)
	new_sandbox
	sr exec "$sb" -- sh -c 'ln -s .ssh report; mkdir out; ln -s ../.ssh out/keys;
		echo ATTACKER-2 >authorized_keys'
	sr cp "$sb:/workspace/report" "$h/"
	assert_eq "cp out of a link that is the copy itself (report -> .ssh): refused (125)" 125 "$rc"
	assert_match "naming it" "report: symbolic link to '\.ssh' leaves the copied tree" "$errout"
	check "no link made in the home" test ! -L "$h/report"
	sr cp "$sb:/workspace/out" "$h/results"
	assert_eq "a link in the copy climbing to its destination (out/keys -> ../.ssh): refused" \
		125 "$rc"
	assert_match "naming it" "out/keys: symbolic link to '\.\./\.ssh' leaves the copied tree" \
		"$errout"
	check "no link made in the copy" test ! -L "$h/results/keys"
	sr cp "$sb:/workspace/authorized_keys" "$h/report"
	intact "the review's third step writes no key" "$h"
	sr exec "$sb" -- sh -c 'mkdir -p ok/sub; echo in >ok/a; ln -s a ok/l; ln -s ../a ok/sub/up'
	sr cp "$sb:ok" "$h/ok"
	assert_eq "links that stay in the copy: copied" "0 a ../a in" \
		"$rc $(readlink "$h/ok/l") $(readlink "$h/ok/sub/up") $(cat "$h/ok/sub/up")"
	sr rm "$sb"
}

OTHER=54321

# Finding A, the review's case: the agent leaves a link in a --bind the
# caller copies into; cp wrote ~/.ssh/authorized_keys through it.
t_link_at_dest() {
	local h
	h=$(victim_home dest)
	mkdir -m 0777 "$h/shared"
	own "$h/shared"
	new_sandbox --bind "$h/shared" /mnt/shared
	sr exec "$sb" -- sh -c "echo ATTACKER-KEY >/workspace/authorized_keys;
		ln -s '$h/.ssh' /mnt/shared/results"
	assert_eq "the agent leaves a link in its bind" 0 "$rc"
	sr cp "$sb:/workspace/authorized_keys" "$h/shared/results"
	assert_eq "cp out to it: refused (125)" 125 "$rc"
	assert_match "saying it is a link cp does not follow" \
		"$h/shared/results is a symbolic link \(to $h/\.ssh\), which cp neither follows" "$errout"
	intact "the key is untouched" "$h"
	check "the link is left as it was" test -L "$h/shared/results"
	sr cp "$sb:/workspace/authorized_keys" "$h/shared/results/"
	assert_eq "with a trailing slash: refused too (125)" 125 "$rc"
	sr cp "$sb:/workspace/authorized_keys" "$h/shared/results/authorized_keys"
	assert_eq "to a path through it: refused (125)" 125 "$rc"
	assert_match "saying whose link it is" "results is a symbolic link to $h/\.ssh owned by uid" \
		"$errout"
	intact "the key is still untouched" "$h"
	# The caller's own link at the copy's name is not followed either.
	as_user ln -s .ssh "$h/mine"
	sr cp "$sb:/workspace/authorized_keys" "$h/mine"
	assert_eq "cp to the caller's own link: refused (125)" 125 "$rc"
	intact "nothing written through it" "$h"
	# What cp is for still works: a new name, a file replaced, a directory.
	sr cp "$sb:/workspace/authorized_keys" "$h/shared/copy"
	sr cp "$sb:/workspace/authorized_keys" "$h/shared/copy"
	assert_eq "a file at the copy's name is replaced" "0 ATTACKER-KEY" "$rc $(cat "$h/shared/copy")"
	sr cp "$sb:/workspace/authorized_keys" "$h/shared"
	assert_eq "into a directory, under its own name" "0 ATTACKER-KEY" \
		"$rc $(cat "$h/shared/authorized_keys")"
	sr rm "$sb"
}

# cp in through a directory the agent swapped for a link: host files read
# into the sandbox.
t_link_at_src() {
	local h
	h=$(victim_home src)
	mkdir -m 0777 "$h/shared" "$h/shared/data"
	echo report >"$h/shared/data/report.txt"
	own "$h/shared"
	new_sandbox --bind "$h/shared" /mnt/shared
	sr cp "$h/shared/data/report.txt" "$sb:/workspace/report.txt"
	assert_eq "cp in of the caller's file: copied" 0 "$rc"
	sr exec "$sb" -- sh -c "rm -r /mnt/shared/data && ln -s '$h/.ssh' /mnt/shared/data"
	sr cp "$h/shared/data/authorized_keys" "$sb:/workspace/stolen"
	assert_eq "cp in through the swapped directory: refused (125)" 125 "$rc"
	assert_match "saying why" "data is a symbolic link to $h/\.ssh owned by uid" "$errout"
	sr exec "$sb" -- cat /workspace/stolen
	assert_no_match "nothing of the key reached the sandbox" precious "$out"
	sr cp "$h/shared/data" "$sb:/workspace/stolen"
	sr exec "$sb" -- sh -c 'cat /workspace/stolen/authorized_keys; readlink /workspace/stolen'
	assert_no_match "the link itself is not followed either" precious "$out"
	sr rm "$sb"
}

# For root: another user's link in that user's directory is no more the
# caller's to follow than the agent's.
t_link_of_another_user() {
	local h d="$SR_TMP/other-$SR_AS"
	h=$(victim_home other)
	mkdir -p "$d"
	chown "$OTHER:$OTHER" "$d"
	setpriv --reuid=$OTHER --regid=$OTHER --clear-groups -- ln -s "$h/.ssh" "$d/link"
	new_sandbox
	sr exec "$sb" -- sh -c 'echo ATTACKER-KEY >authorized_keys'
	sr cp "$sb:authorized_keys" "$d/link"
	assert_eq "cp out to another user's link: refused (125)" 125 "$rc"
	intact "the key is untouched" "$h"
	sr cp "$sb:authorized_keys" "$d/link/new"
	assert_eq "cp out through it: refused (125)" 125 "$rc"
	assert_match "saying whose" "owned by uid $OTHER" "$errout"
	check "nothing made beside the key" test ! -e "$h/.ssh/new"
	sr rm "$sb"
}

# Root's links in root's directories are the system's layout: followed,
# as for --bind (/var/run -> /run).
t_root_link_followed() {
	local d="$SR_TMP/system-$SR_AS"
	mkdir -p "$d/real"
	chmod 0755 "$d"
	chmod 1777 "$d/real"
	ln -sfn real "$d/link"
	new_sandbox
	sr exec "$sb" -- sh -c 'echo layout >f'
	sr cp "$sb:f" "$d/link/f"
	assert_eq "root's link in root's directory, on the way: followed" "0 layout" \
		"$rc $(cat "$d/real/f" 2>&1)"
	sr rm "$sb"
}

# allocated PATH: the bytes the file system holds for it.
allocated() {
	echo $(($(stat -c %b "$1") * $(stat -c %B "$1")))
}

# Finding C: cp out wrote a sparse file whole, unbounded by the sandbox's
# disk limit (`truncate -s 100T` would fill the host's disk).
t_sparse_and_bound() {
	local d="$SR_OUT/bound-$SR_AS"
	rm -rf "$d"
	mkdir -p "$d"
	own "$d"
	new_sandbox --disk 50M
	sr exec "$sb" -- sh -c 'truncate -s 2G sparse; mkdir -p tree/sub; echo small >tree/a;
		head -c 20000000 /dev/zero >tree/sub/b; head -c 20000000 /dev/zero >tree/sub/c'
	sr cp "$sb:sparse" "$d/"
	assert_eq "cp out of a 2G sparse file from a 50M sandbox: refused (125)" 125 "$rc"
	assert_eq "in one line, saying why and what raises the bound" \
		"sandbox-run: cp: extract sparse: more than 50M, the sandbox's disk limit (--max-size raises it)" \
		"$errout"
	assert_eq "nothing left in the destination" "" "$(ls -A "$d")"
	sr cp --max-size 3G "$sb:sparse" "$d/"
	assert_eq "with --max-size 3G: copied" "0 2147483648" "$rc $(stat -c %s "$d/sparse" 2>&1)"
	check "and sparse on the host (under 1 MiB allocated)" test "$(allocated "$d/sparse")" -lt 1048576
	rm -f "$d/sparse"
	sr cp --max-size 30M "$sb:tree" "$d/tree"
	assert_eq "a tree past --max-size: refused (125)" 125 "$rc"
	assert_match "saying so" "^sandbox-run: cp: extract tree/sub/[bc]: more than the --max-size of 30M$" \
		"$errout"
	assert_eq "nothing of it left, no half-written file" "" "$(ls -A "$d")"
	sr cp "$sb:tree" "$d/tree"
	assert_eq "within the sandbox's disk limit: copied" "0 20000000" \
		"$rc $(stat -c %s "$d/tree/sub/c" 2>&1)"
	sr rm "$sb"
	rm -rf "$d"
}


# timed_cp ARGS...: cp, bounded from outside (a hang fails the case, not
# the suite): $rc, $errout, and $took in ms.
timed_cp() {
	local t0
	t0=$(date +%s%N)
	as_user timeout 60 "$SR" cp "$@" >/dev/null 2>"$SR_TMP/.cp-err"
	rc=$?
	took=$((($(date +%s%N) - t0) / 1000000))
	errout=$(cat "$SR_TMP/.cp-err")
}


# A cp that ends (killed) while the agent keeps its worker stopped: the worker
# never sees its pipe's end, so the keeper has it killed.
t_cp_killed() {
	local cp_pid
	new_sandbox
	sr cp "$SR_TMP/stopper.py" "$sb:/tmp/stopper.py"
	sr exec "$sb" -- sh -c 'head -c 50000000 /dev/zero >big'
	stopper stop
	(as_user_exec "$SR" cp "$sb:big" "$SR_OUT/killed-$SR_AS" 2>/dev/null) &
	cp_pid=$!
	stopper_done
	assert_eq "the agent stops cp's worker" "stopped a worker" "$stopper_did"
	kill -TERM "$cp_pid"
	wait "$cp_pid"
	check "once cp is gone, the stopped worker is killed" until_ok 10 _no_workers
	sr exec "$sb" -- echo alive
	assert_eq "the sandbox lives on" alive "$out"
	sr rm "$sb"
	rm -rf "$SR_OUT/killed-$SR_AS" "$SR_OUT"/.sandbox-run-cp.*
}

# cp out ended midway (SIGTERM; SIGINT, a ^C, alike) removes what it had
# extracted under its temporary name, as a failed copy does: nothing of
# it was left behind, a hidden .sandbox-run-cp.* beside the destination.
_cp_tmp_in() { compgen -G "$1/.sandbox-run-cp.*" >/dev/null; }
t_cp_interrupted() {
	local cp_pid st d="$SR_OUT/interrupted-$SR_AS"
	rm -rf "$d"
	mkdir -p "$d"
	own "$d"
	new_sandbox
	sr cp "$SR_TMP/stopper.py" "$sb:/tmp/stopper.py"
	sr exec "$sb" -- sh -c 'head -c 50000000 /dev/zero >big'
	# Throttled, the copy takes seconds: time to end it midway.
	stopper throttle
	(as_user_exec "$SR" cp "$sb:big" "$d/big" 2>"$SR_TMP/.interrupted-err") &
	cp_pid=$!
	check "cp is midway: its temporary copy is there" until_ok 20 _cp_tmp_in "$d"
	kill -TERM "$cp_pid"
	wait "$cp_pid"
	st=$?
	assert_eq "cp ended by SIGTERM: 128+15, in one line" "143 sandbox-run: cp: interrupted" \
		"$st $(cat "$SR_TMP/.interrupted-err")"
	assert_eq "and nothing of the copy is left at the destination" "" "$(ls -A "$d")"
	stopper_done
	check "its worker is gone" until_ok 10 _no_workers
	sr cp "$sb:big" "$d/big"
	assert_eq "the next cp copies it whole" "0 50000000" "$rc $(stat -c %s "$d/big" 2>&1)"
	sr rm "$sb"
	rm -rf "$d"
}

# Finding D: a worker the agent stopped hung cp for good.
t_stuck_worker() {
	local d="$SR_OUT/stuck-$SR_AS"
	rm -rf "$d"
	mkdir -p "$d"
	head -c 20000000 /dev/zero >"$d/in"
	own "$d"
	new_sandbox
	sr cp "$SR_TMP/stopper.py" "$sb:/tmp/stopper.py"
	sr exec "$sb" -- sh -c 'head -c 50000000 /dev/zero >big'
	stopper stop
	timed_cp --idle-timeout 2s "$sb:big" "$d/big"
	stopper_done
	assert_eq "the agent stops cp out's worker" "stopped a worker" "$stopper_did"
	assert_eq "cp gives up (125), not hanging" 125 "$rc"
	check "within seconds of the idle timeout ($took ms)" test "$took" -lt 10000
	assert_match "saying why" "nothing came from the sandbox for 2s: its worker is stopped or gone" \
		"$errout"
	assert_eq "nothing left at the destination" "in" "$(ls -A "$d")"
	check "and the stopped worker is killed" until_ok 10 _no_workers
	stopper stop
	timed_cp --idle-timeout 2s "$d/in" "$sb:in"
	stopper_done
	assert_eq "cp in, its worker stopped: gives up (125)" "125 stopped a worker" "$rc $stopper_did"
	assert_match "saying why" "the sandbox took nothing for 2s" "$errout"
	check "and that worker is killed too" until_ok 10 _no_workers
	check "and nothing of its copy is left in the sandbox" until_ok 10 _ws_is big
	sr exec "$sb" -- echo alive
	assert_eq "the sandbox lives on" alive "$out"
	# A copy slower than the idle timeout, but moving, is not cut (its
	# pauses, 0.45 s, well within it: a loaded host stretches them).
	stopper throttle
	timed_cp --idle-timeout 2s "$sb:big" "$d/big"
	stopper_done
	assert_match "a throttled copy that keeps moving: copied" "^0 50000000 throttled a worker" \
		"$rc $(stat -c %s "$d/big" 2>&1) $stopper_did"
	check_took_pauses "the idle timeout"
	sr rm "$sb"
	rm -rf "$d"
}

# The same for a snapshot: its worker writes the snapshot's file on the
# host itself, and one the agent stopped hung `snapshot` (and the API's
# POST .../snapshots) for good, past any deadline with --timeout 0.
t_stuck_snapshot() {
	local t0 took d
	if [ "$SR_AS" = user ]; then d="$SR_TMP/data-user"; else d="$SANDBOX_RUN_DATA_DIR"; fi
	new_sandbox
	sr cp "$SR_TMP/stopper.py" "$sb:/tmp/stopper.py"
	# Enough to write that the worker lives a while: the stopper, a loop
	# over /proc, must find it however busy the machine is.
	sr exec "$sb" -- sh -c 'head -c 64M /dev/urandom >/workspace/bulk'
	stopper stop
	t0=$(date +%s%N)
	as_user timeout 60 "$SR" snapshot --idle-timeout 2s "$sb" "stuck-$SR_AS" >/dev/null 2>"$SR_TMP/.snap-err"
	rc=$?
	took=$((($(date +%s%N) - t0) / 1000000))
	stopper_done
	assert_eq "the agent stops the snapshot's worker" "stopped a worker" "$stopper_did"
	assert_eq "snapshot gives up (125), not hanging" 125 "$rc"
	check "within seconds of the idle timeout ($took ms)" test "$took" -lt 10000
	assert_match "saying why" "nothing was written for 2s" "$(cat "$SR_TMP/.snap-err")"
	check "nothing left in the data directory, as it says so" \
		test -z "$(find "$d/snapshots" -mindepth 1 -maxdepth 1 2>/dev/null)"
	check "the stopped worker is killed" until_ok 10 _no_workers
	sr snapshot --idle-timeout 2s "$sb" "moving-$SR_AS"
	assert_eq "a snapshot nobody stops: made" 0 "$rc"
	sr snapshots rm "moving-$SR_AS"
	sr rm "$sb"
}

# diff and apply of a living sandbox read what a worker in it writes,
# which the agent can stop (it runs as the agent's uid): both hung for
# good. Now --idle-timeout (60 s by default) gives up, saying why, the
# worker is killed, and the next diff, unstopped, works.
timed_sr() {
	local t0
	t0=$(date +%s%N)
	as_user timeout 60 "$SR" "$@" >"$SR_TMP/.timed-out" 2>"$SR_TMP/.timed-err"
	rc=$?
	took=$((($(date +%s%N) - t0) / 1000000))
	errout=$(cat "$SR_TMP/.timed-err")
}
t_stuck_changes() {
	local d="$SR_OUT/changes-$SR_AS" verb
	rm -rf "$d"
	mkdir -p "$d"
	echo old >"$d/f"
	own "$d"
	new_sandbox --workspace "$d"
	sr cp "$SR_TMP/stopper.py" "$sb:/tmp/stopper.py"
	sr exec "$sb" -- sh -c 'echo new >f && head -c 64M /dev/urandom >bulk'
	for verb in diff apply; do
		stopper stop
		timed_sr "$verb" --idle-timeout 2s "$sb"
		stopper_done
		assert_eq "the agent stops $verb's worker" "stopped a worker" "$stopper_did"
		assert_eq "$verb gives up (125), not hanging" 125 "$rc"
		check "within seconds of the idle timeout ($took ms)" test "$took" -lt 10000
		assert_match "saying why" \
			"^sandbox-run: $verb: changes: nothing came from the sandbox for 2s: its worker is stopped or gone" \
			"$errout"
		check "and the stopped worker is killed" until_ok 10 _no_workers
	done
	assert_eq "nothing applied" "old f" "$(cat "$d/f") $(ls "$d")"
	sr exec "$sb" -- echo alive
	assert_eq "the sandbox lives on" alive "$out"
	timed_sr diff --idle-timeout 2s "$sb"
	# (f, written just before the sandbox started, may be said changed on
	# the host too: the start's clock is the coarse one.)
	assert_eq "a diff nobody stops: made" "0 A bulk|M f|" \
		"$rc $(awk '/^[AM]  / { print $1, $2 }' "$SR_TMP/.timed-out" | sort | tr '\n' '|')"
	sr rm "$sb"
	rm -rf "$d"
}

# cp in cut short (a refused entry, the disk full, cp interrupted or its
# worker stopped) left what it had extracted so far in the sandbox, and
# into an existing directory it had replaced files there already. Now it
# is extracted under a hidden name and moved into place whole: nothing of
# it is left, and what was there is untouched.
# in_sandbox: every name under /workspace, sorted ($out).
in_sandbox() {
	sr exec "$sb" -- sh -c 'cd /workspace && find . | sort | tr "\n" " "'
}
t_cp_in_whole() {
	local h="$SR_TMP/in-$SR_AS" before
	rm -rf "$h"
	mkdir -p "$h/t/sub" "$h/bad/t/sub"
	head -c 15000000 /dev/zero >"$h/t/a"
	head -c 15000000 /dev/zero >"$h/t/sub/b"
	echo new >"$h/bad/t/a"
	echo b >"$h/bad/t/sub/b"
	ln -s /etc "$h/bad/t/sub/zlink"
	own "$h"
	new_sandbox --disk 20M
	sr exec "$sb" -- sh -c 'mkdir -p d/t && echo old >d/t/a && echo mine >d/t/keep'
	in_sandbox
	before=$out
	sr cp "$h/t" "$sb:/workspace/new"
	assert_eq "cp in of a tree past the sandbox's disk: refused (125)" 125 "$rc"
	assert_match "saying why" "exceeds the disk limit" "$errout"
	in_sandbox
	assert_eq "nothing of it left, no temporary name either" "$before" "$out"
	sr cp "$h/t" "$sb:/workspace/d"
	assert_eq "the same into a directory that has it: refused (125)" 125 "$rc"
	in_sandbox
	assert_eq "nothing of it left there" "$before" "$out"
	sr cp "$h/bad/t" "$sb:/workspace/d"
	assert_eq "cp in of a tree with a link that leaves it: refused (125)" 125 "$rc"
	assert_match "naming it" "t/sub/zlink: symbolic link to '/etc' leaves the copied tree" "$errout"
	in_sandbox
	assert_eq "nothing of it left: no t/sub" "$before" "$out"
	sr exec "$sb" -- cat d/t/a
	assert_eq "the file it would have replaced is untouched" old "$out"
	rm "$h/bad/t/sub/zlink"
	sr cp "$h/bad/t" "$sb:/workspace/d"
	sr exec "$sb" -- sh -c 'cat d/t/a d/t/keep d/t/sub/b; ls -A /workspace /workspace/d'
	assert_eq "whole, it joins the directory there (cp -r): a replaced, keep kept, sub added" \
		"0 new mine b /workspace: d /workspace/d: t" "$rc $(echo $out)"
	sr exec "$sb" -- sh -c 'mkdir -p f && echo file >f/t'
	sr cp "$h/bad/t" "$sb:/workspace/f"
	assert_match "a directory over a file there: refused (125), saying so" \
		"^125 .*extract t/?: exists and is not a directory$" "$rc $errout"
	sr exec "$sb" -- sh -c 'cat f/t; ls -A f'
	assert_eq "and the file is untouched" "file t" "$(echo $out)"
	sr rm "$sb"
	rm -rf "$h"
}

# A copy in that would join a directory across a mount point (a --bind
# inside the destination): a rename cannot cross it, so it is refused
# before anything moves, and the mount point itself is a destination.
t_cp_in_mount() {
	local h="$SR_TMP/in-mount-$SR_AS"
	rm -rf "$h"
	mkdir -p "$h/host/m" && mkdir -m 0777 "$h/shared"
	echo x >"$h/host/m/f"
	echo y >"$h/host/g"
	own "$h"
	new_sandbox --bind "$h/shared" /workspace/m
	sr cp "$h/host" "$sb:/workspace/host"
	sr exec "$sb" -- mv host/g g
	sr cp "$h/host/m" "$sb:/workspace"
	assert_match "over a --bind: refused (125), saying what to do" \
		"^125 .*extract m: a mount point: copy into it" "$rc $errout"
	assert_eq "nothing of it left, on either side" "g host m |" \
		"$(sr exec "$sb" -- ls -A /workspace; echo $out) |$(ls -A "$h/shared")"
	sr cp "$h/host/m/f" "$sb:/workspace/m"
	assert_eq "into the mount point itself: copied" "0 f" "$rc $(ls -A "$h/shared")"
	sr rm "$sb"
	rm -rf "$h"
}

# A copy in over a file that is a mount point (a --bind of one file): a
# rename cannot replace it (EBUSY), and that came after the tree's other
# entries had moved in. Now it is refused before anything moves, saying so.
t_cp_in_bound_file() {
	local h="$SR_TMP/in-bound-$SR_AS" i
	rm -rf "$h"
	mkdir -p "$h/ws/sub" "$h/host/sub"
	echo host >"$h/bound"
	echo mine >"$h/host/sub/conf.txt"
	for i in $(seq 50); do echo "$i" >"$h/host/sub/n$i"; done
	own "$h"
	# Root's sandbox writes a --bind as host uid 65534, never as root.
	if [ "$SR_AS" = root ]; then chown 65534:65534 "$h/bound"; fi
	new_sandbox --workspace "$h/ws" --bind "$h/bound" /workspace/sub/conf.txt
	sr cp "$h/host/sub" "$sb:/workspace"
	assert_match "a tree with a file over a --bind of one file: refused (125), saying why" \
		"^125 .*extract sub/conf.txt: a mount point \(a --bind of a file\): it cannot be replaced" \
		"$rc $errout"
	sr exec "$sb" -- ls -A /workspace/sub
	assert_eq "nothing of it moved in (the other 50 files neither)" "conf.txt" "$out"
	sr cp "$h/host/sub/conf.txt" "$sb:/workspace/sub/conf.txt"
	assert_match "the file alone over it: refused the same" \
		"^125 .*extract conf.txt: a mount point" "$rc $errout"
	assert_eq "and the bound file is untouched" host "$(cat "$h/bound")"
	sr rm "$sb"
	rm -rf "$h"
}

# A copy in that fills the sandbox's disk to the last inode, into a
# directory of the workspace's lower layer: extracting it fitted, but
# moving it in copies that directory up (an inode), which failed after
# other entries had moved in. Now the directories it joins are copied up
# before anything moves.
t_cp_in_enospc() {
	local h="$SR_TMP/in-enospc-$SR_AS" i
	rm -rf "$h"
	mkdir -p "$h/ws/t/a" "$h/src/t/a"
	for i in $(seq 50); do echo "$i" >"$h/src/t/z$i"; done
	echo new >"$h/src/t/a/new1"
	# Fills the disk's inodes, then frees as many as it is told.
	cat >"$h/fill.py" <<'EOF'
import os, sys
os.makedirs("/tmp/fill", exist_ok=True)
n = 0
while True:
    try:
        os.close(os.open("/tmp/fill/%d" % n, os.O_CREAT | os.O_WRONLY, 0o644))
    except OSError:
        break
    n += 1
for i in range(int(sys.argv[1])):
    os.unlink("/tmp/fill/%d" % (n - 1 - i))
EOF
	own "$h"
	new_sandbox --workspace "$h/ws" --disk 20M
	sr cp "$h/fill.py" "$sb:/tmp/fill.py"
	# t copied up (a file of the agent's in it), t/a still only below.
	sr exec "$sb" -- sh -c 'touch /workspace/t/mine && python3 /tmp/fill.py 54'
	assert_eq "the disk's inodes filled but 54: the copy's entries and its hidden directory" 0 "$rc"
	sr cp "$h/src/t" "$sb:/workspace"
	assert_match "the copy fits, but copying t/a up does not: refused (125)" \
		"^125 .*extract t/a: No space left on device" "$rc $errout"
	sr exec "$sb" -- ls -A /workspace/t
	assert_eq "nothing of it moved in" "a mine" "$(echo $out)"
	sr exec "$sb" -- rm -r /tmp/fill
	sr cp "$h/src/t" "$sb:/workspace"
	sr exec "$sb" -- sh -c 'ls /workspace/t | wc -l; cat /workspace/t/a/new1'
	assert_eq "with room, the same copy: whole" "0 52 new" "$rc $(echo $out)"
	sr rm "$sb"
	rm -rf "$h"
}

# cp in ended midway (SIGTERM): its worker, cancelled, is killed, and what
# it had extracted goes with it. The agent stops the worker, so the copy
# is midway when it is ended; it is large enough (files to make, 50 MB to
# write) that the stopper, a loop over /proc, finds the worker however
# busy the machine is.
t_cp_in_interrupted() {
	local cp_pid h="$SR_TMP/in-int-$SR_AS"
	rm -rf "$h"
	mkdir -p "$h/t/many"
	echo small >"$h/t/0-small"
	head -c 50000000 /dev/zero >"$h/t/big"
	(cd "$h/t/many" && seq 2000 | xargs touch)
	own "$h"
	new_sandbox
	sr cp "$SR_TMP/stopper.py" "$sb:/tmp/stopper.py"
	stopper stop
	(as_user_exec "$SR" cp "$h/t" "$sb:/workspace/t" 2>/dev/null) &
	cp_pid=$!
	check "cp in is midway: the agent stopped its worker" \
		until_ok 20 grep -q "stopped a worker" "$SR_TMP/stopper.out"
	kill -TERM "$cp_pid"
	wait "$cp_pid"
	stopper_done
	check "its worker is gone" until_ok 10 _no_workers
	check "and nothing of the copy is left in the sandbox" until_ok 10 _ws_is ""
	sr cp "$h/t" "$sb:/workspace/t"
	sr exec "$sb" -- sh -c 'cat t/0-small; stat -c %s t/big'
	assert_eq "the next cp in copies it whole" "0 small 50000000" "$rc $(echo $out)"
	sr rm "$sb"
	rm -rf "$h"
}
# _ws_is NAMES: /workspace holds these names alone (one line, by ls -A).
_ws_is() {
	[ "$(as_user "$SR" exec "$sb" -- ls -A /workspace 2>&1 | tr '\n' ' ')" = "${1:+$1 }" ]
}

# Names of one file, made for nothing (a hard link costs the agent a
# directory entry, no inode): cp out wrote each name as a file of its own
# on the host, 65,000 of them in 1.3 s for a sandbox of 17 inodes, and
# more copies would use up the host's inodes. Now one file of many names,
# out and in, and through a snapshot.
t_cp_hardlinks() {
	local d="$SR_OUT/links-$SR_AS" snap="links-$SR_AS"
	rm -rf "$d"
	mkdir -p "$d"
	own "$d"
	new_sandbox
	sr exec "$sb" -- sh -c 'mkdir -p t/sub && echo data >t/f && for i in $(seq 2000); do
		ln t/f t/sub/l$i || exit 1; done'
	assert_eq "2,001 names of one file inside" 0 "$rc"
	sr cp "$sb:t" "$d/t"
	assert_eq "cp out: copied" 0 "$rc"
	assert_eq "one file of 2,001 names on the host, not 2,001 files" "1 2001 data" \
		"$(find "$d/t" -type f -printf '%i\n' | sort -u | wc -l) $(stat -c %h "$d/t/f") $(cat "$d/t/sub/l77")"
	sr cp "$d/t" "$sb:back"
	sr exec "$sb" -- sh -c 'stat -c %h back/f; find back -type f | wc -l'
	assert_eq "cp in: the same, inside" "2001
2001" "$out"
	sr snapshot "$sb" "$snap"
	assert_eq "snapshot: made" 0 "$rc"
	sr rm "$sb"
	new_sandbox --from "$snap"
	sr exec "$sb" -- stat -c %h t/f
	assert_eq "restored: one file of 2,001 names again" 2001 "$out"
	sr rm "$sb"
	sr snapshots rm "$snap"
	rm -rf "$d"
}

# A root caller's --export into a user's directory (outside review): the
# user renamed a root-owned 0700 directory there to the export's name, and
# the export made it 0755 and wrote into it, its files given to the user.
# A directory at the name must be the user's, as what the export makes is:
# the export fails (125) naming it, the directory unchanged. As root only:
# only root's export writes as another user.
t_export_into_moved_dir() {
	[ "$SR_AS" = root ] || return 0
	local d="$SR_TMP/export-moved"
	rm -rf "$d"
	mkdir -p "$d"
	chown "$SR_TEST_USER:$SR_TEST_USER" "$d"
	mkdir -m 0700 "$d/private"
	printf 'topsecret\n' >"$d/private/key"
	chmod 0600 "$d/private/key"
	setpriv --reuid="$SR_TEST_USER" --regid="$SR_TEST_USER" --clear-groups -- \
		mv "$d/private" "$d/out"
	sr --net none --export "out:$d/out" -- sh -c 'mkdir out && echo made >out/f'
	assert_eq "an export onto the moved directory: fails (125)" 125 "$rc"
	assert_match "naming it" "export out to $d/out: extract out/?: a directory of another owner than uid [0-9]+.* not changed" \
		"$errout"
	assert_eq "its owner and mode are unchanged" "0 700" "$(stat -c '%u %a' "$d/out")"
	check "nothing is written into it" test ! -e "$d/out/f"
	# The same beneath: out/deep's parent is the root directory.
	sr --net none --export "out:$d/" -- sh -c 'mkdir -p out/deep && echo made >out/deep/f'
	assert_eq "an export into it under its own name: fails (125)" 125 "$rc"
	assert_eq "unchanged" "0 700" "$(stat -c '%u %a' "$d/out")"
	check "nothing is made in it" test ! -e "$d/out/deep"
	# Into it (a trailing '/'): it is where the copy goes, root's, in the user's.
	sr --net none --export "out:$d/out/" -- sh -c 'mkdir out && echo made >out/f'
	assert_eq "an export into the moved directory itself: fails (125)" 125 "$rc"
	assert_match "saying whose directory holds it" \
		"export to $d/out: a directory of root's in a tree of uid [0-9]+'s, who could have put it there: not written" \
		"$errout"
	check "nothing is made in it" test ! -e "$d/out/out"
	assert_eq "unchanged" "0 700" "$(stat -c '%u %a' "$d/out")"
	# Where the user's own directory is there, the export is merged into it.
	rm -rf "$d/out"
	mkdir -m 0700 "$d/out"
	chown "$SR_TEST_USER:$SR_TEST_USER" "$d/out"
	sr --net none --export "out:$d/out" -- sh -c 'mkdir out && echo made >out/f'
	assert_eq "into the user's own directory: works" "0 made" "$rc $(cat "$d/out/f")"
	assert_eq "its files are the user's" "$SR_TEST_USER" "$(stat -c %U "$d/out/f")"
	rm -rf "$d"
}

for_each_user t_links_leave_copy t_link_at_dest t_link_at_src t_link_of_another_user \
	t_root_link_followed t_sparse_and_bound t_cp_killed t_cp_interrupted t_stuck_worker \
	t_stuck_snapshot t_cp_hardlinks t_cp_in_whole t_cp_in_mount t_cp_in_interrupted \
	t_cp_in_bound_file t_cp_in_enospc t_stuck_changes t_export_into_moved_dir
done_testing
