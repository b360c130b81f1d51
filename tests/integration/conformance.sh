#!/usr/bin/env bash
# The contract users see (the design's command line, exit statuses and
# result record), checked as a new user reads it: each case one promise
# the binary broke.
. "$(dirname "$0")/libtest.sh"

# rec_fields FILE: the fields of a record that say which sandbox it was.
rec_fields() {
	python3 -c 'import json,sys
d=json.load(open(sys.argv[1]))
print(json.dumps([d["limits"],d["enforced"],d["profile"],d["sandbox_id"]],sort_keys=True))' "$1"
}

t_exec_error_record() {
	# exec --result of a command that never ran in a living sandbox (not
	# found, not executable, a bad --workdir): the man page says its
	# limits and enforced are the sandbox's. They were the default
	# profile's (2G whatever the sandbox had), held by "none", with no
	# profile and no sandbox_id, as if no sandbox were there.
	local ok_rec="$SR_OUT/exec-ok-$SR_AS.json" rec="$SR_OUT/exec-err-$SR_AS.json" id
	sr create -q --memory 100M --timeout 5m
	id=$out
	sr exec --result "$ok_rec" "$id" -- true
	assert_eq "exec of a command that runs: 0, the sandbox's 100M in its record" \
		"0 104857600" "$rc $(json_get "$ok_rec" limits.memory_bytes)"
	rm -f "$rec"
	sr exec --result "$rec" "$id" -- no-such-command
	assert_eq "exec of a command not found: 127, a record of status error" \
		"127 error 127" "$rc $(json_get "$rec" status) $(json_get "$rec" exit_code)"
	assert_eq "whose limits, enforced, profile and sandbox_id are the sandbox's" \
		"$(rec_fields "$ok_rec")" "$(rec_fields "$rec")"
	assert_eq "its id among them" "$id" "$(json_get "$rec" sandbox_id)"
	rm -f "$rec"
	sr exec --result "$rec" "$id" -- /etc/passwd
	assert_eq "exec of a file that cannot be executed: 126, the sandbox's in its record" \
		"126 error $(rec_fields "$ok_rec")" "$rc $(json_get "$rec" status) $(rec_fields "$rec")"
	rm -f "$rec"
	sr exec --result "$rec" --workdir /no/such/dir "$id" -- true
	assert_eq "exec in a working directory that is not there: 125, the sandbox's in its record" \
		"125 error $(rec_fields "$ok_rec")" "$rc $(json_get "$rec" status) $(rec_fields "$rec")"
	sr rm -f "$id"
	rm -f "$rec" "$ok_rec"
}

for_each_user t_exec_error_record
done_testing
