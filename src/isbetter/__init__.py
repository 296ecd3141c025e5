"""isbetter: is system A really better than system B, or practically the same?

Bayesian comparison of ML/NLP systems from cross-validation scores on one or
many data sets. ``import isbetter`` is light: PyMC and matplotlib are imported
only by the functions that need them.
"""

from isbetter._errors import ConvergenceWarning, InputError, InputTypeError, IsbetterError
from isbetter.data import PairedScores, ScoreTable, from_arrays, read_scores
from isbetter.decision import ComparisonResult, Probabilities
from isbetter.f1_compare import F1ComparisonResult, compare_f1
from isbetter.measures import Measure, get_measure
from isbetter.models.f1 import F1Prior
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
    "JointCounts",
    "JointDistribution",
    "Measure",
    "PowerResult",
    "PredictionTable",
    "compare_f1",
    "get_measure",
    "power_analysis",
    "predictions_from_arrays",
    "read_predictions",
    "InputError",
    "InputTypeError",
    "IsbetterError",
    "PairedScores",
    "Probabilities",
    "ScoreTable",
    "__version__",
    "from_arrays",
    "read_scores",
]
