"""Benchmark: the hierarchical paired model of binary items over 57 subtasks (MMLU's size).

Simulates two models on 57 subtasks of 100-500 items (14 000 items in all), as MMLU's
57 subjects, and times :func:`isbetter.items.hierarchical.model.hierarchical_items` at
its defaults (4 chains x 1000 draws after 1000 tuning, on 2 cores):

* cold: the first fit in a fresh process, with the compiled density in isbetter's cache
  (``--clear-cache`` empties the cache first, so the first fit compiles it; that time is
  reported as well);
* warm: later fits in the same process (the target: under 5 s).

Beside it, the exact closed forms it is checked against: the unpooled one-task model
(Beta(1 + n10, 1 + n01) per subtask) costs microseconds.

Run (from the repository root)::

    python bench/bench_items_hierarchical.py [--repeats 3] [--clear-cache]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # validation/

N_SUBTASKS = 57
TARGET_WARM_SECONDS = 5.0


def simulated_counts(seed: int = 0):
    """57 subtasks, 14 000 items in all; A better by about 3 points of accuracy."""
    from scipy import special
    from validation.items_sbc import draw_counts

    rng = np.random.default_rng(seed)
    sizes = rng.multinomial(14_000 - 100 * N_SUBTASKS, np.full(N_SUBTASKS, 1 / N_SUBTASKS))
    truth = {
        "share": special.expit(0.4 + 0.35 * rng.standard_t(5, N_SUBTASKS)),
        "rate": special.expit(-1.5 + 0.3 * rng.standard_normal(N_SUBTASKS)),
    }
    counts = draw_counts(rng, truth, sizes + 100)
    counts["task"] = [f"subject_{i:02d}" for i in range(N_SUBTASKS)]
    return counts


def _one_fit(counts, seed: int):
    from isbetter.items.hierarchical.model import hierarchical_items

    start = time.perf_counter()
    res = hierarchical_items(counts, rope=0.01, rng=seed)
    return time.perf_counter() - start, res


def child(clear: bool) -> None:
    """Time the first fit of a fresh process (run as a subprocess by main)."""
    if clear:
        from isbetter.core import cache

        cache.clear()
    counts = simulated_counts()
    start = time.perf_counter()
    from isbetter.items.hierarchical import density

    density.load_density()
    load = time.perf_counter() - start
    seconds, _ = _one_fit(counts, 1)
    print(f"{load:.3f} {seconds:.3f}")


def main(argv: list[str] | None = None) -> int:
    """Run the benchmark and print its table; exit 1 if the warm fit misses the target."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--clear-cache", action="store_true")
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        child(args.clear_cache)
        return 0
    command = [sys.executable, __file__, "--child"] + (["--clear-cache"] * args.clear_cache)
    out = subprocess.run(command, check=True, capture_output=True, text=True, env=os.environ)
    load, cold = (float(v) for v in out.stdout.split()[-2:])
    what = "compiling" if args.clear_cache else "loading"
    print(f"cold (fresh process): {what} the density {load:.2f} s, first fit {cold:.2f} s")

    counts = simulated_counts()
    _one_fit(counts, 0)  # this process's first fit
    times, results = [], []
    for seed in range(1, args.repeats + 1):
        seconds, res = _one_fit(counts, seed)
        times.append(seconds)
        results.append(res)
    res = results[-1]
    d = res.diagnostics
    print(
        f"warm: {N_SUBTASKS} subtasks, {int(counts.iloc[:, 1:].to_numpy().sum())} items: "
        f"median {np.median(times):.2f} s (min {min(times):.2f}, max {max(times):.2f}) over "
        f"{args.repeats} fits; R-hat max {d.r_hat_max:.3f}, bulk ESS min {d.ess_bulk_min:.0f}, "
        f"tail ESS min {d.ess_tail_min:.0f}, divergences {d.divergences}"
    )
    e = res.estimate
    print(
        f"population mean difference {e.mean:+.4f} [{e.interval.low:+.4f}, "
        f"{e.interval.high:+.4f}]; next subtask P(A better, rope, B better) = "
        f"{res.p_a_better:.3f}, {res.p_rope:.3f}, {res.p_b_better:.3f} (argmax), predictive "
        f"{res.predictive.p_a_better:.3f}, {res.predictive.p_rope:.3f}, "
        f"{res.predictive.p_b_better:.3f}"
    )
    from scipy import special

    start = time.perf_counter()
    table = counts[["n10", "n01"]].to_numpy()
    special.betainc(1 + table[:, 1], 1 + table[:, 0], 0.5)
    exact = time.perf_counter() - start
    print(f"exact unpooled closed form (P(s_t > 1/2) of 57 subtasks): {exact * 1e6:.0f} us")
    return 0 if np.median(times) < TARGET_WARM_SECONDS else 1


if __name__ == "__main__":
    raise SystemExit(main())
