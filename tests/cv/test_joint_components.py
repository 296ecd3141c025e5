"""The joint model with independent t components of the deviations (``docs/joint_prior.md``).

Each data set's contrasts are :math:`\\tilde u_i = Q \\operatorname{diag}(s) z_i` with
:math:`z_{ij} \\sim t_{\\nu_j}(0, 1)` independent, :math:`Q` the Gram-Schmidt
orthonormalisation of a matrix of independent :math:`N(0, 1)` (Haar), :math:`s_j \\sim`
half-:math:`t_2(0, A)`; the sampler sees the t's as scale mixtures (weights
:math:`\\lambda_{ij}`) and integrates each data set's deviations out given one noise
weight (``test_joint_marginal.py`` checks that form). Checked here: the compiled density
and gradient against the PyMC statement and against central differences, that at K = 2
the law of the deviations is the shared-nu Huang-Wand model's, the option and what a fit
records.
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
from scipy import integrate, stats

from _joint_data import (
    assert_compiled_matches_pymc,
    assert_gradient_is_central_differences,
    score_table,
    study_scores,
)
from isbetter import ConvergenceWarning
from isbetter.core.errors import InputError
from isbetter.cv.joint.spec import JointPriors, contrast_basis, prepare

#: independent components with their defaults (Huang and Wand's half-t scale)
COMP = JointPriors(tails="components")


def _data(rng, q, k, priors=COMP, n=10):
    scores = study_scores(rng, np.linspace(0.0, 0.02, k), q=q, n=n)
    return prepare(score_table(scores), [f"s{m}" for m in range(k)], priors=priors).model_data(
        priors
    )


def _n_dim(q, k):
    d = k - 1
    return 3 * d + 2 * q * d + d * d


@pytest.mark.parametrize(("q", "k", "n"), [(6, 2, 10), (4, 3, 10), (3, 5, 6)])
def test_compiled_components_match_pymc(rng, q, k, n):
    """The hand-written density and gradient are the PyMC model's
    (``build_model(..., tails="components")``), to 1e-9, at random points."""
    import pymc as pm

    from isbetter.cv.joint.pymc_backend import build_model

    data = _data(rng, q, k, n=n)
    assert float(data["components"]) == 1.0
    model = build_model(q, k, "huang-wand", "components")
    with model:
        pm.set_data(data)
    flat = assert_compiled_matches_pymc(rng, model, data)
    assert flat.size == _n_dim(q, k)


def test_the_gradient_is_the_density_s_central_differences(rng):
    """Independently of PyMC (Gram-Schmidt's reverse mode included): the gradient
    against central differences of the value."""
    q, k = 4, 4
    data = _data(rng, q, k)
    x = 0.6 * rng.normal(size=_n_dim(q, k))
    assert_gradient_is_central_differences(x, data)


def _half_t_logpdf(s, a_scale, df=2.0):
    return math.log(2.0) + stats.t.logpdf(s / a_scale, df) - math.log(a_scale)


def test_at_two_systems_the_law_is_the_shared_huang_wand_model_s():
    """K = 2: the coordinates differ (the shared model samples the weights lambda_i and
    psi and integrates Omega out; the components sample s), but the law of the
    deviations is the same. Given nu both make u~_i iid t_nu(0, sigma), sigma = s here and
    sqrt(Omega) there, so the laws agree iff sigma's priors do: the shared model's
    Omega | psi ~ InvGamma(1, psi/2), psi ~ Gamma(1/2, spread_rate), integrated over psi
    by quadrature, is the components' half-t_2(0, A) at every sigma (same data, A from the
    same robust spread)."""
    rng = np.random.default_rng(3)
    scores = study_scores(rng, [0.0, 0.01], q=6)
    table = score_table(scores)
    hw = JointPriors(spread_prior="huang-wand")
    shared = prepare(table, ["s0", "s1"], priors=hw).model_data(hw)
    comp = prepare(table, ["s0", "s1"], priors=COMP).model_data(COMP)
    rate, a_scale = float(shared["spread_rate"]), float(comp["half_t_scale"])
    assert float(comp["spread_df"]) == 2.0

    def sigma_density(sigma):
        omega = sigma**2

        def integrand(psi):
            gamma = stats.gamma.pdf(psi, 0.5, scale=1.0 / rate)
            return gamma * stats.invgamma.pdf(omega, 1.0, scale=psi / 2.0)

        value = integrate.quad(integrand, 0.0, np.inf, limit=200, epsabs=0.0, epsrel=1e-10)[0]
        return 2.0 * sigma * value

    for sigma in a_scale * np.array([0.01, 0.3, 1.0, 2.5, 20.0]):
        expected = math.exp(_half_t_logpdf(np.array([sigma]), a_scale)[0])
        assert sigma_density(sigma) == pytest.approx(expected, rel=1e-6)


def test_the_prior_is_invariant_under_permutations_of_the_systems():
    """A permutation of the systems is an orthogonal map O of the contrasts; the law of
    O Q is Q's (Haar), so the deviations' law does not change. Checked on Gram-Schmidt's
    Q: the distribution of a fixed entry of O Q equals that of Q's (both that of one
    coordinate of a uniform unit vector)."""
    rng = np.random.default_rng(5)
    k = 4
    d = k - 1
    h = contrast_basis(k)
    o = h.T @ np.eye(k)[[2, 0, 3, 1]] @ h
    raw = rng.normal(size=(4000, d, d))
    q_mats, upper = np.linalg.qr(raw)
    q_mats = q_mats * np.sign(np.diagonal(upper, axis1=1, axis2=2))[:, None, :]
    rotated = o @ q_mats
    for a in range(d):
        test = stats.ks_2samp(q_mats[:, a, 0], rotated[:, a, 0])
        assert test.pvalue > 1e-3
        # one coordinate of a uniform unit vector in R^3 is uniform on (-1, 1)
        assert stats.kstest(rotated[:, a, 0], stats.uniform(-1, 2).cdf).pvalue > 1e-3


def test_the_option_needs_huang_and_wand_s_form():
    from isbetter.cv.joint.pymc_backend import build_model

    assert COMP.spread_prior == "huang-wand"
    with pytest.raises(InputError, match="components.*'huang-wand'.*'inverse-wishart'"):
        JointPriors(tails="components", spread_prior="inverse-wishart")
    with pytest.raises(InputError, match="components.*'huang-wand'.*'inverse-wishart'"):
        build_model(3, 3, "inverse-wishart", "components")


def test_a_fit_records_nu_per_component_and_the_loading(rng):
    from isbetter.cv.joint.model import joint_fit

    q, k = 4, 3
    scores = study_scores(rng, [0.0, 0.01, 0.02], q=q)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        fit = joint_fit(score_table(scores), priors=COMP, draws=50, tune=50, chains=2, rng=2)
    assert fit.nu.shape == (2, 50, k - 1) and fit.loading.shape == (2, 50, k - 1, k - 1)
    assert fit.settings["tails"] == "components"
    assert set(fit.settings["spread_prior"]) == {"form", "df", "component_scale"}
    h = contrast_basis(k)
    w = np.einsum("d,cndj->cnj", h[0] - h[1], fit.loading)
    np.testing.assert_allclose(fit.pair_scales()[..., 0], np.sqrt((w**2).sum(-1)), rtol=1e-10)
    # the loading's columns are the directions Q times the scales drawn after the fit
    post = fit.idata.posterior
    norms = np.sqrt((fit.loading**2).sum(axis=-2, keepdims=True))
    np.testing.assert_allclose(fit.loading / norms, post["directions"].to_numpy(), atol=1e-12)
    np.testing.assert_allclose(post["loading"].to_numpy() * fit.data.scale, fit.loading)
    assert post["precision"].shape == (2, 50, q, k - 1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        again = joint_fit(score_table(scores), priors=COMP, draws=50, tune=50, chains=2, rng=2)
    np.testing.assert_array_equal(again.loading, fit.loading)  # same seed, same draws
    np.testing.assert_array_equal(again.effects, fit.effects)


def test_nuts_settings_reach_the_sampler_and_are_recorded(rng, monkeypatch):
    from isbetter.cv.joint import model as joint_model
    from isbetter.cv.joint.model import NutsSettings, joint_fit

    calls = []

    def recording(*args, **kwargs):
        calls.append(kwargs)
        return sample(*args, **kwargs)

    sample = joint_model.sample
    monkeypatch.setattr(joint_model, "sample", recording)
    table = score_table(study_scores(rng, [0.0, 0.01, 0.02], q=4))
    nuts = NutsSettings(mass_matrix="low_rank", target_accept=0.95, max_depth=2)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        fit = joint_fit(table, priors=COMP, draws=50, tune=50, chains=2, rng=2, nuts=nuts)
        default = joint_fit(table, priors=COMP, draws=50, tune=50, chains=2, rng=2)
    told, untold = calls
    assert (told["mass_matrix"], told["target_accept"], told["max_depth"]) == ("low_rank", 0.95, 2)
    assert (untold["mass_matrix"], untold["target_accept"], untold["max_depth"]) == (
        "diagonal",
        0.9,
        None,
    )
    for settings, want in ((fit.settings, nuts), (default.settings, NutsSettings())):
        got = (settings["mass_matrix"], settings["target_accept"], settings["max_depth"])
        assert got == (want.mass_matrix, want.target_accept, want.max_depth)
    # nutpie obeys the depth: at most 2 ** 2 leapfrog steps a draw, where the default takes more
    assert int(fit.idata.sample_stats["n_steps"].max()) <= 4
    assert int(default.idata.sample_stats["n_steps"].max()) > 4


def test_nuts_settings_refuse_bad_values():
    from isbetter.cv.joint.model import NutsSettings

    with pytest.raises(InputError, match="mass_matrix"):
        NutsSettings(mass_matrix="dense")  # type: ignore[arg-type]
    with pytest.raises(InputError, match="target_accept.*1.5"):
        NutsSettings(target_accept=1.5)
