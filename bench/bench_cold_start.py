"""Benchmark: the README's main command from a fresh process, cold and warm cache.

Runs ``isbetter cv`` on the 54 UCI data sets (nbc vs aode, rope 0.01, seed 1) as a
user does — a new process each time — and prints the wall time of:

1. a cold cache (an empty ``ISBETTER_CACHE_DIR``: compiles the model);
2. a warm cache (the same command again);
3. a warm cache with another number of data sets (the first 30 of the 54);
4. a second hierarchical fit in one process (what every further pair of a ranking costs);

beside baycomp's ``HierarchicalTest`` on the same data in a fresh process, its Stan
model cached by httpstan (first a run that builds it, then the timed run), when
baycomp is installed (``pip install -e ".[bench]"``).

Run from the repository root::

    python bench/bench_cold_start.py [--repeats 1]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "data" / "uci_benavoli2017" / "uci_cv_accuracy_long.csv"
COMMAND = [
    "cv", "--dataset-col", "dataset_id", "--system-col", "classifier", "--metric",
    "accuracy", "--a", "nbc", "--b", "aode", "--rope", "0.01", "--seed", "1",
]  # fmt: skip
ISBETTER = [sys.executable, "-m", "isbetter"]

_SECOND_FIT = """
import time, warnings
import isbetter
from isbetter.cv.hierarchical.model import HierarchicalModel
table = isbetter.read_scores({data!r}, dataset="dataset_id", system="classifier",
                             score="accuracy")
pairs = [table.paired("nbc", "aode"), table.paired("nbc", "hnb")]
model = HierarchicalModel(pairs[0].n_datasets)
times = []
for seed, pair in enumerate(pairs):
    start = time.perf_counter()
    model.fit(pair, rope=0.01, rng=seed)
    times.append(time.perf_counter() - start)
print(f"{{times[0]:.2f}} {{times[1]:.2f}}")
"""

_BAYCOMP = """
import os, tempfile, time
import numpy as np
import pandas as pd
from baycomp import HierarchicalTest
frame = pd.read_csv({data!r})
wide = frame.pivot_table(index=["dataset_id", "run", "fold"], columns="classifier",
                         values="accuracy").sort_index()
q = frame["dataset_id"].nunique()
x = wide["nbc"].to_numpy().reshape(q, -1)
y = wide["aode"].to_numpy().reshape(q, -1)
os.chdir(tempfile.mkdtemp())  # baycomp writes last-sample.pickle into the working directory
start = time.perf_counter()
post = HierarchicalTest(x, y, 0.01, runs=10, chains=4, nsamples=1000, random_state=1)
print(f"{{time.perf_counter() - start:.2f}}", *np.round(post.probs(), 4))
"""


def wall(argv: list[str], env: dict[str, str]) -> tuple[float, str]:
    start = time.perf_counter()
    done = subprocess.run(argv, env=env, capture_output=True, text=True, check=False)
    elapsed = time.perf_counter() - start
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(argv[:4])} failed:\n{done.stderr[-2000:]}")
    return elapsed, done.stdout


def probabilities(report: str) -> str:
    rows = [line for line in report.splitlines() if line.startswith(("nbc", "pract", "aode"))]
    return " / ".join(line.split()[-2] for line in rows)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=1, help="runs of each warm case")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        env = {**os.environ, "ISBETTER_CACHE_DIR": str(Path(tmp) / "cache")}
        subset = Path(tmp) / "uci_30.csv"
        import pandas as pd

        frame = pd.read_csv(DATA)
        keep = sorted(frame["dataset_id"].unique())[:30]
        frame[frame["dataset_id"].isin(keep)].to_csv(subset, index=False)

        rows: list[tuple[str, float, str]] = []
        seconds, out = wall([*ISBETTER, COMMAND[0], str(DATA), *COMMAND[1:]], env)
        rows.append(("isbetter cv, cold cache (compiles)", seconds, probabilities(out)))
        print(*rows[-1], flush=True)
        for _ in range(args.repeats):
            seconds, out = wall([*ISBETTER, COMMAND[0], str(DATA), *COMMAND[1:]], env)
            rows.append(("isbetter cv, warm cache", seconds, probabilities(out)))
        for _ in range(args.repeats):
            seconds, out = wall([*ISBETTER, COMMAND[0], str(subset), *COMMAND[1:]], env)
            rows.append(("isbetter cv, warm cache, 30 data sets", seconds, probabilities(out)))
        _, out = wall([sys.executable, "-c", _SECOND_FIT.format(data=str(DATA))], env)
        first, second = (float(v) for v in out.split())
        rows.append(("isbetter fit in a running process (first)", first, ""))
        rows.append(("isbetter fit in a running process (second)", second, ""))
        try:
            import baycomp  # noqa: F401
        except ImportError:
            rows.append(("baycomp HierarchicalTest", float("nan"), "not installed (.[bench])"))
        else:
            wall([sys.executable, "-c", _BAYCOMP.format(data=str(DATA))], env)  # builds Stan
            seconds, out = wall([sys.executable, "-c", _BAYCOMP.format(data=str(DATA))], env)
            inner, *probs = out.strip().splitlines()[-1].split()  # Stan prints progress first
            rows.append(("baycomp HierarchicalTest, fresh process", seconds, " / ".join(probs)))
            rows.append(("baycomp HierarchicalTest, its fit alone", float(inner), ""))

    baycomp_wall = next((s for name, s, _ in rows if name.endswith("fresh process")), None)
    print(f"{'case':46s} {'wall s':>8s}  {'vs baycomp':>10s}  P(nbc) / P(rope) / P(aode)")
    for name, seconds, probs in rows:
        ratio = f"{baycomp_wall / seconds:9.1f}x" if baycomp_wall and "isbetter" in name else ""
        print(f"{name:46s} {seconds:8.2f}  {ratio:>10s}  {probs}")
    print(f"machine: {os.cpu_count()} cores, load average {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
