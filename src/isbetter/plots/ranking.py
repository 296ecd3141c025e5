"""Plots of a ranking: Hasse diagram, grid of simplex triangles, pairwise heatmap.

All read a :class:`~isbetter.ranking.result.RankingResult` and do no statistics:

* :func:`plot_hasse` — the partial order of one metric, equivalence groups boxed
  together, from the worst (bottom) to the best (top) (:mod:`isbetter.plots.hasse`);
* :func:`plot_triangle_grid` — one simplex triangle per pair of systems
  (Szymański & Gorman 2020, Figs. 1-3), from the per-draw points kept in
  ``result.simplex``;
* :func:`plot_pairwise_heatmap` — P(row better than column) for every ordered
  pair, with the ROPE probability beside it;
* :func:`save_ranking_plot` — the Hasse diagram and the heatmap side by side, and
  below them the critical-difference diagram of the mean ranks (Demšar 2006) when
  the ranking is over several data sets, as the command line's ``rank --plot FILE``
  writes them.
"""

from __future__ import annotations

import math
import os
from pathlib import Path
from typing import Any

import matplotlib
import numpy as np

from isbetter.core.errors import InputError
from isbetter.inference.decisions import mirror, symbol
from isbetter.plots._layout import PRINT_DPI, new_axes
from isbetter.plots._ranking_common import (
    cell_font,
    cell_text,
    metric_of,
    pairs_about,
    rule_text,
)
from isbetter.plots.cd import cd_size, plot_cd_diagram
from isbetter.plots.hasse import NODE_EDGE, hasse_size, layer_of, plot_hasse
from isbetter.plots.ranks import draw_ranks_row, ranks_row_size
from isbetter.plots.simplex import project_simplex
from isbetter.ranking.order import group_label

__all__ = [
    "plot_hasse",
    "plot_pairwise_heatmap",
    "plot_triangle_grid",
    "save_ranking_plot",
]

_POINT_COLOUR = "#1f4e79"
# corners of the triangle, as in isbetter.plots.simplex: A better, ROPE, B better
_CORNERS = project_simplex(np.eye(3))


# ------------------------------------------------------------------ helpers
def _relation(result: Any, metric: str, a: str, b: str) -> str | None:
    """Return the relation of `a` to `b` on `metric`, whichever way the pair is stored."""
    rels = result.relations.get(metric, {})
    if (a, b) in rels:
        return rels[(a, b)]
    if (b, a) in rels:
        return mirror(rels[(b, a)])
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
            color=NODE_EDGE,
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
    metric = metric_of(result, metric)
    names = _grid_systems(result, systems)
    k = len(names)
    fig, grid = _grid_figure(fig, k)
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
                result.pair(row, col, metric).probabilities(),
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
    about = pairs_about(result, metric)
    fig.suptitle(f"{metric}: pairwise posteriors, {about}\n{rule_text(result)}", fontsize="medium")
    if k >= 3:  # the empty upper triangle holds the key
        top_right = fig.axes[-1].get_position().x1, fig.axes[0].get_position().y1
        fig.text(
            *top_right, _grid_key(n_points), ha="right", va="top", fontsize="x-small", color="0.3"
        )
    return fig


def _grid_systems(result: Any, systems: Any) -> tuple[str, ...]:
    """Return the systems of the grid: those given (checked), or the ranking's."""
    names = tuple(result.systems if systems is None else systems)
    unknown = [s for s in names if s not in result.systems]
    if unknown:
        raise InputError(f"Not in this ranking: {', '.join(map(repr, unknown))}.")
    if len(names) < 2 or len(set(names)) != len(names):
        raise InputError("The triangle grid needs at least two distinct systems.")
    return names


def _grid_figure(fig: Any, k: int) -> tuple[Any, Any]:
    """Return the figure (a new one sized for `k` systems when None) and its grid of cells."""
    margins: dict[str, float] = {}
    if fig is None:
        import matplotlib.pyplot as plt

        size = max(1.8 * (k - 1) + 0.6, 3.2)
        fig = plt.figure(figsize=(size, size + 0.7), dpi=PRINT_DPI)
        top = 1 - 1.05 / (size + 0.7)
        margins = {"left": 0.4 / size, "right": 0.99, "bottom": 0.15 / size, "top": top}
    return fig, fig.add_gridspec(k - 1, k - 1, wspace=0.08, hspace=0.18, **margins)


def _grid_key(n_points: int) -> str:
    """Return the key of the triangle grid: what a cell's corners, symbol and points are."""
    return (
        "each cell: row vs column\n"
        "bottom left: row better\n"
        "top (≈): practically equivalent\n"
        "bottom right: column better\n"
        "symbol: relation of row to column\n"
        f"points: posterior draws (up to {n_points})"
    )


# ------------------------------------------------------------------ heatmap
_HEAT_MAP = "Blues"


def _pairwise(result: Any, metric: str, names: list[str]) -> tuple[np.ndarray, np.ndarray]:
    """P(row better than column) and P(equivalent) of every ordered pair (NaN if none)."""
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
    return better, rope


def _has_rope(result: Any, metric: str, names: list[str]) -> bool:
    """Return whether any pair of `names` on `metric` was compared with a ROPE above 0."""
    for i, a in enumerate(names):
        for b in names[i + 1 :]:
            try:
                if result.pair(a, b, metric).rope > 0:
                    return True
            except InputError:
                continue
    return False


def _rank_order(result: Any, metric: str, names: list[str], better: np.ndarray) -> list[str]:
    """Order `names` best first, as the partial order ranks them.

    By the layer of the order (as the Hasse diagram draws it), then by the mean
    probability of being better than the others, of the equivalence group and of
    the system.
    """
    order = result.orders[metric]
    labels = {group_label(g): g for g in order.groups}
    level = layer_of(list(labels), [tuple(e) for e in order.hasse_edges])
    score = {}
    for name, row in zip(names, better, strict=True):
        known = row[~np.isnan(row)]
        score[name] = float(known.mean()) if known.size else 0.0
    key: dict[str, tuple[float, ...]] = {}
    for label, group in labels.items():
        mean = float(np.mean([score.get(s, 0.0) for s in group]))
        for s in group:
            key[s] = (-level[label], -mean, -score.get(s, 0.0))
    return sorted(names, key=lambda s: key.get(s, (1.0, 0.0, -score[s])))  # unordered: last


def plot_pairwise_heatmap(
    result: Any, metric: str | None = None, *, ax: Any = None, by_rank: bool = True
) -> Any:
    """Draw P(row better than column) for every ordered pair of systems.

    Each cell holds that probability and, below it, the probability of
    practical equivalence (ROPE) of the pair, e.g. "0.83" over "(≈0.12)", in
    black or white, whichever contrasts more with the cell's colour; without a
    ROPE (every pair's is 0, as in a Plackett–Luce ranking, whose cells are
    P(w_row > w_column)) the cell holds the one probability. The diagonal is blank.

    Parameters
    ----------
    result : RankingResult
        From :func:`isbetter.rank`.
    metric : str, optional
        Which metric; default: the first.
    ax : matplotlib.axes.Axes, optional
        Where to draw; a new figure when None.
    by_rank : bool, default: True
        Order rows and columns by the partial order, best first: by its layers
        (the one-line order), and within a layer and an equivalence group by the
        mean probability of being better than the others; False keeps the
        ranking's order.

    Returns
    -------
    matplotlib.axes.Axes
    """
    import pandas as pd
    import seaborn as sns

    metric = metric_of(result, metric)
    names = list(result.systems)
    better, rope = _pairwise(result, metric, names)
    if by_rank:
        names = _rank_order(result, metric, names, better)
        better, rope = _pairwise(result, metric, names)
    k = len(names)
    with_rope = _has_rope(result, metric, names)
    ranked = result.settings.get("comparison_method") == "plackett_luce"
    what = "P(w_row > w_column)" if ranked else "P(row better than column)"
    ax = new_axes(ax, (0.85 * k + 2.6, 0.75 * k + 1.4))
    frame = pd.DataFrame(better, index=names, columns=names)
    sns.heatmap(
        frame,
        ax=ax,
        mask=np.isnan(better),
        vmin=0.0,
        vmax=1.0,
        cmap=_HEAT_MAP,
        annot=False,
        linewidths=0.6,
        linecolor="white",
        cbar_kws={"label": what},
    )
    big = cell_font(k)
    cmap = matplotlib.colormaps[_HEAT_MAP]
    for i in range(k):
        for j in range(k):
            if np.isnan(better[i, j]):
                continue
            colour = cmap(better[i, j])
            if not with_rope:
                cell_text(ax, j + 0.5, i + 0.5, f"{better[i, j]:.2f}", big, colour)
                continue
            cell_text(ax, j + 0.5, i + 0.4, f"{better[i, j]:.2f}", big, colour)
            cell_text(ax, j + 0.5, i + 0.72, f"(≈{rope[i, j]:.2f})", big - 2, colour)
    ax.set_xlabel("column system")
    ax.set_ylabel("row system")
    ax.tick_params(axis="x", labelrotation=30)
    for lab in ax.get_xticklabels():
        lab.set_horizontalalignment("right")
        lab.set_rotation_mode("anchor")
    ax.tick_params(axis="y", labelrotation=0)
    about = pairs_about(result, metric)
    title = f"{metric}, {about}: {what}" + (" and (≈ P(equivalent))" if with_rope else ", no ROPE")
    ax.set_title(title, fontsize="medium")
    return ax


# ------------------------------------------------------------------ the CLI's plot
def save_ranking_plot(
    result: Any, path: str | os.PathLike[str], metric: str | None = None, *, dpi: int = 150
) -> Path:
    """Write the Hasse diagram and the pairwise heatmap side by side to `path`.

    One row per metric (only `metric` when given); below it, for ranks from one
    model of all the systems (``result.joint``), the rank probabilities and P(best)
    with its interval (:mod:`isbetter.plots.ranks`); below that, for a ranking over
    several data sets, the critical-difference diagram of the mean ranks
    (:func:`~isbetter.plots.cd.plot_cd_diagram`). The figure is made without
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

    metrics = result.metrics if metric is None else (metric_of(result, metric),)
    sizes = [hasse_size(result, m) for m in metrics]
    k = len(result.systems)
    heat_w, heat_h = 0.85 * k + 2.6, 0.75 * k + 1.6
    width = max(w for w, _ in sizes) + heat_w
    baselines = getattr(result, "baselines", {})
    rows: list[tuple[str, str, float]] = []  # (kind, metric, height) of each row of plots
    joint = getattr(result, "joint", None) or {}
    for m, (_, h) in zip(metrics, sizes, strict=True):
        rows.append(("order", m, max(h, heat_h)))
        if m in joint:
            rows.append(("ranks", m, ranks_row_size(k)[1]))
            width = max(width, ranks_row_size(k)[0])
        if m in baselines:
            rows.append(("cd", m, cd_size(baselines[m])[1]))
    fig = Figure(figsize=(width, sum(h for *_, h in rows)), layout="constrained")
    grid = fig.add_gridspec(
        len(rows),
        2,
        width_ratios=[max(w for w, _ in sizes), heat_w],
        height_ratios=[h for *_, h in rows],
    )
    for r, (kind, m, _) in enumerate(rows):
        if kind == "cd":
            plot_cd_diagram(result, m, ax=fig.add_subplot(grid[r, :]))
            continue
        if kind == "ranks":
            draw_ranks_row(result, m, fig, grid[r, :])
            continue
        plot_hasse(result, m, ax=fig.add_subplot(grid[r, 0]))
        plot_pairwise_heatmap(result, m, ax=fig.add_subplot(grid[r, 1]))
    fig.savefig(path, dpi=dpi, bbox_inches="tight")
    return Path(path)
