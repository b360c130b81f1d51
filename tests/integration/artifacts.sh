#!/usr/bin/env bash
# The sandbox's disk and who owns what it writes: binds and workspaces that
# belong to someone else; a disk that is a disk; as root and as an
# unprivileged user.
. "$(dirname "$0")/libtest.sh"

# The 3 GB write of the disk case (a smaller one with SR_TEST_BIG_WRITE_MB).
BIG_MB=${SR_TEST_BIG_WRITE_MB:-3072}

# uid:gid of the files under DIR (one line per distinct owner), for "owned by the caller".
owners() {
	find "$1" -exec stat -c '%u:%g' {} + | sort -u | tr '\n' ' '
}

# The round's user's host ids.
caller_ids() {
	if [ "$SR_AS" = user ]; then echo "$(id -u "$SR_TEST_USER"):$(id -g "$SR_TEST_USER") "; else echo "0:0 "; fi
}

t_binds_owned() {
	local d="$SR_OUT/bind-$SR_AS" u
	rm -rf "$d" && mkdir -p "$d/out"
	if [ "$SR_AS" = user ]; then
		own "$d"
		sr --net none --bind "$d/out" /out -- sh -c 'echo made >/out/f && mkdir /out/d'
		assert_eq "--bind: the files are the caller's" "$(caller_ids)" "$(owners "$d/out")"
		return
	fi
	# Root: a user's directory is written as that user; root's own is refused.
	u="$(id -u "$SR_TEST_USER"):$(id -g "$SR_TEST_USER")"
	chown "$u" "$d/out"
	sr --net none --bind "$d/out" /out -- sh -c 'echo made >/out/f && mkdir /out/d && echo w >>/out/f'
	assert_eq "--bind by root: writable inside" 0 "$rc"
	assert_eq "and the files are the directory owner's" "$u " "$(owners "$d/out")"
	mkdir -p "$d/rootdir"
	sr --net none --bind "$d/rootdir" /out -- true
	assert_eq "--bind by root of root's own directory: refused (125)" 125 "$rc"
	assert_match "saying what to do" "owned by root: the sandbox never writes as host root .*chown USER .*--ro-bind" "$errout"
	sr -v --net none -- true
	assert_match "-v: the host uid and gid of the sandbox user" "its user \(uid 1000 inside\) is host uid [0-9]+, gid [0-9]+" "$errout"
}

t_foreign_owners() {
	# A shared checkout: a group that is not the caller's (a setgid
	# directory); for root, another user's checkout. Writable inside,
	# untouched on the host.
	local d="$SR_OUT/shared-$SR_AS"
	rm -rf "$d" && mkdir -p "$d/src"
	echo orig >"$d/src/a.c" && echo top >"$d/README"
	if [ "$SR_AS" = user ]; then
		chown -R "$SR_TEST_USER:daemon" "$d"
	else
		chown -R "$SR_TEST_USER:$SR_TEST_USER" "$d"
	fi
	chmod -R g+w "$d" && chmod g+s "$d" "$d/src"
	sr --net none --workspace "$d" -- sh -c 'echo changed >>src/a.c && echo new >src/b.c && rm README && mv src src2 && cat src2/a.c'
	assert_eq "a checkout of another's: its files changed inside" "$(printf 'orig\nchanged')" "$out"
	assert_eq "and the host copy untouched" "orig top" "$(cat "$d/src/a.c" "$d/README" | tr '\n' ' ' | sed 's/ $//')"
	check "nothing added on the host" test ! -e "$d/src/b.c" -a ! -e "$d/src2"
}

t_disk() {
	local r="$SR_OUT/disk-$SR_AS.json" used want
	# More than --memory, well within --disk: written, counted, never an OOM.
	sr --net none --memory 2G --disk 10G --result "$r" -- \
		sh -c "dd if=/dev/zero of=/workspace/big bs=1M count=$BIG_MB status=none && echo wrote"
	assert_eq "a ${BIG_MB} MB write under --memory 2G --disk 10G: done" "0 wrote" "$rc $out"
	used=$(json_get "$r" disk_used_bytes)
	check "disk_used_bytes is about what was written ($used)" \
		test "$used" -ge $((BIG_MB << 20)) -a "$used" -le $(((BIG_MB + 64) << 20))
	want=$(disk_backing_of "$r")
	assert_eq "enforced.disk is how this host holds it ($want)" "$want" "$(json_get "$r" enforced.disk)"
	# Past --disk: ENOSPC where it is enforced.
	sr --net none --memory 2G --disk 64M --result "$r" -- \
		sh -c 'dd if=/dev/zero of=/workspace/big bs=1M count=100 2>&1 | grep -o "No space left on device"'
	if [ "$(json_get "$r" enforced.disk)" = none ]; then
		assert_match "past --disk, unenforced: said in a warning" "disk limit not enforced" "$errout"
	else
		assert_eq "past --disk: ENOSPC" "No space left on device" "$out"
	fi
	# Each backing asked for by name.
	sr --net none --disk-backing memory --result "$r" -- true
	assert_eq "--disk-backing memory: tmpfs" tmpfs "$(json_get "$r" enforced.disk)"
	sr --net none --disk-backing disk --disk 64M --result "$r" -- sh -c \
		'dd if=/dev/zero of=/tmp/f bs=1M count=100 2>&1 | grep -o "No space left on device"'
	if [ "$SR_AS" = root ]; then
		assert_eq "--disk-backing disk (root): an ext4 image, ENOSPC at the limit" "ext4 No space left on device" \
			"$(json_get "$r" enforced.disk) $out"
	else
		assert_eq "--disk-backing disk (user): a host directory, said unenforced" "none" "$(json_get "$r" enforced.disk)"
		assert_match "with a warning saying why" "disk limit not enforced: .*needs root" "$errout"
		sr --net none --disk-backing disk --strict -- true
		assert_eq "and --strict refuses it (125)" 125 "$rc"
	fi
	check "no disk is left behind" test -z "$(ls "$(data_dir)/disks" 2>/dev/null | grep -v '^ext4-.*\.img$')"
}

data_dir() {
	if [ "$SR_AS" = user ]; then echo "$SR_TMP/data-user"; else echo "$SANDBOX_RUN_DATA_DIR"; fi
}

for_each_user t_binds_owned t_foreign_owners t_disk
done_testing
