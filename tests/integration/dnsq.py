#!/usr/bin/env python3
# A DNS query from inside a sandbox (names.sh): dnsq.py [--tcp] SERVER NAME TYPE
# prints "rcode=N an=M tc=T" (an: the answer records; with A/AAAA, the
# addresses too), or "error=EXCEPTION" when nothing answered.
import socket, struct, sys

tcp = sys.argv[1] == '--tcp'
args = sys.argv[2:] if tcp else sys.argv[1:]
server, name, qtype = args[0], args[1], int(args[2])
q = struct.pack('>HHHHHH', 0x4242, 0x0100, 1, 0, 0, 0)
for label in name.split('.'):
    q += bytes([len(label)]) + label.encode()
q += b'\0' + struct.pack('>HH', qtype, 1)
family = socket.AF_INET6 if ':' in server else socket.AF_INET
try:
    if tcp:
        s = socket.create_connection((server, 53), 3)
        s.sendall(struct.pack('>H', len(q)) + q)
        n = struct.unpack('>H', s.recv(2, socket.MSG_WAITALL))[0]
        a = s.recv(n, socket.MSG_WAITALL)
    else:
        s = socket.socket(family, socket.SOCK_DGRAM)
        s.settimeout(3)
        s.sendto(q, (server, 53))
        a = s.recv(65535)
except OSError as e:
    print('error=%s' % type(e).__name__)
    sys.exit(0)
flags, qd, an = struct.unpack('>HHH', a[2:8])
addrs = []
off = 12
for _ in range(qd):
    while a[off]:
        off += 1 + a[off]
    off += 5
for _ in range(an):
    if a[off] & 0xc0 == 0xc0:
        off += 2
    else:
        while a[off]:
            off += 1 + a[off]
        off += 1
    t, _, _, rdlen = struct.unpack('>HHIH', a[off:off + 10])
    off += 10
    if t == 1 and rdlen == 4:
        addrs.append(socket.inet_ntop(socket.AF_INET, a[off:off + 4]))
    elif t == 28 and rdlen == 16:
        addrs.append(socket.inet_ntop(socket.AF_INET6, a[off:off + 16]))
    off += rdlen
print('rcode=%d an=%d tc=%d%s' % (flags & 0xf, an, (flags >> 9) & 1,
                                   (' ' + ' '.join(addrs)) if addrs else ''))
