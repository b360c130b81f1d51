#!/usr/bin/env python3
"""How long a network helper takes from its start until the network is up,
alone, on this machine.

    helper-ready.py HELPER RUNS      (run by bench/net.sh; prints a median in ms)

Run it as uid 0 of a user namespace (bench/net.sh uses `unshare --user
--map-root-user` as an unprivileged user), as sandbox-run runs the helper:
each run makes a network namespace with `unshare --net`, starts the helper
on it with sandbox-run's options (src/net.c), the namespace as an fd, an
empty environment and stdin on /dev/null, and waits for what sandbox-run
waits for: slirp4netns's ready fd, pasta's default route (a route
notification). Nothing else runs meanwhile. No traffic is sent.
"""
import ctypes
import os
import select
import socket
import statistics
import struct
import subprocess
import sys
import time

SLIRP4NETNS = ["slirp4netns", "--configure", "--mtu=65520", "--disable-host-loopback",
               "--enable-sandbox", "--enable-seccomp"]
PASTA = ["pasta", "--config-net", "--foreground", "--quiet", "--ipv4-only", "--tcp-ports=none",
         "--udp-ports=none", "--tcp-ns=none", "--udp-ns=none", "--ns-ifname=eth0",
         "--address=10.0.2.100", "--netmask=24", "--gateway=10.0.2.2",
         "--dns-forward=10.0.2.3", "--no-map-gw", "--no-dhcp", "--mtu=65520"]
TIMEOUT = 5.0  # sandbox-run's READY_TIMEOUT_MS

CLONE_NEWNET = 0x40000000
RTMGRP_IPV4_ROUTE = 0x40
RTM_NEWROUTE = 24
RT_TABLE_MAIN = 254
libc = ctypes.CDLL(None, use_errno=True)


def setns(fd):
    if libc.setns(fd, CLONE_NEWNET) != 0:
        e = ctypes.get_errno()
        raise OSError(e, os.strerror(e))


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


def route_events(fd):
    """A netlink socket in fd's namespace, subscribed to its IPv4 routes.

    Made by a child, which setns() into the namespace: this process could
    not come back to its own (the host's) without privilege.
    """
    a, b = socket.socketpair(socket.AF_UNIX, socket.SOCK_DGRAM)
    pid = os.fork()
    if pid == 0:
        try:
            setns(fd)
            s = socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, socket.NETLINK_ROUTE)
            s.bind((0, RTMGRP_IPV4_ROUTE))
            socket.send_fds(b, [b"s"], [s.fileno()])
            os._exit(0)
        except BaseException as e:
            print(f"helper-ready: netlink socket in the namespace: {e}", file=sys.stderr)
            os._exit(1)
    os.waitpid(pid, 0)
    b.close()
    a.setblocking(False)
    try:
        _, fds, _, _ = socket.recv_fds(a, 1, 1)
    except BlockingIOError:
        fds = []
    a.close()
    if not fds:
        sys.exit("helper-ready: no netlink socket in the namespace")
    return socket.socket(fileno=fds[0])


def default_route_added(data):
    while len(data) >= 28:
        length, kind = struct.unpack_from("=IH", data)
        # struct rtmsg after the 16-byte header: family, dst_len, src_len, tos, table, ...
        _, dst_len, _, _, table = struct.unpack_from("=BBBBB", data, 16)
        if kind == RTM_NEWROUTE and dst_len == 0 and table == RT_TABLE_MAIN:
            return True
        data = data[(length + 3) & ~3:] if length else b""
    return False


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


def pasta(fd):
    events = route_events(fd)
    p = gone = None
    try:
        t0 = time.monotonic()
        p = start(PASTA + [f"--netns=/proc/self/fd/{fd}"], (fd,))
        gone = os.pidfd_open(p.pid)  # readable once pasta has exited
        while True:
            ready = select.select([events, gone], [], [], TIMEOUT)[0]
            if gone in ready:
                sys.exit(f"helper-ready: pasta exited with {p.wait()}")
            if not ready:
                sys.exit("helper-ready: pasta added no default route in time")
            if default_route_added(events.recv(65536)):
                return time.monotonic() - t0
    finally:
        events.close()
        if gone is not None:
            os.close(gone)
        if p:
            p.kill()
            p.wait()


def main():
    helper, runs = sys.argv[1], int(sys.argv[2])
    measure = {"slirp4netns": slirp4netns, "pasta": pasta}[helper]
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
