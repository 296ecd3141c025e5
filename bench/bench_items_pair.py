"""Benchmark: two language models, one task, 14 000 binary items, in a running process.

Target (issue 31): under 0.5 s for the whole ``compare_items`` (pairing the items of
the table, the exact posterior with 50 000 draws and its summary, the prior draws and
Bayes factors, and the baselines: mid-p McNemar, the paired bootstrap with 10 000
resamples, Miller's standard error and the unpaired z-test). Side by side: the exact
closed forms it must agree with, ``P(delta > 0) = P(Beta(1 + n10, 1 + n01) > 1/2)``
(scipy) and the Dirichlet mean and sd of delta, and the time they take; the ratio of
the two times is printed. A graded variant (4 runs per item, the Bayesian bootstrap) is
timed too, and one of continuous scores (every item a distinct value: the bootstrap's
draws by default are then 10 000, its cost being draws x distinct values).

Run: ``python bench/bench_items_pair.py [--repeats 10]``. Times are the median of
`repeats` runs after one warm-up (imports and first calls excluded: "in a running
process").
"""

from __future__ import annotations

import argparse
import os
import platform

import numpy as np
import pandas as pd

# the timing of bench_f1.py (this folder is on the path when a script of it runs)
from bench_f1 import median_ms
from scipy import stats

from isbetter.items.compare import compare_items
from isbetter.items.paired import ItemCounts, sample_delta
from isbetter.items.table import ItemTable

N = 14_000
DRAWS = 50_000


def make_table(runs: int = 1, seed: int = 14_000) -> ItemTable:
    """Two correlated models (accuracy 0.71 and 0.69, per-item correlation ~0.5)."""
    rng = np.random.default_rng(seed)
    easy = rng.random(N)  # an item's easiness, shared by both models
    frames = []
    for system, skill in (("model-a", 0.71), ("model-b", 0.69)):
        for run in range(runs):
            own = rng.random(N)
            u = np.where(rng.random(N) < 0.6, easy, own)
            score = (u < skill).astype(float)
            frames.append(
                pd.DataFrame({"item": np.arange(N), "system": system, "run": run, "score": score})
            )
    return ItemTable.from_frame(pd.concat(frames), task=None, run="run", metric="acc")


def closed_form(c: ItemCounts) -> tuple[float, float, float]:
    """P(delta > 0), mean and sd of delta under Dir(1 + n), in closed form."""
    a = np.array(c.as_tuple()) + 1.0
    a0 = a.sum()
    mean = (a[1] - a[2]) / a0
    var = (a[1] * (a0 - a[1]) + a[2] * (a0 - a[2]) + 2 * a[1] * a[2]) / (a0**2 * (a0 + 1))
    return float(stats.beta(a[1], a[2]).sf(0.5)), float(mean), float(np.sqrt(var))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=10)
    args = parser.parse_args()
    print(f"python {platform.python_version()}, {os.cpu_count()} CPUs, N = {N} items")

    table = make_table()
    pair = table.paired("model-a", "model-b")
    c = ItemCounts(*pair.counts())
    print(f"counts n11 n10 n01 n00 = {c.as_tuple()}")

    def full() -> None:
        compare_items(table, "model-a", "model-b", rope=0.02, rng=1, draws=DRAWS)

    def model_only() -> None:
        sample_delta(c, draws=DRAWS, rng=np.random.default_rng(1))

    def exact() -> None:
        closed_form(c)

    t_full = median_ms(full, args.repeats)
    t_model = median_ms(model_only, args.repeats)
    t_exact = median_ms(exact, args.repeats)
    res = compare_items(table, "model-a", "model-b", rope=0.02, rng=1, draws=DRAWS)
    p, mean, sd = closed_form(c)
    e = res.estimate
    mcse_p = np.sqrt(p * (1 - p) / DRAWS)
    print(
        f"P(delta > 0): compare_items {e.p_above_0:.4f}, closed form {p:.4f} "
        f"(MC error {mcse_p:.4f}, off by {abs(e.p_above_0 - p) / mcse_p:.1f} MC errors)"
    )
    print(f"mean, sd of delta: {e.mean:+.5f}, {e.sd:.5f}; closed form {mean:+.5f}, {sd:.5f}")
    print(f"compare_items (exact, baselines):   {t_full:8.1f} ms  (target < 500 ms)")
    print(f"  exact posterior draws alone:      {t_model:8.1f} ms")
    print(f"closed form (scipy Beta, moments):  {t_exact:8.3f} ms")
    print(f"ratio compare_items / closed form:  {t_full / t_exact:8.0f}x")

    graded = make_table(runs=4)
    t_graded = median_ms(
        lambda: compare_items(graded, "model-a", "model-b", rope=0.02, rng=1, draws=DRAWS),
        args.repeats,
    )
    print(f"compare_items (4 runs, bootstrap):  {t_graded:8.1f} ms")

    # continuous scores (a per-item F1): every item a distinct unit of the bootstrap
    rng = np.random.default_rng(1)
    frame = graded.data[graded.data["run"] == 0].copy()
    frame["score"] = np.clip(frame["score"] * 0.8 + rng.random(len(frame)) * 0.2, 0, 1)
    continuous = ItemTable.from_frame(frame, task=None, metric="f1")
    res = compare_items(continuous, "model-a", "model-b", rope=0.02, rng=1)
    t_cont = median_ms(
        lambda: compare_items(continuous, "model-a", "model-b", rope=0.02, rng=1),
        max(1, args.repeats // 3),
    )
    print(
        f"compare_items (continuous, bootstrap, {res.settings['draws']} draws by default): "
        f"{t_cont:8.1f} ms"
    )


if __name__ == "__main__":
    main()
