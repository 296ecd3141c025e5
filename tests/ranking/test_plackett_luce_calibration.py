"""Calibration of the Bayesian Plackett–Luce model (issue 33: tests with teeth).

Default suite: one fit of K = 3 systems, with a tied group that does not close its
ranking, against the exact posterior computed by quadrature over the simplex (the
likelihood written here, independently of isbetter): the posterior mean and sd of every
weight within 4 Monte Carlo standard errors. The same check fails the fit's own draws
with each planted miscalibration of ``validation/teeth.py`` (sd x 0.7, x 1.5, mean + 0.5
sd), so it has teeth against them.

Slow step: simulation-based calibration (Talts et al. 2018; ``validation/pl_sbc.py``).
Each study draws the weights from the model's prior, K = 4 systems' rankings on N data
sets from Plackett–Luce(w) — untied at N = 10; at N = 30 with ties coarsened at random,
the likelihood's own tie model — fits ``plackett_luce`` and ranks the true log-weights
among 99 thinned posterior draws; the binned chi-squared test and Neyman's smooth test
must find the ranks uniform (p > 0.001), and a fit with a prior far from the truths'
must fail by far. The studies are pools of ``validation/teeth.py`` (``studies``: cached
in the user's cache, keyed by a digest of isbetter's source and of the simulation code),
shared with ``python -m validation.teeth --quick``, which measures how often this rule
catches each planted miscalibration (docs/teeth.md).
"""

import sys
from dataclasses import replace
from pathlib import Path

import arviz as az
import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from validation.calibration import smooth_uniformity, uniformity  # noqa: E402
from validation.pl_sbc import PLSetting, draw_scores, quantities, replication  # noqa: E402
from validation.teeth import (  # noqa: E402
    PL_POOLS,
    PL_TEST_SIZE,
    PLANTS,
    chi2_and_smooth_rule,
    studies,
)

from isbetter.cv.plackett_luce import plackett_luce  # noqa: E402

N_RANKS = 100
CALIBRATED_P = 1e-3
BROKEN_P = 1e-6

#: K = 3 systems on 9 data sets, best first; "0=1" a tie of 0 and 1 above 2
ORDERS = ["0>1>2"] * 3 + ["1>0>2"] * 2 + ["2>0>1", "0=1>2", "0=1>2", "1>2=0"]


def _scores(orders):
    """Scores (higher better) of weak orders written ``"a>b=c"``."""
    scores = np.zeros((len(orders), 3))
    for i, order in enumerate(orders):
        for place, group in enumerate(order.split(">")):
            for system in group.split("="):
                scores[i, int(system)] = -place
    return scores


def _likelihood(w, orders):
    """Plackett–Luce probability of the weak orders at weights ``w`` (3, ...), by hand.

    A tied group followed by the rest R sums its orders' probabilities; a group that
    closes the ranking has probability 1.
    """
    total = np.ones(w.shape[1:])
    for order in orders:
        groups = [[int(s) for s in g.split("=")] for g in order.split(">")]
        for at, group in enumerate(groups[:-1]):
            rest = sum(w[s] for g in groups[at + 1 :] for s in g)
            if len(group) == 1:
                p = w[group[0]] / (w[group[0]] + rest)
            else:  # two tied: a then b, or b then a
                a, b = group
                p = w[a] / (w[a] + w[b] + rest) * w[b] / (w[b] + rest)
                p = p + w[b] / (w[a] + w[b] + rest) * w[a] / (w[a] + rest)
            total = total * p
    return total


def _exact_moments(orders, alpha, n=1200):
    """Posterior mean and sd of each weight by the midpoint rule on the simplex."""
    x = (np.arange(n) + 0.5) / n
    w0, w1 = np.meshgrid(x, x, indexing="ij")
    inside = w0 + w1 < 1
    w = np.stack([w0[inside], w1[inside], 1 - w0[inside] - w1[inside]])
    dens = _likelihood(w, orders) * np.prod(w ** (alpha - 1), axis=0)
    dens /= dens.sum()
    mean = w @ dens
    return mean, np.sqrt(((w - mean[:, None]) ** 2) @ dens)


def _z_scores(weights, mean, sd):
    """z-scores of the draws' mean and sd against the exact ones, in Monte Carlo errors.

    ``weights`` is ``(chains, draws, K)``; the sd's error by the delta method from the
    squared deviations' effective sample size (as ArviZ's ``mcse(method="sd")``).
    """
    zs = []
    for k in range(weights.shape[-1]):
        x = weights[..., k]
        dev2 = (x - x.mean()) ** 2
        m_se = x.std() / np.sqrt(float(az.ess(x, method="mean")))
        s_se = dev2.std() / np.sqrt(float(az.ess(dev2, method="mean"))) / (2 * x.std())
        zs += [(x.mean() - mean[k]) / m_se, (x.std() - sd[k]) / s_se]
    return np.array(zs)


@pytest.mark.parametrize("alpha", [1.0, 2.0])
def test_posterior_matches_the_exact_one_with_ties(alpha):
    """K = 3, 9 data sets (3 tied): mean and sd of every weight within 4 MCSE of quadrature.

    With each of teeth's plants applied to the same draws, some z-score exceeds 4.
    """
    fit = plackett_luce(_scores(ORDERS), concentration=alpha, draws=1000, chains=4, rng=5)
    assert fit.tied_datasets == 3
    mean, sd = _exact_moments(ORDERS, alpha)
    z = _z_scores(fit.weights, mean, sd)
    assert np.all(np.abs(z) < 4), z
    w, centre = fit.weights, fit.weights.mean(axis=(0, 1))
    for plant, (scale, shift) in PLANTS.items():
        if plant != "none":
            planted = centre + scale * (w - centre) + shift * w.std(axis=(0, 1))
            assert np.max(np.abs(_z_scores(planted, mean, sd))) > 4, plant


def test_simulated_ties_are_coarsened_at_random():
    """``draw_scores``: Plackett–Luce orders (w0 first with probability w0), ties by place."""
    g = np.random.default_rng(3)
    w = np.array([0.5, 0.3, 0.15, 0.05])
    scores = draw_scores(g, w, 20_000, 0.0)
    first = np.argmax(scores, axis=1)
    share = np.bincount(first, minlength=4) / first.size
    assert np.all(np.abs(share - w) < 4 * np.sqrt(w * (1 - w) / first.size)), share
    tied = draw_scores(g, w, 20_000, 0.3)
    groups = np.array([np.unique(row).size for row in tied])
    assert abs(groups.mean() - (1 + 3 * 0.7)) < 4 * np.sqrt(3 * 0.21 / groups.size)
    assert np.all(np.isin(tied, -np.arange(4)))


@pytest.mark.slow
@pytest.mark.parametrize("key", list(PL_POOLS))
def test_plackett_luce_is_calibrated(key):
    """250 studies from the prior: every log-weight's ranks uniform; divergences rare.

    The studies: teeth's pool (``studies``, 2 processes), fitted once for this test and
    ``python -m validation.teeth --quick``.
    """
    pool = studies(key, PL_TEST_SIZE, workers=2)
    ranks = pool.statistic(1.0, 0.0)
    names = quantities(PL_POOLS[key].n_systems)
    assert ranks.shape == (PL_TEST_SIZE, len(names))
    p = {
        k: min(uniformity(ranks[:, j], N_RANKS, 10)[1], smooth_uniformity(ranks[:, j], N_RANKS))
        for j, k in enumerate(names)
    }
    assert chi2_and_smooth_rule(10)(ranks) and min(p.values()) > CALIBRATED_P, p
    assert pool.divergences is not None and np.mean(pool.divergences == 0) > 0.95


@pytest.mark.slow
def test_pl_sbc_fails_with_a_wrong_prior():
    """Truths from Dirichlet(1), fits with Dirichlet(5): the SBC must fail by far.

    Measured: the smallest p-value of the four log-weights 3e-16 (log_w0's alone 6e-7).
    """
    broken = replace(PLSetting(), fit_concentration=5.0)
    seeds = np.random.SeedSequence(33).spawn(60)
    out = [replication(broken, s, N_RANKS) for s in seeds]
    p = {}
    for k in quantities(broken.n_systems):
        ranks = np.array([o["ranks"][k] for o in out])
        p[k] = min(uniformity(ranks, N_RANKS, 10)[1], smooth_uniformity(ranks, N_RANKS))
    assert min(p.values()) < BROKEN_P, p
