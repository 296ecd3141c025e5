r"""Likelihood of the hierarchical correlated-t model from sufficient statistics.

The per-fold differences of data set i are MVN(delta_i 1, sigma_i^2 M) with
compound symmetry M = (1 - rho) I + rho 11^T, so the density depends on the data
only through (n, mean, within sum of squares): O(1) per data set instead of
O(n^2). sigma_i ~ U(0, sigma_upper) is integrated out in closed form. The same
formulas serve NumPy (tests, checks) and PyTensor (the PyMC model).

References
----------
.. [1] G. Corani, A. Benavoli, J. Demšar, F. Mangili, M. Zaffalon (2017).
   Statistical comparison of classifiers through Bayesian hierarchical
   modelling. *Machine Learning* 106(11), 1817-1837.
.. [2] C. Nadeau, Y. Bengio (2003). Inference for the generalization error.
   *Machine Learning* 52, 239-281.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from scipy import special


def sufficient_statistics(
    differences: tuple[np.ndarray, ...] | list[np.ndarray],
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Return ``(n, mean, ss)`` per data set: count, mean and within sum of squares.

    Parameters
    ----------
    differences : sequence of numpy.ndarray
        One 1-D array of differences per data set.

    Returns
    -------
    n, mean, ss : numpy.ndarray
        ``ss[i] = sum((x_i - mean(x_i))**2)``.

    Examples
    --------
    >>> n, m, ss = sufficient_statistics([np.array([1.0, 2.0, 3.0])])
    >>> n, m, ss
    (array([3.]), array([2.]), array([2.]))
    """
    n = np.array([d.size for d in differences], dtype=float)
    mean = np.array([d.mean() for d in differences])
    ss = np.array([((d - d.mean()) ** 2).sum() for d in differences])
    return n, mean, ss


def _quadratic_form(mean: Any, ss: Any, n: Any, rho: Any, delta: Any) -> Any:
    r"""Return :math:`(x - \delta 1)^T M^{-1} (x - \delta 1)` from sufficient statistics.

    With :math:`M = (1-\rho)I + \rho 11^T`, :math:`M^{-1} = (I - c 11^T)/(1-\rho)`,
    :math:`c = \rho/(1 + (n-1)\rho)` [1]_ [2]_, the form is
    :math:`SS/(1-\rho) + n(\bar x - \delta)^2/(1 + (n-1)\rho)`.
    """
    return ss / (1 - rho) + n * (mean - delta) ** 2 / (1 + (n - 1) * rho)


def conditional_loglik(
    mean: np.ndarray,
    ss: np.ndarray,
    n: np.ndarray,
    rho: np.ndarray | float,
    delta: np.ndarray | float,
    sigma: np.ndarray | float,
) -> np.ndarray:
    r"""Log density of each data set's differences given :math:`\delta_i, \sigma_i`.

    Equals the density of :math:`x_i \sim MVN(\delta_i 1, \sigma_i^2 M)` with
    :math:`M = (1-\rho)I + \rho 11^T` (compound symmetry, [1]_ [2]_), computed in
    O(1) per data set from ``n``, the mean and the within sum of squares, using
    :math:`\det M = (1-\rho)^{n-1}(1 + (n-1)\rho)`.

    Parameters
    ----------
    mean, ss, n : numpy.ndarray
        Sufficient statistics (see :func:`sufficient_statistics`).
    rho : float or numpy.ndarray
        Correlation of the differences within a data set.
    delta, sigma : float or numpy.ndarray
        Mean and standard deviation of each data set's differences.

    Returns
    -------
    numpy.ndarray
        One log density per data set.
    """
    log_det_m = (n - 1) * np.log1p(-rho) + np.log1p((n - 1) * rho)
    quad = _quadratic_form(mean, ss, n, rho, delta)
    return (
        -0.5 * n * math.log(2 * math.pi)
        - n * np.log(sigma)
        - 0.5 * log_det_m
        - 0.5 * quad / np.square(sigma)
    )


def _marginal_loglik(
    mean: Any,
    ss: Any,
    n: Any,
    rho: Any,
    delta: Any,
    sigma_upper: Any,
    *,
    lib: Any,
    bounded: bool = True,
) -> Any:
    # integral of the conditional density over sigma_i ~ U(0, sigma_upper), in closed form:
    # 1/sigma_upper * (2 pi)^(-n/2) det(M)^(-1/2) * 1/2 (Q/2)^(-a) Gamma(a) Q(a, Q/(2 su^2))
    # (su = sigma_upper)
    # with a = (n - 1)/2 and Q(., .) the regularised upper incomplete gamma function
    a = (n - 1) / 2
    quad = _quadratic_form(mean, ss, n, rho, delta)
    log_det_m = (n - 1) * lib.log1p(-rho) + lib.log1p((n - 1) * rho)
    out = (
        -lib.log(sigma_upper)
        - 0.5 * n * math.log(2 * math.pi)
        - 0.5 * log_det_m
        - math.log(2.0)
        + lib.gammaln(a)
        - a * lib.log(quad / 2)
    )
    if bounded:  # the upper bound of sigma_i's uniform prior (see BOUND_TERM_TOL)
        out = out + lib.log(lib.gammaincc(a, quad / (2 * sigma_upper**2)))
    return out


class _NumpyLib:
    log = staticmethod(np.log)
    log1p = staticmethod(np.log1p)
    gammaln = staticmethod(special.gammaln)
    gammaincc = staticmethod(special.gammaincc)


def marginal_loglik(
    mean: np.ndarray,
    ss: np.ndarray,
    n: np.ndarray,
    rho: np.ndarray | float,
    delta: np.ndarray | float,
    sigma_upper: float,
    *,
    bounded: bool = True,
) -> np.ndarray:
    r"""Log density of each data set's differences given :math:`\delta_i` only.

    :math:`\sigma_i \sim U(0, \bar\sigma)` is integrated out in closed form:

    .. math::

        p(x_i \mid \delta_i) = \frac{\Gamma(a)\, Q(a, \frac{S}{2\bar\sigma^2})}
        {2 \bar\sigma (2\pi)^{n/2} (\det M)^{1/2} (S/2)^{a}},
        \quad a = \frac{n-1}{2},

    with :math:`S` the quadratic form of :func:`conditional_loglik` and
    :math:`Q` the regularised upper incomplete gamma function. This is the
    likelihood the PyMC model uses (the same expression, written in PyTensor).

    Parameters
    ----------
    mean, ss, n : numpy.ndarray
        Sufficient statistics (see :func:`sufficient_statistics`); ``n >= 2``.
    rho : float or numpy.ndarray
        Correlation of the differences within a data set.
    delta : float or numpy.ndarray
        Mean of each data set's differences.
    sigma_upper : float
        Upper bound :math:`\bar\sigma` of the uniform prior on :math:`\sigma_i`.
    bounded : bool, default: True
        False drops the factor :math:`Q(a, S / (2\bar\sigma^2))`, which is 1 to
        double precision unless :math:`\delta_i` lies absurdly far (hundreds of
        standard deviations) from the data set's mean when :math:`\bar\sigma`
        is large (as with the reference priors); the model then uses the prior
        bound only through the constant :math:`1/\bar\sigma`.

    Returns
    -------
    numpy.ndarray
        One log density per data set.
    """
    return _marginal_loglik(mean, ss, n, rho, delta, sigma_upper, lib=_NumpyLib, bounded=bounded)
