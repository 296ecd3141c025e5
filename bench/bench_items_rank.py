"""How fast ``isbetter rank --items --method items-joint`` ranks many language models.

Writes ``--models`` model folders (default 20) of an MMLU-sized run — ``--tasks``
subtasks (default 57) holding ``--items`` items (default 14 042) — in
lm-evaluation-harness's real ``--log_samples`` format (the writer of
``bench_items_reader.py``: binary ``acc``, the models' skills spread from 0.3 to 0.9),
then times the items-joint ranking (190 pairs, P(best), rank intervals, chain; the
Dirichlet process posterior of binary items, :mod:`isbetter.items.joint`):

* **end to end, fresh process**: ``python -m isbetter rank FOLDER --items --method
  items-joint --rope 0.01 --seed 1`` in a new interpreter (imports, reading the logs,
  the ranking and its report), wall and the child's CPU time;
* **warm**, in this process after one warm-up: ``isbetter.rank(table, method=
  "items_joint")`` on the table already read (median of ``--repeats``), and its parts
  (the items x models matrix; the posterior draws; the rest: the 190 pairs' summaries
  and Bayes factors, the ranks and orders);
* with ``--pairwise`` (and ``--jobs``, the ranking's) also the pairwise route: the 190
  pairs each by the hierarchical paired model over the 57 subtasks (MCMC; 2 chains x
  1000 draws a pair, ``isbetter.ranking.items.RANK_CHAINS``), wall and CPU time (worker
  processes included), CPU a pair, CPU over the workers (what idle cores would take)
  against the 60 s target, and the pairs the convergence checks flagged.

The issue's target: under 60 s on 2 cores for 20 models over 57 subtasks, "or far
less through the one-posterior route". Run it alone, under nice::

    nice -n 10 python bench/bench_items_rank.py
"""

from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

# the timing of bench_f1_multiclass.py and the lm-eval log writer of the reader's bench
# (this folder is on the path when a script of it runs)
from bench_f1_multiclass import median_s
from bench_items_reader import write_logs
from bench_items_subtasks import BEFORE_RANK_SECONDS, TARGET_RANK_SECONDS

from isbetter.items import read
from isbetter.items.joint import distinct_units, item_matrix, sample_means
from isbetter.ranking import rank
from isbetter.ranking.items import JOINT_DRAWS

#: the issue's target for 20 models over 57 subtasks (190 pairs), on 2 cores
TARGET_SECONDS = TARGET_RANK_SECONDS


def _fresh(root: Path) -> tuple[float, float, int]:
    """Run the command in a new interpreter; return wall, the child's CPU time, exit code."""
    argv = [sys.executable, "-m", "isbetter", "rank", str(root), "--items"]
    argv += ["--method", "items-joint", "--rope", "0.01", "--seed", "1"]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t = time.perf_counter()
    done = subprocess.run(argv, capture_output=True, text=True, check=False)
    wall = time.perf_counter() - t
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    if done.returncode:
        print(done.stderr.strip())
    else:
        best = [line for line in done.stdout.splitlines() if "P(best)" in line]
        print(f"    {best[0][:110]}…" if best else done.stdout[:200])
    return wall, cpu, done.returncode


def _cpu() -> float:
    """CPU seconds of this process, its threads and its finished worker processes."""
    t = os.times()
    return t.user + t.system + t.children_user + t.children_system


def _pairwise(table: Any, pairs: int, jobs: int | None) -> None:
    """Time the pairwise route: every pair by the hierarchical model over the subtasks."""
    t, c = time.perf_counter(), _cpu()
    r = rank(table, rope=0.01, rng=1, progress=False, jobs=jobs)
    wall, cpu = time.perf_counter() - t, _cpu() - c
    workers = max(r.settings["execution"]["workers"], 1)
    flagged = sum(p.diagnostics is not None and not p.diagnostics.converged for p in r.pairs)
    print(
        f"  pairwise route ({pairs} pairs, each the hierarchical model over the subtasks, "
        f"{r.signature.split('|')[2]}; {r.settings['execution']['executor']}, {workers} "
        f"worker(s)): {wall:.1f} s wall, {cpu:.1f} s CPU ({cpu / pairs:.2f} s CPU a pair); "
        f"CPU / workers {cpu / workers:.1f} s = {cpu / workers / TARGET_SECONDS:.2f} x the "
        f"{TARGET_SECONDS:.0f} s target (wall {wall / TARGET_SECONDS:.2f} x, on a shared "
        f"machine); {flagged} pairs flagged by the convergence checks; before: "
        f"{BEFORE_RANK_SECONDS:.0f} s wall (load 12-13)"
    )


def main() -> None:
    """Write the logs, rank the models, print the times."""
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--models", type=int, default=20)
    p.add_argument("--tasks", type=int, default=57)
    p.add_argument("--items", type=int, default=14_042)
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--pairwise", action="store_true", help="also time the pairwise route")
    p.add_argument("--jobs", type=int, default=None, help="the pairwise route's jobs")
    args = p.parse_args()
    pairs = args.models * (args.models - 1) // 2
    print(f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
    with tempfile.TemporaryDirectory(prefix="bench_items_rank_") as tmp:
        root = Path(tmp)
        t = time.perf_counter()
        size = write_logs(root, args.models, args.items, args.tasks)
        print(
            f"wrote {args.models} models x {args.tasks} subtasks, {args.items} items: "
            f"{size / 1e6:.0f} MB of lm-eval logs in {time.perf_counter() - t:.1f} s"
        )
        wall, cpu, code = _fresh(root)
        print(
            f"  end to end, fresh process (read + rank + report, {pairs} pairs): "
            f"{wall:.2f} s wall, {cpu:.2f} s CPU, exit {code}"
        )
        table = read(root, metric="acc")
    matrix = item_matrix(table)
    print(
        f"  table: {matrix.n_items} items x {len(matrix.systems)} models, "
        f"{distinct_units(matrix)} distinct score vectors; binary: {matrix.binary}"
    )

    wall, cpu = median_s(lambda: rank(table, method="items_joint", rope=0.01, rng=1), args.repeats)
    print(
        f"  warm rank(method='items_joint'), {JOINT_DRAWS} draws: {wall:.2f} s wall, "
        f"{cpu:.2f} s CPU (median of {args.repeats} after a warm-up)"
    )
    m_wall, _ = median_s(lambda: item_matrix(table), args.repeats)
    d_wall, d_cpu = median_s(
        lambda: sample_means(matrix, draws=JOINT_DRAWS, rng=np.random.default_rng(1)),
        args.repeats,
    )
    print(
        f"    of which the matrix {m_wall:.2f} s, the posterior draws {d_wall:.2f} s wall "
        f"({d_cpu:.2f} s CPU), the rest (pairs' summaries, ranks, orders) "
        f"{wall - m_wall - d_wall:.2f} s"
    )
    if args.pairwise:
        _pairwise(table, pairs, args.jobs)
    print(f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")


if __name__ == "__main__":
    main()
