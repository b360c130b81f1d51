#!/usr/bin/env bash
# Host facts a sandbox's /proc no longer gives away. Security round 2,
# finding 11 (low): /proc/cmdline was the host kernel's command line,
# which can carry secrets, and /proc/sys/kernel/random/boot_id the host's
# boot id, the same in every sandbox of that boot. The first reads as an
# empty line, the second as a random UUID of the sandbox's own. What
# /proc/self/mountinfo still shows is in docs/security.md; the last case
# checks the lines it draws.
. "$(dirname "$0")/../integration/libtest.sh"

UUID_RE='^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$'

t_cmdline() {
	local host
	host=$(head -c 40 /proc/cmdline)
	sr --net none -- sh -c 'wc -c </proc/cmdline; cat /proc/cmdline; echo x 2>/dev/null >/proc/cmdline || echo read-only'
	check "control: the host's command line is not empty" test -n "$host"
	assert_eq "/proc/cmdline is an empty line (1 byte), read-only" "1

read-only" "$out"
	check "nothing of the host's command line is in it" _lacks "$host" "$out"
}
_lacks() { ! grep -qF -- "$1" <<<"$2"; }

t_boot_id() {
	local host first second
	host=$(cat /proc/sys/kernel/random/boot_id)
	sr --net none -- cat /proc/sys/kernel/random/boot_id
	first=$out
	sr --net none -- cat /proc/sys/kernel/random/boot_id
	second=$out
	assert_match "the boot id is a UUID (version 4)" "$UUID_RE" "$first"
	check "it is not the host's" test "$first" != "$host"
	check "and each sandbox has its own" test "$first" != "$second"
	sr --net none -- sh -c 'echo x >/proc/sys/kernel/random/boot_id 2>/dev/null || echo read-only'
	assert_eq "and it is read-only" read-only "$out"
}

# What mountinfo shows, as security.md says: a bind source's path on its
# file system, but neither the workspace's host directory (the overlay's
# lower layer is /proc/self/fd/N) nor a file agent's.
t_mountinfo() {
	local ws="$SR_TMP/mi-ws-$SR_AS" data="$SR_TMP/mi-data-$SR_AS" agent="$SR_TMP/mi-agent-$SR_AS"
	mkdir -p "$ws" "$data" "$agent"
	printf '#!/bin/sh\ncat /proc/self/mountinfo\n' >"$agent/run.sh"
	chmod -R a+rX "$ws" "$data" "$agent"
	chmod 0755 "$agent/run.sh"
	own "$ws" "$data" "$agent"
	sr --net none --workspace "$ws" --ro-bind "$data" /data -- cat /proc/self/mountinfo
	assert_no_match "the workspace's host path is not in mountinfo" "mi-ws-" "$out"
	assert_match "a bind source's path is (documented)" "mi-data-$SR_AS /data " "$out"
	sr --net none "$agent/run.sh"
	assert_no_match "nor a file agent's directory" "mi-agent-" "$out"
}

for_each_user t_cmdline t_boot_id t_mountinfo
done_testing
