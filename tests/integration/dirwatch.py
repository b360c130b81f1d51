"""The names created in a directory, as inotify(7) reports them: for the
racers of tests/security/changes-crafted.sh, which swap what another
process has just made there before that process uses it again."""
import ctypes
import os
import struct

IN_CREATE = 0x100

_libc = ctypes.CDLL(None, use_errno=True)


def created(d):
    """The names created in directory d from now on, one by one as they
    come. The watch is in place once this returns (it is no generator
    itself): whatever the caller then lets start is seen."""
    fd = _libc.inotify_init()
    if fd < 0 or _libc.inotify_add_watch(fd, os.fsencode(d), IN_CREATE) < 0:
        raise OSError(ctypes.get_errno(), "inotify on " + d)
    return _names(fd)


def _names(fd):
    while True:
        buf, off = os.read(fd, 65536), 0
        while off < len(buf):
            _wd, _mask, _cookie, n = struct.unpack_from("iIII", buf, off)
            name = buf[off + 16:off + 16 + n].rstrip(b"\0").decode()
            off += 16 + n
            yield name
