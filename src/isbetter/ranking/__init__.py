"""Rank many systems on one or more metrics: every pair compared, a partial order per metric.

:func:`rank` compares every pair of systems on every metric — the hierarchical
model for per-fold scores on several data sets, the correlated t-test for one
data set, the paired F1 model for per-document predictions — reads each pair's
relation off its probabilities (likelihood or threshold rule), and builds per
metric the partial order (:mod:`isbetter.ranking.order`). Pairs are independent:
by default MCMC fits run in local worker processes and the exact methods in this
process; any ``concurrent.futures`` executor or a Dask cluster can run them instead
(:mod:`isbetter.ranking.execution`), optionally cached on disk so an interrupted
ranking resumes.
"""

from __future__ import annotations

import dataclasses
import itertools
import os
import warnings
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from isbetter.core.errors import ConvergenceWarning, InputError, InputTypeError, outside_stacklevel
from isbetter.core.provenance import input_settings, make_settings, signature_method
from isbetter.core.rope import warn_rope_misfit
from isbetter.core.validate import check_choice, check_path, check_rope, plural
from isbetter.core.validate import check_options as check_method_options
from isbetter.core.vocabulary import F1_MODELS, RANKING_METHODS, ROPELESS_METHODS, method_family
from isbetter.cv.compare import check_options, check_rope_fit, choose_method
from isbetter.inference.sampling import Sampling, chain_cores
from isbetter.inference.seeds import RNGLike, pair_seed, resolve_seed
from isbetter.ranking.result import RankingResult, check_rule, orders_of, relations_of
from isbetter.ranking.tasks import PairTask, samples_with_nutpie
from isbetter.results.comparison import ComparisonResult

__all__ = ["RankingResult", "rank"]

#: comparison methods fitted by MCMC (seconds to minutes a pair, :data:`CV_METHODS` and
#: :data:`F1_MODELS`): the only ones for which worker processes pay off
_MCMC_METHODS = frozenset({"hierarchical"})  # (items over subtasks: kind "items", this method)


def rank(
    data: Any,
    *,
    systems: Sequence[str] | None = None,
    metrics: Sequence[str] | None = None,
    rope: float | Mapping[str, float] | None = None,
    method: str = "auto",
    rule: str = "likelihood",
    threshold: float = 0.95,
    margin: float = 0.05,
    executor: Any = None,
    jobs: int | None = None,
    cache_dir: Any = None,
    progress: bool | None = None,
    rng: RNGLike = None,
    **options: Any,
) -> RankingResult:
    """Rank systems: compare every pair on every metric and build the partial orders.

    Parameters
    ----------
    data : ScoreTable, PredictionTable, DataFrame or path
        Per-fold scores (:func:`~isbetter.read_scores`; each metric column with
        its direction) or per-document predictions (:func:`~isbetter.read_predictions`);
        a DataFrame or file is read as predictions if it has a ``gold`` column, else as
        scores with the default column names (``dataset, system, run, fold``). Or
        item-level scores of language models, an :class:`~isbetter.items.table.ItemTable`
        (:func:`isbetter.items.read`), ranked by :mod:`isbetter.ranking.items`: `method`
        ``"auto"``, ``"exact"`` or ``"bootstrap"`` compares every pair as
        :func:`~isbetter.compare_items` (no baselines); ``"items_joint"`` (also
        ``"items-joint"``) draws all the systems' mean scores at once from one posterior
        over items (binary items: a Dirichlet process whose every pair is the exact
        paired model; else the Bayesian bootstrap), whose draws give every pair, P(best),
        expected ranks and rank intervals; both about the difference in mean score
        (accuracy) on the population of the items. Several tasks: every pair by the
        hierarchical model over them (binary items: the hierarchical paired model; graded
        items, means over runs or clusters: the correlated-t model with rho = 0; MCMC fits,
        run as `jobs`, `executor` and `cache_dir` say; its probabilities are about the
        next subtask), and the one posterior a two-level Bayesian bootstrap over the
        subtasks and their items (about the mean over the population of subtasks, each
        subtask weighted equally); or with the option ``pool="micro"`` their items pooled
        as one task; Friedman's test over the tasks beside them. The options are
        ``draws`` (per chain for the hierarchical model), ``chains`` (the hierarchical
        paired model's, binary items; over more than 20 subtasks 2 by default, where
        :func:`~isbetter.compare_items` runs 4: :data:`~isbetter.ranking.items.RANK_CHAINS`)
        and ``pool``.
    systems : sequence of str, optional
        The systems to rank, in the order to report them; default: all.
    metrics : sequence of str, optional
        Metric columns (scores), or measures such as ``"f1"`` (predictions);
        default: every metric column, or ``("f1",)``.
    rope : float or mapping, optional
        ROPE half-width, one for all metrics or one per metric (``{"acc": 0.01}``);
        0 is no ROPE. Default: the comparisons' own, 0 for scores (as
        :func:`~isbetter.compare`) and 0.05 for predictions (as :func:`~isbetter.compare_f1`).
    method : str, default: "auto"
        Scores: a method of :func:`~isbetter.compare` for every pair (``"auto"``:
        hierarchical for per-fold scores on several data sets, the correlated t-test
        for one data set, the signed-rank test for one score per data set and
        system), or ``"plackett_luce"`` (also ``"plackett-luce"``): one Bayesian
        Plackett–Luce model of the systems' rankings on the data sets
        (:mod:`isbetter.cv.plackett_luce`; per-fold scores are averaged per data set),
        whose weights give every pair's P(w_a > w_b) (P(≈) is 0: it has no ROPE),
        P(best) = P(w_k largest), P(wins next data set) = E[w_k], expected ranks,
        rank intervals and the most probable orders (:attr:`RankingResult.joint`);
        a pair is ≫ only where P(w_a > w_b) reaches `threshold`. Its options are
        ``concentration`` (the Dirichlet prior's, default 1), ``ties``
        (``"marginal"``, the default: tied systems in any order, in the likelihood;
        ``"random"``: broken at random with the seed, scmamp's rule), ``draws``,
        ``tune``, ``chains``, ``cores``, ``backend``. Predictions: a
        model of :func:`~isbetter.compare_f1` (``"auto"`` is ``"paired"``).
        Or ``"joint"``: one joint correlated model of all the systems' per-fold
        scores per metric (:mod:`isbetter.ranking.joint`), whose one posterior gives
        every pair's probabilities with the ROPE (so no cycles within a draw),
        P(best), expected ranks, rank intervals and the most probable strict and
        ROPE-aware orders; its options are ``rho``, ``priors``, ``draws``, ``tune``,
        ``chains``, ``cores``, ``backend``.
    rule : {"likelihood", "threshold"}, default: "likelihood"
        ``"likelihood"``: the most probable relation, "≳"/"≲" when the runner-up is
        the ROPE within `margin` (Szymański & Gorman 2020); ``"threshold"``: a
        relation only where its probability reaches `threshold`, else undecided.
    threshold : float, default: 0.95
        Probability the threshold rule needs, in (0, 1].
    margin : float, default: 0.05
        How close the likelihood rule's winner and runner-up must be to call a pair "≳".
    executor : concurrent.futures.Executor or dask.distributed.Client, optional
        Where the pairs run; default: this process or local worker processes (`jobs`).
        Not with ``method="plackett_luce"`` or ``"joint"`` (nor `jobs` above 1,
        `cache_dir`): one fit per metric, in this process.
    jobs : int, optional
        Local worker processes; 1 runs every pair in this process (two hierarchical
        fits at a time, in threads: one samples while the other's draws are
        summarised). Default: when two
        or more pairs are fitted by MCMC (``method="hierarchical"``, which ``"auto"``
        picks for several data sets), one worker per two CPUs, as each fit runs its
        chains on two cores (one per `c` CPUs with ``cores=c``) — on a 2-CPU machine
        that is 1, this process; else 1: the exact methods (sign, signed-rank,
        correlated t, paired and unpaired F1) take well under a second a pair, less
        than a worker takes to start. Worker processes are
        started with ``spawn``: a script that starts them must call :func:`rank`
        under ``if __name__ == "__main__":``.
    cache_dir : path, optional
        Store each finished pair here (JSON, checksummed) and reuse it: an
        interrupted ranking resumes. Nothing is written without it.
    progress : bool, optional
        Progress bar on stderr (default: when stderr is a terminal).
    rng : int, numpy.random.Generator or None
        The one seed; each pair's seed is derived from it and the pair's names. Each
        pair is fitted with its names sorted and reported as `systems` orders it, so
        the order of the systems never changes a pair's numbers.
    **options
        Options of every comparison (e.g. ``rho``, the correlation of a data set's
        scores, of the correlated t-test and the hierarchical model — needed for
        repeated random splits, where it is n_test / (n_test + n_train), not 1/folds;
        ``draws``, ``chains``, ``tune``, ``cores`` of the hierarchical model; ``draws``
        and the metric parameters such as ``beta`` of the F1 model).

    Returns
    -------
    RankingResult
        With per-fold scores on several data sets, each metric also carries the
        frequentist baselines (:attr:`RankingResult.baselines`): mean ranks,
        Friedman, Iman–Davenport and Nemenyi's critical differences at α 0.05 and
        0.10, from each system's mean score per data set. Per-document predictions
        (one test set) and scores on one data set have none.
    """
    from isbetter.cv.scores import ScoreTable
    from isbetter.f1.predictions import PredictionTable

    rule, threshold, margin = check_rule(rule, threshold, margin)
    cache_dir = check_path(cache_dir, "cache_dir")
    seed = resolve_seed(rng)
    request = _Request(systems, metrics, rope, method, seed, options)
    data = _front_door(data, metrics)
    if _is_item_table(data):
        pairwise = {"executor": executor, "jobs": jobs, "cache_dir": cache_dir}
        return _items(data, request, (rule, threshold, margin), {**pairwise, "progress": progress})
    if method in ("plackett_luce", "plackett-luce", "joint"):
        pairwise = {"executor": executor, "jobs": jobs, "cache_dir": cache_dir}
        one_model = method.replace("-", "_")
        return _one_model(data, request, (rule, threshold, margin), pairwise, one_model)
    if isinstance(data, ScoreTable):
        tasks, ropes, method = _cv_tasks(data, request)
    elif isinstance(data, PredictionTable):
        tasks, ropes, method = _f1_tasks(data, request)
    else:
        raise InputTypeError(
            "`data` must be a ScoreTable (isbetter.read_scores) or a PredictionTable "
            f"(isbetter.read_predictions), got {type(data).__name__}."
        )
    names = tuple(systems) if systems is not None else data.systems
    baselines = _baselines(data, names, tuple(ropes)) if isinstance(data, ScoreTable) else {}
    pairwise = {"executor": executor, "jobs": jobs, "cache_dir": cache_dir, "progress": progress}
    pairs, simplex, stats = _run_pairs(tasks, pairwise, names)
    result = _finish(
        names, pairs, simplex, ropes, baselines, method, (rule, threshold, margin), request, stats
    )
    return dataclasses.replace(result, settings={**result.settings, **input_settings(data)})


def _front_door(data: Any, metrics: Sequence[str] | None) -> Any:
    """Read a DataFrame or file given to :func:`rank`; return tables as they are.

    A table with a ``gold`` column is read as predictions, any other as scores with the
    default column names (``dataset, system, run, fold`` and `metrics`, default ``score``).
    """
    import os

    import pandas as pd

    from isbetter.core.tables import read_table
    from isbetter.cv.scores import read_scores
    from isbetter.f1.predictions import read_predictions

    if not isinstance(data, pd.DataFrame | str | os.PathLike):
        return data
    frame = data if isinstance(data, pd.DataFrame) else read_table(data, argument="data")
    if "gold" in frame.columns:
        return read_predictions(data)
    return read_scores(data, score=list(metrics) if metrics else "score")


def _run_pairs(
    tasks: list[PairTask], pairwise: dict[str, Any], names: tuple[str, ...]
) -> tuple[Any, Any, dict[str, Any]]:
    """Run the pair tasks where `pairwise` says (executor, jobs, cache_dir, progress).

    Returns the pairs (each as `names` orders its systems), their simplex points per
    metric and the execution's statistics.
    Default `jobs`: :func:`_default_jobs`; in this process, :func:`_in_process_threads`.
    """
    from isbetter.ranking.execution import run_tasks

    executor, jobs = pairwise["executor"], pairwise["jobs"]
    if executor is None and jobs is None:
        jobs = _default_jobs(tasks)
    threads = _in_process_threads(tasks) if executor is None and jobs == 1 else 1
    outcomes, stats = run_tasks(
        tasks,
        executor=executor,
        jobs=jobs,
        threads=threads,
        cache_dir=pairwise["cache_dir"],
        progress=pairwise["progress"],
    )
    pairs, simplex = _pairs(tasks, outcomes, names)
    return pairs, simplex, stats


def _default_jobs(tasks: Sequence[PairTask]) -> int:
    """Return the default `jobs` of :func:`rank` for `tasks`: 1 (this process) or more.

    Worker processes pay off only for MCMC fits (:data:`_MCMC_METHODS`), and only for
    two or more: a spawned worker takes seconds to start (measured on 2 cores: ten
    sign-test pairs took 1.5 s in this process, 4.0 s in two workers). Each fit
    already runs its chains on :data:`~isbetter.inference.sampling.CHAIN_CORES` cores
    (or its `cores`), so there is one worker per that many CPUs: on 2 CPUs the fits run
    in this process (the ten UCI pairs: 11.3 and 12.4 s against 12.2 and 13.9 s in two
    workers, which each import the samplers again). Everything else runs in this process, so a
    script calling :func:`rank` on the exact methods needs no
    ``if __name__ == "__main__":`` guard.
    """
    fits = [task for task in tasks if task.method in _MCMC_METHODS]
    if len(fits) < 2:
        return 1
    options = fits[0].options
    per_fit = chain_cores(int(options.get("chains", Sampling().chains)), options.get("cores"))
    return max(1, min(len(fits), (os.cpu_count() or 1) // int(per_fit)))


def _in_process_threads(tasks: Sequence[PairTask]) -> int:
    """Return how many pairs run at once in this process (``jobs=1``): 2 or 1.

    Two for two or more hierarchical fits of per-fold scores sampled by nutpie: one fit's
    sampler runs (outside the GIL) while the other's draws are summarised and its
    delta_i drawn, which otherwise leaves a core idle (the ten UCI pairs: 0.3-0.6 s of
    10 s). Else one, one after the other (PyMC's sampler is not run in threads).
    """
    return 2 if sum(samples_with_nutpie(task) for task in tasks) >= 2 else 1


def _baselines(table: Any, names: tuple[str, ...], metrics: tuple[str, ...]) -> dict[str, Any]:
    """Per metric, mean ranks, Friedman, Iman–Davenport and Nemenyi over the data sets.

    None for one data set: there is nothing to rank the systems across.
    """
    from isbetter.cv.friedman import friedman_nemenyi

    if len(table.datasets) < 2:
        return {}
    return {m: friedman_nemenyi(table, metric=m, systems=names) for m in metrics}


def _ropes(rope: float | Mapping[str, float], metrics: Sequence[str]) -> dict[str, float]:
    if isinstance(rope, Mapping):
        missing = [m for m in metrics if m not in rope]
        if missing:
            raise InputError(
                f"`rope` gives no ROPE for {plural(len(missing), 'metric')} "
                + ", ".join(map(repr, missing))
                + "; give one per metric, or one number for all."
            )
        return {m: check_rope(rope[m], f"rope[{m!r}]") for m in metrics}
    value = check_rope(rope)
    return dict.fromkeys(metrics, value)


def _check_rope_fits(
    ropes: dict[str, float], given: Any, check: Callable[[str, str, str], None]
) -> None:
    """Warn once per metric whose ROPE does not fit its scores (``check(metric, where, name)``).

    A ROPE left at its default is not checked (:mod:`isbetter.core.rope` says why).
    """
    if given is None:
        return
    for m in ropes:
        name = f"rope[{m!r}]" if isinstance(given, Mapping) else "rope"
        check(m, f" on metric {m!r}" if len(ropes) > 1 and name == "rope" else "", name)


def _check_score_ropes(
    table: Any, names: tuple[str, ...], ropes: dict[str, float], given: Any
) -> None:
    """Warn once per metric whose ROPE does not fit the scores of `names` (as compare does)."""
    _check_rope_fits(
        ropes,
        given,
        lambda m, where, name: check_rope_fit(
            table, m, names, ropes[m], name, where=where, stacklevel=8
        ),
    )


def _systems(available: Sequence[str], systems: Sequence[str] | None) -> tuple[str, ...]:
    if systems is None:
        names = tuple(available)
    else:
        names = tuple(systems)
        unknown = [s for s in names if s not in available]
        if unknown:
            raise InputError(
                f"`systems`: unknown {plural(len(unknown), 'system')} "
                + ", ".join(map(repr, unknown))
                + ". Available systems: "
                + ", ".join(map(repr, available))
                + "."
            )
    if len(set(names)) != len(names):
        raise InputError(f"`systems` names a system twice: {names!r}.")
    if len(names) < 2:
        raise InputError(f"A ranking needs at least 2 systems, got {len(names)}.")
    return names


@dataclass(frozen=True)
class _Request:
    """What :func:`rank` was asked for, as the builders of the pair tasks need it."""

    systems: Sequence[str] | None
    metrics: Sequence[str] | None
    rope: float | Mapping[str, float] | None
    method: str
    seed: int
    options: dict[str, Any]


def _cv_tasks(table: Any, request: _Request) -> tuple[list[PairTask], dict, str]:
    names = _systems(table.systems, request.systems)
    metrics = tuple(table.metrics) if request.metrics is None else tuple(request.metrics)
    for m in metrics:
        table._metric(m)  # unknown metric: InputError naming it
        counts = table.data.groupby("system")[m].count()
        for s in names:
            if counts.get(s, 0) == 0:
                raise InputError(f"System {s!r} has no scores on metric {m!r}.")
    ropes = _ropes(0.0 if request.rope is None else request.rope, metrics)
    _check_score_ropes(table, names, ropes, request.rope)
    check_choice(request.method, "method", RANKING_METHODS)  # the error lists them all
    method = choose_method(request.method, len(table.datasets), table.per_dataset)
    check_options(method, request.options)  # before any pair runs
    # each fit's chains run on `cores` threads (default min(chains, 2)), not pinned to one
    # core per worker: the last fits of a ranking use the cores finished workers left idle
    opts = dict(request.options)

    def pair(m: str, a: str, b: str) -> Any:  # the ranking records the input, not each pair
        return dataclasses.replace(table.paired(a, b, metric=m), source=None)

    tasks = _pair_tasks("cv", names, metrics, ropes, method, request.seed, opts, pair)
    return tasks, ropes, method


def _f1_tasks(table: Any, request: _Request) -> tuple[list[PairTask], dict, str]:
    from isbetter.f1.compare import DEFAULT_ROPE as F1_DEFAULT_ROPE
    from isbetter.f1.measures import measure_scale
    from isbetter.f1.predictions import PredictionTable

    names = _systems(table.systems, request.systems)
    measures = ("f1",) if request.metrics is None else tuple(request.metrics)
    ropes = _ropes(F1_DEFAULT_ROPE if request.rope is None else request.rope, measures)
    _check_rope_fits(
        ropes,
        request.rope,
        lambda m, where, name: warn_rope_misfit(ropes[m], measure_scale(m), name, 6, where),
    )
    method = request.method
    method = "paired" if method == "auto" else check_choice(method, "method", F1_MODELS)
    _check_f1_options(method, request.options)

    def pair(m: str, a: str, b: str) -> Any:
        predictions = {a: table.predictions[a], b: table.predictions[b]}
        return PredictionTable(gold=table.gold, predictions=predictions, labels=table.labels)

    tasks = _pair_tasks("f1", names, measures, ropes, method, request.seed, request.options, pair)
    return tasks, ropes, method


def _check_f1_options(model: str, options: Mapping[str, Any]) -> None:
    """Raise when an option is not one of :func:`~isbetter.compare_f1` that a ranking passes on."""
    import inspect

    from isbetter.f1.compare import compare_f1
    from isbetter.f1.legacy import COMPARE_F1

    set_here = {"data", "system_a", "system_b", "metric", "measure", "rope", "model", "rng", "gold"}
    named = (*inspect.signature(compare_f1).parameters, *COMPARE_F1)
    takes = [n for n in named if n not in set_here]
    check_method_options(options, takes, model)


def _pair_tasks(
    kind: str,
    names: tuple[str, ...],
    metrics: Sequence[str],
    ropes: dict[str, float],
    method: str,
    seed: int,
    options: dict[str, Any],
    data_of: Callable[[str, str, str], Any],
) -> list[PairTask]:
    """One task per metric and pair of systems (metric by metric, pairs in input order).

    Each pair is seeded and fitted in one orientation, its names sorted, whatever the
    order of `names`: the same data with the systems in another order give the same
    (mirrored) numbers; :func:`_pairs` orients each result as `names` asks.
    """
    return [
        PairTask(
            kind, m, a, b, ropes[m], method, pair_seed(seed, m, a, b), data_of(m, a, b), options
        )
        for m in metrics
        for a, b in (sorted(pair) for pair in itertools.combinations(names, 2))
    ]


def _ranking_metric(task: PairTask, summary: ComparisonResult, rows: int) -> str:
    """Return the ranking's name of a comparison: the metric, or "<metric> <row>".

    The second for one of several rows of a per-document task ("f1 macro",
    "f1 micro", or "f1 <class>").
    """
    return f"{task.metric} {summary.label}" if rows > 1 else task.metric


def _one_model(
    data: Any,
    request: _Request,
    reading: tuple[str, float, float],
    pairwise: dict[str, Any],
    method: str,
) -> RankingResult:
    """One fit per metric of a model of all the systems, then the orders.

    `method` is ``"joint"`` (:mod:`isbetter.ranking.joint`) or ``"plackett_luce"``
    (:mod:`isbetter.ranking.plackett_luce`).
    """
    from isbetter.cv.scores import ScoreTable

    _in_process_only(
        pairwise,
        f"method={method!r} is one fit per metric, run in this process (its chains in parallel)",
    )
    if not isinstance(data, ScoreTable):
        raise InputError(
            f"`method={method!r}` ranks the systems on each data set: it needs scores (a "
            f"ScoreTable from isbetter.read_scores), got {type(data).__name__}."
        )
    names = _systems(data.systems, request.systems)
    metrics = tuple(data.metrics) if request.metrics is None else tuple(request.metrics)
    for m in metrics:
        data._metric(m)  # unknown metric: InputError naming it
    ropes = _ropes(0.0 if request.rope is None else request.rope, metrics)
    if method == "joint":  # Plackett–Luce has no ROPE
        _check_score_ropes(data, names, ropes, request.rope)
    fit_metric = _metric_fits(method, ropes, request)
    if len(data.datasets) < 2:
        raise InputError(
            f"`method={method!r}` ranks the systems on each of several data sets; these "
            "scores are on 1 data set. To rank them on it, compare every pair on its folds: "
            "`method='auto'` (the Bayesian correlated t-test of each pair)."
        )
    fits = {m: fit_metric(data, names, m) for m in metrics}
    pairs = [p for fit in fits.values() for p in fit.pairs]
    extra: dict[str, Any] = {}
    if method == "plackett_luce":
        from isbetter.cv.plackett_luce import TIES

        extra = {
            "ties": TIES[request.options.get("ties", "marginal")],
            "tied_datasets": {m: f.tied_datasets for m, f in fits.items()},
        }
    stats = {"computed": len(metrics), "cached": 0, "executor": "serial", "workers": 1}
    result = _finish(
        names,
        pairs,
        {m: fit.simplex for m, fit in fits.items()},
        ropes,
        _baselines(data, names, metrics),
        method,
        reading,
        request,
        stats,
        {m: fit.ranks for m, fit in fits.items()},
        extra,
    )
    return dataclasses.replace(result, settings={**result.settings, **input_settings(data)})


def _in_process_only(pairwise: dict[str, Any], why: str) -> None:
    """Refuse the pairwise route's `executor`, `jobs` above 1 and `cache_dir`, saying `why`."""
    given = [n for n, v in pairwise.items() if v is not None and not (n == "jobs" and v == 1)]
    if given:
        raise InputError(f"`{given[0]}` applies to the pairwise route; {why}: leave it out.")


def _is_item_table(data: Any) -> bool:
    from isbetter.items.table import ItemTable

    return isinstance(data, ItemTable)


def _items(
    table: Any, request: _Request, reading: tuple[str, float, float], pairwise: dict[str, Any]
) -> RankingResult:
    """Rank language models on item-level scores (:mod:`isbetter.ranking.items`).

    The exact and bootstrap pairs and the one posterior run in this process; the
    hierarchical fits over subtasks run as every pairwise ranking of fits does
    (:func:`~isbetter.ranking.execution.run_tasks`: `jobs`, `executor`, `cache_dir`).
    """
    from isbetter.ranking.items import check_item_request, rank_item_table

    route = check_item_request(table, request.method, request.metrics, request.options)
    parts = rank_item_table(table, request, route)
    if parts["tasks"]:  # the hierarchical model over subtasks: an MCMC fit per pair
        pairs, simplex, stats = _run_pairs(parts["tasks"], pairwise, parts["names"])
    else:
        _in_process_only(
            {k: v for k, v in pairwise.items() if k != "progress"},
            "item scores of one task (or pooled), and the one posterior, are computed "
            "without MCMC (milliseconds a pair) in this process",
        )
        pairs, simplex = parts["pairs"], parts["simplex"]
        stats = {"computed": len(pairs), "cached": 0, "executor": "serial", "workers": 1}
    return _finish(
        parts["names"],
        pairs,
        simplex,
        parts["ropes"],
        parts["baselines"],
        parts["method"],
        reading,
        request,
        stats,
        parts["joint"],
        parts["extra"],
    )


def _metric_fits(method: str, ropes: dict[str, float], request: _Request) -> Callable[..., Any]:
    """Check `request` for a model of all the systems; return its fit of one metric.

    The fit takes ``(table, systems, metric)`` and returns the model's pairwise table,
    simplex points and ranks (a :class:`~isbetter.ranking.tasks.MetricFit`).
    """
    seed, options = request.seed, request.options
    if method == "joint":
        from isbetter.ranking.joint import JOINT_OPTIONS, joint_metric

        check_method_options(options, JOINT_OPTIONS, "joint")
        return lambda table, names, m: joint_metric(table, names, m, ropes[m], seed, options)
    from isbetter.ranking.plackett_luce import PLACKETT_LUCE_OPTIONS, plackett_luce_metric

    if any(ropes.values()):
        raise InputError(
            "`rope`: the Plackett–Luce model ranks the systems on each data set and has no "
            "ROPE (its P(≈) is 0); leave `rope` out, or rank pairwise (e.g. method='auto')."
        )
    check_method_options(options, PLACKETT_LUCE_OPTIONS, "plackett_luce")
    return lambda table, names, m: plackett_luce_metric(table, names, m, seed, options)


def _pairs(
    tasks: list[PairTask], outcomes: list[list[dict]], names: tuple[str, ...]
) -> tuple[list[ComparisonResult], dict[str, dict[tuple[str, str], list[list[float]]]]]:
    """Return the comparisons of finished pair tasks and their simplex points, per metric.

    Each comparison as `names` orders its systems (a task runs its pair sorted).
    """
    pairs: list[ComparisonResult] = []
    simplex: dict[str, dict[tuple[str, str], list[list[float]]]] = {}
    for task, items in zip(tasks, outcomes, strict=True):
        for item in items:
            summary = ComparisonResult.from_dict(item["summary"])
            points = item["simplex"]
            if names.index(summary.system_a) > names.index(summary.system_b):
                summary, points = summary.swapped(), [point[::-1] for point in points]
            metric = _ranking_metric(task, summary, len(items))
            summary = dataclasses.replace(summary, ranking_metric=metric)
            simplex.setdefault(metric, {})[(summary.system_a, summary.system_b)] = points
            pairs.append(summary)
    return pairs, simplex


def _fit_settings(pairs: list[ComparisonResult], method: str) -> dict[str, Any]:
    """Return what the signature says of the fits: the route, draws, tuning steps, chains.

    The route is ``pairwise-<method>`` (the pairs' method, ``f1_paired`` rather than
    the model ``paired``) or the one model, the joint model with its prior's form
    (``joint-<tails>-<spread prior>``, e.g. ``joint-components-huang-wand``); each
    sampler setting one value when every fit used it, else the sorted values (the
    hierarchical model's tuning steps depend on each pair's data).
    """
    family = method_family(pairs[0].method) if pairs else method
    routes = {p.settings.get("signature_method") for p in pairs}
    if family == "items_hierarchical_graded" and len(routes) == 1:  # its unit: -clusters
        family = str(routes.pop())
    named = signature_method("ranking", family)
    if family == "joint":  # one prior for every metric: name its form
        forms = {(p.settings["tails"], p.settings["spread_prior"]["form"]) for p in pairs}
        named += "".join(f"-{tails}-{spread}" for tails, spread in forms)
    out: dict[str, Any] = {"signature_method": named}
    for key in ("draws", "tune", "chains"):
        values = sorted({p.settings[key] for p in pairs if p.settings.get(key) is not None})
        if values:
            out[key] = values[0] if len(values) == 1 else values
    return out


def _warn_if_poor(pairs: list[ComparisonResult], method: str) -> None:
    """Warn once if fits converged poorly: the pairs' fits, or each metric's one model fit.

    The joint and Plackett–Luce models fit all the systems at once: every pair of a metric
    carries that one fit's diagnostics, so the warning names the fit and its numbers, not
    K(K-1)/2 comparisons.
    """
    poor = [p for p in pairs if p.diagnostics is not None and not p.diagnostics.converged]
    if not poor:
        return
    if method in ("joint", "plackett_luce"):
        from isbetter.inference.sampling import poor_convergence

        fits = {(p.ranking_metric or p.metric): p.diagnostics for p in poor if p.diagnostics}
        for metric, diagnostics in fits.items():
            warnings.warn(
                f"The {method.replace('_', '-')} model's fit of {metric!r} did not converge "
                f"well: {poor_convergence(diagnostics)}; every pair of its table is read from "
                "this one fit. Increase `tune` and `draws`.",
                ConvergenceWarning,
                stacklevel=outside_stacklevel(),
            )
        return
    shown = ", ".join(f"{p.system_a} vs {p.system_b}" for p in poor[:5])
    warnings.warn(
        f"{len(poor)} of {len(pairs)} comparisons did not converge well ({shown}"
        f"{' ...' if len(poor) > 5 else ''}); their diagnostics are in the pairwise table. "
        "Increase `tune` and `draws`.",
        ConvergenceWarning,
        stacklevel=outside_stacklevel(),
    )


def _rope_settings(ropes: dict[str, float], method: str) -> dict[str, Any]:
    """Return the ROPE settings of a ranking: each metric's, and the one ROPE they share.

    None for Plackett–Luce, which has no ROPE: its signature and reports name none.
    """
    if method in ROPELESS_METHODS:
        return {}
    single = set(ropes.values())
    return {**({"rope": single.pop()} if len(single) == 1 else {}), "ropes": ropes}


def _finish(
    names: tuple[str, ...],
    pairs: list[ComparisonResult],
    simplex: dict[str, dict[tuple[str, str], list[list[float]]]],
    ropes: dict[str, float],
    baselines: dict[str, Any],
    method: str,
    reading: tuple[str, float, float],
    request: _Request,
    stats: dict[str, Any],
    joint: dict[str, Any] | None = None,
    extra: dict[str, Any] | None = None,
) -> RankingResult:
    """Return the ranking of `pairs`: their relations, the orders and chains, the settings."""
    rule, threshold, margin = reading
    seed, options = request.seed, request.options
    relations = relations_of(pairs, rule, threshold, margin)
    metrics = list(relations)
    orders = orders_of(names, pairs, relations, joint)
    _warn_if_poor(pairs, method)
    settings = make_settings(
        "ranking",
        seed,
        **_rope_settings(ropes, method),
        rule=rule,
        threshold=threshold,
        margin=margin,
        comparison_method=method,
        options={
            k: repr(v) if not isinstance(v, int | float | str | bool) else v
            for k, v in options.items()
        },
        execution=stats,
        **_fit_settings(pairs, method),
        **(extra or {}),
    )
    return RankingResult(
        systems=names,
        metrics=tuple(metrics),
        rule=rule,
        threshold=threshold,
        margin=margin,
        pairs=tuple(pairs),
        relations=relations,
        orders=orders,
        simplex=simplex,
        baselines=baselines,
        settings=settings,
        joint=joint or {},
    )
