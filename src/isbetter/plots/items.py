"""Plots of item-level comparisons of language models."""

from __future__ import annotations

from typing import Any

import numpy as np

from isbetter.plots.hierarchical import difference_label, draw_forest

__all__ = ["plot_subtasks"]


def plot_subtasks(
    result: Any, *, level: float = 0.95, ax: Any = None, max_subtasks: int | None = 60
) -> Any:
    r"""Forest plot of each subtask's difference in accuracy: observed and shrunk.

    Each subtask's shrunk difference :math:`\delta_t = \phi_t(2 s_t - 1)` (graded items:
    the :math:`\delta_t` of the correlated-t model) is drawn as its posterior mean and
    highest-density interval, the observed difference :math:`(n_{10} - n_{01}) / N_t` (its
    mean difference) as a cross (the shrinkage shows as the distance
    between them), the population mean difference's posterior mean as a dashed line.

    Parameters
    ----------
    result : ItemsHierarchicalResult
        Result of :func:`~isbetter.items.hierarchical.model.hierarchical_items`.
    level : float, default: 0.95
        Mass of each subtask's highest-density interval.
    ax : matplotlib.axes.Axes, optional
        Axes to draw on; default: a new figure sized to the subtasks.
    max_subtasks : int or None, default: 60
        Draw only the first this many subtasks (None: all).

    Returns
    -------
    matplotlib.axes.Axes
    """
    frame = result.subtask_frame(level)
    if max_subtasks is not None:
        frame = frame.iloc[:max_subtasks]
    columns = ("interval_low", "mean", "interval_high")
    lo, mid, hi = (frame[c].to_numpy() for c in columns)
    return draw_forest(
        ax,
        list(frame["subtask"]),
        (lo, mid, hi),
        observed=frame["observed"].to_numpy(),
        rope=result.rope,
        labels=(
            f"posterior mean, {level:.0%} HDI",
            "observed difference",
            "population mean",
            difference_label(result, "difference in mean score"),
            "per-subtask shrinkage",
        ),
        centre=float(np.mean(result.population_mean)),
    )
