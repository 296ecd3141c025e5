"""What every result records so that it can be reproduced: settings, versions, the input."""

from __future__ import annotations

import hashlib
import os
import platform
from functools import cache
from importlib import metadata
from pathlib import Path
from typing import Any

from isbetter.core.vocabulary import ONE_MODEL_METHODS

__all__ = [
    "input_record",
    "input_settings",
    "make_settings",
    "signature",
    "signature_method",
    "versions",
]

_PACKAGES = ("isbetter", "numpy", "scipy", "pandas", "pymc", "arviz", "nutpie", "numba")
#: the versions a signature names: the package, its model language, its sampler, its compiler
_SIGNED_PACKAGES = ("isbetter", "pymc", "nutpie", "numba")
#: how a signature names each method of a result's settings (the CLI's spelling)
_SIGNATURE_NAMES = {
    "correlated_t": "correlated-t",
    "signed_rank": "signed-rank",
    "plackett_luce": "plackett-luce",
    "f1_paired": "paired-f1",
    "f1_unpaired": "unpaired-f1",
    "f1_hierarchical": "hierarchical-f1",
    "f1_power": "power-f1",
}
#: methods of a ranking that fit one model of all the systems (no "pairwise-" prefix)
_ONE_MODEL = ONE_MODEL_METHODS


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


def signature_method(method: str, pair_method: str | None = None) -> str:
    """Return how a signature names what was done: the method, and for a ranking its route.

    A ranking (`method` ``"ranking"``, its pairs' method `pair_method`) is
    ``pairwise-<method>`` when every pair was fitted alone, else the one model of
    all the systems (``joint``, ``plackett-luce``); anything else is its method,
    spelt as on the command line.

    Examples
    --------
    >>> signature_method("ranking", "hierarchical"), signature_method("ranking", "joint")
    ('pairwise-hierarchical', 'joint')
    >>> signature_method("ranking", "f1_paired")
    'pairwise-paired-f1'
    >>> signature_method("f1_paired"), signature_method("signed_rank")
    ('paired-f1', 'signed-rank')
    """
    if method == "ranking" and pair_method:
        name = _SIGNATURE_NAMES.get(pair_method, pair_method.replace("_", "-"))
        return name if pair_method in _ONE_MODEL else f"pairwise-{name}"
    return _SIGNATURE_NAMES.get(method, method.replace("_", "-"))


def make_settings(method: str, seed: int | None, **params: Any) -> dict[str, Any]:
    """Return the settings record of a result: method, seed, parameters, versions.

    ``signature_method`` names what was done in the signature: given, or
    :func:`signature_method` of `method`.
    """
    named = params.pop("signature_method", None) or signature_method(method)
    return {
        "method": method,
        "seed": seed,
        **params,
        "signature_method": named,
        "versions": dict(versions()),
    }


def _values(value: Any) -> str:
    """Return a setting as the signature writes it: one value, or several joined by "/"."""
    if isinstance(value, list | tuple):
        return "/".join(str(v) for v in value)
    return str(value)


def signature(settings: dict[str, Any]) -> str:
    """Return the one-line reproducibility signature of a settings record.

    What was done (``signature_method``; a record saved before it existed: its
    ``method``), the ROPE, the posterior draws (x chains), the tuning steps, the
    seed and the versions of isbetter, PyMC, nutpie and numba. A setting that
    differs between the fits of a ranking lists its values, e.g. ``tune:500/1000``.

    Examples
    --------
    >>> signature({"method": "sign", "rope": 0.01, "seed": 3, "draws": 50000,
    ...            "versions": {"isbetter": "0.1.0", "pymc": "5.28.5"}})
    'method:sign|rope:0.01|draws:50000|seed:3|isbetter:0.1.0|pymc:5.28.5'
    >>> sig = signature({"method": "ranking", "signature_method": "joint", "rope": 0.01,
    ...                  "draws": 1000, "chains": 4, "tune": 1000, "seed": 1,
    ...                  "versions": {"isbetter": "0.1.0", "pymc": "5.28.5",
    ...                               "nutpie": "0.16.4", "numba": "0.62.1"}})
    >>> sig.split("|")
    ['method:joint', 'rope:0.01', 'draws:1000x4', 'tune:1000', 'seed:1', 'isbetter:0.1.0',
     'pymc:5.28.5', 'nutpie:0.16.4', 'numba:0.62.1']
    """
    new = "signature_method" in settings  # a record saved before it: its signature as it was
    parts = [f"method:{settings.get('signature_method', settings.get('method'))}"]
    if "rope" in settings:
        parts.append(f"rope:{settings['rope']:g}")
    if settings.get("draws") is not None:
        draws, chains = _values(settings["draws"]), settings.get("chains")
        parts.append(f"draws:{draws}x{_values(chains)}" if chains else f"draws:{draws}")
    if new and settings.get("tune") is not None:
        parts.append(f"tune:{_values(settings['tune'])}")
    parts.append(f"seed:{settings.get('seed')}")
    versions = settings.get("versions", {})
    for name in _SIGNED_PACKAGES:
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
