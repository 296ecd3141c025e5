"""isbetter: is system A really better than system B, or practically the same?

Bayesian comparison of ML/NLP systems from cross-validation scores on one or
many data sets, or from per-document predictions on one test set.

``import isbetter`` is light: every public name is imported on first use (PEP
562), so ``isbetter --help`` and the closed-form tests never load pandas' heavy
parts, PyMC or matplotlib before they are needed.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from isbetter.core.errors import (
    CacheWarning,
    ConvergenceWarning,
    InputError,
    InputTypeError,
    IsbetterError,
    RenamedArgumentWarning,
)

__version__ = "0.1.0"

#: public name -> module that defines it
_LAZY: dict[str, str] = {
    "compare": "isbetter.cv.compare",
    "PairedScores": "isbetter.cv.scores",
    "ScoreTable": "isbetter.cv.scores",
    "from_arrays": "isbetter.cv.scores",
    "friedman_nemenyi": "isbetter.cv.friedman",
    "plackett_luce": "isbetter.cv.plackett_luce",
    "read_scores": "isbetter.cv.scores",
    "compare_f1": "isbetter.f1.compare",
    "compare_items": "isbetter.items.compare",
    "Baselines": "isbetter.f1.baselines",
    "Measure": "isbetter.f1.measures",
    "dcf": "isbetter.f1.measures",
    "fbeta": "isbetter.f1.measures",
    "get_measure": "isbetter.f1.measures",
    "corrected_resampled_ttest": "isbetter.cv.correlated_t",
    "correlated_ttest": "isbetter.cv.correlated_t",
    "rho_from_sizes": "isbetter.cv.correlated_t",
    "F1Model": "isbetter.f1.paired",
    "F1Prior": "isbetter.f1.paired",
    "Sampling": "isbetter.inference.sampling",
    "HierarchicalModel": "isbetter.cv.hierarchical.model",
    "hierarchical_test": "isbetter.cv.hierarchical.model",
    "HierarchicalPriors": "isbetter.cv.hierarchical.priors",
    "sign_test": "isbetter.cv.sign_tests",
    "signed_rank_test": "isbetter.cv.sign_tests",
    "JointDistribution": "isbetter.f1.power",
    "power_analysis": "isbetter.f1.power",
    "JointCounts": "isbetter.f1.predictions",
    "PredictionTable": "isbetter.f1.predictions",
    "RankingResult": "isbetter.ranking",
    "rank": "isbetter.ranking",
    "predictions_from_arrays": "isbetter.f1.predictions",
    "read_predictions": "isbetter.f1.predictions",
    "ComparisonResult": "isbetter.results",
    "ComparisonSummary": "isbetter.results",  # the old name of ComparisonResult (warns)
    "F1Result": "isbetter.results",
    "HierarchicalResult": "isbetter.results",
    "Interval": "isbetter.results",
    "MCMCDiagnostics": "isbetter.results",
    "PowerResult": "isbetter.results",
    "Probabilities": "isbetter.results",
    "TestResult": "isbetter.results",
}

__all__ = [
    "CacheWarning",
    "ConvergenceWarning",
    "InputError",
    "InputTypeError",
    "IsbetterError",
    "RenamedArgumentWarning",
    "__version__",
    "Baselines",
    "ComparisonResult",
    "F1Model",
    "F1Prior",
    "F1Result",
    "HierarchicalModel",
    "HierarchicalPriors",
    "HierarchicalResult",
    "Interval",
    "JointCounts",
    "JointDistribution",
    "MCMCDiagnostics",
    "Measure",
    "PairedScores",
    "PowerResult",
    "PredictionTable",
    "RankingResult",
    "Probabilities",
    "Sampling",
    "ScoreTable",
    "TestResult",
    "compare",
    "compare_f1",
    "compare_items",
    "corrected_resampled_ttest",
    "correlated_ttest",
    "dcf",
    "fbeta",
    "from_arrays",
    "friedman_nemenyi",
    "get_measure",
    "hierarchical_test",
    "plackett_luce",
    "power_analysis",
    "predictions_from_arrays",
    "read_predictions",
    "read_scores",
    "rank",
    "rho_from_sizes",
    "sign_test",
    "signed_rank_test",
]


def __getattr__(name: str) -> Any:
    """Import a public name on first use."""
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'isbetter' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(__all__)


if TYPE_CHECKING:  # for type checkers and IDEs: the same names, imported eagerly
    from isbetter.cv.compare import compare
    from isbetter.cv.correlated_t import (
        corrected_resampled_ttest,
        correlated_ttest,
        rho_from_sizes,
    )
    from isbetter.cv.friedman import friedman_nemenyi
    from isbetter.cv.hierarchical.model import HierarchicalModel, hierarchical_test
    from isbetter.cv.hierarchical.priors import HierarchicalPriors
    from isbetter.cv.plackett_luce import plackett_luce
    from isbetter.cv.scores import PairedScores, ScoreTable, from_arrays, read_scores
    from isbetter.cv.sign_tests import sign_test, signed_rank_test
    from isbetter.f1.baselines import Baselines
    from isbetter.f1.compare import compare_f1
    from isbetter.f1.measures import Measure, dcf, fbeta, get_measure
    from isbetter.f1.paired import F1Model, F1Prior
    from isbetter.f1.power import JointDistribution, power_analysis
    from isbetter.f1.predictions import (
        JointCounts,
        PredictionTable,
        predictions_from_arrays,
        read_predictions,
    )
    from isbetter.inference.sampling import Sampling
    from isbetter.items.compare import compare_items
    from isbetter.ranking import RankingResult, rank
    from isbetter.results import (
        ComparisonResult,
        F1Result,
        HierarchicalResult,
        Interval,
        MCMCDiagnostics,
        PowerResult,
        Probabilities,
        TestResult,
    )
