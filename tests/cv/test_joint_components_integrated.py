"""Independent components with each scale integrated out (a validation experiment).

The form is ``validation/joint_components_integrated.py``.

A measured negative result kept outside the package (``docs/joint_prior.md``,
"Integrating each component's scale out"): checked here so that its numbers mean what
the docs say. Its compiled density and gradient against its PyMC statement and against
central differences; the scales drawn after the fit against their conditional
inverse-gamma.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest
from scipy import stats

from _joint_data import (
    assert_compiled_matches_pymc,
    assert_gradient_is_central_differences,
    score_table,
    study_scores,
)

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
from validation import joint_components_integrated as integrated  # noqa: E402


def _data(rng, q, k, n=10):
    scores = study_scores(rng, np.linspace(0.0, 0.02, k), q=q, n=n)
    return integrated.model_data(score_table(scores), tuple(f"s{m}" for m in range(k)))[1]


@pytest.mark.slow
@pytest.mark.parametrize(("q", "k", "n"), [(6, 2, 10), (4, 3, 10), (3, 5, 6)])
def test_compiled_density_is_the_pymc_statement_s(rng, q, k, n):
    """Value and gradient to 1e-9 at random points, and the gradient against central
    differences of the value (Gram-Schmidt's reverse mode and the weights' chain rule)."""
    import pymc as pm

    data = _data(rng, q, k, n=n)
    model = integrated.build_model(q, k)
    with model:
        pm.set_data(data)
    flat = assert_compiled_matches_pymc(rng, model, data, density=integrated.log_density)
    d = k - 1
    assert flat.size == 3 * d + 2 * q * d + d * d
    x = 0.6 * rng.normal(size=flat.size)
    assert_gradient_is_central_differences(x, data, density=integrated.log_density)


def test_the_scales_are_drawn_from_their_conditional(rng):
    """s_j^2 | rest ~ InvGamma((n + q)/2, (psi_j + sum_i lambda_ij y_ij^2)/2), y = u~ Q:
    the draws' quantiles against SciPy's for one fixed posterior point repeated."""
    import xarray as xr

    q, d, m = 7, 2, 20000
    dev = rng.normal(size=(q, d))
    basis_q = np.linalg.qr(rng.normal(size=(d, d)))[0]
    lam = rng.gamma(2.0, 0.5, size=(q, d))
    psi = np.array([0.3, 2.0])

    def rep(a, dims):
        return (("chain", "draw", *dims), np.broadcast_to(a, (1, m, *a.shape)).copy())

    post = xr.Dataset(
        {
            "deviations": rep(dev, ("dataset", "contrast")),
            "directions": rep(basis_q, ("contrast", "component")),
            "precision": rep(lam, ("dataset", "component")),
            "component_psi": rep(psi, ("component",)),
        }
    )
    loading = integrated.draw_loading(post, 2.0, np.random.default_rng(1))
    np.testing.assert_allclose(
        loading / np.linalg.norm(loading, axis=-2, keepdims=True),
        np.broadcast_to(basis_q, loading.shape),
        atol=1e-12,
    )
    s2 = (loading**2).sum(axis=-2).reshape(m, d)
    y = dev @ basis_q
    for j in range(d):
        law = stats.invgamma(1.0 + q / 2.0, scale=(psi[j] + (lam[:, j] * y[:, j] ** 2).sum()) / 2.0)
        assert stats.kstest(s2[:, j], law.cdf).pvalue > 1e-3


@pytest.mark.slow
def test_the_integrated_scale_is_the_half_t_mixture_by_quadrature(rng):
    """Moving only log psi_0 changes the density as log[p(psi) psi integral_v prod_i
    N(y_i0 | 0, v / lambda_i0) InvGamma(v | n/2, psi/2) dv] does, the integral by
    quadrature (the closed form of s_0 integrated out)."""
    from scipy import integrate

    q, k = 5, 3
    d = k - 1
    data = _data(rng, q, k)
    n = float(data["spread_df"])
    rate = 1.0 / (2.0 * n * float(data["half_t_scale"]) ** 2)
    x = 0.5 * rng.normal(size=3 * d + 2 * q * d + d * d)
    nu = 1.0 + np.exp(x[:d])
    e_hi = float(data["effect_hi"])
    beta = -e_hi + 2.0 * e_hi / (1.0 + np.exp(-x[d : 2 * d]))
    eta = x[2 * d : 2 * d + q * d].reshape(q, d)
    dev = np.asarray(data["means"]) - beta - np.einsum("qab,qb->qa", data["transform"], eta)
    xi = x[2 * d + q * d : 2 * d + 2 * q * d].reshape(q, d)
    lam = np.exp(-1.0 / nu + np.sqrt(2.0 * (nu + 1.0)) / nu * xi)
    at_psi = 2 * d + 2 * q * d
    basis_q, upper = np.linalg.qr(x[at_psi + d :].reshape(d, d))
    y = dev @ (basis_q * np.sign(np.diag(upper)))

    def log_f(log_psi):
        psi = np.exp(log_psi)

        def integrand(v):
            normal = stats.norm.logpdf(y[:, 0], scale=np.sqrt(v / lam[:, 0])).sum()
            return np.exp(normal + stats.invgamma.logpdf(v, n / 2.0, scale=psi / 2.0))

        value = integrate.quad(integrand, 0.0, np.inf, limit=400, epsrel=1e-11, epsabs=0.0)[0]
        return np.log(value) + stats.gamma.logpdf(psi, 0.5, scale=1.0 / rate) + log_psi

    values = []
    for log_psi in (-6.0, -1.5):
        moved = x.copy()
        moved[at_psi] = log_psi
        values.append(integrated.log_density(moved, data)[0])
    assert values[0] - values[1] == pytest.approx(log_f(-6.0) - log_f(-1.5), rel=1e-7, abs=1e-7)
