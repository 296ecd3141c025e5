"""Simulated fold-level scores of K systems for the joint model's tests."""

from __future__ import annotations

import numpy as np
import pandas as pd

from isbetter import read_scores

#: MCMC settings of the small fits
SMALL = {"draws": 300, "tune": 300, "chains": 2}


def score_table(scores: np.ndarray, *, lower: bool = False, names=None) -> object:
    """A ScoreTable of ``scores[i, k, f]``: data set i, system k, fold f (one run)."""
    q, k, n = scores.shape
    names = names or [f"s{m}" for m in range(k)]
    rows = [
        (f"d{i}", names[m], f + 1, scores[i, m, f])
        for i in range(q)
        for m in range(k)
        for f in range(n)
    ]
    frame = pd.DataFrame(rows, columns=["dataset", "system", "fold", "acc"])
    return read_scores(frame, run=None, score="acc", higher_is_better=not lower)


def study_scores(rng: np.random.Generator, effects, q: int = 8, n: int = 10, spread: float = 0.004):
    """Scores with fold effects, data-set deviations and noise around known effects."""
    effects = np.asarray(effects, dtype=float)
    k = effects.size
    level = rng.uniform(0.6, 0.9, size=(q, 1, 1))
    folds = rng.normal(0, 0.02, size=(q, 1, n))
    deviations = rng.normal(0, spread, size=(q, k, 1))
    noise = rng.normal(0, 0.005, size=(q, k, n))
    return level + folds + effects[None, :, None] + deviations + noise
