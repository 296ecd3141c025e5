"""Plots of the hierarchical model: the next data set's difference and the shrinkage.

Also :func:`save_comparison_plot`, which the command line uses to write the
plot that suits a result: the simplex for argmax-counted posteriors, the
posterior density of the difference otherwise.
"""

from __future__ import annotations

import os
from typing import Any

import numpy as np

from isbetter.core.vocabulary import difference_text, place_text, rope_text
from isbetter.plots._layout import (
    PRINT_DPI,
    legend_outside,
    new_axes,
    sparse_x_ticks,
    wrap_to_axes,
)

__all__ = [
    "difference_label",
    "draw_forest",
    "plot_difference_posterior",
    "plot_next_posterior",
    "plot_shrinkage",
    "save_comparison_plot",
]

_ROPE_COLOUR = "#f2b134"
_LINE_COLOUR = "#1f4e79"


def _shade_rope(ax: Any, rope: float) -> None:
    if rope > 0:
        ax.axvspan(-rope, rope, color=_ROPE_COLOUR, alpha=0.3, lw=0, label=rope_text(rope))
    else:
        ax.axvline(0.0, color=_ROPE_COLOUR, lw=1.5, label=f"d = 0 ({rope_text(rope)})")


def difference_label(result: Any, what: str) -> str:
    """Return the x label of a plot of `result`'s difference: `what`, then the metric's d."""
    return f"{what}; " + difference_text(
        result.metric, result.system_a, result.system_b, result.higher_is_better
    )


def plot_next_posterior(
    result: Any, *, rope: float | None = None, ax: Any = None, grid_points: int = 400
) -> Any:
    r"""Plot the posterior predictive density of the next data set's difference.

    The density of :math:`\delta_{next}` is the average over posterior draws
    of :math:`t_{\nu}(\delta_0, \sigma_0)`; the ROPE is shaded and the legend
    gives the predictive probabilities of the three regions.

    Parameters
    ----------
    result : HierarchicalResult
        Result of :func:`~isbetter.cv.hierarchical.model.hierarchical_test`.
    rope : float, optional
        ROPE half-width; default: the result's.
    ax : matplotlib.axes.Axes, optional
        Axes to draw on; default: a new figure.
    grid_points : int, default: 400
        Points at which the density is evaluated.

    Returns
    -------
    matplotlib.axes.Axes
    """
    ax = new_axes(ax, (6, 3.5))
    rope = result.rope if rope is None else rope
    post = result.posterior
    centre = float(np.median(post.delta0))
    spread = float(np.median(post.std0))
    half = max(5 * spread, 2 * rope, abs(centre) + 3 * spread)
    grid = np.linspace(centre - half, centre + half, grid_points)
    dens = post.next_pdf(grid)
    p = result.predictive_probabilities(rope)
    _shade_rope(ax, rope)
    ax.plot(grid, dens, color=_LINE_COLOUR, lw=1.8, label="predictive density")
    ax.fill_between(grid, dens, color=_LINE_COLOUR, alpha=0.15, lw=0)
    ax.set_xlabel(wrap_to_axes(ax, difference_label(result, "difference on a new data set")))
    sparse_x_ticks(ax)
    ax.set_ylabel("density")
    ax.set_title(
        f"P({result.system_a} better) = {p.p_a_better:.3f}, P(ROPE) = {p.p_rope:.3f}, "
        f"P({result.system_b} better) = {p.p_b_better:.3f} (predictive)",
        fontsize="small",
    )
    legend_outside(ax)
    ax.set_ylim(bottom=0)
    return ax


def plot_shrinkage(
    result: Any,
    *,
    observed: np.ndarray | None = None,
    level: float = 0.95,
    ax: Any = None,
    max_datasets: int | None = 60,
) -> Any:
    r"""Forest plot of each data set's mean difference: observed and shrunk.

    Parameters
    ----------
    result : HierarchicalResult
        Result with per-data-set draws ``delta`` and names ``datasets``.
    observed : numpy.ndarray, optional
        Observed mean difference of each data set; default: the result's
        ``observed_means``. Drawn as crosses, so the shrinkage towards
        :math:`\delta_0` shows.
    level : float, default: 0.95
        Probability of the central interval drawn for each data set.
    ax : matplotlib.axes.Axes, optional
        Axes to draw on; default: a new figure sized to the data sets.
    max_datasets : int or None, default: 60
        Draw only the first this many data sets (None: all).

    Returns
    -------
    matplotlib.axes.Axes
    """
    delta = np.asarray(result.delta)
    if observed is None:
        observed = getattr(result, "observed_means", None)
    k = delta.shape[1] if max_datasets is None else min(delta.shape[1], max_datasets)
    lo_q, hi_q = (1 - level) / 2, 1 - (1 - level) / 2
    lo, mid, hi = np.quantile(delta[:, :k], [lo_q, 0.5, hi_q], axis=0)
    return draw_forest(
        ax,
        list(result.datasets)[:k],
        (lo, mid, hi),
        observed=None if observed is None else np.asarray(observed)[:k],
        rope=result.rope,
        labels=(
            f"posterior median, {level:.0%}",
            "observed mean",
            "δ0 (median)",
            difference_label(result, "mean difference"),
            "per-data-set shrinkage",
        ),
        centre=float(np.median(result.posterior.delta0)),
    )


def draw_forest(
    ax: Any,
    names: list[str],
    intervals: tuple[np.ndarray, np.ndarray, np.ndarray],
    *,
    observed: np.ndarray | None,
    rope: float,
    labels: tuple[str, str, str, str, str],
    centre: float,
) -> Any:
    """Draw a forest of per-group intervals with the observed values and a centre line.

    `intervals` are the lower ends, centres and upper ends, one per name (top to bottom);
    `labels` the legend's entries for the intervals, the observed values and the centre
    line, then the x label and the title. A new figure sized to the names if `ax` is None.
    """
    k = len(names)
    ax = new_axes(ax, (6, max(2.5, 0.22 * k + 1)))
    lo, mid, hi = intervals
    y = np.arange(k)[::-1]
    _shade_rope(ax, rope)
    ax.hlines(y, lo, hi, color=_LINE_COLOUR, lw=1.2)
    ax.plot(mid, y, "o", color=_LINE_COLOUR, ms=3.5, label=labels[0])
    if observed is not None:
        ax.plot(observed, y, "x", color="0.35", ms=4, label=labels[1])
    ax.axvline(centre, color="0.3", ls="--", lw=1, label=labels[2])
    ax.set_yticks(y, names, fontsize="x-small")
    ax.set_xlabel(wrap_to_axes(ax, labels[3]))
    sparse_x_ticks(ax)
    ax.set_title(labels[4], fontsize="medium")
    legend_outside(ax, fontsize="x-small")
    return ax


def plot_difference_posterior(
    result: Any, *, rope: float | None = None, ax: Any = None, bins: int = 60
) -> Any:
    """Plot the posterior of the difference with the ROPE shaded (non-hierarchical results).

    A closed-form Student-t posterior (correlated t-test) is drawn as a
    density; draws of the difference as a histogram; for any other posterior
    the per-draw probability that A is better is shown as a histogram.

    Parameters
    ----------
    result : ComparisonResult
        Any result.
    rope : float, optional
        ROPE half-width; default: the result's.
    ax : matplotlib.axes.Axes, optional
        Axes to draw on; default: a new figure.
    bins : int, default: 60
        Histogram bins for draws.

    Returns
    -------
    matplotlib.axes.Axes
    """
    ax = new_axes(ax, (6, 3.5))
    rope = result.rope if rope is None else rope
    post = result.posterior
    a, b = result.system_a, result.system_b
    p = result.probabilities(rope)
    if hasattr(post, "df") and hasattr(post, "loc") and hasattr(post, "scale"):
        if post.scale > 0:
            from scipy import stats

            half = max(6 * post.scale, 2 * rope)
            grid = np.linspace(post.loc - half, post.loc + half, 400)
            dens = stats.t.pdf(grid, post.df, loc=post.loc, scale=post.scale)
            _shade_rope(ax, rope)
            ax.plot(grid, dens, color=_LINE_COLOUR, lw=1.8, label="posterior")
        else:
            _shade_rope(ax, rope)
            ax.axvline(post.loc, color=_LINE_COLOUR, lw=1.8, label="posterior (point mass)")
        ax.set_xlabel(wrap_to_axes(ax, difference_label(result, "mean difference")))
    elif hasattr(post, "draws"):
        _shade_rope(ax, rope)
        ax.hist(
            np.asarray(post.draws),
            bins=bins,
            density=True,
            color=_LINE_COLOUR,
            alpha=0.6,
            label="posterior draws",
        )
        ax.set_xlabel(wrap_to_axes(ax, difference_label(result, "difference")))
    else:
        masses = post.region_masses(rope)
        ax.hist(masses[:, 0], bins=bins, range=(0, 1), color=_LINE_COLOUR, alpha=0.6)
        ax.set_xlabel(
            wrap_to_axes(
                ax,
                f"per-draw probability that {a} is better (d > {rope:g})",
                difference_text(result.metric, a, b, result.higher_is_better),
            )
        )
    ax.set_ylabel("density")
    sparse_x_ticks(ax)
    where = ""
    if getattr(result, "dataset", None):  # one data set: say which, by its name
        place = place_text(result.method, result.dataset, result.settings.get("dataset_name"))
        where = f"{a} vs {b} on {place}\n"
    ax.set_title(
        f"{where}P({a} better) = {p.p_a_better:.3f}, P(ROPE) = {p.p_rope:.3f}, "
        f"P({b} better) = {p.p_b_better:.3f}",
        fontsize="small",
    )
    if ax.get_legend_handles_labels()[0]:
        legend_outside(ax)
    return ax


def save_comparison_plot(
    result: Any, path: str | os.PathLike[str], *, rope: float | None = None, dpi: int = PRINT_DPI
) -> None:
    """Write the plot that suits `result` to `path` (format from the file extension).

    The hierarchical paired model of items over subtasks gets the forest of its
    subtasks' shrunk differences (:func:`~isbetter.plots.items.plot_subtasks`, every
    subtask); other results whose probabilities are argmax counts of per-draw masses
    (the hierarchical model, the sign and signed-rank tests) get the simplex
    (:func:`~isbetter.plots.simplex.plot_simplex`); other results the posterior
    of the difference (:func:`plot_difference_posterior`). The figure is made
    without pyplot and closed, and matplotlib's rcParams are left untouched.

    Parameters
    ----------
    result : ComparisonResult
        Any result of isbetter.
    path : str or os.PathLike
        Output file, e.g. ``"triangle.png"`` or ``"triangle.pdf"``.
    rope : float, optional
        ROPE half-width; default: the result's.
    dpi : int, default: 250
        Resolution of raster formats (the triangle: about 1050 pixels wide; ``.pdf``
        and ``.svg`` are vector graphics).
    """
    from matplotlib.figure import Figure

    from isbetter.plots.simplex import plot_simplex

    if getattr(result, "subtasks", ()) and getattr(result, "delta", None) is not None:
        from isbetter.plots.items import plot_subtasks

        size = (6.0, max(2.5, 0.22 * len(result.subtasks) + 1))
        fig = Figure(figsize=size, layout="constrained")
        plot_subtasks(result, ax=fig.add_subplot(), max_subtasks=None)
        fig.savefig(path, dpi=dpi, bbox_inches="tight")
        return
    fig = Figure(figsize=(5.5, 5) if result.counting == "argmax" else (6, 3.8))
    ax = fig.add_subplot()
    if result.counting == "argmax":
        plot_simplex(result, rope=rope, ax=ax)
    else:
        plot_difference_posterior(result, rope=rope, ax=ax)
    fig.savefig(path, dpi=dpi, bbox_inches="tight")
