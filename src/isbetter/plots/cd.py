"""The critical-difference diagram of mean ranks (Demšar 2006, Fig. 1); no statistics.

:func:`plot_cd_diagram` draws what :func:`isbetter.friedman_nemenyi` computed (or
a ranking's :attr:`~isbetter.ranking.result.RankingResult.baselines`): an axis of
mean ranks, turned so that the best (rank 1) is on the right; every system hangs
from its mean rank, labelled with its name and mean rank, the better half on the
right and the rest on the left; a thick bar joins each group of systems whose
mean ranks differ by less than Nemenyi's critical difference, drawn to scale
above the axis.
"""

from __future__ import annotations

import math
from typing import Any

from isbetter.core.errors import InputError
from isbetter.plots._layout import new_axes
from isbetter.plots._ranking_common import metric_of

__all__ = ["cd_size", "plot_cd_diagram"]

_FONT = 10.0  # points
_WIDTH = 7.5  # inches
_ROW = 0.24  # inches between two labels on one side
_BAR_ROW = 0.13  # inches between two group bars
_TOP = 1.2  # inches above the axis: title, key, CD bar and tick labels
_BOTTOM = 0.15  # inches below the last label
_GROUP_COLOUR = "0.1"
_LINE_COLOUR = "0.35"


def _baselines(result: Any, metric: str | None) -> tuple[Any, str | None]:
    """Return the baselines to draw and the metric's name (None for a bare record)."""
    if getattr(result, "kind", None) != "ranking":
        if metric is not None:
            raise InputError("`metric` is for a ranking; these baselines are of one metric.")
        return result, None
    metric = metric_of(result, metric)
    if metric not in result.baselines:
        raise InputError(
            f"The ranking has no mean ranks on {metric!r}: the critical-difference diagram "
            "needs scores on several data sets (per-document predictions and one data set "
            "have none)."
        )
    return result.baselines[metric], metric


def cd_size(baselines: Any, alpha: float = 0.05) -> tuple[float, float]:
    """Return a figure size (inches) that fits the CD diagram of `baselines` at `alpha`."""
    k = len(baselines.mean_ranks)
    bars = sum(len(g) > 1 for g in baselines.critical_difference(alpha).groups)
    height = _TOP + 0.18 + bars * _BAR_ROW + 0.12 + (math.ceil(k / 2) - 1) * _ROW + _BOTTOM
    return (_WIDTH, height + 0.1)  # + the layout's padding


def plot_cd_diagram(
    result: Any, metric: str | None = None, *, alpha: float = 0.05, ax: Any = None
) -> Any:
    """Draw the critical-difference diagram of the systems' mean ranks (Demšar 2006).

    Parameters
    ----------
    result : RankingResult or FriedmanNemenyi
        A ranking over several data sets (its
        :attr:`~isbetter.RankingResult.baselines`) or the result of
        :func:`isbetter.friedman_nemenyi`.
    metric : str, optional
        With a ranking: which metric (default: the first).
    alpha : float, default: 0.05
        Which of the computed critical differences to draw (0.05 or 0.10 by default).
    ax : matplotlib.axes.Axes, optional
        Where to draw; a new figure (of :func:`cd_size`) when None.

    Returns
    -------
    matplotlib.axes.Axes
    """
    base, metric = _baselines(result, metric)
    cd = base.critical_difference(alpha)
    ranks = base.mean_ranks
    systems = base.by_rank  # best first
    k = len(systems)
    ax = new_axes(ax, cd_size(base, alpha))
    fig_w = ax.get_position().width * ax.figure.get_figwidth()

    def inch_x(width: float) -> float:  # inches -> axes fraction (x)
        return width / fig_w

    # the axis between the labels: as wide as the longest label on either side allows
    right, left = systems[: math.ceil(k / 2)], systems[math.ceil(k / 2) :][::-1]
    labels = {s: f"{s} ({ranks[s]:.2f})" for s in systems}
    char = 0.6 * _FONT / 72  # inches per character, about
    pad = inch_x(0.25)
    x_lo = inch_x(max((len(labels[s]) * char for s in left), default=0.0)) + pad
    x_hi = 1 - inch_x(max(len(labels[s]) * char for s in right)) - pad
    lo_rank, hi_rank = 1.0, float(max(k, 2))

    def x(rank: float) -> float:  # rank k at the left, 1 at the right
        return x_lo + (hi_rank - rank) / (hi_rank - lo_rank) * (x_hi - x_lo)

    # vertical layout in inches from the axis (y grows downwards), as cd_size reserves it
    groups = [g for g in cd.groups if len(g) > 1]
    first = 0.18 + len(groups) * _BAR_ROW + 0.12  # the first row of labels
    ax.set_xlim(0, 1)
    ax.set_ylim(first + (math.ceil(k / 2) - 1) * _ROW + _BOTTOM, -_TOP)
    ax.set_axis_off()
    ax.plot([x(hi_rank), x(lo_rank)], [0, 0], color="black", linewidth=1.2)
    for r in range(1, k + 1):
        ax.plot([x(r), x(r)], [0, -0.08], color="black", linewidth=1.0)
        ax.text(x(r), -0.12, str(r), ha="center", va="bottom", fontsize=_FONT)
    for r in range(1, k):
        ax.plot([x(r + 0.5)] * 2, [0, -0.04], color="black", linewidth=0.8)
    _cd_bar(ax, cd, x, hi_rank, lo_rank)

    for i, group in enumerate(groups):
        y = 0.18 + i * _BAR_ROW
        ends = [ranks[s] for s in group]
        ax.plot(
            [x(max(ends)) - inch_x(0.05), x(min(ends)) + inch_x(0.05)],
            [y, y],
            color=_GROUP_COLOUR,
            linewidth=3.2,
            solid_capstyle="butt",
        )
    for side, names in (("right", right), ("left", left)):
        end = x_hi + inch_x(0.1) if side == "right" else x_lo - inch_x(0.1)
        for row, s in enumerate(names):
            y = first + row * _ROW
            xs = x(ranks[s])
            ax.plot([xs, xs, end], [0, y, y], color=_LINE_COLOUR, linewidth=0.9)
            ax.text(
                end + (inch_x(0.04) if side == "right" else -inch_x(0.04)),
                y,
                labels[s],
                ha="left" if side == "right" else "right",
                va="center",
                fontsize=_FONT,
            )
    _titles(ax, base, metric)
    return ax


def _cd_bar(ax: Any, cd: Any, x: Any, hi_rank: float, lo_rank: float) -> None:
    """Draw the critical difference to scale above the axis, from its worst end."""
    length = min(cd.cd, hi_rank - lo_rank)
    y = -0.5
    start, stop = x(hi_rank), x(hi_rank - length)
    ax.plot([start, stop], [y, y], color="black", linewidth=1.6)
    for end in (start, stop):
        ax.plot([end, end], [y - 0.05, y + 0.05], color="black", linewidth=1.2)
    text = f"CD = {cd.cd:.2f} (α = {cd.alpha:g})"
    if cd.cd > hi_rank - lo_rank:
        text += ", longer than the axis: no pair differs"
    ax.text((start + stop) / 2, y - 0.08, text, ha="center", va="bottom", fontsize=_FONT - 1)


def _titles(ax: Any, base: Any, metric: str | None) -> None:
    """Title and key at the top of the axes (in the inches above the axis), not outside."""
    what = f"{metric}: mean ranks" if metric else "Mean ranks"
    ax.text(
        0.5,
        -_TOP,
        f"{what} on {base.n_datasets} data sets (1 = best, ties averaged)",
        ha="center",
        va="top",
        fontsize="medium",
    )
    ax.text(
        0.5,
        -_TOP + 0.24,
        f"Friedman p = {base.friedman.p_value:.3g}; bars join systems whose mean ranks differ "
        "by less than Nemenyi's CD",
        ha="center",
        va="top",
        fontsize="small",
        color="0.35",
    )
