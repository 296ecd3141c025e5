"""Frequentist baselines of a paired item-level comparison, to show what pairing buys.

Beside the Bayesian answer (:mod:`isbetter.items.compare`), on the same items:

* ``mcnemar_midp`` — the exact mid-p McNemar test of the discordant items (binary
  scores; Fagerland, Lydersen & Laake 2013), as Gorman & Bedrick (2019) use it;
* ``paired_bootstrap`` — Koehn's (2004) paired bootstrap: the items (clusters,
  when given) resampled with replacement, the two systems together; a two-sided
  percentile test and interval of the mean difference;
* ``clustered_se`` — Miller's (2024) standard error of the paired mean difference,
  clustered when items share a passage, with its normal confidence interval and
  z-test p-value;
* ``unpaired_z`` — the z-test of two means that lm-evaluation-harness's model
  comparator prints: ``z = (acc_A - acc_B) / sqrt(se_A^2 + se_B^2)`` with each
  standard error ``sd / sqrt(N)`` (sample sd), as if the two systems had answered
  different items. Labelled unpaired: it ignores the pairing.

References
----------
.. [1] Koehn (2004). Statistical significance tests for machine translation
   evaluation. EMNLP.
.. [2] Miller (2024). Adding error bars to evals: a statistical approach to language
   model evaluations. arXiv:2411.00640.
.. [3] Fagerland, Lydersen, Laake (2013). The McNemar test for binary matched-pairs
   data: mid-p and asymptotic are better than exact conditional. BMC Med Res Methodol.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from scipy import special, stats

from isbetter.core.validate import check_positive_int, check_probability
from isbetter.inference.records import Interval, TestResult
from isbetter.inference.resampling import percentile_test
from isbetter.items.bootstrap import Units, units

__all__ = [
    "DESCRIPTIONS",
    "clustered_se_test",
    "item_baselines",
    "mcnemar_midp",
    "mcnemar_test",
    "paired_bootstrap_test",
    "unpaired_z_test",
]

DESCRIPTIONS = {
    "mcnemar_midp": "McNemar's test of the items exactly one model gets right, exact mid-p "
    "(Fagerland, Lydersen & Laake 2013)",
    "paired_bootstrap": "paired bootstrap percentile test of the mean difference: items "
    "resampled with replacement (Koehn 2004)",
    "paired_bootstrap_clustered": "paired bootstrap percentile test of the mean difference: "
    "clusters of items resampled with replacement (after Koehn 2004)",
    "clustered_se": "z-test of the paired mean difference with the standard error of Miller (2024)",
    "clustered_se_clustered": "z-test of the paired mean difference with Miller's (2024) "
    "clustered standard error",
    "unpaired_z": "unpaired z-test of the two means, as lm-evaluation-harness's comparator "
    "(ignores the pairing)",
}


def mcnemar_midp(only_a: int, only_b: int) -> float:
    """Two-sided mid-p McNemar test of a pair's discordant counts.

    Under the null each discordant item is A's with probability 1/2; the exact
    conditional p-value is ``2 P(X <= min)`` for X ~ Bin(n, 1/2), n = only_a + only_b,
    and the mid-p value subtracts ``P(X = min)`` (Fagerland, Lydersen & Laake 2013).

    Examples
    --------
    Fagerland et al.'s example (1 and 7 discordant pairs): exact p 0.070, mid-p 0.039.

    >>> round(mcnemar_midp(1, 7), 4)
    0.0391
    >>> mcnemar_midp(0, 0)
    1.0
    """
    n = int(only_a) + int(only_b)
    if n == 0:
        return 1.0
    k = min(int(only_a), int(only_b))
    p = 2 * stats.binom.cdf(k, n, 0.5) - stats.binom.pmf(k, n, 0.5)
    return float(min(p, 1.0))


def mcnemar_test(only_a: int, only_b: int, n: int) -> TestResult:
    """Return the mid-p McNemar test as a :class:`TestResult` (estimate: accuracy difference)."""
    return TestResult(
        name="mcnemar_midp",
        p_value=mcnemar_midp(only_a, only_b),
        estimate=(only_a - only_b) / n if n else float("nan"),
        description=DESCRIPTIONS["mcnemar_midp"],
    )


def paired_bootstrap_test(
    diffs: Any,
    clusters: Any = None,
    *,
    resamples: int = 10_000,
    level: float = 0.95,
    rng: np.random.Generator,
) -> TestResult:
    """Koehn's (2004) paired bootstrap of the mean difference (positive: A better).

    The items (with `clusters`: the clusters) are resampled with replacement
    `resamples` times, A's and B's scores of an item together; each resample is a
    multinomial draw of the distinct units' counts, which is the same in
    distribution and costs resamples x distinct units. The p-value is
    ``2 min(P*(d <= 0), P*(d >= 0))`` (ties half to each side), the interval the
    equal-tailed percentile interval at `level`.

    Examples
    --------
    >>> r = paired_bootstrap_test([1] * 30 + [0] * 60 + [-1] * 10, rng=np.random.default_rng(0))
    >>> round(r.estimate, 2), r.p_value < 0.01, r.interval.kind
    (0.2, True, 'percentile')
    """
    resamples = check_positive_int(resamples, "resamples")
    level = check_probability(level, "level", open_interval=True)
    u = diffs if isinstance(diffs, Units) else units(diffs, clusters)
    name = "paired_bootstrap" if clusters is None else "paired_bootstrap_clustered"
    return percentile_test(
        "paired_bootstrap", _resampled(u, resamples, rng), u.mean, level, DESCRIPTIONS[name]
    )


#: up to this many distinct units a resample is a multinomial draw of their counts (one
#: binomial per unit); above it, the units are drawn by index (one integer per unit)
MULTINOMIAL_UNITS = 64
#: resamples x units drawn at once by index (bounds the memory: 32 MB of int64)
_BLOCK = 4_000_000


def _resampled(u: Units, resamples: int, rng: np.random.Generator) -> np.ndarray:
    """Mean differences of `resamples` resamples of the units with replacement."""
    if u.counts.size <= MULTINOMIAL_UNITS:
        counts = rng.multinomial(u.n_units, u.counts / u.n_units, size=resamples)
        return u.ratio(counts.astype(float))
    sums, sizes = np.repeat(u.sums, u.counts), np.repeat(u.sizes, u.counts)
    out = np.empty(resamples)
    block = max(1, _BLOCK // sums.size)
    for start in range(0, resamples, block):
        idx = rng.integers(0, sums.size, (min(resamples, start + block) - start, sums.size))
        out[start : start + idx.shape[0]] = sums[idx].sum(axis=1) / sizes[idx].sum(axis=1)
    return out


def clustered_se(diffs: Any, clusters: Any = None) -> float:
    """Miller's (2024) standard error of the mean of `diffs`, clustered when `clusters` given.

    Without clusters the CLT standard error ``sd / sqrt(N)`` (sample sd, ``N - 1``); with
    clusters Miller's eq. (4), ``SE_C^2 = SE_CLT^2 + (1 / N^2) sum_c sum_{i != j in c}
    (d_i - mean)(d_j - mean)``.

    Examples
    --------
    >>> round(clustered_se([1.0, 0.0, 1.0, 0.0]), 4)   # sd 0.5774 / 2
    0.2887
    >>> round(clustered_se([1.0, 1.0, 0.0, 0.0], clusters=[0, 0, 1, 1]), 4)
    0.3819
    """
    d = np.asarray(diffs, dtype=float)
    n = d.size
    if n < 2:
        return float("nan")
    e = d - d.mean()
    var = float(e @ e) / (n - 1) / n
    if clusters is not None:
        _, inverse = np.unique(np.asarray(clusters), return_inverse=True)
        sums = np.bincount(inverse, weights=e)
        squares = np.bincount(inverse, weights=e * e)
        var += float(np.sum(sums * sums - squares)) / n**2  # the cross terms i != j
    return float(np.sqrt(max(var, 0.0)))


def _z_result(name: str, description: str, estimate: float, se: float, level: float) -> TestResult:
    """Return the z-test of `estimate` with standard error `se`: p-value, normal interval."""
    if not se > 0:  # no spread: the test does not apply
        return TestResult(name, float("nan"), float("nan"), estimate, None, description)
    z = estimate / se
    half = se * float(special.ndtri(0.5 + level / 2))
    return TestResult(
        name=name,
        p_value=float(2 * special.ndtr(-abs(z))),
        statistic=float(z),
        estimate=float(estimate),
        interval=Interval(estimate - half, estimate + half, level, "confidence"),
        description=description,
    )


def clustered_se_test(diffs: Any, clusters: Any = None, *, level: float = 0.95) -> TestResult:
    """Miller's (2024) z-test of the paired mean difference, clustered when `clusters` given.

    The standard error is :func:`clustered_se` of the per-item differences (the
    paired analysis of Miller's section 4.2); the interval ``mean +- z SE``, the
    p-value ``2 Phi(-|mean / SE|)``. NaN when the differences do not vary.

    Examples
    --------
    >>> r = clustered_se_test([1] * 30 + [0] * 60 + [-1] * 10)
    >>> round(r.estimate, 2), round(r.statistic, 2)
    (0.2, 3.32)
    """
    level = check_probability(level, "level", open_interval=True)
    d = np.asarray(diffs, dtype=float)
    key = "clustered_se" if clusters is None else "clustered_se_clustered"
    return _z_result(
        "clustered_se", DESCRIPTIONS[key], float(d.mean()), clustered_se(d, clusters), level
    )


def unpaired_z_test(a: Any, b: Any, *, level: float = 0.95) -> TestResult:
    """Return the unpaired z-test of two means that lm-evaluation-harness's comparator prints.

    ``z = (mean_A - mean_B) / sqrt(se_A^2 + se_B^2)``, each ``se = sd / sqrt(N)``
    with the sample sd (lm-evaluation-harness's ``mean_stderr``), p-value
    ``2 Phi(-|z|)``. It treats the two systems as if tested on different items.

    Examples
    --------
    >>> r = unpaired_z_test([1] * 60 + [0] * 40, [1] * 40 + [0] * 60)
    >>> round(r.statistic, 3), round(r.p_value, 4)
    (2.872, 0.0041)
    """
    level = check_probability(level, "level", open_interval=True)
    x = np.asarray(a, dtype=float)
    y = np.asarray(b, dtype=float)
    se = np.hypot(x.std(ddof=1) / np.sqrt(x.size), y.std(ddof=1) / np.sqrt(y.size))
    return _z_result(
        "unpaired_z", DESCRIPTIONS["unpaired_z"], float(x.mean() - y.mean()), float(se), level
    )


def item_baselines(
    a: Any,
    b: Any,
    clusters: Any = None,
    *,
    binary: bool,
    resamples: int = 10_000,
    level: float = 0.95,
    rng: np.random.Generator,
) -> tuple[TestResult, ...]:
    """Every baseline of one pair on the same items, in the order reports show them.

    ``mcnemar_midp`` (binary items only), ``paired_bootstrap``, ``clustered_se`` and
    ``unpaired_z``; A's and B's scores per item (means over runs).
    """
    x = np.asarray(a, dtype=float)
    y = np.asarray(b, dtype=float)
    d = x - y
    tests = []
    if binary:
        only_a, only_b = int(np.sum(x > y)), int(np.sum(x < y))
        tests.append(mcnemar_test(only_a, only_b, x.size))
    tests.append(paired_bootstrap_test(d, clusters, resamples=resamples, level=level, rng=rng))
    tests.append(clustered_se_test(d, clusters, level=level))
    tests.append(unpaired_z_test(x, y, level=level))
    return tuple(tests)
