"""Benchmark: microseconds per gradient of the integrated model's log density, UCI data.

For pairs of the shipped UCI data (54 data sets x 10 runs x 10 folds, rope 0.01):
nbc vs aode, and the two pairs the UCI ranking refits with the integrated model
(aode vs hnb, j48 vs j48gr). Each pair is fitted once with the integrated
parameterisation (seed 1, default settings); the log density and its gradient
(what nutpie calls at every leapfrog step) are then timed at the 8000 posterior
draws, in a compiled loop (no Python call per gradient). Printed: CPU microseconds per
gradient (the best of ``--repeats`` passes), per data set, the mean number of
quadrature nodes per data set and the share of (draw, data set) pairs whose map has
centres at the modes of prior x likelihood (``_quadrature_kernels._mode_centres``).

Run from the repository root::

    python bench/bench_integrated_gradient.py [--repeats 5]
"""

from __future__ import annotations

import argparse
import time
import warnings
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "data" / "uci_benavoli2017" / "uci_cv_accuracy_long.csv"
PAIRS = [("nbc", "aode"), ("aode", "hnb"), ("j48", "j48gr")]
ROPE = 0.01


def _loops():
    """Compiled loops over the draws: the log density with its gradient, and the nodes."""
    import numba

    from isbetter.cv.hierarchical import compiled_backend as hd
    from isbetter.cv.hierarchical.numerics.kernels import _MAX_NODES, _ROWS, _nodes

    hd.load_density()  # registers the kernels as callable from numba functions

    @numba.njit
    def gradients(x, buffer):  # pragma: no cover - numba
        grad, total = np.empty(3), 0.0
        for s in range(x.shape[0]):
            total += hd._integrated_from_buffer(x[s], buffer, grad) + grad[0]
        return total

    @numba.njit
    def nodes(hyper, lik, spacing, offsets, tables, shift):  # pragma: no cover - numba
        work, count, modes = np.empty((_ROWS, _MAX_NODES)), 0, 0
        for s in range(hyper.shape[0]):
            for i in range(lik.shape[1]):
                row = (lik[0, i], lik[1, i], lik[2, i], lik[3, i])
                bound = (tables, int(offsets[i]), shift)
                delta0, std0, nu = hyper[s]
                n, _, _, frame = _nodes(delta0, std0, nu, row, spacing, work, bound)
                count += n
                modes += frame[3] > 0.0 or frame[5] > 0.0 or frame[7] > 0.0
        return count, modes

    return gradients, nodes


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5, help="timed passes per pair")
    args = parser.parse_args()
    from isbetter import read_scores
    from isbetter.cv.hierarchical import compiled_backend as hd
    from isbetter.cv.hierarchical.model import hierarchical_test
    from isbetter.cv.hierarchical.numerics.kernels import NODE_SPACING, no_bound, with_bound
    from isbetter.cv.hierarchical.priors import HierarchicalPriors
    from isbetter.cv.hierarchical.spec import prepare

    table = read_scores(DATA, dataset="dataset_id", system="classifier", score="accuracy")
    gradients, nodes = _loops()
    priors = HierarchicalPriors()
    print(f"{'pair':>12} {'us/gradient':>11} {'us/data set':>11} {'nodes':>6} {'mode centres':>12}")
    for a, b in PAIRS:
        scores = table.paired(a, b)
        prepared = prepare(scores, ROPE, None, priors)
        data = prepared.model_data(priors)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            res = hierarchical_test(scores, rope=ROPE, rng=1, parameterization="integrated")
        nu, delta0, std0 = res.nu, res.delta0 / prepared.scale, res.std0 / prepared.scale
        d_hi, s_hi = float(data["delta0_hi"]), float(data["std0_hi"])
        p0, p1 = (delta0 + d_hi) / (2 * d_hi), std0 / s_hi
        x = np.column_stack([np.log(nu - 1), np.log(p0 / (1 - p0)), np.log(p1 / (1 - p1))])
        lik, bounds, tables = hd._arguments(data, prepared.bounded)
        buffer = hd._integrated_buffer(lik, bounds, tables)
        gradients(x[:10], buffer)  # compile
        best = np.inf
        for _ in range(args.repeats):
            t0 = time.process_time()  # CPU time: steadier than wall time on a busy host
            gradients(x, buffer)
            best = min(best, time.process_time() - t0)
        q = scores.n_datasets
        bound = with_bound(lik[0], float(data["std_hi"])) if prepared.bounded else no_bound(q)
        hyper = np.column_stack([delta0, std0, nu])
        count, modes = nodes(hyper, lik, NODE_SPACING, *bound)
        us = best / x.shape[0] * 1e6
        print(
            f"{a + '/' + b:>12} {us:>11.1f} {us / q:>11.2f} {count / (x.shape[0] * q):>6.1f} "
            f"{modes / (x.shape[0] * q):>12.2%}"
        )


if __name__ == "__main__":
    main()
