#!/bin/sh
# Runs each harness built by build.sh for FUZZ_SECONDS (default 60), one at
# a time, from its seed corpus (read only) plus a work corpus in the build
# tree that keeps what earlier runs found. A crash, leak, undefined
# behaviour or broken property leaves its input in
# BUILDDIR/tests/fuzz/artifacts/ and fails the run.
#
#   tests/fuzz/run.sh SRCDIR BUILDDIR [HARNESS...]
#
# FUZZ_ARGS adds libFuzzer options (e.g. FUZZ_ARGS=-runs=10000000).
set -u

srcdir=$(cd "${1:?usage: run.sh SRCDIR BUILDDIR [HARNESS...]}" && pwd)
builddir=$(cd "${2:?usage: run.sh SRCDIR BUILDDIR [HARNESS...]}" && pwd)
shift 2
seconds=${FUZZ_SECONDS:-60}
fuzzdir="$srcdir/tests/fuzz"
[ $# -gt 0 ] || set -- $(cat "$fuzzdir/harnesses")

failed=""
for h in "$@"; do
	bin="$builddir/tests/fuzz/bin/fuzz-$h"
	work="$builddir/tests/fuzz/work/$h"
	artifacts="$builddir/tests/fuzz/artifacts"
	mkdir -p "$work" "$artifacts"
	# Longest input worth trying: an archive needs a few 512-byte tar blocks.
	case $h in
	archive | profile) max_len=16384 ;;
	units) max_len=512 ;;
	*) max_len=4096 ;;
	esac
	dict=""
	[ -f "$fuzzdir/dict/$h.dict" ] && dict="-dict=$fuzzdir/dict/$h.dict"
	echo "fuzz: $h for ${seconds}s"
	# shellcheck disable=SC2086
	if ! "$bin" -max_total_time="$seconds" -timeout=25 -max_len="$max_len" \
		-print_final_stats=1 -artifact_prefix="$artifacts/$h-" $dict ${FUZZ_ARGS:-} \
		"$work" "$fuzzdir/corpus/$h" >"$builddir/tests/fuzz/$h.log" 2>&1; then
		failed="$failed $h"
		tail -n 40 "$builddir/tests/fuzz/$h.log" >&2
	fi
	grep -E '^(stat::number_of_executed_units|stat::average_exec_per_sec|#[0-9]+ *DONE)' \
		"$builddir/tests/fuzz/$h.log" | sed "s/^/fuzz: $h: /"
done
if [ -n "$failed" ]; then
	echo "fuzz: FAILED:$failed (inputs in $builddir/tests/fuzz/artifacts/)" >&2
	exit 1
fi
echo "fuzz: no findings"
