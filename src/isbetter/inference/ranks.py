"""Ranks of K systems from posterior draws of their effects: P(best), ranks, orders.

Given draws of one effect per system (larger is better) — the joint correlated
model's :math:`b_k` — every draw orders the systems, so :func:`rank_summary` reads
off one posterior: the probability that each system is the best, its expected rank
and 95% rank interval, the probability of each rank position, and the most probable
orders, strict and ROPE-aware (in each draw, systems tied in groups whose effects
span at most the ROPE). The record, :class:`RankSummary`, is light and
JSON-safe; rankings carry one per metric.

P(best) here is one posterior probability, estimated by the fraction of draws in
which the system's effect is the largest; its interval
(:attr:`RankSummary.p_best_interval`) is therefore a Monte Carlo interval — how far
the estimate may be from the exact posterior probability with this many draws — and
not posterior uncertainty: the Jeffreys binomial interval on the draws' effective
number (the ESS of the indicator "this system is best", which counts their
autocorrelation). P(best) means this for every model. Plackett–Luce adds a
different quantity under its own name, :attr:`RankSummary.p_wins_next`: E[w_k], the
probability that system k ranks first on a new data set, with the credible interval
of w_k.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

__all__ = ["RankSummary", "monte_carlo_interval", "rank_summary", "rope_groups"]

#: how many of the most probable orders a summary keeps
TOP_ORDERS = 5
#: the rank interval's probability (and that of P(best)'s interval)
RANK_INTERVAL = 0.95
#: what :func:`rank_summary`'s interval of P(best) is, in words
MONTE_CARLO_INTERVAL = (
    "95% Monte Carlo interval of the estimate (Jeffreys, on the effective number of draws)"
)
#: fewer draws per chain than this: the ESS is not estimated, every draw counts as one
_MIN_ESS_DRAWS = 8


@dataclass(frozen=True)
class RankSummary:
    """P(best), expected ranks, rank intervals and the most probable orders of K systems.

    Rank 1 is the best. Orders are written worst first, as the partial orders of a
    ranking: ``"nbc < j48 < aode"``; ROPE-aware ones tie systems within the ROPE of
    each other: ``"nbc < j48 ≈ j48gr < aode ≈ hnb"`` (tied systems in the ranking's
    order; see :func:`rank_summary`).

    Attributes
    ----------
    method : str
        The model the draws came from (``"joint"``).
    systems : tuple of str
        The systems, in the ranking's order.
    p_best : dict
        ``{system: P(its effect is the largest)}``.
    expected_rank : dict
        ``{system: posterior mean rank}``.
    rank_interval : dict
        ``{system: (low, high)}``: equal-tailed 95% interval of the rank.
    rank_probabilities : dict
        ``{system: [P(rank 1), ..., P(rank K)]}``.
    top_orders : tuple of (str, float)
        The most probable strict orders and their probabilities.
    rope_orders : tuple of (str, float)
        The most probable ROPE-aware orders and their probabilities.
    rope : float
        The ROPE of :attr:`rope_orders` (score units).
    draws : int
        How many posterior draws the probabilities count.
    p_best_interval : dict
        ``{system: (low, high)}``: the 95% interval of P(best) that
        :attr:`p_best_interval_kind` names; empty in summaries saved before it
        existed.
    p_best_interval_kind : str
        What the interval is: a Monte Carlo interval of the estimated probability
        (:data:`MONTE_CARLO_INTERVAL`); empty when there is none. (Summaries saved
        before P(best) meant P(largest) for Plackett–Luce too hold E[w_k] and its
        credible interval here, and say so.)
    p_wins_next : dict
        ``{system: P(it ranks first on a new data set)}`` where the model gives it
        (Plackett–Luce: E[w_k]); empty otherwise.
    p_wins_next_interval : dict
        ``{system: (low, high)}``: the interval of :attr:`p_wins_next` that
        :attr:`p_wins_next_interval_kind` names.
    p_wins_next_interval_kind : str
        What that interval is (Plackett–Luce: the credible interval of w_k).
    """

    method: str
    systems: tuple[str, ...]
    p_best: dict[str, float]
    expected_rank: dict[str, float]
    rank_interval: dict[str, tuple[int, int]]
    rank_probabilities: dict[str, list[float]] = field(repr=False)
    top_orders: tuple[tuple[str, float], ...]
    rope_orders: tuple[tuple[str, float], ...]
    rope: float
    draws: int
    p_best_interval: dict[str, tuple[float, float]] = field(default_factory=dict)
    p_best_interval_kind: str = ""
    p_wins_next: dict[str, float] = field(default_factory=dict)
    p_wins_next_interval: dict[str, tuple[float, float]] = field(default_factory=dict)
    p_wins_next_interval_kind: str = ""

    def by_expected_rank(self) -> tuple[str, ...]:
        """Return the systems, best expected rank first (equal ones in the ranking's order)."""
        return tuple(sorted(self.systems, key=self.expected_rank.__getitem__))

    def pair_record(self, a: str, b: str) -> dict[str, Any]:
        """Return the flat columns of the pair `a`, `b` in a ranking's table (and CSV).

        Both systems' P(best) with its interval, expected rank and rank interval,
        P(wins next data set) with its interval where the model gives it, and the
        most probable orders (``"order (p); ..."``), as in the JSON.
        """
        out: dict[str, Any] = {"joint_method": self.method}
        for side, name in (("a", a), ("b", b)):
            low, high = self.p_best_interval.get(name, (None, None))
            out |= {
                f"p_best_{side}": self.p_best[name],
                f"p_best_{side}_low": low,
                f"p_best_{side}_high": high,
                f"expected_rank_{side}": self.expected_rank[name],
                f"rank_interval_{side}_low": self.rank_interval[name][0],
                f"rank_interval_{side}_high": self.rank_interval[name][1],
            }
            if self.p_wins_next:
                low, high = self.p_wins_next_interval.get(name, (None, None))
                out |= {
                    f"p_wins_next_{side}": self.p_wins_next[name],
                    f"p_wins_next_{side}_low": low,
                    f"p_wins_next_{side}_high": high,
                }
        return {
            **out,
            "p_best_interval_kind": self.p_best_interval_kind,
            "top_orders": "; ".join(f"{o} ({p:.4f})" for o, p in self.top_orders),
        }

    def to_dict(self) -> dict[str, Any]:
        """Return JSON-safe data (the ``"joint"`` block of a ranking's metric)."""
        return {  # the block first, in its order; then what the plots and reports add
            "method": self.method,
            "p_best": dict(self.p_best),
            "expected_rank": dict(self.expected_rank),
            "rank_interval": {s: list(v) for s, v in self.rank_interval.items()},
            "top_orders": [{"order": o, "p": p} for o, p in self.top_orders],
            "systems": list(self.systems),
            "rank_probabilities": {s: list(v) for s, v in self.rank_probabilities.items()},
            "rope_orders": [{"order": o, "p": p} for o, p in self.rope_orders],
            "rope": self.rope,
            "draws": self.draws,
            "p_best_interval": {s: list(v) for s, v in self.p_best_interval.items()},
            "p_best_interval_kind": self.p_best_interval_kind,
            **(
                {
                    "p_wins_next": dict(self.p_wins_next),
                    "p_wins_next_interval": {
                        s: list(v) for s, v in self.p_wins_next_interval.items()
                    },
                    "p_wins_next_interval_kind": self.p_wins_next_interval_kind,
                }
                if self.p_wins_next
                else {}
            ),
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> RankSummary:
        """Rebuild from :meth:`to_dict` (also a summary saved without P(best)'s interval).

        A Plackett–Luce summary saved when its ``p_best`` held E[w_k] (no
        ``p_wins_next``) is read with today's meanings: E[w_k] and its credible
        interval become P(wins next data set), and P(best) is the probability of rank
        1 of the weights' order (``rank_probabilities``), without an interval.
        """
        if data["method"] == "plackett_luce" and "p_wins_next" not in data:
            data = {
                **data,
                "p_wins_next": data["p_best"],
                "p_wins_next_interval": data.get("p_best_interval", {}),
                "p_wins_next_interval_kind": data.get("p_best_interval_kind", ""),
                "p_best": {s: v[0] for s, v in data["rank_probabilities"].items()},
                "p_best_interval": {},
                "p_best_interval_kind": "",
            }
        interval = data.get("p_best_interval", {})
        return cls(
            method=data["method"],
            systems=tuple(data["systems"]),
            p_best={s: float(v) for s, v in data["p_best"].items()},
            expected_rank={s: float(v) for s, v in data["expected_rank"].items()},
            rank_interval={s: (int(v[0]), int(v[1])) for s, v in data["rank_interval"].items()},
            rank_probabilities={
                s: [float(x) for x in v] for s, v in data["rank_probabilities"].items()
            },
            top_orders=tuple((o["order"], float(o["p"])) for o in data["top_orders"]),
            rope_orders=tuple((o["order"], float(o["p"])) for o in data["rope_orders"]),
            rope=float(data["rope"]),
            draws=int(data["draws"]),
            p_best_interval={s: (float(v[0]), float(v[1])) for s, v in interval.items()},
            p_best_interval_kind=str(data.get("p_best_interval_kind", "")),
            p_wins_next={s: float(v) for s, v in data.get("p_wins_next", {}).items()},
            p_wins_next_interval={
                s: (float(v[0]), float(v[1]))
                for s, v in data.get("p_wins_next_interval", {}).items()
            },
            p_wins_next_interval_kind=str(data.get("p_wins_next_interval_kind", "")),
        )


def _most_probable(labels: list[str], top: int) -> tuple[tuple[str, float], ...]:
    """Return the `top` most frequent labels and their frequencies (ties: first seen first)."""
    values, first, counts = np.unique(labels, return_index=True, return_counts=True)
    order = np.lexsort((first, -counts))[:top]
    return tuple((str(values[i]), float(counts[i] / len(labels))) for i in order)


def monte_carlo_interval(
    best: np.ndarray, chains: int = 1, prob: float = RANK_INTERVAL
) -> np.ndarray:
    """Return the Jeffreys interval of each column's fraction of true indicators.

    `best` is ``(draws, K)`` booleans, the chains one after another; the
    interval is the Beta(x + 1/2, n − x + 1/2) quantiles with n the ESS of each
    column (:func:`~isbetter.inference.diagnostics.ess_bulk` over `chains`; every
    draw when a column is constant or a chain has too few draws) and x = n times
    the fraction, the lower end 0 when x = 0 and the upper 1 when x = n (Brown,
    Cai & DasGupta 2001). Returns ``(K, 2)``.

    Examples
    --------
    Independent draws, then the same draws sorted (as autocorrelated as can be:
    their ESS is tiny, so the interval is wide):

    >>> first = np.random.default_rng(0).random(400) < 0.75
    >>> monte_carlo_interval(np.column_stack([first, ~first])).round(3).tolist()
    [[0.656, 0.755], [0.245, 0.344]]
    >>> stuck = np.sort(first)[::-1]
    >>> monte_carlo_interval(np.column_stack([stuck, ~stuck])).round(3).tolist()
    [[0.127, 0.984], [0.016, 0.873]]
    """
    from scipy import stats

    from isbetter.inference.diagnostics import ess_bulk

    b = np.asarray(best, dtype=float)
    s, k = b.shape
    n = np.full(k, float(s))
    varies = b.min(axis=0) != b.max(axis=0)
    if s // chains >= _MIN_ESS_DRAWS and varies.any():
        per_chain = b[: (s // chains) * chains].reshape(chains, s // chains, k)
        ess = ess_bulk(per_chain[:, :, varies])
        n[varies] = np.where(np.isfinite(ess), np.minimum(ess, s), s)
    x = b.mean(axis=0) * n
    tail = (1.0 - prob) / 2.0
    low = np.where(x > 0, stats.beta.ppf(tail, x + 0.5, n - x + 0.5), 0.0)
    high = np.where(x < n, stats.beta.ppf(1 - tail, x + 0.5, n - x + 0.5), 1.0)
    return np.column_stack([low, high])


def rope_groups(values: np.ndarray, rope: float) -> list[list[int]]:
    """Split sorted `values` into groups of neighbours that span at most `rope`.

    The rule, defined on the gaps between neighbours only: a run of values that
    spans more than the ROPE is cut at its widest gap (several equally wide, within
    1e-9 of the run's span: the one nearest the middle of the run; two equally near:
    both), and each part is cut again until every group spans at most the ROPE. The
    cuts depend on the gaps alone and the tie-break on their distance from the
    middle, so reversing the values (a metric's direction reversed) reverses the
    groups: effects (0, 0.6, 1.0) under a ROPE of 0.6 group as {0}, {0.6, 1.0}, and
    (0, 0.4, 1.0) as {0, 0.4}, {1.0}. A gap wider than the ROPE is always cut.

    Parameters
    ----------
    values : numpy.ndarray
        Ascending values.
    rope : float
        The widest span of a group.

    Returns
    -------
    list of list of int
        The groups, as positions in `values`, lowest first.

    Examples
    --------
    >>> rope_groups(np.array([0.0, 0.6, 1.0]), 0.6)
    [[0], [1, 2]]
    >>> rope_groups(np.array([0.0, 0.4, 1.0]), 0.6)
    [[0, 1], [2]]
    >>> rope_groups(np.array([0.0, 0.8, 1.6, 2.4]), 1.0)
    [[0, 1], [2, 3]]
    """
    out: list[list[int]] = []
    todo = [(0, len(values))]  # half-open runs of positions, lowest first
    while todo:
        lo, hi = todo.pop(0)
        span = values[hi - 1] - values[lo]
        if span <= rope:
            out.append(list(range(lo, hi)))
            continue
        gaps = np.diff(values[lo:hi])
        widest = np.flatnonzero(gaps >= gaps.max() - 1e-9 * span)
        centre = (hi - lo - 2) / 2  # the middle gap's position in the run
        distance = np.abs(widest - centre)
        cuts = [lo + 1 + int(i) for i in widest[distance == distance.min()]]
        bounds = [lo, *cuts, hi]
        todo = [*zip(bounds[:-1], bounds[1:], strict=True), *todo]
    return out


def _rope_orders(
    e: np.ndarray, ascending: np.ndarray, systems: tuple[str, ...], rope: float
) -> list[str]:
    """Each draw's order in groups spanning at most `rope` (:func:`rope_groups`).

    Tied systems are written in the given order. A draw whose groups are the runs
    between its gaps wider than the ROPE (each run spans at most the ROPE, and no gap
    within the ROPE comes within 1e-9 of the span of being cut as a widest gap) is
    written from those runs, once per distinct order and runs; the others go through
    :func:`rope_groups`, which cuts every gap wider than the ROPE and, then, only runs
    that span more.
    """
    sorted_e = np.take_along_axis(e, ascending, axis=1)
    gaps = np.diff(sorted_e, axis=1)
    cut = gaps > rope
    inside = np.where(cut, 0.0, gaps).cumsum(axis=1)
    run_span = inside - np.maximum.accumulate(np.where(cut, inside, 0.0), axis=1)
    tolerance = 1e-9 * (sorted_e[:, -1:] - sorted_e[:, :1])
    least_cut = np.where(cut, gaps, np.inf).min(axis=1, initial=np.inf)[:, None]
    close = ~cut & (gaps >= least_cut - tolerance)
    runs_only = (run_span <= rope).all(axis=1) & ~close.any(axis=1)
    tied = [""] * len(e)
    keys, first, inverse = np.unique(
        np.column_stack([ascending, cut])[runs_only], axis=0, return_index=True, return_inverse=True
    )
    rows = np.flatnonzero(runs_only)
    labels = []
    for key in keys:
        row, cuts = key[: len(systems)], np.flatnonzero(key[len(systems) :]) + 1
        groups = [sorted(int(j) for j in g) for g in np.split(row, cuts)]
        labels.append(" < ".join(" ≈ ".join(systems[j] for j in g) for g in groups))
    for i, k in zip(rows, np.asarray(inverse).reshape(-1), strict=True):
        tied[i] = labels[k]
    for i in np.flatnonzero(~runs_only):
        row, values = ascending[i], sorted_e[i]
        groups = [sorted(int(row[j]) for j in g) for g in rope_groups(values, rope)]
        tied[i] = " < ".join(" ≈ ".join(systems[j] for j in g) for g in groups)
    return tied


def rank_summary(
    effects: np.ndarray,
    systems: tuple[str, ...],
    *,
    rope: float = 0.0,
    method: str = "joint",
    top: int = TOP_ORDERS,
    chains: int = 1,
    tiebreak: np.random.Generator | None = None,
) -> RankSummary:
    """Return the ranks and orders of `systems` from draws of their effects.

    Parameters
    ----------
    effects : numpy.ndarray
        ``(draws, K)`` posterior draws, larger is better (score units).
    systems : tuple of str
        The K systems, in the columns' order (also the order of tied systems).
    rope : float, default: 0.0
        The ROPE-aware orders tie systems practically equivalent in a draw: the draw's
        effects, in order, are split into groups that span at most `rope` (``<=``),
        cutting at the widest gaps first (:func:`rope_groups`); so a chain of small
        gaps (a ≈ b ≈ c with c − a beyond the ROPE) is not one group, and reversing
        the metric's direction reverses the order, groups and all.
    method : str, default: "joint"
        Recorded in the summary.
    top : int, default: 5
        How many of the most probable orders to keep.
    chains : int, default: 1
        How many chains the draws are, one after another: the effective number of
        draws behind P(best)'s Monte Carlo interval (:func:`monte_carlo_interval`)
        is estimated per chain.
    tiebreak : numpy.random.Generator, optional
        Break systems tied within a draw (equal effects) in an order drawn at random
        from this, so that tied systems share the ranks they span evenly. Without it
        tied systems keep their columns' order (the later one ranks better): right
        for continuous effects, where ties have probability 0, but not for systems
        with identical scores, whose means are equal in every draw.

    Returns
    -------
    RankSummary

    Examples
    --------
    >>> e = np.array([[0.0, 1.0, 1.2], [0.0, 1.3, 1.0], [0.0, 1.0, 1.5]])
    >>> r = rank_summary(e, ("a", "b", "c"), rope=0.6)
    >>> r.p_best["c"], r.rank_interval["a"], r.top_orders[0], r.rope_orders
    (0.6666666666666666, (3, 3), ('a < b < c', 0.6666666666666666), (('a < b ≈ c', 1.0),))
    """
    e = np.asarray(effects, dtype=float)
    s, k = e.shape
    rows = np.arange(s)[:, None]
    if tiebreak is None:
        ascending = np.argsort(e, axis=1, kind="stable")  # worst first
    else:  # sort the columns shuffled per draw: ties fall in a random order
        shuffle = np.argsort(tiebreak.random((s, k)), axis=1)
        ascending = shuffle[rows, np.argsort(e[rows, shuffle], axis=1, kind="stable")]
    ranks = np.empty_like(ascending)
    ranks[rows, ascending] = k - np.arange(k)[None, :]  # rank 1: the largest effect
    probs = np.stack([(ranks == r).mean(axis=0) for r in range(1, k + 1)], axis=1)
    tail = (1.0 - RANK_INTERVAL) / 2.0
    low = np.quantile(ranks, tail, axis=0, method="inverted_cdf")
    high = np.quantile(ranks, 1.0 - tail, axis=0, method="inverted_cdf")
    strict = [" < ".join(systems[j] for j in row) for row in ascending]
    best = monte_carlo_interval(ranks == 1, chains)
    return RankSummary(
        method=method,
        systems=tuple(systems),
        p_best={name: float(probs[i, 0]) for i, name in enumerate(systems)},
        expected_rank={name: float(ranks[:, i].mean()) for i, name in enumerate(systems)},
        rank_interval={name: (int(low[i]), int(high[i])) for i, name in enumerate(systems)},
        rank_probabilities={name: probs[i].tolist() for i, name in enumerate(systems)},
        top_orders=_most_probable(strict, top),
        rope_orders=_most_probable(_rope_orders(e, ascending, systems, rope), top),
        rope=float(rope),
        draws=int(s),
        p_best_interval={
            name: (float(lo), float(hi)) for name, (lo, hi) in zip(systems, best, strict=True)
        },
        p_best_interval_kind=MONTE_CARLO_INTERVAL,
    )
