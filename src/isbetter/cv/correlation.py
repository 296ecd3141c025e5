"""The correlation rho of cross-validation differences within a data set: one check for all.

Scores of k-fold cross-validation are correlated because the training sets overlap; Nadeau
& Bengio (2003) take ``rho = n_test / (n_test + n_train)``, ``1 / folds`` for k-fold. The
correlated t-test (one data set) and the hierarchical model (many) both resolve it here.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from isbetter.core.errors import InputError, InputTypeError

__all__ = ["resolve_rho"]

_POINTER = (
    "; a single fold (or rho = 1) leaves no within-data-set information for the "
    "correlated-t models. Compare the per-data-set means with the Bayesian sign or "
    "signed-rank test instead (method='sign' or 'signed_rank')."
)


def resolve_rho(rho: float | None, n_folds: Any, datasets: Sequence[str]) -> np.ndarray:
    """Return rho per data set: ``1 / folds`` by default, else the given value, checked.

    Examples
    --------
    >>> resolve_rho(None, [10, 5], ["a", "b"])
    array([0.1, 0.2])
    >>> resolve_rho(0.2, [10, 5], ["a", "b"])
    array([0.2, 0.2])
    """
    if rho is None:
        folds = np.asarray(n_folds, dtype=float)
        if np.any(folds < 2):
            bad = [ds for ds, k in zip(datasets, folds, strict=True) if k < 2]
            raise InputError(
                f"Data set(s) {', '.join(map(repr, bad[:5]))} have a single fold, so "
                f"rho = 1/folds = 1{_POINTER}"
            )
        return 1.0 / folds
    if isinstance(rho, bool) or not isinstance(rho, int | float | np.floating | np.integer):
        raise InputTypeError(f"`rho` must be a number in [0, 1) or None, got {type(rho).__name__}.")
    value = float(rho)
    if value == 1.0:
        raise InputError(f"`rho` = 1 (perfectly correlated scores){_POINTER}")
    if not 0.0 <= value < 1.0:
        raise InputError(
            f"`rho` must be in [0, 1) (n_test / (n_test + n_train); 1/folds for k-fold "
            f"cross-validation), got {rho!r}."
        )
    return np.full(len(n_folds), value)
