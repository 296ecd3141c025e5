"""Plots of a paired F1 comparison (Zhang et al. 2016, Figures 4 and 6).

* :func:`plot_f1_posterior` — posterior density of delta with the HDI and the
  ROPE (Fig. 6a);
* :func:`plot_savage_dickey` — prior and posterior densities of delta near 0,
  whose ratio at 0 is the Savage–Dickey Bayes factor (Fig. 6b);
* :func:`plot_f1_trace` — the draws in order (Fig. 4);
* :func:`save_f1_plot` — Figs. 6a and 6b side by side, one row per chosen class
  (a class, ``"macro"``, ``"micro"``, several or ``"all"``), written to a file.

They take an :class:`~isbetter.results.F1Result` and a class label
(default: the first row), take ``ax=None`` and return the axes. The densities
are Gaussian kernel density estimates of the stored draws (the same estimate
that gives BF01); nothing is refitted.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
from matplotlib.axes import Axes
from scipy import stats

from isbetter.core.vocabulary import rope_text
from isbetter.inference.decisions import symbol
from isbetter.inference.summaries import REFERENCE_DRAWS
from isbetter.plots._layout import legend_outside, new_axes, sparse_x_ticks, wrap_to_axes

__all__ = [
    "f1_plot_labels",
    "plot_f1_posterior",
    "plot_f1_trace",
    "plot_savage_dickey",
    "save_f1_plot",
]


def _row_name(label: Any) -> str:
    return f"{label}-averaged" if label in ("macro", "micro") else f"class {label}"


def _kde_curve(draws: np.ndarray, grid: np.ndarray) -> np.ndarray:
    """Return the kernel density estimate BF01 is read from.

    See :func:`isbetter.inference.summaries.bandwidth`.
    """
    if np.ptp(draws) == 0:
        return np.zeros_like(grid)
    return stats.gaussian_kde(draws, bw_method=REFERENCE_DRAWS ** (-0.2))(grid)


def plot_f1_posterior(
    result: Any, label: Any = None, *, ax: Axes | None = None, color: str = "C0"
) -> Axes:
    """Posterior density of delta with its HDI, the ROPE and the decision (SIGIR Fig. 6a).

    Parameters
    ----------
    result : F1Result
        The comparison.
    label : class label, optional
        Which row to plot (default: the first).
    ax : matplotlib.axes.Axes, optional
        Where to draw; a new figure when None.
    color : str, default: "C0"
        Colour of the density.

    Returns
    -------
    matplotlib.axes.Axes
    """
    ax = new_axes(ax, (6, 4))
    row = result.row(label)
    d = result.draws(label)
    rope = result.rope
    lo, hi = row["interval_low"], row["interval_high"]
    span = max(hi - lo, 2 * rope, 1e-3)
    grid = np.linspace(min(lo, -rope) - 0.5 * span, max(hi, rope) + 0.5 * span, 400)
    dens = _kde_curve(d, grid)
    ax.plot(grid, dens, color=color, label="posterior")
    ax.fill_between(
        grid,
        dens,
        where=(grid >= lo) & (grid <= hi),
        color=color,
        alpha=0.3,
        label=f"{result.hdi_prob:.0%} HDI\n[{lo:+.3f}, {hi:+.3f}]",
    )
    ax.axvspan(-rope, rope, color="0.5", alpha=0.15, label=rope_text(rope))
    ax.axvline(0.0, color="0.3", lw=0.8, ls=":")
    ax.axvline(row["mean"], color=color, lw=1, ls="--")
    ax.set_xlabel(
        f"δ = {result.metric}({result.system_a}) − {result.metric}({result.system_b})"
        if result.higher_is_better
        else f"δ = {result.metric}({result.system_b}) − {result.metric}({result.system_a})"
    )
    ax.set_ylabel("posterior density")
    sparse_x_ticks(ax)
    ax.set_title(
        wrap_to_axes(
            ax,
            f"{_row_name(row['label'])}: mean δ {row['mean']:+.3f}, "
            f"decision {symbol(row['decision'])}",
            f"P(δ < 0) {row['p_below_0']:.1%}, P(δ > 0) {row['p_above_0']:.1%}, "
            f"P(ROPE) {row['p_rope']:.1%}",
        ),
        fontsize="medium",
    )
    legend_outside(ax)
    return ax


def plot_savage_dickey(
    result: Any, label: Any = None, *, ax: Axes | None = None, width: float | None = None
) -> Axes:
    """Prior and posterior densities of delta around 0; BF01 is their ratio at 0 (Fig. 6b).

    Parameters
    ----------
    result : F1Result
        The comparison.
    label : class label, optional
        Which row to plot (default: the first).
    ax : matplotlib.axes.Axes, optional
        Where to draw.
    width : float, optional
        Half-width of the plotted range around 0 (default: covers the HDI and the ROPE).

    Returns
    -------
    matplotlib.axes.Axes
    """
    ax = new_axes(ax, (6, 4))
    row = result.row(label)
    key = str(row["label"])
    post = result.draws(label)
    prior = result.prior_draws[key]
    if width is None:
        width = 1.2 * max(abs(row["interval_low"]), abs(row["interval_high"]), result.rope, 1e-3)
    grid = np.linspace(-width, width, 400)
    ax.plot(grid, _kde_curve(prior, grid), color="C1", ls="--", label="prior")
    ax.plot(grid, _kde_curve(post, grid), color="C0", label="posterior")
    at0 = [_kde_curve(prior, np.array([0.0]))[0], _kde_curve(post, np.array([0.0]))[0]]
    ax.plot([0.0, 0.0], at0, "o", color="k", ms=4)
    bf = row["bf01"]
    bf_text = "= ∞" if bf is None or np.isinf(bf) else f"{row.get('bf01_bound') or '='} {bf:.3g}"
    h0 = row.get("bf01_prior_bandwidth")
    if h0 is not None and h0 == h0:
        bf_text += f" (prior bandwidth h0 = {h0:.3g})"
    ax.set_title(
        wrap_to_axes(ax, f"{_row_name(key)}: Savage–Dickey BF01 {bf_text}"), fontsize="medium"
    )
    ax.set_xlabel("δ")
    ax.set_ylabel("density")
    sparse_x_ticks(ax)
    legend_outside(ax)
    return ax


def plot_f1_trace(
    result: Any, label: Any = None, *, ax: Axes | None = None, max_points: int = 5000
) -> Axes:
    """Plot the draws of delta in sampling order (SIGIR Fig. 4), thinned to `max_points`.

    The exact sampler's draws are independent, so the trace is white noise; the
    plot is kept for comparison with the PyMC path.
    """
    ax = new_axes(ax, (6, 4))
    d = result.draws(label)
    step = max(1, d.size // max_points)
    idx = np.arange(0, d.size, step)
    ax.plot(idx, d[idx], lw=0.4, color="C0")
    ax.axhline(float(d.mean()), color="k", lw=0.8, ls="--")
    ax.set_xlabel("draw")
    ax.set_ylabel("δ")
    ax.set_title(f"{_row_name(result.row(label)['label'])}: {d.size} draws")
    return ax


def save_f1_plot(result: Any, path: str | Path, label: Any = None, *, dpi: int = 100) -> Path:
    """Write Figs. 6a (posterior) and 6b (Savage–Dickey) to `path`, one row per class.

    Parameters
    ----------
    result : F1Result
        The comparison.
    path : str or pathlib.Path
        Output file; the format follows its extension.
    label : class label or sequence of labels, optional
        The rows to plot: a class, ``"macro"``, ``"micro"``, a list of them, or
        ``"all"`` for every row (default: the first row).
    dpi : int, default: 100
        Resolution of raster formats.

    Returns
    -------
    pathlib.Path
        `path`.
    """
    from matplotlib.figure import Figure

    labels = f1_plot_labels(result, label)
    fig = Figure(figsize=(12, 4.2 * len(labels)), layout="constrained")
    axes = fig.subplots(len(labels), 2, squeeze=False)
    for (a1, a2), key in zip(axes, labels, strict=True):
        plot_f1_posterior(result, key, ax=a1)
        plot_savage_dickey(result, key, ax=a2)
    fig.savefig(path, dpi=dpi)
    return Path(path)


def f1_plot_labels(result: Any, label: Any = None) -> list[str]:
    """Return the rows :func:`save_f1_plot` draws for `label`, checked against the result."""
    if label is None:
        return [result.classes[0]]
    if isinstance(label, str) and label == "all":
        return list(result.classes)
    wanted = [label] if isinstance(label, str) or not isinstance(label, Sequence) else label
    for key in wanted:
        result.comparison(key)  # raises InputError naming the available classes
    return [str(key) for key in wanted]
