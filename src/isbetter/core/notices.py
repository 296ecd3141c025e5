"""Import ArviZ without its once-a-day notice, before PyMC or nutpie imports it.

ArviZ (0.2x) warns on import, once a day per user cache, that it "is undergoing a major
refactor" (a :class:`FutureWarning` about its own API, which isbetter does not expose):
the first ``isbetter`` command of the day printed it before its results. PyMC and nutpie
import ArviZ; every place in isbetter that imports either calls :func:`quiet_arviz` first,
so that ArviZ is imported here, once, with exactly that warning ignored. Other warnings of
ArviZ, and this one when the user imports ArviZ first, are untouched.
"""

from __future__ import annotations

import sys
import warnings

__all__ = ["ARVIZ_NOTICE", "quiet_arviz"]

#: the start of ArviZ's once-a-day notice (after its leading newline)
ARVIZ_NOTICE = r"\s*ArviZ is undergoing a major refactor"


def quiet_arviz() -> None:
    """Import ArviZ, if not yet imported, without its once-a-day refactor notice."""
    if "arviz" in sys.modules:
        return
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=ARVIZ_NOTICE, category=FutureWarning)
        import arviz  # noqa: F401
