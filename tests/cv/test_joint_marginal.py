"""Independent components with each data set's deviations integrated out (the marginal form).

``docs/joint_prior.md``: the noise likelihood of data set i is a Gaussian scale mixture with
one weight kappa_i, so given the weights the deviations u~_i integrate out and
means_i - beta ~ N(0, M_i), M_i = Q D_i Q^T + (c_i/kappa_i) T_i T_i^T. Checked here: the PyMC
statement's log density against a NumPy/SciPy reference written from the formulas, the
scale-mixture identity and its constants by quadrature (at d = 1 and d = 2, the same law as
the deviations sampled), and the post-fit draws of the effects (integrated out by the
sampler, beta ~ N(0, tau^2 I)) and of the deviations against their Gaussian conditionals.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import integrate, special, stats

from _joint_data import score_table, study_scores
from isbetter.cv.joint.spec import (
    COMPONENT_SHEAR,
    DIRECTION_DET_POWER,
    JointPriors,
    contrast_basis,
    direction_prior_const,
    prepare,
)

#: independent components with their defaults (Huang and Wand's half-t scale)
COMP = JointPriors(tails="components")


def _data(rng, q, k, n=10):
    scores = study_scores(rng, np.linspace(0.0, 0.02, k), q=q, n=n)
    return prepare(score_table(scores), [f"s{m}" for m in range(k)], priors=COMP).model_data(COMP)


def _nu_prior(x, data):
    """log p(nu - 1 = x): Gamma(alpha, beta) with alpha, beta uniform, by 2-D quadrature."""
    lo_a, hi_a = float(data["alpha_lo"]), float(data["alpha_hi"])
    lo_b, hi_b = float(data["beta_lo"]), float(data["beta_hi"])
    value = integrate.dblquad(
        lambda b, a: stats.gamma.pdf(x, a, scale=1.0 / b),
        lo_a,
        hi_a,
        lo_b,
        hi_b,
        epsabs=0.0,
        epsrel=1e-13,
    )[0]
    return math.log(value / ((hi_a - lo_a) * (hi_b - lo_b)))


def _weights(xi, nu):
    """Weights w ~ Gamma(nu/2, nu/2) at xi (log w = -1/nu + spread xi): w and log density."""
    spread = np.sqrt(2.0 * (nu + 1.0)) / nu
    log_w = -1.0 / nu + spread * xi
    w = np.exp(log_w)
    return w, stats.gamma.logpdf(w, nu / 2.0, scale=2.0 / nu) + log_w + np.log(spread)


def _orthonormal(raw):
    """Gram-Schmidt's Q of `raw`: numpy's QR with R's diagonal made positive."""
    basis_q, upper = np.linalg.qr(raw)
    return basis_q * np.sign(np.diag(upper))


def _reference_logp(point, data):
    """The marginal form's log density at `point` (the PyMC model's value variables)."""
    means = np.asarray(data["means"])
    transform = np.asarray(data["transform"])
    power = np.asarray(data["power"])
    q, d = means.shape
    x = point["nu_minus_one_log__"]
    logp = float(data["const"]) + sum(_nu_prior(math.exp(v), data) + v for v in x)
    nu = 1.0 + np.exp(x)
    shape = power - d / 2.0
    kappa, kappa_logp = _weights(point["noise_weight_std"], 2.0 * shape)
    lam, lam_logp = _weights(point["precision_std"], nu[None, :])
    logp += kappa_logp.sum() + lam_logp.sum()
    # the sampled u_j: log s_j = u_j + c/2 log(nu_j/(nu_j + 2)), a shear of Jacobian 1
    log_s = point["component_log_scale"] + 0.5 * COMPONENT_SHEAR * np.log(nu / (nu + 2.0))
    s = np.exp(log_s)
    n, a_scale = float(data["spread_df"]), float(data["half_t_scale"])
    logp += np.sum(math.log(2.0) + stats.t.logpdf(s, n, scale=a_scale) + log_s)
    basis_q = np.ones((1, 1))  # d = 1: no R, Q = (1)
    if d > 1:
        raw = point["direction_raw"]
        m = DIRECTION_DET_POWER  # exp(-|R|^2/2) |det R|^m / ((2 pi)^(d^2/2) E|det R|^m)
        moment = sum(  # log E|det R|^m, R Gaussian: a product of chi moments (Bartlett)
            0.5 * m * math.log(2.0) + special.gammaln((k + m) / 2.0) - special.gammaln(k / 2.0)
            for k in range(1, d + 1)
        )
        logp += stats.norm.logpdf(raw).sum() + m * np.linalg.slogdet(raw)[1] - moment
        basis_q = _orthonormal(raw)
    # the effects beta ~ N(0, tau^2 I) integrated out: the stacked means are Gaussian,
    # covariance blockdiag(M_i) + tau^2 (1 1^T kron I_d)
    cov = np.kron(np.ones((q, q)), float(data["effect_hi"]) ** 2 * np.eye(d))
    for i in range(q):
        block = cov[i * d : (i + 1) * d, i * d : (i + 1) * d]
        block += basis_q @ np.diag(s**2 / lam[i]) @ basis_q.T
        block += power[i] / shape[i] / kappa[i] * transform[i] @ transform[i].T
    return logp + stats.multivariate_normal.logpdf(means.reshape(-1), np.zeros(q * d), cov)


@pytest.mark.parametrize(("q", "k", "n"), [(6, 2, 10), (4, 3, 10), (3, 5, 6)])
def test_the_pymc_statement_is_the_marginal_density(rng, q, k, n):
    """``build_model(..., tails="components")``'s compiled logp (potentials and
    Jacobians included) equals the reference written from the formulas with SciPy's
    densities, to 1e-9, at random points; the free variables in the compiled density's
    order."""
    import pymc as pm

    from isbetter.cv.joint.pymc_backend import build_model

    data = _data(rng, q, k, n=n)
    model = build_model(q, k, "huang-wand", "components")
    with model:
        pm.set_data(data)
    assert [v.name for v in model.value_vars] == [
        "nu_minus_one_log__",
        "noise_weight_std",
        "precision_std",
        "component_log_scale",
        *(["direction_raw"] if k > 2 else []),  # no R at d = 1: Q = (1)
    ]
    assert [v.name for v in model.deterministics] == [
        "nu",
        "noise_weight",
        "precision",
        "component_scale",
        "directions",
    ]
    logp = model.compile_logp(mode="FAST_COMPILE")
    for _ in range(3):
        point = {
            name: 0.7 * rng.normal(size=np.shape(v)) for name, v in model.initial_point().items()
        }
        assert float(logp(point)) == pytest.approx(
            _reference_logp(point, data), rel=1e-11, abs=1e-9
        )


def _mixture_constant(power, d):
    """(d/2) log(2 pi P) + lgamma(P - d/2) - lgamma(P): the scale mixture's constant."""
    return (
        0.5 * d * math.log(2.0 * math.pi * power)
        + math.lgamma(power - d / 2.0)
        - math.lgamma(power)
    )


def _over_kappa(residual, prior, noise_root, power):
    """exp(constant) x integral over kappa of N(r; 0, prior + (c/kappa) T T^T) Gamma(a, a)."""
    d = residual.size
    a = power - d / 2.0
    c = power / a

    def integrand(log_kappa):
        kappa = math.exp(log_kappa)
        cov = prior + c / kappa * noise_root @ noise_root.T
        normal = stats.multivariate_normal.logpdf(residual, np.zeros(d), cov)
        return math.exp(normal + stats.gamma.logpdf(kappa, a, scale=1.0 / a) + log_kappa)

    value = integrate.quad(integrand, -40.0, 20.0, limit=400, epsabs=0.0, epsrel=1e-12)[0]
    return math.exp(_mixture_constant(power, d)) * value


def _t_kernel(v, noise_root, power):
    """|det T|^-1 (1 + |T^-1 v|^2 / (2P))^-P: the noise likelihood in the residual v."""
    eta = np.linalg.solve(noise_root, v)
    return (1.0 + eta @ eta / (2.0 * power)) ** -power / abs(np.linalg.det(noise_root))


def test_the_mixture_is_the_noise_likelihood_at_one_and_two_contrasts(rng):
    """The same law as the deviations sampled: integral over u~ of N(u~; 0, Pi) times the
    noise likelihood (by quadrature over u~) equals the marginal form's integral over
    kappa, constants included (d = 1 to 1e-8 relative; d = 2 by a 2-D quadrature)."""
    power, residual, sd = 5.5, np.array([0.7]), 0.4
    root = np.array([[0.8]])
    over_u = integrate.quad(
        lambda u: stats.norm.pdf(u, scale=sd) * _t_kernel(residual - u, root, power),
        -np.inf,
        np.inf,
        epsabs=0.0,
        epsrel=1e-12,
    )[0]
    assert _over_kappa(residual, np.array([[sd**2]]), root, power) == pytest.approx(
        over_u, rel=1e-8
    )
    power, residual = 6.0, np.array([0.3, -1.1])
    root = np.triu(rng.normal(size=(2, 2))) + np.eye(2)
    basis_q = _orthonormal(rng.normal(size=(2, 2)))
    prior = basis_q @ np.diag([0.5, 0.05]) @ basis_q.T
    over_u = integrate.dblquad(
        lambda u1, u0: (
            stats.multivariate_normal.pdf([u0, u1], np.zeros(2), prior)
            * _t_kernel(residual - np.array([u0, u1]), root, power)
        ),
        -8.0,
        8.0,
        -8.0,
        8.0,
        epsabs=0.0,
        epsrel=1e-10,
    )[0]
    assert _over_kappa(residual, prior, root, power) == pytest.approx(over_u, rel=1e-7)


@pytest.mark.parametrize("d", [1, 2, 3, 4])
def test_the_direction_prior_is_normalised(d):
    """R's density exp(-|R|^2/2) |det R|^m integrates to (2 pi)^(d^2/2) E|det R|^m (R
    Gaussian), E|det R|^m the product of chi_k moments, k = 1..d (Bartlett); at d = 1 a
    quadrature of the density itself."""
    m = DIRECTION_DET_POWER
    moments = sum(math.log(stats.chi(k).moment(m)) for k in range(1, d + 1))
    assert direction_prior_const(d) == pytest.approx(0.5 * d * d * math.log(2 * math.pi) + moments)
    if d == 1:
        total, _ = integrate.quad(
            lambda r: math.exp(-0.5 * r * r + m * math.log(abs(r)) - direction_prior_const(1)),
            -np.inf,
            np.inf,
        )
        assert total == pytest.approx(1.0, rel=1e-10)


def test_spec_adds_the_mixture_constants():
    """``const`` of the components is the integrated-noise likelihood's constant plus
    the log |det T_i| and the mixture's constants; the same data with other tails have
    the same likelihood constant (no spread constants in the components' form)."""
    rng = np.random.default_rng(4)
    q, k = 5, 3
    scores = study_scores(rng, np.linspace(0.0, 0.02, k), q=q)
    table = score_table(scores)
    names = [f"s{m}" for m in range(k)]
    comp = prepare(table, names, priors=COMP).model_data(COMP)
    d = k - 1
    mixture = sum(_mixture_constant(float(p), d) for p in np.asarray(comp["power"]))
    log_det = np.log(np.abs(np.linalg.det(np.asarray(comp["transform"])))).sum()
    hw = JointPriors(spread_prior="huang-wand")
    shared = prepare(table, names, priors=hw).model_data(hw)
    spread_df = float(shared["spread_df"])  # the shared form's constant of Omega's integral
    spread = (
        -0.5 * d * q * math.log(math.pi)
        + special.multigammaln((spread_df + q) / 2.0, d)
        - special.multigammaln(spread_df / 2.0, d)
    )
    likelihood = float(shared["const"]) - spread - log_det
    assert float(comp["const"]) == pytest.approx(likelihood + log_det + mixture, rel=1e-13)


def _posterior(m, arrays):
    """A posterior of `m` draws (one chain), each the one point `arrays`."""
    import xarray as xr

    dims = {
        "b": ("system",),
        "noise_weight": ("dataset",),
        "precision": ("dataset", "component"),
        "component_scale": ("component",),
        "directions": ("contrast", "component"),
    }
    return xr.Dataset(
        {
            name: (("chain", "draw", *dims[name]), np.broadcast_to(a, (1, m, *a.shape)).copy())
            for name, a in arrays.items()
        }
    )


def test_the_deviations_are_drawn_from_their_gaussian_conditional():
    """At one posterior point repeated: the draws' mean and covariance per data set are
    the conditional's, written in the information form (C = (Pi^-1 + N^-1)^-1, mean
    C N^-1 r; the code uses Pi M^-1), within 5 Monte Carlo standard errors; the same
    seed gives the same draws, another seed others."""
    from isbetter.cv.joint.model import draw_deviations

    rng = np.random.default_rng(11)
    q, k, m = 3, 4, 40000
    d = k - 1
    data = _data(rng, q, k)
    arrays = {
        "b": contrast_basis(k) @ rng.normal(scale=0.3, size=d),
        "noise_weight": rng.gamma(3.0, 1.0 / 3.0, size=q),
        "precision": rng.gamma(2.0, 0.5, size=(q, d)),
        "component_scale": np.array([1.5, 0.2, 0.02]),  # one resolved, one prior-dominated
        "directions": _orthonormal(rng.normal(size=(d, d))),
    }
    post = _posterior(m, arrays)
    drawn = draw_deviations(post, data, np.random.default_rng(7))
    assert drawn.shape == (1, m, q, d)
    means, transform, power = (np.asarray(data[n]) for n in ("means", "transform", "power"))
    beta = contrast_basis(k).T @ arrays["b"]
    for i in range(q):
        prior = (
            arrays["directions"]
            @ np.diag(arrays["component_scale"] ** 2 / arrays["precision"][i])
            @ arrays["directions"].T
        )
        noise = (
            power[i]
            / (power[i] - d / 2.0)
            / arrays["noise_weight"][i]
            * (transform[i] @ transform[i].T)
        )
        cov = np.linalg.inv(np.linalg.inv(prior) + np.linalg.inv(noise))
        mean = cov @ np.linalg.solve(noise, means[i] - beta)
        sample = drawn[0, :, i]
        mcse = np.sqrt(np.diag(cov) / m)
        assert np.all(np.abs(sample.mean(axis=0) - mean) < 5.0 * mcse)
        centred = sample - mean
        sample_cov = centred.T @ centred / m
        cov_mcse = np.sqrt((np.outer(np.diag(cov), np.diag(cov)) + cov**2) / m)
        assert np.all(np.abs(sample_cov - cov) < 5.0 * cov_mcse)
    again = draw_deviations(post, data, np.random.default_rng(7))
    np.testing.assert_array_equal(again, drawn)
    other = draw_deviations(post, data, np.random.default_rng(8))
    assert not np.array_equal(other, drawn)


def test_the_effects_are_drawn_from_their_gaussian_conditional():
    """At one posterior point repeated: the effects' draws (b = H beta) have the mean and
    covariance of beta's conditional written in the data's basis, P = tau^-2 I + sum_i
    M_i^-1, beta ~ N(P^-1 sum_i M_i^-1 means_i, P^-1) (the code works in Q's basis),
    within 5 Monte Carlo standard errors; they sum to zero; the same seed gives the same
    draws, another seed others."""
    from isbetter.cv.joint.model import draw_effects

    rng = np.random.default_rng(12)
    q, k, m = 3, 4, 40000
    d = k - 1
    data = _data(rng, q, k)
    data["effect_hi"] = np.asarray(0.5)  # tau of the means' size: the prior's share shows
    arrays = {
        "noise_weight": rng.gamma(3.0, 1.0 / 3.0, size=q),
        "precision": rng.gamma(2.0, 0.5, size=(q, d)),
        "component_scale": np.array([1.5, 0.2, 0.02]),
        "directions": _orthonormal(rng.normal(size=(d, d))),
    }
    post = _posterior(m, arrays)
    drawn = draw_effects(post, data, np.random.default_rng(7))
    assert drawn.shape == (1, m, k)
    np.testing.assert_allclose(drawn.sum(axis=-1), 0.0, atol=1e-12)
    means, transform, power = (np.asarray(data[n]) for n in ("means", "transform", "power"))
    precision = np.eye(d) / 0.5**2
    total = np.zeros(d)
    for i in range(q):
        cov = (
            arrays["directions"]
            @ np.diag(arrays["component_scale"] ** 2 / arrays["precision"][i])
            @ arrays["directions"].T
        )
        cov += (
            power[i]
            / (power[i] - d / 2.0)
            / arrays["noise_weight"][i]
            * transform[i]
            @ transform[i].T
        )
        precision += np.linalg.inv(cov)
        total += np.linalg.solve(cov, means[i])
    cov = np.linalg.inv(precision)
    mean = cov @ total
    assert np.abs(mean).max() < 0.9 * np.abs(means.mean(axis=0)).max()  # shrunk by the prior
    sample = drawn[0] @ contrast_basis(k)  # beta = H^T b
    mcse = np.sqrt(np.diag(cov) / m)
    assert np.all(np.abs(sample.mean(axis=0) - mean) < 5.0 * mcse)
    centred = sample - mean
    cov_mcse = np.sqrt((np.outer(np.diag(cov), np.diag(cov)) + cov**2) / m)
    assert np.all(np.abs(centred.T @ centred / m - cov) < 5.0 * cov_mcse)
    np.testing.assert_array_equal(draw_effects(post, data, np.random.default_rng(7)), drawn)
    assert not np.array_equal(draw_effects(post, data, np.random.default_rng(8)), drawn)


def test_the_post_fit_step_stores_the_loading_the_effects_and_the_deviations():
    """After a components fit the loading is Q diag(s) (no draw), the effects are
    draw_effects' and then the deviations draw_deviations' (given those effects) from the
    fit's derived stream (the same seed, the same draws)."""
    from isbetter.cv.joint.model import (
        _covariance_draws,
        _draws_rng,
        draw_deviations,
        draw_effects,
    )

    rng = np.random.default_rng(2)
    q, k, m = 4, 3, 5
    d = k - 1
    scores = study_scores(rng, np.linspace(0.0, 0.02, k), q=q)
    prepared = prepare(score_table(scores), [f"s{j}" for j in range(k)], priors=COMP)
    data = prepared.model_data(COMP)
    post = _posterior(
        m,
        {
            "noise_weight": rng.gamma(3.0, 1.0 / 3.0, size=q),
            "precision": rng.gamma(2.0, 0.5, size=(q, d)),
            "component_scale": np.array([0.9, 0.1]),
            "directions": _orthonormal(rng.normal(size=(d, d))),
        },
    )
    post["nu"] = (("chain", "draw", "component"), np.full((1, m, d), 4.0))
    spread, loading = _covariance_draws(post, data, prepared, seed=9)
    expected = post["directions"].to_numpy() * np.array([0.9, 0.1])
    np.testing.assert_allclose(post["loading"].to_numpy(), expected, rtol=1e-15)
    np.testing.assert_allclose(loading, expected * prepared.scale, rtol=1e-15)
    h = contrast_basis(k)
    np.testing.assert_allclose(spread, h @ loading @ loading.transpose(0, 1, 3, 2) @ h.T)
    deviations = post["deviations"].to_numpy()
    assert deviations.shape == (1, m, q, d)
    stream = _draws_rng(9)
    np.testing.assert_array_equal(post["b"].to_numpy(), draw_effects(post, data, stream))
    np.testing.assert_array_equal(deviations, draw_deviations(post, data, stream))
