"""Ranks of K systems from posterior draws of their effects: P(best), ranks, orders.

Given draws of one effect per system (larger is better) — the joint correlated
model's :math:`b_k` — every draw orders the systems, so :func:`rank_summary` reads
off one posterior: the probability that each system is the best, its expected rank
and 95% rank interval, the probability of each rank position, and the most probable
orders, strict and ROPE-aware (in each draw, systems tied in groups whose effects
span at most the ROPE). The record, :class:`RankSummary`, is light and
JSON-safe; rankings carry one per metric.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

__all__ = ["RankSummary", "rank_summary"]

#: how many of the most probable orders a summary keeps
TOP_ORDERS = 5
#: the rank interval's probability
RANK_INTERVAL = 0.95


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

    def to_dict(self) -> dict[str, Any]:
        """Return JSON-safe data (the ``"joint"`` block of a ranking's metric)."""
        return {
            "method": self.method,
            "systems": list(self.systems),
            "p_best": dict(self.p_best),
            "expected_rank": dict(self.expected_rank),
            "rank_interval": {s: list(v) for s, v in self.rank_interval.items()},
            "rank_probabilities": {s: list(v) for s, v in self.rank_probabilities.items()},
            "top_orders": [{"order": o, "p": p} for o, p in self.top_orders],
            "rope_orders": [{"order": o, "p": p} for o, p in self.rope_orders],
            "rope": self.rope,
            "draws": self.draws,
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> RankSummary:
        """Rebuild from :meth:`to_dict`."""
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
        )


def _most_probable(labels: list[str], top: int) -> tuple[tuple[str, float], ...]:
    """Return the `top` most frequent labels and their frequencies (ties: first seen first)."""
    values, first, counts = np.unique(labels, return_index=True, return_counts=True)
    order = np.lexsort((first, -counts))[:top]
    return tuple((str(values[i]), float(counts[i] / len(labels))) for i in order)


def rank_summary(
    effects: np.ndarray,
    systems: tuple[str, ...],
    *,
    rope: float = 0.0,
    method: str = "joint",
    top: int = TOP_ORDERS,
) -> RankSummary:
    """Return the ranks and orders of `systems` from draws of their effects.

    Parameters
    ----------
    effects : numpy.ndarray
        ``(draws, K)`` posterior draws, larger is better (score units).
    systems : tuple of str
        The K systems, in the columns' order (also the order of tied systems).
    rope : float, default: 0.0
        The ROPE-aware orders tie systems practically equivalent in a draw: going up
        the draw's order, a system joins the group of the one below it when its
        effect is within `rope` (``<=``) of that group's lowest effect, else starts a
        new group. So every group spans at most the ROPE, and a chain of small gaps
        (a ≈ b ≈ c with c − a beyond the ROPE) is not one group.
    method : str, default: "joint"
        Recorded in the summary.
    top : int, default: 5
        How many of the most probable orders to keep.

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
    ascending = np.argsort(e, axis=1, kind="stable")  # worst first
    ranks = np.empty_like(ascending)
    rows = np.arange(s)[:, None]
    ranks[rows, ascending] = k - np.arange(k)[None, :]  # rank 1: the largest effect
    probs = np.stack([(ranks == r).mean(axis=0) for r in range(1, k + 1)], axis=1)
    tail = (1.0 - RANK_INTERVAL) / 2.0
    low = np.quantile(ranks, tail, axis=0, method="inverted_cdf")
    high = np.quantile(ranks, 1.0 - tail, axis=0, method="inverted_cdf")
    strict = [" < ".join(systems[j] for j in row) for row in ascending]
    sorted_e = np.take_along_axis(e, ascending, axis=1)
    tied = []
    for row, values in zip(ascending, sorted_e, strict=True):
        groups: list[list[int]] = [[int(row[0])]]
        floor = values[0]  # the lowest effect of the current group
        for j, value in zip(row[1:], values[1:], strict=True):
            if value - floor > rope:
                groups.append([int(j)])
                floor = value
            else:
                groups[-1].append(int(j))
        tied.append(" < ".join(" ≈ ".join(systems[j] for j in sorted(g)) for g in groups))
    return RankSummary(
        method=method,
        systems=tuple(systems),
        p_best={name: float(probs[i, 0]) for i, name in enumerate(systems)},
        expected_rank={name: float(ranks[:, i].mean()) for i, name in enumerate(systems)},
        rank_interval={name: (int(low[i]), int(high[i])) for i, name in enumerate(systems)},
        rank_probabilities={name: probs[i].tolist() for i, name in enumerate(systems)},
        top_orders=_most_probable(strict, top),
        rope_orders=_most_probable(tied, top),
        rope=float(rope),
        draws=int(s),
    )
