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
exponential tails, analytic in a strip), standardised by its mean :math:`\psi(\nu_a/2)
- \psi(\nu_b/2)` and sd :math:`\sqrt{\psi'(\nu_a/2) + \psi'(\nu_b/2)}`, by the
trapezoidal rule (which converges exponentially for such integrands) with a step of
0.5 sd (0.33 where a :math:`\nu` is small) between the points where the tails' mass is
negligible. One feature needs more: when the pair's cores are nearly collinear
(:math:`V_{ab} > 0`, :math:`V` nearly singular), :math:`\sigma` nearly vanishes at one
ratio of the weights, :math:`y_0`, where :math:`1/h^2`'s quadratic form in
:math:`(\sqrt{1-B}, \sqrt{B})` is smallest, and the integrand has a narrow dip or
spike there (two nearly identical systems). That part, times a Gaussian bump about
:math:`y_0`, is integrated on a grid :math:`y = y_0 + \epsilon \sinh t` clustered at
the feature's width :math:`\epsilon`, the rest (times one minus the bump) on the
uniform grid. The weights are normalised to sum to one. Accuracy (against an adaptive
quadrature, ``tests/cv/test_joint_predictive.py``): below :math:`10^{-5}` per mass in
typical cases and below :math:`10^{-4}` at the extremes (:math:`\nu` from 1 to
:math:`10^5`, correlations of the cores up to 1). With one system's deviation zero
(:math:`V_{bb} = V_{ab} = 0`) the result is :math:`t_{\nu_a}`'s masses, and with both
:math:`\nu` large the normal's; the tests check these and a large Monte Carlo of the
model's law too.

**Independent components** (``JointPriors(tails="components")``): a data set's
contrasts are :math:`\tilde u = L z`, :math:`z_j \sim t_{\nu_j}(0, 1)` independent,
so :math:`\delta_{next} = b_a - b_b + \sum_j w_j z_j` with :math:`w = c_{ab}^T L`
(:func:`component_weights`), a sum of independent scaled t's.
:func:`component_pair_masses` computes its masses per draw. With one non-zero
:math:`w_j` they are that t's masses exactly; with two, the grouped t's integral above
with :math:`V_{ab} = 0` (the two components are independent: :math:`V_{aa} = w_1^2`,
:math:`V_{bb} = w_2^2`), deterministic. With three or more the same chi-square
argument gives, for :math:`\lambda_j = X_j / \nu_j`, :math:`X_j = S B_j`, :math:`S
\sim \chi^2_N`, :math:`N = \sum_j \nu_j`, :math:`B \sim \operatorname{Dirichlet}
(\nu_1/2, \dots, \nu_d/2)`,

.. math::

    P(\delta_{next} > r) = E_B\, T_N\bigl((b_a - b_b - r)\, h(B) \sqrt{N}\bigr),
    \quad h(B)^{-2} = \sum_j \frac{\nu_j w_j^2}{B_j},

a (d - 1)-dimensional expectation, estimated by ``inner`` Monte Carlo draws of
:math:`B` per posterior draw (Rao-Blackwellised: the common scale :math:`S` and the
normal parts are integrated exactly, so the integrand is a smooth t CDF, with no step
where a heavy tail carries the mass), seeded by the caller's ``rng``. Measured
(``tests/cv/test_joint_predictive_components.py``; 10^6-draw brute force of the law,
72 cases at d = 2, 3, 4 with nu from 1.05 to 100, equal and unequal weights, ROPEs up
to 20 scales): at d = 2 within 2.6 Monte Carlo standard errors; at d >= 3 one row's
own standard deviation is 0.008 (median; largest 0.041) with 32 draws, and the mean
over rows within 3.4 standard errors. On a K = 5 posterior of 8000 draws the
argmax-counted probabilities of the ten pairs move by at most 0.002 against 2048
draws of B per row (0.005 with 16).
"""

from __future__ import annotations

from typing import Any

import numpy as np
from scipy import special

from isbetter.core.errors import InputError
from isbetter.core.validate import check_rope
from isbetter.inference.posterior import HierarchicalPosterior

__all__ = ["component_pair_masses", "component_weights", "pair_masses"]

#: the uniform grid's step in sds of logit B (finer where a nu is small)
_STEP = 0.5
_STEP_HEAVY = 0.33
#: the sinh grid about a narrow feature (V nearly singular)
_SHARP_GRID = np.linspace(-1.0, 1.0, 61)
#: a feature narrower than this many sds of y gets the sinh grid
_SHARP = 2.0
#: the width of the bump about the feature, in sds of y
_BUMP = 3.0
#: the Monte Carlo draws of B per posterior draw (three or more components)
_INNER = 32
#: the rows integrated at once with three or more components (memory: rows x inner x d)
_CHUNK = 2048
#: the tails of the standardised log-F variable left out (where it falls as exp(-x))
_TAIL = 14.0
#: the standardised range's bounds (near-normal cases need about 5)
_WIDEST = 10.0
_NARROWEST = 5.0


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


def component_weights(loading: Any, a: int, b: int) -> np.ndarray:
    r"""Return pair (a, b)'s weights :math:`w = c_{ab}^T L` of the components, per draw.

    Parameters
    ----------
    loading : array_like
        ``(..., d, d)`` draws of the loading :math:`L` (rows: the Helmert contrasts of
        :func:`~isbetter.cv.joint.spec.contrast_basis`, columns: the components), in
        score units.
    a, b : int
        The pair's systems, of K = d + 1.

    Returns
    -------
    numpy.ndarray
        ``(..., d)``: :math:`\delta_{next} - (b_a - b_b) = \sum_j w_j z_j`.

    Examples
    --------
    >>> w = component_weights(np.eye(2)[None], 0, 2)  # L = I: the contrast itself
    >>> bool(np.isclose((w**2).sum(), 2.0))  # |c_ab|^2 = 2
    True
    """
    from isbetter.cv.joint.spec import contrast_basis

    loading = np.asarray(loading, dtype=float)
    d = loading.shape[-1] if loading.ndim >= 2 else -1
    if loading.ndim < 2 or loading.shape[-2] != d:
        raise InputError(
            f"component_weights: expected a loading of shape (..., d, d); found {loading.shape}"
        )
    if not (0 <= a <= d and 0 <= b <= d and a != b):
        raise InputError(
            f"component_weights: expected two different systems of {d + 1}; found {a}, {b}"
        )
    h = contrast_basis(d + 1)
    return np.einsum("i,...ij->...j", h[a] - h[b], loading)


def component_pair_masses(
    diff: Any,
    weights: Any,
    nu: Any,
    rope: float,
    *,
    rng: int | np.random.Generator,
    inner: int = _INNER,
    symmetric: bool = False,
) -> np.ndarray:
    r"""Return the next data set's masses (a better, ROPE, b better) under independent components.

    :math:`\delta_{next} = \text{diff} + \sum_j w_j z_j`, :math:`z_j \sim
    t_{\nu_j}(0, 1)` independent (module docstring).

    Parameters
    ----------
    diff : array_like
        ``(n,)`` draws of :math:`b_a - b_b` (score units; positive: `a` better).
    weights : array_like
        ``(n, d)`` draws of :math:`w = c_{ab}^T L` (:func:`component_weights`); zeros
        allowed (a component the pair does not see).
    nu : array_like
        ``(n, d)`` draws of the components' degrees of freedom.
    rope : float
        The ROPE's half-width, score units.
    rng : int or numpy.random.Generator
        Seeds the Monte Carlo draws of rows with three or more non-zero weights (the
        others are computed deterministically; none is drawn when there are none).
    inner : int, default: 32
        Monte Carlo draws per row with three or more non-zero weights.
    symmetric : bool, default: False
        Average each row with its mirror image (two identical systems).

    Returns
    -------
    numpy.ndarray
        ``(n, 3)``: per draw, the masses of :math:`\delta_{next} > rope`, of the ROPE
        and of :math:`\delta_{next} < -rope`, as :func:`pair_masses`.

    Examples
    --------
    >>> from scipy import stats
    >>> m = component_pair_masses([0.01], [[0.02]], [[3.0]], 0.005, rng=1)  # d = 1: a t
    >>> bool(np.isclose(m[0, 0], stats.t.sf(0.005, 3.0, loc=0.01, scale=0.02)))
    True
    """
    rope = check_rope(rope)
    loc = np.asarray(diff, dtype=float)
    w = np.abs(np.asarray(weights, dtype=float))  # z_j is symmetric: only |w_j| matters
    nu = np.asarray(nu, dtype=float)
    n = loc.shape[0] if loc.ndim == 1 else -1
    if n < 0 or w.ndim != 2 or w.shape[0] != n or nu.shape != w.shape:
        raise InputError(
            "component_pair_masses: expected diff (n,), weights (n, d) and nu (n, d); "
            f"found {loc.shape}, {w.shape} and {nu.shape}"
        )
    if not (np.all(np.isfinite(w)) and np.all(np.isfinite(loc)) and np.all(nu > 0)):
        raise InputError(
            "component_pair_masses: expected finite diff and weights and nu > 0; found "
            "a non-finite value or a nu <= 0"
        )
    if isinstance(inner, bool) or not isinstance(inner, int) or inner < 1:
        raise InputError(f"component_pair_masses: expected inner >= 1; found {inner!r}")
    above, below = _component_tails(loc, w, nu, rope, rng, inner)
    masses = np.column_stack([above, np.clip(1.0 - above - below, 0.0, 1.0), below])
    return (masses + masses[:, ::-1]) / 2 if symmetric else masses


def _component_tails(
    loc: np.ndarray,
    w: np.ndarray,
    nu: np.ndarray,
    rope: float,
    rng: int | np.random.Generator,
    inner: int,
) -> tuple[np.ndarray, np.ndarray]:
    """P(d > rope) and P(d < -rope) for a sum of independent scaled t's, per row."""
    active = w > 0
    count = active.sum(axis=1)
    # no deviation: the difference is loc itself (on the boundary in no tail)
    above, below = (loc > rope).astype(float), (loc < -rope).astype(float)
    one = np.flatnonzero(count == 1)
    if one.size:  # one component: its t
        j = active[one].argmax(axis=1)
        scale, dof = w[one, j], nu[one, j]
        above[one] = special.stdtr(dof, (loc[one] - rope) / scale)
        below[one] = special.stdtr(dof, (-rope - loc[one]) / scale)
    two = np.flatnonzero(count == 2)
    if two.size:  # two: the grouped t's integral with independent cores
        order = np.argsort(~active[two], axis=1, kind="stable")[:, :2]  # the active two
        ww = np.take_along_axis(w[two], order, axis=1)
        nn = np.take_along_axis(nu[two], order, axis=1)
        above[two], below[two] = _grouped_t_tails(
            loc[two], ww[:, 0] ** 2, ww[:, 1] ** 2, np.zeros(two.size), nn[:, 0], nn[:, 1], rope
        )
    many = np.flatnonzero(count >= 3)
    if many.size:
        generator = np.random.default_rng(rng)
        for start in range(0, many.size, _CHUNK):
            rows = many[start : start + _CHUNK]
            above[rows], below[rows] = _dirichlet_tails(
                loc[rows], w[rows], nu[rows], active[rows], rope, generator, inner
            )
    return above, below


def _dirichlet_tails(
    loc: np.ndarray,
    w: np.ndarray,
    nu: np.ndarray,
    active: np.ndarray,
    rope: float,
    rng: np.random.Generator,
    inner: int,
) -> tuple[np.ndarray, np.ndarray]:
    """E_B T_N((loc -+ rope) h(B) sqrt(N)), B ~ Dirichlet(nu / 2) over the active components."""
    shape = np.where(active, nu / 2.0, 1.0)
    gam = rng.gamma(shape[:, None, :], size=(loc.size, inner, w.shape[1]))
    gam = np.where(active[:, None, :], gam, 0.0)
    b = gam / gam.sum(axis=2, keepdims=True)
    with np.errstate(divide="ignore", invalid="ignore"):
        terms = np.where(active[:, None, :], (nu * w**2)[:, None, :] / b, 0.0)
    dof = np.where(active, nu, 0.0).sum(axis=1)[:, None]
    factor = np.sqrt(dof / terms.sum(axis=2))  # h sqrt(N); 0 where a B_j underflowed
    upper = special.stdtr(dof, (loc - rope)[:, None] * factor).mean(axis=1)
    if rope == 0:
        return upper, 1.0 - upper
    return upper, special.stdtr(dof, (-rope - loc)[:, None] * factor).mean(axis=1)


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
    nu_sum = nu_a + nu_b
    # B = sin^2 phi: 1 / h^2 = f(phi) / (sin phi cos phi)^2 with the quadratic form
    # f = p cos^2 + s sin^2 - 2 c sin cos = (p + s) / 2 - r cos(2 (phi - phi0))
    p, s, c = nu_a * vaa, nu_b * vbb, np.sqrt(nu_a * nu_b) * vab
    above, below, total = (np.zeros(loc.size) for _ in range(3))
    for nodes, weights, rows in _nodes(loc, rope, nu_a, nu_b, p, s, c):
        b_, c_ = special.expit(nodes), special.expit(-nodes)  # B and 1 - B
        inv_h2 = p[rows, None] / b_ + s[rows, None] / c_ - 2.0 * c[rows, None] / np.sqrt(b_ * c_)
        with np.errstate(divide="ignore"):
            factor = np.sqrt(nu_sum[rows, None] / np.clip(inv_h2, 0.0, None))  # h sqrt(N)
        with np.errstate(invalid="ignore"):
            arg = (loc - rope)[rows, None] * factor
        # sigma = 0 (a degenerate V): the difference is loc; on the boundary in no tail
        boundary = np.isnan(arg)
        arg[boundary] = -np.inf
        upper = special.stdtr(nu_sum[rows, None], arg)
        above[rows] += (weights * upper).sum(axis=1)
        if rope == 0:  # the lower tail is the upper one's complement (half the work)
            lower = np.where(boundary, 0.0, 1.0 - upper)
        else:
            with np.errstate(invalid="ignore"):
                arg = (-rope - loc)[rows, None] * factor
            arg[np.isnan(arg)] = -np.inf
            lower = special.stdtr(nu_sum[rows, None], arg)
        below[rows] += (weights * lower).sum(axis=1)
        total[rows] += weights.sum(axis=1)
    return above / total, below / total


def _nodes(
    loc: np.ndarray,
    rope: float,
    nu_a: np.ndarray,
    nu_b: np.ndarray,
    p: np.ndarray,
    s: np.ndarray,
    c: np.ndarray,
) -> list[tuple[np.ndarray, np.ndarray, np.ndarray]]:
    """Return the quadrature's nodes in y = logit B and weights: (nodes, weights, rows)."""
    half_a, half_b = nu_a / 2.0, nu_b / 2.0
    mean = special.digamma(half_a) - special.digamma(half_b)
    sd = np.sqrt(special.polygamma(1, half_a) + special.polygamma(1, half_b))
    # the standardised density falls as exp(half * sd * x) in its tails (exponential, or
    # faster where it is nearly normal): cut where the tail's mass is negligible
    lo = np.clip(_TAIL / (half_a * sd), _NARROWEST, _WIDEST)
    hi = np.clip(_TAIL / (half_b * sd), _NARROWEST, _WIDEST)
    y0, width = _narrow_feature(loc, rope, nu_a + nu_b, p, s, c)
    sharp = (width < _SHARP * sd) & (y0 > mean - (lo + 6.0) * sd) & (y0 < mean + (hi + 6.0) * sd)
    bump_sd = _BUMP * sd
    parts = []
    # the uniform grids: a step of _STEP sds, finer where a nu is small (heavy tails)
    count = np.ceil((lo + hi) / np.where(sd > 1.0, _STEP_HEAVY, _STEP)).astype(int) + 1
    for m in np.unique(count):
        rows = np.flatnonzero(count == m)
        grid = np.linspace(0.0, 1.0, m)
        span = (lo + hi)[rows]
        y = mean[rows, None] + sd[rows, None] * (-lo[rows, None] + span[:, None] * grid)
        w = (span * sd[rows] / (m - 1))[:, None] * _log_f_density(y, half_a[rows], half_b[rows])
        w[:, [0, -1]] /= 2.0
        chi = np.exp(-0.5 * ((y - y0[rows, None]) / bump_sd[rows, None]) ** 2)
        w *= np.where(sharp[rows, None], 1.0 - chi, 1.0)
        parts.append((y, w, rows))
    if np.any(sharp):  # the part near the feature (times chi) on a sinh grid at y0
        rows = np.flatnonzero(sharp)
        eps = np.maximum(width[rows], 1e-9 * sd[rows])
        reach = np.arcsinh(7.0 * bump_sd[rows] / eps)
        t = reach[:, None] * _SHARP_GRID[None, :]
        y_near = y0[rows, None] + eps[:, None] * np.sinh(t)
        w_near = (
            (reach * eps * (_SHARP_GRID[1] - _SHARP_GRID[0]))[:, None]
            * np.cosh(t)
            * np.exp(-0.5 * ((y_near - y0[rows, None]) / bump_sd[rows, None]) ** 2)
            * _log_f_density(y_near, half_a[rows], half_b[rows])
        )
        parts.append((y_near, w_near, rows))
    return parts


def _narrow_feature(
    loc: np.ndarray, rope: float, nu_sum: np.ndarray, p: np.ndarray, s: np.ndarray, c: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Return y0 = logit B where sigma nearly vanishes, and the feature's width (in y).

    V near singular (the systems' cores nearly collinear, c > 0): sigma nearly vanishes
    for one ratio of the weights, at y0 (f's minimum), and the integrand has a narrow
    feature there, of width about the larger of sqrt(f_min / 2r) and kappa (where the t
    CDF's argument is about one). Without an interior minimum (c <= 0) the width is inf.
    """
    r = np.hypot((p - s) / 2.0, c)
    phi0 = (np.pi - np.arctan2(c, (p - s) / 2.0)) / 2.0
    f_min = np.clip((p + s) / 2.0 - r, 0.0, None)
    with np.errstate(divide="ignore", invalid="ignore"):
        y0 = 2.0 * np.log(np.tan(phi0))
        kappa = np.minimum(np.abs(loc - rope), np.abs(loc + rope)) * np.sqrt(nu_sum / 2.0 / r)
        width = np.maximum(np.sqrt(f_min / 2.0 / r), kappa * np.sin(phi0) * np.cos(phi0))
        width_y = 4.0 * width / np.sin(2.0 * phi0)
    return y0, np.where(c > 0, width_y, np.inf)


def _log_f_density(y: np.ndarray, half_a: np.ndarray, half_b: np.ndarray) -> np.ndarray:
    """Density of y = logit B, B ~ Beta(half_a, half_b) (rows: draws)."""
    log_p = (
        half_a[:, None] * y
        - (half_a + half_b)[:, None] * np.logaddexp(0.0, y)
        - special.betaln(half_a, half_b)[:, None]
    )
    return np.exp(log_p)
