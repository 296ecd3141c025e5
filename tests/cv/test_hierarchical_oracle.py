r"""The hierarchical posterior against an independent computation of the same posterior.

The oracle shares no code with the model. For the model of Corani et al. (2017)
(``isbetter.cv.hierarchical.priors.HierarchicalPriors``, reference defaults) it computes
the posterior means of every :math:`\delta_i` and :math:`P(\delta_i > rope)` by
deterministic quadrature:

* :math:`\sigma_i \sim U(0, \bar\sigma)` in closed form (the compound-symmetry
  MVN likelihood integrated over :math:`\sigma_i`: an incomplete gamma function);
* :math:`\delta_i` on a fine uniform grid of cells, against the exact mass of
  the Student-t prior in each cell (CDF differences, so even a prior narrower
  than a cell is exact), with the ROPE on a cell edge;
* :math:`\delta_0` on every cell of the region where it has mass (a first,
  coarser pass finds it), :math:`\log\sigma_0` and :math:`\log(\nu - 1)` on
  uniform grids;
* :math:`\alpha, \beta` integrated out of :math:`\nu`'s prior: the integral
  over :math:`\beta` in closed form, over :math:`\alpha` by Gauss-Legendre.

Its own error is measured by refining every grid (``test_oracle_grids_are_converged``,
slow): at most ``ORACLE_ERROR`` on the study below, which is added to the Monte
Carlo standard errors. The MCMC side's standard errors are ESS-based (ArviZ's
``mcse(method="mean")`` of each :math:`\delta_i` and of each indicator
:math:`\delta_i > rope`).

The study is the reviewer's case: 10 data sets x 10 runs x 10 folds, rho 0.1,
rope 0.01, noisy (per-fold sd 0.05-0.10), true effects around 0.02-0.04 and two
data sets near 0; with few data sets :math:`\sigma_0` is poorly identified.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from _oracle import nu_prior
from scipy import special, stats

from isbetter import ConvergenceWarning, from_arrays
from isbetter.cv.hierarchical.model import HierarchicalModel, hierarchical_test

SEED = 20240917
ROPE = 0.01
#: largest change of the oracle's means / probabilities when every grid is refined
#: (cells 800 -> 1600, sigma0 32 -> 60, nu 24 -> 48, span 10 -> 14): measured 1.1e-5 and
#: 8.2e-5; checked by test_oracle_grids_are_converged
ORACLE_ERROR = {"mean": 5e-5, "prob": 5e-4}
#: tolerance in combined standard errors
Z_MAX = 4.0
BASE_GRID = {"cells": 800, "n_sigma": 32, "n_nu": 24, "span": 10.0}


def study(q: int = 10, *, seed: int = SEED, runs: int = 10, folds: int = 10, rho: float = 0.1):
    """A study like the reviewer's: per-fold differences with correlation `rho`."""
    g = np.random.default_rng(seed)
    n = runs * folds
    if q == 10:
        effects = np.array([0.0, 0.003, 0.018, 0.022, 0.026, 0.03, 0.033, 0.037, 0.04, 0.045])
    else:
        effects = g.normal(0.03, 0.012, size=q)
    sigma = g.uniform(0.05, 0.10, size=q)
    x = g.uniform(0.7, 0.9, size=(q, 1)) + g.normal(0, 0.02, size=(q, n))
    common, own = g.normal(size=(q, 1)), g.normal(size=(q, n))
    d = effects[:, None] + sigma[:, None] * (np.sqrt(rho) * common + np.sqrt(1 - rho) * own)
    return from_arrays(x, x - d, runs=runs).paired("A", "B")


def _setup(diffs, rope, rho, cells, span):
    n = np.array([v.size for v in diffs], dtype=float)
    xbar = np.array([v.mean() for v in diffs])
    ss = np.array([((v - v.mean()) ** 2).sum() for v in diffs])
    sd = np.sqrt(ss / n)  # population sd, as the reference code
    a, w, ssr = (n - 1) / 2, n / (1 + (n - 1) * rho), ss / (1 - rho)

    def log_lik(delta):
        """log p(x_i | delta) + const, sigma_i ~ U(0, 1000 mean sd) integrated out."""
        quad = ssr[:, None] + w[:, None] * (xbar[:, None] - np.atleast_1d(delta)) ** 2
        bound = special.gammaincc(a[:, None], quad / (2 * (1000 * sd.mean()) ** 2))
        return -a[:, None] * np.log(quad) + np.log(bound)

    width = np.sqrt(ssr / (w * np.maximum(2 * a - 1, 1)))  # of the likelihood in delta_i
    lo, hi = xbar.min() - span * width.max(), xbar.max() + span * width.max()
    dx = (hi - lo) / cells
    lo = rope - np.floor((rope - lo) / dx) * dx  # the ROPE on a cell edge
    c = lo + (np.arange(cells) + 0.5) * dx
    peak = log_lik(c).max(axis=1, keepdims=True)
    lik = np.exp(log_lik(c) - peak)
    priors = {
        "delta0_hi": max(max(np.abs(v).max() for v in diffs), sd.max()),
        "std0_hi": 1000 * np.std(xbar),
        "std0_lo": 1e-6 * width.min(),
        "std0_top": 50 * (np.std(xbar) + width.max()),
        "lik": lambda delta: np.exp(log_lik(delta) - peak),  # on the scale of the rows
    }
    return c, dx, np.vstack([lik, lik * c, lik * (c > rope)]), priors


def oracle(scores, rope: float, rho: float = 0.1, **grid) -> dict[str, np.ndarray]:
    """Posterior means of delta_i and P(delta_i > rope) by quadrature (see the module)."""
    grid = {**BASE_GRID, **grid}
    cells = grid["cells"]
    diffs = [np.asarray(v, dtype=float) for v in scores.differences]
    q = len(diffs)
    c, dx, rows, priors = _setup(diffs, rope, rho, cells, grid["span"])
    top = min(priors["std0_hi"], priors["std0_top"])
    log_s = np.linspace(np.log(priors["std0_lo"]), np.log(top), grid["n_sigma"])
    log_n = np.linspace(np.log(1e-6), np.log(3000.0), grid["n_nu"])  # log(nu - 1)
    nus = 1 + np.exp(log_n)
    log_prior = np.log(nu_prior(nus)) + log_n  # d nu = (nu - 1) d log(nu - 1)
    dist = np.abs(np.arange(-cells, cells + 1))

    def run(centres):
        """Weights and conditional moments on (sigma0, nu, delta0 = c[centres])."""
        offset = np.arange(cells)[:, None] - centres[None, :] + cells
        inside = np.abs(c[centres]) < priors["delta0_hi"]
        log_w, moments = [], []
        for ls in log_s:
            s0 = np.exp(ls)
            # mass of t_nu(delta0, s0) in the cell `dist` cells away from delta0's
            upper = special.stdtr(nus[:, None], -(dist - 0.5) * dx / s0)
            mass = upper - special.stdtr(nus[:, None], -(dist + 0.5) * dx / s0)
            mass[:, cells] = 1 - 2 * special.stdtr(nus, -0.5 * dx / s0)
            r = rows @ mass[:, offset].transpose(1, 0, 2).reshape(cells, -1)
            r = r.reshape(3 * q, len(nus), -1).transpose(1, 0, 2)  # (nu, 3q, delta0)
            with np.errstate(divide="ignore"):
                total = np.log(r[:, :q]).sum(axis=1) + log_prior[:, None] + ls  # d s0 = s0 d ls
            log_w.append(np.where(inside, total, -np.inf))
            moments.append(r[:, q:] / np.tile(r[:, :q], (1, 2, 1)))
        log_w_arr = np.array(log_w)
        return np.exp(log_w_arr - log_w_arr.max()), np.array(moments)

    coarse = np.arange(cells // 20, cells, 10)
    weights, _ = run(coarse)
    where = coarse[weights.sum(axis=(0, 1)) > 1e-13 * weights.sum(axis=(0, 1)).max()]
    weights, moments = run(
        np.arange(max(where.min() - 10, 0), min(where.max() + 10, cells - 1) + 1)
    )
    total = weights.sum()
    both = np.einsum("snj,snij->i", weights, moments) / total
    return {
        "mean": both[:q],
        "prob": both[q:],
        "edge_sigma": weights.sum(axis=(1, 2))[[0, -1]] / total,
        "edge_nu": weights.sum(axis=(0, 2))[[0, -1]] / total,
        "edge_delta0": weights.sum(axis=(0, 1))[[0, -1]] / total,
    }


def mcse(x: np.ndarray) -> np.ndarray:
    """ESS-based Monte Carlo standard error of the mean of each column of (chain, draw, k)."""
    import arviz as az

    return az.mcse(az.convert_to_dataset({"x": x}), method="mean")["x"].to_numpy()


def z_scores(res, reference: dict[str, np.ndarray], rope: float) -> dict[str, np.ndarray]:
    """(MCMC - oracle) / combined standard error, for the means and the probabilities."""
    delta = res.idata.posterior["delta"].to_numpy()
    above = (delta > rope).astype(float)
    out = {}
    for key, draws in (("mean", delta), ("prob", above)):
        p = reference[key]
        # an indicator that is constant in the draws has MCSE 0: floor it at its binomial value
        floor = np.sqrt(p * (1 - p) / draws[..., 0].size) if key == "prob" else 0.0
        se = np.sqrt(np.maximum(mcse(draws), floor) ** 2 + ORACLE_ERROR[key] ** 2)
        out[key] = (draws.mean(axis=(0, 1)) - p) / se
    return out


@pytest.fixture(scope="module")
def scores10():
    return study(10)


@pytest.fixture(scope="module")
def oracle10(scores10):
    return oracle(scores10, ROPE)


def test_study_is_the_hard_case(scores10):
    # noisy data sets: P(delta_i > rope) far from 0 and 1, as in the review
    assert (
        scores10.n_datasets == 10 and set(scores10.n_folds) == {10} and set(scores10.n_runs) == {10}
    )
    means = scores10.mean_differences()
    assert means.max() > 0.04 and means.min() < 0.0


def test_oracle_grid_holds_the_posterior(oracle10):
    # the grids reach past the posterior: negligible weight at their ends
    for key in ("edge_sigma", "edge_nu", "edge_delta0"):
        assert np.all(oracle10[key] < 1e-5), (key, oracle10[key])


def test_oracle_pieces_against_brute_force(scores10):
    """The oracle's likelihood against the dense MVN integrated over sigma_i numerically,
    and its cell rule against adaptive quadrature of the continuous integrand."""
    from scipy import integrate, stats

    diffs = [np.asarray(v, dtype=float) for v in scores10.differences]
    c, dx, rows, priors = _setup(diffs, ROPE, 0.1, BASE_GRID["cells"], BASE_GRID["span"])
    i, x = 3, diffs[3]
    cov = 0.9 * np.eye(x.size) + 0.1 * np.ones((x.size, x.size))

    _, log_det = np.linalg.slogdet(cov)

    def direct(delta):  # int_0^1 MVN(x; delta 1, s^2 M) ds (the mass is near s = 0.07)
        form = (x - delta) @ np.linalg.solve(cov, x - delta)  # dense M^-1, no closed form

        def f(s):
            logpdf = -0.5 * (x.size * np.log(2 * np.pi * s**2) + log_det + form / s**2)
            return np.exp(logpdf - log_scale)

        log_scale = -0.5 * (x.size * np.log(2 * np.pi * 0.07**2) + log_det + form / 0.07**2)
        return integrate.quad(f, 1e-3, 1.0, points=[0.07], limit=200)[0] * np.exp(log_scale)

    lik = priors["lik"]
    for d1, d2 in [(0.0, 0.05), (0.02, -0.03)]:
        ratio = direct(d1) / direct(d2)
        assert lik(d1)[i, 0] / lik(d2)[i, 0] == pytest.approx(ratio, rel=1e-6)
    # delta0 on a cell centre, as in the oracle (a prior narrower than a cell is then exact)
    for d0, s0, nu in [(c[400], 0.01, 3.0), (c[450], 1e-5, 1.5), (c[300], 0.05, 300.0)]:
        prior = stats.t(nu, d0, s0)
        ours = ((prior.cdf(c + dx / 2) - prior.cdf(c - dx / 2)) * rows[i]).sum()
        exact = integrate.quad(
            lambda t, p=prior: p.pdf(t) * lik(t)[i, 0],
            c[0] - dx / 2,
            c[-1] + dx / 2,
            points=[d0],
            limit=500,
            epsrel=1e-10,
        )[0]
        assert ours == pytest.approx(exact, rel=1e-4)


def test_default_fit_agrees_with_the_oracle(scores10, oracle10):
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)  # default settings converge
        res = hierarchical_test(scores10, rope=ROPE, rng=SEED)
    assert res.settings["parameterization"] == "integrated"
    assert res.diagnostics.divergences == 0
    z = z_scores(res, oracle10, ROPE)
    for key in ("mean", "prob"):
        assert np.all(np.abs(z[key]) < Z_MAX), (key, np.round(z[key], 2))
    # the statistic that flags the centred fit (below): measured 10.3 here, 45 there
    assert np.sum(z["mean"] ** 2) < stats.chi2.ppf(0.999, 10)


@pytest.mark.slow  # compiles the centred model (~30 s) and fits it
def test_centred_parameterisation_is_off_at_q10(scores10, oracle10):
    """The defect the review found: the centred fit under-shrinks with few data sets."""
    model = HierarchicalModel(10, parameterization="centred")
    chi2 = []
    for seed in (1, 2, 3):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            res = model.fit(scores10, rope=ROPE, rng=seed)
        chi2.append(float(np.sum(z_scores(res, oracle10, ROPE)["mean"] ** 2)))
    # The statistic: the sum of the squared z of the means, chi^2 with 10 degrees of
    # freedom for a calibrated fit (somewhat more spread, as the z share the
    # hyper-parameters' error). Measured with the hand-written density, seeds 0-3 and
    # SEED: 5.3, 87, 96, 96, 22: the funnel is off in most runs, not in all, so the test
    # asks for two of three seeds beyond the 0.999 quantile (29.6).
    assert sum(c > stats.chi2.ppf(0.999, 10) for c in chi2) >= 2, chi2


@pytest.mark.slow  # the refined oracle takes ~1 min
def test_oracle_grids_are_converged(scores10, oracle10):
    fine = oracle(scores10, ROPE, cells=1600, n_sigma=60, n_nu=48, span=14.0)
    assert np.abs(fine["mean"] - oracle10["mean"]).max() < ORACLE_ERROR["mean"]
    assert np.abs(fine["prob"] - oracle10["prob"]).max() < ORACLE_ERROR["prob"]


# --------------------------------------------------------------------------- the quadrature
def _adaptive_log_integral(delta0, std0, nu, a, w, ssr, xbar):
    """log int t_nu(d; delta0, std0) (ssr + w (xbar - d)^2)^-a d(d), by scipy's adaptive quad
    between breakpoints at both centres and at the integrand's highest point on a dense
    grid, and their multiples of both widths."""
    from scipy import integrate, stats

    width = np.sqrt(ssr / (w * max(2 * a - 1, 1)))
    prior = stats.t(nu, delta0, std0)

    def log_f(d):
        return prior.logpdf(d) - a * np.log((ssr + w * (xbar - d) ** 2) / 2)

    t = np.sinh(np.linspace(-25, 25, 20001))
    grid = np.concatenate([m + s * t for m in (delta0, xbar) for s in (std0, width)])
    values = log_f(grid)
    top = grid[np.nanargmax(values)]
    points = {
        m + k * s for m in (delta0, xbar, top) for s in (std0, width) for k in (-20, -2, 0, 2, 20)
    }
    points = np.array(sorted(points))
    peak = np.nanmax(values)
    edges = np.concatenate([[-np.inf], points, [np.inf]])
    # relative accuracy only (epsabs=0: the mass can lie far below the highest point, at a
    # narrow spike); quad then says it reached round-off on the pieces far in the tails
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", integrate.IntegrationWarning)
        total = sum(
            integrate.quad(
                lambda d: np.exp(log_f(d) - peak), lo, hi, limit=200, epsabs=0.0, epsrel=1e-11
            )[0]
            for lo, hi in zip(edges[:-1], edges[1:], strict=True)
        )
    return np.log(total) + peak


#: (scores per data set n, std0 / likelihood width, gap / width, nu): the likelihood- and
#: the prior-dominated cases, bimodal ones (an outlying data set), a heavy-tailed n = 2
CASES = [
    (n, ratio, gap, nu)
    for n in (2, 10, 100)
    for ratio in (1e-4, 1e-2, 1.0, 100.0)
    for gap in (0.0, 1.5, 30.0)
    for nu in (1.2, 300.0)
]
#: Prior and likelihood both near-Gaussian (nu = 1000, 1000-10 000 scores), std0 within a
#: factor 2 of the likelihood's width and the centres 20-50 widths apart: the product peaks
#: between the centres, 10-45 of its own widths from either. The map with two centres put
#: its nodes there several of those widths apart and missed log p(x_i | delta0, std0, nu) by
#: 0.0002-0.43 in these cases (issue 20).
#: Then a peak pushed many of its widths off the likelihood's centre by the prior's tail
#: (nu = 1500, 100-300 widths apart): missed by 0.001-0.39. The map's centres at the modes
#: of the product (_quadrature_kernels._mode_centres) remove both.
FAR_CASES = [
    (n, ratio, gap, 1000.0)
    for n in (1000, 3000, 10_000)
    for ratio in (0.5, 1.0, 2.0)
    for gap in (20.0, 30.0, 50.0)
] + [
    (n, ratio, gap, 1500.0)
    for n in (3000, 10_000)
    for ratio in (0.3, 0.5)
    for gap in (100.0, 300.0)
]
#: largest error of the compiled rule's log p(x_i | delta0, std0, nu) allowed in FAR_CASES
#: (measured 4e-9; without the mode centres up to 0.43)
FAR_LOGLIK_TOL = 1e-6


def _with_integrals(cases):
    out = []
    for n, ratio, gap, nu in cases:
        a, w = (n - 1) / 2, n / (1 + (n - 1) * 0.1)
        ssr = n / 0.9
        width = np.sqrt(ssr / (w * max(2 * a - 1, 1)))
        args = (gap * width, ratio * width, nu, a, w, ssr, 0.0)
        out.append((args, _adaptive_log_integral(*args)))
    return out


#: std0 far below the likelihood's width (two near-identical systems; issue 21): the prior's
#: tail bound (kernels._prior_reach) ends the rule where the prior's mass beyond is
#: negligible, not 10 widths out
NARROW_CASES = [
    (n, ratio, gap, nu)
    for n in (3, 10, 100)
    for ratio in (1e-3, 0.02, 0.1, 0.3)
    for gap in (0.0, 1.0, 3.0)
    for nu in (1.5, 2.5, 5.0, 25.0, 100.0)
]


@pytest.fixture(scope="module")
def narrow_cases():
    return _with_integrals(NARROW_CASES)


@pytest.fixture(scope="module")
def adaptive_cases():
    return _with_integrals(CASES)


@pytest.fixture(scope="module")
def far_cases():
    return _with_integrals(FAR_CASES)


def _t_norm(nu):
    """log c(nu), the Student-t density's normaliser (the compiled rule leaves it out)."""
    return special.gammaln((nu + 1) / 2) - special.gammaln(nu / 2) - 0.5 * np.log(nu * np.pi)


def _compiled(d0, s0, nu, a, w, ssr, xbar):
    """The compiled rule: log p(x_i | delta0, std0, nu) (with the t normaliser) and its gradient."""
    from isbetter.cv.hierarchical.numerics.kernels import NODE_SPACING, compiled_kernels, no_bound

    lik = tuple(np.array([v]) for v in (a, w, ssr, xbar))
    logq, grad = compiled_kernels()[0](d0, s0, nu, lik, NODE_SPACING, no_bound(1))
    # the kernel leaves out the t density's normaliser log c(nu), and so its derivative
    norm = _t_norm(nu)
    d_norm = (special.digamma((nu + 1) / 2) - special.digamma(nu / 2) - 1 / nu) / 2
    return logq[0] + norm, grad[0] + np.array([0.0, 0.0, d_norm])


def _numpy_errors(cases, nodes):
    from _oracle import integrated_loglik

    errors = []
    for (d0, s0, nu, a, w, ssr, xbar), exact in cases:
        data = tuple(np.array([v]) for v in (a, w, ssr, xbar)) + (1e300,)
        errors.append(abs(integrated_loglik(d0, s0, nu, data, n_nodes=nodes)[0] - exact))
    return np.array(errors)


def _gradient_misses(cases, params):
    """Compiled gradient minus central differences of the adaptive (exact) integral, in units
    of max(|derivative|, 1 / width) for delta0 and std0 (j = 0, 1), of max(|derivative|,
    1 / nu) for nu (j = 2)."""
    out = []
    for (d0, s0, nu, a, w, ssr, xbar), _ in cases:
        grad = _compiled(d0, s0, nu, a, w, ssr, xbar)[1]
        width = np.sqrt(ssr / (w * max(2 * a - 1, 1)))
        steps = (1e-4 * max(s0, 1e-3 * width), 1e-4 * s0, 1e-4 * nu)
        for j in params:
            up, down = [d0, s0, nu], [d0, s0, nu]
            up[j] += steps[j]
            down[j] -= steps[j]
            exact = (
                _adaptive_log_integral(*up, a, w, ssr, xbar)
                - _adaptive_log_integral(*down, a, w, ssr, xbar)
            ) / (2 * steps[j])
            scale = max(abs(exact), 1.0 / width if j < 2 else 1.0 / nu)
            out.append((grad[j] - exact) / scale)
    return np.array(out)


def test_compiled_likelihood_against_adaptive_quadrature(adaptive_cases):
    errors = [abs(_compiled(*args)[0] - exact) for args, exact in adaptive_cases]
    # measured: at most 7.9e-7 (n = 10, std0 = 1e-4 widths); the worst without the mode
    # centres, 2.7e-5, was two Gaussian-like kernels 30 widths apart (n = 100, nu = 300)
    assert max(errors) < 5e-6 and np.median(errors) < 1e-7


def test_compiled_likelihood_near_gaussian_kernels_far_apart(far_cases):
    """The regime of FAR_CASES: the log likelihood within FAR_LOGLIK_TOL of adaptive quadrature."""
    errors = np.array([abs(_compiled(*args)[0] - exact) for args, exact in far_cases])
    assert errors.max() < FAR_LOGLIK_TOL, np.round(errors, 4)


def _compiled_many(d0, s0, nu, a, w, ssr, xbar):
    """The compiled rule as a fit of many data sets computes it (CUT_MIN_DATASETS copies)."""
    from isbetter.cv.hierarchical.numerics.kernels import (
        CUT_MIN_DATASETS,
        NODE_SPACING,
        compiled_kernels,
        no_bound,
    )

    q = CUT_MIN_DATASETS
    lik = tuple(np.full(q, v) for v in (a, w, ssr, xbar))
    logq, grad = compiled_kernels()[0](d0, s0, nu, lik, NODE_SPACING, no_bound(q))
    norm = _t_norm(nu)
    return logq[0] + norm, grad[0]


def test_compiled_likelihood_with_std0_far_below_the_width(narrow_cases):
    """The rule ended by the prior's tail bound keeps its accuracy, on far fewer nodes.

    Measured: at most 5.6e-7 (3 scores, std0 = 1e-3 widths; 3.0e-7 with the rule that
    reached 10 widths out), median 7e-11; the gradient as the full rule's. At the
    near-identical systems' posterior (100 scores, std0 = 0.02 widths, nu = 25) 19 nodes
    instead of 53 (the likelihood's own bound ends that rule ~7 widths out); with fewer than
    CUT_MIN_DATASETS data sets the rule is unchanged.
    """
    from isbetter.cv.hierarchical.numerics.kernels import _MAX_NODES, _ROWS, NODE_SPACING, _nodes

    errors = np.array([abs(_compiled_many(*args)[0] - exact) for args, exact in narrow_cases])
    assert errors.max() < 2e-6 and np.median(errors) < 1e-9, errors.max()
    for args, _ in narrow_cases[::5]:
        full = _compiled(*args)[1] - np.array([0.0, 0.0, _compiled(*args)[1][2]])
        cut = _compiled_many(*args)[1] - np.array([0.0, 0.0, _compiled_many(*args)[1][2]])
        width = np.sqrt(args[5] / (args[4] * max(2 * args[3] - 1, 1)))
        assert np.abs(full - cut).max() < 1e-5 / width, (args, full, cut)
    n, ratio, gap, nu = 100, 0.02, 1.0, 25.0
    a, w = (n - 1) / 2, n / (1 + (n - 1) * 0.1)
    ssr = n / 0.9
    width = np.sqrt(ssr / (w * (2 * a - 1)))
    work = np.empty((_ROWS, _MAX_NODES))
    lik = (a, w, ssr, 0.0)
    used = {
        cut: _nodes(
            gap * width, ratio * width, nu, lik, NODE_SPACING, work, (work[0], -1, 0.0, cut)
        )[0]
        for cut in (True, False)
    }
    assert used[True] <= 20 and used[False] >= 50, used  # measured 19 and 53
    # a heavy-tailed prior reaches as far as without the cut (53 nodes)
    bound = (work[0], -1, 0.0, True)
    assert _nodes(gap * width, ratio * width, 2.5, lik, NODE_SPACING, work, bound)[0] >= 50


def test_shared_rule_where_std0_is_far_below_the_width(narrow_cases):
    """Data sets whose prior tail bound ends the rule within SHARED_REACH_WIDTHS widths share
    one rule in the prior's coordinate: as accurate as the rule of each data set (measured
    48 of the 180 narrow cases, at most 5.7e-7 from adaptive quadrature), on 20 nodes at the
    near-identical systems' posterior; in one call with other data sets each keeps its value."""
    from isbetter.cv.hierarchical.numerics.kernels import (
        _MAX_NODES,
        CUT_MIN_DATASETS,
        NODE_SPACING,
        _shared_nodes,
        _shared_reach,
    )

    def shared(d0, s0, nu, a, w, ssr, xbar):
        lik = tuple(np.full(CUT_MIN_DATASETS, v) for v in (a, w, ssr, xbar))
        marks = np.zeros(CUT_MIN_DATASETS)
        reach = _shared_reach(d0, s0, nu, lik, np.full(CUT_MIN_DATASETS, -1.0), marks)
        return reach if marks[0] > 0 else None

    taken = [(args, exact) for args, exact in narrow_cases if shared(*args) is not None]
    assert len(taken) >= 40, len(taken)
    errors = np.array([abs(_compiled_many(*args)[0] - exact) for args, exact in taken])
    assert errors.max() < 1e-6, errors.max()
    # the near-identical systems' posterior: 100 scores, std0 = 0.02 widths, nu = 27
    n, ratio, gap, nu = 100, 0.02, 1.0, 27.0
    a, w = (n - 1) / 2, n / (1 + (n - 1) * 0.1)
    ssr = n / 0.9
    width = np.sqrt(ssr / (w * (2 * a - 1)))
    reach = shared(gap * width, ratio * width, nu, a, w, ssr, 0.0)
    assert reach is not None and reach < width
    assert _shared_nodes(ratio * width, nu, reach, NODE_SPACING, np.empty((3, _MAX_NODES)))[0] <= 20
    # one call, shared and not (a wide prior, a far likelihood), each as alone
    from isbetter.cv.hierarchical.numerics.kernels import compiled_kernels, no_bound

    configs = [(a, w, ssr, 0.0), (a, w, ssr, 20 * width), (4.5, 5.0, 10.0, 0.3)]
    for d0, s0, nu_ in ((gap * width, ratio * width, nu), (0.0, 0.3 * width, 1.5)):
        rows = [configs[i % 3] for i in range(CUT_MIN_DATASETS + 2)]
        lik = tuple(np.array(col) for col in zip(*rows, strict=True))
        together = compiled_kernels()[0](d0, s0, nu_, lik, NODE_SPACING, no_bound(len(rows)))
        for i, config in enumerate(configs):
            alone = _compiled_many(d0, s0, nu_, *config)[0] - _t_norm(nu_)
            assert together[0][i] == pytest.approx(alone, abs=1e-6)


def test_numpy_rule_converges_to_adaptive_quadrature(adaptive_cases, far_cases):
    """The oracle's rule (tests/cv/_oracle.py: its own quadratic form, widths, reach and
    mode search, the real roots of a cubic, nothing imported from src) against scipy's
    adaptive quadrature: QUADRATURE_NODES = 64 is coarse only for the extreme scale
    ratios, and converges as the nodes increase."""
    errors = {nodes: _numpy_errors(adaptive_cases, nodes) for nodes in (64, 256)}
    # measured: 64 nodes at most 1.7e-3 (median 1.9e-7), 256 at most 1.2e-8 (when the
    # oracle shared the compiled rule's EM mode search: < 1e-2 and < 1e-6 were asserted)
    assert errors[64].max() < 5e-3 and np.median(errors[64]) < 1e-6
    assert errors[256].max() < 1e-7
    # FAR_CASES: 64 nodes span the wider range of u of the map with mode centres (measured
    # 3.5e-3; without centres 1.2), 256 converge (measured 7e-12; without: 1.5e-3)
    far = {nodes: _numpy_errors(far_cases, nodes) for nodes in (64, 256)}
    assert far[64].max() < 1e-2 and far[256].max() < FAR_LOGLIK_TOL


def test_compiled_nu_gradient_is_the_rule_derivative(adaptive_cases):
    """The gradient in nu (nodes held fixed) against central differences of the rule's value."""
    for (d0, s0, nu, a, w, ssr, xbar), _ in adaptive_cases[::5]:
        grad = _compiled(d0, s0, nu, a, w, ssr, xbar)[1]
        step = 1e-5 * nu
        up, down = (_compiled(d0, s0, v, a, w, ssr, xbar)[0] for v in (nu + step, nu - step))
        assert (up - down) / (2 * step) == pytest.approx(grad[2], abs=1e-4 * max(abs(grad[2]), 1))


def test_compiled_gradient_near_gaussian_kernels_far_apart(far_cases):
    """The exact gradient in (delta0, std0, nu) in the regime of FAR_CASES: measured at most
    2e-8 in units of max(|derivative|, 1 / width or 1 / nu); without the mode centres 0.08."""
    misses = _gradient_misses(far_cases[::3], (0, 1, 2))
    assert np.abs(misses).max() < 1e-4, np.round(misses, 5)


@pytest.mark.slow  # ~25 s: two adaptive integrals per derivative
def test_compiled_gradient_is_the_exact_derivative(adaptive_cases):
    """The gradient in (delta0, std0) against differences of the adaptive (exact) integral.

    The derivatives are the rule applied to E[d log L / d delta] and E[z d log L / d delta]
    (integrated by parts); the direct form E[d log t / d theta] carried the rule's error
    times 1 / std0, which is large where std0 is much smaller than the likelihood's width.
    Errors in units of max(|derivative|, 1 / width), over all 72 cases: at most 1.7e-3
    (about the noise of the differences of the adaptive integral at std0 = 1e-4 widths);
    the direct form missed by up to 0.34 (std0) and 0.07 (delta0).
    """
    misses = _gradient_misses(adaptive_cases[::2], (0, 1))
    assert np.abs(misses).max() < 5e-3, np.round(misses, 4)


def _conditional_reference(d0, s0, nu, a, w, ssr, xbar, std_hi=None):
    """Dense sorted union of two sinh grids (one per centre): the conditional of delta_i."""
    t = np.linspace(-40, 40, 200001)
    width = np.sqrt(ssr / (w * max(2 * a - 1, 1)))
    x = np.unique(np.concatenate([d0 + s0 * np.sinh(t), xbar + width * np.sinh(t)]))
    x = x[np.abs(x) < 1e8]
    quad = ssr + w * (xbar - x) ** 2
    log_f = -(nu + 1) / 2 * np.log1p(((x - d0) / s0) ** 2 / nu) - a * np.log(quad)
    if std_hi is not None:  # sigma_i's bound factor, from SciPy
        with np.errstate(divide="ignore"):
            log_f = log_f + np.log(special.gammaincc(a, quad / (2 * std_hi**2)))
    f = np.exp(log_f - log_f.max())
    weight = np.zeros_like(x)
    weight[:-1] += np.diff(x) / 2
    weight[1:] += np.diff(x) / 2
    return x, f * weight / (f * weight).sum()


@pytest.mark.parametrize(
    ("compiled", "bounded"), [(True, False), (False, False), (True, True), (False, True)]
)
def test_draw_deltas_samples_the_conditional(compiled, bounded):
    """Draws of each delta_i against a dense grid of its conditional density.

    bounded: sigma_i's bound (std_hi = 1.2) binds for every data set (the bound factor
    Q(a, quad / (2 std_hi^2)) is far from 1 near the data's mean: their sd is ~1.4).
    """
    from _oracle import draw_deltas as numpy_draws

    from isbetter.cv.hierarchical.numerics.quadrature import draw_deltas

    a, w = np.array([4.5, 49.5, 0.5, 1.0]), np.array([5.0, 9.0, 1.8, 2.7])
    ssr, xbar = np.array([10.0, 100.0, 3.0, 2.0]), np.array([0.0, 1.0, -2.0, 5.0])
    std_hi = 1.2 if bounded else None
    g = np.random.default_rng(SEED)
    size, z = 20_000, []
    # prior-dominated, heavy-tailed prior, Gaussian prior far from the data, broad prior
    for d0, s0, nu in [(0.0, 1e-4, 50.0), (1.0, 1e-3, 1.2), (-3.0, 0.2, 200.0), (0.3, 2.0, 30.0)]:
        hyper = (np.full(size, d0), np.full(size, s0), np.full(size, nu))
        data = (a, w, ssr, xbar, std_hi or 1e300)
        sampler = draw_deltas if compiled else numpy_draws
        draws = sampler(*hyper, data, g, bounded=bounded)
        for i in range(4):
            x, p = _conditional_reference(d0, s0, nu, a[i], w[i], ssr[i], xbar[i], std_hi)
            mean = (p * x).sum()
            z.append((draws[:, i].mean() - mean) / np.sqrt((p * (x - mean) ** 2).sum() / size))
            for threshold in (d0 + 0.01, d0 + 3 * s0, xbar[i]):
                prob = p[x > threshold].sum()
                se = np.sqrt(max(prob * (1 - prob), 1e-4) / size)
                z.append(((draws[:, i] > threshold).mean() - prob) / se)
    # 64 comparisons of exact samplers: all within 4.5 standard errors
    assert np.abs(z).max() < 4.5, np.round(z, 1)


def test_draw_deltas_with_std0_far_below_the_width():
    """Draws by rejection from the prior (kernels._from_prior) against the dense grid.

    std0 = 0.02 likelihood widths (two near-identical systems), the data set's mean 0 to 2
    widths from delta0; each case 20 000 draws, mostly accepted from the prior, the rest
    (1.5 widths and beyond) from the quadrature sampler.
    """
    from isbetter.cv.hierarchical.numerics.quadrature import draw_deltas

    n = 100
    a, w = np.full(4, (n - 1) / 2), np.full(4, n / (1 + (n - 1) * 0.1))
    ssr = np.full(4, n / 0.9)
    width = float(np.sqrt(ssr[0] / (w[0] * (2 * a[0] - 1))))
    xbar = width * np.array([0.0, 0.5, 1.5, 2.0])
    g = np.random.default_rng(SEED)
    size, z = 20_000, []
    for nu in (1.5, 3.0, 25.0):
        d0, s0 = 0.0, 0.02 * width
        hyper = (np.full(size, d0), np.full(size, s0), np.full(size, nu))
        draws = draw_deltas(*hyper, (a, w, ssr, xbar, 1e300), g)
        for i in range(4):
            x, p = _conditional_reference(d0, s0, nu, a[i], w[i], ssr[i], xbar[i])
            mean = (p * x).sum()
            sd = np.sqrt((p * (x - mean) ** 2).sum())
            z.append((draws[:, i].mean() - mean) / (sd / np.sqrt(size)))
            for threshold in mean + sd * np.array([-1.5, -0.5, 0.0, 0.5, 1.5]):
                prob = p[x > threshold].sum()
                z.append(
                    ((draws[:, i] > threshold).mean() - prob) / np.sqrt(prob * (1 - prob) / size)
                )
    # 72 comparisons of exact samplers: all within 4.5 standard errors
    assert np.abs(z).max() < 4.5, np.round(z, 1)


def test_draw_deltas_the_same_on_any_number_of_cpus(monkeypatch):
    """Blocks of draws with streams of their own, in threads: one CPU or two, same numbers;
    each block's stream is its own (no two blocks alike); the seed decides."""
    from isbetter.cv.hierarchical.numerics import quadrature

    q, size = 5, 1001  # blocks of unequal length
    g = np.random.default_rng(3)
    hyper = (g.normal(0, 0.1, size), g.uniform(0.05, 1, size), g.uniform(1, 30, size))
    data = (np.full(q, 4.5), np.full(q, 5.0), np.full(q, 10.0), g.normal(0, 1, q), 1e300)

    def draws(cpus, seed=SEED):
        monkeypatch.setattr(quadrature.os, "cpu_count", lambda: cpus)
        return quadrature.draw_deltas(*hyper, data, np.random.default_rng(seed))

    one = draws(1)
    assert one.shape == (size, q) and np.isfinite(one).all()
    np.testing.assert_array_equal(draws(2), one)
    np.testing.assert_array_equal(draws(None), one)
    assert not np.array_equal(draws(2, SEED + 1), one)
    edges = np.linspace(0, size, quadrature.DRAW_BLOCKS + 1).astype(int)
    # the same hyper-parameters in every block: the blocks' draws differ all the same
    same = tuple(np.full(size, v) for v in (0.0, 0.5, 4.0))
    flat = quadrature.draw_deltas(*same, data, np.random.default_rng(SEED))
    firsts = flat[edges[:-1]]
    assert len({tuple(row) for row in firsts}) == quadrature.DRAW_BLOCKS


def test_draw_deltas_of_hyper_parameters_off_their_support_are_nan():
    """A draw that no whole chain has (NaN, std0 <= 0 or infinite, nu < 1 or infinite)
    gets NaN instead of sending the samplers into an endless loop."""
    from isbetter.cv.hierarchical.numerics.quadrature import draw_deltas

    data = (np.full(3, 4.5), np.full(3, 5.0), np.full(3, 10.0), np.zeros(3), 1e300)
    delta0 = np.array([0.0, np.nan, 0.0, 0.0, 0.0, 0.0, np.inf])
    std0 = np.array([1.0, 1.0, 0.0, np.inf, 1.0, 1.0, 1.0])
    nu = np.array([2.0, 2.0, 2.0, 2.0, 0.5, np.inf, 2.0])
    draws = draw_deltas(delta0, std0, nu, data, np.random.default_rng(SEED))
    assert np.isfinite(draws[0]).all() and np.isnan(draws[1:]).all()


@pytest.mark.parametrize("compiled", [True, False])
def test_draw_deltas_near_gaussian_kernels_far_apart(compiled):
    """Draws of delta_i where the conditional peaks between the centres (FAR_CASES' regime).

    Without the mode centres the nodes sat several of the peak's widths apart: the NumPy
    sampler's draws were off by up to 5.0 standard errors here (the compiled one, with more
    nodes, by up to 2.7); with it, at most 1.4 (measured).
    """
    from _oracle import draw_deltas as numpy_draws

    from isbetter.cv.hierarchical.numerics.quadrature import draw_deltas

    (n, ratio, gap, nu), size = FAR_CASES[13], 20_000  # n = 3000, std0 = width, 30 widths
    a, w = np.array([(n - 1) / 2]), np.array([n / (1 + (n - 1) * 0.1)])
    ssr, xbar = np.array([n / 0.9]), np.array([0.0])
    width = float(np.sqrt(ssr / (w * (2 * a - 1)))[0])
    d0, s0 = gap * width, ratio * width
    hyper = (np.full(size, d0), np.full(size, s0), np.full(size, nu))
    g = np.random.default_rng(SEED)
    sampler = draw_deltas if compiled else numpy_draws
    draws = sampler(*hyper, (a, w, ssr, xbar, 1e300), g)[:, 0]
    x, p = _conditional_reference(d0, s0, nu, a[0], w[0], ssr[0], xbar[0])
    mean = (p * x).sum()
    sd = np.sqrt((p * (x - mean) ** 2).sum())
    z = [(draws.mean() - mean) / (sd / np.sqrt(size))]
    for threshold in mean + sd * np.array([-1.5, -0.5, 0.0, 0.5, 1.5]):
        prob = p[x > threshold].sum()
        z.append(((draws > threshold).mean() - prob) / np.sqrt(prob * (1 - prob) / size))
    assert np.abs(z).max() < 4.5, np.round(z, 1)


def test_likelihood_reach_bounds_the_tails(adaptive_cases):
    """Beyond _lik_reach's D on either side of the likelihood's centre the integral holds
    less than exp(-TAIL_LOG_MASS) of its total (SciPy's adaptive quadrature of the tails;
    measured at most exp(-25)), in every case of CASES where D is finite; D is at least
    |xbar - delta0| + std0, and at 100 scores near delta0 about 6 widths (not 10)."""
    from scipy import integrate

    from isbetter.cv.hierarchical.numerics.kernels import TAIL_LOG_MASS, _lik_reach, _log_drop

    checked = 0
    for (d0, s0, nu, a, w, ssr, xbar), total in adaptive_cases:
        lik = (a, w, ssr, xbar)
        reach = _lik_reach(lik, _log_drop(d0, s0, lik))
        if not np.isfinite(reach):
            continue
        assert reach >= abs(xbar - d0) + s0
        log_c = _t_norm(nu) - np.log(s0) - total

        def f(d, d0=d0, s0=s0, nu=nu, a=a, w=w, ssr=ssr, xbar=xbar, log_c=log_c):
            log_t = -(nu + 1) / 2 * np.log1p(((d - d0) / s0) ** 2 / nu)
            return np.exp(log_c + log_t - a * np.log((ssr + w * (xbar - d) ** 2) / 2))

        width = np.sqrt(ssr / (w * max(2 * a - 1, 1)))
        steps = reach + width * np.concatenate([[0.0], 4.0 ** np.arange(-2, 20)])
        with warnings.catch_warnings():  # round-off far out, where the integrand is ~0
            warnings.simplefilter("ignore", integrate.IntegrationWarning)
            tails = sum(
                integrate.quad(f, xbar + side * lo, xbar + side * hi, epsabs=0.0)[0] * side
                for side in (1.0, -1.0)
                for lo, hi in zip(steps[:-1], steps[1:], strict=True)
            )
        assert tails < np.exp(-TAIL_LOG_MASS), (d0, s0, nu, a, reach, tails)
        checked += 1
    assert checked >= 40, checked
    n = 100
    a, w = (n - 1) / 2, n / (1 + (n - 1) * 0.1)
    ssr = n / 0.9
    width = np.sqrt(ssr / (w * (2 * a - 1)))
    lik = (a, w, ssr, 0.0)
    assert 5.5 < _lik_reach(lik, _log_drop(0.0, 0.01 * width, lik)) / width < 7.0


def test_no_mode_search_near_delta0():
    """Where the likelihood's centre is within SEARCH_FREE_GAP widths of delta0 (no sigma_i
    bound factor), the search for mode centres is skipped: over 200 000 random
    configurations (2-10 000 scores, std0 1e-6 to 1e3 widths, nu 1 to 3000) it finds none
    there, so the rule is the same (bit for bit); at up to 3 widths it finds some (measured
    1 in 200, the nearest at 2.29 widths), and at 25 widths the rule has its centre."""
    from isbetter.cv.hierarchical.numerics.kernels import (
        _MAX_NODES,
        _ROWS,
        NODE_SPACING,
        SEARCH_FREE_GAP,
        _mode_centres,
        _nodes,
    )

    g = np.random.default_rng(5)
    size = 200_000
    n = np.exp(g.uniform(np.log(2), np.log(10_000), size)).astype(int)
    rho = g.choice([0.0, 0.1, 0.2], size)
    a, w = (n - 1) / 2, n / (1 + (n - 1) * rho)
    ssr = n / (1 - rho) * g.uniform(0.5, 2, size)
    width = np.sqrt(ssr / (w * np.maximum(2 * a - 1, 1)))
    kappa = np.exp(g.uniform(np.log(1e-6), np.log(1e3), size))
    nu = 1 + np.exp(g.uniform(np.log(1e-2), np.log(3000), size))
    unit = g.uniform(-1, 1, size)
    found = {}
    for reach in (SEARCH_FREE_GAP, 3.0):
        with np.errstate(over="ignore", divide="ignore", invalid="ignore"):
            centres = _mode_centres(nu, (a, w, ssr), width, np.inf, (kappa, reach * unit))
        found[reach] = int(((centres[1] > 0) | (centres[3] > 0) | (centres[5] > 0)).sum())
    assert found[SEARCH_FREE_GAP] == 0 and found[3.0] > 100, found  # measured 0 and ~1000
    work = np.empty((_ROWS, _MAX_NODES))
    for i in range(0, size, 20_000):  # _nodes skips it there, cut or not
        lik = (a[i], w[i], ssr[i], 0.0)
        for cut in (False, True):
            bound = (work[0], -1, 0.0, cut)
            d0 = -SEARCH_FREE_GAP * unit[i] * width[i]
            frame = _nodes(d0, kappa[i] * width[i], nu[i], lik, NODE_SPACING, work, bound)[3]
            assert frame[2:] == (0.0,) * 6
    # further out the search runs (and here finds the likelihood's peak)
    n_far, ratio, gap, nu_far = 240, 1e-3, 25.0, 130.0
    a_far, w_far = (n_far - 1) / 2, n_far / (1 + (n_far - 1) * 0.1)
    ssr_far = n_far / 0.9
    width_far = np.sqrt(ssr_far / (w_far * (2 * a_far - 1)))
    lik = (a_far, w_far, ssr_far, 0.0)
    for cut in (False, True):
        bound = (work[0], -1, 0.0, cut)
        d0, s0 = -gap * width_far, ratio * width_far
        frame = _nodes(d0, s0, nu_far, lik, NODE_SPACING, work, bound)[3]
        assert frame[3] > 0.0 or frame[5] > 0.0 or frame[7] > 0.0


@pytest.mark.slow
def test_fit_of_near_identical_systems_matches_a_grid_posterior():
    """End to end where the shared rule works: 60 data sets of two near-identical systems
    (10 runs x 10 folds, y = x + N(0.001, 0.01)) fitted with the integrated model, 44% of
    whose data sets share the prior's rule over the posterior draws (measured); the
    posterior means of delta0, std0 and log(nu - 1) against a grid posterior over the three
    whose likelihood is the NumPy oracle (another rule: the two-centre map, 256 nodes),
    within 4 Monte Carlo standard errors (measured |z| <= 0.8; with the oracle's sums of
    squares 20% too large std0 is 7 away)."""
    from _oracle import integrated_loglik

    from isbetter.cv.hierarchical.numerics.kernels import _shared_reach
    from isbetter.cv.hierarchical.priors import HierarchicalPriors
    from isbetter.cv.hierarchical.spec import prepare
    from isbetter.inference.nu_prior import NuPrior

    q, g = 60, np.random.default_rng(21)
    x = g.normal(0.8, 0.02, size=(q, 100))
    scores = from_arrays(x + g.normal(0.001, 0.01, size=x.shape), x, runs=10).paired("A", "B")
    priors = HierarchicalPriors()
    prepared = prepare(scores, 0.01, None, priors)
    assert not prepared.bounded
    data, scale = prepared.model_data(priors), prepared.scale
    fit = HierarchicalModel(q, parameterization="integrated").fit(scores, rope=0.01, rng=3)
    draws = {"delta0": fit.delta0 / scale, "std0": fit.std0 / scale, "t": np.log(fit.nu - 1)}
    lik = tuple(np.asarray(data[k], dtype=float) for k in ("a", "w", "ssr", "xbar"))
    shared = []
    for j in np.random.default_rng(0).choice(fit.nu.size, 200, replace=False):
        marks = np.zeros(q)
        hyper = (draws["delta0"][j], draws["std0"][j], fit.nu[j])
        _shared_reach(*hyper, lik, np.full(q, -1.0), marks)
        shared.append(marks.mean())
    assert np.mean(shared) > 0.3, np.mean(shared)  # the fit took the shared rule
    # the grid: midpoints, over the draws' range and beyond; flat priors of delta0 and std0
    axes = {}
    for k, n in (("delta0", 24), ("std0", 30), ("t", 16)):
        lo, hi = draws[k].min(), draws[k].max()
        pad = 0.5 * (hi - lo)
        lo = max(lo - pad, 0.0) if k == "std0" else lo - pad
        step = (hi + pad - lo) / n
        axes[k] = lo + step * (np.arange(n) + 0.5)
    d0, s0 = np.meshgrid(axes["delta0"], axes["std0"], indexing="ij")
    nu_prior = NuPrior(
        (priors.alpha_lower, priors.alpha_upper, priors.beta_lower, priors.beta_upper)
    )
    log_post = np.empty((*d0.shape, axes["t"].size))
    for k, t in enumerate(axes["t"]):
        logq = integrated_loglik(
            d0[..., None], s0[..., None], 1.0 + np.exp(t), (*lik, 1e300), n_nodes=256
        )
        log_post[..., k] = logq.sum(axis=-1) + nu_prior(np.exp(t))[0] + t
    weight = np.exp(log_post - log_post.max())
    weight /= weight.sum()
    grid = {
        "delta0": (weight.sum(axis=(1, 2)) * axes["delta0"]).sum(),
        "std0": (weight.sum(axis=(0, 2)) * axes["std0"]).sum(),
        "t": (weight.sum(axis=(0, 1)) * axes["t"]).sum(),
    }
    for k, v in draws.items():
        chains = v.reshape(fit.diagnostics.chains, -1)
        ess = _ess_bulk_of(chains)
        z = (v.mean() - grid[k]) / (v.std() / np.sqrt(ess))
        assert abs(z) < 4.0, (k, v.mean(), grid[k], z)


def _ess_bulk_of(chains):
    from isbetter.inference.diagnostics import ess_bulk

    return float(ess_bulk(chains[:, :, None])[0])
