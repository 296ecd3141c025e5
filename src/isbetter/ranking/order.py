"""From pairwise relations to a partial order: groups, Hasse diagram, one line, conflicts.

For one metric, every pair of systems has a relation (a key of
:data:`isbetter.inference.decisions.RELATIONS`, read off its probabilities by the
likelihood or the threshold rule). Then:

* **equivalence groups**: sets of systems that are pairwise "≈" (cliques), formed by
  complete linkage — pairs are joined in order of their probability of practical
  equivalence, strongest first, and two groups merge only when every pair across
  them is "≈" — so that a chain of weak "≈" relations (a ≈ b ≈ c with c better
  than a) does not put systems with a strict relation into one group;
* the **strict order** between groups: "≫" / "≪" (and, under the likelihood
  rule, nothing weaker) as a directed graph from the worse to the better;
* its **transitive reduction** (the Hasse diagram, by :mod:`networkx`);
* a **one-line order** such as ``TnT < Collins ≈ LAPOS ≈ Stanford < NLP4J < Flair``:
  groups ordered by their longest chain from the bottom, incomparable groups of
  one layer written in braces;
* every **inconsistency**, reported and never hidden: a cycle of strict
  relations, an "≈" that is not transitive (an "≈" pair left in two groups).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from isbetter.inference.decisions import mirror

__all__ = ["PartialOrder", "partial_order"]

_STRICT_A = ("a_better",)
_STRICT_B = ("b_better",)


@dataclass(frozen=True)
class PartialOrder:
    """The partial order of the systems on one metric.

    Attributes
    ----------
    systems : tuple of str
        The systems, in the ranking's order.
    groups : tuple of tuple of str
        Equivalence groups, worst layer first: sets of pairwise-equivalent systems,
        formed from the most clearly equivalent pairs first.
    hasse_edges : tuple of (str, str)
        Edges ``(worse, better)`` of the transitive reduction, between group
        labels (a group's members joined by " ≈ "; a single system's name).
    line : str
        The one-line order.
    inconsistencies : tuple of str
        Every cycle, non-transitive "≈" and strict relation within a group.
    """

    systems: tuple[str, ...]
    groups: tuple[tuple[str, ...], ...]
    hasse_edges: tuple[tuple[str, str], ...]
    line: str
    inconsistencies: tuple[str, ...]

    def to_dict(self) -> dict[str, Any]:
        """Return JSON-safe data."""
        return {
            "systems": list(self.systems),
            "groups": [list(g) for g in self.groups],
            "hasse_edges": [list(e) for e in self.hasse_edges],
            "order": self.line,
            "inconsistencies": list(self.inconsistencies),
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> PartialOrder:
        """Rebuild from :meth:`to_dict`."""
        return cls(
            systems=tuple(data["systems"]),
            groups=tuple(tuple(g) for g in data["groups"]),
            hasse_edges=tuple((a, b) for a, b in data["hasse_edges"]),
            line=data["order"],
            inconsistencies=tuple(data["inconsistencies"]),
        )


def group_label(group: tuple[str, ...]) -> str:
    """Return the label of a group in the Hasse diagram: its members joined by " ≈ "."""
    return " ≈ ".join(group)


def partial_order(
    systems: tuple[str, ...],
    relations: Mapping[tuple[str, str], str],
    strength: Mapping[tuple[str, str], float] | None = None,
) -> PartialOrder:
    """Build the partial order of `systems` from pairwise `relations`.

    Parameters
    ----------
    systems : tuple of str
        The systems.
    relations : mapping (a, b) -> relation key
        One entry per pair (either orientation); the relation of A = a to B = b.
    strength : mapping (a, b) -> float, optional
        How strongly each "≈" pair is equivalent (its P(rope)); groups form from the
        strongest pairs first. Default: the order of `systems`.

    Examples
    --------
    >>> rel = {("TnT", "Collins"): "b_better", ("Collins", "LAPOS"): "equivalent",
    ...        ("TnT", "LAPOS"): "b_better", ("LAPOS", "Flair"): "b_better",
    ...        ("Collins", "Flair"): "b_better", ("TnT", "Flair"): "b_better"}
    >>> partial_order(("TnT", "Collins", "LAPOS", "Flair"), rel).line
    'TnT < Collins ≈ LAPOS < Flair'
    """
    import networkx as nx

    rank = {s: i for i, s in enumerate(systems)}
    equivalent: list[tuple[str, str]] = []
    better: list[tuple[str, str]] = []  # (worse, better)
    for (a, b), rel in relations.items():
        if rel == "equivalent":
            equivalent.append((a, b))
        elif rel in _STRICT_A:
            better.append((b, a))
        elif rel in _STRICT_B:
            better.append((a, b))
    groups = _groups(systems, equivalent, relations, strength or {}, rank)
    of = {s: g for g in groups for s in g}
    problems = [
        f"≈ is not transitive: {a} ≈ {b}, but {group_label(of[a])} and {group_label(of[b])} "
        "cannot form one group (a strict relation between their members)"
        for a, b in equivalent
        if of[a] != of[b]
    ]
    dag = nx.DiGraph()
    dag.add_nodes_from(groups)
    for worse, best in better:
        dag.add_edge(of[worse], of[best])
    cycles = list(nx.simple_cycles(dag))
    for cycle in cycles:
        names = [group_label(g) for g in [*cycle, cycle[0]]]
        problems.append("cycle: " + " < ".join(names))
    if cycles:  # break the cycles to draw and write what is left: drop the edges on them
        for cycle in cycles:
            for g1, g2 in zip(cycle, [*cycle[1:], cycle[0]], strict=True):
                if dag.has_edge(g1, g2):
                    dag.remove_edge(g1, g2)
    hasse = nx.transitive_reduction(dag)
    layers = _layers(dag, groups, rank)
    ordered = tuple(g for layer in layers for g in layer)
    return PartialOrder(
        systems=tuple(systems),
        groups=ordered,
        hasse_edges=tuple(
            sorted(
                ((group_label(u), group_label(v)) for u, v in hasse.edges()),
                key=lambda e: (e[0], e[1]),
            )
        ),
        line=_line(layers),
        inconsistencies=tuple(problems),
    )


def _groups(
    systems: tuple[str, ...],
    equivalent: list[tuple[str, str]],
    relations: Mapping[tuple[str, str], str],
    strength: Mapping[tuple[str, str], float],
    rank: dict[str, int],
) -> list[tuple[str, ...]]:
    """Complete-linkage groups: merge along "≈" pairs, strongest first, cliques only."""
    group = {s: frozenset([s]) for s in systems}

    def key(pair: tuple[str, str]) -> tuple[float, int, int]:
        a, b = pair
        p = strength.get(pair, strength.get((b, a), 0.0))
        return (-p, *sorted((rank[a], rank[b])))  # type: ignore[return-value]

    def relation(a: str, b: str) -> str | None:
        if (a, b) in relations:
            return relations[(a, b)]
        return mirror(relations[(b, a)]) if (b, a) in relations else None

    for a, b in sorted(equivalent, key=key):
        ga, gb = group[a], group[b]
        if ga == gb or any(relation(x, y) != "equivalent" for x in ga for y in gb):
            continue
        merged = ga | gb
        for s in merged:
            group[s] = merged
    unique = {g: None for g in group.values()}
    return [tuple(sorted(g, key=rank.__getitem__)) for g in unique]


def _layers(dag: Any, groups: list[tuple[str, ...]], rank: dict[str, int]) -> list[list[Any]]:
    """Return groups by the length of the longest chain below them (worst first)."""
    import networkx as nx

    level: dict[Any, int] = {}
    for g in nx.topological_sort(dag):
        level[g] = max((level[p] + 1 for p in dag.predecessors(g)), default=0)
    layers: list[list[Any]] = [[] for _ in range(max(level.values(), default=-1) + 1)]
    for g in sorted(groups, key=lambda g: rank[g[0]]):
        layers[level[g]].append(g)
    return layers


def _line(layers: list[list[tuple[str, ...]]]) -> str:
    parts = []
    for layer in layers:
        labels = [group_label(g) for g in layer]
        parts.append(labels[0] if len(labels) == 1 else "{" + ", ".join(labels) + "}")
    return " < ".join(parts)
