# Sourced by tests/vm/rounds.sh and bench/cgroup-vm.sh, inside the test VM
# as root: starts USER's own service manager (`systemd --user`) the way
# systemd-logind's user@.service would, in user.slice/user-UID.slice/
# user@UID.service, owned by the user, with its D-Bus session bus (the
# dbus.socket unit of dbus-user-session). /run is the guest's own tmpfs.
#
#   um_start USER HOME LOG   sets um_rt (XDG_RUNTIME_DIR), um_mgr (its cgroup)
#   um_as_user CMD...        runs CMD as USER with the manager's environment
#   um_stop

um_start() {
	um_user=$1 um_home=$2
	local log=$3 uid slice
	uid=$(id -u "$um_user")
	slice=/sys/fs/cgroup/user.slice/user-$uid.slice
	um_mgr=$slice/user@$uid.service
	um_rt=/run/user/$uid
	# systemd --user refuses to run unless the host looks booted with systemd.
	mkdir -p /run/systemd/system "$um_rt" "$um_mgr" "$um_home"
	echo "+memory +cpu +pids" >/sys/fs/cgroup/cgroup.subtree_control
	echo "+memory +cpu +pids" >/sys/fs/cgroup/user.slice/cgroup.subtree_control
	echo "+memory +cpu +pids" >"$slice/cgroup.subtree_control"
	chown "$um_user" "$um_rt" "$um_home" "$um_mgr" "$um_mgr/cgroup.procs" \
		"$um_mgr/cgroup.subtree_control" "$um_mgr/cgroup.threads"
	chmod 0700 "$um_rt"
	(
		echo $BASHPID >"$um_mgr/cgroup.procs"
		exec setpriv --reuid="$um_user" --regid="$um_user" --clear-groups --inh-caps=-all -- \
			env HOME="$um_home" XDG_RUNTIME_DIR="$um_rt" /lib/systemd/systemd --user \
			--log-target=console --log-level=warning
	) >"$log" 2>&1 &
	um_pid=$!
	# The private socket first, then the session bus systemd-run needs.
	for _ in $(seq 300); do
		[ -S "$um_rt/systemd/private" ] && [ -S "$um_rt/bus" ] && return 0
		sleep 0.1
	done
	return 1
}

um_as_user() {
	setpriv --reuid="$um_user" --regid="$um_user" --clear-groups --inh-caps=-all -- \
		env HOME="$um_home" XDG_RUNTIME_DIR="$um_rt" "$@"
}

um_stop() {
	kill "$um_pid" 2>/dev/null
	wait "$um_pid" 2>/dev/null
	rm -rf "$um_rt"
}
