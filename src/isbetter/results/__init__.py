"""Results of isbetter: one contract for every comparison, light summaries for the rest.

Models depend on this package, never the reverse, and nothing here imports the
report code: :mod:`isbetter.report` renders the summaries.
"""

from __future__ import annotations

from typing import Any

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
    "summary_from_dict",
    "threshold_decision",
]

Summary = ComparisonSummary | F1Summary | PowerSummary
_KINDS: dict[str, Any] = {cls.kind: cls for cls in (ComparisonSummary, F1Summary, PowerSummary)}


def summary_from_dict(data: dict[str, Any]) -> Any:
    """Rebuild any summary from its ``to_dict()`` data (dispatching on ``kind``).

    ``kind == "ranking"`` gives a :class:`~isbetter.ranking.result.RankingResult`
    (a ranking holds summaries only, so it is its own summary).
    """
    if data["kind"] == "ranking":
        from isbetter.ranking.result import RankingResult  # the layer above results

        return RankingResult.from_dict(data)
    return _KINDS[data["kind"]].from_dict(data)
