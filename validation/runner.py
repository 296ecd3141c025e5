"""Run independent replications in this process or in worker processes, reproducibly.

Replication ``r`` always gets the ``r``-th child of ``SeedSequence(seed)``, so the
results do not depend on the number of workers. Each worker process compiles the
hierarchical model once per shape and reuses it for all its replications.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor
from multiprocessing import get_context
from typing import Any

import numpy as np


def _batch(fn: Callable[..., Any], args: tuple[Any, ...], seeds: list[Any]) -> list[Any]:
    return [fn(*args[:1], seed, *args[1:]) for seed in seeds]


def replicate(
    fn: Callable[..., Any],
    setting: Any,
    extra: tuple[Any, ...],
    *,
    reps: int,
    seed: int,
    workers: int = 1,
    label: str = "",
) -> list[Any]:
    """Return ``[fn(setting, seed_r, *extra) for r in range(reps)]``, in order.

    Progress goes to stderr. With ``workers > 1`` the replications run in spawned
    processes (PyMC and numba are not fork-safe), in contiguous batches.
    """
    seeds = np.random.SeedSequence(seed).spawn(reps)
    start = time.perf_counter()
    if workers <= 1:
        out = []
        for r, s in enumerate(seeds):
            out.append(fn(setting, s, *extra))
            _progress(label, r + 1, reps, start)
        return out
    size = max(1, min(10, reps // (2 * workers)))
    batches = [seeds[i : i + size] for i in range(0, reps, size)]
    results: list[Any] = []
    with ProcessPoolExecutor(workers, mp_context=get_context("spawn")) as pool:
        futures = [pool.submit(_batch, fn, (setting, *extra), b) for b in batches]
        for fut in futures:
            results.extend(fut.result())
            _progress(label, len(results), reps, start)
    return results


def _progress(label: str, done: int, total: int, start: float) -> None:
    if done == total or done % max(1, total // 10) == 0:
        elapsed = time.perf_counter() - start
        print(f"  {label}: {done}/{total} ({elapsed:.0f} s)", file=sys.stderr, flush=True)
