"""The joint model with independent t components of the deviations (``docs/joint_prior.md``).

Each data set's contrasts are :math:`\\tilde u_i = Q \\operatorname{diag}(s) z_i` with
:math:`z_{ij} \\sim t_{\\nu_j}(0, 1)` independent, :math:`Q` the Gram-Schmidt
orthonormalisation of a matrix of independent :math:`N(0, 1)` (Haar), :math:`s_j \\sim`
half-:math:`t_2(0, A)`; the sampler sees the t's as scale mixtures (weights
:math:`\\lambda_{ij}`) and each data set's deviations integrated out given one noise weight
:math:`\\kappa_i` (the marginal form; the deviations are drawn after the fit).
Checked here: the compiled density against a SciPy statement and against the PyMC
statement, its gradient against central differences, that integrating the noise weights
out gives the law of the sampled deviations (quadrature, d = 1, 2), that at K = 2 the
law of the deviations is the shared-nu Huang-Wand model's, the option and what a fit
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
from isbetter.cv.joint.spec import (
    COMPONENT_SHEAR,
    DIRECTION_DET_POWER,
    JointPriors,
    contrast_basis,
    direction_prior_const,
    prepare,
)
from isbetter.inference.nu_prior import interpolate, nu_prior_table

#: independent components with their defaults (Huang and Wand's half-t scale)
COMP = JointPriors(tails="components")


def _data(rng, q, k, priors=COMP, n=10):
    scores = study_scores(rng, np.linspace(0.0, 0.02, k), q=q, n=n)
    return prepare(score_table(scores), [f"s{m}" for m in range(k)], priors=priors).model_data(
        priors
    )


def _n_dim(q, k):
    d = k - 1
    return 2 * d + q + q * d + (d * d if d > 1 else 0)  # no R at d = 1


def _gram_schmidt(raw):
    """Gram-Schmidt's Q of `raw` (numpy's QR with R's diagonal made positive)."""
    basis_q, upper = np.linalg.qr(raw)
    return basis_q * np.sign(np.diag(upper))


def _weight(xi, nu):
    """The weights' map: lambda = exp(-1/nu + spread(nu) xi), and log(spread(nu))."""
    spread = np.sqrt(2.0 * (nu + 1.0)) / nu
    return np.exp(-1.0 / nu + spread * xi), np.log(spread)


def _parts(x, data):
    """The quantities at `x` (the kernel's coordinates) and their priors' log density with
    the Jacobians: nu, lambda, s, Q (Gram-Schmidt of R), kappa and its log density per
    data set, the c_i / kappa_i."""
    means, power = np.asarray(data["means"]), np.asarray(data["power"])
    q, d = means.shape
    table = nu_prior_table(
        tuple(float(data[b]) for b in ("alpha_lo", "alpha_hi", "beta_lo", "beta_hi"))
    )
    df, a_scale = (float(data[key]) for key in ("spread_df", "half_t_scale"))
    at = np.cumsum([0, d, q, q * d, d, d * d if d > 1 else 0])
    x_nu, x_kappa, x_lam, x_s, x_raw = (x[at[m] : at[m + 1]] for m in range(5))
    nu = 1.0 + np.exp(x_nu)
    priors = sum(interpolate(t, table)[0] + t for t in x_nu)
    lam, log_spread = _weight(x_lam.reshape(q, d), nu)
    priors += np.sum(stats.gamma.logpdf(lam, nu / 2.0, scale=2.0 / nu) + np.log(lam) + log_spread)
    log_s = x_s + 0.5 * COMPONENT_SHEAR * np.log(nu / (nu + 2.0))  # the shear: Jacobian 1
    s = np.exp(log_s)
    priors += np.sum(np.log(2.0) + stats.t.logpdf(s / a_scale, df) - np.log(a_scale) + log_s)
    basis_q = np.ones((1, 1))  # d = 1: no R, Q = (1)
    if d > 1:
        raw = x_raw.reshape(d, d)  # exp(-|R|^2/2) |det R|^m / its integral (Haar Q)
        priors += -0.5 * np.sum(raw**2) + DIRECTION_DET_POWER * np.linalg.slogdet(raw)[1]
        priors -= direction_prior_const(d)  # tested in test_joint_marginal
        basis_q = _gram_schmidt(raw)
    a = power - 0.5 * d
    kappa, log_spread = _weight(x_kappa, 2.0 * a)
    noise = stats.gamma.logpdf(kappa, a, scale=1.0 / a) + np.log(kappa) + log_spread
    return priors, noise, (lam, s, basis_q, power / a / kappa)


def _covariances(data, lam, s, basis_q, c_over):
    """The M_i = Q D_i Q^T + (c_i / kappa_i) T_i T_i^T."""
    tri = np.asarray(data["transform"])
    return np.stack(
        [
            basis_q @ np.diag(s**2 / lam[i]) @ basis_q.T + c_over[i] * tri[i] @ tri[i].T
            for i in range(lam.shape[0])
        ]
    )


def _reference(x, data):
    """The marginal form's log density at `x` written with SciPy, in pieces: the priors of
    (nu, lambda, s, R) with their Jacobians, those of the noise weights kappa_i (one per
    data set), and the likelihood of all data sets' means with the effects beta ~ N(0,
    tau^2 I) integrated out: one Gaussian of the stacked means, covariance blockdiag(M_i)
    + tau^2 (1 1^T kron I_d)."""
    means = np.asarray(data["means"])
    q, d = means.shape
    priors, noise, (lam, s, basis_q, c_over) = _parts(x, data)
    cov = np.kron(np.ones((q, q)), float(data["effect_hi"]) ** 2 * np.eye(d))
    for i, block in enumerate(_covariances(data, lam, s, basis_q, c_over)):
        cov[i * d : (i + 1) * d, i * d : (i + 1) * d] += block
    like = stats.multivariate_normal.logpdf(means.reshape(-1), np.zeros(q * d), cov)
    return float(data["const"]), priors, noise, like


def _given_effects(x, data, beta):
    """log prod_i N(means_i - beta; 0, M_i) at `x` and effects' coordinates `beta`."""
    means = np.asarray(data["means"])
    _, _, (lam, s, basis_q, c_over) = _parts(x, data)
    return sum(
        stats.multivariate_normal.logpdf(means[i] - beta, np.zeros(means.shape[1]), m)
        for i, m in enumerate(_covariances(data, lam, s, basis_q, c_over))
    )


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


@pytest.mark.parametrize(("q", "k"), [(6, 2), (4, 3), (3, 5)])
def test_the_density_is_the_scipy_statement_s(rng, q, k):
    """The compiled density is the marginal form written with SciPy (multivariate normal,
    gamma, half-t, the xi maps), to 1e-9, at random points."""
    from isbetter.cv.joint.compiled_backend import log_density

    data = _data(rng, q, k)
    for _ in range(3):
        x = 0.7 * rng.normal(size=_n_dim(q, k))
        const, priors, noise, like = _reference(x, data)
        expected = const + priors + noise.sum() + like.sum()
        assert log_density(x, data)[0] == pytest.approx(expected, rel=1e-10, abs=1e-9)


def test_a_position_of_another_length_is_refused(rng):
    """`log_density` refuses an `x` whose length is not the model's (the kernel reads
    that many coordinates: a shared-form `x` on components data read past its end and
    crashed the process), naming `x`, the length expected and the shape found."""
    from isbetter.cv.joint.compiled_backend import log_density

    data = _data(rng, 4, 3)
    n_dim = _n_dim(4, 3)
    x = 0.7 * rng.normal(size=n_dim)
    assert np.isfinite(log_density(x, data)[0])
    for bad in (x[:-5], np.append(x, 0.0), x[None, :]):
        with pytest.raises(InputError, match=rf"`x`.*{n_dim} unconstrained.*{bad.shape}"):
            log_density(bad, data)


@pytest.mark.parametrize(("q", "k"), [(4, 2), (4, 4), (3, 5)])
def test_the_gradient_is_the_density_s_central_differences(rng, q, k):
    """Independently of PyMC (Gram-Schmidt's reverse mode included): the gradient
    against central differences of the value."""
    data = _data(rng, q, k)
    x = 0.6 * rng.normal(size=_n_dim(q, k))
    assert_gradient_is_central_differences(x, data)


#: a small real study: 5 UCI data sets x 4 classifiers, one of the subsets of
#: validation/joint_smallq.py on which the components' fits diverged
UCI_SETS, UCI_SYSTEMS = ["16", "22", "32", "34", "36"], ["aode", "j48", "j48gr", "nbc"]


def _uci_data():
    from validation.joint_smallq import real_table

    table = real_table("uci", UCI_SETS, UCI_SYSTEMS)
    return prepare(table, UCI_SYSTEMS, rope=0.01, priors=COMP).model_data(COMP)


@pytest.mark.parametrize("j", [0, 1, 2])
def test_the_density_stays_accurate_out_to_huge_component_scales(j):
    """Along u_j = log s_j (sheared) from 0 to 20 (s_j up to 5e8), at a fixed point of a
    real 5 x 4 study: the whole gradient is the value's central differences (rtol 1e-5,
    atol 1e-5, as everywhere here) and the tail is the law's: finite, with slope -(q + 2)
    (q data sets' log det, -1 each, and the half-t_2's -2) within 0.5 beyond log10 s = 4.
    A factor of M_i in the data's basis failed both from log10 s ~ 5 (its small directions
    lost next to the huge one) and gave -inf by 8.7."""
    from isbetter.cv.joint.compiled_backend import log_density

    data = _uci_data()
    q, d = len(UCI_SETS), len(UCI_SYSTEMS) - 1
    at_s = d + q + q * d
    x0 = np.random.default_rng(3).uniform(-1.0, 1.0, size=_n_dim(q, d + 1))
    values = {}
    for u in np.arange(0.0, 20.5, 2.5):
        x = x0.copy()
        x[at_s + j] = u
        values[u] = log_density(x, data)[0]
        assert math.isfinite(values[u])
        assert_gradient_is_central_differences(x, data)
    tail = [u for u in values if u / math.log(10.0) > 4.0]
    slopes = np.diff([values[u] for u in tail]) / 2.5
    np.testing.assert_allclose(slopes, -(q + 2), atol=0.5)


def _today_s_factor(r, tri, power, cov):
    """log of integral N(u~; 0, cov) (1 + |eta|^2/(2 P))^-P / |det T| du~, eta = T^-1 (r -
    u~): one data set's likelihood of the sampled deviations, by quadrature (d = 1, 2)."""
    d = r.size
    root = np.linalg.cholesky(cov)
    reach = 12.0 * max(np.sqrt(np.diag(cov)).max(), np.abs(np.diag(tri)).max()) + np.abs(r).max()

    def integrand(*u):
        u = np.asarray(u[::-1])  # dblquad passes (inner, outer)
        eta = np.linalg.solve(tri, r - u)
        z = np.linalg.solve(root, u)
        log_normal = -0.5 * z @ z - np.log(np.diag(root)).sum() - 0.5 * d * math.log(2 * math.pi)
        log_t = -power * math.log1p(eta @ eta / (2.0 * power))
        return math.exp(log_normal + log_t) / abs(np.linalg.det(tri))

    if d == 1:
        value = integrate.quad(
            integrand, -reach, reach, points=[0.0, r[0]], limit=800, epsabs=0.0, epsrel=1e-12
        )[0]
    else:
        value = integrate.dblquad(
            integrand, -reach, reach, -reach, reach, epsabs=0.0, epsrel=1e-11
        )[0]
    return math.log(value)


@pytest.mark.parametrize(("q", "k"), [(5, 2), (2, 3)])
def test_integrating_the_noise_weights_out_gives_today_s_law(rng, q, k):
    """The same law of (beta, nu, lambda, s, Q) as sampling the deviations (d = 1, 2): at
    fixed effects beta, each data set's N(means_i - beta; 0, M_i) times kappa_i's prior
    (with its Jacobian), integrated over kappa_i (quadrature over its coordinate xi_i),
    equals integral N(u~; 0, Q D_i Q^T) (1 + |eta_i|^2/(2 P_i))^-P_i du~ / |det T_i| with
    eta_i = T_i^-1 (means_i - beta - u~), the likelihood of the sampled deviations with its
    Jacobian and constant (const's share less the scale mixture's, d/2 log(2 pi P) +
    lgamma(P - d/2) - lgamma(P)), to 1e-8 relative. (The kernel's integral over beta is
    test_the_effects_integrate_out_by_quadrature's.)"""
    from scipy import special

    d = k - 1
    data = _data(rng, q, k)
    means, tri, power = (np.asarray(data[key]) for key in ("means", "transform", "power"))
    x = 0.5 * rng.normal(size=_n_dim(q, k))
    at_s = d + q + q * d
    # the scales of the noise's size: both factors of each integrand matter
    x[at_s : at_s + d] = np.log(2.0 * np.abs(np.diagonal(tri, axis1=1, axis2=2)).mean())
    beta = 0.5 * means.mean(axis=0)
    _, _, (lam, s, basis_q, _) = _parts(x, data)
    mixture = (
        0.5 * d * np.log(2.0 * math.pi * power)
        + special.gammaln(power - 0.5 * d)
        - special.gammaln(power)
    )
    for i in range(q):
        base = _given_effects(x, data, beta)

        def moved(t, i=i, base=base):
            y = x.copy()
            y[d + i] = t
            _, noise, _ = _parts(y, data)
            return math.exp(_given_effects(y, data, beta) + noise[i] - base)

        # |xi_i| > 30: log kappa_i beyond +-13, where its Gamma(a_i, a_i) has no mass
        value = integrate.quad(moved, -30.0, 30.0, limit=400, epsabs=0.0, epsrel=1e-12)
        cov = basis_q @ np.diag(s**2 / lam[i]) @ basis_q.T
        today = _today_s_factor(means[i] - beta, tri[i], power[i], cov) - mixture[i]
        others = sum(  # the other data sets' factors, which xi_i leaves alone
            stats.multivariate_normal.logpdf(means[m] - beta, np.zeros(d), c)
            for m, c in enumerate(_covariances(data, *_parts(x, data)[2]))
            if m != i
        )
        assert base + math.log(value[0]) - others == pytest.approx(today, rel=0.0, abs=1e-8)


@pytest.mark.parametrize(("q", "k"), [(4, 2), (3, 3)])
def test_the_effects_integrate_out_by_quadrature(rng, q, k):
    """The kernel's density is the uncollapsed one, prod_i N(means_i - beta; 0, M_i)
    N(beta; 0, tau^2 I) with the other priors, integrated over beta by quadrature (d =
    1, 2), to 1e-8 absolute in the log; tau shrunk to the means' size so that the
    prior's share (the log det P' term among it) is not negligible. A wrong sign of
    -1/2 log det P' is off by |log det P'| (here > 0.1)."""
    from isbetter.cv.joint.compiled_backend import log_density

    d = k - 1
    data = _data(rng, q, k)
    tau = 3.0 * float(np.abs(np.asarray(data["means"])).max())
    data["effect_hi"] = np.asarray(tau)
    x = 0.5 * rng.normal(size=_n_dim(q, k))
    const, priors, noise, _ = _reference(x, data)
    rest = const + priors + noise.sum()
    peak = _given_effects(x, data, np.asarray(data["means"]).mean(axis=0))

    def integrand(*beta):
        beta = np.asarray(beta[::-1])
        prior = stats.multivariate_normal.logpdf(beta, np.zeros(d), tau**2 * np.eye(d))
        return math.exp(_given_effects(x, data, beta) + prior - peak)

    reach = 6.0 * tau
    if d == 1:
        value = integrate.quad(integrand, -reach, reach, limit=400, epsabs=0.0, epsrel=1e-11)[0]
    else:
        value = integrate.dblquad(
            integrand, -reach, reach, -reach, reach, epsabs=0.0, epsrel=1e-10
        )[0]
    expected = rest + peak + math.log(value)
    assert log_density(x, data)[0] == pytest.approx(expected, rel=0.0, abs=1e-8)
    _, _, (lam, s, basis_q, c_over) = _parts(x, data)
    inverse = np.linalg.inv(_covariances(data, lam, s, basis_q, c_over))
    log_det_p = np.linalg.slogdet(np.eye(d) / tau**2 + inverse.sum(axis=0))[1]
    assert abs(log_det_p) > 0.1  # a sign error in its term: off by this, 1e7 tolerances


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
    accept = joint_model.COMPONENTS_SAMPLER.target_accept  # the form's, NutsSettings() says none
    assert (untold["mass_matrix"], untold["target_accept"], untold["max_depth"]) == (
        "diagonal",
        accept,
        None,
    )
    for settings, want in (
        (fit.settings, nuts),
        (default.settings, NutsSettings(target_accept=accept)),
    ):
        got = (settings["mass_matrix"], settings["target_accept"], settings["max_depth"])
        assert got == (want.mass_matrix, want.target_accept, want.max_depth)
    # nutpie obeys the depth: at most 2 ** 2 leapfrog steps a draw, where the default takes more
    assert int(fit.idata.sample_stats["n_steps"].max()) <= 4
    assert int(default.idata.sample_stats["n_steps"].max()) > 4


class _Sampled(Exception):
    """Raised by a stand-in sampler once it has recorded what it was asked."""


@pytest.mark.parametrize("route", ["joint_fit", "rank"])
def test_the_sampler_defaults_are_the_forms_and_are_recorded(rng, monkeypatch, route):
    """Draws, tuning steps and target acceptance not given come from the form's
    SamplerDefaults (COMPONENTS_SAMPLER for the default form, SHARED_SAMPLER for one nu),
    through joint_fit and rank(method="joint"); given values win. Distinct stand-in
    defaults show that the values come from there and nowhere else."""
    from isbetter import rank
    from isbetter.cv.joint import model as joint_model
    from isbetter.cv.joint.model import NutsSettings, SamplerDefaults, sampler_defaults

    comp = SamplerDefaults(draws=7, tune=3, target_accept=0.97)
    shared = SamplerDefaults(draws=11, tune=5, target_accept=0.83)
    monkeypatch.setattr(joint_model, "COMPONENTS_SAMPLER", comp)
    monkeypatch.setattr(joint_model, "SHARED_SAMPLER", shared)
    assert (sampler_defaults("components"), sampler_defaults("per-system")) == (comp, shared)
    calls = []

    def recording(*args, **kwargs):
        calls.append({k: kwargs[k] for k in ("draws", "tune", "target_accept")})
        raise _Sampled

    monkeypatch.setattr(joint_model, "sample", recording)
    table = score_table(study_scores(rng, [0.0, 0.01, 0.02], q=4))

    def fit(**options):
        with pytest.raises(_Sampled):
            if route == "rank":
                rank(table, method="joint", rope=0.01, rng=1, **options)
            else:
                joint_model.joint_fit(table, rope=0.01, rng=1, **options)

    fit()
    fit(priors=JointPriors(spread_prior="inverse-wishart"))
    fit(priors=JointPriors(tails="per-system"))
    fit(draws=13, tune=2)
    if route == "joint_fit":
        fit(nuts=NutsSettings(target_accept=0.91))
    assert [tuple(c.values()) for c in calls] == [
        (7, 3, 0.97),
        (11, 5, 0.83),
        (11, 5, 0.83),
        (13, 2, 0.97),
        *([(7, 3, 0.91)] if route == "joint_fit" else []),
    ]


def test_a_fit_records_the_sampler_defaults_it_used(rng):
    """The settings of a fit with the default form hold the draws, tuning steps and target
    acceptance it used (the form's SamplerDefaults where none were given)."""
    from isbetter.cv.joint.model import COMPONENTS_SAMPLER, joint_fit

    table = score_table(study_scores(rng, [0.0, 0.01, 0.02], q=4))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        fit = joint_fit(table, rope=0.01, chains=2, rng=1)
    assert fit.settings["tails"] == "components"
    assert (fit.settings["draws"], fit.settings["tune"], fit.settings["target_accept"]) == (
        COMPONENTS_SAMPLER.draws,
        COMPONENTS_SAMPLER.tune,
        COMPONENTS_SAMPLER.target_accept,
    )
    assert fit.effects.shape == (2, COMPONENTS_SAMPLER.draws, 3)


def test_nuts_settings_refuse_bad_values():
    from isbetter.cv.joint.model import NutsSettings

    with pytest.raises(InputError, match="mass_matrix"):
        NutsSettings(mass_matrix="dense")  # type: ignore[arg-type]
    with pytest.raises(InputError, match="target_accept.*1.5"):
        NutsSettings(target_accept=1.5)
