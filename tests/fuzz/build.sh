#!/bin/sh
# Builds the libFuzzer harnesses with clang, apart from the configured build
# (whatever compiler and flags that uses): the modules under test are
# compiled again here with -fsanitize=fuzzer,address,undefined.
#
#   tests/fuzz/build.sh SRCDIR BUILDDIR
#
# BUILDDIR is a configured build tree (its config.h names libarchive's
# soname); the harnesses go to BUILDDIR/tests/fuzz/bin/fuzz-NAME.
# Needs clang and its fuzzer runtime (Debian: clang libclang-rt-dev).
set -eu

srcdir=$(cd "${1:?usage: build.sh SRCDIR BUILDDIR}" && pwd)
builddir=$(cd "${2:?usage: build.sh SRCDIR BUILDDIR}" && pwd)
CLANG=${CLANG:-clang}
out="$builddir/tests/fuzz/bin"
obj="$out/obj"

if [ ! -f "$builddir/config.h" ]; then
	echo "fuzz: $builddir/config.h not found: run ./configure first" >&2
	exit 1
fi
if ! command -v "$CLANG" >/dev/null 2>&1; then
	echo "fuzz: $CLANG not found (Debian: apt-get install clang libclang-rt-dev)" >&2
	exit 1
fi
mkdir -p "$obj"
probe="$obj/probe.c"
echo 'int LLVMFuzzerTestOneInput(const char *d, unsigned long n) { return 0; }' >"$probe"
if ! "$CLANG" -fsanitize=fuzzer,address,undefined "$probe" -o "$obj/probe" 2>"$obj/probe.log"; then
	echo "fuzz: $CLANG cannot link libFuzzer (Debian: apt-get install libclang-rt-dev):" >&2
	cat "$obj/probe.log" >&2
	exit 1
fi

# -fno-sanitize-recover: undefined behaviour is a crash, not a log line.
# SR_DATADIR names no directory: profiles come from the built-in copies
# and from the harnesses' private XDG_CONFIG_HOME.
CFLAGS="-g -O1 -fno-omit-frame-pointer -fsanitize=fuzzer,address,undefined
	-fno-sanitize-recover=all -Wall -Wextra -Wno-unused-parameter
	-include $builddir/config.h -iquote $srcdir/src/base -iquote $srcdir/src/lib -iquote $srcdir/src/lib/child
	-iquote $srcdir/src/lib/net -iquote $srcdir/src/gen -iquote $srcdir/src/cli -iquote $srcdir/src/api
	-iquote $srcdir/tests/fuzz
	-DSR_DATADIR=\"/nonexistent/sandbox-run-fuzz\"
	$(pkg-config --cflags libarchive inih jansson libsystemd)"
LIBS="$(pkg-config --libs inih jansson) -ldl -lm"

"$srcdir/tools/embed-profiles" "$srcdir"/profiles/*.ini >"$obj/profiles-builtin.c"

modules="base/log base/units base/json base/secmem lib/config lib/config-values lib/config-paths lib/profile cli/options cli/options-apply lib/agent lib/archive lib/archive-lib base/dl
	lib/env lib/net/dns lib/snapshot lib/state lib/hostpath lib/cgroup lib/cgroup-v1 lib/cgroup-v2
	lib/cgroup-systemd lib/cgroup-rlimit base/proc lib/config-print api/route api/body api/wire api/preview-scan"
objs="$obj/profiles-builtin.o $obj/fuzz-common.o"
# shellcheck disable=SC2086
"$CLANG" $CFLAGS -c "$obj/profiles-builtin.c" -o "$obj/profiles-builtin.o"
# shellcheck disable=SC2086
"$CLANG" $CFLAGS -c "$srcdir/tests/fuzz/fuzz-common.c" -o "$obj/fuzz-common.o"
for m in $modules; do
	# shellcheck disable=SC2086
	o="$obj/$(basename "$m").o"
	"$CLANG" $CFLAGS -c "$srcdir/src/$m.c" -o "$o"
	objs="$objs $o"
done
rm -f "$obj/libsr-fuzz.a"
# shellcheck disable=SC2086
ar rcs "$obj/libsr-fuzz.a" $objs

for h in $(cat "$srcdir/tests/fuzz/harnesses"); do
	# shellcheck disable=SC2086
	"$CLANG" $CFLAGS "$srcdir/tests/fuzz/fuzz-$h.c" "$obj/libsr-fuzz.a" $LIBS -o "$out/fuzz-$h"
	echo "fuzz: built $out/fuzz-$h"
done
