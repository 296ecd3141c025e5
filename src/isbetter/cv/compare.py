"""One entry point for comparing two systems from cross-validation scores."""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np

from isbetter.core.errors import InputError
from isbetter.core.table_rows import describe_dropped
from isbetter.core.validate import check_choice
from isbetter.core.vocabulary import CV_METHODS
from isbetter.cv.scores import PairedScores, ScoreTable
from isbetter.results.comparison import ComparisonResult

__all__ = ["METHODS", "OPTIONS", "compare"]

METHODS = CV_METHODS

#: the keyword options each method takes (besides `rope` and `rng`)
OPTIONS = {
    "correlated_t": ("rho", "dataset"),
    "sign": ("prior", "prior_place", "draws"),
    "signed_rank": ("prior", "draws"),
    "hierarchical": (
        "rho",
        "priors",
        "draws",
        "tune",
        "chains",
        "cores",
        "backend",
        "parameterization",
    ),
}


def compare(
    scores: ScoreTable | PairedScores,
    system_a: str | None = None,
    system_b: str | None = None,
    *,
    metric: str | None = None,
    rope: float = 0.0,
    method: str = "auto",
    rng: int | np.random.Generator | None = None,
    **options: Any,
) -> ComparisonResult:
    """Compare two systems: is A better than B, practically equivalent, or worse?

    Parameters
    ----------
    scores : ScoreTable or PairedScores
        Per-fold scores (:func:`~isbetter.read_scores`, :func:`~isbetter.from_arrays`)
        or already paired differences.
    system_a, system_b : str
        The systems to compare (not needed for `PairedScores`).
    metric : str, optional
        Metric column of a table with several metrics.
    rope : float, default: 0.0
        Half-width of the region of practical equivalence, in score units.
    method : {"auto", "correlated_t", "sign", "signed_rank", "hierarchical"}
        ``"auto"``: the correlated t-test for one data set, the hierarchical
        model for several.
    rng : int, numpy.random.Generator or None
        Seed or generator for the sampling methods; the seed is recorded.
    **options
        Passed to the model: ``rho`` (correlated t, hierarchical), ``prior``
        (sign, signed-rank), ``draws``, ``chains`` ...

    Returns
    -------
    ComparisonResult

    Examples
    --------
    >>> from isbetter import from_arrays
    >>> x = [0.81, 0.79, 0.84, 0.80, 0.83, 0.82, 0.80, 0.85, 0.79, 0.82]
    >>> y = [0.80, 0.80, 0.81, 0.79, 0.80, 0.81, 0.79, 0.83, 0.80, 0.80]
    >>> res = compare(from_arrays(x, y, names=("svm", "rf"), runs=1), "svm", "rf", rope=0.01)
    >>> res.method, round(res.p_a_better, 4)
    ('correlated_t', 0.6187)
    """
    method = check_choice(method, "method", METHODS)
    if isinstance(scores, ScoreTable):
        if system_a is None or system_b is None:
            raise InputError(
                "`system_a` and `system_b` are needed to compare two systems of a ScoreTable; "
                "available systems: " + ", ".join(repr(s) for s in scores.systems) + "."
            )
        paired = scores.paired(system_a, system_b, metric=metric)
    else:
        paired = scores
    if method == "auto":
        method = "correlated_t" if paired.n_datasets == 1 else "hierarchical"
    unknown = [name for name in options if name not in OPTIONS[method]]
    if unknown:
        raise InputError(
            f"Option(s) {', '.join(repr(u) for u in unknown)} do not apply to method "
            f"{method!r}; it takes: {', '.join(OPTIONS[method])}."
        )

    result = _fit(paired, method, rope, rng, options)
    dropped = describe_dropped(scores.dropped) if isinstance(scores, ScoreTable) else ""
    if dropped:  # say what drop_incomplete removed: the reader sees n shrink otherwise
        result = dataclasses.replace(result, settings={**result.settings, "dropped": dropped})
    return result


def _fit(
    paired: PairedScores, method: str, rope: float, rng: Any, options: dict[str, Any]
) -> ComparisonResult:
    """Run `method` on the paired scores."""
    if method == "correlated_t":
        from isbetter.cv.correlated_t import correlated_ttest

        return correlated_ttest(paired, rope=rope, rng=rng, **options)
    if method == "sign":
        from isbetter.cv.sign_tests import sign_test

        return sign_test(paired, rope=rope, rng=rng, **options)
    if method == "signed_rank":
        from isbetter.cv.sign_tests import signed_rank_test

        return signed_rank_test(paired, rope=rope, rng=rng, **options)
    from isbetter.cv.hierarchical.model import hierarchical_test

    return hierarchical_test(paired, rope=rope, rng=rng, **options)
