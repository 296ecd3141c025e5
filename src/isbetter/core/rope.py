"""Whether a ROPE fits the scores: a suggested half-width and the misfits worth a warning.

The ROPE is a half-width in the metric's units, chosen for the application
(README, "How to choose a ROPE"). Without one, a suggestion is derived from the
scores' scale: 1 point of the scale, that is 0.01 for scores in [0, 1] (Benavoli
et al. 2017 use 0.01 on accuracy), 1 for scores in [0, 100] (percent), and
otherwise 1% of the median absolute score, rounded to a power of ten.
"""

from __future__ import annotations

import math

import numpy as np

__all__ = ["rope_misfit", "suggested_rope"]


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
