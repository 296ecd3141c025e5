r"""Each :math:`\delta_i` of the hierarchical model integrated out by quadrature.

With :math:`\sigma_i` integrated out in closed form, the likelihood of data set
:math:`i` given :math:`\delta_i` is a Student-t kernel; integrating :math:`\delta_i`
against its Student-t prior :math:`t_\nu(\delta_0, \sigma_0)` by a fixed,
differentiable quadrature (:mod:`.kernels`) leaves a posterior over the
hyper-parameters only, which NUTS samples without the funnel between :math:`\sigma_0`
and the :math:`\delta_i` (the "hard case" of few data sets). Each :math:`\delta_i` is
then drawn from its 1-D conditional given every posterior draw (:func:`draw_deltas`):
independent draws, no Markov chain. The NumPy form of the rule, with a fixed number of
nodes, is a test oracle (``tests/cv/_oracle.py``).

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

import os
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import numpy as np

from isbetter.cv.hierarchical.numerics.kernels import (
    NODE_SPACING,
    compiled_kernels,
    no_bound,
    with_bound,
)

__all__ = ["DRAW_BLOCKS", "draw_deltas", "likelihood_width"]

#: draw_deltas splits the hyper-parameter draws into this many blocks, one random stream
#: and one thread each (at most one thread per CPU); fixed, so results do not depend on
#: the machine
DRAW_BLOCKS = 4


def likelihood_width(a: Any, w: Any, ssr: Any) -> Any:
    r"""Width of data set i's likelihood in :math:`\delta_i` (a Student-t kernel, n - 2 df)."""
    return np.sqrt(ssr / (w * np.maximum(2.0 * a - 1.0, 1.0)))


def draw_deltas(
    delta0: np.ndarray,
    std0: np.ndarray,
    nu: np.ndarray,
    data: tuple[Any, ...],
    rng: np.random.Generator,
    *,
    bounded: bool = False,
) -> np.ndarray:
    r"""Draw every :math:`\delta_i` from its conditional given each hyper-parameter draw.

    :math:`p(\delta_i \mid \delta_0, \sigma_0, \nu, x_i) \propto t_\nu(\delta_i;
    \delta_0, \sigma_0)\, p(x_i \mid \delta_i)`, sampled by inverting its CDF in the
    coordinate :math:`u` of the quadrature (:mod:`.kernels`; the density in :math:`u`
    is smooth there; its log is interpolated between the nodes by a cubic, exact
    for Gaussian peaks and power-law tails, and the interpolant is sampled
    exactly, by rejection). Independent draws: no Markov chain.

    Parameters
    ----------
    delta0, std0, nu : numpy.ndarray
        Posterior draws of the hyper-parameters, shape ``(S,)`` (scaled units).
    data : tuple
        ``(a, w, ssr, xbar, std_hi)``: per data set ``(n - 1)/2``,
        ``n / (1 + (n - 1) rho)``, ``ss / (1 - rho)``, the mean; and the bound of
        :math:`\sigma_i` (:meth:`.spec.Prepared.model_data`).
    rng : numpy.random.Generator
    bounded : bool, default: False
        Keep the factor of :math:`\sigma_i`'s prior bound.

    Returns
    -------
    numpy.ndarray
        Shape ``(S, q)``: one draw of every :math:`\delta_i` per hyper-parameter draw.
    """
    a, w, ssr, xbar, std_hi = (np.asarray(v, dtype=float) for v in data)
    hyper_flat = [np.ascontiguousarray(v, dtype=float).reshape(-1) for v in (delta0, std0, nu)]
    bound = with_bound(a, float(std_hi)) if bounded else no_bound(a.size)
    draw = compiled_kernels()[1]
    lik = (a, w, ssr, xbar)
    # DRAW_BLOCKS blocks of hyper-parameter draws, each with a stream of its own spawned
    # from `rng`, drawn in threads (the kernel releases the GIL): the same numbers on any
    # number of cores
    edges = np.linspace(0, hyper_flat[0].size, DRAW_BLOCKS + 1).astype(int)
    blocks = [(lo, hi) for lo, hi in zip(edges[:-1], edges[1:], strict=True) if hi > lo]
    streams = rng.spawn(len(blocks))

    def run(block: int) -> np.ndarray:
        lo, hi = blocks[block]
        part = [v[lo:hi] for v in hyper_flat]
        return draw(*part, lik, NODE_SPACING, bound, streams[block])

    workers = min(len(blocks), os.cpu_count() or 1)
    if workers < 2:
        parts = [run(b) for b in range(len(blocks))]
    else:
        with ThreadPoolExecutor(workers) as pool:
            parts = list(pool.map(run, range(len(blocks))))
    return np.concatenate(parts) if parts else np.empty((0, a.size))
