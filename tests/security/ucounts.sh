#!/usr/bin/env bash
# Per-user kernel counts a sandbox shares with its host uid (security round
# 2, finding 4): an unprivileged caller's agent runs as the caller's uid on
# the host, so without limits of its own it used up the caller's inotify
# instances and POSIX message queue quota; any sandbox could take the
# whole host-wide pool of ptys; and every sandbox of root's ran as the same
# host uid. Shared memory locked with SHM_LOCK is counted the same way
# (against RLIMIT_MEMLOCK, per user and up the user namespaces). Linux
# native AIO's contexts are counted for the whole host (fs.aio-max-nr),
# and any process could take them all. Each case checks what the caller (or another sandbox) keeps.
. "$(dirname "$0")/../integration/libtest.sh"

# hog KIND: an agent in the background that takes as many KIND as it can,
# writes how many to /out/count, and holds them until /out/stop exists.
cat >"$SR_TMP/hog.py" <<'EOF'
import ctypes, os, platform, sys, time
libc = ctypes.CDLL(None, use_errno=True)
kind, n, held = sys.argv[1], 0, []
if kind == "zerocopy":
    import socket
    # MSG_ZEROCOPY sends to a peer that never reads: their pages stay pinned.
    lsn = socket.create_server(("127.0.0.1", 0))
    zc = socket.create_connection(lsn.getsockname())
    zc.setsockopt(socket.SOL_SOCKET, 60, 1)  # SO_ZEROCOPY
    zc.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 64 << 20)
    peer, _ = lsn.accept()
    zc.setblocking(False)
io_setup = {"x86_64": 206, "aarch64": 0, "riscv64": 0, "ppc64le": 227, "s390x": 243}[platform.machine()]
# Contexts of a 256th of the host's count each: 400 are more than the whole.
events = max(1024, int(open("/proc/sys/fs/aio-max-nr").read()) // 256)
class Attr(ctypes.Structure):
    _fields_ = [("flags", ctypes.c_long), ("maxmsg", ctypes.c_long),
                ("msgsize", ctypes.c_long), ("curmsgs", ctypes.c_long), ("pad", ctypes.c_long * 4)]
attr = Attr(0, 10, 8192, 0)
while n < 400:
    if kind == "inotify":
        fd = libc.inotify_init1(0)
    elif kind == "mqueue":
        fd = libc.mq_open(("/hog%d" % n).encode(), os.O_CREAT | os.O_RDWR, 0o600, ctypes.byref(attr))
    elif kind == "shmlock":
        # 64 KiB segments, IPC_CREAT | 0600, then SHM_LOCK (11).
        fd = libc.shmget(0, ctypes.c_size_t(65536), 0o1600)
        if fd >= 0 and libc.shmctl(fd, 11, None) < 0:
            fd = -1
    elif kind == "zerocopy":
        try:
            fd = 0 if zc.send(bytes(65536), 0x4000000) == 65536 else -1  # MSG_ZEROCOPY
        except OSError:
            fd = -1
    elif kind == "aio":
        fd = libc.syscall(io_setup, events, ctypes.byref(ctypes.c_ulong(0)))
    else:
        try:
            fd = os.openpty()[0]
        except OSError as e:
            fd, err = -1, e.errno
    if fd < 0:
        break
    held.append(fd)
    n += 1
open("/out/count", "w").write("%d\n" % n)
while not os.path.exists("/out/stop"):
    time.sleep(0.05)
EOF
# probe KIND: whether the caller can still take one.
cat >"$SR_TMP/one.py" <<'EOF'
import ctypes, os, platform, sys
libc = ctypes.CDLL(None, use_errno=True)
class Attr(ctypes.Structure):
    _fields_ = [("flags", ctypes.c_long), ("maxmsg", ctypes.c_long),
                ("msgsize", ctypes.c_long), ("curmsgs", ctypes.c_long), ("pad", ctypes.c_long * 4)]
if sys.argv[1] == "inotify":
    fd = libc.inotify_init1(0)
elif sys.argv[1] == "shmlock":
    fd = libc.shmget(0, ctypes.c_size_t(4096), 0o1600)
    if fd >= 0 and libc.shmctl(fd, 11, None) < 0:
        libc.shmctl(fd, 0, None)
        fd = -1
    elif fd >= 0:
        libc.shmctl(fd, 0, None)
elif sys.argv[1] == "zerocopy":
    import socket
    lsn = socket.create_server(("127.0.0.1", 0))
    zc = socket.create_connection(lsn.getsockname())
    zc.setsockopt(socket.SOL_SOCKET, 60, 1)
    zc.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 64 << 20)
    zc.setblocking(False)
    sent = 0
    try:
        # A quarter of a limit of 8 MiB: what half of it leaves room for.
        while sent < (2 << 20):
            sent += zc.send(bytes(65536), 0x4000000)
        fd = 0
    except OSError as e:
        fd = -1
        ctypes.set_errno(e.errno)
elif sys.argv[1] == "aio":
    io_setup = {"x86_64": 206, "aarch64": 0, "riscv64": 0, "ppc64le": 227, "s390x": 243}[platform.machine()]
    fd = libc.syscall(io_setup, 1, ctypes.byref(ctypes.c_ulong(0)))
else:
    name = ("/sr-probe-%d" % os.getpid()).encode()
    fd = libc.mq_open(name, os.O_CREAT | os.O_RDWR, 0o600, ctypes.byref(Attr(0, 10, 8192, 0)))
    if fd >= 0:
        libc.mq_unlink(name)
print("ok" if fd >= 0 else os.strerror(ctypes.get_errno()))
EOF
chmod a+r "$SR_TMP/hog.py" "$SR_TMP/one.py"

# while_hogging KIND: runs the hog, then the caller's probe; sets $count and $caller.
while_hogging() {
	local d="$SR_OUT/hog-$1-$SR_AS" pid
	rm -rf "$d" && mkdir -p "$d" && chmod 0777 "$d" && cp "$SR_TMP/hog.py" "$d/"
	(as_user_exec "$SR" -q --net none --bind "$d" /out -- python3 /out/hog.py "$1" \
		</dev/null >/dev/null 2>&1) &
	pid=$!
	until_ok 20 test -s "$d/count"
	count=$(cat "$d/count" 2>/dev/null)
	caller=$(as_user python3 "$SR_TMP/one.py" "$1" 2>&1)
	touch "$d/stop"
	wait "$pid"
}

t_inotify() {
	local max
	max=$(cat /proc/sys/fs/inotify/max_user_instances)
	while_hogging inotify
	check "a sandbox takes at most half of the caller's inotify instances ($count of $max)" \
		test "${count:-999}" -le $((max / 2))
	assert_eq "and the caller can still watch files" ok "$caller"
}

t_mqueue() {
	while_hogging mqueue
	check "a sandbox takes part of the message queue quota ($count queues of 80 KiB)" \
		test "${count:-0}" -ge 1
	assert_eq "and the caller can still make a queue" ok "$caller"
}

# The caller's SHM_LOCK, as the agent's, is held to its RLIMIT_MEMLOCK
# against the count of the whole uid: the agent's half leaves it the other.
t_shmlock() {
	local max
	max=$(as_user sh -c 'ulimit -l')
	if [ "$max" = unlimited ]; then
		skip "a sandbox locks at most half of the caller's shared memory" "no RLIMIT_MEMLOCK here"
		return 0
	fi
	while_hogging shmlock
	check "a sandbox locks at most half of the caller's RLIMIT_MEMLOCK of shared memory ($((${count:-0} * 64)) of $max KiB)" \
		test "${count:-999}" -ge 1 -a "$((${count:-999} * 64))" -le $((max / 2))
	assert_eq "and the caller can still lock shared memory" ok "$caller"
}

# Pages pinned by MSG_ZEROCOPY sends are counted per host uid (not per
# user namespace) against the sender's RLIMIT_MEMLOCK: half of it inside
# leaves the caller the other half. Root's probe has CAP_IPC_LOCK.
t_zerocopy() {
	local max
	max=$(as_user sh -c 'ulimit -l')
	if [ "$max" = unlimited ]; then
		skip "a sandbox pins at most half of the caller's memory" "no RLIMIT_MEMLOCK here"
		return 0
	fi
	while_hogging zerocopy
	check "a sandbox pins at most half of the caller's RLIMIT_MEMLOCK with MSG_ZEROCOPY ($((${count:-0} * 64)) of $max KiB)" \
		test "${count:-999}" -ge 1 -a "$((${count:-999} * 64))" -le $((max / 2))
	assert_eq "and the caller can still pin 2 MiB with MSG_ZEROCOPY" ok "$caller"
}

# Nothing but fs.aio-max-nr bounds the contexts, for root as for anyone:
# an agent's io_setup(2) is refused, so that the host's keep working.
t_aio() {
	while_hogging aio
	assert_eq "a sandbox takes none of the host's asynchronous I/O contexts" 0 "$count"
	assert_eq "and the caller can still make one" ok "$caller"
}

# Huge pages come from a pool the host sets aside (vm.nr_hugepages: for a
# database, for VMs), which no memory cgroup of v1 counts: an agent that
# maps them takes the host's. All three ways to them are refused.
t_hugepages() {
	local got
	got=$(as_user "$SR" -q --net none -- python3 -c '
import ctypes, errno, mmap
libc = ctypes.CDLL(None, use_errno=True)
def err(ok):
    return "ok" if ok else errno.errorcode[ctypes.get_errno()]
try:
    mmap.mmap(-1, 2 << 20, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS | 0x40000)
    a = "ok"
except OSError as e:
    a = errno.errorcode[e.errno]
b = err(libc.memfd_create(b"h", 4) >= 0)                               # MFD_HUGETLB
c = err(libc.shmget(0, ctypes.c_size_t(2 << 20), 0o1000 | 0o4000 | 0o600) >= 0)  # SHM_HUGETLB
print(a, b, c)' </dev/null 2>&1)
	assert_eq "a sandbox maps no huge pages (mmap, memfd_create, shmget)" "EPERM EPERM EPERM" "$got"
}

t_ptys() {
	while_hogging pty
	assert_eq "a sandbox opens at most 64 ptys of the host-wide pool" 64 "$count"
}

# Root's sandboxes each have a host uid of their own, from root's subuid
# range. Where the host gives root none, the test gives it one in a mount
# namespace of its own (the host's /etc/subuid is left as it is).
t_root_uids() {
	[ "$SR_AS" = root ] || return 0
	local d="$SR_OUT/uids" a b ua ub wrap=""
	rm -rf "$d" && mkdir -p "$d" && chmod 0777 "$d"
	if ! awk -F: '$1 == "root" {f = 1} END {exit !f}' /etc/subuid /etc/subgid 2>/dev/null; then
		printf 'root:300000:65536\n' >"$SR_OUT/subid"
		wrap="mount --bind $SR_OUT/subid /etc/subuid && mount --bind $SR_OUT/subid /etc/subgid &&"
	fi
	a=$(unshare -m sh -c "$wrap exec \"\$0\" create --net none --bind $d /out --timeout 60" "$SR" </dev/null)
	b=$(unshare -m sh -c "$wrap exec \"\$0\" create --net none --bind $d /out --timeout 60" "$SR" </dev/null)
	check "two living sandboxes of root's were made" test -n "$a" -a -n "$b"
	sr exec "$a" -- touch /out/a
	sr exec "$b" -- touch /out/b
	ua=$(stat -c %u "$d/a" 2>/dev/null) ub=$(stat -c %u "$d/b" 2>/dev/null)
	check "two living sandboxes of root's: two host uids ($ua and $ub)" \
		test -n "$ua" -a -n "$ub" -a "$ua" != "$ub"
	check "neither of them root nor the overflow id" \
		test "$ua" != 0 -a "$ub" != 0 -a "$ua" != 65534 -a "$ub" != 65534
	sr rm "$a" "$b"
}

for_each_user t_inotify t_mqueue t_shmlock t_zerocopy t_aio t_hugepages t_ptys t_root_uids
done_testing
