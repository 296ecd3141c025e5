"""Simulation-based calibration of the joint correlated model of K systems.

Usage (from the repository root)::

    python validation/joint_sbc.py --out joint-sbc                  # q = 5, 10, 50; K = 4
    python validation/joint_sbc.py --out /tmp/jsbc --reps 50 --datasets 5

Each study draws the parameters from the model's prior (fixed bounds in score units,
matched to the data-dependent bounds the fit computes, as ``validation/sbc.py`` does
for the pairwise model: the fit's defaults take the effects' box, the scale of the
deviations' covariance prior (either form, ``--spread-prior``: the inverse-Wishart's
fixed psi, or Huang and Wand's half-t scale) and the noise prior's scale from the
data; here each
study's prior factors are set so that the fit's values are exactly the setting's, so
the fit's prior is the prior the truth was drawn from), simulates fold-level scores
of K systems on q data sets from the model, fits it, and ranks the truth among
thinned posterior draws of: two effect differences, the scale of the first two
systems' deviation, nu, the next data set's difference of the first two systems, and
their difference on the first data set. With ``--tails per-system`` the studies are
drawn from (and fitted with) the grouped t, one nu_k per system and one weight per data
set and system (``JointPriors(tails="per-system")``, docs/joint_prior.md): nu_k - 1 ~
Gamma(alpha, beta) with alpha ~ U(1, 2), beta ~ U(0.01, 0.1) shared by the systems,
lambda_ik ~ Gamma(nu_k/2, nu_k/2), u_ik = z_ik / sqrt(lambda_ik), z_i = H omega_i,
omega_i ~ N(0, Omega); the ranked quantities are then the two effect differences, the
scales of pairs (0, 1) and (2, 3), nu_0 and nu_3, and the same two differences.
With ``--tails components`` the studies are drawn from (and fitted with) independent
component tails (``JointPriors(tails="components")``, docs/joint_prior.md): each data
set's contrasts are u_i = L z_i, L = Q diag(s), Q Haar-distributed (the QR of a Gaussian
matrix, signs fixed), s_j ~ half-t_{half_t_df}(0, A) (A = spread_pair_scale / sqrt(2),
Huang and Wand's contrast scale), nu_j - 1 ~ Gamma(alpha_j, beta_j) with alpha_j ~ U(1,
2), beta_j ~ U(0.01, 0.1) drawn for each component on its own, z_ij ~ t_{nu_j}, and
the effects' contrast coordinates ~ N(0, effect_bound^2 I) (the components' effects
prior; the other forms' is the box). The components are not identified (sign flips,
permutations), so the ranked quantities are invariant ones: the two effect differences,
the scales sqrt(c' L L' c) of pairs (0, 1) and (2, 3), the smallest and the largest nu_j,
and the same two differences.
Writes ``report.md``, ``report.json`` and rank histograms into ``--out``; prints the
chi-squared p-values of uniformity. See
Talts et al. (2018), *Validating Bayesian inference algorithms with simulation-based
calibration*.
"""

from __future__ import annotations

import argparse
import sys
import time
import warnings
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np

if __package__ in (None, ""):  # run as a script: import `validation` as a package, and
    # drop this folder from the path, where coverage.py would shadow the `coverage` package
    _here = Path(__file__).resolve().parent
    sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != _here]
    sys.path.insert(0, str(_here.parent))

from isbetter.cv.joint.spec import JointPriors
from validation.calibration import study_record, uniformity
from validation.report import check_out_dir, markdown_table, plot_rank_histograms, write_json
from validation.runner import replicate

N_RANKS = 100
BINS = 10
#: the prior of the deviations' covariance the studies use unless told: the model's default
DEFAULT_SPREAD_PRIOR: str = JointPriors().spread_prior
#: the deviations' tails the studies use unless told: the model's default
DEFAULT_TAILS: str = JointPriors().tails
#: the quantities whose ranks are checked, per form of the tails
TAILS_QUANTITIES = {
    "shared": ("b0 - b1", "b0 - b3", "scale 0-1", "nu", "next b0 - b1", "data set 0: 0 - 1"),
    "per-system": (
        "b0 - b1",
        "b0 - b3",
        "scale 0-1",
        "scale 2-3",
        "nu 0",
        "nu 3",
        "next b0 - b1",
        "data set 0: 0 - 1",
    ),
    "components": (
        "b0 - b1",
        "b0 - b3",
        "scale 0-1",
        "scale 2-3",
        "nu min",
        "nu max",
        "next b0 - b1",
        "data set 0: 0 - 1",
    ),
}
#: the quantities of the default setting's studies
QUANTITIES = TAILS_QUANTITIES[DEFAULT_TAILS]


@dataclass(frozen=True)
class JointSetting:
    """One SBC setting: the data's shape and fixed prior bounds in score units."""

    n_datasets: int
    n_systems: int = 4
    n_scores: int = 10
    rho: float = 0.1
    rho_fit: float | None = None  # the fit's rho, when not the data's (a broken fit)
    effect_bound: float = 0.05
    spread_prior: str = DEFAULT_SPREAD_PRIOR  # JointPriors.spread_prior's default, or the other
    tails: str = DEFAULT_TAILS  # "shared" (one nu), "per-system" (grouped t) or "components"
    spread_var: float = 0.0004  # inverse-Wishart: psi
    spread_df: float = 1.0  # inverse-Wishart: IW(d + spread_df, psi I)
    spread_pair_scale: float = 0.02  # Huang-Wand: a pair's half-t scale, sqrt(2) A
    half_t_df: float = 2.0  # Huang-Wand: the half-t's degrees of freedom
    noise_var: float = 0.0004
    noise_df: float = 1.0
    alpha: tuple[float, float] = (1.0, 2.0)
    beta: tuple[float, float] = (0.01, 0.1)
    draws: int = 500
    tune: int = 500
    chains: int = 2
    cores: int = 1

    def to_dict(self) -> dict[str, Any]:
        """JSON-safe settings."""
        return asdict(self)

    @property
    def quantities(self) -> tuple[str, ...]:
        """The quantities whose ranks the studies of this setting check."""
        return TAILS_QUANTITIES[self.tails]


def draw_truth(s: JointSetting, rng: np.random.Generator) -> dict[str, Any]:
    """Draw the parameters from the prior with the fixed bounds of `s` (score units).

    Returns the hyperparameters ``alpha`` and ``beta`` of nu's prior, the deviations'
    covariance ``spread`` (H Omega H^T, K x K), the effects ``b`` (K), the scales of
    pairs (0, 1) and (2, 3) (NaN for K < 4), ``nu`` (one value, or K with per-system
    tails), the deviations' contrasts ``u`` (q, K - 1), the noise covariances ``cov``
    (q, K - 1, K - 1) and the next data set's difference of systems 0 and 1. With
    independent components (``s.tails == "components"``, :func:`draw_components`)
    ``alpha``, ``beta`` and ``nu`` have one value per component (K - 1), ``spread`` is
    H L L^T H^T and the draw also holds the ``loading`` L (K - 1 x K - 1).
    """
    from isbetter.cv.joint.spec import contrast_basis

    k, d = s.n_systems, s.n_systems - 1
    basis = contrast_basis(k)
    if s.tails == "components":
        return draw_components(s, rng)
    alpha, beta = rng.uniform(*s.alpha), rng.uniform(*s.beta)
    per_system = s.tails == "per-system"
    # nu - 1 ~ Gamma(alpha, rate beta): one nu, or one per system from the same alpha, beta
    nu = 1.0 + rng.gamma(alpha, 1.0 / beta, size=k if per_system else None)
    b = basis @ rng.uniform(-s.effect_bound, s.effect_bound, size=d)
    from scipy import stats

    if s.spread_prior == "inverse-wishart":
        omega = stats.invwishart(df=d + s.spread_df, scale=s.spread_var * np.eye(d)).rvs(
            random_state=rng
        )
    else:  # Huang and Wand's: psi ~ Gamma(1/2, rate 1/(2 nu A^2)), Omega ~ IW(nu + d - 1, psi I)
        contrast_scale = s.spread_pair_scale / np.sqrt(2.0)
        psi = rng.gamma(0.5, 2.0 * s.half_t_df * contrast_scale**2)
        omega = stats.invwishart(df=s.half_t_df + d - 1, scale=psi * np.eye(d)).rvs(
            random_state=rng
        )
    omega = np.atleast_2d(omega)
    chol_u = np.linalg.cholesky(omega)

    def deviations(size: int) -> np.ndarray:
        if per_system:  # the grouped t: u_k = z_k / sqrt(lambda_k), z = H omega; contrasts
            lam = rng.gamma(nu / 2.0, 2.0 / nu, size=(size, k))
            z = rng.standard_normal((size, d)) @ chol_u.T @ basis.T
            return (z / np.sqrt(lam)) @ basis
        # contrasts: multivariate t_nu(0, Omega)
        lam = rng.gamma(nu / 2.0, 2.0 / nu, size=(size, 1))
        return rng.standard_normal((size, d)) @ chol_u.T / np.sqrt(lam)

    return {"alpha": alpha, "beta": beta, "nu": nu, **_study(s, b, omega, deviations, rng)}


def _study(
    s: JointSetting,
    b: np.ndarray,
    omega: np.ndarray,
    deviations: Any,
    rng: np.random.Generator,
) -> dict[str, Any]:
    """Return the study's draws given its effects, contrasts' scale matrix and deviations.

    Draws, in this order, each data set's noise covariance of the contrasts (IW(d +
    noise_df, noise_var I)), the next data set's deviations and the q data sets'.
    """
    from scipy import stats

    from isbetter.cv.joint.spec import contrast_basis

    d, q = s.n_systems - 1, s.n_datasets
    basis = contrast_basis(s.n_systems)
    cov = stats.invwishart(df=d + s.noise_df, scale=s.noise_var * np.eye(d)).rvs(
        size=q, random_state=rng
    )
    c01 = basis[0] - basis[1]  # the contrast of systems 0 and 1 in orthonormal coordinates
    next_u = deviations(1)[0]
    return {
        "spread": basis @ omega @ basis.T,
        "b": b,
        **_pair_scales(omega, basis),
        "u": deviations(q),
        "cov": np.asarray(cov).reshape(q, d, d),
        "next": b[0] - b[1] + c01 @ next_u,
    }


def _pair_scales(omega: np.ndarray, basis: np.ndarray) -> dict[str, float]:
    """Return the scales sqrt(c' Omega c) of pairs (0, 1) and (2, 3) (NaN without system 3)."""
    out = {}
    for key, (a, b) in (("scale01", (0, 1)), ("scale23", (2, 3))):
        c = basis[a] - basis[b] if b < basis.shape[0] else None
        out[key] = float(np.sqrt(c @ omega @ c)) if c is not None else float("nan")
    return out


def haar_orthogonal(d: int, rng: np.random.Generator) -> np.ndarray:
    """Return a d x d orthogonal matrix drawn from the Haar measure.

    The QR decomposition of a matrix of independent N(0, 1), with the signs of Q's
    columns fixed so that R's diagonal is positive (Mezzadri 2007). Without the fix
    the law is not invariant: numpy's (LAPACK's Householder) QR makes Q[0, 0] <= 0
    always.
    """
    q, r = np.linalg.qr(rng.standard_normal((d, d)))
    return q * np.where(np.diag(r) < 0, -1.0, 1.0)[None, :]


def draw_components(s: JointSetting, rng: np.random.Generator) -> dict[str, Any]:
    """Draw a study's truth from the independent-components prior (fixed bounds of `s`).

    u_i = L z_i, L = Q diag(s), Q Haar; s_j ~ half-t_{half_t_df}(0, A) with A =
    spread_pair_scale / sqrt(2) (so that at K = 2 the pair's scale sqrt(2) s is
    half-t(0, spread_pair_scale), as with Huang and Wand's prior); nu_j - 1 ~
    Gamma(alpha_j, rate beta_j), alpha_j ~ U(alpha), beta_j ~ U(beta), one of each per
    component (the pairwise model's prior of its nu, for each component on its own);
    z_ij ~ t_{nu_j}; the effects' contrast coordinates beta ~ N(0, effect_bound^2 I)
    (the components' effects prior, tau = the box half-width; the other forms' is the
    box). The same keys as :func:`draw_truth`, and ``loading``.
    """
    from isbetter.cv.joint.spec import contrast_basis

    d = s.n_systems - 1
    basis = contrast_basis(s.n_systems)
    alpha, beta = rng.uniform(*s.alpha, size=d), rng.uniform(*s.beta, size=d)
    nu = 1.0 + rng.gamma(alpha, 1.0 / beta)
    b = basis @ rng.normal(0.0, s.effect_bound, size=d)
    scale = s.spread_pair_scale / np.sqrt(2.0) * np.abs(rng.standard_t(s.half_t_df, size=d))
    loading = haar_orthogonal(d, rng) * scale[None, :]
    omega = loading @ loading.T  # the scale matrix of the contrasts (not their covariance)

    def deviations(size: int) -> np.ndarray:
        return rng.standard_t(nu, size=(size, d)) @ loading.T

    study = _study(s, b, omega, deviations, rng)
    return {"alpha": alpha, "beta": beta, "nu": nu, "loading": loading, **study}


def draw_scores(truth: dict[str, Any], s: JointSetting, rng: np.random.Generator) -> Any:
    """Simulate fold-level scores of the K systems (a ScoreTable)."""
    import pandas as pd

    import isbetter
    from isbetter.cv.joint.spec import contrast_basis

    k, d, q, n = s.n_systems, s.n_systems - 1, s.n_datasets, s.n_scores
    basis = contrast_basis(k)
    rows = []
    for i in range(q):
        chol = np.linalg.cholesky(truth["cov"][i])
        # compound symmetry over the folds: one shared term per contrast and data set
        shared = rng.standard_normal((d, 1))
        own = rng.standard_normal((d, n))
        noise = chol @ (np.sqrt(s.rho) * shared + np.sqrt(1.0 - s.rho) * own)
        contrasts = (basis.T @ truth["b"] + truth["u"][i])[:, None] + noise
        folds = 0.8 + 0.02 * rng.standard_normal(n)  # fold effects: invisible to the model
        scores = basis @ contrasts + folds[None, :]
        for m in range(k):
            for f in range(n):
                rows.append((f"d{i}", f"s{m}", f + 1, scores[m, f]))
    frame = pd.DataFrame(rows, columns=["dataset", "system", "fold", "score"])
    return isbetter.read_scores(frame, run=None)


def matched_priors(table: Any, s: JointSetting) -> Any:
    """Prior factors that make the bounds the fit computes from `table` those of `s`."""
    from isbetter.cv.joint.spec import JointPriors, prepare

    base = JointPriors(spread_prior=s.spread_prior, tails=s.tails)  # type: ignore[arg-type]
    p = prepare(table, table.systems, rho=s.rho, priors=base)
    if s.spread_prior == "inverse-wishart":
        spread = {
            "spread_scale": s.spread_var / p.scale**2 / (p.spread_var / base.spread_scale),
            "spread_df": s.spread_df,
        }
    else:  # p.spread_var is A^2
        spread = {
            "spread_scale": s.spread_pair_scale
            / np.sqrt(2.0)
            / p.scale
            / (np.sqrt(p.spread_var) / base.spread_scale),
            "spread_df": s.half_t_df,
        }
    return JointPriors(
        alpha_lower=s.alpha[0],
        alpha_upper=s.alpha[1],
        beta_lower=s.beta[0],
        beta_upper=s.beta[1],
        delta0_bound=s.effect_bound / p.scale / (p.effect_hi / base.delta0_bound),
        **spread,
        noise_scale=s.noise_var / p.scale**2 / (p.noise_var / base.noise_scale),
        noise_df=s.noise_df,
        spread_prior=s.spread_prior,  # type: ignore[arg-type]
        tails=s.tails,  # type: ignore[arg-type]
    )


def replication(
    s: JointSetting, seed: np.random.SeedSequence, n_ranks: int, keep: bool = False
) -> dict[str, Any]:
    """Simulate one study from the prior, fit it, return ranks, coverage and diagnostics.

    With `keep`, also the thinned draws and truths (``calibration.kept_draws``).
    """
    from isbetter import ConvergenceWarning
    from isbetter.cv.joint.model import joint_fit
    from isbetter.cv.joint.spec import contrast_basis

    study = seed.spawn_key[-1] if seed.spawn_key else None
    rng = np.random.default_rng(seed)
    truth = draw_truth(s, rng)
    table = draw_scores(truth, s, rng)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)  # recorded, not raised
        fit = joint_fit(
            table,
            rho=s.rho if s.rho_fit is None else s.rho_fit,
            priors=matched_priors(table, s),
            draws=s.draws,
            tune=s.tune,
            chains=s.chains,
            cores=s.cores,
            rng=int(rng.integers(2**31)),
        )
    k = s.n_systems
    e = fit.effects.reshape(-1, k)
    # data set 0's difference of systems 0 and 1 (its deviations' contrasts, model units)
    c01 = contrast_basis(k)[0] - contrast_basis(k)[1]
    u0 = fit.idata.posterior["deviations"].to_numpy()[:, :, 0].reshape(e.shape[0], -1)
    first = e[:, 0] - e[:, 1] + fit.data.scale * (u0 @ c01)
    b = truth["b"]
    posterior = {"b0 - b1": e[:, 0] - e[:, 1], "b0 - b3": e[:, 0] - e[:, 3]}
    true = {"b0 - b1": b[0] - b[1], "b0 - b3": b[0] - b[3], "scale 0-1": truth["scale01"]}
    if s.tails == "components":  # invariant functionals only (the loading's draws)
        part, true_part = _component_quantities(fit, truth, e, rng)
        posterior |= part
        true |= true_part
        nxt = part["next b0 - b1"]
    else:
        scales = fit.pair_scales().reshape(e.shape[0], -1)
        posterior["scale 0-1"] = scale = scales[:, 0]  # pair (0, 1)
    if s.tails == "per-system":
        nus = fit.nu.reshape(-1, k)
        first_row, second_row = np.triu_indices(k, 1)
        column23 = int(np.flatnonzero((first_row == 2) & (second_row == 3))[0])
        posterior |= {"scale 2-3": scales[:, column23], "nu 0": nus[:, 0], "nu 3": nus[:, 3]}
        true |= {"scale 2-3": truth["scale23"], "nu 0": truth["nu"][0], "nu 3": truth["nu"][3]}
        # the next data set's difference: one draw of the grouped t per posterior draw
        nxt = e[:, 0] - e[:, 1] + _grouped_t_draws(fit.spread.reshape(-1, k, k), nus, rng)
    elif s.tails == "shared":
        nu = fit.nu.reshape(-1)
        posterior["nu"], true["nu"] = nu, truth["nu"]
        # the next data set's difference: one draw per posterior draw
        nxt = e[:, 0] - e[:, 1] + scale * rng.standard_t(nu)
    posterior |= {"next b0 - b1": nxt, "data set 0: 0 - 1": first}
    true |= {"next b0 - b1": truth["next"], "data set 0: 0 - 1": b[0] - b[1] + c01 @ truth["u"][0]}
    return study_record(posterior, true, fit.diagnostics, n_ranks, keep=keep, ess=True) | {
        "study": study
    }


def component_loading(fit: Any) -> np.ndarray:
    """Return the fit's draws of the loading L, ``(chains * draws, d, d)``, score units.

    Assumed interface of the components fit (h-comp's ``JointPriors(tails=
    "components")``): ``JointFit.loading`` in score units if it has one, else the
    posterior's ``loading`` variable in model units (times ``fit.data.scale``), as in
    ``validation/joint_components.py``.
    """
    loading = getattr(fit, "loading", None)
    if loading is None:
        loading = fit.idata.posterior["loading"].to_numpy() * fit.data.scale
    loading = np.asarray(loading, dtype=float)
    return loading.reshape(-1, *loading.shape[-2:])


def _component_quantities(
    fit: Any, truth: dict[str, Any], effects: np.ndarray, rng: np.random.Generator
) -> tuple[dict[str, np.ndarray], dict[str, float]]:
    """Return the components' invariant quantities per posterior draw, and their truths.

    The scales sqrt(c' L L' c) of pairs (0, 1) and (2, 3) from the loading's draws, the
    smallest and largest nu_j, and one draw of the next data set's difference of systems
    0 and 1 per posterior draw (b0 - b1 + sum_j w_j z_j, z_j ~ t_{nu_j}).
    """
    from isbetter.cv.joint.predictive import component_weights

    loading = component_loading(fit)
    nus = np.asarray(fit.nu, dtype=float).reshape(loading.shape[0], -1)
    w01 = component_weights(loading, 0, 1)
    w23 = component_weights(loading, 2, 3)
    nxt = effects[:, 0] - effects[:, 1] + (w01 * rng.standard_t(nus)).sum(axis=1)
    posterior = {
        "scale 0-1": np.sqrt((w01**2).sum(axis=1)),
        "scale 2-3": np.sqrt((w23**2).sum(axis=1)),
        "nu min": nus.min(axis=1),
        "nu max": nus.max(axis=1),
        "next b0 - b1": nxt,
    }
    true = {
        "scale 2-3": truth["scale23"],
        "nu min": float(np.min(truth["nu"])),
        "nu max": float(np.max(truth["nu"])),
        "next b0 - b1": truth["next"],
    }
    return posterior, true


def _grouped_t_draws(spread: np.ndarray, nu: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """One draw of u_0 - u_1 per posterior draw of V = H Omega H^T (n, K, K) and nu (n, K)."""
    v00, v11, v01 = spread[:, 0, 0], spread[:, 1, 1], spread[:, 0, 1]
    e0, e1 = rng.standard_normal((2, v00.size))
    z0 = np.sqrt(v00) * e0
    z1 = v01 / np.sqrt(v00) * e0 + np.sqrt(np.clip(v11 - v01**2 / v00, 0.0, None)) * e1
    lam = rng.gamma(nu[:, :2] / 2.0, 2.0 / nu[:, :2])
    return z0 / np.sqrt(lam[:, 0]) - z1 / np.sqrt(lam[:, 1])


def section(s: JointSetting, reps: int, seed: int, workers: int, label: str) -> dict[str, Any]:
    """Run one setting: rank histograms, coverage and fit diagnostics."""
    start = time.perf_counter()
    out = replicate(replication, s, (N_RANKS,), reps=reps, seed=seed, workers=workers, label=label)
    panels = {}
    for name in s.quantities:
        counts, p = uniformity(np.array([o["ranks"][name] for o in out]), N_RANKS, BINS)
        covered = float(np.mean([o["covered"][name] for o in out]))
        panels[name] = {"counts": counts, "p_value": p, "hdi95_coverage": covered, "reps": reps}
    fits = {
        "seconds": time.perf_counter() - start,
        "with_divergences": sum(o["divergences"] > 0 for o in out),
        "divergences": sum(o["divergences"] for o in out),
        "r_hat_above_1.01": sum(o["r_hat_max"] > 1.01 for o in out),
        "min_ess_bulk": min(o["ess_bulk_min"] for o in out),
    }
    return {"panels": panels, "fits": fits}


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    """Parse and check the command line."""
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--out", required=True, help="folder for the report (created if missing)")
    p.add_argument("--datasets", type=int, nargs="+", default=[5, 10, 50], help="q values")
    p.add_argument("--systems", type=int, default=4, help="K (default 4)")
    p.add_argument("--reps", type=int, default=200, help="studies per q (default 200)")
    p.add_argument("--workers", type=int, default=1, help="processes")
    p.add_argument("--seed", type=int, default=20240917)
    p.add_argument("--draws", type=int, default=500, help="per chain (default 500)")
    p.add_argument("--tune", type=int, default=500, help="per chain (default 500)")
    p.add_argument("--chains", type=int, default=2, help="per fit (default 2)")
    p.add_argument(
        "--spread-prior",
        choices=["inverse-wishart", "huang-wand"],
        help="the deviations' covariance prior (default: the model's for the tails)",
    )
    p.add_argument(
        "--tails",
        choices=list(TAILS_QUANTITIES),
        help="one nu (shared), one per system (the grouped t) or one per independent "
        f"component (components); default {DEFAULT_TAILS}, or shared when --spread-prior "
        "is given (JointPriors' rule)",
    )
    args = p.parse_args(argv)
    if min(args.datasets) < 2 or args.systems < 4 or args.reps < 1 or args.workers < 1:
        p.error("--datasets must be >= 2, --systems >= 4, --reps and --workers >= 1")
    if args.tails is None:  # JointPriors' rule: a named spread prior is a shared-nu form
        args.tails = JointPriors(spread_prior=args.spread_prior).tails
    if args.spread_prior is None:  # the model's own default for these tails
        args.spread_prior = JointPriors(tails=args.tails).spread_prior
    if args.tails == "components" and args.spread_prior != "huang-wand":
        p.error(
            "--tails components draws the components' scales from half-t's: "
            "use --spread-prior huang-wand (its default)"
        )
    return args


def main(argv: list[str] | None = None) -> int:
    """Run the SBC, write the report, print the table."""
    args = parse_args(argv)
    out = check_out_dir(args.out)
    seeds = np.random.SeedSequence(args.seed).generate_state(len(args.datasets))
    rows, sections = [], {}
    lines = [
        "# Simulation-based calibration of the joint model (Talts et al. 2018)",
        "",
        f"Command: `python validation/joint_sbc.py {' '.join(sys.argv[1:])}`; seed "
        f"{args.seed}. Ranks of the truth among {N_RANKS - 1} thinned posterior draws; "
        "χ² test of uniformity of the binned ranks (p > 0.01 expected for a calibrated fit).",
        "",
    ]
    for q, seed in zip(args.datasets, seeds, strict=True):
        setting = JointSetting(
            q,
            n_systems=args.systems,
            draws=args.draws,
            tune=args.tune,
            chains=args.chains,
            spread_prior=args.spread_prior,
            tails=args.tails,
        )
        key = f"joint_q{q}"
        tails = {"per-system": ", per-system tails", "components": ", independent components"}.get(
            args.tails, ""
        )
        title = f"Joint model{tails}, K = {args.systems}, q = {q}"
        result = section(setting, args.reps, int(seed), args.workers, key)
        sections[key] = {"title": title, "setting": setting.to_dict(), **result}
        plot_rank_histograms(result["panels"], N_RANKS, out / f"{key}.png", title)
        for name, panel in result["panels"].items():
            rows.append([title, name, panel["reps"], panel["p_value"], panel["hdi95_coverage"]])
        fits = result["fits"]
        lines.append(
            f"![{title}]({key}.png)\n\n{title}: {fits['seconds']:.0f} s; fits with "
            f"divergences {fits['with_divergences']} ({fits['divergences']} divergences), "
            f"R-hat > 1.01: {fits['r_hat_above_1.01']}, smallest bulk ESS "
            f"{fits['min_ess_bulk']:.0f}.\n"
        )
    table = markdown_table(["setting", "quantity", "reps", "χ² p", "95% HDI coverage"], rows)
    (out / "report.md").write_text("\n".join([*lines[:4], table, "", *lines[4:]]) + "\n")
    write_json({"seed": args.seed, "n_ranks": N_RANKS, "sections": sections}, out / "report.json")
    print(table)
    print(f"\nreport: {out / 'report.md'}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
