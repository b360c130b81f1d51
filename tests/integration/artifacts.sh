#!/usr/bin/env bash
# Getting work out (docs/artifacts.md): --export after success, failure and
# timeout; --changes, diff and apply round-tripping an agent's edits; binds
# and workspaces that belong to someone else; a disk that is a disk; as
# root and as an unprivileged user.
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

# A CI job: junit.xml and coverage/ written, then the tests fail (or time out).
CI_JOB='mkdir -p reports coverage/lcov && echo "<testsuite tests=\"3\"/>" >reports/junit.xml &&
echo "TN:" >coverage/lcov/lcov.info && echo 91% >coverage/index.html'

t_export_ci() {
	local d="$SR_OUT/ci-$SR_AS" r="$SR_OUT/ci-$SR_AS.json"
	rm -rf "$d" && mkdir -p "$d" && own "$d"
	rc=0
	out=$(cd "$d" && as_user "$SR" -q --net none --export reports/junit.xml --export coverage \
		--result "$r" -- sh -c "$CI_JOB; exit 0" 2>&1) || rc=$?
	assert_eq "export: the run's status" 0 "$rc"
	assert_eq "export: reports/junit.xml on the host" '<testsuite tests="3"/>' "$(cat "$d/reports/junit.xml" 2>/dev/null)"
	assert_eq "export: coverage/ whole" "$(printf 'TN:\n91%%')" "$(cat "$d/coverage/lcov/lcov.info" "$d/coverage/index.html" 2>/dev/null)"
	assert_eq "export: the caller's own files" "$(caller_ids)" "$(owners "$d")"

	# The tests fail: the artifacts come out all the same, the status is the job's.
	rm -rf "$d"/* && own "$d"
	rc=0
	out=$(cd "$d" && as_user "$SR" -q --net none --export reports --export coverage:out/cov -- \
		sh -c "$CI_JOB; exit 3" 2>&1) || rc=$?
	assert_eq "export after a failure: the job's status" 3 "$rc"
	check "export after a failure: both on the host" test -f "$d/reports/junit.xml" -a -f "$d/out/cov/index.html"

	# It times out: its processes are killed, its files still come out.
	rm -rf "$d"/* && own "$d"
	rc=0
	out=$(cd "$d" && as_user "$SR" -q --net none --timeout 1 --export reports/ --export coverage:into/ \
		--result "$r" -- sh -c "$CI_JOB; sleep 30" 2>&1) || rc=$?
	assert_eq "export after a timeout: 124" 124 "$rc"
	assert_eq "and the record says timeout" timeout "$(json_get "$r" status)"
	check "export after a timeout: both on the host (into/ keeps the name)" \
		test -f "$d/reports/junit.xml" -a -f "$d/into/coverage/index.html"
	assert_eq "export after a timeout: the caller's own files" "$(caller_ids)" "$(owners "$d")"

	# A path the job did not make: a warning, not a failure.
	rm -rf "$d"/* && own "$d"
	rc=0
	out=$(cd "$d" && as_user "$SR" --net none --export nothere -- true 2>&1) || rc=$?
	assert_eq "export of a missing path: the run's status" 0 "$rc"
	assert_match "and a warning" "warning: export nothere: no such file or directory in the sandbox" "$out"
	# Nor a directory made for it on the host, where one was to be made: an
	# empty reports/ would be uploaded as though the job had made it.
	rc=0
	out=$(cd "$d" && as_user "$SR" --net none --export reports/junit.xml --export nothere:out/sub/ \
		--export made:kept/ -- sh -c 'echo m >made' 2>&1) || rc=$?
	assert_eq "missing exports into missing directories: the run's status" 0 "$rc"
	check "no empty directory made for them" test ! -e "$d/reports" -a ! -e "$d/out"
	assert_eq "and one that came out made its own" m "$(cat "$d/kept/made" 2>/dev/null)"
	# A set-uid file, a device: never on the host.
	rc=0
	out=$(cd "$d" && as_user "$SR" -q --net none --export x -- sh -c 'mkdir x && echo s >x/s && chmod 4755 x/s && mkfifo x/fifo' 2>&1) || rc=$?
	assert_eq "export: no set-uid bit on the host" "755" "$(stat -c %a "$d/x/s" 2>/dev/null)"
	check "export: no FIFO on the host" test ! -e "$d/x/fifo"
}

# HOSTDIR an existing directory, named without a trailing '/': a file goes
# into it under its own name, as cp and docker cp put it; a directory is
# merged into it. The file failed at the end ("would replace a
# directory"), and the report was lost with the sandbox.
t_export_onto_dir() {
	local d="$SR_OUT/onto-$SR_AS" sb
	rm -rf "$d" && mkdir -p "$d/out" && echo old >"$d/out/kept" && own "$d"
	rc=0
	out=$(cd "$d" && as_user "$SR" -q --net none --export report.xml:out --export cov:out -- \
		sh -c 'echo "<r/>" >report.xml && mkdir cov && echo 91% >cov/index.html' 2>&1) || rc=$?
	assert_eq "a file and a directory onto an existing directory: done" 0 "$rc"
	assert_eq "the file in it under its own name, the directory merged" "<r/> 91% old" \
		"$(cat "$d/out/report.xml" "$d/out/index.html" "$d/out/kept" 2>/dev/null | tr '\n' ' ' | sed 's/ $//')"
	rm -f "$d/out/report.xml"
	sb=$(cd "$d" && as_user "$SR" create --net none --timeout 60 --export report.xml:out)
	sr exec "$sb" -- sh -c 'echo "<r/>" >report.xml'
	sr rm "$sb"
	assert_eq "create --export: rm puts it there too" "0 <r/>" "$rc $(cat "$d/out/report.xml" 2>/dev/null)"
	rm -rf "$d"
}

t_export_profile() {
	# [artifacts] export in a profile: a HOSTDIR written there is the profile's.
	local d="$SR_OUT/prof-$SR_AS"
	rm -rf "$d" && mkdir -p "$d/ci" "$d/run"
	printf '[artifacts]\nexport = reports:artifacts/reports\n' >"$d/ci/job.ini"
	own "$d"
	rc=0
	out=$(cd "$d/run" && as_user "$SR" -q --net none -p ../ci/job.ini -- sh -c 'mkdir reports; echo ok >reports/r' 2>&1) || rc=$?
	assert_eq "a profile's export: relative to the profile" ok "$(cat "$d/ci/artifacts/reports/r" 2>/dev/null)"
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

# The edits of a coding agent: add, modify, delete, rename, mode, symlink, directories.
AGENT_EDITS='echo "int main(void) { return 1; }" >src/main.c &&
echo new >src/new.c && rm docs/old.md && mv notes.txt NOTES.txt && chmod +x build.sh &&
ln -sf src/main.c current && rm -r legacy && mkdir -p lib/deep && echo z >lib/deep/z.c &&
rm -r tmpdir && echo file-now >tmpdir && rm -r conf && mkdir conf && echo c >conf/c'

make_checkout() {
	rm -rf "$1" && mkdir -p "$1/src" "$1/docs" "$1/legacy/sub" "$1/tmpdir"
	echo "int main(void) { return 0; }" >"$1/src/main.c"
	echo old >"$1/docs/old.md" && echo keep >"$1/docs/keep.md"
	echo notes >"$1/notes.txt" && printf '#!/bin/sh\nmake\n' >"$1/build.sh"
	echo l >"$1/legacy/sub/l.c" && echo t >"$1/tmpdir/t"
	mkdir -p "$1/conf" && echo a >"$1/conf/a" && echo b >"$1/conf/b"
	ln -s docs/keep.md "$1/current"
	own "$1"
	# The changes' base is the coarse clock's tick when the sandbox starts, and
	# a file changed in that tick counts as changed on the host while it ran
	# (the safe side): the checkout is made a tick or more before.
	sleep 0.05
}

t_changes_round_trip() {
	local d="$SR_OUT/co-$SR_AS" c="$SR_OUT/changes-$SR_AS.tar" after="$SR_OUT/after-$SR_AS"
	make_checkout "$d"
	rm -rf "$after" && mkdir -p "$after" && own "$after"
	rc=0
	out=$(cd "$after" && as_user "$SR" -q --net none --workspace "$d" --changes "$c" \
		--export /workspace:view -- sh -c "$AGENT_EDITS" 2>&1) || rc=$?
	assert_eq "--changes: the run's status" 0 "$rc"
	check "--changes: the file is written" test -f "$c"
	sr diff "$c"
	assert_eq "diff: a line per change, by path" "$(cat <<'EOF'
R  notes.txt -> NOTES.txt
M  build.sh (mode 0644 -> 0755)
A  conf/c
M  current -> src/main.c
A  lib/
A  lib/deep/
A  lib/deep/z.c
M  src/main.c
A  src/new.c
M  tmpdir (dir -> file)
D  conf/a
D  conf/b
D  docs/old.md
D  legacy/
D  legacy/sub/
D  legacy/sub/l.c
D  tmpdir/t
5 added, 4 modified, 7 deleted, 1 renamed
EOF
)" "$out"
	sr diff "$c" --patch
	assert_match "diff --patch: a unified diff" "$(printf -- '-int main\\(void\\) \\{ return 0; \\}\n\\+int main\\(void\\) \\{ return 1; \\}')" "$out"
	sr diff "$c" --stat
	assert_match "diff --stat: a total" "files changed, [0-9]+ insertions\(\+\), [0-9]+ deletions\(-\)$" "$out"
	# Onto a copy of the checkout: the same tree as the sandbox's.
	rm -rf "$d.copy" && cp -a "$d" "$d.copy" && own "$d.copy"
	sr apply "$c" --to "$d.copy"
	assert_eq "apply --to a copy: status 0" 0 "$rc"
	assert_eq "the copy is the sandbox's workspace" "" "$(diff -r --no-dereference "$after/view" "$d.copy" 2>&1)"
	assert_eq "modes too" "755" "$(stat -c %a "$d.copy/build.sh")"
	assert_eq "the caller's own files" "$(caller_ids)" "$(owners "$d.copy")"
	sr apply "$c" --to "$d.copy"
	assert_eq "applied twice: nothing to do, status 0" 0 "$rc"
	# A host edit since: refused, naming it; --force applies over it.
	echo "host edit" >>"$d/src/main.c"
	sr apply "$c"
	assert_eq "apply over a host edit: refused (125)" 125 "$rc"
	assert_match "naming the path" "1 conflict with .*: src/main.c \(changed on the host since\)" "$errout"
	assert_eq "and nothing changed" "notes" "$(cat "$d/notes.txt")"
	sr apply --force "$c"
	assert_eq "--force: applied" "0 int main(void) { return 1; }" "$rc $(cat "$d/src/main.c")"
	check "--force: the rest too" test -f "$d/NOTES.txt" -a ! -e "$d/notes.txt" -a -L "$d/current"
}

t_changes_file_agent() {
	# An executable file run over --workspace DIR is copied in beside DIR's
	# files, sandbox-run's doing, not the agent's: it is no change of the
	# workspace, and apply does not write it into the checkout.
	local d="$SR_OUT/fa-$SR_AS" c="$SR_OUT/fa-$SR_AS.tar" a="$SR_OUT/fa-agent-$SR_AS"
	make_checkout "$d"
	rm -rf "$a" "$c" && mkdir -p "$a"
	printf '#!/bin/sh\necho edited >>docs/keep.md\n' >"$a/edit-agent"
	chmod 0755 "$a" "$a/edit-agent" && own "$a"
	sr --net none --workspace "$d" --changes "$c" "$a/edit-agent"
	assert_eq "a file agent over --workspace: run" 0 "$rc"
	sr diff "$c"
	assert_eq "its changes are the agent's edits alone, not the agent file" \
		"$(printf 'M  docs/keep.md\n0 added, 1 modified, 0 deleted, 0 renamed')" "$out"
	sr apply "$c"
	assert_eq "apply: the edit made, the agent file not written into the checkout" \
		"0 keep edited absent" \
		"$rc $(tr '\n' ' ' <"$d/docs/keep.md")$(test -e "$d/edit-agent" && echo present || echo absent)"
	printf 'x\n' >"$d/edit-agent" && own "$d"
	sr -q --net none --workspace "$d" "$a/edit-agent"
	assert_eq "a workspace that has a file of the agent's name: refused, saying so" \
		"125 sandbox-run: agent $a/edit-agent: the workspace already has a edit-agent (run that one, or rename one of them)" \
		"$rc $errout"
	rm -rf "$d" "$a" "$c"
}

t_changes_dir_modes() {
	# An ordinary agent makes a directory, fills it and makes it read-only:
	# apply gave the directory its mode before its file went in, so the
	# caller's apply failed ("d/f: Permission denied") after it had deleted
	# keep and made a_first and an empty d, and again when run again (found
	# by a review of 2026-11-28). A directory's mode is set once what it
	# holds is in, deepest first, as tar does; one the host made read-only
	# since is refused before anything is changed.
	local d="$SR_OUT/dm-$SR_AS" c="$SR_OUT/dm-$SR_AS.tar"
	rm -rf "$d" "$d.copy" "$d.ro" "$c" && mkdir -p "$d/ro" && echo keep >"$d/keep" && own "$d"
	sleep 0.05
	sr --net none --workspace "$d" --changes "$c" -- sh -c \
		'echo a >a_first && mkdir d && echo x >d/f && chmod 555 d && echo n >ro/new && echo z >z_last && rm keep'
	assert_eq "--changes: taken" 0 "$rc"
	cp -a "$d" "$d.copy" && cp -a "$d" "$d.ro" && own "$d.copy" "$d.ro"
	sr apply "$c" --to "$d.copy"
	assert_eq "apply: all of it, the directory 0555 with its file" "0 a 555 x n z absent" \
		"$rc $(cat "$d.copy/a_first") $(stat -c %a "$d.copy/d") $(cat "$d.copy/d/f" "$d.copy/ro/new" "$d.copy/z_last" | xargs) $(test -e "$d.copy/keep" && echo present || echo absent)"
	sr apply "$c" --to "$d.copy"
	assert_eq "applied again: nothing to do" 0 "$rc"
	chmod 555 "$d.ro/ro"
	sr apply "$c" --to "$d.ro"
	if [ "$SR_AS" = root ]; then
		assert_eq "root: a read-only directory of the host's is written in" "0 n" "$rc $(cat "$d.ro/ro/new")"
	else
		assert_eq "a directory of the host's made read-only since: refused, naming it" \
			"125 sandbox-run: apply: nothing changed: ro/new: its directory: Permission denied" \
			"$rc $errout"
		assert_eq "and nothing changed" "keep ro" "$(ls "$d.ro" | xargs)"
	fi
	chmod -R u+w "$d.copy" "$d.ro"
	rm -rf "$d" "$d.copy" "$d.ro" "$c"
}

t_changes_links_out() {
	# A Python venv's bin/python -> /usr/bin/python3: --changes took it
	# (status 0, no warning), then diff and apply refused the whole file
	# ("leaves the tree (a crafted file?)"). A link is data, made and never
	# followed, whatever its target, as git keeps it.
	local d="$SR_OUT/lo-$SR_AS" c="$SR_OUT/lo-$SR_AS.tar"
	rm -rf "$d" "$d.copy" "$c" && mkdir -p "$d" && echo x >"$d/README" && own "$d"
	sleep 0.05
	sr --net none --workspace "$d" --changes "$c" -- sh -c \
		'mkdir -p venv/bin && ln -s /usr/bin/python3 venv/bin/python && ln -s ../../elsewhere up'
	assert_eq "--changes: taken" 0 "$rc"
	assert_no_match "no warning about a link" "link|left out" "$errout"
	sr diff "$c"
	assert_eq "diff: the links listed" "0 A  up -> ../../elsewhere|A  venv/|A  venv/bin/|A  venv/bin/python -> /usr/bin/python3|" \
		"$rc $(head -4 <<<"$out" | tr '\n' '|')"
	cp -a "$d" "$d.copy" && own "$d.copy"
	sr apply "$c" --to "$d.copy"
	assert_eq "apply: the links made as they are" "0 /usr/bin/python3 ../../elsewhere" \
		"$rc $(readlink "$d.copy/venv/bin/python") $(readlink "$d.copy/up")"
	rm -rf "$d" "$d.copy" "$c"
}

t_living() {
	local d="$SR_OUT/live-$SR_AS" sb
	make_checkout "$d"
	rm -rf "$d.out" && mkdir -p "$d.out" && own "$d.out"
	rc=0
	sb=$(cd "$d.out" && as_user "$SR" create --net none --timeout 60 --workspace "$d" --export reports) || rc=$?
	assert_eq "create --export: made" 0 "$rc"
	sr exec "$sb" -- sh -c 'echo edited >>docs/keep.md && mkdir reports && echo r >reports/r'
	sr diff "$sb"
	assert_eq "diff ID: a living sandbox's changes so far" "$(printf 'M  docs/keep.md\nA  reports/\nA  reports/r\n2 added, 1 modified, 0 deleted, 0 renamed')" "$out"
	rm -rf "$d.copy" && cp -a "$d" "$d.copy" && own "$d.copy"
	sr apply "$sb" --to "$d.copy"
	assert_eq "apply ID --to: done" "0 keep edited" "$rc $(cat "$d.copy/docs/keep.md" | tr '\n' ' ' | sed 's/ $//')"
	sr rm "$sb"
	assert_eq "rm: status 0" 0 "$rc"
	assert_eq "rm: create's --export on the host" r "$(cat "$d.out/reports/r" 2>/dev/null)"
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
	# A living sandbox on the host's disk: an exec's record and inspect
	# count what it holds (a host directory's count is the host's walk:
	# PID 1's "cannot count" replaced it, and the record said null).
	sr create --net none --disk-backing disk --disk 64M --timeout 60
	local sb=$out
	sr exec "$sb" -- dd if=/dev/zero of=/tmp/f bs=1M count=3 status=none
	sr exec --result "$r" "$sb" -- true
	check "a living sandbox on the host's disk: an exec's record counts it ($(json_get "$r" disk_used_bytes))" \
		test "$(json_get "$r" disk_used_bytes)" -ge 3000000
	check "and inspect" test "$(as_user "$SR" inspect "$sb" | python3 -c \
		'import json,sys; print(json.load(sys.stdin)["usage"]["disk_used_bytes"] or 0)')" -ge 3000000
	if [ "$SR_AS" = user ]; then
		# A host directory's count is a walk of every file, on the keeper's
		# loop: past 100,000 files, none (a million stalled it for seconds
		# at each exec's end and inspect: the deadline and rm wait on it).
		sr exec "$sb" -- /usr/bin/python3 -c '
import os
os.mkdir("/tmp/many")
for i in range(100100): open("/tmp/many/%d" % i, "w").close()'
		sr exec --result "$r" "$sb" -- true
		assert_eq "past 100,000 files, an exec's record has no count of a host directory" null \
			"$(json_get "$r" disk_used_bytes)"
	fi
	sr rm "$sb"
	check "no disk is left behind" test -z "$(ls "$(data_dir)/disks" 2>/dev/null | grep -v '^ext4-.*\.img$')"
}

data_dir() {
	if [ "$SR_AS" = user ]; then echo "$SR_TMP/data-user"; else echo "$SANDBOX_RUN_DATA_DIR"; fi
}

t_export_owner() {
	# Into a user's directory, through directories that are not there
	# yet: everything made, those directories included, is that user's,
	# a root caller's export and changes file too.
	local d="$SR_OUT/owner-$SR_AS" u
	u="$(id -u "$SR_TEST_USER"):$(id -g "$SR_TEST_USER")"
	rm -rf "$d" && mkdir -p "$d"
	if [ "$SR_AS" = root ]; then chown "$u" "$d"; else u=$(caller_ids | tr -d ' '); own "$d"; fi
	rc=0
	out=$(cd "$d" && as_user "$SR" -q --net none --export reports:out/sub/reports \
		--changes "$d/new/dir/c.tar" -- sh -c 'mkdir reports && echo r >reports/r' 2>&1) || rc=$?
	assert_eq "export through missing directories: done" 0 "$rc"
	check "and the changes file written" test -f "$d/new/dir/c.tar"
	assert_eq "everything made is the directory owner's" "$u " "$(owners "$d")"
}

t_changes_private() {
	# A changes file holds the host's copy of each file changed or deleted,
	# whatever its mode (a 0600 .env): it is the caller's alone, not 0644
	# in /tmp for every user to read.
	local d="$SR_OUT/priv-$SR_AS" c="$SR_OUT/priv-$SR_AS.tar"
	rm -rf "$d" "$c" && mkdir -p "$d" && echo 'KEY=private' >"$d/.env" && chmod 600 "$d/.env"
	own "$d"
	sr --net none --workspace "$d" --changes "$c" -- rm .env
	assert_eq "a changes file holding a 0600 file's copy: written" 0 "$rc"
	assert_eq "and open to its owner alone" 600 "$(stat -c %a "$c" 2>/dev/null)"
}

t_destination_first() {
	# An export or changes file that could not be written where it goes
	# was found when the sandbox ended: the agent ran, and its work was
	# lost ("changes: export to /nonexist: No such file or directory").
	# Now said before anything runs, as for --result.
	local d="$SR_OUT/dest-$SR_AS" ro="$SR_TMP/dest-ro" top="/sr-test-dest-$$"
	rm -rf "$d" && mkdir -p "$d" && own "$d"
	echo plain >"$d/file"
	mkdir -p "$ro" && chmod 0755 "$ro"
	sr --net none --changes "$d/file/c.changes" -- sh -c 'echo ran >&2'
	assert_eq "--changes under a file: 125 before the run, naming it" \
		"125 sandbox-run: changes $d/file/c.changes: $d/file: Not a directory" "$rc $errout"
	sr --net none --export "out.txt:$d/file/out.txt" -- sh -c 'echo ran >&2'
	assert_eq "--export under a file: alike" \
		"125 sandbox-run: export out.txt to $d/file/out.txt: $d/file: Not a directory" "$rc $errout"
	sr create --net none --changes "$d/file/c.changes"
	assert_eq "create --changes under a file: 125 before it is made" \
		"125 sandbox-run: create: changes $d/file/c.changes: $d/file: Not a directory" "$rc $errout"
	sr ls
	assert_eq "and no sandbox was made: ls shows its header alone" "0 1" "$rc $(wc -l <<<"$out")"
	if [ "$SR_AS" = user ]; then
		sr --net none --changes "$ro/new/c.changes" -- sh -c 'echo ran >&2'
		assert_eq "--changes in a directory not the caller's: 125 before the run" \
			"125 sandbox-run: changes $ro/new/c.changes: directory $ro: Permission denied" \
			"$rc $errout"
	else
		# A directory that is missing up to / is made, as any other is.
		sr --net none --changes "$top/c.changes" -- sh -c 'echo made >f'
		assert_eq "--changes in a new directory under /: written" \
			"0 1" "$rc $(tar -xOf "$top/c.changes" sandbox-run-changes.json 2>/dev/null | grep -c '"path":"f"')"
		rm -rf "$top"
	fi
	rm -rf "$d"
}

for_each_user t_destination_first t_export_ci t_export_onto_dir t_export_profile t_binds_owned t_foreign_owners t_changes_round_trip \
	t_changes_file_agent t_changes_dir_modes t_changes_links_out t_export_owner t_changes_private t_living t_disk
done_testing
