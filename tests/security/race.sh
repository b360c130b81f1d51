#!/usr/bin/env bash
# A --bind source, and an executable-file agent, is resolved by the
# supervisor (src/lib/hostpath.c, realpath) and opened again by the child
# before its first mount (src/lib/child/mounts-sources.c), with
# RESOLVE_NO_SYMLINKS: a symbolic link swapped into the path between the
# two must not redirect what the sandbox gets (the CVE-2021-30465 class).
# Each run here is stopped at "child before sources"
# (SANDBOX_RUN_TEST_STOP_AT), the path swapped for a link to a directory
# holding another marker, then resumed (SANDBOX_RUN_TEST_RESUME, SIGUSR1,
# src/base/fault.h): it must fail closed, and the other marker must never
# be seen inside.
#
# Needs a build configured with --enable-fault-injection; in a normal
# build it checks that the knob does not exist, and skips the rest.
. "$(dirname "$0")/../integration/libtest.sh"

ENV=SANDBOX_RUN_TEST_RESUME

# Ask the binary itself, as fault.sh does: a fault-injection build refuses an unknown point.
SANDBOX_RUN_TEST_STOP_AT=no-such-point "$SR" --net none -- true >/dev/null 2>"$SR_TMP/.probe-err"
if ! grep -q "no fault point 'no-such-point'" "$SR_TMP/.probe-err"; then
	check "a normal build does not even contain the name $ENV" \
		bash -c "! grep -q -a '$ENV' '$SR'"
	skip "a link swapped in while the run is stopped" \
		"needs a build with configure --enable-fault-injection"
	done_testing
	exit
fi

# alive PID: a process of ours that has not ended (a zombie has).
alive() {
	kill -0 "$1" 2>/dev/null && [[ $(ps -o stat= -p "$1") != Z* ]]
}

# stop_run NAME ARGS...: sandbox-run ARGS as the round's user, in the
# background, stopped before the child opens its sources (or at $STOP_AT). Sets $run (its
# pid) and $child (the pid the stopped process says to signal; empty if
# it did not stop).
stop_run() {
	local name=$1
	shift
	run_err="$SR_OUT/$name.err" run_out="$SR_OUT/$name.out"
	: >"$run_err"
	(
		export SANDBOX_RUN_TEST_STOP_AT="${STOP_AT:-child before sources}" $ENV=1
		as_user_exec "$SR" "$@"
	) </dev/null >"$run_out" 2>"$run_err" &
	run=$!
	SR_BG_PIDS=$run
	child=""
	for _ in $(seq 200); do
		child=$(sed -n 's/^sandbox-run: fault injection: pid \([0-9]*\) waits for SIGUSR1$/\1/p' "$run_err")
		[ -n "$child" ] && break
		alive "$run" || break
		sleep 0.05
	done
}

# resume WHAT: lets the stopped run go on (SIGKILLs it if it did not stop,
# or did not end in 20 s); sets $rc, $out, $errout.
resume() {
	check "$1: stopped before the sources, the pid it names is its child's" \
		test -n "$child" -a "$(ps -o ppid= -p "${child:-0}" | tr -d ' ')" = "$run"
	go_on
}

# go_on: lets the stopped run go on, whichever process stopped; as resume.
go_on() {
	[ -n "$child" ] && kill -USR1 "$child"
	until_gone 20 alive "$run" || kill -9 "$run"
	wait "$run"
	rc=$?
	SR_BG_PIDS=""
	out=$(cat "$run_out")
	# The error alone: not the stop's lines, nor a host's warning (rlimits for a user).
	errout=$(grep -v -e '^sandbox-run: fault injection: ' -e '^sandbox-run: warning: ' "$run_err")
}

# swap PATH TARGET: PATH, as its owner would, becomes a link to TARGET.
swap() {
	as_user mv "$1" "$1.was"
	as_user ln -s "$2" "$1"
}

# race_dir NAME: a directory of the round's user holding x/dir/marker
# ("first") and other/dir/marker ("second"), every user may write the dirs
# (a root caller's writable bind must be: artifacts.sh).
race_dir() {
	local d="$SR_TMP/race-$1-$SR_AS"
	mkdir -p "$d/x/dir" "$d/other/dir"
	echo first >"$d/x/dir/marker"
	echo second >"$d/other/dir/marker"
	chmod 0755 "$d" "$d/x" "$d/other"
	chmod 0777 "$d/x/dir" "$d/other/dir"
	chmod 0644 "$d/x/dir/marker" "$d/other/dir/marker"
	own "$d"
	echo "$d"
}

t_bind_source_swapped() {
	local d
	d=$(race_dir bind)
	# Nothing swapped: the run goes on from the stop, and reads its source.
	stop_run bind-kept --net none --bind "$d/x/dir" /src -- cat /src/marker
	resume "--bind, nothing swapped"
	assert_eq "--bind, nothing swapped: resumed, the run reads its source" "0:first" "$rc:$out"

	# The source itself swapped for a link to another directory.
	stop_run bind-end --net none --bind "$d/x/dir" /src -- cat /src/marker
	swap "$d/x/dir" "$d/other/dir"
	resume "--bind, its source swapped"
	assert_eq "--bind whose source became a link meanwhile: refused (125)" 125 "$rc"
	assert_match "saying a link was put on its way" \
		"^sandbox-run: bind $d/x/dir \(a symbolic link was put on its way while the sandbox started\): Too many levels of symbolic links$" \
		"$errout"
	assert_no_match "the link's target was never seen inside" second "$out"
	as_user rm "$d/x/dir"
	as_user mv "$d/x/dir.was" "$d/x/dir"

	# A directory on its way swapped.
	stop_run bind-way --net none --bind "$d/x/dir" /src -- cat /src/marker
	swap "$d/x" "$d/other"
	resume "--bind, a directory on its way swapped"
	assert_eq "--bind with a link on its way put there meanwhile: refused (125)" 125 "$rc"
	assert_match "saying a link was put on its way" \
		"^sandbox-run: bind $d/x/dir \(a symbolic link was put on its way while the sandbox started\): Too many levels of symbolic links$" \
		"$errout"
	assert_no_match "the link's target was never seen inside" second "$out"
}

t_agent_file_swapped() {
	local d
	d=$(race_dir agent)
	printf '#!/bin/sh\necho first\n' >"$d/x/agent"
	printf '#!/bin/sh\necho second\n' >"$d/other/agent"
	chmod 0755 "$d/x/agent" "$d/other/agent"
	own "$d"
	stop_run agent-kept --net none "$d/x/agent"
	resume "an executable-file agent, nothing swapped"
	assert_eq "an executable-file agent, nothing swapped: resumed, it runs" "0:first" "$rc:$out"

	stop_run agent-end --net none "$d/x/agent"
	swap "$d/x/agent" "$d/other/agent"
	resume "an executable-file agent swapped"
	assert_eq "an executable-file agent that became a link meanwhile: refused (125)" 125 "$rc"
	assert_eq "saying so" \
		"sandbox-run: agent $d/x/agent (a symbolic link was put on its way while the sandbox started): Too many levels of symbolic links" "$errout"
	assert_no_match "the link's target never ran" second "$out"
}

# A root caller's writable --bind of a user's directory is an idmapped
# clone the supervisor makes (userns.c) before there is a child, which
# t_bind_source_swapped never reaches (its root round's directory is
# root's and open to all: bound as it is). The supervisor named the
# resolved path again (stat, open_tree), following a link the
# directory's owner put there after the resolution; the child's own
# open refused the run then. Stopped once the paths are resolved
# ("supervisor resolved"), the source swapped for a link: refused, by
# the supervisor now, the link's target never seen.
t_root_bind_swapped() {
	local d
	[ "$SR_AS" = root ] || return 0
	d=$(race_dir rootbind)
	chown -R "$SR_TEST_USER:$SR_TEST_USER" "$d"
	chmod 0755 "$d/x/dir" "$d/other/dir"
	STOP_AT="supervisor resolved" stop_run rootbind-end --net none --bind "$d/x/dir" /src \
		-- cat /src/marker
	check "a root caller's writable bind: stopped once resolved" test -n "$child"
	setpriv --reuid="$SR_TEST_USER" --regid="$SR_TEST_USER" --clear-groups -- \
		sh -c 'mv "$1" "$1.was" && ln -s "$2" "$1"' - "$d/x/dir" "$d/other/dir"
	go_on
	assert_eq "its source, a user's, became a link meanwhile: refused (125)" 125 "$rc"
	assert_match "saying a link was put on its way" \
		"^sandbox-run: bind $d/x/dir \(a symbolic link was put on its way while the sandbox started\): Too many levels of symbolic links$" \
		"$errout"
	assert_no_match "the link's target was never seen inside" second "$out"
	rm -rf "$d"
}

for_each_user t_bind_source_swapped t_agent_file_swapped t_root_bind_swapped
done_testing
