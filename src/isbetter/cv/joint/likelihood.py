r"""Log-likelihood of the joint correlated model from sufficient statistics (NumPy).

With the fold effects :math:`\mu_{if}` integrated out (flat prior), data set i's
scores enter only through their K - 1 contrasts. In orthonormal coordinates
(:math:`Z_i = H^T X_i`, :math:`H` from :func:`.spec.contrast_basis`; any other
contrasts change the density by a constant) they are matrix-normal,
:math:`Z_i \sim MN(\tilde\theta_i 1^T, \Sigma_i, M_i)` with
:math:`M_i = (1-\rho_i)I + \rho_i 11^T`, and with
:math:`M^{-1} = (I - c\,11^T)/(1-\rho)`, :math:`c = \rho/(1 + (n-1)\rho)`, the
quadratic form is

.. math::

    Q_i = (Z_i - \tilde\theta_i 1^T) M_i^{-1} (Z_i - \tilde\theta_i 1^T)^T
        = \frac{R_i}{1 - \rho_i} + w_i v_i v_i^T, \quad
    w_i = \frac{n_i}{1 + (n_i - 1)\rho_i}, \quad v_i = \bar z_i - \tilde\theta_i,

so the density needs only :math:`n_i`, the contrasts' fold means :math:`\bar z_i` and
their within-fold cross-products :math:`R_i` (:func:`conditional_loglik`). For K = 2
it is the likelihood of the differences of the pairwise model (Corani et al. 2017)
with :math:`\sigma_i^2 = 2\Sigma_i` (the orthonormal contrast is the difference over
:math:`\sqrt 2`). Diagonal noise per system,
:math:`\operatorname{diag}(\sigma_{i1}^2, \dots, \sigma_{iK}^2)`, is the special case
:math:`\Sigma_i = H^T D_i H`.

With the conjugate prior :math:`\Sigma_i \sim \operatorname{IW}(\nu_0, \psi I)`,
:math:`\Sigma_i` integrates out in closed form (a matrix-variate t; Gupta & Nagar
2000, theorem 4.2.1): with :math:`d = K - 1` and :math:`B_i = \psi I + R_i/(1-\rho_i)`,

.. math::

    \log p(Z_i \mid \tilde\theta_i) = -\frac{dn}{2}\log\pi - \frac{d}{2}\log|M_i|
    + \log\frac{\Gamma_d(\frac{\nu_0 + n}{2})}{\Gamma_d(\frac{\nu_0}{2})}
    + \frac{\nu_0 d}{2}\log\psi - \frac{\nu_0 + n}{2}\log|B_i|
    - \frac{\nu_0 + n}{2}\log\big(1 + w_i v_i^T B_i^{-1} v_i\big)

(:func:`marginal_loglik`), a multivariate-t kernel in :math:`\tilde\theta_i`: O(d^2)
per data set once :math:`B_i^{-1}` is known.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from scipy import special

__all__ = ["conditional_loglik", "marginal_loglik", "sufficient_statistics"]


def sufficient_statistics(scores: np.ndarray) -> tuple[int, np.ndarray, np.ndarray]:
    """Return ``(n, mean, R)`` of one data set's ``(d, n)`` scores or contrasts (rows).

    ``mean[j]`` is row j's mean over the folds and ``R`` the ``d x d``
    cross-product matrix of the deviations ``x[j, f] - mean[j]``.

    Examples
    --------
    >>> n, mean, r = sufficient_statistics(np.array([[1.0, 3.0], [2.0, 2.0]]))
    >>> n, mean, r
    (2, array([2., 2.]), array([[2., 0.],
           [0., 0.]]))
    """
    x = np.asarray(scores, dtype=float)
    mean = x.mean(axis=1)
    dev = x - mean[:, None]
    return x.shape[1], mean, dev @ dev.T


def _log_det_m(n: np.ndarray, rho: np.ndarray) -> np.ndarray:
    return (n - 1) * np.log1p(-rho) + np.log1p((n - 1) * rho)


def _residuals(n: Any, rho: Any, means: np.ndarray, theta: np.ndarray) -> tuple[np.ndarray, ...]:
    """`n` and `rho` as arrays, the residual means :math:`v_i` and their weights :math:`w_i`."""
    n = np.asarray(n, dtype=float)
    rho = np.asarray(rho, dtype=float)
    return n, rho, means - theta, n / (1 + (n - 1) * rho)


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
    n, rho, v, weight = _residuals(n, rho, means, theta)
    d = means.shape[-1]
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
    n, rho, v, weight = _residuals(n, rho, means, theta)
    d = means.shape[-1]
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
