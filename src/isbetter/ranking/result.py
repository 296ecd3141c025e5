"""The result of a ranking: every pairwise comparison and, per metric, order and chain."""

from __future__ import annotations

import numbers
from dataclasses import dataclass, field, replace
from typing import Any

import pandas as pd

from isbetter.core.errors import InputError, InputTypeError
from isbetter.core.provenance import signature
from isbetter.core.validate import check_choice, check_probability
from isbetter.core.vocabulary import (
    METHOD_NAMES,
    RANK_QUANTITIES,
    RANKING_RULES,
    method_family,
    pair_quantity,
)
from isbetter.cv.friedman import FriedmanNemenyi
from isbetter.inference.decisions import (
    likelihood_decision,
    no_rope_decision,
    symbol,
    threshold_decision,
)
from isbetter.inference.ranks import RankSummary
from isbetter.ranking.order import (
    CHAIN_BY_PROBABILITIES,
    PartialOrder,
    expected_ranks,
    partial_order,
)
from isbetter.results.comparison import ComparisonResult

__all__ = ["RankingResult", "check_rule", "metric_of", "relations_of"]


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
        ``"<measure> micro"`` for a multi-class task, or ``"<measure> <class>"`` per
        class when some classes are named or the averages are left out).
    rule : {"likelihood", "threshold"}
        How a pair's relation was read off its probabilities.
    threshold : float
        Probability a relation needs under the threshold rule.
    margin : float
        Under the likelihood rule, a winner closer than this to a runner-up that
        is the ROPE gives "≳" / "≲".
    pairs : tuple of ComparisonResult
        One per metric and pair of systems (A before B in :attr:`systems`), each in its
        light form; :func:`metric_of` gives the metric of :attr:`metrics` it belongs to.
    relations : dict
        ``{metric: {(a, b): relation key}}`` for the same pairs.
    orders : dict of str to PartialOrder
        Per metric: equivalence groups, Hasse edges, one-line order, inconsistencies,
        and the paper's chain (:attr:`PartialOrder.chain`, :meth:`chain`).
    simplex : dict
        ``{metric: {(a, b): [[mass A better, ROPE, B better], ...]}}``: up to 200
        per-draw points of each pair, for the triangle plots.
    baselines : dict of str to FriedmanNemenyi
        Per metric, the frequentist baselines of a ranking over several data sets
        (:func:`~isbetter.cv.friedman.friedman_nemenyi`: mean ranks, Friedman,
        Iman–Davenport, Nemenyi's critical differences); empty for one data set or
        one test set, where there is nothing to rank across.
    settings : dict
        Seed, rule, ROPEs, method, options, execution, cache use, versions.
    joint : dict of str to RankSummary
        Per metric, from one model of all the systems (``method="plackett-luce"``):
        P(best), expected rank, 95% rank interval, the most probable orders
        (:mod:`isbetter.inference.ranks`); empty for a pairwise ranking. They are
        about the model's parameters (:meth:`about`): the joint model's mean effects
        b_k, while its pairs, order and chain are about the next data set;
        Plackett–Luce's weights, which also order its chain. P(best) is the
        probability that a system's effect (Plackett–Luce: weight w_k) is the largest;
        Plackett–Luce adds ``p_wins_next``, E[w_k], the probability of ranking first on
        a new data set.
    """

    systems: tuple[str, ...]
    metrics: tuple[str, ...]
    rule: str
    threshold: float
    margin: float
    pairs: tuple[ComparisonResult, ...] = field(repr=False)
    relations: dict[str, dict[tuple[str, str], str]] = field(repr=False)
    orders: dict[str, PartialOrder]
    simplex: dict[str, dict[tuple[str, str], list[list[float]]]] = field(
        default_factory=dict, repr=False, compare=False
    )
    baselines: dict[str, FriedmanNemenyi] = field(default_factory=dict, repr=False)
    settings: dict[str, Any] = field(default_factory=dict, repr=False, compare=False)
    joint: dict[str, RankSummary] = field(default_factory=dict, repr=False)

    kind = "ranking"

    @property
    def signature(self) -> str:
        """The one-line reproducibility signature."""
        return signature(self.settings)

    def pair(self, a: str, b: str, metric: str | None = None) -> ComparisonResult:
        """Return the comparison of `a` and `b` on `metric` (default: the first), as a vs b."""
        metric = self.metrics[0] if metric is None else metric
        for p in self.pairs:
            if metric_of(p) != metric:
                continue
            if (p.system_a, p.system_b) == (a, b):
                return p
            if (p.system_a, p.system_b) == (b, a):
                return p.swapped()
        raise InputError(f"No comparison of {a!r} and {b!r} on {metric!r} in this ranking.")

    def pair_method(self, metric: str | None = None) -> str:
        """Return the method of the pairs on `metric` (default: the first), e.g. ``"f1_paired"``."""
        m = self.metrics[0] if metric is None else metric
        methods = [method_family(p.method) for p in self.pairs if metric_of(p) == m]
        return methods[0] if methods else str(self.settings.get("comparison_method", ""))

    def about(self, metric: str | None = None) -> dict[str, str]:
        """Return what the relations on `metric` (default: the first) are about, in words.

        ``"pairs"``: the quantity of the pairwise table, and so of its relations, the
        one-line order, the groups and the chain (e.g. the difference on the next data
        set); ``"joint"``, with :attr:`joint`: that of P(best), the ranks and the most
        probable orders (the joint model's mean effects b_k, Plackett–Luce's weights).
        """
        m = self.metrics[0] if metric is None else metric
        out = {"pairs": pair_quantity(self.pair_method(m))[1]}
        if m in self.joint:
            method = self.joint[m].method
            out["joint"] = RANK_QUANTITIES.get(method, (method, method))[1]
        return out

    def order(self, metric: str | None = None) -> str:
        """Return the one-line order on `metric` (default: the first)."""
        return self._order(metric).line

    def chain(self, metric: str | None = None) -> str:
        """Return the paper's chain on `metric` (default: the first).

        Every system in one line, worst first by expected rank
        (:attr:`PartialOrder.chain_by` says which), each neighbour pair with its own
        relation — Szymański & Gorman's notation, e.g.
        ``TnT ≈ Collins ≈ LAPOS < Stanford ≲ NLP4J ≈ Flair``.
        """
        return self._order(metric).chain

    def _order(self, metric: str | None) -> PartialOrder:
        if metric is not None and metric not in self.orders:
            raise InputError(
                f"`metric`: the ranking has no metric {metric!r}; it has "
                f"{', '.join(map(repr, self.metrics))}."
            )
        return self.orders[self.metrics[0] if metric is None else metric]

    def with_rule(
        self, rule: str, *, threshold: float | None = None, margin: float | None = None
    ) -> RankingResult:
        """Return the ranking read with another rule, threshold or margin (no refit).

        Examples
        --------
        >>> strict = ranking.with_rule("threshold", threshold=0.99)  # doctest: +SKIP
        """
        rule, threshold, margin = check_rule(
            rule,
            self.threshold if threshold is None else threshold,
            self.margin if margin is None else margin,
        )
        relations = relations_of(self.pairs, rule, threshold, margin)
        return replace(
            self,
            rule=rule,
            threshold=threshold,
            margin=margin,
            relations=relations,
            orders=orders_of(self.systems, self.pairs, relations, self.joint),
            settings={**self.settings, "rule": rule, "threshold": threshold, "margin": margin},
        )

    def summary(self) -> RankingResult:
        """Return the result itself: it is already a light record."""
        return self

    def to_frame(self) -> pd.DataFrame:
        """Return the pairwise table: one row per metric and pair, with the relation decided.

        Each row carries its metric's chain; with :attr:`joint`, both systems'
        P(best), its interval, expected ranks and rank intervals and the most probable
        orders (:meth:`RankSummary.pair_record`). With :attr:`baselines`, each row also
        has both systems' mean ranks, whether
        they differ by Nemenyi's critical difference at each level
        (``nemenyi_different_0.05``, ...) and the Friedman and Iman–Davenport tests.
        """
        rows = []
        for p in self.pairs:
            metric = metric_of(p)
            rel = self.relations[metric][(p.system_a, p.system_b)]
            base, joint = self.baselines.get(metric), self.joint.get(metric)
            rows.append(
                {
                    "ranking_metric": metric,
                    **p.to_record(),
                    "relation": rel,
                    "relation_symbol": symbol(rel),
                    "chain": self.orders[metric].chain,
                    **(base.pair_record(p.system_a, p.system_b) if base is not None else {}),
                    **(joint.pair_record(p.system_a, p.system_b) if joint is not None else {}),
                }
            )
        return pd.DataFrame(rows)

    def to_dict(self) -> dict[str, Any]:
        """Return JSON-safe data: per metric, its pairs, order, Hasse edges, groups."""
        metrics: dict[str, Any] = {}
        for m in self.metrics:
            pairs = []
            for p in self.pairs:
                if metric_of(p) != m:
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
            about = self.about(m)
            # "pairs_about": the pairs' quantity, and that of what is read off them (order,
            # groups, chain); "joint_about": that of the joint block's ranks and orders
            metrics[m] = {"pairs": pairs, "pairs_about": about["pairs"], **self.orders[m].to_dict()}
            if m in self.baselines:
                metrics[m]["baselines"] = self.baselines[m].to_dict()
            if m in self.joint:
                metrics[m]["joint"] = self.joint[m].to_dict()
                metrics[m]["joint_about"] = about["joint"]
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
        pairs: list[ComparisonResult] = []
        relations: dict[str, dict[tuple[str, str], str]] = {}
        simplex: dict[str, dict[tuple[str, str], list[list[float]]]] = {}
        orders: dict[str, PartialOrder] = {}
        baselines: dict[str, FriedmanNemenyi] = {}
        joint: dict[str, RankSummary] = {}
        for m, block in data["metrics"].items():
            if "baselines" in block:
                baselines[m] = FriedmanNemenyi.from_dict(block["baselines"])
            if "joint" in block:
                joint[m] = RankSummary.from_dict(block["joint"])
            relations[m], simplex[m] = {}, {}
            for p in block["pairs"]:
                pairs.append(ComparisonResult.from_dict(p["comparison"]))
                relations[m][(p["a"], p["b"])] = p["relation"]
                simplex[m][(p["a"], p["b"])] = p.get("simplex", [])
            if "chain" in block:
                orders[m] = PartialOrder.from_dict(block)
        systems = tuple(data["systems"])
        if len(orders) < len(relations):  # saved before the chain existed: rebuilt from the pairs
            rebuilt = orders_of(systems, pairs, relations, joint)
            orders = {m: orders.get(m, rebuilt[m]) for m in relations}
        return cls(
            systems=systems,
            metrics=tuple(data["metrics"]),
            rule=data["rule"],
            threshold=float(data["threshold"]),
            margin=float(data["margin"]),
            pairs=tuple(pairs),
            relations=relations,
            orders=orders,
            simplex=simplex,
            baselines=baselines,
            settings=dict(data["settings"]),
            joint=joint,
        )


def metric_of(pair: ComparisonResult) -> str:
    """Return the name a ranking gives `pair`'s metric: its ``ranking_metric``, else its metric."""
    return pair.ranking_metric or pair.metric


def check_rule(rule: Any, threshold: Any, margin: Any) -> tuple[str, float, float]:
    """Return the relation rule, its threshold and margin, checked (for rank and with_rule).

    `threshold` must lie in (0, 1]: a relation needs a positive probability to be
    decided; `margin` in [0, 1].
    """
    rule = check_choice(rule, "rule", RANKING_RULES)
    number = isinstance(threshold, numbers.Real) and not isinstance(threshold, bool)
    if not number or not 0 < float(threshold) <= 1:
        error = InputError if number else InputTypeError
        raise error(f"`threshold` must be in (0, 1], got {threshold!r}.")
    return rule, float(threshold), check_probability(margin, "margin")


def relations_of(
    pairs: tuple[ComparisonResult, ...] | list[ComparisonResult],
    rule: str,
    threshold: float,
    margin: float,
) -> dict[str, dict[tuple[str, str], str]]:
    """Return each pair's relation under `rule`, per ranking metric."""
    out: dict[str, dict[tuple[str, str], str]] = {}
    for p in pairs:
        metric = metric_of(p)
        if p.method == "plackett_luce":  # no ROPE: ≫ only at the threshold
            rel = no_rope_decision(p.probabilities(), rule, threshold, margin)
        else:
            rel = (
                likelihood_decision(p.probabilities(), margin)
                if rule == "likelihood"
                else threshold_decision(p.probabilities(), threshold)
            )
        out.setdefault(metric, {})[(p.system_a, p.system_b)] = rel
    return out


def orders_of(
    systems: tuple[str, ...],
    pairs: tuple[ComparisonResult, ...] | list[ComparisonResult],
    relations: dict[str, dict[tuple[str, str], str]],
    joint: dict[str, RankSummary] | None = None,
) -> dict[str, PartialOrder]:
    """Return the partial order and chain per metric.

    Groups form from the strongest P(rope) first. The chain is ordered by the
    expected rank from the pairwise probabilities
    (:func:`~isbetter.ranking.order.expected_ranks`), so that it is about the same
    quantity as the pairs (the joint model's: the next data set); Plackett–Luce's,
    whose pairs are about its weights, by the posterior expected rank of the weights.
    """
    strengths: dict[str, dict[tuple[str, str], float]] = {}
    probabilities: dict[str, dict[tuple[str, str], tuple[float, float, float]]] = {}
    for p in pairs:
        metric = metric_of(p)
        strengths.setdefault(metric, {})[(p.system_a, p.system_b)] = p.p_rope
        probabilities.setdefault(metric, {})[(p.system_a, p.system_b)] = (
            p.probabilities().as_tuple()
        )
    joint = joint or {}
    orders = {}
    for m in relations:
        # the chain is read off the quantity of the pairs: the joint model's ranks are of its
        # mean effects, its pairs of the next data set, so its pairs order its chain
        if m in joint and joint[m].method != "joint":
            ranks, method = joint[m].expected_rank, joint[m].method
            by = f"the posterior expected rank of the {METHOD_NAMES.get(method, method)}"
        else:
            ranks, by = expected_ranks(systems, probabilities[m]), CHAIN_BY_PROBABILITIES
        orders[m] = partial_order(systems, relations[m], strengths.get(m), ranks, by)
    return orders
