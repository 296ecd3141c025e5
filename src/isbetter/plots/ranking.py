"""Plots of a ranking: Hasse diagram, grid of simplex triangles, pairwise heatmap.

All read a :class:`~isbetter.ranking.result.RankingResult` and do no statistics:

* :func:`plot_hasse` — the partial order of one metric, equivalence groups boxed
  together, from the worst (bottom) to the best (top);
* :func:`plot_triangle_grid` — one simplex triangle per pair of systems
  (Szymański & Gorman 2020, Figs. 1-3), from the per-draw points kept in
  ``result.simplex``;
* :func:`plot_pairwise_heatmap` — P(row better than column) for every ordered
  pair, with the ROPE probability beside it;
* :func:`save_ranking_plot` — the Hasse diagram and the heatmap side by side, as
  the command line's ``rank --plot FILE`` writes them.
"""

from __future__ import annotations

import math
import os
import textwrap
from pathlib import Path
from typing import Any

import numpy as np

from isbetter._errors import InputError
from isbetter.plots.simplex import project_simplex
from isbetter.ranking.order import group_label
from isbetter.results.decisions import symbol

__all__ = [
    "plot_hasse",
    "plot_pairwise_heatmap",
    "plot_triangle_grid",
    "save_ranking_plot",
]

_NODE_FACE = "#dbe7f3"
_NODE_EDGE = "#1f4e79"
_STRICT_COLOUR = "#1f4e79"
_WEAK_COLOUR = "0.55"
_WARN_COLOUR = "#c0392b"
_POINT_COLOUR = "#1f4e79"
# corners of the triangle, as in isbetter.plots.simplex: A better, ROPE, B better
_CORNERS = project_simplex(np.eye(3))
_MAX_GROUP_LINE = 3  # members of an equivalence group per line of its box


# ------------------------------------------------------------------ helpers
def _metric(result: Any, metric: str | None) -> str:
    if metric is None:
        return result.metrics[0]
    if metric not in result.metrics:
        raise InputError(
            f"No metric {metric!r} in this ranking; it has {', '.join(map(repr, result.metrics))}."
        )
    return metric


def _rule_text(result: Any) -> str:
    if result.rule == "threshold":
        return f"threshold rule (P ≥ {result.threshold:g})"
    return f"{result.rule} rule (margin {result.margin:g})"


def _mirror(rel: str) -> str:
    """Return the relation of B to A given that of A to B."""
    if rel.startswith("a_"):
        return "b_" + rel[2:]
    if rel.startswith("b_"):
        return "a_" + rel[2:]
    return rel


def _relation(result: Any, metric: str, a: str, b: str) -> str | None:
    """Return the relation of `a` to `b` on `metric`, whichever way the pair is stored."""
    rels = result.relations.get(metric, {})
    if (a, b) in rels:
        return rels[(a, b)]
    if (b, a) in rels:
        return _mirror(rels[(b, a)])
    return None


def _points(result: Any, metric: str, a: str, b: str) -> np.ndarray:
    """Per-draw (a better, ROPE, b better) points of the pair, shape ``(n, 3)`` (maybe n = 0)."""
    table = (getattr(result, "simplex", None) or {}).get(metric, {})
    if (a, b) in table:
        pts = np.asarray(table[(a, b)], dtype=float)
    elif (b, a) in table:
        pts = np.asarray(table[(b, a)], dtype=float)
        pts = pts.reshape(-1, 3)[:, ::-1]  # mirror: swap "a better" and "b better"
    else:
        pts = np.empty((0, 3))
    return pts.reshape(-1, 3)


def _short(name: str, width: int = 8) -> str:
    return name if len(name) <= width else name[: width - 1] + "."


def _node_text(group: tuple[str, ...]) -> str:
    """Return a group's box text: its members joined by " ≈ ", a few per line."""
    lines = [
        " ≈ ".join(group[i : i + _MAX_GROUP_LINE]) for i in range(0, len(group), _MAX_GROUP_LINE)
    ]
    return " ≈\n".join(lines)


def _layers(labels: list[str], edges: list[tuple[str, str]]) -> dict[str, int]:
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


def _new_axes(ax: Any, figsize: tuple[float, float]) -> Any:
    if ax is not None:
        return ax
    import matplotlib.pyplot as plt

    _, ax = plt.subplots(figsize=figsize)
    return ax


def _hasse_size(result: Any, metric: str) -> tuple[float, float]:
    """Return a figure size that fits the Hasse diagram of `metric` at 10 pt."""
    order = result.orders[metric]
    labels = {group_label(g): g for g in order.groups}
    level = _layers(list(labels), list(order.hasse_edges))
    widths: dict[int, float] = {}
    for lab, lev in level.items():
        widths[lev] = widths.get(lev, 0.0) + _node_width(labels.get(lab, (lab,)))
    chars = max(widths.values(), default=10.0)
    n_layers = max(level.values(), default=0) + 1
    return (max(4.5, 0.075 * chars + 1.0), max(3.0, 0.95 * n_layers + 1.3))


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
    listed in red below the diagram.

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
    metric = _metric(result, metric)
    order = result.orders[metric]
    ax = _new_axes(ax, _hasse_size(result, metric))

    groups = list(order.groups)
    of = {s: g for g in groups for s in g}
    labels = {group_label(g): g for g in groups}
    for edge in order.hasse_edges:  # a label the groups do not know: draw it as it is
        for lab in edge:
            labels.setdefault(lab, (lab,))
    strict = [tuple(e) for e in order.hasse_edges]
    level = _layers(list(labels), strict)
    n_layers = max(level.values(), default=0) + 1

    # positions: a layer's nodes side by side, centred; upper layers ordered by the
    # mean position of the nodes below them (fewer crossings)
    preds: dict[str, list[str]] = {lab: [] for lab in labels}
    for worse, better in strict:
        preds[better].append(worse)
    rank = {lab: i for i, lab in enumerate(labels)}
    pos: dict[str, tuple[float, float]] = {}
    span = 0.0
    for lev in range(n_layers):
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

    # font size: fit the widest layer into the axes (10 pt when it fits)
    fig = ax.figure
    width_pt = ax.get_position().width * fig.get_figwidth() * 72
    fontsize = float(np.clip(width_pt / (0.62 * max(span, 1.0)), 6.0, 10.0))

    nodes = {}
    for lab, (x, y) in pos.items():
        nodes[lab] = ax.text(
            x,
            y,
            _node_text(labels[lab]),
            ha="center",
            va="center",
            multialignment="center",
            fontsize=fontsize,
            zorder=3,
            bbox={
                "boxstyle": "round,pad=0.4",
                "facecolor": _NODE_FACE,
                "edgecolor": _NODE_EDGE,
                "linewidth": 1.0,
            },
        )

    def arrow(worse: str, better: str, **style: Any) -> None:
        skip = level[better] - level[worse]
        if skip > 0:  # upwards: from the top of the worse to the bottom of the better
            start, end = (0.5, 1.0), (0.5, 0.0)
            rad = 0.0 if skip == 1 else 0.25  # bend edges that jump layers
        else:  # same layer (or a hand-made order): side to side, arched over the others
            right = pos[better][0] > pos[worse][0]
            start, end = ((1.0, 0.5), (0.0, 0.5)) if right else ((0.0, 0.5), (1.0, 0.5))
            between = sum(
                1
                for lab in pos
                if pos[lab][1] == pos[worse][1]
                and min(pos[worse][0], pos[better][0])
                < pos[lab][0]
                < max(pos[worse][0], pos[better][0])
            )
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

    for worse, better in strict:
        arrow(worse, better, color=_STRICT_COLOUR, linewidth=1.3)
    weak: set[tuple[str, str]] = set()
    for (a, b), rel in result.relations.get(metric, {}).items():
        if rel not in ("a_at_least", "b_at_least") or a not in of or b not in of:
            continue
        worse, better = (b, a) if rel == "a_at_least" else (a, b)
        pair = (group_label(of[worse]), group_label(of[better]))
        if pair[0] != pair[1] and pair not in strict:
            weak.add(pair)
    for worse, better in sorted(weak):
        arrow(worse, better, color=_WEAK_COLOUR, linewidth=1.1, linestyle="--")

    half = span / 2 if span else 5.0
    ax.set_xlim(-half - 0.5, half + 0.5)
    ax.set_ylim(-0.6, n_layers - 0.4)
    ax.set_xticks([])
    ax.set_yticks([])
    for spine in ax.spines.values():
        spine.set_visible(False)
    problems = tuple(order.inconsistencies)
    title = f"{metric}: partial order, {_rule_text(result)}"
    if problems:
        title += f" — {len(problems)} inconsistenc{'y' if len(problems) == 1 else 'ies'}"
    ax.set_title(title, fontsize="medium", pad=16)
    key = (
        "arrows point to the better; dashed: ≳ (better or equivalent)"
        if weak
        else ("arrows point to the better")
    )
    ax.text(
        0.5,
        1.0,
        key,
        transform=ax.transAxes,
        ha="center",
        va="bottom",
        fontsize="small",
        color="0.35",
    )
    if problems:
        shown = [textwrap.shorten(p, 90, placeholder=" …") for p in problems[:4]]
        if len(problems) > 4:
            shown.append(f"… and {len(problems) - 4} more")
        ax.set_xlabel("Inconsistent:\n" + "\n".join(shown), color=_WARN_COLOUR, fontsize="small")
    return ax


# ------------------------------------------------------------------ triangle grid
def _triangle(ax: Any, points: np.ndarray, probs: Any, row: str, col: str, rel: str | None) -> None:
    """One small simplex triangle of `row` vs `col` (row better: bottom left)."""
    from matplotlib.lines import Line2D

    xy = project_simplex(points) if len(points) else np.empty((0, 2))
    outline = np.vstack([_CORNERS, _CORNERS[:1]])
    ax.add_line(Line2D(outline[:, 0], outline[:, 1], color="0.2", linewidth=0.9))
    centre = _CORNERS.mean(axis=0)
    for i, j in ((0, 1), (1, 2), (0, 2)):
        mid = (_CORNERS[i] + _CORNERS[j]) / 2
        ax.add_line(Line2D([centre[0], mid[0]], [centre[1], mid[1]], color="0.5", ls="--", lw=0.7))
    if len(xy):
        ax.scatter(xy[:, 0], xy[:, 1], s=5, alpha=0.35, color=_POINT_COLOUR, linewidths=0)
    else:
        ax.text(0.5, 0.3, "no points", ha="center", va="center", fontsize=6, color="0.5")
    small = {"fontsize": 6.5, "color": "0.15"}
    ax.text(-0.02, -0.06, f"{_short(row)}\n{probs.p_a_better:.2f}", ha="center", va="top", **small)
    ax.text(1.02, -0.06, f"{_short(col)}\n{probs.p_b_better:.2f}", ha="center", va="top", **small)
    ax.text(
        0.5, math.sqrt(3) / 2 + 0.04, f"≈ {probs.p_rope:.2f}", ha="center", va="bottom", **small
    )
    if rel is not None:
        ax.text(
            0.0,
            0.95,
            symbol(rel),
            ha="left",
            va="top",
            fontsize=11,
            color=_NODE_EDGE,
            transform=ax.transAxes,
        )
    ax.set_xlim(-0.22, 1.22)
    ax.set_ylim(-0.36, 1.08)
    ax.set_aspect("equal")
    ax.set_axis_off()


def plot_triangle_grid(
    result: Any,
    metric: str | None = None,
    *,
    systems: tuple[str, ...] | list[str] | None = None,
    fig: Any = None,
) -> Any:
    """Draw the grid of pairwise simplex triangles (Szymański & Gorman 2020, Figs. 1-3).

    The lower triangle of the grid of systems: the cell in the row of system R
    and the column of system C shows R vs C, the per-draw (R better, ROPE, C
    better) points of ``result.simplex`` (R better at the bottom left, C better
    at the bottom right, the ROPE at the top), the boundaries of the three
    argmax regions, the three probabilities at the corners and the decided
    relation of R to C in the top-left corner. Row names stand at the left,
    column names above the columns.

    Parameters
    ----------
    result : RankingResult
        From :func:`isbetter.rank`.
    metric : str, optional
        Which metric; default: the first.
    systems : sequence of str, optional
        The systems to show, in this order; default: all, in the ranking's order.
    fig : matplotlib.figure.Figure, optional
        Where to draw; a new figure when None.

    Returns
    -------
    matplotlib.figure.Figure
        Its axes are the k(k-1)/2 triangles, row by row.
    """
    metric = _metric(result, metric)
    names = tuple(result.systems if systems is None else systems)
    unknown = [s for s in names if s not in result.systems]
    if unknown:
        raise InputError(f"Not in this ranking: {', '.join(map(repr, unknown))}.")
    if len(names) < 2 or len(set(names)) != len(names):
        raise InputError("The triangle grid needs at least two distinct systems.")
    k = len(names)
    margins: dict[str, float] = {}
    if fig is None:
        import matplotlib.pyplot as plt

        size = max(1.8 * (k - 1) + 0.6, 3.2)
        fig = plt.figure(figsize=(size, size + 0.7))
        top = 1 - 1.05 / (size + 0.7)
        margins = {"left": 0.4 / size, "right": 0.99, "bottom": 0.15 / size, "top": top}
    grid = fig.add_gridspec(k - 1, k - 1, wspace=0.08, hspace=0.18, **margins)
    n_points = 0
    for i in range(1, k):
        for j in range(i):
            row, col = names[i], names[j]
            ax = fig.add_subplot(grid[i - 1, j])
            points = _points(result, metric, row, col)
            n_points = max(n_points, len(points))
            _triangle(
                ax,
                points,
                result.pair(row, col, metric).probabilities,
                row,
                col,
                _relation(result, metric, row, col),
            )
            if j == 0:
                ax.text(
                    -0.02,
                    0.5,
                    row,
                    rotation=90,
                    ha="right",
                    va="center",
                    transform=ax.transAxes,
                    fontsize="small",
                    fontweight="bold",
                )
            if i == j + 1:
                ax.set_title(col, fontsize="small", fontweight="bold")
    key = (
        "each cell: row vs column\n"
        "bottom left: row better\n"
        "top (≈): practically equivalent\n"
        "bottom right: column better\n"
        "symbol: relation of row to column\n"
        f"points: posterior draws (up to {n_points})"
    )
    fig.suptitle(f"{metric}: pairwise posteriors\n{_rule_text(result)}", fontsize="medium")
    if k >= 3:  # the empty upper triangle holds the key
        top_right = fig.axes[-1].get_position().x1, fig.axes[0].get_position().y1
        fig.text(*top_right, key, ha="right", va="top", fontsize="x-small", color="0.3")
    return fig


# ------------------------------------------------------------------ heatmap
def plot_pairwise_heatmap(
    result: Any, metric: str | None = None, *, ax: Any = None, by_rank: bool = True
) -> Any:
    """Draw P(row better than column) for every ordered pair of systems.

    Each cell holds that probability and, in smaller type, the probability of
    practical equivalence (ROPE) of the pair, e.g. "0.83" over "(≈0.12)". The
    diagonal is blank.

    Parameters
    ----------
    result : RankingResult
        From :func:`isbetter.rank`.
    metric : str, optional
        Which metric; default: the first.
    ax : matplotlib.axes.Axes, optional
        Where to draw; a new figure when None.
    by_rank : bool, default: True
        Order rows and columns by the partial order, best first (the order of its
        layers, then the ranking's order); False keeps the ranking's order.

    Returns
    -------
    matplotlib.axes.Axes
    """
    import pandas as pd
    import seaborn as sns

    metric = _metric(result, metric)
    names = list(result.systems)
    if by_rank:
        ranked = [s for g in reversed(result.orders[metric].groups) for s in g]
        names = [s for s in ranked if s in names] + [s for s in names if s not in ranked]
    k = len(names)
    better = np.full((k, k), np.nan)
    rope = np.full((k, k), np.nan)
    for i, a in enumerate(names):
        for j, b in enumerate(names):
            if i == j:
                continue
            try:
                p = result.pair(a, b, metric)
            except InputError:
                continue
            better[i, j], rope[i, j] = p.p_a_better, p.p_rope
    ax = _new_axes(ax, (0.85 * k + 2.6, 0.75 * k + 1.4))
    frame = pd.DataFrame(better, index=names, columns=names)
    sns.heatmap(
        frame,
        ax=ax,
        mask=np.isnan(better),
        vmin=0.0,
        vmax=1.0,
        cmap="Blues",
        annot=False,
        linewidths=0.6,
        linecolor="white",
        cbar_kws={"label": "P(row better than column)"},
    )
    big = 10 if k <= 6 else 9 if k <= 9 else 7.5
    for i in range(k):
        for j in range(k):
            if np.isnan(better[i, j]):
                continue
            colour = "white" if better[i, j] > 0.6 else "0.1"
            ax.text(
                j + 0.5,
                i + 0.42,
                f"{better[i, j]:.2f}",
                ha="center",
                va="center",
                fontsize=big,
                color=colour,
            )
            ax.text(
                j + 0.5,
                i + 0.72,
                f"(≈{rope[i, j]:.2f})",
                ha="center",
                va="center",
                fontsize=big - 3,
                color=colour,
            )
    ax.set_xlabel("column system")
    ax.set_ylabel("row system")
    ax.tick_params(axis="x", labelrotation=30)
    for lab in ax.get_xticklabels():
        lab.set_horizontalalignment("right")
        lab.set_rotation_mode("anchor")
    ax.tick_params(axis="y", labelrotation=0)
    ax.set_title(f"{metric}: P(row better than column) and (≈ P(equivalent))", fontsize="medium")
    return ax


# ------------------------------------------------------------------ the CLI's plot
def save_ranking_plot(
    result: Any, path: str | os.PathLike[str], metric: str | None = None, *, dpi: int = 150
) -> Path:
    """Write the Hasse diagram and the pairwise heatmap side by side to `path`.

    One row per metric (only `metric` when given). The figure is made without
    pyplot, so it is closed when this returns, and matplotlib's rcParams are
    left untouched.

    Parameters
    ----------
    result : RankingResult
        From :func:`isbetter.rank`.
    path : str or os.PathLike
        Output file; the format follows its extension (``.png``, ``.pdf``, ``.svg``).
    metric : str, optional
        One metric; default: every metric of the ranking, one row each.
    dpi : int, default: 150
        Resolution of raster formats.

    Returns
    -------
    pathlib.Path
        `path`.
    """
    from matplotlib.figure import Figure

    metrics = result.metrics if metric is None else (_metric(result, metric),)
    sizes = [_hasse_size(result, m) for m in metrics]
    k = len(result.systems)
    heat_w, heat_h = 0.85 * k + 2.6, 0.75 * k + 1.6
    width = max(w for w, _ in sizes) + heat_w
    heights = [max(h, heat_h) for _, h in sizes]
    fig = Figure(figsize=(width, sum(heights)), layout="constrained")
    grid = fig.add_gridspec(
        len(metrics), 2, width_ratios=[max(w for w, _ in sizes), heat_w], height_ratios=heights
    )
    for r, m in enumerate(metrics):
        plot_hasse(result, m, ax=fig.add_subplot(grid[r, 0]))
        plot_pairwise_heatmap(result, m, ax=fig.add_subplot(grid[r, 1]))
    fig.savefig(path, dpi=dpi, bbox_inches="tight")
    return Path(path)
