r"""A ranking from one posterior: the joint correlated model's pairwise table and ranks.

For each metric, :func:`joint_metric` fits the joint model of all K systems once
(:func:`isbetter.cv.joint.model.joint_fit`) and reads off its draws, in the shape of
the pairwise ranking (so orders, Hasse diagrams, reports and plots work unchanged):

* for every pair (a, b), the next data set's difference
  :math:`\delta_{next} = b_a - b_b + u_a - u_b`. With one shared :math:`\nu`
  (``JointPriors(tails="shared")``) the deviations of a new data set
  are multivariate Student-t, so per draw :math:`\delta_{next} \sim t_\nu(b_a - b_b,
  \sigma_{ab})` exactly, with the pair's scale :math:`\sigma_{ab}` from the draw of the
  deviations' covariance (:meth:`~isbetter.cv.joint.model.JointFit.pair_scales`) — the
  pairwise model's form (:class:`~isbetter.inference.posterior.HierarchicalPosterior`).
  With one :math:`\nu_k` per system (independent weights of the two systems: the
  grouped t) :math:`\delta_{next}` is no longer a t; its masses are a one-dimensional
  integral (:func:`isbetter.cv.joint.predictive.pair_masses` computes both forms).
  With independent Student-t components (the default, ``JointPriors()``)
  :math:`\delta_{next} = b_a - b_b + \sum_j w_j z_j`, the pair's weights
  :math:`w = c_{ab}^T L` from the draw of the loading
  (:func:`~isbetter.cv.joint.predictive.component_weights`), its masses from
  :func:`~isbetter.cv.joint.predictive.component_pair_masses` (seeded from the
  ranking's seed, the metric and the pair, so the same seed gives the same table).
  From these masses in the three regions: argmax-counted and predictive (mean-mass)
  probabilities, and the posterior of :math:`b_a - b_b`, as a
  :class:`~isbetter.results.comparison.ComparisonResult`;
* the ranks of the effects :math:`b_k` (:func:`isbetter.inference.ranks.rank_summary`):
  P(best), expected rank, 95% rank intervals, the most probable strict and
  ROPE-aware orders.
"""

from __future__ import annotations

import itertools
from typing import Any

import numpy as np

from isbetter.cv.compare import MCMC_OPTIONS
from isbetter.cv.joint.predictive import component_pair_masses, component_weights, pair_masses
from isbetter.inference import diagnostics as mcmc
from isbetter.inference.ranks import rank_summary
from isbetter.inference.records import Observed
from isbetter.inference.sampling import convergence_recorded_only
from isbetter.inference.seeds import pair_seed
from isbetter.inference.summaries import estimate_from_draws
from isbetter.ranking.tasks import MetricFit, pair_from_masses, simplex_points
from isbetter.results.comparison import ComparisonResult

__all__ = ["JOINT_OPTIONS", "joint_metric", "next_data_set_masses"]

#: the options of :func:`isbetter.rank` that the joint model takes
JOINT_OPTIONS = ("rho", "priors", *MCMC_OPTIONS)


def joint_metric(
    table: Any,
    systems: tuple[str, ...],
    metric: str,
    rope: float,
    seed: int,
    options: dict[str, Any],
) -> MetricFit:
    """Fit the joint model to `systems` on `metric` and read off the ranking's parts.

    The fit's seed is derived from the ranking's `seed` and the metric
    (:func:`~isbetter.inference.seeds.pair_seed`), so a metric's numbers do not depend
    on the other metrics ranked.
    """
    from isbetter.cv.joint.model import joint_fit

    # poor convergence is recorded in the summaries; the ranking warns once
    with convergence_recorded_only():
        fit = joint_fit(
            table,
            systems,
            metric=metric,
            rope=rope,
            rng=pair_seed(seed, "joint", metric),
            **options,
        )
    chains, draws, k = fit.effects.shape
    effects = fit.effects.reshape(-1, k)
    identical = {
        (a, b)
        for a, b in itertools.combinations(systems, 2)
        if not any(np.any(d) for d in table.paired(a, b, metric=metric).differences)
    }
    pairs, simplex = _pairs(fit, systems, metric, rope, identical, seed)
    return MetricFit(
        pairs=pairs,
        simplex=simplex,
        ranks=rank_summary(effects, systems, rope=rope, chains=chains),
        converged=fit.diagnostics.converged,
    )


def _pairs(
    fit: Any,
    systems: tuple[str, ...],
    metric: str,
    rope: float,
    identical: set[tuple[str, str]],
    seed: int,
) -> tuple[list[ComparisonResult], dict[tuple[str, str], list[list[float]]]]:
    """Return every pair's comparison from the joint fit's draws, and its simplex points.

    The pairs in `identical` (the same score on every fold) have a posterior symmetric
    in their two effects, as the pairwise hierarchical model's: their masses are
    averaged with their mirror image (``symmetric``), so that Monte Carlo error cannot
    decide a side between identical systems. With independent components
    (``fit.loading``) the masses of a pair come from its weights on the components;
    their Monte Carlo is seeded from `seed`, the metric and the pair.
    """
    chains, draws, k = fit.effects.shape
    effects = fit.effects.reshape(-1, k)
    data = fit.data
    sign = 1.0 if data.higher_is_better else -1.0
    observed = data.mean_scores.mean(axis=0)
    pairs, simplex = [], {}
    pairs_ab = itertools.combinations(enumerate(systems), 2)
    for (ia, a), (ib, b) in pairs_ab:
        loc = effects[:, ia] - effects[:, ib]
        masses = next_data_set_masses(
            fit,
            ia,
            ib,
            rope,
            rng=pair_seed(seed, "joint", metric, a, b),
            symmetric=(a, b) in identical,
        )
        ess = float(mcmc.ess_bulk(loc.reshape(chains, draws, 1))[0])
        pairs.append(
            pair_from_masses(
                masses,
                method="joint",
                system_a=a,
                system_b=b,
                metric=metric,
                higher_is_better=data.higher_is_better,
                rope=rope,
                settings=fit.settings,
                ranking_metric=metric,
                estimate=estimate_from_draws(loc, rope=rope, ess=ess),
                diagnostics=fit.diagnostics,
                observed=Observed(
                    n=int(data.n.sum()),
                    score_a=float(observed[ia]),
                    score_b=float(observed[ib]),
                    difference=float(sign * (observed[ia] - observed[ib])),
                ),
            )
        )
        simplex[(a, b)] = simplex_points(masses)
    return pairs, simplex


def next_data_set_masses(
    fit: Any, a: int, b: int, rope: float, *, rng: Any, symmetric: bool = False
) -> np.ndarray:
    """Return the next data set's masses (a better, ROPE, b better) of a joint fit's pair.

    Per posterior draw (chains flattened), for the systems `a` and `b` (indices into
    ``fit.data.systems``): a Student t, the grouped t or the independent components'
    sum, whichever tails the fit has (module docstring). `rng` seeds the components'
    Monte Carlo; `symmetric` averages each row with its mirror image (identical systems).
    """
    chains, draws, k = fit.effects.shape
    n = chains * draws
    effects = fit.effects.reshape(n, k)
    loc = effects[:, a] - effects[:, b]
    nu = fit.nu.reshape(n, *fit.nu.shape[2:])  # (n,) shared, (n, K) per system, (n, K - 1)
    if fit.loading is None:
        spread = fit.spread.reshape(n, k, k)
        return pair_masses(loc, spread, nu, a, b, rope, symmetric=symmetric)
    weights = component_weights(fit.loading.reshape(n, k - 1, k - 1), a, b)
    return component_pair_masses(loc, weights, nu, rope, rng=rng, symmetric=symmetric)
