r"""The prior of the hierarchical model's :math:`\nu` with :math:`\alpha, \beta` integrated out.

:math:`\nu - 1 = x \sim \mathrm{Gamma}(\alpha, \text{rate } \beta)` with
:math:`\alpha \sim U(\alpha_{lo}, \alpha_{hi})` and :math:`\beta \sim U(\beta_{lo},
\beta_{hi})` (Corani et al.). The integral over :math:`\beta` is closed-form,

.. math::
    p(x) = \frac{1}{x^2 (\beta_{hi} - \beta_{lo})} \int \alpha\,
    [P(\alpha + 1, \beta_{hi} x) - P(\alpha + 1, \beta_{lo} x)]\,
    \frac{d\alpha}{\alpha_{hi} - \alpha_{lo}},

and the one over :math:`\alpha` runs over Gauss-Legendre nodes, as in
:func:`isbetter.cv.hierarchical.pymc_backend.build_model`. :class:`NuPrior` evaluates
it with SciPy's regularised incomplete gamma function :math:`P`. The compiled log
densities (of the hierarchical model, :mod:`isbetter.cv.hierarchical.compiled_backend`;
of the joint model; of the items' hierarchical model) cannot call SciPy, so they read a
table of :math:`f(t) = \log p(e^t)` and :math:`f'(t)` on a fine grid in
:math:`t = \log x` (the sampler's own coordinate) and interpolate it by cubic Hermite
polynomials: :func:`nu_prior_table` builds it with :class:`NuPrior`, :func:`interpolate`
reads it (plain Python, compiled by numba where the kernels use it). The
interpolation error is below 1e-9 in :math:`f` (``tests/cv/test_hierarchical_density.py``).
"""

from __future__ import annotations

import math
from functools import lru_cache

import numpy as np
from scipy import special

__all__ = ["NuPrior", "interpolate", "nu_prior_table"]

#: Gauss-Legendre nodes over alpha (as the PyMC model)
ALPHA_NODES = 12
#: the table's grid in t = log(nu - 1): from T_LO, STEPS_PER_UNIT nodes per unit of t, up
#: to the last t where p's mass has not underflowed (about log(745 / beta_lo))
T_LO = -40.0
STEPS_PER_UNIT = 256
_T_SEARCH_HI = 30.0


class NuPrior:
    """``log p(x)`` and its derivative in ``x`` for ``x = nu - 1`` (arrays or scalars).

    Parameters
    ----------
    bounds : sequence of float
        ``alpha_lo, alpha_hi, beta_lo, beta_hi``.
    """

    def __init__(self, bounds: tuple[float, float, float, float]) -> None:
        a_lo, a_hi, self.b_lo, self.b_hi = (float(b) for b in bounds)
        t, weight = np.polynomial.legendre.leggauss(ALPHA_NODES)
        alpha = a_lo + (a_hi - a_lo) * (t + 1.0) / 2.0
        self.shape = alpha + 1.0
        self.coef = weight / 2.0 * alpha
        self.log_gamma = special.gammaln(self.shape)
        self.log_width = math.log(self.b_hi - self.b_lo)

    def __call__(self, x: np.ndarray | float) -> tuple[np.ndarray, np.ndarray]:
        """Return ``(log p(x), d log p / dx)``; ``-inf`` (and 0) where the mass underflowed."""
        x = np.asarray(x, dtype=float)
        xs = x[..., None]
        shape, lo, hi = self.shape, self.b_lo * xs, self.b_hi * xs
        with np.errstate(divide="ignore", invalid="ignore"):
            # beyond the shape, P is near 1 at both ends: the upper functions, no cancellation
            mass = np.where(
                lo > shape,
                special.gammaincc(shape, lo) - special.gammaincc(shape, hi),
                special.gammainc(shape, hi) - special.gammainc(shape, lo),
            )
            # d P(s, b x) / dx = b (b x)^(s - 1) exp(-b x) / Gamma(s)
            d_mass = (
                np.exp((shape - 1.0) * np.log(hi) - hi - self.log_gamma) * self.b_hi
                - np.exp((shape - 1.0) * np.log(lo) - lo - self.log_gamma) * self.b_lo
            )
            total, d_total = mass @ self.coef, d_mass @ self.coef
            ok = total > 0.0
            log_p = np.where(ok, np.log(total) - 2.0 * np.log(x) - self.log_width, -np.inf)
            d_log_p = np.where(ok, d_total / total - 2.0 / x, 0.0)
        return log_p, d_log_p


@lru_cache(maxsize=8)
def nu_prior_table(bounds: tuple[float, float, float, float]) -> np.ndarray:
    """Return the table of :func:`interpolate`: ``[t_lo, steps per unit, n, f..., f'...]``.

    ``f`` is ``log p(e^t)`` and ``f'`` its derivative in ``t`` at ``n`` nodes from
    ``t_lo``; the last node is the last one where the mass has not underflowed.
    """
    prior = NuPrior(bounds)
    t = T_LO + np.arange(int((_T_SEARCH_HI - T_LO) * STEPS_PER_UNIT) + 1) / STEPS_PER_UNIT
    x = np.exp(t)
    log_p, d_log_p = prior(x)
    finite = np.flatnonzero(np.isfinite(log_p))
    n = int(finite[-1]) + 1
    if finite.size != n:  # the mass underflows at the top of the grid only
        raise ValueError(f"nu's prior density is not finite on a contiguous range: {bounds}")
    table = np.concatenate([[T_LO, float(STEPS_PER_UNIT), float(n)], log_p[:n], (d_log_p * x)[:n]])
    table.flags.writeable = False
    return table


def interpolate(t: float, table: np.ndarray) -> tuple[float, float]:  # pragma: no cover - numba
    """Return ``(f(t), f'(t))`` from `table` (:func:`nu_prior_table`) by cubic Hermite.

    Below the table, the tangent at its first node (``t < -40``: ``nu - 1 < 5e-18``);
    above it ``-inf``, where SciPy's mass underflows too.
    """
    t_lo, per_unit, n = table[0], table[1], int(table[2])
    u = (t - t_lo) * per_unit
    if u < 0.0:
        return table[3] + table[3 + n] * (t - t_lo), table[3 + n]
    k = int(u)
    if k >= n - 1:
        if u == n - 1:
            return table[3 + k], table[3 + n + k]
        return -math.inf, 0.0
    s = u - k
    h = 1.0 / per_unit
    f0, f1 = table[3 + k], table[4 + k]
    d0, d1 = table[3 + n + k] * h, table[4 + n + k] * h
    s2 = s * s
    s3 = s2 * s
    f = (2.0 * s3 - 3.0 * s2 + 1.0) * f0 + (s3 - 2.0 * s2 + s) * d0
    f += (3.0 * s2 - 2.0 * s3) * f1 + (s3 - s2) * d1
    df = (
        (6.0 * s2 - 6.0 * s) * (f0 - f1)
        + (3.0 * s2 - 4.0 * s + 1.0) * d0
        + (3.0 * s2 - 2.0 * s) * d1
    )
    return f, df * per_unit
