#!/usr/bin/env bash
# The result record must land where the caller meant it, and nowhere
# else: not through another user's link (fs.protected_symlinks, which
# sandbox-run once bypassed by resolving links itself), not through a link
# an agent left in a --bind, not into a FIFO that nobody reads, and never
# with signals held while it waits to write. Security round 2, finding 1
# (high): as root, these wrote a record full of agent-chosen text over a
# shell start-up file.
. "$(dirname "$0")/../integration/libtest.sh"

# Another user: a uid with no account, in both rounds.
OTHER=54321
as_other() {
	setpriv --reuid=$OTHER --regid=$OTHER --clear-groups --inh-caps=-all -- "$@"
}

# A file of the round's user, 0600, with known content.
victim_file() {
	printf 'precious\n' >"$1"
	chmod 0600 "$1"
	own "$1"
}

# victim_intact NAME FILE: content and mode as victim_file left them.
victim_intact() {
	assert_eq "$1" "precious 600" "$(cat "$2") $(stat -c %a "$2")"
}

# In a sticky, world-writable directory (/tmp's kind), another user's link
# at the record's name is not followed: the kernel would not follow it
# either.
t_foreign_link_in_sticky_dir() {
	local d="$SR_TMP/sticky-$SR_AS"
	mkdir -p "$d" && chmod 1777 "$d"
	victim_file "$d/secret"
	as_other ln -s "$d/secret" "$d/r.json"
	sr --net none --result "$d/r.json" -- true
	assert_eq "another user's link at --result: refused before the run (125)" 125 "$rc"
	assert_match "and says why" "symbolic link owned by uid $OTHER.*not followed" "$errout"
	victim_intact "the file it points at is untouched (content, mode 0600)" "$d/secret"
	# Also where the kernel's own rule does not reach (a directory that is not sticky).
	local p="$SR_TMP/plain-$SR_AS"
	mkdir -p "$p" && chmod 0777 "$p"
	victim_file "$p/secret"
	as_other ln -s secret "$p/r.json"
	sr --net none --result "$p/r.json" -- true
	assert_eq "another user's link in a plain directory: refused too" 125 "$rc"
	victim_intact "its target is untouched" "$p/secret"
}

# The review's worst case: a link at a shell start-up file, and an archive
# member name with a command substitution, which the record's error
# carried verbatim. Sourcing the file then ran the command as the caller.
t_link_to_startup_file() {
	local d="$SR_TMP/startup-$SR_AS" a="$SR_TMP/startup-$SR_AS.tar.gz"
	mkdir -p "$d" && chmod 1777 "$d"
	victim_file "$d/profile"
	python3 - "$a" "$SR_TMP/PWNED-$SR_AS" "$SR_SRCDIR/tests/integration" <<'EOF'
import sys
sys.path.insert(0, sys.argv[3])
from tarbuild import tar, f
tar(sys.argv[1], [f("agent", b"#!/bin/sh\necho hi\n", 0o755), f(f"$(touch {sys.argv[2]})/../x")])
EOF
	chmod 0644 "$a"
	as_other ln -s "$d/profile" "$d/result.json"
	sr --net none --result "$d/result.json" "$a"
	assert_eq "a record aimed at a start-up file through another's link: 125" 125 "$rc"
	victim_intact "the start-up file is untouched" "$d/profile"
	(. "$d/profile" >/dev/null 2>&1) || true
	check "and sourcing it runs nothing of the archive's" test ! -e "$SR_TMP/PWNED-$SR_AS"
}

# An agent may write a --bind: the link it leaves there must not aim the
# next run's record at the caller's files. Unprivileged, the link is the
# caller's own (the agent is the caller's uid on the host), so only the
# rule "a link is followed within its directory" stops it.
t_link_left_by_agent_in_bind() {
	local d="$SR_TMP/bind-$SR_AS"
	mkdir -p "$d/out" && chmod 0777 "$d/out"
	own "$d/out"
	victim_file "$d/bashrc"
	sr --net none --bind "$d/out" /out -- ln -s "$d/bashrc" /out/result.json
	assert_eq "the agent left its link in the bind" 0 "$rc"
	sr --net none --result "$d/out/result.json" -- true
	assert_eq "the next run refuses --result through it (125)" 125 "$rc"
	assert_match "and says why" "symbolic link (owned by uid [0-9]+|out of its directory).*not followed" "$errout"
	victim_intact "the caller's file is untouched" "$d/bashrc"
	# A relative link that climbs out is the same.
	rm -f "$d/out/result.json"
	sr --net none --bind "$d/out" /out -- ln -s ../bashrc /out/result.json
	sr --net none --result "$d/out/result.json" -- true
	assert_eq "a relative link that climbs out: refused too" 125 "$rc"
	victim_intact "the caller's file is still untouched" "$d/bashrc"
	# The caller's own link within the directory still works.
	rm -f "$d/out/result.json"
	as_user ln -s run.json "$d/out/result.json"
	sr --net none --result "$d/out/result.json" -- true
	assert_eq "the caller's link to a file beside it: followed" exited "$(json_get "$d/out/run.json" status)"
}

# A FIFO at the name: nobody may be reading it. sandbox-run once opened
# it for writing after the run and waited for ever, SIGTERM blocked.
t_fifo() {
	local d="$SR_TMP/fifo-$SR_AS"
	mkdir -p "$d" && chmod 0777 "$d"
	as_user mkfifo "$d/r.json"
	SR_STDIN=/dev/null sr_bounded 20 --net none --result "$d/r.json" -- true
	assert_eq "a FIFO at --result: refused at once (125), no hang" 125 "$rc"
	assert_match "and says why" "not a regular file" "$errout"
	# Planted by the agent during the run, through a bind: replaced, not opened.
	rm -f "$d/r.json"
	sr_bounded 20 --net none --bind "$d" /out --result "$d/r.json" -- mkfifo /out/r.json
	assert_eq "a FIFO the agent put there: the record replaces it" exited "$(json_get "$d/r.json" status)"
}

# The record written to a pipe that nobody reads (the agent filled it
# first): sandbox-run waits, but a SIGTERM still ends it.
t_signal_while_writing() {
	local fifo="$SR_TMP/full-$SR_AS" pid st t0
	mkfifo -m 0666 "$fifo"
	# Both ends held here, and never read: a pipe that fills up.
	exec 7<>"$fifo"
	(as_user_exec "$SR" --net none --result /dev/stdout -- head -c 65536 /dev/zero \
		</dev/null >"$fifo" 2>/dev/null) &
	pid=$!
	sleep 2
	check "sandbox-run waits on the full pipe to write the record" kill -0 "$pid"
	t0=$(date +%s)
	kill -TERM "$pid"
	if until_gone 10 kill -0 "$pid" 2>/dev/null; then
		wait "$pid"
		st=$?
	else
		kill -KILL "$pid"
		wait "$pid"
		st="still running"
	fi
	assert_eq "SIGTERM ends it while it waits (143), within seconds" "143 yes" \
		"$st $([ $(($(date +%s) - t0)) -lt 10 ] && echo yes)"
	exec 7<&-
	rm -f "$fifo"
}

# sr_bounded SECONDS ARGS...: sr, killed if it outlives SECONDS (a hang
# is a failure, not a stuck test suite).
sr_bounded() {
	local s=$1
	shift
	local o="$SR_TMP/.out" e="$SR_TMP/.err"
	as_user timeout -k 2 "$s" "$SR" "$@" <"${SR_STDIN:-/dev/null}" >"$o" 2>"$e"
	rc=$?
	out=$(cat "$o")
	errout=$(cat "$e")
}

for_each_user t_foreign_link_in_sticky_dir t_link_to_startup_file t_link_left_by_agent_in_bind \
	t_fifo t_signal_while_writing
done_testing
