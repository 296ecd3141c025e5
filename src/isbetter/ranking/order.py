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
  relations, an "≈" that is not transitive (an "≈" pair left in two groups);
* the **chain**, Szymański & Gorman's own notation: every system in one line,
  worst first, ordered by a stated score, and between each pair of *neighbours*
  the relation of that pair alone — ``TnT ≈ Collins ≈ LAPOS < Stanford ≲ NLP4J ≈ Flair``
  (TnT ≈ Collins and Collins ≈ LAPOS although TnT < LAPOS). The symbols are
  :data:`CHAIN_SYMBOLS`'s. The score is the **expected rank** (1 = best), by default
  from the pairwise probabilities (:func:`expected_ranks`):
  E[rank k] = 1 + Σ_{j ≠ k} [P(j better than k) + ½ P(j ≈ k)], the rank k would
  get if every pair's relation were drawn from its probabilities, an equivalent
  pair counting half a place; a model of all the systems at once (Plackett–Luce,
  the joint model) gives its posterior expected rank instead. Systems with the
  same score keep the order given.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from isbetter.inference.decisions import mirror

__all__ = [
    "CHAIN_BY_PROBABILITIES",
    "CHAIN_BY_RELATIONS",
    "CHAIN_SYMBOLS",
    "PartialOrder",
    "chain_line",
    "expected_ranks",
    "partial_order",
]

_STRICT_A = ("a_better",)
_STRICT_B = ("b_better",)

#: how a chain writes the relation of a system to its right-hand neighbour (the
#: relation's key, A the left system): the paper's ``<`` for "better by more than the
#: ROPE"; ``>`` only where the score and the pair disagree (a cycle, or a pair the
#: score outweighs); ``?`` for no decided relation (the leaning relations come
#: from the HDI rule, never from a ranking rule)
CHAIN_SYMBOLS: dict[str, str] = {
    "b_better": "<",
    "b_at_least": "≲",
    "equivalent": "≈",
    "a_at_least": "≳",
    "a_better": ">",
    "undecided": "?",
    "a_leaning": "?",
    "b_leaning": "?",
}
#: the chain's score when the pairs' probabilities are known
CHAIN_BY_PROBABILITIES = (
    "expected rank from the pairwise probabilities: 1 + the sum over the others of "
    "P(other better) + P(equivalent)/2"
)
#: the chain's score when only the relations are known
CHAIN_BY_RELATIONS = (
    "expected rank from the relations, each taken as probability 1 of its region "
    "(≳, ≲: 1/2 each of their two regions; ?: 1/3 each of the three)"
)
#: the probabilities (A better, ROPE, B better) that stand for a relation when only
#: the relations are known (:data:`CHAIN_BY_RELATIONS`); any other relation: ⅓ each
_RELATION_PROBABILITIES: dict[str, tuple[float, float, float]] = {
    "a_better": (1.0, 0.0, 0.0),
    "a_at_least": (0.5, 0.5, 0.0),
    "equivalent": (0.0, 1.0, 0.0),
    "b_at_least": (0.0, 0.5, 0.5),
    "b_better": (0.0, 0.0, 1.0),
}
_UNDECIDED = (1 / 3, 1 / 3, 1 / 3)


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
    chain : str
        The paper's chain: every system, worst first by :attr:`chain_ranks`, each
        neighbour pair with its own relation (:data:`CHAIN_SYMBOLS`).
    chain_ranks : dict of str to float
        The chain's score: each system's expected rank (1 = best).
    chain_by : str
        What :attr:`chain_ranks` are, in words.
    """

    systems: tuple[str, ...]
    groups: tuple[tuple[str, ...], ...]
    hasse_edges: tuple[tuple[str, str], ...]
    line: str
    inconsistencies: tuple[str, ...]
    chain: str
    chain_ranks: dict[str, float] = field(repr=False)
    chain_by: str = field(repr=False)

    def to_dict(self) -> dict[str, Any]:
        """Return JSON-safe data."""
        return {
            "systems": list(self.systems),
            "groups": [list(g) for g in self.groups],
            "hasse_edges": [list(e) for e in self.hasse_edges],
            "order": self.line,
            "inconsistencies": list(self.inconsistencies),
            "chain": self.chain,
            "chain_ranks": dict(self.chain_ranks),
            "chain_by": self.chain_by,
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
            chain=data["chain"],
            chain_ranks={str(k): float(v) for k, v in data["chain_ranks"].items()},
            chain_by=data["chain_by"],
        )


def group_label(group: tuple[str, ...]) -> str:
    """Return the label of a group in the Hasse diagram: its members joined by " ≈ "."""
    return " ≈ ".join(group)


def partial_order(
    systems: tuple[str, ...],
    relations: Mapping[tuple[str, str], str],
    strength: Mapping[tuple[str, str], float] | None = None,
    ranks: Mapping[str, float] | None = None,
    ranks_by: str | None = None,
) -> PartialOrder:
    """Build the partial order of `systems` from pairwise `relations`, and its chain.

    Parameters
    ----------
    systems : tuple of str
        The systems.
    relations : mapping (a, b) -> relation key
        One entry per pair (either orientation); the relation of A = a to B = b.
    strength : mapping (a, b) -> float, optional
        How strongly each "≈" pair is equivalent (its P(rope)); groups form from the
        strongest pairs first. Default: the order of `systems`.
    ranks : mapping str -> float, optional
        The chain's score: each system's expected rank (1 = best), e.g.
        :func:`expected_ranks` of the pairwise probabilities. Default: the expected
        rank from the relations alone (:data:`CHAIN_BY_RELATIONS`).
    ranks_by : str, optional
        What `ranks` are, in words (required with `ranks`).

    Examples
    --------
    >>> rel = {("TnT", "Collins"): "b_better", ("Collins", "LAPOS"): "equivalent",
    ...        ("TnT", "LAPOS"): "b_better", ("LAPOS", "Flair"): "b_better",
    ...        ("Collins", "Flair"): "b_better", ("TnT", "Flair"): "b_better"}
    >>> order = partial_order(("TnT", "Collins", "LAPOS", "Flair"), rel)
    >>> order.line, order.chain
    ('TnT < Collins ≈ LAPOS < Flair', 'TnT < Collins ≈ LAPOS < Flair')
    """
    if ranks is None:
        probabilities = {
            pair: _RELATION_PROBABILITIES.get(r, _UNDECIDED) for pair, r in relations.items()
        }
        ranks, ranks_by = expected_ranks(systems, probabilities), CHAIN_BY_RELATIONS
    elif ranks_by is None:
        raise ValueError("`ranks_by` must say what `ranks` are.")
    import networkx as nx

    rank = {s: i for i, s in enumerate(systems)}
    equivalent = [pair for pair, rel in relations.items() if rel == "equivalent"]
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
    dag.add_edges_from((of[worse], of[best]) for worse, best in _strict_pairs(relations))
    problems += _drop_cycles(dag)
    hasse = nx.transitive_reduction(dag)
    layers = _layers(dag, groups, rank)
    return PartialOrder(
        systems=tuple(systems),
        groups=tuple(g for layer in layers for g in layer),
        hasse_edges=tuple(sorted((group_label(u), group_label(v)) for u, v in hasse.edges())),
        line=_line(layers),
        inconsistencies=tuple(problems),
        chain=chain_line(_worst_first(systems, ranks), relations),
        chain_ranks={s: float(ranks[s]) for s in systems},
        chain_by=ranks_by,
    )


def _strict_pairs(relations: Mapping[tuple[str, str], str]) -> list[tuple[str, str]]:
    """Return every strict relation as ``(worse, better)``."""
    better = []
    for (a, b), rel in relations.items():
        if rel in _STRICT_A:
            better.append((b, a))
        elif rel in _STRICT_B:
            better.append((a, b))
    return better


def _drop_cycles(dag: Any) -> list[str]:
    """Remove the edges on every cycle of `dag` (to draw and write what is left); name them."""
    import networkx as nx

    cycles = list(nx.simple_cycles(dag))
    for cycle in cycles:
        for g1, g2 in zip(cycle, [*cycle[1:], cycle[0]], strict=True):
            if dag.has_edge(g1, g2):
                dag.remove_edge(g1, g2)
    return ["cycle: " + " < ".join(group_label(g) for g in [*cycle, cycle[0]]) for cycle in cycles]


def expected_ranks(
    systems: Sequence[str], probabilities: Mapping[tuple[str, str], Sequence[float]]
) -> dict[str, float]:
    """Return each system's expected rank (1 = best) from pairwise probabilities.

    E[rank k] = 1 + Σ_{j ≠ k} [P(j better than k) + ½ P(j ≈ k)]: the rank k would
    get if each pair's relation were drawn from its probabilities, independently,
    an equivalent pair counting half a place. The ranks sum to K(K + 1)/2.

    Parameters
    ----------
    systems : sequence of str
        The systems.
    probabilities : mapping (a, b) -> (P(a better), P(equivalent), P(b better))
        One entry per pair (either orientation).

    Examples
    --------
    >>> expected_ranks(("a", "b"), {("a", "b"): (0.7, 0.2, 0.1)})
    {'a': 1.2, 'b': 1.8}
    """
    ranks = dict.fromkeys(systems, 1.0)
    for (a, b), (p_a, p_rope, p_b) in probabilities.items():
        ranks[a] += p_b + p_rope / 2
        ranks[b] += p_a + p_rope / 2
    return ranks


def _worst_first(systems: Sequence[str], ranks: Mapping[str, float]) -> list[str]:
    """Return `systems` by decreasing expected rank; equal ranks keep the order given."""
    return sorted(systems, key=lambda s: -ranks[s])


def chain_line(placed: Sequence[str], relations: Mapping[tuple[str, str], str]) -> str:
    """Write `placed` (worst first) as a chain: each neighbour pair with its own relation.

    Examples
    --------
    >>> rel = {("TnT", "Collins"): "equivalent", ("Collins", "LAPOS"): "equivalent",
    ...        ("TnT", "LAPOS"): "b_better"}
    >>> chain_line(["TnT", "Collins", "LAPOS"], rel)
    'TnT ≈ Collins ≈ LAPOS'
    """
    parts = [placed[0]]
    for a, b in zip(placed, placed[1:], strict=False):
        rel = relations[(a, b)] if (a, b) in relations else mirror(relations[(b, a)])
        parts += [CHAIN_SYMBOLS[rel], b]
    return " ".join(parts)


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
