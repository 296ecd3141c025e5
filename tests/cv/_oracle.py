r"""Labelled oracle: NumPy reference forms of the hierarchical model's likelihood.

Used by tests (and ``bench/bench_quadrature_accuracy.py``) only; the fits use the one
definition in ``src/``: the compiled log densities of
:mod:`isbetter.cv.hierarchical.compiled_backend` (numba kernels of
:mod:`isbetter.cv.hierarchical.numerics.kernels`) and, where the PyMC backend needs it,
the PyTensor form of :mod:`isbetter.cv.hierarchical.pymc_backend`, both tested equal to
these.

* :func:`conditional_loglik`, :func:`marginal_loglik`: the compound-symmetry MVN density
  of one data set's differences from its sufficient statistics, given
  :math:`(\delta_i, \sigma_i)` and with :math:`\sigma_i \sim U(0, \bar\sigma)`
  integrated out in closed form (tested against SciPy's dense MVN);
* :func:`nu_prior`: the density of :math:`\nu` with the shape and rate of its Gamma
  prior integrated out (the rate in closed form, the shape by Gauss-Legendre);
* :func:`integrated_loglik`: the quadrature rule of the compiled kernels (the midpoint
  rule in the sinh-mapped coordinate u, with mode centres), vectorised with a fixed
  number of nodes; :func:`draw_deltas` its sampler of each :math:`\delta_i` given the
  hyper-parameters.

Nothing here comes from ``src/``: the quadratic form, the likelihood's width, the
tails' reach, the solver's tolerance and the search for the integrand's modes (the
real roots of a cubic, :func:`_mode_centres`; the compiled rule finds them by EM steps)
are derived below from the model's mathematics, so that an error in the package
cannot pass its tests by being copied into their reference.

References
----------
.. [1] G. Corani, A. Benavoli, J. Demšar, F. Mangili, M. Zaffalon (2017).
   Statistical comparison of classifiers through Bayesian hierarchical
   modelling. *Machine Learning* 106(11), 1817-1837.
.. [2] C. Nadeau, Y. Bengio (2003). Inference for the generalization error.
   *Machine Learning* 52, 239-281.
.. [3] L. N. Trefethen, J. A. C. Weideman (2014). The exponentially convergent
   trapezoidal rule. *SIAM Review* 56(3), 385-458.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from scipy import special

#: the rule reaches so far that the tails beyond it hold about exp(-18.4) = 1e-8 of the
#: integral: they fall as |delta|^-(nu + 2a) (prior nu + 1, likelihood 2a), so their mass
#: beyond R widths is ~ R^-(nu + 2a - 1) < exp(-TAIL_LOG_MASS) for R = exp(TAIL_LOG_MASS /
#: (nu + 2a)) x 2 (and at least 10 widths, for light tails)
TAIL_LOG_MASS = 18.4
#: Newton's method stops when u is matched this closely (u is O(1)-O(100): ~1e-13 relative)
_U_TOL = 1e-11
#: a mode of the integrand gets its own centre in u where the two-centre map puts fewer
#: than MODE_NODES / (node spacing in u) nodes across the mode's scale s (du/dy s < this)
MODE_NODES = 0.7


def _quadratic_form(mean: Any, ss: Any, n: Any, rho: Any, delta: Any) -> Any:
    r"""Return :math:`(x - \delta 1)^T M^{-1} (x - \delta 1)`, :math:`M = (1-\rho)I + \rho 11^T`.

    :math:`M` has eigenvalue :math:`1 + (n-1)\rho` on :math:`1` and :math:`1-\rho` on its
    orthogonal complement; :math:`x - \delta 1` splits into :math:`(\bar x - \delta) 1`
    (squared length :math:`n (\bar x - \delta)^2`) and the deviations from the mean
    (squared length ``ss``), so the form is :math:`SS/(1-\rho) + n(\bar x - \delta)^2 /
    (1 + (n-1)\rho)`.
    """
    return ss / (1 - rho) + n * (mean - delta) ** 2 / (1 + (n - 1) * rho)


def likelihood_width(a: Any, w: Any, ssr: Any) -> Any:
    r"""Scale of data set i's likelihood in :math:`\delta_i`.

    With :math:`\sigma_i` integrated out it is :math:`(S/2)^{-a}`, :math:`S = ssr + w
    (\bar x_i - \delta_i)^2` (:func:`marginal_loglik`), i.e. a Student-t kernel in
    :math:`\delta_i` with :math:`2a - 1` degrees of freedom and scale
    :math:`\sqrt{ssr / (w (2a - 1))}` (at least one degree of freedom).
    """
    return np.sqrt(ssr / (w * np.maximum(2.0 * a - 1.0, 1.0)))


def _mode_centres(nu: Any, lik: tuple[Any, ...], kappa: Any, gap: Any) -> tuple[Any, ...]:
    r"""Extra centres ``(y_1, s_1, y_2, s_2, y_3, s_3)`` of the map: the integrand's modes.

    In :math:`y = (\delta - \delta_0) / w_i` (``w_i`` the likelihood's width) the log
    integrand is :math:`f(y) = -\frac{\nu+1}{2}\log(\kappa^2\nu + y^2) - a \log(c +
    (y - g)^2)` + const, :math:`\kappa = \sigma_0 / w_i`, :math:`g` the likelihood's centre,
    :math:`c = ssr / (w\, w_i^2)`. :math:`f'(y) = 0` is, after clearing denominators, the
    cubic :math:`(\nu+1)\, y\, (c + (y-g)^2) + 2a\,(y - g)(\kappa^2\nu + y^2) = 0`: its
    real roots with :math:`f'' < 0` are the modes (at most two), each of scale
    :math:`s = (-f'')^{-1/2}`. A mode gets a centre (``s > 0``) where the two-centre map's
    :math:`du/dy = (\kappa^2 + y^2)^{-1/2} + (1 + (y-g)^2)^{-1/2}` times ``s`` is below
    :data:`MODE_NODES`; unused slots have ``s = 0``.
    """
    a, w, ssr = (np.asarray(v, dtype=float) for v in lik[:3])
    width = likelihood_width(a, w, ssr)
    nu, kappa, gap = np.broadcast_arrays(*(np.asarray(v, dtype=float) for v in (nu, kappa, gap)))
    shape = np.broadcast_shapes(nu.shape, a.shape)
    nu, kappa, gap, a, c = (
        np.broadcast_to(v, shape).ravel() for v in (nu, kappa, gap, a, ssr / (w * width * width))
    )
    k2nu = kappa * kappa * nu
    # (nu + 1) y (c + (y - g)^2) + 2a (y - g)(k2nu + y^2): coefficients of y^3 .. y^0
    coeffs = np.stack(
        [
            nu + 1.0 + 2.0 * a,
            -2.0 * gap * (nu + 1.0) - 2.0 * a * gap,
            (nu + 1.0) * (c + gap * gap) + 2.0 * a * k2nu,
            -2.0 * a * gap * k2nu,
        ],
        axis=-1,
    )
    # the roots: eigenvalues of the monic cubic's companion matrices, all at once
    monic = coeffs[:, 1:] / coeffs[:, :1]
    companion = np.zeros((monic.shape[0], 3, 3))
    companion[:, 0, :] = -monic
    companion[:, 1, 0] = companion[:, 2, 1] = 1.0
    roots = np.linalg.eigvals(companion)
    real = np.abs(roots.imag) <= 1e-9 * (1.0 + np.abs(roots.real))
    y = np.sort(np.where(real, roots.real, np.nan), axis=-1)  # NaN (complex) last
    d = y - gap[:, None]
    k2 = k2nu[:, None]
    second = (
        -(nu[:, None] + 1.0) * (k2 - y * y) / (k2 + y * y) ** 2
        - 2.0 * a[:, None] * (c[:, None] - d * d) / (c[:, None] + d * d) ** 2
    )
    is_mode = second < 0.0  # False where NaN
    scale = np.where(is_mode, 1.0 / np.sqrt(np.where(is_mode, -second, 1.0)), 0.0)
    du_dy = 1.0 / np.hypot(kappa[:, None], y) + 1.0 / np.hypot(1.0, d)
    scale = scale * (du_dy * scale < MODE_NODES)
    out = np.zeros((6, y.shape[0]))
    out[0::2] = np.where(is_mode, y, 0.0).T
    out[1::2] = np.where(is_mode, scale, 0.0).T
    return tuple(v.reshape(shape) for v in out)


def nu_prior(nu: np.ndarray, alpha=(1.0, 2.0), beta=(0.01, 0.1), n_alpha: int = 48) -> np.ndarray:
    """Density of nu = 1 + Gamma(alpha, rate beta), alpha ~ U(alpha), beta ~ U(beta)."""
    # the beta integral in closed form: x^-2 alpha [P(alpha + 1, b_hi x) - P(alpha + 1, b_lo x)]
    x = np.asarray(nu, dtype=float)[..., None] - 1.0
    t, weight = np.polynomial.legendre.leggauss(n_alpha)
    al = alpha[0] + (alpha[1] - alpha[0]) * (t + 1) / 2
    inner = al * (special.gammainc(al + 1, beta[1] * x) - special.gammainc(al + 1, beta[0] * x))
    return (inner / x**2 * weight / 2).sum(-1) / (beta[1] - beta[0])


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
    # 1/su (2 pi)^(-n/2) det(M)^(-1/2) 1/2 (S/2)^(-a) Gamma(a) Q(a, S/(2 su^2)), su = sigma_upper
    a = (n - 1) / 2
    quad = _quadratic_form(mean, ss, n, rho, delta)
    log_det_m = (n - 1) * np.log1p(-rho) + np.log1p((n - 1) * rho)
    out = (
        -np.log(sigma_upper)
        - 0.5 * n * math.log(2 * math.pi)
        - 0.5 * log_det_m
        - math.log(2.0)
        + special.gammaln(a)
        - a * np.log(quad / 2)
    )
    if bounded:  # the upper bound of sigma_i's uniform prior (see BOUND_TERM_TOL)
        out = out + np.log(special.gammaincc(a, quad / (2 * sigma_upper**2)))
    return out  # type: ignore[no-any-return,unused-ignore]


#: Nodes per data set of the NumPy rule (the reference of the compiled one, which spaces its
#: nodes NODE_SPACING apart in u instead). On the 48 + 9 cases of
#: tests/cv/test_hierarchical_oracle.py (test_numpy_rule_converges_to_adaptive_quadrature)
#: the error of log p(x_i | delta0, std0, nu) is at most 3.5e-3, median 1.9e-7 (256 nodes:
#: at most 1.2e-8); bench/bench_quadrature_accuracy.py measures 2000 random configurations.
QUADRATURE_NODES = 64


def _map(u: Any, kappa: Any, gap: Any) -> tuple[Any, Any, Any, Any]:
    # Invert u = asinh(z) + asinh(kappa z - gap), z = (delta - delta0) / std0: with
    # X = exp(asinh z), E = exp(u): (1/E + kappa) X^2 - 2 gap X - (E + kappa) = 0,
    # whose one positive root is written without cancellation for either sign of the gap.
    # Returns z, cosh(asinh z) and the same for z_lik = kappa z - gap = sinh(u - asinh z).
    e = np.exp(u)
    big = np.abs(gap) + np.sqrt(gap**2 + 1.0 + kappa * (e + 1.0 / e) + kappa**2)
    x = np.where(gap >= 0, big / (1.0 / e + kappa), (e + kappa) / big)
    y = e / x
    return (x - 1.0 / x) / 2.0, (x + 1.0 / x) / 2.0, (y - 1.0 / y) / 2.0, (y + 1.0 / y) / 2.0


def _extra_terms(y: Any, centres: tuple[Any, ...]) -> tuple[Any, Any]:
    # the terms sum_k asinh((y - y_k) / s_k) of u at the mode centres, and their derivative
    total: Any = 0.0
    slope: Any = 0.0
    for y_k, s_k in zip(centres[::2], centres[1::2], strict=True):
        on = s_k > 0.0
        t = (y - y_k) / np.where(on, s_k, 1.0)
        total = total + np.where(on, np.arcsinh(t), 0.0)
        slope = slope + np.where(on, 1.0 / (np.where(on, s_k, 1.0) * np.hypot(1.0, t)), 0.0)
    return total, slope


def _solve_y(target: Any, lo: Any, hi: Any, frame: tuple[Any, ...]) -> tuple[Any, Any]:
    # NumPy form of kernels._solve_y (the nodes of the map with mode centres), all at once:
    # Newton's method from the middle of the bracket [lo, hi], which bisects where Newton
    # would leave the bracket or the last step did not halve the miss
    kappa, gap, centres = frame[0], frame[1], frame[2:]
    y, last = (lo + hi) / 2.0, np.inf
    for _ in range(400):
        extra, d_extra = _extra_terms(y, centres)
        miss = np.arcsinh(y / kappa) + np.arcsinh(y - gap) + extra - target
        slope = 1.0 / np.hypot(kappa, y) + 1.0 / np.hypot(1.0, y - gap) + d_extra
        if np.all(np.abs(miss) < _U_TOL):
            break
        lo, hi = np.where(miss < 0.0, y, lo), np.where(miss < 0.0, hi, y)
        newton = y - miss / slope
        bisect = ~((lo < newton) & (newton < hi)) | (np.abs(miss) > last / 2.0)
        y, last = np.where(bisect, (lo + hi) / 2.0, newton), np.abs(miss)
    return y, slope


def _points(u: Any, std0: Any, width: Any, frame: tuple[Any, ...]) -> tuple[Any, Any, Any]:
    # z_prior, z_lik and d delta / du at u under the map of quadrature_nodes (frame: its
    # last output, each broadcast to u's shape): two centres, or more where an s_k > 0
    kappa, gap, *centres, y_lo, y_hi = frame
    z_prior, cosh_prior, z_lik, cosh_lik = _map(u, kappa, gap)
    # d delta / du = 1 / (1 / (std0 cosh(asinh z_prior)) + 1 / (width cosh(asinh z_lik)))
    jac = 1.0 / (1.0 / (std0 * cosh_prior) + 1.0 / (width * cosh_lik))
    modes = (centres[1] > 0.0) | (centres[3] > 0.0) | (centres[5] > 0.0)
    if np.any(modes):
        sub = tuple(v[modes] for v in (kappa, gap, *centres))
        y, slope = _solve_y(u[modes], y_lo[modes], y_hi[modes], sub)
        z_prior[modes], z_lik[modes] = y / sub[0], y - sub[1]
        jac[modes] = width[modes] / slope
    return z_prior, z_lik, jac


def quadrature_nodes(
    delta0: Any, std0: Any, nu: Any, lik: tuple[Any, ...], width: Any, n_nodes: int
) -> tuple[Any, Any, Any, Any, tuple[Any, ...]]:
    r"""Nodes of the quadrature over :math:`\delta_i` for given hyper-parameters.

    The integrand, a Student-t prior (centre :math:`\delta_0`, scale
    :math:`\sigma_0`) times the likelihood (centre :math:`\bar x_i`, width
    :math:`w_i`), can be narrow at either centre, bimodal, or spread over
    decades. The nodes are equally spaced (midpoint rule) in
    :math:`u = \operatorname{asinh}((\delta - \delta_0)/\sigma_0) +
    \operatorname{asinh}((\delta - \bar x_i)/w_i)`, which puts them at spacing
    :math:`\propto\sigma_0` at the prior's centre, :math:`\propto w_i` at the
    likelihood's and geometrically wider elsewhere; :math:`u \mapsto \delta`
    has a closed form. The product can also peak away from both centres, far
    in units of its own scale :math:`s`, where those nodes are too sparse: between
    them, where both kernels are near-Gaussian and many widths apart, or pushed off
    one centre by the other kernel's tail. :math:`u` then gets a term
    :math:`\operatorname{asinh}((\delta - m)/s)` for each such mode :math:`m`
    (``kernels._mode_centres``), and :math:`u \mapsto \delta` is
    solved by Newton's method.

    Parameters
    ----------
    delta0, std0, nu : array_like
        Hyper-parameters (broadcast against the data).
    lik : tuple of array_like
        Per data set ``(a, w, ssr, xbar)``, as for :func:`integrated_loglik`.
    width : array_like
        Per data set: width of the likelihood in :math:`\delta_i`.
    n_nodes : int
        Nodes per data set (a trailing axis of the outputs).

    Returns
    -------
    u, z_prior, z_lik, log_weight, frame
        Nodes in :math:`u`, :math:`(\delta - \delta_0)/\sigma_0`,
        :math:`(\delta - \bar x_i)/w_i` and the log of (step x Jacobian
        :math:`d\delta/du`); the map's parameters (without the node axis), with
        which :func:`_points` maps any :math:`u`.
    """
    delta0, std0, nu = (np.asarray(v) for v in (delta0, std0, nu))
    a, xbar = lik[0], lik[3]
    gap = xbar - delta0
    kappa = std0 / width
    centres = _mode_centres(nu, lik, kappa, gap / width)
    tails = np.maximum(10.0, 2.0 * np.exp(TAIL_LOG_MASS / (nu + 2.0 * a)))
    reach = np.maximum(np.maximum(std0, width), np.abs(gap)) * tails
    lo = np.minimum(delta0, xbar) - reach
    hi = np.maximum(delta0, xbar) + reach
    y_lo, y_hi = ((edge - delta0) / width for edge in (lo, hi))
    u_lo, u_hi = (
        np.arcsinh((edge - delta0) / std0)
        + np.arcsinh((edge - xbar) / width)
        + _extra_terms(y, centres)[0]
        for edge, y in ((lo, y_lo), (hi, y_hi))
    )
    step = ((u_hi - u_lo) / n_nodes)[..., None]
    u = u_lo[..., None] + step * (np.arange(n_nodes) + 0.5)
    frame = tuple(np.broadcast_arrays(kappa, gap / width, *centres, y_lo, y_hi))
    at_nodes = tuple(np.broadcast_to(v[..., None], u.shape) for v in frame)
    std0_, width_ = (np.broadcast_to(np.asarray(v)[..., None], u.shape) for v in (std0, width))
    z_prior, z_lik, jac = _points(u, std0_, width_, at_nodes)
    return u, z_prior, z_lik, np.log(jac * step), frame


def log_integrand(
    z_prior: Any, z_lik: Any, nu: Any, data: tuple[Any, ...], *, bounded: bool
) -> Any:
    r"""Log of prior x likelihood at the nodes, without the constants of :func:`integrated_loglik`.

    `data` is ``(a, w, ssr, width, std_hi)`` (per data set, with a trailing node
    axis, except ``std_hi``); see :meth:`isbetter.cv.hierarchical.spec.Prepared.model_data`.
    """
    a, w, ssr, width, std_hi = data
    quad = ssr + w * (width * z_lik) ** 2
    out = -(nu + 1.0) / 2.0 * np.log1p(z_prior**2 / nu) - a * np.log(quad / 2.0)
    if bounded:  # sigma_i's bound factor, floored at 1e-300 where it underflows far out
        out = out + np.log(np.maximum(special.gammaincc(a, quad / (2.0 * std_hi**2)), 1e-300))
    return out


def integrated_loglik(
    delta0: Any,
    std0: Any,
    nu: Any,
    data: tuple[Any, ...],
    *,
    n_nodes: int = QUADRATURE_NODES,
    bounded: bool = False,
) -> np.ndarray:
    r"""Log :math:`p(x_i \mid \delta_0, \sigma_0, \nu)` per data set.

    :math:`\sigma_i` integrated out in closed form
    (:func:`marginal_loglik`), :math:`\delta_i`
    by the quadrature of :func:`quadrature_nodes` against its Student-t prior;
    without the data-only constant ``c_i`` of
    :meth:`isbetter.cv.hierarchical.spec.Prepared.model_data`.

    Parameters
    ----------
    delta0, std0, nu : array_like
        Hyper-parameters, broadcast against the data (a trailing data-set axis).
    data : tuple
        ``(a, w, ssr, xbar, std_hi)``: per data set ``(n - 1)/2``,
        ``n / (1 + (n - 1) rho)``, ``ss / (1 - rho)``, the mean; and the bound of
        :math:`\sigma_i`.
    n_nodes : int, default: QUADRATURE_NODES
    bounded : bool, default: False
        Keep the factor of :math:`\sigma_i`'s prior bound (see
        :func:`marginal_loglik`).

    Returns
    -------
    numpy.ndarray
        One log density per data set (the trailing axis).
    """
    delta0, std0, nu = (np.asarray(v, dtype=float) for v in (delta0, std0, nu))
    a, w, ssr, xbar, std_hi = data
    width = likelihood_width(a, w, ssr)
    _, z_prior, z_lik, log_weight, _ = quadrature_nodes(
        delta0, std0, nu, (a, w, ssr, xbar), width, n_nodes
    )
    nodes = (a[..., None], w[..., None], ssr[..., None], width[..., None], std_hi)
    log_f = log_integrand(z_prior, z_lik, nu[..., None], nodes, bounded=bounded)
    log_t_norm = (
        special.gammaln((nu + 1.0) / 2.0) - special.gammaln(nu / 2.0) - 0.5 * np.log(nu * math.pi)
    ) - np.log(std0)
    return special.logsumexp(log_f + log_weight, axis=-1) + log_t_norm  # type: ignore[no-any-return,unused-ignore]


def draw_deltas(
    delta0: np.ndarray,
    std0: np.ndarray,
    nu: np.ndarray,
    data: tuple[Any, ...],
    rng: np.random.Generator,
    *,
    bounded: bool = False,
    n_nodes: int = QUADRATURE_NODES,
    chunk: int = 2_000_000,
) -> np.ndarray:
    r"""The NumPy form of :func:`isbetter.cv.hierarchical.numerics.quadrature.draw_deltas`.

    The same sampler (the cubic interpolant of the log density in :math:`u`, sampled
    exactly by rejection) on the nodes of :func:`quadrature_nodes`: `n_nodes` per data
    set, `chunk` array elements per vectorised step.
    """
    a, w, ssr, xbar, std_hi = (np.asarray(v, dtype=float) for v in data)
    width = likelihood_width(a, w, ssr)
    hyper = [np.asarray(v, dtype=float).reshape(-1, 1) for v in (delta0, std0, nu)]
    out = np.empty((hyper[0].shape[0], xbar.size))
    step = max(1, chunk // (xbar.size * n_nodes))
    for lo in range(0, out.shape[0], step):
        d0, s0, v = (h[lo : lo + step] for h in hyper)
        u, z_prior, z_lik, log_weight, frame = quadrature_nodes(
            d0, s0, v, (a, w, ssr, xbar), width, n_nodes
        )
        nodes = (a[:, None], w[:, None], ssr[:, None], width[:, None], std_hi)
        log_g = log_integrand(z_prior, z_lik, v[..., None], nodes, bounded=bounded)
        log_g = log_g + log_weight
        u_draw = _sample_interpolant(u, log_g, rng)
        _, std0_, width_ = np.broadcast_arrays(u_draw, s0, width)
        z_prior = _points(u_draw, std0_, width_, frame)[0]
        out[lo : lo + step] = d0 + s0 * z_prior
    return out


def _sample_interpolant(u: np.ndarray, log_g: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """One draw per row from the density whose log is the cubic Hermite interpolant of `log_g`.

    Exact, by rejection: intervals are chosen in proportion to an envelope
    ``exp(chord + bound)`` of the interpolant (the chord: linear interpolation of
    the log density), a point is drawn from the chord and accepted with
    probability ``exp(cubic - chord - bound)``. Slopes are central differences,
    so the log of a Gaussian (a quadratic) is interpolated exactly.
    """
    log_g = np.maximum(log_g - log_g.max(axis=-1, keepdims=True), -700.0)
    slope = np.gradient(log_g, axis=-1)
    chord = np.diff(log_g, axis=-1)
    # cubic - chord = x (1 - x) (A (1 - x) - B x) on [0, 1], at most 4/27 (A+ + B-)
    big_a, big_b = slope[..., :-1] - chord, slope[..., 1:] - chord
    bound = 4.0 / 27.0 * (np.maximum(big_a, 0.0) + np.maximum(-big_b, 0.0))
    small = np.abs(chord) < 1e-8
    safe = np.where(small, 1.0, chord)
    # envelope mass of each interval (per step): exp(bound) x logarithmic mean of the ends
    mass = np.exp(log_g[..., :-1] + bound) * np.where(small, 1.0 + chord / 2, np.expm1(safe) / safe)
    cum = np.cumsum(mass, axis=-1)
    out = np.empty(u.shape[:-1])
    todo = np.ones(out.shape, dtype=bool)
    while todo.any():
        rows = np.nonzero(todo)
        c = cum[rows]
        j = np.minimum((c < (rng.random(len(c)) * c[:, -1])[:, None]).sum(axis=-1), c.shape[1] - 1)
        pick = (*rows, j)
        b, b_safe, v = chord[pick], safe[pick], rng.random(len(j))
        # inverse of the CDF of exp(b x) on [0, 1]
        x = np.where(np.abs(b) < 1e-8, v, np.log1p(v * np.expm1(b_safe)) / b_safe)
        excess = x * (1 - x) * (big_a[pick] * (1 - x) - big_b[pick] * x) - bound[pick]
        accept = np.log(rng.random(len(j))) < excess
        step = u[(*rows, 1)] - u[(*rows, 0)]
        out[tuple(r[accept] for r in rows)] = (u[pick] + x * step)[accept]
        todo[tuple(r[accept] for r in rows)] = False
    return out
