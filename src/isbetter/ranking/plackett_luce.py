r"""A ranking from the Plackett–Luce model: its pairwise table, ranks and chain.

For each metric, :func:`plackett_luce_metric` fits the Plackett–Luce model of
all K systems once (:func:`isbetter.cv.plackett_luce.plackett_luce`, on each
system's score per data set) and reads off its draws of the weights ``w``, in
the shape of the pairwise ranking, so that orders, Hasse diagrams, chains,
reports and plots work unchanged:

* **the pairwise table.** The model has no ROPE: it ranks, and a ranking has no
  "practically equivalent". Each pair's probabilities are therefore
  ``(P(w_a > w_b), 0, P(w_b > w_a))`` — P(ROPE) is 0 by construction, stated in
  every pair's settings. They are read off per-draw masses
  ``(q, 0, 1 - q)`` with ``q = w_a / (w_a + w_b)``, the probability that a
  ranks above b on a new data set in that draw: argmax-counted they give
  P(w_a > w_b) (the table), and their mean E[q] is the predictive probability
  (``predictive``), as for the other models.
* **the relations** (:func:`~isbetter.inference.decisions.no_rope_decision`): with
  no ROPE the likelihood rule's "most probable region" would call every pair for
  one side, however close (≫ at P = 0.51). So a pair is "≫"/"≪" only where
  P(w_a > w_b) or P(w_b > w_a) reaches the ranking's threshold (default 0.95), as
  under the threshold rule;
  below it the likelihood rule writes the side it leans to, ">"/"<" ("leaning: no
  relation decided, the evidence favours A"), and "?" when the two are within the
  margin of each other; the threshold rule writes "?".
* **ranks** (:meth:`~isbetter.cv.plackett_luce.PlackettLuceFit.ranks`): P(best) =
  P(w_k is the largest), P(wins next data set) = E[w_k], expected ranks, 95% rank
  intervals and the most probable orders of the weights — the ``"joint"`` block of
  each metric, whose expected ranks order the chain.
"""

from __future__ import annotations

import itertools
from typing import Any

import numpy as np

from isbetter.cv.compare import MCMC_OPTIONS
from isbetter.cv.friedman import dataset_means
from isbetter.inference.records import Observed
from isbetter.inference.seeds import pair_seed
from isbetter.ranking.tasks import MetricFit, pair_from_masses, simplex_points
from isbetter.results.comparison import ComparisonResult

__all__ = ["PLACKETT_LUCE_OPTIONS", "plackett_luce_metric"]

#: the options of :func:`isbetter.rank` that the Plackett–Luce model takes
PLACKETT_LUCE_OPTIONS = ("concentration", "ties", *MCMC_OPTIONS)


def plackett_luce_metric(
    table: Any,
    systems: tuple[str, ...],
    metric: str,
    seed: int,
    options: dict[str, Any],
) -> MetricFit:
    """Fit the Plackett–Luce model to `systems` on `metric` and read off the ranking's parts.

    The fit's seed is derived from the ranking's `seed` and the metric
    (:func:`~isbetter.inference.seeds.pair_seed`), so a metric's numbers do not
    depend on the other metrics ranked.
    """
    from isbetter.cv.plackett_luce import plackett_luce
    from isbetter.inference.sampling import convergence_recorded_only

    # poor convergence is recorded in the summaries; the ranking warns once
    with convergence_recorded_only():
        fit = plackett_luce(
            table,
            metric=metric,
            systems=systems,
            rng=pair_seed(seed, "plackett_luce", metric),
            **options,
        )
    per_dataset = dataset_means(table, metric, systems)
    pairs, simplex = _pairs(fit, systems, metric, per_dataset)
    return MetricFit(
        pairs=pairs,
        simplex=simplex,
        ranks=fit.ranks(),
        converged=fit.diagnostics.converged,
        tied_datasets=fit.tied_datasets,
    )


def _pairs(
    fit: Any, systems: tuple[str, ...], metric: str, per_dataset: Any
) -> tuple[list[ComparisonResult], dict[tuple[str, str], list[list[float]]]]:
    """Return every pair's summary, ``(P(w_a > w_b), 0, P(w_b > w_a))``, and its simplex points.

    `per_dataset` is each system's mean score per data set (data sets x systems), the
    scores the model ranks. Two systems with the same scores on every data set have a
    posterior symmetric in their weights (the Dirichlet prior is, and so is the
    likelihood of their ties), so P(w_a > w_b) is 1/2 exactly: each draw's masses are
    averaged with their mirror image, ``(1/2, 0, 1/2)``, as for the other models
    (:class:`~isbetter.inference.posterior.HierarchicalPosterior`), and the pair is
    undecided — Monte Carlo error alone wrote ">" between identical systems (P 0.57).
    """
    means = per_dataset.mean(axis=0)
    sign = 1.0 if fit.higher_is_better else -1.0
    settings = {
        **fit.settings,
        "p_rope": "0: the model ranks, it has no ROPE",
    }
    pairs, simplex = [], {}
    for a, b in itertools.combinations(systems, 2):
        q = fit.p_above(a, b)
        if per_dataset[a].equals(per_dataset[b]):  # identical: symmetric, 1/2 exactly
            q = np.full_like(q, 0.5)
        masses = np.column_stack([q, np.zeros_like(q), 1.0 - q])
        pairs.append(
            pair_from_masses(
                masses,
                method="plackett_luce",
                system_a=a,
                system_b=b,
                metric=metric,
                higher_is_better=fit.higher_is_better,
                rope=0.0,
                settings=settings,
                ranking_metric=metric,
                diagnostics=fit.diagnostics,
                observed=Observed(
                    n=len(fit.datasets),
                    score_a=float(means[a]),
                    score_b=float(means[b]),
                    difference=float(sign * (means[a] - means[b])),
                ),
            )
        )
        simplex[(a, b)] = simplex_points(masses)
    return pairs, simplex
