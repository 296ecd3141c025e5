"""What every comparison of per-fold scores says about itself: metric, data set, sizes."""

from __future__ import annotations

from typing import Any, Literal

import numpy as np

from isbetter.data import PairedScores
from isbetter.results.records import Observed

__all__ = ["cv_identity"]


def cv_identity(
    scores: PairedScores,
    *,
    index: int | None = None,
    count: Literal["scores", "datasets"] = "scores",
) -> dict[str, Any]:
    """Return the identity fields of a result on `scores` (keyword arguments of the result).

    Parameters
    ----------
    scores : PairedScores
        The paired scores compared.
    index : int, optional
        The one data set compared (one-data-set methods): its name is the result's
        ``dataset`` and its scores the observed ones. Default: all data sets.
    count : {"scores", "datasets"}, default: "scores"
        What ``observed.n`` counts when all data sets are compared.
    """
    if index is not None:
        d = scores.differences[index]
        return {
            "metric": scores.metric,
            "higher_is_better": scores.higher_is_better,
            "dataset": scores.datasets[index],
            "observed": Observed(
                n=int(d.size),
                score_a=float(scores.means_a[index]),
                score_b=float(scores.means_b[index]),
                difference=float(d.mean()),
            ),
        }
    n = scores.n_datasets if count == "datasets" else sum(d.size for d in scores.differences)
    return {
        "metric": scores.metric,
        "higher_is_better": scores.higher_is_better,
        "observed": Observed(
            n=int(n),
            score_a=float(np.mean(scores.means_a)),
            score_b=float(np.mean(scores.means_b)),
            difference=float(np.mean(scores.mean_differences())),
        ),
    }
