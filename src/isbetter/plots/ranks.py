"""Plots of the ranks from one model of all the systems: rank probabilities and P(best).

Both read a ranking's :class:`~isbetter.inference.ranks.RankSummary` (``result.joint``,
filled by ``method="plackett-luce"`` and the joint model) and do no statistics:

* :func:`plot_rank_probabilities` — systems × rank positions, the probability
  that each system has each rank, the systems in expected-rank order (best at the
  top), each system's 95% rank interval outlined;
* :func:`plot_p_best` — P(best) of each system (the probability that its effect,
  or Plackett–Luce weight, is the largest) as a bar with its 95% Monte Carlo
  interval; for Plackett–Luce also P(wins next data set) = E[w_k] as a marker with
  the credible interval of w_k.
"""

from __future__ import annotations

from typing import Any

import matplotlib
import numpy as np

from isbetter.core.errors import InputError
from isbetter.core.vocabulary import METHOD_NAMES, RANK_QUANTITIES
from isbetter.inference.ranks import RankSummary
from isbetter.plots._layout import new_axes, wrap_to_axes
from isbetter.plots._ranking_common import cell_font, cell_text, metric_of

__all__ = [
    "draw_ranks_row",
    "p_best_size",
    "plot_p_best",
    "plot_rank_probabilities",
    "rank_probabilities_size",
    "ranks_row_size",
]

_MAP = "Purples"
_BAR = "#4b3a8c"  # the darkest third of the map: the bars read as the same quantity family
_OUTLINE = "#d95f02"
#: smallest probability written in a cell; below it the cell stays blank
SHOWN = 0.005


def joint_of(result: Any, metric: str | None) -> tuple[str, RankSummary]:
    """Return the metric and its ranks from one model, or raise when the ranking has none."""
    metric = metric_of(result, metric)
    joint = getattr(result, "joint", None) or {}
    if metric not in joint:
        raise InputError(
            f"The ranking has no ranks from one model of all the systems on {metric!r}: rank "
            "with method='plackett-luce' (or the joint model) for rank probabilities and P(best)."
        )
    return metric, joint[metric]


def rank_probabilities_size(k: int) -> tuple[float, float]:
    """Figure size (inches) of the rank-probability heatmap of `k` systems."""
    return 0.62 * k + 3.4, 0.5 * k + 2.0


def p_best_size(k: int) -> tuple[float, float]:
    """Figure size (inches) of the P(best) bars of `k` systems."""
    return 5.6, 0.4 * k + 1.9


def _model(j: RankSummary) -> str:
    """Name the model and what its ranks are about: ``Joint correlated model, mean effects``."""
    about = RANK_QUANTITIES.get(j.method, ("",))[0]
    return METHOD_NAMES.get(j.method, j.method) + (f", {about}" if about else "")


def plot_rank_probabilities(result: Any, metric: str | None = None, *, ax: Any = None) -> Any:
    """Draw P(system has rank r) for every system and rank position (1 = best).

    One row per system, best expected rank at the top; the row's label gives its
    expected rank. Each cell holds its probability (blank below 0.005), in black
    or white, whichever contrasts more with the cell; the cells of each system's
    95% rank interval are outlined.

    Parameters
    ----------
    result : RankingResult
        A ranking with ranks from one model (``result.joint``).
    metric : str, optional
        Which metric; default: the first.
    ax : matplotlib.axes.Axes, optional
        Where to draw; a new figure when None.

    Returns
    -------
    matplotlib.axes.Axes
    """
    from matplotlib.patches import Rectangle

    metric, j = joint_of(result, metric)
    names = j.by_expected_rank()
    k = len(names)
    probs = np.array([j.rank_probabilities[s] for s in names])
    ax = new_axes(ax, rank_probabilities_size(k))
    image = ax.imshow(probs, cmap=_MAP, vmin=0.0, vmax=1.0, aspect="auto")
    ax.figure.colorbar(image, ax=ax, label="P(rank)", fraction=0.05, pad=0.02)
    cmap, size = matplotlib.colormaps[_MAP], cell_font(k)
    for i, s in enumerate(names):
        for r in range(k):
            if probs[i, r] >= SHOWN:
                cell_text(ax, r, i, f"{probs[i, r]:.2f}", size, cmap(probs[i, r]))
        lo, hi = j.rank_interval[s]
        ax.add_patch(
            Rectangle(
                (lo - 1.5, i - 0.5), hi - lo + 1, 1.0, fill=False, edgecolor=_OUTLINE, linewidth=1.8
            )
        )
    ax.set_xticks(range(k), [str(r) for r in range(1, k + 1)])
    ax.set_yticks(range(k), [f"{s} ({j.expected_rank[s]:.2f})" for s in names])
    ranked = "the weights" if j.method == "plackett_luce" else "the effects"
    ax.set_xlabel(
        wrap_to_axes(ax, f"rank (1 = best) of {ranked} in each draw; outlined: 95% rank interval")
    )
    ax.set_ylabel("system (expected rank)")
    ax.tick_params(length=0)
    ax.set_title(wrap_to_axes(ax, f"{metric}: P(rank), {_model(j)}"), fontsize="medium")
    return ax


def plot_p_best(result: Any, metric: str | None = None, *, ax: Any = None) -> Any:
    """Draw P(best) of every system as a bar with its 95% interval.

    Best expected rank at the top, the value written beside each bar. The
    interval is the one the summary carries (:attr:`RankSummary.p_best_interval`)
    and the x-axis label says which it is; a summary saved without one is drawn
    without error bars and says so. Where the summary has P(wins next data set)
    (Plackett–Luce's E[w_k]), each system's is drawn as a diamond with its
    interval, under the bar, and the legend names both.

    Parameters
    ----------
    result : RankingResult
        A ranking with ranks from one model (``result.joint``).
    metric : str, optional
        Which metric; default: the first.
    ax : matplotlib.axes.Axes, optional
        Where to draw; a new figure when None.

    Returns
    -------
    matplotlib.axes.Axes
    """
    metric, j = joint_of(result, metric)
    names = j.by_expected_rank()
    k = len(names)
    p = np.array([j.p_best[s] for s in names])
    y = np.arange(k)
    ax = new_axes(ax, p_best_size(k))
    ax.barh(y, p, color=_BAR, height=0.6, label="P(best)")
    if j.p_wins_next:
        wins = np.array([j.p_wins_next[s] for s in names])
        spans = [j.p_wins_next_interval.get(s, (w, w)) for s, w in zip(names, wins, strict=True)]
        w_lo, w_hi = np.array(spans).T
        ax.errorbar(
            wins,
            y + 0.38,
            xerr=np.vstack([wins - w_lo, w_hi - wins]),
            fmt="D",
            color=_OUTLINE,
            markersize=4,
            elinewidth=1.0,
            capsize=2,
            label="P(wins next data set) = E[w]",
        )
    if j.p_best_interval:
        lo = np.array([j.p_best_interval[s][0] for s in names])
        hi = np.array([j.p_best_interval[s][1] for s in names])
        err = np.vstack([np.maximum(p - lo, 0.0), np.maximum(hi - p, 0.0)])
        ax.errorbar(p, y, xerr=err, fmt="none", ecolor="black", elinewidth=1.2, capsize=4)
        ends, interval = hi, j.p_best_interval_kind
    else:
        ends, interval = p, "no interval saved with this summary"
    if j.p_wins_next:
        ends = np.maximum(ends, w_hi)
    for yi, value, end in zip(y, p, ends, strict=True):
        ax.annotate(
            f"{value:.3f}",
            (end, yi),
            xytext=(4, 0),
            textcoords="offset points",
            va="center",
            ha="left",
            fontsize=cell_font(k),
        )
    ax.set_yticks(y, list(names))
    ax.invert_yaxis()
    right = min(1.2, float(np.ceil(10 * ends.max() + 1.0)) / 10)  # room for the values
    ax.set_xlim(0.0, right)
    ax.set_xticks([t for t in np.arange(0.0, 1.01, 0.2 if right > 0.5 else 0.1) if t <= right])
    what = f"P(best): P(largest {'weight' if j.method == 'plackett_luce' else 'effect'})"
    whiskers = f"whiskers: {interval}"
    if j.p_wins_next:
        what += "; ◆ P(wins next data set) = E[w]"
        whiskers = f"bar whiskers: {interval}; ◆ whiskers: {j.p_wins_next_interval_kind}"
        ax.legend(loc="lower right", fontsize=8, frameon=False)
    ax.set_xlabel(wrap_to_axes(ax, what, whiskers, fontsize=9), fontsize=9)
    ax.set_title(f"{metric}: P(best), {_model(j)}", fontsize="medium")
    ax.spines[["top", "right"]].set_visible(False)
    return ax


def draw_ranks_row(result: Any, metric: str, fig: Any, cell: Any) -> None:
    """Draw the rank probabilities and P(best) of `metric` side by side in `cell` of `fig`."""
    k = len(result.joint[metric].systems)
    inner = cell.subgridspec(1, 2, width_ratios=[rank_probabilities_size(k)[0], p_best_size(k)[0]])
    plot_rank_probabilities(result, metric, ax=fig.add_subplot(inner[0, 0]))
    plot_p_best(result, metric, ax=fig.add_subplot(inner[0, 1]))


def ranks_row_size(k: int) -> tuple[float, float]:
    """Size (inches) of :func:`draw_ranks_row` for `k` systems."""
    (w1, h1), (w2, h2) = rank_probabilities_size(k), p_best_size(k)
    return w1 + w2, max(h1, h2)
