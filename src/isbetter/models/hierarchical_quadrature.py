r"""Each :math:`\delta_i` of the hierarchical model integrated out by quadrature.

With :math:`\sigma_i` integrated out in closed form
(:mod:`.hierarchical_likelihood`), the likelihood of data set :math:`i` given
:math:`\delta_i` is a Student-t kernel; integrating :math:`\delta_i` against its
Student-t prior :math:`t_\nu(\delta_0, \sigma_0)` by a fixed, differentiable
quadrature leaves a posterior over the hyper-parameters only, which NUTS samples
without the funnel between :math:`\sigma_0` and the :math:`\delta_i` (the "hard
case" of few data sets). Each :math:`\delta_i` is then drawn from its 1-D
conditional given every posterior draw (:func:`draw_deltas`): independent draws,
no Markov chain. The same functions serve NumPy and PyTensor (argument ``lib``).

References
----------
.. [1] G. Corani, A. Benavoli, J. Demšar, F. Mangili, M. Zaffalon (2017).
   Statistical comparison of classifiers through Bayesian hierarchical
   modelling. *Machine Learning* 106(11), 1817-1837.
.. [2] L. N. Trefethen, J. A. C. Weideman (2014). The exponentially convergent
   trapezoidal rule. *SIAM Review* 56(3), 385-458 (the midpoint rule on a
   sinh-mapped line).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from scipy import special

__all__ = [
    "QUADRATURE_NODES",
    "draw_deltas",
    "integrated_loglik",
    "likelihood_width",
    "log_integrand",
    "quadrature_nodes",
]


class _NUMPY:
    """The functions the quadrature needs, from NumPy and SciPy."""

    asarray = staticmethod(np.asarray)
    log = staticmethod(np.log)
    log1p = staticmethod(np.log1p)
    exp = staticmethod(np.exp)
    sqrt = staticmethod(np.sqrt)
    abs = staticmethod(np.abs)
    sinh = staticmethod(np.sinh)
    arcsinh = staticmethod(np.arcsinh)
    maximum = staticmethod(np.maximum)
    minimum = staticmethod(np.minimum)
    where = staticmethod(np.where)
    logaddexp = staticmethod(np.logaddexp)
    logsumexp = staticmethod(special.logsumexp)
    gammaln = staticmethod(special.gammaln)
    gammaincc = staticmethod(special.gammaincc)

    @staticmethod
    def stop_gradient(x: Any) -> Any:
        return x


#: Nodes per data set of the quadrature that integrates each delta_i out (the "integrated"
#: parameterisation). Measured against adaptive quadrature over 1165 random configurations
#: (2 <= n <= 1000 scores, std0 / likelihood width 1e-5..1e3, |xbar - delta0| up to 1000
#: likelihood widths, 1 < nu < 1000): largest error of log p(x_i | delta0, std0, nu) 9e-5
#: where std0 is within 1e-2..1e2 likelihood widths, 6e-3 at the extremes (96 nodes: 4e-7
#: and 6e-4); tests/test_hierarchical.py checks a grid of cases.
QUADRATURE_NODES = 64
#: the quadrature reaches so far that the tails beyond it hold about exp(-18.4) = 1e-8 of
#: the integral (Student-t tails of power nu + n - 1), and at least 10 widths
_TAIL_LOG_MASS = 18.4
#: The compiled likelihood (:func:`compiled_kernels`) adapts the number of nodes to the range
#: of u: this spacing, within these bounds. Over the same 1165 configurations: largest error
#: 9e-7, 77 nodes on the median configuration (most sit far outside the posterior).
NODE_SPACING = 0.35
_MIN_NODES = 16
_MAX_NODES = 256


def _map(u: Any, kappa: Any, gap: Any, lib: Any) -> tuple[Any, Any, Any, Any]:
    # Invert u = asinh(z) + asinh(kappa z - gap), z = (delta - delta0) / std0: with
    # X = exp(asinh z), E = exp(u): (1/E + kappa) X^2 - 2 gap X - (E + kappa) = 0,
    # whose one positive root is written without cancellation for either sign of the gap.
    # Returns z, cosh(asinh z) and the same for z_lik = kappa z - gap = sinh(u - asinh z).
    e = lib.exp(u)
    big = lib.abs(gap) + lib.sqrt(gap**2 + 1.0 + kappa * (e + 1.0 / e) + kappa**2)
    x = lib.where(gap >= 0, big / (1.0 / e + kappa), (e + kappa) / big)
    y = e / x
    return (x - 1.0 / x) / 2.0, (x + 1.0 / x) / 2.0, (y - 1.0 / y) / 2.0, (y + 1.0 / y) / 2.0


def quadrature_nodes(
    delta0: Any, std0: Any, nu: Any, xbar: Any, width: Any, a: Any, n_nodes: int, *, lib: Any
) -> tuple[Any, Any, Any, Any]:
    r"""Nodes of the quadrature over :math:`\delta_i` for given hyper-parameters.

    The integrand, a Student-t prior (centre :math:`\delta_0`, scale
    :math:`\sigma_0`) times the likelihood (centre :math:`\bar x_i`, width
    :math:`w_i`), can be narrow at either centre, bimodal, or spread over
    decades. The nodes are equally spaced (midpoint rule) in
    :math:`u = \operatorname{asinh}((\delta - \delta_0)/\sigma_0) +
    \operatorname{asinh}((\delta - \bar x_i)/w_i)`, which puts them at spacing
    :math:`\propto\sigma_0` at the prior's centre, :math:`\propto w_i` at the
    likelihood's and geometrically wider elsewhere; :math:`u \mapsto \delta`
    has a closed form, so the rule is differentiable in the hyper-parameters.

    Parameters
    ----------
    delta0, std0, nu : array_like
        Hyper-parameters (broadcast against the data).
    xbar, width, a : array_like
        Per data set: mean, width of the likelihood in :math:`\delta_i`,
        :math:`(n - 1)/2` (the tail power).
    n_nodes : int
        Nodes per data set (a trailing axis of the outputs).
    lib : namespace
        NumPy or PyTensor functions.

    Returns
    -------
    u, z_prior, z_lik, log_weight
        Nodes in :math:`u`, :math:`(\delta - \delta_0)/\sigma_0`,
        :math:`(\delta - \bar x_i)/w_i` and the log of (step x Jacobian
        :math:`d\delta/du`).
    """
    delta0, std0, nu = (lib.asarray(v) for v in (delta0, std0, nu))
    gap = xbar - delta0
    tails = lib.maximum(10.0, 2.0 * lib.exp(_TAIL_LOG_MASS / (nu + 2.0 * a)))
    reach = lib.maximum(lib.maximum(std0, width), lib.abs(gap)) * tails
    lo = lib.minimum(delta0, xbar) - reach
    hi = lib.maximum(delta0, xbar) + reach
    u_lo = lib.arcsinh((lo - delta0) / std0) + lib.arcsinh((lo - xbar) / width)
    u_hi = lib.arcsinh((hi - delta0) / std0) + lib.arcsinh((hi - xbar) / width)
    step = ((u_hi - u_lo) / n_nodes)[..., None]
    u = u_lo[..., None] + step * (np.arange(n_nodes) + 0.5)
    std0_, width_ = std0[..., None], width[..., None]
    z_prior, cosh_prior, z_lik, cosh_lik = _map(u, std0_ / width_, (gap / width)[..., None], lib)
    # d delta / du = 1 / (1 / (std0 cosh(asinh z_prior)) + 1 / (width cosh(asinh z_lik)))
    jac = 1.0 / (1.0 / (std0_ * cosh_prior) + 1.0 / (width_ * cosh_lik))
    return u, z_prior, z_lik, lib.log(jac * step)


def likelihood_width(a: Any, w: Any, ssr: Any, *, lib: Any) -> Any:
    r"""Width of data set i's likelihood in :math:`\delta_i` (a Student-t kernel, n - 2 df)."""
    return lib.sqrt(ssr / (w * lib.maximum(2.0 * a - 1.0, 1.0)))


def log_integrand(
    z_prior: Any, z_lik: Any, nu: Any, data: tuple[Any, ...], *, lib: Any, bounded: bool
) -> Any:
    r"""Log of prior x likelihood at the nodes, without the constants of :func:`integrated_loglik`.

    `data` is ``(a, w, ssr, width, std_hi)`` (per data set, with a trailing node
    axis, except ``std_hi``); see :meth:`.hierarchical_likelihood.Prepared.model_data`.
    """
    a, w, ssr, width, std_hi = data
    quad = ssr + w * (width * z_lik) ** 2
    out = -(nu + 1.0) / 2.0 * lib.log1p(z_prior**2 / nu) - a * lib.log(quad / 2.0)
    if bounded:
        out = out + log_bound_factor(z_lik, data, lib=lib)
    return out


def log_bound_factor(z_lik: Any, data: tuple[Any, ...], *, lib: Any) -> Any:
    r"""Log of :math:`\sigma_i`'s bound factor at the nodes (see :func:`log_integrand`).

    Floored at 1e-300: far out the factor underflows, and log(0) would poison the gradient.
    """
    a, w, ssr, width, std_hi = data
    quad = ssr + w * (width * z_lik) ** 2
    return lib.log(lib.maximum(lib.gammaincc(a, quad / (2.0 * std_hi**2)), 1e-300))


def integrated_loglik(
    delta0: Any,
    std0: Any,
    nu: Any,
    data: tuple[Any, ...],
    *,
    n_nodes: int = QUADRATURE_NODES,
    bounded: bool = False,
    lib: Any = None,
) -> Any:
    r"""Log :math:`p(x_i \mid \delta_0, \sigma_0, \nu)` per data set.

    :math:`\sigma_i` integrated out in closed form
    (:func:`.hierarchical_likelihood.marginal_loglik`), :math:`\delta_i`
    by the quadrature of :func:`quadrature_nodes` against its Student-t prior;
    without the data-only constant ``c_i`` of :meth:`.hierarchical_likelihood.Prepared.model_data`.

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
        :func:`.hierarchical_likelihood.marginal_loglik`).
    lib : namespace, optional
        PyTensor functions for the model; default NumPy.

    Returns
    -------
    array
        One log density per data set (the trailing axis).
    """
    lib = _NUMPY if lib is None else lib
    delta0, std0, nu = (lib.asarray(v) for v in (delta0, std0, nu))
    a, w, ssr, xbar, std_hi = data
    width = likelihood_width(a, w, ssr, lib=lib)
    # The gradient is that of the quadrature with its nodes held fixed in delta: the
    # same rule applied to d log f / d theta (only the prior depends on theta there).
    # It differs from the exact derivative of the rule by about its error times
    # 1 / std0, and the backward pass skips the map u -> delta; NUTS stays exact, as
    # its leapfrog steps are volume-preserving and reversible for any such force. The
    # compiled kernel (the default fits) integrates by parts instead, exact at small
    # std0; that form as a PyTensor graph took minutes to compile (this one ~40 s).
    fixed = (lib.stop_gradient(delta0), lib.stop_gradient(std0), lib.stop_gradient(nu))
    _, z_fixed, z_lik, log_weight = quadrature_nodes(
        fixed[0], fixed[1], fixed[2], xbar, width, a, n_nodes, lib=lib
    )
    nodes = (a[..., None], w[..., None], ssr[..., None], width[..., None], std_hi)
    lik = log_integrand(0.0, z_lik, 1.0, nodes, lib=lib, bounded=bounded)
    # (delta_k - delta0) / std0 at the fixed nodes delta_k: z_fixed in value
    z_prior = (z_fixed * fixed[1][..., None] + (fixed[0] - delta0)[..., None]) / std0[..., None]
    prior = -(nu[..., None] + 1.0) / 2.0 * lib.log1p(z_prior**2 / nu[..., None])
    log_t_norm = (
        lib.gammaln((nu + 1.0) / 2.0) - lib.gammaln(nu / 2.0) - 0.5 * lib.log(nu * math.pi)
    ) - lib.log(std0)
    return lib.logsumexp(prior + lib.stop_gradient(lik + log_weight), axis=-1) + log_t_norm


# --------------------------------------------------------------------------- compiled (numba)
# The same rule as quadrature_nodes, as scalar loops that numba compiles (compiled_kernels);
# the number of nodes adapts to the range of u (NODE_SPACING). Plain Python functions, so
# that importing this module does not import numba.
def _nodes(
    delta0: float,
    std0: float,
    nu: float,
    lik: tuple[float, float, float, float],
    spacing: float,
    nodes: np.ndarray,
) -> tuple[int, float, float]:  # pragma: no cover - compiled by numba
    # Fill the rows of nodes (shape (5, _MAX_NODES)) at the nodes of one data set: 0 ell
    # (log of t kernel x likelihood, no Jacobian), 1 z (z_prior), 2 jac (d delta / du),
    # 3 score (d log p(x_i | delta) / d delta), 4 d log t / d nu; return (nodes, u of the
    # first node, step). One division per quantity and one log1p per node: this loop is
    # most of the integrated model's cost.
    a, w, ssr, xbar = lik
    width = math.sqrt(ssr / (w * max(2.0 * a - 1.0, 1.0)))
    reach = max(std0, width, abs(xbar - delta0))
    reach *= max(10.0, 2.0 * math.exp(_TAIL_LOG_MASS / (nu + 2.0 * a)))
    lo, hi = min(delta0, xbar) - reach, max(delta0, xbar) + reach
    u_lo = math.asinh((lo - delta0) / std0) + math.asinh((lo - xbar) / width)
    u_hi = math.asinh((hi - delta0) / std0) + math.asinh((hi - xbar) / width)
    n = min(max(int(math.ceil((u_hi - u_lo) / spacing)), _MIN_NODES), _MAX_NODES)
    step = (u_hi - u_lo) / n
    kappa, gap = std0 / width, (xbar - delta0) / width
    root = gap * gap + 1.0 + kappa * kappa
    inv_nu, half_nu1, log_half = 1.0 / nu, (nu + 1.0) / 2.0, math.log(0.5)
    wide, score_scale = w * width * width, -2.0 * a * w * width
    e = math.exp(u_lo + step / 2.0)
    ratio, e_inv = math.exp(step), 1.0 / e
    ratio_inv = 1.0 / ratio
    for k in range(n):
        big = abs(gap) + math.sqrt(root + kappa * (e + e_inv))
        x = big / (e_inv + kappa) if gap >= 0 else (e + kappa) / big
        x_inv = 1.0 / x
        y, y_inv = e * x_inv, x * e_inv  # y = exp(asinh z_lik)
        z = (x - x_inv) / 2.0
        z_lik = (y - y_inv) / 2.0
        # 2 std0 cosh(asinh z) and 2 width cosh(asinh z_lik): d delta / du = cp cl / (2 (cp + cl))
        cp, cl = std0 * (x + x_inv), width * (y + y_inv)
        zz = z * z
        log_t = math.log1p(zz * inv_nu)
        quad = ssr + wide * z_lik * z_lik
        nodes[0, k] = -half_nu1 * log_t - a * (math.log(quad) + log_half)
        nodes[1, k] = z
        nodes[2, k] = cp * cl / (2.0 * (cp + cl))
        nodes[3, k] = score_scale * z_lik / quad
        nodes[4, k] = ((nu + 1.0) * zz / (nu * (nu + zz)) - log_t) / 2.0
        e *= ratio
        e_inv *= ratio_inv
    return n, u_lo + step / 2.0, step


def _loglik_kernel(
    delta0: float, std0: float, nu: float, lik: tuple[np.ndarray, ...], spacing: float
) -> tuple[np.ndarray, np.ndarray]:  # pragma: no cover - compiled by numba
    # The derivatives in delta0 and std0 are integrated by parts, E[d log L / d delta] and
    # E[z d log L / d delta] (the t kernel depends on delta - delta0 and on its scale only):
    # the direct forms, E[d log t / d theta], carry the rule's error times 1 / std0, which
    # made NUTS diverge where std0 is tiny.
    a, w, ssr, xbar = lik
    out, grad = np.empty(a.shape[0]), np.empty((a.shape[0], 3))
    nodes = np.empty((5, _MAX_NODES))
    ell, z, jac, score, d_nu = nodes[0], nodes[1], nodes[2], nodes[3], nodes[4]
    for i in range(a.shape[0]):
        lik_i = (a[i], w[i], ssr[i], xbar[i])
        n, _, step = _nodes(delta0, std0, nu, lik_i, spacing, nodes)
        top = ell[:n].max()
        total = g0 = g1 = g2 = 0.0
        for k in range(n):
            p = math.exp(ell[k] - top) * jac[k]
            ps = p * score[k]
            total += p
            g0 += ps
            g1 += ps * z[k]
            g2 += p * d_nu[k]
        out[i] = top + math.log(total * step / std0)
        grad[i, 0], grad[i, 1], grad[i, 2] = g0 / total, g1 / total, g2 / total
    return out, grad


_JITABLE: list[bool] = []


def register_jitable_helpers() -> None:
    """Make the scalar kernels callable from other numba functions (once per process)."""
    if not _JITABLE:
        from numba.extending import register_jitable

        for helper in (_nodes, _sample_u, _loglik_kernel):
            register_jitable(helper)
        _JITABLE.append(True)


def kernel_version() -> int:
    """Return a checksum of the compiled functions' source, for caches of compiled code.

    PyTensor caches the numba code of the model's Op by the Op's properties; this
    number, part of that cache key, makes an edited kernel recompile.
    """
    import inspect
    import zlib

    try:
        source = "".join(inspect.getsource(f) for f in (_nodes, _loglik_kernel))
    except (OSError, TypeError):  # no source (frozen install): the version of the rule
        source = f"{NODE_SPACING} {_TAIL_LOG_MASS} {_MIN_NODES} {_MAX_NODES}"
    return zlib.crc32(source.encode())


def compiled_kernels() -> tuple[Any, Any]:
    r"""Return the numba-compiled likelihood and sampler (from isbetter's cache).

    ``loglik(delta0, std0, nu, (a, w, ssr, xbar), spacing)`` returns
    ``(logq, dlogq)``: ``logq[i]`` is :func:`integrated_loglik` for data set ``i``
    (unbounded) without the Student-t normaliser's :math:`\log c(\nu)`, with nodes
    `spacing` apart in :math:`u`; ``dlogq[i]`` its derivatives in ``(delta0, std0,
    nu)``: the same rule applied to the derivatives of the integrand.
    ``draw(delta0, std0, nu, (a, w, ssr, xbar), spacing, rng)`` is the sampler
    of :func:`draw_deltas`. Compiled on first use on a machine, then loaded
    (:mod:`isbetter.cache`).
    """
    from isbetter import cache

    kernels = cache.compiled("hierarchical_quadrature", _build, _warm_up)
    return kernels["loglik"], kernels["draw"]


def _build() -> dict[str, Any]:
    import numba

    register_jitable_helpers()
    return {
        "loglik": numba.njit(cache=True)(_loglik_kernel),
        "draw": numba.njit(cache=True)(_draw_kernel),
    }


def _warm_up(kernels: dict[str, Any]) -> None:
    lik = (np.full(2, 4.5), np.full(2, 5.0), np.full(2, 10.0), np.zeros(2))
    kernels["loglik"](0.0, 1.0, 2.0, lik, NODE_SPACING)
    ones = np.ones(1)
    kernels["draw"](ones * 0.0, ones, ones * 2.0, lik, NODE_SPACING, np.random.default_rng(0))


def _draw_kernel(
    delta0: np.ndarray,
    std0: np.ndarray,
    nu: np.ndarray,
    lik: tuple[np.ndarray, ...],
    spacing: float,
    rng: np.random.Generator,
) -> np.ndarray:  # pragma: no cover - compiled by numba
    a, w, ssr, xbar = lik
    out = np.empty((delta0.shape[0], a.shape[0]))
    nodes = np.empty((5, _MAX_NODES))
    ell, jac = nodes[0], nodes[2]
    work = np.empty((4, _MAX_NODES))
    for s in range(delta0.shape[0]):
        for i in range(a.shape[0]):
            lik_i = (a[i], w[i], ssr[i], xbar[i])
            n, u0, step = _nodes(delta0[s], std0[s], nu[s], lik_i, spacing, nodes)
            for k in range(n):
                ell[k] += math.log(jac[k])
            u = _sample_u(ell, n, work, rng) * step + u0
            # z_prior at u (the map of _nodes)
            width = math.sqrt(ssr[i] / (w[i] * max(2.0 * a[i] - 1.0, 1.0)))
            kappa, gap, e = std0[s] / width, (xbar[i] - delta0[s]) / width, math.exp(u)
            big = abs(gap) + math.sqrt(gap * gap + 1.0 + kappa * (e + 1.0 / e) + kappa * kappa)
            x = big / (1.0 / e + kappa) if gap >= 0 else (e + kappa) / big
            out[s, i] = delta0[s] + std0[s] * (x - 1.0 / x) / 2.0
    return out


def _sample_u(
    ell: np.ndarray, n: int, work: np.ndarray, rng: np.random.Generator
) -> float:  # pragma: no cover - compiled by numba
    # One draw, in units of the step from the first node, from the density whose log is
    # the cubic Hermite interpolant of ell[:n] (central-difference slopes): exact, by
    # rejection from exp(chord + bound) (the chord interpolates the log linearly;
    # cubic - chord = x (1 - x) (A (1 - x) - B x) <= 4/27 (A+ + B-) on [0, 1]).
    top = ell[:n].max()
    chord, big_a, big_b, cum = work[0], work[1], work[2], work[3]
    total = 0.0
    for j in range(n - 1):
        chord[j] = ell[j + 1] - ell[j]
        left = ell[1] - ell[0] if j == 0 else (ell[j + 1] - ell[j - 1]) / 2.0
        right = ell[n - 1] - ell[n - 2] if j == n - 2 else (ell[j + 2] - ell[j]) / 2.0
        big_a[j], big_b[j] = left - chord[j], right - chord[j]
        bound = 4.0 / 27.0 * (max(big_a[j], 0.0) + max(-big_b[j], 0.0))
        b = chord[j]
        mean = 1.0 + b / 2.0 if abs(b) < 1e-8 else math.expm1(b) / b
        total += math.exp(ell[j] - top + bound) * mean
        cum[j] = total
    while True:
        target = rng.random() * total
        j = 0
        while j < n - 2 and cum[j] < target:
            j += 1
        b, v = chord[j], rng.random()
        x = v if abs(b) < 1e-8 else math.log1p(v * math.expm1(b)) / b
        bound = 4.0 / 27.0 * (max(big_a[j], 0.0) + max(-big_b[j], 0.0))
        excess = x * (1.0 - x) * (big_a[j] * (1.0 - x) - big_b[j] * x) - bound
        if math.log(rng.random()) < excess:
            return j + x


# --------------------------------------------------------------------------- drawing delta_i
def draw_deltas(
    delta0: np.ndarray,
    std0: np.ndarray,
    nu: np.ndarray,
    data: tuple[Any, ...],
    rng: np.random.Generator,
    *,
    bounded: bool = False,
    compiled: bool = True,
    n_nodes: int = QUADRATURE_NODES,
    chunk: int = 2_000_000,
) -> np.ndarray:
    r"""Draw every :math:`\delta_i` from its conditional given each hyper-parameter draw.

    :math:`p(\delta_i \mid \delta_0, \sigma_0, \nu, x_i) \propto t_\nu(\delta_i;
    \delta_0, \sigma_0)\, p(x_i \mid \delta_i)`, sampled by inverting its CDF in the
    coordinate :math:`u` of :func:`quadrature_nodes` (the density in :math:`u`
    is smooth there; its log is interpolated between the nodes by a cubic, exact
    for Gaussian peaks and power-law tails, and the interpolant is sampled
    exactly, by rejection). Independent draws: no Markov chain.

    Parameters
    ----------
    delta0, std0, nu : numpy.ndarray
        Posterior draws of the hyper-parameters, shape ``(S,)`` (scaled units).
    data : tuple
        ``(a, w, ssr, xbar, std_hi)`` as for :func:`integrated_loglik`.
    rng : numpy.random.Generator
    bounded : bool, default: False
        Keep the factor of :math:`\sigma_i`'s prior bound (then NumPy is used).
    compiled : bool, default: True
        Use the numba-compiled sampler (nodes spaced ``NODE_SPACING`` apart);
        False, or `bounded`, uses the vectorised NumPy one with `n_nodes` nodes.
    n_nodes, chunk : int, default: QUADRATURE_NODES, 2_000_000
        Nodes, and array elements per vectorised step, of the NumPy sampler.

    Returns
    -------
    numpy.ndarray
        Shape ``(S, q)``: one draw of every :math:`\delta_i` per hyper-parameter draw.
    """
    a, w, ssr, xbar, std_hi = (np.asarray(v, dtype=float) for v in data)
    if compiled and not bounded:
        hyper_flat = [np.ascontiguousarray(v, dtype=float).reshape(-1) for v in (delta0, std0, nu)]
        return compiled_kernels()[1](*hyper_flat, (a, w, ssr, xbar), NODE_SPACING, rng)  # type: ignore[no-any-return]
    width = likelihood_width(a, w, ssr, lib=_NUMPY)
    hyper = [np.asarray(v, dtype=float).reshape(-1, 1) for v in (delta0, std0, nu)]
    out = np.empty((hyper[0].shape[0], xbar.size))
    step = max(1, chunk // (xbar.size * n_nodes))
    for lo in range(0, out.shape[0], step):
        d0, s0, v = (h[lo : lo + step] for h in hyper)
        u, z_prior, z_lik, log_weight = quadrature_nodes(
            d0, s0, v, xbar, width, a, n_nodes, lib=_NUMPY
        )
        nodes = (a[:, None], w[:, None], ssr[:, None], width[:, None], std_hi)
        log_g = log_integrand(z_prior, z_lik, v[..., None], nodes, lib=_NUMPY, bounded=bounded)
        log_g = log_g + log_weight
        u_draw = _sample_interpolant(u, log_g, rng)
        z_prior = _map(u_draw, s0 / width, (xbar - d0) / width, _NUMPY)[0]
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
