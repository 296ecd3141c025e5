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

from dataclasses import dataclass

import numpy as np
from scipy import stats

from isbetter._errors import InputError
from isbetter._provenance import make_settings
from isbetter._validate import check_positive_int, check_probability, check_rope
from isbetter.data import PairedScores
from isbetter.decision import ComparisonResult
from isbetter.posterior import StudentTPosterior

__all__ = [
    "CorrectedTTestResult",
    "corrected_resampled_ttest",
    "correlated_ttest",
    "correlated_ttest_posterior",
    "rho_from_sizes",
]


def rho_from_sizes(n_test: int, n_train: int) -> float:
    """Correlation of the fold differences, ``n_test / (n_test + n_train)`` [2]_.

    Examples
    --------
    >>> rho_from_sizes(10, 90)
    0.1
    """
    n_test = check_positive_int(n_test, "n_test")
    n_train = check_positive_int(n_train, "n_train")
    return n_test / (n_test + n_train)


def _single_dataset(scores: PairedScores, dataset: str | None) -> tuple[str, np.ndarray, int]:
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
    return scores.datasets[i], scores.differences[i], int(scores.n_folds[i])


def _rho(rho: float | None, n_folds: int) -> float:
    if rho is None:
        rho = 1.0 / n_folds
    else:
        rho = check_probability(rho, "rho")
    if rho >= 1.0:
        raise InputError(
            f"The correlation of the differences is rho = {rho:g} (a single fold, or a test set "
            "as large as the data), so repeated scores carry no extra information and the "
            "correlated t-test is undefined. Use several folds, or compare across data sets "
            "with the Bayesian sign or signed-rank test."
        )
    return rho


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

    Returns
    -------
    ComparisonResult
        Exact probabilities (``counting="mean"``); ``posterior`` is a
        :class:`~isbetter.posterior.StudentTPosterior`.

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
    >>> res = correlated_ttest(from_arrays(x, y).paired("A", "B"), rope=0.01)
    >>> round(res.p_a_better, 4), round(res.p_rope, 4), round(res.p_b_better, 4)
    (0.6187, 0.3776, 0.0038)
    """
    rope = check_rope(rope)
    name, d, n_folds = _single_dataset(scores, dataset)
    rho = _rho(rho, n_folds)
    posterior = correlated_ttest_posterior(d, rho)
    settings = make_settings(
        "correlated_t",
        None,
        rope=rope,
        rho=rho,
        n=int(d.size),
        dataset=name,
        metric=scores.metric,
    )
    return ComparisonResult.from_posterior(
        posterior,
        system_a=scores.system_a,
        system_b=scores.system_b,
        rope=rope,
        method="correlated_t",
        settings=settings,
    )


@dataclass(frozen=True)
class CorrectedTTestResult:
    """Result of the frequentist corrected resampled t-test.

    Attributes
    ----------
    statistic : float
        ``mean(d) / se`` with the Nadeau-Bengio corrected standard error.
    pvalue : float
        Two-sided p-value of ``H0: mean difference = 0``.
    df : float
        Degrees of freedom, ``n - 1``.
    mean, se : float
        Mean difference and its corrected standard error.
    """

    statistic: float
    pvalue: float
    df: float
    mean: float
    se: float

    def confidence_interval(self, confidence_level: float = 0.95) -> tuple[float, float]:
        """Two-sided confidence interval of the mean difference."""
        level = check_probability(confidence_level, "confidence_level", open_interval=True)
        if self.se == 0:
            return (self.mean, self.mean)
        half = stats.t.ppf(0.5 + level / 2, self.df) * self.se
        return (self.mean - half, self.mean + half)


def corrected_resampled_ttest(
    scores: PairedScores, *, rho: float | None = None, dataset: str | None = None
) -> CorrectedTTestResult:
    """Frequentist corrected resampled t-test of Nadeau & Bengio [2]_.

    The same corrected variance as :func:`correlated_ttest`, used as a
    classical two-sided test of no difference.

    Returns
    -------
    CorrectedTTestResult

    Examples
    --------
    >>> from isbetter import from_arrays
    >>> x = [0.81, 0.79, 0.84, 0.80, 0.83, 0.82, 0.80, 0.85, 0.79, 0.82]
    >>> y = [0.80, 0.80, 0.81, 0.79, 0.80, 0.81, 0.79, 0.83, 0.80, 0.80]
    >>> res = corrected_resampled_ttest(from_arrays(x, y).paired("A", "B"))
    >>> round(res.statistic, 3), round(res.pvalue, 4)
    (1.868, 0.0947)
    """
    _, d, n_folds = _single_dataset(scores, dataset)
    post = correlated_ttest_posterior(d, _rho(rho, n_folds))
    if post.scale == 0:
        statistic = 0.0 if post.loc == 0 else float(np.sign(post.loc) * np.inf)
        pvalue = 1.0 if post.loc == 0 else 0.0
    else:
        statistic = post.loc / post.scale
        pvalue = float(2 * stats.t.sf(abs(statistic), post.df))
    return CorrectedTTestResult(
        statistic=float(statistic), pvalue=pvalue, df=post.df, mean=post.loc, se=post.scale
    )
