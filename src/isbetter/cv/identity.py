"""What every comparison of per-fold scores says about itself: systems, metric, data set, sizes."""

from __future__ import annotations

from typing import Any, Literal

import numpy as np

from isbetter.cv.scores import PairedScores
from isbetter.inference.records import Observed

__all__ = ["cv_identity"]


def cv_identity(
    scores: PairedScores,
    *,
    index: int | None = None,
    count: Literal["scores", "datasets"] = "scores",
) -> dict[str, Any]:
    """Return the identity fields of a result on `scores` (keyword arguments of the result).

    The systems, the metric and its direction, the data set (one-data-set methods) and
    the observed scores.

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
    head = {
        "system_a": scores.system_a,
        "system_b": scores.system_b,
        "metric": scores.metric,
        "higher_is_better": scores.higher_is_better,
    }
    if index is not None:
        d = scores.differences[index]
        observed = Observed(
            n=int(d.size),
            score_a=float(scores.means_a[index]),
            score_b=float(scores.means_b[index]),
            difference=float(d.mean()),
        )
        return {**head, "dataset": scores.datasets[index], "observed": observed}
    n = scores.n_datasets if count == "datasets" else sum(d.size for d in scores.differences)
    observed = Observed(
        n=int(n),
        score_a=float(np.mean(scores.means_a)),
        score_b=float(np.mean(scores.means_b)),
        difference=float(np.mean(scores.mean_differences())),
    )
    return {**head, "observed": observed}
