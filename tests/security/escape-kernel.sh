#!/usr/bin/env bash
# Escape battery, part 1: the kernel's attack surface. Every attempt is
# made from inside a real sandbox (the static probe, or util-linux tools)
# and asserts HOW it failed, as root and as an unprivileged caller.
#
# EPERM alone does not say who refused: the seccomp filter or the
# kernel's own capability check. So the probe runs once more OUTSIDE any
# sandbox as an unprivileged user (no filter): where the bare kernel gives
# another answer (EBADF, EINVAL, EFAULT, ENOSYS, ok) for the very same
# arguments, an EPERM inside can only come from the filter, and the test
# says so ("the filter; unfiltered: EINVAL"). Where the bare kernel says
# EPERM too, both walls hold and the name says "filter and kernel".
. "$(dirname "$0")/../integration/libtest.sh"

need_probe

# The kernel's answer without the filter, as an unprivileged user.
baseline() {
	if [ "$(id -u)" = 0 ] && _ensure_test_user; then
		setpriv --reuid="$SR_TEST_USER" --regid="$SR_TEST_USER" --clear-groups \
			--inh-caps=-all -- "$SR_TMP/sr-probe" "$@" </dev/null 2>&1
	else
		"$SR_TMP/sr-probe" "$@" </dev/null 2>&1
	fi
}
BASE_SYSCALLS=$(baseline syscall all)
# Calls by number (sr-probe nr): newer than the libc headers, or none at all.
NR_CALLS="1000 next statmount listmount open_tree_attr"
BASE_NR=$(baseline nr $NR_CALLS)

# result_of LABEL TEXT: the "RESULT" of the line "LABEL: RESULT".
result_of() {
	sed -n "s/^$1: //p" <<<"$2" | head -1
}

# Calls whose probe arguments the bare kernel rejects before any privilege
# check, on every kernel this runs on: EPERM inside is the filter's alone.
# The filter exists for exactly these: reachable with no capability.
FILTER_ONLY="keyctl add_key request_key io_uring_setup io_uring_enter io_uring_register
	userfaultfd perf_event_open setns unshare clone mount umount2 chroot clock_settime ioctl"

# expect_call NAME EXPECTED: one line of `sr-probe syscall` from inside.
expect_call() {
	local name=$1 want=$2 got base why
	got=$(result_of "$name" "$out")
	base=$(result_of "$name" "$BASE_SYSCALLS")
	if [ "$want" = EPERM ] && [ "$base" != EPERM ]; then
		why="the filter; unfiltered: ${base:-?}"
	elif [ "$want" = EPERM ]; then
		why="filter and kernel"
	else
		why="the filter; unfiltered: ${base:-?}"
	fi
	assert_eq "$name refused: $want ($why)" "$want" "$got"
	if [[ " $(echo $FILTER_ONLY) " == *" $name "* ]]; then
		check "$name: the bare kernel would not have said EPERM (it is the filter)" \
			test -n "$base" -a "$base" != EPERM
	fi
}

# The network mode of the round: egress sets the sandbox up in an outer
# user namespace and runs the agent in an inner one (src/lib/userns.h), so the
# battery runs under both.
NET=none

t_syscalls() {
	sr --net "$NET" --ro-bind "$PROBE_DIR" /probe -- /probe/sr-probe syscall all
	assert_eq "the probe ran in the sandbox" 0 "$rc"
	# Mounts and the root directory.
	expect_call mount EPERM
	expect_call umount2 EPERM
	expect_call pivot_root EPERM
	expect_call chroot EPERM
	expect_call fsopen EPERM
	expect_call fsmount EPERM
	expect_call open_tree EPERM
	expect_call move_mount EPERM
	expect_call mount_setattr EPERM
	# Namespaces: nested user namespaces regain every capability.
	expect_call unshare EPERM
	expect_call clone EPERM
	# clone3's flags are out of the filter's reach: ENOSYS sends libc to clone().
	expect_call clone3 ENOSYS
	expect_call setns EPERM
	# "Shocker": opening host files by handle, outside the mount tree.
	expect_call open_by_handle_at EPERM
	expect_call name_to_handle_at EPERM
	# Keyrings are not namespaced.
	expect_call keyctl EPERM
	expect_call add_key EPERM
	expect_call request_key EPERM
	# Exploit helpers and large kernel surfaces.
	expect_call bpf EPERM
	expect_call perf_event_open EPERM
	expect_call userfaultfd EPERM
	expect_call io_uring_setup EPERM
	expect_call io_uring_enter EPERM
	expect_call io_uring_register EPERM
	# Kernel code and the machine.
	expect_call kexec_load EPERM
	expect_call kexec_file_load EPERM
	expect_call init_module EPERM
	expect_call finit_module EPERM
	expect_call delete_module EPERM
	expect_call reboot EPERM
	expect_call syslog EPERM
	expect_call acct EPERM
	expect_call swapon EPERM
	expect_call swapoff EPERM
	expect_call quotactl EPERM
	# The host clock is not namespaced.
	expect_call settimeofday EPERM
	expect_call clock_settime EPERM
	expect_call adjtimex EPERM
	# Other processes and terminals.
	expect_call kcmp EPERM
	expect_call move_pages EPERM
	expect_call migrate_pages EPERM
	expect_call vhangup EPERM
	expect_call ioctl EPERM
	expect_call personality EPERM
	# The host name is the sandbox's (needs CAP_SYS_ADMIN besides).
	expect_call sethostname EPERM
	# File system monitoring beyond inotify.
	expect_call fanotify_init EPERM
	# 16-bit segments (x86 only), a history of bugs in the LDT code.
	if [ "$(uname -m)" = x86_64 ]; then
		expect_call modify_ldt EPERM
	fi
	# PID 1 is non-dumpable: ptrace is allowed by the filter, refused by the kernel.
	expect_call ptrace EPERM
	# Not in the filter: no CAP_MKNOD in the sandbox (probe path "" gives ENOENT first).
	expect_call mknod ENOENT
	# Named by no row: the default answer, ENOSYS, where the bare kernel has the call.
	expect_call process_madvise ENOSYS
	check "process_madvise: the bare kernel has it (ENOSYS inside is the filter's default)" \
		test -n "$(result_of process_madvise "$BASE_SYSCALLS")" -a \
		"$(result_of process_madvise "$BASE_SYSCALLS")" != ENOSYS
}

# The policy is default-deny. A number no row names gets ENOSYS, as from a
# kernel too old to have the call, so that a C library falls back; the
# newest mount API, which libseccomp 2.5 does not know by name, EPERM.
t_default_deny() {
	local name got base next
	sr --net "$NET" --ro-bind "$PROBE_DIR" /probe -- /probe/sr-probe nr $NR_CALLS
	assert_eq "the probe ran in the sandbox" 0 "$rc"
	assert_eq "an unknown system call number (1000) gets ENOSYS" ENOSYS "$(result_of 1000 "$out")"
	next=$(sed -n 's/^next (\([0-9]*\)): .*/\1/p' <<<"$out")
	assert_eq "the first number above the newest call known ($next) gets ENOSYS" \
		ENOSYS "$(result_of "next ($next)" "$out")"
	for name in statmount listmount open_tree_attr; do
		got=$(sed -n "s/^$name ([0-9]*): //p" <<<"$out")
		base=$(sed -n "s/^$name ([0-9]*): //p" <<<"$BASE_NR")
		assert_eq "$name refused: EPERM (the filter; unfiltered: ${base:-?})" EPERM "$got"
		check "$name: the bare kernel would not have said EPERM (it is the filter)" \
			test -n "$base" -a "$base" != EPERM
	done
}

t_namespace_tools() {
	# The tools an escape script would use, each namespace type.
	sr --net "$NET" -- sh -c 'for f in U m n i u p C T; do unshare -$f true 2>&1 | sed "s/^/$f: /"; done'
	local f
	for f in U m n i u p C T; do
		assert_match "unshare -$f (new namespace) refused: Operation not permitted" \
			"^$f: unshare: unshare failed: Operation not permitted$" "$(grep "^$f: " <<<"$out")"
	done
	# setns needs /proc/1/ns/*: PID 1 is non-dumpable, so the links are out of reach.
	sr --net "$NET" -- sh -c 'nsenter -t 1 -m true 2>&1; nsenter -t 1 -n true 2>&1; nsenter -t 1 -U true 2>&1'
	assert_eq "nsenter into PID 1's namespaces: EACCES on /proc/1/ns" \
		"$(printf 'nsenter: cannot open /proc/1/ns/mnt: Permission denied\nnsenter: cannot open /proc/1/ns/net: Permission denied\nnsenter: cannot open /proc/1/ns/user: Permission denied')" \
		"$out"
	sr --net "$NET" -- sh -c 'chroot / true 2>&1; mount -t tmpfs t /tmp 2>&1; umount /proc >/dev/null 2>&1 || echo umount-failed; grep -c " /proc " /proc/self/mountinfo'
	assert_match "chroot(8) refused: EPERM" "^chroot: cannot change root directory to '/': Operation not permitted" "$out"
	assert_match "mount(8) refused" "mount: /tmp: must be superuser to use mount" "$out"
	# umount(8) gives up in user space; umount2's EPERM is asserted above.
	assert_match "umount(8) fails and /proc stays mounted" "umount-failed
1$" "$out"
}

t_nested_userns_sysctl() {
	local pid agent i
	# Behind the filter: even a clone() that got through could make no user namespace.
	if [ "$NET" = none ]; then
		sr --net none -- sh -c 'cat /proc/sys/user/max_user_namespaces; { echo 5 > /proc/sys/user/max_user_namespaces; } 2>&1; cat /proc/sys/user/max_user_namespaces'
		assert_match "user.max_user_namespaces is 0 and cannot be raised (read-only /proc/sys)" \
			"^0
.*Read-only file system
0$" "$out"
	fi
	# Proven without the filter: root on the host joins the agent's user
	# namespace and tries. Nested, the limit sits one level up (1: the
	# agent's own), and counts the whole subtree.
	if [ "$(id -u)" != 0 ]; then
		skip "no user namespace beneath the agent's, even unfiltered" "needs root to join it"
		return
	fi
	(as_user_exec "$SR" -q --net "$NET" -- sleep 30 </dev/null >/dev/null 2>&1) &
	pid=$!
	SR_BG_PIDS="${SR_BG_PIDS:-} $pid"
	for i in $(seq 200); do
		agent=$(descendant "$pid" sleep) && break
		sleep 0.02
	done
	out=$(nsenter -t "$agent" -U --preserve-credentials unshare -U true 2>&1)
	assert_eq "no user namespace beneath the agent's, even unfiltered (joined from the host)" \
		"unshare: unshare failed: No space left on device" "$out"
	kill -KILL "$pid" 2>/dev/null
	wait "$pid" 2>/dev/null
}

t_other_abis() {
	# Another ABI's system call table escapes a filter written for x86_64 only.
	local base_x32 base_i386
	base_x32=$(baseline x32)
	base_i386=$(baseline i386)
	sr --net none --ro-bind "$PROBE_DIR" /probe -- /probe/sr-probe x32
	assert_eq "x32 system call entry kills the process: SIGSYS (unfiltered: ${base_x32#*: })" \
		"x32 getpid: killed by SIGSYS" "$out"
	sr --net none --ro-bind "$PROBE_DIR" /probe -- /probe/sr-probe i386
	if [ "$base_i386" = "i386 getpid: killed by SIGSEGV" ] && [ "$out" = "$base_i386" ]; then
		# No int 0x80 entry on this kernel (ia32_emulation=0, or a PVM
		# guest): the instruction faults before any system call is made,
		# so the filter is never asked. test-seccomp checks its answer.
		skip "i386 (int 0x80) entry kills the process" \
			"this kernel has no int 0x80 entry (unfiltered too: killed by SIGSEGV)"
		return
	fi
	assert_eq "i386 (int 0x80) entry kills the process: SIGSYS (unfiltered: ${base_i386#*: })" \
		"i386 getpid: killed by SIGSYS" "$out"
}

if [ "$(uname -m)" != x86_64 ]; then
	t_other_abis() { skip "x32 / i386 entry" "x86_64 only (this is $(uname -m))"; }
fi

for_each_user t_syscalls t_default_deny t_namespace_tools t_nested_userns_sysctl t_other_abis
if have_egress; then
	NET=egress SR_TAG="[--net egress] "
	for_each_user t_syscalls t_default_deny t_namespace_tools t_nested_userns_sysctl
	SR_TAG=""
else
	skip "the battery under --net egress" "no egress helper or /dev/net/tun is not 0666"
fi
done_testing
