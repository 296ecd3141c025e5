"""PyMC, nutpie and ArviZ: the one place isbetter imports them, without ArviZ's notice.

ArviZ (0.2x) warns on import, once a day per user cache, that it "is undergoing a major
refactor" (a :class:`FutureWarning` about its own API, which isbetter does not expose):
the first ``isbetter`` command of the day printed it before its results (issue 29). PyMC
and nutpie import ArviZ, so every function here imports ArviZ first, once, with exactly
that warning ignored, then the library asked for, and returns it. Other warnings of
ArviZ, and this one when the user imports ArviZ first, are untouched.

The libraries are imported when a function is called, never when this module is: importing
isbetter does not import PyMC (seconds of a cold start). No other module of isbetter
imports them (``tests/inference/test_libs.py`` checks it), except for type checkers
(``if TYPE_CHECKING:``). PyTensor, which does not import ArviZ, is imported directly.
"""

from __future__ import annotations

import sys
import warnings
from types import ModuleType
from typing import Any

__all__ = ["ARVIZ_NOTICE", "arviz", "nutpie", "nutpie_arrow_to_arviz", "pymc"]

#: the start of ArviZ's once-a-day notice (after its leading newline)
ARVIZ_NOTICE = r"\s*ArviZ is undergoing a major refactor"


def arviz() -> ModuleType:
    """Return ArviZ, imported (once) without its once-a-day refactor notice."""
    if "arviz" not in sys.modules:
        with warnings.catch_warnings():
            warnings.filterwarnings("ignore", message=ARVIZ_NOTICE, category=FutureWarning)
            import arviz as az
        return az
    return sys.modules["arviz"]


def pymc() -> ModuleType:
    """Return PyMC, ArviZ imported quietly first."""
    arviz()
    import pymc as pm

    return pm


def nutpie() -> ModuleType:
    """Return nutpie, ArviZ imported quietly first (:class:`ImportError` without nutpie).

    Its modules ``compile_pymc`` and ``compiled_pyfunc`` are attributes of it.
    """
    arviz()
    import nutpie as npe

    return npe


def nutpie_arrow_to_arviz() -> Any:
    """Return nutpie's own conversion of an Arrow trace (``nutpie.sample._arrow_to_arviz``).

    A private function of nutpie, for the traces :mod:`.nutpie_trace` leaves to it
    (chains of unequal length, missing values); ArviZ imported quietly first.
    """
    nutpie()
    from nutpie.sample import _arrow_to_arviz

    return _arrow_to_arviz
