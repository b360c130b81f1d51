#!/usr/bin/env python3
"""memscan.py NEEDLES_FILE PID...: which needles each process holds in memory.

NEEDLES_FILE has one "NAME VALUE" a line (VALUE without blanks). Each
PID's readable mappings (/proc/PID/maps) are read through /proc/PID/mem,
which root may do for any process, a non-dumpable one too (it has
CAP_SYS_PTRACE over every user namespace). Prints one line a PID:
"PID NAME..." (the names of the needles found, "-" for none). A process
gone meanwhile prints "PID gone". The values are never printed.
"""
import sys


def regions(pid):
    with open(f"/proc/{pid}/maps") as f:
        for line in f:
            fields = line.split()
            if not fields[1].startswith("r"):
                continue
            # The kernel's pages, the same in every process; vvar is not readable through mem.
            if len(fields) > 5 and fields[5] in ("[vvar]", "[vvar_vclock]", "[vsyscall]"):
                continue
            lo, hi = (int(x, 16) for x in fields[0].split("-"))
            yield lo, hi


def scan(pid, needles):
    found = set()
    with open(f"/proc/{pid}/mem", "rb", buffering=0) as mem:
        for lo, hi in regions(pid):
            # Each region whole: a needle is never cut in two (a region of a
            # keeper is megabytes at most).
            try:
                mem.seek(lo)
                data = mem.read(hi - lo)
            except (OSError, OverflowError, ValueError):
                continue
            for name, value in needles:
                if value in data:
                    found.add(name)
    return found


def main():
    with open(sys.argv[1], "rb") as f:
        needles = [tuple(line.split()) for line in f if line.strip()]
    needles = [(n.decode(), v) for n, v in needles]
    for pid in sys.argv[2:]:
        try:
            found = scan(pid, needles)
        except (FileNotFoundError, ProcessLookupError):
            print(pid, "gone")
            continue
        print(pid, " ".join(sorted(found)) or "-")


main()
