r"""The log density of the items' hierarchical model, written for nutpie: compiled once.

The model (:mod:`.model`; DESIGN §4.3) for subtask :math:`t` with :math:`N_t` items,
:math:`D_t = n_{10} + n_{01}` discordant ones and :math:`n_{10}` of them won by A:

.. math::
    D_t \sim \mathrm{Bin}(N_t, \phi_t), \quad n_{10} \mid D_t \sim \mathrm{Bin}(D_t, s_t),
    \quad \operatorname{logit} s_t \sim t_\nu(\mu, \sigma), \quad
    \operatorname{logit} \phi_t \sim N(\mu_\phi, \tau_\phi),

with the priors of :class:`.priors.ItemsHierarchicalPriors`. The log density and its
gradient are plain Python over one float64 buffer (any number of subtasks), compiled
by numba into nutpie's C interface and kept in isbetter's on-disk cache
(:mod:`isbetter.core.cache`, :mod:`isbetter.inference.compiled_density`): a fresh
process loads them in a fraction of a second, and one compiled function serves every
number of subtasks. ``tests/items/test_items_hierarchical.py`` checks value and gradient
against SciPy's densities and finite differences.

Unconstrained coordinates, pooled: ``x[0] = log(nu - 1)`` (:math:`\nu`'s prior with
:math:`\alpha, \beta` integrated out, :mod:`isbetter.inference.nu_prior`), ``x[1] = mu``,
``x[2] = log sigma``, ``x[3] = mu_phi``, ``x[4] = log tau_phi``, then the T direction
coordinates and the T rate coordinates. A direction coordinate is :math:`z_t` with
:math:`\operatorname{logit} s_t = \mu + \sigma z_t`, :math:`z_t \sim t_\nu(0, 1)`
(non-centred) or :math:`\operatorname{logit} s_t` itself (centred); a rate coordinate is
:math:`w_t` with :math:`\operatorname{logit}\phi_t = \mu_\phi + \tau_\phi w_t` (non-centred)
or :math:`\operatorname{logit}\phi_t` (centred). Unpooled (pooling off): only the 2T
coordinates :math:`\operatorname{logit} s_t, \operatorname{logit}\phi_t`, with
:math:`s_t \sim U(0, 1)` and :math:`\phi_t \sim \mathrm{Beta}(2, 2)` — the marginals of
the exact one-task model's :math:`\mathrm{Dir}(1, 1, 1, 1)` — so each :math:`\delta_t`
has exactly that model's posterior.
"""

from __future__ import annotations

import math
from typing import Any

import numba
import numpy as np
import pandas as pd
from scipy import special

from isbetter.inference.compiled_density import (
    digamma,
    nutpie_cfuncs,
    nutpie_model,
    sigmoid,
    softplus,
    status,
)
from isbetter.inference.nu_prior import interpolate, nu_prior_table

__all__ = ["VARIABLES", "compiled_model", "load_density", "log_density", "model_buffer"]

#: the modules whose functions the kernel calls: their edits invalidate the cache
CACHE_DEPENDS = ("isbetter.inference.compiled_density", "isbetter.inference.nu_prior")
#: the buffer's head: T, pooled, centred direction, centred rate, the four prior scales,
#: the constant of the log density, the length of nu's table
_HEAD = 10
#: the hyper-parameters of the pooled model, as the expansion stores them
HYPER = ("nu", "mu", "sigma", "mu_phi", "tau_phi")
#: the per-subtask variables the expansion stores (after HYPER when pooled)
PER_SUBTASK = ("s", "phi", "delta")
VARIABLES = HYPER + PER_SUBTASK
_LOG_2PI = math.log(2.0 * math.pi)


# --------------------------------------------------------------------------- kernel
def _n_dim(head: np.ndarray) -> int:  # pragma: no cover - numba
    return 2 * int(head[0]) + (5 if head[1] > 0.0 else 0)


def _n_expanded(head: np.ndarray) -> int:  # pragma: no cover - numba
    return 3 * int(head[0]) + (5 if head[1] > 0.0 else 0)


def _buffer_size(head: np.ndarray) -> int:  # pragma: no cover - numba
    return _HEAD + 3 * int(head[0]) + int(head[9])


def _binomial_logit(y: float, k: float, n: float) -> tuple[float, float]:  # pragma: no cover
    # k log p + (n - k) log(1 - p) at p = sigmoid(y), and its derivative in y; one exp
    # serves softplus(y) = max(y, 0) + log1p(e) and sigmoid(y), e = exp(-|y|)
    e = math.exp(-abs(y))
    p = 1.0 / (1.0 + e) if y >= 0.0 else e / (1.0 + e)
    return k * y - n * (max(y, 0.0) + math.log1p(e)), k - n * p


def _unpooled(x: np.ndarray, buffer: np.ndarray, grad: np.ndarray) -> float:  # pragma: no cover
    # s_t ~ U(0, 1) and phi_t ~ Beta(2, 2) in logit coordinates (Jacobians included)
    q = int(buffer[0])
    n, d, k = buffer[_HEAD : _HEAD + q], buffer[_HEAD + q : _HEAD + 2 * q], buffer[_HEAD + 2 * q :]
    logp = buffer[8] + q * math.log(6.0)
    for t in range(q):
        xs, y = x[t], x[q + t]
        lik_s, g_s = _binomial_logit(xs, k[t], d[t])
        lik_p, g_p = _binomial_logit(y, d[t], n[t])
        logp += lik_s + lik_p - (softplus(xs) + softplus(-xs))
        logp -= 2.0 * (softplus(y) + softplus(-y))
        grad[t] = g_s + 1.0 - 2.0 * sigmoid(xs)
        grad[q + t] = g_p + 2.0 * (1.0 - 2.0 * sigmoid(y))
    return logp


def _direction(
    u: float, mu: float, sigma: float, nu: float, k: float, d: float, centred: bool
) -> tuple[float, float, float, float, float]:  # pragma: no cover - numba
    # one subtask's direction: log density (t prior without its constant, binomial), the
    # derivatives in u, mu, log sigma and nu
    if centred:
        xs, z = u, (u - mu) / sigma
    else:
        xs, z = mu + sigma * u, u
    lik, g = _binomial_logit(xs, k, d)
    r = z * z / nu
    logp = lik - (nu + 1.0) / 2.0 * math.log1p(r)
    dz = -(nu + 1.0) * z / (nu + z * z)  # d log t_nu(z) / dz
    d_nu = -0.5 * math.log1p(r) + (nu + 1.0) / 2.0 * z * z / (nu * (nu + z * z))
    if centred:
        return logp, g + dz / sigma, -dz / sigma, -dz * z, d_nu
    return logp, dz + sigma * g, g, sigma * g * u, d_nu


def _rate(
    v: float, mu_phi: float, tau: float, n: float, d: float, centred: bool
) -> tuple[float, float, float, float]:  # pragma: no cover - numba
    # one subtask's discordance rate: log density (normal prior without its constant,
    # binomial), the derivatives in v, mu_phi and log tau
    if centred:
        y, w = v, (v - mu_phi) / tau
    else:
        y, w = mu_phi + tau * v, v
    lik, h = _binomial_logit(y, d, n)
    logp = lik - 0.5 * w * w
    if centred:
        return logp, h - w / tau, w / tau, w * w
    return logp, -w + tau * h, h, tau * h * v


def _kernel(x: np.ndarray, buffer: np.ndarray, grad: np.ndarray) -> float:  # pragma: no cover
    # buffer: _HEAD, rows N (items), D (discordant), n10, nu's table. Writes the gradient
    # into grad, returns the log density (-inf where nu's prior underflowed).
    if buffer[1] <= 0.0:
        return _unpooled(x, buffer, grad)
    q = int(buffer[0])
    centred_s, centred_phi = buffer[2] > 0.0, buffer[3] > 0.0
    mu_sd, sigma_sd, mu_phi_sd, tau_sd = buffer[4], buffer[5], buffer[6], buffer[7]
    n = buffer[_HEAD : _HEAD + q]
    d = buffer[_HEAD + q : _HEAD + 2 * q]
    k = buffer[_HEAD + 2 * q : _HEAD + 3 * q]
    table = buffer[_HEAD + 3 * q : _HEAD + 3 * q + int(buffer[9])]
    prior, d_prior = interpolate(x[0], table)  # log p(nu - 1), its derivative in x[0]
    if prior == -math.inf:
        grad[:] = 0.0
        return -math.inf
    xx = math.exp(x[0])
    nu = 1.0 + xx
    mu, sigma, mu_phi, tau = x[1], math.exp(x[2]), x[3], math.exp(x[4])
    # hyper-priors: N(0, mu_sd), HalfNormal(sigma_sd) in log sigma, the same for the rate;
    # the t's normalising constant q times (and -log sigma, -log tau when centred)
    log_c = math.lgamma((nu + 1.0) / 2.0) - math.lgamma(nu / 2.0) - 0.5 * math.log(nu * math.pi)
    logp = buffer[8] + prior + x[0] + q * log_c - 0.5 * q * _LOG_2PI
    logp -= 0.5 * (mu / mu_sd) ** 2 + 0.5 * (sigma / sigma_sd) ** 2 - x[2]
    logp -= 0.5 * (mu_phi / mu_phi_sd) ** 2 + 0.5 * (tau / tau_sd) ** 2 - x[4]
    logp -= q * (x[2] * centred_s + x[4] * centred_phi)
    d_mu, d_mu_phi = -mu / mu_sd**2, -mu_phi / mu_phi_sd**2
    d_lsigma = 1.0 - (sigma / sigma_sd) ** 2 - q * centred_s
    d_ltau = 1.0 - (tau / tau_sd) ** 2 - q * centred_phi
    d_nu = q * (0.5 * _digamma_half(nu) - 0.5 / nu)
    for t in range(q):
        part, grad[5 + t], g_mu, g_sigma, g_nu = _direction(
            x[5 + t], mu, sigma, nu, k[t], d[t], centred_s
        )
        logp += part
        d_mu, d_lsigma, d_nu = d_mu + g_mu, d_lsigma + g_sigma, d_nu + g_nu
        part, grad[5 + q + t], g_mu_phi, g_tau = _rate(
            x[5 + q + t], mu_phi, tau, n[t], d[t], centred_phi
        )
        logp += part
        d_mu_phi, d_ltau = d_mu_phi + g_mu_phi, d_ltau + g_tau
    grad[0] = d_nu * xx + d_prior + 1.0
    grad[1], grad[2], grad[3], grad[4] = d_mu, d_lsigma, d_mu_phi, d_ltau
    return logp


def _digamma_half(nu: float) -> float:  # pragma: no cover - numba
    # digamma((nu + 1) / 2) - digamma(nu / 2): the Student-t constant's derivative part
    return digamma((nu + 1.0) / 2.0) - digamma(nu / 2.0)


def _logp_cfunc(dim, x_, out_, logp_, user_data_):  # type: ignore[no-untyped-def,unused-ignore]  # noqa: E501  # pragma: no cover
    # nutpie's C interface of a log density: the data are one float64 buffer (model_buffer)
    head = numba.carray(user_data_, (_HEAD,), dtype=np.float64)
    n_dim = _n_dim(head)
    if dim != n_dim:
        return -1
    buffer = numba.carray(user_data_, (_buffer_size(head),), dtype=np.float64)
    x = numba.carray(x_, (n_dim,))
    out = numba.carray(out_, (n_dim,))
    logp = numba.carray(logp_, (1,))
    logp[0] = _kernel(x, buffer, out)
    return status(logp[0], out)


def _expand_cfunc(dim, expanded, x_, out_, user_data_):  # type: ignore[no-untyped-def,unused-ignore]  # noqa: E501  # pragma: no cover
    # the stored variables: (pooled) nu, mu, sigma, mu_phi, tau_phi; then s, phi, delta (T each)
    head = numba.carray(user_data_, (_HEAD,), dtype=np.float64)
    q = int(head[0])
    if dim != _n_dim(head) or expanded != _n_expanded(head):
        return -1
    x = numba.carray(x_, (dim,))
    out = numba.carray(out_, (expanded,))
    pooled = head[1] > 0.0
    start = 0
    mu = sigma = mu_phi = tau = 0.0
    if pooled:
        mu, sigma, mu_phi, tau = x[1], math.exp(x[2]), x[3], math.exp(x[4])
        out[0] = 1.0 + math.exp(x[0])
        out[1], out[2], out[3], out[4] = mu, sigma, mu_phi, tau
        start = 5
    for t in range(q):
        xs, y = x[start + t], x[start + q + t]
        if pooled and head[2] <= 0.0:
            xs = mu + sigma * xs
        if pooled and head[3] <= 0.0:
            y = mu_phi + tau * y
        s, phi = sigmoid(xs), sigmoid(y)
        out[start + t] = s
        out[start + q + t] = phi
        out[start + 2 * q + t] = phi * (2.0 * s - 1.0)
    return 0


def _build(on_disk: bool) -> dict[str, Any]:
    from numba.extending import register_jitable

    shared: tuple[Any, ...] = (softplus, sigmoid, digamma, status, interpolate)
    own: tuple[Any, ...] = (_n_dim, _n_expanded, _buffer_size, _binomial_logit, _unpooled)
    own += (_digamma_half,)
    own += (_direction, _rate, _kernel)
    for function in (*shared, *own):
        register_jitable(function)
    logp, expand = nutpie_cfuncs(_logp_cfunc, _expand_cfunc, on_disk)
    return {"kernel": numba.njit(cache=on_disk)(_kernel), "logp": logp, "expand": expand}


def _warm_up(kernels: dict[str, Any]) -> None:
    counts = (np.array([10.0, 12.0]), np.array([3.0, 4.0]), np.array([2.0, 1.0]))
    for pooled in (True, False):
        buffer = model_buffer(*counts, scales=(1.0, 1.0, 1.0, 1.0), pooled=pooled)
        n_dim = _n_dim(buffer)
        kernels["kernel"](np.zeros(n_dim), buffer, np.empty(n_dim))


def _kernels() -> dict[str, Any]:
    from isbetter.core import cache

    return cache.compiled("items_hierarchical_density", _build, _warm_up)


def load_density() -> None:
    """Load the compiled density from isbetter's cache (compiling it on first use)."""
    _kernels()


# --------------------------------------------------------------------------- Python entry
def model_buffer(
    n: np.ndarray,
    d: np.ndarray,
    k: np.ndarray,
    *,
    scales: tuple[float, float, float, float],
    nu_bounds: tuple[float, float, float, float] = (1.0, 2.0, 0.01, 0.1),
    pooled: bool = True,
    centred: tuple[bool, bool] = (False, True),
) -> np.ndarray:
    r"""Return the kernel's one float64 buffer.

    Parameters
    ----------
    n, d, k : numpy.ndarray
        Per subtask: items :math:`N_t`, discordant items :math:`D_t`, those A won
        (:math:`n_{10}`).
    scales : tuple of float
        Prior scales of :math:`\mu, \sigma, \mu_\phi, \tau_\phi`.
    nu_bounds : tuple of float
        ``alpha_lo, alpha_hi, beta_lo, beta_hi`` of :math:`\nu`'s prior.
    pooled : bool, default: True
        False: pooling off (see the module's docstring).
    centred : tuple of bool, default: (False, True)
        Whether the direction and the rate coordinates are centred.
    """
    n, d, k = (np.asarray(v, dtype=float) for v in (n, d, k))
    # the binomial coefficients, constant in the parameters
    const = float(
        np.sum(special.gammaln(n + 1) - special.gammaln(d + 1) - special.gammaln(n - d + 1))
        + np.sum(special.gammaln(d + 1) - special.gammaln(k + 1) - special.gammaln(d - k + 1))
    )
    table = nu_prior_table(tuple(float(b) for b in nu_bounds)) if pooled else np.zeros(0)
    if pooled:  # the four hyper-priors' constants: N(0, a) and HalfNormal(b), two each
        mu_sd, sigma_sd, mu_phi_sd, tau_sd = scales
        const += 2.0 * math.log(2.0) - 2.0 * _LOG_2PI
        const -= math.log(mu_sd * sigma_sd * mu_phi_sd * tau_sd)
    head = [
        float(n.size),
        float(pooled),
        float(centred[0]),
        float(centred[1]),
        *(float(s) for s in scales),
        const,
        float(table.size),
    ]
    return np.ascontiguousarray(np.concatenate([head, n, d, k, table]))


def log_density(x: np.ndarray, buffer: np.ndarray) -> tuple[float, np.ndarray]:
    """Return the log density and its gradient at the unconstrained position `x`.

    Parameters
    ----------
    x : numpy.ndarray
        Unconstrained values in the module docstring's order.
    buffer : numpy.ndarray
        :func:`model_buffer`.
    """
    kernel = _kernels()["kernel"]
    x = np.ascontiguousarray(x, dtype=float)
    grad = np.empty_like(x)
    return float(kernel(x, buffer, grad)), grad


def _initial_point(buffer: np.ndarray, seed: int) -> np.ndarray:
    """Return a start where the data put each subtask, jittered (U(-0.1, 0.1) per subtask).

    Hyper-parameters at their priors' centres (log(nu - 1) at 2, mu_phi at the pooled
    discordance); a centred coordinate at its subtask's smoothed logit, a non-centred
    one near 0. Chains then start in the posterior's bulk, not hundreds of standard
    errors from it (a subtask of 1000 items pins logit phi_t to +-0.1).
    """
    q = int(buffer[0])
    n = buffer[_HEAD : _HEAD + q]
    d = buffer[_HEAD + q : _HEAD + 2 * q]
    k = buffer[_HEAD + 2 * q : _HEAD + 3 * q]
    rng = np.random.default_rng(seed)
    logit_s = np.log((k + 0.5) / (d - k + 0.5))
    logit_phi = np.log((d + 0.5) / (n - d + 0.5))
    if buffer[1] <= 0.0:
        return np.concatenate([logit_s, logit_phi]) + rng.uniform(-0.1, 0.1, 2 * q)
    mu_phi = float(np.mean(logit_phi))
    hyper = np.array([2.0, 0.0, math.log(0.5), mu_phi, math.log(0.5)])
    hyper += rng.uniform(-1.0, 1.0, 5) * np.array([1.0, 0.5, 0.5, 0.5, 0.5])
    s_part = logit_s if buffer[2] > 0.0 else np.zeros(q)
    phi_part = logit_phi if buffer[3] > 0.0 else (logit_phi - hyper[3]) / math.exp(hyper[4])
    return np.concatenate([hyper, s_part, phi_part]) + np.concatenate(
        [np.zeros(5), rng.uniform(-0.1, 0.1, 2 * q)]
    )


def compiled_model(buffer: np.ndarray) -> Any:
    """Return a nutpie model of `buffer` (:func:`model_buffer`); nothing compiles once cached."""
    kernels = _kernels()
    q = int(buffer[0])
    pooled = buffer[1] > 0.0
    n_dim = int(_n_dim(buffer))
    names = [*(HYPER if pooled else ()), *PER_SUBTASK]
    shapes: list[tuple[int, ...]] = [()] * (5 if pooled else 0) + [(q,)] * 3
    coords = {
        "subtask": pd.RangeIndex(q),
        "unconstrained_parameter": pd.RangeIndex(n_dim),
    }
    dims: dict[str, tuple[str, ...]] = {name: ("subtask",) for name in PER_SUBTASK}

    def initial_point(seed: int) -> np.ndarray:
        return _initial_point(buffer, seed)

    return nutpie_model(
        (kernels["logp"], kernels["expand"]),
        buffer.copy(),
        n_dim,
        (names, shapes, coords, dims),
        initial_point,
    )
