#!/usr/bin/env bash
# An executable-file agent gets itself, not the directory it happens to be
# in. Security round 2, finding 3 (medium): `sandbox-run ~/hello.sh` gave
# the agent ~/.ssh; as root, `sandbox-run /root-only/hello.sh` let the
# agent read root's 0600 files there, which the idmapped workspace made
# the agent's own. A directory is the agent's only when the caller names
# it, with --workspace DIR.
. "$(dirname "$0")/../integration/libtest.sh"

# A directory only its owner (the round's user) can enter, holding a
# script agent, a private key and a note; prints its path.
private_dir() {
	local d="$SR_TMP/$1-$SR_AS"
	mkdir -p "$d/.ssh"
	printf '#!/bin/sh\necho "args:$*"\nls -A /workspace | tr "\\n" " "; echo\ncat /workspace/.ssh/id_ed25519 /workspace/notes.txt 2>&1\nexit 0\n' >"$d/hello.sh"
	echo "PRIVATE-KEY-$SR_AS" >"$d/.ssh/id_ed25519"
	echo "NOTES-$SR_AS" >"$d/notes.txt"
	chmod 0755 "$d/hello.sh"
	chmod 0600 "$d/.ssh/id_ed25519" "$d/notes.txt"
	chmod 0700 "$d/.ssh" "$d"
	own "$d"
	echo "$d"
}

t_file_alone() {
	local d
	d=$(private_dir alone)
	sr --net none "$d/hello.sh" a b
	assert_eq "a file agent runs, with its arguments" 0 "$rc"
	assert_eq "its workspace holds the file alone" "args:a b
hello.sh " "$(head -2 <<<"$out")"
	assert_no_match "the private key beside it is not readable" "PRIVATE-KEY" "$out"
	assert_no_match "nor any other file of its directory" "NOTES-" "$out"
	# The file is the agent's own copy: changing it leaves the host's alone.
	local f="$SR_TMP/self-$SR_AS.sh" sum
	printf '#!/bin/sh\necho changed >>"$0" && tail -n 1 "$0"\nexit 0\n' >"$f"
	chmod 0755 "$f"
	own "$f"
	sum=$(sha256sum <"$f")
	sr --net none "$f"
	assert_eq "the agent may change its own copy" changed "$out"
	assert_eq "the host's file is unchanged" "$sum" "$(sha256sum <"$f")"
}

t_file_with_workspace() {
	local d ws="$SR_TMP/ws-$SR_AS"
	d=$(private_dir named)
	mkdir -p "$ws"
	echo "workspace-file" >"$ws/data.txt"
	chmod -R a+rX "$ws"
	own "$ws"
	sr --net none --workspace "$ws" "$d/hello.sh"
	assert_eq "--workspace DIR with a file agent: runs" 0 "$rc"
	assert_eq "DIR is the workspace, the file copied in beside its files" "args:
data.txt hello.sh " "$(head -2 <<<"$out")"
	assert_no_match "still nothing of the file's own directory" "PRIVATE-KEY|NOTES-" "$out"
	check "DIR is not written to" test ! -e "$ws/hello.sh"
	# The caller who wants the file's directory says so.
	sr --net none --workspace "$d" "$d/hello.sh"
	assert_match "--workspace naming the file's own directory: the caller's choice" \
		"PRIVATE-KEY-$SR_AS" "$out"
	# A name the workspace already has is not covered.
	cp "$d/hello.sh" "$ws/hello.sh"
	own "$ws/hello.sh"
	sr --net none --workspace "$ws" "$d/hello.sh"
	assert_eq "a workspace that has a file of that name: refused (125)" 125 "$rc"
	assert_match "and says why" "the workspace already has a hello.sh" "$errout"
	rm -f "$ws/hello.sh"
	sr --net none --workspace "$ws" "$d"
	assert_eq "--workspace with a directory agent: refused (125)" 125 "$rc"
	assert_match "and says why" "is its own workspace" "$errout"
}

for_each_user t_file_alone t_file_with_workspace
done_testing
