#!/usr/bin/env bash
# Snapshots against a hostile agent and a hostile host (the outside review
# of `snapshot`, `snapshots` and `create --from`). The agent controls every
# file the snapshot keeps (/workspace, /home/user, /tmp), and can stop the
# worker that writes it; on the host, verbs run at once, get killed half
# way, and take the names the user gives them.
. "$(dirname "$0")/../integration/libtest.sh"
. "$(dirname "$0")/../integration/libworker.sh"

new_sandbox() {
	sr create --net none --timeout 120 "$@"
	sb=$out
}

data_dir() {
	if [ "$SR_AS" = user ]; then echo "$SR_TMP/data-user"; else echo "$SANDBOX_RUN_DATA_DIR"; fi
}

# What the snapshots directory holds: the snapshots, and any being made
# (NAME.new-XXXXXXXX).
snap_entries() {
	find "$(data_dir)/snapshots" -mindepth 1 -maxdepth 1 -printf '%f\n' 2>/dev/null | sort
}
# A failed snapshot's client hears of it before the keeper has removed
# what it made: give it a moment (cp.sh's t_stuck_snapshot does too).
entries_are() { [ "$(snap_entries)" = "$1" ]; }
settled() { until_ok 5 entries_are "$1"; }

# Files that restore specially: whiteouts (char 0:0, which mknod makes
# without a capability), overlayfs' own xattrs, a FIFO, a socket, set-id
# bits, a sticky directory, names with a newline or of 255 bytes, a 1 TB
# sparse file. Restored, the new sandbox has no more than the first: no
# device, FIFO or socket, no set-id bit, no xattr, and the data as it was
# (and the directory's sticky bit, which is no right of anyone's here).
t_crafted_files() {
	local a
	new_sandbox --disk 64M
	sr exec "$sb" -- python3 -c '
import os, socket, stat
os.chdir("/workspace")
os.mknod("wh", stat.S_IFCHR | 0o644, 0)
os.mknod("/tmp/wh", stat.S_IFCHR | 0o644, 0)
os.mkfifo("fifo")
socket.socket(socket.AF_UNIX).bind("sock")
open("suid", "w").write("#!/bin/sh\nid -u\n"); os.chmod("suid", 0o6755)
os.mkdir("sticky"); os.chmod("sticky", 0o1777)
os.mkdir("opaque"); open("opaque/f", "w").write("kept\n")
os.setxattr("opaque", "user.overlay.opaque", b"y")
open("marked", "w").write("kept\n")
os.setxattr("marked", "user.overlay.whiteout", b"y")
open(os.path.expanduser("~/a\nb"), "w").write("newline\n")
open("x" * 255, "w").write("long\n")
with open("/tmp/sparse", "w") as f: f.truncate(1 << 40)
kinds = sorted(n for n in os.listdir(".") if not stat.S_ISREG(os.lstat(n).st_mode) and not stat.S_ISDIR(os.lstat(n).st_mode))
print(" ".join(kinds))'
	assert_eq "the agent made a whiteout, a FIFO and a socket" "fifo sock wh" "$out"
	sr snapshot "$sb" "crafted-$SR_AS"
	assert_eq "snapshot of them: taken" 0 "$rc"
	sr rm "$sb"
	new_sandbox --from "crafted-$SR_AS"
	a=$sb
	assert_eq "create --from it: restored" 0 "$rc"
	sr exec "$a" -- python3 -c '
import os, stat
os.chdir("/workspace")
odd = [p for d in ("/workspace", "/tmp", os.path.expanduser("~")) for p in (os.path.join(d, n) for n in os.listdir(d))
       if not stat.S_ISREG(os.lstat(p).st_mode) and not stat.S_ISDIR(os.lstat(p).st_mode)]
print("odd:", odd)
setid = [p for d in ("/workspace", "/tmp") for p in (os.path.join(d, n) for n in os.listdir(d)) if os.lstat(p).st_mode & 0o6000]
print("set-id:", setid, "sticky:", oct(os.stat("sticky").st_mode & 0o7777))
print("xattrs:", os.listxattr("opaque") + os.listxattr("marked"))
print(open("opaque/f").read().strip(), open("marked").read().strip(), open(os.path.expanduser("~/a\nb")).read().strip(), open("x" * 255).read().strip())
st = os.stat("/tmp/sparse"); print(st.st_size, st.st_blocks)'
	assert_eq "restored: no device, FIFO or socket, no set-id bit, no xattr; names, data and holes kept" \
		"$(printf "odd: []\nset-id: [] sticky: 0o1777\nxattrs: []\nkept kept newline long\n1099511627776 0")" "$out"
	sr exec "$a" -- /workspace/suid
	assert_eq "the set-uid file runs as the agent" 1000 "$out"
	sr rm "$a"
	sr snapshots rm "crafted-$SR_AS"
}

# A tree deeper than the writer walks: refused, nothing left. The agent
# can so keep its sandbox from being snapshotted, as it can by stopping
# the worker; never make the worker overflow its stack.
t_deep() {
	new_sandbox
	sr exec "$sb" -- python3 -c '
import os
os.chdir("/workspace")
for i in range(10000):
    os.mkdir("d"); os.chdir("d")
open("leaf", "w").write("x")'
	sr snapshot "$sb" "deep-$SR_AS"
	assert_eq "snapshot of a tree 10,000 deep: 125" 125 "$rc"
	assert_match "saying why" "deeper than 256 levels" "$errout"
	settled ""
	assert_eq "nothing left in the data directory" "" "$(snap_entries)"
	sr rm "$sb"
}

# The worker writes the snapshot's file on the host itself, as the
# agent's uid, and the agent can stop it: but never reach that file (or
# anything of the worker's) to write past the bound, or keep it: the
# worker is non-dumpable, as PID 1 is.
cat >"$SR_TMP/grab.py" <<'EOF'
import ctypes, os, signal, sys, time
me, end = os.getpid(), time.time() + 20
print("ready", flush=True)
libc = ctypes.CDLL(None, use_errno=True)
while time.time() < end:
    for p in os.listdir("/proc"):
        if not p.isdigit() or int(p) in (1, me):
            continue
        try:
            st = open("/proc/%s/stat" % p).read()
        except OSError:
            continue
        if st[st.index("(") + 1:st.rindex(")")] != "sandbox-run" or st[st.rindex(")") + 2:].split()[1] != "1":
            continue
        w = int(p)
        os.kill(w, signal.SIGSTOP)
        got = []
        for n in range(8):
            try:
                os.close(os.open("/proc/%d/fd/%d" % (w, n), os.O_WRONLY))
                got.append("fd %d" % n)
            except OSError as e:
                if e.errno not in (13, 2):
                    got.append("fd %d: %s" % (n, e))
        try:
            os.listdir("/proc/%d/fd" % w)
            got.append("fd listed")
        except OSError:
            pass
        if libc.ptrace(16, w, 0, 0) == 0:
            got.append("ptrace")
        os.kill(w, signal.SIGCONT)
        sys.exit(print("worker: " + (", ".join(got) or "nothing")))
print("no worker")
EOF
chmod 0644 "$SR_TMP/grab.py"
t_worker_out_of_reach() {
	local gp
	new_sandbox
	sr cp "$SR_TMP/grab.py" "$sb:/tmp/grab.py"
	sr exec "$sb" -- sh -c 'head -c 64M /dev/urandom >/workspace/bulk'
	: >"$SR_TMP/grab.out"
	(as_user_exec "$SR" exec "$sb" -- python3 /tmp/grab.py >"$SR_TMP/grab.out" 2>&1) &
	gp=$!
	SR_BG_PIDS="${SR_BG_PIDS:-} $gp"
	until_ok 20 grep -q ready "$SR_TMP/grab.out"
	sr snapshot "$sb" "reach-$SR_AS"
	wait "$gp"
	assert_eq "the agent stops the worker, and gets none of its fds, nor ptrace" \
		"worker: nothing" "$(sed 1d "$SR_TMP/grab.out")"
	assert_eq "the snapshot is made all the same" 0 "$rc"
	sr snapshots rm "reach-$SR_AS"
	sr rm "$sb"
}

# The caller's data directory fills up while a snapshot is written (a
# tmpfs of 5 MB, in a mount namespace of the test's own): the snapshot
# fails, nothing of it is left, the sandbox serves on.
t_data_dir_full() {
	local d="$SR_TMP/fullfs-$SR_AS"
	mkdir -p "$d"
	out=$(SR_AS=$SR_AS SR_TEST_USER=$SR_TEST_USER SR_TMP=$SR_TMP SR=$SR unshare -m bash -c \
		"$(declare -f as_user)"'
		d=$1
		mount -t tmpfs -o size=5m full "$d" && mkdir -m 0700 "$d/data" "$d/state" || exit 99
		[ "$SR_AS" = root ] || chown "$SR_TEST_USER" "$d/data" "$d/state"
		run() { as_user env SANDBOX_RUN_DATA_DIR="$d/data" SANDBOX_RUN_STATE_DIR="$d/state" "$SR" "$@"; }
		sb=$(run create -q --net none --timeout 60 2>/dev/null)
		run exec "$sb" -- sh -c "head -c 20M /dev/urandom >/workspace/r"
		run snapshot "$sb" full 2>&1
		rc=$?
		for i in $(seq 50); do [ -z "$(ls "$d/data/snapshots")" ] && break; sleep 0.1; done
		echo "rc=$rc left=$(ls "$d/data/snapshots")"
		run exec "$sb" -- echo serving
		run rm "$sb"' full "$d" 2>&1)
	assert_eq "a snapshot past the data directory's room: 125, nothing left, the sandbox serving" \
		"$(printf 'sandbox-run: snapshot: archive workspace/r: No space left on device\nrc=125 left=\nserving')" "$out"
	rmdir "$d"
}

# A read-only bind of a long path over a writable one (its profile line
# longer than inih reads, 198 characters): the snapshot's configuration
# lost it, as a comment, and a sandbox made from the snapshot wrote what
# the first could only read (the host's file). Now such a snapshot is
# refused, saying which value, and nothing of it kept.
t_config_whole() {
	local top="$SR_TMP/proj-$SR_AS" long d n
	long=$(printf 'a%.0s' {1..60})/$(printf 'b%.0s' {1..60})
	rm -rf "$top" && mkdir -p "$top/$long/ro" && echo precious >"$top/$long/ro/file"
	chmod -R a+rwX "$top"
	own "$top"
	d=/workspace/proj/$long/ro
	new_sandbox --bind "$top" /workspace/proj --ro-bind "$top/$long/ro" "$d"
	sr exec "$sb" -- sh -c "echo changed >$d/file"
	check "the first sandbox cannot write the read-only bind" test "$rc" != 0
	sr snapshot "$sb" "whole-$SR_AS"
	assert_eq "snapshot of it: refused (125)" 125 "$rc"
	assert_match "saying which value a profile cannot hold" \
		"configuration cannot be kept whole: its ro-bind has a value a profile cannot hold" "$errout"
	settled ""
	assert_eq "nothing kept" "" "$(snap_entries)"
	sr rm "$sb"
	sr create --net none --timeout 60 --from "whole-$SR_AS"
	n=$out
	if [ "$rc" = 0 ]; then
		sr exec "$n" -- sh -c "echo changed >$d/file"
		sr rm "$n"
		sr snapshots rm "whole-$SR_AS"
	fi
	assert_eq "the host's file stays as the first sandbox had to leave it" precious "$(cat "$top/$long/ro/file")"
	rm -rf "$top"
}

# A snapshot's name is a directory of the user's data directory: none
# that names anything else, or one being made (NAME.new-XXXXXXXX, never
# listed, and removed once nobody makes it).
t_names() {
	local n before
	new_sandbox
	before=$(find "$(data_dir)" "$SR_TMP" -maxdepth 1 | sort)
	for n in ../x . .. x/y /tmp/x "" "$(printf 'a\nb')" .hidden "$(printf 'n%.0s' {1..65})" "a.new-00000001"; do
		sr snapshot "$sb" "$n"
		assert_eq "snapshot named '$n': refused (125)" 125 "$rc"
		assert_match "saying the name is bad" "bad snapshot name" "$errout"
	done
	assert_eq "nothing made in the data directory or beside it" "$before" \
		"$(find "$(data_dir)" "$SR_TMP" -maxdepth 1 | sort)"
	assert_eq "and no snapshot" "" "$(snap_entries)"
	sr create --from a.new-00000001
	assert_eq "create --from a name of one being made: refused (125)" 125 "$rc"
	assert_match "saying the name is bad" "bad snapshot name 'a.new-00000001'" "$errout"
	# One made all the same (it was, hidden) must not spoil the next cases.
	[ -z "$(snap_entries)" ] || as_user "$SR" snapshots rm a.new-00000001 >/dev/null 2>&1
	sr rm "$sb"
}

# Two snapshots of one name at once: one is made, the other refused, and
# the one made is whole.
t_same_name_at_once() {
	local p1 p2 r1 r2
	new_sandbox
	sr exec "$sb" -- sh -c 'head -c 8M /dev/urandom >/workspace/bulk; md5sum </workspace/bulk >/workspace/sum'
	(as_user_exec "$SR" snapshot "$sb" "same-$SR_AS" >/dev/null 2>"$SR_TMP/.s1") &
	p1=$!
	(as_user_exec "$SR" snapshot "$sb" "same-$SR_AS" >/dev/null 2>"$SR_TMP/.s2") &
	p2=$!
	wait "$p1"
	r1=$?
	wait "$p2"
	r2=$?
	assert_eq "one made, one refused" "0 125" "$(printf '%s\n' "$r1" "$r2" | sort -n | tr '\n' ' ' | sed 's/ $//')"
	assert_match "saying the name is taken" "named 'same-$SR_AS' already" "$(cat "$SR_TMP/.s1" "$SR_TMP/.s2")"
	settled "same-$SR_AS"
	assert_eq "one snapshot, nothing half-made" "same-$SR_AS" "$(snap_entries)"
	sr rm "$sb"
	new_sandbox --from "same-$SR_AS"
	sr exec "$sb" -- sh -c 'md5sum </workspace/bulk | cmp - /workspace/sum && echo whole'
	assert_eq "restored whole" whole "$out"
	sr rm "$sb"
	sr snapshots rm "same-$SR_AS"
}

# The keeper killed while its snapshot is written (here: the agent stopped
# the worker, --idle-timeout 0): its half-made snapshot, up to the disk
# limit of files, stayed in the data directory for good, in no listing.
# The next `snapshots` (or `snapshot`) removes it; one being made it
# leaves alone.
t_keeper_killed() {
	local sp kp name
	# A name of 60 characters: its directory being made (.new-XXXXXXXX) is
	# longer than a name may be, and was never swept.
	name=$(printf 'killed-%s-%s' "$SR_AS" "$(printf 'x%.0s' {1..60})" | cut -c1-60)
	new_sandbox
	sr cp "$SR_TMP/stopper.py" "$sb:/tmp/stopper.py"
	sr exec "$sb" -- sh -c 'head -c 64M /dev/urandom >/workspace/bulk'
	stopper stop
	(as_user_exec "$SR" snapshot --idle-timeout 0 "$sb" "$name" >/dev/null 2>&1) &
	sp=$!
	SR_BG_PIDS="${SR_BG_PIDS:-} $sp"
	stopper_done
	assert_eq "the agent stops the snapshot's worker" "stopped a worker" "$stopper_did"
	check "its snapshot is being made" until_ok 10 test -n "$(snap_entries)"
	sr snapshots
	assert_match "snapshots: one being made is not listed" "^NAME +CREATED +SIZE +FROM$" "$out"
	assert_match "and left alone" "^$name\.new-[0-9a-f]{8}$" "$(snap_entries)"
	kp=$(json_get "$(state_dir)/$sb/state.json" keeper_pid)
	kill -9 "$kp"
	wait "$sp"
	assert_eq "snapshot: its keeper killed, 125" 125 "$?"
	sr snapshots
	assert_eq "snapshots: 0" 0 "$rc"
	assert_eq "the half-made snapshot is gone from the data directory" "" "$(snap_entries)"
	new_sandbox
	sr snapshot "$sb" "$name"
	assert_eq "its name can be taken again" "0 $name" "$rc $(snap_entries)"
	sr rm "$sb"
	sr snapshots rm "$name"
}

for_each_user t_crafted_files t_deep t_worker_out_of_reach t_data_dir_full t_config_whole t_names t_same_name_at_once t_keeper_killed
done_testing
