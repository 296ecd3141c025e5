"""What every result records so that it can be reproduced: settings and versions."""

from __future__ import annotations

import platform
from functools import cache
from importlib import metadata
from typing import Any

__all__ = ["make_settings", "versions"]

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
