"""Benchmark: rank the five UCI classifiers end to end with ``isbetter rank``.

Runs the command a user would type, as a fresh process, on the shipped data
(5 classifiers -> 10 pairs, 54 data sets x 10 runs x 10 folds, rope 0.01, the
hierarchical model at its default settings, where `rank` runs them by default), and
prints:

* the wall time of the whole command (start-up, compilation and all 10 fits), each of
  `--repeat` runs and their median (target, issue 21: under 10 s on a 2-core machine
  with a warm cache);
* the one-line order, the equivalence groups and any inconsistency;
* the three pairs published by Corani et al. (2017) beside the published numbers
  (target: within +-0.03).

baycomp's HierarchicalTest takes 70-165 s per pair on this machine kind
(``bench/bench_hierarchical.py`` measures it); with ``--baycomp`` this script fits
one pair with baycomp too (needs ``pip install -e ".[bench]"``) and prints the
time for 10 pairs at that rate.

Run: ``python bench/bench_rank_uci.py [--jobs N] [--repeat N] [--python PATH] [--baycomp]``
(``--python``: the interpreter of another install, e.g. a plain ``pip install .``
without the test extras, which import Dask into every fit's ArviZ conversion).
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))  # tests/_uci.py: the file and the README's flags
from _uci import UCI, UCI_RANK_ARGS, pair_probabilities  # noqa: E402

REFERENCE = ROOT / "tests" / "reference" / "reference_values.csv"
CASES = ["hier_R2016_nbc_aode", "hier_R2016_nbc_hnb", "hier_R2016_hnb_j48"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jobs", type=int, default=None, help="worker processes")
    parser.add_argument("--baycomp", action="store_true", help="also time one baycomp fit")
    parser.add_argument("--repeat", type=int, default=1, help="runs of the command")
    parser.add_argument("--python", default=sys.executable, help="interpreter to run it with")
    args = parser.parse_args()
    print(
        f"machine: {platform.machine()}, {os.cpu_count()} CPUs, Python {platform.python_version()}"
    )
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "rank.json"
        cmd = [
            args.python,
            "-m",
            "isbetter",
            "rank",
            str(UCI),
            *UCI_RANK_ARGS,
            "--quiet",
            "--format",
            "json",
            "--output",
            str(out),
        ]
        if args.jobs:
            cmd += ["--jobs", str(args.jobs)]
        print("$ isbetter " + " ".join(cmd[3:]))
        walls = []
        for _ in range(args.repeat):
            start = time.perf_counter()
            subprocess.run(cmd, check=True)
            walls.append(time.perf_counter() - start)
        wall = statistics.median(walls)
        result = json.loads(out.read_text())
    block = result["metrics"]["accuracy"]
    runs = ", ".join(f"{w:.2f}" for w in walls)
    print(f"\nwall time of the whole command: {runs} s; median {wall:.2f} s (target < 10 s)")
    print(f"where the pairs ran: {result['settings'].get('execution')}")
    print(f"order: {block['order']}")
    print(f"groups: {block['groups']}")
    print(f"inconsistencies: {block['inconsistencies'] or 'none'}")
    with open(REFERENCE, newline="", encoding="utf-8") as fh:
        rows = {r["case_id"]: r for r in csv.DictReader(fh)}
    print("\npair            isbetter (A, rope, B)        published (A, rope, B)    max |diff|")
    for case in CASES:
        r = rows[case]
        got = pair_probabilities(block, r["system_a"], r["system_b"])
        want = tuple(float(r[k]) for k in ("p_a_better", "p_rope", "p_b_better"))
        diff = max(abs(g - w) for g, w in zip(got, want, strict=True))
        print(
            f"{r['system_a']:>4} vs {r['system_b']:<5}  "
            f"({got[0]:.4f}, {got[1]:.4f}, {got[2]:.4f})  ({want[0]:.4f}, {want[1]:.4f}, "
            f"{want[2]:.4f})  {diff:.4f}"
        )
    if args.baycomp:
        _baycomp(wall)


def _baycomp(wall: float) -> None:
    sys.path.insert(0, str(ROOT / "bench"))
    import numpy as np
    import pandas as pd
    from bench_hierarchical import run_baycomp  # type: ignore[import-not-found]

    df = pd.read_csv(UCI)
    wide = df.pivot_table(
        index=["dataset_id", "run", "fold"], columns="classifier", values="accuracy"
    ).sort_index()
    x = np.stack([g["nbc"].to_numpy() for _, g in wide.groupby(level=0)])
    y = np.stack([g["aode"].to_numpy() for _, g in wide.groupby(level=0)])
    start = time.perf_counter()
    run_baycomp(x, y, seed=1)
    one = time.perf_counter() - start
    print(
        f"\nbaycomp HierarchicalTest, one pair: {one:.1f} s -> 10 pairs ~ {10 * one:.0f} s "
        f"(x{10 * one / wall:.1f} the isbetter ranking)"
    )


if __name__ == "__main__":
    main()
