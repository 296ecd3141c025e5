"""Simulation-based calibration of the ICDM model of two confusion matrices (isbetter.f1.icdm).

Each study draws eta, theta and mu from the model's own prior, a test set of 60
documents of 3 classes from its likelihood, fits the model and ranks the truths of
eta_A, eta_B and the F1 differences (macro, micro, the first class's) among 99
posterior draws (Talts et al. 2018); the ranks must be uniform by the binned
chi-squared test and Neyman's smooth test (p > 0.001, the rule of
``tests/inference/test_calibration.py``). The simulation is ``validation/icdm_sbc.py``.

* Default suite: eta drawn from its exact posterior on a grid (its likelihood written
  out here, checked against scipy's Dirichlet-multinomial), then isbetter's exact
  conditional draws of mu, theta and the deltas (``icdm_deltas``): 500 studies, a few
  seconds. A fit with another prior mass must fail by far.
* Slow step: the whole sampler (``sample_icdm``: NUTS on eta, then the exact draws),
  200 studies; they are a pool of ``validation/teeth.py`` (``studies``: cached in the
  user's cache, keyed by a digest of isbetter's source and the simulation code), so
  the slow step fits them once for this test and for ``python -m validation.teeth
  --quick``.

Both sizes catch a posterior 30 % too narrow, 50 % too wide or shifted by half its
sd in any one quantity at least 80 % of the time (``validation/teeth.py``; the table
is in docs/teeth.md).
"""

import sys
from pathlib import Path

import numpy as np
import pytest
from scipy import stats

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from validation.calibration import smooth_uniformity, uniformity  # noqa: E402
from validation.icdm_sbc import (  # noqa: E402
    QUANTITIES,
    draw_confusions,
    draw_truth,
    eta_log_likelihood,
    exact_studies,
)
from validation.teeth import (  # noqa: E402
    CALIBRATED_P,
    ICDM_EXACT_TEST_SIZE,
    ICDM_TEST_SIZE,
    N_RANKS,
    chi2_and_smooth_rule,
    studies,
)

BROKEN_P = 1e-6  # a deliberately wrong fit must fail by far


def _pvalues(ranks, bins):
    """Per quantity: the smaller of the chi-squared and the smooth test's p-value."""
    return {
        k: min(uniformity(ranks[:, j], N_RANKS, bins)[1], smooth_uniformity(ranks[:, j], N_RANKS))
        for j, k in enumerate(QUANTITIES)
    }


def _ranks(pool):
    return (pool["draws"] < pool["truth"][..., None]).sum(axis=-1)


def test_grid_likelihood_of_eta_is_the_dirichlet_multinomial():
    """The SBC's own likelihood of eta differs between two values as scipy's DirMult rows do."""
    rng = np.random.default_rng(4)
    for concentration in (1.0, 10.0):
        conf = draw_confusions(draw_truth(rng), rng)[0]
        eta = np.array([0.2, 0.75])
        got = eta_log_likelihood(conf, eta, concentration)
        expected = []
        for e in eta:
            w = np.where(np.eye(3, dtype=bool), e, (1 - e) / 2) * concentration
            expected.append(
                sum(
                    stats.dirichlet_multinomial.logpmf(row, w[j], row.sum())
                    for j, row in enumerate(conf)
                )
            )
        assert got[0] - got[1] == pytest.approx(expected[0] - expected[1], rel=1e-9)


def test_icdm_exact_conditional_draws_are_calibrated():
    """500 studies, eta exact on a grid, isbetter's conditional draws: every rank uniform."""
    pool = exact_studies(ICDM_EXACT_TEST_SIZE, np.random.default_rng(21), N_RANKS)
    ranks = _ranks(pool)
    assert ranks.shape == (ICDM_EXACT_TEST_SIZE, len(QUANTITIES))
    p = _pvalues(ranks, 20)
    assert chi2_and_smooth_rule(20)(ranks) and min(p.values()) > CALIBRATED_P, p


def test_icdm_sbc_fails_with_another_prior_mass():
    """Truths from prior mass 1 per row, fits with mass 10: eta's ranks far from uniform."""
    pool = exact_studies(200, np.random.default_rng(22), N_RANKS, concentration=10.0)
    p = _pvalues(_ranks(pool), 10)
    assert p["eta_a"] < BROKEN_P and p["eta_b"] < BROKEN_P, p


@pytest.mark.slow
def test_icdm_model_is_calibrated():
    """200 studies fitted by NUTS (2 chains x 300 draws): every quantity's ranks uniform.

    The studies: teeth's pool (``studies``, 2 processes; the first 200 of 250).
    """
    pool = studies("icdm", ICDM_TEST_SIZE, workers=2)
    ranks = pool.statistic(1.0, 0.0)
    assert ranks.shape == (ICDM_TEST_SIZE, len(QUANTITIES))
    p = _pvalues(ranks, 10)
    assert chi2_and_smooth_rule(10)(ranks) and min(p.values()) > CALIBRATED_P, p
    assert pool.divergences is not None and np.mean(pool.divergences == 0) > 0.9
