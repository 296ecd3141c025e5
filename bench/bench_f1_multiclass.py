"""Benchmark: exact macro/micro F1 comparison of two 20-class classifiers (paired model).

Measures :func:`isbetter.f1.multiclass.sample_average_delta` on a reproducible
synthetic test set of 7 500 documents x 20 classes (two correlated classifiers with
about 78 % and 74 % accuracy, confusions mostly within groups of four related classes,
as in 20 Newsgroups): 20 000 posterior draws plus the 20 000 prior draws (all-zero
cells) that the Savage-Dickey Bayes factor needs. Target: posterior + prior together
under 1 s.

Times are the median (and for posterior + prior together also the best) of `repeats`
runs after one warm-up, for one worker thread and for the default number of workers;
the target is read on the median of posterior + prior together.
The implementation this replaced, which drew all m^3 = 8 000 Gamma variates of every
draw, is copied below as
``_old_sample_average_delta`` and timed on fewer draws (its time grows linearly with
the draws; the printed time is scaled up to 20 000, and says so).

Run from the repository root: ``python bench/bench_f1_multiclass.py [--repeats 5]``.
"""

from __future__ import annotations

import argparse
import os
import platform
import time

import numpy as np

from isbetter.f1.measures import Measure, f1
from isbetter.f1.multiclass import _plan, joint_cells, macro_micro, sample_average_delta
from isbetter.f1.paired import orientation

N, M, DRAWS = 7500, 20, 20_000


def make_data(seed: int = 7520) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Gold labels and two correlated classifiers' predictions (class indices)."""
    rng = np.random.default_rng(seed)
    gold = rng.choice(M, size=N, p=rng.dirichlet(np.full(M, 30.0)))
    group = np.arange(M) // 4

    def wrong(g: np.ndarray) -> np.ndarray:  # 70 %: another class of the same group of 4
        same = group[g] * 4 + (g % 4 + rng.integers(1, 4, g.size)) % 4
        other = (g + rng.integers(1, M, g.size)) % M
        return np.where(rng.random(g.size) < 0.7, same, other)

    u = rng.random(N)
    v = np.where(rng.random(N) < 0.6, u, rng.random(N))  # shared document difficulty
    wrong_a, wrong_b = wrong(gold), wrong(gold)
    wrong_b = np.where(rng.random(N) < 0.5, wrong_a, wrong_b)  # same mistake half the time
    return gold, np.where(u < 0.78, gold, wrong_a), np.where(v < 0.74, gold, wrong_b)


def _old_sample_average_delta(
    cells: np.ndarray,
    measure: Measure,
    *,
    alpha: float | None = None,
    draws: int = 20_000,
    rng: np.random.Generator,
    chunk_cells: int = 2_000_000,
) -> tuple[np.ndarray, np.ndarray]:
    """The replaced implementation (all m^3 Gamma variates per draw), for comparison."""
    cells = np.asarray(cells, dtype=float)
    m = cells.shape[0]
    a = 1.0 / m**2 if alpha is None else float(alpha)
    shape = cells + a
    iu, ju = np.triu_indices(m, 1)
    s_up, s_lo = shape[:, iu, ju], shape[:, ju, iu]
    orient = orientation((s_up - s_lo).ravel())
    up_first = np.where(s_up == s_lo, orient, s_up < s_lo)
    s_min, s_max = np.minimum(s_up, s_lo), np.maximum(s_up, s_lo)
    diag = shape[:, np.arange(m), np.arange(m)]
    step = max(1, chunk_cells // m**3)
    macro_out = np.empty(draws)
    micro_out = np.empty(draws)
    for start in range(0, draws, step):
        s = min(step, draws - start)
        g = np.empty((s, m, m, m))
        g[:, :, np.arange(m), np.arange(m)] = rng.standard_gamma(diag, size=(s, *diag.shape))
        lo = rng.standard_gamma(s_min, size=(s, *s_min.shape))
        hi = rng.standard_gamma(s_max, size=(s, *s_max.shape))
        g[:, :, iu, ju] = np.where(up_first, lo, hi)
        g[:, :, ju, iu] = np.where(up_first, hi, lo)
        g /= g.sum(axis=(1, 2, 3), keepdims=True)
        mac_a, mic_a = macro_micro(g.sum(axis=3), measure)
        mac_b, mic_b = macro_micro(g.sum(axis=2), measure)
        macro_out[start : start + s] = measure.difference(mac_a, mac_b)
        micro_out[start : start + s] = measure.difference(mic_a, mic_b)
    return macro_out, micro_out


def median_s(fn, repeats: int, best: bool = False) -> tuple[float, ...]:
    """Median wall-clock and CPU (all threads) seconds of `fn` after one warm-up.

    With ``best=True`` also the shortest wall-clock time.
    """
    fn()
    wall, cpu = [], []
    for _ in range(repeats):
        t, c = time.perf_counter(), time.process_time()
        fn()
        wall.append(time.perf_counter() - t)
        cpu.append(time.process_time() - c)
    out = float(np.median(wall)), float(np.median(cpu))
    return (*out, min(wall)) if best else out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--old-draws", type=int, default=1000, help="draws for the old sampler")
    args = parser.parse_args()

    gold, a, b = make_data()
    cells = joint_cells(gold, a, b, M)
    zeros = np.zeros_like(cells)
    rng = np.random.default_rng(1)
    print(
        f"machine: {platform.platform()}, {platform.processor() or platform.machine()}, "
        f"os.cpu_count() = {os.cpu_count()}, load average {os.getloadavg()[0]:.2f}"
    )
    ref_rng, ref_out = np.random.default_rng(0), np.empty(10**6)
    ref = min(median_s(lambda: ref_rng.random(out=ref_out), 5)[0] for _ in range(3))
    print(f"calibration: numpy Generator.random {ref * 1e3:.2f} ns per double (quiet core: ~4)")
    print(
        f"data: {N} documents x {M} classes; accuracy A {np.mean(gold == a):.3f}, "
        f"B {np.mean(gold == b):.3f}; {np.count_nonzero(cells)} of {M**3} cells non-zero"
    )
    for label, table in (("posterior", cells), ("prior", zeros)):
        plan = _plan(table.astype(float), 1 / M**2)
        n_exp, n_sums = int(plan.units.sum()), int(np.count_nonzero(plan.units))
        print(
            f"{label}: {plan.terms:.0f} series terms + {n_exp} Exp(1) (summed into {n_sums} "
            f"cells) + {plan.columns.size - n_sums} Gamma variates per draw "
            f"(old: {M**3} Gamma variates)"
        )
    macro, micro = sample_average_delta(cells, f1, draws=DRAWS, rng=rng)
    print(f"posterior means: macro-F1 {macro.mean():+.4f}, micro-F1 {micro.mean():+.4f}\n")

    new = {}
    for workers in (1, None):
        label = "1 worker" if workers == 1 else f"{min(2, os.cpu_count() or 1)} workers (default)"

        def both(w: int | None = workers) -> None:  # what the target is about
            sample_average_delta(cells, f1, draws=DRAWS, rng=rng, workers=w)
            sample_average_delta(zeros, f1, draws=DRAWS, rng=rng, workers=w)

        post, _ = median_s(
            lambda w=workers: sample_average_delta(cells, f1, draws=DRAWS, rng=rng, workers=w),
            args.repeats,
        )
        prior, _ = median_s(
            lambda w=workers: sample_average_delta(zeros, f1, draws=DRAWS, rng=rng, workers=w),
            args.repeats,
        )
        total, total_cpu, best = median_s(both, args.repeats, best=True)
        new[label] = total
        print(
            f"new, {label:<19}: posterior {post:6.3f} s + prior {prior:6.3f} s (medians); "
            f"together: median {total:6.3f} s wall ({total_cpu:6.3f} s CPU), best {best:6.3f} s "
            f"[target < 1 s on the median: {'PASS' if total < 1 else 'FAIL'}]"
        )

    scale = DRAWS / args.old_draws
    old_post = (
        scale
        * median_s(lambda: _old_sample_average_delta(cells, f1, draws=args.old_draws, rng=rng), 3)[
            0
        ]
    )
    old_prior = (
        scale
        * median_s(lambda: _old_sample_average_delta(zeros, f1, draws=args.old_draws, rng=rng), 3)[
            0
        ]
    )
    print(
        f"old (timed on {args.old_draws} draws, scaled x{scale:g} to {DRAWS}): posterior "
        f"{old_post:6.2f} s + prior {old_prior:6.2f} s = {old_post + old_prior:6.2f} s"
    )
    for label, t in new.items():
        print(f"speed-up, {label:<19}: {(old_post + old_prior) / t:6.1f}x (median run)")
    print(f"load average at the end: {os.getloadavg()[0]:.2f} (other processes share the CPUs)")


if __name__ == "__main__":
    main()
