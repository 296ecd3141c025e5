"""Results of isbetter: one type per kind of comparison, in full or in its light form.

A result's ``summary()`` is the same type without its draws; reports, plots, the
command line and a ranking work from it. Models depend on this package, never the
reverse, and nothing here imports the report code: :mod:`isbetter.report` renders
the results.
"""

from __future__ import annotations

import warnings
from typing import Any

from isbetter.core.errors import RenamedArgumentWarning
from isbetter.inference.decisions import (
    RELATIONS,
    hdi_rope_decision,
    probabilities_from_masses,
    threshold_decision,
)
from isbetter.inference.records import (
    Estimate,
    Interval,
    MCMCDiagnostics,
    Observed,
    Probabilities,
    TestResult,
)
from isbetter.results.comparison import ComparisonResult, HierarchicalResult
from isbetter.results.f1 import F1Result
from isbetter.results.items import ItemsHierarchicalResult
from isbetter.results.power import PowerResult

__all__ = [
    "RELATIONS",
    "ComparisonResult",
    "Estimate",
    "F1Result",
    "HierarchicalResult",
    "Interval",
    "ItemsHierarchicalResult",
    "MCMCDiagnostics",
    "Observed",
    "PowerResult",
    "Probabilities",
    "Summary",
    "TestResult",
    "hdi_rope_decision",
    "probabilities_from_masses",
    "threshold_decision",
]

Summary = ComparisonResult | F1Result | PowerResult
"""What a report is built from: a result, in full or in its light form."""

#: the light-summary classes of isbetter 0.1, now the results themselves
_RENAMED = {
    "ComparisonSummary": ComparisonResult,
    "F1Summary": F1Result,
    "PowerSummary": PowerResult,
}


def __getattr__(name: str) -> Any:
    """Return a summary class by its old name, with a :class:`~isbetter.RenamedArgumentWarning`."""
    if name not in _RENAMED:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    new = _RENAMED[name].__name__
    warnings.warn(
        f"`{name}` is now `{new}`: a summary is the result without its draws; use `{new}`.",
        RenamedArgumentWarning,
        stacklevel=2,
    )
    return _RENAMED[name]
