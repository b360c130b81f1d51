#!/usr/bin/env bash
# A root caller acts on a directory as its owner (a writable bind's files
# are the owner's, the workspace's files are the agent's through an id map,
# --export and apply write as the owner) and so trusts the name it was
# given to lead to that owner's directory. Renaming an entry needs the
# right to write the directory holding it, none on the entry: a user who
# may write a directory above (0777 without the sticky bit, or their own)
# can move another user's private directory to that name, and root read it
# into the sandbox and wrote into it as that other user (outside-style
# attack, session 19). Every directory above must be root's or the
# owner's, writable by nobody else unless sticky (src/lib/hostpath.c,
# sr_hostpath_held()); an export into root's own tree joins no directory
# of another user's found there (archive.c, owned). The same for an OCI
# bundle's directory, whoever exports it: its owner's runtime would run
# what another user swapped in.
. "$(dirname "$0")/../integration/libtest.sh"

VICTIM=54321

# swapped DIR: DIR/shared (root's, 0777, not sticky) where the test user
# moved their project aside and the victim's 0700 directory (a 0600 key)
# to its name.
swapped() {
	local d=$1
	mkdir -p "$d/shared/proj" "$d/shared/victim"
	chmod 0777 "$d/shared"
	printf 'topsecret\n' >"$d/shared/victim/key"
	chmod 0600 "$d/shared/victim/key"
	chmod 0700 "$d/shared/victim"
	chown -R "$VICTIM:$VICTIM" "$d/shared/victim"
	chown "$SR_TEST_USER:$SR_TEST_USER" "$d/shared/proj"
	runuser -u "$SR_TEST_USER" -- sh -c "cd '$d/shared' && mv proj proj.old && mv victim proj"
}

setfattr_rm() {
	/usr/bin/python3 -c 'import os, sys; os.removexattr(sys.argv[1], "system.posix_acl_access")' "$1"
	chmod 0775 "$1"
}

only_victims() {
	assert_eq "$1" "key" "$(ls -A "$2")"
}

t_workspace_swapped() {
	[ "$SR_AS" = root ] || return 0
	local d="$SR_TMP/sw-ws"
	swapped "$d"
	sr --net none --workspace "$d/shared/proj" -- cat /workspace/key
	assert_no_match "the victim's 0600 file is not the agent's to read" topsecret "$out"
	assert_match "a warning names the directory above and what to give" \
		"workspace $d/shared/proj: $d/shared, above it, lets users other than root and uid $VICTIM rename what it holds \(owner uid 0, group root, mode 0777\).*only root and uid $VICTIM can write: not mapped to the agent" \
		"$errout"
	chmod 1777 "$d/shared"
	sr --net none --workspace "$d/shared/proj" -- cat /workspace/key
	assert_eq "in a sticky directory (only an entry's owner renames it) the owner's files are the agent's" \
		topsecret "$out"
}

t_bind_swapped() {
	[ "$SR_AS" = root ] || return 0
	local d="$SR_TMP/sw-bind"
	swapped "$d"
	sr --net none --bind "$d/shared/proj" /data -- sh -c 'echo x >/data/planted'
	assert_eq "a writable bind there: refused (125)" 125 "$rc"
	assert_match "saying why" "^sandbox-run: bind $d/shared/proj: $d/shared, above it, lets users" "$errout"
	only_victims "nothing written into the victim's directory" "$d/shared/proj"
	sr --net none --ro-bind "$d/shared/proj" /data -- cat /data/key
	assert_no_match "read-only, it stays the victim's (not mapped, not readable)" topsecret "$out"
	# A file of the victim's moved to the name of a file bind: the same.
	mv "$d/shared/proj/key" "$d/shared/conf"
	sr --net none --bind "$d/shared/conf" /data/conf -- sh -c 'echo x >/data/conf'
	assert_eq "a writable bind of a file there: refused (125)" 125 "$rc"
	assert_match "saying why" "^sandbox-run: bind $d/shared/conf: $d/shared, above it, lets users" "$errout"
	assert_eq "the victim's file unchanged" topsecret "$(cat "$d/shared/conf")"
}

t_export_swapped() {
	[ "$SR_AS" = root ] || return 0
	local d="$SR_TMP/sw-export"
	swapped "$d"
	sr --net none --export "/tmp/o:$d/shared/proj/" -- sh -c 'mkdir /tmp/o; echo x >/tmp/o/f'
	assert_eq "an export into it (as its owner): refused (125)" 125 "$rc"
	assert_match "saying why" "export to $d/shared/proj: $d/shared, above it, lets users" "$errout"
	sr --net none --export "/tmp/o:$d/shared/proj" -- sh -c 'mkdir /tmp/o; echo x >/tmp/o/f'
	assert_eq "an export to its name, in root's own 0777 directory: refused (125)" 125 "$rc"
	assert_match "a directory of another user's is not joined" \
		"a directory of another owner than uid 0, whom it is written as, is there: not changed" "$errout"
	only_victims "nothing written into the victim's directory" "$d/shared/proj"
	assert_eq "nor its mode changed" 700 "$(stat -c %a "$d/shared/proj")"
}

t_apply_swapped() {
	[ "$SR_AS" = root ] || return 0
	local d="$SR_TMP/sw-apply" c="$SR_TMP/sw-apply.tar"
	swapped "$d"
	sr --net none --workspace "$d/shared/proj.old" --changes "$c" -- sh -c 'echo hook >/workspace/hook'
	assert_eq "changes of a run on the user's project" 0 "$rc"
	sr apply "$c" --to "$d/shared/proj"
	assert_eq "applied where the victim's directory now is: refused (125)" 125 "$rc"
	assert_match "saying why" "apply to $d/shared/proj: $d/shared, above it, lets users" "$errout"
	only_victims "nothing written into the victim's directory" "$d/shared/proj"
}

# A file moves between directories with no right on it: sticky is no
# guard for a file's own directory. The user moves their file aside and
# the victim's 0600 file from a 0777 directory to its name.
t_file_into_sticky() {
	[ "$SR_AS" = root ] || return 0
	local d="$SR_TMP/sw-sticky"
	mkdir -p "$d/sticky" "$d/open"
	chmod 1777 "$d/sticky"
	chmod 0777 "$d/open"
	echo mine >"$d/sticky/a-conf"
	chown "$SR_TEST_USER:$SR_TEST_USER" "$d/sticky/a-conf"
	printf 'topsecret\n' >"$d/open/secret"
	chmod 0600 "$d/open/secret"
	chown "$VICTIM:$VICTIM" "$d/open/secret"
	runuser -u "$SR_TEST_USER" -- sh -c "cd '$d/sticky' && mv a-conf a-conf.old && mv ../open/secret a-conf"
	sr --net none --bind "$d/sticky/a-conf" /data/conf -- sh -c 'cat /data/conf; echo x >>/data/conf'
	assert_eq "a writable bind of the file moved into a sticky directory: refused (125)" 125 "$rc"
	assert_no_match "nothing of it read" topsecret "$out"
	assert_match "saying why" "^sandbox-run: bind $d/sticky/a-conf: $d/sticky, above it, lets users" "$errout"
	assert_eq "the victim's file unchanged" topsecret "$(cat "$d/sticky/a-conf")"
}

# Written as its owner: a --changes file, and an export whose directories
# are missing, refused before anything is made in the victim's directory.
t_changes_and_made_dirs_swapped() {
	[ "$SR_AS" = root ] || return 0
	local d="$SR_TMP/sw-made"
	swapped "$d"
	sr --net none --workspace "$d/shared/proj.old" --changes "$d/shared/proj/changes.tar" -- true
	assert_eq "--changes into it: refused (125)" 125 "$rc"
	assert_match "saying why" "export to $d/shared/proj: $d/shared, above it, lets users" "$errout"
	sr --net none --export "/tmp/o:$d/shared/proj/new/sub" -- sh -c 'mkdir /tmp/o; echo x >/tmp/o/f'
	assert_eq "an export that would make directories in it: refused (125)" 125 "$rc"
	only_victims "nothing made or written in the victim's directory" "$d/shared/proj"
}

# A CI job run as root in a checkout of root's made with a umask of 000
# (GitLab's Docker executor): a tree of root's, nothing to check.
t_root_checkout_0777() {
	[ "$SR_AS" = root ] || return 0
	local d="$SR_TMP/sw-ci"
	mkdir -p "$d/builds/proj"
	echo host >"$d/builds/proj/f"
	chmod 0777 "$d/builds" "$d/builds/proj"
	chmod 0666 "$d/builds/proj/f"
	sr --net none --workspace "$d/builds/proj" --export "/tmp/r:$d/builds/proj/reports" \
		-- sh -c 'echo more >>/workspace/f && cat /workspace/f && mkdir /tmp/r && echo ok >/tmp/r/junit.xml'
	assert_eq "the workspace is the agent's, the export made" "0 host more ok" "$rc $(echo $out) $(cat "$d/builds/proj/reports/junit.xml")"
	assert_no_match "no warning" "above it" "$errout"
}

# A directory writable by its group is as good as its owner's where that
# group is the owner's alone (a user's own group, and a umask of 002, as
# Debian and Ubuntu make them), and refused where it may have others.
t_group_writable() {
	[ "$SR_AS" = root ] || return 0
	local d="$SR_TMP/sw-group"
	mkdir -p "$d/u/proj"
	echo host >"$d/u/proj/f"
	chown -R "$SR_TEST_USER:$SR_TEST_USER" "$d/u"
	chmod 0775 "$d/u"
	sr --net none --workspace "$d/u/proj" -- sh -c 'echo more >>/workspace/f && cat /workspace/f'
	assert_eq "the user's own group may write above: the workspace is the agent's" \
		"0 host more" "$rc $(echo $out)"
	assert_no_match "no warning" "above it" "$errout"
	# An ACL naming another user shows as the group's bits (its mask).
	/usr/bin/python3 -c 'import os, struct, sys
e = [(1, 7, 0xffffffff), (2, 7, 54321), (4, 5, 0xffffffff), (0x10, 7, 0xffffffff), (0x20, 5, 0xffffffff)]
os.setxattr(sys.argv[1], "system.posix_acl_access", struct.pack("<I", 2) + b"".join(struct.pack("<HHI", *x) for x in e))' "$d/u"
	sr --net none --bind "$d/u/proj" /data -- true
	assert_eq "the user's own group, but an ACL naming another user: refused (125)" 125 "$rc"
	assert_match "saying so" "mode 0775, an ACL\)" "$errout"
	setfattr_rm "$d/u"
	chgrp 54321 "$d/u"
	sr --net none --workspace "$d/u/proj" -- sh -c 'echo more >>/workspace/f'
	assert_match "a group of others (or of nobody known) may write above: the warning" \
		"$d/u, above it, lets users other than root and uid [0-9]+ rename what it holds \(owner uid [0-9]+, group 54321, mode 0775\)" \
		"$errout"
	sr --net none --bind "$d/u/proj" /data -- true
	assert_eq "and a writable bind there is refused (125)" 125 "$rc"
}

# sandbox-run cp out, run by root, writes as its destination's owner, by
# the rule of --export (artifacts.h, sr_artifacts_held(),
# sr_artifacts_owner()): before, it wrote root's files wherever the name
# led, into the victim's directory the user swapped in too.
t_cp_out_swapped() {
	[ "$SR_AS" = root ] || return 0
	local d="$SR_TMP/sw-cp" sb
	swapped "$d"
	sr create --net none --timeout 120
	sb=$out
	sr exec "$sb" -- sh -c 'mkdir out proj; echo x >out/f; echo x >proj/f'
	sr cp "$sb:/workspace/out" "$d/shared/proj"
	assert_eq "a cp out into it: refused (125)" 125 "$rc"
	assert_match "one line naming the directory above and what to give" \
		"^sandbox-run: cp to $d/shared/proj: $d/shared, above it, lets users other than root and uid $VICTIM rename what it holds \(owner uid 0, group root, mode 0777\).*give a path whose directories only root and uid $VICTIM can write$" \
		"$errout"
	sr cp "$sb:/workspace/out/f" "$d/shared/proj/f"
	assert_eq "a file copied out to a name in it: refused (125)" 125 "$rc"
	sr cp "$sb:/workspace/proj" "$d/shared"
	assert_eq "a copy to its name, in root's own 0777 directory: refused (125)" 125 "$rc"
	assert_match "a directory of another user's is not joined" \
		"a directory of another owner than uid 0, whom it is written as, is there: not changed" "$errout"
	# The review's case: the user's own 0777 directory, not sticky.
	chown "$SR_TEST_USER" "$d/shared"
	sr cp "$sb:/workspace/out" "$d/shared/proj/"
	assert_match "in the user's 0777 directory: refused (125), naming it" \
		"^125 sandbox-run: cp to $d/shared/proj/: $d/shared, above it, lets users other than root and uid $VICTIM rename what it holds \(owner uid [0-9]+" \
		"$rc $errout"
	only_victims "nothing written into the victim's directory" "$d/shared/proj"
	assert_eq "nor its mode or owner changed" "700 $VICTIM" "$(stat -c '%a %u' "$d/shared/proj")"
	sr rm "$sb"
}

# Root reads what it copies in as root: from a directory someone else
# may rename in, the name could be another user's private directory or
# file moved there, which root would hand to the sandbox. Refused as a
# copy out is; a user's own tree, a sticky directory above a directory,
# and a tree of root's (a CI checkout made with a umask of 000) are not.
t_cp_in_swapped() {
	[ "$SR_AS" = root ] || return 0
	local d="$SR_TMP/sw-cp-in" sb
	swapped "$d"
	mkdir -p "$d/own/p" "$d/ci/src"
	echo mine >"$d/own/p/f"
	chown -R "$SR_TEST_USER:$SR_TEST_USER" "$d/own"
	echo ci >"$d/ci/src/f"
	chmod 0777 "$d/ci" "$d/ci/src"
	sr create --net none --timeout 120
	sb=$out
	sr cp "$d/shared/proj" "$sb:/workspace/in"
	assert_match "a directory copied in from it: refused (125), naming the directory above" \
		"^125 sandbox-run: cp from $d/shared/proj: $d/shared, above it, lets users other than root and uid $VICTIM rename what it holds" \
		"$rc $errout"
	sr cp "$d/shared/proj/key" "$sb:/workspace/key"
	assert_eq "a file in it: refused (125)" 125 "$rc"
	sr exec "$sb" -- sh -c 'cat in/key key 2>/dev/null; echo end'
	assert_eq "the victim's file is not in the sandbox" "end" "$out"
	chmod 1777 "$d/shared"
	sr cp "$d/shared/proj" "$sb:/workspace/in"
	assert_eq "below a sticky directory (only an entry's owner renames it): copied" 0 "$rc"
	chmod 0777 "$d/shared"
	sr cp "$d/own/p" "$sb:/workspace/own"
	assert_eq "from the user's own tree: copied" "0" "$rc"
	sr cp "$d/ci/src/f" "$sb:/workspace/ci"
	sr exec "$sb" -- cat own/f ci
	assert_eq "from a tree of root's, 0777 all the way: copied" "mine
ci" "$out"
	# Another user's file moved (from a directory where anyone may rename)
	# into root's 0777 tree or into the user's own directory.
	printf 'theirs\n' >"$d/ci/src/key"
	printf 'theirs\n' >"$d/own/p/key"
	chown "$VICTIM" "$d/ci/src/key" "$d/own/p/key"
	chmod 0600 "$d/ci/src/key" "$d/own/p/key"
	sr cp "$d/ci/src/key" "$sb:/workspace/k1"
	assert_match "another user's file in root's 0777 tree: refused (125)" \
		"^125 sandbox-run: cp from $d/ci/src/key: $d/ci/src, above it, lets users other than root and uid $VICTIM rename" \
		"$rc $errout"
	sr cp "$d/own/p/key" "$sb:/workspace/k2"
	assert_eq "another user's file in the user's own directory: refused (125)" 125 "$rc"
	sr exec "$sb" -- sh -c 'cat k1 k2 2>/dev/null; echo end'
	assert_eq "neither is in the sandbox" "end" "$out"
	# Inside a directory copied in: read as its owner, who cannot read it.
	mkdir "$d/own/q"
	printf 'theirs\n' >"$d/own/q/key"
	echo fine >"$d/own/q/f"
	chown "$SR_TEST_USER" "$d/own/q"
	chown "$VICTIM" "$d/own/q/key"
	chmod 0600 "$d/own/q/key"
	sr cp "$d/own/q" "$sb:/workspace/q"
	assert_match "another user's 0600 file inside the user's directory copied: not read (root reads as the user)" \
		"^125 .*key: Permission denied" "$rc $errout"
	sr exec "$sb" -- sh -c 'cat q/key 2>/dev/null; echo end'
	assert_eq "and not in the sandbox" "end" "$out"
	chmod 0644 "$d/own/q/key"
	sr cp "$d/own/q" "$sb:/workspace/q2"
	sr exec "$sb" -- cat q2/key q2/f
	assert_eq "one the user may read is copied, as the rest" "0 theirs
fine" "$rc $out"
	sr rm "$sb"
}

# Root's cp out into a user's directory gives the user the copy, as an
# export does; into a tree of root's all the way up (a CI checkout made
# with a umask of 000) it stays root's; into a directory of root's in the
# user's tree (theirs to rename there) it is refused.
t_cp_out_owner() {
	[ "$SR_AS" = root ] || return 0
	local d="$SR_TMP/sw-cp-owner" sb
	mkdir -p "$d/u" "$d/builds/proj"
	chown "$SR_TEST_USER:$SR_TEST_USER" "$d/u"
	chmod 0777 "$d/builds" "$d/builds/proj"
	mkdir -m 0700 "$d/u/rootdir"
	sr create --net none --timeout 120
	sb=$out
	sr exec "$sb" -- sh -c 'mkdir -p out/sub; echo x >out/sub/f; echo y >g'
	sr cp "$sb:/workspace/out" "$d/u/out"
	assert_eq "into the user's directory: copied" "0 x" "$rc $(cat "$d/u/out/sub/f")"
	assert_eq "the copy is the user's, directories and files" \
		"$SR_TEST_USER $SR_TEST_USER $SR_TEST_USER" \
		"$(stat -c %U "$d/u/out" "$d/u/out/sub" "$d/u/out/sub/f" | xargs)"
	sr cp "$sb:/workspace/g" "$d/u/out/sub/"
	assert_eq "a file into the user's directory: the user's" "0 $SR_TEST_USER" \
		"$rc $(stat -c %U "$d/u/out/sub/g")"
	sr cp "$sb:/workspace/out" "$d/u/rootdir/"
	assert_eq "into a directory of root's in the user's tree: refused (125)" 125 "$rc"
	assert_match "saying whose tree it is in" \
		"cp to $d/u/rootdir/: a directory of root's in a tree of uid [0-9]+'s, who could have put it there: not written" \
		"$errout"
	assert_eq "nothing made in it" "" "$(ls -A "$d/u/rootdir")"
	sr cp "$sb:/workspace/out" "$d/builds/proj/reports"
	assert_eq "into a tree of root's, 0777 all the way: copied" "0 x" \
		"$rc $(cat "$d/builds/proj/reports/sub/f")"
	assert_eq "as root's files" "0 0" "$(stat -c %u "$d/builds/proj/reports" "$d/builds/proj/reports/sub/f" | xargs)"
	assert_no_match "no warning" "above it" "$errout"
	sr rm "$sb"
}

# Whoever exports a bundle runs it next, often as root: its name must be
# the exporter's to keep.
t_bundle_swappable() {
	local d="$SR_TMP/sw-bundle-$SR_AS"
	mkdir -p "$d/open" "$d/own"
	chmod 0777 "$d/open"
	own "$d/own"
	sr export --oci "$d/open/b" --net none -- /bin/true
	assert_eq "a bundle in a directory others may write: refused (125)" 125 "$rc"
	assert_match "saying why" "^sandbox-run: export $d/open/b: $d/open, above it, lets users" "$errout"
	sr export --oci "$d/own/b" --net none -- /bin/true
	assert_eq "in the exporter's own directory: written" 0 "$rc"
	assert_eq "its config.json" yes "$([ -s "$d/own/b/config.json" ] && echo yes)"
}

for_each_user t_workspace_swapped t_bind_swapped t_export_swapped t_apply_swapped t_file_into_sticky \
	t_changes_and_made_dirs_swapped t_root_checkout_0777 t_group_writable \
	t_bundle_swappable t_cp_in_swapped t_cp_out_swapped t_cp_out_owner
done_testing
