r"""The factor that :math:`\sigma_i`'s prior bound puts into the hierarchical likelihood.

With :math:`\sigma_i \sim U(0, \bar\sigma)` integrated out, the likelihood of data
set :math:`i` given :math:`\delta_i` carries the factor :math:`Q(a_i, S_i / (2
\bar\sigma^2))` (the marginal likelihood of :mod:`.spec`), :math:`Q` the
regularised upper incomplete gamma function, :math:`a_i = (n_i - 1)/2` and
:math:`S_i` the quadratic form in :math:`\delta_i`. It is 1 to double precision
unless :math:`\bar\sigma` is tight for the data (few scores, a narrow prior,
simulation studies that draw :math:`\sigma_i` near the bound), and the fits drop it
where it cannot matter (``Prepared.bounded``).

The compiled log densities (:mod:`.compiled_backend`) cannot call SciPy, so
they read, per distinct :math:`a`, a table of :math:`f(t) = \log Q(a, e^t)` and
:math:`f'(t)` in :math:`t = \log y` that SciPy fills, interpolated by cubic Hermite
polynomials (:func:`isbetter.inference.nu_prior.interpolate`), as :math:`\nu`'s prior
is: the error is below 1e-8 in :math:`f` (``tests/cv/test_sigma_bound.py``). Below the table
:math:`Q = 1 - P` with :math:`P < 10^{-15}` is its leading term
:math:`-\log Q \approx y^a e^{-y} / \Gamma(a + 1)`; above it, where SciPy's
:math:`Q` underflows (:math:`< 10^{-290}`), the first term of its continued fraction,
:math:`Q \approx y^a e^{-y} / (\Gamma(a) (y + 1 - a))`, keeps the log finite, with a
derivative, however far out a quadrature node falls.
"""

from __future__ import annotations

import math
from functools import lru_cache

import numpy as np
from scipy import special

from isbetter.inference.nu_prior import interpolate

__all__ = ["bound_tables", "log_bound", "log_q"]

#: nodes per unit of t = log y, times max(1, sqrt(a)) (the factor's step narrows as
#: 1 / sqrt(a) in t); the largest interpolation error is 6e-9 in f (at a = 1/2).
STEPS_PER_UNIT = 128
#: the table starts where P(a, y) (so -f) falls below this, and ends where Q does
_P_LO = 1e-15
_Q_HI = 1e-290
#: header of one table: a, lgamma(a), then nu_prior.interpolate's (t_lo, steps per unit, n)
_HEAD = 2


def log_q(a: float, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Return ``log Q(a, y)`` and its derivative in ``log y``, from SciPy (no underflow guard)."""
    y = np.asarray(y, dtype=float)
    p = special.gammainc(a, y)
    with np.errstate(divide="ignore"):
        f = np.where(p < 0.5, np.log1p(-p), np.log(special.gammaincc(a, y)))
        # d log Q / d log y = -y^a e^-y / (Gamma(a) Q)
        d_f = -np.exp(a * np.log(y) - y - special.gammaln(a) - f)
    return f, d_f


@lru_cache(maxsize=64)
def _table(a: float) -> np.ndarray:
    """Return the table of one ``a``: ``[a, lgamma(a), t_lo, steps per unit, n, f..., f'...]``."""
    per_unit = float(math.ceil(STEPS_PER_UNIT * max(1.0, math.sqrt(a))))
    # P(a, y) <= y^a / Gamma(a + 1): below t_lo it is under _P_LO
    t_lo = (math.log(_P_LO) + special.gammaln(a + 1.0)) / a
    # Q(a, y) <= exp(-y / 2) 2^a for y > 2a, roughly; search up to where SciPy's Q underflows
    t_hi = math.log(2.0 * a + 2.0 * -math.log(_Q_HI) + 10.0)
    t = t_lo + np.arange(int(math.ceil((t_hi - t_lo) * per_unit)) + 1) / per_unit
    f, d_f = log_q(a, np.exp(t))
    n = int(np.argmax(np.exp(f) < _Q_HI)) if np.any(np.exp(f) < _Q_HI) else t.size
    return np.concatenate([[a, special.gammaln(a), t_lo, per_unit, float(n)], f[:n], d_f[:n]])


def bound_tables(a: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Return the tables of the data sets' ``a`` (one per distinct value), concatenated.

    Returns ``(offsets, tables)``: data set ``i``'s table starts at ``tables[offsets[i]]``
    (offsets as float64, to travel in the kernels' one data buffer).
    """
    values, index = np.unique(np.asarray(a, dtype=float), return_inverse=True)
    parts = [_table(float(v)) for v in values]
    starts = np.cumsum([0, *(p.size for p in parts)])[:-1]
    return starts[index].astype(float), np.concatenate(parts)


def log_bound(
    t: float, tables: np.ndarray, offset: int
) -> tuple[float, float]:  # pragma: no cover - compiled by numba
    """Return ``(log Q(a, e^t), its derivative in t)`` from the table at `offset`."""
    a, log_gamma = tables[offset], tables[offset + 1]
    t_lo, per_unit, n = tables[offset + 2], tables[offset + 3], tables[offset + 4]
    y = math.exp(t)
    if t < t_lo:  # log(1 - P) = -P, P = y^a e^-y / Gamma(a + 1) (1 + O(y / a))
        p = math.exp(a * t - y - log_gamma - math.log(a))
        return -p, -a * p
    if t >= t_lo + (n - 1.0) / per_unit:  # Q ~ y^a e^-y / (Gamma(a) (y + 1 - a))
        rest = y + 1.0 - a
        return a * t - y - log_gamma - math.log(rest), a - y - y / rest
    return interpolate(t, tables[offset + 2 : offset + 5 + 2 * int(n)])
