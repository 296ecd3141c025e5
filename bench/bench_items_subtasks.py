"""Benchmark: language models over 57 subtasks, from an item table, by the hierarchical model.

Two parts (issue 31's targets, on 2 cores):

* **two models**: ``compare_items(table, a, b)`` on a table of 57 subtasks (MMLU's size,
  14 000 binary items): pairing the items of every subtask, the hierarchical paired model
  (4 chains x 1000 draws after 1000 tuning), the per-subtask summaries and the baselines;
  warm (a running process, the density compiled and loaded): target under 5 s;
* **a ranking**: ``rank(table)`` of `--models` models (default 20: 190 pairs), every pair
  by the hierarchical model over the 57 subtasks, run by the ranking's execution
  machinery at its defaults (on 2 CPUs: this process, two fits at a time in threads);
  target under 60 s; wall and CPU time (the CPU time is what a busy machine does not
  inflate). Beside it the one-posterior route (``method="items_joint"``). With
  ``--before N``: the first N models' pairs ranked both with the sampler settings of
  before (4 x 1000 tuning steps, target acceptance 0.9 above 20 subtasks) and with
  today's, one after the other, and the ratio of their CPU times.

The table is simulated as an ItemTable (the readers have their own bench,
``bench_items_reader.py``): model k's item i of subtask t is right with probability
``expit(skill_k + ease_t + difficulty_i)``, so models are paired through the items.
The machine's load average is printed with the times.

Run (from the repository root)::

    python bench/bench_items_subtasks.py [--models 20] [--repeats 3] [--skip-rank]
"""

from __future__ import annotations

import argparse
import os
import time
from collections.abc import Callable
from typing import Any

import numpy as np
import pandas as pd
from scipy import special

from isbetter.items.table import ItemTable

N_SUBTASKS = 57
N_ITEMS = 14_000
TARGET_PAIR_SECONDS = 5.0
TARGET_RANK_SECONDS = 60.0
#: before the sampler settings of 57 subtasks changed (tuning 1000 -> 500 steps, target
#: acceptance 0.9 -> 0.8): the 190 pairs' ranking took 784 s wall (load 12-13 on 2 CPUs)
BEFORE_RANK_SECONDS = 784.0


def make_table(models: int, seed: int = 57) -> ItemTable:
    """`models` models on 57 subtasks of 14 000 binary items in all (skills 0.05 apart)."""
    rng = np.random.default_rng(seed)
    sizes = 100 + rng.multinomial(N_ITEMS - 100 * N_SUBTASKS, np.full(N_SUBTASKS, 1 / N_SUBTASKS))
    task = np.repeat([f"subject_{t:02d}" for t in range(N_SUBTASKS)], sizes)
    ease = np.repeat(rng.normal(0.8, 0.6, N_SUBTASKS), sizes)
    difficulty = rng.normal(0.0, 1.5, N_ITEMS)
    item = np.arange(N_ITEMS).astype(str)
    frames = []
    for k in range(models):
        skill = 0.05 * k + 0.1 * rng.standard_normal(N_SUBTASKS)  # a model's subtask profile
        p = special.expit(np.repeat(skill, sizes) + ease + difficulty)
        frames.append(
            pd.DataFrame(
                {
                    "task": task,
                    "item": item,
                    "system": f"model_{k:02d}",
                    "score": (rng.random(N_ITEMS) < p).astype(float),
                }
            )
        )
    return ItemTable.from_frame(pd.concat(frames, ignore_index=True), metric="acc")


def load() -> str:
    """The load averages over 1, 5 and 15 minutes, and the CPUs."""
    one, five, fifteen = os.getloadavg()
    return f"load {one:.1f} / {five:.1f} / {fifteen:.1f} on {os.cpu_count()} CPUs"


def bench_pair(table: ItemTable, repeats: int) -> float:
    """Time compare_items over the 57 subtasks; print the times and the result."""
    from isbetter.items.compare import compare_items

    start = time.perf_counter()
    compare_items(table, "model_01", "model_00", rope=0.01, rng=0)  # loads the density
    first = time.perf_counter() - start
    times = []
    for seed in range(1, repeats + 1):
        start = time.perf_counter()
        res = compare_items(table, "model_01", "model_00", rope=0.01, rng=seed)
        times.append(time.perf_counter() - start)
    d, e = res.diagnostics, res.estimate
    assert d is not None and e is not None
    print(
        f"two models, {N_SUBTASKS} subtasks, {N_ITEMS} items (compare_items, baselines on): "
        f"first call {first:.2f} s; warm median {np.median(times):.2f} s (min {min(times):.2f},"
        f" max {max(times):.2f}) over {repeats}; R-hat max {d.r_hat_max:.3f}, bulk ESS min "
        f"{d.ess_bulk_min:.0f}, divergences {d.divergences}; {load()}"
    )
    print(
        f"  population mean difference {e.mean:+.4f} [{e.interval.low:+.4f}, "
        f"{e.interval.high:+.4f}]; next subtask P = {res.p_a_better:.3f}, {res.p_rope:.3f}, "
        f"{res.p_b_better:.3f}"
    )
    return float(np.median(times))


def _cpu() -> float:
    """CPU seconds of this process, its threads and its finished worker processes so far."""
    t = os.times()
    return t.user + t.system + t.children_user + t.children_system


def _timed(run: Callable[[], object]) -> tuple[float, float, object]:
    """Wall and CPU seconds of ``run()``, and its result."""
    wall, cpu = time.perf_counter(), _cpu()
    out = run()
    return time.perf_counter() - wall, _cpu() - cpu, out


def bench_rank(table: ItemTable, jobs: int | None = None, chains: int | None = None) -> float:
    """Time the pairwise hierarchical ranking and the one-posterior route.

    Returns the ranking's CPU time over its workers: what idle cores would take (the
    machine is shared by others, whose load stretches the wall time).
    """
    from isbetter.ranking import rank

    k = len(table.systems)
    pairs = k * (k - 1) // 2
    fit: dict[str, Any] = {} if chains is None else {"chains": chains}
    seconds, cpu, r = _timed(
        lambda: rank(table, rope=0.01, rng=1, progress=False, jobs=jobs, **fit)
    )
    ex = r.settings["execution"]  # type: ignore[attr-defined]
    idle = cpu / max(ex["workers"], 1)
    draws = r.signature.split("|")[2]  # type: ignore[attr-defined]
    print(
        f"ranking {k} models ({pairs} pairs) x {N_SUBTASKS} subtasks, pairwise hierarchical "
        f"({draws}): {seconds:.1f} s wall, {cpu:.1f} s CPU ({cpu / pairs:.2f} s CPU a pair; "
        f"executor {ex['executor']}, {ex['workers']} worker(s)); CPU / workers {idle:.1f} s, "
        f"{idle / TARGET_RANK_SECONDS:.2f} x the {TARGET_RANK_SECONDS:.0f} s target (wall "
        f"{seconds / TARGET_RANK_SECONDS:.2f} x); before: {BEFORE_RANK_SECONDS:.0f} s wall at "
        f"load 12-13; {load()}"
    )
    print(f"  chain: {r.chain()}")  # type: ignore[attr-defined]
    flagged = sum(
        p.diagnostics is not None and not p.diagnostics.converged
        for p in r.pairs  # type: ignore[attr-defined]
    )
    print(f"  pairs flagged by the convergence checks: {flagged} of {pairs}")
    start = time.perf_counter()
    joint = rank(table, method="items_joint", rope=0.01, rng=1)
    print(
        f"  one posterior (items-joint, {joint.settings.get('draws')} draws): "
        f"{time.perf_counter() - start:.1f} s; {load()}"
    )
    return idle


def bench_before(table: ItemTable, models: int) -> None:
    """Rank the first `models` models with the sampler settings of before and today's."""
    from isbetter.items.hierarchical import model
    from isbetter.ranking import rank

    systems = table.systems[:models]
    today = (model.TUNE, model.TARGET_ACCEPT)
    cpus = {}
    for label, (tune, accept) in (("before", (1000, 0.9)), ("today", today)):
        model.TUNE, model.TARGET_ACCEPT = tune, accept
        try:
            wall, cpus[label], _ = _timed(
                lambda: rank(table, systems=systems, rope=0.01, rng=1, progress=False)
            )
        finally:
            model.TUNE, model.TARGET_ACCEPT = today
        print(
            f"  {models} models' pairs with {label}'s settings (tune {tune}, target "
            f"acceptance {accept}): {wall:.1f} s wall, {cpus[label]:.1f} s CPU; {load()}"
        )
    print(f"  CPU time before / today: {cpus['before'] / cpus['today']:.2f}")


def main(argv: list[str] | None = None) -> int:
    """Run the benchmark; exit 1 if a target is missed."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", type=int, default=20)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--skip-rank", action="store_true")
    parser.add_argument("--before", type=int, default=0, help="models to rank both ways")
    parser.add_argument("--jobs", type=int, default=None, help="rank's jobs (default: its own)")
    parser.add_argument("--chains", type=int, default=None, help="chains a pair (default: rank's)")
    parser.add_argument("--skip-pair", action="store_true", help="only the ranking")
    args = parser.parse_args(argv)
    start = time.perf_counter()
    table = make_table(args.models)
    print(f"simulated {args.models} models x {N_ITEMS} items: {time.perf_counter() - start:.1f} s")
    ok = args.skip_pair or bench_pair(table, args.repeats) < TARGET_PAIR_SECONDS
    if not args.skip_rank:
        ok = bench_rank(table, args.jobs, args.chains) < TARGET_RANK_SECONDS and ok
    if args.before:
        bench_before(table, args.before)
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
