"""Rank language models on item-level scores (an :class:`~isbetter.items.table.ItemTable`).

Two routes, named by the quantity their relations are about:

* **pairwise** (``method="auto"``, ``"exact"`` or ``"bootstrap"``): every pair by the
  models of :func:`~isbetter.compare_items` (the exact paired model for binary items,
  the Bayesian bootstrap of the paired mean difference otherwise), each with the seed
  :func:`~isbetter.inference.seeds.pair_seed` derives from the ranking's seed, the
  metric and the pair; the pairwise table, orders, chain and Hasse diagram as for any
  ranking. The pairs are exact (no MCMC, milliseconds each) and run in this process.
* **one posterior** (``method="items_joint"``): one posterior of the distribution of the
  vector of all the systems' scores over items (:mod:`isbetter.items.joint`): for binary
  items the Dirichlet process whose every pair is the exact paired model, otherwise the
  Bayesian bootstrap over items. Each draw gives every system's mean score at once, so
  P(best), expected ranks, 95% rank intervals, the most probable orders and every pair's
  probabilities come from the same draws.

Both are about the systems' difference in mean score (accuracy, for 0/1 scores) on the
population the items are drawn from. Several tasks (option ``pool``,
:data:`~isbetter.core.vocabulary.ITEM_POOLS`): the pairwise route compares every pair by
the hierarchical model over the subtasks (``"auto"``, ``"hierarchical"``;
:func:`hierarchical_tasks`: the hierarchical paired model of binary items, the
correlated-t model with rho = 0 of graded items, means over runs or clusters; MCMC fits,
run by :mod:`isbetter.ranking.execution` — worker processes, a cache — as every other
pairwise ranking of fits), and the one posterior is a two-level Bayesian bootstrap over
the subtasks and their items (:func:`~isbetter.items.joint.sample_subtask_means`, method
:data:`JOINT_SUBTASKS`): both about the population of subtasks, each subtask weighted
equally — the pairwise route's probabilities about the next subtask's difference, the one
posterior's (P(best), ranks, pairs) about each system's mean over the population of
subtasks of its mean score, whose difference is the hierarchical model's population mean
difference. ``"micro"`` pools the tasks'
items instead, each (task, item) one item (:func:`~isbetter.items.subtasks.pooled_pair`,
:func:`~isbetter.items.joint.item_matrix`): a micro average, in which a large subtask
weighs as much as its items. Beside them Friedman's, Iman–Davenport's and Nemenyi's
tests rank the systems' mean scores on each task.
"""

from __future__ import annotations

import dataclasses
import itertools
from collections.abc import Mapping
from typing import Any, cast

import numpy as np

from isbetter.core.errors import InputError
from isbetter.core.provenance import input_record
from isbetter.core.validate import check_choice, counted
from isbetter.core.validate import check_options as check_method_options
from isbetter.core.vocabulary import ITEM_RANKING_METHODS
from isbetter.inference.posterior import DrawsPosterior
from isbetter.inference.ranks import rank_summary
from isbetter.inference.records import Observed
from isbetter.inference.seeds import pair_seed
from isbetter.inference.summaries import estimate_from_draws
from isbetter.items import paired
from isbetter.items.compare import compare_paired_items
from isbetter.items.hierarchical.route import LOW_RANK_MAX_SUBTASKS
from isbetter.items.joint import (
    ItemMatrix,
    distinct_units,
    item_matrix,
    prior_alpha,
    prior_record,
    sample_means,
    sample_subtask_means,
)
from isbetter.items.subtasks import (
    matrix_counts,
    pooled_pair,
    pooled_task,
    resolve_pool,
    subtasks_text,
)
from isbetter.ranking.tasks import PairTask, simplex_points
from isbetter.results.comparison import ComparisonResult

__all__ = [
    "ITEM_RANKING_OPTIONS",
    "JOINT_SUBTASKS",
    "hierarchical_tasks",
    "item_pairs",
    "items_joint",
]

#: the options of :func:`isbetter.rank` that a ranking of item scores takes
ITEM_RANKING_OPTIONS = ("draws", "chains", "pool")
#: chains of each pair's hierarchical fit over subtasks in a ranking (compare_items: 4). A
#: ranking needs each pair's three probabilities, not its per-subtask summaries; on the 190
#: pairs of bench/bench_items_subtasks.py (20 models x 57 subtasks), 2 chains x 1000 draws
#: cost 0.64 s CPU a fit against 1.09 s for 4 (22 pairs, every 9th; refits included), none
#: flagged after the refit either way, and the Monte Carlo standard error of a pair's
#: argmax-counted probabilities (from each indicator's bulk ESS) median 0.012, max 0.020,
#: against 0.009 and 0.012 with 4 chains: below the likelihood rule's margin (0.05) and,
#: at the threshold rule's 0.95, about sqrt(0.95 x 0.05 / 1000) = 0.007. The convergence
#: checks flag more of them (all 190: 21 against 9; R-hat 1.013-1.016 and bulk ESS near
#: 400 where 4 chains gave 1.005-1.009, probabilities within 0.015). Only above
#: LOW_RANK_MAX_SUBTASKS subtasks: with 6 subtasks of 60 items 2 chains left 2 of 3 pairs
#: flagged (nu and sigma barely identified), and such fits are cheap. ``chains=4`` gives
#: compare_items's fit of each pair
RANK_CHAINS = 2
#: the one posterior's draws by default: a probability's Monte Carlo error at most 0.005
#: (more than the joint correlated model's 4 x 1000), while each draw's ROPE-aware order of
#: K systems costs Python time (19 AIME models: 3 s at 10 000 draws, 16 s at 50 000)
JOINT_DRAWS = 10_000
#: how the one posterior over several subtasks weighs them, as its settings say
SUBTASK_WEIGHTS = (
    "Dir(1, ..., 1) over the subtasks, then within each over its items (clusters; binary "
    "items: the Dirichlet process): the mean over the population of subtasks, each "
    "subtask weighted equally"
)


def check_item_request(
    table: Any, method: str, metrics: Any, options: Mapping[str, Any]
) -> tuple[str, str]:
    """Return the route (``"items_joint"`` or a model of ``compare_items``) and the metric.

    An ItemTable has one metric, chosen when it was read: `metrics` may only name it.
    """
    method = check_choice(method.replace("-", "_"), "method", ITEM_RANKING_METHODS)
    check_method_options(options, ITEM_RANKING_OPTIONS, method)
    metric = str(table.metric)
    if metrics is not None and list(metrics) != [metric]:
        raise InputError(
            f"`metrics`: item scores have one metric, {metric!r} (chosen when the logs were "
            f"read), got {list(metrics)!r}; leave `metrics` out or name {metric!r}."
        )
    return method, metric


def item_pairs(
    table: Any,
    systems: tuple[str, ...],
    metric: str,
    rope: float,
    model: str,
    seed: int,
    options: Mapping[str, Any],
) -> tuple[list[ComparisonResult], dict[tuple[str, str], list[list[float]]]]:
    """Compare every pair by :func:`~isbetter.items.compare.compare_paired_items`.

    Each pair is fitted with its names sorted, ``a < b``, whatever the order of
    `systems`, with the seed ``pair_seed(seed, metric, a, b)``, as for every pairwise
    ranking: it equals ``compare_items(table, a, b, rng=that seed, baselines=False)``
    (one task, or several with ``pool="micro"``; the baselines are left out of a
    ranking), and is reported as `systems` orders the two (``ComparisonResult.swapped``,
    its simplex points mirrored).
    """
    pairs, simplex = [], {}
    for a, b in (sorted(pair) for pair in itertools.combinations(systems, 2)):
        res = compare_paired_items(
            pooled_pair(table, a, b),
            metric=metric,
            rope=rope,
            model=model,
            draws=options.get("draws"),
            baselines=False,
            rng=pair_seed(seed, metric, a, b),
        )
        posterior = cast(DrawsPosterior, res.posterior)  # compare_paired_items keeps its draws
        summary, points = res.summary(), simplex_points(posterior.region_masses(rope))
        if systems.index(a) > systems.index(b):
            a, b = b, a
            summary, points = summary.swapped(), [point[::-1] for point in points]
        simplex[(a, b)] = points
        pairs.append(dataclasses.replace(summary, ranking_metric=metric))
    return pairs, simplex


def hierarchical_tasks(
    table: Any,
    matrix: ItemMatrix,
    metric: str,
    rope: float,
    seed: int,
    options: Mapping[str, Any],
    model: str = "auto",
) -> list[PairTask]:
    """One task per pair: the hierarchical model over the subtasks, to run anywhere.

    Binary items (method ``"hierarchical"``): each task holds the pair's subtask counts,
    read off the ranking's item `matrix` (:func:`~isbetter.items.subtasks.matrix_counts`);
    over more than :data:`~isbetter.items.hierarchical.route.LOW_RANK_MAX_SUBTASKS`
    subtasks each fit runs :data:`RANK_CHAINS` chains unless `options` give ``chains``.
    Graded items, means over runs or items in clusters — any of them among the ranked
    systems' scores, so that every pair is about the same quantity, as in the one
    posterior — (method ``"hierarchical_graded"``): each task holds the pair's items per
    subtask (:meth:`~isbetter.items.table.ItemTable.subtasks`), fitted by the
    correlated-t model with rho = 0 (:func:`~isbetter.items.subtasks.graded_pair`);
    `model` ``"exact"`` and the option ``chains`` are refused for them. Each pair has its
    names sorted, ``a < b``, whatever the order of the systems, and the seed
    ``pair_seed(seed, metric, a, b)``, so a pair equals ``compare_items(table, a, b,
    rng=that seed, baselines=False)`` (for a graded pair: when the pair's own items are
    graded; for a binary pair: with up to that many subtasks, or ``chains=4``);
    :func:`~isbetter.ranking.tasks.run_task` fits it, and the ranking reports it as its
    systems order the two (:func:`isbetter.ranking._pairs`).
    """
    systems = matrix.systems
    graded = _graded(matrix)
    if graded and (model == "exact" or options.get("chains") is not None):
        what = "`method='exact'` is" if model == "exact" else "`chains` sets the chains of"
        raise InputError(
            f"{what} the model of independent binary items, and these items are "
            "graded, averaged over runs or in clusters; leave it out (over subtasks: "
            "the hierarchical correlated-t model with rho = 0)."
        )
    draws, chains = options.get("draws"), options.get("chains")
    if chains is None and not graded and len(np.unique(matrix.tasks)) > LOW_RANK_MAX_SUBTASKS:
        chains = RANK_CHAINS
    fit = {k: v for k, v in (("draws", draws), ("chains", chains)) if v is not None}
    column = {name: i for i, name in enumerate(systems)}
    return [
        PairTask(
            "items",
            metric,
            a,
            b,
            rope,
            "hierarchical_graded" if graded else "hierarchical",
            pair_seed(seed, metric, a, b),
            table.subtasks(a, b) if graded else matrix_counts(matrix, column[a], column[b]),
            fit,
        )
        for a, b in (sorted(pair) for pair in itertools.combinations(systems, 2))
    ]


#: the one posterior's method over several subtasks: the mean over the population of subtasks
JOINT_SUBTASKS = "items_joint_subtasks"


def items_joint(
    matrix: ItemMatrix,
    metric: str,
    rope: float,
    seed: int,
    options: Mapping[str, Any],
    subtasks: bool = False,
) -> tuple[list[ComparisonResult], dict[tuple[str, str], list[list[float]]], Any, int]:
    """One posterior of every system's mean score: the pairs, simplex points, ranks.

    Binary items: the Dirichlet process posterior of :mod:`isbetter.items.joint`, whose
    every pair is the exact paired model — with its Bayes factors, from the prior
    ``Dir(1, 1, 1, 1)`` each pair's table has under it. Otherwise the Bayesian
    bootstrap (no proper prior, no Bayes factor). `subtasks` (several tasks, not
    pooled): the two-level Bayesian bootstrap of
    :func:`~isbetter.items.joint.sample_subtask_means`, the mean over the population of
    subtasks (method :data:`JOINT_SUBTASKS`; no Bayes factor: the weights of the
    subtasks have no proper prior). Draws: `options`' ``draws``, default
    :data:`JOINT_DRAWS`. The draws' seed is ``pair_seed(seed, "items-joint", metric)``:
    stream 0 draws the means, stream 1 breaks ties (systems with identical scores, in
    the bootstrap) in the ranks, stream 2 draws the prior of the pairs' differences.
    Returns the pairs, their simplex points, the
    :class:`~isbetter.inference.ranks.RankSummary` and the number of draws.
    """
    units = distinct_units(matrix)
    draws = int(options.get("draws") or JOINT_DRAWS)
    stream = np.random.SeedSequence(pair_seed(seed, "items-joint", metric))
    means_seq, ties_seq, prior_seq = stream.spawn(3)  # the first two as spawn(2)'s
    means_rng, ties_rng = np.random.default_rng(means_seq), np.random.default_rng(ties_seq)
    method = JOINT_SUBTASKS if subtasks else "items_joint"
    settings = {
        "method": method,
        "seed": seed,
        "draws": draws,
        "items": matrix.n_items,
        "units": units,
        "prior": prior_record(matrix),
    }
    means, observed, place = _joint_means(matrix, subtasks, draws, means_rng, settings)
    systems = matrix.systems
    prior, prior_ess = None, None
    if prior_alpha(matrix) and not subtasks:  # every pair's difference: the exact model's prior
        prior_rng = np.random.default_rng(prior_seq)
        prior = paired.prior_delta(draws=draws, rng=prior_rng)
        prior_ess = (draws + 1) // 2  # mirrored draws
    elif subtasks:
        settings["bayes_factor"] = "none: the Bayesian bootstrap over subtasks has no proper prior"
    else:
        settings["bayes_factor"] = "none: the Bayesian bootstrap has no proper prior"
    if matrix.clusters is not None:
        settings["clusters"] = int(np.unique(matrix.clusters).size)
    pairs, simplex = [], {}
    for (ia, a), (ib, b) in itertools.combinations(enumerate(systems), 2):
        delta = means[:, ia] - means[:, ib]
        posterior = DrawsPosterior(delta)
        pair = ComparisonResult.from_posterior(
            posterior,
            system_a=a,
            system_b=b,
            rope=rope,
            method=method,
            settings=settings,
            metric=metric,
            dataset=place,
            estimate=estimate_from_draws(delta, rope=rope, prior_delta=prior, prior_ess=prior_ess),
            observed=Observed(
                matrix.n_items,
                float(observed[ia]),
                float(observed[ib]),
                float(observed[ia] - observed[ib]),
            ),
        )
        simplex[(a, b)] = simplex_points(posterior.region_masses(rope))
        pairs.append(dataclasses.replace(pair.summary(), ranking_metric=metric))
    ranks = rank_summary(means, systems, rope=rope, method=method, tiebreak=ties_rng)
    return pairs, simplex, ranks, draws


def _joint_means(
    matrix: ItemMatrix,
    subtasks: bool,
    draws: int,
    rng: np.random.Generator,
    settings: dict[str, Any],
) -> tuple[np.ndarray, np.ndarray, str]:
    """Return the one posterior's draws of the means, the observed means and the place.

    `subtasks`: the two-level bootstrap over several subtasks (recorded in `settings`),
    the observed means being each system's mean of its subtask means; else the items'.
    """
    tasks = tuple(np.unique(matrix.tasks))
    if not subtasks:
        means = sample_means(matrix, draws=draws, rng=rng)
        return means, matrix.scores.mean(axis=0), pooled_task(tasks)
    settings["n_subtasks"] = len(tasks)
    settings["weights"] = SUBTASK_WEIGHTS
    means = sample_subtask_means(matrix, draws=draws, rng=rng)
    return means, matrix.task_means().to_numpy().mean(axis=0), subtasks_text(tasks)


def task_baselines(matrix: ItemMatrix, metric: str) -> dict[str, Any]:
    """Friedman, Iman–Davenport and Nemenyi over the tasks (each system's mean per task).

    None for one task: there is nothing to rank the systems across.
    """
    from isbetter.cv.friedman import friedman_nemenyi

    means = matrix.task_means()
    if len(means) < 2:
        return {}
    return {metric: friedman_nemenyi(means, systems=list(matrix.systems))}


def item_settings(table: Any, matrix: ItemMatrix, pool: str, method: str) -> dict[str, Any]:
    """Return what a ranking of item scores records: the input, the reader's notes, the pooling.

    `pool`: ``"hierarchical"`` or ``"micro"`` for several tasks (``"task"``: one);
    `method`: the route (``"items_joint"``: the one posterior).
    """
    out: dict[str, Any] = {
        "input": input_record(table.data, what=str(table.source or "ItemTable")),
        "items": matrix.n_items,
    }
    if table.notes:
        out["reading"] = list(map(str, table.notes))
    tasks = tuple(np.unique(matrix.tasks))
    if pool == "hierarchical" and method == "items_joint":
        out["pooled"] = (
            f"{counted(len(tasks), 'subtask')}: one posterior over them, a two-level Bayesian "
            "bootstrap (its P(best), ranks and pairs: the mean over the population of "
            "subtasks, each subtask weighted equally)"
        )
    elif pool == "hierarchical":
        model = "correlated-t model (rho = 0)" if _graded(matrix) else "paired model"
        out["pooled"] = (
            f"{counted(len(tasks), 'subtask')}: every pair by the hierarchical {model} "
            "over them (its probabilities: the next subtask's difference)"
        )
    elif len(tasks) > 1:
        out["pooled"] = (
            f"{counted(len(tasks), 'task')} pooled: each (task, item) is one item of one "
            "population (a micro average over the tasks' items), not a model of the tasks"
        )
    return out


def _graded(matrix: ItemMatrix) -> bool:
    """Whether the ranked items are graded, means over runs or in clusters (not binary)."""
    return not matrix.binary or matrix.clusters is not None


def _pool(table: Any, options: Mapping[str, Any]) -> str:
    """Return how the route treats the tasks: ``"task"``, ``"hierarchical"`` or ``"micro"``.

    ``"hierarchical"`` (several tasks, by default): the pairs by the hierarchical model
    over the subtasks, or the one posterior's two-level bootstrap over them.
    """
    return resolve_pool(options.get("pool", "auto"), tuple(table.tasks), None)


def rank_item_table(table: Any, request: Any, route: tuple[str, str]) -> dict[str, Any]:
    """Compute what :func:`isbetter.rank` needs to finish a ranking of item scores.

    Returns the keyword arguments of its last step: systems, pairs, simplex points,
    ROPEs, baselines, the comparison method, joint ranks and extra settings; for the
    hierarchical route over subtasks instead of pairs and simplex points the pair
    ``tasks``, which :func:`isbetter.rank` runs as it runs every fit.
    """
    from isbetter.ranking import _ropes, _systems

    method, metric = route
    names = _systems(table.systems, request.systems)
    ropes = _ropes(0.0 if request.rope is None else request.rope, (metric,))
    matrix = item_matrix(table, names)  # the same items for every system, or an error
    seed, options = request.seed, request.options
    pool = _pool(table, options)
    if options.get("chains") is not None and pool != "hierarchical":
        raise InputError(
            "`chains` sets the MCMC chains of the hierarchical model over subtasks, and "
            "these pairs are exact or bootstrapped (no chains): leave `chains` out."
        )
    joint: dict[str, Any] = {}
    extra = item_settings(table, matrix, pool, method)
    parts: dict[str, Any] = {
        "names": names,
        "ropes": ropes,
        "baselines": task_baselines(matrix, metric),
        "joint": joint,
        "extra": extra,
        "tasks": [],
    }
    if pool == "hierarchical" and method != "items_joint":
        if method == "bootstrap":
            raise InputError(
                "`method='bootstrap'` pools the items of one population, and the pairs of "
                "several subtasks are compared by the hierarchical model over them; for the "
                "Bayesian bootstrap over all the subtasks' items give `pool='micro'`, for one "
                "posterior over the subtasks and their items `method='items_joint'`."
            )
        tasks = hierarchical_tasks(table, matrix, metric, ropes[metric], seed, options, method)
        return {**parts, "tasks": tasks, "method": f"items_{tasks[0].method}"}
    if method == "items_joint":
        subtasks = pool == "hierarchical"
        pairs, simplex, ranks, _ = items_joint(
            matrix, metric, ropes[metric], seed, options, subtasks
        )
        method = ranks.method
        joint[metric] = ranks
        extra["prior"] = prior_record(matrix)  # the one posterior's prior over unseen outcomes
    else:
        pairs, simplex = item_pairs(table, names, metric, ropes[metric], method, seed, options)
        method = pairs[0].method if len({p.method for p in pairs}) == 1 else f"items_{method}"
    return {**parts, "pairs": pairs, "simplex": {metric: simplex}, "method": method}
