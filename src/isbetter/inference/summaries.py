"""Summaries of posterior draws of a difference ``delta`` (positive: A better).

Generic, model-free functions used by the F1 comparison, the hierarchical model
and the power analysis: the highest-density interval (shortest interval), the
Monte Carlo standard error of the mean, two Bayes factors with their Monte Carlo
errors (the ROPE Bayes factor, the headline, and the point-null Savage–Dickey
BF01, which depends on a kernel bandwidth: see :func:`savage_dickey_bf01`), and
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

from typing import Any, NamedTuple

import numpy as np

from isbetter.core.errors import InputError
from isbetter.core.validate import check_probability
from isbetter.inference.decisions import hdi_rope_decision
from isbetter.inference.records import Estimate, Interval

__all__ = [
    "MIN_DRAWS_NEAR",
    "REFERENCE_DRAWS",
    "BayesFactor",
    "bandwidth",
    "estimate_from_draws",
    "hdi",
    "mcse_mean",
    "rope_bayes_factor",
    "savage_dickey_bf01",
    "symmetrised",
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


def symmetrised(prior_draws: np.ndarray) -> np.ndarray:
    """Return prior draws of a difference with their mirror images, ``[x, -x]``.

    For a prior symmetric in A and B (the prior of delta symmetric about 0): the
    sample is then exactly symmetric, as the prior, and exchanging A and B leaves
    it unchanged. The Bayes factors at 0 and of ``|delta| <= rope`` read even
    functions of delta, to which the mirror images add nothing: the sample holds
    ``len(x)`` independent draws for their Monte Carlo errors (``prior_ess``).
    """
    return np.concatenate([prior_draws, -prior_draws], axis=0)


#: the bandwidth of the Savage–Dickey densities is Scott's rule at this many draws (the
#: paper's default), times each sample's sd — fixed, so the estimate does not drift with
#: the number of draws (the paired prior of delta has a logarithmic spike at 0)
REFERENCE_DRAWS = 50_000
#: fewer draws than this near the point (within 3 bandwidths) give a bound, not a value
MIN_DRAWS_NEAR = 10


def bandwidth(draws: np.ndarray) -> float:
    """Return the stated kernel bandwidth of a sample: ``sd * REFERENCE_DRAWS ** -0.2``."""
    return float(np.std(draws, ddof=1) * REFERENCE_DRAWS ** (-0.2))


def _kernel_values(draws: np.ndarray, at: float, h: float) -> np.ndarray:
    """Each draw's Gaussian kernel (bandwidth `h`) at `at`: their mean is the density."""
    z = (at - draws) / h
    return np.exp(-0.5 * z * z) / (h * np.sqrt(2 * np.pi))


def _point_mass(draws: np.ndarray) -> bool:
    sd = draws.std()
    return not np.isfinite(sd) or sd == 0 or np.ptp(draws) == 0


def _kde_density_at(draws: np.ndarray, at: float, h: float | None = None) -> float:
    """Gaussian kernel density estimate at one point (bandwidth `h`, default :func:`bandwidth`)."""
    if _point_mass(draws):
        # a point mass: infinite density at its value, zero elsewhere
        return np.inf if np.all(draws == at) else 0.0
    return float(_kernel_values(draws, at, bandwidth(draws) if h is None else h).mean())


class BayesFactor(NamedTuple):
    """A Bayes factor estimated from draws, with its Monte Carlo standard error.

    Attributes
    ----------
    value : float
        The estimate, or its bound.
    bound : {"", "<", ">"}
        ``"<"`` when `value` is an upper bound, ``">"`` a lower bound.
    mcse : float
        Monte Carlo standard error of `value` by the delta method (see
        :func:`savage_dickey_bf01`, :func:`rope_bayes_factor`); NaN for a bound or an
        infinite or undefined value.
    """

    value: float
    bound: str = ""
    mcse: float = float("nan")


def savage_dickey_bf01(
    posterior_draws: Any,
    prior_draws: Any,
    *,
    at: float = 0.0,
    ess: float | None = None,
    prior_ess: float | None = None,
) -> BayesFactor:
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

    **The value depends on the bandwidth.** A kernel density estimate is the
    density smoothed over about one bandwidth, so BF01 is the ratio of posterior
    to prior mass *near* `at`, at the resolution of the bandwidths. Where the
    prior density at `at` is finite and smooth, that converges to the point
    value; the prior of an F1 difference in the paired model is not: its density
    diverges (logarithmically) at 0, where the two classifiers' rates coincide,
    so a smaller prior bandwidth gives a larger prior density and a smaller BF01
    without end (:func:`rope_bayes_factor`, an interval Bayes factor, has no such
    dependence). Report BF01 with its bandwidths (``bandwidth(posterior_draws)``,
    ``bandwidth(prior_draws)``).

    Monte Carlo error: each density is the mean of the draws' kernel values at
    `at`; its standard error is their sd over ``sqrt(ess)`` (:func:`mcse_mean`, the
    bandwidth held fixed), and the delta method gives the ratio's,
    ``BF01 * hypot(se_post / p_post, se_prior / p_prior)``.

    Parameters
    ----------
    posterior_draws, prior_draws : array-like
        Draws of delta.
    at : float, default: 0.0
        The point null.
    ess, prior_ess : float, optional
        Effective sample sizes of the two samples for the Monte Carlo error (default:
        their sizes, independent draws). A prior symmetrised as ``[x, -x]`` holds
        ``len(x)`` independent draws: the kernel values at 0 repeat.

    Returns
    -------
    BayesFactor
        BF01, or its upper bound (``bound == "<"``); ``inf`` when the posterior is a
        point mass at `at`; ``nan`` when the prior has no density at `at`.

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> prior = rng.uniform(-1, 1, 100_000)         # density 0.5 at 0
    >>> post = rng.normal(0, 0.1, 100_000)          # density 3.99 at 0
    >>> bf = savage_dickey_bf01(post, prior)
    >>> round(bf.value, 1), bf.bound, round(bf.mcse, 2)
    (7.9, '', 0.09)
    >>> savage_dickey_bf01(rng.normal(0.5, 0.01, 50_000), prior).bound
    '<'
    """
    post = np.asarray(posterior_draws, dtype=float).ravel()
    prior = np.asarray(prior_draws, dtype=float).ravel()
    if _point_mass(prior):
        return BayesFactor(float("nan"))
    k_prior = _kernel_values(prior, at, bandwidth(prior))
    q0 = float(k_prior.mean())
    if q0 == 0 or not np.isfinite(q0):
        return BayesFactor(float("nan"))
    if _point_mass(post):
        return BayesFactor(_kde_density_at(post, at) / q0)
    h = bandwidth(post)
    if np.count_nonzero(np.abs(post - at) <= 3 * h) < MIN_DRAWS_NEAR:
        bound = MIN_DRAWS_NEAR / (post.size * h * np.sqrt(2 * np.pi))
        return BayesFactor(float(bound / q0), "<")
    k_post = _kernel_values(post, at, h)
    p0 = float(k_post.mean())
    value = p0 / q0
    rel = np.hypot(mcse_mean(k_post, ess) / p0, mcse_mean(k_prior, prior_ess) / q0)
    return BayesFactor(value, "", float(value * rel))


def rope_bayes_factor(
    posterior_draws: Any,
    prior_draws: Any,
    *,
    rope: float,
    ess: float | None = None,
    prior_ess: float | None = None,
) -> BayesFactor:
    """Return the ROPE (interval) Bayes factor: posterior over prior odds of ``|delta| <= rope``.

    ``BF = [P(in | data) / P(out | data)] / [P(in) / P(out)]``: above 1 the data
    favour practical equivalence, below 1 a difference. It is well defined for any
    prior with mass on both sides of the ROPE's edge, and estimated from counts of
    draws, with no smoothing to choose: the headline Bayes factor of the F1 reports
    (the point-null :func:`savage_dickey_bf01` depends on a kernel bandwidth). Where
    fewer than :data:`MIN_DRAWS_NEAR` posterior draws fall inside (outside) the ROPE,
    an upper (lower) bound is returned, computed as if that many had.

    Monte Carlo error by the delta method on the two binomial proportions ``p``
    (posterior) and ``q`` (prior) inside the ROPE, whose standard errors are the sd
    of the indicators over ``sqrt(ess)`` (:func:`mcse_mean`; about
    ``sqrt(p (1 - p) / ess)``): ``log BF = logit p - logit q`` has standard error
    ``hypot(se_p / (p (1 - p)), se_q / (q (1 - q)))``, and ``mcse = BF * that``.

    Parameters
    ----------
    posterior_draws, prior_draws : array-like
        Draws of delta.
    rope : float
        ROPE half-width.
    ess, prior_ess : float, optional
        Effective sample sizes of the two samples for the Monte Carlo error (default:
        their sizes; a prior symmetrised as ``[x, -x]`` holds ``len(x)``).

    Returns
    -------
    BayesFactor
        The Bayes factor or its bound (``nan`` when the prior puts no mass inside
        or outside the ROPE, or `rope` is 0).

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(1)
    >>> prior = rng.uniform(-1, 1, 200_000)            # P(|d| <= 0.1) = 0.1
    >>> post = rng.uniform(-0.2, 0.2, 200_000)         # P(|d| <= 0.1) = 0.5
    >>> bf = rope_bayes_factor(post, prior, rope=0.1)
    >>> round(bf.value, 1), bf.bound, round(bf.mcse, 2)  # (0.5 / 0.5) / (0.1 / 0.9)
    (8.9, '', 0.08)
    """
    post = np.asarray(posterior_draws, dtype=float).ravel()
    prior = np.asarray(prior_draws, dtype=float).ravel()
    prior_in = np.abs(prior) <= rope
    q = float(np.mean(prior_in))
    if rope <= 0 or q in (0.0, 1.0):
        return BayesFactor(float("nan"))
    post_in = np.abs(post) <= rope
    n_in = int(np.count_nonzero(post_in))
    n_out = post.size - n_in
    if n_in < MIN_DRAWS_NEAR:
        n_in, n_out = MIN_DRAWS_NEAR, post.size - MIN_DRAWS_NEAR
        return BayesFactor((n_in / n_out) / (q / (1.0 - q)), "<")
    if n_out < MIN_DRAWS_NEAR:
        n_in, n_out = post.size - MIN_DRAWS_NEAR, MIN_DRAWS_NEAR
        return BayesFactor((n_in / n_out) / (q / (1.0 - q)), ">")
    p = n_in / post.size
    value = (p / (1.0 - p)) / (q / (1.0 - q))
    # d logit(x) / dx = 1 / (x (1 - x)), applied to each proportion's standard error
    se_log = np.hypot(
        mcse_mean(post_in, ess) / (p * (1.0 - p)), mcse_mean(prior_in, prior_ess) / (q * (1.0 - q))
    )
    return BayesFactor(float(value), "", float(value * se_log))


def estimate_from_draws(
    delta: Any,
    *,
    rope: float,
    prior_delta: Any = None,
    hdi_prob: float = 0.95,
    ess: float | None = None,
    prior_ess: float | None = None,
) -> Estimate:
    """Summarise posterior draws of a difference as in Zhang et al.'s Tables 4-6.

    Parameters
    ----------
    delta : array-like
        Posterior draws (positive: A better).
    rope : float
        ROPE half-width of the HDI + ROPE decision and of the ROPE Bayes factor.
    prior_delta : array-like, optional
        Prior draws for the Bayes factors (:func:`rope_bayes_factor`, the headline, and
        :func:`savage_dickey_bf01`; NaN when None).
    hdi_prob : float, default: 0.95
        Mass of the highest-density interval.
    ess : float, optional
        Effective sample size of `delta` for the Monte Carlo errors (default:
        independent draws).
    prior_ess : float, optional
        Number of independent draws in `prior_delta` (default: all; half for a prior
        symmetrised as ``[x, -x]``), for the Monte Carlo errors of the Bayes factors.

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
    factors: dict[str, Any] = {}
    if prior_delta is not None:
        prior = np.asarray(prior_delta, dtype=float)
        in_rope = rope_bayes_factor(d, prior, rope=rope, ess=ess, prior_ess=prior_ess)
        at_0 = savage_dickey_bf01(d, prior, ess=ess, prior_ess=prior_ess)
        factors = {
            "bf_rope": in_rope.value,
            "bf_rope_bound": in_rope.bound,
            "bf_rope_mcse": in_rope.mcse,
            "bf01": at_0.value,
            "bf01_bound": at_0.bound,
            "bf01_mcse": at_0.mcse,
            "bf01_bandwidth": bandwidth(d) if d.size > 1 else 0.0,
            "bf01_prior_bandwidth": bandwidth(prior),
        }
    return Estimate(
        mean=float(d.mean()),
        sd=float(d.std(ddof=1)) if d.size > 1 else 0.0,
        mcse=mcse_mean(d, ess),
        interval=Interval(lo, hi, hdi_prob, "hdi"),
        p_below_0=float(np.mean(d < 0)),
        p_above_0=float(np.mean(d > 0)),
        decision=hdi_rope_decision(lo, hi, rope),
        **factors,
    )
