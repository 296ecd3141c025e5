"""What every result records so that it can be reproduced: settings, versions, the input."""

from __future__ import annotations

import hashlib
import os
import platform
from functools import cache
from importlib import metadata
from pathlib import Path
from typing import Any

__all__ = ["input_record", "input_settings", "make_settings", "signature", "versions"]

_PACKAGES = ("isbetter", "numpy", "scipy", "pandas", "pymc", "arviz")


@cache
def versions() -> dict[str, str]:
    """Versions of Python and of the packages a result depends on.

    Read from the installed distributions' metadata, so PyMC is not imported.
    """
    out = {"python": platform.python_version()}
    for name in _PACKAGES:
        try:
            out[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            out[name] = "not installed"
    return out


def make_settings(method: str, seed: int | None, **params: Any) -> dict[str, Any]:
    """Return the settings record of a result: method, seed, parameters, versions."""
    return {"method": method, "seed": seed, **params, "versions": dict(versions())}


def signature(settings: dict[str, Any]) -> str:
    """Return the one-line reproducibility signature of a settings record.

    Examples
    --------
    >>> signature({"method": "sign", "rope": 0.01, "seed": 3, "draws": 50000,
    ...            "versions": {"isbetter": "0.1.0", "pymc": "5.28.5"}})
    'method:sign|rope:0.01|draws:50000|seed:3|isbetter:0.1.0|pymc:5.28.5'
    """
    parts = [f"method:{settings.get('method')}"]
    if "rope" in settings:
        parts.append(f"rope:{settings['rope']:g}")
    if "draws" in settings:
        draws = settings["draws"]
        chains = settings.get("chains")
        parts.append(f"draws:{draws}x{chains}" if chains else f"draws:{draws}")
    parts.append(f"seed:{settings.get('seed')}")
    versions = settings.get("versions", {})
    for name in ("isbetter", "pymc"):
        if name in versions:
            parts.append(f"{name}:{versions[name]}")
    return "|".join(parts)


def input_record(frame: Any, source: Any = None, what: str = "DataFrame") -> dict[str, Any]:
    """Say what a table was read from: a name, its number of rows and a SHA-256 checksum.

    A file (`source` a path) is named by its file name and checksummed over its bytes,
    so ``sha256sum FILE`` shows the same digest; anything else is named `what` (a
    DataFrame, arrays) and checksummed over its column names and pandas' hash of
    every row, index included (:func:`pandas.util.hash_pandas_object`).

    Examples
    --------
    >>> import pandas as pd
    >>> record = input_record(pd.DataFrame({"a": [1, 2]}))
    >>> record["source"], record["rows"], len(record["sha256"])
    ('DataFrame', 2, 64)
    """
    if isinstance(source, str | os.PathLike):
        path = Path(source)
        with open(path, "rb") as fh:
            digest = hashlib.file_digest(fh, "sha256").hexdigest()
        return {"source": path.name, "rows": len(frame), "sha256": digest}
    import pandas as pd

    h = hashlib.sha256("\x1f".join(str(c) for c in frame.columns).encode())
    h.update(pd.util.hash_pandas_object(frame, index=True).to_numpy().tobytes())
    return {"source": what, "rows": len(frame), "sha256": h.hexdigest()}


def input_settings(data: Any) -> dict[str, Any]:
    """``{"input": record}`` for settings, when `data` knows what it was read from."""
    record = getattr(data, "source", None)
    return {"input": dict(record)} if record else {}
