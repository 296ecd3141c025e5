"""Benchmark: the Plackett–Luce ranking of CEC'17 beside the pairwise route, end to end.

Runs the commands a user would type, each as a fresh process, on CEC'17's final
errors (14 algorithms × 116 problems, one score each, lower is better;
``data/cec17/cec17_final.csv``):

* ``isbetter rank --method plackett-luce`` — one Plackett–Luce fit (target: under
  5 s on 2 cores from a fresh process with a warm cache when ties are broken at
  random; ties in the likelihood cost about 3x the CPU time here, 10.9 s against
  3.8 s in one process on a loaded machine; the first run on a machine compiles the
  density into isbetter's cache first);
* ``isbetter rank`` (``auto``: the Bayesian signed-rank test of each of the 91 pairs,
  the pairwise route for one score per data set),

and prints their wall times, the ratio, the peak memory of each, and the
Plackett–Luce answer (P(best), P(wins next data set), the chain). 20 of the 116
problems have tied errors (up to 11 algorithms tied above the others), which enter
the likelihood (``ties="marginal"``, the default). ``uptime``'s load is printed too:
numbers from a loaded machine are not the targets'.

Run: ``python bench/bench_plackett_luce.py [--repeat N]``.
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import platform
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "data" / "cec17" / "cec17_final.csv"


def _long_table(path: Path) -> None:
    """Write CEC'17 as a long table with one data set column (function-dimension)."""
    with DATA.open() as src, path.open("w", newline="") as dst:
        out = csv.writer(dst)
        out.writerow(["dataset", "system", "error"])
        for row in csv.DictReader(src):
            out.writerow(
                [f"F{row['Benchmark']}-D{row['Dimension']}", row["Algorithm"], row["Result"]]
            )


def _run(cmd: list[str]) -> tuple[float, float]:
    """Run `cmd`; return its wall time (s) and the children's peak memory so far (MB)."""
    start = time.perf_counter()
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    seconds = time.perf_counter() - start
    return seconds, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3, help="fresh processes per route")
    args = parser.parse_args()
    print(
        f"machine: {platform.machine()}, {os.cpu_count()} CPUs, Python "
        f"{platform.python_version()}, load {os.getloadavg()[0]:.2f}"
    )
    with tempfile.TemporaryDirectory() as tmp:
        table = Path(tmp) / "cec17.csv"
        _long_table(table)
        base = [sys.executable, "-m", "isbetter", "rank", str(table), "--metric", "error"]
        base += ["--lower-is-better", "--seed", "1", "--quiet"]
        out = Path(tmp) / "pl.json"
        pl = [*base, "--method", "plackett-luce", "--format", "json", "--output", str(out)]
        first, _ = _run(pl)  # loads (or, on a new machine, compiles) the cached density
        print(f"plackett-luce, first run: {first:.2f} s")
        pl_times, pl_peak = [], 0.0
        for _ in range(args.repeat):
            seconds, peak = _run(pl)
            pl_times.append(seconds)
            pl_peak = max(pl_peak, peak)
        pair_times = []
        for _ in range(args.repeat):
            seconds, _ = _run(base)
            pair_times.append(seconds)
        block = json.loads(out.read_text())["metrics"]["error"]
    best_pl, best_pair = min(pl_times), min(pair_times)
    print(
        f"plackett-luce (1 fit): {', '.join(f'{t:.2f}' for t in pl_times)} s "
        f"(best {best_pl:.2f} s; target < 5 s); peak memory {pl_peak:.0f} MB (all children)"
    )
    print(
        f"pairwise signed-rank (91 pairs): {', '.join(f'{t:.2f}' for t in pair_times)} s "
        f"(best {best_pair:.2f} s); ratio pairwise / plackett-luce {best_pair / best_pl:.2f}"
    )
    joint = block["joint"]
    top = sorted(joint["p_best"].items(), key=lambda x: -x[1])[:4]
    print("P(best) = P(w_k largest): " + ", ".join(f"{s} {p:.3f}" for s, p in top))
    wins = joint.get("p_wins_next", {})
    top = sorted(wins.items(), key=lambda x: -x[1])[:4]
    print("P(wins next data set) = E[w]: " + ", ".join(f"{s} {p:.3f}" for s, p in top))
    print(f"chain: {block['chain']}")
    print(f"load after: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
