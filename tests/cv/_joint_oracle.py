r"""Labelled oracle: NumPy reference forms of the joint correlated model's likelihood.

Used by tests only; the fits compute the likelihood in the compiled density of
:mod:`isbetter.cv.joint.compiled_backend` and its PyTensor form in
:mod:`isbetter.cv.joint.pymc_backend`, both tested equal to these. The mathematics is
in :mod:`isbetter.cv.joint.likelihood`'s docstring.

* :func:`conditional_loglik`: the matrix-normal density of one data set's K - 1
  orthonormal contrasts given their mean and noise covariance, from the sufficient
  statistics (tested against the dense matrix-normal density);
* :func:`marginal_loglik`: the same with the noise covariance integrated out under its
  inverse-Wishart prior (a matrix-variate t; Gupta & Nagar 2000, theorem 4.2.1).
"""

from __future__ import annotations

import math

import numpy as np
from scipy import special


def _log_det_m(n: np.ndarray, rho: np.ndarray) -> np.ndarray:
    return (n - 1) * np.log1p(-rho) + np.log1p((n - 1) * rho)


def _residuals(
    n: np.ndarray | float, means: np.ndarray, rho: np.ndarray | float, theta: np.ndarray
) -> tuple[np.ndarray, np.ndarray, int, np.ndarray, np.ndarray]:
    """Return ``(n, rho, d, v, w)``: arrays, the contrasts' number, v = means - theta and
    the weight w = n / (1 + (n - 1) rho) of v's quadratic form."""
    n = np.asarray(n, dtype=float)
    rho = np.asarray(rho, dtype=float)
    return n, rho, means.shape[-1], means - theta, n / (1 + (n - 1) * rho)


def conditional_loglik(
    n: np.ndarray | float,
    means: np.ndarray,
    cross: np.ndarray,
    rho: np.ndarray | float,
    theta: np.ndarray,
    cov: np.ndarray,
) -> np.ndarray:
    r"""Log density of each data set's orthonormal contrasts given their means and covariance.

    Parameters
    ----------
    n : float or numpy.ndarray
        Scores per system on each data set, shape ``()`` or ``(q,)``.
    means : numpy.ndarray
        ``(q, d)`` the contrasts' fold means :math:`\bar z_i`.
    cross : numpy.ndarray
        ``(q, d, d)`` their within-fold cross-products :math:`R_i`.
    rho : float or numpy.ndarray
        Correlation of the scores within a data set.
    theta : numpy.ndarray
        ``(q, d)`` the contrasts' expectations :math:`\tilde\theta_i = H^T\theta_i`.
    cov : numpy.ndarray
        ``(q, d, d)`` the noise covariance :math:`\Sigma_i` of one fold's contrasts.

    Returns
    -------
    numpy.ndarray
        ``(q,)`` log densities.
    """
    n, rho, d, v, weight = _residuals(n, means, rho, theta)
    q_form = cross / (1 - rho)[..., None, None] + weight[..., None, None] * (
        v[..., :, None] * v[..., None, :]
    )
    trace = np.trace(np.linalg.solve(cov, q_form), axis1=-2, axis2=-1)
    return (
        -0.5 * d * n * math.log(2 * math.pi)
        - 0.5 * n * np.linalg.slogdet(cov)[1]
        - 0.5 * d * _log_det_m(n, rho)
        - 0.5 * trace
    )


def marginal_loglik(
    n: np.ndarray | float,
    means: np.ndarray,
    cross: np.ndarray,
    rho: np.ndarray | float,
    theta: np.ndarray,
    noise_df: float,
    noise_var: float,
) -> np.ndarray:
    r"""Log density of the contrasts given their means, the noise covariance integrated out.

    :math:`\Sigma_i \sim \operatorname{IW}(\nu_0, \psi I)` (`noise_df` :math:`= \nu_0 > d - 1`,
    `noise_var` :math:`= \psi`); the other arguments as :func:`conditional_loglik`.
    The formula is in the module's docstring.

    Returns
    -------
    numpy.ndarray
        ``(q,)`` log densities.
    """
    n, rho, d, v, weight = _residuals(n, means, rho, theta)
    scatter = noise_var * np.eye(d) + cross / (1 - rho)[..., None, None]
    quad = np.einsum("...j,...j->...", v, np.linalg.solve(scatter, v[..., None])[..., 0])
    power = (noise_df + n) / 2
    return (
        -0.5 * d * n * math.log(math.pi)
        - 0.5 * d * _log_det_m(n, rho)
        + special.multigammaln(power, d)
        - special.multigammaln(noise_df / 2, d)
        + 0.5 * noise_df * d * math.log(noise_var)
        - power * np.linalg.slogdet(scatter)[1]
        - power * np.log1p(weight * quad)
    )
