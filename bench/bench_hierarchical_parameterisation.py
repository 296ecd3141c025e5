"""Benchmark: the centred and the integrated parameterisation of the hierarchical model.

For q = 3, 10, 54 and 1000 data sets, each parameterisation at default settings
(4 chains x 2000 draws after 500 tuning, nutpie): compile time, fit time, bulk
ESS per second of delta0 and nu, divergences and R-hat, over ``--seeds`` fits;
for q = 10 also the accuracy against the independent oracle of
``tests/cv/test_hierarchical_oracle.py`` (largest |z| and mean z^2 of the 10
posterior means of delta_i and the 10 P(delta_i > rope), z in combined Monte
Carlo standard errors).

Data: q = 3, 10 the oracle test's study (10 runs x 10 folds, noisy, effects
0-0.045); q = 54 the UCI data (nbc vs aode, 10 x 10 folds); q = 1000 the
synthetic data of ``bench/bench_hierarchical_scaling.py`` (100 folds). Rope 0.01
(0.005 for q = 1000).

Run from the repository root::

    python bench/bench_hierarchical_parameterisation.py [--q 3 10 54 1000] [--seeds 3]
"""

from __future__ import annotations

import argparse
import importlib.util
import time
import warnings
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]


def _load(path: Path, name: str):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)  # type: ignore[union-attr]
    return module


ORACLE = _load(ROOT / "tests" / "test_hierarchical_oracle.py", "hierarchical_oracle")


def scores_for(q: int):
    """The data of each size (see the module docstring) and its rope."""
    if q == 54:
        from isbetter import read_scores

        path = ROOT / "data" / "uci_benavoli2017" / "uci_cv_accuracy_long.csv"
        table = read_scores(path, dataset="dataset_id", system="classifier", score="accuracy")
        return table.paired("nbc", "aode"), 0.01
    if q >= 100:
        scaling = _load(ROOT / "bench" / "bench_hierarchical_scaling.py", "scaling")
        return scaling.synthetic(q, 100, seed=1), 0.005
    return ORACLE.study(q), 0.01


def _ess(idata, name: str) -> float:
    from isbetter.inference import diagnostics as mcmc

    x = idata.posterior[name].to_numpy()
    return float(mcmc.ess_bulk(x.reshape(x.shape[0], x.shape[1], 1))[0])


def run(q: int, parameterization: str, seeds: int, reference) -> dict:
    from isbetter.cv.hierarchical.model import HierarchicalModel

    scores, rope = scores_for(q)
    model = HierarchicalModel(q, parameterization=parameterization)  # type: ignore[arg-type]
    t0 = time.perf_counter()
    model.compile()
    row = {"q": q, "param": parameterization, "compile": time.perf_counter() - t0}
    fits, ess0, ess_nu, div, rhat, zmax, z2 = [], [], [], 0, 0.0, [], []
    for seed in range(seeds + 1):  # the first fit warms up (numba caches), not timed
        t0 = time.perf_counter()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            res = model.fit(scores, rope=rope, rng=seed)
        elapsed = time.perf_counter() - t0
        if seed == 0:
            continue
        fits.append(elapsed)
        ess0.append(_ess(res.idata, "delta0") / elapsed)
        ess_nu.append(_ess(res.idata, "nu") / elapsed)
        div += res.diagnostics.divergences
        rhat = max(rhat, res.diagnostics.r_hat_max)
        if reference is not None:
            z = ORACLE.z_scores(res, reference, rope)
            both = np.concatenate([z["mean"], z["prob"]])
            zmax.append(np.abs(both).max())
            z2.append(np.mean(both**2))
    row.update(
        fit=np.mean(fits),
        ess_delta0_s=np.mean(ess0),
        ess_nu_s=np.mean(ess_nu),
        divergences=div,
        rhat=rhat,
        zmax=max(zmax) if zmax else float("nan"),
        z2=np.mean(z2) if z2 else float("nan"),
    )
    return row


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--q", type=int, nargs="+", default=[3, 10, 54, 1000])
    parser.add_argument("--seeds", type=int, default=3, help="timed fits per cell")
    parser.add_argument("--params", nargs="+", default=["centred", "integrated"])
    args = parser.parse_args()
    rows = []
    for q in args.q:
        reference = None
        if q == 10:
            t0 = time.perf_counter()
            reference = ORACLE.oracle(scores_for(10)[0], 0.01)
            print(f"oracle for q = 10: {time.perf_counter() - t0:.1f} s", flush=True)
        for parameterization in args.params:
            rows.append(run(q, parameterization, args.seeds, reference))
            print(rows[-1], flush=True)
    head = (
        f"{'q':>5} {'param':>10} {'compile s':>9} {'fit s':>7} {'ESS(d0)/s':>9} "
        f"{'ESS(nu)/s':>9} {'diverg.':>7} {'R-hat':>6} {'max|z|':>6} {'mean z2':>7}"
    )
    print(f"\n{args.seeds} timed fits per row (divergences summed; z: q = 10 only)\n{head}")
    for r in rows:
        print(
            f"{r['q']:>5} {r['param']:>10} {r['compile']:>9.1f} {r['fit']:>7.1f} "
            f"{r['ess_delta0_s']:>9.0f} {r['ess_nu_s']:>9.0f} {r['divergences']:>7d} "
            f"{r['rhat']:>6.3f} {r['zmax']:>6.2f} {r['z2']:>7.2f}"
        )


if __name__ == "__main__":
    main()
