#!/usr/bin/env bash
# What the agent sees of its machine (docs/limits.md, "What the agent
# sees"): os.totalmem(), /proc/meminfo and free show the memory limit,
# nproc and os.cpus() the CPUs (rounded up), live as the sandbox uses
# memory and CPU; read-only; the snapshot where FUSE cannot be had; in
# living sandboxes too; nothing left afterwards. As root and as a user.
. "$(dirname "$0")/libtest.sh"

# The host's CPUs (ours, by affinity): a sandbox sees the limit, or these where fewer.
host_cpus=$(nproc)
cpus_for() {
	if [ "$1" -lt "$host_cpus" ]; then echo "$1"; else echo "$host_cpus"; fi
}

node_facts='const os = require("os");
console.log(os.totalmem(), os.cpus().length, os.availableParallelism())'

# Whether the round's user can open /dev/fuse: a root caller's PID 1 opens
# it as root; others need it 0666 (Debian's udev rule; tools/bootstrap).
fuse_for_round() {
	[ -c /dev/fuse ] || return 1
	[ "$SR_AS" = root ] && return 0
	[ "$(stat -c %a /dev/fuse)" = 666 ] || { [ "$SR_AS" = self ] && [ -r /dev/fuse ] && [ -w /dev/fuse ]; }
}

# How the round's sandboxes hold memory (the result record's enforced.memory).
memory_strategy() {
	local res="$SR_OUT/procview-$SR_AS.json"
	rm -f "$res"
	sr --net none --memory 64M --result "$res" -- true
	json_get "$res" enforced.memory
}

# The command prefix as_user would use, as words (for unshare below).
user_cmd() {
	if [ "$SR_AS" = user ] && [ "$(id -u)" = 0 ]; then
		echo setpriv --reuid="$SR_TEST_USER" --regid="$SR_TEST_USER" --clear-groups \
			--inh-caps=-all -- env HOME="$SR_TMP/home-user" XDG_CONFIG_HOME="$SR_TMP/xdg-user" \
			SANDBOX_RUN_STATE_DIR="$SR_TMP/state-user" SANDBOX_RUN_DATA_DIR="$SR_TMP/data-user"
	fi
}

t_default_profile() {
	local want
	want=$(cpus_for 2)
	sr -- sh -c "node -e '$node_facts'; nproc; free -b | awk '/^Mem:/ { print \$2 }'"
	assert_eq "default profile: runs" 0 "$rc"
	assert_eq "default profile (2G, 2 CPUs): os.totalmem() is 2 GiB, os.cpus() and availableParallelism() $want" \
		"2147483648 $want $want" "$(sed -n 1p <<<"$out")"
	assert_eq "default profile: nproc is $want" "$want" "$(sed -n 2p <<<"$out")"
	assert_eq "default profile: free's total is 2 GiB" 2147483648 "$(sed -n 3p <<<"$out")"
}

t_small() {
	local want
	want=$(cpus_for 1)
	sr --net none --cpus 1 --memory 512M -- sh -c "node -e '$node_facts'; nproc
python3 -c 'import os; print(os.cpu_count())'; getconf _NPROCESSORS_ONLN
grep -c ^processor /proc/cpuinfo; grep -c '^cpu[0-9]' /proc/stat
free -b | awk '/^Mem:/ { print \$2 }'; grep MemTotal /proc/meminfo"
	assert_eq "--cpus 1 --memory 512M: runs" 0 "$rc"
	assert_eq "--cpus 1 --memory 512M: os.totalmem() 512 MiB, os.cpus() $want" \
		"536870912 $want $want" "$(sed -n 1p <<<"$out")"
	assert_eq "--cpus 1: nproc (affinity) is $want" "$want" "$(sed -n 2p <<<"$out")"
	assert_eq "--cpus 1: python's os.cpu_count() (glibc, /proc/stat) is $want" "$want" "$(sed -n 3p <<<"$out")"
	assert_eq "--cpus 1: getconf _NPROCESSORS_ONLN is $want" "$want" "$(sed -n 4p <<<"$out")"
	assert_eq "--cpus 1: /proc/cpuinfo has $want processor" "$want" "$(sed -n 5p <<<"$out")"
	assert_eq "--cpus 1: /proc/stat has $want cpuN line" "$want" "$(sed -n 6p <<<"$out")"
	assert_eq "--memory 512M: free's total" 536870912 "$(sed -n 7p <<<"$out")"
	assert_match "--memory 512M: /proc/meminfo in the kernel's format" \
		'^MemTotal:         524288 kB$' "$(sed -n 8p <<<"$out")"

	# A fraction rounds up; the quota, not the pin, holds it to half of one.
	sr --net none --cpus 0.5 -- nproc
	assert_eq "--cpus 0.5: nproc is 1" 1 "$out"
	# The pin is a view: the agent may widen it again, to the caller's own CPUs.
	sr --net none --cpus 1 -- python3 -c "import os
os.sched_setaffinity(0, range($host_cpus))
print(len(os.sched_getaffinity(0)))"
	assert_eq "the agent may widen its affinity (a view, not a limit)" "$host_cpus" "$out"
	# No limit: the host's figures, untouched.
	sr --net none --memory 0 --cpus 0 -- sh -c 'nproc; grep -c sandbox-run /proc/self/mountinfo'
	assert_eq "no limits: the host's CPUs, and no view mounted" "$host_cpus
0" "$out"
}

# A caller confined to fewer CPUs than the host has (taskset, a container's
# cpuset): the sandbox's CPUs are those, in /proc/stat and cpuinfo too.
t_caller_affinity() {
	if [ "$host_cpus" -lt 2 ] || ! command -v taskset >/dev/null; then
		skip "a caller with fewer CPUs than the host" "one CPU here, or no taskset"
		return
	fi
	out=$(as_user taskset -c 0 "$SR" --net none --cpus 2 -- sh -c "nproc
node -e 'console.log(require(\"os\").cpus().length)'; grep '^cpu[0-9]' /proc/stat | cut -d' ' -f1" 2>/dev/null)
	assert_eq "taskset -c 0, --cpus 2: nproc, os.cpus() and /proc/stat agree on cpu0" "1
1
cpu0" "$out"
}

# A python agent that reads /proc/meminfo through one fd kept open (as
# free and top do), allocates and touches 200 MiB, and frees it again.
cat >"$SR_TMP/touch.py" <<'EOF'
f = open("/proc/meminfo")
def free():
    f.seek(0)
    return int([l for l in f.read().splitlines() if l.startswith("MemFree:")][0].split()[1])
before = free()
b = bytearray(200 << 20)
for i in range(0, len(b), 4096):
    b[i] = 1
during = free()
del b
after = free()
print((before - during) >> 10, (before - after) >> 10)
EOF
chmod 0644 "$SR_TMP/touch.py"

t_live_memory() {
	local strategy live=no
	strategy=$(memory_strategy)
	fuse_for_round && live=yes
	sr --net none --memory 1G --ro-bind "$SR_TMP/touch.py" /tmp/touch.py -- python3 /tmp/touch.py
	assert_eq "allocate 200 MiB: runs" 0 "$rc"
	read -r drop back <<<"$out"
	if [ "$live" = yes ] && [ "$strategy" != rlimit ]; then
		check "MemFree drops by what the agent touched ($drop MiB of 200), on a kept-open fd" \
			test "$drop" -ge 180 -a "$drop" -le 260
		check "and comes back once it is freed ($back MiB still used)" test "$back" -le 20
	elif [ "$live" = yes ]; then
		# The rlimit strategy keeps no count of the sandbox's memory: MemFree is the host's, capped.
		assert_eq "no memory cgroup ($strategy): MemFree is the host's, capped at MemTotal" "0 0" "$drop $back"
	else
		assert_eq "no FUSE: MemFree is a snapshot of the start" "0 0" "$drop $back"
	fi
}

# /proc/stat read twice through one fd, CPU burnt in between.
t_live_stat() {
	local live=no
	fuse_for_round && live=yes
	if [ "$host_cpus" -lt 2 ]; then
		skip "/proc/stat live" "one CPU here: a 1-CPU sandbox is not pinned, and /proc/stat is the host's"
		return
	fi
	sr --net none --cpus 1 -- python3 -c 'import time
f = open("/proc/stat")
def ticks():
    f.seek(0)
    return sum(int(x) for x in f.readline().split()[1:4])
a = ticks()
end = time.time() + 0.3
while time.time() < end:
    pass
print(ticks() - a)'
	assert_eq "/proc/stat read twice: runs" 0 "$rc"
	if [ "$live" = yes ]; then
		check "/proc/stat re-read at offset 0 sees the CPU time spent meanwhile ($out ticks)" test "$out" -ge 10
	else
		assert_eq "no FUSE: /proc/stat is a snapshot" 0 "$out"
	fi
}

t_live_or_snapshot() {
	local want=0 mounts
	fuse_for_round && want=3
	[ "$host_cpus" -lt 2 ] && want=$((want / 3))
	sr -v --net none --cpus 1 -- grep -c ' - fuse.sandbox-run ' /proc/self/mountinfo
	mounts=${out:-0}
	assert_eq "views served live: $want FUSE mounts (/proc/meminfo, stat, cpuinfo)" "$want" "$mounts"
	if [ "$want" = 0 ]; then
		assert_match "without FUSE, -v says the views are snapshots, and why" \
			"show the sandbox as it was at its start, not live \(/dev/fuse: " "$errout"
	else
		assert_no_match "live: -v says nothing of snapshots" "not live" "$errout"
	fi
	sr --net none -- true
	assert_no_match "never a warning about the views" "/proc/|FUSE| live" "$errout"
}

t_read_only() {
	sr --net none --memory 256M -- sh -c 'echo x > /proc/meminfo; echo "write $?"
python3 -c "open(\"/proc/meminfo\", \"r+\")" 2>/dev/null; echo "open for writing $?"
chmod 0666 /proc/meminfo 2>/dev/null; echo "chmod $?"
umount /proc/meminfo 2>/dev/null; echo "umount $?"
umount -l /proc/meminfo 2>/dev/null; echo "umount -l $?"
grep MemTotal /proc/meminfo; stat -c "%U %a %s" /proc/meminfo'
	assert_match "/proc/meminfo cannot be written" "write [1-9]" "$out"
	assert_match "nor opened for writing" "open for writing [1-9]" "$out"
	assert_match "nor chmod'ed" "chmod [1-9]" "$out"
	assert_match "nor unmounted from inside" "umount [1-9]" "$out"
	assert_match "nor detached" "umount -l [1-9]" "$out"
	assert_match "and is still the view after all that" "MemTotal: +262144 kB" "$out"
	if fuse_for_round; then
		assert_match "owned by nobody, 0444, size 0, as the real one" "nobody 444 0" "$out"
	fi
}

t_fallback() {
	local o="$SR_TMP/.out" e="$SR_TMP/.err"
	if [ "$(id -u)" != 0 ]; then
		skip "fallback without FUSE" "binding /dev/null over /dev/fuse in a mount namespace needs root"
		return
	fi
	# shellcheck disable=SC2046
	unshare -m -- sh -c 'mount --bind /dev/null /dev/fuse && exec "$@"' sh $(user_cmd) \
		"$SR" -v --net none --cpus 1 --memory 512M -- sh -c "node -e '$node_facts'; nproc
grep -c ' - fuse.sandbox-run ' /proc/self/mountinfo; grep MemTotal /proc/meminfo" \
		</dev/null >"$o" 2>"$e"
	rc=$?
	out=$(cat "$o")
	errout=$(cat "$e")
	assert_eq "no FUSE (/dev/null over /dev/fuse): runs" 0 "$rc"
	assert_eq "no FUSE: os.totalmem() and os.cpus() still the limits" \
		"536870912 $(cpus_for 1) $(cpus_for 1)" "$(sed -n 1p <<<"$out")"
	assert_eq "no FUSE: nproc still $(cpus_for 1)" "$(cpus_for 1)" "$(sed -n 2p <<<"$out")"
	assert_eq "no FUSE: no view mounted" 0 "$(sed -n 3p <<<"$out")"
	assert_match "no FUSE: /proc/meminfo is the snapshot" "MemTotal: +524288 kB" "$out"
	if [ "$host_cpus" -ge 2 ]; then
		assert_match "no FUSE: -v says so, once, and why" \
			"meminfo, stat and cpuinfo show the sandbox as it was at its start, not live \((/dev/fuse|mount fuse.sandbox-run on /proc/meminfo): " \
			"$errout"
	fi
}

# state_dir: where the round's living sandboxes are kept (libtest.sh sets it).
t_living() {
	local sb want keeper pid1 drop marker="procview-$SR_AS-$$"
	want=$(cpus_for 1)
	sr create --net none --memory 512M --cpus 1 --timeout 60
	sb=$out
	assert_eq "create --memory 512M --cpus 1" 0 "$rc"
	sr exec "$sb" -- sh -c "node -e '$node_facts'; nproc"
	assert_eq "exec: os.totalmem(), os.cpus() and nproc are the sandbox's" "536870912 $want $want
$want" "$out"
	(as_user_exec "$SR" exec "$sb" -- sh -c "sleep 60; : $marker" </dev/null >/dev/null 2>&1) &
	SR_BG_PIDS="${SR_BG_PIDS:-} $!"
	check "exec: a process that stays" until_ok 5 running "$marker"
	sr exec "$sb" -- sh -c 'grep MemTotal /proc/meminfo; grep -c "^cpu[0-9]" /proc/stat'
	assert_match "exec beside it: /proc/meminfo and /proc/stat are the sandbox's" \
		"^MemTotal: +524288 kB
$want\$" "$out"
	if fuse_for_round && [ "$(memory_strategy)" != rlimit ]; then
		sr exec "$sb" -- python3 -c "$(cat "$SR_TMP/touch.py")"
		read -r drop _ <<<"$out"
		check "exec: MemFree live in a living sandbox ($drop MiB of 200)" \
			test "${drop:-0}" -ge 180 -a "${drop:-0}" -le 260
	fi
	keeper=$(json_get "$(state_dir)/$sb/state.json" keeper_pid)
	pid1=$(cat /proc/"$keeper"/task/*/children 2>/dev/null | tr ' ' '\n' | head -1)
	check "the sandbox's PID 1 (its views' server) runs" test -n "$pid1" -a -e "/proc/${pid1:-0}"
	sr rm "$sb"
	assert_eq "rm" 0 "$rc"
	check "after rm, nothing of the sandbox runs" until_gone 5 running "$marker"
	check "and its PID 1 is gone, and its mounts with its mount namespace" \
		until_gone 5 test -e "/proc/${pid1:-0}"
	check "nor is its state left" test ! -e "$(state_dir)/$sb"
}

for_each_user t_default_profile t_small t_caller_affinity t_live_memory t_live_stat t_live_or_snapshot t_read_only \
	t_fallback t_living
done_testing
