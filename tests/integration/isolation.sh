#!/usr/bin/env bash
# What an agent sees from inside: identity, capabilities, filesystem,
# environment, processes. Each property is checked from inside a real
# sandbox, as root and as an unprivileged user.
. "$(dirname "$0")/libtest.sh"

t_identity() {
	sr --net none -- sh -c 'id -u; id -g; id -un; echo "$HOME"; pwd; hostname'
	assert_eq "runs as user 1000 in /workspace, HOME, hostname" \
		"$(printf '1000\n1000\nuser\n/home/user\n/workspace\nsandbox')" "$out"
}

t_caps() {
	sr --net none -- grep -E '^(CapInh|CapPrm|CapEff|CapBnd|CapAmb|NoNewPrivs|Seccomp):' /proc/self/status
	assert_eq "no capabilities, no_new_privs, seccomp filter" \
		"$(printf 'CapInh:\t0000000000000000\nCapPrm:\t0000000000000000\nCapEff:\t0000000000000000\nCapBnd:\t0000000000000000\nCapAmb:\t0000000000000000\nNoNewPrivs:\t1\nSeccomp:\t2')" \
		"$out"
}

t_host_uid() {
	# Outside, the sandbox user is the caller -- or, for root, never root.
	local dir="$SR_TMP/uid-$SR_AS" marker="$SR_TMP/uid-$SR_AS/m"
	mkdir -p "$dir" && chmod 1777 "$dir"
	sr --net none --bind "$dir" /mnt -- touch /mnt/m
	local owner
	owner=$(stat -c %u "$marker" 2>/dev/null || echo missing)
	if [ "$SR_AS" = root ]; then
		check "a root caller's sandbox user is not host root (uid $owner)" \
			test "$owner" != 0 -a "$owner" != missing
	else
		local caller
		caller=$(id -u)
		[ "$SR_AS" = user ] && caller=$(id -u "$SR_TEST_USER")
		assert_eq "the sandbox user is the caller on the host" "$caller" "$owner"
	fi
}

t_nested_userns() {
	sr --net none --ro-bind "$PROBE_DIR" /probe -- /probe/sr-probe userns
	assert_match "nested user namespaces are refused" "unshare\\(CLONE_NEWUSER\\): EPERM.clone\\(CLONE_NEWUSER\\): EPERM.clone3\\(CLONE_NEWUSER\\): ENOSYS" "$out"
	sr --net none -- cat /proc/sys/user/max_user_namespaces
	assert_eq "user.max_user_namespaces is 0 inside" "0" "$out"
}

t_readonly_runtime() {
	sr --net none -- sh -c 'touch /usr/x 2>&1; touch /etc/x 2>&1; touch /x 2>&1; echo hi > /proc/sys/kernel/hostname 2>&1; true'
	assert_match "/usr is read-only" "/usr/x.: Read-only file system" "$out"
	assert_match "/etc is read-only" "/etc/x.: Read-only file system" "$out"
	assert_match "/ is read-only" "touch: cannot touch ./x.: Read-only file system" "$out"
	assert_match "/proc/sys is read-only" "hostname: Read-only file system" "$out$errout"
}

t_host_invisible() {
	echo secret >"$SR_TMP/host-marker"
	sr --net none -- sh -c "ls / | tr '\n' ' '; echo; test -e '$SR_TMP/host-marker' && echo VISIBLE; test -e /root && echo ROOT; ls /home; cat /etc/shadow 2>&1 | head -1"
	assert_match "the root holds only the sandbox's entries" "^bin dev etc home (lib |lib32 |lib64 |libx32 )*proc run sbin tmp usr var workspace $" \
		"$(head -1 <<<"$out")"
	assert_no_match "host files are invisible" "VISIBLE|ROOT" "$out"
	assert_match "/home holds only user" "^user$" "$(sed -n 2p <<<"$out")"
	assert_match "/etc/shadow does not exist" "No such file" "$out"
	sr --net none -- sh -c 'cat /etc/passwd; cat /etc/hostname'
	assert_match "synthesized /etc/passwd" "^root:x:0:0:root:/root:/usr/sbin/nologin
user:x:1000:1000:user:/home/user:/bin/sh" "$out"
}

t_proc_masked() {
	sr --net none -- sh -c 'cat /proc/kcore 2>/dev/null | wc -c; wc -c < /proc/keys 2>&1; ls /proc/acpi 2>&1 | wc -l; cat /proc/1/cmdline 2>&1 | wc -c; readlink -v /proc/1/exe 2>&1'
	assert_eq "/proc/kcore reads empty" "0" "$(sed -n 1p <<<"$out")"
	assert_eq "/proc/keys reads empty" "0" "$(sed -n 2p <<<"$out")"
	assert_match "/proc/1/exe is out of reach (PID 1 is non-dumpable)" "Permission denied" "$out"
	sr --net none --env SR_CMDLINE_SECRET=hush -- sh -c 'tr -d "\0" < /proc/1/cmdline; echo; cat /proc/1/environ 2>&1 | head -c 200'
	assert_eq "PID 1's command line shows nothing of sandbox-run's" "sandbox-run-init" "$(sed -n 1p <<<"$out")"
	assert_match "PID 1's environment is out of reach" "Permission denied" "$(sed -n 2p <<<"$out")"
}

t_dev() {
	sr --net none -- sh -c 'ls /dev | tr "\n" " "; echo; echo x > /dev/null && echo null-ok; head -c 4 /dev/urandom | wc -c; test -e /dev/sda && echo DISK; touch /dev/x 2>&1'
	assert_eq "minimal /dev" "fd full null ptmx pts random shm stderr stdin stdout tty urandom zero " "$(sed -n 1p <<<"$out")"
	assert_match "/dev/null and /dev/urandom work" "null-ok
4" "$out"
	assert_match "/dev is read-only" "Read-only file system" "$out"
}

t_workspace_overlay() {
	local d="$SR_TMP/ws-$SR_AS"
	rm -rf "$d"
	mkdir -p "$d/sub"
	echo original >"$d/keep.txt"
	echo gone >"$d/sub/delete-me"
	chmod -R a+rX "$d"
	own "$d"
	local before
	before=$(cd "$d" && find . -printf '%p %s %m\n' | sort; cat keep.txt sub/delete-me)
	sr --net none --workspace "$d" -- sh -c 'echo changed > keep.txt && rm sub/delete-me && echo new > new.txt && mkdir made && cat keep.txt && ls sub | wc -l'
	assert_eq "writes inside the workspace succeed" "$(printf 'changed\n0')" "$out"
	local after
	after=$(cd "$d" && find . -printf '%p %s %m\n' | sort; cat keep.txt sub/delete-me)
	assert_eq "the host directory is unchanged" "$before" "$after"
}

t_fresh_each_time() {
	local d="$SR_TMP/ws-fresh-$SR_AS"
	mkdir -p "$d" && chmod 755 "$d"
	sr --net none --workspace "$d" -- sh -c 'echo 1 > /workspace/w; echo 1 > /tmp/t; echo 1 > ~/h; echo 1 > /dev/shm/s'
	sr --net none --workspace "$d" -- sh -c 'ls /workspace /tmp /dev/shm ~ | tr -s "\n" " "'
	assert_no_match "nothing is carried to the next invocation" "\bw\b|\bt\b|\bh\b|\bs\b" "$out"
}

t_fds_closed() {
	exec 7>"$SR_TMP/leak-$SR_AS" 8<"$SR_TMP/leak-$SR_AS"
	sr --net none -- sh -c 'ls /proc/self/fd | tr "\n" " "'
	exec 7>&- 8<&-
	# ls's own directory fd is the 3.
	assert_eq "only stdio (and ls's own fd) are open" "0 1 2 3 " "$out"
}

t_env_clean() {
	SR_HOST_SECRET=leak TERM=xterm sr --net none -- env
	assert_eq "clean environment" "$(printf 'PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin\nHOME=/home/user\nLANG=%s\nTERM=xterm' "${LANG:-C.UTF-8}")" \
		"$out"
	FOO_PASS=passed sr --net none --pass-env FOO_PASS --env A=1 --env B=two -- env
	assert_match "--pass-env and --env set variables" "FOO_PASS=passed
A=1
B=two" "$out"
}

t_env_file() {
	local f="$SR_TMP/secrets-$SR_AS"
	printf 'API_KEY=sk-test-123\n# comment\n\nOTHER=x=y\n' >"$f"
	[ "$SR_AS" = user ] && chown "$SR_TEST_USER" "$f"
	chmod 0644 "$f"
	sr --net none --env-file "$f" -- env
	assert_eq "a group/world-readable env file is refused (125)" 125 "$rc"
	assert_match "with a clear message" "^sandbox-run: env file .*: .*chmod 600" "$errout"
	chmod 0600 "$f"
	sr --net none --env-file "$f" --result "$SR_OUT/r-$SR_AS.json" -v -- env
	assert_match "secrets arrive as environment variables" "API_KEY=sk-test-123
OTHER=x=y" "$out"
	check "secrets are never written to stderr or the result" \
		bash -c "! grep -q sk-test-123 '$SR_TMP/.err' '$SR_OUT/r-$SR_AS.json'"
	# A NUL ends no line silently: the file is refused, its line named.
	printf 'A=1\nB=2\0junk\nC=3\n' >"$f"
	sr --net none --env-file "$f" -- env
	assert_match "a NUL byte in an env file is an error, its line said" \
		"^sandbox-run: env file .*:2: holds a NUL byte" "$errout"
	# A FIFO is refused at once: the open does not wait for a writer.
	rm -f "$f" && mkfifo -m 0600 "$f"
	[ "$SR_AS" = user ] && chown "$SR_TEST_USER" "$f"
	sr --net none --timeout 10 --env-file "$f" -- true
	assert_match "a FIFO as env file: refused, not waited on" \
		"^sandbox-run: env file .*: not a regular file" "$errout"
	rm -f "$f"
}

t_pid1() {
	sr --net none -- sh -c 'echo $$; ps -e -o pid=,comm= 2>/dev/null | wc -l; cat /proc/1/status | grep -E "^(Name|Uid)"'
	assert_match "the agent is not PID 1" "^[0-9]+$" "$(sed -n 1p <<<"$out")"
	check "PID 1 is sandbox-run's init" test "$(sed -n 1p <<<"$out")" != 1
}

t_session() {
	sr --net none -- sh -c 'ps -o sid=,pid= -p $$'
	local sid pid
	read -r sid pid <<<"$out"
	assert_eq "the agent leads its own session" "$pid" "$sid"
}

t_tiocsti_tty() {
	# A real terminal on stdin: script(1) gives the run a pty.
	local log="$SR_OUT/tty-$SR_AS"
	as_user script -qec "$SR --net none --ro-bind $PROBE_DIR /probe -- /probe/sr-probe tiocsti" "$log" </dev/null >/dev/null 2>&1
	out=$(tr -d '\r' <"$log")
	assert_match "TIOCSTI from a real terminal is refused" "TIOCSTI.*EPERM" "$out"
	assert_no_match "no TIOCSTI variant succeeds" "TIOCSTI[^:]*: ok" "$out"
}

t_binds() {
	local d="$SR_TMP/binds-$SR_AS"
	mkdir -p "$d/ro" "$d/rw" && echo host-data >"$d/ro/f" && chmod -R a+rX "$d"
	chmod 1777 "$d/rw"
	sr --net none --ro-bind "$d/ro" /data --bind "$d/rw" /out -- sh -c 'cat /data/f; touch /data/x 2>&1; echo made > /out/made'
	assert_match "--ro-bind: readable" "^host-data" "$out"
	assert_match "--ro-bind: read-only" "/data/x.: Read-only file system" "$out"
	assert_eq "--bind: writes reach the host (explicit opt-in)" made "$(cat "$d/rw/made" 2>/dev/null)"
	if [ "$SR_AS" = root ]; then
		# Sources are opened with the caller's rights, before the id switch.
		local closed="$SR_TMP/closed-$SR_AS"
		mkdir -p "$closed/pub" && echo only-root-reaches >"$closed/pub/f"
		chmod 0700 "$closed" && chmod 0755 "$closed/pub" && chmod 0644 "$closed/pub/f"
		sr --net none --ro-bind "$closed/pub" /data -- cat /data/f
		assert_eq "root binds a directory only root can reach" only-root-reaches "$out"
	fi
}

t_net_none() {
	sr --net none -- sh -c 'cat /proc/net/dev | tail -n +3 | cut -d: -f1 | tr -d " "; wc -l < /proc/net/route'
	assert_eq "--net none: only lo, no route" "$(printf 'lo\n1')" "$out"
}

for_each_user t_identity t_caps t_host_uid t_nested_userns t_readonly_runtime t_host_invisible \
	t_proc_masked t_dev t_workspace_overlay t_fresh_each_time t_fds_closed t_env_clean \
	t_env_file t_pid1 t_session t_tiocsti_tty t_binds t_net_none
done_testing
