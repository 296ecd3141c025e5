"""The five UCI classifiers (Benavoli et al. 2017) as the tests and the benchmark rank them.

One place for the shipped file, its column flags, the ranking the README runs
(ROPE 0.01, seed 1) and how a pair is read back from the ranking's JSON; used by
tests/ranking/, tests/cli/ and bench/bench_rank_uci.py (which puts tests/ on its path).
"""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
#: per-fold accuracies: 5 classifiers x 54 data sets x 10 runs x 10 folds
UCI = ROOT / "data" / "uci_benavoli2017" / "uci_cv_accuracy_long.csv"
#: the file's columns, as ``isbetter cv`` and ``isbetter rank`` are told them
UCI_COLUMNS = ["--dataset-col", "dataset_id", "--system-col", "classifier", "--metric", "accuracy"]
#: the ranking of the README and of the reference tests (after ``rank FILE``)
UCI_RANK_ARGS = [*UCI_COLUMNS, "--rope", "0.01", "--seed", "1"]


def pair_probabilities(block: dict, a: str, b: str) -> tuple[float, float, float]:
    """Return (P(a better), P(rope), P(b better)) of a pair in a metric's JSON block."""
    for p in block["pairs"]:
        if (p["a"], p["b"]) == (a, b):
            return (p["p_a_better"], p["p_rope"], p["p_b_better"])
        if (p["a"], p["b"]) == (b, a):
            return (p["p_b_better"], p["p_rope"], p["p_a_better"])
    raise KeyError((a, b))
