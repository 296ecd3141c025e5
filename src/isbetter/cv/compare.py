"""One entry point for comparing two systems from cross-validation scores."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from isbetter.core.errors import InputError
from isbetter.core.table_rows import describe_dropped
from isbetter.core.validate import check_choice
from isbetter.core.validate import check_options as check_method_options
from isbetter.core.vocabulary import CV_METHODS
from isbetter.cv.scores import PairedScores, ScoreTable, as_scores
from isbetter.results.comparison import ComparisonResult

__all__ = [
    "MCMC_OPTIONS",
    "METHODS",
    "OPTIONS",
    "check_options",
    "check_rope_fit",
    "choose_method",
    "compare",
]

METHODS = CV_METHODS

#: the options of a model sampled by MCMC (the hierarchical, joint and Plackett–Luce models)
MCMC_OPTIONS = ("draws", "tune", "chains", "cores", "backend")
#: the keyword options each method takes (besides `rope` and `rng`)
OPTIONS = {
    "correlated_t": ("rho", "dataset"),
    "sign": ("prior", "prior_place", "draws"),
    "signed_rank": ("prior", "draws"),
    "hierarchical": ("rho", "priors", *MCMC_OPTIONS, "parameterization"),
}

#: why a method cannot use one score per data set and system
_NEEDS_FOLDS = {
    "correlated_t": "the correlated t-test needs the per-fold scores of a data set: its "
    "posterior is built from the mean, the spread and the correlation (rho) of the fold "
    "differences (Benavoli et al. 2017)",
    "hierarchical": "the hierarchical model needs per-fold scores on every data set: it "
    "weighs each data set's mean difference by the spread and the correlation of its folds "
    "(Corani et al. 2017)",
}


def choose_method(method: str, n_datasets: int, per_dataset: bool) -> str:
    """Return the method to run: ``"auto"`` resolved, one that needs folds refused without them.

    ``"auto"`` is the signed-rank test for one score per data set and system, the
    correlated t-test for the per-fold scores of one data set, and the hierarchical
    model for per-fold scores on several.
    """
    method = check_choice(method, "method", METHODS)
    if method == "auto":
        if per_dataset:
            return "signed_rank"
        return "correlated_t" if n_datasets == 1 else "hierarchical"
    if per_dataset and method in _NEEDS_FOLDS:
        raise InputError(
            f"`method='{method}'`: {_NEEDS_FOLDS[method]}, and these scores are one per data "
            "set and system. Use `method='signed_rank'` or `method='sign'`, which need only "
            "one score per data set, or read the per-fold scores (with their run and fold "
            "columns)."
        )
    return method


def check_options(method: str, options: Mapping[str, Any]) -> None:
    """Raise when an option does not apply to `method`, naming those it takes."""
    check_method_options(options, OPTIONS[method], method)


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
    scores : ScoreTable, PairedScores, DataFrame or path
        Per-fold scores (:func:`~isbetter.read_scores`, :func:`~isbetter.from_arrays`),
        already paired differences, or a table with the default column names
        (``dataset, system, run, fold`` and `metric`, default ``score``).
    system_a, system_b : str
        The systems to compare (not needed for `PairedScores`).
    metric : str, optional
        Metric column of a table with several metrics.
    rope : float, default: 0.0
        Half-width of the region of practical equivalence, in score units. The
        default 0 is no ROPE: no practical equivalence can be concluded (identical
        systems are undecided), as the result's report states. A ROPE that does not
        fit the scores of a ScoreTable (below a tenth of one point of their scale, or
        as wide as the spread of all of them) warns; leaving it at its default does
        not (:mod:`isbetter.core.rope` says why).
    method : {"auto", "correlated_t", "sign", "signed_rank", "hierarchical"}
        ``"auto"``: the correlated t-test for the per-fold scores of one data set,
        the hierarchical model for several, the signed-rank test for one score per
        data set and system (which the correlated t-test and the hierarchical
        model cannot use: they need the folds).
    rng : int, numpy.random.Generator or None
        Seed or generator for the sampling methods; the seed is recorded.
    **options
        Passed to the model: ``rho`` (correlated t, hierarchical), ``prior``
        (sign, signed-rank), ``draws``, ``chains`` ...

    Returns
    -------
    ComparisonResult

    Warns
    -----
    RopeWarning
        `rope` does not fit the scores' scale (e.g. 0.01 on scores in percent).

    Examples
    --------
    >>> from isbetter import from_arrays
    >>> x = [0.81, 0.79, 0.84, 0.80, 0.83, 0.82, 0.80, 0.85, 0.79, 0.82]
    >>> y = [0.80, 0.80, 0.81, 0.79, 0.80, 0.81, 0.79, 0.83, 0.80, 0.80]
    >>> res = compare(from_arrays(x, y, names=("svm", "rf"), runs=1), "svm", "rf", rope=0.01)
    >>> res.method, round(res.p_a_better, 4)
    ('correlated_t', 0.6187)
    """
    check_choice(method, "method", METHODS)
    scores = as_scores(scores, metric)
    if isinstance(scores, ScoreTable):
        if system_a is None or system_b is None:
            raise InputError(
                "`system_a` and `system_b` are needed to compare two systems of a ScoreTable; "
                "available systems: " + ", ".join(repr(s) for s in scores.systems) + "."
            )
        paired = scores.paired(system_a, system_b, metric=metric)
        check_rope_fit(scores, paired.metric, (system_a, system_b), rope)
    else:
        paired = scores
    method = choose_method(method, paired.n_datasets, paired.per_dataset)
    check_options(method, options)

    result = _fit(paired, method, rope, rng, options)
    dropped = describe_dropped(scores.dropped) if isinstance(scores, ScoreTable) else ""
    if dropped:  # say what drop_incomplete removed: the reader sees n shrink otherwise
        result = dataclasses.replace(result, settings={**result.settings, "dropped": dropped})
    return result


def check_rope_fit(
    table: ScoreTable,
    metric: str,
    systems: Sequence[str],
    rope: Any,
    name: str = "rope",
    *,
    where: str = "",
    stacklevel: int = 4,
) -> None:
    """Warn (:class:`~isbetter.core.errors.RopeWarning`) when `rope` does not fit the scores.

    The scores are those of `systems` on `metric` (:func:`~isbetter.core.rope.rope_misfit`);
    `stacklevel` points the warning at the caller of :func:`compare` (4) or of
    :func:`~isbetter.rank`.
    """
    from isbetter.core.rope import warn_rope_misfit
    from isbetter.core.validate import check_rope

    data = table.data
    values = data.loc[data["system"].isin(list(systems)), metric].to_numpy(dtype=float)
    warn_rope_misfit(check_rope(rope, name), values, name, stacklevel, where)


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
