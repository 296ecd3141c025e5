r"""The next data set's difference of two systems under the joint model, per posterior draw.

For a pair (a, b), the next data set's difference is :math:`\delta_{next} = b_a - b_b +
u_a - u_b`, with the deviations :math:`u = z / \sqrt{\lambda}` of a Gaussian core
:math:`z \sim N(0, V)`, :math:`V = H \Omega H^T`. :func:`pair_masses` returns its
masses in the three regions of a ROPE for each posterior draw, in the form of
:meth:`~isbetter.inference.posterior.HierarchicalPosterior.region_masses`:

* **one shared** :math:`\nu` (one weight :math:`\lambda \sim \operatorname{Gamma}(\nu/2,
  \nu/2)` per data set): :math:`\delta_{next} \sim t_\nu(b_a - b_b, \sigma_{ab})`,
  :math:`\sigma_{ab}^2 = V_{aa} + V_{bb} - 2 V_{ab}`, exactly the pairwise model's masses;
* **per-system** :math:`\nu_k` (the grouped t: independent weights :math:`\lambda_a
  \sim \operatorname{Gamma}(\nu_a/2, \nu_a/2)`, :math:`\lambda_b \sim
  \operatorname{Gamma}(\nu_b/2, \nu_b/2)`): given the weights, :math:`\delta_{next} - (b_a
  - b_b) \sim N(0, \sigma^2)`, :math:`\sigma^2 = V_{aa}/\lambda_a + V_{bb}/\lambda_b - 2
  V_{ab}/\sqrt{\lambda_a \lambda_b}`, no longer a t.

The grouped t's masses are two-dimensional integrals over the weights, reduced here to
one dimension in closed form. Write :math:`\lambda_k = X_k/\nu_k` with :math:`X_k \sim
\chi^2_{\nu_k}`, and :math:`X_a = S B`, :math:`X_b = S (1 - B)` with :math:`S \sim
\chi^2_N`, :math:`N = \nu_a + \nu_b`, independent of :math:`B \sim
\operatorname{Beta}(\nu_a/2, \nu_b/2)`. Since :math:`1/\sigma` is homogeneous of degree
one in :math:`(\sqrt{\lambda_a}, \sqrt{\lambda_b})`, :math:`1/\sigma = \sqrt{S}\, h(B)`
with

.. math::

    h(B)^{-2} = \frac{\nu_a V_{aa}}{B} + \frac{\nu_b V_{bb}}{1 - B}
    - \frac{2 \sqrt{\nu_a \nu_b}\, V_{ab}}{\sqrt{B (1 - B)}},

and for any :math:`c`, :math:`E_S\, \Phi(c \sqrt{S} h) = P(Z \le c\, h \sqrt{S}) =
T_N(c\, h \sqrt{N})`, the Student-t CDF with :math:`N` degrees of freedom. So

.. math::

    P(\delta_{next} > r) = E_B\, T_N\bigl((b_a - b_b - r)\, h(B) \sqrt{N}\bigr),\quad
    P(\delta_{next} < -r) = E_B\, T_N\bigl((-r - b_a + b_b)\, h(B) \sqrt{N}\bigr),

one-dimensional expectations over :math:`B`. They are computed in :math:`y =
\operatorname{logit} B` (the logarithm of an F variable: a smooth density with
exponential tails, analytic in a strip, in which :math:`h` is smooth too), standardised
by its mean :math:`\psi(\nu_a/2) - \psi(\nu_b/2)` and sd :math:`\sqrt{\psi'(\nu_a/2) +
\psi'(\nu_b/2)}`, by the trapezoidal rule on :data:`NODES` nodes between the points
where the tails' mass is negligible (the trapezoidal rule converges exponentially for
such integrands); the weights are normalised to sum to one. With one system's
deviation zero (:math:`V_{bb} = V_{ab} = 0`) the result is :math:`t_{\nu_a}`'s masses,
and with both :math:`\nu` large the normal's; ``tests/cv/test_joint_predictive.py``
checks these and a large Monte Carlo (accuracy better than :math:`10^{-5}` per mass).
"""

from __future__ import annotations

from typing import Any

import numpy as np
from scipy import special

from isbetter.core.errors import InputError
from isbetter.core.validate import check_rope
from isbetter.inference.posterior import HierarchicalPosterior

__all__ = ["NODES", "pair_masses"]

#: trapezoidal nodes per draw and pair for the grouped t's masses
NODES = 49
#: the tails of the standardised log-F variable left out (their mass is below ~1e-8)
_TAIL = 14.0
#: the standardised range never exceeds this (near-normal cases need about 6)
_WIDEST = 10.0
_NARROWEST = 6.5


def pair_masses(
    loc: Any, spread: Any, nu: Any, a: int, b: int, rope: float, *, symmetric: bool = False
) -> np.ndarray:
    r"""Return the next data set's masses (a better, ROPE, b better) of pair (a, b) per draw.

    Parameters
    ----------
    loc : array_like
        ``(n,)`` draws of :math:`b_a - b_b` (score units; positive: `a` better).
    spread : array_like
        ``(n, K, K)`` draws of :math:`V = H \Omega H^T` (score units squared).
    nu : array_like
        ``(n,)`` draws of the one shared :math:`\nu` (a Student t,
        :class:`~isbetter.inference.posterior.HierarchicalPosterior`'s masses), or
        ``(n, K)`` draws of per-system :math:`\nu_k` (the grouped t; module docstring).
    a, b : int
        The pair's systems: indices into the last axes of `spread` (and `nu`).
    rope : float
        The ROPE's half-width, score units.
    symmetric : bool, default: False
        Average each row with its mirror image (two identical systems, as
        :class:`~isbetter.inference.posterior.HierarchicalPosterior` does).

    Returns
    -------
    numpy.ndarray
        ``(n, 3)``: per draw, the masses of :math:`\delta_{next} > rope`, of the ROPE
        and of :math:`\delta_{next} < -rope`.
    """
    rope = check_rope(rope)
    loc = np.asarray(loc, dtype=float)
    spread = np.asarray(spread, dtype=float)
    nu = np.asarray(nu, dtype=float)
    n = loc.shape[0] if loc.ndim == 1 else -1
    k = spread.shape[-1] if spread.ndim == 3 else -1
    if n < 0 or spread.shape != (n, k, k) or nu.shape not in ((n,), (n, k)):
        raise InputError(
            "pair_masses: expected loc (n,), spread (n, K, K) and nu (n,) or (n, K); "
            f"found {loc.shape}, {spread.shape} and {nu.shape}"
        )
    if not (0 <= a < k and 0 <= b < k and a != b):
        raise InputError(f"pair_masses: expected two different systems of {k}; found {a}, {b}")
    vaa, vbb, vab = spread[:, a, a], spread[:, b, b], spread[:, a, b]
    if nu.ndim == 1:  # today's model: as JointFit.pair_scales and HierarchicalPosterior
        scale = np.sqrt(np.clip(vaa + vbb - 2.0 * vab, 0.0, None))
        return HierarchicalPosterior(
            delta0=loc, std0=scale, nu=nu, symmetric=symmetric
        ).region_masses(rope)
    above, below = _grouped_t_tails(loc, vaa, vbb, vab, nu[:, a], nu[:, b], rope)
    masses = np.column_stack([above, np.clip(1.0 - above - below, 0.0, 1.0), below])
    return (masses + masses[:, ::-1]) / 2 if symmetric else masses


def _grouped_t_tails(
    loc: np.ndarray,
    vaa: np.ndarray,
    vbb: np.ndarray,
    vab: np.ndarray,
    nu_a: np.ndarray,
    nu_b: np.ndarray,
    rope: float,
) -> tuple[np.ndarray, np.ndarray]:
    """P(d > rope) and P(d < -rope) under the grouped t, per draw (module docstring)."""
    half_a, half_b = nu_a / 2.0, nu_b / 2.0
    mean = special.digamma(half_a) - special.digamma(half_b)
    sd = np.sqrt(special.polygamma(1, half_a) + special.polygamma(1, half_b))
    # the standardised density falls as exp(half * sd * x) in its tails (exponential, or
    # faster where it is nearly normal): cut where the tail's mass is negligible
    lo = np.clip(_TAIL / (half_a * sd), _NARROWEST, _WIDEST)
    hi = np.clip(_TAIL / (half_b * sd), _NARROWEST, _WIDEST)
    grid = np.linspace(0.0, 1.0, NODES)
    x = -lo[:, None] + (lo + hi)[:, None] * grid[None, :]
    y = mean[:, None] + sd[:, None] * x
    log_w = half_a[:, None] * y - (half_a + half_b)[:, None] * np.logaddexp(0.0, y)
    w = np.exp(log_w - log_w.max(axis=1, keepdims=True))
    w[:, [0, -1]] /= 2.0
    w /= w.sum(axis=1, keepdims=True)
    p, q = special.expit(y), special.expit(-y)  # B and 1 - B
    nu_sum = (nu_a + nu_b)[:, None]
    inv_h2 = (
        nu_a[:, None] * vaa[:, None] / p
        + nu_b[:, None] * vbb[:, None] / q
        - 2.0 * np.sqrt(nu_a * nu_b)[:, None] * vab[:, None] / np.sqrt(p * q)
    )
    with np.errstate(divide="ignore"):
        factor = np.sqrt(nu_sum / np.clip(inv_h2, 0.0, None))  # h sqrt(N); inf if sigma = 0

    def tail(c: np.ndarray) -> np.ndarray:
        with np.errstate(invalid="ignore"):
            arg = c[:, None] * factor
        # sigma = 0 (a degenerate V): the difference is loc; on the boundary in neither tail
        arg[np.isnan(arg)] = -np.inf
        return (w * special.stdtr(nu_sum, arg)).sum(axis=1)

    return tail(loc - rope), tail(-rope - loc)
