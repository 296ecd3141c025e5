"""Bayesian correlated t-test on one data set, and the corrected resampled t-test.

Repeated k-fold cross-validation gives ``n = runs * folds`` differences that
are correlated, because the training sets overlap. Nadeau & Bengio [2]_ account
for it by inflating the variance of the mean with the correlation
``rho = n_test / (n_test + n_train)`` (``1 / folds`` for k-fold CV). Benavoli et
al. [1]_ showed that, with a matching prior, the posterior of the mean
difference is then a Student-t, so the probabilities of the three regions are
exact CDF differences.

References
----------
.. [1] Benavoli, Corani, Demšar, Zaffalon (2017). Time for a change: a tutorial
   for comparing multiple classifiers through Bayesian analysis. JMLR 18(77).
.. [2] Nadeau, Bengio (2003). Inference for the generalization error. Machine
   Learning 52, 239-281.
"""

from __future__ import annotations

import math

import numpy as np
from scipy import special

from isbetter.core.errors import InputError
from isbetter.core.provenance import input_settings, make_settings
from isbetter.core.validate import check_positive_int, check_probability, check_rope
from isbetter.cv.correlation import resolve_rho
from isbetter.cv.identity import cv_identity
from isbetter.cv.scores import PairedScores, check_paired
from isbetter.inference.decisions import hdi_rope_decision
from isbetter.inference.posterior import StudentTPosterior
from isbetter.inference.records import Estimate, Interval, TestResult
from isbetter.inference.seeds import resolve_seed
from isbetter.results.comparison import ComparisonResult

__all__ = [
    "corrected_resampled_ttest",
    "correlated_ttest",
    "correlated_ttest_posterior",
    "rho_from_sizes",
]


def rho_from_sizes(n_test: int, n_train: int) -> float:
    """Correlation of the fold differences, ``n_test / (n_test + n_train)`` (Nadeau & Bengio 2003).

    Examples
    --------
    >>> rho_from_sizes(10, 90)
    0.1
    """
    n_test = check_positive_int(n_test, "n_test")
    n_train = check_positive_int(n_train, "n_train")
    return n_test / (n_test + n_train)


def _single_dataset(
    scores: PairedScores, dataset: str | None, rho: float | None
) -> tuple[int, np.ndarray, float]:
    """Return the data set's index, its differences and its resolved rho."""
    scores = check_paired(scores, "correlated_t")
    if dataset is None:
        if scores.n_datasets != 1:
            raise InputError(
                f"The correlated t-test compares two systems on one data set, but the scores "
                f"cover {scores.n_datasets} data sets; pass `dataset=` to pick one, or use the "
                "hierarchical model or the sign / signed-rank tests for several data sets."
            )
        i = 0
    else:
        if dataset not in scores.datasets:
            raise InputError(
                f"`dataset`: unknown data set {dataset!r}. Available: "
                + ", ".join(repr(d) for d in scores.datasets[:10])
                + (" ..." if scores.n_datasets > 10 else "")
                + "."
            )
        i = scores.datasets.index(dataset)
    rho_i = resolve_rho(rho, scores.n_folds[i : i + 1], scores.datasets[i : i + 1])[0]
    return i, scores.differences[i], float(rho_i)


def correlated_ttest_posterior(differences: np.ndarray, rho: float) -> StudentTPosterior:
    """Student-t posterior of the mean of correlated differences [1]_.

    ``df = n - 1``, ``loc = mean(d)``, ``scale = sd(d) * sqrt(1/n + rho/(1 - rho))``
    with the sample standard deviation (``ddof=1``).

    Examples
    --------
    >>> post = correlated_ttest_posterior(np.array([0.1, 0.2, 0.0, 0.1]), rho=0.25)
    >>> post.df, round(post.loc, 3), round(post.scale, 4)
    (3.0, 0.1, 0.0624)
    """
    d = np.asarray(differences, dtype=float)
    n = d.size
    if n < 2:
        raise InputError(
            f"The correlated t-test needs at least 2 differences, got {n}; use more folds or runs."
        )
    sd = float(np.std(d, ddof=1))
    # Nadeau-Bengio corrected variance of the mean, see [2]_ and [1]_ eq. (8)
    scale = sd * np.sqrt(1.0 / n + rho / (1.0 - rho))
    return StudentTPosterior(df=float(n - 1), loc=float(d.mean()), scale=float(scale))


def correlated_ttest(
    scores: PairedScores,
    *,
    rope: float = 0.0,
    rho: float | None = None,
    dataset: str | None = None,
    rng: int | np.random.Generator | None = None,
) -> ComparisonResult:
    """Bayesian correlated t-test: is A better than B on this data set?

    Parameters
    ----------
    scores : PairedScores
        Per-fold differences of two systems (``table.paired(a, b)``).
    rope : float, default: 0.0
        Half-width of the region of practical equivalence, in score units.
    rho : float, optional
        Correlation of the differences; default ``1 / folds``. Use
        :func:`rho_from_sizes` for hold-out designs.
    dataset : str, optional
        Which data set, when `scores` holds several.
    rng : int, numpy.random.Generator or None
        The test is exact and draws no random numbers; the seed is recorded in the
        settings like every method's (and seeds draws from ``result.posterior`` for plots).

    Returns
    -------
    ComparisonResult
        Exact probabilities (``counting="mean"``); ``posterior`` is a
        :class:`~isbetter.inference.posterior.StudentTPosterior`.

    Raises
    ------
    InputError
        Several data sets and no `dataset`; a single fold (``rho == 1``);
        fewer than two differences; a negative ROPE.

    References
    ----------
    .. [1] Benavoli et al. (2017), JMLR 18(77).

    Examples
    --------
    >>> from isbetter import from_arrays
    >>> x = [0.81, 0.79, 0.84, 0.80, 0.83, 0.82, 0.80, 0.85, 0.79, 0.82]
    >>> y = [0.80, 0.80, 0.81, 0.79, 0.80, 0.81, 0.79, 0.83, 0.80, 0.80]
    >>> res = correlated_ttest(from_arrays(x, y, runs=1).paired("A", "B"), rope=0.01)
    >>> round(res.p_a_better, 4), round(res.p_rope, 4), round(res.p_b_better, 4)
    (0.6187, 0.3776, 0.0038)
    """
    rope = check_rope(rope)
    i, d, rho = _single_dataset(scores, dataset, rho)
    posterior = correlated_ttest_posterior(d, rho)
    name = scores.datasets[i]
    settings = make_settings(
        "correlated_t",
        resolve_seed(rng),
        rope=rope,
        rho=rho,
        n=int(d.size),
        dataset=name,
        metric=scores.metric,
        **input_settings(scores),
        # the data set's display name, when its key is an id (read_scores(dataset_name=...))
        **({"dataset_name": scores.dataset_names[i]} if scores.dataset_names else {}),
    )
    return ComparisonResult.from_posterior(
        posterior,
        rope=rope,
        method="correlated_t",
        settings=settings,
        estimate=_estimate(posterior, rope),
        **cv_identity(scores, index=i),
        tests=(_corrected_t(posterior),),
    )


def _estimate(post: StudentTPosterior, rope: float, prob: float = 0.95) -> Estimate:
    """Exact summary of the Student-t posterior (its central interval is the HDI)."""
    lo, hi = post.interval(prob)
    if post.scale == 0:
        below, above, sd = float(post.loc < 0), float(post.loc > 0), 0.0
    else:
        # the t's cdf, sf and sd (scipy.stats.t's formulas, without importing scipy.stats)
        below = float(special.stdtr(post.df, -post.loc / post.scale))
        above = float(special.stdtr(post.df, post.loc / post.scale))
        sd = math.sqrt(post.df / (post.df - 2.0) * post.scale**2) if post.df > 2 else math.inf
    return Estimate(
        mean=post.loc,
        sd=sd,
        mcse=0.0,
        interval=Interval(lo, hi, prob, "hdi"),
        p_below_0=below,
        p_above_0=above,
        decision=hdi_rope_decision(lo, hi, rope),
    )


def _corrected_t(post: StudentTPosterior, confidence_level: float = 0.95) -> TestResult:
    if post.scale == 0:
        statistic = 0.0 if post.loc == 0 else float(np.sign(post.loc) * np.inf)
        p_value = 1.0 if post.loc == 0 else 0.0
        lo = hi = post.loc
    else:
        statistic = post.loc / post.scale
        # scipy.stats.t's sf and ppf, from scipy.special (no scipy.stats import)
        p_value = float(2 * special.stdtr(post.df, -abs(statistic)))
        half = special.stdtrit(post.df, 0.5 + confidence_level / 2) * post.scale
        lo, hi = post.loc - half, post.loc + half
    return TestResult(
        name="corrected_t",
        p_value=p_value,
        statistic=float(statistic),
        estimate=post.loc,
        interval=Interval(float(lo), float(hi), confidence_level, "confidence"),
        description="corrected resampled t-test (Nadeau & Bengio 2003), two-sided",
    )


def corrected_resampled_ttest(
    scores: PairedScores,
    *,
    rho: float | None = None,
    dataset: str | None = None,
    confidence_level: float = 0.95,
) -> TestResult:
    """Frequentist corrected resampled t-test of Nadeau & Bengio (2003).

    The same corrected variance as :func:`correlated_ttest`, used as a
    classical two-sided test of no difference.

    Returns
    -------
    TestResult
        ``statistic`` (mean over its corrected standard error), ``p_value``
        (two-sided), ``estimate`` (the mean difference) and its confidence
        ``interval`` at `confidence_level`.

    Examples
    --------
    >>> from isbetter import from_arrays
    >>> x = [0.81, 0.79, 0.84, 0.80, 0.83, 0.82, 0.80, 0.85, 0.79, 0.82]
    >>> y = [0.80, 0.80, 0.81, 0.79, 0.80, 0.81, 0.79, 0.83, 0.80, 0.80]
    >>> res = corrected_resampled_ttest(from_arrays(x, y, runs=1).paired("A", "B"))
    >>> round(res.statistic, 3), round(res.p_value, 4)
    (1.868, 0.0947)
    """
    level = check_probability(confidence_level, "confidence_level", open_interval=True)
    _, d, rho_i = _single_dataset(scores, dataset, rho)
    return _corrected_t(correlated_ttest_posterior(d, rho_i), level)
