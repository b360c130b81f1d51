"""Builds test archives member by member, hostile ones included (absolute
paths, "..", links out of the tree, device nodes): what tar(1) refuses to
write. Used by tests/integration/cli.sh and tests/security/errors.sh."""
import io
import tarfile


def tar(path, members):
    """Writes members (from f, link, dev) to path as a .tar.gz."""
    with tarfile.open(path, "w:gz") as t:
        for info, data in members:
            t.addfile(info, io.BytesIO(data) if data is not None else None)


def f(name, data=b"x", mode=0o644):
    i = tarfile.TarInfo(name)
    i.size = len(data)
    i.mode = mode
    return (i, data)


def link(name, target, kind=tarfile.SYMTYPE):
    """A symbolic link (or, with kind, another link type)."""
    i = tarfile.TarInfo(name)
    i.type = kind
    i.linkname = target
    return (i, None)


def hardlink(name, target):
    return link(name, target, tarfile.LNKTYPE)


def dev(name, major=1, minor=3):
    i = tarfile.TarInfo(name)
    i.type = tarfile.CHRTYPE
    i.devmajor = major
    i.devminor = minor
    return (i, None)
