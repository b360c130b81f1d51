#!/usr/bin/env bash
# Hostile or broken input to sandbox-run itself: a full scratch space
# (ENOSPC), truncated and hostile archives, an unreadable profile. Each
# must be one clear line "sandbox-run: <what>: <why>", status 125, and
# nothing written outside the sandbox's own scratch space.
. "$(dirname "$0")/../integration/libtest.sh"

MARK="srsec$$"
A="$SR_TMP/err-archives"

make_inputs() {
	mkdir -p "$A"
	python3 - "$A" "$MARK" "$SR_TMP" "$SR_SRCDIR/tests/integration" <<'EOF'
import os, sys
d, mark, host, lib = sys.argv[1:]
sys.path.insert(0, lib)
from tarbuild import tar as _tar, f, link, hardlink
agent = b"#!/bin/sh\necho ran\n"
def tar(name, members):
    _tar(f"{d}/{name}", members)
a = f("agent", agent, 0o755)
tar("big.tar.gz", [a, f("big.bin", os.urandom(3 << 20))])
tar("abs.tar.gz", [a, f(f"/tmp/{mark}-abs")])
tar("dotdot.tar.gz", [a, f(f"sub/../../../../..{host}/{mark}-dotdot")])
tar("symlink-abs.tar.gz", [a, link("t", host), f(f"t/{mark}-sym")])
tar("symlink-rel.tar.gz", [a, link("t", "../../../../../../tmp"), f(f"t/{mark}-symrel")])
tar("hardlink.tar.gz", [a, hardlink("h", "/etc/shadow")])
EOF
	# Cut in the middle of the compressed stream.
	head -c 20000 "$A/big.tar.gz" >"$A/truncated.tar.gz"
	head -c 4096 /dev/urandom >"$A/garbage.tar.gz"
	chmod -R a+rX "$A"
}
make_inputs
ARCHIVES_BEFORE=$(cd "$A" && sha256sum -- * | sort)

# The lines sandbox-run printed, without this host's limit warnings.
error_lines() {
	grep -v '^sandbox-run: warning: ' <<<"$errout"
}

# leftovers: files named with our marker anywhere the archives aimed at.
leftovers() {
	find /tmp "$SR_TMP" /etc / -maxdepth 2 -name "$MARK*" 2>/dev/null
}

# refused NAME WHY-REGEX ARGS...: status 125, exactly one line matching.
refused() {
	local name=$1 why=$2 scratch="$SR_TMP/scratch-$SR_AS"
	shift 2
	rm -rf "$scratch" && mkdir -m 1777 "$scratch"
	TMPDIR="$scratch" sr "$@"
	assert_eq "$name: status 125" 125 "$rc"
	assert_eq "$name: one line on stderr" 1 "$(error_lines | wc -l)"
	assert_match "$name: says why" "^sandbox-run: $why$" "$(error_lines)"
	assert_eq "$name: nothing written outside (no marker files, empty TMPDIR)" "" \
		"$(leftovers; ls -A "$scratch")"
}

t_enospc() {
	refused "an archive larger than --disk (ENOSPC in the scratch space)" \
		"agent archive $A/big.tar.gz: extract big.bin: archive exceeds the disk limit of 1048576 bytes" \
		--net none --disk 1M "$A/big.tar.gz"
	# The agent filling its own disk meets ENOSPC inside; the run itself is fine.
	sr --net none --disk 1M --result "$SR_OUT/enospc-$SR_AS.json" -- sh -c \
		'dd if=/dev/zero of=/tmp/f bs=64k count=64 2>&1 | grep -o "No space left on device"; dd if=/dev/zero of=/workspace/g bs=64k count=1 2>&1 | grep -o "No space left on device"'
	assert_eq "the agent filling --disk gets ENOSPC, in /tmp and /workspace alike" \
		"$(printf 'No space left on device\nNo space left on device')" "$out"
	check "and the run ends normally, having used at most the limit" \
		test "$(json_get "$SR_OUT/enospc-$SR_AS.json" status)" = exited -a \
		"$(json_get "$SR_OUT/enospc-$SR_AS.json" disk_used_bytes)" -le 1048576
}

t_truncated() {
	refused "a truncated archive" \
		"agent archive $A/truncated.tar.gz: read archive: truncated gzip input \\(expected .*\\)" \
		--net none "$A/truncated.tar.gz"
	refused "random bytes named .tar.gz" \
		"agent archive $A/garbage.tar.gz: read archive: Unrecognized archive format \\(expected .*\\)" \
		--net none "$A/garbage.tar.gz"
}

t_hostile() {
	refused "an absolute path in an archive" \
		"agent archive $A/abs.tar.gz: extract /tmp/$MARK-abs: absolute path" --net none "$A/abs.tar.gz"
	refused "'..' in an archive path" \
		"agent archive $A/dotdot.tar.gz: extract sub/.*: path contains '..'" --net none "$A/dotdot.tar.gz"
	refused "a symlink to a host directory, then a file through it" \
		"agent archive $A/symlink-abs.tar.gz: extract t: symbolic link to '$SR_TMP' leaves the archive's tree" \
		--net none "$A/symlink-abs.tar.gz"
	refused "a relative symlink climbing out, then a file through it" \
		"agent archive $A/symlink-rel.tar.gz: extract t: symbolic link to '../../../../../../tmp' leaves the archive's tree" \
		--net none "$A/symlink-rel.tar.gz"
	refused "a hard link to /etc/shadow" \
		"agent archive $A/hardlink.tar.gz: extract h: hard link target: absolute path" \
		--net none "$A/hardlink.tar.gz"
	assert_eq "the archives themselves are unchanged" "$ARCHIVES_BEFORE" "$(cd "$A" && sha256sum -- * | sort)"
}

# What the agent's files say reaches sandbox-run's own messages (here
# package.json's "main"): one line still, and no escape sequence.
t_control_characters() {
	local d="$SR_TMP/agents/pj-$SR_AS"
	mkdir -p "$d"
	printf '{"main": "/x\\r\\u001b[2K\\u001b]0;title\\u0007sandbox-run: fine\\nall good \\u009b1m"}\n' \
		>"$d/package.json"
	chmod -R a+rX "$d"
	sr --net none "$d"
	assert_eq "a hostile package.json \"main\": 126" 126 "$rc"
	assert_eq "one line on stderr" 1 "$(error_lines | wc -l)"
	assert_match "says why, each control character a '?'" \
		"^sandbox-run: .*/package.json: \"main\" must be a relative path inside the workspace, not '/x\\?\\?\\[2K\\?\\]0;title\\?sandbox-run: fine\\?all good \\?\\?1m'$" \
		"$(error_lines)"
	check "no escape, carriage return or bell byte" _fails grep -q $'[\e\r\a]' <<<"$errout"
}

# A decoder bug, played by a stand-in libarchive (found first through
# LD_LIBRARY_PATH) whose next_header signals the worker's process group
# and forges the worker's failure report. The caller's process group must
# live on, and the report count only as text: status 125, one printable line.
t_hostile_decoder() {
	command -v cc >/dev/null || { skip "a hostile decoder" "no C compiler"; return; }
	# Outside /tmp: PID 1 loads libarchive with its new root already over /tmp.
	local lib
	lib=$(mktemp -d /var/tmp/sr-decoder.XXXXXX)
	cat >"$lib/hostile.c" <<'EOF'
#include <signal.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
static int a;
struct report { int code, status, kind; char msg[1024]; }; /* as struct sr_error (log.h) */
void *archive_read_new(void) { return &a; }
int archive_read_free(void *x) { return 0; }
#define ZERO(n) int n(void *x) { return 0; }
ZERO(archive_read_support_filter_gzip) ZERO(archive_read_support_filter_bzip2)
ZERO(archive_read_support_filter_xz) ZERO(archive_read_support_filter_zstd)
ZERO(archive_read_support_format_tar) ZERO(archive_read_support_format_zip)
int archive_read_open_fd(void *x, int fd, size_t n) { return 0; }
int archive_read_open(void *x, void *c, void *o, void *r, void *cl) { return 0; }
int archive_read_set_seek_callback(void *x, void *s) { return 0; }
int archive_read_next_header(void *x, void **e)
{
	struct report r = {-5, 256, 1, "\x1b[2K\rsandbox-run: agent finished: all tests passed"};
	struct stat st;
	kill(0, SIGKILL);
	for (int fd = 3; fd < 64; fd++)
		if (fstat(fd, &st) == 0 && S_ISFIFO(st.st_mode))
			(void)!write(fd, &r, sizeof(r));
	return -30; /* ARCHIVE_FATAL */
}
int archive_read_data_block(void *x, const void **b, size_t *s, long long *o) { return 1; }
const char *archive_error_string(void *x) { return "hostile decoder"; }
#define NONE(n) const char *n(void *e) { return 0; }
NONE(archive_entry_pathname) NONE(archive_entry_pathname_utf8) NONE(archive_entry_symlink)
NONE(archive_entry_symlink_utf8) NONE(archive_entry_hardlink) NONE(archive_entry_hardlink_utf8)
ZERO(archive_entry_filetype) ZERO(archive_entry_mode) ZERO(archive_entry_size_is_set)
ZERO(archive_entry_mtime_is_set)
long long archive_entry_size(void *e) { return 0; }
long archive_entry_mtime(void *e) { return 0; }
long archive_entry_mtime_nsec(void *e) { return 0; }
EOF
	if ! cc -shared -fPIC -o "$lib/libarchive.so.13" "$lib/hostile.c" 2>"$lib/cc.err"; then
		not_ok "a hostile decoder: build the stand-in libarchive: $(head -1 "$lib/cc.err")"
		rm -rf "$lib"
		return
	fi
	chmod -R a+rX "$lib"
	local said
	said=$(as_user setsid -w sh -c 'sleep 30 & s=$!
LD_LIBRARY_PATH="$1" "$2" --net none "$3" 2>"$4"; echo "rc=$?"
kill -0 $s && echo "the caller lives"; kill $s' _ "$lib" "$SR" "$A/big.tar.gz" \
		"$SR_OUT/decoder-$SR_AS.err" </dev/null 2>&1)
	errout=$(cat "$SR_OUT/decoder-$SR_AS.err")
	assert_match "kill(0) from a decoder does not reach the caller's process group" \
		"the caller lives" "$said"
	assert_eq "a forged status is not the exit status: 125" "rc=125" "$(grep '^rc=' <<<"$said")"
	assert_eq "its text is one line" 1 "$(error_lines | wc -l)"
	assert_match "shown printable" "^sandbox-run: agent archive .*: \?\[2K\?sandbox-run: agent finished: all tests passed$" \
		"$(error_lines)"
	rm -rf "$lib"
}

t_unreadable_profile() {
	local p="$SR_TMP/profile-$SR_AS.ini"
	printf '[limits]\nmemory = 1G\n' >"$p"
	if [ "$SR_AS" = root ]; then
		# Root reads any file: a profile that is not a file stands in for it.
		rm -f "$p" && mkdir -p "$p"
		refused "a profile that is a directory" "profile $p: not a regular file" -p "$p" --net none -- true
		return
	fi
	chmod 000 "$p"
	refused "an unreadable profile (chmod 000)" "profile $p: Permission denied" -p "$p" --net none -- true
	local child="$SR_TMP/child-$SR_AS.ini"
	printf '[profile]\ninherit = %s\n' "$p" >"$child"
	chmod 0644 "$child"
	refused "a profile inheriting an unreadable one" \
		"profile $child:2: inherit: profile $p: Permission denied" -p "$child" --net none -- true
}

for_each_user t_enospc t_truncated t_hostile t_control_characters t_hostile_decoder \
	t_unreadable_profile
done_testing
