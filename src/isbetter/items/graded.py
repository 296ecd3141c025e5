r"""Graded items over several subtasks: the hierarchical correlated-t model with ρ = 0.

Binary items over subtasks have an exact likelihood (:mod:`isbetter.items.hierarchical`);
graded ones (partial credit, per-item F1, the mean of several runs) have none, and DESIGN
§4.3 fits them by the hierarchical model of §3.2 (Corani et al. 2017,
:func:`~isbetter.cv.hierarchical.model.hierarchical_test`) with

* each **subtask** one data set, each **item's paired difference**
  :math:`d = \text{score}_A - \text{score}_B` one of its "fold" differences:
  :math:`d_{ti} \sim N(\delta_t, \sigma_t^2)` independently, :math:`\delta_t \sim
  t_\nu(\delta_0, \sigma_0)`;
* :math:`\rho = 0`: the items are independent test cases, not the overlapping training
  sets of cross-validation that :math:`\rho = 1/\text{folds}` corrects for;
* items in **clusters** (items sharing a passage): the cluster is the unit, its
  difference the mean of its items' differences, so the items of a cluster are not
  counted as independent (the Bayesian bootstrap of one task resamples clusters alike).

:math:`\delta_0` is the mean of the population of subtasks (the Student-t's location,
:math:`\nu > 1`): the population mean difference. The next subtask's difference and each
subtask's shrunk :math:`\delta_t` are those of the model. What the cross-validation model
needs of its data holds here as follows: at least 2 units (items, or clusters) per
subtask, an error otherwise; a subtask whose differences are all equal (two models
scoring alike on every item) has no variance, and the model's own rule applies (its
``rope**2 / 3``, the reference code's U(-rope, rope) noise; with no ROPE a hundredth of
the other subtasks' mean sd, an immaterial value: :mod:`isbetter.cv.hierarchical.spec`),
named in ``settings["zero_variance_subtasks"]``.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from isbetter.core.errors import InputError
from isbetter.core.provenance import make_settings
from isbetter.inference.records import Observed
from isbetter.inference.summaries import estimate_from_draws
from isbetter.items.table import PairedItems
from isbetter.results.items import ItemsHierarchicalResult

__all__ = ["GRADED_METHOD", "RHO", "graded_scores", "hierarchical_graded", "unit_differences"]

#: the method of a result of this route (its signature: ``items-hierarchical-graded``)
GRADED_METHOD = "items_hierarchical_graded"
#: the correlation of two items' differences within a subtask: independent test cases
RHO = 0.0


def unit_differences(pair: PairedItems) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Return per unit (item, or cluster when the items have clusters): A's, B's score, d.

    A cluster's scores are the means over its items (so its difference is the mean of
    its items' differences), in the order the clusters first occur.

    Examples
    --------
    >>> pair = PairedItems("t", "x", "y", np.array(["1", "2", "3"]), np.array([1.0, 0.5, 0]),
    ...                    np.array([0.0, 0.5, 0]), np.array(["p", "p", "q"]),
    ...                    np.ones((3, 2), int))
    >>> [u.tolist() for u in unit_differences(pair)]
    [[0.75, 0.0], [0.25, 0.0], [0.5, 0.0]]
    """
    if pair.clusters is None:
        return pair.a, pair.b, pair.a - pair.b
    frame = pd.DataFrame({"cluster": pair.clusters, "a": pair.a, "b": pair.b})
    means = frame.groupby("cluster", sort=False)[["a", "b"]].mean()
    a, b = means["a"].to_numpy(), means["b"].to_numpy()
    return a, b, a - b


def graded_scores(parts: dict[str, PairedItems], metric: str) -> Any:
    """Return the subtasks' paired differences as the hierarchical model's input.

    A :class:`~isbetter.cv.scores.PairedScores` with each subtask a data set of
    ``n_folds`` units (one run), what :func:`~isbetter.cv.hierarchical.model.
    hierarchical_test` takes.

    Raises
    ------
    InputError
        A subtask has fewer than 2 units (items, or clusters).
    """
    from isbetter.cv.scores import PairedScores

    units = {task: unit_differences(p) for task, p in parts.items()}
    clustered = any(p.clusters is not None for p in parts.values())
    few = [t for t, (_, _, d) in units.items() if d.size < 2]
    if few:
        what = "cluster" if clustered else "item"
        raise InputError(
            f"task(s) {', '.join(map(repr, few[:5]))} have a single {what}, and the "
            f"hierarchical model of graded items needs at least 2 {what}s per subtask (their "
            "spread is its evidence); leave those tasks out (`restrict`), or pool the "
            "subtasks' items with `pool='micro'`."
        )
    first = next(iter(parts.values()))
    return PairedScores(
        system_a=first.system_a,
        system_b=first.system_b,
        metric=metric,
        higher_is_better=True,
        datasets=tuple(units),
        differences=tuple(d for _, _, d in units.values()),
        n_runs=np.ones(len(units), dtype=int),
        n_folds=np.array([d.size for _, _, d in units.values()]),
        means_a=np.array([a.mean() for a, _, _ in units.values()]),
        means_b=np.array([b.mean() for _, b, _ in units.values()]),
    )


def hierarchical_graded(
    parts: dict[str, PairedItems],
    *,
    metric: str,
    rope: float,
    seed: int,
    draws: int,
    hdi_prob: float = 0.95,
) -> ItemsHierarchicalResult:
    r"""Fit the hierarchical correlated-t model (ρ = 0) to graded items over subtasks.

    Parameters
    ----------
    parts : dict of str to PairedItems
        The two systems' items on each subtask (:meth:`~isbetter.items.table.ItemTable.
        subtasks`), at least two subtasks.
    metric : str
        What the scores measure, as the result names it.
    rope : float
        ROPE half-width in score units.
    seed : int
        The fit's seed (the same seed, the same result).
    draws : int
        Posterior draws per chain (4 chains).
    hdi_prob : float, default: 0.95
        Mass of the population mean difference's HDI.

    Returns
    -------
    ItemsHierarchicalResult
        ``method`` :data:`GRADED_METHOD`: the probabilities of the next subtask's
        difference (argmax counts; ``predictive`` the mean masses), ``estimate`` of the
        population mean difference :math:`\delta_0`, ``delta`` each subtask's shrunk
        difference, ``observed_means`` the observed ones; ``counts`` is None.
    """
    from isbetter.cv.hierarchical.model import hierarchical_test

    scores = graded_scores(parts, metric)
    fit = hierarchical_test(scores, rope=rope, rho=RHO, draws=draws, rng=seed)
    return from_cv(fit, scores, parts, hdi_prob=hdi_prob)


def _observed(parts: dict[str, PairedItems]) -> Observed:
    """Return the items' mean scores and difference, every subtask's items pooled."""
    a = np.concatenate([p.a for p in parts.values()])
    b = np.concatenate([p.b for p in parts.values()])
    return Observed(
        n=int(a.size),
        score_a=float(a.mean()),
        score_b=float(b.mean()),
        difference=float((a - b).mean()),
    )


#: the cross-validation fit's settings a result keeps under ``settings["model"]``
_MODEL_SETTINGS = (
    "priors",
    "backend",
    "parameterization",
    "parameterization_choice",
    "refit_of",
    "target_accept",
    "scale",
    "sigma_bound_term",
    "mass_matrix",
)


def _settings(fit: Any, scores: Any, parts: dict[str, PairedItems]) -> dict[str, Any]:
    """Return the result's settings: the route (rho, unit), the fit's own, zero variances."""
    clustered = any(p.clusters is not None for p in parts.values())
    cv = fit.settings
    return make_settings(
        GRADED_METHOD,
        cv["seed"],
        signature_method="items-hierarchical-graded" + ("-clusters" if clustered else ""),
        rope=fit.rope,
        rho=RHO,
        unit="cluster" if clustered else "item",
        metric=scores.metric,
        draws=cv["draws"],
        tune=cv["tune"],
        chains=cv["chains"],
        n_subtasks=scores.n_datasets,
        **({"clusters": int(sum(d.size for d in scores.differences))} if clustered else {}),
        runs=sorted({int(r) for p in parts.values() for r in np.unique(p.runs)}),
        zero_variance_subtasks=cv["zero_variance_datasets"],
        zero_variance_sd=cv["zero_variance_sd"],
        model={k: cv[k] for k in _MODEL_SETTINGS},
    )


def from_cv(
    fit: Any, scores: Any, parts: dict[str, PairedItems], *, hdi_prob: float
) -> ItemsHierarchicalResult:
    """Return the result of the items' route from the cross-validation model's `fit`.

    `scores`: the model's input (:func:`graded_scores` of `parts`).
    """
    from isbetter.inference import diagnostics as mcmc

    delta0 = np.asarray(fit.delta0)
    chains = int(fit.diagnostics.chains)
    ess = float(mcmc.ess_bulk(delta0.reshape(chains, -1, 1))[0])
    return ItemsHierarchicalResult(
        system_a=fit.system_a,
        system_b=fit.system_b,
        rope=fit.rope,
        p_a_better=fit.p_a_better,
        p_rope=fit.p_rope,
        p_b_better=fit.p_b_better,
        method=GRADED_METHOD,
        posterior=fit.posterior,
        settings=_settings(fit, scores, parts),
        counting=fit.counting,
        metric=scores.metric,
        predictive=fit.predictive,
        estimate=estimate_from_draws(delta0, rope=fit.rope, hdi_prob=hdi_prob, ess=ess),
        observed=_observed(parts),
        diagnostics=fit.diagnostics,
        subtasks=tuple(scores.datasets),
        delta=fit.delta,
        population_mean=delta0,
        hyper={"delta0": delta0, "std0": np.asarray(fit.std0), "nu": np.asarray(fit.nu)},
        idata=fit.idata,
        observed_means=np.asarray(fit.observed_means, dtype=float),
        units=np.asarray(scores.n_folds, dtype=int),
    )
