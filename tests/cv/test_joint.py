"""Tests of the joint correlated model of K systems (:mod:`isbetter.cv.joint`).

The likelihood is checked against dense densities (the matrix normal of the
contrasts; for K = 2 the pairwise model's), the integral over the noise covariance
by the identity p(Z) = p(Z | S) p(S) / p(S | Z), the compiled density against
PyMC's; the shipped UCI data show why the noise covariance is a full matrix. The
calibration is ``tests/cv/test_joint_calibration.py`` (bounded) and
``validation/joint_sbc.py`` (full).
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from _joint_oracle import conditional_loglik, marginal_loglik
from _oracle import conditional_loglik as pairwise_loglik
from scipy import integrate, stats

from _joint_data import assert_compiled_matches_pymc, score_table, study_scores
from isbetter import InputError, InputTypeError
from isbetter.cv.joint.likelihood import sufficient_statistics
from isbetter.cv.joint.model import draw_spread
from isbetter.cv.joint.spec import JointPriors, contrast_basis, prepare


def _compound_symmetry(n: int, rho: float) -> np.ndarray:
    return (1 - rho) * np.eye(n) + rho * np.ones((n, n))


# --------------------------------------------------------------------------- likelihood
@pytest.mark.parametrize(("k", "n", "rho"), [(4, 10, 0.1), (3, 7, 0.0), (5, 20, 0.2), (2, 5, 0.5)])
def test_conditional_loglik_equals_dense_matrix_normal(rng, k, n, rho):
    """The sufficient-statistic density is the dense density of the contrast vectors."""
    d = k - 1
    basis = contrast_basis(k)
    x = rng.normal(size=(k, n)) + 3.0 * rng.normal(size=n)  # a large shared fold effect
    nn, mean, cross = sufficient_statistics(basis.T @ x)
    for _ in range(3):
        theta = rng.normal(size=k)
        a = rng.normal(size=(d, d))
        cov = a @ a.T + 0.5 * np.eye(d)
        z = basis.T @ x  # (d, n): column f is fold f's contrasts
        dense = stats.multivariate_normal(
            mean=np.tile(basis.T @ theta, n), cov=np.kron(_compound_symmetry(n, rho), cov)
        ).logpdf(z.T.reshape(-1))
        ours = conditional_loglik(
            nn, mean[None], cross[None], np.array([rho]), (basis.T @ theta)[None], cov[None]
        )[0]
        assert ours == pytest.approx(dense, rel=1e-10, abs=1e-10)


def test_diagonal_noise_is_the_designs_formula_and_the_pairwise_likelihood(rng):
    """With per-system noise sigma_k, DESIGN §4.2's formula; for K = 2 the Corani likelihood."""
    k, n, rho = 4, 10, 0.1
    basis = contrast_basis(k)
    x = rng.normal(size=(k, n)) + rng.normal(size=n)
    theta, sigma = rng.normal(size=k), rng.uniform(0.5, 2.0, size=k)
    nn, mean, cross = sufficient_statistics(basis.T @ x)
    ours = conditional_loglik(
        nn,
        mean[None],
        cross[None],
        np.array([rho]),
        (basis.T @ theta)[None],
        (basis.T @ np.diag(sigma**2) @ basis)[None],
    )[0]
    # the design's formula, for the reference contrasts x_k - x_K (|det| of the change of
    # contrasts: the orthonormal ones have det(C C^T) = K times smaller a volume)
    _, xbar, r = sufficient_statistics(x)
    w = sigma**-2
    p = np.diag(w) - np.outer(w, w) / w.sum()
    v = xbar - theta
    design = (
        -0.5 * n * (np.log(sigma**2).sum() + np.log(w.sum()))
        - np.trace(p @ r) / (2 * (1 - rho))
        - n * v @ p @ v / (2 * (1 + (n - 1) * rho))
        - 0.5 * n * (k - 1) * math.log(2 * math.pi)
        - 0.5 * (k - 1) * ((n - 1) * math.log1p(-rho) + math.log1p((n - 1) * rho))
    )
    assert ours == pytest.approx(design + 0.5 * n * math.log(k), rel=1e-10)
    # K = 2: the orthonormal contrast is the difference over sqrt(2)
    two = x[:2]
    nn, mean, cross = sufficient_statistics(contrast_basis(2).T @ two)
    joint = conditional_loglik(
        nn,
        mean[None],
        cross[None],
        np.array([rho]),
        (contrast_basis(2).T @ theta[:2])[None],
        np.array([[[(sigma[0] ** 2 + sigma[1] ** 2) / 2]]]),
    )[0]
    d = two[0] - two[1]
    pairwise = pairwise_loglik(
        np.array([d.mean()]),
        np.array([((d - d.mean()) ** 2).sum()]),
        np.array([n]),
        rho,
        theta[0] - theta[1],
        math.sqrt(sigma[0] ** 2 + sigma[1] ** 2),
    )[0]
    assert joint == pytest.approx(pairwise + 0.5 * n * math.log(2.0), rel=1e-12)


def test_marginal_loglik_integrates_the_noise_covariance(rng):
    """p(Z) = p(Z | S) p(S) / p(S | Z) for any S: the inverse-Wishart integral is exact."""
    k, n, rho = 4, 10, 0.1
    d, basis = k - 1, contrast_basis(k)
    x = rng.normal(size=(k, n))
    nn, mean, cross = sufficient_statistics(basis.T @ x)
    theta = basis.T @ rng.normal(size=k)
    nu0, psi = d + 1.0, 0.7
    marginal = marginal_loglik(nn, mean[None], cross[None], np.array([rho]), theta[None], nu0, psi)
    v = mean - theta
    q_form = cross / (1 - rho) + n / (1 + (n - 1) * rho) * np.outer(v, v)
    for s in (np.eye(d) * 0.3, np.cov(rng.normal(size=(d, 20)))):
        cond = conditional_loglik(
            nn, mean[None], cross[None], np.array([rho]), theta[None], s[None]
        )
        prior = stats.invwishart(df=nu0, scale=psi * np.eye(d)).logpdf(s)
        post = stats.invwishart(df=nu0 + n, scale=psi * np.eye(d) + q_form).logpdf(s)
        assert marginal[0] == pytest.approx(cond[0] + prior - post, rel=1e-10)
    # K = 2: the pairwise likelihood integrated over sigma^2 / 2 ~ inverse-gamma, numerically
    two = x[:2]
    nn, mean, cross = sufficient_statistics(contrast_basis(2).T @ two)
    t2 = contrast_basis(2).T @ np.array([0.3, -0.1])
    closed = marginal_loglik(nn, mean[None], cross[None], np.array([rho]), t2[None], 1.5, psi)[0]
    dd = two[0] - two[1]

    def integrand(var: float) -> float:
        lik = pairwise_loglik(
            np.array([dd.mean()]),
            np.array([((dd - dd.mean()) ** 2).sum()]),
            np.array([n]),
            rho,
            math.sqrt(2.0) * t2[0],
            math.sqrt(2.0 * var),
        )[0]
        prior = stats.invgamma(a=1.5 / 2, scale=psi / 2).logpdf(var)
        return math.exp(lik + 0.5 * n * math.log(2.0) + prior - closed)

    total, _ = integrate.quad(integrand, 0.0, np.inf, limit=200)
    assert total == pytest.approx(1.0, rel=1e-6)


# --------------------------------------------------------------------------- data preparation
def test_prepare_orients_scales_and_ignores_fold_effects(rng):
    scores = study_scores(rng, [0.0, 0.01, 0.02])
    base = prepare(score_table(scores), ("s0", "s1", "s2"))
    # a fold effect shared by the systems and a common shift change nothing
    shifted = prepare(score_table(scores + rng.normal(size=(8, 1, 10)) + 5.0), ("s0", "s1", "s2"))
    np.testing.assert_allclose(shifted.means, base.means, atol=1e-9)
    np.testing.assert_allclose(shifted.cross, base.cross, atol=1e-9)
    # scaling the scores changes only the scale
    scaled = prepare(score_table(3.0 * scores), ("s0", "s1", "s2"))
    assert scaled.scale == pytest.approx(3.0 * base.scale)
    np.testing.assert_allclose(scaled.means, base.means, atol=1e-9)
    # lower-is-better: the same errors as accuracy's complement give the same oriented data
    errors = prepare(score_table(1.0 - scores, lower=True), ("s0", "s1", "s2"))
    np.testing.assert_allclose(errors.means, base.means, atol=1e-9)
    assert errors.higher_is_better is False
    np.testing.assert_allclose(errors.mean_scores, 1.0 - base.mean_scores)


def test_prepare_bad_input_names_the_argument(rng):
    table = score_table(study_scores(rng, [0.0, 0.01, 0.02]))
    with pytest.raises(InputError, match="at least 2 different systems"):
        prepare(table, ("s0", "s0"))
    with pytest.raises(InputError, match="unknown system 'zz'"):
        prepare(table, ("s0", "zz"))
    with pytest.raises(InputTypeError, match="`priors` must be JointPriors"):
        prepare(table, ("s0", "s1"), priors=object())  # type: ignore[arg-type]
    with pytest.raises(InputError, match="noise_scale=-1.0"):
        JointPriors(noise_scale=-1.0)
    one = score_table(study_scores(rng, [0.0, 0.01], q=1))
    with pytest.raises(InputError, match="at least 2 data sets"):
        prepare(one, ("s0", "s1"))
    same = np.broadcast_to(study_scores(rng, [0.0])[:, :1], (8, 3, 10)).copy()
    with pytest.raises(InputError, match="nothing to rank"):
        prepare(score_table(same), ("s0", "s1", "s2"))


def test_identical_systems_keep_the_posterior_proper(rng):
    """Two systems with the same score on every fold: the noise prior fills that contrast."""
    scores = study_scores(rng, [0.0, 0.01, 0.02])
    scores[:, 2] = scores[:, 1]
    p = prepare(score_table(scores), ("s0", "s1", "s2"))
    data = p.model_data(JointPriors())
    assert np.all(np.isfinite(data["transform"])) and np.isfinite(data["const"])


# --------------------------------------------------------------------------- compiled density
@pytest.mark.parametrize(
    ("q", "k", "n", "form"),
    [
        (4, 3, 10, "inverse-wishart"),
        (3, 5, 6, "inverse-wishart"),
        (6, 2, 10, "inverse-wishart"),
        (4, 3, 10, "huang-wand"),
        (3, 5, 6, "huang-wand"),
    ],
)
def test_compiled_density_matches_pymc(rng, q, k, n, form):
    """The hand-written density and gradient are PyMC's model's, to 1e-9, with either
    prior of the deviations' covariance."""
    import pymc as pm

    from isbetter.cv.joint.pymc_backend import build_model

    scores = study_scores(rng, np.linspace(0.0, 0.02, k), q=q, n=n)
    priors = JointPriors(spread_prior=form)
    data = prepare(score_table(scores), [f"s{m}" for m in range(k)], priors=priors).model_data(
        priors
    )
    model = build_model(q, k, form)
    with model:
        pm.set_data(data)
    assert_compiled_matches_pymc(rng, model, data)


def test_pymc_likelihood_is_the_oracles_marginal_likelihood(rng):
    """The PyMC model's ``loglik`` potential (which the compiled density equals, above) is
    the oracle's NumPy form of the likelihood with the noise covariance integrated out:
    between two points of the data sets' effects they differ by the same amount (the
    model's constant holds the map's Jacobian and Omega's integral too)."""
    import pymc as pm

    from isbetter.cv.joint.pymc_backend import build_model

    q, k = 5, 4
    scores = study_scores(rng, np.linspace(0.0, 0.03, k), q=q, n=10)
    shared = JointPriors(tails="shared")  # the model with eta: one nu, the inverse-Wishart
    prepared = prepare(score_table(scores), [f"s{m}" for m in range(k)], priors=shared)
    data = prepared.model_data(shared)
    model = build_model(q, k)
    with model:
        pm.set_data(data)
    potential = next(p for p in model.potentials if p.name == "loglik")
    (potential,) = model.replace_rvs_by_values([potential])
    eta_value = model.rvs_to_values[model["eta"]]
    loglik = model.compile_fn(potential, inputs=[eta_value], point_fn=True, mode="FAST_COMPILE")

    def both(eta):
        theta = prepared.means - np.einsum("ijk,ik->ij", data["transform"], eta)
        oracle = marginal_loglik(
            prepared.n, prepared.means, prepared.cross, prepared.rho, theta,
            prepared.noise_df, prepared.noise_var,
        ).sum()  # fmt: skip
        return float(loglik({"eta": eta})), oracle

    (model_a, oracle_a), (model_b, oracle_b) = (both(rng.normal(size=(q, k - 1))) for _ in "ab")
    assert abs(oracle_a - oracle_b) > 1.0  # the points differ enough to test anything
    assert model_a - model_b == pytest.approx(oracle_a - oracle_b, rel=1e-10, abs=1e-9)


def test_draw_spread_has_the_inverse_wishart_mean(rng):
    n, q, d = 20000, 6, 3
    deviations = np.broadcast_to(rng.normal(size=(q, d)), (n, q, d))
    precision = np.broadcast_to(rng.uniform(0.5, 2.0, size=q), (n, q))
    draws = draw_spread(deviations, precision, d + 3.0, 0.5, np.random.default_rng(1))
    scatter = 0.5 * np.eye(d) + np.einsum("q,qa,qb->ab", precision[0], deviations[0], deviations[0])
    expected = scatter / (d + 3.0 + q - d - 1)
    # the Monte Carlo error of a mean of 20000 inverse-Wishart draws is below 2% here
    np.testing.assert_allclose(draws.mean(axis=0), expected, rtol=0.03, atol=0.03 * expected.max())


# ------------------------------------------------------------------- why a full noise covariance
def _fold_difference_variances(table, a, b):
    """Per data set, the variance of the fold differences of systems a and b."""
    return np.array([np.var(d) for d in table.paired(a, b).differences])


def _identity_ratio(table, a, b, c, d):
    """(var(a-c) + var(b-d)) / (var(a-b) + var(c-d)), pooled over the data sets.

    With independent per-system noise (DESIGN §4.2's sigma_ik) both sums are
    sigma_a^2 + sigma_b^2 + sigma_c^2 + sigma_d^2 (times the same factor of rho), so
    the ratio is 1 up to sampling error.
    """
    v = _fold_difference_variances
    across = v(table, a, c) + v(table, b, d)
    within = v(table, a, b) + v(table, c, d)
    return float(across.sum() / within.sum()), float(np.mean(across > within))


def test_uci_noise_violates_the_independent_noise_identity():
    """The five UCI classifiers' fold noise is not independent across systems.

    j48/j48gr and aode/hnb are two clusters of near-identical classifiers: their
    fold differences vary far less than independent noise allows, so
    var(a-b) + var(c-d) = var(a-c) + var(b-d) fails by a factor 2.6 (on 51 of 54
    data sets), while quadruples that do not split a cluster keep it within 4%.
    Per-system noise cannot fit this; a full noise covariance per data set can.
    """
    from isbetter import example_data, read_scores

    table = read_scores(
        example_data.path("uci"),
        dataset="dataset_id",
        system="classifier",
        score="accuracy",
    )
    ratio, share = _identity_ratio(table, "j48", "j48gr", "aode", "hnb")
    assert ratio == pytest.approx(2.596, abs=0.001) and ratio > 2.0
    assert share > 0.9
    for quad in (("aode", "hnb", "j48", "nbc"), ("aode", "j48", "j48gr", "nbc")):
        assert _identity_ratio(table, *quad)[0] == pytest.approx(1.0, abs=0.04), quad


def test_independent_noise_keeps_the_identity(rng):
    """The statistic has teeth: under independent per-system noise it is 1 within 5%."""
    q, n = 54, 100
    sigma = rng.uniform(0.005, 0.03, size=(q, 4, 1))
    scores = 0.8 + rng.normal(0, 0.02, size=(q, 1, n)) + sigma * rng.normal(size=(q, 4, n))
    ratio, _ = _identity_ratio(score_table(scores), "s0", "s1", "s2", "s3")
    assert ratio == pytest.approx(1.0, abs=0.05)
