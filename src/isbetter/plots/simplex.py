"""Simplex (triangle) plot of per-draw region masses (Szymański & Gorman 2020, Figs. 1-3).

Each posterior draw gives the masses of (A better, ROPE, B better) of the next
data set's difference: a point on the probability simplex. The triangle shows
where those points lie, the boundaries of the three argmax regions and, at the
corners, the system names with their (argmax-counted) probabilities.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from isbetter.core.vocabulary import METHOD_NAMES
from isbetter.plots._layout import PRINT_DPI

__all__ = ["plot_simplex", "project_simplex"]

# corners of the triangle: A better (bottom left), B better (bottom right), ROPE (top)
_CORNERS = np.array([[0.0, 0.0], [0.5, math.sqrt(3) / 2], [1.0, 0.0]])


def project_simplex(masses: np.ndarray) -> np.ndarray:
    """Project masses of (A better, ROPE, B better) to 2-D triangle coordinates.

    Parameters
    ----------
    masses : numpy.ndarray
        Shape ``(n, 3)``, rows summing to 1.

    Returns
    -------
    numpy.ndarray
        Shape ``(n, 2)``: A better is the corner (0, 0), B better (1, 0), the
        ROPE (0.5, sqrt(3)/2).

    Examples
    --------
    >>> project_simplex(np.array([[1.0, 0.0, 0.0], [0.0, 0.0, 1.0]]))
    array([[0., 0.],
           [1., 0.]])
    """
    return np.asarray(masses, dtype=float) @ _CORNERS


def plot_simplex(
    result: Any,
    *,
    rope: float | None = None,
    ax: Any = None,
    gridsize: int = 40,
    cmap: str = "Blues",
    names: tuple[str, str] | None = None,
) -> Any:
    """Plot the per-draw (A better, ROPE, B better) masses in a triangle.

    Parameters
    ----------
    result : ComparisonResult
        A result whose ``posterior`` has per-draw region masses, e.g. a
        :class:`~isbetter.cv.hierarchical.model.HierarchicalResult`.
    rope : float, optional
        ROPE half-width; default: the result's.
    ax : matplotlib.axes.Axes, optional
        Axes to draw on; default: a new figure.
    gridsize : int, default: 40
        Number of hexagons across (density of the draws).
    cmap : str, default: "Blues"
        Colour map of the density.
    names : tuple of str, optional
        Labels of A and B; default: the result's system names.

    Returns
    -------
    matplotlib.axes.Axes
        The corners are labelled with the system names (and "ROPE") and the
        probabilities read off the draws with the result's counting; the title
        names the method, the systems and the metric.
    """
    import matplotlib.pyplot as plt
    from matplotlib.lines import Line2D

    from isbetter.inference.decisions import probabilities_from_masses

    if ax is None:
        _, ax = plt.subplots(figsize=(5, 4.6), dpi=PRINT_DPI)  # saved: 1250 x 1150 px
    rope = result.rope if rope is None else rope
    masses = result.posterior.region_masses(rope)
    probs = probabilities_from_masses(masses, result.counting)
    name_a, name_b = names if names is not None else (result.system_a, result.system_b)
    xy = project_simplex(masses)

    ax.hexbin(
        xy[:, 0],
        xy[:, 1],
        gridsize=gridsize,
        mincnt=1,
        cmap=cmap,
        bins="log",
        extent=(0.0, 1.0, 0.0, math.sqrt(3) / 2),
        linewidths=0.0,
    )
    outline = np.vstack([_CORNERS, _CORNERS[:1]])
    ax.add_line(Line2D(outline[:, 0], outline[:, 1], color="0.2", linewidth=1.2))
    # boundaries of the argmax regions: centroid to the edge midpoints
    centre = _CORNERS.mean(axis=0)
    for i, j in ((0, 1), (1, 2), (0, 2)):
        mid = (_CORNERS[i] + _CORNERS[j]) / 2
        ax.add_line(
            Line2D([centre[0], mid[0]], [centre[1], mid[1]], color="0.4", linestyle="--", lw=1)
        )
    how = "argmax count" if result.counting == "argmax" else "probability"
    ax.text(0.0, -0.05, f"{name_a} better\np = {probs.p_a_better:.3f}", ha="center", va="top")
    ax.text(1.0, -0.05, f"{name_b} better\np = {probs.p_b_better:.3f}", ha="center", va="top")
    ax.text(
        0.5,
        math.sqrt(3) / 2 + 0.04,
        f"ROPE ({f'|d| <= {rope:g}' if rope else 'd = 0'})\np = {probs.p_rope:.3f}",
        ha="center",
        va="bottom",
    )
    method = METHOD_NAMES.get(result.method, result.method)
    ax.set_title(
        f"{method}\n{name_a} vs {name_b} on {result.metric} "
        f"({'higher' if result.higher_is_better else 'lower'} is better)\n{len(xy)} draws ({how})",
        fontsize="medium",
    )
    ax.set_xlim(-0.2, 1.2)
    ax.set_ylim(-0.22, 1.12)
    ax.set_aspect("equal")
    ax.set_axis_off()
    return ax
