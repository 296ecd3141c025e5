"""Benchmark: nutpie's mass matrix adaptations for the centred hierarchical model.

Above 20 data sets ``parameterization="auto"`` samples the centred model unless the
route foresees the funnel (:mod:`isbetter.cv.hierarchical.route`). This script fits
every study the route sends there with each of nutpie's adaptations — low-rank and
diagonal from the draws and their gradients (nutpie's default) after ``model.TUNE``
tuning steps, diagonal from the draws' variances (``model.CENTRED_MASS_MATRIX``) after
``model.DRAW_VARIANCE_TUNE`` — with the same seed, and prints per
study the CPU time, whether the fit was flagged (R-hat, ESS, divergences), the Monte
Carlo standard error of the reported probabilities (argmax counts; ESS-based, ArviZ)
and the probabilities; then the totals. The studies: the eight centred pairs of the five
UCI classifiers (rope 0.01, seeds 1, 2 and 3) and simulated ones of 30, 54, 100 and 200
data sets (normal and t_3 spreads of 0.75 to 1.5 likelihood widths, two seeds each;
``bench_refit_cliff.simulated``), those whose ratio is at or above ``route.FUNNEL_RATIO``.

The evidence for ``model.CENTRED_MASS_MATRIX``. CPU seconds are more trustworthy than
wall seconds on a shared machine; the load average is printed.

Run from the repository root (~5 minutes; ``--quick``: the UCI pairs alone, ~1 minute)::

    python bench/bench_mass_matrix.py [--quick]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
import warnings
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))  # bench_refit_cliff's studies
from bench_refit_cliff import simulated, uci_pairs  # noqa: E402

ADAPTATIONS = ("low_rank", "diagonal", "draw_variance")


def argmax_mcse(res) -> float:
    """The largest ESS-based Monte Carlo standard error of the three argmax counts."""
    import arviz as az

    shape = res.idata.posterior["delta0"].shape  # (chain, draw)
    regions = res.posterior.region_masses(res.rope).argmax(axis=1).reshape(shape)
    counts = np.stack([regions == k for k in range(3)], axis=-1).astype(float)
    return float(az.mcse(az.convert_to_dataset({"c": counts}), method="mean")["c"].max())


def main() -> None:
    from isbetter.cv.hierarchical.model import HierarchicalModel
    from isbetter.cv.hierarchical.priors import HierarchicalPriors
    from isbetter.cv.hierarchical.route import FUNNEL_RATIO, predict_parameterization
    from isbetter.cv.hierarchical.spec import prepare

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="the UCI pairs only")
    args = parser.parse_args()
    print(f"{os.cpu_count()} CPUs; load average {os.getloadavg()[0]:.2f}")
    priors = HierarchicalPriors()
    models: dict[tuple[int, str], HierarchicalModel] = {}
    cpu_of: dict[str, float] = dict.fromkeys(ADAPTATIONS, 0.0)
    flagged_of: dict[str, int] = dict.fromkeys(ADAPTATIONS, 0)
    mcse_of: dict[str, list[float]] = {a: [] for a in ADAPTATIONS}

    def model(q: int, adaptation: str) -> HierarchicalModel:
        if (q, adaptation) not in models:
            m = HierarchicalModel(q, parameterization="centred").compile()
            m.mass_matrix = adaptation  # the adaptation under test (and its tuning steps)
            models[q, adaptation] = m
        return models[q, adaptation]

    def one(label: str, scores, seed: int) -> None:
        prepared = prepare(scores, 0.01, None, priors)
        ratio = predict_parameterization(prepared, prepared.model_data(priors)).ratio
        if not ratio >= FUNNEL_RATIO:  # the route sends it to the integrated model
            return
        line = [f"{label:>28} ratio {ratio:4.2f}"]
        for adaptation in ADAPTATIONS:
            cpu = time.process_time()
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # flagged fits are counted, not refitted
                res = model(scores.n_datasets, adaptation).fit(scores, rope=0.01, rng=seed)
            cpu = time.process_time() - cpu
            flagged = not res.diagnostics.converged
            mcse = argmax_mcse(res)
            cpu_of[adaptation] += cpu
            flagged_of[adaptation] += flagged
            mcse_of[adaptation].append(mcse)
            line.append(
                f"{adaptation} {cpu:4.2f} s{' FLAGGED' if flagged else ''} MCSE {mcse:.4f} "
                f"p {res.p_a_better:.3f}/{res.p_rope:.3f}/{res.p_b_better:.3f}"
            )
        print(" | ".join(line), flush=True)

    for name, scores in uci_pairs():
        for seed in (1, 2, 3):
            one(f"UCI {name} seed {seed}", scores, seed)
    if not args.quick:
        for q in (30, 54, 100, 200):
            for dist in ("normal", "t3"):
                for spread in (0.75, 1.0, 1.5):
                    for rep in range(2):
                        seed = 1000 * q + 100 * int(10 * spread) + rep
                        one(
                            f"q {q} {dist} spread {spread} #{rep}",
                            simulated(q, spread, seed, dist),
                            rep,
                        )
    for adaptation in ADAPTATIONS:
        mcse = mcse_of[adaptation]
        print(
            f"{adaptation:>13}: {cpu_of[adaptation]:6.1f} CPU s for {len(mcse)} fits, "
            f"{flagged_of[adaptation]} flagged; MCSE of the probabilities mean "
            f"{statistics.mean(mcse):.4f}, max {max(mcse):.4f}"
        )
    print(f"load average {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
