#!/usr/bin/env python3
"""How long a network helper takes from its start until the network is up,
alone: the floor under --net egress's extra start-up on this machine.

    helper-ready.py HELPER RUNS      (run by bench/net.sh; prints a median in ms)

Run it as uid 0 of a user namespace (bench/net.sh uses `unshare --user
--map-root-user` as an unprivileged user): each run makes a network
namespace with `unshare --net`, starts the helper on it as sandbox-run
does (same options), and waits for what sandbox-run waits for. Nothing
else runs meanwhile. No traffic is sent.
"""
import os
import statistics
import subprocess
import sys
import time

SLIRP4NETNS = ["slirp4netns", "--configure", "--mtu=65520", "--disable-host-loopback",
               "--enable-sandbox", "--enable-seccomp"]
PASTA = ["pasta", "--config-net", "--foreground", "--quiet", "--ipv4-only", "--tcp-ports=none",
         "--udp-ports=none", "--tcp-ns=none", "--udp-ns=none", "--ns-ifname=eth0",
         "--address=10.0.2.100", "--netmask=24", "--gateway=10.0.2.2",
         "--dns-forward=10.0.2.3", "--no-map-gw", "--no-dhcp", "--mtu=65520"]


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
    sys.exit("helper-ready: unshare --net did not start")


def slirp4netns(ns):
    r, w = os.pipe()
    t0 = time.monotonic()
    p = subprocess.Popen(SLIRP4NETNS + [f"--ready-fd={w}", "--netns-type=path",
                                        f"/proc/{ns.pid}/ns/net", "eth0"],
                         pass_fds=(w,), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    os.close(w)
    ready = os.read(r, 1)
    t1 = time.monotonic()
    os.close(r)
    p.kill()
    p.wait()
    if not ready:
        sys.exit("helper-ready: slirp4netns exited before it was ready")
    return t1 - t0


def default_route(ns):
    """Whether ns's namespace has a default route (what sandbox-run waits for with pasta)."""
    with open(f"/proc/{ns.pid}/net/route") as f:
        return any(line.split()[1] == "00000000" for line in list(f)[1:])


def pasta(ns):
    # As sandbox-run does, the namespace is an fd: pasta opens the path only
    # after it has isolated itself, when /proc/PID is out of its reach.
    fd = os.open(f"/proc/{ns.pid}/ns/net", os.O_RDONLY)
    t0 = time.monotonic()
    p = subprocess.Popen(PASTA + [f"--netns=/proc/self/fd/{fd}"], pass_fds=(fd,),
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    os.close(fd)
    while not default_route(ns):
        if p.poll() is not None:
            sys.exit(f"helper-ready: pasta exited with {p.returncode}")
        time.sleep(0.0002)
    t1 = time.monotonic()
    p.kill()
    p.wait()
    return t1 - t0


def main():
    helper, runs = sys.argv[1], int(sys.argv[2])
    start = {"slirp4netns": slirp4netns, "pasta": pasta}[helper]
    times = []
    for _ in range(runs):
        ns = netns()
        try:
            times.append(start(ns))
        finally:
            ns.kill()
            ns.wait()
    print(f"{statistics.median(times) * 1e3:.2f}")


if __name__ == "__main__":
    main()
