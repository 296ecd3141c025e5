"""What the ranking plots share: the metric to draw, the rule's description."""

from __future__ import annotations

from typing import Any

from isbetter.core.errors import InputError

__all__ = ["metric_of", "rule_text"]


def metric_of(result: Any, metric: str | None) -> str:
    """Return `metric`, checked against the ranking's metrics (default: the first)."""
    if metric is None:
        return result.metrics[0]
    if metric not in result.metrics:
        raise InputError(
            f"No metric {metric!r} in this ranking; it has {', '.join(map(repr, result.metrics))}."
        )
    return metric


def rule_text(result: Any) -> str:
    """Return how the ranking's relations were read, for a title."""
    if result.rule == "threshold":
        return f"threshold rule (P ≥ {result.threshold:g})"
    return f"{result.rule} rule (margin {result.margin:g})"
