"""What every result records so that it can be reproduced: settings and versions."""

from __future__ import annotations

import platform
from functools import cache
from importlib import metadata
from typing import Any

__all__ = ["make_settings", "signature", "versions"]

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
