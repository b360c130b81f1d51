#!/usr/bin/env bash
# sandbox-run cp against a hostile sandbox (the outside review of cp). The
# agent controls every name, link and byte of what is copied out, and what
# it may write on the host (a --bind); cp runs as the caller, beside the
# caller's own files. Each case plants what the review planted and checks
# that the "home" (a directory of this test's, never a real one) is intact.
. "$(dirname "$0")/../integration/libtest.sh"

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

for_each_user t_links_leave_copy
done_testing
