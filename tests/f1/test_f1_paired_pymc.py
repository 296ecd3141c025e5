"""The PyMC version of the paired model agrees with the exact conjugate sampler."""

import numpy as np
import pytest

from isbetter.f1.measures import f1, get_measure
from isbetter.f1.paired import sample_delta
from isbetter.f1.predictions import JointCounts
from isbetter.inference.summaries import hdi

COUNTS = JointCounts(pos=np.array([120, 40, 15, 25]), neg=np.array([10, 12, 30, 248]))


def test_model_structure_without_sampling():
    from _paired_pymc_oracle import build_paired_model

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
    NUTS (nutpie, or PyMC without it): 2 chains x 3 000 draws. Tolerances are 4 Monte Carlo
    standard errors
    of the NUTS estimates: sd / sqrt(ESS) for the mean, and for an HDI bound the
    error of a 2.5 % quantile, sd * sqrt(0.025 * 0.975 / ESS) / phi(1.96).
    """
    from _paired_pymc_oracle import sample_paired_pymc

    m = get_measure(measure)
    exact = sample_delta(COUNTS, m, draws=400_000, rng=np.random.default_rng(1))
    fit = sample_paired_pymc(COUNTS, m, draws=3000, tune=1000, chains=2, seed=2)
    assert fit.rhat < 1.01 and fit.ess > 1000
    assert fit.diagnostics.converged and fit.diagnostics.variables == ("delta",)
    sd = exact.std()
    mcse_mean = sd / np.sqrt(fit.ess)
    mcse_bound = sd * np.sqrt(0.025 * 0.975 / fit.ess) / 0.0584
    assert abs(fit.delta.mean() - exact.mean()) < 4 * mcse_mean
    np.testing.assert_allclose(hdi(fit.delta), hdi(exact), atol=4 * mcse_bound)


def test_sampler_seed_comes_from_a_seed_sequence(monkeypatch):
    """The sampler's seed is generated from SeedSequence(seed), not drawn from a generator."""
    import _paired_pymc_oracle as f1_paired_pymc

    from isbetter.inference.seeds import sampler_seed

    seen = {}

    def fake_sample(model, **kwargs):
        seen.update(kwargs)
        raise RuntimeError("stop before sampling")

    monkeypatch.setattr(f1_paired_pymc, "sample", fake_sample)
    with pytest.raises(RuntimeError, match="stop before sampling"):
        f1_paired_pymc.sample_paired_pymc(COUNTS, f1, seed=7, backend="pymc")
    assert seen["seed"] == sampler_seed(np.random.SeedSequence(7))
    assert seen["backend"] == "pymc" and seen["chains"] == 2
