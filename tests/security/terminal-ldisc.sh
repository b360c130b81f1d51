#!/usr/bin/env bash
# The caller's terminal keeps its line discipline. Security round 2,
# finding 5 (low): an agent's ioctl(0, TIOCSETD, N_NULL) on the caller's
# terminal survived the run -- the shell's terminal dead afterwards, and
# with dev.tty.ldisc_autoload=1 any line discipline's module loaded on
# demand (SLIP, PPP, CAN, HCI). The filter refuses TIOCSETD, also with the
# request's upper 32 bits set (the kernel ignores them), and sandbox-run
# puts back the discipline it found, whoever changed it.
. "$(dirname "$0")/../integration/libtest.sh"

N_NULL=27

# in_pty LOG COMMAND: COMMAND (a shell line) on a fresh pty of its own
# (script(1)), as the round's user; never waits for ever.
in_pty() {
	as_user timeout -k 2 30 script -qec "$2" "$1" </dev/null >/dev/null 2>&1
}

t_agent_sets_ldisc() {
	local in="$SR_OUT/ldisc-in-$SR_AS" after="$SR_OUT/ldisc-after-$SR_AS" base
	base=$("$SR_TMP/sr-probe" ldisc $N_NULL </dev/null 2>&1)
	# The agent's output goes to a file: under N_NULL the terminal takes none.
	in_pty "$SR_OUT/ldisc-$SR_AS.log" \
		"$SR --net none --ro-bind $PROBE_DIR /probe -- /probe/sr-probe ldisc $N_NULL >$in 2>&1; $SR_TMP/sr-probe ldisc >$after 2>&1"
	out=$(cat "$in" 2>/dev/null)
	assert_match "TIOCSETD N_NULL on the caller's terminal (fd 0): EPERM" "(^|
)TIOCSETD fd 0: EPERM" "$out"
	assert_match "the same with the request's upper 32 bits set: EPERM" "(^|
)TIOCSETD\|1<<32 fd 0: EPERM" "$out"
	assert_match "on fd -1: EPERM from the filter (unfiltered: EBADF)" "(^|
)TIOCSETD fd -1: EPERM" "$out"
	assert_match "control: unfiltered, fd -1 gives EBADF" "(^|
)TIOCSETD fd -1: EBADF" "$base"
	assert_eq "after the run the terminal's line discipline is N_TTY (0)" "ldisc: 0" \
		"$(cat "$after" 2>/dev/null)"
}

# The discipline changed during the run by someone else than the agent
# (here: a process of the caller's on the same terminal) is put back too.
t_restored() {
	local mid="$SR_OUT/ldisc-mid-$SR_AS" after="$SR_OUT/ldisc-end-$SR_AS"
	in_pty "$SR_OUT/ldisc-restore-$SR_AS.log" \
		"$SR --net none -- sleep 1 & sleep 0.3; $SR_TMP/sr-probe ldisc $N_NULL >$mid 2>&1; wait; $SR_TMP/sr-probe ldisc >$after 2>&1"
	assert_match "control: the terminal's discipline was N_NULL during the run" "(^|
)ldisc: $N_NULL$" "$(cat "$mid" 2>/dev/null)"
	assert_eq "sandbox-run put N_TTY back at the end" "ldisc: 0" "$(cat "$after" 2>/dev/null)"
}

for_each_user t_agent_sets_ldisc t_restored
done_testing
