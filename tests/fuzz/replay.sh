#!/bin/bash
# make check: every seed (tests/fuzz/corpus/NAME) and every input that once
# failed (tests/fuzz/regress/NAME) through each fuzz harness, built with a
# plain main() (tests/fuzz/replay.c). Prints TAP.
#
# Environment (set by the Makefile): SR_BIN (the build tree is found from
# it), SR_SRCDIR.
set -u

: "${SR_BIN:?SR_BIN must point at the sandbox-run binary}"
: "${SR_SRCDIR:=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}"
bindir="$(cd "$(dirname "$SR_BIN")/.." && pwd)/tests/fuzz"
fuzzdir="$SR_SRCDIR/tests/fuzz"

n=0
failed=0
for h in $(cat "$fuzzdir/harnesses"); do
	dirs=("$fuzzdir/corpus/$h")
	[ -d "$fuzzdir/regress/$h" ] && dirs+=("$fuzzdir/regress/$h")
	n=$((n + 1))
	if out=$("$bindir/replay-$h" "${dirs[@]}" 2>&1); then
		echo "ok $n - $h: ${out##*$'\n'}"
	else
		failed=$((failed + 1))
		echo "not ok $n - $h"
		sed 's/^/# /' <<<"$out" | tail -n 40
	fi
done
echo "1..$n"
[ "$failed" = 0 ]
