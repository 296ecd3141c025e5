"""Outputs: checked before any work (a real test write), then written whole or not at all.

Whether a folder exists says nothing about whether it can be written: a read-only
file system, an immutable folder (``chattr +i``) or one without write permission
exists all the same, and the write would fail only after the whole fit. So each
check writes for real — a hidden temporary file in the folder, removed at once; an
existing file is opened for writing, which changes nothing — and a failure is an
:class:`~isbetter.InputError` naming the argument (or flag), with the reason the
system gave.

A check cannot promise that the disk still has room when the result is written.
So every output (report, page, plot) is written by :func:`replacing`: into a hidden
temporary file beside the target, flushed to disk, then renamed over it — a reader
(or the next run) sees the earlier file or the new one, never part of one; if the
write fails (a full disk), the earlier file is left as it was and nothing partial
remains.
"""

from __future__ import annotations

import contextlib
import errno
import os
import secrets
import stat
import tempfile
from collections.abc import Iterator
from pathlib import Path

from isbetter.core.errors import InputError

__all__ = [
    "atomic_file",
    "check_writable_file",
    "check_writable_folder",
    "fsync_dir",
    "replacing",
    "write_bytes",
    "write_text",
]

#: bytes per write of :func:`write_text`
CHUNK = 1 << 16


def check_writable_file(path: str | os.PathLike[str], name: str) -> Path:
    """Check that the file `path` can be written; `name` (argument or flag) heads the message.

    The folder must exist and take new files (a file is written beside the target and
    renamed over it: :func:`replacing`); an existing file must open for writing too (a
    read-only or immutable file is not replaced). A device or a pipe is written in place.
    """
    p = Path(path)
    folder = p.parent  # Path("report.html").parent is Path(".")
    if not folder.is_dir():
        what = "is a file, not a folder" if folder.exists() else "does not exist"
        raise InputError(f"{name} {str(p)!r}: the folder {str(folder)!r} {what}.")
    if p.is_dir():
        raise InputError(f"{name} {str(p)!r} is a directory; give a file name.")
    where = "this file"
    try:
        if p.is_file():
            os.close(os.open(p, os.O_WRONLY))  # no O_TRUNC: the file is left as it is
        elif p.exists():  # a device or a pipe (/dev/stdout): opening it could block
            if not os.access(p, os.W_OK):
                raise PermissionError(errno.EACCES, os.strerror(errno.EACCES))
        if p.is_file() or not p.exists():
            where = f"the folder {str(folder)!r}"
            _test_write(folder)
    except OSError as exc:
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


@contextlib.contextmanager
def replacing(path: str | os.PathLike[str], name: str) -> Iterator[Path]:
    """Yield a temporary file beside `path` to write; when the block succeeds, it becomes `path`.

    As :func:`atomic_file`; a failure to write is an :class:`~isbetter.InputError`
    headed by `name` (argument or flag) that says the earlier file was kept. A `path`
    that is not a regular file (a device or a pipe, such as ``/dev/stdout``) cannot be
    replaced: it is yielded itself and written in place.
    """
    target = Path(path)
    if target.exists() and not target.is_file():
        yield target
        return
    try:
        with atomic_file(target, suffix=f".tmp{target.suffix}") as tmp:
            yield tmp
    except OSError as exc:
        kept = "the earlier file is left as it was" if target.exists() else "nothing was written"
        raise InputError(
            f"{name} {str(target)!r}: cannot write it ({_reason(exc)}); {kept}."
        ) from exc


@contextlib.contextmanager
def atomic_file(path: Path, suffix: str = ".tmp") -> Iterator[Path]:
    """Yield a new temporary file beside `path`; when the block succeeds, it replaces `path`.

    The temporary file (hidden, ``.<name>.<random><suffix>``; :func:`replacing` ends
    it with `path`'s extension, so that e.g. matplotlib picks the format) is flushed
    to disk (``fsync``) and renamed over `path` (:func:`os.replace`, atomic): a
    reader sees the earlier file or the new one, never part of one. If the block, the
    flush or the rename fails, the temporary file is removed, `path` is left as it
    was and the error propagates. A symbolic link keeps pointing to the new file; an
    existing file keeps its permissions.
    """
    real = Path(os.path.realpath(path))  # a link: replace the file it points to
    tmp = real.parent / f".{real.name}.{secrets.token_hex(6)}{suffix}"
    # O_EXCL: a new file of our own; mode 0o666 less the umask, as a plain open gives
    os.close(os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666))
    try:
        yield tmp
        fd = os.open(tmp, os.O_WRONLY)
        try:
            os.fsync(fd)  # on disk before the rename, so a crash leaves one whole file
        finally:
            os.close(fd)
        with contextlib.suppress(OSError):  # the earlier file's permissions
            os.chmod(tmp, stat.S_IMODE(real.stat().st_mode))
        os.replace(tmp, real)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    fsync_dir(real.parent)


def write_bytes(path: Path, data: bytes) -> None:
    """Write `data` to the file `path` (already open-able: a temporary or a device), in chunks."""
    fd = os.open(path, os.O_WRONLY | os.O_TRUNC)
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view[:CHUNK]) :]
    finally:
        os.close(fd)


def write_text(path: str | os.PathLike[str], text: str, name: str) -> None:
    """Write `text` (UTF-8) to `path`, whole or not at all (:func:`replacing`).

    `name` (argument or flag) heads the message of a failure.
    """
    with replacing(path, name) as tmp:
        write_bytes(tmp, text.encode("utf-8"))


def fsync_dir(directory: Path) -> None:
    """Make a rename in `directory` durable where the platform allows it."""
    with contextlib.suppress(OSError, AttributeError):
        fd = os.open(directory, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
