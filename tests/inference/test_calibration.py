"""Simulation-based calibration in CI: bounded versions of ``validation/sbc.py``.

Each test draws parameters from the prior, data from the model, fits the model
with isbetter's code and tests the ranks of the truths among the posterior draws
for uniformity (Talts et al. 2018): the binned chi-squared test (any shape) and
Neyman's smooth test of order 2 (a shifted, a ∪ or a ∩ histogram: a biased, too
narrow or too wide posterior). A calibrated fit passes (p > 0.001 on both; seeds
are fixed, so the outcome is reproducible); a deliberately broken fit (wrong model
or wrong rho) must fail by far (p < 1e-6). Each test's size is chosen so that it
catches a posterior whose sd is 0.7 or 1.5 times the right one, or whose mean is
0.5 sd off, at least 80 % of the time: ``python -m validation.teeth`` measures it
(the table is in ``validation/README.md``). The full setting (q = 5, 10, 50; 1000
studies each; PNG histograms) is the script.
"""

import sys
from dataclasses import replace
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from validation.calibration import (  # noqa: E402
    HIERARCHICAL_PARAMETERS,
    HierarchicalSetting,
    draw_hierarchical_truth,
    draw_scores,
    f1_sbc,
    hierarchical_replication,
    matched_priors,
    smooth_uniformity,
    study_record,
    uniformity,
)

N_RANKS = 100
CALIBRATED_P = 1e-3
BROKEN_P = 1e-6


def _pvalues(ranks, bins):
    """The smaller of the chi-squared and the smooth test's p-value of uniformity."""
    return min(uniformity(ranks, N_RANKS, bins)[1], smooth_uniformity(ranks, N_RANKS))


def _f1_pvalues(model, reps=4000, n_docs=200, seed=11):
    res = f1_sbc(
        ("f1", "accuracy"),
        reps=reps,
        n_docs=n_docs,
        n_ranks=N_RANKS,
        rng=np.random.default_rng(seed),
        model=model,
    )
    return {k: _pvalues(v["ranks"], 20) for k, v in res.items()}


def test_matched_priors_reproduce_the_fixed_bounds():
    """The model's data-dependent bounds equal the bounds the parameters were drawn with."""
    from isbetter import from_arrays
    from isbetter.cv.hierarchical.spec import prepare

    s = HierarchicalSetting(5, delta0_bound=0.7, std0_bound=0.3, sigma_bound=2.0)
    rng = np.random.default_rng(3)
    for _ in range(5):
        t = draw_hierarchical_truth(s, rng)
        x = draw_scores(t["delta"], t["sigma"], s.n_scores, s.rho_data, rng)
        scores = from_arrays(x, np.zeros_like(x), runs=1).paired("A", "B")
        p = prepare(scores, 0.0, s.rho_fit, matched_priors(x, s))
        bounds = np.array([p.delta0_hi, p.std0_hi, p.std_hi]) * p.scale  # score units
        np.testing.assert_allclose(bounds, [0.7, 0.3, 2.0], rtol=1e-12)


def test_uniformity_flags_a_skewed_histogram():
    ranks = np.arange(1000) % N_RANKS
    assert uniformity(ranks, N_RANKS, 10)[1] > 0.99
    assert uniformity(ranks // 2, N_RANKS, 10)[1] < 1e-12


def test_study_record_ranks_covers_and_keeps_what_each_study_asks_for():
    """One record for every SBC study: the truth's rank among the thinned draws, whether
    the 95% HDI covers it, the diagnostics; the kept draws, coverage and ESS on request."""
    draws = np.random.default_rng(0).normal(size=4000)
    posterior = {"low": draws, "inside": draws, "high": draws}
    true = {"low": -10.0, "inside": 0.0, "high": 10.0}
    diag = SimpleNamespace(divergences=2, r_hat_max=1.01, ess_bulk_min=812.5)
    record = study_record(posterior, true, diag, N_RANKS)
    assert list(record) == ["ranks", "covered", "divergences", "r_hat_max"]
    assert record["ranks"]["low"] == 0 and record["ranks"]["high"] == N_RANKS - 1
    assert 0 < record["ranks"]["inside"] < N_RANKS - 1
    assert record["covered"] == {"low": False, "inside": True, "high": False}
    assert (record["divergences"], record["r_hat_max"]) == (2, 1.01)
    full = study_record(posterior, true, diag, N_RANKS, keep=True, coverage=False, ess=True)
    assert list(full) == ["kept", "ranks", "divergences", "r_hat_max", "ess_bulk_min"]
    assert full["kept"]["draws"]["inside"].shape == (N_RANKS - 1,)
    assert full["ess_bulk_min"] == 812.5


def test_smooth_test_is_exact_for_uniform_ranks_and_flags_shifts_and_spreads():
    """Uniform ranks give exactly zero components; a shift, a ∪ or a ∩ shape is caught.

    The ranks of a truth among draws of a posterior 0.7 times too narrow (∪), 1.5 times
    too wide (∩) or 0.5 sd off (shift), for a normal posterior: 300 each.
    """
    assert smooth_uniformity(np.arange(1000) % N_RANKS, N_RANKS) == pytest.approx(1.0)
    assert smooth_uniformity(np.linspace(0.0005, 0.9995, 1000)) == pytest.approx(1.0)
    g = np.random.default_rng(0)
    truth, draws = g.standard_normal((300, 1)), g.standard_normal((300, N_RANKS - 1))
    for scale, shift in ((0.7, 0.0), (1.5, 0.0), (1.0, 0.5)):
        planted = ((scale * draws + shift) < truth).sum(axis=1)
        assert smooth_uniformity(planted, N_RANKS) < 1e-3, (scale, shift)
    assert smooth_uniformity((draws < truth).sum(axis=1), N_RANKS) > 0.01
    # the continuous form: values in (0, 1)
    u = g.random(300)
    assert smooth_uniformity(u) > 0.01 and smooth_uniformity(u**1.5) < 1e-3


def test_f1_model_is_calibrated_cheaply():
    """1000 test sets of 200 documents (about a second): catches the teeth plants."""
    p = _f1_pvalues("paired", reps=1000, seed=12)
    assert min(p.values()) > CALIBRATED_P, p


@pytest.mark.slow
def test_f1_model_is_calibrated():
    """4000 test sets of 200 documents: exact posterior draws, ranks uniform for F1 and accuracy."""
    p = _f1_pvalues("paired")
    assert min(p.values()) > CALIBRATED_P, p


@pytest.mark.slow
def test_f1_sbc_fails_when_the_pairing_is_ignored():
    """Paired data fitted with the unpaired model (another likelihood and prior): caught.

    (For accuracy, a linear measure, the unpaired fit is off by less: p ~ 0.07 here.)
    """
    p = _f1_pvalues("unpaired")
    assert p["f1"] < BROKEN_P, p


def _hierarchical_pvalues(setting, reps, seed):
    seeds = np.random.SeedSequence(seed).spawn(reps)
    out = [hierarchical_replication(setting, s, N_RANKS) for s in seeds]
    ok = [o for o in out if "failed" not in o]
    # a study whose fit cannot start is left out (conditioning on the data keeps the rest
    # uniform); it must stay rare
    assert len(ok) >= 0.8 * reps, [o["failed"] for o in out if "failed" in o]
    return {k: _pvalues(np.array([o["ranks"][k] for o in ok]), 10) for k in HIERARCHICAL_PARAMETERS}


SMALL = HierarchicalSetting(5, draws=300, tune=300, chains=2, cores=2)


@pytest.mark.slow
def test_hierarchical_model_is_calibrated_with_five_datasets():
    """150 studies of 5 data sets x 10 folds from the prior: delta0, std0, nu, delta_1 uniform.

    With 60 studies and the chi-squared test alone, a posterior of delta_1 0.7 or 1.5
    times too wide was caught 13 % and 9 % of the time, 0.5 sd off 40 %; with 150 and
    the smooth test too, a posterior 0.7 times too wide 95.5 % of the time on a 600-study
    pool (``python -m validation.teeth``; the quick pool's subsets: all). The studies
    are the first of ``validation.teeth``'s pool ``hier5`` (its setting, fitted on two
    processes; cached in the user's cache, keyed by isbetter's source), so the slow step
    fits them once for this test and for the teeth test's rates.
    """
    from validation.teeth import HIERARCHICAL, QUICK_POOL_SIZES, studies

    assert replace(HIERARCHICAL, cores=SMALL.cores) == SMALL
    built = QUICK_POOL_SIZES["hier5"]
    pool = studies("hier5", built, workers=2)
    # a study whose fit cannot start is left out of the pool; it must stay rare
    assert len(pool.truth) >= 0.8 * built, len(pool.truth)
    ranks = pool.head(150).statistic(1.0, 0.0)
    assert ranks.shape == (150, len(HIERARCHICAL_PARAMETERS))
    p = {k: _pvalues(ranks[:, j], 10) for j, k in enumerate(HIERARCHICAL_PARAMETERS)}
    assert min(p.values()) > CALIBRATED_P, p


@pytest.mark.slow
def test_hierarchical_sbc_fails_with_a_wrong_rho():
    """Scores correlated with rho = 0.6, fitted with rho = 0.1: delta_1 far too confident."""
    wrong = replace(SMALL, rho_data=0.6, rho_fit=0.1)
    p = _hierarchical_pvalues(wrong, reps=60, seed=6)
    assert p["delta_1"] < BROKEN_P, p
