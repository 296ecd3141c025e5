"""The hierarchical fit's posterior of sigma0 against a grid over the hyper-parameters.

Usage (from the repository root)::

    python validation/posterior_grid.py --datasets 50 --studies 6

For each study simulated as in ``sbc.py`` (prior bounds matched, sigma_i's bound
kept): fit the integrated model with long chains (4 x 2500 draws), then evaluate the
exact posterior of ``(delta0, std0, nu)`` on a 48 x 48 x 40 grid (± 6 and ± 7 posterior
sd in delta0 and std0, log(nu - 1) over the draws' range ± 1.5) from the per-data-set
likelihood (:func:`isbetter.cv.hierarchical.numerics.kernels.compiled_kernels`, checked
against adaptive quadrature in ``tests/cv/test_hierarchical_oracle.py`` and
``tests/cv/test_sigma_bound.py``) and nu's prior
(:class:`isbetter.inference.nu_prior.NuPrior`, SciPy). Prints, per study,
the grid's and the fit's posterior mean and sd of std0 (scaled units) and their
difference in Monte Carlo standard errors, and the grid's mass on its edges (large where
the posterior piles up at std0's prior bound: the grid treats the bound as a point, so
its mean is then a little off).
"""

from __future__ import annotations

import argparse
import math
import sys
import warnings
from pathlib import Path

import numpy as np
from scipy import special

if __package__ in (None, ""):  # run as a script: import `validation` as a package
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from validation.calibration import (
    HierarchicalSetting,
    draw_hierarchical_truth,
    draw_scores,
    matched_priors,
)


def study_check(setting: HierarchicalSetting, seed: int, model: object) -> str:
    """Fit one simulated study and compare its std0 posterior with the grid's."""
    from isbetter import ConvergenceWarning, from_arrays
    from isbetter.cv.hierarchical.numerics.kernels import NODE_SPACING, compiled_kernels, with_bound
    from isbetter.cv.hierarchical.spec import prepare
    from isbetter.inference.nu_prior import NuPrior

    rng = np.random.default_rng(seed)
    truth = draw_hierarchical_truth(setting, rng)
    x = draw_scores(truth["delta"], truth["sigma"], setting.n_scores, setting.rho_data, rng)
    scores = from_arrays(x, np.zeros_like(x), runs=1).paired("A", "B")
    priors = matched_priors(x, setting)
    prepared = prepare(scores, 0.0, setting.rho_fit, priors)
    data, scale = prepared.model_data(priors), prepared.scale
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        fit = model.fit(  # type: ignore[attr-defined]
            scores, rho=setting.rho_fit, priors=priors, draws=2500, tune=1000, chains=4, rng=seed
        )
    std0, delta0, nu = fit.std0 / scale, fit.delta0 / scale, fit.nu
    lik = tuple(np.asarray(data[k], dtype=float) for k in ("a", "w", "ssr", "xbar"))
    bound = with_bound(lik[0], float(data["std_hi"]))
    loglik = compiled_kernels()[0]
    d0_grid = np.linspace(delta0.mean() - 6 * delta0.std(), delta0.mean() + 6 * delta0.std(), 48)
    lo, hi = std0.mean() - 7 * std0.std(), std0.mean() + 7 * std0.std()
    s0_grid = np.linspace(max(1e-6, lo), min(prepared.std0_hi, hi), 48)
    t_lo, t_hi = (math.log(np.quantile(nu, p) - 1.0) for p in (0.0005, 0.9995))
    t_grid = np.linspace(t_lo - 1.5, t_hi + 1.5, 40)
    nu_prior = NuPrior(
        (priors.alpha_lower, priors.alpha_upper, priors.beta_lower, priors.beta_upper)
    )
    log_prior_t = nu_prior(np.exp(t_grid))[0] + t_grid  # density of log(nu - 1)
    q = lik[0].size
    log_post = np.empty((d0_grid.size, s0_grid.size, t_grid.size))
    for k, t in enumerate(t_grid):
        v = 1.0 + math.exp(t)
        log_c = special.gammaln((v + 1) / 2) - special.gammaln(v / 2) - 0.5 * math.log(v * math.pi)
        for i, d0 in enumerate(d0_grid):
            for j, s0 in enumerate(s0_grid):
                logq = loglik(d0, s0, v, lik, NODE_SPACING, bound)[0]
                log_post[i, j, k] = logq.sum() + q * log_c + log_prior_t[k]
    weights = np.exp(log_post - log_post.max()).sum(axis=(0, 2))
    weights /= weights.sum()
    mean = float((weights * s0_grid).sum())
    sd = math.sqrt(float((weights * (s0_grid - mean) ** 2).sum()))
    mcse = std0.std() / math.sqrt(fit.diagnostics.ess_bulk_min)
    return (
        f"seed {seed}: true std0 {truth['std0'] / scale:.4f}; grid mean {mean:.4f} sd {sd:.4f}; "
        f"fit mean {std0.mean():.4f} sd {std0.std():.4f}; difference "
        f"{(std0.mean() - mean) / mcse:+.2f} MCSE; grid edge mass {weights[0] + weights[-1]:.1e}"
    )


def main(argv: list[str] | None = None) -> None:
    """Check `--studies` simulated studies of `--datasets` data sets."""
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--datasets", type=int, default=50, help="data sets per study")
    p.add_argument("--studies", type=int, default=6)
    p.add_argument("--seed", type=int, default=100, help="study r uses seed + r")
    args = p.parse_args(argv)
    from isbetter import HierarchicalModel

    setting = HierarchicalSetting(args.datasets)
    model = HierarchicalModel(args.datasets, parameterization="integrated")
    for r in range(args.studies):
        print(study_check(setting, args.seed + r, model), flush=True)


if __name__ == "__main__":
    main()
