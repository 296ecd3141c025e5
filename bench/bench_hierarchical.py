"""Benchmark: isbetter's hierarchical model against baycomp's HierarchicalTest (Stan).

Fits nbc vs aode on the full UCI data (54 data sets x 10 runs x 10 folds, rope 0.01)
with baycomp 1.0.3 (pystan 3, 4 chains x 1000 draws after 1000 warm-up) and with
isbetter at its default settings (4 chains x 2000 draws after 500 tuning, nutpie with
low-rank mass matrix adaptation), and
prints wall times, the minimum effective sample sizes of delta0 and nu, the
probabilities and the speed ratio.

Run (from the repository root; needs `pip install isbetter[bench] pystan`)::

    python bench/bench_hierarchical.py [--skip-baycomp] [--repeats 3]

baycomp writes ``last-sample.pickle`` into the working directory and reuses it
for identical data; the script runs it in a temporary directory and removes the
pickle before each fit, so every baycomp fit really samples.
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
import warnings
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "data" / "uci_benavoli2017" / "uci_cv_accuracy_long.csv"


def _ess_min(idata, names):
    import arviz as az

    ess = az.ess(idata, var_names=list(names), method="bulk")
    return {n: float(np.min(ess[n].to_numpy())) for n in names}


def run_baycomp(x: np.ndarray, y: np.ndarray, seed: int) -> dict:
    """One baycomp HierarchicalTest fit; captures the Stan fit for the ESS."""
    import arviz as az
    import stan
    from baycomp import HierarchicalTest

    captured = {}
    orig_build = stan.build

    class _Proxy:
        def __init__(self, model):
            self._model = model

        def sample(self, **kwargs):
            t0 = time.perf_counter()
            fit = self._model.sample(**kwargs)
            captured["sample_time"] = time.perf_counter() - t0
            captured["fit"] = fit
            return fit

    def build(*args, **kwargs):
        t0 = time.perf_counter()
        model = orig_build(*args, **kwargs)
        captured["build_time"] = time.perf_counter() - t0
        return _Proxy(model)

    stan.build = build
    cwd = os.getcwd()
    try:
        with tempfile.TemporaryDirectory() as tmp:
            os.chdir(tmp)
            t0 = time.perf_counter()
            # baycomp: x = first system (nbc), y = second (aode); it models y - x
            post = HierarchicalTest(x, y, 0.01, runs=10, chains=4, nsamples=1000, random_state=seed)
            wall = time.perf_counter() - t0
    finally:
        os.chdir(cwd)
        stan.build = orig_build
    idata = az.from_pystan(posterior=captured["fit"])
    p_left, p_rope, p_right = post.probs()
    return {
        "wall": wall,
        "build": captured.get("build_time", float("nan")),
        "sample": captured.get("sample_time", float("nan")),
        "ess": _ess_min(idata, ("delta0", "nu")),
        "divergences": int(idata.sample_stats["diverging"].to_numpy().sum()),
        # baycomp's "left" is the first system (nbc) better
        "probs": (p_left, p_rope, p_right),
    }


def run_isbetter(paired, model, seed: int) -> dict:
    t0 = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("default")
        res = model.fit(paired, rope=0.01, rng=seed)
    wall = time.perf_counter() - t0
    return {
        "wall": wall,
        "ess": _ess_min(res.idata, ("delta0", "nu")),
        "divergences": res.diagnostics.divergences,
        "r_hat_max": res.diagnostics.r_hat_max,
        "probs": res.probabilities().as_tuple(),
        "predictive": res.predictive.as_tuple(),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--skip-baycomp", action="store_true")
    parser.add_argument("--repeats", type=int, default=3, help="isbetter fits after the first")
    parser.add_argument("--baycomp-repeats", type=int, default=2)
    parser.add_argument("--backend", default="auto")
    args = parser.parse_args()

    from isbetter import read_scores
    from isbetter.cv.hierarchical.model import HierarchicalModel

    table = read_scores(DATA, dataset="dataset_id", system="classifier", score="accuracy")
    paired = table.paired("nbc", "aode")
    wide = table.data.pivot_table(
        index=["dataset", "run", "fold"], columns="system", values="accuracy", sort=False
    )
    x = np.vstack([wide.loc[ds]["nbc"].to_numpy() for ds in paired.datasets])
    y = np.vstack([wide.loc[ds]["aode"].to_numpy() for ds in paired.datasets])

    print(f"data: nbc vs aode, {x.shape[0]} data sets x {x.shape[1]} scores, rope 0.01")
    print(f"load average before: {os.getloadavg()}")
    t0 = time.perf_counter()
    model = HierarchicalModel(paired.n_datasets, backend=args.backend)
    first = run_isbetter(paired, model, seed=1)
    first_total = time.perf_counter() - t0
    print(
        f"isbetter[{model.backend}, {model.parameterization}] first fit incl. compile: "
        f"{first_total:.1f} s; probs {np.round(first['probs'], 4)}; ESS {first['ess']}; "
        f"divergences {first['divergences']}; R-hat max {first['r_hat_max']:.4f}"
    )
    later = []
    for i in range(args.repeats):
        r = run_isbetter(paired, model, seed=2 + i)
        later.append(r)
        print(
            f"isbetter fit {i + 2} (compiled model reused): {r['wall']:.2f} s; probs "
            f"{np.round(r['probs'], 4)}; predictive {np.round(r['predictive'], 4)}; "
            f"ESS {r['ess']}; divergences {r['divergences']}; R-hat max {r['r_hat_max']:.4f}"
        )
    per_fit = float(np.mean([r["wall"] for r in later])) if later else first_total
    ess_is = {k: float(np.mean([r["ess"][k] for r in later or [first]])) for k in ("delta0", "nu")}
    print(f"isbetter per fit (mean of reused fits): {per_fit:.2f} s; mean min ESS {ess_is}")

    if args.skip_baycomp:
        return
    bay = []
    for i in range(args.baycomp_repeats):
        b = run_baycomp(x, y, seed=1 + i)
        bay.append(b)
        print(
            f"baycomp fit {i + 1}: wall {b['wall']:.1f} s (stan.build {b['build']:.1f} s, "
            f"sampling {b['sample']:.1f} s); probs (nbc better, rope, aode better) "
            f"{np.round(b['probs'], 4)}; ESS {b['ess']}; divergences {b['divergences']}"
        )
    # per-fit time of baycomp: wall time minus the Stan compilation (stan.build; httpstan
    # caches the compiled program after the first build), averaged over all fits
    bay_fit = float(np.mean([b["wall"] - b["build"] for b in bay]))
    ess_bc = {k: float(np.mean([b["ess"][k] for b in bay])) for k in ("delta0", "nu")}
    print(f"baycomp per fit: {bay_fit:.1f} s; mean min ESS {ess_bc}")
    print(f"load average after: {os.getloadavg()}")
    print(
        f"speed ratio baycomp / isbetter per fit: {bay_fit / per_fit:.1f}x; "
        f"first fit incl. compile: {bay[0]['wall'] / first_total:.1f}x"
    )
    print(
        "ESS ratio isbetter / baycomp: "
        + ", ".join(f"{k} {ess_is[k] / ess_bc[k]:.2f}" for k in ("delta0", "nu"))
    )
    print(
        "ESS per second ratio: "
        + ", ".join(
            f"{k} {(ess_is[k] / per_fit) / (ess_bc[k] / bay_fit):.0f}x" for k in ("delta0", "nu")
        )
    )


if __name__ == "__main__":
    main()
