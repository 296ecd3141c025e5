"""Benchmark: the hierarchical model's route for near-identical systems (no refit cliff).

Above 20 data sets ``parameterization="auto"`` used to sample the centred model
first and refit with the integrated one when the centred fit was flagged, which
it is for two near-identical systems (sigma_0 near 0: the funnel). It now
predicts the funnel from the data (:mod:`isbetter.cv.hierarchical.route`) and
starts with the integrated model there. This script times both routes side by
side, in one process with a warm cache (the old route emulated by forcing
``parameterization="centred"`` and, when that fit is flagged, refitting with
``"integrated"`` and the same seed, as the old code did):

1. 1000 data sets x 10 runs x 10 folds, x ~ N(0.8, 0.02), y = x + N(0.001, 0.01)
   (target: the fit under 15 s), with where the integrated fit's time goes;
2. the ten pairs of the five UCI classifiers (rope 0.01, seed 1), each pair by
   both routes, and ``isbetter rank`` on them as a fresh process (target < 10 s);
3. with ``--calibrate``: the ratio the route is chosen by beside whether the
   centred fit was flagged, for simulated studies and the UCI pairs (the evidence
   for ``route.FUNNEL_RATIO``; a few minutes).

The machine's load average is printed with every part: on a shared machine the
ratios new / old are more trustworthy than the seconds.

Run from the repository root::

    python bench/bench_refit_cliff.py [--parts 1000 uci] [--calibrate]
"""

from __future__ import annotations

import argparse
import itertools
import os
import resource
import subprocess
import sys
import time
import warnings
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "data" / "uci_benavoli2017" / "uci_cv_accuracy_long.csv"


def load() -> str:
    return "load average " + " ".join(f"{v:.2f}" for v in os.getloadavg())


def near_identical(q: int, seed: int = 0):
    """The issue's study: x ~ N(0.8, 0.02), y = x + N(0.001, 0.01), 10 runs x 10 folds."""
    from isbetter import from_arrays

    g = np.random.default_rng(seed)
    x = g.normal(0.8, 0.02, size=(q, 100))
    y = x + g.normal(0.001, 0.01, size=(q, 100))
    return from_arrays(x, y, names=("x", "y"), runs=10).paired("x", "y")


def simulated(q: int, spread: float, seed: int, dist: str):
    """Differences with delta_i spread `spread` likelihood widths (normal or t_3), rho 0.1."""
    from isbetter import from_arrays

    g = np.random.default_rng(seed)
    rho = 0.1
    sd = g.uniform(0.01, 0.03, size=(q, 1))
    width = np.median(sd) * np.sqrt((1 + 99 * rho) / 100)
    z = g.standard_t(3, size=(q, 1)) if dist == "t3" else g.normal(size=(q, 1))
    shared = np.sqrt(rho) * g.normal(size=(q, 1))  # the folds' correlation 0.1
    d = 0.005 + spread * width * z + sd * (shared + np.sqrt(1 - rho) * g.normal(size=(q, 100)))
    x = g.uniform(0.7, 0.9, size=(q, 1)) + g.normal(0, 0.01, size=(q, 100))
    return from_arrays(x + d, x, names=("A", "B"), runs=10).paired("A", "B")


def uci_pairs():
    from isbetter import read_scores

    table = read_scores(DATA, dataset="dataset_id", system="classifier", score="accuracy")
    for a, b in itertools.combinations(sorted(table.systems), 2):
        yield f"{a}/{b}", table.paired(a, b)


class Clock:
    """Wall time and CPU time of this process (nutpie's chains are its threads)."""

    def __init__(self) -> None:
        self.wall, self.cpu = time.perf_counter(), time.process_time()

    def read(self) -> tuple[float, float]:
        return time.perf_counter() - self.wall, time.process_time() - self.cpu


class Routes:
    """The old and the new route for one number of data sets (compiled once)."""

    def __init__(self, q: int) -> None:
        from isbetter.cv.hierarchical.model import HierarchicalModel

        self.auto = HierarchicalModel(q).compile()
        self.centred = HierarchicalModel(q, parameterization="centred").compile()
        self.integrated = HierarchicalModel(q, parameterization="integrated").compile()

    def old(self, scores, rope: float, seed: int):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # the flagged fit warns; the route goes on
            clock = Clock()
            res = self.centred.fit(scores, rope=rope, rng=seed)
            refitted = not res.diagnostics.converged
            if refitted:
                res = self.integrated.fit(scores, rope=rope, rng=seed)
            return clock.read(), res, refitted

    def new(self, scores, rope: float, seed: int):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            clock = Clock()
            res = self.auto.fit(scores, rope=rope, rng=seed)
            return clock.read(), res, res.settings["refit_of"] is not None


def _probs(res) -> str:
    return "(" + ", ".join(f"{p:.4f}" for p in res.probabilities().as_tuple()) + ")"


def _choice(res) -> str:
    c = res.settings["parameterization_choice"]
    return "-" if c is None else f"{c['parameterization']} (ratio {c['ratio']:.3f})"


def part_1000(seeds: int) -> None:
    print(f"\n== 1000 data sets x 100 folds, near-identical systems ({load()})")
    scores = near_identical(1000)
    routes = Routes(1000)
    for seed in range(1, seeds + 1):
        t_old, r_old, refit = routes.old(scores, 0.01, seed)
        t_new, r_new, refit_new = routes.new(scores, 0.01, seed)
        print(
            f"seed {seed}: old route {_secs(t_old)} (refitted: {refit}) {_probs(r_old)}\n"
            f"        new route {_secs(t_new)}, {_choice(r_new)}, refitted: {refit_new} "
            f"{_probs(r_new)}\n        new/old {_ratio(t_new, t_old)} ({load()})"
        )
    _where_the_time_goes(scores, r_new, t_new[0])
    print(f"target < 15 s: {'met' if t_new[0] < 15 else 'MISSED'} ({load()})")


def _secs(t: tuple[float, float]) -> str:
    return f"{t[0]:6.1f} s wall ({t[1]:6.1f} s CPU)"


def _ratio(new: tuple[float, float], old: tuple[float, float]) -> str:
    return f"{new[0] / old[0]:.2f} wall, {new[1] / old[1]:.2f} CPU"


def _where_the_time_goes(scores, res, total: float) -> None:
    """Split an integrated fit into the route's prediction, sampling and the delta_i draws."""
    from isbetter.cv.hierarchical.compiled_backend import _log_density_function
    from isbetter.cv.hierarchical.numerics.quadrature import draw_deltas
    from isbetter.cv.hierarchical.priors import HierarchicalPriors
    from isbetter.cv.hierarchical.route import predict_parameterization
    from isbetter.cv.hierarchical.spec import prepare
    from isbetter.inference.sampling import diagnose

    if res.settings["parameterization"] != "integrated":
        return
    priors = HierarchicalPriors()
    prepared = prepare(scores, 0.01, None, priors)
    data = prepared.model_data(priors)
    t0 = time.perf_counter()
    predict_parameterization(prepared, data)
    t_route = time.perf_counter() - t0
    scale = prepared.scale
    delta0, std0, nu = res.delta0 / scale, res.std0 / scale, res.nu
    lik = tuple(data[k] for k in ("a", "w", "ssr", "xbar", "std_hi"))
    t0 = time.perf_counter()
    draw_deltas(delta0, std0, nu, lik, np.random.default_rng(0), bounded=prepared.bounded)
    t_draws = time.perf_counter() - t0
    # gradients at 300 posterior draws, in the sampler's coordinates (the cost varies with
    # them: where std0 is larger, fewer data sets share the prior's rule)
    d_hi, s_hi = float(data["delta0_hi"]), float(data["std0_hi"])
    picks = np.random.default_rng(0).choice(delta0.size, 300, replace=False)
    points = [
        np.array([np.log(n - 1), np.log((m + d_hi) / (d_hi - m)), np.log(s / (s_hi - s))])
        for m, s, n in zip(delta0[picks], std0[picks], nu[picks], strict=True)
    ]
    logp = _log_density_function("integrated", data, prepared.bounded)  # what nutpie calls
    logp(points[0])
    t0 = time.perf_counter()
    for x in points:
        logp(x)
    t_grad = (time.perf_counter() - t0) / len(points)
    s0 = float(np.median(std0))
    t0 = time.perf_counter()
    diagnose(res.idata, ("delta0", "std0", "nu", "delta"), backend="nutpie")
    t_diagnose = time.perf_counter() - t0
    steps = res.idata.sample_stats["n_steps"].to_numpy()
    settings = res.settings
    gradients = steps.mean() * (settings["draws"] + settings["tune"]) * settings["chains"]
    cores = min(settings["chains"], 2)
    q = scores.n_datasets
    print(
        f"where the new route's {total:.1f} s go: choosing the route {t_route:.2f} s; "
        f"drawing the {q} delta_i for {delta0.size} draws {t_draws:.1f} s (one core); "
        f"sampling ~ {gradients:.0f} gradients ({steps.mean():.1f} per draw) x "
        f"{t_grad * 1e3:.2f} ms at posterior draws ({t_grad / q * 1e6:.2f} us per data set) / "
        f"{cores} cores "
        f"= {gradients * t_grad / cores:.1f} s; posterior median std0 / median width "
        f"{s0 / float(np.median(_widths(data))):.3f}; diagnostics {t_diagnose:.1f} s"
    )


def _widths(data):
    from isbetter.cv.hierarchical.numerics.quadrature import likelihood_width

    return likelihood_width(data["a"], data["w"], data["ssr"])


def part_uci(repeat: int) -> None:
    print(f"\n== the ten UCI pairs, 54 data sets, rope 0.01, seed 1 ({load()})")
    routes = Routes(54)
    routes.new(next(uci_pairs())[1], 0.01, 1)  # warm-up (loads the kernels, starts nutpie)
    total_old, total_new = np.zeros(2), np.zeros(2)
    for name, scores in uci_pairs():
        t_old, r_old, refit = routes.old(scores, 0.01, 1)
        t_new, r_new, refit_new = routes.new(scores, 0.01, 1)
        total_old, total_new = total_old + t_old, total_new + t_new
        diff = np.max(
            np.abs(np.subtract(r_old.probabilities().as_tuple(), r_new.probabilities().as_tuple()))
        )
        print(
            f"{name:>11}: old {_secs(t_old)} (refitted: {refit!s:>5}) | new {_secs(t_new)}, "
            f"{_choice(r_new)}, refitted: {refit_new} | {_probs(r_new)} max |new - old| "
            f"{diff:.4f}"
        )
    print(
        f"ten fits in one process: old {_secs(tuple(total_old))}, new {_secs(tuple(total_new))}, "
        f"new/old {_ratio(tuple(total_new), tuple(total_old))} ({load()})"
    )
    cmd = [
        sys.executable, "-m", "isbetter", "rank", str(DATA), "--dataset-col", "dataset_id",
        "--system-col", "classifier", "--metric", "accuracy", "--rope", "0.01", "--seed", "1",
        "--quiet",
    ]  # fmt: skip
    for _ in range(repeat):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        t0 = time.perf_counter()
        subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
        wall = time.perf_counter() - t0
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu = (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime)
        print(
            f"isbetter rank (fresh process, new route): {_secs((wall, cpu))}; target < 10 s: "
            f"{'met' if wall < 10 else 'MISSED'} ({load()})"
        )


def calibrate() -> None:
    """The route's ratio beside whether the centred fit was flagged."""
    from isbetter.cv.hierarchical.model import HierarchicalModel
    from isbetter.cv.hierarchical.priors import HierarchicalPriors
    from isbetter.cv.hierarchical.route import FUNNEL_RATIO, predict_parameterization
    from isbetter.cv.hierarchical.spec import prepare

    print(f"\n== calibration: ratio at the mode vs the centred fit flagged ({load()})")
    priors = HierarchicalPriors()
    rows = []

    def one(label: str, scores, seed: int) -> None:
        prepared = prepare(scores, 0.01, None, priors)
        data = prepared.model_data(priors)
        ratio = predict_parameterization(prepared, data).ratio
        # the simpler statistic: the spread of the means against their standard errors
        spread = float(np.std(data["xbar"], ddof=1) / np.sqrt(np.mean(_widths(data) ** 2)))
        model = HierarchicalModel(scores.n_datasets, parameterization="centred")
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            res = model.fit(scores, rope=0.01, rng=seed)
        flagged = not res.diagnostics.converged
        rows.append((ratio, flagged, spread))
        print(
            f"{label:>32}: ratio {ratio:6.3f} (sd of the means / se {spread:5.2f}), centred "
            f"flagged: {flagged}",
            flush=True,
        )

    for name, scores in uci_pairs():
        one(f"UCI {name}", scores, 1)
    grid = [(q, dist) for q in (30, 54, 100, 200) for dist in ("normal", "t3")]
    for q, dist in grid:
        for spread in (0.0, 0.25, 0.5, 0.75, 1.0, 1.5):
            for rep in range(2):
                seed = 1000 * q + 100 * int(10 * spread) + rep
                one(f"q {q} {dist} spread {spread} #{rep}", simulated(q, spread, seed, dist), rep)
    for spread in (0.5, 0.75, 1.0):
        one(f"q 1000 normal spread {spread}", simulated(1000, spread, 7, "normal"), 1)
    for k, what in ((0, "ratio"), (2, "sd of the means / se")):
        flagged = [row[k] for row in rows if row[1]]
        fine = [row[k] for row in rows if not row[1]]
        overlap = sum(min(fine) <= row[k] <= max(flagged) for row in rows)
        print(
            f"{what}: flagged up to {max(flagged):.3f}, not flagged from {min(fine):.3f} up "
            f"({overlap} of {len(rows)} studies in between)"
        )
    below = [f for r, f, _ in rows if r < FUNNEL_RATIO]
    above = [f for r, f, _ in rows if r >= FUNNEL_RATIO]
    print(
        f"below FUNNEL_RATIO {FUNNEL_RATIO}: {sum(below)} of {len(below)} flagged, above: "
        f"{sum(above)} of {len(above)} ({load()})"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--parts", nargs="*", default=["1000", "uci"], choices=["1000", "uci"])
    parser.add_argument("--seeds", type=int, default=1, help="fits of the 1000-data-set study")
    parser.add_argument("--repeat", type=int, default=2, help="runs of the rank command")
    parser.add_argument("--calibrate", action="store_true")
    args = parser.parse_args()
    print(f"{os.cpu_count()} CPUs, Python {sys.version.split()[0]}; {load()}")
    if "1000" in args.parts:
        part_1000(args.seeds)
    if "uci" in args.parts:
        part_uci(args.repeat)
    if args.calibrate:
        calibrate()


if __name__ == "__main__":
    main()
