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

``isbetter cache info`` and ``isbetter cache clear`` show and empty it
(:func:`info`, :func:`clear`).
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import os
import platform
import shutil
import threading
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from importlib import metadata
from pathlib import Path
from typing import Any, TypeVar

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
            try:
                self.ensure_cache_path()
            except OSError:  # not writable: numba compiles without caching
                return None
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
    try:
        manifest = json.loads((entry / _MANIFEST).read_text())
    except (OSError, ValueError):
        return {}
    return manifest if isinstance(manifest, dict) else {}


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


def _write_manifest(entry: Path, groups: set[str]) -> None:
    manifest = _read_manifest(entry)
    groups = groups | set(manifest.get("groups", []))
    record = {
        "key": _build_key()[0],
        "built_with": _build_key()[1],
        "groups": sorted(groups),
        "files": _checksums(entry / _KERNELS),
    }
    tmp = entry / f"{_MANIFEST}.{os.getpid()}.tmp"
    tmp.write_text(json.dumps(record, indent=1, sort_keys=True))
    os.replace(tmp, entry / _MANIFEST)


_READY: dict[str, Any] = {}
_READY_LOCK = threading.Lock()


def compiled(group: str, build: Callable[[], T], warm_up: Callable[[T], None]) -> T:
    """Return the compiled functions of `group`, loading them from the cache when valid.

    Parameters
    ----------
    group : str
        A name for the functions (recorded in the manifest).
    build : callable
        Returns the numba functions (``numba.njit(cache=True)`` or ``numba.cfunc(...,
        cache=True)`` of functions in an ``isbetter.*`` module); called once per process.
    warm_up : callable
        Calls the dispatchers with every signature the package uses, which loads them
        from the cache or compiles and saves them.
    """
    with _READY_LOCK:
        if group in _READY:
            return _READY[group]  # type: ignore[no-any-return,unused-ignore]
        _install_locator()
        entry = _entry()
        try:
            entry.mkdir(parents=True, exist_ok=True)
            from filelock import FileLock

            lock = FileLock(str(entry / _LOCK))
        except OSError:  # no writable cache: compile in memory
            functions = build()
            warm_up(functions)
        else:
            with lock:
                _verify(entry)  # before anything is loaded
                functions = build()  # C functions compile (or load) here
                warm_up(functions)
                _write_manifest(entry, {group})
        _READY[group] = functions
        return functions


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
    """Describe the cache (nothing is created or changed)."""
    root = directory()
    entries: list[dict[str, Any]] = []
    for entry in sorted(root.glob("compiled-*")) if root.is_dir() else []:
        files = [p for p in entry.rglob("*") if p.is_file()]
        manifest = _read_manifest(entry)
        actual = _checksums(entry / _KERNELS)
        entries.append(
            {
                "key": entry.name.removeprefix("compiled-"),
                "groups": list(manifest.get("groups", [])),
                "n_files": len(files),
                "size_bytes": sum(p.stat().st_size for p in files),
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


def clear() -> CacheInfo:
    """Delete every entry of the cache; return what was there."""
    before = info()
    root = directory()
    for entry in root.glob("compiled-*") if root.is_dir() else []:
        shutil.rmtree(entry, ignore_errors=True)
    with _READY_LOCK:
        _READY.clear()
    return before
