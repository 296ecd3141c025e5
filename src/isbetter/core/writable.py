"""Check, before any work, that an output can be written: a real test write, nothing left.

Whether a folder exists says nothing about whether it can be written: a read-only
file system, an immutable folder (``chattr +i``) or one without write permission
exists all the same, and the write would fail only after the whole fit. So each
check writes for real — a hidden temporary file in the folder, removed at once; an
existing file is opened for writing, which changes nothing — and a failure is an
:class:`~isbetter.InputError` naming the argument (or flag), with the reason the
system gave.
"""

from __future__ import annotations

import errno
import os
import tempfile
from pathlib import Path

from isbetter.core.errors import InputError

__all__ = ["check_writable_file", "check_writable_folder"]


def check_writable_file(path: str | os.PathLike[str], name: str) -> Path:
    """Check that the file `path` can be written; `name` (argument or flag) heads the message.

    The folder must exist; an existing file is written in place, so it must open for
    writing, and a new one needs a folder that takes new files.
    """
    p = Path(path)
    folder = p.parent  # Path("report.html").parent is Path(".")
    if not folder.is_dir():
        what = "is a file, not a folder" if folder.exists() else "does not exist"
        raise InputError(f"{name} {str(p)!r}: the folder {str(folder)!r} {what}.")
    if p.is_dir():
        raise InputError(f"{name} {str(p)!r} is a directory; give a file name.")
    try:
        if p.is_file():
            os.close(os.open(p, os.O_WRONLY))  # no O_TRUNC: the file is left as it is
        elif p.exists():  # a device or a pipe (/dev/stdout): opening it could block
            if not os.access(p, os.W_OK):
                raise PermissionError(errno.EACCES, os.strerror(errno.EACCES))
        else:
            _test_write(folder)
    except OSError as exc:
        where = "this file" if p.exists() else f"the folder {str(folder)!r}"
        raise InputError(f"{name} {str(p)!r}: cannot write to {where} ({_reason(exc)}).") from None
    return p


def check_writable_folder(path: str | os.PathLike[str], name: str) -> Path:
    """Check that files can be written in the folder `path`, or that it can be created."""
    p = Path(path)
    existing = p
    while not existing.exists() and existing != existing.parent:
        existing = existing.parent  # the folder is created below the nearest that exists
    if not existing.is_dir():
        where = "" if existing == p else f": {str(existing)!r}"
        raise InputError(f"{name} {str(p)!r}{where} is a file, not a folder.")
    try:
        _test_write(existing)
    except OSError as exc:
        where = "this folder" if existing == p else f"the folder {str(existing)!r}"
        raise InputError(f"{name} {str(p)!r}: cannot write to {where} ({_reason(exc)}).") from None
    return p


def _test_write(folder: Path) -> None:
    """Create a hidden temporary file in `folder` and remove it; raise OSError if refused."""
    fd, tmp = tempfile.mkstemp(prefix=".isbetter-write-test-", suffix=".tmp", dir=folder)
    try:
        os.close(fd)
    finally:
        os.unlink(tmp)


def _reason(exc: OSError) -> str:
    """Return the system's words for a refused write, e.g. 'Read-only file system'."""
    return exc.strerror or type(exc).__name__
