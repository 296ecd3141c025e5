"""Benchmark: the hierarchical model on many synthetic data sets (scaling).

Fits 1000 synthetic data sets x 100 folds (10 runs x 10-fold CV) at default
settings (4 chains x 2000 draws after 500 tuning) and prints the wall time of
the first fit (including compilation) and of a second fit reusing the compiled
model, with diagnostics. The likelihood uses per-data-set sufficient statistics,
so its cost grows with the number of data sets, not with the square of the folds:
a second table times a fit for 1000 data sets x 1000 folds to show it.

Run from the repository root::

    python bench/bench_hierarchical_scaling.py [--datasets 1000] [--folds 100]
"""

from __future__ import annotations

import argparse
import time
import warnings

import numpy as np


def synthetic(q: int, n: int, seed: int):
    from isbetter import from_arrays

    g = np.random.default_rng(seed)
    base = g.uniform(0.6, 0.95, size=(q, 1))
    noise_sd = g.uniform(0.005, 0.04, size=(q, 1))
    x = base + g.normal(0, 1, size=(q, n)) * noise_sd
    delta = 0.005 + 0.01 * g.standard_t(5, size=(q, 1))
    y = x - delta + g.normal(0, 1, size=(q, n)) * noise_sd / 2
    return from_arrays(x, y, names=("A", "B"), runs=n // 10).paired("A", "B")


def timed_fit(model, scores, seed):
    t0 = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("default")
        res = model.fit(scores, rope=0.005, rng=seed)
    return time.perf_counter() - t0, res


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--datasets", type=int, default=1000)
    parser.add_argument("--folds", type=int, default=100, help="scores per data set")
    parser.add_argument("--backend", default="auto")
    args = parser.parse_args()

    from isbetter.cv.hierarchical.model import HierarchicalModel

    t0 = time.perf_counter()
    scores = synthetic(args.datasets, args.folds, seed=1)
    t_data = time.perf_counter() - t0
    print(f"{args.datasets} data sets x {args.folds} scores; input built in {t_data:.1f} s")
    t0 = time.perf_counter()
    model = HierarchicalModel(args.datasets, backend=args.backend).compile()
    t_compile = time.perf_counter() - t0
    t_fit1, res1 = timed_fit(model, scores, seed=1)
    print(
        f"backend {model.backend}: compile {t_compile:.1f} s + first fit {t_fit1:.1f} s = "
        f"{t_compile + t_fit1:.1f} s; probs {np.round(res1.probabilities().as_tuple(), 4)}; "
        f"{res1.diagnostics}"
    )
    scores2 = synthetic(args.datasets, args.folds * 10, seed=2)
    t_fit2, res2 = timed_fit(model, scores2, seed=2)
    print(
        f"second fit reusing the compiled model, {args.folds * 10} scores per data set: "
        f"{t_fit2:.1f} s; probs {np.round(res2.probabilities().as_tuple(), 4)}; "
        f"{res2.diagnostics}"
    )
    total = t_compile + t_fit1
    print(f"target < 30 s for the first fit incl. compilation: {'met' if total < 30 else 'MISSED'}")


if __name__ == "__main__":
    main()
