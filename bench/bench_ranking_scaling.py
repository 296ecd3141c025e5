"""Benchmark: running a ranking's pairs in one process versus local worker processes.

A synthetic study of 30 systems x 20 data sets x 10 folds x 2 metrics gives
2 x C(30, 2) = 870 hierarchical fits (draws=1000, tune=500, chains=4, cores=1,
so one fit uses one core). :func:`isbetter.ranking.execution.run_tasks` runs
them with ``jobs=1`` (in-process) and with ``jobs=2`` (two spawned worker
processes); each configuration runs in a fresh subprocess so that its memory
is measured alone. Printed for each: wall time; CPU time of the process that
calls ``run_tasks`` and of its children (so "cores busy" = CPU / wall); peak
resident memory of that process (``RUSAGE_SELF``) and of its largest child
(``RUSAGE_CHILDREN``: a worker, or the C compiler of the model's compilation).
Then the speed-up, and whether both runs gave identical outcomes (they must:
each pair's seed depends only on the pair).

The machine should be otherwise idle: the load average before and after each
configuration is printed, as other work on the same cores distorts the speed-up.

Targets: speed-up of ``jobs=2`` over ``jobs=1`` >= 1.7x (on an otherwise idle
machine with at least 2 cores; each worker compiles the model once, so small
runs such as ``--systems 8`` fall short of it by that fixed cost); peak memory
< 2 GB for the parent and for each child, flat in the number of pairs.

Run from the repository root::

    python bench/bench_ranking_scaling.py [--systems 30] [--datasets 20] [--jobs 1 2]

``--systems 8`` (56 fits) is a quick run.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
import warnings
from itertools import combinations

import numpy as np

METRICS = ("accuracy", "f1")
OPTIONS = {"draws": 1000, "tune": 500, "chains": 4, "cores": 1}
SEED = 2024


def synthetic_tasks(n_systems: int, n_datasets: int, n_folds: int = 10) -> list:
    """Every pair of `n_systems` synthetic systems on each metric, as a ranking builds them."""
    from isbetter import from_arrays
    from isbetter.inference.seeds import pair_seed
    from isbetter.ranking.tasks import PairTask

    g = np.random.default_rng(SEED)
    names = [f"sys{i:02d}" for i in range(n_systems)]
    tasks = []
    for metric in METRICS:
        difficulty = g.uniform(0.6, 0.9, size=(n_datasets, 1))
        skill = np.sort(g.normal(0, 0.01, size=n_systems))
        noise = g.uniform(0.005, 0.03, size=(n_datasets, 1))
        scores = {  # each system: overall skill, a per-data-set effect, fold noise
            s: difficulty
            + skill[i]
            + g.normal(0, 0.01, size=(n_datasets, 1))
            + noise * g.standard_normal((n_datasets, n_folds))
            for i, s in enumerate(names)
        }
        for a, b in combinations(names, 2):
            data = from_arrays(scores[a], scores[b], names=(a, b), metric=metric, runs=1).paired(
                a, b
            )
            seed = pair_seed(SEED, metric, a, b)
            tasks.append(PairTask("cv", metric, a, b, 0.005, "hierarchical", seed, data, OPTIONS))
    return tasks


def run_one(args: argparse.Namespace) -> None:
    """Run the tasks with ``--jobs`` once; write timing, memory and outcomes as JSON."""
    from isbetter import ConvergenceWarning
    from isbetter.ranking.execution import run_tasks

    tasks = synthetic_tasks(args.systems, args.datasets)
    warnings.simplefilter("ignore", ConvergenceWarning)  # short chains on noisy pairs
    t0 = time.perf_counter()
    load_before = os.getloadavg()[0]
    outcomes, stats = run_tasks(tasks, jobs=args.jobs[0], progress=args.progress)
    wall = time.perf_counter() - t0
    me, kids = (resource.getrusage(w) for w in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN))
    report = {
        "wall": wall,
        "cpu": me.ru_utime + me.ru_stime + kids.ru_utime + kids.ru_stime,
        "load": [load_before, os.getloadavg()[0]],
        "stats": stats,
        "maxrss_self_kb": me.ru_maxrss,
        "maxrss_children_kb": kids.ru_maxrss,
        "not_converged": sum(
            not (o["summary"]["diagnostics"] or {}).get("converged", True)
            for outcome in outcomes
            for o in outcome
        ),
        "probabilities": [
            [o["summary"][k] for k in ("p_a_better", "p_rope", "p_b_better")]
            for outcome in outcomes
            for o in outcome
        ],
    }
    with open(args.output, "w") as fh:
        json.dump(report, fh)


def measure(args: argparse.Namespace, jobs: int) -> dict:
    """Run one configuration in a fresh interpreter and return its report."""
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "report.json")
        cmd = [sys.executable, __file__, "--one", "--output", out, "--jobs", str(jobs)]
        cmd += ["--systems", str(args.systems), "--datasets", str(args.datasets)]
        cmd += ["--progress"] if args.progress else []
        # the workers are fresh interpreters: silence short-chain warnings there too
        quiet = "ignore:The hierarchical model's MCMC did not converge"
        env = {**os.environ, "PYTHONWARNINGS": quiet}
        subprocess.run(cmd, check=True, env=env)
        with open(out) as fh:
            return json.load(fh)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--systems", type=int, default=30)
    parser.add_argument("--datasets", type=int, default=20)
    parser.add_argument("--jobs", type=int, nargs="+", default=[1, 2])
    parser.add_argument("--progress", action="store_true", help="progress bar on stderr")
    parser.add_argument("--one", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--output", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.one:
        run_one(args)
        return

    n_pairs = len(METRICS) * args.systems * (args.systems - 1) // 2
    print(
        f"{args.systems} systems x {args.datasets} data sets x 10 folds x {len(METRICS)} "
        f"metrics: {n_pairs} hierarchical fits ({OPTIONS}); {os.cpu_count()} CPUs"
    )
    reports = {}
    for jobs in args.jobs:
        r = reports[jobs] = measure(args, jobs)
        print(
            f"jobs={jobs}: {r['wall']:7.1f} s wall ({r['wall'] / n_pairs:.2f} s/fit), "
            f"{r['cpu']:.0f} s CPU ({r['cpu'] / r['wall']:.2f} cores busy), "
            f"executor={r['stats']['executor']} workers={r['stats']['workers']}, "
            f"{r['not_converged']} fits flagged by diagnostics, "
            f"peak RSS parent {r['maxrss_self_kb'] / 1024:.0f} MB, "
            f"children {r['maxrss_children_kb'] / 1024:.0f} MB; "
            f"1-min load average {r['load'][0]:.1f} before, {r['load'][1]:.1f} after",
            flush=True,
        )
    if 1 in reports and len(reports) > 1:
        base = reports[1]
        for jobs, r in reports.items():
            if jobs == 1:
                continue
            same = r["probabilities"] == base["probabilities"]
            print(
                f"speed-up jobs={jobs} vs jobs=1: {base['wall'] / r['wall']:.2f}x "
                f"(target >= 1.7x for jobs=2); identical outcomes: {same}"
            )
    peak = max(max(r["maxrss_self_kb"], r["maxrss_children_kb"]) for r in reports.values())
    print(f"peak memory of any process: {peak / 1024:.0f} MB (target < 2048 MB)")


if __name__ == "__main__":
    main()
