#!/usr/bin/env python3
# The tests' own DNS server (libnet.sh): dnsd.py ADDR ZONE LOG answers on
# ADDR:53, UDP and TCP, from ZONE, read again for every query (so that a
# test changes a name's address by rewriting it): "NAME TYPE VALUE [TTL]"
# lines, TYPE one of A, AAAA, CNAME, TXT. Every question it gets is
# appended to LOG as "NAME QTYPE": what reached the "upstream" is how a
# test knows what left the sandbox. A UDP answer over 1232 bytes is sent
# truncated (TC), as a real server would. "NAME DROP -" makes it answer
# nothing for NAME (a server that never answers); "NAME WHOLE -" sends
# NAME's UDP answers whole, whatever their size (one that ignores EDNS).
import socket, struct, sys, threading, os

addr, zone, log = sys.argv[1], sys.argv[2], sys.argv[3]
family = socket.AF_INET6 if ':' in addr else socket.AF_INET
TYPES = {'A': 1, 'CNAME': 5, 'TXT': 16, 'AAAA': 28}

def load():
    recs = []
    try:
        for line in open(zone):
            f = line.split()
            if len(f) >= 3:
                recs.append((f[0].lower().rstrip('.'), f[1], f[2], int(f[3]) if len(f) > 3 else 30))
    except OSError:
        pass
    return recs

def wire(name):
    out = b''
    for l in name.split('.'):
        if l:
            out += bytes([len(l)]) + l.encode()
    return out + b'\0'

def qname(msg, off):
    labels = []
    while msg[off]:
        l = msg[off]
        labels.append(msg[off + 1:off + 1 + l].decode('latin1'))
        off += 1 + l
    return '.'.join(labels).lower(), off + 1

def answer(msg, udp):
    qid, flags = struct.unpack('>HH', msg[:4])
    name, off = qname(msg, 12)
    qtype, qclass = struct.unpack('>HH', msg[off:off + 4])
    with open(log, 'a') as f:
        f.write('%s %d\n' % (name, qtype))
    recs = load()
    if any(r[0] == name and r[1] == 'DROP' for r in recs):
        return None
    ans = []
    cur = name
    for _ in range(8):
        cn = [r for r in recs if r[0] == cur and r[1] == 'CNAME']
        if cn and qtype != 5:
            ans.append((cur, 5, wire(cn[0][2]), cn[0][3]))
            cur = cn[0][2].lower().rstrip('.')
            continue
        break
    for r in recs:
        if r[0] != cur or TYPES.get(r[1]) != qtype:
            continue
        if r[1] == 'A':
            data = socket.inet_pton(socket.AF_INET, r[2])
        elif r[1] == 'AAAA':
            data = socket.inet_pton(socket.AF_INET6, r[2])
        elif r[1] == 'TXT':
            t = r[2].encode()
            data = b''.join(bytes([len(t[i:i + 255])]) + t[i:i + 255] for i in range(0, len(t), 255))
        else:
            data = wire(r[2])
        ans.append((cur, qtype, data, r[3]))
    known = any(r[0] == name for r in recs)
    rcode = 0 if known or ans else 3
    body = msg[12:off + 4]
    for (n, t, data, ttl) in ans:
        body += wire(n) + struct.pack('>HHIH', t, 1, ttl, len(data)) + data
    hdr = struct.pack('>HHHHHH', qid, 0x8180 | rcode, 1, len(ans), 0, 0)
    out = hdr + body
    whole = any(r[0] == name and r[1] == 'WHOLE' for r in recs)
    if udp and len(out) > 1232 and not whole:
        out = struct.pack('>HHHHHH', qid, 0x8380 | rcode, 1, 0, 0, 0) + msg[12:off + 4]
    return out

def serve_udp():
    s = socket.socket(family, socket.SOCK_DGRAM)
    s.bind((addr, 53))
    while True:
        d, a = s.recvfrom(4096)
        try:
            out = answer(d, True)
            if out is not None:
                s.sendto(out, a)
        except Exception:
            pass

def serve_tcp_conn(c):
    try:
        while True:
            n = c.recv(2)
            if len(n) < 2:
                return
            want = struct.unpack('>H', n)[0]
            d = b''
            while len(d) < want:
                k = c.recv(want - len(d))
                if not k:
                    return
                d += k
            out = answer(d, False)
            if out is None:
                continue
            c.sendall(struct.pack('>H', len(out)) + out)
    except Exception:
        pass
    finally:
        c.close()

def serve_tcp():
    s = socket.socket(family, socket.SOCK_STREAM)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind((addr, 53))
    s.listen(16)
    while True:
        c, _ = s.accept()
        threading.Thread(target=serve_tcp_conn, args=(c,), daemon=True).start()

threading.Thread(target=serve_tcp, daemon=True).start()
serve_udp()
