"""The PyMC version of the paired model agrees with the exact conjugate sampler."""

from pathlib import Path

import numpy as np
import pytest

from isbetter.measures import f1, get_measure
from isbetter.models.f1 import sample_delta
from isbetter.predictions import JointCounts
from isbetter.summary import hdi

COUNTS = JointCounts(pos=np.array([120, 40, 15, 25]), neg=np.array([10, 12, 30, 248]))


def test_model_structure_without_sampling():
    from isbetter.models.f1_pymc import build_paired_model

    model = build_paired_model(COUNTS, f1)
    assert {v.name for v in model.free_RVs} == {"mu", "theta_pos", "theta_neg"}
    assert {v.name for v in model.deterministics} == {"psi_a", "psi_b", "delta"}
    assert {v.name for v in model.observed_RVs} == {"n_pos", "c_pos", "c_neg"}
    assert model.named_vars_to_dims["theta_pos"] == ("outcome",)
    logp = model.compile_logp()(model.initial_point())
    assert np.isfinite(logp)


@pytest.mark.slow
@pytest.mark.parametrize("measure", ["f1", "balanced_accuracy"])
def test_pymc_agrees_with_exact_sampler(measure):
    """Posterior mean and 95 % HDI bounds of delta agree within Monte Carlo error.

    Exact: 400 000 independent draws (its errors are negligible next to MCMC's).
    PyMC NUTS: 2 chains x 3 000 draws. Tolerances are 4 Monte Carlo standard errors
    of the NUTS estimates: sd / sqrt(ESS) for the mean, and for an HDI bound the
    error of a 2.5 % quantile, sd * sqrt(0.025 * 0.975 / ESS) / phi(1.96).
    """
    from isbetter.models.f1_pymc import sample_paired_pymc

    m = get_measure(measure)
    exact = sample_delta(COUNTS, m, draws=400_000, rng=np.random.default_rng(1))
    fit = sample_paired_pymc(
        COUNTS, m, draws=3000, tune=1000, chains=2, rng=np.random.default_rng(2)
    )
    assert fit.rhat < 1.01 and fit.ess > 1000
    sd = exact.std()
    mcse_mean = sd / np.sqrt(fit.ess)
    mcse_bound = sd * np.sqrt(0.025 * 0.975 / fit.ess) / 0.0584
    assert abs(fit.delta.mean() - exact.mean()) < 4 * mcse_mean
    np.testing.assert_allclose(hdi(fit.delta), hdi(exact), atol=4 * mcse_bound)


def _example_confusions():
    import pandas as pd

    from isbetter.predictions import predictions_from_arrays

    df = pd.read_csv(
        Path(__file__).resolve().parents[1] / "data" / "f1_example" / "predictions.csv"
    )
    t = predictions_from_arrays(df.gold, svm=df.svm, nb=df.nb)
    return t, t.confusion("svm"), t.confusion("nb")


def test_icdm_model_structure_without_sampling():
    from isbetter.models.f1_pymc import build_icdm_model

    _, ca, cb = _example_confusions()
    model = build_icdm_model(ca, cb, f1)
    assert {v.name for v in model.free_RVs} == {"mu", "eta_a", "theta_a", "eta_b", "theta_b"}
    assert model.named_vars_to_dims["theta_a"] == ("true", "pred")
    assert np.isfinite(model.compile_logp()(model.initial_point()))


@pytest.mark.slow
def test_icdm_model_agrees_with_the_flat_joint_model():
    """ICDM 2015 hierarchical model vs the exact flat-cell joint model on 2 000 documents.

    Different priors and the ICDM model is unpaired, so only a loose agreement is
    expected: macro-F1 posterior means within 0.3 posterior sd (the prior differences
    are negligible at this size; NUTS MC error ~0.03 sd), and the unpaired model wider.
    """
    from isbetter.f1_compare import compare_f1
    from isbetter.models.f1_pymc import sample_icdm

    t, ca, cb = _example_confusions()
    icdm = sample_icdm(ca, cb, f1, draws=1000, tune=1000, rng=np.random.default_rng(0))
    flat = compare_f1(t, system_a="svm", system_b="nb", rng=1, draws=10_000, baselines=False)
    row = flat.row("macro")
    assert icdm["rhat"] < 1.01
    assert abs(icdm["delta_macro"].mean() - row["mean"]) < 0.3 * icdm["delta_macro"].std()
    assert icdm["delta_macro"].std() > row["sd"]
    micro = flat.row("micro")
    assert abs(icdm["delta_micro"].mean() - micro["mean"]) < 0.3 * icdm["delta_micro"].std()
