"""Power curves of the paired and unpaired F1 models (Zhang et al. 2016, Fig. 5)."""

from __future__ import annotations

import textwrap
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from matplotlib.axes import Axes

from isbetter.core.vocabulary import rope_text
from isbetter.inference.decisions import symbol
from isbetter.plots._layout import legend_outside, new_axes

__all__ = ["plot_power", "save_power_plot"]


def plot_power(
    result: Any,
    *,
    ax: Axes | None = None,
    reference: Mapping[str, Mapping[int, float]] | None = None,
) -> Axes:
    """Power against test-set size, one line per model, with ±1 standard error bars.

    Parameters
    ----------
    result : PowerResult
        From :func:`isbetter.f1.power.power_analysis`.
    ax : matplotlib.axes.Axes, optional
        Where to draw; a new figure when None.
    reference : mapping, optional
        Published powers to overlay, ``{model: {size: power}}`` (e.g. SIGIR Table 3).

    Returns
    -------
    matplotlib.axes.Axes
        The title names the measure, the scenario (the generating distribution),
        the true difference, the goal and the ROPE.
    """
    ax = new_axes(ax, (6, 4))
    t = result.table
    for i, model in enumerate(result.models):
        sub = t[t["model"] == model].sort_values("size")
        ax.errorbar(
            sub["size"],
            sub["power"],
            yerr=sub["se"],
            marker="o",
            ms=4,
            capsize=2,
            color=f"C{i}",
            label=model,
        )
        if reference and model in reference:
            ref = sorted(reference[model].items())
            ax.plot(
                [n for n, _ in ref],
                [p for _, p in ref],
                ls=":",
                marker="x",
                color=f"C{i}",
                label=f"{model} (published)",
            )
    ax.set_ylim(-0.02, 1.02)
    ax.set_xlabel("test-set size N")
    ax.set_ylabel(f"power (P[decision {symbol(result.goal)}])")
    ax.set_title(
        "\n".join(
            textwrap.fill(line, 60)
            for line in (
                f"measure {result.metric}; scenario: {result.scenario}",
                f"true difference δ = {result.true_delta:+.3f} (positive: A better)",
                f"goal {symbol(result.goal)}, {rope_text(result.rope)}, "
                f"{result.replicates} test sets per N",
            )
        ),
        fontsize="medium",
    )
    legend_outside(ax)
    return ax


def save_power_plot(result: Any, path: str | Path, *, dpi: int = 100, **kwargs: Any) -> Path:
    """Write :func:`plot_power` to `path` (the figure is made without pyplot)."""
    from matplotlib.figure import Figure

    fig = Figure(figsize=(6, 4.4), layout="constrained")
    plot_power(result, ax=fig.add_subplot(), **kwargs)
    fig.savefig(path, dpi=dpi)
    return Path(path)
