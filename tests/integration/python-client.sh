#!/usr/bin/env bash
# clients/python/sandbox_run.py against a real `sandbox-run serve`, over its
# Unix socket and over TCP with the token file, as root and as an
# unprivileged user: each test of clients/python/test_sandbox_run.py is a
# TAP line. Debian's python3 (standard library only).
. "$(dirname "$0")/libtest.sh"

PY=/usr/bin/python3
[ -x "$PY" ] || PY=$(command -v python3)
install -m 0644 "$SR_SRCDIR/clients/python/sandbox_run.py" "$SR_SRCDIR/clients/python/test_sandbox_run.py" "$SR_TMP/"

# A runner that says each test's result on a line of its own (stdout), whatever the
# tests and asyncio's debug mode print meanwhile (stderr).
cat >"$SR_TMP/tap_runner.py" <<'EOF2'
import sys, unittest
class Result(unittest.TestResult):
    def addSuccess(self, test):
        print("RESULT ok", test._testMethodName, flush=True)
    def addFailure(self, test, err):
        print("RESULT not-ok", test._testMethodName, self._exc_info_to_string(err, test).replace("\n", " | ")[-600:], flush=True)
    addError = addFailure
    def addSkip(self, test, reason):
        print("RESULT skip", test._testMethodName, reason, flush=True)
unittest.defaultTestLoader.loadTestsFromName("test_sandbox_run").run(Result())
EOF2

# run_tests TRANSPORT ENV...: the suite with ENV, its results as TAP.
run_tests() {
	local t=$1 log="$SR_OUT/py-$SR_AS-$1.log" n=0 kind name rest
	shift
	(cd "$SR_TMP" && as_user env PYTHONPATH="$SR_TMP" PYTHONDONTWRITEBYTECODE=1 "$@" \
		"$PY" tap_runner.py) >"$log" 2>"$log.err"
	while read -r kind name rest; do
		n=$((n + 1))
		case $kind in
		ok) ok "[$t] $name" ;;
		skip) skip "[$t] $name" "$rest" ;;
		*) not_ok "[$t] $name"; echo "# $rest" ;;
		esac
	done < <(sed -n 's/^RESULT //p' "$log")
	assert_eq "[$t] every test ran" 7 "$n"
	[ "$n" = 7 ] || sed 's/^/# /' "$log.err" | tail -20
}

t_client() {
	local out="$SR_OUT/serve-py-$SR_AS.out" pid url token_file
	rm -f "$out"
	(as_user_exec "$SR" serve --listen "unix:$(state_dir)/serve.sock" --listen 127.0.0.1:0 >"$out" 2>"$SR_OUT/serve-py-$SR_AS.err") &
	pid=$!
	until_ok 10 has_lines "$out" 2 || {
		not_ok "serve started"
		return
	}
	read -r url token_file < <(sed -n 2p "$out")
	# The default: serve's socket in the state directory, found by the client itself.
	run_tests unix
	run_tests tcp SANDBOX_RUN_URL="$url" SANDBOX_RUN_TOKEN_FILE="$token_file"
	kill -TERM "$pid"
	wait "$pid"
	assert_eq "serve ends with nothing of the tests left" "0 " "$? $(ls "$(state_dir)")"
}

for_each_user t_client
done_testing
