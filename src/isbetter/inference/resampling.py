"""Frequentist tests from resampled differences: the two-sided percentile test and interval.

Shared by the bootstrap baselines of the F1 comparison (Keller, Mariéthoz & Bengio
2004) and of the item-level comparison (Koehn 2004).
"""

from __future__ import annotations

import numpy as np

from isbetter.inference.records import Interval, TestResult

__all__ = ["percentile_test"]


def percentile_test(
    name: str, d: np.ndarray, observed: float, level: float, description: str
) -> TestResult:
    """Two-sided percentile p-value and interval of resampled differences `d`.

    The p-value is ``2 min(P*(d <= 0), P*(d >= 0))`` (ties at 0 count half to each
    side, capped at 1), the interval the equal-tailed percentile interval at `level`.

    Examples
    --------
    >>> t = percentile_test("boot", np.array([1.0, 2.0, 3.0, -1.0]), 1.5, 0.5, "")
    >>> t.p_value, t.interval.low, t.interval.high
    (0.5, 0.5, 2.25)
    """
    below = np.mean(d < 0) + 0.5 * np.mean(d == 0)
    above = np.mean(d > 0) + 0.5 * np.mean(d == 0)
    p = min(1.0, 2.0 * min(below, above))
    lo, hi = np.quantile(d, [(1 - level) / 2, (1 + level) / 2])
    return TestResult(
        name=name,
        p_value=float(p),
        estimate=float(observed),
        interval=Interval(float(lo), float(hi), level, "percentile"),
        description=description,
    )
