"""Benchmark: the joint model against the pairwise route, side by side, from fresh processes.

Runs ``isbetter rank ... --format json`` twice as a user would — the pairwise route
(the hierarchical model for each of the K(K-1)/2 pairs, local processes) and
``--method joint`` (one fit) — on the five UCI classifiers (54 data sets x 10 runs x
10 folds, ROPE 0.01, seed 1) or, with ``--simulate``, on simulated scores of K
systems on q data sets. Prints the wall time of each command and their ratio, both
orders, the joint process's peak memory, and, for every pair, both sets of
probabilities and relations, marking the pairs where the pairwise fit is decisive
(largest probability >= 0.9) and where the two relations differ.

Run: ``python bench/bench_rank_joint.py [--simulate K Q FOLDS] [--skip-pairwise]``.
Warm caches (run it twice) for the compiled-model timings.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "data" / "uci_benavoli2017" / "uci_cv_accuracy_long.csv"
UCI = ["--dataset-col", "dataset_id", "--system-col", "classifier", "--metric", "accuracy"]


def _simulate(k: int, q: int, folds: int, path: Path) -> None:
    """Scores of K systems with effects 0..K-1 ROPEs apart, data-set deviations and noise."""
    import pandas as pd

    rng = np.random.default_rng(1)
    effects = 0.01 * np.arange(k)
    level = rng.uniform(0.6, 0.9, size=(q, 1, 1))
    fold = rng.normal(0, 0.02, size=(q, 1, folds))
    scores = level + fold + effects[None, :, None] + rng.normal(0, 0.005, size=(q, k, 1))
    scores = scores + rng.normal(0, 0.01, size=(q, k, folds))
    i, m, f = np.meshgrid(np.arange(q), np.arange(k), np.arange(folds), indexing="ij")
    frame = pd.DataFrame(
        {
            "dataset": [f"d{x}" for x in i.ravel()],
            "system": [f"s{x:02d}" for x in m.ravel()],
            "fold": f.ravel() + 1,
            "accuracy": scores.ravel(),
        }
    )
    frame.to_csv(path, index=False)


def _run(data: Path, columns: list[str], extra: list[str], out: Path) -> float:
    cmd = [sys.executable, "-m", "isbetter", "rank", str(data), *columns, "--rope", "0.01"]
    cmd += ["--seed", "1", "--quiet", "--format", "json", "--output", str(out), *extra]
    start = time.perf_counter()
    subprocess.run(cmd, check=True, capture_output=True, text=True)
    return time.perf_counter() - start


def _pairs(block: dict) -> dict[tuple[str, str], dict]:
    return {(p["a"], p["b"]): p for p in block["pairs"]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--simulate", type=int, nargs=3, metavar=("K", "Q", "FOLDS"))
    parser.add_argument("--skip-pairwise", action="store_true", help="time the joint route only")
    args = parser.parse_args()
    load = os.getloadavg()[0]
    print(f"machine: {platform.machine()}, {os.cpu_count()} CPUs, load {load:.2f}")
    with tempfile.TemporaryDirectory() as tmp:
        data, columns = DATA, UCI
        if args.simulate:
            data = Path(tmp) / "scores.csv"
            _simulate(*args.simulate, data)
            columns = ["--run-col", "", "--metric", "accuracy"]
        joint_out, pair_out = Path(tmp) / "joint.json", Path(tmp) / "pairwise.json"
        t_joint = _run(data, columns, ["--method", "joint"], joint_out)
        joint = json.loads(joint_out.read_text())
        metric = next(iter(joint["metrics"]))
        jb = joint["metrics"][metric]
        peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024  # KiB on Linux
        print(f"joint:    {t_joint:7.1f} s   {jb['order']}   peak memory {peak:.0f} MB")
        j = jb["joint"]
        print("  P(best): " + ", ".join(f"{s} {p:.3f}" for s, p in j["p_best"].items()))
        for o in j["top_orders"][:3]:
            print(f"  order {o['order']}  p = {o['p']:.3f}")
        if args.skip_pairwise:
            return
        t_pair = _run(data, columns, [], pair_out)
        pb = json.loads(pair_out.read_text())["metrics"][metric]
        print(f"pairwise: {t_pair:7.1f} s   {pb['order']}")
        print(f"ratio pairwise / joint: {t_pair / t_joint:.1f}")
        print(f"load at the end: {os.getloadavg()[0]:.2f}")
        print("\npair            pairwise (>, ≈, <) rel   joint (>, ≈, <) rel   decisive differ")
        jp, pp = _pairs(jb), _pairs(pb)
        for key, p in pp.items():
            q = jp[key]
            probs = (p["p_a_better"], p["p_rope"], p["p_b_better"])
            decisive = max(probs) >= 0.9
            differ = decisive and p["relation"] != q["relation"]
            print(
                f"{key[0]:>6} {key[1]:<6}  {probs[0]:.3f} {probs[1]:.3f} {probs[2]:.3f} "
                f"{p['symbol']:>2}   {q['p_a_better']:.3f} {q['p_rope']:.3f} "
                f"{q['p_b_better']:.3f} {q['symbol']:>2}   {'yes' if decisive else '':>3} "
                f"{'DIFFER' if differ else ''}"
            )


if __name__ == "__main__":
    main()
