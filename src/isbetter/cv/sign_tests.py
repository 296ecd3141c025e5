"""Bayesian sign and signed-rank tests on per-data-set mean differences.

Both tests put a Dirichlet-process prior on the distribution of the mean
difference ``z`` of two systems across data sets (Benavoli et al. [1]_, [2]_).
Its posterior is a Dirichlet over the observed ``z_1 .. z_q`` plus one prior
pseudo-observation of weight ``prior``. For each posterior draw of the weights:

* the **sign test** sums the weights of the observations in each region
  (``z > rope``: A better; ``|z| <= rope``: ROPE; ``z < -rope``: B better);
  by the aggregation property this is the Dirichlet over region counts plus
  the prior pseudo-count used by baycomp;
* the **signed-rank test** sums the products of weights of all pairs
  ``(i, j)`` whose Walsh sum ``z_i + z_j`` falls beyond ``+-2 rope`` (a tie
  counts one half), the Bayesian counterpart of the Wilcoxon signed-rank test.

The decision probabilities are the fraction of draws in which each region
holds the largest mass. All draws are made at once (no loop over draws).

References
----------
.. [1] Benavoli, Corani, Mangili, Zaffalon, Ruggeri (2014). A Bayesian Wilcoxon
   signed-rank test based on the Dirichlet process. ICML, PMLR 32.
.. [2] Benavoli, Corani, Demšar, Zaffalon (2017). Time for a change: a tutorial
   for comparing multiple classifiers through Bayesian analysis. JMLR 18(77).
"""

from __future__ import annotations

from typing import Literal

import numpy as np

from isbetter.core.provenance import input_settings, make_settings
from isbetter.core.validate import check_choice, check_nonnegative, check_positive_int, check_rope
from isbetter.cv.identity import cv_identity
from isbetter.cv.scores import PairedScores, check_paired
from isbetter.inference.posterior import DirichletProcessPosterior
from isbetter.inference.seeds import resolve_seed
from isbetter.results.comparison import ComparisonResult

__all__ = ["sign_test", "signed_rank_test"]

PriorPlace = Literal["rope", "a_better", "b_better"]
_PLACE_VALUE = {"rope": 0.0, "a_better": np.inf, "b_better": -np.inf}


def _dirichlet_weights(prior: float, q: int, draws: int, rng: np.random.Generator) -> np.ndarray:
    """Draws of Dirichlet(prior, 1, ..., 1) weights, shape ``(draws, q + 1)``.

    Sampled as normalised Gamma variates: Gamma(1) is the standard exponential,
    which numpy draws about twice as fast as a general Gamma. A zero prior gives
    its pseudo-observation weight exactly 0.
    """
    g = np.empty((draws, q + 1))
    g[:, 0] = rng.standard_gamma(prior, size=draws) if prior > 0 else 0.0
    g[:, 1:] = rng.standard_exponential(size=(draws, q))
    g /= g.sum(axis=1, keepdims=True)
    return g


def _run(
    scores: PairedScores,
    kind: Literal["sign", "signed_rank"],
    rope: float,
    prior: float,
    pseudo_value: float,
    draws: int,
    rng: int | np.random.Generator | None,
    extra: dict,
) -> ComparisonResult:
    scores = check_paired(scores, kind)
    rope = check_rope(rope)
    prior = check_nonnegative(prior, "prior")
    draws = check_positive_int(draws, "draws")
    seed = resolve_seed(rng)
    z = scores.mean_differences()
    values = np.concatenate(([pseudo_value], z))
    weights = _dirichlet_weights(prior, z.size, draws, np.random.default_rng(seed))
    posterior = DirichletProcessPosterior(values=values, weights=weights, kind=kind)
    settings = make_settings(
        kind,
        seed,
        rope=rope,
        prior=prior,
        draws=draws,
        n_datasets=int(z.size),
        metric=scores.metric,
        **extra,
        **input_settings(scores),
    )
    return ComparisonResult.from_posterior(
        posterior,
        rope=rope,
        method=kind,
        settings=settings,
        **cv_identity(scores, count="datasets"),
    )


def sign_test(
    scores: PairedScores,
    *,
    rope: float = 0.0,
    prior: float = 1.0,
    prior_place: PriorPlace = "rope",
    draws: int = 50_000,
    rng: int | np.random.Generator | None = None,
) -> ComparisonResult:
    """Bayesian sign test on the mean differences across data sets.

    Parameters
    ----------
    scores : PairedScores
        Differences of two systems on several data sets; their per-data-set
        means are compared.
    rope : float, default: 0.0
        Half-width of the region of practical equivalence, in score units.
    prior : float, default: 1.0
        Strength (pseudo-count) of the prior.
    prior_place : {"rope", "a_better", "b_better"}, default: "rope"
        The region the prior pseudo-observation is placed in.
    draws : int, default: 50000
        Posterior draws.
    rng : int, numpy.random.Generator or None
        Seed or generator; the seed used is recorded in ``settings``.

    Returns
    -------
    ComparisonResult
        ``posterior`` is a :class:`~isbetter.inference.posterior.DirichletProcessPosterior`;
        probabilities are argmax counts.

    Notes
    -----
    With ``rope=0`` there is no region of practical equivalence: P(rope) is 0 and
    the masses of the two sides are renormalised, per draw, without the
    observations (and the prior pseudo-observation) at exactly 0 — as baycomp
    drops the ROPE when it is 0.

    References
    ----------
    .. [1] Benavoli et al. (2017), JMLR 18(77), section 4.

    Examples
    --------
    >>> from isbetter import from_arrays
    >>> x = np.array([[0.80], [0.71], [0.93], [0.64], [0.88]])
    >>> y = np.array([[0.78], [0.70], [0.90], [0.65], [0.84]])
    >>> res = sign_test(from_arrays(x, y, runs=1).paired("A", "B"), rope=0.005, rng=1)
    >>> round(res.p_a_better, 3), round(res.p_rope, 3), round(res.p_b_better, 3)
    (0.889, 0.056, 0.055)
    """
    place = check_choice(prior_place, "prior_place", tuple(_PLACE_VALUE))
    return _run(
        scores, "sign", rope, prior, _PLACE_VALUE[place], draws, rng, {"prior_place": place}
    )


def signed_rank_test(
    scores: PairedScores,
    *,
    rope: float = 0.0,
    prior: float = 0.5,
    draws: int = 50_000,
    rng: int | np.random.Generator | None = None,
) -> ComparisonResult:
    """Bayesian signed-rank test on the mean differences across data sets.

    Parameters
    ----------
    scores : PairedScores
        Differences of two systems on several data sets; their per-data-set
        means are compared.
    rope : float, default: 0.0
        Half-width of the region of practical equivalence, in score units.
    prior : float, default: 0.5
        Weight of the prior pseudo-observation, placed at 0 (baycomp's default;
        the JMLR tutorial uses 0.6 in places).
    draws : int, default: 50000
        Posterior draws.
    rng : int, numpy.random.Generator or None
        Seed or generator; the seed used is recorded in ``settings``.

    Returns
    -------
    ComparisonResult
        ``posterior`` is a :class:`~isbetter.inference.posterior.DirichletProcessPosterior`;
        probabilities are argmax counts.

    References
    ----------
    .. [1] Benavoli et al. (2014), ICML, PMLR 32.

    Examples
    --------
    >>> from isbetter import from_arrays
    >>> x = np.array([[0.80], [0.71], [0.93], [0.64], [0.88]])
    >>> y = np.array([[0.78], [0.70], [0.90], [0.65], [0.84]])
    >>> res = signed_rank_test(from_arrays(x, y, runs=1).paired("A", "B"), rope=0.005, rng=1)
    >>> round(res.p_a_better, 3), round(res.p_rope, 3), round(res.p_b_better, 3)
    (0.981, 0.002, 0.017)
    """
    return _run(scores, "signed_rank", rope, prior, 0.0, draws, rng, {})
