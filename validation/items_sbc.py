"""Simulation-based calibration of the items' models (DESIGN §4.3): hierarchical and exact.

One replication draws the hyper-parameters from the model's priors
(:class:`~isbetter.items.hierarchical.priors.ItemsHierarchicalPriors`), each subtask's
direction and discordance rate, the counts from the exact likelihood, fits
:func:`~isbetter.items.hierarchical.model.hierarchical_items` and returns the ranks of the
truths among thinned posterior draws (Talts et al. 2018), as
:func:`validation.calibration.hierarchical_replication` does for the model of per-fold
scores. ``tests/items/test_items_hierarchical_calibration.py`` runs it in the slow step.

:func:`paired_studies` does the same for the exact paired model of one task
(:mod:`isbetter.items.paired`), whose posterior is sampled directly: thousands of studies
in seconds (``tests/items/test_paired.py`` in the default suite).
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy import special

from validation.calibration import study_record

#: items per study of the exact paired model's SBC: few, so that the prior matters
PAIRED_ITEMS = 50


def paired_studies(
    n: int, rng: np.random.Generator, n_ranks: int = 100, alpha: float = 1.0
) -> dict[str, np.ndarray]:
    """Simulate `n` studies of the exact paired model and its posterior draws.

    Truth ``theta ~ Dir(1, 1, 1, 1)`` (its prior), ``PAIRED_ITEMS`` items ``~ Mult(theta)``,
    and the posterior of ``delta = theta10 - theta01``. Returns the ``n_ranks - 1`` draws
    the ranks are taken among ``(n, 1, n_ranks - 1)``, the mean and sd of 600 draws
    ``(n, 1)`` and the truths ``(n, 1)`` (the arrays of a ``validation.teeth`` pool).
    The ranks use the first draws of 600: when ``n10 == n01`` the sampler mirrors its
    second half of draws (``-d``), so all of them together are not independent (a truth
    at 0 would always rank in the middle), the first half is.
    `alpha` is the fit's Dirichlet concentration (the truths always come from 1).
    """
    from isbetter.items.paired import ItemCounts, sample_delta

    theta = rng.dirichlet(np.ones(4), size=n)
    counts = rng.multinomial(PAIRED_ITEMS, theta)
    d = np.stack([sample_delta(ItemCounts(*c), alpha=alpha, draws=600, rng=rng) for c in counts])
    return {
        "draws": d[:, None, : n_ranks - 1],
        "mean": d.mean(axis=1)[:, None],
        "sd": d.std(axis=1)[:, None],
        "truth": (theta[:, 1] - theta[:, 2])[:, None],
    }


#: the quantities whose ranks are tested
QUANTITIES = ("mu", "sigma", "mu_phi", "nu", "population_mean", "delta_1")


@dataclass(frozen=True)
class ItemsSetting:
    """One SBC design: subtasks, items per subtask, the sampler's settings, the fit's priors.

    ``fit_priors`` (a dict of :class:`ItemsHierarchicalPriors` fields) differ from the
    priors the truths are drawn from in a deliberately broken run.
    """

    n_subtasks: int = 6
    n_items: int = 60
    draws: int = 300
    tune: int = 300
    chains: int = 2
    cores: int = 2
    fit_priors: tuple[tuple[str, float], ...] = ()


def draw_truth(rng: np.random.Generator, s: ItemsSetting) -> dict[str, Any]:
    """Draw the hyper-parameters and every subtask's direction and rate from the priors."""
    from isbetter.items.hierarchical.population import population_mean
    from isbetter.items.hierarchical.priors import ItemsHierarchicalPriors

    p = ItemsHierarchicalPriors()
    alpha = rng.uniform(p.alpha_lower, p.alpha_upper)
    beta = rng.uniform(p.beta_lower, p.beta_upper)
    truth = {
        "nu": 1.0 + rng.gamma(alpha, 1.0 / beta),
        "mu": rng.normal(0.0, p.mu_scale),
        "sigma": abs(rng.normal(0.0, p.sigma_scale)),
        "mu_phi": rng.normal(0.0, p.mu_phi_scale),
        "tau_phi": abs(rng.normal(0.0, p.tau_phi_scale)),
    }
    q = s.n_subtasks
    share = special.expit(truth["mu"] + truth["sigma"] * rng.standard_t(truth["nu"], q))
    rate = special.expit(truth["mu_phi"] + truth["tau_phi"] * rng.standard_normal(q))
    hyper = (truth[k] for k in ("nu", "mu", "sigma", "mu_phi", "tau_phi"))
    truth["population_mean"] = float(population_mean(*(np.array([v]) for v in hyper))[0])
    truth["share"], truth["rate"] = share, rate
    truth["delta"] = rate * (2.0 * share - 1.0)
    return truth


def draw_counts(rng: np.random.Generator, truth: dict[str, Any], n_items: Any) -> Any:
    """Draw each subtask's 2x2 counts (the concordant items split at random).

    `truth` holds each subtask's ``share`` and ``rate``; `n_items` its items (one number
    for all, or one per subtask).
    """
    import pandas as pd

    q = truth["share"].size
    d = rng.binomial(n_items, truth["rate"])
    n10 = rng.binomial(d, truth["share"])
    n11 = rng.binomial(n_items - d, 0.5)
    return pd.DataFrame(
        {
            "task": [f"t{i}" for i in range(q)],
            "n11": n11,
            "n10": n10,
            "n01": d - n10,
            "n00": n_items - d - n11,
        }
    )


def replication(
    s: ItemsSetting, seed: np.random.SeedSequence, n_ranks: int, keep: bool = False
) -> dict[str, Any]:
    """Simulate one study from the prior, fit it, return ranks, HDI coverage and diagnostics."""
    from isbetter import ConvergenceWarning
    from isbetter.inference.sampling import Sampling
    from isbetter.items.hierarchical.model import hierarchical_items
    from isbetter.items.hierarchical.priors import ItemsHierarchicalPriors

    rng = np.random.default_rng(seed)
    truth = draw_truth(rng, s)
    counts = draw_counts(rng, truth, s.n_items)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)  # recorded, not raised
        res = hierarchical_items(
            counts,
            priors=ItemsHierarchicalPriors(**dict(s.fit_priors)),
            draws=s.draws,
            sampling=Sampling(tune=s.tune, chains=s.chains, cores=s.cores),
            rng=int(rng.integers(2**31)),
        )
    posterior = {name: res.hyper[name] for name in ("mu", "sigma", "mu_phi", "nu")}
    posterior["population_mean"] = res.population_mean
    posterior["delta_1"] = res.delta[:, 0]
    true = {k: float(truth[k]) for k in ("mu", "sigma", "mu_phi", "nu", "population_mean")}
    true["delta_1"] = float(truth["delta"][0])
    return study_record(posterior, true, res.diagnostics, n_ranks, keep=keep) | {
        "converged": bool(res.diagnostics.converged),
        "parameterization": res.settings["parameterization"],
        "refitted": res.settings["refit_of"] is not None,
    }
