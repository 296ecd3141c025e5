"""Whether a ROPE fits the scores: a suggested half-width and the misfits worth a warning.

The ROPE is a half-width in the metric's units, chosen for the application
(the guide page "How to choose a ROPE", ``docs/guide/rope.md``). Without one, a
suggestion is derived from the scores' scale: 1 point of the scale, that is 0.01 for
scores in [0, 1] (Benavoli et al. 2017 use 0.01 on accuracy), 1 for scores in
[0, 100] (percent), and otherwise 1% of the median absolute score, rounded to a power of ten.

The Python API warns (:class:`~isbetter.core.errors.RopeWarning`,
:func:`warn_rope_misfit`) when a ROPE does not fit; it does not warn when the ROPE
is left at its default: the default is the documented value of the argument (0,
no ROPE, for scores; 0.05 for F1), which every result records (``rope``) and every
report states, whereas a caller who wrote nothing cannot be told apart from one
who chose the default. The command line, whose user may not have read the
defaults, says so on stderr (:func:`isbetter.cli.common.rope_note`).
"""

from __future__ import annotations

import math
import warnings
from typing import Any

import numpy as np

from isbetter.core.errors import RopeWarning

__all__ = ["rope_misfit", "suggested_rope", "warn_rope_misfit"]


def suggested_rope(values: np.ndarray) -> float:
    """Return a ROPE half-width in the scores' units: one point of their scale.

    Examples
    --------
    >>> suggested_rope(np.array([0.81, 0.93])), suggested_rope(np.array([81.0, 93.0]))
    (0.01, 1.0)
    >>> suggested_rope(np.array([1200.0, 3400.0]))
    10.0
    """
    x = np.asarray(values, dtype=float)
    if x.size and x.min() >= 0 and x.max() <= 1:
        return 0.01
    if x.size and x.min() >= 0 and x.max() <= 100:
        return 1.0
    typical = float(np.median(np.abs(x))) if x.size else 0.0
    if typical == 0:
        return 0.01
    return 10.0 ** round(math.log10(0.01 * typical))


def rope_misfit(rope: float, values: np.ndarray) -> str | None:
    """Say why `rope` does not fit the scores `values`, or return None when it does.

    Two misfits: a ROPE below a tenth of :func:`suggested_rope` (``rope=0.01`` on
    scores in percent), and a ROPE at least as wide as the spread of all the scores
    (every difference then lies inside it). A zero ROPE is no misfit: it is no ROPE.

    Examples
    --------
    >>> rope_misfit(0.01, np.array([81.0, 93.0]))[:46]
    'the ROPE ±0.01 is below a tenth of one point o'
    >>> rope_misfit(0.5, np.array([0.81, 0.93]))[:45]
    'the ROPE ±0.5 is as wide as the spread of all'
    >>> rope_misfit(0.01, np.array([0.81, 0.93])) is None
    True
    """
    x = np.asarray(values, dtype=float)
    x = x[np.isfinite(x)]
    if rope <= 0 or x.size == 0:
        return None
    point = suggested_rope(x)
    if rope < point / 10:
        return (
            f"the ROPE ±{rope:g} is below a tenth of one point of the scores' scale (they range "
            f"{x.min():.4g} to {x.max():.4g}; one point: {point:g}): is it in the metric's "
            f"units? e.g. {point:g}"
        )
    spread = float(x.max() - x.min())
    if rope >= spread:
        return (
            f"the ROPE ±{rope:g} is as wide as the spread of all the scores ({x.min():.4g} to "
            f"{x.max():.4g}): every difference lies inside it, so every pair is practically "
            f"equivalent; is it in the metric's units? e.g. {point:g}"
        )
    return None


def warn_rope_misfit(
    rope: float, values: Any, name: str = "rope", stacklevel: int = 3, where: str = ""
) -> None:
    """Warn (:class:`~isbetter.core.errors.RopeWarning`) when `rope` does not fit `values`.

    `values` are the scores (or the measure's range) the ROPE applies to; None: no
    check. `name` is the argument named in the message, `where` what it applies to
    (e.g. ``" on metric 'time'"``); `stacklevel` points the warning at the caller of
    the public function (3: the caller of the caller).

    Examples
    --------
    >>> import warnings
    >>> with warnings.catch_warnings(record=True) as seen:
    ...     warnings.simplefilter("always")
    ...     warn_rope_misfit(0.01, np.array([81.0, 93.0]))
    >>> str(seen[0].message)[:36]
    '`rope=0.01`: the ROPE ±0.01 is below'
    """
    misfit = None if values is None else rope_misfit(rope, values)
    if misfit:
        warnings.warn(f"`{name}={rope:g}`{where}: {misfit}.", RopeWarning, stacklevel=stacklevel)
