#!/usr/bin/env bash
# Escape battery, part 2: the host's files, kernel interfaces in /proc,
# /sys and /dev, the runner binary (CVE-2019-5736), leaked fds
# (CVE-2024-21626), symlinks in the workspace and symlinked bind targets
# (the CVE-2021-30465 class). Each attempt is made from inside a real
# sandbox and asserts how it failed, as root and as an unprivileged caller.
. "$(dirname "$0")/../integration/libtest.sh"

need_probe

P=/probe/sr-probe
probe() {
	sr --net none --ro-bind "$PROBE_DIR" /probe "$@"
}

t_proc_sys() {
	local core
	core=$(cat /proc/sys/kernel/core_pattern)
	probe -- sh -c "$P write /proc/sys/kernel/core_pattern; $P write /proc/sys/vm/drop_caches;
		{ echo '|/tmp/x' > /proc/sys/kernel/core_pattern; } 2>&1"
	# Two walls: the files belong to the host's root, unmapped in the
	# sandbox (EACCES), and /proc/sys is a read-only mount (EROFS, seen
	# first by an O_TRUNC open, which takes write access to the mount early).
	assert_match "write /proc/sys/kernel/core_pattern: EACCES (host root's file)" \
		"^write /proc/sys/kernel/core_pattern: EACCES$" "$(sed -n 1p <<<"$out")"
	assert_match "write /proc/sys/vm/drop_caches: EACCES" \
		"^write /proc/sys/vm/drop_caches: EACCES$" "$(sed -n 2p <<<"$out")"
	assert_match "truncating /proc/sys/kernel/core_pattern: EROFS (read-only mount)" \
		"core_pattern: Read-only file system" "$(sed -n 3p <<<"$out")"
	assert_eq "the host's core_pattern is unchanged" "$core" "$(cat /proc/sys/kernel/core_pattern)"
}

# The IPC namespace's sysctls are checked by uid, not capability: they
# belong to uid 0 of the user namespace owning the IPC namespace. Under
# --net egress the agent's host id is uid 0 of the outer user namespace,
# so the agent gets an IPC namespace owned by its inner one (src/lib/userns.c):
# the same two walls as with one namespace, the owner check and the
# read-only /proc/sys.
t_proc_sys_ipc() {
	local net
	for net in none egress; do
		if [ "$net" = egress ] && ! have_egress; then
			skip "--net egress: IPC sysctls" "no egress helper or /dev/net/tun is not 0666"
			continue
		fi
		sr --net "$net" --ro-bind "$PROBE_DIR" /probe -- sh -c "cat /proc/sys/kernel/msgmni;
			$P write /proc/sys/kernel/msgmni; $P write /proc/sys/fs/mqueue/queues_max;
			cat /proc/sys/kernel/msgmni"
		assert_eq "--net $net: write kernel.msgmni: EACCES (not the IPC namespace's root)" \
			"write /proc/sys/kernel/msgmni: EACCES" "$(sed -n 2p <<<"$out")"
		assert_eq "--net $net: write fs.mqueue.queues_max: EACCES" \
			"write /proc/sys/fs/mqueue/queues_max: EACCES" "$(sed -n 3p <<<"$out")"
		assert_eq "--net $net: kernel.msgmni unchanged" "$(sed -n 1p <<<"$out")" "$(sed -n 4p <<<"$out")"
	done
}

t_sysrq() {
	probe -- sh -c "$P write /proc/sysrq-trigger; stat -c '%F %t:%T' /proc/sysrq-trigger 2>&1"
	if [ -e /proc/sysrq-trigger ]; then
		assert_eq "/proc/sysrq-trigger is /dev/null inside: the write lands nowhere" \
			"$(printf 'write /proc/sysrq-trigger: ok\ncharacter special file 1:3')" "$out"
	else
		assert_match "/proc/sysrq-trigger: ENOENT (the host kernel has none)" \
			"^write /proc/sysrq-trigger: ENOENT" "$out"
	fi
}

t_sys() {
	probe -- sh -c "$P write /sys/kernel/uevent_helper; $P write /sys/fs/cgroup/cgroup.procs; test -e /sys || echo no-sys"
	assert_eq "/sys is not mounted: uevent_helper and cgroupfs writes get ENOENT" \
		"$(printf 'write /sys/kernel/uevent_helper: ENOENT\nwrite /sys/fs/cgroup/cgroup.procs: ENOENT\nno-sys')" "$out"
}

t_kernel_memory() {
	probe -- sh -c "$P read /dev/mem; $P read /dev/kmem; $P read /dev/port; $P read /dev/kmsg; $P write /dev/kmsg"
	# Creating the missing /dev/kmsg meets the read-only /dev mount first.
	assert_eq "/dev/mem, /dev/kmem, /dev/port, /dev/kmsg: ENOENT (not in the minimal /dev); create: EROFS" \
		"$(printf 'read /dev/mem: ENOENT\nread /dev/kmem: ENOENT\nread /dev/port: ENOENT\nread /dev/kmsg: ENOENT\nwrite /dev/kmsg: EROFS')" \
		"$out"
	local f
	for f in kcore kallsyms keys timer_list sched_debug; do
		probe -- sh -c "$P read /proc/$f; stat -c '%F %t:%T' /proc/$f 2>&1 | sed 's/.*No such.*/absent/'"
		if [ -e "/proc/$f" ]; then
			assert_eq "/proc/$f is masked with /dev/null: reads 0 bytes" \
				"$(printf 'read /proc/%s: ok 0 bytes\ncharacter special file 1:3' "$f")" "$out"
		else
			assert_eq "/proc/$f: ENOENT (the host kernel has none)" \
				"$(printf 'read /proc/%s: ENOENT\nabsent' "$f")" "$out"
		fi
	done
}

t_proc_pid1() {
	# PID 1 is sandbox-run's own code, non-dumpable: its /proc entries
	# (memory, environment with the secrets, root, fds, namespaces) fail
	# the kernel's ptrace access check.
	probe -- sh -c "$P read /proc/1/mem; $P read /proc/1/environ; ls /proc/1/root/ 2>&1; ls /proc/1/fd/ 2>&1; ls /proc/1/cwd/ 2>&1"
	assert_eq "/proc/1/{mem,environ,root,fd,cwd}: EACCES (PID 1 is non-dumpable)" \
		"$(printf "read /proc/1/mem: EACCES\nread /proc/1/environ: EACCES\nls: cannot access '/proc/1/root/': Permission denied\nls: cannot open directory '/proc/1/fd/': Permission denied\nls: cannot access '/proc/1/cwd/': Permission denied")" \
		"$out"
}

# PID 1 under sandbox-run PID: the child whose NSpid ends in 1.
pid1_of() {
	local c
	for c in $(cat "/proc/$1/task/$1/children" 2>/dev/null); do
		[ "$(awk '/^NSpid:/ {print $NF}' "/proc/$c/status" 2>/dev/null)" = 1 ] && echo "$c"
	done
}
# Whether sandbox-run PID has a PID 1 that has started the agent.
has_pid1() {
	local p
	p=$(pid1_of "$1")
	[ -n "$p" ] && [ -n "$(cat "/proc/$p/task/$p/children" 2>/dev/null)" ]
}

# PID 1 keeps no handle on a host tree while the agent runs: its only
# wall is being non-dumpable. Seen from the host: no O_PATH fd (the
# workspace and bind sources are opened so), only stdio and its socket.
t_pid1_fds() {
	local pid pid1 f paths=0
	mkdir -p "$SR_TMP/ws-$SR_AS" && chmod 755 "$SR_TMP/ws-$SR_AS"
	(as_user_exec "$SR" -q --net none --workspace "$SR_TMP/ws-$SR_AS" --ro-bind /etc/hostname /x \
		-- sleep 30 </dev/null >/dev/null 2>&1) &
	pid=$!
	SR_BG_PIDS="${SR_BG_PIDS:-} $pid"
	until_ok 4 has_pid1 "$pid"
	pid1=$(pid1_of "$pid")
	for f in /proc/"${pid1:-0}"/fdinfo/*; do
		# O_PATH is 010000000 (octal) in fdinfo's flags.
		[ $((0$(awk '/^flags:/ {print $2}' "$f") & 010000000)) != 0 ] && paths=$((paths + 1))
	done
	check "PID 1 found" test -n "$pid1"
	assert_eq "PID 1 holds no O_PATH handle on a host tree once the agent runs" 0 "$paths"
	kill -KILL "$pid" 2>/dev/null
	wait "$pid" 2>/dev/null
}

# CVE-2019-5736: /proc/1/exe is the sandbox-run binary on the host.
t_runner_exe() {
	local bin="$SR" sum
	if [ "$SR_AS" = user ]; then
		# Owned by the caller: file permissions would let "user" write it,
		# so only the ptrace gate on /proc/1/exe stands in the way.
		bin="$SR_TMP/own-$SR_AS/sandbox-run"
		mkdir -p "${bin%/*}"
		install -m 0755 -o "$SR_TEST_USER" "$SR" "$bin"
		chmod 0755 "${bin%/*}"
	fi
	sum=$(sha256sum <"$bin")
	as_user "$bin" --net none --ro-bind "$PROBE_DIR" /probe -- sh -c "$P open-exe 1; { echo x >> /proc/1/exe; } 2>&1" \
		</dev/null >"$SR_TMP/.out" 2>"$SR_TMP/.err"
	rc=$? out=$(cat "$SR_TMP/.out") errout=$(cat "$SR_TMP/.err")
	# O_PATH needs no permission on the file: EACCES there is the ptrace check.
	assert_eq "/proc/1/exe: EACCES for O_WRONLY and even for O_PATH" \
		"$(printf 'open-exe 1 O_WRONLY: EACCES\nopen-exe 1 O_PATH: EACCES\nopen-exe 1 O_PATH reopen O_WRONLY: not attempted')" \
		"$(sed -n 1,3p <<<"$out")"
	assert_match "a shell redirection into /proc/1/exe: Permission denied" "/proc/1/exe: Permission denied" \
		"$(sed -n 4p <<<"$out")"
	assert_eq "the sandbox-run binary on the host is unchanged" "$sum" "$(sha256sum <"$bin")"
}

t_self_exe() {
	# /proc/self/exe: the probe itself, on a read-only bind of a root-owned
	# host file; then a copy the sandbox user owns, which is running.
	probe -- sh -c "exec $P open-exe \$\$"
	# Run as a non-root developer, the probe is the caller's own file, that
	# is the sandbox user's: then it is refused as a running program.
	local why=EACCES
	[ "$SR_AS" = self ] && why=ETXTBSY
	assert_match "/proc/self/exe (host file) O_WRONLY: $why" " O_WRONLY: $why$" "$(sed -n 1p <<<"$out")"
	assert_match "/proc/self/exe O_PATH: allowed (it is the probe's own)" " O_PATH: ok$" "$(sed -n 2p <<<"$out")"
	assert_match "/proc/self/exe O_PATH re-opened O_WRONLY via /proc/self/fd: $why" \
		" O_PATH reopen O_WRONLY: $why$" "$(sed -n 3p <<<"$out")"
	probe -- sh -c "cp $P /tmp/p && exec /tmp/p open-exe \$\$"
	assert_eq "a running copy the agent owns: ETXTBSY, also through O_PATH" \
		"$(printf 'O_WRONLY: ETXTBSY\nO_PATH: ok\nO_PATH reopen O_WRONLY: ETXTBSY')" \
		"$(sed 's/^open-exe [0-9]* //' <<<"$out")"
}

t_fds_cwd() {
	# CVE-2024-21626: a host fd (or a cwd) leaked into the sandbox is a way out.
	exec 7<"$SR_TMP" 8>"$SR_OUT/leak-$SR_AS"
	cd "$SR_TMP" || return
	probe -- sh -c "$P fds; pwd; readlink /proc/self/cwd; readlink /proc/self/root"
	cd - >/dev/null || return
	exec 7<&- 8>&-
	assert_eq "no fd of the caller's beyond stdio; cwd and root are the sandbox's" \
		"$(printf 'fds: none\n/workspace\n/workspace\n/')" "$out"
}

t_mknod() {
	probe -- sh -c "$P mknod /tmp/n; $P mknod /workspace/n; $P mknod /dev/n"
	# Not filtered: a user namespace never grants device nodes (no CAP_MKNOD
	# over the initial namespace); /dev is a read-only mount besides.
	assert_eq "mknod: EPERM in /tmp and /workspace (kernel), EROFS in /dev" \
		"$(printf 'mknod /tmp/n: EPERM\nmknod /workspace/n: EPERM\nmknod /dev/n: EROFS')" "$out"
}

t_workspace_symlinks() {
	local ws="$SR_TMP/ws-links-$SR_AS" hd="$SR_TMP/hostdir-$SR_AS"
	rm -rf "$ws" "$hd"
	mkdir -p "$ws" "$hd"
	echo host-secret-$SR_AS >"$hd/secret"
	chmod 0755 "$hd" && chmod 0644 "$hd/secret"
	ln -s /etc/shadow "$ws/shadow"
	ln -s /root "$ws/root"
	ln -s "$hd" "$ws/hostdir"
	ln -s "$hd/secret" "$ws/secret"
	ln -s "../../../../../../../..$hd/secret" "$ws/relative"
	chmod 0755 "$ws"
	own "$ws"
	sr --net none --workspace "$ws" -- sh -c '
		for l in shadow root hostdir secret relative; do cat /workspace/$l 2>&1; done
		ls /workspace/root/ 2>&1; { echo pwned > /workspace/hostdir/pwned; } 2>&1
		{ echo pwned > /workspace/secret; } 2>&1'
	assert_eq "links to host paths resolve inside the sandbox: ENOENT" \
		"$(printf 'cat: /workspace/shadow: No such file or directory
cat: /workspace/root: No such file or directory
cat: /workspace/hostdir: No such file or directory
cat: /workspace/secret: No such file or directory
cat: /workspace/relative: No such file or directory
ls: cannot access '"'"'/workspace/root/'"'"': No such file or directory')" "$(sed -n 1,6p <<<"$out")"
	assert_match "writing through a link to a host directory: ENOENT" \
		"/workspace/hostdir/pwned: (Directory nonexistent|No such file)" "$(sed -n 7p <<<"$out")"
	assert_no_match "no host content was read" "host-secret" "$out"
	check "the host directory holds only its own file, unchanged" \
		test "$(ls "$hd")" = secret -a "$(cat "$hd/secret")" = "host-secret-$SR_AS"
	assert_match "writing through a link to a host file: ENOENT" \
		"/workspace/secret: (Directory nonexistent|No such file)" "$(sed -n 8p <<<"$out")"
	check "the workspace link on the host is still the same link" \
		test "$(readlink "$ws/secret")" = "$hd/secret"
}

t_bind_target_symlink() {
	local ws="$SR_TMP/ws-bind-$SR_AS" hd="$SR_TMP/bindhost-$SR_AS" etc_before
	rm -rf "$ws" "$hd"
	mkdir -p "$ws" "$hd"
	chmod 0755 "$ws" "$hd"
	ln -s /etc "$ws/etclink"
	ln -s "$hd" "$ws/hostlink"
	own "$ws"
	etc_before=$(ls -a /etc)
	sr --net none --workspace "$ws" --ro-bind "$PROBE_DIR" /workspace/etclink -- true
	assert_eq "a bind target that is a workspace symlink to /etc: refused (125)" 125 "$rc"
	assert_match "with ELOOP: symlinks are refused" \
		"sandbox-run: bind target workspace/etclink \\(symlinks are refused\\): Too many levels of symbolic links" "$errout"
	sr --net none --workspace "$ws" --ro-bind "$PROBE_DIR" /workspace/hostlink/sub -- true
	assert_eq "a bind target below a symlink to a host dir: refused (125)" 125 "$rc"
	assert_match "with ELOOP on the link component" \
		"sandbox-run: bind target workspace/hostlink/sub \\(symlinks are refused\\): Too many levels" "$errout"
	sr --net none --workspace "$ws" --ro-bind "$PROBE_DIR" /workspace/../etc/x -- true
	assert_match "a bind target with '..': refused before any mount" \
		"destination '/workspace/../etc/x' contains '..'" "$errout"
	assert_eq "nothing was created in the host's /etc" "$etc_before" "$(ls -a /etc)"
	assert_eq "nothing was created in the symlinked host directory" "" "$(ls -A "$hd")"
	# A FIFO at a file bind's target: never opened (it would wait for a reader for ever).
	mkfifo "$ws/fifo" && own "$ws"
	echo bound >"$SR_TMP/bound-$SR_AS" && chmod 644 "$SR_TMP/bound-$SR_AS"
	sr --net none --timeout 10 --workspace "$ws" --ro-bind "$SR_TMP/bound-$SR_AS" /workspace/fifo \
		-- cat /workspace/fifo
	assert_eq "a FIFO at a bind target: covered by the bind, set-up does not wait on it" bound "$out"
}

for_each_user t_proc_sys t_proc_sys_ipc t_sysrq t_sys t_kernel_memory t_proc_pid1 t_pid1_fds \
	t_runner_exe t_self_exe t_fds_cwd t_mknod t_workspace_symlinks t_bind_target_symlink
done_testing
