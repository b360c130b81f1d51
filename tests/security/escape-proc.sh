#!/usr/bin/env bash
# Escape battery, part 3: other processes, the host's abstract unix
# sockets and the caller's terminal. Each attempt is made from inside a
# real sandbox and asserts how it failed, as root and as an unprivileged
# caller.
. "$(dirname "$0")/../integration/libtest.sh"

need_probe

P=/probe/sr-probe
probe() {
	sr --net none --ro-bind "$PROBE_DIR" /probe "$@"
}

MARK="sr-sec-victim-$$"

# A host process the agent would like to kill: a sleep whose argv carries our marker.
start_victim() {
	bash -c "exec -a $MARK sleep 300" &
	VICTIM=$!
	SR_BG_PIDS="${SR_BG_PIDS:-} $VICTIM"
}

t_kill_host() {
	start_victim
	# The host's pids do not exist in the sandbox's PID namespace. The
	# probe's pid numbers are small; the host's are not, so the same
	# number names no process inside rather than a sandbox process.
	probe -- sh -c "$P kill $VICTIM KILL; $P kill $$ TERM; $P kill $PPID KILL"
	assert_eq "kill(host pid): ESRCH for the victim, the test shell and its parent" \
		"$(printf 'kill %s KILL: ESRCH\nkill %s TERM: ESRCH\nkill %s KILL: ESRCH' "$VICTIM" "$$" "$PPID")" "$out"
	check "the host victim is still alive" kill -0 "$VICTIM"
	kill -9 "$VICTIM" 2>/dev/null
	wait "$VICTIM" 2>/dev/null
}

t_kill_pid1() {
	# The kernel drops SIGKILL and SIGSTOP sent to a PID namespace's init
	# from inside it: kill() says ok, PID 1 carries on, the run ends normally.
	probe -- sh -c "$P kill 1 KILL; $P kill 1 STOP; sleep 0.1; grep State /proc/1/status; echo alive"
	assert_eq "kill(1, SIGKILL/SIGSTOP) from the agent: delivered nowhere, PID 1 runs on" \
		"$(printf 'kill 1 KILL: ok\nkill 1 STOP: ok\nState:\tS (sleeping)\nalive')" "$out"
	assert_eq "the run ends with the agent's own status" 0 "$rc"
	# Other signals PID 1 forwards to the agent's own process group, like a
	# terminal would: the agent can only end itself.
	probe -- sh -c "$P kill 1 TERM; sleep 5; echo not-reached"
	assert_eq "kill(1, SIGTERM) is forwarded to the agent itself (143), nothing else" 143 "$rc"
}

t_ptrace() {
	probe -- sh -c "$P ptrace 1; sleep 30 & $P ptrace \$!; kill \$!"
	# The filter allows ptrace (debuggers work); PID 1 is non-dumpable.
	assert_eq "ptrace(PID 1): EPERM (non-dumpable); a sibling of the agent's own: ok" \
		"$(printf 'ptrace 1: EPERM\nptrace %s: ok' "$(sed -n 's/^ptrace \([0-9]*\): ok$/\1/p' <<<"$out")")" "$out"
	start_victim
	probe -- "$P" ptrace "$VICTIM"
	assert_eq "ptrace(host pid): ESRCH" "ptrace $VICTIM: ESRCH" "$out"
	kill -9 "$VICTIM" 2>/dev/null
	wait "$VICTIM" 2>/dev/null
}

# A listener on a host abstract socket, for as long as the case runs.
start_abstract() {
	ABSTRACT="sr-sec-abstract-$$-$SR_AS"
	# The previous round's file would say "ready" before this listener is.
	rm -f "$SR_TMP/abstract-ready"
	python3 -c 'import socket, sys, time
s = socket.socket(socket.AF_UNIX)
s.bind("\0" + sys.argv[1])
s.listen(16)
print("ready", flush=True)
time.sleep(120)' "$ABSTRACT" >"$SR_TMP/abstract-ready" &
	ABSTRACT_PID=$!
	SR_BG_PIDS="${SR_BG_PIDS:-} $ABSTRACT_PID"
	for _ in $(seq 100); do
		[ -s "$SR_TMP/abstract-ready" ] && return 0
		sleep 0.05
	done
	return 1
}

t_abstract_socket() {
	if ! start_abstract; then
		not_ok "start a host abstract unix socket listener"
		return
	fi
	# The control: the host's own network namespace reaches it.
	out=$(as_user "$SR_TMP/sr-probe" connect-abstract "$ABSTRACT")
	assert_eq "control: the listener is reachable from the host" \
		"connect-abstract $ABSTRACT: ok" "$out"
	# Abstract names belong to the network namespace: the sandbox's has none.
	probe -- "$P" connect-abstract "$ABSTRACT"
	assert_eq "--net none: the host's abstract socket does not exist (ECONNREFUSED)" \
		"connect-abstract $ABSTRACT: ECONNREFUSED" "$out"
	sr --net egress --ro-bind "$PROBE_DIR" /probe -- "$P" connect-abstract "$ABSTRACT"
	assert_eq "--net egress: still unreachable (ECONNREFUSED); the helper relays IP only" \
		"connect-abstract $ABSTRACT: ECONNREFUSED" "$out"
	kill "$ABSTRACT_PID" 2>/dev/null
	wait "$ABSTRACT_PID" 2>/dev/null
}

t_terminal() {
	# CVE-2017-5226: from a real terminal (script(1) gives the run a pty),
	# push input into it with TIOCSTI, also with the request's upper 32
	# bits set (the kernel ignores them), and TIOCLINUX.
	local log="$SR_OUT/tty-$SR_AS" base
	base=$("$SR_TMP/sr-probe" tiocsti </dev/null 2>&1 | grep 'fd -1')
	as_user script -qec "$SR --net none --ro-bind $PROBE_DIR /probe -- sh -c 'test -t 0 && echo stdin-is-a-tty; readlink /proc/self/fd/0; exec $P tiocsti'" \
		"$log" </dev/null >/dev/null 2>&1
	# (script(1) types a NUL at the end of its input; the pty inside echoes it as ^@.)
	out=$(tr -d '\r' <"$log" | sed 's/\^@//g' | grep -v '^Script ')
	assert_match "the agent's stdin is a terminal" "stdin-is-a-tty" "$out"
	assert_match "a pty of the sandbox's own devpts, not the caller's terminal" \
		"(^|
)/dev/pts/0(
|$)" "$out"
	local req
	for req in 'TIOCSTI' 'TIOCSTI|1<<32' 'TIOCLINUX'; do
		local q=${req//|/\\|}
		assert_match "$req on the terminal (fd 0): EPERM" "(^|
)$q fd 0: EPERM" "$out"
		# The bare kernel says EBADF for fd -1 (see $base): EPERM is the filter.
		assert_match "$req on fd -1: EPERM from the filter (unfiltered: EBADF)" "(^|
)$q fd -1: EPERM" "$out"
		# Its controlling terminal is the sandbox's own pty, never the caller's.
		assert_match "$req on /dev/tty (the sandbox's own pty): EPERM" "(^|
)$q /dev/tty: EPERM" "$out"
	done
	assert_match "control: unfiltered, fd -1 gives EBADF" "^TIOCSTI fd -1: EBADF" "$base"
}

t_ipc_uts() {
	# Host System V IPC and host name are not shared.
	local key
	key=$(ipcmk -M 4096 2>/dev/null | sed -n 's/.*id: //p')
	sr --net none -- sh -c 'ipcs -m | grep -c "^0x"; hostname'
	[ -n "$key" ] && ipcrm -m "$key" 2>/dev/null
	assert_eq "no host shared memory segment is visible; hostname is the sandbox's" \
		"$(printf '0\nsandbox')" "$out"
}

# vsock has no network namespace: one port space per machine, the
# hypervisor's and the host's services on it. The filter refuses the family.
VSOCK='import errno, socket
try:
    socket.socket(40, socket.SOCK_STREAM)
    print("ok")
except OSError as e:
    print(errno.errorcode[e.errno])'

t_vsock() {
	local base net
	# The control: the bare kernel's answer ("ok" where vsock is loaded, as in a VM).
	base=$(as_user python3 -c "$VSOCK" 2>&1)
	if [ "$base" != ok ]; then
		skip "vsock sockets are refused" "the kernel has no vsock (unfiltered: $base)"
		return
	fi
	for net in none egress; do
		sr --net "$net" -- python3 -c "$VSOCK"
		assert_eq "--net $net: a vsock socket is refused, EAFNOSUPPORT (unfiltered: $base)" \
			EAFNOSUPPORT "$out"
	done
}

for_each_user t_kill_host t_kill_pid1 t_ptrace t_abstract_socket t_vsock t_terminal t_ipc_uts
done_testing
