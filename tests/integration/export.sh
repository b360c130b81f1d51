#!/usr/bin/env bash
# sandbox-run export: an OCI bundle that crun runs with the same stdout and
# exit status as sandbox-run (the example agents, a seccomp refusal, an
# unknown call number), crun's cgroup holding the run's limits; Kubernetes
# objects that parse, with every mapped field and no secret value. As
# root and as an unprivileged user (rootless crun).
. "$(dirname "$0")/libtest.sh"

# The examples live in the source tree, which the unprivileged round may
# not reach.
mkdir -p "$SR_TMP/examples"
cp -r "$SR_SRCDIR/examples/." "$SR_TMP/examples/"
chmod -R a+rX "$SR_TMP/examples"
printf 'the quick brown fox\n' >"$SR_TMP/prompt"
chmod a+r "$SR_TMP/prompt"

CRUN=$(command -v crun || true)
PY=$(command -v python3 || true)
n=0

# A hybrid cgroup host whose cgroup2 hierarchy holds a controller (this
# development VM: hugetlb) is one crun refuses to run on at all ("cgroups
# in hybrid mode not supported", even with --cgroup-manager=disabled). The
# test then runs crun in a mount namespace of its own where that
# hierarchy is unmounted: crun sees a v1 host; the host is unchanged.
hybrid_v2_busy() {
	[ "$(stat -fc %T /sys/fs/cgroup 2>/dev/null)" = tmpfs ] &&
		[ -n "$(cat /sys/fs/cgroup/unified/cgroup.controllers 2>/dev/null)" ]
}

# Why crun cannot run here, or nothing.
crun_missing() {
	if [ -z "$CRUN" ]; then
		echo "crun is not installed (apt-get install crun; tools/bootstrap does)"
	elif hybrid_v2_busy && [ "$(id -u)" != 0 ]; then
		echo "crun refuses this hybrid cgroup host, and only root can hide its cgroup2 here"
	fi
}

# crun's state, the round's own.
crun_root() {
	local d="$SR_TMP/crun-$SR_AS"
	if [ ! -d "$d" ]; then
		mkdir -p "$d"
		own "$d"
	fi
	echo "$d"
}

# crun_cmd ARGS...: the command line that runs crun ARGS as the round's
# user (rootless crun in the user round), on this host.
crun_cmd() {
	local root
	root=$(crun_root)
	cmd=("$CRUN" --root "$root" "$@")
	if [ "$SR_AS" = user ] && [ "$(id -u)" = 0 ]; then
		cmd=(setpriv --reuid="$SR_TEST_USER" --regid="$SR_TEST_USER" --clear-groups
			--inh-caps=-all -- env XDG_RUNTIME_DIR="$root" "${cmd[@]}")
	fi
	if hybrid_v2_busy; then
		cmd=(unshare -m sh -c 'umount -l /sys/fs/cgroup/unified && exec "$@"' sh "${cmd[@]}")
	fi
}

# crun_run BUNDLE: runs it to its end (no cgroup of its own: the limits
# case makes one), stdin from $SR_STDIN; sets rc, out, errout.
crun_run() {
	local o="$SR_TMP/.out" e="$SR_TMP/.err"
	n=$((n + 1))
	crun_cmd --cgroup-manager=disabled run --bundle "$1" "sr-export-$$-$n"
	"${cmd[@]}" <"${SR_STDIN:-/dev/null}" >"$o" 2>"$e"
	rc=$?
	out=$(cat "$o")
	errout=$(cat "$e")
}

# export_oci NAME ARGS...: a bundle of ARGS in $bundle (the round's user's).
export_oci() {
	bundle="$SR_OUT/bundle-$SR_AS-$1"
	shift
	rm -rf "$bundle"
	sr export -q --oci "$bundle" "$@"
}

# same_as_run NAME ARGS...: the agent's stdout and status under sandbox-run
# and under crun, from the bundle export makes of the same ARGS.
same_as_run() {
	local name=$1 want_out want_rc
	shift
	sr --net none "$@"
	want_out=$out want_rc=$rc
	export_oci "$name" --net none "$@"
	assert_eq "$name: export --oci succeeds" 0 "$rc"
	crun_run "$bundle"
	assert_eq "$name: the same exit status under crun ($want_rc)" "$want_rc" "$rc"
	assert_eq "$name: the same stdout under crun" "$want_out" "$out"
	rm -rf "$bundle"
}

t_examples() {
	local why
	why=$(crun_missing)
	if [ -n "$why" ]; then
		skip "the example agents under crun" "$why"
		return
	fi
	SR_STDIN="$SR_TMP/prompt" same_as_run echo-agent "$SR_TMP/examples/echo-agent"
	SR_STDIN="$SR_TMP/prompt" same_as_run node-agent "$SR_TMP/examples/node-agent"
	SR_STDIN="$SR_TMP/prompt" same_as_run python-agent "$SR_TMP/examples/python-agent"
	assert_match "python-agent: it wrote in /workspace and printed it" '"cwd": "/workspace"' "$out"
	same_as_run status-7 "$(make_agent status-7 'echo seven; exit 7')"
	# PID 1 of a namespace ignores signals it has no handler for: the bundle's is sandbox-run's.
	same_as_run killed "$(make_agent killed 'echo before; kill -SEGV $$')"
	same_as_run terminated -- sh -c 'kill -TERM $$; echo not-reached'
	# What the agent leaves behind ends with it, as in a run.
	SECONDS=0
	same_as_run daemon -- sh -c 'sleep 60 & echo started'
	check "daemon: its leftover process did not hold the container (${SECONDS}s)" \
		test "$SECONDS" -lt 30
	same_as_run not-found -- no-such-command
	assert_eq "not found: 127, as a run" 127 "$rc"
	same_as_run identity -- sh -c 'id; hostname; cat /etc/passwd; ls /workspace /home'
	assert_match "identity: uid 1000, host name sandbox" 'uid=1000\(user\).*sandbox' "$(echo $out)"
}

# The probe's lines under sandbox-run and crun: every call the same, ptrace
# of PID 1 included (the bundle's PID 1 is sandbox-run's, non-dumpable, as
# a run's). What may differ (docs/scale-out.md): the securebits, which the
# runtime spec has no field for.
t_seccomp() {
	local why want
	why=$(crun_missing)
	if [ -n "$why" ]; then
		skip "seccomp under crun" "$why"
		return
	fi
	sr --net none "$PROBE_DIR/sr-probe" syscall all
	want=$out
	export_oci seccomp --net none "$PROBE_DIR/sr-probe" syscall all
	crun_run "$bundle"
	assert_eq "every probed call: the same answer under crun" "$want" "$out"
	assert_match "ptrace of PID 1: EPERM under crun (it is non-dumpable)" $'(^|\n)ptrace: EPERM' "$out"
	assert_match "keyctl: EPERM under crun" $'(^|\n)keyctl: EPERM' "$out"
	assert_match "mount: EPERM under crun" $'(^|\n)mount: EPERM' "$out"
	assert_match "unshare(CLONE_NEWUSER): EPERM under crun" $'(^|\n)unshare: EPERM' "$out"
	rm -rf "$bundle"

	sr --net none "$PROBE_DIR/sr-probe" nr 1000 next
	want=$out
	export_oci nr --net none "$PROBE_DIR/sr-probe" nr 1000 next
	crun_run "$bundle"
	assert_eq "unknown call numbers: the same answer under crun" "$want" "$out"
	assert_match "number 1000: ENOSYS under crun" '1000: ENOSYS' "$out"
	rm -rf "$bundle"

	sr --net none "$PROBE_DIR/sr-probe" caps
	want=$(grep -v '^Securebits' <<<"$out")
	export_oci caps --net none "$PROBE_DIR/sr-probe" caps
	crun_run "$bundle"
	assert_eq "capabilities: none under crun either" "$want" "$(grep -v '^Securebits' <<<"$out")"
	rm -rf "$bundle"

	export_oci x32 --net none "$PROBE_DIR/sr-probe" x32
	crun_run "$bundle"
	assert_match "another ABI: killed under crun too" 'killed by SIGSYS' "$out"
	rm -rf "$bundle"
}

# path_of HIERARCHY: our cgroup in it (v1: the named controller; v2: "").
path_of() {
	awk -F: -v h="$1" '$2 == h { print $3 }' /proc/self/cgroup
}

# crun's cgroup holds the run's limits (root: the unprivileged round's
# crun has no cgroup it may write on a host without delegation). Beneath
# our own cgroup, never elsewhere; what crun made is removed after.
t_limits() {
	local why base dir v2= made=() d p mem pids cpu state i ran="$SR_TMP/.limits-out"
	why=$(crun_missing)
	if [ -n "$why" ]; then
		skip "limits under crun" "$why"
		return
	fi
	if [ "$SR_AS" != root ]; then
		skip "limits under crun" "rootless crun gets no cgroup without a delegated one"
		return
	fi
	export_oci limits --net none --memory 256M --cpus 0.5 --pids 64 -- sh -c \
		'for i in 1 2 3 4 5 6 7 8; do sleep 0.2 & done; wait; echo ran
		sed -n "s/^Max \(data size\|processes\)  *\([0-9]*\) .*/\1 \2/p" /proc/self/limits'
	if [ "$(stat -fc %T /sys/fs/cgroup)" = cgroup2fs ]; then
		# Beside our own cgroup: cgroup v2 gives controllers to leaves only.
		v2=1
		base=$(dirname "$(path_of "")")
	else
		# v1: crun uses one path in every hierarchy; ours is the memory one's.
		base=$(path_of memory)
		for d in /sys/fs/cgroup/*/; do
			p=
			for c in $(tr / ' ' <<<"$base"); do
				p="$p/$c"
				[ -d "${d%/}$p" ] || made=("${d%/}$p" "${made[@]}")
			done
		done
	fi
	dir="${base%/}/sr-export-$$"
	"$PY" - "$bundle/config.json" "$dir" <<-'EOF'
		import json, sys
		c = json.load(open(sys.argv[1]))
		c["linux"]["cgroupsPath"] = sys.argv[2]
		json.dump(c, open(sys.argv[1], "w"))
	EOF
	n=$((n + 1))
	# create: the cgroup made and limited, the agent not started; read;
	# start, and the agent runs under the cgroup and the bundle's rlimits
	# both; delete.
	crun_cmd create --bundle "$bundle" "sr-export-$$-$n"
	"${cmd[@]}" </dev/null >"$ran" 2>"$SR_TMP/.err"
	rc=$?
	if [ -n "$v2" ]; then
		mem=$(cat "/sys/fs/cgroup$dir/memory.max" 2>/dev/null)
		pids=$(cat "/sys/fs/cgroup$dir/pids.max" 2>/dev/null)
		cpu=$(cut -d' ' -f1 "/sys/fs/cgroup$dir/cpu.max" 2>/dev/null)
	else
		mem=$(cat "/sys/fs/cgroup/memory$dir/memory.limit_in_bytes" 2>/dev/null)
		pids=$(cat "/sys/fs/cgroup/pids$dir/pids.max" 2>/dev/null)
		cpu=$(cat "/sys/fs/cgroup/cpu$dir/cpu.cfs_quota_us" 2>/dev/null)
	fi
	crun_cmd start "sr-export-$$-$n"
	"${cmd[@]}" >/dev/null 2>&1
	crun_cmd state "sr-export-$$-$n"
	for i in $(seq 100); do
		state=$("${cmd[@]}" 2>/dev/null)
		[[ $state =~ \"status\":\ *\"(running|created)\" ]] || break
		sleep 0.1
	done
	crun_cmd delete --force "sr-export-$$-$n"
	"${cmd[@]}" >/dev/null 2>&1
	errout=$(cat "$SR_TMP/.err")
	assert_eq "limits: crun create succeeds" 0 "$rc"
	assert_eq "limits: --memory 256M is crun's memory limit" 268435456 "$mem"
	assert_eq "limits: --pids 64 is crun's pids limit" 64 "$pids"
	assert_eq "limits: --cpus 0.5 is 50 ms per 100 ms" 50000 "$cpu"
	# The rlimits a runtime without a cgroup holds the limits by (t_bundle_rlimits) break
	# nothing where it has one: 8 processes beside PID 1, within both.
	assert_eq "limits: under crun's cgroup the agent runs, its rlimits --memory and --pids" \
		"$(printf 'ran\ndata size 268435456\nprocesses 64')" "$(cat "$ran")"
	# The parents crun made where we had none (deepest first).
	for d in "${made[@]}"; do
		rmdir "$d" 2>/dev/null
	done
	check "limits: no cgroup of crun's left" test -z "$(find /sys/fs/cgroup -maxdepth 8 \
		-name "sr-export-$$*" 2>/dev/null)"
	check "limits: no parent crun made is left" test -z "$(for d in "${made[@]}"; do
		ls -d "$d" 2>/dev/null; done)"
	rm -rf "$bundle"
}

t_bundle() {
	local mode agent="$SR_TMP/linked-agent-$SR_AS"
	rm -rf "$agent" && cp -r "$SR_TMP/examples/echo-agent" "$agent" && ln -s agent "$agent/link"
	chmod -R a+rX "$agent"
	export_oci layout --net none "$agent"
	assert_eq "export --oci: status 0" 0 "$rc"
	mode=$(stat -c %a "$bundle/config.json")
	assert_eq "config.json is the caller's alone (it may hold secrets)" 600 "$mode"
	check "the workspace holds the agent's files" test -x "$bundle/rootfs/workspace/agent"
	assert_eq "its links are copied as links, owned as its files are" \
		"agent $(stat -c %u "$bundle/rootfs/workspace/agent")" \
		"$(readlink "$bundle/rootfs/workspace/link") $(stat -c %u "$bundle/rootfs/workspace/link")"
	rm -rf "$agent"
	assert_eq "the copy is the sandbox user's alone (others cannot read the agent's files)" \
		700 "$(stat -c %a "$bundle/rootfs/workspace")"
	check "passwd is the sandbox's" grep -q '^user:x:1000:1000:' "$bundle/rootfs/etc/passwd"
	check "the host's passwd is not copied" sh -c "! cmp -s /etc/passwd '$bundle/rootfs/etc/passwd'"
	check "no private key directory" test ! -e "$bundle/rootfs/etc/ssl/private"
	# Bad input is one line, the error: no warning of what does not map
	# (here the network, --net egress being the default) before it.
	sr export --oci "$bundle" "$SR_TMP/examples/echo-agent"
	assert_eq "export --oci into a non-empty directory: 125" 125 "$rc"
	assert_eq "and says so, in one line" \
		"sandbox-run: export: $bundle is not empty (give a new directory)" "$errout"
	sr export --oci "$SR_OUT/bundle-$SR_AS-noenv" --env-file "$SR_TMP/no-such-env" \
		"$SR_TMP/examples/echo-agent"
	assert_eq "a missing --env-file: 125, one line, nothing made" \
		"125 sandbox-run: export: env file $SR_TMP/no-such-env: No such file or directory no" \
		"$rc $errout $([ -e "$SR_OUT/bundle-$SR_AS-noenv" ] && echo yes || echo no)"
	sr export --oci "$SR_OUT/no-such-dir-$SR_AS/bundle" "$SR_TMP/examples/echo-agent"
	assert_eq "a bundle in a missing directory: 125, one line" \
		"125 sandbox-run: export: $SR_OUT/no-such-dir-$SR_AS/bundle: No such file or directory" \
		"$rc $errout"
	rm -rf "$bundle"
	# An empty directory another user made first: theirs to change before
	# the runtime (root, often) reads it. Root's for the user's round.
	local other="$SR_OUT/bundle-$SR_AS-other"
	rm -rf "$other" && mkdir -m 0777 "$other"
	if [ "$SR_AS" = root ]; then chown "$SR_TEST_USER" "$other"; fi
	sr export --oci "$other" --net none "$SR_TMP/examples/echo-agent"
	assert_eq "export --oci into another user's empty directory: 125" 125 "$rc"
	assert_match "and says whose it is" 'belongs to uid [0-9]+, not to you' "$errout"
	check "nothing written there" test -z "$(ls -A "$other")"
	rm -rf "$other"
	sr export --oci "$SR_OUT/bundle-$SR_AS-egress" --strict "$SR_TMP/examples/echo-agent"
	assert_eq "--strict with --net egress: 125 (no egress policy in a bundle)" 125 "$rc"
	sr export --oci "$SR_OUT/bundle-$SR_AS-egress2" "$SR_TMP/examples/echo-agent"
	assert_match "--net egress: a warning says the bundle's network is lo alone" \
		'network is lo alone' "$errout"
	rm -rf "$SR_OUT/bundle-$SR_AS-egress" "$SR_OUT/bundle-$SR_AS-egress2"
	sr export "$SR_TMP/examples/echo-agent"
	assert_eq "export without --oci or --k8s: 125" 125 "$rc"
	assert_eq "saying so, once" \
		"sandbox-run: export: needs one of --oci DIR or --k8s (see export --help)" "$errout"
	sr export --k8s --oci "$SR_OUT/bundle-$SR_AS-both" "$SR_TMP/examples/echo-agent"
	assert_eq "with both: 125, saying both were given, nothing made" \
		"125 sandbox-run: export: --oci DIR or --k8s, not both (see export --help) no" \
		"$rc $errout $([ -e "$SR_OUT/bundle-$SR_AS-both" ] && echo yes || echo no)"
	t_bundle_failed
}

# A bundle that fails halfway (here: a full disk) is taken out again: it
# stayed, half made, and the next export there was "not empty".
t_bundle_failed() {
	local d="$SR_TMP/fullfs-$SR_AS"
	if [ "$(id -u)" != 0 ]; then
		skip "a bundle on a full disk" "needs root for a tmpfs"
		return
	fi
	mkdir -p "$d"
	out=$(SR_AS=$SR_AS SR_TEST_USER=$SR_TEST_USER SR_TMP=$SR_TMP unshare -m bash -c \
		"$(declare -f as_user)"'
		d=$1; shift
		mount -t tmpfs -o size=1m full "$d" && chmod 1777 "$d" || exit 99
		head -c 900k /dev/zero >"$d/fill"
		mkdir "$d/empty" && chmod 0777 "$d/empty"
		[ "$SR_AS" = root ] || chown "$SR_TEST_USER" "$d/empty"
		for b in new empty; do
			as_user "$@" --oci "$d/$b" "$SR_TMP/examples/echo-agent" 2>/dev/null
			echo "$b $? $(cd "$d" && ls -A "$b" 2>&1 | tr "\n" " ")"
		done' export_full "$d" "$SR" export -q --net none 2>&1)
	assert_eq "a bundle that failed: 125, nothing of it left (a new DIR gone, an empty one empty)" \
		"$(printf 'new 125 ls: cannot access %s: No such file or directory \nempty 125 ' "'new'")" "$out"
	rmdir "$d"
	# Interrupted (here: a SIGTERM already pending, blocked, when it
	# starts, which it takes once the bundle is taken out again; its
	# caller keeps it blocked, so it exits 125 instead of by the signal).
	rc=0
	errout=$(as_user python3 -c 'import os, signal, sys
signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGTERM})
os.kill(os.getpid(), signal.SIGTERM)
os.execv(sys.argv[1], sys.argv[1:])' "$SR" export -q --net none --oci "$SR_OUT/interrupted-$SR_AS" \
		"$SR_TMP/examples/echo-agent" 2>&1) || rc=$?
	assert_eq "an export interrupted: nothing of it left" \
		"125 sandbox-run: export: interrupted, none" \
		"$rc $errout, $(test -e "$SR_OUT/interrupted-$SR_AS" && echo left || echo none)"
}

# An agent's directory its author may craft (root exports a user's
# agent): a sparse file, a file of 21 names, a set-uid root file and one
# with file capabilities (root's round), a FIFO. The bundle costs what the
# tree does, not more: the sparse file's holes stay holes (they were
# written as zeros), the 21 names are one file (21 copies), and it holds
# no more than the disk limit, which the runtime's copy into the
# workspace's tmpfs must fit (crun writes each name whole, holes as
# zeros): a 1 GB sparse file of no data was a bundle of 1 GB that could
# never start. Under crun, its files give nothing: uid 1000, no capability.
t_bundle_crafted() {
	local agent="$SR_TMP/crafted-agent-$SR_AS" ws why i
	rm -rf "$agent" && mkdir -p "$agent/sub"
	printf '#!/bin/sh\n./suid -u; ./capped caps | grep -E "^(CapPrm|CapEff)"; ls sub | wc -l\n' >"$agent/agent"
	chmod 0755 "$agent/agent"
	cp /usr/bin/id "$agent/suid" && chmod 4755 "$agent/suid"
	cp "$PROBE_DIR/sr-probe" "$agent/capped"
	[ "$SR_AS" = root ] && setcap cap_setuid,cap_sys_admin+ep "$agent/capped"
	truncate -s 16M "$agent/sparse" && printf x | dd of="$agent/sparse" bs=1 seek=8M conv=notrunc status=none
	head -c 1M /dev/urandom >"$agent/one"
	for i in $(seq 20); do ln "$agent/one" "$agent/sub/l$i"; done
	mkfifo "$agent/fifo"
	chmod -R a+rX "$agent"
	export_oci crafted --net none --disk 64M "$agent"
	assert_eq "export --oci of the crafted tree (--disk 64M): status 0" 0 "$rc"
	ws="$bundle/rootfs/workspace"
	assert_eq "the sparse file: its size, its data, still sparse" "16777216 x yes" \
		"$(stat -c %s "$ws/sparse") $(dd if="$ws/sparse" bs=1 skip=8M count=1 status=none) $([ "$(du -k "$ws/sparse" | cut -f1)" -lt 1024 ] && echo yes || du -k "$ws/sparse")"
	assert_eq "the file of 21 names: one file of 21 names, as in the tree" 21 "$(stat -c %h "$ws/sub/l7")"
	assert_eq "no set-id bit, no capability, no FIFO" "755  none" \
		"$(stat -c %a "$ws/suid") $(getcap "$ws/capped") $([ -e "$ws/fifo" ] && echo fifo || echo none)"
	why=$(crun_missing)
	if [ -n "$why" ]; then
		skip "the crafted tree under crun" "$why"
	else
		crun_run "$bundle"
		assert_eq "under crun: the set-uid file runs as 1000, the capped one has nothing, all 20 names" \
			"$(printf '1000\nCapPrm: 0000000000000000\nCapEff: 0000000000000000\n20')" "$out"
	fi
	rm -rf "$bundle"
	truncate -s 1G "$agent/big"
	export_oci crafted-big --net none --disk 64M "$agent"
	assert_eq "a 1 GB sparse file with --disk 64M: refused (125)" 125 "$rc"
	assert_match "saying why" "big: the agent's files are more than 64M, the sandbox's disk limit" "$errout"
	check "and nothing of the bundle left" test ! -e "$bundle"
	rm -rf "$bundle" "$agent"
}

# --bind targets in the workspace: over a directory and a file the
# agent's tree has too, as a run mounts them, and in a directory it has
# not. Export failed, "mkdir .../data: File exists"; a root caller's
# bundle did not start under crun, "chown `workspace/new`: Invalid
# argument" (the mount points were root's, no id of the container's);
# and no bundle with a read-only file bind did, "open mount target
# `/workspace/conf`: Not a directory" (crun takes "rro" for a directory's).
t_bundle_bind_over() {
	local agent="$SR_TMP/bind-agent-$SR_AS" host="$SR_TMP/bind-host-$SR_AS"
	rm -rf "$agent" "$host" && mkdir -p "$agent/data" "$host/dir"
	printf '#!/bin/sh\ncat /workspace/data/f /workspace/new/sub/f /workspace/conf\n(echo x >/workspace/conf) 2>/dev/null && echo written || echo read-only\n' >"$agent/agent"
	chmod 0755 "$agent/agent"
	echo agent >"$agent/data/f" && echo agent >"$agent/conf"
	echo host >"$host/dir/f" && echo host >"$host/conf"
	chmod -R a+rX "$agent" "$host"
	export_oci bindover --net none --ro-bind "$host/dir" /workspace/data \
		--ro-bind "$host/conf" /workspace/conf "$agent"
	assert_eq "export --oci with binds over the agent's directory and file: status 0" 0 "$rc"
	check "the directory's files copied beneath the mount point" test -f "$bundle/rootfs/workspace/data/f"
	rm -rf "$bundle"
	export_oci bindnew --net none --ro-bind "$host/dir" /workspace/data --ro-bind "$host/dir" /workspace/new/sub \
		--ro-bind "$host/conf" /workspace/conf "$agent"
	assert_eq "mount points the sandbox user's, as the copy is" \
		"$(stat -c %u "$bundle/rootfs/workspace/agent") $(stat -c %u "$bundle/rootfs/workspace/agent")" \
		"$(stat -c %u "$bundle/rootfs/workspace/data") $(stat -c %u "$bundle/rootfs/workspace/new")"
	if [ -z "$(crun_missing)" ]; then
		crun_run "$bundle"
		assert_eq "under crun: the binds over the agent's directory and file and in a new one, as in a run; the file read-only" \
			"$(printf 'host\nhost\nhost\nread-only')" "$out"
	fi
	rm -rf "$bundle" "$agent" "$host"
}

# Where the runtime has no cgroup of its own (crun_run's
# --cgroup-manager=disabled, as rootless crun on a host that delegates
# none: it drops linux.resources without a word), the bundle holds
# --memory and --pids as a run's rlimit strategy does: an agent forked
# 100 processes and touched 200 MB under --memory 64M --pids 20. The
# round's user keeps 30 processes on the host meanwhile (the user round:
# the container user's host id): the limit counts the container's tasks
# alone, as a run's and pids.max do. Set before the runtime made the
# user namespace (process.rlimits, crun), it counted those 30 too, and
# the container never started.
t_bundle_rlimits() {
	local agent="$SR_TMP/rlimit-agent-$SR_AS" sleepers=() i forked
	if [ -n "$(crun_missing)" ]; then
		skip "--memory and --pids under crun without a cgroup" "$(crun_missing)"
		return
	fi
	rm -rf "$agent" && mkdir -p "$agent"
	cat >"$agent/agent" <<-'EOF'
		#!/usr/bin/python3
		import os, time
		kids = []
		for i in range(100):
		    try:
		        pid = os.fork()
		    except OSError:
		        break
		    if pid == 0:
		        time.sleep(60)
		        os._exit(0)
		    kids.append(pid)
		print("forked", len(kids))
		for pid in kids:
		    os.kill(pid, 9)
		    os.waitpid(pid, 0)
		try:
		    b = b"x" * (200 << 20)
		    print("200M: touched")
		except MemoryError:
		    print("200M: MemoryError")
	EOF
	chmod -R a+rX "$agent" && chmod 0755 "$agent/agent"
	export_oci rlimits --net none --memory 64M --pids 20 "$agent"
	for i in $(seq 30); do
		(as_user_exec sleep 300) </dev/null >/dev/null 2>&1 &
		sleepers+=("$!")
	done
	SR_BG_PIDS="${SR_BG_PIDS:-} ${sleepers[*]}"
	crun_run "$bundle"
	kill "${sleepers[@]}" 2>/dev/null
	wait "${sleepers[@]}" 2>/dev/null
	forked=$(sed -n 's/^forked //p' <<<"$out")
	check "--pids 20 without a cgroup: the agent's forks bounded, its host user's 30 processes not counted (forked ${forked:-none})" \
		test "${forked:-0}" -ge 10 -a "${forked:-100}" -lt 20
	assert_match "--memory 64M without a cgroup: 200 MB refused (RLIMIT_DATA)" '200M: MemoryError' "$out"
	rm -rf "$bundle" "$agent"
}

# The bundle's boot id under crun is read-only: crun's read-only /proc/sys
# came with a writable copy of its bind, and the agent whose file it is
# (the user round: the exporter is the container's user) made it 0644 and
# grew it on the host past --disk.
t_bundle_boot_id() {
	local before
	if [ -n "$(crun_missing)" ]; then
		skip "the boot id read-only under crun" "$(crun_missing)"
		return
	fi
	export_oci bootid --net none --disk 1M -- sh -c 'f=/proc/sys/kernel/random/boot_id
		chmod 644 $f 2>/dev/null && echo chmod
		head -c 5000000 /dev/zero 2>/dev/null >>$f && echo grown
		cat $f'
	before=$(cat "$bundle/boot_id"; stat -c '%a %s' "$bundle/boot_id")
	crun_run "$bundle"
	assert_eq "under crun: the boot id neither chmod'ed nor written, still the bundle's" \
		"$(head -1 "$bundle/boot_id")" "$out"
	assert_eq "the bundle's boot_id on the host unchanged" "$before" \
		"$(cat "$bundle/boot_id"; stat -c '%a %s' "$bundle/boot_id")"
	rm -rf "$bundle"
}

# /dev under crun is read-only, as a run's: nothing made there, /dev/ptmx
# not replaced by a link of the agent's; its devices, /dev/shm and the
# devpts work. The same lines as a run's.
t_bundle_dev() {
	if [ -n "$(crun_missing)" ]; then
		skip "/dev read-only under crun" "$(crun_missing)"
		return
	fi
	same_as_run dev -- sh -c 'touch /dev/x 2>/dev/null && echo made
		ln -sf /tmp/p /dev/ptmx 2>/dev/null && echo replaced
		mkdir /dev/d 2>/dev/null && echo mkdir
		echo x >/dev/null && echo null
		echo x >/dev/shm/f && echo shm
		test -c /dev/pts/ptmx && echo pts'
	assert_eq "/dev under crun: nothing made or replaced; null, /dev/shm, devpts work" \
		"null shm pts" "$(echo $out)"
}

# k8s_check JSONFILE PYTHON: runs PYTHON with `d`, the parsed objects.
k8s_check() {
	"$PY" -c "import json, sys
d = json.load(open(sys.argv[1]))
items = {i['kind']: i for i in d['items']}
$2" "$1"
}

t_k8s() {
	local env_file="$SR_TMP/k8s-$SR_AS.env" f="$SR_OUT/k8s-$SR_AS.json" prof="$SR_OUT/prof-$SR_AS.json"
	if [ -z "$PY" ]; then
		skip "export --k8s" "no python3 to parse the output"
		return
	fi
	printf 'API_KEY=sk-secret-value-1234\nORG=also-secret-5678\n' >"$env_file"
	chmod 600 "$env_file"
	own "$env_file"
	SR_EXPORT_TOKEN=tok-secret-9999 sr export --k8s --image registry.example/agent:1 \
		--name agent-1 --namespace agents --runtime-class gvisor --secret EXTRA_TOKEN \
		--env-file "$env_file" --pass-env SR_EXPORT_TOKEN \
		--env MODE=fast --memory 1G --cpus 1.5 --timeout 90s --disk 2G \
		--allow 203.0.113.9:443 --allow 10.0.5.0/24 --allow api.example.com \
		--deny 10.0.5.7 --seccomp-profile "$prof" "$SR_TMP/examples/node-agent"
	assert_eq "export --k8s: status 0" 0 "$rc"
	printf '%s\n' "$out" >"$f"
	check "the output parses (JSON, which is YAML)" k8s_check "$f" "assert d['kind'] == 'List'"
	check "a Job and a NetworkPolicy" k8s_check "$f" \
		"assert sorted(items) == ['Job', 'NetworkPolicy'], sorted(items)"
	check "Job: one try, the timeout as its deadline" k8s_check "$f" "
j = items['Job']['spec']
assert j['backoffLimit'] == 0 and j['activeDeadlineSeconds'] == 90, j"
	check "resources: requests are the limits" k8s_check "$f" "
c = items['Job']['spec']['template']['spec']['containers'][0]
want = {'memory': '1Gi', 'cpu': '1500m', 'ephemeral-storage': '2Gi'}
assert c['resources'] == {'requests': want, 'limits': want}, c['resources']"
	check "securityContext: non-root 1000, no escalation, read-only root, no capability, Localhost seccomp" k8s_check "$f" "
p = items['Job']['spec']['template']['spec']
s = p['containers'][0]['securityContext']
assert s['runAsNonRoot'] is True and s['runAsUser'] == 1000 and s['runAsGroup'] == 1000
assert s['allowPrivilegeEscalation'] is False and s['readOnlyRootFilesystem'] is True
assert s['capabilities'] == {'drop': ['ALL']}, s['capabilities']
assert s['seccompProfile'] == {'type': 'Localhost', 'localhostProfile': 'prof-$SR_AS.json'}
assert p['hostUsers'] is False and p['automountServiceAccountToken'] is False
assert p['runtimeClassName'] == 'gvisor'
assert p['initContainers'][0]['securityContext'] == s"
	check "the agent's command, detected as a run detects it" k8s_check "$f" "
c = items['Job']['spec']['template']['spec']['containers'][0]
assert c['command'] == ['node', '/workspace/index.js'] and c['workingDir'] == '/workspace', c"
	check "NetworkPolicy: egress only, DNS, the allowed CIDRs, the denied one excepted" k8s_check "$f" "
s = items['NetworkPolicy']['spec']
assert s['policyTypes'] == ['Ingress', 'Egress'] and s['ingress'] == []
e = s['egress']
assert e[0]['ports'] == [{'protocol': 'UDP', 'port': 53}, {'protocol': 'TCP', 'port': 53}]
assert e[1] == {'to': [{'ipBlock': {'cidr': '203.0.113.9/32'}}], 'ports': [{'protocol': 'TCP', 'port': 443}, {'protocol': 'UDP', 'port': 443}]}, e[1]
assert e[2] == {'to': [{'ipBlock': {'cidr': '10.0.5.0/24', 'except': ['10.0.5.7/32']}}]}, e[2]
assert len(e) == 3
assert s['podSelector']['matchLabels'] == items['Job']['spec']['template']['metadata']['labels']"
	assert_match "a host name is said to be refused in the cluster" 'api.example.com: a NetworkPolicy names no hosts' "$errout"
	check "secrets: Secret references, by name" k8s_check "$f" "
env = {e['name']: e for e in items['Job']['spec']['template']['spec']['containers'][0]['env']}
for k in ['API_KEY', 'ORG', 'EXTRA_TOKEN', 'SR_EXPORT_TOKEN']:
    assert env[k] == {'name': k, 'valueFrom': {'secretKeyRef': {'name': 'agent-1-secrets', 'key': k}}}, env[k]
assert env['MODE'] == {'name': 'MODE', 'value': 'fast'}"
	check "no secret value anywhere in the output" sh -c "! grep -e sk-secret-value -e also-secret '$f'"
	check "--pass-env's value is not printed either" sh -c "! grep -e tok-secret '$f'"
	check "the seccomp profile written is the bundle's" sh -c "
		'$SR' export -q --net none --oci '$SR_OUT/bundle-$SR_AS-prof' -- true &&
		'$PY' -c 'import json, sys; a = json.load(open(sys.argv[1])); b = json.load(open(sys.argv[2]))[\"linux\"][\"seccomp\"]; assert a == b' '$prof' '$SR_OUT/bundle-$SR_AS-prof/config.json'"
	rm -rf "$SR_OUT/bundle-$SR_AS-prof"

	sr export --k8s --image img --net none -- sh -c 'echo hi'
	printf '%s\n' "$out" >"$f"
	check "--net none: no egress at all, not even DNS" k8s_check "$f" "
assert items['NetworkPolicy']['spec']['egress'] == []
assert items['Job']['spec']['template']['spec']['containers'][0]['command'] == ['sh', '-c', 'echo hi']"
	sr export --k8s --image img --deny 10.9.9.9 --deny 2001:db8::/32 "$SR_TMP/examples/echo-agent"
	printf '%s\n' "$out" >"$f"
	check "default egress: every address but the default refusals and --deny" k8s_check "$f" "
to = items['NetworkPolicy']['spec']['egress'][1]['to']
v4, v6 = to[0]['ipBlock'], to[1]['ipBlock']
assert v4['cidr'] == '0.0.0.0/0' and v6['cidr'] == '::/0'
for r in ['10.0.0.0/8', '172.16.0.0/12', '192.168.0.0/16', '169.254.0.0/16', '100.64.0.0/10', '127.0.0.0/8', '224.0.0.0/4']:
    assert r in v4['except'], r
for r in ['fc00::/7', 'fe80::/10', 'ff00::/8', '2001:db8::/32']:
    assert r in v6['except'], r
assert '10.9.9.9/32' not in v4['except']  # inside 10/8 already: nothing to add
assert items['Job']['metadata']['name'] == 'echo-agent'"
	sr export --k8s --image img --agent-sandbox --warm 2 "$SR_TMP/examples/echo-agent"
	printf '%s\n' "$out" >"$f"
	check "--agent-sandbox: SandboxTemplate, SandboxWarmPool, SandboxClaim" k8s_check "$f" "
assert [i['kind'] for i in d['items']] == ['SandboxTemplate', 'SandboxWarmPool', 'SandboxClaim']
for i in d['items']:
    assert i['apiVersion'] == 'extensions.agents.x-k8s.io/v1beta1'
t, p, c = d['items']
assert t['spec']['podTemplate']['spec']['containers'][0]['securityContext']['readOnlyRootFilesystem'] is True
assert t['spec']['networkPolicy']['egress'][1]['to'][0]['ipBlock']['cidr'] == '0.0.0.0/0'
assert p['spec'] == {'replicas': 2, 'sandboxTemplateRef': {'name': 'echo-agent'}}
assert c['spec']['warmPoolRef'] == {'name': 'echo-agent'}
assert c['spec']['lifecycle']['shutdownPolicy'] == 'Delete'"

	# Each name once (a List with two is refused by server-side apply), the
	# passed or set one over the default, as a run's environment has it.
	sr export --k8s --image img --pass-env HOME --env LANG=C "$SR_TMP/examples/echo-agent"
	printf '%s\n' "$out" >"$f"
	check "--pass-env HOME, --env LANG: one entry each, the passed and the set one" k8s_check "$f" "
env = items['Job']['spec']['template']['spec']['containers'][0]['env']
names = [e['name'] for e in env]
assert len(names) == len(set(names)), names
e = {x['name']: x for x in env}
assert e['HOME'] == {'name': 'HOME', 'valueFrom': {'secretKeyRef': {'name': 'echo-agent-secrets', 'key': 'HOME'}}}, e['HOME']
assert e['LANG'] == {'name': 'LANG', 'value': 'C'}, e['LANG']
assert names[0] == 'PATH' and e['PATH']['value'].startswith('/usr/local/sbin'), env"

	sr export --k8s --image img --deny bad.example "$SR_TMP/examples/echo-agent"
	assert_eq "--deny by name: 125 (a NetworkPolicy cannot refuse it)" 125 "$rc"
	sr export --k8s "$SR_TMP/examples/echo-agent"
	assert_eq "--k8s without --image: 125" 125 "$rc"
	assert_match "and says what to give" 'needs --image' "$errout"
	rm -f "$f" "$prof" "$env_file"
}

t_nothing_left() {
	if [ -n "$CRUN" ] && [ -z "$(crun_missing)" ]; then
		crun_cmd list --quiet
		check "no container of the test's left in crun" test -z "$("${cmd[@]}" 2>/dev/null)"
	fi
	check "no bundle left" test -z "$(ls -d "$SR_OUT"/bundle-* 2>/dev/null)"
}

for_each_user t_examples t_seccomp t_limits t_bundle t_bundle_crafted t_bundle_bind_over \
	t_bundle_rlimits t_bundle_boot_id t_bundle_dev t_k8s t_nothing_left
done_testing
