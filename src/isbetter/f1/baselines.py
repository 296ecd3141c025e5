"""Frequentist tests for two classifiers on one test set, beside the Bayesian models.

Micro (document) level, from the joint outcome counts of A and B
(:class:`~isbetter.f1.predictions.JointCounts`):

* :func:`s_test` — sign test on the documents where exactly one system is right
  (Yang & Liu 1999's s-test), via :func:`scipy.stats.binomtest`;
* :func:`p_test` — unpaired two-proportion z-test of the accuracies (p-test), via
  :func:`statsmodels.stats.proportion.proportions_ztest`;
* :func:`mcnemar_test` — McNemar's test, exact (binomial) or chi-squared with
  continuity correction, via :func:`statsmodels.stats.contingency_tables.mcnemar`;
* :func:`bootstrap_test` — Keller, Mariéthoz & Bengio's (2004) bootstrap
  percentile test of a measure difference: the documents' eight joint events are
  resampled with replacement (a multinomial draw of the eight counts,
  vectorised);
* :func:`randomization_test` — approximate randomization: each document's pair of
  predictions is exchanged with probability 1/2;
* :func:`dcf_proportion_test` — Keller et al.'s adapted (paired) proportion test
  for the detection cost function.

Macro (category) level, from per-category scores: :func:`macro_t_test` (paired
t-test, Yang & Liu's T-test) and :func:`macro_s_test` (sign test, S-test).

All p-values are two-sided. Positive differences mean A is better. The scalar
tests return the p-value as a float; the resampling tests return a
:class:`~isbetter.inference.records.TestResult` (``p_value``, the observed
difference as ``estimate`` and, for the bootstrap, the percentile ``interval``).

References
----------
.. [1] Yang, Liu (1999). A re-examination of text categorization methods. SIGIR.
.. [2] Keller, Mariéthoz, Bengio (2004). Significance tests for bizarre measures in
   2-class classification tasks. IDIAP-RR 04-34.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy import stats

from isbetter.core.validate import check_positive_int, check_probability
from isbetter.f1.measures import Measure, dcf
from isbetter.f1.predictions import JointCounts
from isbetter.inference.records import TestResult
from isbetter.inference.resampling import percentile_test

__all__ = [
    "BOOTSTRAP_DESCRIPTION",
    "RANDOMIZATION_DESCRIPTION",
    "Baselines",
    "bootstrap_average_test",
    "bootstrap_test",
    "dcf_proportion_test",
    "macro_s_test",
    "macro_t_test",
    "mcnemar_test",
    "p_test",
    "randomization_test",
    "s_test",
]


@dataclass(frozen=True)
class Baselines:
    """The options of the frequentist baselines of :func:`~isbetter.compare_f1`.

    ``baselines=True`` is ``Baselines()``; ``baselines=False`` runs none.

    Attributes
    ----------
    resamples : int, default: 10000
        Resamples of the bootstrap and randomization tests (at most
        :data:`~isbetter.f1.averages.AVERAGE_MAX_RESAMPLES` for the macro / micro bootstrap).

    Examples
    --------
    >>> Baselines(resamples=2000)
    Baselines(resamples=2000)
    """

    resamples: int = 10_000

    def __post_init__(self) -> None:
        object.__setattr__(self, "resamples", check_positive_int(self.resamples, "resamples"))


def s_test(counts: JointCounts) -> float:
    """Sign test on the documents where exactly one system is right.

    Examples
    --------
    >>> import numpy as np
    >>> c = JointCounts(pos=np.array([50, 12, 3, 5]), neg=np.array([2, 4, 6, 40]))
    >>> round(s_test(c), 4)   # 18 documents only A gets right, 7 only B
    0.0433
    """
    _, only_a, only_b, _ = counts.correctness()
    n = only_a + only_b
    if n == 0:
        return 1.0
    return float(stats.binomtest(only_a, n, 0.5).pvalue)


def p_test(counts: JointCounts) -> float:
    """Two-proportion z-test of the accuracies, ignoring the pairing (Yang & Liu's p-test)."""
    from statsmodels.stats.proportion import proportions_ztest

    both, only_a, only_b, _ = counts.correctness()
    n = int(counts.n)
    right = np.array([both + only_a, both + only_b])
    if right[0] == right[1]:
        return 1.0
    if np.all(right == 0) or np.all(right == n):
        return 1.0
    _, p = proportions_ztest(right, np.array([n, n]))
    return float(p)


def mcnemar_test(counts: JointCounts, *, exact: bool = True) -> float:
    """McNemar's test of the correctness table (exact binomial, or chi-squared corrected)."""
    from statsmodels.stats.contingency_tables import mcnemar

    both, only_a, only_b, neither = counts.correctness()
    if only_a + only_b == 0:
        return 1.0
    table = np.array([[both, only_a], [only_b, neither]])
    return float(mcnemar(table, exact=exact, correction=True).pvalue)


#: descriptions of the resampling tests (``TestResult.description``)
BOOTSTRAP_DESCRIPTION = (
    "bootstrap percentile test of the measure difference: documents resampled with "
    "replacement (Keller, Mariethoz & Bengio 2004)"
)
RANDOMIZATION_DESCRIPTION = (
    "approximate randomization test: each document's two predictions exchanged with probability 1/2"
)


def _events(counts: JointCounts) -> np.ndarray:
    return np.concatenate([np.asarray(counts.pos), np.asarray(counts.neg)]).astype(np.int64)


def _delta_from_events(ev: np.ndarray, measure: Measure) -> np.ndarray:
    """Measure difference from event counts of shape (..., 8)."""
    cells_a, cells_b = JointCounts(pos=ev[..., :4], neg=ev[..., 4:]).cells()
    return measure.difference(measure(*cells_a), measure(*cells_b))


def _first_of_pairs(ev: np.ndarray) -> list[bool]:
    """For the discordant pairs (1,0)/(0,1) of positives and negatives: draw (1,0) first?

    By count, ties by the orientation of the whole table, so that exchanging A and B
    (which swaps each pair) gives the mirrored random stream.
    """
    from isbetter.f1.paired import orientation

    orient = bool(orientation(np.array([ev[1] - ev[2], ev[5] - ev[6]])))
    return [bool(ev[i] < ev[j]) if ev[i] != ev[j] else orient for i, j in ((1, 2), (5, 6))]


def _canonical_order(ev: np.ndarray) -> np.ndarray:
    """Event order whose discordant pairs are sorted (A/B-exchange symmetric stream)."""
    order = np.arange(8)
    for (i, j), first in zip(((1, 2), (5, 6)), _first_of_pairs(ev), strict=True):
        if not first:
            order[i], order[j] = j, i
    return order


def bootstrap_test(
    counts: JointCounts,
    measure: Measure,
    *,
    resamples: int = 10_000,
    level: float = 0.95,
    rng: np.random.Generator,
) -> TestResult:
    """Keller et al.'s bootstrap percentile test of ``delta = psi(A) - psi(B)``.

    The N documents' joint events (true class x prediction of A x prediction of
    B, eight kinds) are resampled with replacement `resamples` times; each
    resample is a multinomial draw of the eight counts. The p-value is
    ``2 min(P*(delta <= 0), P*(delta >= 0))`` (ties at 0 count half to each side),
    the interval the equal-tailed percentile interval at `level`.

    Returns
    -------
    TestResult
        Named ``"bootstrap"``: ``p_value``, the observed difference as ``estimate``
        and the percentile ``interval``.

    Examples
    --------
    >>> import numpy as np
    >>> from isbetter.f1.measures import f1
    >>> c = JointCounts(pos=np.array([300, 300, 200, 200]), neg=np.array([200, 200, 300, 300]))
    >>> r = bootstrap_test(c, f1, rng=np.random.default_rng(0))
    >>> round(r.estimate, 3), r.p_value < 0.01, r.interval.kind
    (0.1, True, 'percentile')
    """
    resamples = check_positive_int(resamples, "resamples")
    level = check_probability(level, "level", open_interval=True)
    ev = _events(counts)
    observed = float(_delta_from_events(ev, measure))
    order = _canonical_order(ev)
    n = int(ev.sum())
    draws = np.empty((resamples, 8), dtype=np.int64)
    draws[:, order] = rng.multinomial(n, ev[order] / n, size=resamples)
    d = _delta_from_events(draws, measure)
    return percentile_test("bootstrap", d, observed, level, BOOTSTRAP_DESCRIPTION)


def randomization_test(
    counts: JointCounts,
    measure: Measure,
    *,
    resamples: int = 10_000,
    rng: np.random.Generator,
) -> TestResult:
    """Approximate randomization test of ``delta``: swap each document's predictions w.p. 1/2.

    Only discordant documents change when swapped, so a permutation is drawn as
    two binomial counts per class (how many (1,0) become (0,1) and back). The
    p-value is ``(1 + #{|delta*| >= |delta|}) / (resamples + 1)``.

    Returns
    -------
    TestResult
        Named ``"randomization"``: ``p_value`` and the observed difference as ``estimate``.

    Examples
    --------
    >>> import numpy as np
    >>> from isbetter.f1.measures import f1
    >>> c = JointCounts(pos=np.array([30, 3, 1, 10]), neg=np.array([5, 1, 2, 48]))
    >>> round(randomization_test(c, f1, rng=np.random.default_rng(0)).p_value, 2)
    0.36
    """
    resamples = check_positive_int(resamples, "resamples")
    ev = _events(counts)
    observed = float(_delta_from_events(ev, measure))
    draws = np.broadcast_to(ev, (resamples, 8)).copy()
    for (i, j), first in zip(((1, 2), (5, 6)), _first_of_pairs(ev), strict=True):
        lo, hi = (i, j) if first else (j, i)
        s_lo = rng.binomial(ev[lo], 0.5, size=resamples)
        s_hi = rng.binomial(ev[hi], 0.5, size=resamples)
        draws[:, lo] += s_hi - s_lo
        draws[:, hi] += s_lo - s_hi
    d = _delta_from_events(draws, measure)
    hits = np.sum(np.abs(d) >= abs(observed) - 1e-12)
    return TestResult(
        name="randomization",
        p_value=float((1 + hits) / (resamples + 1)),
        estimate=observed,
        description=RANDOMIZATION_DESCRIPTION,
    )


def dcf_proportion_test(
    counts: JointCounts, *, cost_fn: float = 1.0, cost_fp: float = 1.0, p_positive: float = 0.5
) -> float:
    """Keller et al.'s adapted proportion test of a DCF difference (paired form, eq. 9).

    Only the documents on which A and B disagree enter the variance:
    ``sd^2 = Cfn^2 P(p)^2 N_p,AB / N_p^2 + Cfp^2 P(n)^2 N_n,AB / N_n^2``.
    """
    m = dcf(cost_fn, cost_fp, p_positive)
    pos, neg = np.asarray(counts.pos), np.asarray(counts.neg)
    n_p, n_n = pos.sum(), neg.sum()
    d = float(_delta_from_events(_events(counts), m))
    pp = p_positive
    var = 0.0
    if n_p:
        var += (cost_fn * pp) ** 2 * (pos[1] + pos[2]) / n_p**2
    if n_n:
        var += (cost_fp * (1 - pp)) ** 2 * (neg[1] + neg[2]) / n_n**2
    if var == 0:
        return 1.0
    return float(2 * stats.norm.sf(abs(d) / np.sqrt(var)))


def macro_t_test(scores_a: Any, scores_b: Any) -> float:
    """Paired t-test over per-category scores (Yang & Liu's T-test); NaN if undefined."""
    a, b = np.asarray(scores_a, dtype=float), np.asarray(scores_b, dtype=float)
    d = a - b
    if d.size < 2:
        return float("nan")
    if np.all(d == d[0]):
        return 1.0 if d[0] == 0 else 0.0
    return float(stats.ttest_rel(a, b).pvalue)


def macro_s_test(scores_a: Any, scores_b: Any) -> float:
    """Sign test over per-category scores, ties dropped (Yang & Liu's S-test)."""
    d = np.asarray(scores_a, dtype=float) - np.asarray(scores_b, dtype=float)
    k, n = int(np.sum(d > 0)), int(np.sum(d != 0))
    if n == 0:
        return 1.0
    return float(stats.binomtest(k, n, 0.5).pvalue)


def bootstrap_average_test(
    cells: np.ndarray,
    measure: Measure,
    *,
    resamples: int = 10_000,
    level: float = 0.95,
    rng: np.random.Generator,
    chunk_cells: int = 2_000_000,
) -> dict[str, TestResult]:
    """Keller-style bootstrap of the macro and micro differences of a multi-class task.

    The documents' joint outcomes (true class, prediction of A, prediction of B;
    ``cells`` of shape (m, m, m)) are resampled with replacement, in chunks.

    Returns
    -------
    dict
        ``{"macro": TestResult, "micro": TestResult}``, each named ``"bootstrap"``
        (see :func:`bootstrap_test`).
    """
    from isbetter.f1.multiclass import macro_micro

    resamples = check_positive_int(resamples, "resamples")
    cells = np.asarray(cells, dtype=np.int64)
    m = cells.shape[0]
    flat = cells.reshape(-1)
    n = int(flat.sum())
    step = max(1, chunk_cells // flat.size)
    mac, mic = [], []
    for start in range(0, resamples, step):
        s = min(step, resamples - start)
        draws = rng.multinomial(n, flat / n, size=s).reshape(s, m, m, m).astype(float)
        ma, mi = macro_micro(draws.sum(axis=3), measure)
        mb, mib = macro_micro(draws.sum(axis=2), measure)
        mac.append(measure.difference(ma, mb))
        mic.append(measure.difference(mi, mib))
    out = {}
    obs_a = macro_micro(cells.sum(axis=2), measure)
    obs_b = macro_micro(cells.sum(axis=1), measure)
    for i, (key, parts) in enumerate((("macro", mac), ("micro", mic))):
        observed = float(measure.difference(obs_a[i], obs_b[i]))
        out[key] = percentile_test(
            "bootstrap", np.concatenate(parts), observed, level, BOOTSTRAP_DESCRIPTION
        )
    return out
