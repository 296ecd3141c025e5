"""Exception and warning classes of isbetter.

Every error isbetter raises for bad input derives from :class:`InputError`
(a :class:`ValueError`) or :class:`InputTypeError` (a :class:`TypeError`), so
the command line can print it as one line. Numerical trouble is reported with
:class:`ConvergenceWarning`; an argument or attribute used by its old name with
:class:`RenamedArgumentWarning`; a damaged or unusable cache, bypassed, with
:class:`CacheWarning`; a ROPE that does not fit the scores' scale with
:class:`RopeWarning`.
"""

from __future__ import annotations

import sys

__all__ = [
    "CacheWarning",
    "ConvergenceWarning",
    "InputError",
    "InputTypeError",
    "IsbetterError",
    "RenamedArgumentWarning",
    "RopeWarning",
]


class IsbetterError(Exception):
    """Base class of every exception raised on purpose by isbetter."""


class InputError(IsbetterError, ValueError):
    """An argument has a bad value; the message names it and says how to fix it."""


class InputTypeError(IsbetterError, TypeError):
    """An argument has the wrong type; the message names it and the expected type."""


class ConvergenceWarning(RuntimeWarning):
    """MCMC diagnostics are poor (R-hat, effective sample size or divergences)."""


class RenamedArgumentWarning(FutureWarning):
    """An argument or attribute was used by its old name: it still works; the message names the new.

    A :class:`FutureWarning`, so that it is shown to everyone who calls isbetter
    (a :class:`DeprecationWarning` is hidden outside ``__main__``).
    """


class CacheWarning(RuntimeWarning):
    """A cache (compiled code, a ranking's pairs) was damaged or unusable: bypassed, not trusted.

    The results are unaffected: what the cache would have given is computed again.
    The message names the folder and what was done instead.
    """


class RopeWarning(UserWarning):
    """A ROPE does not fit the scores' scale: it is likely in other units than the metric's.

    Below a tenth of one point of the scale, or as wide as the spread of all the
    scores (:func:`isbetter.core.rope.rope_misfit`). The result is computed with the
    ROPE given; the message says what is wrong with it and suggests one in the
    metric's units.
    """


def outside_stacklevel() -> int:
    """Return the `stacklevel` that points a warning at the first caller outside isbetter.

    Called by the function that calls :func:`warnings.warn`: level 1 is that function,
    each frame of the package below it one more. A fixed level is right for one route to
    the warning only (the same warning reached through :func:`isbetter.rank` and through
    :func:`isbetter.compare_items` is a different number of frames deep).
    """
    package = __name__.partition(".")[0]
    frame, level = sys._getframe(1), 1
    while frame.f_back is not None and (
        frame.f_globals.get("__name__", "").partition(".")[0] == package
    ):
        frame, level = frame.f_back, level + 1
    return level
