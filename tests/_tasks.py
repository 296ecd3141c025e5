"""Synthetic ranking tasks and process checks shared by the ranking and CLI tests."""

from __future__ import annotations

import time
from itertools import combinations
from pathlib import Path

import numpy as np

from isbetter import from_arrays
from isbetter.inference.seeds import pair_seed
from isbetter.ranking.tasks import PairTask

SEED = 20240917


def make_tasks(
    n_systems: int = 5,
    metrics: tuple[str, ...] = ("acc",),
    method: str = "signed_rank",
    options: dict | None = None,
    n_datasets: int = 10,
) -> list[PairTask]:
    """Every pair of `n_systems` synthetic systems on each metric (10 folds per data set)."""
    g = np.random.default_rng(SEED)
    names = [f"s{i}" for i in range(n_systems)]
    scores = {
        (m, s): 0.8 + 0.005 * i + g.normal(0, 0.02, size=(n_datasets, 10))
        for m in metrics
        for i, s in enumerate(names)
    }
    opts = {"draws": 2000} if options is None and method != "correlated_t" else options or {}
    tasks = []
    for m in metrics:
        for a, b in combinations(names, 2):
            x, y = scores[m, a], scores[m, b]
            if n_datasets == 1:
                x, y = x[0], y[0]
            data = from_arrays(x, y, names=(a, b), metric=m, runs=1).paired(a, b)
            seed = pair_seed(SEED, m, a, b)
            tasks.append(PairTask("cv", m, a, b, 0.01, method, seed, data, dict(opts)))
    return tasks


def _gone(pid: int, within: float = 2.0) -> bool:
    """Whether process `pid` has ended (reaped, or a zombie) within `within` seconds."""
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        try:
            state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except (FileNotFoundError, ProcessLookupError):
            return True
        if state in ("Z", "X"):
            return True
        time.sleep(0.02)
    return False
