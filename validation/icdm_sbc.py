"""Simulation-based calibration of the ICDM model of two confusion matrices (isbetter.f1.icdm).

One study draws the model's parameters from its own prior (Zhang et al. 2015; the
module docstring of :mod:`isbetter.f1.icdm`)::

    mu ~ Dir(1_M)      eta_s ~ Beta(1, 1)      theta_s,j ~ Dir(concentration w_s,j(eta_s))

a test set of ``N_DOCS`` documents from its likelihood (``n ~ Mult(N, mu)``, row j of
system s's confusion matrix ``~ Mult(n_j, theta_s,j)``), and fits the model to the two
confusion matrices. The ranks of the truths among thinned posterior draws are tested
for uniformity (Talts et al. 2018) for :data:`QUANTITIES`: both etas and the deltas of
F1 (macro, micro and the first class's; A minus B) computed from the true rates.

Two fits of the same studies:

* :func:`exact_studies` draws eta from its exact posterior on a grid (given the counts,
  eta_A and eta_B are independent, each with a one-dimensional Dirichlet-multinomial
  likelihood, written out here from the confusion matrix without isbetter's code) and
  then mu, theta and the deltas with isbetter's exact conditional draws
  (:func:`isbetter.f1.icdm.icdm_deltas`). Independent draws, thousands of studies in
  seconds: ``tests/f1/test_f1_icdm_calibration.py`` in the default suite.
* :func:`replication` runs the whole sampler, :func:`isbetter.f1.icdm.sample_icdm`
  (NUTS on eta, then the exact conditional draws): the slow step.

References
----------
.. [1] Zhang, Wang, Zhao, Wang (2015). A Bayesian hierarchical model for comparing
   average F1 scores. ICDM.
.. [2] S. Talts, M. Betancourt, D. Simpson, A. Vehtari, A. Gelman (2018).
   Validating Bayesian inference algorithms with simulation-based calibration.
   arXiv:1804.06788.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy import special

from validation.calibration import study_record

#: classes, documents per test set and the prior mass of each row's Dirichlet (the default):
#: few documents, so that the prior matters
N_CLASSES = 3
N_DOCS = 60
CONCENTRATION = 1.0
#: the quantities whose ranks are tested (the deltas: F1 of A minus F1 of B)
QUANTITIES = ("eta_a", "eta_b", "delta_macro", "delta_micro", "delta_class_0")
#: cells of the grid on which eta's exact posterior is evaluated (midpoints on (0, 1))
GRID = 1000


def draw_truth(rng: np.random.Generator, m: int = N_CLASSES) -> dict[str, np.ndarray]:
    """Draw ``eta`` (2,), ``theta`` (2, M, M) and ``mu`` (M,) from the model's prior."""
    eta = rng.uniform(size=2)
    off = (1.0 - eta[:, None, None]) / (m - 1)
    w = np.where(np.eye(m, dtype=bool), eta[:, None, None], off)
    theta = np.array([[rng.dirichlet(CONCENTRATION * w[s, j]) for j in range(m)] for s in (0, 1)])
    return {"eta": eta, "theta": theta, "mu": rng.dirichlet(np.ones(m))}


def draw_confusions(
    truth: dict[str, np.ndarray], rng: np.random.Generator, n_docs: int = N_DOCS
) -> tuple[np.ndarray, np.ndarray]:
    """Draw the gold classes' counts and each system's confusion matrix given them."""
    n = rng.multinomial(n_docs, truth["mu"])
    conf = [
        np.array([rng.multinomial(k, row) for k, row in zip(n, th, strict=True)])
        for th in truth["theta"]
    ]
    return conf[0], conf[1]


def true_quantities(truth: dict[str, np.ndarray]) -> dict[str, float]:
    """Return the truths of :data:`QUANTITIES`: eta and the F1 differences of the true rates.

    Written out from the model: ``tp_j = mu_j theta_jj``, ``fn_j = mu_j - tp_j``,
    ``fp_j = sum_i mu_i theta_ij - tp_j``, per class ``F1 = 2 tp / (2 tp + fp + fn)``;
    macro is their mean, micro the F1 of the pooled rates.
    """
    mu, theta = truth["mu"], truth["theta"]
    joint = mu[None, :, None] * theta  # (system, true, predicted)
    tp = np.einsum("sjj->sj", joint)
    fp, fn = joint.sum(axis=1) - tp, mu[None, :] - tp
    per_class = 2 * tp / (2 * tp + fp + fn)
    micro = 2 * tp.sum(1) / (2 * tp.sum(1) + fp.sum(1) + fn.sum(1))
    return {
        "eta_a": float(truth["eta"][0]),
        "eta_b": float(truth["eta"][1]),
        "delta_macro": float(per_class[0].mean() - per_class[1].mean()),
        "delta_micro": float(micro[0] - micro[1]),
        "delta_class_0": float(per_class[0, 0] - per_class[1, 0]),
    }


def eta_log_likelihood(
    conf: np.ndarray, eta: np.ndarray, concentration: float = CONCENTRATION
) -> np.ndarray:
    """Log Dirichlet-multinomial likelihood of one confusion matrix at each value of `eta`.

    ``sum_j log B(a_j + c_j) - log B(a_j)`` with ``a_j = concentration w_j(eta)``, up to
    the multinomial coefficients (constant in eta). The row totals of ``a_j`` do not
    depend on eta, and an empty cell contributes ``gammaln(a) - gammaln(a) = 0``: only
    the non-empty cells are summed.
    """
    m = conf.shape[0]
    e = np.asarray(eta, dtype=float)[:, None]
    diagonal = np.eye(m, dtype=bool)
    out = np.zeros(e.shape[0])
    diagonal_a, off_a = concentration * e, concentration * (1.0 - e) / (m - 1)
    for a, cells in ((diagonal_a, conf[diagonal]), (off_a, conf[~diagonal])):
        c = cells[cells > 0]
        out += (special.gammaln(a + c) - special.gammaln(a)).sum(axis=1)
    return out


def exact_eta(
    conf: np.ndarray, n: int, rng: np.random.Generator, concentration: float = CONCENTRATION
) -> np.ndarray:
    """`n` independent draws of eta's exact posterior (prior Beta(1, 1)) given `conf`.

    The density is evaluated at the midpoints of :data:`GRID` equal cells of (0, 1) and
    taken as constant within a cell (it is bounded and smooth on [0, 1]); a draw picks a
    cell by its mass and a uniform point within it.
    """
    mid = (np.arange(GRID) + 0.5) / GRID
    logp = eta_log_likelihood(conf, mid, concentration)
    p = np.exp(logp - logp.max())
    cell = rng.choice(GRID, size=n, p=p / p.sum())
    return (cell + rng.uniform(size=n)) / GRID


def _posterior(eta: np.ndarray, deltas: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    return {
        "eta_a": eta[:, 0],
        "eta_b": eta[:, 1],
        "delta_macro": deltas["delta_macro"],
        "delta_micro": deltas["delta_micro"],
        "delta_class_0": deltas["delta_class"][:, 0],
    }


def exact_studies(
    n: int, rng: np.random.Generator, n_ranks: int = 100, concentration: float = CONCENTRATION
) -> dict[str, np.ndarray]:
    """Simulate `n` studies and their exact posterior draws (eta on a grid).

    `concentration` is the fit's prior mass per row (the truths always come from
    :data:`CONCENTRATION`): another value is a deliberately wrong fit.

    The ranks are taken among the first ``n_ranks - 1`` of 500 independent draws; the mean
    and sd of all 500. Returns the arrays of a ``validation.teeth`` pool: ``draws`` ``(n,
    quantity, n_ranks - 1)``, ``mean``, ``sd`` and ``truth`` ``(n, quantity)``.
    """
    from isbetter.f1.icdm import icdm_deltas
    from isbetter.f1.measures import f1

    out: dict[str, list[Any]] = {"draws": [], "mean": [], "sd": [], "truth": []}
    for _ in range(n):
        truth = draw_truth(rng)
        ca, cb = draw_confusions(truth, rng)
        eta = np.column_stack([exact_eta(c, 500, rng, concentration) for c in (ca, cb)])
        deltas = icdm_deltas(eta, ca, cb, f1, concentration=concentration, rng=rng)
        post = np.array(list(_posterior(eta, deltas).values()))  # (quantity, 500)
        out["draws"].append(post[:, : n_ranks - 1])
        out["mean"].append(post.mean(axis=1))
        out["sd"].append(post.std(axis=1))
        out["truth"].append(list(true_quantities(truth).values()))
    return {k: np.array(v, dtype=float) for k, v in out.items()}


@dataclass(frozen=True)
class ICDMSetting:
    """The sampler's settings of one NUTS study (:func:`replication`)."""

    draws: int = 300
    tune: int = 300
    chains: int = 2
    cores: int = 1
    backend: str = "auto"


def replication(
    s: ICDMSetting, seed: np.random.SeedSequence, n_ranks: int, keep: bool = False
) -> dict[str, Any]:
    """Simulate one study from the prior, fit it with ``sample_icdm``, return the ranks.

    With `keep`, also the thinned draws, means, sds and truths
    (:func:`validation.calibration.kept_draws`).
    """
    from isbetter import ConvergenceWarning
    from isbetter.f1.icdm import sample_icdm
    from isbetter.f1.measures import f1
    from isbetter.inference.sampling import Sampling

    rng = np.random.default_rng(seed)
    truth = draw_truth(rng)
    ca, cb = draw_confusions(truth, rng)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)  # recorded, not raised
        fit = sample_icdm(
            ca,
            cb,
            f1,
            concentration=CONCENTRATION,
            draws=s.draws,
            sampling=Sampling(tune=s.tune, chains=s.chains, cores=s.cores),
            backend=s.backend,
            seed_seq=np.random.SeedSequence(int(rng.integers(2**63))),
        )
    eta = fit.idata.posterior["eta"].to_numpy().reshape(-1, 2)
    posterior = _posterior(
        eta,
        {
            "delta_macro": fit.delta_macro,
            "delta_micro": fit.delta_micro,
            "delta_class": fit.delta_class,
        },
    )
    true = true_quantities(truth)
    return study_record(posterior, true, fit.diagnostics, n_ranks, keep=keep, coverage=False) | {
        "converged": bool(fit.diagnostics.converged)
    }
