"""Simulation-based calibration of the joint model in CI: a bounded ``validation/joint_sbc.py``.

As ``tests/inference/test_calibration.py`` does for the pairwise model: each study
draws the parameters from the prior (K = 4 systems, 10 folds), scores from the
model, fits it with isbetter's code and ranks the truths among the posterior draws
(Talts et al. 2018) — two effect differences, a pair's deviation scale, nu, the
next data set's difference and the first data set's. A calibrated fit passes
(p > 0.001 on every quantity; seeds are fixed, so the outcome is reproducible); a
fit told the wrong correlation of the scores must fail by far (p < 1e-6), which
shows the check has teeth. The full setting (q = 5, 10, 50; 1000 studies each;
histograms) is the script.
"""

import sys
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from validation.calibration import uniformity  # noqa: E402
from validation.joint_sbc import QUANTITIES, JointSetting, replication  # noqa: E402

N_RANKS = 100
CALIBRATED_P = 1e-3
BROKEN_P = 1e-6


def _pvalues(setting: JointSetting, reps: int, seed: int) -> dict[str, float]:
    seeds = np.random.SeedSequence(seed).spawn(reps)
    out = [replication(setting, s, N_RANKS) for s in seeds]
    return {
        k: uniformity(np.array([o["ranks"][k] for o in out]), N_RANKS, 10)[1] for k in QUANTITIES
    }


def _setting(q: int, spread_prior: str = "inverse-wishart") -> JointSetting:
    return JointSetting(q, draws=300, tune=300, chains=2, cores=2, spread_prior=spread_prior)


@pytest.mark.slow
@pytest.mark.parametrize(("q", "reps"), [(5, 200), (10, 200), (50, 100)])
def test_joint_model_is_calibrated(q, reps):
    """K = 4 on q data sets from the prior: every quantity's ranks uniform."""
    p = _pvalues(_setting(q), reps=reps, seed=q)
    assert min(p.values()) > CALIBRATED_P, p


@pytest.mark.slow
def test_joint_sbc_fails_with_a_wrong_rho():
    """Scores correlated with rho = 0.6, fitted with rho = 0.1: a data set's difference too sure."""
    p = _pvalues(replace(_setting(10), rho=0.6, rho_fit=0.1), reps=60, seed=6)
    assert p["data set 0: 0 - 1"] < BROKEN_P, p


# Huang and Wand's prior of the deviations' covariance (JointPriors(spread_prior=
# "huang-wand"), docs/joint_prior.md): the studies draw the spread from it (a half-t
# scale fixed in score units, the fit's factor matched to it per study)
@pytest.mark.slow
@pytest.mark.parametrize(("q", "reps"), [(5, 200), (10, 200), (50, 100)])
def test_joint_model_is_calibrated_with_the_huang_wand_prior(q, reps):
    p = _pvalues(_setting(q, "huang-wand"), reps=reps, seed=q)
    assert min(p.values()) > CALIBRATED_P, p


@pytest.mark.slow
def test_joint_sbc_with_the_huang_wand_prior_fails_with_a_wrong_rho():
    """Scores correlated with rho = 0.6, fitted with rho = 0.1: each data set's mean looks
    better known than it is, so the spread of the means is put into the deviations (the
    pair's scale too large: p ~ 1e-23) and a data set's difference is too sure."""
    p = _pvalues(replace(_setting(10, "huang-wand"), rho=0.6, rho_fit=0.1), reps=60, seed=6)
    assert p["scale 0-1"] < BROKEN_P, p
    assert p["data set 0: 0 - 1"] < CALIBRATED_P, p
