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
gradient against PyMC's compiled ``logp``/``dlogp`` of the same model (which sums
a tied group over its orders one by one) to 1e-9, and the gradient against
central differences.

The data are weak orders: each row a data set's systems best first, ``ends[i, j]``
the end (exclusive) of the group of tied systems at place j (``j + 1`` when
untied), and ``counts[i]`` how many data sets share that row. A group G at places
:math:`j_0 \ldots j_1 - 1` contributes the probability that its systems take those
places in *some* order (:mod:`isbetter.cv.plackett_luce`); the last group
contributes 1. With :math:`g_k = e^{\theta_k}`, :math:`e_k = e^{\theta_k - m}`
(:math:`m = m_{j_0}`, the largest :math:`\theta` from place :math:`j_0` on, for
range) and :math:`R` the sum of :math:`e` over
the places from :math:`j_1` on,

.. math::

    \log p(\theta) = \sum_k [\alpha_k \theta_k - g_k - \log\Gamma(\alpha_k)]
      + \sum_i c_i \sum_{G} \Big[\sum_{k \in G} (\theta_k - m_{j_0}) + \log H_G\Big],

    H_A = \sum_{k \in A} \frac{H_{A \setminus k}}{D(A \setminus k)}, \quad H_\emptyset = 1,
    \quad D(B) = R + \sum_{l \in G \setminus B} e_l,

a recursion over the :math:`2^{|G|}` subsets of G that sums the :math:`|G|!`
orders' Plackett–Luce products, every term positive (no cancellation). An untied
place is the case :math:`|G| = 1`: :math:`H = 1 / S_{j}`, :math:`S_j` the sum of
:math:`e` from place j on. The gradient comes from the recursion run backward
(the adjoints of every :math:`H_A` and :math:`D(B)`, in :math:`O(2^{|G|}|G|)` with
the value: one partial per member of G and one for :math:`R`); :math:`R` enters
through every system placed after G, so those collect :math:`e_a\,\partial \log
H_G / \partial R`. Every place's terms are scaled by the largest :math:`\theta` from
that place on (H is homogeneous of degree :math:`-|G|`), so that neither the
places' sums nor a group of small weights underflow to 0 when the weights span more
than :math:`e^{700}` (a NUTS trajectory's far end), where a division by zero stopped
nutpie's sampler with a panic. Untied places are then exact; a tied group whose
members' weights (relative to the largest from its first place on) still leave the
floats' range — a sum D below 1e-150 (its square underflows), or H that overflows — has
log density
:math:`-\infty` there (the trajectory is rejected as divergent): its true value is
below the mode's by hundreds of nats, so the posterior mass cut off is nil.
"""

from __future__ import annotations

import math
from typing import Any

import numba
import numpy as np
from scipy import special

from isbetter.inference import libs

__all__ = ["log_density", "nutpie_model"]


#: the smallest sum D(B) a tied group's recursion takes (its square must be a normal float)
_TINY = 1e-150


def _group(
    e: np.ndarray,
    members: np.ndarray,
    g: int,
    rest: float,
    h: np.ndarray,
    bar: np.ndarray,
    sub: np.ndarray,
    out: np.ndarray,
) -> float:  # pragma: no cover - compiled by numba
    """Return log H of a tied group of `g` members; write d log H / d log e_l into `out`.

    `e` holds the members' (rescaled) weights ``e[members[l]]``, `rest` the rest's sum R;
    ``out[l]`` for member l, ``out[g]`` = d log H / d R; -inf (`out` unset) where a sum
    D is below :data:`_TINY` or H leaves the floats. `h`, `bar`, `sub` are scratch of
    at least ``2**g`` values. The recursion runs forward over the subsets (H), then
    backward (the adjoints of H and of each D), so value and gradient cost
    O(2^g g) together.
    """
    full = (1 << g) - 1
    sub[0] = 0.0  # sub[mask]: the members' e summed over mask
    for mask in range(1, full + 1):
        low = mask & -mask
        bit = 0
        while (1 << bit) != low:
            bit += 1
        sub[mask] = sub[mask ^ low] + e[members[bit]]
    for mask in range(full + 1):
        h[mask] = 0.0
    h[0] = 1.0
    for b in range(full):  # push V(B) = H_B / D(B) into every B + {l}
        if rest + sub[full ^ b] < _TINY:
            return -math.inf  # D(B)**2 would underflow: see the module's notes
        v = h[b] / (rest + sub[full ^ b])
        outside = full ^ b
        while outside:
            low = outside & -outside
            h[b | low] += v
            outside ^= low
    top = h[full]
    if not 0.0 < top < math.inf:
        return -math.inf
    bar[full] = 1.0 / top  # the adjoint of log H
    for b in range(full - 1, -1, -1):
        vbar = 0.0
        outside = full ^ b
        while outside:
            low = outside & -outside
            vbar += bar[b | low]
            outside ^= low
        d = rest + sub[full ^ b]
        bar[b] = vbar / d
        sub[full ^ b] = -vbar * h[b] / (d * d)  # now the adjoint of D(B) (R + e outside B)
    for x in range(g + 1):
        out[x] = 0.0
    for c in range(1, full + 1):  # D(B) holds e_x for x in c = G minus B, and R
        out[g] += sub[c]
        inside = c
        x = 0
        while inside:
            if inside & 1:
                out[x] += sub[c]
            inside >>= 1
            x += 1
    for x in range(g):
        out[x] *= e[members[x]]
    return math.log(top)


def _widest(ends: np.ndarray) -> int:  # pragma: no cover - compiled by numba
    """Return the size of the largest tied group that does not close its ranking (at least 1)."""
    k = ends.shape[1]
    widest = 1
    for i in range(ends.shape[0]):
        for j in range(k):
            if ends[i, j] < k:
                widest = max(widest, ends[i, j] - j)
    return widest


def _prior(
    theta: np.ndarray, alpha: np.ndarray, lgamma_alpha: np.ndarray, grad: np.ndarray
) -> float:  # pragma: no cover - compiled by numba
    """Return the log prior of theta (log Gamma(alpha, 1) weights) and write its gradient."""
    logp = 0.0
    for a in range(theta.shape[0]):
        g = math.exp(theta[a])
        logp += alpha[a] * theta[a] - g - lgamma_alpha[a]
        grad[a] = alpha[a] - g
    return logp


def _suffixes(
    theta: np.ndarray, order: np.ndarray, top: np.ndarray, suffix: np.ndarray
) -> None:  # pragma: no cover - compiled by numba
    """Fill the largest theta and the scaled sums of exp(theta) from each place on.

    top[j] is the largest theta from place j of `order` on; suffix[j] the sum of
    exp(theta - top[j]) from place j on (at least 1, so its log never underflows).
    """
    k = theta.shape[0]
    top[k], suffix[k] = -math.inf, 0.0
    for j in range(k - 1, -1, -1):
        t = theta[order[j]]
        top[j] = max(top[j + 1], t)
        below = suffix[j + 1] * math.exp(top[j + 1] - top[j]) if j < k - 1 else 0.0
        suffix[j] = below + math.exp(t - top[j])


def _kernel(
    theta: np.ndarray,
    rankings: np.ndarray,
    ends: np.ndarray,
    counts: np.ndarray,
    alpha: np.ndarray,
    lgamma_alpha: np.ndarray,
    grad: np.ndarray,
) -> float:  # pragma: no cover - compiled by numba
    """Return log p(theta) and write its gradient into `grad` (see the module docstring)."""
    k = theta.shape[0]
    logp = _prior(theta, alpha, lgamma_alpha, grad)
    widest = _widest(ends)
    h = np.empty(1 << widest)
    bar = np.empty(1 << widest)
    sub = np.empty(1 << widest)
    out = np.empty(widest + 1)
    scaled = np.empty(k)
    top = np.empty(k + 1)  # top[j]: the largest theta from place j on
    suffix = np.empty(k + 1)  # suffix[j]: sum of exp(theta - top[j]) from place j on (>= 1)
    for i in range(rankings.shape[0]):
        c = counts[i]
        _suffixes(theta, rankings[i], top, suffix)
        j = 0
        while j < k:
            end = ends[i, j]
            size = end - j
            if end == k:  # the last group: probability 1
                break
            if size == 1:
                r = rankings[i, j]
                logp += c * (theta[r] - top[j] - math.log(suffix[j]))
                grad[r] += c
                for p in range(j, k):  # d log suffix[j] / d theta_a, a from place j on
                    a = rankings[i, p]
                    grad[a] -= c * math.exp(theta[a] - top[j]) / suffix[j]
            else:
                for p in range(j, k):
                    scaled[rankings[i, p]] = math.exp(theta[rankings[i, p]] - top[j])
                members = rankings[i, j:end]
                rest = 0.0
                for p in range(end, k):
                    rest += scaled[rankings[i, p]]
                log_h = _group(scaled, members, size, rest, h, bar, sub, out)
                if log_h == -math.inf:  # weights beyond the floats' range: see the notes
                    grad[:] = 0.0
                    return -math.inf
                logp += c * log_h
                for x in range(size):
                    r = members[x]
                    logp += c * (theta[r] - top[j])
                    grad[r] += c * (1.0 + out[x])
                for p in range(end, k):  # R = sum of the rest's e: d R / d theta_a = e_a
                    a = rankings[i, p]
                    grad[a] += c * scaled[a] * out[size]
            j = end
    return logp


_JITABLE: list[bool] = []


def _build(on_disk: bool) -> dict[str, Any]:
    if not _JITABLE:  # the helpers, callable from the kernel (once per process)
        from numba.extending import register_jitable

        register_jitable(_group)
        register_jitable(_widest)
        register_jitable(_prior)
        register_jitable(_suffixes)
        _JITABLE.append(True)
    vector = numba.types.Array(numba.float64, 1, "C")
    matrix = numba.types.Array(numba.int64, 2, "C")
    signature = numba.float64(vector, matrix, matrix, vector, vector, vector, vector)
    return {"logp": numba.njit(signature, cache=on_disk, nogil=True)(_kernel)}


def _kernels() -> dict[str, Any]:
    from isbetter.core import cache

    return cache.compiled("plackett_luce_density", _build, lambda _: None)


def _data(
    rankings: np.ndarray, ends: np.ndarray, counts: np.ndarray, alpha: np.ndarray
) -> dict[str, np.ndarray]:
    """Return the kernel's data, contiguous: the weak orders, their counts, alpha, lgamma(alpha)."""
    return {
        "rankings": np.ascontiguousarray(rankings, dtype=np.int64),
        "ends": np.ascontiguousarray(ends, dtype=np.int64),
        "counts": np.ascontiguousarray(counts, dtype=float),
        "alpha": np.ascontiguousarray(alpha, dtype=float),
        "lgamma_alpha": np.ascontiguousarray(special.gammaln(alpha), dtype=float),
    }


def log_density(
    theta: np.ndarray,
    rankings: np.ndarray,
    ends: np.ndarray,
    counts: np.ndarray,
    alpha: np.ndarray,
) -> tuple[float, np.ndarray]:
    r"""Return the log density and its gradient at the unconstrained position `theta`.

    `theta` is :math:`\log g` (PyMC's ``g_log__``); `rankings`, `ends` and `counts`
    the weak orders (:func:`isbetter.cv.plackett_luce.weak_orders`), `alpha` the K
    concentrations.
    """
    data = _data(rankings, ends, counts, alpha)
    x = np.array(theta, dtype=float)  # a contiguous copy
    grad = np.empty(x.shape[0])
    logp = _kernels()["logp"](x, *data.values(), grad)
    return float(logp), grad


def nutpie_model(
    rankings: np.ndarray, ends: np.ndarray, counts: np.ndarray, alpha: np.ndarray
) -> Any:
    r"""Return a nutpie model of the Plackett–Luce posterior, sampling :math:`\theta = \log g`.

    The draws hold ``g_log__`` and the weights ``w`` (dims ``system``); the initial
    point is PyMC's (each :math:`\theta_k` at :math:`\log \alpha_k`, the Gamma's
    moment) jittered by U(-1, 1), as nutpie jitters a PyMC model's.
    """
    from_pyfunc = libs.nutpie().compiled_pyfunc.from_pyfunc

    kernel = _kernels()["logp"]
    data = _data(rankings, ends, counts, alpha)
    k = data["alpha"].shape[0]
    start = np.log(data["alpha"])

    def make_logp() -> Any:
        def logp(
            x: np.ndarray,
            rankings: np.ndarray,
            ends: np.ndarray,
            counts: np.ndarray,
            alpha: np.ndarray,
            lgamma_alpha: np.ndarray,
        ) -> tuple[float, np.ndarray]:
            grad = np.empty(k)
            return kernel(x, rankings, ends, counts, alpha, lgamma_alpha, grad), grad

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
