"""Rank many systems on one or more metrics: every pair compared, a partial order per metric.

:func:`rank` compares every pair of systems on every metric — the hierarchical
model for per-fold scores on several data sets, the correlated t-test for one
data set, the paired F1 model for per-document predictions — reads each pair's
relation off its probabilities (likelihood or threshold rule), and builds per
metric the partial order (:mod:`isbetter.ranking.order`). Pairs are independent:
they run in local processes by default, on any ``concurrent.futures`` executor
or on a Dask cluster (:mod:`isbetter.ranking.execution`), optionally cached on
disk so an interrupted ranking resumes.
"""

from __future__ import annotations

import itertools
import warnings
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from isbetter.core.errors import ConvergenceWarning, InputError, InputTypeError
from isbetter.core.provenance import make_settings
from isbetter.core.validate import RNGLike, check_choice, check_rope, resolve_seed
from isbetter.core.vocabulary import CV_METHODS, F1_MODELS
from isbetter.ranking.result import RankingResult, check_rule, orders_of, relations_of
from isbetter.ranking.tasks import PairTask, pair_seed
from isbetter.results.comparison import ComparisonSummary

__all__ = ["RankingResult", "rank"]


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
    data : ScoreTable or PredictionTable
        Per-fold scores (:func:`~isbetter.read_scores`; each metric column with
        its direction) or per-document predictions (:func:`~isbetter.read_predictions`).
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
        Scores: a method of :func:`~isbetter.compare` (``"auto"``: hierarchical for
        several data sets, the correlated t-test for one). Predictions: a model of
        :func:`~isbetter.compare_f1` (``"auto"`` is ``"paired"``).
    rule : {"likelihood", "threshold"}, default: "likelihood"
        ``"likelihood"``: the most probable relation, "≳"/"≲" when the runner-up is
        the ROPE within `margin` (Szymański & Gorman 2020); ``"threshold"``: a
        relation only where its probability reaches `threshold`, else undecided.
    threshold : float, default: 0.95
        Probability the threshold rule needs, in (0, 1].
    margin : float, default: 0.05
        How close the likelihood rule's winner and runner-up must be to call a pair "≳".
    executor : concurrent.futures.Executor or dask.distributed.Client, optional
        Where the pairs run; default: local processes (`jobs` of them).
    jobs : int, optional
        Local worker processes (default: the number of CPUs; 1 runs in this process).
    cache_dir : path, optional
        Store each finished pair here (JSON, checksummed) and reuse it: an
        interrupted ranking resumes. Nothing is written without it.
    progress : bool, optional
        Progress bar on stderr (default: when stderr is a terminal).
    rng : int, numpy.random.Generator or None
        The one seed; each pair's seed is derived from it and the pair's names.
    **options
        Options of the comparisons (e.g. ``draws``, ``chains``, ``tune``, ``cores`` of
        the hierarchical model; ``draws``, ``measure`` parameters of the F1 model).

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
    from isbetter.ranking.execution import run_tasks

    rule, threshold, margin = check_rule(rule, threshold, margin)
    seed = resolve_seed(rng)
    request = _Request(systems, metrics, rope, method, seed, options)
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
    outcomes, stats = run_tasks(
        tasks, executor=executor, jobs=jobs, cache_dir=cache_dir, progress=progress
    )
    return _assemble(
        names,
        tasks,
        outcomes,
        stats,
        ropes,
        baselines,
        method,
        (rule, threshold, margin),
        seed,
        options,
    )


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
                "`rope` gives no ROPE for metric(s) "
                + ", ".join(map(repr, missing))
                + "; give one per metric, or one number for all."
            )
        return {m: check_rope(rope[m], f"rope[{m!r}]") for m in metrics}
    value = check_rope(rope)
    return dict.fromkeys(metrics, value)


def _systems(available: Sequence[str], systems: Sequence[str] | None) -> tuple[str, ...]:
    if systems is None:
        names = tuple(available)
    else:
        names = tuple(systems)
        unknown = [s for s in names if s not in available]
        if unknown:
            raise InputError(
                "`systems`: unknown system(s) "
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
    method = check_choice(request.method, "method", CV_METHODS)
    if method == "auto":
        method = "hierarchical" if len(table.datasets) > 1 else "correlated_t"
    # each fit's chains may use every core (`cores`, default: all): while all workers are
    # busy the threads share the cores, and the last fits of a ranking use the cores that
    # finished workers left idle (the five UCI classifiers: 60 s with cores=1, 51 s without)
    opts = dict(request.options)

    def pair(m: str, a: str, b: str) -> Any:
        return table.paired(a, b, metric=m)

    tasks = _pair_tasks("cv", names, metrics, ropes, method, request.seed, opts, pair)
    return tasks, ropes, method


def _f1_tasks(table: Any, request: _Request) -> tuple[list[PairTask], dict, str]:
    from isbetter.f1.compare import DEFAULT_ROPE as F1_DEFAULT_ROPE
    from isbetter.f1.predictions import PredictionTable

    names = _systems(table.systems, request.systems)
    measures = ("f1",) if request.metrics is None else tuple(request.metrics)
    ropes = _ropes(F1_DEFAULT_ROPE if request.rope is None else request.rope, measures)
    method = request.method
    method = "paired" if method == "auto" else check_choice(method, "method", F1_MODELS)

    def pair(m: str, a: str, b: str) -> Any:
        predictions = {a: table.predictions[a], b: table.predictions[b]}
        return PredictionTable(gold=table.gold, predictions=predictions, labels=table.labels)

    tasks = _pair_tasks("f1", names, measures, ropes, method, request.seed, request.options, pair)
    return tasks, ropes, method


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
    """One task per metric and pair of systems (metric by metric, pairs in input order)."""
    return [
        PairTask(
            kind, m, a, b, ropes[m], method, pair_seed(seed, m, a, b), data_of(m, a, b), options
        )
        for m in metrics
        for a, b in itertools.combinations(names, 2)
    ]


def _ranking_metric(task: PairTask, summary: dict[str, Any], rows: int) -> str:
    """Return the ranking's name of a comparison: the metric, or "<measure> <row>".

    The second for one of several rows of a per-document task ("f1 macro",
    "f1 micro", or "f1 <class>").
    """
    return f"{task.metric} {summary.get('label')}" if rows > 1 else task.metric


def _assemble(
    names: tuple[str, ...],
    tasks: list[PairTask],
    outcomes: list[list[dict]],
    stats: dict[str, Any],
    ropes: dict[str, float],
    baselines: dict[str, Any],
    method: str,
    reading: tuple[str, float, float],
    seed: int,
    options: dict[str, Any],
) -> RankingResult:
    rule, threshold, margin = reading
    pairs: list[ComparisonSummary] = []
    simplex: dict[str, dict[tuple[str, str], list[list[float]]]] = {}
    for task, items in zip(tasks, outcomes, strict=True):
        for item in items:
            data = dict(item["summary"])
            metric = _ranking_metric(task, data, len(items))
            data["settings"] = {**data["settings"], "ranking_metric": metric}
            summary = ComparisonSummary.from_dict(data)
            simplex.setdefault(metric, {})[(summary.system_a, summary.system_b)] = item["simplex"]
            pairs.append(summary)
    relations = relations_of(pairs, rule, threshold, margin)
    metrics = list(relations)
    orders = orders_of(names, pairs, relations)
    poor = [p for p in pairs if p.diagnostics is not None and not p.diagnostics.converged]
    if poor:
        shown = ", ".join(f"{p.system_a} vs {p.system_b}" for p in poor[:5])
        warnings.warn(
            f"{len(poor)} of {len(pairs)} comparisons did not converge well ({shown}"
            f"{' ...' if len(poor) > 5 else ''}); their diagnostics are in the pairwise table. "
            "Increase `tune` and `draws`.",
            ConvergenceWarning,
            stacklevel=3,
        )
    single = set(ropes.values())
    settings = make_settings(
        "ranking",
        seed,
        **({"rope": single.pop()} if len(single) == 1 else {}),
        ropes=ropes,
        rule=rule,
        threshold=threshold,
        margin=margin,
        comparison_method=method,
        options={
            k: repr(v) if not isinstance(v, int | float | str | bool) else v
            for k, v in options.items()
        },
        execution=stats,
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
    )
