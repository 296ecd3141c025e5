"""Results of isbetter: one contract for every comparison, light summaries for the rest.

Models depend on this package, never the reverse, and nothing here imports the
report code: :mod:`isbetter.report` renders the summaries.
"""

from __future__ import annotations

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
from isbetter.results.comparison import ComparisonResult, ComparisonSummary, HierarchicalResult
from isbetter.results.f1 import F1Result, F1Summary
from isbetter.results.power import PowerResult, PowerSummary

__all__ = [
    "RELATIONS",
    "ComparisonResult",
    "ComparisonSummary",
    "Estimate",
    "F1Result",
    "F1Summary",
    "HierarchicalResult",
    "Interval",
    "MCMCDiagnostics",
    "Observed",
    "PowerResult",
    "PowerSummary",
    "Probabilities",
    "Summary",
    "TestResult",
    "hdi_rope_decision",
    "probabilities_from_masses",
    "threshold_decision",
]

Summary = ComparisonSummary | F1Summary | PowerSummary
