"""Rank histograms (PNG), a Markdown and a JSON report for the validation scripts.

Computation lives in :mod:`validation.calibration`; this module only draws and writes.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import numpy as np
from scipy import stats


def check_out_dir(path: str) -> Path:
    """Return the report folder, created if its parent exists (checked before any work)."""
    out = Path(path)
    if out.exists() and not out.is_dir():
        raise SystemExit(f"--out: {path!r} exists and is not a folder")
    if not out.parent.is_dir():
        raise SystemExit(f"--out: the parent folder of {path!r} does not exist")
    out.mkdir(exist_ok=True)
    return out


def plot_rank_histograms(
    panels: dict[str, dict[str, Any]], n_ranks: int, path: Path, title: str
) -> None:
    """One histogram of binned ranks per panel, with the 99% band of a uniform histogram.

    `panels` maps a label to ``{"counts": bin counts, "p_value": ...}``.
    """
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    n = len(panels)
    cols = min(n, 4)
    rows = math.ceil(n / cols)
    fig, axes = plt.subplots(rows, cols, figsize=(3.2 * cols, 2.6 * rows), squeeze=False)
    for ax, (label, panel) in zip(axes.ravel(), panels.items(), strict=False):
        counts = np.asarray(panel["counts"])
        bins = counts.size
        total = int(counts.sum())
        lo, hi = stats.binom.ppf([0.005, 0.995], total, 1.0 / bins)
        ax.axhspan(lo, hi, color="0.85", zorder=0)
        ax.axhline(total / bins, color="0.4", lw=0.8)
        width = n_ranks / bins
        ax.bar(np.arange(bins) * width, counts, width=width, align="edge", color="C0")
        ax.set_title(f"{label}\nχ² p = {panel['p_value']:.3g}", fontsize=9)
        ax.set_xlabel("rank")
    for ax in axes.ravel()[n:]:
        ax.set_visible(False)
    fig.suptitle(title, fontsize=10)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def write_json(data: dict[str, Any], path: Path) -> None:
    """Write `data` as indented JSON (numpy numbers converted)."""

    def default(obj: Any) -> Any:
        if isinstance(obj, np.generic):
            return obj.item()
        if isinstance(obj, np.ndarray):
            return obj.tolist()
        raise TypeError(type(obj).__name__)

    path.write_text(json.dumps(data, indent=2, default=default) + "\n", encoding="utf-8")


def markdown_table(header: list[str], rows: list[list[Any]]) -> str:
    """Return a GitHub-flavoured Markdown table."""

    def cell(v: Any) -> str:
        if isinstance(v, float):
            return f"{v:.3g}" if abs(v) < 1e-3 and v != 0 else f"{v:.3f}"
        return str(v)

    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(cell(v) for v in row) + " |" for row in rows]
    return "\n".join(lines)


def wilson(k: int, n: int, level: float = 0.95) -> tuple[float, float]:
    """Wilson score interval of a proportion ``k / n``."""
    if n == 0:
        return (math.nan, math.nan)
    z = stats.norm.ppf(0.5 + level / 2)
    p = k / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return (max(0.0, centre - half), min(1.0, centre + half))


def ci(k: int, n: int) -> str:
    """Return the 95% Wilson interval of ``k / n`` as text."""
    lo, hi = wilson(k, n)
    return f"{lo:.3f}–{hi:.3f}"
