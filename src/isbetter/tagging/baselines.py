"""Gorman & Bedrick's frequentist baselines, per fold: Wilson intervals and mid-p McNemar.

On one split, Gorman & Bedrick (2019) give each tagger's token accuracy a Wilson
interval and test each pair with the mid-p McNemar test on the tokens exactly one of
the two tags right (Fagerland, Lydersen & Laake 2013). Computed on every fold of a
study, they show what a single standard split would have claimed, fold by fold,
beside the Bayesian answer on all folds.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from itertools import combinations
from typing import Any

import numpy as np
import pandas as pd
from statsmodels.stats.proportion import proportion_confint

from isbetter.core.errors import InputError
from isbetter.core.validate import check_probability
from isbetter.items.baselines import mcnemar_midp
from isbetter.tagging.manifest import Fold
from isbetter.tagging.results import FoldBaselines, TaggingScores

__all__ = ["fold_baselines", "mcnemar_midp", "wilson_interval"]


def wilson_interval(correct: int, total: int, *, alpha: float = 0.05) -> tuple[float, float]:
    """Wilson score interval of an accuracy (statsmodels' ``proportion_confint``).

    Examples
    --------
    >>> [round(x, 4) for x in wilson_interval(81, 263)]
    [0.2553, 0.3662]
    """
    low, high = proportion_confint(correct, total, alpha=alpha, method="wilson")
    return float(low), float(high)


def _fold_rows(
    fold: Fold, scores: Mapping[str, TaggingScores], alpha: float
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    key = {"dataset": fold.corpus, "run": fold.run, "fold": fold.fold}
    accuracy = []
    for system, s in scores.items():
        low, high = wilson_interval(s.correct_tokens, s.tokens, alpha=alpha)
        accuracy.append(
            key
            | {
                "system": system,
                "tokens": s.tokens,
                "correct_tokens": s.correct_tokens,
                "token_accuracy": s.token_accuracy,
                "low": low,
                "high": high,
            }
        )
    pairs = []
    for a, b in combinations(scores, 2):
        ca, cb = scores[a].correct, scores[b].correct
        only_a, only_b = int(np.sum(ca & ~cb)), int(np.sum(~ca & cb))
        p = mcnemar_midp(only_a, only_b)
        better = a if only_a > only_b else b
        pairs.append(
            key
            | {
                "system_a": a,
                "system_b": b,
                "only_a": only_a,
                "only_b": only_b,
                "p_value": p,
                "significant": p < alpha,
                "better": better if p < alpha else "",
            }
        )
    return accuracy, pairs


def fold_baselines(
    folds: Iterable[tuple[Fold, Mapping[str, TaggingScores]]], *, alpha: float = 0.05
) -> FoldBaselines:
    """Wilson intervals of every tagger and mid-p McNemar of every pair, on every fold.

    Parameters
    ----------
    folds : iterable of (Fold, mapping system -> TaggingScores)
        What :func:`isbetter.tagging.score_folds` yields.
    alpha : float, default: 0.05
        Level of the tests and 1 - the intervals' coverage.

    Returns
    -------
    FoldBaselines
    """
    alpha = check_probability(alpha, "alpha", open_interval=True)
    accuracy: list[dict[str, Any]] = []
    pairs: list[dict[str, Any]] = []
    for fold, scores in folds:
        a, p = _fold_rows(fold, scores, alpha)
        accuracy += a
        pairs += p
    if not accuracy:
        raise InputError("`folds`: no folds to compute the baselines on.")
    return FoldBaselines(accuracy=pd.DataFrame(accuracy), mcnemar=pd.DataFrame(pairs), alpha=alpha)
