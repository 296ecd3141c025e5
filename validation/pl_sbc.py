"""Simulation-based calibration of the Bayesian Plackett–Luce model (issue 33).

One replication draws the weights from the model's prior (``w ~ Dirichlet(alpha)``,
the fit's ``concentration``), every data set's ranking of the K systems from
Plackett–Luce(w) (Gumbel keys: ``argsort(-(log w + Gumbel))`` is a Plackett–Luce draw),
fits :func:`isbetter.plackett_luce` and returns the ranks of the true log-weights among
thinned posterior draws (Talts et al. 2018), as
:func:`validation.calibration.hierarchical_replication` does for the model of per-fold
scores. Ranks are invariant under the log; the log-weights are what ``validation/teeth.py``
plants miscalibrations into (nearer normal than the weights).

**Ties.** The fit's likelihood (``ties="marginal"``) treats a tied group as a coarsened
observation: the tied systems took their places in some unobserved order, and each order
counts with its Plackett–Luce probability. The simulator is that generative process: a
strict Plackett–Luce ranking, then a coarsening chosen independently of which systems
hold the places — each boundary between adjacent places is erased with probability
``tie_prob`` (places joined into one tied group get the same score). The coarsening does
not depend on the order (coarsened completely at random, Heitjan & Rubin 1991), so the
posterior from the summed likelihood is the exact posterior and the SBC ranks are uniform.
Ties made by rounding latent scores would not be: whether two systems tie would then
depend on their weights, a mechanism the likelihood does not model.
``tie_prob = 0`` gives untied data.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from typing import Any

import numpy as np

from validation.calibration import study_record


@dataclass(frozen=True)
class PLSetting:
    """One SBC design: K systems, N data sets, tie probability, the sampler's settings.

    ``fit_concentration`` differs from ``concentration`` (the truths' prior) only in a
    deliberately broken run.
    """

    n_systems: int = 4
    n_datasets: int = 10
    tie_prob: float = 0.0
    concentration: float = 1.0
    fit_concentration: float | None = None
    draws: int = 500
    tune: int = 300
    chains: int = 2
    cores: int = 1


def quantities(k: int) -> tuple[str, ...]:
    """Return the quantities whose ranks are tested: every system's log-weight."""
    return tuple(f"log_w{j}" for j in range(k))


def draw_scores(
    rng: np.random.Generator, w: np.ndarray, n_datasets: int, tie_prob: float
) -> np.ndarray:
    """Draw ``(N, K)`` scores, higher better: Plackett–Luce(w) rankings, coarsened at random.

    Each data set's strict ranking comes from Gumbel keys; then each of the K - 1
    boundaries between adjacent places is erased with probability `tie_prob`, whatever
    systems hold them, and a system's score is minus the index of its tied group.
    """
    k = w.size
    keys = np.log(w) + rng.gumbel(size=(n_datasets, k))
    order = np.argsort(-keys, axis=1)  # systems best first
    new_group = rng.random((n_datasets, k - 1)) >= tie_prob  # a boundary kept
    group = np.concatenate([np.zeros((n_datasets, 1)), np.cumsum(new_group, axis=1)], axis=1)
    scores = np.empty((n_datasets, k))
    np.put_along_axis(scores, order, -group, axis=1)
    return scores


def replication(
    s: PLSetting, seed: np.random.SeedSequence, n_ranks: int, keep: bool = False
) -> dict[str, Any]:
    """Simulate one study from the prior, fit it, return ranks, HDI coverage and diagnostics."""
    from isbetter import ConvergenceWarning
    from isbetter.cv.plackett_luce import plackett_luce

    rng = np.random.default_rng(seed)
    w = rng.dirichlet(np.full(s.n_systems, s.concentration))
    scores = draw_scores(rng, w, s.n_datasets, s.tie_prob)
    alpha = s.concentration if s.fit_concentration is None else s.fit_concentration
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)  # recorded, not raised
        fit = plackett_luce(
            scores,
            concentration=alpha,
            draws=s.draws,
            tune=s.tune,
            chains=s.chains,
            cores=s.cores,
            rng=int(rng.integers(2**31)),
        )
    names = quantities(s.n_systems)
    log_w = np.log(fit.draws)  # (chains * draws, K), chains concatenated
    posterior = {name: log_w[:, j] for j, name in enumerate(names)}
    true = {name: float(np.log(w[j])) for j, name in enumerate(names)}
    return study_record(posterior, true, fit.diagnostics, n_ranks, keep=keep) | {
        "tied_datasets": fit.tied_datasets
    }
