#!/usr/bin/env bash
# The command line: agents of every kind, entry detection, archives, and
# the one-line errors with their exit statuses.
. "$(dirname "$0")/libtest.sh"

t_bad_input() {
	sr -q --memory lots -- true
	assert_eq "bad size: 125" 125 "$rc"
	assert_match "bad size: one clear line" "^sandbox-run: .*memory.*'lots'.*(512M|2G)" "$errout"
	sr -q --result "$SR_OUT/bad-$SR_AS.json" --memory lots -- true
	assert_eq "bad input still gives the requested record: status error" error "$(json_get "$SR_OUT/bad-$SR_AS.json" status)"
	assert_match "with the message" "bad size 'lots'" "$(json_get "$SR_OUT/bad-$SR_AS.json" error)"
	sr -q --memory lots --result "$SR_OUT/bad2-$SR_AS.json" -- true
	assert_match "also when the bad option comes before --result" "bad size 'lots'" "$(json_get "$SR_OUT/bad2-$SR_AS.json" error)"
	sr -q -p no-such-profile --result "$SR_OUT/bad3-$SR_AS.json" -- true
	assert_match "and when the profile is missing" "no-such-profile" "$(json_get "$SR_OUT/bad3-$SR_AS.json" error)"
	assert_eq "which the record names" no-such-profile "$(json_get "$SR_OUT/bad3-$SR_AS.json" profile)"
	sr --timeout soon -- true
	assert_eq "bad duration: 125" 125 "$rc"
	sr --cpus -1 -- true
	assert_eq "bad cpus: 125" 125 "$rc"
	sr -p no-such-profile -- true
	assert_eq "unknown profile: 125" 125 "$rc"
	assert_match "unknown profile named" "no-such-profile" "$errout"
	sr --no-such-option -- true
	assert_eq "unknown option: 125" 125 "$rc"
	sr
	assert_eq "no agent: 125" 125 "$rc"
	assert_match "usage hint" "[Uu]sage" "$errout"
}

t_bad_profile() {
	local p="$SR_TMP/bad-$SR_AS.ini"
	printf '[limits]\nmemory = 1G\n\n[limits]\nmemroy = 2G\n' >"$p"
	chmod 644 "$p"
	sr -p "$p" -- true
	assert_eq "profile with an unknown key: 125" 125 "$rc"
	assert_match "file:line and did-you-mean" "bad-$SR_AS.ini:5: unknown key 'memroy' in \[limits\] \(did you mean 'memory'\?\)" "$errout"
	printf '[limits]\ndisk = huge\n' >"$p"
	sr -p "$p" -- true
	assert_match "bad value in a profile: file:line" "bad-$SR_AS.ini:2: .*disk" "$errout"
}

t_profile_paths() {
	# A profile's paths are the profile's: relative to its file, wherever
	# sandbox-run runs; a missing one is named with the profile's line.
	local d="$SR_TMP/paths-$SR_AS"
	mkdir -p "$d/agent" "$d/elsewhere"
	printf 'SECRET=from-the-profile-dir\n' >"$d/agent/secrets.env"
	printf 'SECRET=from-the-cwd\n' >"$d/elsewhere/secrets.env"
	printf '[env]\nfile = secrets.env\n[filesystem]\nro-bind = data:/data\n' >"$d/agent/prod.ini"
	mkdir -p "$d/agent/data" && echo hello >"$d/agent/data/f"
	chmod 600 "$d/agent/secrets.env" "$d/elsewhere/secrets.env"
	chmod -R a+rX "$d/agent/data" && chmod 644 "$d/agent/prod.ini"
	own "$d"
	rc=0
	out=$(cd "$d/elsewhere" && as_user "$SR" -q --net none -p ../agent/prod.ini -- sh -c 'echo $SECRET; cat /data/f' 2>&1) || rc=$?
	assert_eq "a profile's env file and bind source: relative to the profile" \
		"0 from-the-profile-dir hello" "$rc $(echo $out)"
	rm "$d/agent/secrets.env"
	out=$(cd "$d/elsewhere" && as_user "$SR" -q --net none -p ../agent/prod.ini -- true 2>&1) || rc=$?
	assert_match "a missing one: the profile's file and line" \
		"^sandbox-run: profile \.\./agent/prod\.ini:2: env file $d/elsewhere/\.\./agent/secrets\.env: No such file or directory$" "$out"
}

t_print_config() {
	sr -p offline --memory 1G --print-config
	assert_eq "--print-config exits 0" 0 "$rc"
	assert_match "shows the profile's network" "mode = none" "$out"
	assert_match "and the option over it" "memory = 1G" "$out"
	echo "$out" >"$SR_OUT/printed-$SR_AS.ini"
	sr -p "$SR_OUT/printed-$SR_AS.ini" --print-config
	# The header comment names where it came from; the settings are the same.
	assert_eq "the printed configuration loads back to itself" \
		"$(grep -v '^#' "$SR_OUT/printed-$SR_AS.ini")" "$(grep -v '^#' <<<"$out")"
	# Output that never arrived is a failure, said in one line.
	local a e
	for a in --print-config --help --version; do
		rc=0
		e=$(as_user "$SR" "$a" 2>&1 >/dev/full) || rc=$?
		assert_eq "$a on a full disk: 125" 125 "$rc"
		assert_match "$a on a full disk: says so" "^sandbox-run: $a: write standard output: No space left on device$" "$e"
	done
}

t_entry_detection() {
	local d="$SR_TMP/entry-$SR_AS"
	rm -rf "$d" && mkdir -p "$d/empty" "$d/noexec" "$d/py" "$d/entry"
	touch "$d/noexec/agent"
	chmod 644 "$d/noexec/agent"
	echo 'print("from main.py")' >"$d/py/main.py"
	printf '#!/bin/sh\necho "entry $*"\n' >"$d/entry/run.sh"
	chmod 755 "$d/entry/run.sh"
	chmod -R a+rX "$d"
	sr --net none "$d/empty"
	assert_eq "no entry point: 127" 127 "$rc"
	assert_match "lists what was looked for" "agent.*package.json.*main.py" "$errout"
	sr --net none "$d/noexec"
	assert_eq "entry not executable: 126" 126 "$rc"
	sr --net none "$d/py"
	assert_eq "main.py runs with python3" "from main.py" "$out"
	sr --net none --entry "sh run.sh" "$d/entry" a b
	assert_eq "--entry with arguments" "entry a b" "$out"
	sr --net none "$d/entry/run.sh" x
	assert_eq "an executable file runs as /workspace/NAME" "entry x" "$out"
	sr --net none "$d/missing"
	assert_eq "a missing agent: 127" 127 "$rc"
}

make_archives() {
	local a="$SR_TMP/archives"
	[ -d "$a" ] && return
	mkdir -p "$a/src"
	printf '#!/bin/sh\necho "from the archive: $(cat data.txt)"\n' >"$a/src/agent"
	chmod 755 "$a/src/agent"
	echo payload >"$a/src/data.txt"
	tar -C "$a/src" -czf "$a/good.tar.gz" agent data.txt
	tar -C "$a/src" -cJf "$a/good.tar.xz" agent data.txt
	tar -C "$a/src" --zstd -cf "$a/good.tar.zst" agent data.txt
	(cd "$a/src" && zip -q "$a/good.zip" agent data.txt)
	python3 - "$a" "$SR_SRCDIR/tests/integration" <<'EOF'
import sys
sys.path.insert(0, sys.argv[2])
from tarbuild import tar as _tar, f, link, hardlink, dev
d = sys.argv[1]
def tar(name, members):
    _tar(f"{d}/{name}", members)
tar("abs.tar.gz", [f("/tmp/evil")])
tar("dotdot.tar.gz", [f("../evil")])
tar("symlink-escape.tar.gz", [link("etc", "/etc"), f("etc/evil")])
tar("symlink-dotdot.tar.gz", [link("up", "../../../../etc")])
tar("hardlink.tar.gz", [hardlink("pw", "/etc/passwd")])
tar("device.tar.gz", [dev("null")])
tar("setuid.tar.gz", [f("agent", b"#!/bin/sh\nstat -c %a agent\n", 0o4755)])
# UTF-8 names, flagged as such in the zip: read in C.UTF-8 (archive.c).
import zipfile
with zipfile.ZipFile(f"{d}/utf8.zip", "w") as z:
    i = zipfile.ZipInfo("agent")
    i.external_attr = 0o755 << 16
    z.writestr(i, "#!/bin/sh\nls\n")
    z.writestr("h\u00e9llo-\u00fc.txt", "x")
EOF
	# A compression bomb: 64 MiB of zeros in a few KiB.
	head -c 67108864 /dev/zero >"$a/src/zeros"
	tar -C "$a/src" -czf "$a/bomb.tar.gz" zeros
	rm "$a/src/zeros"
	head -c 100 "$a/good.tar.gz" >"$a/truncated.tar.gz"
	# An agent that starts no process of its own: PID 1 and it are all there is.
	mkdir -p "$a/plain" && printf '#!/bin/sh\necho plain\n' >"$a/plain/agent" && chmod 755 "$a/plain/agent"
	tar -C "$a/plain" -czf "$a/plain.tar.gz" agent
	chmod -R a+rX "$a"
}

t_archives() {
	make_archives
	local a="$SR_TMP/archives" f
	for f in good.tar.gz good.tar.xz good.tar.zst good.zip; do
		sr --net none "$a/$f"
		assert_eq "archive agent $f runs" "from the archive: payload" "$out"
	done
	# The extraction takes one process beside PID 1, as a plain fork would.
	sr --net none --pids 2 "$a/plain.tar.gz"
	assert_eq "an archive agent runs under --pids 2" plain "$out"
	sr --net none "$a/utf8.zip"
	assert_eq "a zip with UTF-8 names extracts them as they are" "$(printf 'agent\nh\303\251llo-\303\274.txt')" "$out"
	for f in abs dotdot symlink-escape symlink-dotdot hardlink device; do
		sr --net none "$a/$f.tar.gz"
		assert_eq "hostile archive ($f) is refused: 125" 125 "$rc"
		assert_match "hostile archive ($f): one clear line" "^sandbox-run: .*archive" "$errout"
	done
	sr --net none "$a/setuid.tar.gz"
	assert_eq "setuid bits are dropped on extraction" 755 "$out"
	sr --net none --disk 16M "$a/bomb.tar.gz"
	assert_eq "a compression bomb stops at the disk limit: 125" 125 "$rc"
	assert_match "and says so" "disk limit|No space left" "$errout"
	sr --net none "$a/truncated.tar.gz"
	assert_eq "a truncated archive: 125" 125 "$rc"
	check "nothing was written outside the sandbox" test ! -e /tmp/evil -a ! -e "$SR_TMP/evil"
	t_archive_confined
}

# libarchive parses the agent's archive in a child of PID 1 confined as the
# agent will be: chrooted into the workspace, no capabilities, the filter --
# all before it reads the archive -- in network and PID namespaces of its
# own (src/lib/child/workspace.c). Seen with strace, run by root around the round's
# user: only root may read the arguments of PID 1, which is not dumpable.
t_archive_confined() {
	# One file per process (-ff): a call interrupted by another process's
	# is not split into "unfinished" and "resumed" lines.
	local log="$SR_OUT/extract-$SR_AS.strace" x
	rm -f "$log".*
	export -f as_user
	export SR_AS SR_TEST_USER SR_TMP
	strace -ff -qq -o "$log" -e trace=clone3,chroot,capset,seccomp,openat2 \
		bash -c 'as_user "$@"' _ "$SR" -q --net egress "$SR_TMP/archives/good.tar.gz" \
		>/dev/null 2>&1 </dev/null
	x=$(grep -l '^chroot(.* = 0$' "$log".* 2>/dev/null | head -1)
	check "the extraction runs in a process that chroots into the workspace" test -n "$x"
	assert_eq "which drops its capabilities and loads the filter before it extracts" \
		"chroot capset seccomp openat2" \
		"$(sed 's/(.*//' "${x:-/dev/null}" | uniq | head -4 | tr '\n' ' ' | sed 's/ $//')"
	if [ "$(id -u)" != 0 ]; then
		skip "the extraction has network and PID namespaces of its own" \
			"strace run unprivileged cannot read PID 1's clone3 arguments"
		return
	fi
	check "the extraction has network and PID namespaces of its own" \
		grep -Eqh '^clone3\(\{flags=(CLONE_NEWPID\|CLONE_NEWNET|CLONE_NEWNET\|CLONE_NEWPID),' "$log".*
}

t_verbose() {
	sr -v -p offline -- echo hi
	assert_match "-v names the profile, the agent, its workspace and what runs" \
		"^sandbox-run: sandbox [0-9a-f]{32}: profile offline \(builtin:offline\); agent: a command; workspace: empty; runs: echo hi$" \
		"$(grep -m1 ": profile " <<<"$errout")"
	# One line whatever the caller passed: words quoted as a shell would
	# need them, a newline or an 8-bit CSI (0x9b) shown as '?', in the
	# command and in paths; UTF-8 kept.
	local ws="$SR_TMP/ws-$SR_AS"$'\nsandbox-run: fake'
	mkdir -p "$ws" && chmod 755 "$ws"
	sr -v -p offline --workspace "$ws" -- printf '%s|' $'a b\nsandbox-run: fake' '' "it's" $'\x9b31m' 'héllo'
	assert_match "-v shows each argument, on one line" \
		"; workspace: [^;]*/ws-$SR_AS\\?sandbox-run: fake; runs: printf %s\\| 'a b\\?sandbox-run: fake' '' 'it'\\\\''s' \\?31m héllo$" \
		"$(grep -m1 ": profile " <<<"$errout")"
	assert_no_match "and what the caller passed fakes no log line" "^sandbox-run: fake" "$errout"
}

t_entry_ignored() {
	# --entry given where it does not apply is said; a profile's entry is not.
	sr --net none --entry ./x.sh -- echo hi
	assert_eq "--entry with -- COMMAND: the command runs" "hi" "$out"
	assert_match "and a warning says --entry is ignored" "sandbox-run: warning: --entry is for a directory or archive agent: ignored with -- COMMAND" "$errout"
	local p="$SR_TMP/entry-$SR_AS.ini"
	printf '[agent]\nentry = ./x.sh\n' >"$p"
	chmod 644 "$p"
	sr --net none -p "$p" -- echo hi
	assert_no_match "a profile's entry is ignored without a warning" "entry" "$errout"
}

t_unsearchable_home() {
	# Under sudo or setpriv HOME may be a directory the caller cannot
	# search: the user's profile directory is then simply not there.
	[ "$SR_AS" = user ] || return 0
	local d="$SR_TMP/closed-home"
	mkdir -p "$d" && chmod 0700 "$d"
	rc=0
	out=$(as_user env HOME="$d" XDG_CONFIG_HOME= "$SR" -q --net none -- echo fine 2>&1) || rc=$?
	assert_eq "an unsearchable HOME does not stop the profile lookup" "fine" "$out"
}

t_dir_env_relative() {
	# SANDBOX_RUN_STATE_DIR and SANDBOX_RUN_DATA_DIR are absolute paths: a
	# relative one was ignored, and a CI job's sandboxes, meant to be
	# apart, went among the user's others (for the job's `rm` to reach).
	local d="$SR_TMP/reldir-$SR_AS" v
	mkdir -p "$d" && own "$d"
	for v in "SANDBOX_RUN_STATE_DIR create --net none --timeout 5" "SANDBOX_RUN_STATE_DIR ls" \
		"SANDBOX_RUN_DATA_DIR snapshots" "SANDBOX_RUN_DATA_DIR deployments"; do
		set -- $v
		rc=0
		errout=$(cd "$d" && as_user env "$1=rel" "$SR" "${@:2}" 2>&1 >/dev/null) || rc=$?
		assert_eq "$1=rel, $2: 125" 125 "$rc"
		assert_match "in one line naming the variable" \
			"^sandbox-run: ([a-z]+: )?$1='rel' is not an absolute path \(give one, or unset it\)$" "$errout"
	done
	sr ls --json
	assert_eq "nothing was made among the user's sandboxes" "0 []" "$rc $out"
	assert_eq "nor in the current directory" "" "$(ls -A "$d")"
	rc=0
	out=$(as_user env SANDBOX_RUN_STATE_DIR= SANDBOX_RUN_DATA_DIR= "$SR" snapshots --json 2>&1) || rc=$?
	assert_eq "an empty one is unset, as XDG's are" 0 "$rc"
	# One that is a file: said as the variable's to change (it said to
	# remove the file: /etc/passwd, given by mistake).
	echo keep >"$d/file" && own "$d/file"
	for v in "SANDBOX_RUN_STATE_DIR ls" "SANDBOX_RUN_DATA_DIR snapshots"; do
		set -- $v
		rc=0
		errout=$(as_user env "$1=$d/file" "$SR" "$2" 2>&1 >/dev/null) || rc=$?
		assert_eq "$1 a file, $2: 125" 125 "$rc"
		assert_match "naming the variable, not telling to remove the file" \
			"^sandbox-run: $2: $1=$d/file: not a directory \(name a directory, or unset it\)$" "$errout"
	done
	assert_eq "the file as it was" keep "$(cat "$d/file")"
	rm -rf "$d"
}

t_help_verbs() {
	# --help names every verb there is (serve, export and doctor were
	# missing), and each verb's own --help its usage; create's its --from.
	local v
	sr --help
	for v in create exec ls inspect timeout port cp snapshot snapshots rm diff apply \
		deploy invoke deployments secrets export serve doctor; do
		assert_match "--help lists $v" "[ "$'\n'"]$v( |"$'\n'"|$)" "$out"
	done
	for v in create exec ls inspect timeout port cp snapshot snapshots rm diff apply \
		deploy invoke deployments secrets export serve doctor; do
		sr "$v" --help
		assert_match "$v --help: 0, its usage" "^0 Usage: sandbox-run $v" "$rc $out"
	done
	sr create --help
	assert_match "create --help: --from SNAPSHOT" "--from SNAPSHOT" "$out"
	sr deployments --help
	assert_match "deployments --help: every status ls shows" "installing, incomplete" "$out"
}

# The options a verb's --help lists, one a line: "-x --long", or "--long" alone.
help_options() {
	sed -nE 's/^ +(-[a-z], )?(--[a-z][a-z-]*).*/\1\2/p' <<<"$1" | sed 's/, / /'
}

# The options the man page's SYNOPSIS gives VERB, one a line.
man_synopsis() {
	python3 - "$SR_SRCDIR/docs/sandbox-run.1" "$1" <<'PY'
import re, sys
syn = open(sys.argv[1]).read().split(".SH SYNOPSIS", 1)[1].split("\n.SH ", 1)[0]
for block in syn.split("\n.br\n"):
    lines = block.replace("\\-", "-").split("\n")
    if lines[0] != ".B sandbox-run " + sys.argv[2]:
        continue
    # "|" alone starts the next verb (snapshot | snapshots).
    for line in lines[: lines.index("|")] if "|" in lines else lines:
        for o in re.findall(r"(?<![\w-])(--[a-z][a-z-]*|-[a-z])\b", line):
            print(o)
PY
}

t_help_options() {
	# snapshot --help did not list -h; the main --help's exec line left out
	# --result; the man page's SYNOPSIS gave snapshot no --idle-timeout.
	local v opts missing o
	for v in create exec cp snapshot diff apply deploy export serve; do
		sr "$v" --help
		assert_match "$v --help lists -h, --help" "(^|"$'\n'")  -h, --help" "$out"
	done
	sr exec --help
	opts=$(help_options "$out")
	sr --help
	missing=""
	while read -r o; do
		case $o in -q* | -h* | -v*) continue ;; esac
		grep -E "^  exec .*\[(${o% *}|${o#* })( |\])" <<<"$out" >/dev/null || missing="$missing $o"
	done <<<"$opts"
	assert_eq "--help's exec line: every option of exec --help" "" "$missing"
	for v in exec cp snapshot diff apply; do
		sr "$v" --help
		opts=$(help_options "$out")
		missing=""
		while read -r o; do
			case $o in -q* | -h* | -v*) continue ;; esac
			man_synopsis "$v" | grep -qxE -- "${o% *}|${o#* }" || missing="$missing $o"
		done <<<"$opts"
		for o in $(man_synopsis "$v"); do
			grep -qE -- "(^| )$o( |$)" <<<"$opts" || missing="$missing $o(man)"
		done
		assert_eq "the man page's SYNOPSIS of $v: the options of its --help" "" "$missing"
	done
}

t_cp_empty_path() {
	# `cp FILE ID:` was "cp: cp: a malformed request" (the keeper's word
	# for the empty path it was sent); `cp ID: DIR` named nothing.
	local f="$SR_OUT/cp-empty-$SR_AS"
	echo x >"$f"
	sr cp "$f" somesandbox:
	assert_eq "cp FILE ID: (no PATH): 125" 125 "$rc"
	assert_eq "in one line that says what is missing" \
		"sandbox-run: cp: 'somesandbox:' has no PATH after its colon: name a file or directory in the sandbox (a relative one is in /workspace)" \
		"$errout"
	sr cp somesandbox: "$f.out"
	assert_match "cp ID: DIR alike" "^125 sandbox-run: cp: 'somesandbox:' has no PATH after its colon" "$rc $errout"
	check "nothing made on the host" test ! -e "$f.out"
	rm -f "$f"
}

# on_full_disk ARGS...: sandbox-run ARGS as the round's user, its stdout a
# file on a full tmpfs (in a mount namespace of its own); $rc, $errout.
on_full_disk() {
	local d="$SR_TMP/full-$SR_AS"
	mkdir -p "$d"
	rc=0
	errout=$(SR_AS=$SR_AS SR_TEST_USER=$SR_TEST_USER SR_TMP=$SR_TMP unshare -m bash -c \
		"$(declare -f as_user)"'
		d=$1; shift
		mount -t tmpfs -o size=64k full "$d" && chmod 1777 "$d" || exit 99
		head -c 1M /dev/zero >"$d/fill" 2>/dev/null
		as_user "$@" >"$d/out"' on_full_disk "$d" "$SR" "$@" 2>&1) || rc=$?
}

t_output_unwritable() {
	# A regular file as stdout is relayed through a pipe (stdio-relay.h):
	# what it could not take was dropped and the run exited 0, an agent's
	# response lost without a word, where the agent writing the file
	# itself would have seen ENOSPC.
	if [ "$(id -u)" != 0 ]; then
		skip "the agent's output on a full disk" "needs root for a tmpfs"
		return
	fi
	on_full_disk -q --net none -- echo response
	assert_eq "run, stdout a file on a full disk: 125" 125 "$rc"
	assert_eq "saying so in one line" \
		"sandbox-run: the agent's standard output: write: No space left on device" "$errout"
	on_full_disk -q --net none -- sh -c 'echo response; exit 3'
	assert_eq "the agent's own failure stands" 3 "$rc"
	sr create --net none --timeout 60
	local sb=$out
	on_full_disk exec "$sb" -- echo response
	assert_eq "exec alike: 125" 125 "$rc"
	assert_eq "saying so" \
		"sandbox-run: exec: the command's standard output: write: No space left on device" "$errout"
	sr exec "$sb" -- echo response
	assert_eq "where there is room: 0, the output" "0 response" "$rc $out"
	sr rm "$sb"
}

t_changes_not_a_file() {
	# diff and apply of a FILE that is no changes file named neither it
	# nor what was wrong: "read archive: Error reading fd 3" for a
	# directory, "Unrecognized archive format" for any other file.
	local d="$SR_TMP/notchanges-$SR_AS" v
	mkdir -p "$d/dir" && echo hello >"$d/notes.txt"
	chmod -R a+rX "$d"
	for v in diff apply; do
		sr "$v" "$d/dir"
		assert_eq "$v DIR: 125, naming it" \
			"125 sandbox-run: $v: $d/dir: not a changes file (one that --changes FILE wrote)" \
			"$rc $errout"
		sr "$v" "$d/notes.txt"
		assert_match "$v of a file that is none: 125, naming it" \
			"^125 sandbox-run: $v: $d/notes.txt: not a changes file: read archive: " "$rc $errout"
	done
	rm -rf "$d"
}

t_secret_prompt_interrupted() {
	# secrets set turns the terminal's echo off for the value: a ^C (or a
	# quit) at the prompt ended it with the echo still off.
	command -v python3 >/dev/null || return 0
	out=$(as_user python3 -c 'import os, pty, sys, termios, time
for key in (b"\x03", b"\x1c"):
    pid, fd = pty.fork()
    if pid == 0:
        os.execv(sys.argv[1], sys.argv[1:])
    end = time.time() + 10
    while termios.tcgetattr(fd)[3] & termios.ECHO and time.time() < end:
        time.sleep(0.02)
    quiet = not termios.tcgetattr(fd)[3] & termios.ECHO
    os.write(fd, key)
    _, st = os.waitpid(pid, 0)
    echo = bool(termios.tcgetattr(fd)[3] & termios.ECHO)
    print("quiet" if quiet else "echoed", os.waitstatus_to_exitcode(st), "echo" if echo else "no-echo")
    os.close(fd)' "$SR" secrets set prompt-test KEY 2>&1)
	assert_eq "^C, quit at the prompt: the value was not echoed, the terminal's echo is back" \
		"$(printf 'quiet -2 echo\nquiet -3 echo')" "$out"
	sr secrets ls prompt-test
	assert_eq "and no secret was kept (nor is the name deployed)" \
		"125 sandbox-run: secrets ls: no deployment 'prompt-test' and no secrets set for it (sandbox-run deployments lists them)" \
		"$rc $out$errout"
}

t_verb_messages() {
	# One verb's name once: "deploy: deploy: missing AGENT", "timeout:
	# timeout: at most 366 days" and "cp: cp: X: exists and is not a
	# directory" said it twice; apply --to without DIR was "unknown
	# option '--to'".
	sr deploy
	assert_eq "deploy with no AGENT" \
		"125 sandbox-run: deploy: missing AGENT (see sandbox-run deploy --help)" "$rc $errout"
	# The parser's own lines name their verb: "create: create takes ...",
	# "deploy: deploy takes ...", "export: export --k8s needs ..." did twice.
	sr create a b
	assert_eq "create with two AGENTs" \
		"125 sandbox-run: create takes one AGENT at most ('b' follows it): run commands with sandbox-run exec ID -- COMMAND" \
		"$rc $errout"
	sr deploy a b
	assert_eq "deploy with two AGENTs" "125 sandbox-run: deploy takes one AGENT ('b' follows it)" \
		"$rc $errout"
	sr export --k8s -- true
	assert_match "export --k8s without --image" \
		"^sandbox-run: export --k8s needs --image IMAGE" "$errout"
	sr create --from no-such-snapshot
	assert_eq "and one that does not name it still says its verb" \
		"125 sandbox-run: create: option --from: no snapshot 'no-such-snapshot' (sandbox-run snapshots lists them)" \
		"$rc $errout"
	sr timeout some-sandbox 9000h
	assert_eq "timeout past 366 days" \
		"125 sandbox-run: timeout: '9000h': a deadline is at most 366 days from now (0: none)" \
		"$rc $errout"
	# What create's keeper refuses was said without create's name:
	# "sandbox-run: --timeout: at most 366 days ...".
	sr create --net none --timeout 9000h
	assert_eq "create --timeout past 366 days: said as create's" \
		"125 sandbox-run: create: --timeout: at most 366 days for a living sandbox" \
		"$rc $errout"
	sr apply some-sandbox --to
	assert_eq "apply --to without DIR" \
		"125 sandbox-run: apply: option --to needs a value (see --help)" "$rc $errout"
	# A verb's own options are named as given: "-zi" was "unknown option
	# 'exec'" (the argument before it), a misspelt long one had no
	# suggestion, and "--tty=1" was an unknown option.
	sr exec -zi some-sandbox -- true
	assert_eq "exec -zi names -z" \
		"125 sandbox-run: exec: unknown option '-z' (see --help)" "$rc $errout"
	sr serve --warmm 2
	assert_eq "serve --warmm: did you mean --warm" \
		"125 sandbox-run: serve: unknown option '--warmm' (did you mean '--warm'?)" "$rc $errout"
	sr snapshot --quiet=3 some-sandbox name
	assert_eq "snapshot --quiet=3: takes no value" \
		"125 sandbox-run: snapshot: option --quiet takes no value" "$rc $errout"
	local f="$SR_OUT/msg-file-$SR_AS"
	echo x >"$f"
	own "$f"
	sr create --net none --timeout 60
	local sb=$out
	sr exec "$sb" -- mkdir d
	sr cp "$sb:d" "$f"
	assert_eq "cp of a directory onto a file" \
		"125 sandbox-run: cp: $f: exists and is not a directory" "$rc $errout"
	sr rm "$sb"
	rm -f "$f"
}

t_mistyped_verb() {
	# A verb one letter off was "agent 'snapshts' not found", as if the
	# user had meant an agent.
	sr snapshts
	assert_eq "a mistyped verb: 127, the verb it is near" \
		"127 sandbox-run: agent 'snapshts' not found, nor a verb of that name (did you mean 'sandbox-run snapshots'?)" \
		"$rc $errout"
	sr -q inspct some-id
	assert_match "after -q too" "did you mean 'sandbox-run inspect'" "$errout"
	# From a directory the round's user may read (a clone made with
	# mktemp -d is root's alone: "Permission denied", not "not found").
	pushd "$SR_TMP" >/dev/null
	sr no-such-agent-here
	popd >/dev/null
	assert_eq "a word near no verb: as before" "127 sandbox-run: agent 'no-such-agent-here' not found" \
		"$rc $errout"
}

t_ls_profile_printable() {
	# ls printed a sandbox's profile (any -p FILE) as it was: a newline in
	# the path split its row in two, an escape sequence went to the terminal.
	local p="$SR_TMP/pro"$'\n'"file"$'\e'"[31m-$SR_AS.ini" sb
	printf '[limits]\nmemory = 1G\n' >"$p"
	chmod 644 "$p"
	sr create -q --net none --timeout 60 -p "$p"
	sb=$out
	sr ls
	assert_eq "ls: a header and one row, the profile made printable" \
		"2 1" "$(wc -l <<<"$out") $(grep -c "pro?file?\[31m-$SR_AS\.ini$" <<<"$out")"
	sr rm "$sb"
	rm -f "$p"
}

t_exec_result_no_sandbox() {
	# exec --result follows a run's rules: a record says why nothing ran.
	# For a sandbox that is not there, none was written (run and invoke
	# write one for their bad input).
	local rec="$SR_OUT/exec-nosb-$SR_AS.json"
	rm -f "$rec"
	sr exec --result "$rec" no-such-sandbox -- true
	assert_eq "exec --result of no sandbox: 125, and a record of status error saying why" \
		"125 error 125 no sandbox 'no-such-sandbox' (sandbox-run ls lists them)" \
		"$rc $(json_get "$rec" status) $(json_get "$rec" exit_code) $(json_get "$rec" error)"
	rm -f "$rec"
}

t_secret_no_value() {
	# `secrets set NAME KEY </dev/null` said "secret KEY: empty value
	# (sandbox-run secrets rm NAME KEY removes it)": nothing about stdin,
	# where the value is read from, and a hint to remove what was never set.
	local data="$SR_TMP/data-$SR_AS" f="$SR_OUT/novalue-$SR_AS"
	[ "$SR_AS" = user ] || data=$SANDBOX_RUN_DATA_DIR
	printf 'kept-value' >"$f"
	SR_STDIN=$f sr secrets set novalue KEY
	sr secrets set novalue KEY
	assert_eq "secrets set, stdin empty: 125, saying the value comes on stdin, and how" \
		"125 sandbox-run: secrets set: no value for KEY on standard input, where it is read from (never the command line): printf %s \"\$VALUE\" | sandbox-run secrets set novalue KEY" \
		"$rc $errout"
	assert_eq "the value set before is kept" kept-value "$(cat "$data/secrets/novalue/KEY")"
	out=$(as_user "$SR" secrets set novalue KEY <&- 2>&1)
	assert_match "stdin closed: alike" "^sandbox-run: secrets set: no value for KEY on standard input" "$out"
	out=$(as_user "$SR" secrets set novalue KEY <"$SR_TMP" 2>&1)
	assert_eq "stdin a directory: why it could not be read, not an empty value" \
		"sandbox-run: secrets set: read the value of KEY: Is a directory" "$out"
	command -v python3 >/dev/null || return 0
	# At the prompt (echo off), Enter alone; the line after the prompt is the error.
	out=$(as_user python3 "$PTY_RUN" noecho 'send:\n' -- "$SR" secrets set novalue KEY 2>&1 | tr -d '\r')
	out="$(sed -n 1p <<<"$out") $(sed -n 3p <<<"$out")"
	assert_eq "Enter alone at the prompt: 125, saying how to give it" \
		"125 sandbox-run: secrets set: no value typed for KEY: type it at the prompt, or give it on standard input: printf %s \"\$VALUE\" | sandbox-run secrets set novalue KEY" \
		"$out"
	sr secrets rm novalue KEY
	rm -f "$f"
}

t_changes_mistyped() {
	# diff and apply of a name that is neither a file here nor a sandbox
	# (a mistyped changes file) said "no sandbox 'agnet.changes'" alone;
	# a directory given without a slash, "no sandbox 'dir'".
	local d="$SR_TMP/mistyped-$SR_AS" v
	mkdir -p "$d/dir"
	chmod -R a+rX "$d"
	pushd "$d" >/dev/null || return
	for v in diff apply; do
		sr "$v" agnet.changes
		assert_eq "$v of no file and no sandbox: 125, saying it is neither" \
			"125 sandbox-run: $v: no changes file or sandbox 'agnet.changes' (a file: check its path; sandbox-run ls lists the sandboxes)" \
			"$rc $errout"
		sr "$v" dir
		assert_eq "$v of a directory, no slash: 125, naming it" \
			"125 sandbox-run: $v: dir: not a changes file (one that --changes FILE wrote)" \
			"$rc $errout"
	done
	popd >/dev/null || return
	rm -rf "$d"
}

t_secret_bad_name_first() {
	# secrets set asked for the value (typed, not echoed) and only then
	# said the name was bad: the secret typed for nothing.
	command -v python3 >/dev/null || return 0
	# Were the value asked for ("(not shown)"), it is typed, and shown in the answer.
	out=$(as_user python3 "$PTY_RUN" 'text:(not shown)' 'send:typed-secret\n' -- \
		"$SR" secrets set badname 'BAD KEY' 2>&1 | tr -d '\r')
	out="$(sed -n 1p <<<"$out") $(sed -n '2,$p' <<<"$out")"
	assert_eq "a bad key on a terminal: 125 at once, the value not asked for" \
		"125 sandbox-run: secrets set: bad secret name 'BAD KEY' (an environment variable's: letters, digits and '_', not starting with a digit)" \
		"$out"
}

t_list_ls() {
	# `deployments ls` and `snapshots ls` (as `secrets ls NAME` and docker's
	# `image ls`) were usage errors; they are the listings.
	local v want
	for v in deployments snapshots; do
		sr "$v"
		want="$rc $out"
		sr "$v" ls
		assert_eq "$v ls: the listing, as $v" "$want" "$rc $out"
		sr "$v" --json
		want="$rc $out"
		sr "$v" ls --json
		assert_eq "$v ls --json: as $v --json" "$want" "$rc $out"
		sr "$v" ls extra
		assert_match "$v ls extra: 125, the usage" "^125 sandbox-run: $v: usage: " "$rc $errout"
	done
}

t_ls_an_id() {
	# `ls box` said "unknown argument 'box' (see --help)"; --help does not
	# say that inspect is the view of one sandbox.
	sr ls some-box
	assert_eq "ls ID: 125, pointing at inspect" \
		"125 sandbox-run: ls: takes no ID ('some-box'): it lists every sandbox; sandbox-run inspect some-box shows one" \
		"$rc $errout"
	sr ls --al
	assert_eq "an unknown option: as before" "125 sandbox-run: ls: unknown argument '--al' (see --help)" \
		"$rc $errout"
}

t_result_not_written() {
	# create and deploy took --result, wrote no record, ever, and said
	# nothing: a script waiting on the record waited for nothing.
	local rec="$SR_OUT/noresult-$SR_AS.json" ag
	ag=$(make_agent noresult 'cat')
	rm -f "$rec"
	sr create --net none --timeout 60 --result "$rec"
	assert_eq "create --result: 125, saying create runs nothing" \
		"125 sandbox-run: create: option --result: create runs nothing (sandbox-run exec --result FILE ID -- COMMAND records a command)" \
		"$rc $errout"
	sr deploy --net none --result "$rec" "$ag"
	assert_eq "deploy --result: 125, saying where its install and invocations are told" \
		"125 sandbox-run: deploy: option --result: deploy writes no record (sandbox-run deployments log NAME shows the install; invoke --result FILE NAME records an invocation)" \
		"$rc $errout"
	sr ls --json
	assert_eq "no sandbox made" "[]" "$out"
	sr deployments --json
	assert_no_match "no deployment made" noresult "$out"
	check "no record" test ! -e "$rec"
}

t_exec_env_name() {
	# exec --env 1=2 went to the keeper, whose "--env: expected KEY=VALUE,
	# got '1=2'" named neither exec nor what was wrong: '1' as a name.
	sr exec --env 1=2 some-sandbox -- true
	assert_eq "exec --env with a bad name: 125, naming it as a run does" \
		"125 sandbox-run: exec: --env: bad variable name '1' (use letters, digits and '_', not starting with a digit)" \
		"$rc $errout"
	sr exec some-sandbox --env A-B=x -- true
	assert_match "after ID too" "^sandbox-run: exec: --env: bad variable name 'A-B' " "$errout"
}

t_inspect_option() {
	# inspect --json (as ls --json) said "no sandbox '--json'", sending
	# the user to ls for a sandbox that is there.
	sr inspect --json
	assert_eq "inspect --json: 125, saying it prints JSON already" \
		"125 sandbox-run: inspect: takes no --json: it prints JSON already (sandbox-run inspect ID)" \
		"$rc $errout"
	sr inspect -x
	assert_eq "inspect -x: an unknown option" \
		"125 sandbox-run: inspect: unknown option '-x' (see --help)" "$rc $errout"
}

t_apply_to_empty() {
	# apply --to "$UNSET" said "apply: : No such file or directory".
	sr apply some-sandbox --to ''
	assert_eq "apply --to '': 125, an empty path" \
		"125 sandbox-run: apply: --to: an empty path (is the variable that should hold it set?)" \
		"$rc $errout"
}

t_help_verb() {
	# `sandbox-run help` was "agent 'help' not found", status 127.
	local v want
	sr --help
	want="$rc $out"
	sr help
	assert_eq "help: the usage, as --help" "$want" "$rc $out"
	for v in exec secrets deployments; do
		sr "$v" --help
		want="$rc $out"
		sr help "$v"
		assert_eq "help $v: as $v --help" "$want" "$rc $out"
	done
	sr help nosuch
	assert_eq "help of no verb: 125, one line" \
		"125 sandbox-run: help: no verb 'nosuch' (sandbox-run help lists them)" "$rc $errout"
	sr help exec ls
	assert_eq "help of two: 125, the usage" "125 sandbox-run: help: usage: sandbox-run help [VERB]" \
		"$rc $errout"
}

t_help_removes_nothing() {
	# `rm ID --help`, `deployments rm NAME --help` and `snapshots rm NAME
	# --help` removed what they named, then said '--help' named nothing.
	local sb ag
	ag=$(make_agent "helprm-$SR_AS" 'cat')
	sr create --net none --timeout 60 --name helprm
	sb=$out
	sr snapshot helprm helprm
	sr deploy -q --net none --name helprm "$ag"
	sr rm helprm --help
	assert_match "rm ID --help: 0, the usage" "^0 Usage: sandbox-run rm " "$rc $out"
	sr rm helprm -x
	assert_eq "rm ID -x: 125, an unknown option" \
		"125 sandbox-run: rm: unknown option '-x' (see --help)" "$rc $errout"
	sr deployments rm helprm --help
	assert_match "deployments rm NAME --help: 0, the usage" "^0 Usage: sandbox-run deployments " \
		"$rc $out"
	sr deployments rm helprm -x
	assert_eq "deployments rm NAME -x: 125, an unknown option" \
		"125 sandbox-run: deployments rm: unknown option '-x' (see --help)" "$rc $errout"
	sr snapshots rm helprm --help
	assert_match "snapshots rm NAME --help: 0, the usage" "^0 Usage: sandbox-run snapshots " \
		"$rc $out"
	sr snapshots rm helprm -x
	assert_eq "snapshots rm NAME -x: 125, an unknown option" \
		"125 sandbox-run: snapshots rm: unknown option '-x' (see --help)" "$rc $errout"
	sr inspect helprm
	assert_eq "the sandbox is still there" 0 "$rc"
	sr deployments --json
	assert_match "the deployment too" '"name": ?"helprm"' "$out"
	sr snapshots --json
	assert_match "and the snapshot" '"name": ?"helprm"' "$out"
	sr rm helprm -f
	assert_eq "rm ID -f: -f after the ID taken" "0" "$rc"
	sr ls --json
	assert_eq "and the sandbox ended" "[]" "$out"
	sr snapshots rm helprm
	sr deployments rm helprm
}

t_serve_token_file_unused() {
	# serve --token-file with no TCP --listen (or empty) was taken and
	# never written: the server ran, and a client found no token there.
	# A server that starts is ended (SIGTERM, after 20 s): the test fails, not hangs.
	rc=0
	errout=$(as_user timeout 20 "$SR" serve --token-file "$SR_OUT/token-$SR_AS" 2>&1 >/dev/null) ||
		rc=$?
	assert_eq "serve --token-file without a TCP --listen: 125 at once" \
		"125 sandbox-run: serve: --token-file is for a TCP --listen ([ADDR:]PORT): the Unix socket needs no token (it checks who connects)" \
		"$rc $errout"
	rc=0
	errout=$(as_user timeout 20 "$SR" serve --listen 127.0.0.1:0 --token-file '' 2>&1 >/dev/null) ||
		rc=$?
	assert_eq "serve --token-file '': 125, an empty path" \
		"125 sandbox-run: serve: --token-file: an empty path" "$rc $errout"
	check "no server's socket left" test ! -e "$(state_dir)/serve.sock"
}

t_deploy_unreadable() {
	# deploy of a directory or an archive its user may not read was
	# refused only while reading it: a deployment of that name was left,
	# its one version failed, its log saying no more than the error.
	[ "$SR_AS" = user ] || return 0
	local d="$SR_TMP/unreadable-agent"
	mkdir -p "$d" && printf '#!/bin/sh\necho hi\n' >"$d/agent" && chmod 755 "$d/agent"
	chmod 0700 "$d"
	sr deploy --net none "$d"
	assert_eq "deploy of a directory the user cannot read: 125, one line" \
		"125 sandbox-run: deploy: agent '$d': Permission denied" "$rc $errout"
	sr deployments --json
	assert_no_match "and no deployment of it" unreadable-agent "$out"
	rm -rf "$d"
}

for_each_user t_deploy_unreadable t_serve_token_file_unused t_help_removes_nothing t_help_verb t_apply_to_empty t_inspect_option t_exec_env_name t_result_not_written t_help_options t_ls_an_id t_list_ls t_secret_bad_name_first t_changes_mistyped t_secret_no_value t_exec_result_no_sandbox t_ls_profile_printable t_mistyped_verb t_verb_messages t_secret_prompt_interrupted t_changes_not_a_file t_output_unwritable t_cp_empty_path t_help_verbs t_dir_env_relative t_profile_paths t_unsearchable_home t_verbose t_entry_ignored t_bad_input t_bad_profile t_print_config t_entry_detection t_archives
done_testing
