#!/usr/bin/env bash
# sandbox-run doctor: the verdicts on this host as root and as a user,
# checked against what a real run here does; a user namespace of the
# test's own with user.max_user_namespaces=0 (the host's setting is never
# touched), where doctor and a failed run give the same diagnosis; and,
# in test builds (configure --enable-fault-injection), fake /proc/sys
# roots: Ubuntu's AppArmor restriction, Debian's unprivileged_userns_clone.
. "$(dirname "$0")/libtest.sh"

# check_of JSON NAME FIELD: one field of one check of doctor's --json.
check_of() {
	python3 -c 'import json,sys
d=json.loads(sys.argv[1])
c=[c for c in d["checks"] if c["name"]==sys.argv[2]]
v=c[0][sys.argv[3]] if c else "NO SUCH CHECK"
print("" if v is None else v)' "$1" "$2" "$3" 2>&1
}

# top JSON KEY: a top-level field.
top() {
	python3 -c 'import json,sys; v=json.loads(sys.argv[1])[sys.argv[2]]; print(json.dumps(v) if not isinstance(v,str) else v)' "$1" "$2" 2>&1
}

NAMES="kernel user_namespaces apparmor overlayfs container cgroup subuid network_helper tun nf_tables libraries sandbox sandbox_egress"

t_usage() {
	sr doctor --help
	assert_eq "doctor --help: status 0" 0 "$rc"
	assert_match "doctor --help documents the exit status" "0 full strength, 1 degraded, 2" "$out"
	sr doctor --bogus
	assert_eq "doctor: an unknown argument is status 125" 125 "$rc"
	assert_match "doctor: and says so" "unknown argument '--bogus'" "$errout"
}

t_json() {
	local names rc_json strategy want
	sr doctor --json
	rc_json=$rc
	check "doctor --json is one JSON object" python3 -c 'import json,sys; json.loads(sys.argv[1])' "$out"
	names=$(python3 -c 'import json,sys; print(" ".join(c["name"] for c in json.loads(sys.argv[1])["checks"]))' "$out" 2>&1)
	assert_eq "doctor --json: every check, in order" "$NAMES" "$names"
	assert_eq "doctor --json: exit_code is the status" "$rc_json" "$(top "$out" exit_code)"
	assert_match "doctor: status 0 or 1 here (sandboxes run)" "^[01]$" "$rc_json"
	assert_eq "doctor: verdict matches the status" \
		"$([ "$rc_json" = 0 ] && echo ok || echo degraded)" "$(top "$out" verdict)"
	assert_eq "doctor: root says who ran it" "$([ "$SR_AS" = root ] && echo true || echo false)" \
		"$(top "$out" root)"
	assert_eq "doctor: the trial sandbox ran" ok "$(check_of "$out" sandbox verdict)"
	assert_eq "doctor: user namespaces ok" ok "$(check_of "$out" user_namespaces verdict)"
	assert_eq "doctor: the egress trial ran" ok "$(check_of "$out" sandbox_egress verdict)"
	assert_eq "doctor: an ok check has no fix" "" "$(check_of "$out" sandbox fix)"
	python3 -c 'import json,sys
for c in json.loads(sys.argv[1])["checks"]:
    assert c["verdict"] in ("ok","degraded","fails"), c
    assert (c["fix"] is None) == (c["verdict"] == "ok"), c
    assert c["found"], c' "$out" >"$SR_TMP/.fixes" 2>&1
	check "doctor: every check not ok has a fix, and only those" test ! -s "$SR_TMP/.fixes"

	# The cgroup verdict is what a real run here gets.
	sr --net none --result "$SR_OUT/doctor-$SR_AS.json" -- true
	strategy=$(json_get "$SR_OUT/doctor-$SR_AS.json" enforced.memory)
	want=degraded
	case $strategy in cgroup1 | cgroup2) want=ok ;; esac
	sr doctor --json
	assert_eq "doctor: cgroup is $want, as a run holds memory by $strategy" "$want" \
		"$(check_of "$out" cgroup verdict)"
	if [ "$want" = degraded ]; then
		assert_match "doctor: the cgroup fix is a command" "sudo|systemd-run|boot with|docker run" \
			"$(check_of "$out" cgroup fix)"
	fi

	# Root's subordinate ids, as userns.c reads them.
	want=ok
	if [ "$SR_AS" = root ] && ! grep -q '^root:' /etc/subuid 2>/dev/null; then want=degraded; fi
	assert_eq "doctor: subuid is $want" "$want" "$(check_of "$out" subuid verdict)"
}

t_text() {
	local rc_json
	sr doctor --json
	rc_json=$rc
	sr doctor
	assert_eq "doctor: text and --json agree on the status" "$rc_json" "$rc"
	assert_match "doctor: one line per check" "ok +sandbox +a sandbox ran" "$out"
	assert_match "doctor: a summary line" "(ok|degraded): sandboxes run here" "$out"
}

# In a user namespace of our own, user.max_user_namespaces is ours to set:
# 0 there stops every nested one, and the host's value stays as it is.
t_max_userns_zero() {
	local host_before fix
	host_before=$(cat /proc/sys/user/max_user_namespaces)
	as_user unshare -U --map-root-user sh -c \
		'echo 0 > /proc/sys/user/max_user_namespaces && exec "$0" doctor --json' "$SR" \
		>"$SR_TMP/.zero" 2>"$SR_TMP/.zero-err"
	rc=$?
	out=$(cat "$SR_TMP/.zero")
	errout=$(cat "$SR_TMP/.zero-err")
	assert_eq "max_user_namespaces=0: doctor says sandboxes cannot run (2)" 2 "$rc"
	assert_eq "max_user_namespaces=0: the user_namespaces check fails" fails \
		"$(check_of "$out" user_namespaces verdict)"
	fix=$(check_of "$out" user_namespaces fix)
	assert_match "max_user_namespaces=0: the fix sets it" \
		"sudo sysctl -w user.max_user_namespaces=15000" "$fix"
	assert_eq "max_user_namespaces=0: the trial sandbox fails" fails "$(check_of "$out" sandbox verdict)"
	assert_eq "max_user_namespaces=0: not blamed on the container" ok \
		"$(check_of "$out" container verdict)"
	assert_eq "max_user_namespaces=0: the host's own value is untouched" "$host_before" \
		"$(cat /proc/sys/user/max_user_namespaces)"

	# A real run there fails with the same diagnosis, and names doctor.
	as_user unshare -U --map-root-user sh -c \
		'echo 0 > /proc/sys/user/max_user_namespaces && exec "$0" --net none -- true' "$SR" \
		>/dev/null 2>"$SR_TMP/.zero-err"
	rc=$?
	errout=$(cat "$SR_TMP/.zero-err")
	assert_eq "max_user_namespaces=0: a run fails (125)" 125 "$rc"
	# (After the warning of limits a user's run cannot hold here, if any.)
	assert_match "max_user_namespaces=0: the failure in one line, the last" \
		"^sandbox-run: create namespaces" "$(tail -n 1 "$SR_TMP/.zero-err")"
	errout=$(tail -n 1 "$SR_TMP/.zero-err")
	assert_match "max_user_namespaces=0: the run names doctor" "sandbox-run doctor" "$errout"
	case $errout in
	*"$(check_of "$out" user_namespaces found); fix: $fix"*) ok "max_user_namespaces=0: the run prints doctor's own diagnosis" ;;
	*) not_ok "max_user_namespaces=0: the run prints doctor's own diagnosis" ;;
	esac
}

# fake_root DIR NAME=VALUE...: a fake /proc/sys.
fake_root() {
	local d=$1 kv
	shift
	mkdir -p "$d/kernel" "$d/user"
	for kv in "$@"; do echo "${kv#*=}" >"$d/${kv%%=*}"; done
	chmod -R a+rX "$d"
}

t_fake_ubuntu() {
	local fake="$SR_TMP/procsys-ubuntu"
	fake_root "$fake" kernel/apparmor_restrict_unprivileged_userns=1 user/max_user_namespaces=63429
	out=$(as_user env SANDBOX_RUN_TEST_PROC_SYS="$fake" "$SR" doctor --json)
	rc=$?
	if [ "$SR_AS" = root ]; then
		assert_eq "Ubuntu's AppArmor restriction does not restrict root" ok \
			"$(check_of "$out" apparmor verdict)"
	else
		assert_eq "Ubuntu's AppArmor restriction: sandboxes cannot run (2)" 2 "$rc"
		assert_eq "Ubuntu's AppArmor restriction: the apparmor check fails" fails \
			"$(check_of "$out" apparmor verdict)"
		assert_match "Ubuntu's AppArmor restriction: found" \
			"kernel.apparmor_restrict_unprivileged_userns is 1" "$(check_of "$out" apparmor found)"
		assert_match "Ubuntu's AppArmor restriction: the fix loads sandbox-run's profile" \
			"sudo apparmor_parser -r .*/apparmor.d/sandbox-run" "$(check_of "$out" apparmor fix)"
	fi
}

t_fake_debian() {
	local fake="$SR_TMP/procsys-debian"
	fake_root "$fake" kernel/unprivileged_userns_clone=0 user/max_user_namespaces=15000
	out=$(as_user env SANDBOX_RUN_TEST_PROC_SYS="$fake" "$SR" doctor --json)
	rc=$?
	if [ "$SR_AS" = root ]; then
		assert_eq "unprivileged_userns_clone=0 does not restrict root" ok \
			"$(check_of "$out" user_namespaces verdict)"
	else
		assert_eq "unprivileged_userns_clone=0: sandboxes cannot run (2)" 2 "$rc"
		assert_match "unprivileged_userns_clone=0: the fix sets it to 1" \
			"sudo sysctl -w kernel.unprivileged_userns_clone=1" "$(check_of "$out" user_namespaces fix)"
	fi
}

for_each_user t_usage t_json t_text t_max_userns_zero

if grep -q -a SANDBOX_RUN_TEST_PROC_SYS "$SR"; then
	for_each_user t_fake_ubuntu t_fake_debian
else
	# A shipped binary must report the host, whoever sets its environment.
	mkdir -p "$SR_TMP/procsys-ignored/user"
	echo 0 >"$SR_TMP/procsys-ignored/user/max_user_namespaces"
	out=$(SANDBOX_RUN_TEST_PROC_SYS="$SR_TMP/procsys-ignored" "$SR" doctor --json)
	assert_eq "a normal build ignores SANDBOX_RUN_TEST_PROC_SYS" ok \
		"$(check_of "$out" user_namespaces verdict)"
	skip "fake /proc/sys roots (Ubuntu's AppArmor, unprivileged_userns_clone=0)" \
		"needs a build with configure --enable-fault-injection"
fi
done_testing
