"""isbetter's on-disk cache of compiled code, so that answers come in seconds.

The hierarchical model's log density and its samplers of the per-data-set
differences are numba-compiled functions (:mod:`isbetter.cv.hierarchical.compiled_backend`).
Compiling them costs seconds to tens of seconds; this module keeps the compiled
machine code on disk, so that only the first call on a machine pays for it.

Where
    ``$ISBETTER_CACHE_DIR`` when set, else the platform's user cache directory
    (``platformdirs.user_cache_dir("isbetter")``, e.g. ``~/.cache/isbetter`` on
    Linux). Code of isbetter is never loaded from anywhere else (numba's default,
    a ``__pycache__`` folder beside the source, is not used for isbetter's functions).
Keyed
    by everything that changes the compiled code: one folder per combination of the
    versions of isbetter, numba, llvmlite, NumPy and Python, the machine and its CPU;
    inside it numba keys each function by its signature and a checksum of its source file.
Safe
    numba writes each file atomically (a temporary file renamed into place); a lock
    file serialises compilation between processes, so two processes started at once
    with an empty cache compile once and both succeed; a manifest of SHA-256 checksums,
    checked before anything is loaded, detects a truncated or altered file, and the
    entry is then rebuilt.
Never in the way
    A damaged or unusable cache is treated as absent, and the code compiled in
    memory, with a :class:`~isbetter.CacheWarning` naming the folder and the reason:
    a folder that cannot be created or written (a read-only mount, a full disk), a
    manifest that does not parse or has fields of the wrong type, a file that fails
    to load although the manifest vouches for it (the entry is then deleted, so the
    next run rebuilds it). A complete, intact entry on a read-only mount is used as
    it is (nothing needs writing). isbetter's compiled code is never written anywhere
    else (numba's fallback, ``__pycache__`` folders in ``site-packages``, is never
    reached: without a usable cache the functions are compiled without ``cache=True``).

``isbetter cache info`` and ``isbetter cache clear`` show and empty it
(:func:`info`, :func:`clear`).
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib.util
import json
import os
import platform
import shutil
import sys
import threading
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from importlib import metadata
from pathlib import Path
from typing import Any, TypeVar

from isbetter.core.errors import CacheWarning

__all__ = ["ENV_VAR", "CacheInfo", "clear", "compiled", "directory", "info"]

#: the environment variable that moves the cache
ENV_VAR = "ISBETTER_CACHE_DIR"
_MANIFEST = "manifest.json"
_LOCK = "compile.lock"
_KERNELS = "numba"
_PACKAGES = ("isbetter", "numba", "llvmlite", "numpy")

T = TypeVar("T")


def directory() -> Path:
    """Return the cache's root directory (``$ISBETTER_CACHE_DIR`` or the user cache)."""
    chosen = os.environ.get(ENV_VAR)
    if chosen:
        return Path(chosen).expanduser().resolve()
    import platformdirs

    return Path(platformdirs.user_cache_dir("isbetter", appauthor=False))


@cache
def _build_key() -> tuple[str, dict[str, str]]:
    """Return the key of the compiled code (a short hash) and what it hashes."""
    import llvmlite.binding

    parts = {"python": platform.python_version(), "machine": platform.machine()}
    for name in _PACKAGES:
        try:
            parts[name] = metadata.version(name)
        except metadata.PackageNotFoundError:  # pragma: no cover - installed with numba
            parts[name] = "not installed"
    parts["cpu"] = llvmlite.binding.get_host_cpu_name()
    digest = hashlib.sha256(json.dumps(parts, sort_keys=True).encode()).hexdigest()
    return digest[:16], parts


def _entry() -> Path:
    """Return the folder of the current build key."""
    return directory() / f"compiled-{_build_key()[0]}"


# --------------------------------------------------------------------------- numba locator
@cache
def _source_checksum(py_file: str, depends: tuple[str, ...]) -> str:
    # the file, and the modules whose functions its kernels call (inlined by numba)
    digest = hashlib.sha256(Path(py_file).read_bytes())
    for name in depends:
        spec = importlib.util.find_spec(name)
        if spec is None or spec.origin is None:  # pragma: no cover - isbetter's own modules
            raise ImportError(f"cannot locate {name}, a dependency of {py_file}")
        digest.update(Path(spec.origin).read_bytes())
    return digest.hexdigest()


def _locator_class() -> type:
    from numba.core.caching import _CacheLocator

    class IsbetterLocator(_CacheLocator):
        """Puts the numba cache of isbetter's functions into isbetter's cache folder."""

        def __init__(self, py_func: Any, py_file: str) -> None:
            self._py_file = py_file
            # a module lists the modules its kernels call in CACHE_DEPENDS
            module_globals = getattr(py_func, "__globals__", {})
            self._depends = tuple(module_globals.get("CACHE_DEPENDS", ()))
            self._lineno = py_func.__code__.co_firstlineno
            module = py_func.__module__.replace(".", "_")
            self._path = _entry() / _KERNELS / module

        def get_cache_path(self) -> str:
            return str(self._path)

        def get_source_stamp(self) -> str:
            # the source's checksum, not its modification time: an edit recompiles,
            # a fresh checkout of the same code does not
            return _source_checksum(self._py_file, self._depends)

        def get_disambiguator(self) -> str:
            return str(self._lineno)

        @classmethod
        def from_function(cls, py_func: Any, py_file: str) -> Any:
            if not str(getattr(py_func, "__module__", "")).startswith("isbetter."):
                return None
            if not os.path.isfile(py_file):
                return None
            self = cls(py_func, py_file)
            if not self._path.is_dir():  # an existing folder may be read-only: it is read
                # an OSError here, never None: numba's next locator would write the
                # compiled code into site-packages; compiled() compiles in memory instead
                self.ensure_cache_path()
            return self

    return IsbetterLocator


_INSTALLED: list[type] = []
_INSTALL_LOCK = threading.Lock()


def _install_locator() -> None:
    """Put isbetter's locator first in numba's list (once per process)."""
    with _INSTALL_LOCK:
        if _INSTALLED:
            return
        from numba.core.caching import CacheImpl

        locator = _locator_class()
        CacheImpl._locator_classes.insert(0, locator)
        _INSTALLED.append(locator)


# --------------------------------------------------------------------------- integrity
def _checksums(root: Path) -> dict[str, str]:
    if not root.is_dir():
        return {}
    return {
        str(path.relative_to(root)): hashlib.sha256(path.read_bytes()).hexdigest()
        for path in sorted(root.rglob("*"))
        if path.is_file()
    }


def _read_manifest(entry: Path) -> dict[str, Any]:
    """Return the entry's manifest, or ``{}`` if it is missing, unreadable or malformed."""
    try:
        manifest = json.loads((entry / _MANIFEST).read_text())
    except (OSError, ValueError):
        return {}
    if not isinstance(manifest, dict):
        return {}
    files, groups = manifest.get("files"), manifest.get("groups")
    if not (
        isinstance(files, dict)
        and all(isinstance(k, str) and isinstance(v, str) for k, v in files.items())
        and isinstance(groups, list)
        and all(isinstance(g, str) for g in groups)
    ):
        return {}  # wrong-typed fields ({"files": null}): not a manifest to trust
    return manifest


def _verify(entry: Path) -> list[str]:
    """Delete every kernel file whose checksum is not the manifest's; return their names."""
    expected = _read_manifest(entry).get("files", {})
    root = entry / _KERNELS
    removed = []
    for name, checksum in _checksums(root).items():
        if expected.get(name) != checksum:
            # truncated, altered or written outside a recorded compilation: numba's
            # index and data go together, so the whole module folder is rebuilt
            removed.append(name)
    for folder in {(root / name).parent for name in removed}:
        shutil.rmtree(folder, ignore_errors=True)
    return removed


def _intact(entry: Path, group: str) -> bool:
    """Whether `entry` holds `group`, every file as its manifest records it (nothing changed)."""
    manifest = _read_manifest(entry)
    try:
        actual = _checksums(entry / _KERNELS)
    except OSError:
        return False
    return group in manifest.get("groups", []) and actual == manifest.get("files")


def _write_manifest(entry: Path, groups: set[str]) -> None:
    from isbetter.core.writable import atomic_file, write_bytes

    manifest = _read_manifest(entry)
    groups = groups | set(manifest.get("groups", []))
    record = {
        "key": _build_key()[0],
        "built_with": _build_key()[1],
        "groups": sorted(groups),
        "files": _checksums(entry / _KERNELS),
    }
    with atomic_file(entry / _MANIFEST) as tmp:
        write_bytes(tmp, json.dumps(record, indent=1, sort_keys=True).encode())


_READY: dict[str, Any] = {}
_READY_LOCK = threading.Lock()


def compiled(group: str, build: Callable[[bool], T], warm_up: Callable[[T], None]) -> T:
    """Return the compiled functions of `group`, loading them from the cache when valid.

    Parameters
    ----------
    group : str
        A name for the functions (recorded in the manifest).
    build : callable
        ``build(on_disk)`` returns the numba functions, made with ``cache=on_disk``
        (``numba.njit(cache=on_disk)`` or ``numba.cfunc(..., cache=on_disk)`` of
        functions in an ``isbetter.*`` module); called once per process, twice if the
        cache fails (then with ``on_disk=False``: compiled in memory).
    warm_up : callable
        Calls the dispatchers with every signature the package uses, which loads them
        from the cache or compiles and saves them.

    Warns
    -----
    CacheWarning
        The cache could not be used (its folder and the reason named): the functions
        were compiled in memory, for this process only.
    """
    with _READY_LOCK:
        if group in _READY:
            return _READY[group]  # type: ignore[no-any-return,unused-ignore]
        _install_locator()
        _READY[group] = functions = _load_or_compile(group, build, warm_up)
        return functions


def _load_or_compile(group: str, build: Callable[[bool], T], warm_up: Callable[[T], None]) -> T:
    """Load `group` from the cache (compiling into it if needed), else compile in memory."""
    entry = _entry()
    try:
        entry.mkdir(parents=True, exist_ok=True)
        from filelock import FileLock

        lock = FileLock(str(entry / _LOCK))
        lock.acquire()
    except OSError as exc:  # no lock, so nothing may be written (a read-only mount)
        if not _intact(entry, group):
            return _in_memory(build, warm_up, entry, exc, "cannot write to it", _ELSEWHERE)
        try:  # complete and intact: read as it is
            return _built(build, warm_up, on_disk=True)
        except Exception as failed:  # noqa: BLE001 - any failure to load: compile
            return _in_memory(build, warm_up, entry, failed, "cannot load from it", _ELSEWHERE)
    try:
        damaged = _damaged(entry)
        _verify(entry)  # before anything is loaded
        if damaged:
            warnings.warn(
                f"isbetter's cache of compiled code {str(entry)!r}: {damaged}; treated as "
                "absent, compiled again into it.",
                CacheWarning,
                stacklevel=3,
            )
        functions = _built(build, warm_up, on_disk=True)  # load, or compile and save
        _write_manifest(entry, {group})
        return functions
    except Exception as exc:  # noqa: BLE001 - a full disk, a file that does not load
        # what was written or read may be damaged: out, so the next run starts afresh
        shutil.rmtree(entry / _KERNELS, ignore_errors=True)
        with contextlib.suppress(OSError):
            (entry / _MANIFEST).unlink()
        return _in_memory(build, warm_up, entry, exc, "could not use it", _DELETED)
    finally:
        lock.release()


_ELSEWHERE = f"set {ENV_VAR} to a writable folder to keep the compiled code"
_DELETED = "its compiled code was deleted; the next run compiles into it again"


def _damaged(entry: Path) -> str:
    """Say how `entry` is damaged ("" if it is not): its manifest, or files it recorded."""
    if (entry / _MANIFEST).exists() and not _read_manifest(entry):
        return "its manifest is unreadable or malformed"
    expected = _read_manifest(entry).get("files", {})
    try:
        actual = _checksums(entry / _KERNELS)
    except OSError as exc:
        return f"a file cannot be read ({exc.strerror or exc})"
    altered = [name for name, checksum in expected.items() if actual.get(name) != checksum]
    if altered:  # truncated, altered or deleted (files it did not record are just removed)
        from isbetter.core.validate import counted

        changed = "has" if len(altered) == 1 else "have"
        return f"{counted(len(altered), 'file')} it recorded {changed} changed since"
    return ""


def _built(build: Callable[[bool], T], warm_up: Callable[[T], None], *, on_disk: bool) -> T:
    functions = build(on_disk)  # C functions compile (or load) here
    warm_up(functions)
    return functions


def _in_memory(
    build: Callable[[bool], T],
    warm_up: Callable[[T], None],
    entry: Path,
    exc: BaseException,
    what: str,
    then: str,
) -> T:
    """Compile without the cache; warn, naming the cache's folder and what went wrong."""
    reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
    warnings.warn(
        f"isbetter's cache of compiled code {str(entry)!r}: {what} "
        f"({type(exc).__name__}: {reason}); compiled in memory for this process instead "
        f"(slower to start; {then}).",
        CacheWarning,
        stacklevel=4,
    )
    return _built(build, warm_up, on_disk=False)


# --------------------------------------------------------------------------- info / clear
@dataclass(frozen=True)
class CacheInfo:
    """What the cache holds: its folder, entries (one per build key), files and bytes."""

    path: str
    current_key: str
    entries: tuple[dict[str, Any], ...]
    n_files: int
    size_bytes: int

    def __str__(self) -> str:
        from isbetter.core.validate import counted

        lines = [f"isbetter cache: {self.path} (set {ENV_VAR} to move it)"]
        if not self.entries:
            lines.append("empty")
        for e in self.entries:
            current = " (current)" if e["key"] == self.current_key else ""
            groups = ", ".join(e["groups"]) or "nothing compiled"
            state = "valid" if e["valid"] else "INVALID, rebuilt on next use"
            lines.append(
                f"compiled-{e['key']}{current}: {groups}; {counted(e['n_files'], 'file')}, "
                f"{e['size_bytes'] / 1e6:.1f} MB, {state}"
            )
        lines.append(f"total: {counted(self.n_files, 'file')}, {self.size_bytes / 1e6:.1f} MB")
        return "\n".join(lines)


def info() -> CacheInfo:
    """Describe the cache (nothing is created or changed); a damaged entry is shown invalid."""
    root = directory()
    entries: list[dict[str, Any]] = []
    for entry in sorted(root.glob("compiled-*")) if root.is_dir() else []:
        sizes = _sizes(entry)
        manifest = _read_manifest(entry)
        try:
            actual: dict[str, str] | None = _checksums(entry / _KERNELS)
        except OSError:  # unreadable: not valid
            actual = None
        entries.append(
            {
                "key": entry.name.removeprefix("compiled-"),
                "groups": list(manifest.get("groups", [])),
                "n_files": len(sizes),
                "size_bytes": sum(sizes),
                "valid": bool(manifest) and actual == manifest.get("files"),
            }
        )
    return CacheInfo(
        path=str(root),
        current_key=_build_key()[0],
        entries=tuple(entries),
        n_files=sum(e["n_files"] for e in entries),
        size_bytes=sum(e["size_bytes"] for e in entries),
    )


def _sizes(entry: Path) -> list[int]:
    """Return the sizes of the files in `entry` (a stray file of that name: itself)."""
    paths = [entry] if not entry.is_dir() else entry.rglob("*")
    sizes = []
    for path in paths:
        with contextlib.suppress(OSError):  # gone meanwhile, or unreadable
            if path.is_file():
                sizes.append(path.stat().st_size)
    return sizes


def clear() -> CacheInfo:
    """Delete every entry of the cache, damaged or not; return what was there.

    Raises
    ------
    OSError
        Something could not be deleted (a read-only mount): its path and the reason.
    """
    before = info()
    root = directory()
    failures: list[OSError] = []
    for entry in root.glob("compiled-*") if root.is_dir() else []:
        try:
            if entry.is_dir() and not entry.is_symlink():
                _remove_tree(entry, failures)
            else:
                entry.unlink()
        except OSError as exc:
            failures.append(exc)
    with _READY_LOCK:
        _READY.clear()
    if failures:
        first = failures[0]
        more = f" (and {len(failures) - 1} more)" if len(failures) > 1 else ""
        raise OSError(
            f"cannot delete {str(first.filename or root)!r}{more}: "
            f"{first.strerror or first}; the cache at {str(root)!r} is not cleared"
        )
    return before


def _remove_tree(folder: Path, failures: list[OSError]) -> None:
    """Delete `folder` and what it holds; append each failure to `failures`."""

    def failed(function: Any, path: str, error: Any) -> None:
        failures.append(error if isinstance(error, OSError) else error[1])

    if sys.version_info >= (3, 12):
        shutil.rmtree(folder, onexc=failed)
    else:  # pragma: no cover - Python 3.11
        shutil.rmtree(folder, onerror=failed)
