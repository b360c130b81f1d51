#!/usr/bin/env python3
"""How long slirp4netns takes from its start until the network is up,
alone, on this machine.

    helper-ready.py slirp4netns RUNS      (run by bench/net.sh; prints a median in ms)

Run it as uid 0 of a user namespace (bench/net.sh uses `unshare --user
--map-root-user` as an unprivileged user), as sandbox-run runs the helper:
each run makes a network namespace with `unshare --net`, starts
slirp4netns on it with sandbox-run's options (slirp4netns_argv in
src/lib/net/net.c, kept in step by hand), the namespace as an fd, an empty
environment and stdin on /dev/null, and waits for what sandbox-run waits
for: its ready fd. Nothing else runs meanwhile. No traffic is sent.
(pasta is not waited for by sandbox-run: it is handed its tap once the
agent runs, so it has no such floor.)
"""
import os
import select
import statistics
import subprocess
import sys
import time

SLIRP4NETNS = ["slirp4netns", "--configure", "--mtu=65520", "--disable-host-loopback",
               "--enable-sandbox", "--enable-seccomp"]
TIMEOUT = 5.0  # sandbox-run's READY_TIMEOUT_MS


def netns():
    """A process in a new network namespace; returns it once it is there."""
    p = subprocess.Popen(["unshare", "--net", "sleep", "60"])
    mine = os.readlink("/proc/self/ns/net")
    for _ in range(500):
        try:
            if os.readlink(f"/proc/{p.pid}/ns/net") != mine:
                return p
        except OSError:
            pass
        time.sleep(0.002)
    p.kill()
    p.wait()
    sys.exit("helper-ready: unshare --net did not start")


def start(argv, fds):
    return subprocess.Popen(argv, pass_fds=fds, env={}, stdin=subprocess.DEVNULL,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def slirp4netns(fd):
    ready_r, ready_w = os.pipe()
    exit_r, exit_w = os.pipe()
    p = None
    try:
        t0 = time.monotonic()
        p = start(SLIRP4NETNS + [f"--ready-fd={ready_w}", f"--exit-fd={exit_r}",
                                 "--netns-type=path", f"/proc/self/fd/{fd}", "eth0"],
                  (ready_w, exit_r, fd))
        os.close(ready_w)
        ready_w = -1
        # A byte: ready. EOF: slirp4netns exited (it held the only write end).
        if not select.select([ready_r], [], [], TIMEOUT)[0] or not os.read(ready_r, 1):
            sys.exit("helper-ready: slirp4netns exited or was not ready in time")
        return time.monotonic() - t0
    finally:
        for f in (ready_r, ready_w, exit_r, exit_w):
            if f >= 0:
                os.close(f)
        if p:
            p.kill()
            p.wait()


def main():
    helper, runs = sys.argv[1], int(sys.argv[2])
    measure = {"slirp4netns": slirp4netns}[helper]
    times = []
    for _ in range(runs):
        ns = netns()
        try:
            fd = os.open(f"/proc/{ns.pid}/ns/net", os.O_RDONLY)
            try:
                times.append(measure(fd))
            finally:
                os.close(fd)
        finally:
            ns.kill()
            ns.wait()
    print(f"{statistics.median(times) * 1e3:.2f}")


if __name__ == "__main__":
    main()
