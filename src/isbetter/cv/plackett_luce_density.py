r"""The Plackett–Luce model's log density written for nutpie: compiled once per machine.

:func:`isbetter.cv.plackett_luce.build_model` states the model in PyMC. nutpie
samples a PyMC model by compiling its PyTensor graph with numba, which costs
20-80 s in every new process (and again for every number of systems), far more
than sampling it (about 2 s for 14 systems on 116 data sets). Here the same log
density and its gradient, in the same unconstrained coordinates — PyMC's
:math:`\theta_k = \log g_k`, with the log transform's Jacobian — are one numba
function of arrays of any size, kept in isbetter's on-disk cache
(:mod:`isbetter.core.cache`), and handed to nutpie through its public
``from_pyfunc`` interface. ``tests/ranking/test_plackett_luce.py`` checks value and
gradient against PyMC's compiled ``logp``/``dlogp`` of the same model to 1e-9.

With :math:`g_k = e^{\theta_k}` and :math:`e_k = e^{\theta_k - m}`
(:math:`m = \max_k \theta_k`, for range),

.. math::

    \log p(\theta) = \sum_k [\alpha_k \theta_k - g_k - \log\Gamma(\alpha_k)]
      + \sum_i \sum_{j < K} [\theta_{\sigma_{ij}} - m - \log S_{ij}],
    \qquad S_{ij} = \sum_{l \ge j} e_{\sigma_{il}},

.. math::

    \partial_{\theta_k} \log p = \alpha_k - g_k
      + \sum_i \Big[\mathbb{1}(k \text{ not last in } \sigma_i)
      - e_k \sum_{j \le \min(p_{ik}, K - 2)} S_{ij}^{-1}\Big],

where :math:`p_{ik}` is k's place on data set i.
"""

from __future__ import annotations

import math
from typing import Any

import numba
import numpy as np
from scipy import special

__all__ = ["log_density", "nutpie_model"]


def _kernel(
    theta: np.ndarray,
    rankings: np.ndarray,
    alpha: np.ndarray,
    lgamma_alpha: np.ndarray,
    grad: np.ndarray,
) -> float:  # pragma: no cover - compiled by numba
    """Return log p(theta) and write its gradient into `grad` (see the module docstring)."""
    k = theta.shape[0]
    m = theta.max()
    e = np.empty(k)
    logp = 0.0
    for a in range(k):
        e[a] = math.exp(theta[a] - m)
        g = math.exp(theta[a])
        logp += alpha[a] * theta[a] - g - lgamma_alpha[a]
        grad[a] = alpha[a] - g
    suffix = np.empty(k)
    for i in range(rankings.shape[0]):
        total = 0.0
        for j in range(k - 1, -1, -1):
            total += e[rankings[i, j]]
            suffix[j] = total
        inverse = 0.0  # sum of 1 / S_ij over the places j up to this one (j < K - 1)
        for j in range(k):
            r = rankings[i, j]
            if j < k - 1:
                logp += theta[r] - m - math.log(suffix[j])
                grad[r] += 1.0
                inverse += 1.0 / suffix[j]
            grad[r] -= e[r] * inverse
    return logp


def _build(on_disk: bool) -> dict[str, Any]:
    vector = numba.types.Array(numba.float64, 1, "C")
    signature = numba.float64(
        vector, numba.types.Array(numba.int64, 2, "C"), vector, vector, vector
    )
    return {"logp": numba.njit(signature, cache=on_disk, nogil=True)(_kernel)}


def _kernels() -> dict[str, Any]:
    from isbetter.core import cache

    return cache.compiled("plackett_luce_density", _build, lambda _: None)


def _data(rankings: np.ndarray, alpha: np.ndarray) -> dict[str, np.ndarray]:
    """Return the kernel's data: rankings (int64), alpha and log Gamma(alpha), contiguous."""
    return {
        "rankings": np.ascontiguousarray(rankings, dtype=np.int64),
        "alpha": np.ascontiguousarray(alpha, dtype=float),
        "lgamma_alpha": np.ascontiguousarray(special.gammaln(alpha), dtype=float),
    }


def log_density(
    theta: np.ndarray, rankings: np.ndarray, alpha: np.ndarray
) -> tuple[float, np.ndarray]:
    r"""Return the log density and its gradient at the unconstrained position `theta`.

    `theta` is :math:`\log g` (PyMC's ``g_log__``), `rankings` the data sets'
    rankings (system indices, best first), `alpha` the K concentrations.
    """
    data = _data(rankings, alpha)
    x = np.array(theta, dtype=float)  # a contiguous copy
    grad = np.empty(x.shape[0])
    logp = _kernels()["logp"](x, data["rankings"], data["alpha"], data["lgamma_alpha"], grad)
    return float(logp), grad


def nutpie_model(rankings: np.ndarray, alpha: np.ndarray) -> Any:
    r"""Return a nutpie model of the Plackett–Luce posterior, sampling :math:`\theta = \log g`.

    The draws hold ``g_log__`` and the weights ``w`` (dims ``system``); the initial
    point is PyMC's (each :math:`\theta_k` at :math:`\log \alpha_k`, the Gamma's
    moment) jittered by U(-1, 1), as nutpie jitters a PyMC model's.
    """
    from nutpie.compiled_pyfunc import from_pyfunc

    kernel = _kernels()["logp"]
    data = _data(rankings, alpha)
    k = data["alpha"].shape[0]
    start = np.log(data["alpha"])

    def make_logp() -> Any:
        def logp(
            x: np.ndarray, rankings: np.ndarray, alpha: np.ndarray, lgamma_alpha: np.ndarray
        ) -> tuple[float, np.ndarray]:
            grad = np.empty(k)
            return kernel(x, rankings, alpha, lgamma_alpha, grad), grad

        return logp

    def make_expand(seed1: int, seed2: int, chain: int) -> Any:
        def expand(x: np.ndarray, **_: Any) -> dict[str, np.ndarray]:
            e = np.exp(x - x.max())
            return {"g_log__": np.array(x, copy=True), "w": e / e.sum()}

        return expand

    def initial_point(seed: int) -> np.ndarray:
        return start + np.random.default_rng(seed).uniform(-1.0, 1.0, size=k)

    return from_pyfunc(
        k,
        make_logp,
        make_expand,
        [np.dtype("float64"), np.dtype("float64")],
        [(k,), (k,)],
        ["g_log__", "w"],
        coords={"system": np.arange(k)},
        dims={"g_log__": ("system",), "w": ("system",)},
        shared_data=data,
        make_initial_point_fn=initial_point,
    )
