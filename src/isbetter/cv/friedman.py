"""The frequentist baselines of a ranking: mean ranks, Friedman, Iman–Davenport, Nemenyi.

What reviewers expect beside a ranking of systems over many data sets (Demšar
2006 [1]_; autorank, scmamp): from a data-set × system table of scores,

* each system's **mean rank** — the systems are ranked on every data set (1 =
  best, ties get the average of the ranks they span; scores within a relative
  1e-12 of each other are tied, as a mean summed in another order may differ in
  its last bit), and the ranks averaged;
* **Friedman's** χ²_F = 12N / (k(k + 1)) · [Σ_j R_j² − k(k + 1)² / 4] on k − 1
  degrees of freedom, from the mean ranks R_j of k systems on N data sets;
* **Iman–Davenport's** F_F = (N − 1) χ²_F / (N(k − 1) − χ²_F) on k − 1 and
  (k − 1)(N − 1) degrees of freedom, the less conservative form of the same test;
* **Nemenyi's critical difference** CD = q_α √(k(k + 1) / (6N)), with q_α the
  studentized range quantile for k groups and infinite degrees of freedom over
  √2: two systems whose mean ranks differ by at least CD differ significantly;
* the **groups** of the CD diagram: the maximal runs of systems, in order of
  mean rank, whose mean ranks all lie within less than CD of each other (the
  bars of Demšar's Fig. 1; :func:`isbetter.plots.plot_cd_diagram` draws them).

For per-fold scores each system's score on a data set is its mean over the folds.
The ranks are :func:`scipy.stats.rankdata`'s, the quantiles and tail
probabilities those of :data:`scipy.stats.studentized_range`, :data:`scipy.stats.chi2`
and :data:`scipy.stats.f`. χ²_F is Demšar's, without a correction for ties, so
that χ²_F, F_F and the CD diagram all read the same mean ranks (as in scmamp and
Orange); :func:`scipy.stats.friedmanchisquare` gives the same value when no data
set has tied scores, and a larger one when some do (it divides by
1 − Σ(t³ − t) / (N k (k² − 1)) over the groups of t tied scores).

References
----------
.. [1] Demšar (2006). Statistical comparisons of classifiers over multiple data
   sets. JMLR 7, 1-30.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from isbetter.core.errors import InputError, InputTypeError
from isbetter.core.validate import check_finite_array, check_probability
from isbetter.inference.records import from_json_number, to_json_number

__all__ = [
    "CriticalDifference",
    "FriedmanNemenyi",
    "RankTest",
    "dataset_means",
    "friedman_nemenyi",
    "score_matrix",
    "snap_ties",
]

#: the significance levels of the critical differences reported by default
ALPHAS: tuple[float, ...] = (0.05, 0.10)


@dataclass(frozen=True)
class RankTest:
    """A test on mean ranks: its statistic, degrees of freedom and p-value.

    Attributes
    ----------
    statistic : float
        χ²_F (Friedman) or F_F (Iman–Davenport); ``inf`` when every data set
        ranks the systems the same way, without ties.
    df : tuple of int
        Degrees of freedom: ``(k - 1,)`` for χ², ``(k - 1, (k - 1)(N - 1))`` for F.
    p_value : float
        Upper tail probability of the statistic.
    """

    statistic: float
    df: tuple[int, ...]
    p_value: float

    def text(self, name: str, symbol: str) -> str:
        """Return the test as a report writes it, e.g. ``Friedman χ²(4) = 12.345, p = 0.01``.

        An infinite statistic (every data set ranks the systems in the same order,
        without ties: the ranks leave no residual variance) is said in words.

        Examples
        --------
        >>> RankTest(3.5, (2, 10), 0.07).text("Iman–Davenport", "F")
        'Iman–Davenport F(2, 10) = 3.500, p = 0.07'
        >>> RankTest(math.inf, (2, 10), 0.0).text("Iman–Davenport", "F")  # doctest: +ELLIPSIS
        'Iman–Davenport F(2, 10): every data set ranks the systems in the same order, ...'
        """
        df = ", ".join(str(d) for d in self.df)
        if math.isinf(self.statistic):
            return (
                f"{name} {symbol}({df}): every data set ranks the systems in the same order, "
                "without ties, so the statistic is infinite and p = 0 (the ranks agree perfectly)"
            )
        return f"{name} {symbol}({df}) = {self.statistic:.3f}, p = {self.p_value:.4g}"

    def to_dict(self) -> dict[str, Any]:
        """Return ``{"statistic", "df", "p_value"}``; ``df`` a number or a pair."""
        df: Any = self.df[0] if len(self.df) == 1 else list(self.df)
        return {
            "statistic": to_json_number(self.statistic),
            "df": df,
            "p_value": to_json_number(self.p_value),
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> RankTest:
        """Rebuild from :meth:`to_dict`."""
        df = data["df"]
        return cls(
            statistic=from_json_number(data["statistic"]),
            df=tuple(int(d) for d in (df if isinstance(df, list) else [df])),
            p_value=from_json_number(data["p_value"]),
        )


@dataclass(frozen=True)
class CriticalDifference:
    """Nemenyi's critical difference at one significance level, and its groups.

    Attributes
    ----------
    alpha : float
        Significance level (family-wise, over all pairs).
    q : float
        q_α: the studentized range quantile of k groups over √2.
    cd : float
        The critical difference of mean ranks.
    groups : tuple of tuple of str
        The maximal runs of systems (best mean rank first) whose mean ranks lie
        within less than `cd` of each other: no two systems of a group differ
        significantly. A system that differs from every other forms a group alone.
    """

    alpha: float
    q: float
    cd: float
    groups: tuple[tuple[str, ...], ...]

    def to_dict(self) -> dict[str, Any]:
        """Return ``{"alpha", "cd", "q", "groups"}``."""
        return {
            "alpha": self.alpha,
            "cd": self.cd,
            "q": self.q,
            "groups": [list(g) for g in self.groups],
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> CriticalDifference:
        """Rebuild from :meth:`to_dict`."""
        return cls(
            alpha=float(data["alpha"]),
            q=float(data["q"]),
            cd=float(data["cd"]),
            groups=tuple(tuple(g) for g in data["groups"]),
        )


@dataclass(frozen=True)
class FriedmanNemenyi:
    """Mean ranks, Friedman's and Iman–Davenport's tests, Nemenyi's critical differences.

    Attributes
    ----------
    mean_ranks : dict of str to float
        Each system's mean rank over the data sets (1 = best; ties averaged), in
        the order the systems were given.
    n_datasets : int
        N, the number of data sets (blocks).
    higher_is_better : bool
        Direction of the scores that were ranked.
    friedman : RankTest
        Friedman's χ²_F on k − 1 degrees of freedom (no tie correction).
    iman_davenport : RankTest
        Iman–Davenport's F_F.
    nemenyi : tuple of CriticalDifference
        One per significance level, smallest α first.
    """

    mean_ranks: dict[str, float]
    n_datasets: int
    higher_is_better: bool
    friedman: RankTest
    iman_davenport: RankTest
    nemenyi: tuple[CriticalDifference, ...]

    @property
    def systems(self) -> tuple[str, ...]:
        """The systems, in the order given."""
        return tuple(self.mean_ranks)

    @property
    def by_rank(self) -> tuple[str, ...]:
        """The systems from the best mean rank to the worst (ties: in the order given)."""
        return tuple(sorted(self.mean_ranks, key=self.mean_ranks.__getitem__))

    def critical_difference(self, alpha: float = 0.05) -> CriticalDifference:
        """Return the critical difference at `alpha` (one of those computed)."""
        for c in self.nemenyi:
            if math.isclose(c.alpha, alpha):
                return c
        computed = ", ".join(f"{c.alpha:g}" for c in self.nemenyi)
        raise InputError(f"`alpha`: no critical difference at {alpha!r}; computed at {computed}.")

    def significant_levels(self, a: str, b: str) -> tuple[float, ...]:
        """Return the levels α at which the mean ranks of `a` and `b` differ significantly."""
        record = self.pair_record(a, b)
        return tuple(c.alpha for c in self.nemenyi if record[f"nemenyi_different_{c.alpha:g}"])

    def pair_record(self, a: str, b: str) -> dict[str, Any]:
        """Return the flat columns of the pair `a`, `b` in a ranking's table (and CSV).

        The mean ranks of both, per level whether they differ by at least the
        critical difference, and the two omnibus tests.
        """
        diff = abs(self.mean_ranks[a] - self.mean_ranks[b])
        out: dict[str, Any] = {"mean_rank_a": self.mean_ranks[a], "mean_rank_b": self.mean_ranks[b]}
        for c in self.nemenyi:
            out[f"nemenyi_cd_{c.alpha:g}"] = c.cd
            out[f"nemenyi_different_{c.alpha:g}"] = bool(diff >= c.cd)
        return {
            **out,
            "friedman_statistic": self.friedman.statistic,
            "friedman_p_value": self.friedman.p_value,
            "iman_davenport_statistic": self.iman_davenport.statistic,
            "iman_davenport_p_value": self.iman_davenport.p_value,
            "n_datasets": self.n_datasets,
        }

    def to_dict(self) -> dict[str, Any]:
        """Return JSON-safe data, the ``baselines`` block of a ranking's metric."""
        return {
            "friedman": self.friedman.to_dict(),
            "iman_davenport": self.iman_davenport.to_dict(),
            "mean_ranks": dict(self.mean_ranks),
            "nemenyi_cd": [c.to_dict() for c in self.nemenyi],
            "n_datasets": self.n_datasets,
            "higher_is_better": self.higher_is_better,
            "ties": "average",
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> FriedmanNemenyi:
        """Rebuild from :meth:`to_dict`."""
        return cls(
            mean_ranks={str(s): float(r) for s, r in data["mean_ranks"].items()},
            n_datasets=int(data["n_datasets"]),
            higher_is_better=bool(data["higher_is_better"]),
            friedman=RankTest.from_dict(data["friedman"]),
            iman_davenport=RankTest.from_dict(data["iman_davenport"]),
            nemenyi=tuple(CriticalDifference.from_dict(c) for c in data["nemenyi_cd"]),
        )


def dataset_means(
    table: Any, metric: str | None = None, systems: Sequence[str] | None = None
) -> pd.DataFrame:
    """Return each system's mean score per data set: a data set × system DataFrame.

    Parameters
    ----------
    table : ScoreTable
        Per-fold (or per-data-set) scores.
    metric : str, optional
        Metric column; default: the first.
    systems : sequence of str, optional
        The columns, in this order; default: every system of the table.

    Returns
    -------
    pandas.DataFrame
        Rows: the data sets in order of appearance; columns: the systems.
    """
    metric = table._metric(metric)
    names = list(table.systems if systems is None else systems)
    unknown = [s for s in names if s not in table.systems]
    if unknown:
        raise InputError(
            "`systems`: unknown system(s) "
            + ", ".join(map(repr, unknown))
            + ". Available systems: "
            + ", ".join(map(repr, table.systems))
            + "."
        )
    means = table.data.groupby(["dataset", "system"], sort=False)[metric].mean().unstack("system")
    return means.reindex(index=list(table.datasets), columns=names)


def friedman_nemenyi(
    data: Any,
    *,
    metric: str | None = None,
    systems: Sequence[str] | None = None,
    higher_is_better: bool | None = None,
    alpha: float | Sequence[float] = ALPHAS,
) -> FriedmanNemenyi:
    """Mean ranks, Friedman's and Iman–Davenport's tests and Nemenyi's critical differences.

    Parameters
    ----------
    data : ScoreTable, pandas.DataFrame or 2-D array
        A :class:`~isbetter.cv.scores.ScoreTable` (each system's score on a data set
        is its mean over the folds), or one row per data set and one column per
        system.
    metric : str, optional
        With a ScoreTable: the metric column (default: the first).
    systems : sequence of str, optional
        The systems, in the order to report them: a subset of a ScoreTable's or
        DataFrame's systems (default: all), or the names of an array's columns
        (default: ``"1"``, ``"2"``, ...).
    higher_is_better : bool, optional
        Direction of the scores; default: the ScoreTable's direction of `metric`,
        else True.
    alpha : float or sequence of float, default: (0.05, 0.10)
        Significance levels of the critical differences.

    Returns
    -------
    FriedmanNemenyi

    Raises
    ------
    InputError
        Fewer than 2 data sets or 2 systems, missing or non-finite scores, unknown
        or repeated systems, a level outside (0, 1).

    Examples
    --------
    Three systems on six data sets (higher is better); "b" wins on every one:

    >>> import pandas as pd
    >>> auc = pd.DataFrame({"a": [0.71, 0.80, 0.64, 0.90, 0.77, 0.60],
    ...                     "b": [0.75, 0.83, 0.70, 0.93, 0.80, 0.65],
    ...                     "c": [0.70, 0.80, 0.66, 0.88, 0.76, 0.58]})
    >>> res = friedman_nemenyi(auc)
    >>> res.mean_ranks  # a and c tie on the second data set: 2.5 each
    {'a': 2.25, 'b': 1.0, 'c': 2.75}
    >>> round(res.friedman.statistic, 2), round(res.iman_davenport.p_value, 5)
    (9.75, 0.00023)
    >>> [(c.alpha, round(c.cd, 3), c.groups) for c in res.nemenyi]
    [(0.05, 1.353, (('b', 'a'), ('a', 'c'))), (0.1, 1.185, (('b',), ('a', 'c')))]
    """
    from scipy import stats

    names, frame, direction = score_matrix(
        data, metric, systems, higher_is_better, "mean ranks and the Friedman test need"
    )
    levels = _levels(alpha)
    scores = frame.to_numpy()
    n, k = scores.shape

    signed = snap_ties(-scores if direction else scores)
    ranks = stats.rankdata(signed, method="average", axis=1)
    mean = ranks.mean(axis=0)
    chi2 = 12.0 * n / (k * (k + 1)) * (np.sum(mean**2) - k * (k + 1) ** 2 / 4.0)
    chi2 = max(float(chi2), 0.0)  # all ties: 0 up to rounding
    friedman = RankTest(chi2, (k - 1,), float(stats.chi2.sf(chi2, k - 1)))
    room = n * (k - 1) - chi2  # 0 when every data set ranks the systems alike, without ties
    d1, d2 = k - 1, (k - 1) * (n - 1)
    if room <= 1e-9 * n * (k - 1):
        iman = RankTest(math.inf, (d1, d2), 0.0)
    else:
        f_stat = (n - 1) * chi2 / room
        iman = RankTest(float(f_stat), (d1, d2), float(stats.f.sf(f_stat, d1, d2)))
    nemenyi = tuple(_critical_difference(a, names, mean, n) for a in levels)
    return FriedmanNemenyi(
        mean_ranks={s: float(r) for s, r in zip(names, mean, strict=True)},
        n_datasets=int(n),
        higher_is_better=bool(direction),
        friedman=friedman,
        iman_davenport=iman,
        nemenyi=nemenyi,
    )


def score_matrix(
    data: Any,
    metric: str | None = None,
    systems: Sequence[str] | None = None,
    higher_is_better: bool | None = None,
    needs: str = "a ranking over data sets needs",
) -> tuple[list[str], pd.DataFrame, bool]:
    """Return the systems, their scores per data set and the scores' direction.

    The input of every ranking over data sets (:func:`friedman_nemenyi`, the
    Plackett–Luce model): a ScoreTable (each system's mean score per data set,
    :func:`dataset_means`; direction: the table's), or a DataFrame or 2-D array of
    one row per data set and one column per system (direction: higher is better
    unless told). The scores are checked finite, the systems distinct, and at least 2
    of each present (`needs` says who needs them, in the error).
    """
    from isbetter.cv.scores import ScoreTable

    if isinstance(data, ScoreTable):
        metric = data._metric(metric)
        frame = dataset_means(data, metric, systems)
        direction = data.higher_is_better[metric] if higher_is_better is None else higher_is_better
    else:
        if metric is not None:
            raise InputError("`metric` is for a ScoreTable; a table of scores has one metric.")
        frame = _frame(data, systems)
        direction = True if higher_is_better is None else higher_is_better
    if not isinstance(direction, bool | np.bool_):
        raise InputTypeError(f"`higher_is_better` must be a bool, got {direction!r}.")
    n, k = check_finite_array(frame.to_numpy(), "data").shape
    if n < 2 or k < 2:
        raise InputError(
            f"`data` has {n} data set(s) and {k} system(s); {needs} at least 2 of each."
        )
    names = [str(s) for s in frame.columns]
    if len(set(names)) != len(names):
        raise InputError(f"`data` names a system twice: {names!r}.")
    return names, frame, bool(direction)


def _frame(data: Any, systems: Sequence[str] | None) -> pd.DataFrame:
    """Return a data set × system DataFrame from a DataFrame or a 2-D array."""
    if isinstance(data, pd.DataFrame):
        if systems is None:
            return data
        unknown = [s for s in systems if s not in data.columns]
        if unknown:
            raise InputError(
                f"`systems`: no column(s) {', '.join(map(repr, unknown))} in `data`; its "
                f"columns: {', '.join(map(str, data.columns))}."
            )
        return data[list(systems)]
    try:
        arr = np.asarray(data, dtype=float)
    except (TypeError, ValueError) as exc:
        raise InputTypeError(
            "`data` must be a ScoreTable, a DataFrame (data sets x systems) or a 2-D array "
            f"of scores, got {type(data).__name__}."
        ) from exc
    if arr.ndim != 2:
        raise InputError(
            f"`data` must be 2-D (one row per data set, one column per system), got shape "
            f"{arr.shape}."
        )
    names = [str(i + 1) for i in range(arr.shape[1])] if systems is None else list(systems)
    if len(names) != arr.shape[1]:
        raise InputError(
            f"`systems` names {len(names)} systems, but `data` has {arr.shape[1]} columns."
        )
    return pd.DataFrame(arr, columns=names)


#: scores of one data set this close (relative to the larger) are tied: floating-point
#: rounding of a mean, not a difference (0.7217 summed in two orders differs in the last bit)
TIE_TOLERANCE = 1e-12


def snap_ties(scores: np.ndarray) -> np.ndarray:
    """Return `scores` with the values of a row that differ by rounding only made equal.

    Each row is sorted; a value within :data:`TIE_TOLERANCE` (relative) of the one
    before it takes that one's value, so the ranks of ties are averaged.
    """
    order = np.argsort(scores, axis=1, kind="stable")
    ranked = np.take_along_axis(scores, order, axis=1)
    scale = np.maximum(np.abs(ranked[:, 1:]), np.abs(ranked[:, :-1]))
    close = np.diff(ranked, axis=1) <= TIE_TOLERANCE * scale
    starts = np.concatenate([np.ones((len(ranked), 1), dtype=bool), ~close], axis=1)
    first = np.maximum.accumulate(np.where(starts, np.arange(ranked.shape[1]), 0), axis=1)
    out = np.empty_like(scores)
    np.put_along_axis(out, order, np.take_along_axis(ranked, first, axis=1), axis=1)
    return out


def _levels(alpha: float | Sequence[float]) -> tuple[float, ...]:
    values = [alpha] if not isinstance(alpha, Sequence) else list(alpha)
    if not values:
        raise InputError("`alpha` gives no significance level; pass e.g. alpha=0.05.")
    levels = [check_probability(a, "alpha", open_interval=True) for a in values]
    return tuple(sorted(set(levels)))


def _critical_difference(
    alpha: float, names: list[str], mean: np.ndarray, n: int
) -> CriticalDifference:
    """Nemenyi's CD at `alpha` and the maximal groups of systems closer than CD."""
    from scipy import stats

    k = len(names)
    q = float(stats.studentized_range.ppf(1.0 - alpha, k, np.inf)) / math.sqrt(2.0)
    cd = q * math.sqrt(k * (k + 1) / (6.0 * n))
    order = np.argsort(mean, kind="stable")
    ranked = mean[order]
    groups: list[tuple[str, ...]] = []
    covered = -1  # last position already inside a group
    for i in range(k):
        j = i
        while j + 1 < k and ranked[j + 1] - ranked[i] < cd:
            j += 1
        if j > covered:  # not inside the group that started before i
            groups.append(tuple(names[p] for p in order[i : j + 1]))
            covered = j
    return CriticalDifference(alpha=alpha, q=q, cd=cd, groups=tuple(groups))
