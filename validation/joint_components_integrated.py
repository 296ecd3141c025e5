r"""Independent t components with each component's scale integrated out: a negative result.

The law of the package's ``JointPriors(tails="components")`` (``docs/joint_prior.md``,
"Independent components"), in other coordinates. With :math:`y_{ij} = (Q^T\tilde
u_i)_j`, the t components are scale mixtures, :math:`y_{ij} \mid \lambda_{ij}, s_j
\sim N(0, s_j^2/\lambda_{ij})`, :math:`\lambda_{ij} \sim \operatorname{Gamma}(\nu_j/2,
\nu_j/2)`, and Huang and Wand's half-t of each scale is :math:`s_j^2 \mid \psi_j \sim
\operatorname{InvGamma}(n/2, \psi_j/2)`, :math:`\psi_j \sim \operatorname{Gamma}(1/2,
1/(2nA^2))`. Given the weights and :math:`\psi_j`, :math:`s_j` integrates out in closed
form, so the sampler sees :math:`\log(\nu_j - 1)`, :math:`\beta`, the :math:`\eta_i`,
the weights (as :math:`\xi_{ij}`, the shared model's reparameterisation), the
:math:`\log\psi_j` and :math:`R` (:math:`Q` its Gram-Schmidt orthonormalisation); each
:math:`s_j` is drawn after the fit from its conditional
:math:`\operatorname{InvGamma}((n + q)/2, (\psi_j + \sum_i \lambda_{ij} y_{ij}^2)/2)`.

Measured (``docs/joint_prior.md``, "Integrating each component's scale out"): the same
posterior as the package's form, and no better mixing (K = 5 UCI: R-hat 1.82, 96% of
the iterations at NUTS's depth limit). Kept here, outside the package, with its PyMC
statement (:func:`build_model`, the reference its compiled density is tested against
in ``tests/cv/test_joint_components_integrated.py``) and :func:`fit`, which
``validation/joint_components.py --integrated`` runs.
"""

from __future__ import annotations

import math
from functools import lru_cache
from typing import Any

import numba
import numpy as np
import pandas as pd

from isbetter.cv.hierarchical.numerics.kernels import register_jitable_helpers
from isbetter.cv.hierarchical.pymc_backend import nu_prior_logp
from isbetter.cv.joint import compiled_backend as _backend
from isbetter.cv.joint.compiled_backend import (
    _HEAD,
    _deviations_logp,
    _effects_grad,
    _effects_logp,
    _expand_deviations,
    _expand_effects,
    _gram_schmidt,
    _gram_schmidt_grad,
    _precision_logp,
    _unpack,
)
from isbetter.cv.joint.pymc_backend import _gram_schmidt as _gram_schmidt_pt
from isbetter.cv.joint.spec import COMPONENTS_PLACEHOLDERS, PLACEHOLDER_SCALARS, contrast_basis
from isbetter.inference import libs
from isbetter.inference.compiled_density import nutpie_cfuncs, nutpie_model
from isbetter.inference.compiled_density import status as _status
from isbetter.inference.nu_prior import interpolate


def build_model(q: int, k: int) -> Any:
    r"""Return the independent-components model with each component's scale integrated out.

    The law of :func:`_components_model`, written as scale mixtures: with :math:`y_{ij}
    = (Q^T\tilde u_i)_j`, :math:`y_{ij} \mid \lambda_{ij}, s_j \sim N(0,
    s_j^2/\lambda_{ij})`, :math:`\lambda_{ij} \sim \operatorname{Gamma}(\nu_j/2,
    \nu_j/2)` (``precision``, sampled as ``precision_std`` like the shared model's
    weights), :math:`s_j^2 \mid \psi_j \sim \operatorname{InvGamma}(n/2, \psi_j/2)`,
    :math:`\psi_j \sim \operatorname{Gamma}(1/2, 1/(2 n A^2))` (Huang and Wand with
    d = 1: :math:`s_j \sim` half-:math:`t_n(0, A)`, ``spread_df`` n, ``half_t_scale``
    A). Then :math:`s_j` integrates out:

    .. math::

        p(y_{\cdot j} \mid \lambda_{\cdot j}, \psi_j) = \prod_i
        \Big(\frac{\lambda_{ij}}{2\pi}\Big)^{1/2}
        \frac{(\psi_j/2)^{n/2}\,\Gamma(\frac{n + q}2)}{\Gamma(\frac n2)}
        \Big(\frac{\psi_j + \sum_i \lambda_{ij} y_{ij}^2}{2}\Big)^{-(n + q)/2}.

    Free variables in the compiled density's order: ``nu_minus_one`` (``component``),
    ``effect_coords``, ``eta``, ``precision_std`` (``dataset`` x ``component``),
    ``component_log_psi``, ``direction_raw``; deterministics ``nu``, ``b``,
    ``deviations``, ``precision``, ``component_psi``, ``directions`` (:math:`Q`).
    """
    pm = libs.pymc()
    import pytensor.tensor as pt

    d = k - 1
    basis = contrast_basis(k)
    coords = {
        "dataset": np.arange(q),
        "system": np.arange(k),
        "contrast": np.arange(d),
        "component": np.arange(d),
    }
    with pm.Model(coords=coords) as model:
        data = {
            "means": pm.Data("means", np.zeros((q, d)), dims=("dataset", "contrast")),
            "transform": pm.Data("transform", np.tile(np.eye(d), (q, 1, 1))),
            "power": pm.Data("power", np.full(q, 6.0), dims="dataset"),
        }
        for name, value in {**PLACEHOLDER_SCALARS, **COMPONENTS_PLACEHOLDERS}.items():
            data[name] = pm.Data(name, value)
        x = pm.HalfFlat("nu_minus_one", dims="component")
        pm.Potential("nu_prior", nu_prior_logp(x, data).sum())
        nu = pm.Deterministic("nu", x + 1.0, dims="component")
        beta = pm.Uniform(
            "effect_coords", lower=-data["effect_hi"], upper=data["effect_hi"], dims="contrast"
        )
        pm.Deterministic("b", pt.dot(basis, beta), dims="system")
        eta = pm.Flat("eta", dims=("dataset", "contrast"))
        shift = (data["transform"] * eta[:, None, :]).sum(axis=-1)
        dev = pm.Deterministic(
            "deviations", data["means"] - beta[None, :] - shift, dims=("dataset", "contrast")
        )
        xi = pm.Flat("precision_std", dims=("dataset", "component"))
        spread = pt.sqrt(2.0 * (nu + 1.0)) / nu  # log lambda_ij = -1/nu_j + spread_j xi_ij
        log_lam = -1.0 / nu[None, :] + spread[None, :] * xi
        lam = pm.Deterministic("precision", pt.exp(log_lam), dims=("dataset", "component"))
        gamma = pm.logp(pm.Gamma.dist(alpha=nu[None, :] / 2.0, beta=nu[None, :] / 2.0), lam)
        pm.Potential("precision_prior", (gamma + log_lam).sum() + q * pt.log(spread).sum())
        df, a_scale = data["spread_df"], data["half_t_scale"]
        rate = 1.0 / (2.0 * df * pt.square(a_scale))
        log_psi = pm.Flat("component_log_psi", dims="component")
        psi = pm.Deterministic("component_psi", pt.exp(log_psi), dims="component")
        pm.Potential(
            "component_psi_prior",
            (0.5 * log_psi - rate * psi).sum() + 0.5 * d * pt.log(rate / np.pi),
        )
        raw = pm.Flat("direction_raw", dims=("contrast", "component"))
        pm.Potential(
            "direction_prior", -0.5 * pt.square(raw).sum() - 0.5 * d * d * np.log(2.0 * np.pi)
        )
        directions = pm.Deterministic(
            "directions", _gram_schmidt_pt(raw, d), dims=("contrast", "component")
        )
        y = pt.dot(dev, directions)  # (Q^T u~_i)_j
        total = psi + (lam * pt.square(y)).sum(axis=0)
        half = 0.5 * (df + q)
        integrated = (
            0.5 * log_lam.sum()
            - 0.5 * q * d * np.log(2.0 * np.pi)
            + (0.5 * df * pt.log(psi / 2.0) - half * pt.log(total / 2.0)).sum()
            + d * (pt.gammaln(half) - pt.gammaln(0.5 * df))
        )
        pm.Potential("deviation_prior", integrated)
        power = data["power"]
        loglik = data["const"] - (power * pt.log1p(pt.square(eta).sum(axis=-1) / (2 * power))).sum()
        pm.Potential("loglik", loglik)
    return model


def _kernel(
    x: np.ndarray, buffer: np.ndarray, grad: np.ndarray
) -> float:  # pragma: no cover - numba
    # independent t components with each scale integrated out (docs/joint_prior.md):
    # y_ij = (Q^T u~_i)_j ~ N(0, s_j^2 / lambda_ij), lambda_ij ~ Gamma(nu_j/2, nu_j/2) (xi_ij
    # as the shared model's xi_i), s_j^2 | psi_j ~ InvGamma(n/2, psi_j/2), psi_j ~ Gamma(1/2,
    # 1/(2 n A^2)) (n, A: buffer[4], buffer[5]); s_j integrated out. Coordinates: d
    # log(nu_j - 1), d beta, q x d eta, q x d xi, d log psi_j, d x d raw (Q = Gram-Schmidt).
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
    beta = np.empty(d)
    sb = np.empty(d)
    logp = _effects_logp(x, d, buffer[3], beta, sb, logp)
    dev = np.empty((q, d))
    logp = _deviations_logp(x, 2 * d, means, tri, power, beta, dev, grad, logp)
    at_xi = 2 * d + q * d
    lam = np.empty((q, d))
    column = np.empty(q)
    d_nu = np.empty(d)
    for j in range(d):  # the lambda_ij^(1/2) of the normal's density: extra 1/2
        logp, d_nu[j] = _precision_logp(x, at_xi + j, d, nu[j], 0.5, column, grad, logp)
        lam[:, j] = column
    at_psi = at_xi + q * d
    at_r = at_psi + d
    raw = np.empty((d, d))
    for a in range(d):
        for b in range(d):
            raw[a, b] = x[at_r + a * d + b]
            logp -= 0.5 * raw[a, b] * raw[a, b] + 0.5 * math.log(2.0 * math.pi)
    basis_q = np.zeros((d, d))
    upper = np.zeros((d, d))
    if not _gram_schmidt(raw, basis_q, upper):
        grad[:] = 0.0
        return -math.inf
    g_q = np.zeros((d, d))  # d logp / d Q
    g_beta = np.zeros(d)
    logp = _integrated_logp((dev, tri, basis_q, lam), buffer, x, at_psi, g_q, g_beta, grad, logp)
    if not math.isfinite(logp):  # an extreme trial point: density 0
        grad[:] = 0.0
        return -math.inf
    g_raw = np.empty((d, d))
    _gram_schmidt_grad(basis_q, upper, g_q, g_raw)
    for a in range(d):
        for b in range(d):
            grad[at_r + a * d + b] = g_raw[a, b] - raw[a, b]
    for j in range(d):  # d logp / d log lambda_ij to xi_ij, and nu_j's share through it
        spread = math.sqrt(2.0 * (nu[j] + 1.0)) / nu[j]
        d_spread = spread * (0.5 / (nu[j] + 1.0) - 1.0 / nu[j])
        for i in range(q):
            at = at_xi + i * d + j
            d_nu[j] += grad[at] * (1.0 / (nu[j] * nu[j]) + d_spread * x[at])
            grad[at] *= spread
        grad[j] += d_nu[j] * (nu[j] - 1.0)
    _effects_grad(g_beta, d, buffer[3], sb, grad)
    return logp


def _integrated_logp(
    arrays: tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray],
    buffer: np.ndarray,
    x: np.ndarray,
    at_psi: int,
    g_q: np.ndarray,
    g_beta: np.ndarray,
    grad: np.ndarray,
    logp: float,
) -> float:  # pragma: no cover - numba
    # sum_j [log p(psi_j) + log psi_j + (n/2) log(psi_j/2) + lgamma((n + q)/2) - lgamma(n/2)
    # - (n + q)/2 log((psi_j + S_j)/2)] - q d/2 log(2 pi), S_j = sum_i lambda_ij y_ij^2.
    # Adds d logp / d log lambda_ij to grad (the xi's slots), fills grad[at_psi + j], adds
    # to g_q, g_beta and the eta part of grad; arrays: u~ (q x d), transform, Q, lambda
    dev, tri, basis_q, lam = arrays
    q, d = dev.shape
    df = buffer[4]
    rate = 1.0 / (2.0 * df * buffer[5] * buffer[5])
    half = 0.5 * (df + q)
    logp += d * (math.lgamma(half) - math.lgamma(0.5 * df) + 0.5 * math.log(rate / math.pi))
    logp -= 0.5 * q * d * math.log(2.0 * math.pi)
    at_xi = at_psi - q * d
    y = np.empty((q, d))
    g_total = np.empty(d)  # d logp / d S_j
    for j in range(d):
        total = 0.0
        for i in range(q):
            acc = 0.0
            for a in range(d):
                acc += basis_q[a, j] * dev[i, a]
            y[i, j] = acc
            total += lam[i, j] * acc * acc
        psi = math.exp(x[at_psi + j])
        total += psi
        logp += (0.5 * df + 0.5) * x[at_psi + j] - rate * psi - 0.5 * df * math.log(2.0)
        logp -= half * math.log(0.5 * total)
        grad[at_psi + j] = 0.5 * df + 0.5 - rate * psi - half * psi / total
        g_total[j] = -half / total
    g_dev = np.empty(d)
    for i in range(q):
        for a in range(d):
            g_dev[a] = 0.0
        for j in range(d):
            grad[at_xi + i * d + j] += g_total[j] * lam[i, j] * y[i, j] * y[i, j]
            g_y = 2.0 * g_total[j] * lam[i, j] * y[i, j]
            for a in range(d):
                g_q[a, j] += g_y * dev[i, a]
                g_dev[a] += basis_q[a, j] * g_y  # d logp / d u~_ia
        _deviation_grad(i, g_dev, tri, at_xi - q * d, g_beta, grad)
    return logp


def _deviation_grad(
    i: int, g_dev: np.ndarray, tri: np.ndarray, off: int, g_beta: np.ndarray, grad: np.ndarray
) -> None:  # pragma: no cover - numba
    # d logp / d u~_i (g_dev) to beta (g_beta) and to eta_i (at x[off + i d]): u~_i = means_i
    # - beta - transform_i eta_i
    d = g_dev.shape[0]
    for a in range(d):
        g_beta[a] -= g_dev[a]
    for m in range(d):
        acc = 0.0
        for j in range(m + 1):
            acc += tri[i, j, m] * g_dev[j]
        grad[off + i * d + m] -= acc


def _n_dim(q: int, d: int) -> int:  # pragma: no cover - numba
    # d nu's, d effects, q d eta's, q d weights, d psi's, d x d raw
    return 3 * d + 2 * q * d + d * d


def _n_expanded(q: int, d: int) -> int:  # pragma: no cover - numba
    # nu (d), b (K), deviations (q d), weights (q d), psi (d), Q (d x d)
    return d + (d + 1) + 2 * q * d + d + d * d


def _logp_cfunc(dim, x_, out_, logp_, user_data_):  # type: ignore[no-untyped-def]  # pragma: no cover
    head = numba.carray(user_data_, (_HEAD,), dtype=np.float64)
    q, d = int(head[0]), int(head[1]) - 1
    n_dim = _n_dim(q, d)
    if dim != n_dim:
        return -1
    size = _HEAD + q * d + q * d * d + q + int(head[6])
    buffer = numba.carray(user_data_, (size,), dtype=np.float64)
    x = numba.carray(x_, (n_dim,))
    out = numba.carray(out_, (n_dim,))
    logp = numba.carray(logp_, (1,))
    logp[0] = _kernel(x, buffer, out)
    return _status(logp[0], out)


def _expand_cfunc(dim, expanded, x_, out_, user_data_):  # type: ignore[no-untyped-def]  # pragma: no cover
    head = numba.carray(user_data_, (_HEAD,), dtype=np.float64)
    q, k = int(head[0]), int(head[1])
    d = k - 1
    if dim != _n_dim(q, d) or expanded != _n_expanded(q, d):
        return -1
    size = _HEAD + q * d + q * d * d + q + int(head[6])
    buffer = numba.carray(user_data_, (size,), dtype=np.float64)
    means, tri, _, _ = _unpack(buffer)
    x = numba.carray(x_, (dim,))
    out = numba.carray(out_, (expanded,))
    for j in range(d):
        out[j] = 1.0 + math.exp(x[j])
    beta = _expand_effects(x, d, buffer[3], k, out, d)
    at, at_x = d + k, 2 * d
    _expand_deviations(x, at_x, means, tri, beta, out, at)
    at += q * d
    at_x += q * d
    for i in range(q):
        for j in range(d):
            spread = math.sqrt(2.0 * (out[j] + 1.0)) / out[j]
            out[at + i * d + j] = math.exp(-1.0 / out[j] + spread * x[at_x + i * d + j])
    at += q * d
    at_x += q * d
    for j in range(d):
        out[at + j] = math.exp(x[at_x + j])
    raw = np.empty((d, d))
    for a in range(d):
        for b in range(d):
            raw[a, b] = x[at_x + d + a * d + b]
    basis_q = np.zeros((d, d))
    upper = np.zeros((d, d))
    _gram_schmidt(raw, basis_q, upper)  # a degenerate raw (probability 0) leaves zeros
    for a in range(d):
        for b in range(d):
            out[at + d + a * d + b] = basis_q[a, b]
    return 0


@lru_cache(maxsize=1)
def _compiled() -> dict[str, Any]:
    """Compile the density (in memory: a few tens of seconds per process)."""
    from numba.extending import register_jitable

    register_jitable_helpers()
    for function in (
        _backend._softplus,
        _backend._sigmoid,
        _backend._digamma,
        _status,
        _unpack,
        _backend._helmert,
        _precision_logp,
        _deviations_logp,
        _effects_logp,
        _effects_grad,
        _gram_schmidt,
        _gram_schmidt_grad,
        _expand_effects,
        _expand_deviations,
        _deviation_grad,
        _integrated_logp,
        _kernel,
        _n_dim,
        _n_expanded,
    ):
        register_jitable(function)
    logp, expand = nutpie_cfuncs(_logp_cfunc, _expand_cfunc, False)
    return {"kernel": numba.njit(_kernel), "logp": logp, "expand": expand}


def load_density() -> None:
    """Compile the density now (the package's compiled helpers load from its cache)."""
    _compiled()


def model_data(
    table: Any, systems: tuple[str, ...], rope: float = 0.0
) -> tuple[Any, dict[str, Any]]:
    """Return the prepared data and the model's data (the package's components form's)."""
    from isbetter.cv.joint.spec import JointPriors, prepare

    priors = JointPriors(tails="components")
    prepared = prepare(table, systems, rope=rope, priors=priors)
    return prepared, prepared.model_data(priors)


def log_density(x: np.ndarray, data: dict[str, Any]) -> tuple[float, np.ndarray]:
    """Return the compiled log density and its gradient at the unconstrained `x`."""
    buffer = _backend._buffer(data)
    x = np.ascontiguousarray(x, dtype=float)
    grad = np.empty_like(x)
    return float(_compiled()["kernel"](x, buffer, grad)), grad


def draw_loading(post: Any, df: float, rng: np.random.Generator) -> np.ndarray:
    r"""Return draws of the loading :math:`Q\operatorname{diag}(s)` (model units).

    Each :math:`s_j^2` drawn for each posterior draw from its conditional
    :math:`\operatorname{InvGamma}((n + q)/2, (\psi_j + \sum_i \lambda_{ij}
    y_{ij}^2)/2)`, :math:`y_{ij} = (Q^T\tilde u_i)_j`, with `rng`.
    """
    directions = post["directions"].to_numpy()
    y = np.einsum("cnia,cnaj->cnij", post["deviations"].to_numpy(), directions)
    total = post["component_psi"].to_numpy() + (post["precision"].to_numpy() * y**2).sum(axis=2)
    shape = 0.5 * (df + y.shape[2])
    scale_sq = 0.5 * total / rng.gamma(shape, size=total.shape)
    return directions * np.sqrt(scale_sq)[..., None, :]


def fit(
    table: Any,
    systems: tuple[str, ...],
    *,
    seed: int,
    draws: int,
    tune: int,
    chains: int,
    rope: float = 0.0,
) -> Any:
    """Fit this form with nutpie through the package's sampling path; return a JointFit.

    The loading is drawn as :func:`draw_loading` describes (a random stream of its own
    derived from `seed`), so that :attr:`JointFit.loading` and the predictive work as
    for the package's components fits.
    """
    from isbetter.cv.joint.model import TARGET_ACCEPT
    from isbetter.inference.sampling import sample

    prepared, data = model_data(table, systems, rope)
    buffer = _backend._buffer(data)
    q, k = int(buffer[0]), int(buffer[1])
    d = k - 1
    kernels = _compiled()
    n_dim = _n_dim(q, d)
    names = ["nu", "b", "deviations", "precision", "component_psi", "directions"]
    shapes = [(d,), (k,), (q, d), (q, d), (d,), (d, d)]
    dims = {
        "nu": ("component",),
        "b": ("system",),
        "deviations": ("dataset", "contrast"),
        "precision": ("dataset", "component"),
        "component_psi": ("component",),
        "directions": ("contrast", "component"),
    }
    coords = {
        "system": pd.RangeIndex(k),
        "dataset": pd.RangeIndex(q),
        "contrast": pd.RangeIndex(d),
        "component": pd.RangeIndex(d),
        "unconstrained_parameter": pd.RangeIndex(n_dim),
    }
    compiled = nutpie_model(
        (kernels["logp"], kernels["expand"]),
        buffer,
        n_dim,
        (names, shapes, coords, dims),
        lambda s: np.random.default_rng(s).uniform(-1.0, 1.0, size=n_dim),
    )
    idata = sample(
        None,
        draws=draws,
        tune=tune,
        chains=chains,
        cores=None,
        seed=seed,
        backend="nutpie",
        compiled=compiled,
        target_accept=TARGET_ACCEPT,
    )
    post = idata.posterior
    rng = np.random.default_rng(np.random.SeedSequence(seed).spawn(1)[0])
    loading = draw_loading(post, float(data["spread_df"]), rng)
    post["loading"] = (("chain", "draw", "contrast", "component"), loading)
    return components_fit(
        idata, prepared, {"form": "components, scales integrated out", "seed": seed}
    )


def components_fit(idata: Any, prepared: Any, settings: dict[str, Any]) -> Any:
    """Return the :class:`~isbetter.cv.joint.model.JointFit` of a components form's draws.

    `idata`'s posterior holds ``b``, ``nu`` and ``loading`` (model units); adds
    ``pair_scale`` and ``nu_range`` to it, as the package's components fits.
    """
    from isbetter.cv.joint.model import (
        DIAGNOSED_COMPONENTS,
        JointFit,
        _components_spread,
        _pair_scales,
    )
    from isbetter.inference.sampling import diagnose

    post = idata.posterior
    loading = post["loading"].to_numpy() * prepared.scale
    spread = _components_spread(post, loading)
    post["pair_scale"] = (("chain", "draw", "pair"), _pair_scales(spread))
    return JointFit(
        data=prepared,
        effects=post["b"].to_numpy() * prepared.scale,
        spread=spread,
        nu=post["nu"].to_numpy(),
        diagnostics=diagnose(idata, DIAGNOSED_COMPONENTS, backend="nutpie"),
        settings=settings,
        idata=idata,
        loading=loading,
    )
