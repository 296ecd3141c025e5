"""isbetter: is system A really better than system B, or practically the same?

Bayesian comparison of ML/NLP systems from cross-validation scores on one or
many data sets. ``import isbetter`` is light: PyMC and matplotlib are imported
only by the functions that need them.
"""

from isbetter._errors import ConvergenceWarning, InputError, InputTypeError, IsbetterError
from isbetter.data import PairedScores, ScoreTable, from_arrays, read_scores
from isbetter.decision import ComparisonResult, Probabilities

__version__ = "0.1.0"

__all__ = [
    "ComparisonResult",
    "ConvergenceWarning",
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
