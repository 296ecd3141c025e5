"""isbetter: is system A really better than system B, or practically the same?

Bayesian comparison of ML/NLP systems from cross-validation scores on one or
many data sets. ``import isbetter`` is light: PyMC and matplotlib are imported
only by the functions that need them.
"""

from isbetter._errors import ConvergenceWarning, InputError, InputTypeError, IsbetterError
from isbetter.cv_compare import compare
from isbetter.data import PairedScores, ScoreTable, from_arrays, read_scores
from isbetter.decision import ComparisonResult, Probabilities
from isbetter.f1_compare import F1ComparisonResult, compare_f1
from isbetter.measures import Measure, get_measure
from isbetter.models.correlated_t import (
    corrected_resampled_ttest,
    correlated_ttest,
    rho_from_sizes,
)
from isbetter.models.f1 import F1Prior
from isbetter.models.hierarchical import HierarchicalModel, HierarchicalResult, hierarchical_test
from isbetter.models.priors import HierarchicalPriors
from isbetter.models.sign_tests import sign_test, signed_rank_test
from isbetter.power import JointDistribution, PowerResult, power_analysis
from isbetter.predictions import (
    JointCounts,
    PredictionTable,
    predictions_from_arrays,
    read_predictions,
)

__version__ = "0.1.0"

__all__ = [
    "ComparisonResult",
    "ConvergenceWarning",
    "F1ComparisonResult",
    "F1Prior",
    "HierarchicalModel",
    "HierarchicalPriors",
    "HierarchicalResult",
    "InputError",
    "InputTypeError",
    "IsbetterError",
    "JointCounts",
    "JointDistribution",
    "Measure",
    "PairedScores",
    "PowerResult",
    "PredictionTable",
    "Probabilities",
    "ScoreTable",
    "compare",
    "compare_f1",
    "corrected_resampled_ttest",
    "correlated_ttest",
    "from_arrays",
    "get_measure",
    "hierarchical_test",
    "power_analysis",
    "predictions_from_arrays",
    "read_predictions",
    "read_scores",
    "rho_from_sizes",
    "sign_test",
    "signed_rank_test",
    "__version__",
]
