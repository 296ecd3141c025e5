r"""The hierarchical model's log density written for nutpie: compiled once per machine.

:func:`~.pymc_backend.build_model` states the model in PyMC. nutpie samples a
PyMC model by compiling its PyTensor graph with numba, which costs ~30 s in every
new process and again for every number of data sets. Here the same log densities
and gradients, in the same unconstrained coordinates (PyMC's interval and log
transforms, its variable order), are numba functions of the data arrays of any
length, kept in isbetter's on-disk cache (:mod:`isbetter.core.cache`): a fresh process
loads them in well under a second and one compiled function serves every study.
``tests/cv/test_hierarchical_density.py`` checks the value and gradient against PyMC's
compiled ``logp``/``dlogp`` of :func:`~.pymc_backend.build_model` to 1e-9.

Two variants: ``"centred"`` (free ``alpha, beta, nu - 1, delta0, std0, delta``) and
``"integrated"`` (free ``nu - 1, delta0, std0``; the :math:`\delta_i` integrated out
by :func:`.numerics.kernels.compiled_kernels`, :math:`\alpha, \beta` out of
:math:`\nu`'s prior). Both keep the factor of :math:`\sigma_i`'s prior bound where a
fit needs it (``Prepared.bounded``), read from the tables of :mod:`.sigma_bound`.
Both are handed to nutpie as numba C functions over one float64 buffer (no Python
call per gradient; the chains run in parallel). :math:`\nu`'s integrated prior, an
incomplete gamma function SciPy has and numba has not, is read from a table SciPy
fills (:mod:`isbetter.inference.nu_prior`).
"""

from __future__ import annotations

import math
from typing import Any

import numba
import numpy as np
import pandas as pd
from scipy import special

from isbetter.cv.hierarchical.numerics.kernels import (
    NODE_SPACING,
    _loglik_kernel,
    compiled_kernels,
    no_bound,
    register_jitable_helpers,
    with_bound,
)
from isbetter.cv.hierarchical.numerics.sigma_bound import log_bound
from isbetter.inference.compiled_density import digamma as _digamma
from isbetter.inference.compiled_density import nutpie_cfuncs, nutpie_model
from isbetter.inference.compiled_density import sigmoid as _sigmoid
from isbetter.inference.compiled_density import softplus as _softplus
from isbetter.inference.compiled_density import status as _status
from isbetter.inference.nu_prior import interpolate, nu_prior_table

__all__ = [
    "DENSITY_PARAMETERIZATIONS",
    "compiled_model",
    "load_density",
    "log_density",
]

#: the modules whose functions the kernels call: their edits invalidate the cache
CACHE_DEPENDS = (
    "isbetter.inference.compiled_density",
    "isbetter.cv.hierarchical.numerics.kernels",
    "isbetter.inference.nu_prior",
    "isbetter.cv.hierarchical.numerics.sigma_bound",
)
#: the parameterizations with a hand-written density (the others use PyMC's compiled one)
DENSITY_PARAMETERIZATIONS = ("centred", "integrated")
#: the model's data, in the order the kernels take them
_DATA = ("a", "w", "ssr", "xbar")
_BOUNDS = ("alpha_lo", "alpha_hi", "beta_lo", "beta_hi", "delta0_hi", "std0_hi")


# --------------------------------------------------------------------------- kernels
# Plain Python, compiled by numba through isbetter.core.cache (on first use on a machine,
# loaded from the cache after). x is the unconstrained position, in PyMC's order of the
# free variables. The scalar helpers (_softplus, ...) are isbetter.inference.compiled_density's.
def _centred_kernel(
    x: np.ndarray, data: np.ndarray, bounds: np.ndarray, tables: np.ndarray, grad: np.ndarray
) -> float:  # pragma: no cover - compiled by numba
    # x = (alpha, beta, nu - 1, delta0, std0) unconstrained, then delta_1..q; data = rows
    # a, w, ssr, xbar, offset (of sigma_i's bound factor in tables, < 0: none); bounds =
    # alpha_lo, alpha_hi, beta_lo, beta_hi, delta0_hi, std0_hi, const, log(2 std_hi^2).
    # Writes the gradient into grad, returns the log density.
    a, w, ssr, xbar, offsets = data[0], data[1], data[2], data[3], data[4]
    a_lo, a_hi, b_lo, b_hi = bounds[0], bounds[1], bounds[2], bounds[3]
    d_hi, s_hi, const, shift = bounds[4], bounds[5], bounds[6], bounds[7]
    q = a.shape[0]
    # the four uniforms: prior and Jacobian of the interval transform leave log s (1 - s)
    logp = const
    for k in (0, 1, 3, 4):
        logp -= _softplus(-x[k]) + _softplus(x[k])
    sa, sb, s0, s1 = _sigmoid(x[0]), _sigmoid(x[1]), _sigmoid(x[3]), _sigmoid(x[4])
    alpha, beta = a_lo + (a_hi - a_lo) * sa, b_lo + (b_hi - b_lo) * sb
    delta0, std0 = -d_hi + 2.0 * d_hi * s0, s_hi * s1
    if not std0 > 0.0:  # std0's sigmoid underflowed: density 0 (a division by 0 below)
        grad[:] = 0.0
        return -math.inf
    xx = math.exp(x[2])
    nu = 1.0 + xx
    # nu - 1 ~ Gamma(alpha, rate beta), log transform (Jacobian x[2])
    logp += alpha * math.log(beta) - math.lgamma(alpha) + alpha * x[2] - beta * xx
    d_alpha = math.log(beta) - _digamma(alpha) + x[2]
    d_beta = alpha / beta - xx
    # delta_i ~ t_nu(delta0, std0); the likelihood with sigma_i integrated out
    logp += q * (
        math.lgamma((nu + 1.0) / 2.0)
        - math.lgamma(nu / 2.0)
        - 0.5 * math.log(nu * math.pi)
        - math.log(std0)
    )
    d_nu = q * (0.5 * _digamma((nu + 1.0) / 2.0) - 0.5 * _digamma(nu / 2.0) - 0.5 / nu)
    d_std0 = -q / std0
    d_delta0 = 0.0
    for i in range(q):
        d = x[5 + i]
        z = (d - delta0) / std0
        r = z * z / nu
        quad = ssr[i] + w[i] * (xbar[i] - d) ** 2
        log_quad = math.log(quad)
        logp -= (nu + 1.0) / 2.0 * math.log1p(r) + a[i] * (log_quad - math.log(2.0))
        g = (nu + 1.0) * z / (std0 * (nu + z * z))
        d_delta0 += g
        d_std0 += g * z
        d_nu += -0.5 * math.log1p(r) + (nu + 1.0) / 2.0 * z * z / (nu * (nu + z * z))
        power = a[i]  # d log p(x_i | delta) / d log quad, with the bound factor's part
        if offsets[i] >= 0:
            f, d_f = log_bound(log_quad - shift, tables, int(offsets[i]))
            logp += f
            power -= d_f
        grad[5 + i] = -g + 2.0 * power * w[i] * (xbar[i] - d) / quad
    grad[0] = d_alpha * (a_hi - a_lo) * sa * (1.0 - sa) + 1.0 - 2.0 * sa
    grad[1] = d_beta * (b_hi - b_lo) * sb * (1.0 - sb) + 1.0 - 2.0 * sb
    grad[2] = d_nu * xx + alpha - beta * xx
    grad[3] = d_delta0 * 2.0 * d_hi * s0 * (1.0 - s0) + 1.0 - 2.0 * s0
    grad[4] = d_std0 * s_hi * s1 * (1.0 - s1) + 1.0 - 2.0 * s1
    return logp


def _centred_logp_cfunc(dim, x_, out_, logp_, user_data_):  # type: ignore[no-untyped-def,unused-ignore]  # noqa: E501  # pragma: no cover
    # nutpie's C interface of a log density: the data are one float64 buffer
    # (_centred_buffer: q, bounds, length of the bound tables, rows, tables)
    head = numba.carray(user_data_, (10,), dtype=np.float64)
    q = int(head[0])
    if dim != q + 5:
        return -1
    start = 10 + 5 * q
    buffer = numba.carray(user_data_, (start + int(head[9]),), dtype=np.float64)
    x = numba.carray(x_, (q + 5,))
    out = numba.carray(out_, (q + 5,))
    logp = numba.carray(logp_, (1,))
    data = buffer[10:start].reshape((5, q))
    logp[0] = _centred_kernel(x, data, buffer[1:9], buffer[start:], out)
    return _status(logp[0], out)


def _centred_expand_cfunc(dim, expanded, x_, out_, user_data_):  # type: ignore[no-untyped-def,unused-ignore]  # noqa: E501  # pragma: no cover
    # the stored variables nu, delta0, std0, alpha, beta, delta_1..q at x
    q = int(numba.carray(user_data_, (1,), dtype=np.float64)[0])
    if dim != q + 5 or expanded != q + 5:
        return -1
    b = numba.carray(user_data_, (8,), dtype=np.float64)
    x = numba.carray(x_, (q + 5,))
    out = numba.carray(out_, (q + 5,))
    out[0] = 1.0 + math.exp(x[2])
    out[1] = -b[5] + 2.0 * b[5] * _sigmoid(x[3])
    out[2] = b[6] * _sigmoid(x[4])
    out[3] = b[1] + (b[2] - b[1]) * _sigmoid(x[0])
    out[4] = b[3] + (b[4] - b[3]) * _sigmoid(x[1])
    for i in range(q):
        out[5 + i] = x[5 + i]
    return 0


def _integrated_kernel(
    x: np.ndarray,
    data: np.ndarray,
    bounds: np.ndarray,
    table: np.ndarray,
    tables: np.ndarray,
    spacing: float,
    grad: np.ndarray,
) -> float:  # pragma: no cover - compiled by numba
    # x = (nu - 1, delta0, std0) unconstrained; data, bounds and tables as _centred_kernel's;
    # table nu's prior (nu_prior.nu_prior_table). Writes the gradient into grad, returns the
    # log density (-inf where nu's prior underflowed, as PyMC's).
    d_hi, s_hi, const = bounds[4], bounds[5], bounds[6]
    q = data.shape[1]
    prior, d_prior = interpolate(x[0], table)  # log p(nu - 1), its derivative in x[0]
    if prior == -math.inf:
        grad[:] = 0.0
        return -math.inf
    s0, s1 = _sigmoid(x[1]), _sigmoid(x[2])
    delta0, std0 = -d_hi + 2.0 * d_hi * s0, s_hi * s1
    if not std0 > 0.0:  # std0's sigmoid underflowed: density 0 (a division by 0 below)
        grad[:] = 0.0
        return -math.inf
    xx = math.exp(x[0])
    nu = 1.0 + xx
    lik = (data[0], data[1], data[2], data[3])
    logq, dlogq = _loglik_kernel(delta0, std0, nu, lik, spacing, (data[4], tables, bounds[7]))
    log_c = math.lgamma((nu + 1.0) / 2.0) - math.lgamma(nu / 2.0) - 0.5 * math.log(nu * math.pi)
    logp = const + logq.sum() + q * log_c + prior + x[0]
    logp -= _softplus(-x[1]) + _softplus(x[1]) + _softplus(-x[2]) + _softplus(x[2])
    d_nu = dlogq[:, 2].sum() + q * (
        0.5 * _digamma(nu / 2.0 + 0.5) - 0.5 * _digamma(nu / 2.0) - 0.5 / nu
    )
    grad[0] = d_nu * xx + d_prior + 1.0
    grad[1] = dlogq[:, 0].sum() * 2.0 * d_hi * s0 * (1.0 - s0) + 1.0 - 2.0 * s0
    grad[2] = dlogq[:, 1].sum() * s_hi * s1 * (1.0 - s1) + 1.0 - 2.0 * s1
    return logp


def _integrated_from_buffer(
    x: np.ndarray, buffer: np.ndarray, grad: np.ndarray
) -> float:  # pragma: no cover - numba  # noqa: E501
    # buffer: q, bounds (8), node spacing, lengths of nu's table and of the bound tables,
    # rows a, w, ssr, xbar, offset, nu's table, the bound tables
    q = int(buffer[0])
    start = 12 + 5 * q
    data = buffer[12:start].reshape((5, q))
    table = buffer[start : start + int(buffer[10])]
    tables = buffer[start + int(buffer[10]) :]
    return _integrated_kernel(x, data, buffer[1:9], table, tables, buffer[9], grad)


def _integrated_logp_cfunc(dim, x_, out_, logp_, user_data_):  # type: ignore[no-untyped-def,unused-ignore]  # noqa: E501  # pragma: no cover
    # nutpie's C interface, as _centred_logp_cfunc's; the buffer as _integrated_from_buffer's
    head = numba.carray(user_data_, (12,), dtype=np.float64)
    if dim != 3:
        return -1
    size = 12 + 5 * int(head[0]) + int(head[10]) + int(head[11])
    buffer = numba.carray(user_data_, (size,), dtype=np.float64)
    x = numba.carray(x_, (3,))
    out = numba.carray(out_, (3,))
    logp = numba.carray(logp_, (1,))
    logp[0] = _integrated_from_buffer(x, buffer, out)
    return _status(logp[0], out)


def _integrated_expand_cfunc(dim, expanded, x_, out_, user_data_):  # type: ignore[no-untyped-def,unused-ignore]  # noqa: E501  # pragma: no cover
    # the stored variables nu, delta0, std0 at x
    if dim != 3 or expanded != 3:
        return -1
    b = numba.carray(user_data_, (8,), dtype=np.float64)
    x = numba.carray(x_, (3,))
    out = numba.carray(out_, (3,))
    out[0] = 1.0 + math.exp(x[0])
    out[1] = -b[5] + 2.0 * b[5] * _sigmoid(x[1])
    out[2] = b[6] * _sigmoid(x[2])
    return 0


def _build(on_disk: bool) -> dict[str, Any]:
    from numba.extending import register_jitable

    register_jitable_helpers()  # _loglik_kernel, callable from the kernels below
    for helper in (_softplus, _sigmoid, _digamma, _status, _centred_kernel):
        register_jitable(helper)
    register_jitable(_integrated_kernel)
    register_jitable(_integrated_from_buffer)
    centred_logp, centred_expand = nutpie_cfuncs(
        _centred_logp_cfunc, _centred_expand_cfunc, on_disk
    )
    integrated = nutpie_cfuncs(_integrated_logp_cfunc, _integrated_expand_cfunc, on_disk)
    return {
        "centred": numba.njit(cache=on_disk)(_centred_kernel),
        "centred_logp": centred_logp,
        "centred_expand": centred_expand,
        "integrated": numba.njit(cache=on_disk)(_integrated_from_buffer),
        "integrated_logp": integrated[0],
        "integrated_expand": integrated[1],
    }


def _warm_up(kernels: dict[str, Any]) -> None:
    data = np.array([[4.5] * 3, [5.0] * 3, [10.0] * 3, [0.0] * 3, [-1.0] * 3])
    bounds = np.array([1.0, 2.0, 0.01, 0.1, 1.0, 1.0, 0.0, 0.0])
    kernels["centred"](np.zeros(8), data, bounds, np.zeros(0), np.empty(8))
    # cfuncs compile (or load) when created
    buffer = _integrated_buffer(data, bounds, np.zeros(0))
    kernels["integrated"](np.zeros(3), buffer, np.empty(3))


def _kernels() -> dict[str, Any]:
    from isbetter.core import cache

    return cache.compiled("hierarchical_density", _build, _warm_up)


def load_density() -> None:
    """Load the compiled kernels from isbetter's cache (compiling them on first use)."""
    _kernels()
    compiled_kernels()  # the sampler of the delta_i of the integrated model


# --------------------------------------------------------------------------- Python entry
def log_density(
    parameterization: str, x: np.ndarray, data: dict[str, Any], *, bounded: bool = False
) -> tuple[float, np.ndarray]:
    r"""Return the log density and its gradient at the unconstrained position `x`.

    Parameters
    ----------
    parameterization : {"centred", "integrated"}
    x : numpy.ndarray
        Unconstrained values in PyMC's order: ``alpha, beta, nu_minus_one, delta0,
        std0, delta`` (centred) or ``nu_minus_one, delta0, std0`` (integrated).
    data : dict
        :meth:`.spec.Prepared.model_data`.
    bounded : bool, default: False
        Keep the factor of :math:`\sigma_i`'s prior bound (``Prepared.bounded``).
    """
    logp = _log_density_function(parameterization, data, bounded)
    return logp(np.ascontiguousarray(x, dtype=float))


def _arguments(data: dict[str, Any], bounded: bool) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Return the kernels' data: rows ``a, w, ssr, xbar, offset``; the bounds; the bound tables."""
    rows = [np.asarray(data[k], dtype=float) for k in _DATA]
    std_hi = float(data["std_hi"])
    offsets, tables, shift = with_bound(rows[0], std_hi) if bounded else no_bound(rows[0].size)
    lik = np.ascontiguousarray(np.stack([*rows, offsets]))
    # the kernels' `bounds`: _BOUNDS, then const and log(2 std_hi^2) (sigma_i's bound factor)
    bounds = np.array([float(data[k]) for k in _BOUNDS] + [float(data["const"]), shift])
    return lik, bounds, tables


def _integrated_buffer(lik: np.ndarray, bounds: np.ndarray, tables: np.ndarray) -> np.ndarray:
    """Return the integrated kernel's one float64 buffer (see _integrated_from_buffer)."""
    table = nu_prior_table(tuple(float(b) for b in bounds[:4]))
    head = [float(lik.shape[1]), *bounds, NODE_SPACING, float(table.size), float(tables.size)]
    return np.concatenate([head, lik.reshape(-1), table, tables])


def _centred_buffer(lik: np.ndarray, bounds: np.ndarray, tables: np.ndarray) -> np.ndarray:
    """Return the centred kernel's one float64 buffer (see _centred_logp_cfunc)."""
    head = [float(lik.shape[1]), *bounds, float(tables.size)]
    return np.concatenate([head, lik.reshape(-1), tables])


def _log_density_function(parameterization: str, data: dict[str, Any], bounded: bool) -> Any:
    """Return ``logp(x) -> (value, gradient)`` for `data` (what the C functions compute)."""
    if parameterization not in DENSITY_PARAMETERIZATIONS:
        raise ValueError(f"no hand-written density for {parameterization!r}")
    kernel = _kernels()[parameterization]
    lik, bounds, tables = _arguments(data, bounded)
    if parameterization == "centred":

        def logp(x: np.ndarray) -> tuple[float, np.ndarray]:
            grad = np.empty_like(x)
            return float(kernel(x, lik, bounds, tables, grad)), grad

        return logp
    buffer = _integrated_buffer(lik, bounds, tables)

    def logp_integrated(x: np.ndarray) -> tuple[float, np.ndarray]:
        grad = np.empty_like(x)
        return float(kernel(x, buffer, grad)), grad

    return logp_integrated


# --------------------------------------------------------------------------- nutpie model
def _expand(parameterization: str, x: np.ndarray, bounds: np.ndarray) -> dict[str, np.ndarray]:
    """Return the model's variables at the unconstrained position `x`."""
    hyper = x[2:5] if parameterization == "centred" else x[:3]
    s0, s1 = special.expit(hyper[1:3])
    out = {
        "nu": np.asarray(1.0 + math.exp(hyper[0])),
        "delta0": np.asarray(-bounds[4] + 2.0 * bounds[4] * s0),
        "std0": np.asarray(bounds[5] * s1),
    }
    if parameterization == "centred":
        sa, sb = special.expit(x[:2])
        out["alpha"] = np.asarray(bounds[0] + (bounds[1] - bounds[0]) * sa)
        out["beta"] = np.asarray(bounds[2] + (bounds[3] - bounds[2]) * sb)
        out["delta"] = np.array(x[5:], copy=True)
    return out


def _initial_point(parameterization: str, q: int, bounds: np.ndarray, seed: int) -> np.ndarray:
    """PyMC's initial point (each prior's moment) jittered by U(-1, 1), as nutpie's."""
    base = np.zeros(q + 5 if parameterization == "centred" else 3)
    if parameterization == "centred":  # nu - 1 at the Gamma's mean, alpha and beta central
        base[2] = math.log((bounds[0] + bounds[1]) / (bounds[2] + bounds[3]))
    rng = np.random.default_rng(seed)
    return base + rng.uniform(-1.0, 1.0, size=base.shape)


def _data_start(lik: np.ndarray, bounds: np.ndarray, seed: int) -> np.ndarray:
    r"""Return the integrated model's start: delta0 and std0 where the data put them.

    From the prior's centre (std0 at half its bound, thousands of data-set spreads
    away) a warm-up chain could wander to std0 ~ 1e-33 and spend minutes of trees of
    1023 steps there (one seed in six of 1000 near-identical data sets). Instead:
    :math:`\tau^2` = the spread of the means beyond their squared standard errors (the
    moment estimate), floored at a tenth of the median standard error; delta0 at the
    means' mean weighted by :math:`1/(se_i^2 + \tau^2)`, plus U(-2, 2) of its standard
    error; std0 at :math:`\tau e^{U(-1, 1)}`; nu as :func:`_initial_point`. The prior's
    centre where these are not finite.
    """
    a, w, ssr, xbar = lik[0], lik[1], lik[2], lik[3]
    d_hi, s_hi = float(bounds[4]), float(bounds[5])
    rng = np.random.default_rng(seed)
    u = rng.uniform(-1.0, 1.0, size=3)
    # each mean's squared standard error s^2 / w, s^2 = ssr / (n - 1) (2a = n - 1): the
    # moment estimate's, not the likelihood's width in delta (quadrature.likelihood_width,
    # the scale of its Student-t kernel with n - 2 degrees of freedom)
    se2 = ssr / (2.0 * a * w)
    floor = max(0.1 * float(np.sqrt(np.median(se2))), 1e-9 * s_hi)
    spread = float(np.var(xbar, ddof=1)) if xbar.size > 1 else 0.0
    tau = math.sqrt(max(spread - float(np.mean(se2)), floor * floor))
    weights = 1.0 / (se2 + tau * tau)
    delta0 = float(np.sum(weights * xbar) / np.sum(weights)) + 2.0 * u[1] / math.sqrt(
        float(np.sum(weights))
    )
    std0 = tau * math.exp(u[2])
    if not (math.isfinite(delta0) and math.isfinite(std0)):
        return _initial_point("integrated", xbar.size, bounds, seed)
    delta0 = min(max(delta0, -0.9 * d_hi), 0.9 * d_hi)
    std0 = min(max(std0, 1e-12 * s_hi), 0.9 * s_hi)
    x_delta0 = special.logit((delta0 + d_hi) / (2.0 * d_hi))
    return np.array([u[0], x_delta0, special.logit(std0 / s_hi)])


def compiled_model(parameterization: str, data: dict[str, Any], *, bounded: bool = False) -> Any:
    r"""Return a nutpie model of `data` (a :meth:`Prepared.model_data` dict).

    Nothing is compiled here once the kernels are in the cache: both variants are
    handed to nutpie as C functions over one data buffer (the chains run in parallel,
    no Python per gradient). `bounded` keeps :math:`\sigma_i`'s bound factor.
    """
    if parameterization not in DENSITY_PARAMETERIZATIONS:
        raise ValueError(f"no hand-written density for {parameterization!r}")
    lik, bounds, tables = _arguments(data, bounded)
    q = lik.shape[1]
    load_density()  # load (or compile) before sampling starts
    names = ["nu", "delta0", "std0"]
    shapes: list[tuple[int, ...]] = [(), (), ()]
    if parameterization == "centred":
        names += ["alpha", "beta", "delta"]
        shapes += [(), (), (q,)]
    n_dim = q + 5 if parameterization == "centred" else 3
    coords = {
        "dataset": pd.RangeIndex(q),
        "unconstrained_parameter": pd.Index(_unconstrained_names(parameterization, q)),
    }
    dims: dict[str, tuple[str, ...]] = (
        {"delta": ("dataset",)} if parameterization == "centred" else {}
    )

    def initial_point(seed: int) -> np.ndarray:
        if parameterization == "integrated":
            return _data_start(lik, bounds, seed)
        return _initial_point(parameterization, q, bounds, seed)

    buffers = {"centred": _centred_buffer, "integrated": _integrated_buffer}
    buffer = buffers[parameterization](lik, bounds, tables)
    kernels = _kernels()
    return nutpie_model(
        (kernels[f"{parameterization}_logp"], kernels[f"{parameterization}_expand"]),
        buffer,
        n_dim,
        (names, shapes, coords, dims),
        initial_point,
    )


def _unconstrained_names(parameterization: str, q: int) -> list[str]:
    if parameterization == "centred":
        hyper = ["alpha_interval__", "beta_interval__", "nu_minus_one_log__"]
        return hyper + ["delta0_interval__", "std0_interval__"] + [f"delta_{i}" for i in range(q)]
    return ["nu_minus_one_log__", "delta0_interval__", "std0_interval__"]
