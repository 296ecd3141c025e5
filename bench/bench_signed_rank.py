"""Bayesian signed-rank and sign tests: isbetter vs baycomp, side by side.

Input: nbc vs aode, the 54 per-data-set mean accuracies shipped in
data/uci_benavoli2017/uci_mean_accuracy.csv; rope 0.01, 50 000 draws.
Prints the median wall time of several repetitions for each and the ratio.

    pip install -e .[bench]
    python bench/bench_signed_rank.py
"""

from __future__ import annotations

import statistics
import time
from pathlib import Path

import numpy as np
import pandas as pd

from isbetter import from_arrays
from isbetter.cv.sign_tests import sign_test, signed_rank_test

DATA = Path(__file__).resolve().parents[1] / "data" / "uci_benavoli2017" / "uci_mean_accuracy.csv"
DRAWS = 50_000
REPEATS = 5


def _median_time(fn) -> tuple[float, object]:
    times, out = [], None
    for _ in range(REPEATS):
        start = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times), out


def main() -> None:
    import baycomp

    wide = pd.read_csv(DATA)
    a, b = wide["nbc"].to_numpy(), wide["aode"].to_numpy()
    paired = from_arrays(a[:, None], b[:, None], names=("nbc", "aode")).paired("nbc", "aode")
    print(f"{len(a)} data sets, rope 0.01, {DRAWS} draws, median of {REPEATS} runs")
    cases = [
        (
            "signed-rank",
            lambda: baycomp.SignedRankTest.probs(a, b, rope=0.01, nsamples=DRAWS, random_state=1),
            lambda: signed_rank_test(paired, rope=0.01, draws=DRAWS, rng=1),
        ),
        (
            "sign",
            lambda: baycomp.SignTest.probs(a, b, rope=0.01, nsamples=DRAWS, random_state=1),
            lambda: sign_test(paired, rope=0.01, draws=DRAWS, rng=1),
        ),
    ]
    for name, ref, ours in cases:
        t_ref, p_ref = _median_time(ref)
        t_ours, res = _median_time(ours)
        # baycomp orients y - x with "left" = first better: (p_nbc, p_rope, p_aode)
        print(
            f"{name:12s} baycomp {t_ref * 1000:8.1f} ms  isbetter {t_ours * 1000:7.1f} ms  "
            f"speed-up x{t_ref / t_ours:6.1f}   baycomp p={np.round(p_ref, 4)}  "
            f"isbetter p={np.round(res.probabilities().as_tuple(), 4)}"
        )


if __name__ == "__main__":
    main()
