#!/bin/bash
# Inside the VM (tests/vm/rounds.sh), as root: a core_pattern that pipes
# to a handler, as systemd-coredump's and apport's do, which this VM may
# change and a shared host must not. The kernel runs such a handler
# whatever the crashing process's RLIMIT_CORE, 0 included, save exactly
# 1 (fs/coredump.c); systemd-coredump then journals the crash with the
# process's environment, a deployment's secrets. Neither the agent nor
# the host process that holds its secrets may reach the handler.
. "$SR_SRCDIR/tests/integration/libtest.sh"

# The handler is run by the kernel with the initial root, which in this
# VM is the initramfs's (tests/vm/init): PID 1's, seen at /proc/1/root.
# It records the crashing process (its pid on the host, its core limit).
init_root=/proc/1/root
ran=$init_root/sr-core-ran
cat >"$init_root/sr-core-handler" <<'EOF'
#!/bin/busybox sh
echo "$1 $2" >>/sr-core-ran
exec /bin/busybox cat >/dev/null
EOF
chmod 0755 "$init_root/sr-core-handler"
old_pattern=$(cat /proc/sys/kernel/core_pattern)
echo '|/sr-core-handler %P %c' >/proc/sys/kernel/core_pattern
trap 'echo "$old_pattern" >/proc/sys/kernel/core_pattern; rm -f "$init_root/sr-core-handler" "$ran"; _cleanup' EXIT

# The handler's records since the last call, then none.
handled() {
	local t
	# It runs after the crashing process is reaped: a moment to write.
	for t in 1 2 3 4 5 6 7 8 9 10; do
		[ -s "$ran" ] && break
		sleep 0.1
	done
	cat "$ran" 2>/dev/null
	rm -f "$ran"
}

# Without sandbox-run, a limit of 0 does not keep the handler from
# running: the handler works, and 0 is not enough.
t_zero_reaches_handler() {
	handled >/dev/null
	(as_user sh -c 'ulimit -c 0; kill -SEGV $$') 2>/dev/null
	assert_match "a process with RLIMIT_CORE 0 reaches a pipe handler (control)" '^[0-9]+ 0$' \
		"$(handled)"
}

t_agent_crash() {
	handled >/dev/null
	sr --net none -- sh -c 'sed -n "s/^Max core file size *//p" /proc/self/limits; kill -SEGV $$'
	assert_eq "a crashing agent ends by SIGSEGV" 139 "$rc"
	assert_match "the agent's core limit is 1, soft and hard" '^1 +1 +bytes' "$out"
	assert_eq "a crashing agent does not reach the pipe handler" "" "$(handled)"
}

# Lowering a limit needs no privilege: an agent's `ulimit -c 0` (a common
# hardening line) would set 0 and bring the handler back. The filter
# skips it (docs/security.md): the limit stays 1.
t_agent_zero_crash() {
	handled >/dev/null
	sr --net none -- sh -c 'ulimit -c 0; sed -n "s/^Max core file size *//p" /proc/self/limits
		kill -SEGV $$'
	assert_eq "an agent that set ulimit -c 0 ends by SIGSEGV" 139 "$rc"
	assert_match "its core limit is still 1" '^1 +1 +bytes' "$out"
	assert_eq "an agent that set ulimit -c 0 does not reach the pipe handler" "" "$(handled)"
}

# The CLI that invokes a deployment holds its secrets (security/deploy.sh
# t_no_core_with_secrets): a crash of it must not reach the handler.
t_secret_holder_crash() {
	local d pid
	d=$(make_agent "core-$SR_AS" 'sleep 30')
	sr deploy --name core --net none "$d"
	echo s3cret >"$SR_TMP/core-secret-$SR_AS"
	SR_STDIN="$SR_TMP/core-secret-$SR_AS" sr secrets set core KEY
	handled >/dev/null
	(as_user_exec "$SR" invoke core </dev/null >/dev/null 2>&1) &
	pid=$!
	until_ok 20 sh -c "pgrep -P $pid >/dev/null"
	kill -SEGV "$pid"
	wait "$pid" 2>/dev/null
	assert_eq "the invoking CLI, holding secrets, ends by SIGSEGV" 139 "$?"
	assert_eq "the invoking CLI's crash does not reach the pipe handler" "" "$(handled)"
	sr deployments rm core
}

for_each_user t_zero_reaches_handler t_agent_crash t_agent_zero_crash t_secret_holder_crash
done_testing
