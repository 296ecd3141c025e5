"""Benchmark: accuracy of the integrated model's quadrature over random configurations.

Draws configurations of one data set and the hyper-parameters -- n from 2 to 10 000
scores (log-uniform), std0 from 1e-5 to 1e3 likelihood widths, the centres 0 or 0.01
to 1000 widths apart, nu - 1 from 0.01 to 3000 (all log-uniform), rho 0, 0.1 or 0.2
-- and compares log p(x_i | delta0, std0, nu) from the compiled rule
(``_quadrature_kernels``, nodes ``NODE_SPACING`` apart) and the NumPy rule
(``hierarchical_quadrature.integrated_loglik``, 64 and 256 nodes) with SciPy's adaptive
quadrature (``_adaptive_log_integral`` of ``tests/cv/test_hierarchical_oracle.py``).
Prints the largest, median and 99th-percentile errors, the worst configurations and
the share whose map has centres at the modes of prior x likelihood.

Run from the repository root (about 0.5 s per configuration on one core)::

    python bench/bench_quadrature_accuracy.py [--configs 2000] [--seed 1]
"""

from __future__ import annotations

import argparse
import importlib.util
import sys
from pathlib import Path

import numpy as np
from scipy import special

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "cv"))  # the NumPy rule: a test oracle (_oracle.py)


def _oracle():
    path = ROOT / "tests" / "cv" / "test_hierarchical_oracle.py"
    spec = importlib.util.spec_from_file_location("hierarchical_oracle", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)  # type: ignore[union-attr]
    return module


def configurations(count: int, seed: int) -> np.ndarray:
    """Rows (delta0, std0, nu, a, w, ssr, xbar) drawn as the module docstring says."""
    g = np.random.default_rng(seed)
    rows = []
    for _ in range(count):
        n = int(np.exp(g.uniform(np.log(2), np.log(10_000))))
        ratio = np.exp(g.uniform(np.log(1e-5), np.log(1e3)))
        gap = 0.0 if g.random() < 0.1 else np.exp(g.uniform(np.log(1e-2), np.log(1e3)))
        nu = 1 + np.exp(g.uniform(np.log(1e-2), np.log(3000)))
        rho = g.choice([0.0, 0.1, 0.2])
        a, w = (n - 1) / 2, n / (1 + (n - 1) * rho)
        ssr = n / (1 - rho) * g.uniform(0.5, 2)
        width = np.sqrt(ssr / (w * max(2 * a - 1, 1)))
        xbar = g.normal()
        rows.append((xbar - g.choice([-1, 1]) * gap * width, ratio * width, nu, a, w, ssr, xbar))
    return np.array(rows)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--configs", type=int, default=2000)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    from _oracle import integrated_loglik

    from isbetter.cv.hierarchical.numerics.kernels import (
        _MAX_NODES,
        _ROWS,
        NODE_SPACING,
        _nodes,
        compiled_kernels,
        no_bound,
    )

    oracle, loglik = _oracle(), compiled_kernels()[0]
    rows = configurations(args.configs, args.seed)
    errors, modes = {"compiled": [], "numpy 64": [], "numpy 256": []}, 0
    work = np.empty((_ROWS, _MAX_NODES))
    for d0, s0, nu, a, w, ssr, xbar in rows:
        exact = oracle._adaptive_log_integral(d0, s0, nu, a, w, ssr, xbar)
        lik = tuple(np.array([v]) for v in (a, w, ssr, xbar))
        norm = special.gammaln((nu + 1) / 2) - special.gammaln(nu / 2) - np.log(nu * np.pi) / 2
        value = loglik(d0, s0, nu, lik, NODE_SPACING, no_bound(1))[0][0] + norm
        errors["compiled"].append(abs(value - exact))
        for nodes in (64, 256):
            value = integrated_loglik(d0, s0, nu, (*lik, 1e300), n_nodes=nodes)[0]
            errors[f"numpy {nodes}"].append(abs(value - exact))
        frame = _nodes(
            d0, s0, nu, (a, w, ssr, xbar), NODE_SPACING, work, (work[0], -1, 0.0, False)
        )[3]
        modes += max(frame[3], frame[5], frame[7]) > 0.0
    share = modes / len(rows)
    print(f"{len(rows)} configurations (seed {args.seed}); {share:.1%} with mode centres")
    print(f"{'rule':>10} {'max':>9} {'median':>9} {'99%':>9}   error of log p(x_i | ...)")
    for rule, err in errors.items():
        e = np.array(err)
        print(f"{rule:>10} {e.max():>9.1e} {np.median(e):>9.1e} {np.quantile(e, 0.99):>9.1e}")
    print("worst configurations of the compiled rule:")
    for i in np.argsort(errors["compiled"])[-5:]:
        d0, s0, nu, a, w, ssr, xbar = rows[i]
        width = np.sqrt(ssr / (w * max(2 * a - 1, 1)))
        print(
            f"  n = {2 * a + 1:.0f}, std0 = {s0 / width:.2e} widths, centres "
            f"{abs(xbar - d0) / width:.3g} widths apart, nu = {nu:.3g}: "
            f"{errors['compiled'][i]:.1e}"
        )


if __name__ == "__main__":
    main()
