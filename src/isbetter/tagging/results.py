"""What scoring taggers returns: one file's counts and accuracies; the per-fold baselines."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

__all__ = ["METRICS", "FoldBaselines", "TaggingScores"]

#: the three metrics of Szymański & Gorman (2020), the score table's metric columns
METRICS = ("token_accuracy", "sentence_accuracy", "oov_accuracy")


def _share(k: int | None, n: int | None) -> float:
    return math.nan if k is None or not n else k / n


@dataclass(frozen=True)
class TaggingScores:
    """Token, sentence and OOV accuracy of one predicted file, with their counts.

    Attributes
    ----------
    tokens, correct_tokens : int
        Words scored (multiword tokens and empty nodes are not words) and those
        tagged right.
    sentences, correct_sentences : int
        Sentences, and those with every word tagged right.
    oov_tokens, correct_oov_tokens : int or None
        Test words whose exact form never occurs among the training file's words, and
        those tagged right; None when no training file was given.
    column : str
        The tag column scored (``"upos"``, ``"xpos"``, ``"column 6"``).
    correct : numpy.ndarray
        Per word, in file order: tagged right (for the paired baselines).
    oov : numpy.ndarray or None
        Per word: out of the training vocabulary (None without a training file).
    """

    tokens: int
    correct_tokens: int
    sentences: int
    correct_sentences: int
    oov_tokens: int | None
    correct_oov_tokens: int | None
    column: str = "upos"
    correct: np.ndarray = field(default_factory=lambda: np.zeros(0, bool), repr=False)
    oov: np.ndarray | None = field(default=None, repr=False)

    def __eq__(self, other: object) -> bool:
        """Equal counts and column (the per-word arrays follow from them and the files)."""
        if not isinstance(other, TaggingScores):
            return NotImplemented
        return self.counts() == other.counts() and self.column == other.column

    __hash__ = None  # type: ignore[assignment]

    @property
    def token_accuracy(self) -> float:
        """Correct words / words."""
        return _share(self.correct_tokens, self.tokens)

    @property
    def sentence_accuracy(self) -> float:
        """Sentences with every word right / sentences."""
        return _share(self.correct_sentences, self.sentences)

    @property
    def oov_accuracy(self) -> float:
        """Correct OOV words / OOV words (NaN without a training file or OOV words)."""
        return _share(self.correct_oov_tokens, self.oov_tokens)

    def counts(self) -> dict[str, int | None]:
        """Return the six counts, by name."""
        return {
            "tokens": self.tokens,
            "correct_tokens": self.correct_tokens,
            "sentences": self.sentences,
            "correct_sentences": self.correct_sentences,
            "oov_tokens": self.oov_tokens,
            "correct_oov_tokens": self.correct_oov_tokens,
        }

    def to_dict(self) -> dict[str, float | int | None]:
        """Return the three accuracies and the six counts (NaN for an undefined accuracy)."""
        return {m: getattr(self, m) for m in METRICS} | self.counts()

    def __str__(self) -> str:
        """Show the three accuracies with their counts, one a line."""
        oov = (
            "not computed (no training file)"
            if self.oov_tokens is None
            else f"{self.oov_accuracy:.4f} ({self.correct_oov_tokens}/{self.oov_tokens})"
        )
        return (
            f"{self.column} token accuracy    {self.token_accuracy:.4f} "
            f"({self.correct_tokens}/{self.tokens})\n"
            f"{self.column} sentence accuracy {self.sentence_accuracy:.4f} "
            f"({self.correct_sentences}/{self.sentences})\n"
            f"{self.column} OOV accuracy      {oov}"
        )


@dataclass(frozen=True)
class FoldBaselines:
    """Gorman & Bedrick's baselines on every fold: Wilson intervals, mid-p McNemar tests.

    Attributes
    ----------
    accuracy : pandas.DataFrame
        One row per (dataset, run, fold, system): ``tokens, correct_tokens,
        token_accuracy`` and the Wilson interval ``low, high``.
    mcnemar : pandas.DataFrame
        One row per (dataset, run, fold, system_a, system_b): the discordant tokens
        ``only_a, only_b``, the mid-p ``p_value``, ``significant`` (p < alpha) and
        ``better`` (the system the test favours, "" when not significant).
    alpha : float
        Level of the tests; the intervals cover 1 - alpha.
    """

    accuracy: pd.DataFrame = field(repr=False)
    mcnemar: pd.DataFrame = field(repr=False)
    alpha: float = 0.05

    def table(self) -> pd.DataFrame:
        """Return one row per fold and pair: both accuracies with their intervals, the test.

        Columns ``dataset, run, fold, system_a, system_b``, ``accuracy_a, low_a,
        high_a, accuracy_b, low_b, high_b`` (token accuracy, Wilson interval), ``only_a,
        only_b, p_value, significant, better`` (mid-p McNemar).
        """
        key = ["dataset", "run", "fold"]
        acc = self.accuracy[[*key, "system", "token_accuracy", "low", "high"]]
        out = self.mcnemar
        for side in ("a", "b"):
            named = acc.rename(
                columns={
                    "system": f"system_{side}",
                    "token_accuracy": f"accuracy_{side}",
                    "low": f"low_{side}",
                    "high": f"high_{side}",
                }
            )
            out = out.merge(named, on=[*key, f"system_{side}"], how="left")
        first = [*key, "system_a", "system_b"]
        wilson = [f"{c}_{s}" for s in ("a", "b") for c in ("accuracy", "low", "high")]
        test = ["only_a", "only_b", "p_value", "significant", "better"]
        return out[first + wilson + test]

    def summary(self) -> pd.DataFrame:
        """Per pair: on how many folds McNemar found A better, B better, no difference.

        One row per (system_a, system_b) over all data sets, runs and folds: ``folds,
        a_better, b_better, no_difference`` — what one standard split would have
        claimed, as often as each claim comes up.
        """
        m = self.mcnemar
        a_better = m["better"].eq(m["system_a"]) & m["significant"]
        b_better = m["better"].eq(m["system_b"]) & m["significant"]
        frame = m.assign(a_better=a_better, b_better=b_better, no_difference=~m["significant"])
        out = frame.groupby(["system_a", "system_b"], sort=False).agg(
            folds=("p_value", "size"),
            a_better=("a_better", "sum"),
            b_better=("b_better", "sum"),
            no_difference=("no_difference", "sum"),
        )
        return out.reset_index()

    def record(self) -> dict[str, Any]:
        """Return what a report shows beside the Bayesian answer (JSON-safe).

        ``alpha``; ``split``: the first fold of the first corpus as one standard split
        would be reported (its name, each system's token accuracy with its Wilson
        interval, each pair's mid-p); ``pairs``: the counts of :meth:`summary`.
        """
        first = self.accuracy.iloc[0]
        key = {k: first[k] for k in ("dataset", "run", "fold")}

        def on_first(frame: pd.DataFrame) -> pd.DataFrame:
            mask = np.logical_and.reduce([frame[k].to_numpy() == v for k, v in key.items()])
            return frame[mask]

        return {
            "alpha": self.alpha,
            "split": {
                "dataset": str(key["dataset"]),
                "run": int(key["run"]),
                "fold": int(key["fold"]),
                "intervals": {
                    str(r.system): [float(r.token_accuracy), float(r.low), float(r.high)]
                    for r in on_first(self.accuracy).itertuples()
                },
                "p_values": [
                    [str(r.system_a), str(r.system_b), float(r.p_value)]
                    for r in on_first(self.mcnemar).itertuples()
                ],
            },
            "pairs": [
                {k: (v if isinstance(v, str) else int(v)) for k, v in r.items()}
                for r in self.summary().to_dict(orient="records")
            ],
        }
