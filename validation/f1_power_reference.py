"""An independent reference for the power of SIGIR 2016's Table 3 (Zhang et al. 2016).

Usage (from the repository root; writes ``tests/reference/sigir2016_power.csv``)::

    nice -n 10 python -m validation.f1_power_reference

The stored table: 28 cells x 4000 test sets x 5000 draws, 1404 s at ``nice -n 10`` on
two cores shared with a load of ~8 (a few minutes on an idle machine).

``tests/f1/test_power.py`` compares isbetter's :func:`isbetter.f1.power.power_analysis`
cell by cell with this table within a stated number of Monte Carlo standard errors (the
binomial errors of both simulations). To be a check of the package the simulation
here shares no code with it: it imports nothing from ``isbetter``. The test sets are
drawn with numpy's binomial and multinomial samplers, the exact conjugate posteriors
with numpy's own gamma sampler (the package has its own Marsaglia–Tsang sampler), and
the F1 score, the HDI and the HDI + ROPE decision are written out below from their
definitions:

* paired model: ``mu ~ Beta(1 + n+, 1 + n-)``, the joint outcomes (1,1), (1,0),
  (0,1), (0,0) of (A, B) on positive and on negative documents each
  ``~ Dir(1 + counts)``;
* unpaired model: A and B independent, each with its own ``mu`` and
  ``rho± ~ Beta(1 + positive predictions, 1 + negative predictions)`` on positive /
  negative documents;
* ``F1 = 2 tp / (2 tp + fp + fn)`` of the rates, ``delta = F1_A - F1_B``;
* the 95 % HDI of `draws` posterior draws: the shortest interval spanning
  ``floor(0.95 draws) + 1`` sorted draws (ArviZ's convention; checked against
  ``arviz.hdi`` below);
* the goal "A ≫ B" is reached when the HDI lies above +rope, "A ≈ B" when it lies
  inside [-rope, rope] (rope 0.05).

Every cell (scenario, N, model) has its own random stream
(``numpy.random.SeedSequence([seed, scenario, N, model])``), so the cells are
independent of each other and of which cells are run. The power of a
cell is a binomial proportion of `replicates` test sets; its standard error is
``sqrt(p (1 - p) / replicates)``. The posterior draws per test set (5000) are those of
the test, so the two simulations estimate the same probability (the HDI's own
Monte Carlo error with finitely many draws is part of it).
"""

from __future__ import annotations

import argparse
import platform
import sys
import time
from pathlib import Path

import numpy as np

#: (mu, theta_pos, theta_neg, goal) of section 4.1's scenarios (a) and (b)
SCENARIOS = {
    "a": (0.5, (0.3, 0.3, 0.2, 0.2), (0.2, 0.2, 0.3, 0.3), "a_better"),
    "b": (0.5, (0.3, 0.2, 0.2, 0.3), (0.3, 0.2, 0.2, 0.3), "equivalent"),
}
SIZES = (500, 1000, 1500, 2000, 2500, 3000, 3500)
MODELS = ("unpaired", "paired")
ROPE, HDI_PROB = 0.05, 0.95
OUT = Path(__file__).resolve().parents[1] / "tests" / "reference" / "sigir2016_power.csv"


def f1(tp: np.ndarray, fp: np.ndarray, fn: np.ndarray) -> np.ndarray:
    """F1 of contingency rates."""
    return 2 * tp / (2 * tp + fp + fn)


def _simplex(shape: np.ndarray, size: tuple[int, ...], rng: np.random.Generator) -> np.ndarray:
    """Draw numpy's Gamma(shape, 1) variates in single precision, normalised along the last axis.

    Single precision costs a relative error of ~1e-7 per variate, far below any Monte
    Carlo error here, and a third less time than double precision.
    """
    g = rng.standard_gamma(np.broadcast_to(shape, size).astype(np.float32), dtype=np.float32)
    g = g.astype(float)
    return g / g.sum(axis=-1, keepdims=True)


def dirichlet(alpha: np.ndarray, draws: int, rng: np.random.Generator) -> np.ndarray:
    """Return ``(sets, draws, 4)`` Dirichlet draws for the ``(sets, 4)`` parameters `alpha`."""
    return _simplex(alpha[:, None, :], (len(alpha), draws, alpha.shape[1]), rng)


def beta(a: np.ndarray, b: np.ndarray, draws: int, rng: np.random.Generator) -> np.ndarray:
    """Return ``(sets, draws)`` Beta draws for the ``(sets,)`` parameters `a`, `b`."""
    g = _simplex(np.stack([a, b], -1)[:, None, :], (len(a), draws, 2), rng)
    return g[..., 0]


def delta_paired(pos: np.ndarray, neg: np.ndarray, draws: int, rng: np.random.Generator):
    """Posterior draws ``(sets, draws)`` of F1_A - F1_B under the paired model."""
    n_pos, n_neg = pos.sum(1), neg.sum(1)
    mu = beta(1.0 + n_pos, 1.0 + n_neg, draws, rng)
    tp_ = dirichlet(1.0 + pos, draws, rng)  # outcomes (1,1), (1,0), (0,1), (0,0)
    tn_ = dirichlet(1.0 + neg, draws, rng)
    out = []
    for yes in ((0, 1), (0, 2)):  # A predicts positive on (1,1), (1,0); B on (1,1), (0,1)
        rho_pos = tp_[..., yes[0]] + tp_[..., yes[1]]
        rho_neg = tn_[..., yes[0]] + tn_[..., yes[1]]
        tp = mu * rho_pos
        out.append(f1(tp, (1 - mu) * rho_neg, mu - tp))
    return out[0] - out[1]


def delta_unpaired(pos: np.ndarray, neg: np.ndarray, draws: int, rng: np.random.Generator):
    """Posterior draws ``(sets, draws)`` of F1_A - F1_B under the unpaired model."""
    n_pos, n_neg = pos.sum(1), neg.sum(1)
    out = []
    for yes in ((0, 1), (0, 2)):
        said_pos = pos[:, yes[0]] + pos[:, yes[1]]  # true positives of the classifier
        said_neg = neg[:, yes[0]] + neg[:, yes[1]]  # its false positives
        mu = beta(1.0 + n_pos, 1.0 + n_neg, draws, rng)
        rho_pos = beta(1.0 + said_pos, 1.0 + n_pos - said_pos, draws, rng)
        rho_neg = beta(1.0 + said_neg, 1.0 + n_neg - said_neg, draws, rng)
        tp = mu * rho_pos
        out.append(f1(tp, (1 - mu) * rho_neg, mu - tp))
    return out[0] - out[1]


def hdi(x: np.ndarray, prob: float = HDI_PROB) -> tuple[np.ndarray, np.ndarray]:
    """Shortest interval spanning ``floor(prob n) + 1`` of the `n` sorted draws (last axis)."""
    s = np.sort(x, axis=-1)
    n = s.shape[-1]
    k = int(np.floor(prob * n))
    i = np.argmin(s[..., k:] - s[..., : n - k], axis=-1)[..., None]
    return np.take_along_axis(s, i, -1)[..., 0], np.take_along_axis(s, i + k, -1)[..., 0]


def reached(goal: str, lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
    """Return the HDI + ROPE decision of section 3.2."""
    if goal == "a_better":
        return lo > ROPE
    return (lo >= -ROPE) & (hi <= ROPE)


def cell(scenario: str, n: int, model: str, replicates: int, draws: int, ss) -> int:
    """Test sets of one cell whose decision reaches the scenario's goal."""
    mu, theta_pos, theta_neg, goal = SCENARIOS[scenario]
    rng = np.random.default_rng(ss)
    sample = delta_paired if model == "paired" else delta_unpaired
    hits, chunk = 0, 100
    for start in range(0, replicates, chunk):
        m = min(chunk, replicates - start)
        n_pos = rng.binomial(n, mu, size=m)
        pos = rng.multinomial(n_pos, theta_pos).astype(float)
        neg = rng.multinomial(n - n_pos, theta_neg).astype(float)
        lo, hi = hdi(sample(pos, neg, draws, rng))
        hits += int(reached(goal, lo, hi).sum())
    return hits


def check_hdi() -> None:
    """Check that the HDI above agrees with ArviZ's on a skewed sample."""
    import arviz as az

    x = np.random.default_rng(0).gamma(2.0, size=5000)
    ours = np.array(hdi(x))
    theirs = np.asarray(az.hdi(x, hdi_prob=HDI_PROB))
    np.testing.assert_allclose(ours, theirs, rtol=0, atol=0)


#: the sizes of Table 3, both scenarios and models; the most informative first (at N = 2000,
#: 1000, 3000 the power lies between 0.2 and 0.96), so a run cut short keeps those
DEFAULT_SIZES = (2000, 1000, 3000, 1500, 2500, 500, 3500)


def main(argv: list[str] | None = None) -> int:
    """Simulate the cells; write the table after each (CSV; the command and seed in its header)."""
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--replicates", type=int, default=4000, help="test sets per cell")
    p.add_argument("--draws", type=int, default=5000, help="posterior draws per test set")
    p.add_argument("--sizes", type=int, nargs="+", default=DEFAULT_SIZES, help="N of the cells")
    p.add_argument("--seed", type=int, default=20161)
    p.add_argument("--out", type=Path, default=OUT)
    args = p.parse_args(argv)
    check_hdi()
    command = (
        f"python -m validation.f1_power_reference --replicates {args.replicates} "
        f"--draws {args.draws} --sizes {' '.join(map(str, args.sizes))} --seed {args.seed}"
    )
    cells = [(s, n, m) for n in args.sizes for s in SCENARIOS for m in MODELS]
    # the cell's stream: a child of the seed keyed by the cell itself, so a cell's result
    # does not depend on which other cells are run
    rows, start = [], time.perf_counter()
    for s, n, m in cells:
        ss = np.random.SeedSequence([args.seed, ord(s), n, MODELS.index(m)])
        hits = cell(s, n, m, args.replicates, args.draws, ss)
        p_hat = hits / args.replicates
        se = np.sqrt(p_hat * (1 - p_hat) / args.replicates)
        rows.append(f"{s},{n},{m},{hits},{args.replicates},{p_hat:.5f},{se:.5f}")
        elapsed = time.perf_counter() - start
        print(f"{rows[-1]}  ({elapsed:.0f} s)", file=sys.stderr, flush=True)
        header = [
            f"# {command}",
            f"# numpy {np.__version__}, python {platform.python_version()}; {len(rows)} of "
            f"{len(cells)} cells, {elapsed:.0f} s (nice -n 10, shared machine); imports "
            "nothing from isbetter",
            "scenario,size,model,successes,replicates,power,se",
        ]
        args.out.write_text("\n".join(header + rows) + "\n")
    print(f"wrote {args.out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
