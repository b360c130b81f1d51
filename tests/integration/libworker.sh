# shellcheck shell=bash
# The agent's side of a stopped worker, for the suites that drive cp and
# the API's files (security/cp.sh, integration/serve.sh): source after
# libtest.sh. A worker is what PID 1 forks to move files (it runs as the
# agent's uid, so the agent can stop it); each case copies
# $SR_TMP/stopper.py into its sandbox $sb as /tmp/stopper.py.

# stopper.py MODE: stops the worker PID 1 forks for a cp
# (it runs as the agent's uid), once ("stop"), or six times for 0.45 s,
# letting it copy between ("throttle"): a copy that takes longer than a
# 2 s idle timeout, though no pause of its comes near it; or every worker
# started within 5 s ("all"), then says how many and lets them go.
cat >"$SR_TMP/stopper.py" <<'EOF'
import os, signal, sys, time
mode, me = sys.argv[1], os.getpid()
print("ready", flush=True)
def workers():
    for p in os.listdir("/proc"):
        if not p.isdigit() or int(p) in (1, me):
            continue
        try:
            st = open("/proc/%s/stat" % p).read()
        except OSError:
            continue
        comm, rest = st[st.index("(") + 1:st.rindex(")")], st[st.rindex(")") + 2:].split()
        if comm == "sandbox-run" and rest[1] == "1":
            yield int(p)
def cpu(w):
    rest = open("/proc/%d/stat" % w).read().rsplit(")", 1)[1].split()
    return int(rest[11]) + int(rest[12])
def ended(w):
    try:
        return open("/proc/%d/stat" % w).read().rsplit(")", 1)[1].split()[0] in "ZX"
    except OSError:
        return True
if mode == "all":
    # Every process of the agent's uid stopped as soon as it exists, for
    # 5 s (kill(-1) spares PID 1 and this one): the workers started
    # meanwhile, stopped before they could write anything, then let go.
    end = time.time() + 5
    while time.time() < end:
        try:
            os.kill(-1, signal.SIGSTOP)
        except ProcessLookupError:
            pass
    w = list(workers())
    for p in w:
        os.kill(p, signal.SIGCONT)
    sys.exit(print("stopped %d workers" % len(w)))
end = time.time() + 20
while time.time() < end:
    for w in workers():
        if mode == "stop":
            os.kill(w, signal.SIGSTOP)
            sys.exit(print("stopped a worker"))
        try:
            # Six pauses of 0.45 s (2.7 s in all, past the 2 s idle
            # timeout), and between two of them the worker runs until it
            # has had a tick of CPU (at most 0.3 s): no gap in the copy
            # comes near 2 s, even when a run between pauses moves
            # nothing, however busy the host.
            paused = 0
            for i in range(6):
                os.kill(w, signal.SIGSTOP)
                time.sleep(0.45)
                # A worker that had ended (a zombie PID 1 had not reaped
                # yet: a signal to it is no error) took no pause.
                if ended(w):
                    break
                paused += 1
                t0, until = cpu(w), time.time() + 0.3
                os.kill(w, signal.SIGCONT)
                while i < 5 and cpu(w) < t0 + 1 and time.time() < until:
                    time.sleep(0.002)
        except (ProcessLookupError, FileNotFoundError):
            pass
        sys.exit(print("throttled a worker, paused %d times" % paused))
print("no worker")
EOF
chmod 0644 "$SR_TMP/stopper.py"

# stopper MODE: starts it in the sandbox $sb, its output in $SR_TMP/stopper.out.
# Nothing else may run there meanwhile: an exec's process is PID 1's
# child too, named as it is until it execs.
stopper() {
	: >"$SR_TMP/stopper.out"
	(as_user_exec "$SR" exec "$sb" -- python3 /tmp/stopper.py "$1" >"$SR_TMP/stopper.out" 2>&1) &
	stopper_pid=$!
	SR_BG_PIDS="${SR_BG_PIDS:-} $stopper_pid"
	until_ok 20 grep -q ready "$SR_TMP/stopper.out"
}

# What the stopper did, once it is done ($stopper_did). Not in a $(...):
# a subshell cannot wait for it. One that found no worker is stopped here
# (its exec, our child, by pid): it would stop the next exec's process.
stopper_done() {
	until_ok 10 _stopper_gone || kill "$stopper_pid" 2>/dev/null
	wait "$stopper_pid"
	stopper_did=$(sed 1d "$SR_TMP/stopper.out")
}
_stopper_gone() { ! kill -0 "$stopper_pid" 2>/dev/null; }

# The workers PID 1 has: its children named as it is.
workers_left() {
	as_user "$SR" exec "$sb" -- sh -c 'for s in /proc/[0-9]*/stat; do cat "$s"; echo; done' |
		awk '$2 == "(sandbox-run)" && $4 == 1'
}
_no_workers() { [ -z "$(workers_left)" ]; }

# check_took_pauses WHAT: after `stopper throttle` and stopper_done, that
# the operation timed ($took, in ms) took the throttle's pauses: longer
# than the 2 s idle timeout when it had at least five (2.25 s), else at
# least its pauses (0.45 s each) when it ended before its sixth.
check_took_pauses() {
	local paused=${stopper_did##* paused }
	paused=${paused%% times}
	if [ "$paused" -ge 5 ] 2>/dev/null; then
		check "though it took longer than $1 ($took ms, $paused pauses)" \
			test "$took" -gt 2000
	else
		check "though it took its pauses ($took ms, ${paused:-no} pauses)" \
			test "$took" -gt $((${paused:-1} * 450))
	fi
}
