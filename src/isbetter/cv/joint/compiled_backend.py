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

With per-system tails (``JointPriors(tails="per-system")``, the grouped t of
``docs/joint_prior.md``: one weight :math:`\lambda_{ik}` per data set and system and
one :math:`\nu_k` per system) the coordinates are ``x[0 : K]`` the
:math:`\log(\nu_k - 1)`, ``x[K : 2K - 1]`` the effects' :math:`\beta`, the q rows of
K :math:`\xi_{ik}`, the q rows of K - 1 :math:`\eta_i`, then :math:`\log\psi` if
sampled (``_tails_kernel``).

With independent t components (``JointPriors(tails="components")``,
``docs/joint_prior.md``: :math:`\tilde u_i = Q\operatorname{diag}(s) z_i`, :math:`z_{ij}
\sim t_{\nu_j}(0, 1)`, written as scale mixtures with weights :math:`\lambda_{ij}`) each
data set's deviations are integrated out: the noise likelihood is a Gaussian scale
mixture with one weight :math:`\kappa_i \sim \mathrm{Gamma}(a_i, a_i)`, :math:`a_i = P_i
- d/2`, and given it :math:`\bar x_i - \beta \sim N(0, Q D_i Q^T + (c_i/\kappa_i) T_i
T_i^T)`, :math:`D_i = \operatorname{diag}(s_j^2/\lambda_{ij})`, :math:`c_i = P_i/a_i`
(the same law of :math:`\beta, \nu, Q, s` as sampling the deviations). The effects'
prior is :math:`\beta \sim N(0, \tau^2 I_d)` (:math:`\tau` = ``effect_hi``, isotropic:
invariant under permutations of the systems), and given the rest :math:`\beta` is
Gaussian, so it is integrated out too (``_marginal_logp``). The coordinates are ``x[0 :
d]`` the :math:`\log(\nu_j - 1)`, the q :math:`\xi_i` of the noise weights, the q rows
of d :math:`\xi_{ij}` of the weights, the d :math:`u_j = \log s_j - \frac c2
\log(\nu_j/(\nu_j + 2))` (half-t prior of :math:`s_j`; c = ``spec.COMPONENT_SHEAR``, a
shear of unit Jacobian along the ridge of :math:`s_j` and :math:`\nu_j` that fixes a
light-tailed component's variance), and the d x d matrix :math:`R` (row by row) whose
Gram-Schmidt orthonormalisation is :math:`Q` (``_components_kernel``; none at d = 1, where
:math:`Q = (1)`); the effects and then the deviations are drawn after the fit from their
Gaussian conditionals.
"""

from __future__ import annotations

import math
from typing import Any

import numba
import numpy as np
import pandas as pd

from isbetter.cv.hierarchical.numerics.kernels import register_jitable_helpers
from isbetter.cv.joint.spec import COMPONENT_SHEAR, DIRECTION_DET_POWER, direction_prior_const
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
    "isbetter.cv.joint.spec",  # COMPONENT_SHEAR, a constant numba freezes
)
#: the size of the d x d matrices (K - 1 contrasts) from which the components' kernel
#: multiplies them by BLAS (_matmul): no faster than loops at 9, 4 times faster at 19
BLAS_MIN_SIZE = 10
#: the buffer's head: q, K, const, effect_hi, spread_df, spread_var (the fixed psi) or
#: spread_rate (psi's Gamma prior) or the components' half-t scale A, length of nu's
#: table, 1 if psi is sampled (Huang-Wand), 1 if the tails are per system (the grouped
#: t) and 2 if independent components, the bounds of alpha and of beta (nu's
#: hyper-priors, sampled with per-system tails)
_HEAD = 13


def _unpack(
    buffer: np.ndarray,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:  # pragma: no cover - numba
    # the buffer's arrays: means (q x d), transform (q x d x d), power (q), nu's table
    q, d = int(buffer[0]), int(buffer[1]) - 1
    start = _HEAD
    means = buffer[start : start + q * d].reshape((q, d))
    start += q * d
    tri = buffer[start : start + q * d * d].reshape((q, d, d))
    start += q * d * d
    return means, tri, buffer[start : start + q], buffer[start + q : start + q + int(buffer[6])]


def _kernel(x: np.ndarray, buffer: np.ndarray, grad: np.ndarray) -> float:  # pragma: no cover
    # buffer: _HEAD, means (q x d), transform (q x d x d, upper triangular), power (q),
    # nu's table. Writes the gradient into grad, returns the log density.
    q, k = int(buffer[0]), int(buffer[1])
    d = k - 1
    const, e_hi = buffer[2], buffer[3]
    means, tri, power, table = _unpack(buffer)
    prior, d_prior = interpolate(x[0], table)  # log p(nu - 1), its derivative in x[0]
    if prior == -math.inf:
        grad[:] = 0.0
        return -math.inf
    xx = math.exp(x[0])
    nu = 1.0 + xx
    logp = const + prior + x[0]
    beta = np.empty(d)
    sb = np.empty(d)
    logp = _effects_logp(x, 1, e_hi, beta, sb, logp)
    lam = np.empty(q)
    logp, d_nu = _precision_logp(x, k, 1, nu, 0.5 * d, lam, grad, logp)
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
    logp = _deviations_logp(x, d + 1 + q, means, tri, power, beta, dev, grad, logp)
    for i in range(q):
        for a in range(d):
            for j in range(d):
                scatter[a, j] += lam[i] * dev[i, a] * dev[i, j]
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
    _effects_grad(g_beta, 1, e_hi, sb, grad)
    return logp


def _effects_logp(
    x: np.ndarray, start: int, e_hi: float, beta: np.ndarray, sb: np.ndarray, logp: float
) -> float:  # pragma: no cover - numba
    # the effects' coordinates beta_j ~ U(-e_hi, e_hi) from x[start + j] (interval
    # transform; into beta, the sigmoids into sb); returns logp with the Jacobian added
    for j in range(beta.shape[0]):
        sb[j] = _sigmoid(x[start + j])
        beta[j] = -e_hi + 2.0 * e_hi * sb[j]
        logp -= _softplus(-x[start + j]) + _softplus(x[start + j])
    return logp


def _effects_grad(
    g_beta: np.ndarray, start: int, e_hi: float, sb: np.ndarray, grad: np.ndarray
) -> None:  # pragma: no cover - numba
    # d logp / d beta (g_beta) to the interval transform's coordinates, Jacobian included
    for j in range(g_beta.shape[0]):
        grad[start + j] = g_beta[j] * 2.0 * e_hi * sb[j] * (1.0 - sb[j]) + 1.0 - 2.0 * sb[j]


def _tails_kernel(x: np.ndarray, buffer: np.ndarray, grad: np.ndarray) -> float:  # pragma: no cover
    # the grouped t (docs/joint_prior.md): u_ik = z_ik / sqrt(lambda_ik), z_i = H omega_i,
    # omega_i ~ N(0, Omega), lambda_ik ~ Gamma(nu_k/2, nu_k/2), nu_k - 1 ~ Gamma(alpha,
    # beta), alpha ~ U, beta ~ U shared by the systems (x[0], x[1]: interval transforms;
    # x[2 : 2 + K] the log(nu_k - 1)). The contrasts u~_i = A_i omega_i, A_i = H^T
    # diag(lambda_i^-1/2) H; Omega | psi ~ IW(nu_u, psi I) integrated out:
    # -sum_i log|A_i| - (nu_u + q)/2 log|psi I + sum_i omega_i omega_i^T|.
    # Same buffer as _kernel; writes the gradient into grad, returns the log density.
    q, k = int(buffer[0]), int(buffer[1])
    d = k - 1
    const, e_hi = buffer[2], buffer[3]
    means, tri, power, _ = _unpack(buffer)
    s_hyper = np.empty(2)
    g_hyper = np.zeros(2)
    nu = np.empty(k)
    d_prior = np.empty(k)  # d log p(nu_k - 1) / d log(nu_k - 1), Jacobian included
    logp = _tails_nu_logp(x, buffer, s_hyper, g_hyper, nu, d_prior, const)
    beta = np.empty(d)
    sb = np.empty(d)
    logp = _effects_logp(x, 2 + k, e_hi, beta, sb, logp)
    off = 2 + k + d  # the xi_ik, row by row
    lam = np.empty((q, k))
    column = np.empty(q)
    d_nu = np.empty(k)
    for m in range(k):
        logp, d_nu[m] = _precision_logp(x, off + m, k, nu[m], 0.0, column, grad, logp)
        lam[:, m] = column
    dev = np.empty((q, d))
    logp = _deviations_logp(x, off + q * k, means, tri, power, beta, dev, grad, logp)
    last = off + q * k + q * d
    nu_u, mixing = buffer[4], buffer[7] > 0.0
    psi = buffer[5]
    if mixing:
        psi = math.exp(x[last])
        logp += (0.5 * nu_u * d + 0.5) * x[last] - buffer[5] * psi
        logp += 0.5 * math.log(buffer[5] / math.pi)
    g_beta = np.zeros(d)
    logp, inv_trace = _grouped_spread_logp(x, off, tri, dev, lam, psi, nu_u + q, grad, g_beta, logp)
    if not math.isfinite(logp):  # an extreme trial point: density 0
        grad[:] = 0.0
        return -math.inf
    if mixing:
        grad[last] = 0.5 * nu_u * d + 0.5 - buffer[5] * psi - 0.5 * (nu_u + q) * psi * inv_trace
    _weights_grad(x, off, q, nu, d_nu, grad)
    for m in range(k):
        grad[2 + m] = d_nu[m] * (nu[m] - 1.0) + d_prior[m]
    for j in range(2):
        width = buffer[10 + 2 * j] - buffer[9 + 2 * j]
        grad[j] = g_hyper[j] * width * s_hyper[j] * (1.0 - s_hyper[j]) + 1.0 - 2.0 * s_hyper[j]
    _effects_grad(g_beta, 2 + k, e_hi, sb, grad)
    return logp


def _components_kernel(
    x: np.ndarray, buffer: np.ndarray, grad: np.ndarray
) -> float:  # pragma: no cover - numba
    # independent t components, each data set's deviations integrated out (the marginal
    # form, docs/joint_prior.md): means_i - beta | kappa_i, lambda_i, s, Q ~ N(0, M_i),
    # M_i = Q D_i Q^T + (c_i / kappa_i) T_i T_i^T, D_i = diag(s_j^2 / lambda_ij), c_i =
    # P_i / a_i, a_i = P_i - d/2; kappa_i ~ Gamma(a_i, a_i) (the noise's scale mixture),
    # lambda_ij ~ Gamma(nu_j/2, nu_j/2), s_j ~ half-t_n(0, A) (n, A: buffer[4],
    # buffer[5]), Q = Gram-Schmidt(R) (Haar), R's density ~
    # exp(-|R|^2/2) |det R|^m (spec.DIRECTION_DET_POWER), nu_j - 1 from nu's table; the
    # effects beta ~ N(0, tau^2 I_d) (tau: buffer[3]) integrated out (_marginal_logp).
    # Coordinates: d log(nu_j - 1), q xi_i (kappa), q x d xi_ij (lambda), d log s_j, d x d R
    # (none at d = 1).
    # Same buffer as _kernel; writes the gradient into grad, returns the log density.
    q, k = int(buffer[0]), int(buffer[1])
    d = k - 1
    means, tri, power, table = _unpack(buffer)
    logp = buffer[2]
    nu = np.empty(d)
    for j in range(d):
        prior, d_prior = interpolate(x[j], table)
        if prior == -math.inf:
            grad[:] = 0.0
            return -math.inf
        nu[j] = 1.0 + math.exp(x[j])
        logp += prior + x[j]
        grad[j] = d_prior + 1.0
    at_kappa = d
    kappa = np.empty(q)
    one = np.empty(1)
    for i in range(q):  # kappa_i ~ Gamma(a_i, a_i): the weights' map with nu = 2 a_i
        logp, _ = _precision_logp(x, at_kappa + i, 1, 2.0 * power[i] - d, 0.0, one, grad, logp)
        kappa[i] = one[0]
    at_xi = at_kappa + q
    lam = np.empty((q, d))
    column = np.empty(q)
    d_nu = np.empty(d)
    for j in range(d):
        logp, d_nu[j] = _precision_logp(x, at_xi + j, d, nu[j], 0.0, column, grad, logp)
        lam[:, j] = column
    at_s = at_xi + q * d
    scale = np.empty(d)
    logp = _half_t_logp(x, at_s, nu, buffer[4], buffer[5], scale, grad, logp)
    at_raw = at_s + d
    raw = np.empty((d, d))
    basis_q = np.zeros((d, d))
    upper = np.zeros((d, d))
    logp = _direction_logp(x, at_raw, raw, basis_q, upper, logp)
    if logp == -math.inf:
        grad[:] = 0.0
        return -math.inf
    g_q = np.zeros((d, d))  # d logp / d Q
    logp = _marginal_logp(
        (means, tri, power, buffer[3]), (basis_q, lam, kappa, scale), x, g_q, grad, logp
    )
    if not math.isfinite(logp):  # an extreme trial point: density 0
        grad[:] = 0.0
        return -math.inf
    _direction_grad((raw, basis_q, upper, g_q), at_raw, grad)
    for i in range(q):  # d logp / d log kappa_i to xi_i (a_i is data: no nu to carry)
        a_nu = 2.0 * power[i] - d
        grad[at_kappa + i] *= _xi_spread(a_nu)
    _weights_grad(x, at_xi, q, nu, d_nu, grad)
    for j in range(d):  # the shear: d log s_j / d nu_j = COMPONENT_SHEAR / (nu_j (nu_j + 2))
        d_nu[j] += grad[at_s + j] * COMPONENT_SHEAR / (nu[j] * (nu[j] + 2.0))
        grad[j] += d_nu[j] * (nu[j] - 1.0)
    return logp


def _direction_logp(
    x: np.ndarray,
    at_raw: int,
    raw: np.ndarray,
    basis_q: np.ndarray,
    upper: np.ndarray,
    logp: float,
) -> float:  # pragma: no cover - numba
    # R (row by row at x[at_raw]) into raw, Q = Gram-Schmidt(R) into basis_q and its U
    # into upper; adds R's prior exp(-|R|^2/2) |det R|^m, normalised (m =
    # spec.DIRECTION_DET_POWER, |det R| = prod U_jj); -inf where R is singular. At d = 1
    # no R: Q = (1) (D_i is 1 x 1, Q's sign a no-op: R's two signs were two copies of
    # the posterior split by |r|^m's zero, whose crossings diverged)
    d = raw.shape[0]
    if d == 1:
        basis_q[0, 0] = 1.0
        upper[0, 0] = 1.0
        return logp
    for a in range(d):
        for b in range(d):
            raw[a, b] = x[at_raw + a * d + b]
            logp -= 0.5 * raw[a, b] * raw[a, b]
    if not _gram_schmidt(raw, basis_q, upper):
        return -math.inf
    logp -= direction_prior_const(d)
    for j in range(d):
        logp += DIRECTION_DET_POWER * math.log(upper[j, j])
    return logp


def _direction_grad(
    arrays: tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray], at_raw: int, grad: np.ndarray
) -> None:  # pragma: no cover - numba
    # d logp / d R into grad[at_raw:]: the gradient g_q in Q through Gram-Schmidt, plus R's
    # prior (-R and m R^-T); arrays: R, Q, U, g_q
    raw, basis_q, upper, g_q = arrays
    d = raw.shape[0]
    if d == 1:  # no R (_direction_logp)
        return
    g_raw = np.empty((d, d))
    _gram_schmidt_grad(basis_q, upper, g_q, g_raw)
    _add_det_grad(basis_q, upper, DIRECTION_DET_POWER, g_raw)
    for a in range(d):
        for b in range(d):
            grad[at_raw + a * d + b] = g_raw[a, b] - raw[a, b]


def _log_scale(u: float, nu: float) -> float:  # pragma: no cover - numba
    # log s_j from its sampled coordinate u_j: the shear along nu_j (spec.COMPONENT_SHEAR)
    return u + 0.5 * COMPONENT_SHEAR * math.log(nu / (nu + 2.0))


def _half_t_logp(
    x: np.ndarray,
    at_s: int,
    nu: np.ndarray,
    df: float,
    a_scale: float,
    scale: np.ndarray,
    grad: np.ndarray,
    logp: float,
) -> float:  # pragma: no cover - numba
    # s_j ~ half-t_df(0, a_scale) on the log scale (its Jacobian), log s_j = _log_scale(
    # x[at_s + j], nu_j) (Jacobian 1): fills scale and grad[at_s + j] (d logp / d log s_j
    # so far); returns logp with it added
    norm = math.log(2.0) + math.lgamma(0.5 * (df + 1.0)) - math.lgamma(0.5 * df)
    norm -= 0.5 * math.log(df * math.pi) + math.log(a_scale)
    for j in range(scale.shape[0]):
        log_s = _log_scale(x[at_s + j], nu[j])
        scale[j] = math.exp(log_s)
        ratio = scale[j] * scale[j] / (df * a_scale * a_scale)
        logp += norm - 0.5 * (df + 1.0) * math.log1p(ratio) + log_s
        grad[at_s + j] = 1.0 - (df + 1.0) * ratio / (1.0 + ratio)
    return logp


def _marginal_logp(
    data: tuple[np.ndarray, np.ndarray, np.ndarray, float],
    params: tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray],
    x: np.ndarray,
    g_q: np.ndarray,
    grad: np.ndarray,
    logp: float,
) -> float:  # pragma: no cover - numba
    # log of integral prod_i N(means_i; beta, M_i) N(beta; 0, tau^2 I) dbeta, M_i = Q D_i Q^T +
    # (c_i/kappa_i) T_i T_i^T: the effects integrated out. In Q's basis (M_i = Q A_i Q^T, A_i
    # = D_i + (c_i/kappa_i) Q^T T_i T_i^T Q, x'_i = Q^T means_i; beta's prior is isotropic)
    # with P' = tau^-2 I + sum_i A_i^-1, beta' = P'^-1 sum_i A_i^-1 x'_i it is sum_i log
    # N(x'_i; beta', A_i) + log N(beta'; 0, tau^2 I) + d/2 log 2 pi - 1/2 log det P'. Gradient
    # (beta' the maximiser: envelope theorem): with r' = x'_i - beta', alpha' = A_i^-1 r',
    # G'_i = d/dA_i = (alpha' alpha'^T - A_i^-1 + A_i^-1 P'^-1 A_i^-1)/2 (= Q^T G_i Q): adds
    # Q sum_i G'_i 2 D_i to g_q (one product for all data sets) and to grad the derivatives
    # in log kappa_i, log lambda_ij (-D_ij g_ij) and log s_j (2 D_ij g_ij), g_ij = G'_jj.
    # data: means, transform, power, tau; params: Q, lambda, kappa, s. Returns -inf if an
    # A_i or P' is not positive definite. A data set's O(d^3) work is 4 products of d x d
    # matrices (_matmul), a Cholesky factor and its inverse (validation/joint_large_k.py)
    means, tri, power, tau = data
    basis_q, lam, kappa, scale = params
    q, d = means.shape
    inv = np.empty((q, d, d))  # the A_i^-1
    noise = np.empty((q, d, d))  # the Q^T T_i T_i^T Q
    diag = np.empty((q, d))  # the D_i
    shifted = np.empty((q, d))  # the x'_i
    c_over = np.empty(q)  # the c_i / kappa_i
    prec = np.eye(d) / (tau * tau)  # P', then P'^-1
    mean = np.zeros(d)  # sum_i A_i^-1 x'_i, then beta'
    logp = _marginal_factors(
        (means, tri, power), params, (inv, noise, diag, shifted, c_over), prec, mean, logp
    )
    if logp == -math.inf:
        return logp
    logp = _collapse_effects(prec, mean, tau, logp)
    if logp == -math.inf:
        return logp
    at_kappa, at_s = d, d + q + q * d
    resid = np.empty(d)  # r'
    alpha = np.empty(d)
    g_mat = np.empty((d, d))  # A^-1 P'^-1
    g_new = np.empty((d, d))  # A^-1 P'^-1 A^-1, then G'
    g_sum = np.zeros((d, d))  # sum_i G'_i 2 D_i
    for i in range(q):
        for a in range(d):
            resid[a] = shifted[i, a] - mean[a]
        for a in range(d):
            acc = 0.0
            for b in range(d):
                acc += inv[i, a, b] * resid[b]
            alpha[a] = acc
            logp -= 0.5 * resid[a] * acc
        _matmul(inv[i], prec, g_mat)
        _matmul(g_mat, inv[i], g_new)
        trace = 0.0  # tr(G' Q^T T T^T Q)
        for a in range(d):
            for b in range(d):
                g_new[a, b] = 0.5 * (alpha[a] * alpha[b] - inv[i, a, b] + g_new[a, b])
                trace += g_new[a, b] * noise[i, b, a]
        grad[at_kappa + i] -= c_over[i] * trace
        at_lam = at_kappa + q + i * d
        for j in range(d):
            grad[at_lam + j] -= diag[i, j] * g_new[j, j]
            grad[at_s + j] += 2.0 * diag[i, j] * g_new[j, j]
            for b in range(d):
                g_sum[b, j] += 2.0 * diag[i, j] * g_new[b, j]
    _matmul(basis_q, g_sum, g_mat)
    for a in range(d):
        for b in range(d):
            g_q[a, b] += g_mat[a, b]
    return logp


def _marginal_factors(
    data: tuple[np.ndarray, np.ndarray, np.ndarray],
    params: tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray],
    out: tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray],
    prec: np.ndarray,
    total: np.ndarray,
    logp: float,
) -> float:  # pragma: no cover - numba
    # the first pass of _marginal_logp: per data set A_i^-1, Q^T T_i T_i^T Q, D_i, x'_i =
    # Q^T means_i and c_i/kappa_i into out; adds A_i^-1 to prec, A_i^-1 x'_i to total and
    # -1/2 log det(2 pi A_i) to logp; -inf if an A_i is not positive definite
    means, tri, power = data
    basis_q, lam, kappa, scale = params
    inv, noise, diag, shifted, c_over = out
    q, d = means.shape
    cov = np.empty((d, d))  # A
    chol = np.zeros((d, d))  # A = L L^T
    low_inv = np.zeros((d, d))  # L^-1
    v_mat = np.empty((d, d))  # T^T Q
    for i in range(q):
        if not kappa[i] > 0.0 or not math.isfinite(kappa[i]):  # an under- or overflow
            return -math.inf
        c_over[i] = power[i] / (power[i] - 0.5 * d) / kappa[i]
        for j in range(d):
            if not lam[i, j] > 0.0:
                return -math.inf
            diag[i, j] = scale[j] * scale[j] / lam[i, j]
        _matmul(tri[i].T, basis_q, v_mat)
        _matmul(v_mat.T, v_mat, noise[i])
        for a in range(d):
            for b in range(d):
                cov[a, b] = c_over[i] * noise[i, a, b]
            cov[a, a] += diag[i, a]
        if not _cholesky(cov, chol):
            return -math.inf
        for j in range(d):
            acc = 0.0
            for a in range(d):
                acc += basis_q[a, j] * means[i, a]
            shifted[i, j] = acc
            logp -= math.log(chol[j, j]) + 0.5 * math.log(2.0 * math.pi)
        _lower_inverse(chol, low_inv)
        _matmul(low_inv.T, low_inv, inv[i])  # A^-1 = L^-T L^-1
        for a in range(d):
            acc = 0.0
            for b in range(d):
                acc += inv[i, a, b] * shifted[i, b]
                prec[a, b] += inv[i, a, b]
            total[a] += acc
    return logp


def _matmul(a: np.ndarray, b: np.ndarray, out: np.ndarray) -> None:  # pragma: no cover
    # out = a b for square matrices: BLAS's (np.dot) from BLAS_MIN_SIZE on, 6 times faster
    # than loops at 29 x 29; loops below it, where a BLAS call costs more than it saves
    d = a.shape[0]
    if d >= BLAS_MIN_SIZE:
        np.dot(a, b, out)
        return
    for x in range(d):
        for y in range(d):
            acc = 0.0
            for m in range(d):
                acc += a[x, m] * b[m, y]
            out[x, y] = acc


def _lower_inverse(chol: np.ndarray, out: np.ndarray) -> None:  # pragma: no cover - numba
    # the inverse of the lower triangular chol into out's lower triangle (forward
    # substitution, column by column; out's upper triangle is left as it is: zeros)
    d = chol.shape[0]
    for j in range(d):
        out[j, j] = 1.0 / chol[j, j]
        for i in range(j + 1, d):
            acc = 0.0
            for m in range(j, i):
                acc -= chol[i, m] * out[m, j]
            out[i, j] = acc / chol[i, i]


def _collapse_effects(
    prec: np.ndarray, mean: np.ndarray, tau: float, logp: float
) -> float:  # pragma: no cover - numba
    # from P' (prec) and h' = sum_i A_i^-1 x'_i (mean): beta' = P'^-1 h' into mean, P'^-1
    # into prec; adds log N(beta'; 0, tau^2 I) + d/2 log 2 pi - 1/2 log det P' to logp
    # (-inf if P' is not positive definite)
    d = mean.shape[0]
    chol = np.zeros((d, d))
    if not _cholesky(prec, chol):
        return -math.inf
    total = mean.copy()
    _solve(chol, total, mean)
    unit = np.zeros(d)
    col = np.empty(d)
    for a in range(d):
        logp -= math.log(chol[a, a]) + math.log(tau) + 0.5 * mean[a] * mean[a] / (tau * tau)
        unit[a] = 1.0
        _solve(chol, unit, col)
        unit[a] = 0.0
        for b in range(d):
            prec[b, a] = col[b]
    return logp


def _weights_grad(
    x: np.ndarray, at_xi: int, q: int, nu: np.ndarray, d_nu: np.ndarray, grad: np.ndarray
) -> None:  # pragma: no cover - numba
    # weights per data set and column (system or component; m columns, x[at_xi + i m + j]
    # the xi_ij): d logp / d log lambda_ij (in grad's xi slots) to xi_ij, and nu_j's share
    # through it added to d_nu[j] (d logp / d nu_j)
    m = nu.shape[0]
    for j in range(m):
        spread = _xi_spread(nu[j])
        d_spread = spread * (0.5 / (nu[j] + 1.0) - 1.0 / nu[j])
        for i in range(q):
            at = at_xi + i * m + j
            d_nu[j] += grad[at] * (1.0 / (nu[j] * nu[j]) + d_spread * x[at])
            grad[at] *= spread


def _gram_schmidt(
    raw: np.ndarray, basis_q: np.ndarray, upper: np.ndarray
) -> bool:  # pragma: no cover
    # raw = Q R by Gram-Schmidt (R upper triangular, positive diagonal): Q into basis_q, R
    # into upper; False if a column is (numerically) in the span of the ones before it
    d = raw.shape[0]
    v = np.empty(d)
    for j in range(d):
        for a in range(d):
            v[a] = raw[a, j]
        for m in range(j):
            dot = 0.0
            for a in range(d):
                dot += basis_q[a, m] * v[a]
            upper[m, j] = dot
            for a in range(d):
                v[a] -= dot * basis_q[a, m]
        norm = 0.0
        for a in range(d):
            norm += v[a] * v[a]
        norm = math.sqrt(norm)
        if not norm > 0.0 or not math.isfinite(norm):
            return False
        upper[j, j] = norm
        for a in range(d):
            basis_q[a, j] = v[a] / norm
    return True


def _gram_schmidt_grad(
    basis_q: np.ndarray, upper: np.ndarray, g_q: np.ndarray, out: np.ndarray
) -> None:  # pragma: no cover - numba
    # reverse mode of raw = Q R (R's own gradient 0): with M = -g_q^T Q and C its lower
    # triangle copied to the upper, d logp / d raw = (g_q + Q C) R^-T (Seeger et al. 2017,
    # "Auto-differentiating linear algebra", the QR rule)
    d = basis_q.shape[0]
    low = np.empty((d, d))
    for a in range(d):
        for b in range(a + 1):
            acc = 0.0
            for m in range(d):
                acc -= g_q[m, a] * basis_q[m, b]
            low[a, b] = acc
            low[b, a] = acc
    lhs = np.empty((d, d))
    for a in range(d):
        for b in range(d):
            acc = g_q[a, b]
            for m in range(d):
                acc += basis_q[a, m] * low[m, b]
            lhs[a, b] = acc
    for a in range(d):  # out R^T = lhs: row a of out solves R out_a = lhs_a (back substitution)
        for b in range(d - 1, -1, -1):
            acc = lhs[a, b]
            for m in range(b + 1, d):
                acc -= upper[b, m] * out[a, m]
            out[a, b] = acc / upper[b, b]


def _add_det_grad(
    basis_q: np.ndarray, upper: np.ndarray, power: float, out: np.ndarray
) -> None:  # pragma: no cover - numba
    # adds d/d raw of power log|det raw| = power raw^-T = power Q U^-T (raw = Q U): row a
    # of Q U^-T solves U y = Q[a, :] (back substitution)
    d = basis_q.shape[0]
    row = np.empty(d)
    for a in range(d):
        for b in range(d - 1, -1, -1):
            acc = basis_q[a, b]
            for m in range(b + 1, d):
                acc -= upper[b, m] * row[m]
            row[b] = acc / upper[b, b]
            out[a, b] += power * row[b]


def _tails_nu_logp(
    x: np.ndarray,
    buffer: np.ndarray,
    s_hyper: np.ndarray,
    g_hyper: np.ndarray,
    nu: np.ndarray,
    d_prior: np.ndarray,
    logp: float,
) -> float:  # pragma: no cover - numba
    # the per-system tails' prior: alpha ~ U, beta ~ U (x[0], x[1]: interval transforms),
    # nu_k - 1 ~ Gamma(alpha, beta) (x[2 + k]: log(nu_k - 1)). Fills nu, the sigmoids of
    # x[0], x[1], the hyper-parameters' gradient and d log p(nu_k - 1) / d x[2 + k]
    hyper = np.empty(2)  # alpha, beta
    for j in range(2):  # uniform: the density cancels the interval transform's log(hi - lo)
        lo, hi = buffer[9 + 2 * j], buffer[10 + 2 * j]
        s_hyper[j] = _sigmoid(x[j])
        hyper[j] = lo + (hi - lo) * s_hyper[j]
        logp -= _softplus(-x[j]) + _softplus(x[j])
    alpha, rate = hyper[0], hyper[1]
    for m in range(nu.size):
        t = x[2 + m]
        xx = math.exp(t)
        nu[m] = 1.0 + xx
        logp += alpha * math.log(rate) - math.lgamma(alpha) + alpha * t - rate * xx
        d_prior[m] = alpha - rate * xx
        g_hyper[0] += math.log(rate) - _digamma(alpha) + t
        g_hyper[1] += alpha / rate - xx
    return logp


def _grouped_spread_logp(
    x: np.ndarray,
    off: int,
    tri: np.ndarray,
    dev: np.ndarray,
    lam: np.ndarray,
    psi: float,
    kappa: float,
    grad: np.ndarray,
    g_beta: np.ndarray,
    logp: float,
) -> tuple[float, float]:  # pragma: no cover - numba
    # -sum_i log|A_i| - kappa/2 log|S|, S = psi I + sum_i omega_i omega_i^T, omega_i =
    # A_i^-1 u~_i. Adds to grad[off + i k + m] (d logp / d log lambda_im):
    # s/2 h_m^T A_i^-1 h_m - kappa s/2 (r_i . h_m)(h_m . omega_i), s = lambda_im^-1/2,
    # r_i = A_i^-1 S^-1 omega_i; to the eta part -kappa r_i through -transform_i, and to
    # g_beta kappa r_i. Returns logp and tr(S^-1) (for the derivative in psi); logp -inf
    # if a matrix is not positive definite
    q, d = dev.shape
    k = d + 1
    basis = _helmert(k)
    chols = np.zeros((q, d, d))
    omega = np.empty((q, d))
    scatter = psi * np.eye(d)
    logp += _grouped_cores(dev, lam, basis, chols, omega, scatter)
    chol = np.zeros((d, d))
    if not math.isfinite(logp) or not _cholesky(scatter, chol):
        return -math.inf, 0.0
    inv_trace = 0.0
    unit = np.zeros(d)
    col = np.empty(d)
    for j in range(d):  # log|S| and tr(S^-1) = sum_j e_j^T S^-1 e_j
        logp -= kappa * math.log(chol[j, j])
        unit[j] = 1.0
        _solve(chol, unit, col)
        inv_trace += col[j]
        unit[j] = 0.0
    g_vec = np.empty(d)
    r_vec = np.empty(d)
    h_vec = np.empty(d)
    ah = np.empty(d)
    for i in range(q):
        _solve(chol, omega[i], g_vec)
        _solve(chols[i], g_vec, r_vec)
        for m in range(k):
            for j in range(d):
                h_vec[j] = basis[m, j]
            _solve(chols[i], h_vec, ah)
            h_ah, r_h, h_om = 0.0, 0.0, 0.0
            for j in range(d):
                h_ah += h_vec[j] * ah[j]
                r_h += r_vec[j] * h_vec[j]
                h_om += h_vec[j] * omega[i, j]
            s = 1.0 / math.sqrt(lam[i, m])
            grad[off + i * k + m] += 0.5 * s * h_ah - 0.5 * kappa * s * r_h * h_om
        for j in range(d):
            g_beta[j] += kappa * r_vec[j]  # d logp / d u~_ij = -kappa r_ij; u~ = means - beta - ..
        for m in range(d):  # d u~ / d eta = -transform
            acc = 0.0
            for j in range(m + 1):
                acc += tri[i, j, m] * r_vec[j]
            grad[off + q * k + i * d + m] += kappa * acc
    return logp, inv_trace


def _grouped_cores(
    dev: np.ndarray,
    lam: np.ndarray,
    basis: np.ndarray,
    chols: np.ndarray,
    omega: np.ndarray,
    scatter: np.ndarray,
) -> float:  # pragma: no cover - numba
    # per data set: A_i = H^T diag(lambda_i^-1/2) H (its Cholesky factor into chols[i]),
    # omega_i = A_i^-1 u~_i (into omega[i]) added to the scatter; returns -sum_i log|A_i|,
    # -inf if an A_i is not positive definite
    q, d = dev.shape
    k = d + 1
    a_mat = np.empty((d, d))
    logdet = 0.0
    for i in range(q):
        for a in range(d):
            for b in range(d):
                acc = 0.0
                for m in range(k):
                    acc += basis[m, a] * basis[m, b] / math.sqrt(lam[i, m])
                a_mat[a, b] = acc
        if not _cholesky(a_mat, chols[i]):
            return -math.inf
        for j in range(d):
            logdet -= 2.0 * math.log(chols[i, j, j])
        _solve(chols[i], dev[i], omega[i])
        for a in range(d):
            for b in range(d):
                scatter[a, b] += omega[i, a] * omega[i, b]
    return logdet


def _helmert(k: int) -> np.ndarray:  # pragma: no cover - numba
    # the Helmert basis (spec.contrast_basis), (k, k - 1)
    basis = np.zeros((k, k - 1))
    for j in range(1, k):
        norm = math.sqrt(j * (j + 1.0))
        for m in range(j):
            basis[m, j - 1] = 1.0 / norm
        basis[j, j - 1] = -j / norm
    return basis


def _xi_spread(nu: float) -> float:  # pragma: no cover - numba
    # the weights' map (pymc_backend._precision): log lambda = -1/nu + spread(nu) xi, with
    # spread(nu) = sqrt(2 (nu + 1)) / nu, the sd of log lambda ~ log Gamma(nu/2, nu/2)
    return math.sqrt(2.0 * (nu + 1.0)) / nu


def _xi_weight(xi: float, nu: float) -> float:  # pragma: no cover - numba
    # the weight lambda of its coordinate xi under the weights' map (_xi_spread)
    return math.exp(-1.0 / nu + _xi_spread(nu) * xi)


def _precision_logp(
    x: np.ndarray,
    start: int,
    stride: int,
    nu: float,
    extra: float,
    lam: np.ndarray,
    grad: np.ndarray,
    logp: float,
) -> tuple[float, float]:  # pragma: no cover - numba
    # lambda_i ~ Gamma(nu/2, rate nu/2) on the log scale (its Jacobian), times
    # lambda_i^extra (d/2 of Omega's integral with one weight per data set, 0 per system);
    # sampled as xi_i = x[start + stride i], log lambda_i = -1/nu + spread(nu) xi_i
    # (pymc_backend._precision). Fills lam and grad[start + stride i] (d logp / d log
    # lambda_i so far); returns logp with these terms added, and their derivative in nu
    q = lam.shape[0]
    half_nu = nu / 2.0
    log_c_gamma = half_nu * math.log(half_nu) - math.lgamma(half_nu)
    d_log_c_gamma = 0.5 * math.log(half_nu) + 0.5 - 0.5 * _digamma(half_nu)
    spread = _xi_spread(nu)
    d_log_spread = 0.5 / (nu + 1.0) - 1.0 / nu
    logp += q * math.log(spread)
    d_nu = q * d_log_spread
    for i in range(q):
        at = start + stride * i
        y = -1.0 / nu + spread * x[at]
        lam[i] = math.exp(y)
        logp += log_c_gamma + (half_nu + extra) * y - half_nu * lam[i]
        d_nu += d_log_c_gamma + 0.5 * y - 0.5 * lam[i]
        grad[at] = half_nu + extra - half_nu * lam[i]
    return logp, d_nu


def _deviations_logp(
    x: np.ndarray,
    off: int,
    means: np.ndarray,
    tri: np.ndarray,
    power: np.ndarray,
    beta: np.ndarray,
    dev: np.ndarray,
    grad: np.ndarray,
    logp: float,
) -> float:  # pragma: no cover - numba
    # the deviations' contrasts u~_i = means_i - beta - transform_i eta_i (into dev; eta_i
    # at x[off + i d]), and the likelihood in eta (about standard normal) added to logp
    q, d = means.shape
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
    spread = _xi_spread(nu)
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
    q, k = int(head[0]), int(head[1])
    d = k - 1
    if head[8] > 1.0:  # components: d nu's, q noise weights, q d weights, d s's, R (d > 1)
        return 2 * d + q + q * d + (d * d if d > 1 else 0)
    if head[8] > 0.0:  # per-system tails: alpha, beta, K nu's, K - 1 effects, q K weights
        return 2 * k + 1 + q * k + q * (k - 1) + int(head[7])
    return k + q * k + int(head[7])


def _n_expanded(head: np.ndarray) -> int:  # pragma: no cover - numba
    # nu (1 or K), b (K), precision (q or q K), deviations (q (K - 1)), psi if sampled;
    # components: nu (d), noise_weight (q), precision (q d), component_scale (d), Q (d x d)
    q, k = int(head[0]), int(head[1])
    d = k - 1
    if head[8] > 1.0:
        return d + q + q * d + d + d * d
    if head[8] > 0.0:
        return 2 * k + q * k + q * (k - 1) + int(head[7])
    return 1 + k + q + q * (k - 1) + int(head[7])


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
    if head[8] > 1.0:
        logp[0] = _components_kernel(x, buffer, out)
    elif head[8] > 0.0:
        logp[0] = _tails_kernel(x, buffer, out)
    else:
        logp[0] = _kernel(x, buffer, out)
    return _status(logp[0], out)


def _expand_cfunc(dim, expanded, x_, out_, user_data_):  # type: ignore[no-untyped-def,unused-ignore]  # noqa: E501  # pragma: no cover
    # the stored variables nu (1, or K per system), b (K), precision (q, or q x K per
    # system), deviations (q x d), psi if sampled
    head = numba.carray(user_data_, (_HEAD,), dtype=np.float64)
    q, k = int(head[0]), int(head[1])
    d = k - 1
    if dim != _n_dim(head) or expanded != _n_expanded(head):
        return -1
    buffer = numba.carray(user_data_, (_buffer_size(head),), dtype=np.float64)
    means, tri, _, _ = _unpack(buffer)
    x = numba.carray(x_, (dim,))
    out = numba.carray(out_, (expanded,))
    if head[8] > 1.0:
        _expand_components(x, buffer, out)
        return 0
    n_nu = k if head[8] > 0.0 else 1  # nu's, and the weights per data set
    lead = 2 if head[8] > 0.0 else 0  # alpha and beta, sampled with per-system tails
    for m in range(n_nu):
        out[m] = 1.0 + math.exp(x[lead + m])
    beta = _expand_effects(x, lead + n_nu, head[3], k, out, n_nu)
    at_x, at_out = lead + n_nu + d, n_nu + k  # the xi's, the weights
    _expand_weights(x, at_x, q, n_nu, out, at_out)
    _expand_deviations(x, at_x + q * n_nu, means, tri, beta, out, at_out + q * n_nu)
    if head[7] > 0.0:
        out[expanded - 1] = math.exp(x[dim - 1])
    return 0


def _expand_weights(
    x: np.ndarray, at_x: int, q: int, n_nu: int, out: np.ndarray, at_out: int
) -> None:  # pragma: no cover - numba
    # the weights lambda_im = exp(-1/nu_m + spread(nu_m) xi_im) (pymc_backend._precision)
    # of q data sets and n_nu columns (one, K systems or d components): the xi's at
    # x[at_x] row by row, the nu's already at out[0 : n_nu], the weights to out[at_out]
    for i in range(q):
        for m in range(n_nu):
            out[at_out + i * n_nu + m] = _xi_weight(x[at_x + i * n_nu + m], out[m])


def _expand_effects(
    x: np.ndarray, at_x: int, e_hi: float, k: int, out: np.ndarray, at_out: int
) -> np.ndarray:  # pragma: no cover - numba
    # the effects' coordinates beta (interval transform, at x[at_x]) and the K effects
    # b = H beta written at out[at_out]; returns beta
    d = k - 1
    beta = np.empty(d)
    for j in range(d):
        beta[j] = -e_hi + 2.0 * e_hi * _sigmoid(x[at_x + j])
    basis = _helmert(k)
    for m in range(k):
        acc = 0.0
        for j in range(d):
            acc += basis[m, j] * beta[j]
        out[at_out + m] = acc
    return beta


def _expand_deviations(
    x: np.ndarray,
    at_x: int,
    means: np.ndarray,
    tri: np.ndarray,
    beta: np.ndarray,
    out: np.ndarray,
    at_out: int,
) -> None:  # pragma: no cover - numba
    # the deviations' contrasts u~_i = means_i - beta - transform_i eta_i (eta_i at
    # x[at_x + i d]) written row by row at out[at_out]
    q, d = means.shape
    for i in range(q):
        for j in range(d):
            acc = 0.0
            for m in range(j, d):
                acc += tri[i, j, m] * x[at_x + i * d + m]
            out[at_out + i * d + j] = means[i, j] - beta[j] - acc


def _expand_components(
    x: np.ndarray, buffer: np.ndarray, out: np.ndarray
) -> None:  # pragma: no cover - numba
    # the stored variables of independent components: nu (d), noise_weight (the kappa_i,
    # q), precision (the weights lambda_ij, q x d), component_scale (s, d), directions Q (d x
    # d, row by row); the effects, then the deviations, are drawn after the fit from their
    # conditionals (model.py)
    q, k = int(buffer[0]), int(buffer[1])
    d = k - 1
    _, _, power, _ = _unpack(buffer)
    for j in range(d):
        out[j] = 1.0 + math.exp(x[j])
    at, at_x = d, d
    for i in range(q):  # kappa_i = exp(-1/(2 a_i) + spread(2 a_i) xi_i)
        out[at + i] = _xi_weight(x[at_x + i], 2.0 * power[i] - d)
    at += q
    at_x += q
    _expand_weights(x, at_x, q, d, out, at)
    at += q * d
    at_x += q * d
    for j in range(d):
        out[at + j] = math.exp(_log_scale(x[at_x + j], out[j]))
    raw = np.empty((d, d))
    basis_q = np.zeros((d, d))
    upper = np.zeros((d, d))
    if d == 1:  # no R: Q = (1)
        basis_q[0, 0] = 1.0
    else:
        for a in range(d):
            for b in range(d):
                raw[a, b] = x[at_x + d + a * d + b]
        _gram_schmidt(raw, basis_q, upper)  # a degenerate raw (probability 0) leaves zeros
    for a in range(d):
        for b in range(d):
            out[at + d + a * d + b] = basis_q[a, b]


def _build(on_disk: bool) -> dict[str, Any]:
    from numba.extending import register_jitable

    register_jitable_helpers()  # interpolate (nu's prior table)
    # the hierarchical density's helpers (registered again if it was built: harmless)
    shared = (_softplus, _sigmoid, _digamma, _status)
    own: tuple[Any, ...] = (_unpack, _cholesky, _solve, _helmert, _xi_spread, _xi_weight)
    own += (_precision_logp,)
    own += (_deviations_logp,)
    own += (_spread_logp, _effects_logp, _effects_grad, _grouped_spread_logp)
    own += (_tails_nu_logp, _grouped_cores)
    own += (_gram_schmidt, _gram_schmidt_grad, _log_scale, _half_t_logp, _marginal_logp)
    own += (_marginal_factors, _collapse_effects)
    own += (_weights_grad, _add_det_grad, direction_prior_const, _direction_logp)
    own += (_direction_grad, _lower_inverse, _matmul)
    own += (_expand_effects, _expand_deviations, _expand_weights)
    own += (_expand_components, _kernel, _tails_kernel, _components_kernel)
    for function in (*shared, *own, _n_dim, _n_expanded, _buffer_size):
        register_jitable(function)
    logp, expand = nutpie_cfuncs(_logp_cfunc, _expand_cfunc, on_disk)
    return {
        "kernel": numba.njit(cache=on_disk)(_kernel),
        "tails_kernel": numba.njit(cache=on_disk)(_tails_kernel),
        "components_kernel": numba.njit(cache=on_disk)(_components_kernel),
        "logp": logp,
        "expand": expand,
    }


def _warm_up(kernels: dict[str, Any]) -> None:
    from isbetter.cv.joint.spec import (
        COMPONENTS_PLACEHOLDERS,
        PLACEHOLDER_SCALARS,
        SPREAD_PLACEHOLDERS,
    )

    # the C functions compile (or load) when they are made
    forms = [{**form, "per_system": t} for form in SPREAD_PLACEHOLDERS.values() for t in (0.0, 1.0)]
    for form in (*forms, COMPONENTS_PLACEHOLDERS):
        data = {
            "means": np.zeros((2, 1)),
            "transform": np.ones((2, 1, 1)),
            "power": np.full(2, 6.0),
            **PLACEHOLDER_SCALARS,
            **form,
        }
        _warm_kernel(kernels, data)


def _warm_kernel(kernels: dict[str, Any], data: dict[str, Any]) -> None:
    buffer = _buffer(data)
    n_dim = _n_dim(buffer)
    x = np.zeros(n_dim)
    x[-1] = 1.0  # a raw matrix of components that Gram-Schmidt can orthonormalise
    _kernel_of(kernels, buffer)(x, buffer, np.empty(n_dim))


def _kernel_of(kernels: dict[str, Any], buffer: np.ndarray) -> Any:
    """Return the kernel of the tails that `buffer`'s head names."""
    if buffer[8] > 1.0:
        return kernels["components_kernel"]
    return kernels["tails_kernel" if buffer[8] > 0.0 else "kernel"]


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
    if mixing:
        spread = data["spread_rate"]
    else:  # the fixed psi, or the components' half-t scale A
        spread = data["half_t_scale"] if "half_t_scale" in data else data["spread_var"]
    tails = 2.0 if float(data.get("components", 0.0)) > 0.0 else data.get("per_system", 0.0)
    head = [
        float(q),
        float(d + 1),
        float(data["const"]),
        float(data["effect_hi"]),
        float(data["spread_df"]),
        float(spread),
        float(table.size),
        float(mixing),
        float(tails),
        *bounds,
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

    Raises
    ------
    InputError
        If `x` is not one vector of the model's number of coordinates (the kernel
        reads that many: a shorter `x` would be read past its end).
    """
    from isbetter.core.errors import InputError

    buffer = _buffer(data)
    kernel = _kernel_of(_kernels(), buffer)
    x = np.ascontiguousarray(x, dtype=float)
    n_dim = int(_n_dim(buffer))
    if x.shape != (n_dim,):
        raise InputError(
            f"`x` must be one vector of this model's {n_dim} unconstrained coordinates, "
            f"got shape {x.shape}."
        )
    grad = np.empty_like(x)
    return float(kernel(x, buffer, grad)), grad


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
    dims: dict[str, tuple[str, ...]] = {
        "b": ("system",),
        "precision": ("dataset",),
        "deviations": ("dataset", "contrast"),
    }
    if buffer[8] > 1.0:  # independent components: noise weights, weights and scales, Q
        d = k - 1
        names = ["nu", "noise_weight", "precision", "component_scale", "directions"]
        shapes = [(d,), (q,), (q, d), (d,), (d, d)]
        dims = {
            "nu": ("component",),
            "noise_weight": ("dataset",),
            "precision": ("dataset", "component"),
            "component_scale": ("component",),
            "directions": ("contrast", "component"),
        }
    elif buffer[8] > 0.0:  # per-system tails
        shapes[0], shapes[2] = (k,), (q, k)
        dims.update(nu=("system",), precision=("dataset", "system"))
    if buffer[7] > 0.0:  # Huang and Wand's prior
        names.append("spread_psi")
        shapes.append(())
    coords = {
        "system": pd.RangeIndex(k),
        "dataset": pd.RangeIndex(q),
        "contrast": pd.RangeIndex(k - 1),
        "unconstrained_parameter": pd.RangeIndex(n_dim),
    }
    if buffer[8] > 1.0:
        coords["component"] = pd.RangeIndex(k - 1)

    def initial_point(seed: int) -> np.ndarray:
        return _initial_point(n_dim, seed)

    return nutpie_model(
        (kernels["logp"], kernels["expand"]),
        buffer,
        n_dim,
        (names, shapes, coords, dims),
        initial_point,
    )
