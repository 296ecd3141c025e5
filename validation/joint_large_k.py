r"""What a joint fit costs as the number of systems K grows: per gradient, per draw, in all.

The scores are ``bench/bench_rank_joint.py``'s simulated ones (K systems 0..K-1 ROPEs
apart, q data sets, 100 folds, seed 1), fitted as ``isbetter.rank(..., method="joint",
rope=0.01, rng=1)`` fits them (:func:`isbetter.cv.joint.model.joint_fit`).

* ``kernel``: for each K, the number of sampled coordinates and the time of one log
  density + gradient evaluation of the compiled kernel (the numba function itself, at
  PyMC's jittered initial point), for the components form and the shared forms.
* ``fit``: one fit per K and setting, one JSON line each: wall and CPU seconds (all
  threads; the compiled density already loaded), nutpie's per-draw statistics after
  tuning (mean tree depth, mean leapfrog steps, step size, divergences), the package's
  R-hat / bulk and tail ESS, the kernel's seconds per evaluation and ``evals`` = draws x
  chains x mean leapfrog steps (the tuning steps not counted: nutpie does not return
  them here).

Usage (from the repository root)::

    ISBETTER_CACHE_DIR=/tmp/c python -m validation.joint_large_k kernel --systems 5 10 20 30
    ISBETTER_CACHE_DIR=/tmp/c nice -n 10 python -m validation.joint_large_k fit \
        --systems 10 20 --chains 2 --draws 300 --tune 300 --target-accept 0.9 \
        --mass-matrix low_rank --out /tmp/fits.jsonl
    python -m validation.joint_large_k summary /tmp/fits.jsonl
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
PRIORS = ("components", "huang-wand", "default")


def _simulated_table(k: int, q: int, folds: int) -> Any:
    """Return bench_rank_joint's simulated scores of `k` systems on `q` data sets."""
    from isbetter import read_scores

    spec = importlib.util.spec_from_file_location(
        "bench_rank_joint", ROOT / "bench" / "bench_rank_joint.py"
    )
    assert spec is not None and spec.loader is not None
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "scores.csv"
        bench._simulate(k, q, folds, path)
        return read_scores(path, run=None, score="accuracy")


def _priors(name: str) -> Any:
    from isbetter.cv.joint.spec import JointPriors

    if name == "components":
        return JointPriors()
    if name == "huang-wand":
        return JointPriors(spread_prior="huang-wand", tails="shared")
    return JointPriors(spread_prior="inverse-wishart", tails="shared")


def kernel_cost(k: int, q: int, folds: int, priors: str, repeat: int = 200) -> tuple[int, float]:
    """Return the coordinates and the seconds of one log density + gradient (best of 7 runs)."""
    from isbetter.cv.joint import compiled_backend as cb
    from isbetter.cv.joint.spec import prepare

    table = _simulated_table(k, q, folds)
    prepared = prepare(table, table.systems, rope=0.01, priors=_priors(priors))
    buffer = cb._buffer(prepared.model_data(_priors(priors)))
    kernel = cb._kernel_of(cb._kernels(), buffer)
    n_dim = int(cb._n_dim(buffer))
    x = cb._initial_point(n_dim, 1)
    grad = np.empty(n_dim)
    if not np.isfinite(kernel(x, buffer, grad)):
        raise RuntimeError(f"K = {k}: the initial point has density 0")
    times = []
    for _ in range(7):
        start = time.perf_counter()
        for _ in range(repeat):
            kernel(x, buffer, grad)
        times.append((time.perf_counter() - start) / repeat)
    return n_dim, float(np.min(times))  # the least disturbed by other processes


def fit_line(args: argparse.Namespace, k: int) -> dict[str, Any]:
    """Fit the simulated scores of `k` systems once; return the JSON line."""
    from isbetter.cv.joint.compiled_backend import load_density
    from isbetter.cv.joint.model import NutsSettings, joint_fit

    start = time.perf_counter()
    load_density()
    load_s = time.perf_counter() - start
    n_dim, cost = kernel_cost(k, args.datasets, args.folds, args.priors)
    table = _simulated_table(k, args.datasets, args.folds)
    nuts = NutsSettings(
        mass_matrix=args.mass_matrix, target_accept=args.target_accept, max_depth=args.max_depth
    )
    start, cpu = time.perf_counter(), time.process_time()
    fit = joint_fit(
        table,
        rope=0.01,
        priors=_priors(args.priors),
        draws=args.draws,
        tune=args.tune,
        chains=args.chains,
        rng=args.seed,
        nuts=nuts,
    )
    seconds, cpu = time.perf_counter() - start, time.process_time() - cpu
    stats = fit.idata.sample_stats
    steps = stats["n_steps"].to_numpy()
    diag = fit.diagnostics
    return {
        "K": k,
        "q": args.datasets,
        "priors": args.priors,
        "mass_matrix": args.mass_matrix,
        "target_accept": fit.settings["target_accept"],
        "max_depth": args.max_depth,
        "chains": args.chains,
        "draws": args.draws,
        "tune": args.tune,
        "coords": n_dim,
        "load_s": round(load_s, 2),
        "seconds": round(seconds, 1),
        "cpu_s": round(cpu, 1),  # all threads: on a machine of its own, about seconds x cores
        "tree_depth": float(stats["depth"].to_numpy().mean()),
        "n_steps": float(steps.mean()),
        "max_depth_hits": float((stats["maxdepth_reached"].to_numpy()).mean()),
        "step_size": float(stats["step_size"].to_numpy().mean()),
        "divergences": int(diag.divergences),
        "r_hat": float(diag.r_hat_max),
        "ess_bulk": float(diag.ess_bulk_min),
        "ess_tail": float(diag.ess_tail_min),
        "converged": bool(diag.converged),
        "cost_per_eval_s": cost,
        "evals": float(steps.sum()),
        "evals_x_cost_s": float(steps.sum() * cost),
        "order": [
            str(s) for s in np.asarray(fit.data.systems)[np.argsort(-fit.effects.mean(axis=(0, 1)))]
        ],
    }


def _summary(paths: list[str]) -> None:
    cols = ("K", "priors", "mass_matrix", "target_accept", "max_depth", "chains", "draws")
    cols += ("tune", "coords", "seconds", "cpu_s", "tree_depth", "n_steps", "step_size")
    cols += ("cost_per_eval_s", "r_hat", "ess_bulk", "divergences")
    print(" | ".join(cols))
    for path in paths:
        for line in Path(path).read_text().splitlines():
            row = json.loads(line)
            cells = []
            for c in cols:
                v = row.get(c)
                if c == "cost_per_eval_s":
                    cells.append(f"{1e3 * v:.3f} ms")
                elif isinstance(v, float):
                    cells.append(f"{v:.3g}")
                else:
                    cells.append(str(v))
            print(" | ".join(cells))


def main(argv: list[str] | None = None) -> None:
    """Run the command line (the module's docstring)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    for name in ("kernel", "fit"):
        p = sub.add_parser(name)
        p.add_argument("--systems", type=int, nargs="+", required=True)
        p.add_argument("--datasets", type=int, default=20)
        p.add_argument("--folds", type=int, default=100)
        p.add_argument("--priors", choices=PRIORS, default="components")
    fit = sub.choices["fit"]
    fit.add_argument("--chains", type=int, default=4)
    fit.add_argument("--draws", type=int, default=None)
    fit.add_argument("--tune", type=int, default=None)
    fit.add_argument("--target-accept", type=float, default=None)
    fit.add_argument("--mass-matrix", default="diagonal")
    fit.add_argument("--max-depth", type=int, default=None)
    fit.add_argument("--seed", type=int, default=1)
    fit.add_argument("--out", required=True)
    summary = sub.add_parser("summary")
    summary.add_argument("paths", nargs="+")
    args = parser.parse_args(argv)
    if args.command == "summary":
        _summary(args.paths)
        return
    if args.command == "kernel":
        for k in args.systems:
            n_dim, cost = kernel_cost(k, args.datasets, args.folds, args.priors)
            print(f"K = {k:3d}  {args.priors}: {n_dim:5d} coordinates, {1e3 * cost:8.3f} ms / eval")
            sys.stdout.flush()
        return
    for k in args.systems:
        row = fit_line(args, k)
        with open(args.out, "a") as out:
            out.write(json.dumps(row) + "\n")
        print(json.dumps(row))
        sys.stdout.flush()


if __name__ == "__main__":
    main()
