"""Benchmark: the exact paired F1 posterior vs the same model sampled with PyMC's NUTS.

Acceptance (issue 4): one comparison on 7 500 documents with 50 000 posterior draws
takes under 20 ms. "One comparison" = drawing the exact posterior of delta F1 and
summarising it (mean, sd, MC error, P(<0), P(>0), ROPE %, 95 % HDI, decision); the
Savage-Dickey factor (it needs prior draws and two KDEs) and the frequentist baselines
are timed separately, as is the full ``compare_f1`` call. Zhang et al. (2016) report up
to 20 s per comparison with Metropolis-Hastings in PyMC3.

Run: ``python bench/bench_f1.py [--repeats 20] [--no-pymc]``. Times are the median of
`repeats` runs after one warm-up; the PyMC time is one ``pm.sample`` call for the same
number of draws (2 chains x 25 000 after 1 000 tuning steps; nutpie when installed),
compilation included, and once more with the compiled model cached.
"""

from __future__ import annotations

import argparse
import os
import platform
import time

import numpy as np
import pandas as pd

from isbetter.f1.baselines import bootstrap_test, mcnemar_test, randomization_test, s_test
from isbetter.f1.compare import compare_f1
from isbetter.f1.measures import f1
from isbetter.f1.paired import sample_delta
from isbetter.f1.predictions import JointCounts, predictions_from_arrays
from isbetter.inference.summaries import estimate_from_draws

N = 7500
DRAWS = 50_000


def make_data(seed: int = 7500) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    gold = rng.integers(0, 2, N)
    u = rng.random(N)
    v = np.where(rng.random(N) < 0.7, u, rng.random(N))
    a = np.where(u < 0.86, gold, 1 - gold)
    b = np.where(v < 0.84, gold, 1 - gold)
    return pd.DataFrame({"gold": gold, "a": a, "b": b})


def median_ms(fn, repeats: int) -> float:
    fn()  # warm-up
    times = []
    for _ in range(repeats):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return 1000 * float(np.median(times))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=20)
    parser.add_argument("--no-pymc", action="store_true")
    args = parser.parse_args()

    df = make_data()
    table = predictions_from_arrays(df.gold, a=df.a, b=df.b)
    counts: JointCounts = table.joint_counts("a", "b", 1)
    rng = np.random.default_rng(1)
    print(
        f"machine: {platform.processor() or platform.machine()}, {os.cpu_count()} cores; "
        f"N = {N} documents, {DRAWS} draws; counts +{counts.pos.tolist()} -{counts.neg.tolist()}"
    )

    t_sample = median_ms(lambda: sample_delta(counts, f1, draws=DRAWS, rng=rng), args.repeats)

    def one_comparison():
        d = sample_delta(counts, f1, draws=DRAWS, rng=rng)
        return estimate_from_draws(d, rope=0.05)

    t_cmp = median_ms(one_comparison, args.repeats)
    zero = JointCounts(np.zeros(4, np.int64), np.zeros(4, np.int64))

    def with_bf():
        d = sample_delta(counts, f1, draws=DRAWS, rng=rng)
        p = sample_delta(zero, f1, draws=DRAWS, rng=rng)
        return estimate_from_draws(d, rope=0.05, prior_delta=np.concatenate([p, -p]))

    t_bf = median_ms(with_bf, max(3, args.repeats // 4))

    def baselines():
        s_test(counts)
        mcnemar_test(counts)
        bootstrap_test(counts, f1, resamples=10_000, rng=rng)
        randomization_test(counts, f1, resamples=10_000, rng=rng)

    t_base = median_ms(baselines, max(3, args.repeats // 4))
    t_full = median_ms(lambda: compare_f1(table, rng=1), max(3, args.repeats // 4))
    row = compare_f1(table, rng=1).row()
    print(
        f"posterior: mean {row['mean']:+.4f}, 95% HDI [{row['interval_low']:+.4f}, "
        f"{row['interval_high']:+.4f}], decision {row['decision']}, BF01 {row['bf01']:.3g}"
    )
    print(f"exact sampler, 50 000 draws of delta F1          : {t_sample:8.2f} ms")
    print(
        f"one comparison (draws + summary + decision)      : {t_cmp:8.2f} ms"
        f"  [target < 20 ms: {'PASS' if t_cmp < 20 else 'FAIL'}]"
    )
    print(f"  ... plus Savage-Dickey BF01 (prior draws + KDE): {t_bf:8.2f} ms")
    print(f"frequentist baselines (10 000 resamples each)    : {t_base:8.2f} ms")
    print(f"full compare_f1 (all of the above)               : {t_full:8.2f} ms")
    if args.no_pymc:
        return
    import logging

    logging.getLogger("pymc").setLevel(logging.ERROR)
    import sys
    from pathlib import Path

    # the PyMC form of the model is a labelled test oracle (tests/f1/_paired_pymc_oracle.py)
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "f1"))
    from _paired_pymc_oracle import sample_paired_pymc

    for label in ("NUTS, compilation included", "NUTS, compiled model cached"):
        fit = sample_paired_pymc(counts, f1, draws=DRAWS // 2, tune=1000, chains=2, cores=1, seed=2)
        print(
            f"{label:<49}: {1000 * fit.seconds:8.0f} ms (ESS {fit.ess:.0f}); "
            f"ratio to the exact comparison: {1000 * fit.seconds / t_cmp:,.0f}x"
        )
        print(
            f"  NUTS ({fit.diagnostics.backend}) mean {fit.delta.mean():+.4f} "
            f"vs exact {row['mean']:+.4f}"
        )


if __name__ == "__main__":
    main()
