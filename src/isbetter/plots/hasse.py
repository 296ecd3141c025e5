"""The Hasse diagram of a ranking's partial order (:func:`plot_hasse`); no statistics."""

from __future__ import annotations

from typing import Any

import numpy as np

from isbetter.plots._layout import new_axes, wrap_to_axes
from isbetter.plots._ranking_common import metric_of, pairs_about, rule_text
from isbetter.ranking.order import group_label

__all__ = ["NODE_EDGE", "hasse_size", "layer_of", "plot_hasse"]

_NODE_FACE = "#dbe7f3"
NODE_EDGE = "#1f4e79"
_STRICT_COLOUR = "#1f4e79"
_WEAK_COLOUR = "0.55"
_WARN_COLOUR = "#c0392b"
_MAX_GROUP_LINE = 3  # members of an equivalence group per line of its box
_PROBLEM_SIZE = "small"  # font of the inconsistencies listed under the diagram
_LINE_IN = 0.16  # height of one of their lines, in inches


def _node_text(group: tuple[str, ...]) -> str:
    """Return a group's box text: its members joined by " ≈ ", a few per line."""
    lines = [
        " ≈ ".join(group[i : i + _MAX_GROUP_LINE]) for i in range(0, len(group), _MAX_GROUP_LINE)
    ]
    return " ≈\n".join(lines)


def layer_of(labels: list[str], edges: list[tuple[str, ...]]) -> dict[str, int]:
    """Layer of each node: the length of the longest chain of Hasse edges below it."""
    import networkx as nx

    dag = nx.DiGraph()
    dag.add_nodes_from(labels)
    dag.add_edges_from(edges)
    if not nx.is_directed_acyclic_graph(dag):  # a hand-made order; draw it flat
        return dict.fromkeys(dag.nodes, 0)
    level: dict[str, int] = {}
    for node in nx.topological_sort(dag):
        level[node] = max((level[p] + 1 for p in dag.predecessors(node)), default=0)
    return level


def hasse_size(result: Any, metric: str) -> tuple[float, float]:
    """Return a figure size that fits the Hasse diagram of `metric` at 10 pt."""
    order = result.orders[metric]
    labels = {group_label(g): g for g in order.groups}
    level = layer_of(list(labels), list(order.hasse_edges))
    widths: dict[int, float] = {}
    for lab, lev in level.items():
        widths[lev] = widths.get(lev, 0.0) + _node_width(labels.get(lab, (lab,)))
    chars = max(widths.values(), default=10.0)
    n_layers = max(level.values(), default=0) + 1
    width = max(4.5, 0.075 * chars + 1.0)
    # the inconsistencies, wrapped to the diagram's width, take this many lines below it
    text = _problem_text(None, tuple(order.inconsistencies), 0.85 * width)
    below = 0.0 if not text else _LINE_IN * (text.count("\n") + 1) + 0.1
    return width, max(3.0, 0.95 * n_layers + 1.3) + below


def _node_width(group: tuple[str, ...]) -> float:
    """Width of a node in character units (its longest line plus padding and gap)."""
    return max(len(line) for line in _node_text(group).split("\n")) + 5.0


# ------------------------------------------------------------------ Hasse diagram
def plot_hasse(result: Any, metric: str | None = None, *, ax: Any = None) -> Any:
    """Draw the Hasse diagram of the partial order of one metric.

    Nodes are the equivalence groups (the members of a group share one box,
    e.g. "Collins ≈ LAPOS"), in layers from the worst (bottom) to the best
    (top): a group's layer is the length of the longest chain of Hasse edges
    below it, and the groups of one layer stand side by side. Solid arrows point
    from the worse to the better group (the transitive reduction of "≫"); dashed
    grey arrows show "≳" ("better or equivalent", too close to call under the
    likelihood rule) between groups not already joined by a solid arrow.
    Inconsistencies (cycles, non-transitive "≈") are counted in the title and
    listed in full, in red, below the diagram (wrapped to its width; the figure that
    :func:`hasse_size` gives grows to hold them).

    Parameters
    ----------
    result : RankingResult
        From :func:`isbetter.rank`.
    metric : str, optional
        Which metric; default: the first.
    ax : matplotlib.axes.Axes, optional
        Where to draw; a new figure when None.

    Returns
    -------
    matplotlib.axes.Axes
    """
    metric = metric_of(result, metric)
    order = result.orders[metric]
    ax = new_axes(ax, hasse_size(result, metric))
    of = {s: g for g in order.groups for s in g}
    labels = {group_label(g): g for g in order.groups}
    for edge in order.hasse_edges:  # a label the groups do not know: draw it as it is
        for lab in edge:
            labels.setdefault(lab, (lab,))
    strict = [tuple(e) for e in order.hasse_edges]
    level = layer_of(list(labels), strict)
    pos, span = _positions(labels, strict, level)
    # font size: fit the widest layer into the axes (10 pt when it fits)
    width_pt = ax.get_position().width * ax.figure.get_figwidth() * 72
    fontsize = float(np.clip(width_pt / (0.62 * max(span, 1.0)), 6.0, 10.0))
    nodes = {lab: _node(ax, x, y, labels[lab], fontsize) for lab, (x, y) in pos.items()}
    for worse, better in strict:
        _arrow(ax, nodes, pos, level, fontsize, worse, better, color=_STRICT_COLOUR, linewidth=1.3)
    weak = _weak_pairs(result, metric, of, strict)
    for worse, better in weak:
        _arrow(
            ax, nodes, pos, level, fontsize, worse, better,
            color=_WEAK_COLOUR, linewidth=1.1, linestyle="--",
        )  # fmt: skip
    _frame(ax, span, max(level.values(), default=0) + 1)
    _titles(ax, result, metric, tuple(order.inconsistencies), bool(weak))
    return ax


def _positions(
    labels: dict[str, tuple[str, ...]], strict: list[tuple[str, ...]], level: dict[str, int]
) -> tuple[dict[str, tuple[float, float]], float]:
    """Place a layer's nodes side by side, centred; return the positions and widest span.

    Upper layers are ordered by the mean position of the nodes below them (fewer crossings).
    """
    preds: dict[str, list[str]] = {lab: [] for lab in labels}
    for worse, better in strict:
        preds[better].append(worse)
    rank = {lab: i for i, lab in enumerate(labels)}
    pos: dict[str, tuple[float, float]] = {}
    span = 0.0
    for lev in range(max(level.values(), default=0) + 1):
        layer = [lab for lab in labels if level[lab] == lev]
        if lev > 0:
            layer.sort(
                key=lambda lab: (
                    float(np.mean([pos[p][0] for p in preds[lab]])) if preds[lab] else 0.0,
                    rank[lab],
                )
            )
        widths = [_node_width(labels[lab]) for lab in layer]
        total = sum(widths)
        span = max(span, total)
        x = -total / 2
        for lab, w in zip(layer, widths, strict=True):
            pos[lab] = (x + w / 2, float(lev))
            x += w
    return pos, span


def _node(ax: Any, x: float, y: float, group: tuple[str, ...], fontsize: float) -> Any:
    """Draw one group's box."""
    return ax.text(
        x,
        y,
        _node_text(group),
        ha="center",
        va="center",
        multialignment="center",
        fontsize=fontsize,
        zorder=3,
        bbox={
            "boxstyle": "round,pad=0.4",
            "facecolor": _NODE_FACE,
            "edgecolor": NODE_EDGE,
            "linewidth": 1.0,
        },
    )


def _arrow(
    ax: Any,
    nodes: dict[str, Any],
    pos: dict[str, tuple[float, float]],
    level: dict[str, int],
    fontsize: float,
    worse: str,
    better: str,
    **style: Any,
) -> None:
    """Draw an arrow from the worse group's box to the better one's."""
    skip = level[better] - level[worse]
    if skip > 0:  # upwards: from the top of the worse to the bottom of the better
        start, end = (0.5, 1.0), (0.5, 0.0)
        rad = 0.0 if skip == 1 else 0.25  # bend edges that jump layers
    else:  # same layer (or a hand-made order): side to side, arched over the others
        right = pos[better][0] > pos[worse][0]
        start, end = ((1.0, 0.5), (0.0, 0.5)) if right else ((0.0, 0.5), (1.0, 0.5))
        lo, hi = sorted((pos[worse][0], pos[better][0]))
        between = any(y == pos[worse][1] and lo < x < hi for x, y in pos.values())
        rad = 0.0 if not between else (0.35 if right else -0.35)
    ax.annotate(
        "",
        xy=end,
        xycoords=nodes[better],
        xytext=start,
        textcoords=nodes[worse],
        arrowprops={
            "arrowstyle": "-|>",
            "shrinkA": 0.4 * fontsize + 2,
            "shrinkB": 0.4 * fontsize + 2,
            "mutation_scale": 12,
            "connectionstyle": f"arc3,rad={rad}",
            **style,
        },
        zorder=2,
    )


def _weak_pairs(
    result: Any, metric: str, of: dict[str, tuple[str, ...]], strict: list[tuple[str, ...]]
) -> list[tuple[str, str]]:
    """Return the "≳" pairs (worse, better) between groups not joined by a solid arrow."""
    weak: set[tuple[str, str]] = set()
    for (a, b), rel in result.relations.get(metric, {}).items():
        if rel not in ("a_at_least", "b_at_least") or a not in of or b not in of:
            continue
        worse, better = (b, a) if rel == "a_at_least" else (a, b)
        pair = (group_label(of[worse]), group_label(of[better]))
        if pair[0] != pair[1] and pair not in strict:
            weak.add(pair)
    return sorted(weak)


def _frame(ax: Any, span: float, n_layers: int) -> None:
    half = span / 2 if span else 5.0
    ax.set_xlim(-half - 0.5, half + 0.5)
    ax.set_ylim(-0.6, n_layers - 0.4)
    ax.set_xticks([])
    ax.set_yticks([])
    for spine in ax.spines.values():
        spine.set_visible(False)


def _titles(ax: Any, result: Any, metric: str, problems: tuple[str, ...], weak: bool) -> None:
    """Title (metric, rule, number of inconsistencies), arrow key, inconsistencies in red."""
    title = f"{metric}, {pairs_about(result, metric)}: partial order, {rule_text(result)}"
    if problems:
        title += f" — {len(problems)} inconsistenc{'y' if len(problems) == 1 else 'ies'}"
    ax.set_title(title, fontsize="medium", pad=16)
    key = "arrows point to the better" + ("; dashed: ≳ (better or equivalent)" if weak else "")
    ax.text(
        0.5, 1.0, key, transform=ax.transAxes, ha="center", va="bottom",
        fontsize="small", color="0.35",
    )  # fmt: skip
    if problems:
        ax.set_xlabel(_problem_text(ax, problems), color=_WARN_COLOUR, fontsize=_PROBLEM_SIZE)


def _problem_text(ax: Any, problems: tuple[str, ...], width_in: float | None = None) -> str:
    """Every inconsistency in full, each wrapped to the axes' width (or `width_in` inches)."""
    if not problems:
        return ""
    return "Inconsistent:\n" + wrap_to_axes(
        ax, *problems, fontsize=_PROBLEM_SIZE, width_in=width_in
    )
