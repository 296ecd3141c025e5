"""The result of a ranking: every pairwise comparison and, per metric, the partial order."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from isbetter.core.errors import InputError
from isbetter.core.provenance import signature
from isbetter.inference.decisions import likelihood_decision, symbol, threshold_decision
from isbetter.inference.ranks import RankSummary
from isbetter.ranking.order import PartialOrder, partial_order
from isbetter.results.comparison import ComparisonSummary

__all__ = ["RankingResult", "relations_of"]


@dataclass(frozen=True)
class RankingResult:
    """Systems ranked on one or more metrics: pairwise table and partial orders.

    It holds only light summaries (no posterior draws), so it is its own
    :meth:`summary` and serialises to JSON (:meth:`to_dict`, :meth:`from_dict`).

    Attributes
    ----------
    systems : tuple of str
        The systems ranked, in the order given.
    metrics : tuple of str
        The metrics (per-document input: the measure, or ``"<measure> macro"`` and
        ``"<measure> micro"`` for a multi-class task).
    rule : {"likelihood", "threshold"}
        How a pair's relation was read off its probabilities.
    threshold : float
        Probability a relation needs under the threshold rule.
    margin : float
        Under the likelihood rule, a winner closer than this to a runner-up that
        is the ROPE gives "≳" / "≲".
    pairs : tuple of ComparisonSummary
        One per metric and pair of systems (A before B in :attr:`systems`).
    relations : dict
        ``{metric: {(a, b): relation key}}`` for the same pairs.
    orders : dict of str to PartialOrder
        Per metric: equivalence groups, Hasse edges, one-line order, inconsistencies.
    simplex : dict
        ``{metric: {(a, b): [[mass A better, ROPE, B better], ...]}}``: up to 200
        per-draw points of each pair, for the triangle plots.
    settings : dict
        Seed, rule, ROPEs, method, options, execution, cache use, versions.
    joint : dict of str to RankSummary
        Per metric, with ``method="joint"``: P(best), expected rank, 95% rank
        interval, the most probable orders (:mod:`isbetter.inference.ranks`); empty
        for a pairwise ranking.
    """

    systems: tuple[str, ...]
    metrics: tuple[str, ...]
    rule: str
    threshold: float
    margin: float
    pairs: tuple[ComparisonSummary, ...] = field(repr=False)
    relations: dict[str, dict[tuple[str, str], str]] = field(repr=False)
    orders: dict[str, PartialOrder]
    simplex: dict[str, dict[tuple[str, str], list[list[float]]]] = field(
        default_factory=dict, repr=False, compare=False
    )
    settings: dict[str, Any] = field(default_factory=dict, repr=False, compare=False)
    joint: dict[str, RankSummary] = field(default_factory=dict, repr=False)

    kind = "ranking"

    @property
    def signature(self) -> str:
        """The one-line reproducibility signature."""
        return signature(self.settings)

    def pair(self, a: str, b: str, metric: str | None = None) -> ComparisonSummary:
        """Return the comparison of `a` and `b` on `metric` (default: the first), as a vs b."""
        metric = self.metrics[0] if metric is None else metric
        for p in self.pairs:
            if p.settings.get("ranking_metric", p.metric) != metric:
                continue
            if (p.system_a, p.system_b) == (a, b):
                return p
            if (p.system_a, p.system_b) == (b, a):
                return _swapped(p)
        raise InputError(f"No comparison of {a!r} and {b!r} on {metric!r} in this ranking.")

    def order(self, metric: str | None = None) -> str:
        """Return the one-line order on `metric` (default: the first)."""
        if metric is not None and metric not in self.orders:
            from isbetter.core.errors import InputError

            raise InputError(
                f"`metric`: the ranking has no metric {metric!r}; it has "
                f"{', '.join(map(repr, self.metrics))}."
            )
        return self.orders[self.metrics[0] if metric is None else metric].line

    def with_rule(
        self, rule: str, *, threshold: float | None = None, margin: float | None = None
    ) -> RankingResult:
        """Return the ranking read with another rule, threshold or margin (no refit).

        Examples
        --------
        >>> strict = ranking.with_rule("threshold", threshold=0.99)  # doctest: +SKIP
        """
        from dataclasses import replace

        from isbetter.core.validate import check_choice, check_probability
        from isbetter.core.vocabulary import RANKING_RULES

        rule = check_choice(rule, "rule", RANKING_RULES)
        threshold = (
            self.threshold if threshold is None else check_probability(threshold, "threshold")
        )
        margin = self.margin if margin is None else check_probability(margin, "margin")
        relations = relations_of(self.pairs, rule, threshold, margin)
        return replace(
            self,
            rule=rule,
            threshold=threshold,
            margin=margin,
            relations=relations,
            orders=orders_of(self.systems, self.pairs, relations),
            settings={**self.settings, "rule": rule, "threshold": threshold, "margin": margin},
        )

    def summary(self) -> RankingResult:
        """Return the result itself: it is already a light record."""
        return self

    def to_frame(self) -> pd.DataFrame:
        """Return the pairwise table: one row per metric and pair, with the relation decided."""
        rows = []
        for p in self.pairs:
            metric = p.settings.get("ranking_metric", p.metric)
            rel = self.relations[metric][(p.system_a, p.system_b)]
            rows.append(
                {
                    "ranking_metric": metric,
                    **p.to_record(),
                    "relation": rel,
                    "relation_symbol": symbol(rel),
                }
            )
        return pd.DataFrame(rows)

    def to_dict(self) -> dict[str, Any]:
        """Return JSON-safe data: per metric, its pairs, order, Hasse edges, groups."""
        metrics: dict[str, Any] = {}
        for m in self.metrics:
            pairs = []
            for p in self.pairs:
                if p.settings.get("ranking_metric", p.metric) != m:
                    continue
                rel = self.relations[m][(p.system_a, p.system_b)]
                pairs.append(
                    {
                        "a": p.system_a,
                        "b": p.system_b,
                        "p_a_better": p.p_a_better,
                        "p_rope": p.p_rope,
                        "p_b_better": p.p_b_better,
                        "relation": rel,
                        "symbol": symbol(rel),
                        "comparison": p.to_dict(),
                        "simplex": self.simplex.get(m, {}).get((p.system_a, p.system_b), []),
                    }
                )
            metrics[m] = {"pairs": pairs, **self.orders[m].to_dict()}
            if m in self.joint:
                metrics[m]["joint"] = self.joint[m].to_dict()
        return {
            "kind": self.kind,
            "systems": list(self.systems),
            "rule": self.rule,
            "threshold": self.threshold,
            "margin": self.margin,
            "metrics": metrics,
            "seed": self.settings.get("seed"),
            "settings": self.settings,
            "signature": self.signature,
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> RankingResult:
        """Rebuild from :meth:`to_dict`."""
        pairs: list[ComparisonSummary] = []
        relations: dict[str, dict[tuple[str, str], str]] = {}
        simplex: dict[str, dict[tuple[str, str], list[list[float]]]] = {}
        orders: dict[str, PartialOrder] = {}
        joint: dict[str, RankSummary] = {}
        for m, block in data["metrics"].items():
            relations[m], simplex[m] = {}, {}
            for p in block["pairs"]:
                pairs.append(ComparisonSummary.from_dict(p["comparison"]))
                relations[m][(p["a"], p["b"])] = p["relation"]
                simplex[m][(p["a"], p["b"])] = p.get("simplex", [])
            orders[m] = PartialOrder.from_dict(block)
            if "joint" in block:
                joint[m] = RankSummary.from_dict(block["joint"])
        return cls(
            systems=tuple(data["systems"]),
            metrics=tuple(data["metrics"]),
            rule=data["rule"],
            threshold=float(data["threshold"]),
            margin=float(data["margin"]),
            pairs=tuple(pairs),
            relations=relations,
            orders=orders,
            simplex=simplex,
            settings=dict(data["settings"]),
            joint=joint,
        )


def relations_of(
    pairs: tuple[ComparisonSummary, ...] | list[ComparisonSummary],
    rule: str,
    threshold: float,
    margin: float,
) -> dict[str, dict[tuple[str, str], str]]:
    """Return each pair's relation under `rule`, per ranking metric."""
    out: dict[str, dict[tuple[str, str], str]] = {}
    for p in pairs:
        metric = p.settings.get("ranking_metric", p.metric)
        rel = (
            likelihood_decision(p.probabilities, margin)
            if rule == "likelihood"
            else threshold_decision(p.probabilities, threshold)
        )
        out.setdefault(metric, {})[(p.system_a, p.system_b)] = rel
    return out


def orders_of(
    systems: tuple[str, ...],
    pairs: tuple[ComparisonSummary, ...] | list[ComparisonSummary],
    relations: dict[str, dict[tuple[str, str], str]],
) -> dict[str, PartialOrder]:
    """Return the partial order per metric (groups form from the strongest P(rope) first)."""
    strengths: dict[str, dict[tuple[str, str], float]] = {}
    for p in pairs:
        metric = p.settings.get("ranking_metric", p.metric)
        strengths.setdefault(metric, {})[(p.system_a, p.system_b)] = p.p_rope
    return {m: partial_order(systems, relations[m], strengths.get(m)) for m in relations}


def _swapped(p: ComparisonSummary) -> ComparisonSummary:
    """Return the same comparison seen from the other side (probabilities mirrored)."""
    from dataclasses import replace

    from isbetter.inference.records import Probabilities

    pred = p.predictive
    return replace(
        p,
        system_a=p.system_b,
        system_b=p.system_a,
        p_a_better=p.p_b_better,
        p_b_better=p.p_a_better,
        predictive=None
        if pred is None
        else Probabilities(pred.p_b_better, pred.p_rope, pred.p_a_better),
        estimate=None,
        observed=None,
        tests=(),
    )
