"""What the ranking plots share: the metric to draw, the rule's description, the cells' text.

The cell helpers live here, below :mod:`isbetter.plots.ranking` (the heatmap) and
:mod:`isbetter.plots.ranks` (the rank probabilities), so neither imports the other.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from isbetter.core.errors import InputError
from isbetter.core.vocabulary import pair_quantity

__all__ = [
    "cell_font",
    "cell_text",
    "contrast",
    "metric_of",
    "pairs_about",
    "rule_text",
    "text_colour",
]


def metric_of(result: Any, metric: str | None) -> str:
    """Return `metric`, checked against the ranking's metrics (default: the first)."""
    if metric is None:
        return result.metrics[0]
    if metric not in result.metrics:
        raise InputError(
            f"No metric {metric!r} in this ranking; it has {', '.join(map(repr, result.metrics))}."
        )
    return metric


def pairs_about(result: Any, metric: str) -> str:
    """Return what the pairs of `metric` (and the order drawn from them) are about.

    E.g. ``"next data set"`` (:func:`~isbetter.core.vocabulary.pair_quantity`), for a title.
    """
    return pair_quantity(result.pair_method(metric))[0]


def rule_text(result: Any) -> str:
    """Return how the ranking's relations were read, for a title."""
    if result.rule == "threshold":
        return f"threshold rule (P ≥ {result.threshold:g})"
    return f"{result.rule} rule (margin {result.margin:g})"


_DARK_TEXT = (0.0, 0.0, 0.0)  # black: with white, contrast >= 4.5 on every blue


def _luminance(rgb: Any) -> float:
    """Relative luminance of an sRGB colour (WCAG 2)."""
    c = np.asarray(rgb[:3], dtype=float)
    c = np.where(c <= 0.04045, c / 12.92, ((c + 0.055) / 1.055) ** 2.4)
    return float(c @ [0.2126, 0.7152, 0.0722])


def contrast(a: Any, b: Any) -> float:
    """WCAG contrast ratio of two colours (1 to 21; 4.5 is enough for small text)."""
    hi, lo = sorted((_luminance(a), _luminance(b)), reverse=True)
    return (hi + 0.05) / (lo + 0.05)


def text_colour(background: Any) -> Any:
    """White or near-black, whichever contrasts more with `background`."""
    white = (1.0, 1.0, 1.0)
    return white if contrast(white, background) > contrast(_DARK_TEXT, background) else _DARK_TEXT


def cell_font(k: int) -> int:
    """Font size of the values written in the cells of a grid of `k` systems."""
    return 11 if k <= 6 else 10 if k <= 9 else 9


def cell_text(ax: Any, x: float, y: float, text: str, fontsize: float, background: Any) -> None:
    """Write `text` centred at (x, y), in the colour that contrasts more with `background`."""
    colour = text_colour(background)
    ax.text(x, y, text, ha="center", va="center", fontsize=fontsize, color=colour)
