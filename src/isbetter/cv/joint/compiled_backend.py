r"""The joint model's log density written for nutpie: compiled once per machine.

:func:`.pymc_backend.build_model` states the model in PyMC; nutpie would compile its
PyTensor graph with numba in every new process and for every shape, which takes
minutes for this model. Here the same log density and its gradient, in the same
unconstrained coordinates (PyMC's log and interval transforms, its order of the
free variables), are numba functions of one float64 buffer holding data of any
shape, kept in isbetter's on-disk cache (:mod:`isbetter.core.cache`): a fresh
process loads them in a fraction of a second, and one compiled function serves
every number of systems and data sets. ``tests/test_joint.py`` checks the value and
the gradient against PyMC's compiled ``logp`` / ``dlogp`` of the model.

The coordinates, PyMC's: ``x[0] = log(nu - 1)`` (nu's prior, :math:`\alpha, \beta`
integrated out, read from the table of :mod:`isbetter.inference.nu_prior`),
``x[1 : K]`` the effects' coordinates :math:`\beta` (interval transform), then the q
:math:`\xi_i` of the weights, the q rows of K - 1 :math:`\eta_i`, and last, with
Huang and Wand's prior of the deviations' covariance only, :math:`\log\psi`, its
mixing variable (:class:`~isbetter.cv.joint.spec.JointPriors`; with the
inverse-Wishart prior :math:`\psi` is fixed).
"""

from __future__ import annotations

import math
from typing import Any

import numba
import numpy as np
import pandas as pd

from isbetter.cv.hierarchical.numerics.kernels import register_jitable_helpers
from isbetter.inference.compiled_density import digamma as _digamma
from isbetter.inference.compiled_density import nutpie_cfuncs, nutpie_model
from isbetter.inference.compiled_density import sigmoid as _sigmoid
from isbetter.inference.compiled_density import softplus as _softplus
from isbetter.inference.compiled_density import status as _status
from isbetter.inference.nu_prior import interpolate, nu_prior_table

__all__ = ["compiled_model", "load_density", "log_density"]

#: the modules whose functions the kernels call: their edits invalidate the cache
CACHE_DEPENDS = (
    "isbetter.inference.compiled_density",
    "isbetter.inference.nu_prior",
)
#: the buffer's head: q, K, const, effect_hi, spread_df, spread_var (the fixed psi) or
#: spread_rate (psi's Gamma prior), length of nu's table, 1 if psi is sampled (Huang-Wand)
_HEAD = 8


def _kernel(x: np.ndarray, buffer: np.ndarray, grad: np.ndarray) -> float:  # pragma: no cover
    # buffer: _HEAD, means (q x d), transform (q x d x d, upper triangular), power (q),
    # nu's table. Writes the gradient into grad, returns the log density.
    q, k = int(buffer[0]), int(buffer[1])
    d = k - 1
    const, e_hi = buffer[2], buffer[3]
    start = _HEAD
    means = buffer[start : start + q * d].reshape((q, d))
    start += q * d
    tri = buffer[start : start + q * d * d].reshape((q, d, d))
    start += q * d * d
    power = buffer[start : start + q]
    table = buffer[start + q : start + q + int(buffer[6])]
    prior, d_prior = interpolate(x[0], table)  # log p(nu - 1), its derivative in x[0]
    if prior == -math.inf:
        grad[:] = 0.0
        return -math.inf
    xx = math.exp(x[0])
    nu = 1.0 + xx
    logp = const + prior + x[0]
    beta = np.empty(d)
    sb = np.empty(d)
    for j in range(d):
        sb[j] = _sigmoid(x[1 + j])
        beta[j] = -e_hi + 2.0 * e_hi * sb[j]
        logp -= _softplus(-x[1 + j]) + _softplus(x[1 + j])
    lam = np.empty(q)
    logp, d_nu = _precision_logp(x, q, k, nu, lam, grad, logp)
    dev = np.empty((q, d))
    # Omega | psi ~ IW(nu_u, psi I); psi fixed, or ~ Gamma(1/2, rate) on the log scale
    last = k + q + q * d
    nu_u, mixing = buffer[4], buffer[7] > 0.0
    psi = buffer[5]
    if mixing:
        rate = buffer[5]
        psi = math.exp(x[last])
        logp += (0.5 * nu_u * d + 0.5) * x[last] - rate * psi + 0.5 * math.log(rate / math.pi)
    scatter = psi * np.eye(d)  # psi I, then + sum_i lambda_i u~_i u~_i^T
    logp = _deviations_logp(x, means, tri, power, beta, lam, dev, scatter, grad, logp)
    g_beta = np.zeros(d)
    kappa = nu_u + q
    logp, d_nu, inv_trace = _spread_logp(
        x, tri, dev, lam, scatter, kappa, nu, grad, g_beta, logp, d_nu
    )
    if not math.isfinite(logp):  # an extreme trial point: density 0
        grad[:] = 0.0
        return -math.inf
    if mixing:
        grad[last] = 0.5 * nu_u * d + 0.5 - buffer[5] * psi - 0.5 * kappa * psi * inv_trace
    grad[0] = d_nu * xx + d_prior + 1.0
    for j in range(d):
        grad[1 + j] = g_beta[j] * 2.0 * e_hi * sb[j] * (1.0 - sb[j]) + 1.0 - 2.0 * sb[j]
    return logp


def _precision_logp(
    x: np.ndarray, q: int, k: int, nu: float, lam: np.ndarray, grad: np.ndarray, logp: float
) -> tuple[float, float]:  # pragma: no cover - numba
    # lambda_i ~ Gamma(nu/2, rate nu/2) on the log scale (its Jacobian), times lambda_i^(d/2);
    # sampled as xi_i, log lambda_i = -1/nu + spread(nu) xi_i (pymc_backend._precision).
    # Fills lam and grad[k + i] (d logp / d log lambda_i so far); returns logp with these
    # terms added, and their derivative in nu
    d = k - 1
    half_nu = nu / 2.0
    log_c_gamma = half_nu * math.log(half_nu) - math.lgamma(half_nu)
    d_log_c_gamma = 0.5 * math.log(half_nu) + 0.5 - 0.5 * _digamma(half_nu)
    spread = math.sqrt(2.0 * (nu + 1.0)) / nu
    d_log_spread = 0.5 / (nu + 1.0) - 1.0 / nu
    logp += q * math.log(spread)
    d_nu = q * d_log_spread
    for i in range(q):
        y = -1.0 / nu + spread * x[k + i]
        lam[i] = math.exp(y)
        logp += log_c_gamma + (half_nu + 0.5 * d) * y - half_nu * lam[i]
        d_nu += d_log_c_gamma + 0.5 * y - 0.5 * lam[i]
        grad[k + i] = half_nu + 0.5 * d - half_nu * lam[i]
    return logp, d_nu


def _deviations_logp(
    x: np.ndarray,
    means: np.ndarray,
    tri: np.ndarray,
    power: np.ndarray,
    beta: np.ndarray,
    lam: np.ndarray,
    dev: np.ndarray,
    scatter: np.ndarray,
    grad: np.ndarray,
    logp: float,
) -> float:  # pragma: no cover - numba
    # the deviations' contrasts u~_i = means_i - beta - transform_i eta_i (into dev, and
    # lambda_i u~_i u~_i^T added to scatter), and the likelihood in eta (about standard
    # normal) added to logp
    q, d = means.shape
    off = d + 1 + q
    for i in range(q):
        quad = 0.0
        for j in range(d):
            acc = 0.0
            for m in range(j, d):
                acc += tri[i, j, m] * x[off + i * d + m]
            dev[i, j] = means[i, j] - beta[j] - acc
            quad += x[off + i * d + j] ** 2
        logp -= power[i] * math.log1p(quad / (2.0 * power[i]))
        shrink = 1.0 / (1.0 + quad / (2.0 * power[i]))
        for j in range(d):
            grad[off + i * d + j] = -shrink * x[off + i * d + j]
        for a in range(d):
            for j in range(d):
                scatter[a, j] += lam[i] * dev[i, a] * dev[i, j]
    return logp


def _spread_logp(
    x: np.ndarray,
    tri: np.ndarray,
    dev: np.ndarray,
    lam: np.ndarray,
    scatter: np.ndarray,
    kappa: float,
    nu: float,
    grad: np.ndarray,
    g_beta: np.ndarray,
    logp: float,
    d_nu: float,
) -> tuple[float, float, float]:  # pragma: no cover - numba
    # Omega integrated out: -(nu_u + q)/2 log det(psi I + sum_i lambda_i u~_i u~_i^T), with
    # kappa = nu_u + q. Completes grad[k + i] (to xi_i), the eta part of grad, g_beta
    # (d logp / d beta); returns logp with the term added, d_nu with the derivative in
    # nu that flows through the lambda_i, and the trace of the scatter matrix's inverse
    # (for the derivative in psi); logp -inf if that matrix is not positive definite
    q, d = dev.shape
    k = d + 1
    chol = np.zeros((d, d))
    if not _cholesky(scatter, chol):
        return -math.inf, d_nu, 0.0
    log_det = 0.0
    for j in range(d):
        log_det += 2.0 * math.log(chol[j, j])
    logp -= 0.5 * kappa * log_det
    spread = math.sqrt(2.0 * (nu + 1.0)) / nu
    d_log_spread = 0.5 / (nu + 1.0) - 1.0 / nu
    a_vec = np.empty(d)
    inv_trace = 0.0  # tr(scatter^-1) = |L^-1|_F^2: column j of L^-1 solves L v = e_j
    for j in range(d):
        for i in range(j, d):
            acc = 1.0 if i == j else 0.0
            for m in range(j, i):
                acc -= chol[i, m] * a_vec[m]
            a_vec[i] = acc / chol[i, i]
            inv_trace += a_vec[i] * a_vec[i]
    for i in range(q):
        _solve(chol, dev[i], a_vec)  # scatter^-1 u~_i
        form = 0.0
        for a in range(d):
            form += a_vec[a] * dev[i, a]
        grad[k + i] -= 0.5 * kappa * lam[i] * form
        # grad[k + i] holds d logp / d log lambda_i: to xi_i, and nu's share through it
        d_nu += grad[k + i] * (1.0 / (nu * nu) + spread * d_log_spread * x[k + i])
        grad[k + i] *= spread
        for j in range(d):
            g_dev = -kappa * lam[i] * a_vec[j]  # d logp / d u~_ij
            g_beta[j] -= g_dev
            a_vec[j] = g_dev
        for m in range(d):  # d u~ / d eta = -transform
            acc = 0.0
            for j in range(m + 1):
                acc += tri[i, j, m] * a_vec[j]
            grad[k + q + i * d + m] -= acc
    return logp, d_nu, inv_trace


def _cholesky(a: np.ndarray, out: np.ndarray) -> bool:  # pragma: no cover - numba
    # the lower Cholesky factor of a into out; False unless a is finite and positive definite
    # (no exception can leave a C function)
    d = a.shape[0]
    for j in range(d):
        acc = a[j, j]
        for m in range(j):
            acc -= out[j, m] * out[j, m]
        if not acc > 0.0 or not math.isfinite(acc):
            return False
        out[j, j] = math.sqrt(acc)
        for i in range(j + 1, d):
            acc = a[i, j]
            for m in range(j):
                acc -= out[i, m] * out[j, m]
            out[i, j] = acc / out[j, j]
    return True


def _solve(chol: np.ndarray, b: np.ndarray, out: np.ndarray) -> None:  # pragma: no cover
    # out = (L L^T)^-1 b by forward and back substitution
    d = chol.shape[0]
    for i in range(d):
        acc = b[i]
        for m in range(i):
            acc -= chol[i, m] * out[m]
        out[i] = acc / chol[i, i]
    for i in range(d - 1, -1, -1):
        acc = out[i]
        for m in range(i + 1, d):
            acc -= chol[m, i] * out[m]
        out[i] = acc / chol[i, i]


def _n_dim(head: np.ndarray) -> int:  # pragma: no cover - numba
    return int(head[1]) + int(head[0]) * int(head[1]) + int(head[7])


def _buffer_size(head: np.ndarray) -> int:  # pragma: no cover - numba
    q, d = int(head[0]), int(head[1]) - 1
    return _HEAD + q * d + q * d * d + q + int(head[6])


def _logp_cfunc(dim, x_, out_, logp_, user_data_):  # type: ignore[no-untyped-def,unused-ignore]  # noqa: E501  # pragma: no cover
    # nutpie's C interface of a log density: the data are one float64 buffer (_buffer)
    head = numba.carray(user_data_, (_HEAD,), dtype=np.float64)
    n_dim = _n_dim(head)
    if dim != n_dim:
        return -1
    buffer = numba.carray(user_data_, (_buffer_size(head),), dtype=np.float64)
    x = numba.carray(x_, (n_dim,))
    out = numba.carray(out_, (n_dim,))
    logp = numba.carray(logp_, (1,))
    logp[0] = _kernel(x, buffer, out)
    return _status(logp[0], out)


def _expand_cfunc(dim, expanded, x_, out_, user_data_):  # type: ignore[no-untyped-def,unused-ignore]  # noqa: E501  # pragma: no cover
    # the stored variables nu, b (K), precision (q), deviations (q x d), psi if sampled
    head = numba.carray(user_data_, (_HEAD,), dtype=np.float64)
    q, k = int(head[0]), int(head[1])
    d = k - 1
    if dim != _n_dim(head) or expanded != 1 + k + q + q * d + int(head[7]):
        return -1
    buffer = numba.carray(user_data_, (_buffer_size(head),), dtype=np.float64)
    means = buffer[_HEAD : _HEAD + q * d].reshape((q, d))
    tri = buffer[_HEAD + q * d : _HEAD + q * d + q * d * d].reshape((q, d, d))
    x = numba.carray(x_, (dim,))
    out = numba.carray(out_, (expanded,))
    out[0] = 1.0 + math.exp(x[0])
    e_hi = head[3]
    beta = np.empty(d)
    for j in range(d):
        beta[j] = -e_hi + 2.0 * e_hi * _sigmoid(x[1 + j])
    basis = np.zeros((k, d))  # the Helmert basis (spec.contrast_basis)
    for j in range(1, k):
        norm = math.sqrt(j * (j + 1.0))
        for m in range(j):
            basis[m, j - 1] = 1.0 / norm
        basis[j, j - 1] = -j / norm
    for m in range(k):
        acc = 0.0
        for j in range(d):
            acc += basis[m, j] * beta[j]
        out[1 + m] = acc
    nu = out[0]
    spread = math.sqrt(2.0 * (nu + 1.0)) / nu
    for i in range(q):
        out[1 + k + i] = math.exp(-1.0 / nu + spread * x[k + i])
        for j in range(d):
            acc = 0.0
            for m in range(j, d):
                acc += tri[i, j, m] * x[k + q + i * d + m]
            out[1 + k + q + i * d + j] = means[i, j] - beta[j] - acc
    if head[7] > 0.0:
        out[1 + k + q + q * d] = math.exp(x[dim - 1])
    return 0


def _build(on_disk: bool) -> dict[str, Any]:
    from numba.extending import register_jitable

    register_jitable_helpers()  # interpolate (nu's prior table)
    # the hierarchical density's helpers (registered again if it was built: harmless)
    shared = (_softplus, _sigmoid, _digamma, _status)
    own = (_cholesky, _solve, _precision_logp, _deviations_logp, _spread_logp, _kernel)
    for function in (*shared, *own, _n_dim, _buffer_size):
        register_jitable(function)
    logp, expand = nutpie_cfuncs(_logp_cfunc, _expand_cfunc, on_disk)
    return {"kernel": numba.njit(cache=on_disk)(_kernel), "logp": logp, "expand": expand}


def _warm_up(kernels: dict[str, Any]) -> None:
    from isbetter.cv.joint.spec import PLACEHOLDER_SCALARS, SPREAD_PLACEHOLDERS

    # the C functions compile (or load) when they are made
    for form in SPREAD_PLACEHOLDERS.values():
        data = {
            "means": np.zeros((2, 1)),
            "transform": np.ones((2, 1, 1)),
            "power": np.full(2, 6.0),
            **PLACEHOLDER_SCALARS,
            **form,
        }
        buffer = _buffer(data)
        n_dim = _n_dim(buffer)
        kernels["kernel"](np.zeros(n_dim), buffer, np.empty(n_dim))


def _kernels() -> dict[str, Any]:
    from isbetter.core import cache

    return cache.compiled("joint_density", _build, _warm_up)


def load_density() -> None:
    """Load the compiled density from isbetter's cache (compiling it on first use)."""
    _kernels()


def _buffer(data: dict[str, Any]) -> np.ndarray:
    """Return the kernel's one float64 buffer from :meth:`.spec.JointData.model_data`."""
    means = np.asarray(data["means"], dtype=float)
    q, d = means.shape
    bounds = tuple(float(data[b]) for b in ("alpha_lo", "alpha_hi", "beta_lo", "beta_hi"))
    table = nu_prior_table(bounds)
    mixing = "spread_rate" in data  # Huang and Wand's prior: psi sampled
    head = [
        float(q),
        float(d + 1),
        float(data["const"]),
        float(data["effect_hi"]),
        float(data["spread_df"]),
        float(data["spread_rate"] if mixing else data["spread_var"]),
        float(table.size),
        float(mixing),
    ]
    parts = [
        np.asarray(head),
        means.reshape(-1),
        np.asarray(data["transform"], dtype=float).reshape(-1),
        np.asarray(data["power"], dtype=float),
        table,
    ]
    return np.ascontiguousarray(np.concatenate(parts))


def log_density(x: np.ndarray, data: dict[str, Any]) -> tuple[float, np.ndarray]:
    """Return the log density and its gradient at the unconstrained position `x`.

    Parameters
    ----------
    x : numpy.ndarray
        Unconstrained values in PyMC's order (see the module's docstring).
    data : dict
        :meth:`.spec.JointData.model_data`.
    """
    kernel = _kernels()["kernel"]
    x = np.ascontiguousarray(x, dtype=float)
    grad = np.empty_like(x)
    return float(kernel(x, _buffer(data), grad)), grad


def _initial_point(n_dim: int, seed: int) -> np.ndarray:
    """PyMC's initial point (each prior's moment: 0 in these coordinates) jittered by U(-1, 1)."""
    return np.random.default_rng(seed).uniform(-1.0, 1.0, size=n_dim)


def compiled_model(data: dict[str, Any]) -> Any:
    """Return a nutpie model of `data` (a :meth:`.spec.JointData.model_data` dict)."""
    buffer = _buffer(data)
    q, k = int(buffer[0]), int(buffer[1])
    kernels = _kernels()
    n_dim = int(_n_dim(buffer))
    names = ["nu", "b", "precision", "deviations"]
    shapes: list[tuple[int, ...]] = [(), (k,), (q,), (q, k - 1)]
    if buffer[7] > 0.0:  # Huang and Wand's prior
        names.append("spread_psi")
        shapes.append(())
    coords = {
        "system": pd.RangeIndex(k),
        "dataset": pd.RangeIndex(q),
        "contrast": pd.RangeIndex(k - 1),
        "unconstrained_parameter": pd.RangeIndex(n_dim),
    }
    dims: dict[str, tuple[str, ...]] = {
        "b": ("system",),
        "precision": ("dataset",),
        "deviations": ("dataset", "contrast"),
    }

    def initial_point(seed: int) -> np.ndarray:
        return _initial_point(n_dim, seed)

    return nutpie_model(
        (kernels["logp"], kernels["expand"]),
        buffer,
        n_dim,
        (names, shapes, coords, dims),
        initial_point,
    )
