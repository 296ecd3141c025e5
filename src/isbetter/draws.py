"""Summaries of posterior draws of a difference ``delta`` (positive: A better).

Generic, model-free functions used by the F1 comparison, the hierarchical model
and the power analysis: the highest-density interval (shortest interval), the
Monte Carlo standard error of the mean, the Savage–Dickey Bayes factor, and
:func:`estimate_from_draws`, which puts them together with the HDI + ROPE
decision of Zhang et al. (2016, section 3.2), after Kruschke (2013).

References
----------
.. [1] Kruschke (2013). Bayesian estimation supersedes the t test. JEP: General 142.
.. [2] Zhang, Wang, Yilmaz, Wang, Zhou (2016). Bayesian performance comparison of
   text classifiers. SIGIR.
.. [3] Dickey, Lientz (1970). The weighted likelihood ratio, sharp hypotheses about
   chances, the order of a Markov chain. Ann. Math. Statist. 41.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from isbetter._errors import InputError
from isbetter._validate import check_probability
from isbetter.results.decisions import hdi_rope_decision
from isbetter.results.records import Estimate, Interval

__all__ = [
    "MIN_DRAWS_NEAR",
    "REFERENCE_DRAWS",
    "bandwidth",
    "estimate_from_draws",
    "hdi",
    "mcse_mean",
    "rope_bayes_factor",
    "savage_dickey_bf01",
]


def hdi(draws: Any, prob: float = 0.95) -> np.ndarray:
    """Highest-density interval: the shortest interval holding `prob` of the draws.

    Works along the last axis, so a stack of posteriors (e.g. one per simulated
    test set) is summarised at once.

    Parameters
    ----------
    draws : array-like
        Posterior draws; shape ``(..., n_draws)``.
    prob : float, default: 0.95
        Mass inside the interval.

    Returns
    -------
    numpy.ndarray
        Shape ``(..., 2)``: lower and upper bounds.

    Examples
    --------
    >>> import numpy as np
    >>> hdi(np.arange(101.0), 0.9).tolist()
    [0.0, 90.0]
    >>> hdi(np.array([0.0, 0.0, 0.0]), 0.95).tolist()
    [0.0, 0.0]
    """
    prob = check_probability(prob, "prob", open_interval=True)
    x = np.sort(np.asarray(draws, dtype=float), axis=-1)
    n = x.shape[-1]
    if n == 0:
        raise InputError("`draws` is empty; the HDI needs at least one draw.")
    # the interval spans k + 1 sorted draws (ArviZ's convention, so the two agree)
    k = min(int(np.floor(prob * n)), n - 1)
    widths = x[..., k:] - x[..., : n - k]
    i = np.argmin(widths, axis=-1)[..., None]
    lo = np.take_along_axis(x, i, axis=-1)[..., 0]
    hi = np.take_along_axis(x, i + k, axis=-1)[..., 0]
    return np.stack([lo, hi], axis=-1)


def mcse_mean(draws: Any, ess: float | None = None) -> float:
    """Monte Carlo standard error of the posterior mean: ``sd / sqrt(ess)``.

    Parameters
    ----------
    draws : array-like
        1-D posterior draws.
    ess : float, optional
        Effective sample size; default: the number of draws (independent draws,
        as the exact sampler gives). For MCMC pass ArviZ's bulk ESS.

    Examples
    --------
    >>> mcse_mean([0.0, 1.0, 0.0, 1.0])
    0.2886...
    """
    x = np.asarray(draws, dtype=float)
    n = float(x.size if ess is None else ess)
    if x.size < 2:
        return 0.0
    return float(x.std(ddof=1) / np.sqrt(n))


#: the bandwidth of the Savage–Dickey densities is Scott's rule at this many draws (the
#: paper's default), times each sample's sd — fixed, so the estimate does not drift with
#: the number of draws (the paired prior of delta has a logarithmic spike at 0)
REFERENCE_DRAWS = 50_000
#: fewer draws than this near the point (within 3 bandwidths) give a bound, not a value
MIN_DRAWS_NEAR = 10


def bandwidth(draws: np.ndarray) -> float:
    """Return the stated kernel bandwidth of a sample: ``sd * REFERENCE_DRAWS ** -0.2``."""
    return float(np.std(draws, ddof=1) * REFERENCE_DRAWS ** (-0.2))


def _kde_density_at(draws: np.ndarray, at: float, h: float | None = None) -> float:
    """Gaussian kernel density estimate at one point (bandwidth `h`, default :func:`bandwidth`)."""
    sd = draws.std()
    if not np.isfinite(sd) or sd == 0 or np.ptp(draws) == 0:
        # a point mass: infinite density at its value, zero elsewhere
        return np.inf if np.all(draws == at) else 0.0
    h = bandwidth(draws) if h is None else h
    z = (at - draws) / h
    return float(np.exp(-0.5 * z * z).sum() / (draws.size * h * np.sqrt(2 * np.pi)))


def savage_dickey_bf01(
    posterior_draws: Any, prior_draws: Any, *, at: float = 0.0
) -> tuple[float, str]:
    """Savage–Dickey Bayes factor ``BF01 = p(delta = at | data) / p(delta = at)``.

    Both densities are Gaussian kernel density estimates of the draws, as in
    Zhang et al. (2016, section 3.3), with a stated bandwidth that does not
    depend on the number of draws: Scott's rule at :data:`REFERENCE_DRAWS`
    draws times each sample's sd (:func:`bandwidth`). Where fewer than
    :data:`MIN_DRAWS_NEAR` posterior draws lie within three bandwidths of `at`,
    the posterior density there cannot be estimated and an upper bound is
    returned instead (the density those draws would give at `at`). BF01 > 3 is
    read as substantial evidence for "no difference", BF01 < 1/3 as substantial
    evidence for a difference (Jeffreys).

    Returns
    -------
    value : float
        BF01, or its upper bound; ``inf`` when the posterior is a point mass at
        `at`; ``nan`` when the prior has no density at `at`.
    bound : {"", "<"}
        ``"<"`` when `value` is an upper bound.

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> prior = rng.uniform(-1, 1, 100_000)         # density 0.5 at 0
    >>> post = rng.normal(0, 0.1, 100_000)          # density 3.99 at 0
    >>> value, bound = savage_dickey_bf01(post, prior)
    >>> round(value, 1), bound
    (8.0, '')
    >>> savage_dickey_bf01(rng.normal(0.5, 0.01, 50_000), prior)[1]
    '<'
    """
    post = np.asarray(posterior_draws, dtype=float).ravel()
    prior = np.asarray(prior_draws, dtype=float).ravel()
    q0 = _kde_density_at(prior, at)
    if q0 == 0 or not np.isfinite(q0):
        return float("nan"), ""
    p0 = _kde_density_at(post, at)
    if not np.isfinite(p0) or np.ptp(post) == 0:
        return float(p0 / q0), ""
    h = bandwidth(post)
    if np.count_nonzero(np.abs(post - at) <= 3 * h) < MIN_DRAWS_NEAR:
        bound = MIN_DRAWS_NEAR / (post.size * h * np.sqrt(2 * np.pi))
        return float(bound / q0), "<"
    return float(p0 / q0), ""


def rope_bayes_factor(posterior_draws: Any, prior_draws: Any, *, rope: float) -> tuple[float, str]:
    """Return the ROPE (interval) Bayes factor: posterior over prior odds of ``|delta| <= rope``.

    ``BF = [P(in | data) / P(out | data)] / [P(in) / P(out)]``: above 1 the data
    favour practical equivalence, below 1 a difference. It is well defined for any
    prior with mass on both sides of the ROPE's edge. Where fewer than
    :data:`MIN_DRAWS_NEAR` posterior draws fall inside (outside) the ROPE, an upper
    (lower) bound is returned, computed as if that many had.

    Returns
    -------
    value : float
        The Bayes factor or its bound (``nan`` when the prior puts no mass inside
        or outside the ROPE, or `rope` is 0).
    bound : {"", "<", ">"}
        ``"<"`` (upper bound), ``">"`` (lower bound) or ``""``.

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(1)
    >>> prior = rng.uniform(-1, 1, 200_000)            # P(|d| <= 0.1) = 0.1
    >>> post = rng.uniform(-0.2, 0.2, 200_000)         # P(|d| <= 0.1) = 0.5
    >>> value, bound = rope_bayes_factor(post, prior, rope=0.1)
    >>> round(value, 1), bound                          # (0.5 / 0.5) / (0.1 / 0.9)
    (9.0, '')
    """
    post = np.asarray(posterior_draws, dtype=float).ravel()
    prior = np.asarray(prior_draws, dtype=float).ravel()
    prior_in = float(np.mean(np.abs(prior) <= rope))
    if rope <= 0 or prior_in in (0.0, 1.0):
        return float("nan"), ""
    n_in = int(np.count_nonzero(np.abs(post) <= rope))
    n_out = post.size - n_in
    bound = ""
    if n_in < MIN_DRAWS_NEAR:
        n_in, n_out, bound = MIN_DRAWS_NEAR, post.size - MIN_DRAWS_NEAR, "<"
    elif n_out < MIN_DRAWS_NEAR:
        n_in, n_out, bound = post.size - MIN_DRAWS_NEAR, MIN_DRAWS_NEAR, ">"
    return float((n_in / n_out) / (prior_in / (1.0 - prior_in))), bound


def estimate_from_draws(
    delta: Any,
    *,
    rope: float,
    prior_delta: Any = None,
    hdi_prob: float = 0.95,
    ess: float | None = None,
) -> Estimate:
    """Summarise posterior draws of a difference as in Zhang et al.'s Tables 4-6.

    Parameters
    ----------
    delta : array-like
        Posterior draws (positive: A better).
    rope : float
        ROPE half-width of the HDI + ROPE decision.
    prior_delta : array-like, optional
        Prior draws for the Savage–Dickey Bayes factor (NaN when None).
    hdi_prob : float, default: 0.95
        Mass of the highest-density interval.
    ess : float, optional
        Effective sample size for the Monte Carlo error (default: independent draws).

    Returns
    -------
    Estimate

    Examples
    --------
    >>> import numpy as np
    >>> e = estimate_from_draws(np.zeros(100), rope=0.05)
    >>> e.decision, e.interval.low, e.interval.high
    ('equivalent', 0.0, 0.0)
    """
    d = np.asarray(delta, dtype=float)
    lo, hi = (float(x) for x in hdi(d, hdi_prob))
    mean = float(d.mean())
    bf01, bf01_bound, bf_rope, bf_rope_bound = float("nan"), "", float("nan"), ""
    if prior_delta is not None:
        bf01, bf01_bound = savage_dickey_bf01(d, prior_delta)
        bf_rope, bf_rope_bound = rope_bayes_factor(d, prior_delta, rope=rope)
    return Estimate(
        mean=mean,
        sd=float(d.std(ddof=1)) if d.size > 1 else 0.0,
        mcse=mcse_mean(d, ess),
        interval=Interval(lo, hi, hdi_prob, "hdi"),
        p_below_0=float(np.mean(d < 0)),
        p_above_0=float(np.mean(d > 0)),
        bf01=bf01,
        bf01_bound=bf01_bound,
        bf_rope=bf_rope,
        bf_rope_bound=bf_rope_bound,
        decision=hdi_rope_decision(lo, hi, rope),
    )
