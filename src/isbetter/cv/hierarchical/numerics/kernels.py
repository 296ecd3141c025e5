"""The numba-compiled quadrature of the integrated hierarchical model.

The rule integrates each delta_i against its Student-t prior by the midpoint rule in the
sinh-mapped coordinate u = asinh((delta - delta0) / std0) + asinh((delta - xbar_i) /
width_i) (plus a term per mode the two centres miss, `_mode_centres`), written as scalar
loops that numba compiles, with the number of nodes adapted to the range of u
(`NODE_SPACING`); its NumPy form with a fixed number of nodes is a test oracle
(``tests/cv/_oracle.py``). Where std0 is far below a data set's width in a fit of many
data sets (two near-identical systems), that data set shares one rule in the prior's own
coordinate asinh((delta - delta0) / std0) with the others alike (`_shared_nodes`). It
gives the log likelihood of each data set with its derivatives in (delta0, std0, nu)
(`_loglik_kernel`, called by nutpie's C functions in :mod:`.compiled_backend` and by the
PyTensor Op of :mod:`.pymc_backend`), and the sampler of each delta_i given the hyper-parameters
(`_draw_kernel`, behind :func:`.quadrature.draw_deltas`).

The functions are plain Python, so that importing this module does not import numba;
:func:`compiled_kernels` compiles them on first use on a machine and loads them from
isbetter's cache (:mod:`isbetter.core.cache`) after.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from isbetter.cv.hierarchical.numerics.sigma_bound import bound_tables, log_bound
from isbetter.inference.nu_prior import interpolate

__all__ = [
    "NODE_SPACING",
    "compiled_kernels",
    "kernel_version",
    "no_bound",
    "register_jitable_helpers",
    "with_bound",
]

#: the modules whose functions the kernels call: their edits invalidate the cache
CACHE_DEPENDS = (
    "isbetter.inference.nu_prior",
    "isbetter.cv.hierarchical.numerics.sigma_bound",
)
#: the quadrature reaches so far that the tails beyond it hold about exp(-18.4) = 1e-8 of
#: the integral (Student-t tails of power nu + n - 1), and at least 10 widths, or to where
#: a bound proves the tails hold less (_lik_reach: the likelihood's, _prior_reach: the prior's)
TAIL_LOG_MASS = 18.4
#: The compiled likelihood (:func:`compiled_kernels`) adapts the number of nodes to the range
#: of u: this spacing, within these bounds. Over the 2000 random configurations of
#: bench/bench_quadrature_accuracy.py (2-10 000 scores, std0 1e-5 to 1e3 likelihood widths,
#: centres up to 1000 widths apart, nu up to 3000): error of log p(x_i | delta0, std0, nu)
#: at most 1.0e-5, 99% below 1.2e-6, median 4.5e-9; 62 nodes on the median configuration
#: (most sit far outside the posterior).
NODE_SPACING = 0.35
_MIN_NODES = 16
_MAX_NODES = 256
#: The map gets a centre at each mode of prior x likelihood (:func:`_mode_centres`) where
#: the two-centre map spaces its nodes wider than 1 / MODE_DENSITY of the mode's scale: a
#: mode between the centres, where both kernels are near-Gaussian and many widths apart,
#: or one pushed many of its widths off a centre by the other kernel's tail (the
#: two-centre rule missed such peaks by up to 0.5 in log p(x_i | delta0, std0, nu)).
MODE_DENSITY = 0.7
#: EM steps of the search for each mode (from either centre and their precision-weighted mean)
_MODE_STEPS = 10
#: the nodes of a map with mode centres are found by Newton's method to this error in u
_U_TOL = 1e-11
#: rows of the kernels' node buffer (see _nodes)
_ROWS = 6
#: Above CUT_MIN_DATASETS - 1 data sets (the fits "auto" routes, where the likelihood's cost
#: grows with q), the rule ends where the prior's tail bound says the integral beyond is
#: negligible (_prior_reach) if that is within PRIOR_REACH_WIDTHS likelihood widths of
#: delta0: std0 far below the width (two near-identical systems), where it saves most
#: nodes (19 instead of 57 at 100 scores, std0 = 0.02 widths, nu = 25). With fewer data
#: sets the rule, and so the sampler's paths, are unchanged. With the cut, 1 of the 10 seeds
#: at 5 data sets of test_default_fits_do_not_diverge_and_mix met one divergence (log
#: densities within 6e-6 of the full rule's; about 1 fit in 30 diverges once either way).
CUT_MIN_DATASETS = 21
PRIOR_REACH_WIDTHS = 3.0
#: Where that bound ends the rule within SHARED_REACH_WIDTHS widths of delta0 (and sigma_i
#: has no bound factor), the likelihood is smooth over the whole range and the data set
#: shares one rule, in the prior's coordinate alone, with every other such data set
#: (_shared_nodes, _shared_one): the Student-t kernel, its Jacobian and d/d nu once per
#: gradient; a log, an exp and a division per node and data set. As accurate as each data
#: set's own rule ended by the bound: over the ~9000 of 20 000 random configurations it
#: takes, within 3.1e-6 of the rule 0.08 apart (that rule: 2.8e-6), median 2.3e-7 (1.9e-7).
SHARED_REACH_WIDTHS = 1.0
#: Where the likelihood's centre is at most SEARCH_FREE_GAP widths from delta0 (and sigma_i
#: has no bound factor), the search for mode centres (_mode_centres) is skipped (~11-15% of
#: the kernel's time at the UCI and near-identical posteriors): it finds none there (none in
#: 2 x 10^6 random configurations with |gap| <= 2 widths: 2-10 000 scores, std0 1e-6 to 1e3
#: widths, nu 1 to 3000; with |gap| <= 3 widths, 1 in 200, the nearest at 2.29 widths), so
#: the rule is the same. Skipping it further out missed log p(x_i | delta0, std0, nu) by up
#: to 5e-5.
SEARCH_FREE_GAP = 2.0
#: The sampler of each delta_i draws from the prior and accepts by the likelihood
#: (_from_prior) where std0 is below the likelihood's width and log L(xbar) - log L(delta0)
#: at most PRIOR_LOG_RATIO (acceptance then about exp(-PRIOR_LOG_RATIO) = 0.22 or more),
#: PRIOR_TRIES times before the quadrature sampler takes over: 8000 draws of 1000 data sets
#: of two near-identical systems in ~2 s instead of ~20 s.
PRIOR_LOG_RATIO = 1.5
PRIOR_TRIES = 16


def _width(a: float, w: float, ssr: float, cap: float) -> float:  # pragma: no cover - numba
    # the scale of data set i's likelihood in delta_i (a Student-t kernel, n - 2 df), at
    # most `cap`: sigma_i's bound factor, where it is kept, narrows it to ~ std_hi / sqrt(w)
    return min(math.sqrt(ssr / (w * max(2.0 * a - 1.0, 1.0))), cap)


def _mode_centres(
    nu: Any, lik: tuple[Any, ...], width: Any, cap: Any, frame: tuple[Any, Any]
) -> tuple[Any, Any, Any, Any, Any, Any]:
    # The map's extra centres: (y, s) of the modes of prior x likelihood, in units of width
    # as offsets from delta0 (the likelihood's centre at gap; frame = (std0 / width, gap)):
    # the modes reached from the precision-weighted mean of the two centres (one between
    # them) and from either centre (one pushed off it by the other kernel's tail) by EM steps
    # (_em_step). s = 0 where there is no centre to add: the two-centre map spaces its nodes
    # at the mode at most s / MODE_DENSITY apart, or the mode was found from an earlier
    # start (within its scale). The three searches share one loop, so that they overlap in
    # the processor. Scalars (numba) or arrays (NumPy) alike.
    a, w, ssr = lik[0], lik[1], lik[2]
    kappa, gap = frame
    r2 = kappa * kappa
    # the kernels' local variances: prior (r2 nu + y^2) / (nu + 1), likelihood 1 / lam,
    # lam = 2 a / (c + (y - gap)^2) + tail, c = ssr / (w width^2), tail = (width / cap)^2
    # (the Gaussian tail of sigma_i's bound factor)
    kernels = (
        gap,
        r2 * nu,
        1.0 / (nu + 1.0),
        2.0 * a,
        ssr / (w * width * width),
        (width / cap) ** 2,
    )
    y1, y2, y3 = gap * r2 / (r2 + 1.0), 0.0 * gap, gap
    for _ in range(_MODE_STEPS):
        y1, y2, y3 = _em_step(y1, kernels)[0], _em_step(y2, kernels)[0], _em_step(y3, kernels)[0]
    s1, s2 = _mode_scale(y1, r2, kernels), _mode_scale(y2, r2, kernels)
    s3 = _mode_scale(y3, r2, kernels)
    s2 = s2 * (np.abs(y2 - y1) >= s1)
    s3 = s3 * (np.abs(y3 - y1) >= s1) * (np.abs(y3 - y2) >= s2)
    return y1, s1, y2, s2, y3, s3


def _em_step(y: Any, kernels: tuple[Any, ...]) -> tuple[Any, Any]:
    # One EM step for a Student-t location: y <- the mean of the two centres weighted by
    # the kernels' local precisions at y, which raises prior x likelihood; also returns the
    # prior's local variance (kernels: see _mode_centres)
    # (one division: v_prior / v_lik = v_prior (a2 + tail d) / d, d = c + (y - gap)^2)
    gap, r2_nu, inv_nu1, a2, c, tail = kernels
    v_prior = (r2_nu + y * y) * inv_nu1
    d = c + (y - gap) ** 2
    ratio_d = v_prior * (a2 + tail * d)
    inv = 1.0 / (ratio_d + d)
    return gap * ratio_d * inv, v_prior * d * inv


def _mode_scale(y: Any, r2: Any, kernels: tuple[Any, ...]) -> Any:
    # the scale s of the mode at y (see _mode_centres), or 0 where the two-centre map
    # spaces its nodes there at most s / MODE_DENSITY apart
    gap = kernels[0]
    scale = np.sqrt(_em_step(y, kernels)[1])  # 1 / s^2 = 1 / v_prior + 1 / v_lik
    density = scale / np.sqrt(r2 + y * y) + scale / np.sqrt(1.0 + (y - gap) ** 2)
    return scale * ((density < MODE_DENSITY) * 1.0)


def _solve_y(
    target: float, lo: float, y: float, frame: tuple[float, ...]
) -> tuple[float, float]:  # pragma: no cover - compiled by numba
    # The node at u = target of the map with mode centres: y = (delta - delta0) / width with
    # asinh(y / kappa) + asinh(y - gap) + sum_k asinh((y - y_k) / s_k) = target, by Newton's
    # method from y >= lo (lo below the root), kept inside the bracket by bisection. frame:
    # kappa, gap and _mode_centres'. Returns y and d u / d y.
    kappa, gap = frame[0], frame[1]
    hi = math.inf
    for _ in range(100):
        miss = math.asinh(y / kappa) + math.asinh(y - gap) - target
        slope = 1.0 / math.sqrt(kappa * kappa + y * y) + 1.0 / math.sqrt(1.0 + (y - gap) ** 2)
        for k in range(2, 8, 2):
            if frame[k + 1] > 0.0:
                t = (y - frame[k]) / frame[k + 1]
                miss += math.asinh(t)
                slope += 1.0 / (frame[k + 1] * math.sqrt(1.0 + t * t))
        if abs(miss) < _U_TOL:
            break
        if miss < 0.0:
            lo = y
        else:
            hi = y
        y -= miss / slope
        if not lo < y < hi:  # Newton left the bracket (only possible with hi finite)
            y = (lo + hi) / 2.0
    return y, slope


def _tail_constant(nu: float) -> float:  # pragma: no cover - compiled by numba
    # log(2 c_nu nu^((nu - 1) / 2)) + log 2 of _prior_reach's bound (a function of nu only)
    log_c = math.lgamma((nu + 1.0) / 2.0) - math.lgamma(nu / 2.0) - 0.5 * math.log(nu * math.pi)
    return 2.0 * math.log(2.0) + log_c + (nu - 1.0) / 2.0 * math.log(nu)


def _log_drop(
    delta0: float, std0: float, lik: tuple[float, float, float, float]
) -> float:  # pragma: no cover - compiled by numba
    # (log L(xbar) - log L(delta0 +- std0)) / a: the likelihood's least within one std0 of
    # delta0, below its largest. Both reaches (_prior_reach, _lik_reach) bound the integral's
    # tails against its total, which is above P(|t_nu| < 1) >= 1/2 times that least value.
    # No sigma_i bound factor here: lik = a, w, ssr, xbar.
    a, w, ssr, xbar = lik
    far = abs(xbar - delta0) + std0
    return math.log1p(w * far * far / ssr)


def _prior_reach(
    std0: float, nu: float, a: float, drop: float, tail: float
) -> float:  # pragma: no cover - compiled by numba
    # Z std0, beyond which on either side of delta0 the integral holds less than
    # exp(-TAIL_LOG_MASS) of its total, from bounds: there the prior's mass, P(|t_nu| > Z)
    # <= 2 c_nu nu^((nu - 1) / 2) Z^-nu (its density below c_nu (z^2 / nu)^(-(nu + 1) / 2)),
    # times the likelihood's largest value (at xbar), against the total's lower bound
    # (drop: _log_drop; tail: _tail_constant). Far below the other reach where std0 is far
    # below the likelihood's width and nu not small.
    log_z = (tail + a * drop + TAIL_LOG_MASS) / nu
    return std0 * math.exp(log_z) if log_z < 700.0 else math.inf


def _lik_reach(
    lik: tuple[float, float, float, float], drop: float
) -> float:  # pragma: no cover - compiled by numba
    # D, beyond which (|delta - xbar| > D) either tail of the integral holds less than
    # exp(-TAIL_LOG_MASS) of its total, from bounds: there the integrand is below L(delta)
    # (the prior's mass is at most 1, L falls away from xbar), against the total's lower
    # bound (drop: _log_drop). About 6 widths beyond |xbar - delta0| + std0 for many scores,
    # where the fixed reach of _u_range is 10 x |xbar - delta0|. lik = a, w, ssr, xbar.
    a, w, ssr = lik[0], lik[1], lik[2]
    log_ratio = drop + (TAIL_LOG_MASS + math.log(2.0)) / a
    if log_ratio > 700.0:
        return math.inf
    return math.sqrt(ssr / w * math.expm1(log_ratio))


def _u_range(
    delta0: float,
    std0: float,
    nu: float,
    lik: tuple[float, float, float, float, float],
    frame: Any,
    modes: bool,
) -> tuple[float, float, float]:  # pragma: no cover - compiled by numba
    # The ends of the quadrature in u, so far out that the tails beyond hold ~exp(-TAIL_LOG_MASS)
    # of the integral, and y = (delta - delta0) / width at the lower end (lik: a, xbar, width,
    # _prior_reach's and _lik_reach's; frame: the map's, see _nodes)
    a, xbar, width, prior_reach, lik_reach = lik
    reach = max(std0, width, abs(xbar - delta0))
    reach *= max(10.0, 2.0 * math.exp(TAIL_LOG_MASS / (nu + 2.0 * a)))
    lo, hi = min(delta0, xbar) - reach, max(delta0, xbar) + reach
    lo, hi = max(lo, delta0 - prior_reach), min(hi, delta0 + prior_reach)
    lo, hi = max(lo, xbar - lik_reach), min(hi, xbar + lik_reach)
    u_lo = math.asinh((lo - delta0) / std0) + math.asinh((lo - xbar) / width)
    u_hi = math.asinh((hi - delta0) / std0) + math.asinh((hi - xbar) / width)
    y = (lo - delta0) / width
    if modes:  # u's terms asinh((y - y_k) / s_k) at the ends
        for k in range(2, 8, 2):
            if frame[k + 1] > 0.0:
                u_lo += math.asinh((y - frame[k]) / frame[k + 1])
                u_hi += math.asinh(((hi - delta0) / width - frame[k]) / frame[k + 1])
    return u_lo, u_hi, y


def _frame(
    delta0: float,
    std0: float,
    nu: float,
    lik: tuple[float, float, float, float],
    bound: tuple[np.ndarray, int, float, bool],
) -> tuple[float, float, float, tuple[float, ...]]:  # pragma: no cover - compiled by numba
    # The map of one data set's rule (_nodes): its likelihood width, where the prior's and
    # the likelihood's tail bounds end the rule (inf: nowhere), and the frame (kappa, gap,
    # _mode_centres'), with no mode centres within SEARCH_FREE_GAP widths of delta0
    a, w, ssr, xbar = lik
    offset, shift, cut = bound[1], bound[2], bound[3]
    cap = math.exp((shift - math.log(2.0 * w)) / 2.0) if offset >= 0 else math.inf
    width = _width(a, w, ssr, cap)
    kappa, gap = std0 / width, (xbar - delta0) / width
    prior_reach = lik_reach = math.inf
    if offset < 0:  # the bounds are for the likelihood without sigma_i's bound factor
        drop = _log_drop(delta0, std0, lik)
        lik_reach = _lik_reach(lik, drop)
        if cut:  # not far below the width: no cut (inf), the rule as before
            prior_reach = _prior_reach(std0, nu, a, drop, _tail_constant(nu))
            prior_reach = prior_reach if prior_reach <= PRIOR_REACH_WIDTHS * width else math.inf
    centres = (0.0, 0.0, 0.0, 0.0, 0.0, 0.0)
    if offset >= 0 or abs(gap) > SEARCH_FREE_GAP:  # else: none there (SEARCH_FREE_GAP)
        centres = _mode_centres(nu, lik, width, cap, (kappa, gap))
    return width, prior_reach, lik_reach, (kappa, gap, *centres)


def _nodes(
    delta0: float,
    std0: float,
    nu: float,
    lik: tuple[float, float, float, float],
    spacing: float,
    nodes: np.ndarray,
    bound: tuple[np.ndarray, int, float, bool],
) -> tuple[int, float, float, tuple[float, ...]]:  # pragma: no cover - compiled by numba
    # Fill the rows of nodes (shape (_ROWS, _MAX_NODES)) at the nodes of one data set: 0 ell
    # (log of t kernel x likelihood, no Jacobian), 1 z (z_prior), 2 jac (d delta / du),
    # 3 score (d log p(x_i | delta) / d delta), 4 d log t / d nu, 5 y ((delta - delta0) /
    # width, where the map has mode centres); return (nodes, u of the first node, step, the
    # map: kappa, gap and _mode_centres'). One division per quantity and one log per
    # node: this loop is most of the integrated model's cost. bound = (tables, offset,
    # log(2 std_hi^2), cut): sigma_i's bound factor log Q(a, quad / (2 std_hi^2)) from
    # tables[offset:] (.sigma_bound), or none where offset < 0; cut: whether the prior's
    # tail bound may end the rule (CUT_MIN_DATASETS).
    a, w, ssr, xbar = lik
    tables, offset, shift, cut = bound
    width, prior_reach, lik_reach, frame = _frame(delta0, std0, nu, lik, bound)
    kappa, gap = frame[0], frame[1]
    modes = frame[3] > 0.0 or frame[5] > 0.0 or frame[7] > 0.0
    reaches = (a, xbar, width, prior_reach, lik_reach)
    u_lo, u_hi, y = _u_range(delta0, std0, nu, reaches, frame, modes)
    n = min(max(int(math.ceil((u_hi - u_lo) / spacing)), _MIN_NODES), _MAX_NODES)
    step = (u_hi - u_lo) / n
    # d y / d u at the last two nodes: the next node is predicted by the two-step Adams-Bashforth
    # rule (its Newton iterations start there)
    dy, dy_last = 0.0, 0.0
    root = gap * gap + 1.0 + kappa * kappa
    inv_nu, half_nu1, log_half = 1.0 / nu, (nu + 1.0) / 2.0, math.log(0.5)
    wide, score_scale = w * width * width, -2.0 * a * w * width
    e = math.exp(u_lo + step / 2.0)
    ratio, e_inv = math.exp(step), 1.0 / e
    ratio_inv = 1.0 / ratio
    for k in range(n):
        if modes:
            guess = y + step * (1.5 * dy - 0.5 * dy_last)
            y, slope = _solve_y(u_lo + (k + 0.5) * step, y, max(guess, y), frame)
            dy, dy_last = 1.0 / slope, dy
            z, z_lik = y / kappa, y - gap
            nodes[2, k] = width / slope
            nodes[5, k] = y
        else:
            big = abs(gap) + math.sqrt(root + kappa * (e + e_inv))
            x = big / (e_inv + kappa) if gap >= 0 else (e + kappa) / big
            x_inv = 1.0 / x
            y_lik, y_inv = e * x_inv, x * e_inv  # exp(asinh z_lik)
            z = (x - x_inv) / 2.0
            z_lik = (y_lik - y_inv) / 2.0
            # 2 std0 cosh(asinh z), 2 width cosh(asinh z_lik): d delta / du = cp cl / (2 (cp + cl))
            cp, cl = std0 * (x + x_inv), width * (y_lik + y_inv)
            nodes[2, k] = cp * cl / (2.0 * (cp + cl))
        zz = z * z
        # log(1 + x), not log1p: 2.7x as fast in numba, and only its absolute error (1e-16)
        # enters the sums
        log_t = math.log(1.0 + zz * inv_nu)
        quad = ssr + wide * z_lik * z_lik
        log_quad = math.log(quad)
        nodes[0, k] = -half_nu1 * log_t - a * (log_quad + log_half)
        nodes[1, k] = z
        nodes[3, k] = score_scale * z_lik / quad
        if offset >= 0:  # + log Q(a, y), y = quad / (2 std_hi^2): d/d delta = d/d log y x ...
            f, d_f = log_bound(log_quad - shift, tables, offset)
            nodes[0, k] += f
            nodes[3, k] *= 1.0 - d_f / a  # ... d log quad / d delta = -score / a
        nodes[4, k] = ((nu + 1.0) * zz / (nu * (nu + zz)) - log_t) / 2.0
        e *= ratio
        e_inv *= ratio_inv
    return n, u_lo + step / 2.0, step, frame


def _z_prior_at(
    u: float, y_below: float, frame: tuple[float, ...]
) -> float:  # pragma: no cover - compiled by numba
    # z_prior at u under the map of _nodes (frame: its fourth return); y_below: the y of a
    # node at or below u, where the map has mode centres
    kappa, gap = frame[0], frame[1]
    if frame[3] > 0.0 or frame[5] > 0.0 or frame[7] > 0.0:
        return _solve_y(u, y_below, y_below, frame)[0] / kappa
    e = math.exp(u)
    big = abs(gap) + math.sqrt(gap * gap + 1.0 + kappa * (e + 1.0 / e) + kappa * kappa)
    x = big / (1.0 / e + kappa) if gap >= 0 else (e + kappa) / big
    return (x - 1.0 / x) / 2.0


def _shared_reach(
    delta0: float,
    std0: float,
    nu: float,
    lik: tuple[np.ndarray, ...],
    offsets: np.ndarray,
    shared: np.ndarray,
) -> float:  # pragma: no cover - compiled by numba
    # Mark (shared[i] = 1) the data sets whose prior tail bound ends the rule within
    # SHARED_REACH_WIDTHS likelihood widths of delta0 (no sigma_i bound factor) and return
    # the largest such reach (0: none)
    a, w, ssr, xbar = lik
    tail, reach = _tail_constant(nu), 0.0
    for i in range(a.shape[0]):
        shared[i] = 0.0
        if offsets[i] < 0:
            drop = _log_drop(delta0, std0, (a[i], w[i], ssr[i], xbar[i]))
            r = _prior_reach(std0, nu, a[i], drop, tail)
            if r <= SHARED_REACH_WIDTHS * _width(a[i], w[i], ssr[i], math.inf):
                shared[i] = 1.0
                reach = max(reach, r)
    return reach


def _shared_nodes(
    std0: float, nu: float, reach: float, spacing: float, rule: np.ndarray
) -> tuple[int, float]:  # pragma: no cover - compiled by numba
    # The shared rule: the midpoint rule in v = asinh((delta - delta0) / std0) over
    # |delta - delta0| <= reach; rows of rule: 0 log t + log cosh v (the Jacobian over
    # std0), 1 z, 2 d log t / d nu. Returns (nodes, step).
    v_hi = math.asinh(reach / std0)
    n = min(max(int(math.ceil(2.0 * v_hi / spacing)), _MIN_NODES), _MAX_NODES)
    step = 2.0 * v_hi / n
    inv_nu, half_nu1 = 1.0 / nu, (nu + 1.0) / 2.0
    for k in range(n):
        v = -v_hi + (k + 0.5) * step
        z = math.sinh(v)
        zz = z * z
        log_t = math.log(1.0 + zz * inv_nu)  # not log1p, as in _nodes
        rule[0, k] = -half_nu1 * log_t + math.log(math.cosh(v))
        rule[1, k] = z
        rule[2, k] = ((nu + 1.0) * zz / (nu * (nu + zz)) - log_t) / 2.0
    return n, step


def _shared_one(
    delta0: float,
    std0: float,
    lik: tuple[float, float, float, float],
    rule: np.ndarray,
    n: int,
    step: float,
    ell: np.ndarray,
) -> tuple[float, float, float, float]:  # pragma: no cover - compiled by numba
    # log p(x_i | delta0, std0, nu) (without the t normaliser) and its derivatives by the
    # shared rule (_shared_nodes); ell: scratch
    a, w, ssr, xbar = lik
    gap, log_half = delta0 - xbar, math.log(0.5)
    top = -math.inf
    for k in range(n):
        d = gap + std0 * rule[1, k]
        ell[k] = rule[0, k] - a * (math.log(ssr + w * d * d) + log_half)
        top = max(top, ell[k])
    total = g0 = g1 = g2 = 0.0
    for k in range(n):
        d = gap + std0 * rule[1, k]
        p = math.exp(ell[k] - top)
        ps = p * (-2.0 * a * w * d / (ssr + w * d * d))
        total += p
        g0 += ps
        g1 += ps * rule[1, k]
        g2 += p * rule[2, k]
    return top + math.log(total * step), g0 / total, g1 / total, g2 / total


def _loglik_kernel(
    delta0: float,
    std0: float,
    nu: float,
    lik: tuple[np.ndarray, ...],
    spacing: float,
    bound: tuple[np.ndarray, np.ndarray, float],
) -> tuple[np.ndarray, np.ndarray]:  # pragma: no cover - compiled by numba
    # The derivatives in delta0 and std0 are integrated by parts, E[d log L / d delta] and
    # E[z d log L / d delta] (the t kernel depends on delta - delta0 and on its scale only):
    # the direct forms, E[d log t / d theta], carry the rule's error times 1 / std0, which
    # made NUTS diverge where std0 is tiny.
    # bound = (offsets, tables, log(2 std_hi^2)): see _nodes (offsets[i] < 0: no factor)
    a, w, ssr, xbar = lik
    offsets, tables, shift = bound
    out, grad = np.empty(a.shape[0]), np.empty((a.shape[0], 3))
    cut = a.shape[0] >= CUT_MIN_DATASETS  # the prior's tail bound may end the rule
    nodes = np.empty((_ROWS, _MAX_NODES))
    ell, z, jac, score, d_nu = nodes[0], nodes[1], nodes[2], nodes[3], nodes[4]
    shared = np.zeros(a.shape[0])
    rule, n_shared, step_shared = np.empty((3, _MAX_NODES)), 0, 0.0
    if cut:
        reach = _shared_reach(delta0, std0, nu, lik, offsets, shared)
        if reach > 0.0:
            n_shared, step_shared = _shared_nodes(std0, nu, reach, spacing, rule)
    for i in range(a.shape[0]):
        lik_i = (a[i], w[i], ssr[i], xbar[i])
        if shared[i] > 0.0:
            out[i], grad[i, 0], grad[i, 1], grad[i, 2] = _shared_one(
                delta0, std0, lik_i, rule, n_shared, step_shared, ell
            )
            continue
        bound_i = (tables, int(offsets[i]), shift, cut)
        n, _, step, _ = _nodes(delta0, std0, nu, lik_i, spacing, nodes, bound_i)
        top = ell[:n].max()
        total = g0 = g1 = g2 = 0.0
        for k in range(n):
            p = math.exp(ell[k] - top) * jac[k]
            ps = p * score[k]
            total += p
            g0 += ps
            g1 += ps * z[k]
            g2 += p * d_nu[k]
        out[i] = top + math.log(total * step / std0)
        grad[i, 0], grad[i, 1], grad[i, 2] = g0 / total, g1 / total, g2 / total
    return out, grad


_JITABLE: list[bool] = []


def register_jitable_helpers() -> None:
    """Make the scalar kernels callable from other numba functions (once per process)."""
    if not _JITABLE:
        from numba.extending import register_jitable

        for helper in (
            interpolate,
            log_bound,
            _width,
            _em_step,
            _mode_scale,
            _mode_centres,
            _solve_y,
            _tail_constant,
            _log_drop,
            _prior_reach,
            _shared_reach,
            _shared_nodes,
            _shared_one,
            _lik_reach,
            _u_range,
            _frame,
            _nodes,
            _z_prior_at,
            _sample_u,
            _from_prior,
            _loglik_kernel,
        ):
            register_jitable(helper)
        _JITABLE.append(True)


def kernel_version() -> int:
    """Return a checksum of the compiled functions' source, for caches of compiled code.

    PyTensor caches the numba code of the model's Op by the Op's properties; this
    number, part of that cache key, makes an edit of this module or of a module its
    kernels call (``CACHE_DEPENDS``) recompile, as numba's cache does
    (:mod:`isbetter.core.cache`).
    """
    import importlib
    import inspect
    import zlib

    try:
        modules = [importlib.import_module(name) for name in (__name__, *CACHE_DEPENDS)]
        source = "".join(inspect.getsource(module) for module in modules)
    except (OSError, TypeError):  # no source (frozen install): the version of the rule
        source = f"{NODE_SPACING} {TAIL_LOG_MASS} {_MIN_NODES} {_MAX_NODES} {MODE_DENSITY}"
    return zlib.crc32(source.encode())


def compiled_kernels() -> tuple[Any, Any]:
    r"""Return the numba-compiled likelihood and sampler (from isbetter's cache).

    ``loglik(delta0, std0, nu, (a, w, ssr, xbar), spacing, bound)`` returns
    ``(logq, dlogq)``: ``logq[i]`` is :math:`\log p(x_i \mid \delta_0, \sigma_0, \nu)`
    without the Student-t normaliser's :math:`\log c(\nu)`, with nodes `spacing`
    apart in :math:`u`; ``dlogq[i]`` its derivatives in ``(delta0, std0, nu)``: the
    same rule applied to the derivatives of the integrand. `bound` is
    :func:`with_bound` (keep :math:`\sigma_i`'s bound factor) or :func:`no_bound`.
    ``draw(delta0, std0, nu, (a, w, ssr, xbar), spacing, bound, rng)`` is the sampler
    of :func:`.quadrature.draw_deltas`. Compiled on first use on a machine, then loaded
    (:mod:`isbetter.core.cache`).
    """
    from isbetter.core import cache

    kernels = cache.compiled("hierarchical_quadrature", _build, _warm_up)
    return kernels["loglik"], kernels["draw"]


def _build(on_disk: bool) -> dict[str, Any]:
    import numba

    register_jitable_helpers()
    return {
        "loglik": numba.njit(cache=on_disk)(_loglik_kernel),
        # nogil: draw_deltas runs blocks of draws in threads
        "draw": numba.njit(cache=on_disk, nogil=True)(_draw_kernel),
    }


def no_bound(q: int) -> tuple[np.ndarray, np.ndarray, float]:
    """Return the kernels' `bound` argument for `q` data sets without sigma_i's bound factor."""
    return np.full(q, -1.0), np.zeros(0), 0.0


def with_bound(a: np.ndarray, std_hi: float) -> tuple[np.ndarray, np.ndarray, float]:
    """Return the kernels' `bound` argument that keeps sigma_i's bound factor (std_hi)."""
    offsets, tables = bound_tables(a)
    return offsets, tables, math.log(2.0 * std_hi**2)


def _warm_up(kernels: dict[str, Any]) -> None:
    lik = (np.full(2, 4.5), np.full(2, 5.0), np.full(2, 10.0), np.zeros(2))
    kernels["loglik"](0.0, 1.0, 2.0, lik, NODE_SPACING, no_bound(2))
    ones = np.ones(1)
    rng = np.random.default_rng(0)
    kernels["draw"](ones * 0.0, ones, ones * 2.0, lik, NODE_SPACING, no_bound(2), rng)


def _from_prior(
    delta0: float,
    std0: float,
    nu: float,
    lik: tuple[float, float, float, float],
    out: np.ndarray,
    rng: np.random.Generator,
) -> bool:  # pragma: no cover - compiled by numba
    # Rejection from the prior, where the likelihood is wide against std0 and near delta0:
    # delta ~ t_nu(delta0, std0), accepted with probability L(delta) / L(xbar) <= 1 (the
    # likelihood's largest value; no sigma_i bound factor here: lik = a, w, ssr, xbar). An
    # accepted draw follows the conditional exactly; after PRIOR_TRIES rejections (or where
    # the acceptance would be low) it returns False and the quadrature sampler draws
    # instead, so the mixture of the two is the conditional too. Writes the draw in out[0].
    a, w, ssr, xbar = lik
    if not std0 * std0 * w * max(2.0 * a - 1.0, 1.0) < ssr:  # std0 < the likelihood's width
        return False
    gap = xbar - delta0
    if a * math.log1p(w * gap * gap / ssr) > PRIOR_LOG_RATIO:  # L(delta0) / L(xbar) too low
        return False
    for _ in range(PRIOR_TRIES):
        d = delta0 + std0 * rng.standard_t(nu)
        if math.log(rng.random()) < -a * math.log1p(w * (xbar - d) ** 2 / ssr):
            out[0] = d
            return True
    return False


def _draw_kernel(
    delta0: np.ndarray,
    std0: np.ndarray,
    nu: np.ndarray,
    lik: tuple[np.ndarray, ...],
    spacing: float,
    bound: tuple[np.ndarray, np.ndarray, float],
    rng: np.random.Generator,
) -> np.ndarray:  # pragma: no cover - compiled by numba
    a, w, ssr, xbar = lik
    offsets, tables, shift = bound
    out = np.empty((delta0.shape[0], a.shape[0]))
    cut = a.shape[0] >= CUT_MIN_DATASETS  # as _loglik_kernel's
    nodes = np.empty((_ROWS, _MAX_NODES))
    ell, jac, y = nodes[0], nodes[2], nodes[5]
    work = np.empty((4, _MAX_NODES))
    for s in range(delta0.shape[0]):
        if not (math.isfinite(delta0[s]) and 0.0 < std0[s] < math.inf and 1.0 <= nu[s] < math.inf):
            out[s, :] = math.nan  # no such draw in a whole chain; the samplers would not end
            continue
        for i in range(a.shape[0]):
            lik_i = (a[i], w[i], ssr[i], xbar[i])
            if offsets[i] < 0 and _from_prior(delta0[s], std0[s], nu[s], lik_i, out[s, i:], rng):
                continue
            bound_i = (tables, int(offsets[i]), shift, cut)
            n, u0, step, frame = _nodes(delta0[s], std0[s], nu[s], lik_i, spacing, nodes, bound_i)
            for k in range(n):
                ell[k] += math.log(jac[k])
            position = _sample_u(ell, n, work, rng)  # node int(position) lies below the draw
            z = _z_prior_at(position * step + u0, y[int(position)], frame)
            out[s, i] = delta0[s] + std0[s] * z
    return out


def _sample_u(
    ell: np.ndarray, n: int, work: np.ndarray, rng: np.random.Generator
) -> float:  # pragma: no cover - compiled by numba
    # One draw, in units of the step from the first node, from the density whose log is
    # the cubic Hermite interpolant of ell[:n] (central-difference slopes): exact, by
    # rejection from exp(chord + bound) (the chord interpolates the log linearly;
    # cubic - chord = x (1 - x) (A (1 - x) - B x) <= 4/27 (A+ + B-) on [0, 1]). ell is
    # floored at its top - 700, as the NumPy sampler's: sigma_i's bound factor falls
    # like -exp(2 |delta|) far out, and those steps' bounds overflowed (an endless loop).
    top = ell[:n].max()
    for k in range(n):  # as if 0 below exp(-700): the envelope's bound cannot overflow
        ell[k] = max(ell[k], top - 700.0)
    chord, big_a, big_b, cum = work[0], work[1], work[2], work[3]
    total = 0.0
    for j in range(n - 1):
        chord[j] = ell[j + 1] - ell[j]
        left = ell[1] - ell[0] if j == 0 else (ell[j + 1] - ell[j - 1]) / 2.0
        right = ell[n - 1] - ell[n - 2] if j == n - 2 else (ell[j + 2] - ell[j]) / 2.0
        big_a[j], big_b[j] = left - chord[j], right - chord[j]
        bound = 4.0 / 27.0 * (max(big_a[j], 0.0) + max(-big_b[j], 0.0))
        b = chord[j]
        mean = 1.0 + b / 2.0 if abs(b) < 1e-8 else math.expm1(b) / b
        total += math.exp(ell[j] - top + bound) * mean
        cum[j] = total
    while True:
        target = rng.random() * total
        j = 0
        while j < n - 2 and cum[j] < target:
            j += 1
        b, v = chord[j], rng.random()
        x = v if abs(b) < 1e-8 else math.log1p(v * math.expm1(b)) / b
        bound = 4.0 / 27.0 * (max(big_a[j], 0.0) + max(-big_b[j], 0.0))
        excess = x * (1.0 - x) * (big_a[j] * (1.0 - x) - big_b[j] * x) - bound
        if math.log(rng.random()) < excess:
            return j + x
